//! Build script of the root package: links the `familiar` executable position-dependent
//! (`-no-pie`) on Linux. A PIE executable has its ~32,000 relative relocations (vtables, string
//! tables, panic locations) applied by the dynamic loader at every start, which dirties ~150
//! pages: about half of `familiar --version`'s page faults and 0.3–0.6 ms of its 1–2 ms start
//! (issue 17: headless start-up ≤ 2 ms; docs/architecture.md). The cost: the executable's own
//! code is not placed at a random address (ASLR still covers the libraries, stack and heap).
//! The window executable (Bevy) is linked so too: 9 MiB of its 100 MiB were ~390,000 such
//! relocations, whose targets (4 MiB of vtables and tables) were written at every start; and with
//! identical code folded (`--icf=all`: monomorphised copies that compile to the same bytes are
//! kept once; a backtrace may name either of two folded functions). Issue 31, docs/performance.md.

fn main() {
    if std::env::var("CARGO_CFG_TARGET_OS").as_deref() == Ok("linux") {
        println!("cargo:rustc-link-arg-bin=familiar=-no-pie");
        println!("cargo:rustc-link-arg-bin=familiar-window=-no-pie");
        // Identical code folding is lld's (rustc's default linker on x86_64 Linux); GNU ld,
        // the default elsewhere, does not know the flag.
        if std::env::var("CARGO_CFG_TARGET_ARCH").as_deref() == Ok("x86_64") {
            println!("cargo:rustc-link-arg-bin=familiar-window=-Wl,--icf=all");
        }
    }
    println!("cargo:rerun-if-changed=build.rs");
}

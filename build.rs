//! Build script of the root package: links the `familiar` executable position-dependent
//! (`-no-pie`) on Linux. A PIE executable has its ~32,000 relative relocations (vtables, string
//! tables, panic locations) applied by the dynamic loader at every start, which dirties ~150
//! pages: about half of `familiar --version`'s page faults and 0.3–0.6 ms of its 1–2 ms start
//! (issue 17: headless start-up ≤ 2 ms; docs/architecture.md). The cost: the executable's own
//! code is not placed at a random address (ASLR still covers the libraries, stack and heap).
//! The window executable (Bevy) keeps the default.

fn main() {
    if std::env::var("CARGO_CFG_TARGET_OS").as_deref() == Ok("linux") {
        println!("cargo:rustc-link-arg-bin=familiar=-no-pie");
    }
    println!("cargo:rerun-if-changed=build.rs");
}

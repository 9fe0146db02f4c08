//! Links `game-demo` as the root package's build script links `familiar-window` (position
//! dependent, identical code folded), so that what `bench/game.sh` and `bench/window-memory.sh`
//! measure of it (RSS, start-up) is what the shipped window does.

fn main() {
    if std::env::var("CARGO_CFG_TARGET_OS").as_deref() == Ok("linux") {
        println!("cargo:rustc-link-arg-bin=game-demo=-no-pie");
        // lld's, as in the root package's build script.
        if std::env::var("CARGO_CFG_TARGET_ARCH").as_deref() == Ok("x86_64") {
            println!("cargo:rustc-link-arg-bin=game-demo=-Wl,--icf=all");
        }
    }
    println!("cargo:rerun-if-changed=build.rs");
}

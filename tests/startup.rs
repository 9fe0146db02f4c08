//! The headless binary's start-up: `familiar` is linked position-dependent (build.rs), so the
//! dynamic loader has no relative relocations to apply at every start (issue 17: start-up
//! ≤ 2 ms; the figure itself is `bench/startup.sh`'s, never timed here).

use std::fs;

/// ELF `e_type` of an executable linked without PIE (`ET_EXEC`); a PIE is `ET_DYN` (3).
const ET_EXEC: u16 = 2;

#[cfg(target_os = "linux")]
#[test]
fn familiar_is_linked_position_dependent() {
    let path = env!("CARGO_BIN_EXE_familiar");
    let bytes = fs::read(path).expect("read the familiar executable");
    assert_eq!(&bytes[..4], b"\x7fELF", "{path} is an ELF file");
    let e_type = u16::from_le_bytes([bytes[16], bytes[17]]);
    assert_eq!(e_type, ET_EXEC, "{path}: e_type {e_type} (3 is a PIE)");
}

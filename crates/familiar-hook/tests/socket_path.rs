//! Where the hook socket lives without `XDG_RUNTIME_DIR`: a private `familiar-$UID`
//! directory in the temp dir, created 0700. (Its own test binary: it sets the environment.)

use std::os::unix::fs::{MetadataExt as _, PermissionsExt as _};

use familiar_hook::{HookListener, socket_path};

#[test]
fn without_xdg_runtime_dir_the_socket_is_in_a_private_temp_dir() {
    let tmp = tempfile::tempdir().expect("temp dir");
    // SAFETY: this test binary has this one test, so no other thread reads the environment.
    unsafe {
        std::env::remove_var("FAMILIAR_SOCKET");
        std::env::remove_var("XDG_RUNTIME_DIR");
        std::env::set_var("TMPDIR", tmp.path());
    }
    let uid = std::fs::metadata(tmp.path()).expect("dir").uid();
    let path = socket_path().expect("a path");
    assert_eq!(path, tmp.path().join(format!("familiar-{uid}/hook.sock")));
    let listener = HookListener::bind(&path).expect("binds");
    let dir = std::fs::metadata(path.parent().expect("dir")).expect("dir");
    assert_eq!(dir.permissions().mode() & 0o777, 0o700);
    assert_eq!(dir.uid(), uid);
    drop(listener);
    assert!(!path.exists());

    // A directory someone made there beforehand, open to all, is refused.
    std::fs::set_permissions(
        path.parent().expect("dir"),
        std::fs::Permissions::from_mode(0o777),
    )
    .expect("chmod");
    assert!(HookListener::bind(&path).is_err());
}

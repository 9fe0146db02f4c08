//! The open-file limit: Familiar holds one descriptor per followed transcript, and the common
//! soft limit (1,024) is far below a busy project's sessions. [`raise_limit`] lifts the soft
//! limit to the hard one at start (as a shell's `ulimit -n unlimited`-short-of-root does); past
//! even that, the tailer parks idle files ([`crate::file::FileTail::park`]) and reopens them
//! when they change.

use std::io;

/// The process's open-file limits, soft and hard (`None`: unlimited).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OpenFileLimit {
    pub soft: Option<u64>,
    pub hard: Option<u64>,
}

/// The current limits.
pub fn open_file_limit() -> io::Result<OpenFileLimit> {
    let mut limit = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit writes the struct it is given and reads nothing else.
    if unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit) } != 0 {
        return Err(io::Error::last_os_error());
    }
    let finite = |value: libc::rlim_t| (value != libc::RLIM_INFINITY).then_some(value);
    Ok(OpenFileLimit {
        soft: finite(limit.rlim_cur),
        hard: finite(limit.rlim_max),
    })
}

/// Raise the soft open-file limit to the hard one; returns the limits before and after.
pub fn raise_limit() -> io::Result<(OpenFileLimit, OpenFileLimit)> {
    let before = open_file_limit()?;
    if before.soft == before.hard {
        return Ok((before, before));
    }
    let to_limit = |value: Option<u64>| value.unwrap_or(libc::RLIM_INFINITY);
    let raised = libc::rlimit {
        rlim_cur: to_limit(before.hard),
        rlim_max: to_limit(before.hard),
    };
    // SAFETY: setrlimit reads the struct it is given.
    if unsafe { libc::setrlimit(libc::RLIMIT_NOFILE, &raised) } != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok((before, open_file_limit()?))
}

impl std::fmt::Display for OpenFileLimit {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let shown = |value: Option<u64>| value.map_or("unlimited".to_owned(), |v| v.to_string());
        write!(f, "{} (hard {})", shown(self.soft), shown(self.hard))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_limit_reads_and_raising_leaves_soft_at_hard() {
        let Ok((before, after)) = raise_limit() else {
            panic!("getrlimit/setrlimit failed");
        };
        assert_eq!(after.soft, before.hard);
        assert_eq!(after.hard, before.hard);
        assert_eq!(open_file_limit().ok(), Some(after));
    }
}

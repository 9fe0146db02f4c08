//! The save format, pure: a value of type `T` travels inside a versioned JSON envelope,
//! `{"familiar": "<kind>", "version": <n>, "data": <T>}`. [`encode`] writes the current
//! version; [`decode`] reads it back, hands an older version to [`Versioned::migrate`], and
//! rejects anything else with a [`Rejected`] reason: not JSON, cut short, another kind of file,
//! a newer version (written by a newer Familiar: never guessed at, since reading it with old
//! rules and saving it again would lose what the newer version added). [`set_aside_path`]
//! names the place a rejected file moves to. No I/O here; `file` does it.

use std::path::{Path, PathBuf};

use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;

/// A value kept in a save file.
pub trait Versioned: Serialize + DeserializeOwned {
    /// What the file holds (`"progress"`, `"script-store"`), checked on reading so that one
    /// kind of save is never read as another.
    const KIND: &'static str;
    /// The version [`encode`] writes. Raise it when the shape of the data changes, and teach
    /// [`Versioned::migrate`] to read the previous one.
    const VERSION: u32;

    /// Turns the `data` of an older version into the current value. The default knows no
    /// older version: the file is rejected (and set aside), never misread.
    fn migrate(version: u32, data: Value) -> Result<Self, String> {
        let _ = data;
        Err(format!("no reader for version {version}"))
    }
}

/// Why a save file was not read. The file is set aside and play starts afresh.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Rejected {
    /// Not JSON, cut short, or not the shape this kind of file has.
    #[error("the file is damaged ({0})")]
    Corrupt(String),
    /// Written by a newer Familiar.
    #[error(
        "it was written by a newer Familiar (format version {found}; this one reads up to \
         {known})"
    )]
    Newer { found: u64, known: u32 },
    /// An older version this Familiar cannot read.
    #[error("its format version {found} is too old to read ({reason})")]
    Old { found: u64, reason: String },
    /// Far larger than any save file Familiar writes.
    #[error("it is larger than {max} bytes, far more than Familiar ever saves")]
    TooLarge { max: u64 },
}

impl Rejected {
    /// The word the set-aside file is named with.
    pub fn tag(&self) -> &'static str {
        match self {
            Rejected::Corrupt(_) => "corrupt",
            Rejected::Newer { .. } => "newer",
            Rejected::Old { .. } => "old",
            Rejected::TooLarge { .. } => "large",
        }
    }
}

/// The file's bytes for `value`, in the current version (pretty JSON, so a user can read it).
pub fn encode<T: Versioned>(value: &T) -> Result<Vec<u8>, serde_json::Error> {
    #[derive(Serialize)]
    struct Envelope<'a, T> {
        familiar: &'a str,
        version: u32,
        data: &'a T,
    }
    let mut bytes = serde_json::to_vec_pretty(&Envelope {
        familiar: T::KIND,
        version: T::VERSION,
        data: value,
    })?;
    bytes.push(b'\n');
    Ok(bytes)
}

/// Reads a file's bytes back (see the module documentation for the rules).
pub fn decode<T: Versioned>(bytes: &[u8]) -> Result<T, Rejected> {
    let value: Value =
        serde_json::from_slice(bytes).map_err(|e| Rejected::Corrupt(e.to_string()))?;
    let Value::Object(mut envelope) = value else {
        return Err(Rejected::Corrupt("not a JSON object".to_owned()));
    };
    match envelope.get("familiar").and_then(Value::as_str) {
        Some(kind) if kind == T::KIND => {}
        Some(kind) => {
            return Err(Rejected::Corrupt(format!(
                "a {kind:?} file, not a {:?} file",
                T::KIND
            )));
        }
        None => {
            return Err(Rejected::Corrupt(format!(
                "not a Familiar {:?} file (no \"familiar\" field)",
                T::KIND
            )));
        }
    }
    let Some(version) = envelope.get("version").and_then(Value::as_u64) else {
        return Err(Rejected::Corrupt("no format version".to_owned()));
    };
    let data = envelope.remove("data").unwrap_or(Value::Null);
    let known = u64::from(T::VERSION);
    if version > known {
        Err(Rejected::Newer {
            found: version,
            known: T::VERSION,
        })
    } else if version < known {
        // `version < T::VERSION`, so it fits in a u32.
        let v = u32::try_from(version).unwrap_or(0);
        T::migrate(v, data).map_err(|reason| Rejected::Old {
            found: version,
            reason,
        })
    } else {
        serde_json::from_value(data).map_err(|e| Rejected::Corrupt(e.to_string()))
    }
}

/// Where a rejected `path` moves: beside it, named after the reason
/// (`progress.json.corrupt`, then `progress.json.corrupt-2`, ...), never over an earlier one.
/// `None` if every name up to 999 is taken (or `path` has no file name).
pub fn set_aside_path(
    path: &Path,
    rejected: &Rejected,
    exists: impl Fn(&Path) -> bool,
) -> Option<PathBuf> {
    let name = path.file_name()?.to_string_lossy().into_owned();
    let tag = rejected.tag();
    (1..1000)
        .map(|n| {
            let file = if n == 1 {
                format!("{name}.{tag}")
            } else {
                format!("{name}.{tag}-{n}")
            };
            path.with_file_name(file)
        })
        .find(|candidate| !exists(candidate))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde::Deserialize;

    #[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
    struct Score {
        points: u64,
        name: String,
    }

    impl Versioned for Score {
        const KIND: &'static str = "score";
        const VERSION: u32 = 2;

        /// Version 1 kept only the points.
        fn migrate(version: u32, data: Value) -> Result<Score, String> {
            match version {
                1 => {
                    let points = data
                        .get("points")
                        .and_then(Value::as_u64)
                        .ok_or("no points")?;
                    Ok(Score {
                        points,
                        name: "you".to_owned(),
                    })
                }
                v => Err(format!("no reader for version {v}")),
            }
        }
    }

    fn score() -> Score {
        Score {
            points: 42,
            name: "Ada ✨ 日本".to_owned(),
        }
    }

    #[test]
    fn encode_then_decode_round_trips() {
        let bytes = encode(&score()).unwrap_or_default();
        assert_eq!(decode::<Score>(&bytes), Ok(score()));
        let text = String::from_utf8_lossy(&bytes);
        assert!(text.contains("\"familiar\": \"score\""), "{text}");
        assert!(text.contains("\"version\": 2"), "{text}");
    }

    #[test]
    fn a_truncated_file_is_corrupt() {
        let bytes = encode(&score()).unwrap_or_default();
        for cut in [0, 1, bytes.len() / 2, bytes.len() - 3] {
            let got = decode::<Score>(&bytes[..cut]);
            assert!(
                matches!(got, Err(Rejected::Corrupt(_))),
                "cut at {cut}: {got:?}"
            );
        }
    }

    #[test]
    fn garbage_and_wrong_shapes_are_corrupt() {
        for bad in [
            &b"\x00\xff\xfe garbage"[..],
            b"[1, 2]",
            b"{\"version\": 2, \"data\": {}}",
            b"{\"familiar\": \"progress\", \"version\": 2, \"data\": {}}",
            b"{\"familiar\": \"score\", \"data\": {}}",
            b"{\"familiar\": \"score\", \"version\": -1, \"data\": {}}",
            b"{\"familiar\": \"score\", \"version\": 2, \"data\": {\"points\": \"many\"}}",
            b"{\"familiar\": \"score\", \"version\": 2}",
        ] {
            let got = decode::<Score>(bad);
            assert!(
                matches!(got, Err(Rejected::Corrupt(_))),
                "{}: {got:?}",
                String::from_utf8_lossy(bad)
            );
        }
    }

    #[test]
    fn an_older_version_is_migrated() {
        let v1 = br#"{"familiar": "score", "version": 1, "data": {"points": 7}}"#;
        assert_eq!(
            decode::<Score>(v1),
            Ok(Score {
                points: 7,
                name: "you".to_owned()
            })
        );
    }

    #[test]
    fn an_older_version_without_a_reader_is_rejected() {
        let v0 = br#"{"familiar": "score", "version": 0, "data": {"points": 7}}"#;
        let got = decode::<Score>(v0);
        assert!(
            matches!(got, Err(Rejected::Old { found: 0, .. })),
            "{got:?}"
        );
        let bad_v1 = br#"{"familiar": "score", "version": 1, "data": {}}"#;
        assert!(matches!(
            decode::<Score>(bad_v1),
            Err(Rejected::Old { found: 1, .. })
        ));
    }

    #[test]
    fn a_newer_version_is_rejected_not_guessed_at() {
        // Even when its data would read as the current version.
        let v3 = br#"{"familiar": "score", "version": 3, "data": {"points": 7, "name": "x"}}"#;
        let got = decode::<Score>(v3);
        assert_eq!(got, Err(Rejected::Newer { found: 3, known: 2 }));
        let message = got.err().map(|e| e.to_string()).unwrap_or_default();
        assert!(message.contains("newer Familiar"), "{message}");
    }

    #[test]
    fn set_aside_names_never_reuse_an_earlier_one() {
        let path = Path::new("/data/progress.json");
        let corrupt = Rejected::Corrupt("x".to_owned());
        assert_eq!(
            set_aside_path(path, &corrupt, |_| false),
            Some(PathBuf::from("/data/progress.json.corrupt"))
        );
        let taken = [
            PathBuf::from("/data/progress.json.corrupt"),
            PathBuf::from("/data/progress.json.corrupt-2"),
        ];
        assert_eq!(
            set_aside_path(path, &corrupt, |p| taken.iter().any(|t| t == p)),
            Some(PathBuf::from("/data/progress.json.corrupt-3"))
        );
        let newer = Rejected::Newer { found: 9, known: 1 };
        assert_eq!(
            set_aside_path(path, &newer, |_| false),
            Some(PathBuf::from("/data/progress.json.newer"))
        );
        assert_eq!(set_aside_path(path, &newer, |_| true), None);
    }
}

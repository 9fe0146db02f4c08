//! `store`: a map each script keeps across runs of Familiar. The host puts a `store`
//! variable in every script's scope before the script's body runs (so the body, `init()` and
//! the handlers all see it), filled from `<store dir>/<script name>.json`; after handlers it
//! saves the map again when it changed, at most once a second, and [`crate::ScriptHost`]
//! saves what is left when it is dropped. The file follows `familiar-save`'s rules: a
//! versioned envelope, atomic writes, a damaged or newer file set aside with one warning (the
//! script then starts with an empty store), a failing write one warning per run of failures.
//! Without a store directory (dry runs, tests, the demo) the store lives in memory only. It
//! survives a hot reload of its script, unlike the other state variables.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use familiar_save::{FailureGate, Versioned};
use rhai::{Dynamic, Map};
use serde::{Deserialize, Serialize};

/// The name of the variable.
pub const STORE: &str = "store";

/// The largest store saved, as JSON text: a store is for counters and small maps.
pub const MAX_STORE_BYTES: usize = 1 << 20;

/// How often handlers' changes are written, at most.
const SAVE_EVERY: Duration = Duration::from_secs(1);

/// The store's file: a JSON object in a versioned envelope.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(transparent)]
struct StoreFile(serde_json::Map<String, serde_json::Value>);

impl Versioned for StoreFile {
    const KIND: &'static str = "script-store";
    const VERSION: u32 = 1;
}

/// Where `familiar watch` keeps stores: `<data dir>/scripts` (`~/.local/share/familiar/scripts`
/// on Linux).
pub fn default_dir() -> Option<PathBuf> {
    familiar_save::data_dir().map(|dir| dir.join("scripts"))
}

/// `<dir>/<script name>.json`; characters other than letters, digits, `.`, `-` and `_` become
/// `_`, so a name never leaves the directory.
pub(crate) fn path_for(dir: &Path, script: &str) -> PathBuf {
    let safe: String = script
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '_') {
                c
            } else {
                '_'
            }
        })
        .collect();
    let safe = safe.trim_start_matches('.');
    dir.join(format!("{}.json", if safe.is_empty() { "_" } else { safe }))
}

/// The persistence of one script's store.
#[derive(Debug)]
pub(crate) struct Store {
    /// Where it is saved; `None` keeps it in memory.
    path: Option<PathBuf>,
    /// The JSON text last read or written, to save only changes.
    saved: String,
    /// This script's store as it was last read or saved: a save writes only what changed
    /// since, into what the file holds then ([`merge_changes`]).
    base: serde_json::Map<String, serde_json::Value>,
    last_check: Option<Instant>,
    gate: FailureGate,
}

impl Store {
    /// Reads the store of `script` (an empty map when there is none or it was set aside).
    pub fn open(dir: Option<&Path>, script: &str) -> (Store, Map) {
        let mut store = Store {
            path: dir.map(|d| path_for(d, script)),
            saved: "{}".to_owned(),
            base: serde_json::Map::new(),
            last_check: None,
            gate: FailureGate::default(),
        };
        let Some(path) = store.path.clone() else {
            return (store, Map::new());
        };
        let file = match familiar_save::load::<StoreFile>(&path) {
            Ok(file) => file.unwrap_or_default(),
            Err(err) => {
                tracing::warn!("store of {script}: {err}");
                if !err.may_save() {
                    store.path = None;
                }
                StoreFile::default()
            }
        };
        let map = match rhai::serde::to_dynamic(&file.0).map(Dynamic::try_cast::<Map>) {
            Ok(Some(map)) => map,
            _ => Map::new(),
        };
        store.saved = serde_json::to_string(&file.0).unwrap_or_else(|_| "{}".to_owned());
        store.base = file.0;
        (store, map)
    }

    /// Saves `value` if it changed and a second has passed since the last look.
    pub fn save_soon(&mut self, value: Option<&Dynamic>, script: &str) {
        // Called after every handler call: a store kept in memory only (a dry run) costs
        // nothing, not even a look at the clock.
        if self.path.is_none() {
            return;
        }
        let now = Instant::now();
        if self
            .last_check
            .is_some_and(|last| now.duration_since(last) < SAVE_EVERY)
        {
            return;
        }
        self.last_check = Some(now);
        self.save_now(value, script);
    }

    /// Saves `value` if it changed.
    pub fn save_now(&mut self, value: Option<&Dynamic>, script: &str) {
        let Some(path) = self.path.clone() else {
            return;
        };
        let result = match json_of(value) {
            Ok(json) => {
                let text = serde_json::to_string(&json).unwrap_or_default();
                if text == self.saved {
                    return;
                }
                // Another Familiar may share the file (one per project): its changes since
                // this one last looked stay, and this one's are added.
                let base = &self.base;
                familiar_save::update(&path, |now: Option<StoreFile>| {
                    StoreFile(merge_changes(now.unwrap_or_default().0, base, &json))
                })
                .map(|_| {
                    self.saved = text;
                    self.base = json;
                })
                .map_err(|e| e.to_string())
            }
            Err(why) => Err(format!("store of {script} not saved: {why}")),
        };
        if let Some(err) = self.gate.note(result) {
            tracing::warn!("{err}; the script goes on");
        }
    }
}

/// `saved` with the changes from `base` to `ours` made to it: a key `ours` changed is
/// written (a whole number by its difference, when both sides hold one: two Familiars'
/// `store.xp += 5` add up), a key `ours` removed is removed, maps are merged key by key, and
/// whatever `ours` left as it was keeps the saved value (another Familiar's change).
pub(crate) fn merge_changes(
    mut saved: serde_json::Map<String, serde_json::Value>,
    base: &serde_json::Map<String, serde_json::Value>,
    ours: &serde_json::Map<String, serde_json::Value>,
) -> serde_json::Map<String, serde_json::Value> {
    use serde_json::Value;
    for key in base.keys() {
        if !ours.contains_key(key) {
            saved.remove(key);
        }
    }
    for (key, now) in ours {
        let was = base.get(key);
        if was == Some(now) {
            continue;
        }
        // A key both sides made from nothing counts from nothing: 0, or an empty map.
        let empty = serde_json::Map::new();
        let merged = match (was, now, saved.remove(key)) {
            (None | Some(Value::Object(_)), Value::Object(now), Some(Value::Object(theirs))) => {
                let was = match was {
                    Some(Value::Object(was)) => was,
                    _ => &empty,
                };
                Value::Object(merge_changes(theirs, was, now))
            }
            (None | Some(Value::Number(_)), Value::Number(now), Some(Value::Number(theirs))) => {
                let was = match was {
                    Some(Value::Number(was)) => was.as_i64(),
                    _ => Some(0),
                };
                match (was, now.as_i64(), theirs.as_i64()) {
                    (Some(was), Some(now), Some(theirs)) => {
                        Value::from(theirs.saturating_add(now.saturating_sub(was)))
                    }
                    _ => Value::Number(now.clone()),
                }
            }
            _ => now.clone(),
        };
        saved.insert(key.clone(), merged);
    }
    saved
}

/// The store's value as a JSON object, or why it cannot be saved.
fn json_of(value: Option<&Dynamic>) -> Result<serde_json::Map<String, serde_json::Value>, String> {
    let Some(value) = value else {
        return Err("`store` is gone".to_owned());
    };
    if !value.is_map() {
        return Err(format!(
            "`store` must stay a map, but the script made it {}",
            value.type_name()
        ));
    }
    let json: serde_json::Value = rhai::serde::from_dynamic(value)
        .map_err(|e| format!("it holds something JSON cannot keep ({e})"))?;
    let serde_json::Value::Object(map) = json else {
        return Err("`store` must stay a map".to_owned());
    };
    let size = serde_json::to_string(&map).map_or(usize::MAX, |t| t.len());
    if size > MAX_STORE_BYTES {
        return Err(format!(
            "it is {size} bytes as JSON, more than the {MAX_STORE_BYTES} a store may keep"
        ));
    }
    Ok(map)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn map(json: serde_json::Value) -> serde_json::Map<String, serde_json::Value> {
        match json {
            serde_json::Value::Object(map) => map,
            other => panic!("not a map: {other}"),
        }
    }

    #[test]
    fn changes_merge_into_what_another_familiar_saved() {
        use serde_json::json;
        // Both started from xp 10; the other saved xp 40 (its +30) and a name; this one made
        // xp 40 too (+30), a new key, removed `old`, and changed a nested counter.
        let base = map(json!({"xp": 10, "old": true, "name": "a", "n": {"x": 1, "y": 1}}));
        let saved = map(json!({"xp": 40, "old": true, "name": "b", "n": {"x": 1, "y": 5}}));
        let ours = map(json!({"xp": 40, "name": "a", "new": [1], "n": {"x": 3, "y": 1}}));
        assert_eq!(
            serde_json::Value::Object(merge_changes(saved, &base, &ours)),
            json!({"xp": 70, "name": "b", "new": [1], "n": {"x": 3, "y": 5}})
        );
    }

    proptest::proptest! {
        /// Two Familiars start from one saved store and each adds to some counters, sets some
        /// names and drops some keys; whichever saves first, the file ends with every counter
        /// raised by both, and each change of either kept.
        #[test]
        fn two_savers_in_either_order_lose_no_change(
            base in proptest::collection::btree_map("[a-e]", 0i64..100, 0..5),
            one in proptest::collection::btree_map("[a-g]", -50i64..50, 0..6),
            two in proptest::collection::btree_map("[a-g]", -50i64..50, 0..6),
        ) {
            let start: serde_json::Map<_, _> =
                base.iter().map(|(k, v)| (k.clone(), serde_json::Value::from(*v))).collect();
            let changed = |deltas: &std::collections::BTreeMap<String, i64>| {
                let mut map = start.clone();
                for (key, delta) in deltas {
                    let was = map.get(key).and_then(serde_json::Value::as_i64).unwrap_or(0);
                    map.insert(key.clone(), serde_json::Value::from(was + delta));
                }
                map
            };
            let (ours_one, ours_two) = (changed(&one), changed(&two));
            let first = merge_changes(start.clone(), &start, &ours_one);
            let both = merge_changes(first, &start, &ours_two);
            let first = merge_changes(start.clone(), &start, &ours_two);
            let other_order = merge_changes(first, &start, &ours_one);
            proptest::prop_assert_eq!(&both, &other_order);
            for key in base.keys().chain(one.keys()).chain(two.keys()) {
                let want = base.get(key).copied().unwrap_or(0)
                    + one.get(key).copied().unwrap_or(0)
                    + two.get(key).copied().unwrap_or(0);
                proptest::prop_assert_eq!(both.get(key).and_then(|v| v.as_i64()), Some(want));
            }
        }
    }

    #[test]
    fn script_names_stay_inside_the_store_dir() {
        let dir = Path::new("/data/stores");
        assert_eq!(path_for(dir, "default.rhai"), dir.join("default.rhai.json"));
        assert_eq!(
            path_for(dir, "../../etc/passwd"),
            dir.join("_.._etc_passwd.json")
        );
        assert_eq!(path_for(dir, ".."), dir.join("_.json"));
        assert_eq!(path_for(dir, "é 日.rhai"), dir.join("___.rhai.json"));
    }
}

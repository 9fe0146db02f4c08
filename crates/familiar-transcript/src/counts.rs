//! A count per name, in name order: what [`crate::metrics::Metrics`] keeps of record types,
//! tools and unknown things, for every file a watcher follows.
//!
//! A `BTreeMap<String, u64>` allocates a node for eleven entries with its first one: about
//! 370 bytes for a file's three or four record types, twice per file (records and tools), and
//! a watcher of 5,000 sessions held 3.3 MB of them. A sorted vector holds what is counted and
//! no more. Past [`SMALL`] names (a transcript that names thousands of tools) it becomes a
//! `BTreeMap`, so that counting stays `O(log n)` whatever a file holds. The names themselves
//! (`assistant`, `Read`, ...) are the same in every file: one copy of each is shared by all
//! ([`shared`]), up to a bound.
//!
//! ```
//! use familiar_transcript::counts::Counts;
//!
//! let mut tools = Counts::default();
//! assert!(tools.add("Read", 1));
//! assert!(!tools.add("Read", 2));
//! tools.add("Bash", 1);
//! assert_eq!(tools.get("Read"), Some(3));
//! assert_eq!(tools.iter().collect::<Vec<_>>(), [("Bash", 1), ("Read", 3)]);
//! ```

use std::collections::{BTreeMap, HashSet};
use std::fmt;
use std::sync::{Arc, Mutex, OnceLock};

/// Names kept in a sorted vector; past this, in a `BTreeMap`.
const SMALL: usize = 32;
/// Names shared across files: at most this many, of at most [`MAX_SHARED_NAME`] bytes each
/// (what a transcript names is untrusted: past these, a name is its file's own).
const MAX_SHARED: usize = 4096;
const MAX_SHARED_NAME: usize = 128;

/// `name`, as one copy shared by every [`Counts`] of the process when it can be.
fn shared(name: &str) -> Arc<str> {
    static NAMES: OnceLock<Mutex<HashSet<Arc<str>>>> = OnceLock::new();
    if name.len() > MAX_SHARED_NAME {
        return Arc::from(name);
    }
    let mut names = NAMES
        .get_or_init(Mutex::default)
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    if let Some(known) = names.get(name) {
        return Arc::clone(known);
    }
    let name: Arc<str> = Arc::from(name);
    if names.len() < MAX_SHARED {
        names.insert(Arc::clone(&name));
    }
    name
}

/// How many times each name was counted.
#[derive(Clone, Default)]
pub struct Counts(Repr);

#[derive(Clone)]
enum Repr {
    Small(Vec<(Arc<str>, u64)>),
    Large(BTreeMap<Arc<str>, u64>),
}

impl Default for Repr {
    fn default() -> Repr {
        Repr::Small(Vec::new())
    }
}

impl Counts {
    /// Count `name` `n` more times; `true` when it was not counted before.
    pub fn add(&mut self, name: &str, n: u64) -> bool {
        match &mut self.0 {
            Repr::Small(names) => match names.binary_search_by(|(key, _)| (**key).cmp(name)) {
                Ok(at) => {
                    names[at].1 += n;
                    false
                }
                Err(_) if names.len() >= SMALL => {
                    let mut large: BTreeMap<Arc<str>, u64> = names.drain(..).collect();
                    large.insert(shared(name), n);
                    self.0 = Repr::Large(large);
                    true
                }
                Err(at) => {
                    if names.capacity() == 0 {
                        // Most files count a handful: room grows from one, not from four.
                        names.reserve_exact(1);
                    }
                    names.insert(at, (shared(name), n));
                    true
                }
            },
            Repr::Large(names) => match names.get_mut(name) {
                Some(count) => {
                    *count += n;
                    false
                }
                None => {
                    names.insert(shared(name), n);
                    true
                }
            },
        }
    }

    /// How many times `name` was counted, if it was.
    pub fn get(&self, name: &str) -> Option<u64> {
        match &self.0 {
            Repr::Small(names) => names
                .binary_search_by(|(key, _)| (**key).cmp(name))
                .ok()
                .map(|at| names[at].1),
            Repr::Large(names) => names.get(name).copied(),
        }
    }

    /// Every name and its count, in name order.
    pub fn iter(&self) -> impl Iterator<Item = (&str, u64)> {
        let (small, large) = match &self.0 {
            Repr::Small(names) => (names.as_slice(), None),
            Repr::Large(names) => (&[][..], Some(names)),
        };
        small.iter().map(|(name, count)| (&**name, *count)).chain(
            large
                .into_iter()
                .flatten()
                .map(|(name, count)| (&**name, *count)),
        )
    }

    /// The counts, in name order.
    pub fn values(&self) -> impl Iterator<Item = u64> {
        self.iter().map(|(_, count)| count)
    }

    /// How many names are counted.
    pub fn len(&self) -> usize {
        match &self.0 {
            Repr::Small(names) => names.len(),
            Repr::Large(names) => names.len(),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The same counts as a map (the JSON forms: `stats --json`, a session's snapshot).
    pub fn to_map(&self) -> BTreeMap<String, u64> {
        self.iter()
            .map(|(name, count)| (name.to_owned(), count))
            .collect()
    }
}

impl PartialEq for Counts {
    fn eq(&self, other: &Counts) -> bool {
        self.iter().eq(other.iter())
    }
}

impl Eq for Counts {}

impl fmt::Debug for Counts {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_map().entries(self.iter()).finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Against a `BTreeMap` on the same counts, across the switch to one: the same answers.
    #[test]
    fn counts_as_a_btree_map_does() {
        let mut ours = Counts::default();
        let mut map: BTreeMap<String, u64> = BTreeMap::new();
        for step in 0u64..3000 {
            let name = format!("tool-{}", step * 7919 % (SMALL as u64 * 3));
            let n = step % 5 + 1;
            let new = !map.contains_key(&name);
            *map.entry(name.clone()).or_default() += n;
            assert_eq!(ours.add(&name, n), new, "step {step}");
            assert_eq!(ours.get(&name), map.get(&name).copied());
            assert_eq!(ours.len(), map.len());
            if step % 97 == 0 {
                assert_eq!(ours.to_map(), map, "step {step}");
            }
        }
        assert_eq!(ours.to_map(), map);
        assert!(matches!(ours.0, Repr::Large(_)));
        assert_eq!(ours.get("absent"), None);
    }

    #[test]
    fn a_name_is_one_copy_for_every_file_up_to_a_bound() {
        let (mut one, mut other) = (Counts::default(), Counts::default());
        one.add("a-shared-name", 1);
        other.add("a-shared-name", 1);
        let first = |counts: &Counts| match &counts.0 {
            Repr::Small(names) => Arc::clone(&names[0].0),
            Repr::Large(_) => unreachable!("one name"),
        };
        assert!(Arc::ptr_eq(&first(&one), &first(&other)));
        let long = "x".repeat(MAX_SHARED_NAME + 1);
        let (mut one, mut other) = (Counts::default(), Counts::default());
        one.add(&long, 1);
        other.add(&long, 1);
        assert!(!Arc::ptr_eq(&first(&one), &first(&other)));
        assert_eq!(one, other);
    }

    #[test]
    fn equal_by_contents_and_shown_as_a_map() {
        let (mut one, mut other) = (Counts::default(), Counts::default());
        one.add("b", 2);
        one.add("a", 1);
        other.add("a", 1);
        assert_ne!(one, other);
        other.add("b", 1);
        other.add("b", 1);
        assert_eq!(one, other);
        assert_eq!(format!("{one:?}"), r#"{"a": 1, "b": 2}"#);
        assert_eq!(one.iter().collect::<Vec<_>>(), [("a", 1), ("b", 2)]);
        assert_eq!(one.values().sum::<u64>(), 3);
    }
}

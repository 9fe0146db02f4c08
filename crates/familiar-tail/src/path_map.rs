//! Maps and sets keyed by a followed file's path, hashed and compared as the path's bytes.
//!
//! The tailer looks its files up by path several times per change (the changed set, the file,
//! its generation, the busy set), and at 1,000 live sessions a `HashMap<PathBuf, _>` spent a
//! tenth of the tailer thread's time in `Path`'s own `Hash` and `Eq`, which walk the path
//! component by component, and in SipHash. Every path the tailer holds is built the same way
//! (a watched root joined with the names under it), so one file has one spelling and its bytes
//! identify it.

use std::fmt;
use std::hash::BuildHasher as _;
use std::path::Path;
use std::sync::Arc;

use hashbrown::DefaultHashBuilder;
use hashbrown::hash_table::{Entry, HashTable};

fn bytes(path: &Path) -> &[u8] {
    path.as_os_str().as_encoded_bytes()
}

/// A map from paths to `V`. A path is kept as an `Arc`: the tables of one followed file share
/// its one copy (a file's tail holds it, and so do its entries in the tailer's tables).
#[derive(Clone)]
pub(crate) struct PathMap<V> {
    table: HashTable<(Arc<Path>, V)>,
    hasher: DefaultHashBuilder,
}

impl<V> Default for PathMap<V> {
    fn default() -> PathMap<V> {
        PathMap {
            table: HashTable::new(),
            hasher: DefaultHashBuilder::default(),
        }
    }
}

impl<V> PathMap<V> {
    fn hash(&self, path: &Path) -> u64 {
        self.hasher.hash_one(bytes(path))
    }

    pub fn len(&self) -> usize {
        self.table.len()
    }

    pub fn is_empty(&self) -> bool {
        self.table.is_empty()
    }

    pub fn get(&self, path: &Path) -> Option<&V> {
        let key = bytes(path);
        self.table
            .find(self.hash(path), |(k, _)| bytes(k) == key)
            .map(|(_, v)| v)
    }

    pub fn get_mut(&mut self, path: &Path) -> Option<&mut V> {
        let hash = self.hash(path);
        let key = bytes(path);
        self.table
            .find_mut(hash, |(k, _)| bytes(k) == key)
            .map(|(_, v)| v)
    }

    pub fn contains_key(&self, path: &Path) -> bool {
        self.get(path).is_some()
    }

    /// Set `path`'s value; the value it had, if any.
    pub fn insert(&mut self, path: impl Into<Arc<Path>>, value: V) -> Option<V> {
        let path = path.into();
        let hash = self.hash(&path);
        let hasher = &self.hasher;
        match self.table.entry(
            hash,
            |(k, _)| bytes(k) == bytes(&path),
            |(k, _)| hasher.hash_one(bytes(k)),
        ) {
            Entry::Occupied(mut entry) => Some(std::mem::replace(&mut entry.get_mut().1, value)),
            Entry::Vacant(entry) => {
                entry.insert((path, value));
                None
            }
        }
    }

    /// `path`'s value, set to `default()` first if it has none.
    pub fn get_or_insert_with(
        &mut self,
        path: impl Into<Arc<Path>>,
        default: impl FnOnce() -> V,
    ) -> &mut V {
        let path = path.into();
        let hash = self.hash(&path);
        let hasher = &self.hasher;
        let entry = self.table.entry(
            hash,
            |(k, _)| bytes(k) == bytes(&path),
            |(k, _)| hasher.hash_one(bytes(k)),
        );
        &mut entry.or_insert_with(|| (path, default())).into_mut().1
    }

    pub fn remove(&mut self, path: &Path) -> Option<V> {
        let hash = self.hash(path);
        let key = bytes(path);
        self.table
            .find_entry(hash, |(k, _)| bytes(k) == key)
            .ok()
            .map(|entry| entry.remove().0.1)
    }

    pub fn retain(&mut self, mut keep: impl FnMut(&Path, &mut V) -> bool) {
        self.table.retain(|(k, v)| keep(k, v));
    }

    /// The path as kept here, for another table to share.
    pub fn key(&self, path: &Path) -> Option<&Arc<Path>> {
        let key = bytes(path);
        self.table
            .find(self.hash(path), |(k, _)| bytes(k) == key)
            .map(|(k, _)| k)
    }

    pub fn iter(&self) -> impl Iterator<Item = (&Arc<Path>, &V)> {
        self.table.iter().map(|(k, v)| (k, v))
    }

    pub fn keys(&self) -> impl Iterator<Item = &Arc<Path>> {
        self.table.iter().map(|(k, _)| k)
    }

    pub fn values(&self) -> impl Iterator<Item = &V> {
        self.table.iter().map(|(_, v)| v)
    }

    pub fn iter_mut(&mut self) -> impl Iterator<Item = (&Arc<Path>, &mut V)> {
        self.table.iter_mut().map(|(k, v)| (&*k, v))
    }

    pub fn clear(&mut self) {
        self.table.clear();
    }
}

impl<V> IntoIterator for PathMap<V> {
    type Item = (Arc<Path>, V);
    type IntoIter = hashbrown::hash_table::IntoIter<(Arc<Path>, V)>;

    fn into_iter(self) -> Self::IntoIter {
        self.table.into_iter()
    }
}

impl<V: fmt::Debug> fmt::Debug for PathMap<V> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_map().entries(self.iter()).finish()
    }
}

/// A set of paths.
#[derive(Clone, Default)]
pub(crate) struct PathSet(PathMap<()>);

impl PathSet {
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    pub fn contains(&self, path: &Path) -> bool {
        self.0.contains_key(path)
    }

    /// `true` when `path` was not in the set.
    pub fn insert(&mut self, path: impl Into<Arc<Path>>) -> bool {
        self.0.insert(path, ()).is_none()
    }

    /// `true` when `path` was in the set.
    pub fn remove(&mut self, path: &Path) -> bool {
        self.0.remove(path).is_some()
    }

    pub fn retain(&mut self, mut keep: impl FnMut(&Path) -> bool) {
        self.0.retain(|path, ()| keep(path));
    }

    pub fn iter(&self) -> impl Iterator<Item = &Arc<Path>> {
        self.0.keys()
    }

    pub fn clear(&mut self) {
        self.0.clear();
    }
}

impl fmt::Debug for PathSet {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_set().entries(self.iter()).finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;
    use std::path::PathBuf;

    /// Against `HashMap` on the same operations: the same answers.
    #[test]
    fn behaves_as_a_hash_map_of_paths() {
        let mut ours = PathMap::default();
        let mut std_map = HashMap::new();
        for step in 0u32..2000 {
            let path = PathBuf::from(format!("/p/{}/s.jsonl", step * 7919 % 97));
            match step % 5 {
                0 | 1 => assert_eq!(ours.insert(path.clone(), step), std_map.insert(path, step)),
                2 => assert_eq!(ours.remove(&path), std_map.remove(&path)),
                3 => {
                    *ours.get_or_insert_with(path.clone(), || 0) += 1;
                    *std_map.entry(path).or_insert(0) += 1;
                }
                _ => {
                    ours.retain(|p, v| *v % 3 != 0 || p.ends_with("5/s.jsonl"));
                    std_map.retain(|p, v| *v % 3 != 0 || p.ends_with("5/s.jsonl"));
                }
            }
            assert_eq!(ours.len(), std_map.len());
        }
        for (path, value) in &std_map {
            assert_eq!(ours.get(path), Some(value));
        }
        let mut all: Vec<_> = ours
            .into_iter()
            .map(|(path, value)| (path.to_path_buf(), value))
            .collect();
        all.sort();
        let mut expected: Vec<_> = std_map.into_iter().collect();
        expected.sort();
        assert_eq!(all, expected);
    }

    #[test]
    fn a_set_says_what_changed() {
        let mut set = PathSet::default();
        assert!(set.insert(Path::new("/a")));
        assert!(!set.insert(Path::new("/a")));
        assert!(set.contains(Path::new("/a")));
        assert!(set.remove(Path::new("/a")));
        assert!(!set.remove(Path::new("/a")));
        assert!(set.is_empty());
    }
}

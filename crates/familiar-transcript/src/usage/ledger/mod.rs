//! The [`Ledger`]: every API message seen so far, counted once (see [`super`] for the rule),
//! in memory that grows by a fixed few tens of bytes per distinct message, whatever its ids
//! hold.
//!
//! A message is known by a 96-bit hash of its message id and request id ([`Key`]), not by the
//! ids themselves: 150,000 messages kept as strings made `familiar stats` peak at 35 MB on an
//! event-dense transcript. The hash is 128-bit SipHash-1-3, cut to 96 bits, under one secret
//! key per process: random, or the key of `familiar stats`'s cache ([`use_hash_key`]), which
//! keeps ledgers ([`Ledger::encode`]) from one run to the next. Two different messages share a
//! key only by a collision of that keyed function: among `n` messages the chance of any is
//! about n² / 2⁹⁷, under 10⁻¹⁷ for a million messages and 10⁻¹¹ for a billion (128 bits would
//! cost every message 4 bytes more, a tenth of what it costs); and without the key (in memory,
//! or in a file only its user can read), ids cannot be chosen to collide. A collision would
//! count the two messages as one (the better record of the two kept).
//!
//! Kept records live in chunks of a fixed size, not one vector that doubles: a growing vector
//! holds its old and new copies at once while it moves.

mod encoded;

use std::hash::{BuildHasher as _, Hash as _};
use std::sync::OnceLock;

use hashbrown::HashTable;
use siphasher::sip128::{Hasher128 as _, SipHasher13};

use super::UsageEntry;
use crate::pricing::{PriceTable, Tokens};

pub use encoded::DecodeError;

/// The one key of the process: every ledger (they are merged across threads, and with ledgers
/// decoded from a cache) hashes with it. Chosen at random on first use unless
/// [`use_hash_key`] chose it before.
static KEYING: OnceLock<[u64; 2]> = OnceLock::new();

/// A new secret key for [`use_hash_key`], from the system's randomness (as std's hash maps'
/// keys are).
pub fn random_hash_key() -> [u64; 2] {
    let state = std::collections::hash_map::RandomState::new();
    [state.hash_one(0u8), state.hash_one(1u8)]
}

/// Hash message ids under `key` from now on, for the whole process: a ledger encoded by an
/// earlier run under the same key can then be merged with the ledgers of this one. `false`
/// when a message was already hashed under another key (the key cannot change then).
pub fn use_hash_key(key: [u64; 2]) -> bool {
    *KEYING.get_or_init(|| key) == key
}

/// A message's identity: 96 bits of keyed hash of its message id and request id (as three
/// `u32`, so that a kept message needs no 8-byte alignment).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Key([u32; 3]);

impl Key {
    fn of(message_id: &str, request_id: Option<&str>) -> Key {
        let [k0, k1] = *KEYING.get_or_init(random_hash_key);
        let mut hasher = SipHasher13::new_with_keys(k0, k1);
        // `str` hashes its bytes and a terminator (0xff, never in UTF-8), and `Option` its
        // variant first: no two different pairs of ids feed the same bytes.
        message_id.hash(&mut hasher);
        request_id.hash(&mut hasher);
        let hash = hasher.finish128();
        let (low, high) = (hash.h1, hash.h2);
        Key([low as u32, (low >> 32) as u32, high as u32])
    }

    /// Where the key lives in the index: its first half is already a keyed hash.
    fn slot(self) -> u64 {
        u64::from(self.0[0]) | (u64::from(self.0[1]) << 32)
    }
}

#[derive(Debug, Clone, Copy)]
struct Kept {
    model: u32,
    tokens: Tokens,
    sidechain: bool,
    /// The input (file) the kept record came from.
    source: u32,
}

impl Kept {
    /// Does `self` replace `existing` as the record of their message? The main-chain record,
    /// then the one with more tokens, then the one of the earlier input; the first seen among
    /// equals of one input. So which is kept does not depend on the order inputs are read or
    /// merged in.
    fn better_than(&self, existing: &Kept) -> bool {
        if self.sidechain != existing.sidechain {
            existing.sidechain
        } else if self.tokens.total() != existing.tokens.total() {
            self.tokens.total() > existing.tokens.total()
        } else {
            self.source < existing.source
        }
    }
}

/// A kept message as stored: 40 bytes. Token counts fit in `u32` (the records' are capped at
/// 2³⁰); a record with a larger one keeps its counts in [`Ledger`]'s `wide`, and `counts[0]`
/// is their index there. The input's number and two flags share `source` ([`SOURCE_BITS`]).
#[derive(Debug, Clone, Copy)]
struct Message {
    key: Key,
    counts: [u32; 5],
    model: u32,
    source: u32,
}

/// The low bits of [`Message::source`] are the input's number (inputs are numbered below 2³⁰:
/// a billion files are more than any command line or tree holds); the two above are flags.
const SOURCE_BITS: u32 = (1 << 30) - 1;
const SIDECHAIN: u32 = 1 << 30;
const WIDE: u32 = 1 << 31;

impl Message {
    fn new(key: Key, kept: &Kept, wide: &mut Vec<Tokens>) -> Message {
        let narrow = counts_of(&kept.tokens).map(u32::try_from);
        let (counts, is_wide) = match narrow {
            [Ok(a), Ok(b), Ok(c), Ok(d), Ok(e)] => ([a, b, c, d, e], false),
            _ => {
                wide.push(kept.tokens);
                let at = u32::try_from(wide.len() - 1).unwrap_or(u32::MAX);
                ([at, 0, 0, 0, 0], true)
            }
        };
        let mut source = kept.source.min(SOURCE_BITS);
        if kept.sidechain {
            source |= SIDECHAIN;
        }
        if is_wide {
            source |= WIDE;
        }
        Message {
            key,
            counts,
            model: kept.model,
            source,
        }
    }

    fn kept(&self, wide: &[Tokens]) -> Kept {
        let tokens = if self.source & WIDE != 0 {
            wide.get(self.counts[0] as usize)
                .copied()
                .unwrap_or_default()
        } else {
            tokens_of(self.counts.map(u64::from))
        };
        Kept {
            model: self.model,
            tokens,
            sidechain: self.source & SIDECHAIN != 0,
            source: self.source & SOURCE_BITS,
        }
    }
}

/// A record's five counts, in the order a kept message and an encoded ledger keep them.
fn counts_of(t: &Tokens) -> [u64; 5] {
    [
        t.input,
        t.output,
        t.cache_read,
        t.cache_creation,
        t.cache_creation_1h,
    ]
}

/// The counts [`counts_of`] gave, as tokens.
fn tokens_of(counts: [u64; 5]) -> Tokens {
    let [input, output, cache_read, cache_creation, cache_creation_1h] = counts;
    Tokens {
        input,
        output,
        cache_read,
        cache_creation,
        cache_creation_1h,
    }
}

/// Messages kept per chunk of [`Messages`].
const CHUNK: usize = 4096;

/// The kept messages in first-seen order, in chunks of [`CHUNK`] that never move once made.
#[derive(Debug, Clone, Default)]
struct Messages {
    chunks: Vec<Vec<Message>>,
    len: usize,
}

impl Messages {
    fn push(&mut self, message: Message) -> usize {
        if self.len.is_multiple_of(CHUNK) {
            // The first grows as it fills (most inputs hold a few dozen messages), the others
            // are made whole.
            let room = if self.len == 0 { 0 } else { CHUNK };
            self.chunks.push(Vec::with_capacity(room));
        }
        if let Some(chunk) = self.chunks.last_mut() {
            chunk.push(message);
        }
        self.len += 1;
        self.len - 1
    }

    fn get(&self, at: usize) -> Option<&Message> {
        self.chunks.get(at / CHUNK)?.get(at % CHUNK)
    }

    fn get_mut(&mut self, at: usize) -> Option<&mut Message> {
        self.chunks.get_mut(at / CHUNK)?.get_mut(at % CHUNK)
    }

    fn iter(&self) -> impl Iterator<Item = &Message> {
        self.chunks.iter().flatten()
    }

    fn is_empty(&self) -> bool {
        self.len == 0
    }
}

/// Messages seen so far, each counted once (see the module documentation for the rule).
/// Memory grows with the number of distinct messages (about 47 bytes each), not with the
/// number of records or bytes, nor with the length of their ids.
#[derive(Debug, Clone, Default)]
pub struct Ledger {
    models: Vec<Box<str>>,
    /// Index into `messages`, found by [`Key::slot`].
    index: HashTable<u32>,
    messages: Messages,
    /// Token counts of kept messages too large for `u32` ([`Message`]).
    wide: Vec<Tokens>,
    /// Records with no message id: nothing to deduplicate them by, each counts.
    loose: Vec<Kept>,
    source: u32,
    /// What the Codex lines of the input so far said (model, session).
    pub(super) codex: crate::codex::usage::CodexScan,
}

impl Ledger {
    pub fn new() -> Ledger {
        Ledger::default()
    }

    /// Records added from now on come from input number `source` (for [`Ledger::by_source`],
    /// and to choose among equal records of one message: the earliest input's is kept).
    pub fn set_source(&mut self, source: u32) {
        self.source = source;
        self.codex = crate::codex::usage::CodexScan::default();
    }

    fn model_index(&mut self, model: &str) -> u32 {
        match self.models.iter().position(|known| &**known == model) {
            Some(index) => index as u32,
            None => {
                self.models.push(model.into());
                (self.models.len() - 1) as u32
            }
        }
    }

    pub fn add(&mut self, entry: &UsageEntry<'_>) {
        let model = self.model_index(&entry.model);
        let kept = Kept {
            model,
            tokens: entry.tokens,
            sidechain: entry.sidechain,
            source: self.source,
        };
        let Some(message_id) = entry.message_id.as_deref() else {
            self.loose.push(kept);
            return;
        };
        self.keep(Key::of(message_id, entry.request_id.as_deref()), kept);
    }

    fn keep(&mut self, key: Key, candidate: Kept) {
        let messages = &self.messages;
        let found = self.index.find(key.slot(), |&at| {
            messages.get(at as usize).is_some_and(|m| m.key == key)
        });
        if let Some(&at) = found {
            let better = self
                .messages
                .get(at as usize)
                .is_some_and(|existing| candidate.better_than(&existing.kept(&self.wide)));
            if better {
                let replacement = Message::new(key, &candidate, &mut self.wide);
                if let Some(existing) = self.messages.get_mut(at as usize) {
                    *existing = replacement;
                }
            }
            return;
        }
        let at = self
            .messages
            .push(Message::new(key, &candidate, &mut self.wide));
        let messages = &self.messages;
        self.index.insert_unique(key.slot(), at as u32, |&at| {
            messages.get(at as usize).map_or(0, |m| m.key.slot())
        });
    }

    /// Merge `other` (other inputs, read on their own) into this ledger; its records keep
    /// their source numbers. In any order, the same messages are kept.
    pub fn merge(&mut self, other: Ledger) {
        if self.models.is_empty() && self.messages.is_empty() && self.loose.is_empty() {
            // Into an empty ledger: nothing to compare, `other` is the merge as it stands.
            let Ledger {
                models,
                index,
                messages,
                wide,
                loose,
                ..
            } = other;
            (
                self.models,
                self.index,
                self.messages,
                self.wide,
                self.loose,
            ) = (models, index, messages, wide, loose);
            return;
        }
        let models: Vec<u32> = other
            .models
            .iter()
            .map(|model| self.model_index(model))
            .collect();
        let remap = |mut kept: Kept| {
            kept.model = models[kept.model as usize];
            kept
        };
        for message in other.messages.iter() {
            self.keep(message.key, remap(message.kept(&other.wide)));
        }
        self.loose.extend(other.loose.into_iter().map(remap));
    }

    fn all(&self) -> impl Iterator<Item = Kept> {
        self.messages
            .iter()
            .map(|m| m.kept(&self.wide))
            .chain(self.loose.iter().copied())
    }

    /// Tokens by model.
    pub fn tokens_by_model(&self) -> Vec<(&str, Tokens)> {
        let mut totals = vec![Tokens::default(); self.models.len()];
        for kept in self.all() {
            totals[kept.model as usize].add(&kept.tokens);
        }
        self.models.iter().map(|m| &**m).zip(totals).collect()
    }

    pub fn tokens(&self) -> Tokens {
        self.all().fold(Tokens::default(), |mut total, kept| {
            total.add(&kept.tokens);
            total
        })
    }

    /// Estimated cost: each message priced on its own (long-context rates are per message);
    /// models with no price count as zero.
    pub fn cost_usd(&self, prices: &PriceTable) -> f64 {
        let prices: Vec<Option<&crate::pricing::Price>> = self
            .models
            .iter()
            .map(|model| prices.price_for(model))
            .collect();
        self.all().fold(0.0, |sum, kept| {
            sum + prices[kept.model as usize].map_or(0.0, |price| price.cost(&kept.tokens))
        })
    }

    /// Tokens and cost credited to each source number below `sources`: a message found in
    /// several inputs counts for the one whose record was kept, so the rows add up to the total.
    pub fn by_source(&self, sources: usize, prices: &PriceTable) -> Vec<(Tokens, f64)> {
        let model_prices: Vec<Option<&crate::pricing::Price>> = self
            .models
            .iter()
            .map(|model| prices.price_for(model))
            .collect();
        let mut rows = vec![(Tokens::default(), 0.0); sources];
        for kept in self.all() {
            if let Some(row) = rows.get_mut(kept.source as usize) {
                row.0.add(&kept.tokens);
                row.1 += model_prices[kept.model as usize].map_or(0.0, |p| p.cost(&kept.tokens));
            }
        }
        rows
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::borrow::Cow;

    fn entry(id: &str, tokens: Tokens, sidechain: bool) -> UsageEntry<'static> {
        UsageEntry {
            message_id: Some(Cow::Owned(id.to_owned())),
            request_id: None,
            model: Cow::Borrowed("gpt-5"),
            tokens,
            sidechain,
        }
    }

    #[test]
    fn a_kept_message_is_40_bytes() {
        assert_eq!(std::mem::size_of::<Message>(), 40);
    }

    /// Counts past `u32` (a Codex rollout's are not capped) are kept whole, replaced by a
    /// better record and merged like the others.
    #[test]
    fn counts_too_large_for_u32_are_kept_whole() {
        let big = Tokens {
            input: 5_000_000_000,
            output: 7,
            cache_read: u64::from(u32::MAX) + 1,
            ..Tokens::default()
        };
        let bigger = Tokens { output: 8, ..big };
        let mut first = Ledger::new();
        first.add(&entry("a", big, true));
        first.add(&entry(
            "b",
            Tokens {
                output: 1,
                ..Tokens::default()
            },
            false,
        ));
        assert_eq!(first.tokens().input, 5_000_000_000);
        // The main-chain record replaces the sidechain one.
        first.add(&entry("a", bigger, false));
        assert_eq!(first.tokens().output, 9);
        let mut second = Ledger::new();
        second.set_source(1);
        second.add(&entry("c", big, false));
        second.add(&entry("a", big, false));
        first.merge(second);
        let total = first.tokens();
        assert_eq!(total.input, 10_000_000_000);
        assert_eq!(total.output, 8 + 1 + 7);
        assert_eq!(total.cache_read, 2 * (u64::from(u32::MAX) + 1));
    }
}

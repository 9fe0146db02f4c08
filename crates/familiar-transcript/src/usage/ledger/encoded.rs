//! A [`Ledger`] as bytes, for `familiar stats`'s cache of files it has read: the ledger of one
//! input, kept with its summary, is merged again on the next run instead of reading the file.
//!
//! The layout (little-endian): `FLD1`, the models (a count, then each as a length and UTF-8),
//! the messages (a count, then each as its 12-byte [`Key`], its model's number, a flags byte
//! and five token counts, `u32` each or `u64` each when the `WIDE` flag says so), then the
//! records without a message id the same way without a key. About 37 bytes a message. The
//! inputs' numbers are not kept: what is merged counts for the input the caller names.
//! Keys are hashes under the process's key ([`super::use_hash_key`]): bytes encoded under
//! another key merge, but their messages match none of this run's.

use super::{Kept, Key, Ledger, counts_of, tokens_of};

const MAGIC: &[u8; 4] = b"FLD1";
const SIDECHAIN: u8 = 1;
const WIDE: u8 = 2;

/// Bytes that are not a ledger [`Ledger::encode`] wrote (cut short, or from another layout).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DecodeError {
    #[error("not an encoded usage ledger")]
    Magic,
    #[error("encoded usage ledger cut short at byte {0}")]
    Short(usize),
    #[error("encoded usage ledger names model {0}, which it does not list")]
    Model(u32),
    #[error("encoded usage ledger has a model name that is not UTF-8")]
    Utf8,
    #[error("encoded usage ledger has {0} bytes after its end")]
    Trailing(usize),
}

impl Ledger {
    /// This ledger's messages and records as bytes, for [`Ledger::merge_encoded`] in this
    /// process or a later one that hashes under the same key.
    pub fn encode(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(16 + self.messages.len * 37 + self.loose.len() * 25);
        out.extend_from_slice(MAGIC);
        put_u32(&mut out, self.models.len());
        for model in &self.models {
            put_u32(&mut out, model.len());
            out.extend_from_slice(model.as_bytes());
        }
        put_u32(&mut out, self.messages.len);
        for message in self.messages.iter() {
            for word in message.key.0 {
                out.extend_from_slice(&word.to_le_bytes());
            }
            put_kept(&mut out, &message.kept(&self.wide));
        }
        put_u32(&mut out, self.loose.len());
        for kept in &self.loose {
            put_kept(&mut out, kept);
        }
        out
    }

    /// Merge a ledger [`Ledger::encode`] wrote, its records counting for input `source` (as if
    /// that input had just been read into a ledger of its own and merged). Bytes that are not a
    /// whole ledger are an error, and nothing of them is merged.
    pub fn merge_encoded(&mut self, bytes: &[u8], source: u32) -> Result<(), DecodeError> {
        let mut reader = Reader { bytes, at: 0 };
        if reader.take(4)? != MAGIC {
            return Err(DecodeError::Magic);
        }
        let model_count = reader.u32()?;
        let mut models = Vec::new();
        for _ in 0..model_count {
            let len = reader.u32()? as usize;
            let name = std::str::from_utf8(reader.take(len)?).map_err(|_| DecodeError::Utf8)?;
            models.push(name);
        }
        let kept_of = |reader: &mut Reader<'_>| -> Result<Kept, DecodeError> {
            let mut kept = reader.kept()?;
            if kept.model >= model_count {
                return Err(DecodeError::Model(kept.model));
            }
            kept.source = source;
            Ok(kept)
        };
        let message_count = reader.u32()?;
        let mut messages = Vec::with_capacity((message_count as usize).min(bytes.len() / 37));
        for _ in 0..message_count {
            let mut key = [0u32; 3];
            for word in &mut key {
                *word = reader.u32()?;
            }
            messages.push((Key(key), kept_of(&mut reader)?));
        }
        let loose_count = reader.u32()?;
        let mut loose = Vec::with_capacity((loose_count as usize).min(bytes.len() / 25));
        for _ in 0..loose_count {
            loose.push(kept_of(&mut reader)?);
        }
        if reader.at != bytes.len() {
            return Err(DecodeError::Trailing(bytes.len() - reader.at));
        }
        let numbers: Vec<u32> = models.iter().map(|m| self.model_index(m)).collect();
        for (key, mut kept) in messages {
            kept.model = numbers[kept.model as usize];
            self.keep(key, kept);
        }
        for mut kept in loose {
            kept.model = numbers[kept.model as usize];
            self.loose.push(kept);
        }
        Ok(())
    }
}

fn put_u32(out: &mut Vec<u8>, value: usize) {
    // Counts and lengths of one ledger are far below 2³² (it holds them in memory).
    out.extend_from_slice(&u32::try_from(value).unwrap_or(u32::MAX).to_le_bytes());
}

fn put_kept(out: &mut Vec<u8>, kept: &Kept) {
    let counts = counts_of(&kept.tokens);
    let narrow = counts.iter().all(|&count| u32::try_from(count).is_ok());
    out.extend_from_slice(&kept.model.to_le_bytes());
    let mut flags = if kept.sidechain { SIDECHAIN } else { 0 };
    if !narrow {
        flags |= WIDE;
    }
    out.push(flags);
    for count in counts {
        if narrow {
            out.extend_from_slice(&(count as u32).to_le_bytes());
        } else {
            out.extend_from_slice(&count.to_le_bytes());
        }
    }
}

struct Reader<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl<'a> Reader<'a> {
    fn take(&mut self, len: usize) -> Result<&'a [u8], DecodeError> {
        let end = self
            .at
            .checked_add(len)
            .filter(|&end| end <= self.bytes.len())
            .ok_or(DecodeError::Short(self.bytes.len()))?;
        let taken = &self.bytes[self.at..end];
        self.at = end;
        Ok(taken)
    }

    fn u32(&mut self) -> Result<u32, DecodeError> {
        let mut word = [0u8; 4];
        word.copy_from_slice(self.take(4)?);
        Ok(u32::from_le_bytes(word))
    }

    fn u64(&mut self) -> Result<u64, DecodeError> {
        let mut word = [0u8; 8];
        word.copy_from_slice(self.take(8)?);
        Ok(u64::from_le_bytes(word))
    }

    /// A record's model number (the encoded ledger's own), flags and counts.
    fn kept(&mut self) -> Result<Kept, DecodeError> {
        let model = self.u32()?;
        let flags = self.take(1)?[0];
        let mut counts = [0u64; 5];
        for count in &mut counts {
            *count = if flags & WIDE != 0 {
                self.u64()?
            } else {
                u64::from(self.u32()?)
            };
        }
        Ok(Kept {
            model,
            tokens: tokens_of(counts),
            sidechain: flags & SIDECHAIN != 0,
            source: 0,
        })
    }
}

#[cfg(test)]
mod tests {
    use std::borrow::Cow;

    use super::*;
    use crate::pricing::{PriceTable, Tokens};
    use crate::usage::UsageEntry;

    fn entry(id: Option<&str>, model: &str, output: u64, sidechain: bool) -> UsageEntry<'static> {
        UsageEntry {
            message_id: id.map(|id| Cow::Owned(id.to_owned())),
            request_id: Some(Cow::Borrowed("req")),
            model: Cow::Owned(model.to_owned()),
            tokens: Tokens {
                input: 3,
                output,
                cache_read: u64::from(u32::MAX) * 3,
                ..Tokens::default()
            },
            sidechain,
        }
    }

    fn ledger_of(source: u32, entries: &[UsageEntry<'static>]) -> Ledger {
        let mut ledger = Ledger::new();
        ledger.set_source(source);
        for entry in entries {
            ledger.add(entry);
        }
        ledger
    }

    /// Merging an input's encoded ledger gives what merging the ledger itself gives: the same
    /// messages kept (a copy of one in another input counts once), rows and totals.
    #[test]
    fn an_encoded_ledger_merges_as_the_ledger_itself() {
        let first = [
            entry(Some("a"), "claude-opus-4-5", 10, false),
            entry(Some("b"), "claude-sonnet-4-5", 20, true),
            entry(None, "gpt-5", 7, false),
        ];
        let second = [
            entry(Some("b"), "claude-sonnet-4-5", 20, false),
            entry(Some("c"), "claude-opus-4-5", 1, false),
        ];
        let prices = PriceTable::default();
        let mut direct = ledger_of(0, &first);
        direct.merge(ledger_of(1, &second));
        for order in [[0, 1], [1, 0]] {
            let mut decoded = Ledger::new();
            for source in order {
                let ledger = if source == 0 {
                    ledger_of(9, &first)
                } else {
                    ledger_of(9, &second)
                };
                decoded
                    .merge_encoded(&ledger.encode(), source)
                    .expect("decodes");
            }
            assert_eq!(decoded.tokens(), direct.tokens());
            assert_eq!(decoded.by_source(2, &prices), direct.by_source(2, &prices));
            let mut models = decoded.tokens_by_model();
            models.sort_by_key(|(model, _)| *model);
            let mut expected = direct.tokens_by_model();
            expected.sort_by_key(|(model, _)| *model);
            assert_eq!(models, expected);
        }
        assert_eq!(direct.tokens().output, 10 + 20 + 7 + 1);
    }

    /// Bytes cut anywhere, or with anything after them, are refused whole: nothing merged.
    #[test]
    fn bytes_that_are_not_a_whole_ledger_merge_nothing() {
        let ledger = ledger_of(
            0,
            &[
                entry(Some("a"), "claude-opus-4-5", 10, false),
                entry(None, "gpt-5", 7, true),
            ],
        );
        let bytes = ledger.encode();
        for cut in 0..bytes.len() {
            let mut into = Ledger::new();
            assert!(
                into.merge_encoded(&bytes[..cut], 0).is_err(),
                "cut at {cut}"
            );
            assert_eq!(into.tokens(), Tokens::default());
        }
        let mut longer = bytes.clone();
        longer.push(0);
        assert_eq!(
            Ledger::new().merge_encoded(&longer, 0),
            Err(DecodeError::Trailing(1))
        );
        let mut unknown_model = bytes.clone();
        // The first message's model number, after the magic, the two models and the key.
        let at = 4 + 4 + (4 + "claude-opus-4-5".len()) + (4 + "gpt-5".len()) + 4 + 12;
        unknown_model[at] = 7;
        assert_eq!(
            Ledger::new().merge_encoded(&unknown_model, 0),
            Err(DecodeError::Model(7))
        );
    }

    proptest::proptest! {
        /// Inputs sharing messages (ties, sidechain copies, larger copies, counts past `u32`,
        /// records without an id) count the same when some come from bytes, as a cache gives
        /// them, in any order: the same totals per model and rows per input.
        #[test]
        fn some_inputs_from_bytes_count_as_all_read(
            inputs in proptest::collection::vec(
                proptest::collection::vec(
                    (0u8..6, 0u64..4, proptest::bool::ANY, 0u8..3, proptest::bool::ANY),
                    0..8,
                ),
                0..8,
            ),
            encoded in proptest::collection::vec(proptest::bool::ANY, 8),
            reversed in proptest::bool::ANY,
        ) {
            let ledger = |source: usize| {
                let entries: Vec<UsageEntry<'static>> = inputs[source]
                    .iter()
                    .map(|&(id, output, sidechain, model, wide)| {
                        let id = (id != 5).then(|| format!("m{id}"));
                        let model = ["claude-opus-4-5", "gpt-5", "gemini-2.5-pro"][model as usize];
                        let mut entry = entry(id.as_deref(), model, output, sidechain);
                        if !wide {
                            entry.tokens.cache_read = 1;
                        }
                        entry
                    })
                    .collect();
                ledger_of(source as u32, &entries)
            };
            let mut direct = Ledger::new();
            for source in 0..inputs.len() {
                direct.merge(ledger(source));
            }
            let mut mixed = Ledger::new();
            let mut order: Vec<usize> = (0..inputs.len()).collect();
            if reversed {
                order.reverse();
            }
            for source in order {
                if encoded[source] {
                    let bytes = ledger(source).encode();
                    mixed.merge_encoded(&bytes, source as u32).expect("decodes");
                } else {
                    mixed.merge(ledger(source));
                }
            }
            let prices = PriceTable::default();
            let (got, want) = (
                mixed.by_source(inputs.len(), &prices),
                direct.by_source(inputs.len(), &prices),
            );
            for ((got_tokens, got_cost), (want_tokens, want_cost)) in got.iter().zip(&want) {
                proptest::prop_assert_eq!(got_tokens, want_tokens);
                // The same messages, summed in another order.
                proptest::prop_assert!((got_cost - want_cost).abs() <= 1e-9 * want_cost.abs().max(1.0));
            }
            let sorted = |ledger: &Ledger| {
                let mut models: Vec<(String, Tokens)> = ledger
                    .tokens_by_model()
                    .into_iter()
                    .map(|(model, tokens)| (model.to_owned(), tokens))
                    .collect();
                models.sort_by(|a, b| a.0.cmp(&b.0));
                models
            };
            proptest::prop_assert_eq!(sorted(&mixed), sorted(&direct));
        }

        /// Any bytes at all: an error or a merge, never a panic.
        #[test]
        fn any_bytes_merge_or_are_refused(
            bytes in proptest::collection::vec(proptest::num::u8::ANY, 0..200),
            magic in proptest::bool::ANY,
        ) {
            let mut bytes = bytes;
            if magic {
                bytes.splice(0..0, MAGIC.iter().copied());
            }
            let _ = Ledger::new().merge_encoded(&bytes, 0);
        }
    }
}

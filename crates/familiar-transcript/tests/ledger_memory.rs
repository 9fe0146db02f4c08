//! The usage ledger's memory grows by a fixed amount per distinct message, however long its
//! ids (issue 28: `familiar stats` kept every id and peaked at 35 MB on 150,000 messages).
//! Measured with a counting allocator: exact, and independent of timing.

use std::borrow::Cow;

use familiar_transcript::Tokens;
use familiar_transcript::usage::{Ledger, UsageEntry};

#[global_allocator]
static ALLOCATOR: familiar_testkit::Counting = familiar_testkit::Counting;

const MESSAGES: usize = 50_000;

fn entry(n: usize, id_len: usize) -> UsageEntry<'static> {
    let pad = "x".repeat(id_len);
    UsageEntry {
        message_id: Some(Cow::Owned(format!("msg_{n}_{pad}"))),
        request_id: Some(Cow::Owned(format!("req_{n}_{pad}"))),
        model: Cow::Borrowed("claude-sonnet-4-5"),
        tokens: Tokens {
            input: 10,
            output: n as u64,
            ..Tokens::default()
        },
        sidechain: false,
    }
}

/// The most the ledger held at once while taking `MESSAGES` messages (each twice) whose ids
/// are `id_len` bytes long, per message.
fn peak_per_message(id_len: usize) -> (usize, Ledger) {
    let mut ledger = Ledger::new();
    let base = familiar_testkit::Counting::reset_peak();
    for n in 0..MESSAGES {
        // Built and dropped outside what the ledger keeps: only its own growth is left.
        let record = entry(n, id_len);
        ledger.add(&record);
        ledger.add(&record);
    }
    let peak = familiar_testkit::Counting::peak().saturating_sub(base);
    (peak / MESSAGES, ledger)
}

#[test]
fn a_message_costs_the_same_few_bytes_whatever_its_ids() {
    let (short, short_ledger) = peak_per_message(0);
    let (long, long_ledger) = peak_per_message(400);
    // Each message counted once.
    assert_eq!(short_ledger.tokens().input, 10 * MESSAGES as u64);
    assert_eq!(long_ledger.tokens(), short_ledger.tokens());
    // Ids of 800 bytes cost what ids of a dozen do (within the few bytes of the one record
    // built at a time), and the whole stays under 60 bytes a message (40 kept, the index and
    // its growth).
    assert!(
        long <= short + 1,
        "{long} bytes per message with long ids, {short} with short ones"
    );
    assert!(short <= 60, "{short} bytes per message");
}

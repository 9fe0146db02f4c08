//! Messages on their way to the consumer, and how many bytes of lines they hold.
//!
//! A consumer that falls behind (a slow script, a stopped pipe) makes the tailer stop reading;
//! what it has read by then waits in the outbox and the channel. Counted in messages alone,
//! that was up to 128 messages of up to 256 KiB of lines each: with thousands of sessions
//! written at once, each message is one file's lines since it was last read, and a hostile
//! soak's watcher held 13 MB of them. The bytes are counted too ([`MAX_AHEAD_BYTES`]).
//!
//! The channel is first in, first out and only the tailer's thread sends on it, so the
//! messages still in it are the last `sender.len()` sent: their sizes are kept here as they
//! are sent, and nothing is asked of the consumer.

use std::collections::VecDeque;

use crate::message::TailMessage;

/// Bytes of lines read ahead of the consumer (outbox and channel together) past which the
/// tailer stops reading until it catches up; what is written meanwhile waits on disk. A
/// consumer that keeps up takes far less per turn, so this only bounds one that does not:
/// a 100 MB burst appended to a followed file reaches `watch --events`'s output as fast with
/// 1 MiB as with 4 (0.55-0.73 s against 0.72-0.74 s), and the watcher peaks 2.5 MiB lower.
pub const MAX_AHEAD_BYTES: usize = 1024 * 1024;

/// The bytes of lines a message holds (their buffers' capacities: what they keep).
fn line_bytes(message: &TailMessage) -> usize {
    match message {
        TailMessage::Lines { lines, .. } => lines.iter().map(|line| line.bytes.capacity()).sum(),
        _ => 0,
    }
}

#[derive(Debug, Default)]
pub(crate) struct Outbox {
    /// Each message with its [`line_bytes`], counted once as it comes in.
    queue: VecDeque<(TailMessage, usize)>,
    queued_bytes: usize,
    /// The sizes of the messages sent lately, newest last (as many as the channel can hold).
    sent: VecDeque<usize>,
}

impl Outbox {
    pub fn len(&self) -> usize {
        self.queue.len()
    }

    pub fn push_back(&mut self, message: TailMessage) {
        let bytes = line_bytes(&message);
        self.queued_bytes += bytes;
        self.queue.push_back((message, bytes));
    }

    /// A message taken with [`Outbox::pop_front`] that the channel had no room for.
    pub fn push_front(&mut self, message: TailMessage, bytes: usize) {
        self.queued_bytes += bytes;
        self.queue.push_front((message, bytes));
    }

    /// The oldest message and its bytes of lines.
    pub fn pop_front(&mut self) -> Option<(TailMessage, usize)> {
        let (message, bytes) = self.queue.pop_front()?;
        self.queued_bytes -= bytes;
        Some((message, bytes))
    }

    pub fn extend(&mut self, messages: impl IntoIterator<Item = TailMessage>) {
        for message in messages {
            self.push_back(message);
        }
    }

    /// A message of `bytes` went into a channel that holds at most `capacity`.
    pub fn sent(&mut self, bytes: usize, capacity: usize) {
        if self.sent.len() >= capacity.max(1) {
            self.sent.pop_front();
        }
        self.sent.push_back(bytes);
    }

    /// Bytes of lines read and not yet taken by the consumer, `in_channel` messages being
    /// still in the channel.
    pub fn bytes_ahead(&self, in_channel: usize) -> usize {
        let unread = self.sent.iter().rev().take(in_channel).sum::<usize>();
        self.queued_bytes + unread
    }
}

#[cfg(test)]
mod tests {
    use std::path::Path;
    use std::sync::Arc;

    use super::*;
    use crate::message::Line;

    fn lines(sizes: &[usize]) -> TailMessage {
        TailMessage::Lines {
            path: Arc::from(Path::new("/t.jsonl")),
            generation: 1,
            lines: sizes
                .iter()
                .enumerate()
                .map(|(n, &size)| Line {
                    number: n as u64 + 1,
                    bytes: vec![b'x'; size],
                })
                .collect(),
            backlog: false,
            resume: None,
        }
    }

    #[test]
    fn counts_what_waits_and_what_the_channel_still_holds() {
        let mut outbox = Outbox::default();
        outbox.push_back(lines(&[10, 20]));
        outbox.push_back(TailMessage::CaughtUp);
        outbox.push_back(lines(&[5]));
        assert_eq!(outbox.bytes_ahead(0), 35);

        // The first goes into a channel of two, which the consumer has not read from yet.
        let (_, bytes) = outbox.pop_front().expect("a message");
        assert_eq!(bytes, 30);
        outbox.sent(bytes, 2);
        assert_eq!(outbox.bytes_ahead(1), 35);
        // It was taken: only what waits counts.
        assert_eq!(outbox.bytes_ahead(0), 5);

        // Refused for want of room, it goes back and counts again.
        let (second, bytes) = outbox.pop_front().expect("a message");
        outbox.push_front(second, bytes);
        assert_eq!(outbox.len(), 2);
        assert_eq!(outbox.bytes_ahead(0), 5);

        // The sizes kept are the channel's capacity's worth, the newest.
        outbox.sent(100, 2);
        outbox.sent(1000, 2);
        assert_eq!(outbox.bytes_ahead(2), 5 + 1100);
        assert_eq!(outbox.bytes_ahead(5), 5 + 1100);
        while outbox.pop_front().is_some() {}
        assert_eq!(outbox.len(), 0);
        assert_eq!(outbox.bytes_ahead(0), 0);
    }
}

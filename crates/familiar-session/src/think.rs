//! The thinking intensity of a turn, carried as session state.
//!
//! Real transcripts mark how hard the user asked the model to think only in the prompt's text
//! (the keyword: "think", "think hard", "megathink", "think harder", "ultrathink"), which the
//! normalizer reads into the prompt event's `think`. The records' `thinkingMetadata`
//! (`{"level":"high","disabled":false,"triggers":[]}` in 2.0, `{"maxThinkingTokens":31999}`
//! in 2.1) says whether thinking is on at all, not how hard a turn asked, so it is not used.
//! The intensity belongs to the whole turn: this rule stamps the prompt's `think` on the
//! main chain's `thinking` events that follow it, until the next prompt, so a consumer (the
//! game's think aura) knows it from any thinking event without keeping state of its own.

use familiar_model::{Event, EventKind};

/// The `think` of the main chain's current turn (0: none asked).
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub(crate) struct TurnThink(u8);

impl TurnThink {
    /// Reads the turn's intensity from a prompt and carries it onto the `thinking` events of
    /// a main transcript's `events` (subagents' own chains are left alone).
    pub(crate) fn carry(&mut self, events: &mut [Event]) {
        for event in events {
            if event.sidechain || event.agent.is_some() {
                continue;
            }
            match event.kind {
                EventKind::Prompt => self.0 = event.think.unwrap_or(0),
                EventKind::Thinking if self.0 > 0 && event.think.is_none() => {
                    event.think = Some(self.0);
                }
                _ => {}
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ev(kind: EventKind, think: Option<u8>) -> Event {
        let mut e = Event::new(kind, 1);
        e.think = think;
        e
    }

    #[test]
    fn a_prompt_sets_the_turn_and_the_next_prompt_ends_it() {
        let mut turn = TurnThink::default();
        let mut events = vec![
            ev(EventKind::Thinking, None),
            ev(EventKind::Prompt, Some(3)),
            ev(EventKind::Thinking, None),
            ev(EventKind::Bash, None),
            ev(EventKind::Thinking, None),
        ];
        turn.carry(&mut events);
        let thinks: Vec<Option<u8>> = events.iter().map(|e| e.think).collect();
        assert_eq!(thinks, vec![None, Some(3), Some(3), None, Some(3)]);
        let mut sub = ev(EventKind::Thinking, None);
        sub.agent = Some("a1".into());
        let mut next = vec![
            sub,
            ev(EventKind::Prompt, Some(0)),
            ev(EventKind::Thinking, None),
        ];
        turn.carry(&mut next);
        assert_eq!(next[0].think, None, "a subagent's thinking is its own");
        assert_eq!(next[2].think, None, "a plain prompt ends it");
    }
}

//! `docs/events.md` stays in step with the code: its tables of the fields on every event, of
//! the event kinds and of the error kinds list exactly what [`Event`], [`EventKind`] and
//! [`ErrorKind`] have, in their order, and every other field of an event is documented.

use std::fmt;

use familiar_model::{AgentKind, ErrorKind, Event, EventKind, Status};
use serde::de::{self, DeserializeOwned, Deserializer, Visitor};

use familiar_testkit::docs::{first_column, keys_in_order, section};

fn doc() -> String {
    familiar_testkit::docs::read("events.md")
}

/// The field names a struct, or the variant names an enum, deserializes from (serde's own
/// list: the names as they are written, renamed, without skipped fields).
fn serde_names<T: DeserializeOwned>() -> Vec<&'static str> {
    let mut names = Vec::new();
    let _ = T::deserialize(NameCatcher(&mut names));
    names
}

struct NameCatcher<'a>(&'a mut Vec<&'static str>);

#[derive(Debug)]
struct Caught;

impl fmt::Display for Caught {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("names caught")
    }
}

impl std::error::Error for Caught {}

impl de::Error for Caught {
    fn custom<T: fmt::Display>(_: T) -> Caught {
        Caught
    }
}

impl<'de> Deserializer<'de> for NameCatcher<'_> {
    type Error = Caught;

    fn deserialize_any<V: Visitor<'de>>(self, _: V) -> Result<V::Value, Caught> {
        Err(Caught)
    }

    fn deserialize_struct<V: Visitor<'de>>(
        self,
        _: &'static str,
        fields: &'static [&'static str],
        _: V,
    ) -> Result<V::Value, Caught> {
        self.0.extend(fields);
        Err(Caught)
    }

    fn deserialize_enum<V: Visitor<'de>>(
        self,
        _: &'static str,
        variants: &'static [&'static str],
        _: V,
    ) -> Result<V::Value, Caught> {
        self.0.extend(variants);
        Err(Caught)
    }

    serde::forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string bytes byte_buf
        option unit unit_struct newtype_struct seq tuple tuple_struct map identifier ignored_any
    }
}

/// The fields every event prints, in order: those of an event with nothing optional set
/// (a Codex one, so that `agent_kind` is printed too).
fn fields_on_every_event() -> Vec<String> {
    let mut event = Event::new(EventKind::Prompt, 1);
    event.agent_kind = AgentKind::Codex;
    keys_in_order(&serde_json::to_string(&event).expect("JSON"))
}

#[test]
fn the_fields_on_every_event_are_documented_in_order() {
    let doc = doc();
    let documented = first_column(section(&doc, "## Fields on every event"));
    assert_eq!(documented, fields_on_every_event());
}

#[test]
fn every_other_field_is_documented_with_the_kinds() {
    let doc = doc();
    let kinds = section(&doc, "## Kinds and their own fields");
    let always = fields_on_every_event();
    let fields = serde_names::<Event>();
    assert!(fields.contains(&"tool_use_id"), "serde's names: {fields:?}");
    for field in fields {
        if !always.iter().any(|name| name == field) {
            assert!(
                kinds.contains(&format!("`{field}`")),
                "`{field}` is not in the section on kinds"
            );
        }
    }
}

#[test]
fn every_event_kind_is_documented_in_order() {
    let doc = doc();
    let documented = first_column(section(&doc, "## Kinds and their own fields"));
    let kinds: Vec<&str> = EventKind::ALL.iter().map(|kind| kind.as_str()).collect();
    assert_eq!(documented, kinds);
    assert_eq!(
        serde_names::<EventKind>(),
        kinds,
        "EventKind::ALL is complete"
    );
}

#[test]
fn every_error_kind_is_documented_in_order() {
    let doc = doc();
    let errors = section(&doc, "### Errors");
    let documented = first_column(errors);
    let kinds: Vec<&str> = ErrorKind::ALL.iter().map(|kind| kind.as_str()).collect();
    assert_eq!(documented, kinds);
    assert_eq!(
        serde_names::<ErrorKind>(),
        kinds,
        "ErrorKind::ALL is complete"
    );
    let words = [
        "zero", "one", "two", "three", "four", "five", "six", "seven", "eight",
    ];
    let count = format!("one of {} kinds", words[kinds.len()]);
    assert!(
        errors.contains(&count),
        "the section does not say {count:?}"
    );
}

#[test]
fn every_status_is_documented() {
    let doc = doc();
    let fields = section(&doc, "## Fields on every event");
    let row = fields
        .lines()
        .find(|line| line.starts_with("| `status` |"))
        .expect("the status row");
    let meaning = row.split('|').nth(3).expect("its meaning");
    let documented: Vec<&str> = meaning.split('`').skip(1).step_by(2).collect();
    let statuses: Vec<&str> = serde_names::<Status>();
    assert_eq!(documented, statuses);
    for status in statuses {
        let parsed: Status = serde_json::from_value(serde_json::json!(status)).expect(status);
        assert_eq!(parsed.as_str(), status);
    }
}

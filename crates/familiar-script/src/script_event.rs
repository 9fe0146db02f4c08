//! How a [`familiar_model::Event`] looks from a script: the registered type `Event` with one
//! read-only getter per field.
//!
//! A custom type (rather than a Rhai object map) makes a misspelled field (`ev.tol`) a located
//! runtime error instead of a silent `()`. Optional fields that are absent read as `()`.
//! The event is shared behind an `Arc`, so handing it to several scripts and handlers costs a
//! reference count, and `ev.raw` (the original JSON record) is parsed only when a script asks,
//! once per event. [`crate::host`] builds one [`ScriptEvent`] per event.

use std::sync::{Arc, Mutex, OnceLock};

use familiar_model::{AgentKind, ErrorKind, Event, EventKind, Status};
use rhai::{Dynamic, Engine, EvalAltResult, INT, ImmutableString, Map, Position};

use crate::actions::Shared;
use crate::sandbox::Limits;
use crate::{bounded, timers};

/// The script-side event. Cheap to clone.
#[derive(Debug, Clone)]
pub struct ScriptEvent {
    inner: Arc<Inner>,
}

#[derive(Debug)]
struct Inner {
    /// The caller's event when within the limits, else a copy cut to them.
    event: Arc<Event>,
    /// The parsed record, or why it is over the limits (as Rhai's size error text).
    raw: OnceLock<Result<Dynamic, &'static str>>,
    limits: Limits,
    /// Long text fields already handed to the script, by the address of their text: read
    /// again, they are the same shared string, not a new copy (`for i in 0..100 { m[i] =
    /// ev.text }` held a hundred copies of a 16 MiB prompt).
    shared_texts: Mutex<Vec<(usize, ImmutableString)>>,
}

/// `event`'s text fields (`Option<String>`, borrowed as `event` is), named one by one (no
/// `..`), so that a text field added to `Event` cannot be forgotten: the pattern stops compiling.
macro_rules! text_fields {
    ($event:expr) => {{
        let Event {
            kind: _,
            session,
            agent,
            sidechain: _,
            ts,
            line: _,
            context_used: _,
            context_limit: _,
            status: _,
            agent_kind: _,
            tool,
            target,
            tool_use_id,
            agent_type,
            description,
            error: _,
            error_code,
            text,
            message,
            cause,
            retry_in_ms: _,
            retry_attempt: _,
            max_retries: _,
            trigger,
            pre_tokens: _,
            post_tokens: _,
            command,
            think: _,
            model,
            duration_ms: _,
            previous_status: _,
            cwd,
            git_branch,
            host,
            plan: _,
            plan_change: _,
            raw: _,
        } = $event;
        [
            session,
            agent,
            ts,
            tool,
            target,
            tool_use_id,
            agent_type,
            description,
            error_code,
            text,
            message,
            cause,
            trigger,
            command,
            model,
            cwd,
            git_branch,
            host,
        ]
    }};
}

/// Text fields at least this long are shared between reads; shorter ones cost less to copy.
const SHARED_TEXT_BYTES: usize = 4096;

impl ScriptEvent {
    /// The event as scripts see it under the default [`Limits`].
    pub fn new(event: Event) -> ScriptEvent {
        ScriptEvent::with_limits(&event, &Limits::default())
    }

    /// The event as scripts see it under `limits`: a text field longer than the string limit
    /// reads as its beginning, cut there (at a character boundary), so that reading a huge
    /// prompt or tool output never fails; `ev.raw` over the limits fails with a size error.
    /// The copy of `event` it holds has those fields cut already, so a 64 MiB prompt costs
    /// the string limit per event (1 MiB), not 64.
    pub fn with_limits(event: &Event, limits: &Limits) -> ScriptEvent {
        let max = limits.max_string_size;
        let cut = |field: &Option<String>| field.as_deref().map(|t| cut(t, max).to_owned());
        let event = Event {
            session: cut(&event.session),
            agent: cut(&event.agent),
            ts: cut(&event.ts),
            tool: cut(&event.tool),
            target: cut(&event.target),
            tool_use_id: cut(&event.tool_use_id),
            agent_type: cut(&event.agent_type),
            description: cut(&event.description),
            error_code: cut(&event.error_code),
            text: cut(&event.text),
            message: cut(&event.message),
            cause: cut(&event.cause),
            trigger: cut(&event.trigger),
            command: cut(&event.command),
            model: cut(&event.model),
            cwd: cut(&event.cwd),
            git_branch: cut(&event.git_branch),
            host: cut(&event.host),
            plan: event.plan.as_ref().map(|items| {
                items
                    .iter()
                    .map(|item| familiar_model::PlanItem {
                        text: self::cut(&item.text, max).to_owned(),
                        status: item.status,
                        active_form: cut(&item.active_form),
                    })
                    .collect()
            }),
            plan_change: None,
            raw: event.raw.clone(),
            ..*event
        };
        ScriptEvent::wrap(Arc::new(event), limits)
    }

    /// [`ScriptEvent::with_limits`] for an event the caller shares (the stage keeps it for
    /// the window and stdout): an event within the limits (nearly all) is read where it is,
    /// without a copy; one with a longer text gets a cut copy.
    pub fn shared(event: &Arc<Event>, limits: &Limits) -> ScriptEvent {
        let max = limits.max_string_size;
        let within = |text: &str| max == 0 || text.len() <= max;
        let plan_within = event
            .plan
            .iter()
            .flatten()
            .all(|item| within(&item.text) && item.active_form.as_deref().is_none_or(within));
        if !plan_within
            || !text_fields!(&**event)
                .into_iter()
                .flatten()
                .all(|t| within(t))
        {
            return ScriptEvent::with_limits(event, limits);
        }
        ScriptEvent::wrap(event.clone(), limits)
    }

    fn wrap(event: Arc<Event>, limits: &Limits) -> ScriptEvent {
        ScriptEvent {
            inner: Arc::new(Inner {
                event,
                raw: OnceLock::new(),
                limits: limits.clone(),
                shared_texts: Mutex::default(),
            }),
        }
    }

    pub fn event(&self) -> &Event {
        &self.inner.event
    }

    fn text(&self, value: &Option<String>) -> Dynamic {
        let Some(text) = value.as_deref() else {
            return Dynamic::UNIT;
        };
        if text.len() < SHARED_TEXT_BYTES {
            return Dynamic::from(ImmutableString::from(text));
        }
        let key = text.as_ptr() as usize;
        let mut shared = self
            .inner
            .shared_texts
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        if let Some((_, known)) = shared.iter().find(|(k, _)| *k == key) {
            return Dynamic::from(known.clone());
        }
        let string = ImmutableString::from(text);
        shared.push((key, string.clone()));
        Dynamic::from(string)
    }

    fn raw(&self) -> Result<Dynamic, Box<EvalAltResult>> {
        let parsed = self
            .inner
            .raw
            .get_or_init(|| match self.inner.event.raw.as_deref() {
                Some(line) => match bounded::check_json(line, &self.inner.limits) {
                    // A record that does not parse (it always should: it came from the
                    // normalizer) reads as `()` rather than failing the handler.
                    Ok(()) => Ok(serde_json::from_str::<Dynamic>(line).unwrap_or(Dynamic::UNIT)),
                    Err(err) => Err(match *err {
                        EvalAltResult::ErrorDataTooLarge(ref what, _)
                            if what.contains("string") =>
                        {
                            "Length of string"
                        }
                        _ => "Size of array/BLOB",
                    }),
                },
                None => Ok(Dynamic::UNIT),
            });
        match parsed {
            Ok(value) => Ok(value.clone()),
            Err(what) => Err(Box::new(EvalAltResult::ErrorDataTooLarge(
                (*what).into(),
                Position::NONE,
            ))),
        }
    }

    /// The event as its NDJSON line, refused (not built) past the string limit.
    fn json(&self) -> Result<String, Box<EvalAltResult>> {
        let max = self.inner.limits.max_string_size;
        let mut out = Capped {
            bytes: Vec::new(),
            max: if max == 0 { usize::MAX } else { max },
        };
        serde_json::to_writer(&mut out, self.event()).map_err(|_| bounded::string_too_large())?;
        Ok(String::from_utf8(out.bytes).unwrap_or_default())
    }
}

/// `text` cut to at most `max` bytes (0: no limit) at a character boundary.
fn cut(text: &str, max: usize) -> &str {
    if max > 0 && text.len() > max {
        &text[..text.floor_char_boundary(max)]
    } else {
        text
    }
}

/// A writer that refuses to grow past `max` bytes.
struct Capped {
    bytes: Vec<u8>,
    max: usize,
}

impl std::io::Write for Capped {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        if self.bytes.len() + buf.len() > self.max {
            return Err(std::io::Error::other("over the string limit"));
        }
        self.bytes.extend_from_slice(buf);
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// Every field a script can read, in the order `docs/scripting.md` lists them. Kept here so the
/// docs test and `familiar check` can list them.
pub const EVENT_FIELDS: &[&str] = &[
    "kind",
    "session",
    "agent",
    "sidechain",
    "ts",
    "ts_secs",
    "line",
    "context_used",
    "context_limit",
    "context_remaining",
    "status",
    "agent_kind",
    "tool",
    "target",
    "tool_use_id",
    "agent_type",
    "description",
    "error",
    "error_code",
    "text",
    "message",
    "cause",
    "retry_in_ms",
    "retry_attempt",
    "max_retries",
    "trigger",
    "pre_tokens",
    "post_tokens",
    "command",
    "think",
    "model",
    "duration_ms",
    "previous_status",
    "cwd",
    "git_branch",
    "host",
    "plan",
    "raw",
    "state",
];

fn int(value: u64) -> INT {
    INT::try_from(value).unwrap_or(INT::MAX)
}

fn opt_int(value: Option<u64>) -> Dynamic {
    value.map_or(Dynamic::UNIT, |v| Dynamic::from_int(int(v)))
}

/// `ev.plan`: an array of `#{text, status, active_form}` maps (`active_form` `()` when the
/// agent wrote none), or `()` on an event that did not change the plan.
fn plan(event: &Event) -> Dynamic {
    let Some(items) = &event.plan else {
        return Dynamic::UNIT;
    };
    let items: rhai::Array = items
        .iter()
        .map(|item| {
            let mut map = Map::new();
            map.insert("text".into(), item.text.as_str().into());
            map.insert("status".into(), item.status.as_str().into());
            map.insert(
                "active_form".into(),
                item.active_form
                    .as_deref()
                    .map_or(Dynamic::UNIT, |t| t.into()),
            );
            map.into()
        })
        .collect();
    items.into()
}

/// Shared copies of the fixed vocabulary (kinds, statuses, error kinds), so reading
/// `ev.kind` in every handler does not allocate a new string each time.
fn static_str(value: &'static str) -> ImmutableString {
    static WORDS: OnceLock<Vec<(&'static str, ImmutableString)>> = OnceLock::new();
    let words = WORDS.get_or_init(|| {
        let kinds = EventKind::ALL.iter().map(|k| k.as_str());
        let statuses = [
            Status::Unknown,
            Status::Working,
            Status::WaitingForApproval,
            Status::WaitingForInput,
            Status::Idle,
        ]
        .into_iter()
        .map(Status::as_str);
        let errors = ErrorKind::ALL.iter().map(|k| k.as_str());
        let agents = AgentKind::ALL.iter().map(|k| k.as_str());
        kinds
            .chain(statuses)
            .chain(errors)
            .chain(agents)
            .map(|w| (w, ImmutableString::from(w)))
            .collect()
    });
    words
        .iter()
        .find(|(w, _)| std::ptr::eq(*w, value) || *w == value)
        .map_or_else(|| ImmutableString::from(value), |(_, s)| s.clone())
}

/// Register the `Event` type and its getters.
pub(crate) fn register(engine: &mut Engine, shared: &Shared, max_depth: usize) {
    engine.register_type_with_name::<ScriptEvent>("Event");
    engine
        .register_get("kind", |e: &mut ScriptEvent| {
            static_str(e.event().kind.as_str())
        })
        .register_get("session", |e: &mut ScriptEvent| e.text(&e.event().session))
        .register_get("agent", |e: &mut ScriptEvent| e.text(&e.event().agent))
        .register_get("sidechain", |e: &mut ScriptEvent| e.event().sidechain)
        .register_get("ts", |e: &mut ScriptEvent| e.text(&e.event().ts))
        .register_get("ts_secs", |e: &mut ScriptEvent| {
            e.event()
                .ts
                .as_deref()
                .and_then(crate::clock::rfc3339_secs)
                .map_or(Dynamic::UNIT, Dynamic::from_float)
        })
        .register_get("line", |e: &mut ScriptEvent| int(e.event().line))
        .register_get("context_used", |e: &mut ScriptEvent| {
            opt_int(e.event().context_used)
        })
        .register_get("context_limit", |e: &mut ScriptEvent| {
            int(e.event().context_limit)
        })
        .register_get("context_remaining", |e: &mut ScriptEvent| {
            opt_int(e.event().context_remaining())
        })
        .register_get("status", |e: &mut ScriptEvent| {
            static_str(e.event().status.as_str())
        })
        .register_get("agent_kind", |e: &mut ScriptEvent| {
            static_str(e.event().agent_kind.as_str())
        })
        .register_get("tool", |e: &mut ScriptEvent| e.text(&e.event().tool))
        .register_get("target", |e: &mut ScriptEvent| e.text(&e.event().target))
        .register_get("tool_use_id", |e: &mut ScriptEvent| {
            e.text(&e.event().tool_use_id)
        })
        .register_get("agent_type", |e: &mut ScriptEvent| {
            e.text(&e.event().agent_type)
        })
        .register_get("description", |e: &mut ScriptEvent| {
            e.text(&e.event().description)
        })
        .register_get("error", |e: &mut ScriptEvent| {
            e.event()
                .error
                .map_or(Dynamic::UNIT, |k| Dynamic::from(static_str(k.as_str())))
        })
        .register_get("error_code", |e: &mut ScriptEvent| {
            e.text(&e.event().error_code)
        })
        .register_get("text", |e: &mut ScriptEvent| e.text(&e.event().text))
        .register_get("message", |e: &mut ScriptEvent| e.text(&e.event().message))
        .register_get("cause", |e: &mut ScriptEvent| e.text(&e.event().cause))
        .register_get("retry_in_ms", |e: &mut ScriptEvent| {
            e.event()
                .retry_in_ms
                .map_or(Dynamic::UNIT, Dynamic::from_float)
        })
        .register_get("retry_attempt", |e: &mut ScriptEvent| {
            opt_int(e.event().retry_attempt)
        })
        .register_get("max_retries", |e: &mut ScriptEvent| {
            opt_int(e.event().max_retries)
        })
        .register_get("trigger", |e: &mut ScriptEvent| e.text(&e.event().trigger))
        .register_get("pre_tokens", |e: &mut ScriptEvent| {
            opt_int(e.event().pre_tokens)
        })
        .register_get("post_tokens", |e: &mut ScriptEvent| {
            opt_int(e.event().post_tokens)
        })
        .register_get("command", |e: &mut ScriptEvent| e.text(&e.event().command))
        .register_get("think", |e: &mut ScriptEvent| {
            opt_int(e.event().think.map(u64::from))
        })
        .register_get("model", |e: &mut ScriptEvent| e.text(&e.event().model))
        .register_get("duration_ms", |e: &mut ScriptEvent| {
            opt_int(e.event().duration_ms)
        })
        .register_get("previous_status", |e: &mut ScriptEvent| {
            e.event()
                .previous_status
                .map_or(Dynamic::UNIT, |status| static_str(status.as_str()).into())
        })
        .register_get("cwd", |e: &mut ScriptEvent| e.text(&e.event().cwd))
        .register_get("git_branch", |e: &mut ScriptEvent| {
            e.text(&e.event().git_branch)
        })
        .register_get("host", |e: &mut ScriptEvent| e.text(&e.event().host))
        .register_get("plan", |e: &mut ScriptEvent| plan(e.event()))
        .register_get("raw", |e: &mut ScriptEvent| e.raw());
    let s = shared.clone();
    engine.register_get("state", move |e: &mut ScriptEvent| {
        timers::session_state(&s, &e.event().session)
    });
    let s = shared.clone();
    engine.register_set(
        "state",
        move |e: &mut ScriptEvent, map: Map| -> Result<(), Box<EvalAltResult>> {
            timers::set_session_state(&s, &e.event().session, map, max_depth)
        },
    );
    // `print(ev)`, `log(`${ev}`)` and string interpolation show the event as its NDJSON line.
    engine.register_fn("to_string", |e: &mut ScriptEvent| e.json());
    engine.register_fn("to_debug", |e: &mut ScriptEvent| e.json());
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use familiar_model::{Event, EventKind, PlanItem, PlanStatus};

    use super::ScriptEvent;
    use crate::sandbox::Limits;

    /// An event with every text field set to `text`.
    fn full(text: &str) -> Event {
        let mut event = Event::new(EventKind::Tool, 7);
        // Every text field `text_fields!` knows, so that one added to `Event` is set too.
        for field in text_fields!(&mut event) {
            *field = Some(text.to_owned());
        }
        event
    }

    #[test]
    fn a_shared_event_is_cut_like_a_borrowed_one() {
        let limits = Limits {
            max_string_size: 4,
            ..Limits::default()
        };
        for text in ["ab", "abcd", "abcdef", "aé€x"] {
            let event = full(text);
            let borrowed = ScriptEvent::with_limits(&event, &limits);
            let shared = ScriptEvent::shared(&Arc::new(event), &limits);
            assert_eq!(shared.event(), borrowed.event(), "{text}");
        }
        let cut = ScriptEvent::shared(&Arc::new(full("abcdef")), &limits);
        assert_eq!(cut.event().cwd.as_deref(), Some("abcd"));
        assert_eq!(cut.event().text.as_deref(), Some("abcd"));
        // Every text field is cut, one added to `Event` included.
        for field in text_fields!(cut.event()) {
            assert_eq!(field.as_deref(), Some("abcd"));
        }
    }

    #[test]
    fn a_shared_event_is_read_without_a_copy_unless_a_text_is_over_the_limit() {
        let limits = Limits {
            max_string_size: 4,
            ..Limits::default()
        };
        let within = Arc::new(full("abcd"));
        assert!(std::ptr::eq(
            ScriptEvent::shared(&within, &limits).event(),
            &*within
        ));
        // One field over the limit, the last one named, or a plan's text: a cut copy.
        let over = Arc::new(Event {
            host: Some("abcde".to_owned()),
            ..full("ab")
        });
        let read = ScriptEvent::shared(&over, &limits);
        assert!(!std::ptr::eq(read.event(), &*over));
        assert_eq!(read.event().host.as_deref(), Some("abcd"));
        let plan = Arc::new(Event {
            plan: Some(vec![PlanItem {
                text: "a long step".to_owned(),
                status: PlanStatus::Pending,
                active_form: None,
            }]),
            ..full("ab")
        });
        let read = ScriptEvent::shared(&plan, &limits);
        assert!(!std::ptr::eq(read.event(), &*plan));
        assert_eq!(read.event().plan.as_ref().unwrap()[0].text, "a lo");
    }
}

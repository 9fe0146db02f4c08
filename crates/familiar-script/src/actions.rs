//! The action functions scripts call (`animate`, `say`, `notify`, `run`, `once_per`, ...).
//!
//! Each one only records what was asked into [`HostState`], shared with [`crate::host`]: no
//! I/O happens here. After a handler returns, the host drains the queue and tags every action
//! with the script's file name and the causing event's session state. `run` is recorded only
//! when the host allows it; otherwise the call is remembered as a refusal (with its position)
//! so the host can report it, and no action is produced. `once_per` reads the time the host
//! took from its [`crate::Clock`] for the current event.

use std::collections::HashMap;
use std::hash::{BuildHasher as _, Hash as _, Hasher as _};
use std::sync::{Arc, Mutex, MutexGuard};

use familiar_model::{ActionKind, Urgency};

use crate::bounded::Shape;
use rhai::{
    Array, Dynamic, Engine, EvalAltResult, FLOAT, INT, ImmutableString, Map, NativeCallContext,
    Position,
};

/// The functions this module registers, for "did you mean" hints.
pub(crate) const FUNCTIONS: &[&str] = &[
    "animate",
    "say",
    "quest",
    "notify",
    "sound",
    "xp",
    "progress",
    "rest",
    "companion_spawn",
    "companion_leave",
    "emit",
    "log",
    "run",
    "once_per",
    "after",
    "every",
    "cancel",
];

/// A `run([...])` call refused because running programs is not allowed.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Refusal {
    pub position: Position,
    pub argv: Vec<String>,
}

/// The actions one handler call queued, bounded: at most [`crate::Limits::max_actions`], and
/// their text together at most the string limit, so a loop of `say(big)` holds one call's
/// worth, not the memory of every iteration (the per-value limits did not see the queue).
#[derive(Debug, Default)]
pub(crate) struct ActionQueue {
    actions: Vec<ActionKind>,
    bytes: usize,
    /// The bounds (actions, bytes); 0 means none.
    pub max: (usize, usize),
    /// `print` and `debug` lines dropped over the bounds: they cannot fail the call, so the
    /// host reports them after it.
    pub dropped: usize,
}

impl ActionQueue {
    /// Queue `action`, or say which bound it would pass.
    pub fn push(&mut self, action: ActionKind) -> Result<(), String> {
        let bytes = self.room_for(action.name(), text_bytes(&action))?;
        self.bytes = bytes;
        self.actions.push(action);
        Ok(())
    }

    /// The queue's text once `bytes` more are added, if one more action fits.
    fn room_for(&self, name: &str, bytes: usize) -> Result<usize, String> {
        let (max_actions, max_bytes) = self.max;
        if max_actions > 0 && self.actions.len() >= max_actions {
            return Err(format!(
                "{name}: more than {max_actions} actions in one call"
            ));
        }
        let bytes = self.bytes.saturating_add(bytes);
        if max_bytes > 0 && bytes > max_bytes {
            return Err(format!(
                "{name}: the actions of one call would hold more than {max_bytes} bytes of text"
            ));
        }
        Ok(bytes)
    }

    /// Whether an action of `bytes` of text would fit, said before its text is copied (a
    /// refused `say` of the longest string must not cost a copy of it first).
    pub fn fits(&self, name: &str, bytes: usize) -> Result<(), String> {
        self.room_for(name, bytes).map(|_| ())
    }

    /// Queue a `print` or `debug` line, or count it as dropped (before copying it).
    pub fn push_log(&mut self, text: &str) {
        match self.room_for("log", text.len()) {
            Ok(bytes) => {
                self.bytes = bytes;
                self.actions.push(ActionKind::Log {
                    text: text.to_owned(),
                });
            }
            Err(_) => self.dropped += 1,
        }
    }

    pub fn len(&self) -> usize {
        self.actions.len()
    }

    /// The queued actions, emptying the queue (and its count) for the next call.
    pub fn drain(&mut self) -> std::vec::Drain<'_, ActionKind> {
        self.bytes = 0;
        self.actions.drain(..)
    }

    pub fn clear(&mut self) {
        self.bytes = 0;
        self.dropped = 0;
        self.actions.clear();
    }
}

/// The text an action carries (what its copies downstream cost).
fn text_bytes(action: &ActionKind) -> usize {
    match action {
        ActionKind::Animate { name } | ActionKind::Sound { name } => name.len(),
        ActionKind::Say { text } | ActionKind::Quest { text } | ActionKind::Log { text } => {
            text.len()
        }
        ActionKind::Notify { title, body, .. } => title.len() + body.len(),
        ActionKind::CompanionSpawn { id, kind } => id.len() + kind.len(),
        ActionKind::CompanionLeave { id } => id.len(),
        ActionKind::Emit { name, data } => name.len() + data.iter().map(json_bytes).sum::<usize>(),
        ActionKind::Run { argv } => argv.iter().map(String::len).sum(),
        ActionKind::Xp { .. } | ActionKind::Rest => 0,
    }
}

/// The text of an entry of emitted JSON, as [`crate::bounded::measure`] counts it.
fn json_bytes((key, value): (&String, &serde_json::Value)) -> usize {
    fn value_bytes(value: &serde_json::Value) -> usize {
        match value {
            serde_json::Value::String(text) => text.len(),
            serde_json::Value::Array(items) => items.iter().map(|v| 16 + value_bytes(v)).sum(),
            serde_json::Value::Object(map) => map.iter().map(json_bytes).sum(),
            _ => 16,
        }
    }
    16 + key.len() + value_bytes(value)
}

/// A `once_per` key as 128 bits of a hash keyed once per process: a key kept costs the same
/// whatever its length (10,000 keys of 1 KiB kept 10 MB as strings), and no two keys a script
/// could be made to use share one but by a chance of one in 2^128.
fn once_key(key: &str) -> u128 {
    static KEYING: std::sync::LazyLock<std::collections::hash_map::RandomState> =
        std::sync::LazyLock::new(std::collections::hash_map::RandomState::new);
    let half = |tag: u8| {
        let mut hasher = KEYING.build_hasher();
        tag.hash(&mut hasher);
        key.hash(&mut hasher);
        hasher.finish()
    };
    (u128::from(half(0)) << 64) | u128::from(half(1))
}

/// What the action functions write and the host reads, behind one mutex.
#[derive(Debug, Default)]
pub(crate) struct HostState {
    pub queue: ActionQueue,
    pub refusals: Vec<Refusal>,
    /// Last time each key passed `once_per` (by [`once_key`]), by script id.
    pub once: HashMap<usize, HashMap<u128, f64>>,
    /// The script whose handler is running (keys of `once_per` are per script).
    pub script_id: usize,
    /// The time of the event being handled.
    pub now: f64,
    pub allow_run: bool,
    /// When the running call must stop (the wall-clock budget of [`crate::Limits`]).
    pub deadline: Option<std::time::Instant>,
    /// What the running handler was called for: the event (or the timer's event), which tags
    /// timers it sets and selects its session's state. `None` while loading.
    pub origin: Option<Arc<crate::timers::Origin>>,
    pub timers: crate::timers::Timers,
    /// Per-session state of each script (`ev.state`), by (script id, session id), with its
    /// size as [`crate::bounded::measure`] counts it.
    pub session_state: HashMap<(usize, Option<String>), (Map, usize)>,
    /// The sizes of each script's `session_state` maps together, by script id.
    pub session_state_total: HashMap<usize, usize>,
    /// The bounds of what is kept between calls, from [`crate::Limits`].
    pub bounds: KeptBounds,
    /// The user's total XP as `progress()` reads it: set by the Stage, which owns the
    /// profile ([`crate::ScriptHost::set_user_xp`]), plus the `xp` asked since.
    pub user_xp: i64,
}

impl HostState {
    /// Drop every session's `ev.state` of `script` (it was reloaded: its state starts afresh).
    pub fn forget_session_state(&mut self, script: usize) {
        self.session_state.retain(|(id, _), _| *id != script);
        self.session_state_total.remove(&script);
    }
}

/// Bounds on what scripts keep between calls besides their variables (see [`crate::Limits`]).
#[derive(Debug, Default, Clone, Copy)]
pub(crate) struct KeptBounds {
    pub session_state_bytes: usize,
    pub all_session_state_bytes: usize,
    pub timers: usize,
    pub timer_name_bytes: usize,
    pub once_keys: usize,
    pub once_key_bytes: usize,
}

#[derive(Debug, Clone, Default)]
pub(crate) struct Shared(Arc<Mutex<HostState>>);

impl Shared {
    pub fn lock(&self) -> MutexGuard<'_, HostState> {
        // A poisoned lock only means a panic elsewhere; the queue itself is still consistent.
        self.0
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    fn push(&self, action: ActionKind) -> RhaiResult<()> {
        self.lock().queue.push(action).map_err(runtime_error)
    }

    /// Refuse an action of `bytes` of text that would not fit, before its text is copied.
    fn check(&self, name: &str, bytes: usize) -> RhaiResult<()> {
        self.lock().queue.fits(name, bytes).map_err(runtime_error)
    }
}

type RhaiResult<T> = Result<T, Box<EvalAltResult>>;

fn runtime_error(message: String) -> Box<EvalAltResult> {
    Box::new(EvalAltResult::ErrorRuntime(message.into(), Position::NONE))
}

fn parse_urgency(text: &str) -> RhaiResult<Urgency> {
    match text {
        "low" => Ok(Urgency::Low),
        "normal" => Ok(Urgency::Normal),
        "critical" => Ok(Urgency::Critical),
        other => Err(runtime_error(format!(
            "notify: urgency must be \"low\", \"normal\" or \"critical\", not {other:?}"
        ))),
    }
}

fn argv_of(array: Array) -> RhaiResult<Vec<String>> {
    if array.is_empty() {
        return Err(runtime_error(
            "run: expects a non-empty array [program, args...]".into(),
        ));
    }
    array
        .into_iter()
        .enumerate()
        .map(|(i, item)| {
            item.into_immutable_string()
                .map(|s| s.to_string())
                .map_err(|ty| {
                    runtime_error(format!("run: argument {i} must be a string, not {ty}"))
                })
        })
        .collect()
}

/// Rhai maps and values to JSON, for `emit(name, map)`. Too deep a value is refused: the sinks
/// walk it recursively.
fn json_map(
    map: Map,
    max_depth: usize,
    max_bytes: usize,
) -> RhaiResult<serde_json::Map<String, serde_json::Value>> {
    let map = Dynamic::from_map(map);
    // Measured before it is copied into JSON.
    match crate::bounded::measure(&map, max_depth, max_bytes) {
        Shape::Fits(_) => {}
        Shape::TooDeep => {
            return Err(runtime_error(format!(
                "emit: data nested more than {max_depth} levels deep"
            )));
        }
        Shape::TooLarge => {
            return Err(runtime_error(format!(
                "emit: the actions of one call would hold more than {max_bytes} bytes of text"
            )));
        }
    }
    let value: serde_json::Value = rhai::serde::from_dynamic(&map)
        .map_err(|err| runtime_error(format!("emit: data cannot be converted to JSON: {err}")))?;
    match value {
        serde_json::Value::Object(map) => Ok(map),
        _ => Err(runtime_error("emit: data must be a map".into())),
    }
}

pub(crate) fn register(engine: &mut Engine, shared: &Shared, max_depth: usize) {
    macro_rules! text_action {
        ($name:literal, $variant:ident, $field:ident) => {{
            let s = shared.clone();
            engine.register_fn($name, move |value: ImmutableString| -> RhaiResult<()> {
                s.check($name, value.len())?;
                s.push(ActionKind::$variant {
                    $field: value.to_string(),
                })
            });
        }};
    }
    text_action!("animate", Animate, name);
    text_action!("say", Say, text);
    text_action!("quest", Quest, text);
    text_action!("sound", Sound, name);
    text_action!("log", Log, text);
    text_action!("companion_leave", CompanionLeave, id);

    let s = shared.clone();
    engine.register_fn(
        "notify",
        move |title: ImmutableString, body: ImmutableString| -> RhaiResult<()> {
            s.check("notify", title.len() + body.len())?;
            s.push(ActionKind::Notify {
                title: title.to_string(),
                body: body.to_string(),
                urgency: Urgency::Normal,
            })
        },
    );
    let s = shared.clone();
    engine.register_fn(
        "notify",
        move |title: ImmutableString,
              body: ImmutableString,
              urgency: ImmutableString|
              -> RhaiResult<()> {
            let urgency = parse_urgency(&urgency)?;
            s.check("notify", title.len() + body.len())?;
            s.push(ActionKind::Notify {
                title: title.to_string(),
                body: body.to_string(),
                urgency,
            })
        },
    );
    let s = shared.clone();
    engine.register_fn("xp", move |amount: INT| -> RhaiResult<()> {
        let mut state = s.lock();
        state
            .queue
            .push(ActionKind::Xp { amount })
            .map_err(runtime_error)?;
        // The Stage adds the same amount to the user's profile after the call; `progress()`
        // later in this call already counts it.
        state.user_xp = state.user_xp.saturating_add(amount).max(0);
        Ok(())
    });
    let s = shared.clone();
    engine.register_fn("progress", move || -> Map {
        let xp = s.lock().user_xp;
        let level = familiar_model::progression::level_for(xp);
        let mut map = Map::new();
        map.insert("xp".into(), Dynamic::from_int(xp));
        map.insert("level".into(), Dynamic::from_int(INT::from(level)));
        map.insert(
            "next_level_xp".into(),
            Dynamic::from_int(familiar_model::progression::xp_for_level(level + 1)),
        );
        map
    });
    let s = shared.clone();
    engine.register_fn("rest", move || -> RhaiResult<()> {
        s.push(ActionKind::Rest)
    });
    let s = shared.clone();
    engine.register_fn(
        "companion_spawn",
        move |id: ImmutableString, kind: ImmutableString| -> RhaiResult<()> {
            s.push(ActionKind::CompanionSpawn {
                id: id.to_string(),
                kind: kind.to_string(),
            })
        },
    );
    let s = shared.clone();
    engine.register_fn(
        "emit",
        move |name: ImmutableString, data: Map| -> RhaiResult<()> {
            let max_bytes = s.lock().queue.max.1;
            let data = json_map(
                data,
                max_depth,
                if max_bytes == 0 {
                    usize::MAX
                } else {
                    max_bytes
                },
            )?;
            s.push(ActionKind::Emit {
                name: name.to_string(),
                data,
            })
        },
    );
    let s = shared.clone();
    engine.register_fn(
        "run",
        move |ctx: NativeCallContext, argv: Array| -> RhaiResult<()> {
            let argv = argv_of(argv)?;
            let mut state = s.lock();
            if state.allow_run {
                state
                    .queue
                    .push(ActionKind::Run { argv })
                    .map_err(runtime_error)?;
            } else {
                state.refusals.push(Refusal {
                    position: ctx.call_position(),
                    argv,
                });
            }
            Ok(())
        },
    );

    let s = shared.clone();
    let once = move |key: ImmutableString, seconds: FLOAT| -> RhaiResult<bool> {
        let mut state = s.lock();
        let bounds = state.bounds;
        if key.len() > bounds.once_key_bytes {
            return Err(runtime_error(format!(
                "once_per: a key of {} bytes, longer than the {} a key may have",
                key.len(),
                bounds.once_key_bytes
            )));
        }
        let now = state.now;
        let script = state.script_id;
        let kept = state.once.entry(script).or_default();
        let full = kept.len() >= bounds.once_keys;
        let key = once_key(&key);
        match kept.get_mut(&key) {
            Some(last) if now - *last < seconds => Ok(false),
            Some(last) => {
                *last = now;
                Ok(true)
            }
            None if full => Err(runtime_error(format!(
                "once_per: more than {} distinct keys kept by one script; use fewer keys (one \
                 per session, not one per event)",
                bounds.once_keys
            ))),
            None => {
                kept.insert(key, now);
                Ok(true)
            }
        }
    };
    let once_int = once.clone();
    engine.register_fn("once_per", once);
    engine.register_fn(
        "once_per",
        move |key: ImmutableString, seconds: INT| -> RhaiResult<bool> {
            once_int(key, seconds as FLOAT)
        },
    );
}

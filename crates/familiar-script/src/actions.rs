//! The action functions scripts call (`animate`, `say`, `notify`, `run`, `once_per`, ...).
//!
//! Each one only records what was asked into [`HostState`], shared with [`crate::host`]: no
//! I/O happens here. After a handler returns, the host drains the queue and tags every action
//! with the script's file name and the causing event's session state. `run` is recorded only
//! when the host allows it; otherwise the call is remembered as a refusal (with its position)
//! so the host can report it, and no action is produced. `once_per` reads the time the host
//! took from its [`crate::Clock`] for the current event.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard};

use familiar_model::{ActionKind, Urgency};
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

/// What the action functions write and the host reads, behind one mutex.
#[derive(Debug, Default)]
pub(crate) struct HostState {
    pub queue: Vec<ActionKind>,
    pub refusals: Vec<Refusal>,
    /// Last time each `(script id, key)` passed `once_per`.
    pub once: HashMap<(usize, String), f64>,
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
    /// Per-session state of each script (`ev.state`), by (script id, session id).
    pub session_state: HashMap<(usize, Option<String>), Map>,
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

    fn push(&self, action: ActionKind) {
        self.lock().queue.push(action);
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
fn json_map(map: Map, max_depth: usize) -> RhaiResult<serde_json::Map<String, serde_json::Value>> {
    let map = Dynamic::from_map(map);
    if crate::bounded::too_deep(&map, max_depth) {
        return Err(runtime_error(format!(
            "emit: data nested more than {max_depth} levels deep"
        )));
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
            engine.register_fn($name, move |value: ImmutableString| {
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
        move |title: ImmutableString, body: ImmutableString| {
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
            s.push(ActionKind::Notify {
                title: title.to_string(),
                body: body.to_string(),
                urgency,
            });
            Ok(())
        },
    );
    let s = shared.clone();
    engine.register_fn("xp", move |amount: INT| s.push(ActionKind::Xp { amount }));
    let s = shared.clone();
    engine.register_fn("rest", move || s.push(ActionKind::Rest));
    let s = shared.clone();
    engine.register_fn(
        "companion_spawn",
        move |id: ImmutableString, kind: ImmutableString| {
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
            let data = json_map(data, max_depth)?;
            s.push(ActionKind::Emit {
                name: name.to_string(),
                data,
            });
            Ok(())
        },
    );
    let s = shared.clone();
    engine.register_fn(
        "run",
        move |ctx: NativeCallContext, argv: Array| -> RhaiResult<()> {
            let argv = argv_of(argv)?;
            let mut state = s.lock();
            if state.allow_run {
                state.queue.push(ActionKind::Run { argv });
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
    let once = move |key: ImmutableString, seconds: FLOAT| -> bool {
        let mut state = s.lock();
        let now = state.now;
        let entry = (state.script_id, key.to_string());
        match state.once.get(&entry) {
            Some(last) if now - last < seconds => false,
            _ => {
                state.once.insert(entry, now);
                true
            }
        }
    };
    let once_int = once.clone();
    engine.register_fn("once_per", once);
    engine.register_fn("once_per", move |key: ImmutableString, seconds: INT| {
        once_int(key, seconds as FLOAT)
    });
}

//! The fast record path (`familiar_transcript::scan`) against serde, the reference it must
//! never contradict: on every record of every real transcript and of the project's own
//! fixtures (where it must also be the path taken), and on arbitrary records (escapes,
//! unicode, nesting, keys in any order, duplicate keys, numbers, malformed text) built by
//! proptest.

mod common;

use familiar_transcript::record::Record;
use familiar_transcript::scan;
use proptest::prelude::*;

/// What serde makes of the text, as comparable text (Debug shows every field).
fn serde_view(json: &str) -> Result<String, String> {
    serde_json::from_str::<Record>(json)
        .map(|record| format!("{record:?}"))
        .map_err(|err| err.to_string())
}

/// The fast path's answer; when it gives one, serde must accept the text and agree exactly.
fn check(json: &str) -> Option<String> {
    let fast = scan::record(json).map(|record| format!("{record:?}"));
    if let Some(fast) = &fast {
        match serde_view(json) {
            Ok(slow) => assert_eq!(fast, &slow, "fast path differs from serde on {json:?}"),
            Err(err) => panic!("fast path accepted what serde refuses ({err}): {json:?}"),
        }
    }
    fast
}

fn lines_of(bytes: &[u8]) -> Vec<String> {
    bytes
        .split(|&b| b == b'\n')
        .filter_map(|line| std::str::from_utf8(line).ok())
        .filter(|line| line.trim_start().starts_with('{'))
        .map(str::to_owned)
        .collect()
}

#[test]
fn every_real_record_takes_the_fast_path_and_matches_serde() {
    let mut records = 0;
    for path in common::real_fixtures() {
        let bytes = std::fs::read(&path).expect("read fixture");
        for line in lines_of(&bytes) {
            if serde_view(&line).is_ok() {
                assert!(
                    check(&line).is_some(),
                    "{}: slow path for {line}",
                    path.display()
                );
                records += 1;
            }
        }
    }
    assert!(records > 5_000, "only {records} records");
}

#[test]
fn every_own_fixture_record_matches_serde() {
    let dir = familiar_testkit::workspace_root().join("fixtures");
    let mut files: Vec<_> = walk(&dir);
    files.sort();
    let mut fast = 0;
    for path in files {
        let bytes = std::fs::read(&path).expect("read fixture");
        for line in lines_of(&bytes) {
            fast += usize::from(check(&line).is_some());
        }
    }
    assert!(fast > 100, "only {fast} records took the fast path");
}

fn walk(dir: &std::path::Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).expect("fixtures dir").flatten() {
        let path = entry.path();
        if path.is_dir() {
            out.extend(walk(&path));
        } else if path
            .extension()
            .is_some_and(|ext| ext == "jsonl" || ext == "json")
        {
            out.push(path);
        }
    }
    out
}

// ---- arbitrary records, as JSON text -------------------------------------------------

/// What a field holds, so most generated records are well typed (and some are not).
#[derive(Debug, Clone, Copy)]
enum Kind {
    Str,
    Bool,
    Int,
    Float,
    Raw,
    Usage,
    Meta,
    Message,
    Content,
}

use Kind::*;

const RECORD_KEYS: &[(&str, Kind)] = &[
    ("type", Str),
    ("subtype", Str),
    ("sessionId", Str),
    ("session_id", Str),
    ("agentId", Str),
    ("parent_tool_use_id", Str),
    ("isSidechain", Bool),
    ("isMeta", Bool),
    ("isCompactSummary", Bool),
    ("isApiErrorMessage", Bool),
    ("timestamp", Str),
    ("entrypoint", Str),
    ("payload", Raw),
    ("message", Message),
    ("error", Raw),
    ("cause", Raw),
    ("retryInMs", Float),
    ("retryAttempt", Int),
    ("maxRetries", Int),
    ("attempt", Int),
    ("max_retries", Int),
    ("retry_delay_ms", Float),
    ("error_status", Int),
    ("api_error_status", Int),
    ("compactMetadata", Meta),
    ("durationMs", Float),
    ("content", Raw),
    ("summary", Str),
    ("toolUseResult", Raw),
    ("is_error", Bool),
    ("duration_ms", Float),
    ("num_turns", Int),
    ("total_cost_usd", Float),
    ("result", Raw),
    ("errors", Raw),
    ("usage", Usage),
    ("model", Str),
    ("name", Str),
    ("input", Raw),
    ("tool_use_id", Str),
    ("id", Str),
    ("requestId", Str),
    ("data", Raw),
    ("uuid", Str),
    ("other", Raw),
];
/// The fields of the common records (user and assistant messages), drawn more often.
const MESSAGE_RECORD_KEYS: &[(&str, Kind)] = &[
    ("type", Str),
    ("message", Message),
    ("sessionId", Str),
    ("toolUseResult", Raw),
    ("isSidechain", Bool),
    ("uuid", Str),
];
const MESSAGE_KEYS: &[(&str, Kind)] = &[
    ("id", Str),
    ("model", Str),
    ("content", Content),
    ("stop_reason", Str),
    ("usage", Usage),
    ("role", Str),
];
const BLOCK_KEYS: &[(&str, Kind)] = &[
    ("type", Str),
    ("text", Str),
    ("thinking", Str),
    ("id", Str),
    ("name", Str),
    ("input", Raw),
    ("tool_use_id", Str),
    ("content", Raw),
    ("is_error", Bool),
    ("signature", Str),
];
/// A tool call's input: the fields `ToolInput` names, and the large ones it skips.
const TOOL_INPUT_KEYS: &[(&str, Kind)] = &[
    ("file_path", Str),
    ("notebook_path", Str),
    ("path", Str),
    ("pattern", Str),
    ("command", Str),
    ("url", Str),
    ("query", Str),
    ("bash_id", Str),
    ("shell_id", Str),
    ("description", Str),
    ("subagent_type", Str),
    ("skill", Str),
    ("subject", Str),
    ("taskId", Str),
    ("content", Str),
    ("old_string", Str),
    ("edits", Raw),
    ("todos", Raw),
    ("limit", Int),
];
const USAGE_KEYS: &[(&str, Kind)] = &[
    ("input_tokens", Int),
    ("output_tokens", Int),
    ("cache_read_input_tokens", Int),
    ("cache_creation_input_tokens", Int),
    ("cache_creation", Usage),
    ("ephemeral_5m_input_tokens", Int),
    ("ephemeral_1h_input_tokens", Int),
];
const META_KEYS: &[(&str, Kind)] = &[("trigger", Str), ("preTokens", Int), ("postTokens", Int)];
/// A key serde decodes to `type`: the fast path must leave it to serde.
const ESCAPED_KEY: &str = "typ\\u0065";

/// Pieces of string contents, raw JSON text: plain, unicode, every escape (lone surrogates
/// too: serde skips them unread, and refuses them in a field it reads).
fn string_piece() -> impl Strategy<Value = String> {
    prop_oneof![
        6 => "[a-z /._-]{0,24}",
        1 => "x{15,40}".prop_map(|s| s),
        1 => Just("naïve café ☕ 日本 😀".to_owned()),
        2 => prop::sample::select(vec![
            "\\n", "\\\"", "\\\\", "\\/", "\\b", "\\f", "\\r", "\\t", "\\u00e9", "\\u0041",
            "\\ud83d\\ude00", "\\uD83D\\uDE00", "\\ud800", "\\udc00x",
        ])
        .prop_map(str::to_owned),
    ]
}

fn string() -> impl Strategy<Value = String> {
    prop::collection::vec(string_piece(), 0..6)
        .prop_map(|pieces| format!("\"{}\"", pieces.concat()))
}

fn number() -> impl Strategy<Value = String> {
    prop_oneof![
        3 => (0u64..100_000).prop_map(|n| n.to_string()),
        2 => prop::sample::select(vec![
            "0", "-0", "-1", "1.5", "3.0", "1e3", "1E+2", "-2.5e-3", "18446744073709551615",
            "18446744073709551616", "1e999", "0.1e1",
        ])
        .prop_map(str::to_owned),
    ]
}

fn leaf() -> impl Strategy<Value = String> {
    prop_oneof![
        4 => string(),
        3 => number(),
        2 => prop::sample::select(vec!["true", "false", "null"])
            .prop_map(str::to_owned),
    ]
}

/// Whitespace serde accepts between tokens.
fn gap() -> impl Strategy<Value = &'static str> {
    prop_oneof![12 => Just(""), 2 => Just(" "), 1 => Just("\t"), 1 => Just("\r\n ")]
}

fn array(values: impl Strategy<Value = String>) -> impl Strategy<Value = String> {
    prop::collection::vec((gap(), values), 0..5).prop_map(|items| {
        let items: Vec<String> = items
            .into_iter()
            .map(|(gap, v)| format!("{gap}{v}"))
            .collect();
        format!("[{}]", items.join(","))
    })
}

/// Any JSON value, nested, with keys from all the shapes.
fn value() -> BoxedStrategy<String> {
    leaf()
        .prop_recursive(4, 48, 6, |inner| {
            let keys = prop_oneof![
                prop::sample::select(BLOCK_KEYS).prop_map(|(k, _)| format!("\"{k}\"")),
                prop::sample::select(USAGE_KEYS).prop_map(|(k, _)| format!("\"{k}\"")),
                "\"[a-zA-Z_ ]{0,8}\"",
            ];
            prop_oneof![
                array(inner.clone()),
                prop::collection::vec((keys, gap(), inner), 0..6).prop_map(|members| {
                    let members: Vec<String> = members
                        .into_iter()
                        .map(|(k, gap, v)| format!("{k}{gap}:{gap}{v}"))
                        .collect();
                    format!("{{{}}}", members.join(","))
                }),
            ]
        })
        .boxed()
}

/// A value of the kind a field holds; now and then anything at all.
fn typed(kind: Kind) -> BoxedStrategy<String> {
    let right = match kind {
        Str => prop_oneof![6 => string(), 1 => Just("null".to_owned())].boxed(),
        Bool => prop::sample::select(vec!["true", "false", "null"])
            .prop_map(str::to_owned)
            .boxed(),
        Int => {
            prop_oneof![4 => (0u64..1_000_000).prop_map(|n| n.to_string()), 1 => number()].boxed()
        }
        Float => number().boxed(),
        Raw => value(),
        Usage => object(USAGE_KEYS),
        Meta => object(META_KEYS),
        Message => object(MESSAGE_KEYS),
        Content => prop_oneof![
            4 => array(prop_oneof![8 => object(BLOCK_KEYS), 1 => value()]),
            1 => string(),
            1 => value(),
        ]
        .boxed(),
    };
    prop_oneof![12 => right, 1 => value()].boxed()
}

/// An object of some of `keys` in any order, each with a value of its kind; sometimes one
/// key twice, sometimes an unknown or escaped key.
fn object(keys: &'static [(&'static str, Kind)]) -> BoxedStrategy<String> {
    let chosen = prop::sample::subsequence(keys.to_vec(), 0..keys.len().min(9)).prop_shuffle();
    let extra = prop_oneof![
        6 => Just(None),
        1 => Just(Some((ESCAPED_KEY, Str))),
        1 => Just(Some(("unknown", Raw))),
        1 => prop::sample::select(keys).prop_map(Some),
    ];
    (chosen, extra)
        .prop_flat_map(|(mut chosen, extra)| {
            chosen.extend(extra);
            let members: Vec<_> = chosen
                .into_iter()
                .map(|(key, kind)| (Just(key), gap(), typed(kind), gap()))
                .collect();
            members
        })
        .prop_map(|members| {
            let members: Vec<String> = members
                .into_iter()
                .map(|(key, gap, value, gap2)| format!("{gap}\"{key}\"{gap2}:{gap}{value}{gap2}"))
                .collect();
            format!("{{{}}}", members.join(","))
        })
        .boxed()
}

fn record() -> impl Strategy<Value = String> {
    let object = prop_oneof![object(RECORD_KEYS), object(MESSAGE_RECORD_KEYS)];
    (gap(), object, gap()).prop_map(|(gap, object, gap2)| format!("{gap}{object}{gap2}"))
}

/// Text serde refuses wherever it lands (in a string or between tokens), or nearly so.
const DEFECTS: &[&str] = &[
    "\\q", "\\u12g4", "\\u00\"", "\t", "\u{1}", "\u{1f}", "01", "1.", ".5", "-", "1e", "+1", "1e+",
    "tru", "nul", "True", "\u{a0}", "\\", "\"", ",", "}", "]", ":", "{", "[",
];

/// Malformed variants of well-formed records: cut short, a byte dropped, a structural byte
/// or a defect put in anywhere.
fn mutated() -> impl Strategy<Value = String> {
    let edit = prop_oneof![
        1 => Just(Edit::Truncate),
        1 => Just(Edit::Delete),
        1 => prop::sample::select(b"{}[]\",:\\ 0ae-".to_vec()).prop_map(|b| Edit::Insert((b as char).to_string())),
        3 => prop::sample::select(DEFECTS).prop_map(|d| Edit::Insert(d.to_owned())),
    ];
    (record(), any::<prop::sample::Index>(), edit).prop_map(|(text, at, edit)| {
        let mut bytes = text.into_bytes();
        let at = at.index(bytes.len() + 1);
        match edit {
            Edit::Truncate => bytes.truncate(at),
            Edit::Delete if at < bytes.len() => {
                bytes.remove(at);
            }
            Edit::Delete => bytes.clear(),
            Edit::Insert(text) => {
                bytes.splice(at..at, text.into_bytes());
            }
        }
        String::from_utf8_lossy(&bytes).into_owned()
    })
}

#[derive(Debug, Clone)]
enum Edit {
    Truncate,
    Delete,
    Insert(String),
}

/// Cases per property (`PROPTEST_CASES` overrides it).
fn cases() -> ProptestConfig {
    let cases = std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|cases| cases.parse().ok())
        .unwrap_or(2000);
    ProptestConfig::with_cases(cases)
}

/// Runs a property on a thread with a 64 MiB stack: drawing these nested record strategies
/// recurses deeply in proptest's generator, and in a debug build that overflowed the test
/// harness's 2 MiB stack, rarely (twice in about 150,000 cases), before any check ran. The
/// scanner's own recursion is bounded by its `MAX_DEPTH`.
fn property<S: Strategy + 'static>(
    strategy: fn() -> S,
    test: impl Fn(S::Value) -> Result<(), TestCaseError> + Send + 'static,
) {
    let run = move || {
        let mut runner = proptest::test_runner::TestRunner::new(cases());
        if let Err(failure) = runner.run(&strategy(), test) {
            panic!("{failure}");
        }
    };
    let thread = std::thread::Builder::new()
        .stack_size(64 << 20)
        .spawn(run)
        .expect("spawn the property's thread");
    if let Err(panic) = thread.join() {
        std::panic::resume_unwind(panic);
    }
}

/// The fast path agrees with serde whenever it answers, and it answers for every record
/// serde reads unless a key is escaped (serde decodes keys; the fast path leaves those;
/// the only escaped key drawn is `ESCAPED_KEY`).
#[test]
fn fast_path_is_serde_on_arbitrary_records() {
    property(record, |text| {
        let fast = check(&text);
        if serde_view(&text).is_ok() && !text.contains(ESCAPED_KEY) {
            prop_assert!(fast.is_some(), "slow path for {text:?}");
        }
        Ok(())
    });
}

/// The fast tool-input path against serde: the same fields whenever it answers, and an
/// answer for every object serde reads unless a key is escaped.
#[test]
fn fast_tool_input_is_serde_on_arbitrary_inputs() {
    fn input() -> impl Strategy<Value = String> {
        prop_oneof![8 => object(TOOL_INPUT_KEYS), 1 => value()]
    }
    property(input, |text| {
        let fast = scan::tool_input(&text).map(|input| format!("{input:?}"));
        let slow = serde_json::from_str::<familiar_transcript::tools::ToolInput>(&text)
            .map(|input| format!("{input:?}"));
        match (&fast, &slow) {
            (Some(fast), Ok(slow)) => prop_assert_eq!(fast, slow),
            (Some(_), Err(err)) => prop_assert!(false, "fast path accepted ({err}): {text:?}"),
            // serde also reads a struct from an array, by position: left to it.
            (None, Ok(_)) => prop_assert!(
                text.contains(ESCAPED_KEY) || !text.trim_start().starts_with('{'),
                "slow path for {text:?}"
            ),
            (None, Err(_)) => {}
        }
        Ok(())
    });
}

/// Every tool call of the real transcripts takes the fast path and reads as serde reads it.
#[test]
fn every_real_tool_input_takes_the_fast_path_and_matches_serde() {
    let mut inputs = 0;
    for path in common::real_fixtures() {
        let bytes = std::fs::read(&path).expect("read fixture");
        for line in lines_of(&bytes) {
            let Ok(record) = serde_json::from_str::<Record>(&line) else {
                continue;
            };
            let Some(familiar_transcript::record::TextOr::Value(message)) = &record.message else {
                continue;
            };
            let Some(familiar_transcript::record::TextOr::Value(blocks)) = &message.content else {
                continue;
            };
            for input in blocks.iter().filter_map(|block| block.input) {
                let slow =
                    serde_json::from_str::<familiar_transcript::tools::ToolInput>(input.get());
                let Ok(slow) = slow else { continue };
                let fast = scan::tool_input(input.get())
                    .unwrap_or_else(|| panic!("{}: slow path for {}", path.display(), input.get()));
                assert_eq!(format!("{fast:?}"), format!("{slow:?}"));
                inputs += 1;
            }
        }
    }
    assert!(inputs > 1_000, "only {inputs} tool inputs");
}

#[test]
fn fast_path_never_accepts_what_serde_refuses() {
    property(mutated, |text| {
        check(&text);
        Ok(())
    });
}

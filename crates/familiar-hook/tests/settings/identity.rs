//! The property of `tests/settings.rs`: over arbitrary settings files (whitespace and comments
//! between tokens, the user's own hooks and `ui` keys, every kind of value), install then
//! uninstall with no backup gives back the very bytes, with the status line at the top (Claude
//! Code's, Copilot CLI's) or under `ui` (Qwen Code's).

use proptest::prelude::*;

use super::*;

/// Whitespace and comments between tokens, as a user might write them.
fn gap() -> impl Strategy<Value = String> {
    prop_oneof![
        Just(String::new()),
        Just(" ".to_owned()),
        Just("\n".to_owned()),
        Just("\n  ".to_owned()),
        Just("\n\t\t".to_owned()),
        Just("\r\n    ".to_owned()),
        Just(" /* note */ ".to_owned()),
        Just(" // note\n  ".to_owned()),
        Just("\n\n      ".to_owned()),
    ]
}

/// The inside of an empty container: no line break, or several (one line break with the
/// closing bracket at the container's indent is the documented ambiguity, resolved by the
/// binary's backup).
fn empty_inside() -> impl Strategy<Value = String> {
    prop_oneof![
        Just(String::new()),
        Just(" ".to_owned()),
        Just("\t ".to_owned()),
        Just("\n\n".to_owned()),
        Just("\n  \n ".to_owned()),
    ]
}

fn scalar() -> impl Strategy<Value = String> {
    prop_oneof![
        Just("12345678901234567890123".to_owned()),
        Just("1e3".to_owned()),
        Just("-0.50E-7".to_owned()),
        Just("true".to_owned()),
        Just("null".to_owned()),
        Just(r#""a \"quoted\" \u00e9 string""#.to_owned()),
        Just(r#""Bash(ls:*)""#.to_owned()),
    ]
}

/// A container written with the gaps given: `open gap item gap , gap item gap close`.
fn container(
    open: &str,
    close: &str,
    items: Vec<String>,
    gaps: Vec<String>,
    empty: String,
) -> String {
    if items.is_empty() {
        return format!("{open}{empty}{close}");
    }
    let mut out = open.to_owned();
    let mut gaps = gaps.into_iter().cycle();
    for (i, item) in items.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        out.push_str(&gaps.next().unwrap_or_default());
        out.push_str(item);
        out.push_str(&gaps.next().unwrap_or_default());
    }
    out.push_str(close);
    out
}

fn array_of(item: impl Strategy<Value = String>, min: usize) -> impl Strategy<Value = String> {
    (
        prop::collection::vec(item, min..4),
        prop::collection::vec(gap(), 1..6),
        empty_inside(),
    )
        .prop_map(|(items, gaps, empty)| container("[", "]", items, gaps, empty))
}

fn object_of(
    members: impl Strategy<Value = Vec<(String, String)>>,
) -> impl Strategy<Value = String> {
    (members, prop::collection::vec(gap(), 1..6), empty_inside()).prop_map(
        |(members, gaps, empty)| {
            let items = members
                .into_iter()
                .map(|(key, value)| format!("{key}: {value}"))
                .collect();
            container("{", "}", items, gaps, empty)
        },
    )
}

/// A user's own hook group (never Familiar's).
fn users_group() -> impl Strategy<Value = String> {
    prop_oneof![
        Just(r#"{"matcher": "Bash", "hooks": [{"type": "command", "command": "notify-send hi"}]}"#.to_owned()),
        Just("{\n  \"hooks\": [\n    {\"type\": \"command\", \"command\": \"/usr/bin/true\"}\n  ]\n}".to_owned()),
    ]
}

/// A `hooks` object with the user's own events (each list non-empty: an empty one that was
/// there before is the binary's backup's job).
fn users_hooks() -> impl Strategy<Value = String> {
    let events =
        prop::sample::subsequence(vec!["\"Stop\"", "\"PreToolUse\"", "\"Notification\""], 1..3);
    (events, prop::collection::vec(array_of(users_group(), 1), 3)).prop_flat_map(
        |(events, lists)| {
            let members: Vec<(String, String)> = events
                .into_iter()
                .zip(lists)
                .map(|(event, list)| (event.to_owned(), list))
                .collect();
            object_of(Just(members))
        },
    )
}

/// A `ui` object with the user's own keys (never empty: an empty one that was there before is
/// the binary's backup's job).
fn users_ui() -> impl Strategy<Value = String> {
    let keys = prop::sample::subsequence(vec!["\"theme\"", "\"hideTips\"", "\"footer\""], 1..3);
    (keys, prop::collection::vec(value(), 3)).prop_flat_map(|(keys, values)| {
        let members: Vec<(String, String)> = keys
            .into_iter()
            .zip(values)
            .map(|(key, value)| (key.to_owned(), value))
            .collect();
        object_of(Just(members))
    })
}

fn value() -> impl Strategy<Value = String> {
    scalar().prop_recursive(2, 8, 3, |inner| {
        prop_oneof![
            array_of(inner.clone(), 0),
            object_of(prop::collection::vec(("\"[a-z]{1,6}\"", inner), 0..3)),
        ]
    })
}

fn settings_file() -> impl Strategy<Value = String> {
    (
        prop::collection::vec(("\"(model|env|permissions|x)\"", value()), 0..4),
        prop::option::of(users_hooks()),
        prop::option::of(users_ui()),
        gap(),
        gap(),
    )
        .prop_flat_map(|(mut members, hooks, ui, lead, trail)| {
            members.dedup_by(|a, b| a.0 == b.0);
            let len = members.len();
            let mut own = Vec::new();
            if let Some(hooks) = hooks {
                own.push(("\"hooks\"".to_owned(), hooks));
            }
            if let Some(ui) = ui {
                own.push(("\"ui\"".to_owned(), ui));
            }
            let places = prop::collection::vec(0..=len, own.len());
            (Just(members), Just(own), places, Just(lead), Just(trail))
        })
        .prop_flat_map(|(mut members, own, places, lead, trail)| {
            // The user's `hooks` and `ui` anywhere among the other keys.
            for (member, at) in own.into_iter().zip(places) {
                members.insert(at.min(members.len()), member);
            }
            object_of(Just(members)).prop_map(move |object| format!("{lead}{object}{trail}"))
        })
}

/// What is installed: the hooks, with a status line or none; or a status line alone, at the
/// top or under `ui`.
fn plan() -> impl Strategy<Value = Plan> {
    let ui = Plan {
        hooks: None,
        status_line: Some(STATUS.to_owned()),
        status_line_at: StatusLineAt::Ui,
    };
    let top_alone = Plan {
        hooks: None,
        ..everything()
    };
    prop_oneof![Just(hooks()), Just(everything()), Just(ui), Just(top_alone)]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(400))]

    #[test]
    fn install_then_uninstall_is_the_identity_on_any_layout(
        original in settings_file(),
        plan in plan(),
    ) {
        let edit = install(Some(&original), &plan).expect("installs");
        let after = edit.after.expect("a file");
        let found = installed(&after).expect("the result parses");
        prop_assert_eq!(found.all_hooks(), plan.hooks.is_some());
        prop_assert_eq!(found.plan(), plan.clone());
        let undone = uninstall(&after, &[]).expect("uninstalls");
        let from_nothing = install(None, &plan).expect("installs").after;
        if from_nothing.as_deref() == Some(after.as_str()) {
            // The very file install writes where there is none (the user's was `{}`): without
            // a backup, uninstall cannot tell the two apart and removes it (the binary passes
            // its backups, which tell).
            prop_assert_eq!(undone.after, None);
        } else {
            prop_assert_eq!(undone.after.as_deref(), Some(original.as_str()));
        }
    }
}

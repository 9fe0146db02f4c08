//! `docs/events.md`'s table of `familiar stats --json` fields is the public contract of
//! [`Summary`]: every field it prints is documented, in order, and nothing else is.

use familiar_transcript::{Normalizer, Summary, Tokens};

fn documented_stats_fields() -> Vec<String> {
    let doc = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../../docs/events.md"))
        .expect("docs/events.md");
    let section = doc
        .split("## `familiar stats --json`")
        .nth(1)
        .expect("the stats section");
    section
        .lines()
        .skip_while(|line| !line.starts_with("| field"))
        .skip(2)
        .take_while(|line| line.starts_with('|'))
        .flat_map(|line| {
            // `| `a`, `b` | meaning |`: the names in back quotes of the first cell.
            let cell = line.split('|').nth(1).unwrap_or("");
            cell.split(',')
                .map(|name| name.trim().trim_matches('`').to_owned())
                .collect::<Vec<_>>()
        })
        .collect()
}

#[test]
fn every_stats_field_is_documented_in_order() {
    let mut normalizer = Normalizer::default();
    let mut events = Vec::new();
    // A file that fills every optional field: a version, the CLI's cost, something unknown.
    for line in [
        r#"{"type":"user","sessionId":"s","version":"2.1.332","message":{"role":"user","content":"hi"}}"#,
        r#"{"type":"cost-state","sessionId":"s","totalCostUSD":0.5}"#,
        r#"{"type":"hologram","sessionId":"s"}"#,
    ] {
        normalizer
            .push_line(line.as_bytes(), 1, &mut events)
            .expect("line");
    }
    let summary = Summary::new("f", &normalizer, Tokens::default(), 0.0);
    let json = serde_json::to_string(&summary).expect("JSON");
    let value: serde_json::Value = serde_json::from_str(&json).expect("JSON");
    // The top-level keys in the order printed (the parsed map sorts them).
    let mut printed: Vec<(usize, String)> = value
        .as_object()
        .expect("an object")
        .keys()
        .map(|key| {
            (
                json.find(&format!("\"{key}\":")).unwrap_or(usize::MAX),
                key.clone(),
            )
        })
        .collect();
    printed.sort();
    let printed: Vec<String> = printed.into_iter().map(|(_, key)| key).collect();
    assert_eq!(printed, documented_stats_fields());
}

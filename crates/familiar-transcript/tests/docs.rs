//! `docs/events.md`'s table of `familiar stats --json` fields is the public contract of
//! [`Summary`]: every field it prints is documented, in order, and nothing else is.

use familiar_transcript::{Normalizer, Summary, Tokens};

fn documented_stats_fields() -> Vec<String> {
    let doc = familiar_testkit::docs::read("events.md");
    familiar_testkit::docs::first_column(familiar_testkit::docs::section(
        &doc,
        "## `familiar stats --json`",
    ))
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
    let printed =
        familiar_testkit::docs::keys_in_order(&serde_json::to_string(&summary).expect("JSON"));
    assert_eq!(printed, documented_stats_fields());
}

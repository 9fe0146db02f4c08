//! Shared helpers for the normalizer's integration tests: where the fixtures are, and a
//! one-line-per-event rendering that keeps snapshots readable.
#![allow(dead_code)]

use std::path::PathBuf;

use familiar_transcript::{Diagnostic, Event, NormalizerConfig, normalize_bytes};

/// `fixtures/` of this repository: small transcripts the project writes, one per edge case.
pub fn own_fixture(name: &str) -> Vec<u8> {
    let path = familiar_testkit::own_fixture(name);
    std::fs::read(&path).unwrap_or_else(|err| panic!("fixture {}: {err}", path.display()))
}

/// `shared/fixtures/real/` beside the clone (override with `FAMILIAR_REAL_FIXTURES`).
pub fn real_fixture_dir() -> PathBuf {
    familiar_testkit::real_fixtures_dir()
}

/// Every real transcript (at least the ten the tests were written against).
pub fn real_fixtures() -> Vec<PathBuf> {
    let files = familiar_testkit::real_fixtures();
    assert!(
        files.len() >= 10,
        "expected the real transcripts, found {files:?}"
    );
    files
}

pub fn events_of(bytes: &[u8]) -> (Vec<Event>, Vec<Diagnostic>) {
    normalize_bytes(bytes, &NormalizerConfig::default())
}

/// `line kind [error] tool=… target=… ctx=used/limit status`, text cut to 40 chars.
pub fn render(events: &[Event]) -> String {
    let mut out = String::new();
    for event in events {
        let mut row = format!("{:>4} {}", event.line, event.kind);
        if let Some(error) = event.error {
            row += &format!(" [{}]", error.as_str());
        }
        if let Some(tool) = &event.tool {
            row += &format!(" tool={tool}");
        }
        if let Some(target) = &event.target {
            row += &format!(" target={:?}", cut(target, 40));
        }
        if let Some(command) = &event.command {
            row += &format!(" command={command}");
        }
        if let Some(agent) = &event.agent {
            row += &format!(" agent={agent}");
        }
        if event.sidechain {
            row += " sidechain";
        }
        match event.context_used {
            Some(used) => row += &format!(" ctx={used}/{}", event.context_limit),
            None => row += &format!(" ctx=?/{}", event.context_limit),
        }
        row += &format!(" {}", event.status.as_str());
        out += &row;
        out.push('\n');
    }
    out
}

fn cut(text: &str, max: usize) -> String {
    let first_line = text.lines().next().unwrap_or("");
    first_line.chars().take(max).collect()
}

/// `json` with a space after each colon and comma outside strings, as Python's `json.dumps`
/// writes a record: the same JSON, spelt otherwise.
pub fn spaced(json: &str) -> String {
    let (mut out, mut in_string, mut escaped) = (String::new(), false, false);
    for c in json.chars() {
        out.push(c);
        match c {
            _ if escaped => escaped = false,
            '\\' if in_string => escaped = true,
            '"' => in_string = !in_string,
            ':' | ',' if !in_string => out.push(' '),
            _ => {}
        }
    }
    out
}

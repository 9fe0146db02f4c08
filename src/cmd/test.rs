//! `familiar test SCRIPT... --input FILE --expect ACTIONS.jsonl`: a unit test that a user keeps
//! beside a script. The scripts run over the transcript as in `familiar run` (through the
//! session model and the stage `watch` uses: what passes here behaves so live); the actions
//! must match the expectation file line for line.
//!
//! Each expected line lists only the fields the user cares about: every produced action is
//! compared on the fields that appear anywhere in the expectation file, so a file of
//! `{"action":"animate","name":"attack"}` lines ignores line numbers and session state, and
//! adding `"line"` to the lines makes them count. On a mismatch a unified diff (produced
//! actions trimmed the same way) says what differs. `--update` writes the produced actions as
//! the new expectation.

use std::collections::BTreeSet;
use std::fmt::Write as _;
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context as _;
use serde_json::{Map, Value};

use super::run::{DryRun, DryRunArgs, dry_run};

#[derive(Debug, clap::Args)]
pub struct Args {
    #[command(flatten)]
    pub dry_run: DryRunArgs,
    /// Expected actions, one JSON object per line.
    #[arg(long, value_name = "ACTIONS.jsonl")]
    pub expect: PathBuf,
    /// Write the produced actions to the expectation file instead of comparing.
    #[arg(long)]
    pub update: bool,
}

/// Fields `--update` leaves out: session state that changes with the normalizer, not the script.
const STATE_FIELDS: [&str; 5] = [
    "session",
    "agent",
    "context_used",
    "context_limit",
    "status",
];

pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let mut produced: Vec<Map<String, Value>> = Vec::new();
    let mut keep = |actions: Vec<familiar_model::Action>| {
        for action in actions {
            if let Ok(Value::Object(map)) = serde_json::to_value(action) {
                produced.push(map);
            }
        }
    };
    let outcome = dry_run(&args.dry_run, false, Some(&mut keep))?;
    let failures = match outcome {
        DryRun::NotLoaded => return Ok(ExitCode::from(1)),
        DryRun::Ran { failures } => failures,
    };

    if args.update {
        let mut text = String::new();
        for mut action in produced {
            for field in STATE_FIELDS {
                action.remove(field);
            }
            text.push_str(&serde_json::to_string(&action)?);
            text.push('\n');
        }
        std::fs::write(&args.expect, text)
            .with_context(|| format!("cannot write {}", args.expect.display()))?;
        println!("updated {}", args.expect.display());
        return Ok(ExitCode::SUCCESS);
    }

    let expected = read_expectations(&args.expect)?;
    let fields: BTreeSet<&str> = expected
        .iter()
        .flat_map(|line| line.keys().map(String::as_str))
        .collect();
    let trimmed: Vec<Map<String, Value>> = produced
        .iter()
        .map(|action| {
            action
                .iter()
                .filter(|(key, _)| fields.contains(key.as_str()))
                .map(|(key, value)| (key.clone(), value.clone()))
                .collect()
        })
        .collect();

    if trimmed == expected && failures == 0 {
        println!(
            "ok: {} action(s) match {}",
            expected.len(),
            args.expect.display()
        );
        return Ok(ExitCode::SUCCESS);
    }
    if trimmed != expected {
        let render = |lines: &[Map<String, Value>]| {
            lines.iter().fold(String::new(), |mut out, line| {
                let _ = writeln!(out, "{}", Value::Object(line.clone()));
                out
            })
        };
        let (old, new) = (render(&expected), render(&trimmed));
        let diff = similar::TextDiff::from_lines(&old, &new);
        print!(
            "{}",
            diff.unified_diff()
                .context_radius(2)
                .header(&args.expect.display().to_string(), "produced")
        );
        println!(
            "FAILED: {} expected, {} produced (compared on: {})",
            expected.len(),
            trimmed.len(),
            fields.into_iter().collect::<Vec<_>>().join(", ")
        );
    } else {
        println!("FAILED: the actions match but {failures} handler call(s) failed");
    }
    Ok(ExitCode::from(1))
}

fn read_expectations(path: &PathBuf) -> anyhow::Result<Vec<Map<String, Value>>> {
    let text =
        std::fs::read_to_string(path).with_context(|| format!("cannot read {}", path.display()))?;
    text.lines()
        .enumerate()
        .filter(|(_, line)| !line.trim().is_empty())
        .map(|(index, line)| match serde_json::from_str::<Value>(line) {
            Ok(Value::Object(map)) => Ok(map),
            Ok(_) => anyhow::bail!("{}:{}: not a JSON object", path.display(), index + 1),
            Err(err) => anyhow::bail!("{}:{}: {err}", path.display(), index + 1),
        })
        .collect()
}

//! `familiar doctor`'s look at a remote host: the link `watch --remote` would make, up to the
//! feed's first line (its format and version), then closed.

use std::io::Write as _;
use std::process::Stdio;
use std::time::Duration;

use crossbeam_channel::RecvTimeoutError;
use familiar_model::text::printable_line;

use super::cursor::Request;
use super::link::{Ended, explain, read_lines, read_stderr};
use super::spec::RemoteSpec;
use super::wire::{FEED_VERSION, FeedLine, Received};

/// Connect to `spec` as `watch` does and read the feed's hello: the remote Familiar's
/// version, or why there is none (one line, as `watch` would say it).
pub fn probe(spec: &RemoteSpec, limit: Duration) -> Result<String, String> {
    let mut command = spec.command();
    command
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = command
        .spawn()
        .map_err(|err| format!("cannot start ssh: {err}"))?;
    let (Some(mut stdin), Some(stdout), Some(stderr)) =
        (child.stdin.take(), child.stdout.take(), child.stderr.take())
    else {
        let _ = child.kill();
        let _ = child.wait();
        return Err("ssh has no pipes".to_owned());
    };
    let request = serde_json::to_vec(&Request::default()).unwrap_or_default();
    let _ = stdin
        .write_all(&request)
        .and_then(|()| stdin.write_all(b"\n"));
    let errors = read_stderr(stderr);
    let first = read_lines(stdout).recv_timeout(limit);
    // Closing its stdin ends the feed; the ssh session ends with it.
    drop(stdin);
    let _ = child.kill();
    let _ = child.wait();
    let said = errors.join().unwrap_or_default();
    let reason = match first {
        Ok(Ok(line)) => match serde_json::from_slice::<FeedLine>(&line)
            .ok()
            .and_then(FeedLine::received)
        {
            Some(Received::Hello { feed, version }) if feed == FEED_VERSION => {
                return Ok(printable_line(&version).into_owned());
            }
            Some(Received::Hello { feed, version }) => {
                return Err(format!(
                    "runs Familiar {}, whose feed (format {feed}) this one cannot read \
                     (format {FEED_VERSION})",
                    printable_line(&version)
                ));
            }
            _ => "its first line is not a feed's".to_owned(),
        },
        Ok(Err(reason)) => reason,
        Err(RecvTimeoutError::Timeout) => format!("no answer within {} s", limit.as_secs()),
        Err(RecvTimeoutError::Disconnected) => "the connection closed".to_owned(),
    };
    Err(match explain(spec, reason, false, &said) {
        Ended::Failed(reason) | Ended::Dropped { reason, .. } => reason,
        Ended::Stopped => "stopped".to_owned(),
    })
}

//! `familiar doctor`'s lines for opencode: its database (where `$OPENCODE_DB`,
//! `$XDG_DATA_HOME` or the home put it) and the sessions it holds, the newest three with the
//! directory each ran in, then what those hold that Familiar does not know. opencode is
//! optional: no database is fine; one Familiar cannot read is said, in one line.

use familiar_model::text::printable_line;

use super::Check;

pub(super) fn check_opencode(checks: &mut Vec<Check>) {
    const WHAT: &str = "opencode database";
    let Some(db) = familiar_tail::opencode::db_path() else {
        checks.push(Check::ok(
            WHAT,
            "no home directory; opencode sessions not followed",
        ));
        return;
    };
    let from = ["OPENCODE_DB", "XDG_DATA_HOME"]
        .iter()
        .find(|var| std::env::var_os(var).is_some_and(|v| !v.is_empty()))
        .map_or_else(String::new, |var| format!(" ({var})"));
    if !db.is_file() {
        checks.push(Check::ok(
            WHAT,
            format!(
                "{} has no sessions yet (only needed with opencode; set OPENCODE_DB or \
                 XDG_DATA_HOME if it keeps them elsewhere)",
                db.display()
            ),
        ));
        return;
    }
    let mut sessions = match familiar_tail::opencode::list_sessions(&db) {
        Ok(sessions) => sessions,
        Err(err) => {
            let mut check = Check::ok(
                WHAT,
                format!("{}{from}: {err}; its sessions are not read", db.display()),
            );
            check.ok = false;
            checks.push(check);
            return;
        }
    };
    sessions.sort_by(|a, b| b.updated.cmp(&a.updated).then_with(|| a.id.cmp(&b.id)));
    let mut check = Check::ok(
        WHAT,
        format!("{}{from}, {} session(s)", db.display(), sessions.len()),
    );
    for session in sessions.iter().take(3) {
        let when = std::time::UNIX_EPOCH
            + std::time::Duration::from_millis(session.updated.max(0).unsigned_abs());
        check.more.push(format!(
            "#{}  ({})  last written {}",
            session.id,
            printable_line(&session.directory),
            humantime::format_rfc3339_seconds(when)
        ));
    }
    checks.push(check);
    let newest: Vec<std::path::PathBuf> = sessions
        .iter()
        .take(3)
        .map(|session| familiar_tail::opencode::address(&db, &session.id))
        .collect();
    checks.push(super::agents::check_known("opencode records", &newest));
}

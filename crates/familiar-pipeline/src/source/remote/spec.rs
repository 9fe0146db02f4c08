//! A remote to follow as the user names it (`[USER@]HOST[:PORT][:DIR]`), and the `ssh`
//! command line that runs `familiar feed` there, quoted for the remote shell.

use std::process::Command;

use familiar_model::text::printable_line;

/// A remote to follow: `[USER@]HOST[:PORT][:DIR]`, and the `familiar` to run there.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RemoteSpec {
    /// `[USER@]HOST`, as ssh takes it (a name from the user's ssh config works).
    pub host: String,
    pub port: Option<u16>,
    /// The project whose sessions are followed; `None`: every session on the host.
    pub dir: Option<String>,
    /// The `familiar` to run there (`--remote-bin`).
    pub bin: String,
    /// `--agent` for the feed, when not every agent.
    pub agent: Option<String>,
    /// Files there not written for this long are dormant, read only once written again
    /// (`--since`; [`familiar_tail::DORMANT_AFTER`] unless told; `None`: every file is read).
    pub dormant_after: Option<std::time::Duration>,
}

impl RemoteSpec {
    /// `[USER@]HOST[:PORT][:DIR]`.
    pub fn parse(text: &str, bin: &str) -> Result<RemoteSpec, String> {
        let (host, rest) = match text.split_once(':') {
            Some((host, rest)) => (host, Some(rest)),
            None => (text, None),
        };
        if host.is_empty() || host.starts_with('-') || host.contains(char::is_whitespace) {
            return Err(format!(
                "{}: not a host ([USER@]HOST[:PORT][:DIR] expected)",
                printable_line(text)
            ));
        }
        let (port, dir) = match rest {
            None => (None, None),
            Some(rest) => {
                let (first, dir) = match rest.split_once(':') {
                    Some((first, dir)) => (first, Some(dir)),
                    None => (rest, None),
                };
                match first.parse::<u16>() {
                    Ok(port) => (Some(port), dir),
                    Err(_) if !first.is_empty() && first.bytes().all(|b| b.is_ascii_digit()) => {
                        return Err(format!("{}: not a port", printable_line(first)));
                    }
                    // No port: all of it is the directory.
                    Err(_) => (None, Some(rest)),
                }
            }
        };
        Ok(RemoteSpec {
            host: host.to_owned(),
            port,
            dir: dir.filter(|dir| !dir.is_empty()).map(str::to_owned),
            bin: bin.to_owned(),
            agent: None,
            dormant_after: Some(familiar_tail::DORMANT_AFTER),
        })
    }

    /// How the remote is named on plates and in messages: the host as given.
    pub fn name(&self) -> String {
        match self.port {
            Some(port) => format!("{}:{port}", self.host),
            None => self.host.clone(),
        }
    }

    /// The `ssh` command line (the remote command quoted for the remote's shell).
    pub fn command(&self) -> Command {
        let mut words = vec![
            quote_path(&self.bin),
            "feed".into(),
            "--cursor-on-stdin".into(),
        ];
        match &self.dir {
            Some(dir) => {
                words.push("--project".into());
                words.push(quote_path(dir));
            }
            None => words.push("--all".into()),
        }
        if let Some(agent) = &self.agent {
            words.push("--agent".into());
            words.push(quote(agent));
        }
        let mut command = Command::new("ssh");
        // No terminal (binary-safe lines), never a password prompt (a link that cannot log in
        // says why instead of waiting), and keepalives that notice a dead link. Compression is
        // the user's ssh config's to say (a first connection sends every file's backlog: 197 MB
        // for 176 MB of transcripts, in 3.3 s on loopback, 8.1 s compressed; over a slow link
        // compression wins).
        command.args([
            "-T",
            "-o",
            "BatchMode=yes",
            "-o",
            "ServerAliveInterval=5",
            "-o",
            "ServerAliveCountMax=2",
        ]);
        if let Some(port) = self.port {
            command.args(["-p", &port.to_string()]);
        }
        command.arg("--").arg(&self.host).arg(words.join(" "));
        command
    }
}

/// `text` in single quotes for a POSIX shell.
fn quote(text: &str) -> String {
    format!("'{}'", text.replace('\'', r"'\''"))
}

/// A path for the remote shell: quoted, but a leading `~/` left for the shell to expand.
fn quote_path(path: &str) -> String {
    match path.strip_prefix("~/") {
        Some(rest) => format!("~/{}", quote(rest)),
        None => quote(path),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_remote_is_a_host_with_an_optional_port_and_directory() {
        let parse = |text| RemoteSpec::parse(text, "familiar").map(|s| (s.host, s.port, s.dir));
        assert_eq!(parse("dev"), Ok(("dev".into(), None, None)));
        assert_eq!(
            parse("me@dev:/src/app"),
            Ok(("me@dev".into(), None, Some("/src/app".into())))
        );
        assert_eq!(
            parse("localhost:2222"),
            Ok(("localhost".into(), Some(2222), None))
        );
        assert_eq!(
            parse("localhost:2222:~/app"),
            Ok(("localhost".into(), Some(2222), Some("~/app".into())))
        );
        assert!(parse("host:99999").is_err());
        assert!(parse("-oProxyCommand=x").is_err());
        assert!(parse(":/dir").is_err());
    }

    #[test]
    fn the_remote_command_is_quoted_for_the_remote_shell() {
        let mut spec = RemoteSpec::parse("dev:/src/it's here", "~/bin/fam iliar").expect("parses");
        spec.agent = Some("codex".into());
        let command = spec.command();
        let args: Vec<String> = command
            .get_args()
            .map(|arg| arg.to_string_lossy().into_owned())
            .collect();
        assert_eq!(
            args.last().map(String::as_str),
            Some(
                r"~/'bin/fam iliar' feed --cursor-on-stdin --project '/src/it'\''s here' --agent 'codex'"
            )
        );
        assert_eq!(args[args.len() - 3..args.len() - 1], ["--", "dev"]);
    }
}

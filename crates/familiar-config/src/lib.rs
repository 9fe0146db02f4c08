//! Familiar's configuration: `~/.config/familiar/config.toml` (found through `directories`,
//! or named by `FAMILIAR_CONFIG`), parsed strictly and merged with command-line flags.
//!
//! The binary loads a [`Config`] once at start, merges the flags of the command into
//! [`Settings`] ([`Config::merge`]) and builds the pipeline from those: the scripts for
//! `familiar-script`, the context limit for the normalizer, poll mode and idle timeout for the
//! tailer, notification toggles and `allow_run` for `familiar-sink`, sound settings for
//! `familiar-audio`. A file that does not parse,
//! or names a key or event kind that does not exist, is an error with its line and column,
//! never a silent default: a typo in `allow_run` must not quietly change what runs.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use std::path::{Path, PathBuf};
use std::time::Duration;

use familiar_model::EventKind;
use serde::Deserialize;

/// Environment variable naming the config file, overriding the default location.
pub const CONFIG_ENV: &str = "FAMILIAR_CONFIG";

/// Default time limit of a program started by a `run` action.
pub const DEFAULT_RUN_TIMEOUT: Duration = Duration::from_secs(30);

/// The config file as written. Every key is optional.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Config {
    /// Scripts loaded after the shipped default, in order. A relative path is relative to the
    /// config file's directory; `~/` is the home directory.
    pub scripts: Vec<PathBuf>,
    /// Context window in tokens, overriding detection: a number, or a size such as `"1M"`.
    #[serde(deserialize_with = "de_tokens_opt")]
    pub context_limit: Option<u64>,
    /// Let scripts run programs (`run([argv...])`).
    pub allow_run: bool,
    /// Poll transcript files instead of using inotify (network filesystems).
    pub poll: bool,
    /// Quiet time before a session counts as idle, e.g. `"5m"` or `"90s"`.
    #[serde(deserialize_with = "de_duration_opt")]
    pub idle_timeout: Option<Duration>,
    pub notifications: Notifications,
    pub run: Run,
    pub sound: Sound,
    pub remote: Remote,
}

/// `[remote]`: other machines whose sessions `watch` (and `sessions`) follow over ssh.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Remote {
    /// `[USER@]HOST[:PORT][:DIR]` each, as `--remote` takes them (the flags add to these).
    pub hosts: Vec<String>,
    /// The `familiar` to run there, when it is not on their PATH.
    pub bin: String,
}

impl Default for Remote {
    fn default() -> Remote {
        Remote {
            hosts: Vec::new(),
            bin: DEFAULT_REMOTE_BIN.to_owned(),
        }
    }
}

/// The `familiar` run on a remote host unless `[remote] bin` or `--remote-bin` says otherwise.
pub const DEFAULT_REMOTE_BIN: &str = "familiar";

/// `[notifications]`: desktop notifications.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Notifications {
    /// Send desktop notifications at all.
    pub enabled: bool,
    /// Ring the terminal bell when a notification cannot be shown (no bus, no server).
    pub bell_fallback: bool,
    /// Per event kind: `false` mutes notifications caused by that kind, e.g. `success = false`.
    pub events: BTreeMap<EventKind, bool>,
}

impl Default for Notifications {
    fn default() -> Notifications {
        Notifications {
            enabled: true,
            bell_fallback: false,
            events: BTreeMap::new(),
        }
    }
}

/// `[run]`: programs started by `run` actions.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Run {
    /// Time limit, e.g. `"30s"`; a program still running then is killed.
    #[serde(deserialize_with = "de_duration")]
    pub timeout: Duration,
}

impl Default for Run {
    fn default() -> Run {
        Run {
            timeout: DEFAULT_RUN_TIMEOUT,
        }
    }
}

/// The same sound asked again within this gap is skipped, unless `[sound] repeat_gap` says
/// otherwise (the sound's own rule: `familiar_model::sink::DEFAULT_SOUND_REPEAT_GAP`).
pub use familiar_model::sink::DEFAULT_SOUND_REPEAT_GAP as DEFAULT_REPEAT_GAP;

/// `[sound]`: cues and sound files played by `sound(...)` actions.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Sound {
    /// Play sounds at all (with the window; headless plays them only with `--sound`).
    pub enabled: bool,
    /// Loudness from 0.0 (silent) to 1.0 (full).
    #[serde(deserialize_with = "de_volume")]
    pub volume: f32,
    /// Local times with no sound, e.g. `"22:00-07:00"`.
    #[serde(deserialize_with = "de_quiet_hours")]
    pub quiet_hours: Option<QuietHours>,
    /// The same sound asked again within this gap is skipped, e.g. `"3s"`.
    #[serde(deserialize_with = "de_duration")]
    pub repeat_gap: Duration,
}

impl Default for Sound {
    fn default() -> Sound {
        Sound {
            enabled: true,
            volume: 0.8,
            quiet_hours: None,
            repeat_gap: DEFAULT_REPEAT_GAP,
        }
    }
}

fn de_volume<'de, D: serde::Deserializer<'de>>(de: D) -> Result<f32, D::Error> {
    let volume = f64::deserialize(de)?;
    if (0.0..=1.0).contains(&volume) {
        Ok(volume as f32)
    } else {
        Err(serde::de::Error::custom(format!(
            "volume {volume} is out of range; write a number from 0.0 (silent) to 1.0 (full)"
        )))
    }
}

// Quiet hours are the sound's own vocabulary (`familiar_model::time::QuietHours`): the
// config file parses them, the sound sink keeps them.
pub use familiar_model::time::QuietHours;

fn de_quiet_hours<'de, D: serde::Deserializer<'de>>(de: D) -> Result<Option<QuietHours>, D::Error> {
    String::deserialize(de)?
        .parse()
        .map(Some)
        .map_err(serde::de::Error::custom)
}

fn de_duration<'de, D: serde::Deserializer<'de>>(de: D) -> Result<Duration, D::Error> {
    let text = String::deserialize(de)?;
    humantime::parse_duration(&text).map_err(|err| {
        serde::de::Error::custom(format!(
            "invalid duration {text:?} ({err}); write e.g. \"30s\" or \"5m\""
        ))
    })
}

/// A token count: a number (`1000000`) or a size as people write it (`"1M"`, `"200k"`).
fn de_tokens_opt<'de, D: serde::Deserializer<'de>>(de: D) -> Result<Option<u64>, D::Error> {
    #[derive(Deserialize)]
    #[serde(untagged)]
    enum Tokens {
        Number(u64),
        Text(String),
    }
    match Tokens::deserialize(de)? {
        Tokens::Number(0) => Err(serde::de::Error::custom("a context limit of 0 tokens")),
        Tokens::Number(n) => Ok(Some(n)),
        Tokens::Text(text) => familiar_model::words::parse_tokens(&text)
            .map(Some)
            .ok_or_else(|| {
                serde::de::Error::custom(format!(
                    "invalid token count {text:?}; write e.g. 1000000 or \"1M\""
                ))
            }),
    }
}

fn de_duration_opt<'de, D: serde::Deserializer<'de>>(de: D) -> Result<Option<Duration>, D::Error> {
    de_duration(de).map(Some)
}

/// Where the config came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Source {
    /// Named by `FAMILIAR_CONFIG`.
    Env(PathBuf),
    /// The default location (which may not exist: then the defaults apply).
    Default(PathBuf),
    /// No home directory to look in.
    None,
}

impl Source {
    pub fn path(&self) -> Option<&Path> {
        match self {
            Source::Env(path) | Source::Default(path) => Some(path),
            Source::None => None,
        }
    }
}

/// A loaded config and where it came from.
#[derive(Debug, Clone, PartialEq)]
pub struct Loaded {
    pub config: Config,
    pub source: Source,
    /// The file existed and was read (otherwise the defaults apply).
    pub found: bool,
}

/// Why the config could not be loaded.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    /// The I/O cause is part of the message, not a `source`: printed once.
    #[error("cannot read config file {path}: {cause}")]
    Read {
        path: PathBuf,
        cause: std::io::Error,
    },
    #[error("config file {path} (named by {CONFIG_ENV}) does not exist")]
    MissingNamed { path: PathBuf },
    #[error("invalid config file {path}:{line}:{column}: {message}\n{excerpt}")]
    Invalid {
        path: PathBuf,
        line: usize,
        column: usize,
        message: String,
        /// The offending line with a caret under the span.
        excerpt: String,
    },
}

/// The config file location: `FAMILIAR_CONFIG`, else `~/.config/familiar/config.toml` (the
/// platform's config dir, `$XDG_CONFIG_HOME` respected).
pub fn locate() -> Source {
    if let Some(path) = std::env::var_os(CONFIG_ENV).filter(|value| !value.is_empty()) {
        return Source::Env(PathBuf::from(path));
    }
    match directories::ProjectDirs::from("", "", "familiar") {
        Some(dirs) => Source::Default(dirs.config_dir().join("config.toml")),
        None => Source::None,
    }
}

/// Load the config from where [`locate`] says. A missing file at the default location means
/// the defaults; a missing file named by `FAMILIAR_CONFIG` is an error (likely a typo).
pub fn load() -> Result<Loaded, ConfigError> {
    load_from(locate())
}

/// Load the config from a given source.
pub fn load_from(source: Source) -> Result<Loaded, ConfigError> {
    let Some(path) = source.path() else {
        return Ok(Loaded {
            config: Config::default(),
            source,
            found: false,
        });
    };
    match std::fs::read_to_string(path) {
        Ok(text) => {
            let config = parse(&text, path)?;
            Ok(Loaded {
                config,
                source,
                found: true,
            })
        }
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => match source {
            Source::Env(path) => Err(ConfigError::MissingNamed { path }),
            _ => Ok(Loaded {
                config: Config::default(),
                source,
                found: false,
            }),
        },
        Err(cause) => Err(ConfigError::Read {
            path: path.to_owned(),
            cause,
        }),
    }
}

/// Parse config text; `path` names the file in errors and anchors relative script paths.
pub fn parse(text: &str, path: &Path) -> Result<Config, ConfigError> {
    let mut config: Config = toml::from_str(text).map_err(|err| located(text, path, &err))?;
    let base = path.parent().unwrap_or(Path::new(""));
    config.scripts = config
        .scripts
        .into_iter()
        .map(|script| resolve(base, &script))
        .collect();
    Ok(config)
}

fn resolve(base: &Path, script: &Path) -> PathBuf {
    if let Ok(rest) = script.strip_prefix("~")
        && let Some(home) = directories::BaseDirs::new()
    {
        return home.home_dir().join(rest);
    }
    if script.is_absolute() {
        script.to_owned()
    } else {
        base.join(script)
    }
}

fn located(text: &str, path: &Path, err: &toml::de::Error) -> ConfigError {
    let start = err.span().map_or(0, |span| span.start).min(text.len());
    let end = err.span().map_or(start, |span| span.end).min(text.len());
    let line_start = text[..start].rfind('\n').map_or(0, |i| i + 1);
    let line_end = text[start..].find('\n').map_or(text.len(), |i| start + i);
    let line = text[..start].matches('\n').count() + 1;
    let column = text[line_start..start].chars().count() + 1;
    let source_line = text[line_start..line_end].trim_end_matches('\r');
    let width = text[start..end.clamp(start, line_end)]
        .chars()
        .count()
        .max(1);
    let gutter = " ".repeat(line.to_string().len());
    let excerpt = format!(
        "{gutter} |\n{line} | {source_line}\n{gutter} | {}{}",
        " ".repeat(column - 1),
        "^".repeat(width)
    );
    ConfigError::Invalid {
        path: path.to_owned(),
        line,
        column,
        message: err.message().trim_end().to_owned(),
        excerpt,
    }
}

/// Command-line flags that override the file. `None` / empty = not given.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Overrides {
    /// `--script FILE` (repeatable): loaded after the configured scripts.
    pub scripts: Vec<PathBuf>,
    pub context_limit: Option<u64>,
    /// `--allow-run`.
    pub allow_run: Option<bool>,
    /// `--poll`.
    pub poll: Option<bool>,
    /// `--no-notify` gives `Some(false)`.
    pub notifications: Option<bool>,
    pub idle_timeout: Option<Duration>,
    /// `--mute` gives `Some(false)`, `--sound` `Some(true)` (headless is muted unless asked).
    pub sound: Option<bool>,
    /// `--remote HOST` (repeatable): followed after the configured hosts.
    pub remote_hosts: Vec<String>,
    /// `--remote-bin PATH`.
    pub remote_bin: Option<String>,
}

/// The merged result the pipeline is built from (and `familiar doctor` shows).
#[derive(Debug, Clone, PartialEq)]
pub struct Settings {
    pub scripts: Vec<PathBuf>,
    pub context_limit: Option<u64>,
    pub allow_run: bool,
    pub poll: bool,
    pub idle_timeout: Option<Duration>,
    pub notifications: bool,
    pub bell_fallback: bool,
    /// Event kinds whose notifications are muted.
    pub muted_events: BTreeSet<EventKind>,
    pub run_timeout: Duration,
    /// Play `sound(...)` actions.
    pub sound: bool,
    pub sound_volume: f32,
    pub quiet_hours: Option<QuietHours>,
    pub sound_repeat_gap: Duration,
    /// Remote hosts to follow (the config's, then the flags').
    pub remote_hosts: Vec<String>,
    pub remote_bin: String,
}

impl Config {
    /// Flags win over the file; `--script` adds to the configured scripts.
    pub fn merge(&self, flags: &Overrides) -> Settings {
        let mut scripts = self.scripts.clone();
        scripts.extend(flags.scripts.iter().cloned());
        Settings {
            scripts,
            context_limit: flags.context_limit.or(self.context_limit),
            allow_run: flags.allow_run.unwrap_or(self.allow_run),
            poll: flags.poll.unwrap_or(self.poll),
            idle_timeout: flags.idle_timeout.or(self.idle_timeout),
            notifications: flags.notifications.unwrap_or(self.notifications.enabled),
            bell_fallback: self.notifications.bell_fallback,
            muted_events: self
                .notifications
                .events
                .iter()
                .filter(|(_, on)| !**on)
                .map(|(kind, _)| *kind)
                .collect(),
            run_timeout: self.run.timeout,
            sound: flags.sound.unwrap_or(self.sound.enabled),
            sound_volume: self.sound.volume,
            quiet_hours: self.sound.quiet_hours,
            sound_repeat_gap: self.sound.repeat_gap,
            remote_hosts: self
                .remote
                .hosts
                .iter()
                .chain(&flags.remote_hosts)
                .cloned()
                .collect(),
            remote_bin: flags
                .remote_bin
                .clone()
                .unwrap_or_else(|| self.remote.bin.clone()),
        }
    }
}

impl Default for Settings {
    fn default() -> Settings {
        Config::default().merge(&Overrides::default())
    }
}

/// One `key = value` line per setting, in the file's syntax, for `familiar doctor`.
impl fmt::Display for Settings {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let scripts: Vec<String> = self
            .scripts
            .iter()
            .map(|path| format!("{:?}", path.display().to_string()))
            .collect();
        writeln!(f, "scripts = [{}]", scripts.join(", "))?;
        match self.context_limit {
            Some(limit) => writeln!(f, "context_limit = {limit}")?,
            None => writeln!(f, "context_limit = (detected per model)")?,
        }
        writeln!(f, "allow_run = {}", self.allow_run)?;
        writeln!(f, "poll = {}", self.poll)?;
        match self.idle_timeout {
            Some(timeout) => writeln!(
                f,
                "idle_timeout = \"{}\"",
                humantime::format_duration(timeout)
            )?,
            None => writeln!(f, "idle_timeout = (tailer default)")?,
        }
        writeln!(f, "notifications.enabled = {}", self.notifications)?;
        writeln!(f, "notifications.bell_fallback = {}", self.bell_fallback)?;
        let muted: Vec<&str> = self.muted_events.iter().map(|kind| kind.as_str()).collect();
        writeln!(f, "notifications muted for = [{}]", muted.join(", "))?;
        writeln!(
            f,
            "run.timeout = \"{}\"",
            humantime::format_duration(self.run_timeout)
        )?;
        writeln!(f, "sound.enabled = {}", self.sound)?;
        writeln!(f, "sound.volume = {}", self.sound_volume)?;
        match self.quiet_hours {
            Some(hours) => writeln!(f, "sound.quiet_hours = \"{hours}\"")?,
            None => writeln!(f, "sound.quiet_hours = (none)")?,
        }
        writeln!(
            f,
            "sound.repeat_gap = \"{}\"",
            humantime::format_duration(self.sound_repeat_gap)
        )?;
        let hosts: Vec<String> = self
            .remote_hosts
            .iter()
            .map(|host| format!("{host:?}"))
            .collect();
        writeln!(f, "remote.hosts = [{}]", hosts.join(", "))?;
        write!(f, "remote.bin = {:?}", self.remote_bin)
    }
}

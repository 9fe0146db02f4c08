//! The settings every part reads, merged once: the config file (`familiar-config`), then the
//! flags a command was given, over the defaults; and the sinks outside the game built from
//! them (`familiar-sink`, `familiar-audio`).

use std::io::IsTerminal as _;
use std::path::PathBuf;

use familiar_config::{Loaded, Overrides, Settings};
use familiar_sink::{
    BellSink, ChildOutput, Fanout, NdjsonSink, NotifyOptions, NotifySink, RunPolicy, RunSink,
};

use crate::Error;

/// Load the config file (`FAMILIAR_CONFIG` or `~/.config/familiar/config.toml`); an invalid
/// file is an error naming its line, never a silent default.
fn load_config() -> Result<Loaded, Error> {
    familiar_config::load().map_err(Error::Config)
}

/// The one merge every command reads its settings from: the config file, then the flags it
/// was given (`overrides`: only what was given), over the defaults (`Config::merge`).
pub fn settings(overrides: &Overrides) -> Result<Settings, Error> {
    Ok(load_config()?.config.merge(overrides))
}

/// The sound sink for these settings (`None` when muted): one for the run, shared by the
/// scripts' `sound(...)` actions (through [`sinks`]) and the game's sounds (the `Stage`
/// chooses them: `familiar_audio::GameCues`), so both play through one connection, volume,
/// quiet hours and repeat gap, and a game sound stays quiet after a script's sound.
pub fn audio(settings: &Settings) -> Option<familiar_audio::SharedAudio> {
    settings.sound.then(|| {
        familiar_audio::SharedAudio::new(familiar_audio::AudioOptions {
            volume: settings.sound_volume,
            quiet_hours: settings.quiet_hours,
            repeat_gap: settings.sound_repeat_gap,
            script_dirs: familiar_audio::ScriptDirs::from_paths(
                settings.scripts.iter().map(PathBuf::as_path),
            ),
            socket: None,
        })
    })
}

/// The sinks outside the game for these settings: desktop notifications (unless off, with the
/// bell as fallback when configured), sounds (`audio`, from [`audio`]: none when muted),
/// `run` actions (refused unless allowed), and, when `ndjson_stdout`, every action as an
/// NDJSON line on stdout.
pub fn sinks(
    settings: &Settings,
    ndjson_stdout: bool,
    audio: Option<familiar_audio::SharedAudio>,
) -> Fanout {
    let mut fanout = Fanout::new();
    if settings.notifications {
        let bell: Option<Box<dyn std::io::Write + Send>> = (settings.bell_fallback
            && std::io::stderr().is_terminal())
        .then(|| Box::new(std::io::stderr()) as Box<dyn std::io::Write + Send>);
        fanout.push(NotifySink::new(NotifyOptions {
            muted_events: settings.muted_events.iter().copied().collect(),
            fallback_bell: bell,
            ..NotifyOptions::default()
        }));
    } else if settings.bell_fallback && std::io::stderr().is_terminal() {
        // Notifications off but the bell wanted: ring it for notify actions.
        fanout.push(BellSink::stderr());
    }
    if let Some(audio) = audio {
        fanout.push(audio);
    }
    fanout.push(RunSink::new(RunPolicy {
        allowed: settings.allow_run,
        timeout: settings.run_timeout,
        output: ChildOutput::Stderr,
        ..RunPolicy::default()
    }));
    if ndjson_stdout {
        fanout.push(NdjsonSink::stdout());
    }
    fanout
}

/// How the session model reads records and runs its timers under `settings`: `normalizer`
/// (the reading flags) with the window from the config file or flag, the idle time from
/// `idle_timeout`, and the quiet-turn time `quiet_after` (`watch --quiet-after`; default 5 s).
pub fn model_config(
    settings: &Settings,
    mut normalizer: familiar_transcript::NormalizerConfig,
    quiet_after: Option<std::time::Duration>,
) -> familiar_session::ModelConfig {
    let defaults = familiar_session::Timers::default();
    normalizer.context_limit = normalizer.context_limit.or(settings.context_limit);
    familiar_session::ModelConfig {
        normalizer,
        timers: familiar_session::Timers {
            idle_after: settings.idle_timeout.unwrap_or(defaults.idle_after),
            quiet_after: quiet_after.unwrap_or(defaults.quiet_after),
        },
        // The source says (a recorded source sets it).
        recorded_clock: false,
        latest_record_time: Some(latest_time()),
    }
}

/// The model the user configured for Claude Code (`model` in its `settings.json`, else
/// `ANTHROPIC_MODEL`): a source of a session's context window when its records do not say
/// (`familiar_transcript::models::context_window`). Read for the user's own sessions only
/// (`watch`, `sessions`, the status line), never for a transcript given by hand.
pub fn configured_model() -> Option<String> {
    let from_settings = familiar_tail::config_dir().ok().and_then(|dir| {
        let text = std::fs::read_to_string(dir.join("settings.json")).ok()?;
        let value: serde_json::Value = serde_json::from_str(&text).ok()?;
        value.get("model")?.as_str().map(str::to_owned)
    });
    from_settings.or_else(|| std::env::var("ANTHROPIC_MODEL").ok())
}

/// The latest time a record or an event may tell the clocks: a day from now. Later is a
/// record's mistake (the year 9999, a machine's wrong clock), which would otherwise hold the
/// session timers and the scripts' until then.
pub fn latest_time() -> std::time::SystemTime {
    std::time::SystemTime::now() + std::time::Duration::from_secs(86_400)
}

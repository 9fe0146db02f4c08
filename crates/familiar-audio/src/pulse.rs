//! The sound server end: find PulseAudio's socket (PipeWire's pulse layer serves the same
//! one), connect with the pure-Rust `pulseaudio` protocol client, and play one sound as one
//! playback stream. The server mixes concurrent streams (overlapping cues) and resamples each
//! to the device, so samples go out at their own rate and channel count.

use std::ffi::CString;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use pulseaudio::protocol::{self, stream::BufferAttr};
use pulseaudio::{AsPlaybackSource as _, Client, ClientError};

/// Length of PulseAudio's authentication cookie.
const COOKIE_LENGTH: usize = 256;

/// How long the handshake may take before the server counts as not answering.
const HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(2);

/// Why a sound could not reach the speakers. Each says what is missing.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ServerError {
    #[error("no sound server: {0}")]
    NoServer(String),
    #[error("no audio output device: the sound server at {0} has no sink to play to")]
    NoDevice(String),
    #[error("the sound server refused to play: {0}")]
    Refused(String),
    #[error("lost the connection to the sound server ({0})")]
    Lost(String),
}

/// Where the server listens: `PULSE_SERVER` (`unix:/path` or a path), else
/// `$PULSE_RUNTIME_PATH/native`, else `$XDG_RUNTIME_DIR/pulse/native`.
pub fn socket_from_env() -> Result<PathBuf, ServerError> {
    let var = |name: &str| std::env::var_os(name).filter(|value| !value.is_empty());
    let path = if let Some(server) = var("PULSE_SERVER") {
        let server = server.to_string_lossy().into_owned();
        match server.strip_prefix("unix:") {
            Some(path) => PathBuf::from(path),
            None if server.starts_with('/') => PathBuf::from(server),
            None => {
                return Err(ServerError::NoServer(format!(
                    "PULSE_SERVER={server:?} is not a local unix socket (only those are supported)"
                )));
            }
        }
    } else if let Some(dir) = var("PULSE_RUNTIME_PATH") {
        PathBuf::from(dir).join("native")
    } else if let Some(dir) = var("XDG_RUNTIME_DIR") {
        PathBuf::from(dir).join("pulse/native")
    } else {
        return Err(ServerError::NoServer(
            "XDG_RUNTIME_DIR is unset, so there is no PulseAudio or PipeWire socket to look for"
                .into(),
        ));
    };
    if path.exists() {
        Ok(path)
    } else {
        Err(ServerError::NoServer(format!(
            "{} does not exist (is PulseAudio, or PipeWire with pipewire-pulse, running?)",
            path.display()
        )))
    }
}

/// Connect and authenticate (the cookie from `PULSE_COOKIE` or `~/.config/pulse/cookie`).
pub fn connect(socket: &Path) -> Result<Client, ServerError> {
    let no_server = |err: &dyn std::fmt::Display| {
        ServerError::NoServer(format!("cannot connect to {}: {err}", socket.display()))
    };
    let stream = std::os::unix::net::UnixStream::connect(socket).map_err(|err| no_server(&err))?;
    // The handshake is blocking: a hung server must not hang the sound worker forever.
    stream
        .set_read_timeout(Some(HANDSHAKE_TIMEOUT))
        .map_err(|err| no_server(&err))?;
    // The server reads exactly 256 cookie bytes and drops a client that sends fewer; libpulse
    // sends zeros when there is no cookie file (the server may allow anonymous clients).
    let cookie = pulseaudio::cookie_path_from_env()
        .and_then(|path| std::fs::read(path).ok())
        .filter(|cookie| cookie.len() == COOKIE_LENGTH)
        .unwrap_or_else(|| vec![0; COOKIE_LENGTH]);
    Client::new_unix(c"Familiar", stream, Some(cookie)).map_err(|err| no_server(&describe(&err)))
}

/// What the server is and where it plays, for `familiar doctor`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServerInfo {
    pub socket: PathBuf,
    /// "pulseaudio 16.1", "PulseAudio (on PipeWire 1.0.5) 15.0.0".
    pub server: String,
    pub default_sink: Option<String>,
}

/// Find the server from the environment and ask it about itself ([`probe_at`]).
pub fn probe() -> Result<ServerInfo, ServerError> {
    probe_at(&socket_from_env()?)
}

/// Connect and ask the server about itself; `NoDevice` when it has no default sink.
pub fn probe_at(socket: &Path) -> Result<ServerInfo, ServerError> {
    let client = connect(socket)?;
    let info = futures::executor::block_on(client.server_info())
        .map_err(|err| ServerError::Lost(describe(&err)))?;
    let text = |value: Option<CString>| value.map(|v| v.to_string_lossy().into_owned());
    let server = format!(
        "{} {}",
        text(info.server_name).unwrap_or_else(|| "unknown server".into()),
        text(info.server_version).unwrap_or_default()
    )
    .trim()
    .to_owned();
    let default_sink = text(info.default_sink_name).filter(|name| !name.is_empty());
    if default_sink.is_none() {
        return Err(ServerError::NoDevice(socket.display().to_string()));
    }
    Ok(ServerInfo {
        socket: socket.to_owned(),
        server,
        default_sink,
    })
}

/// Samples ready to play: interleaved f32 at `rate`, 1 or 2 channels.
#[derive(Debug, Clone)]
pub struct Clip {
    pub samples: Arc<[f32]>,
    pub channels: u8,
    pub rate: u32,
}

/// Play `clip` at `gain` on the default sink; resolves when the server has played it all.
/// `started` runs once the stream exists and its data is on the way.
pub async fn play(
    client: Client,
    clip: Clip,
    gain: f32,
    socket: String,
    started: impl FnOnce(),
) -> Result<(), ServerError> {
    let mut bytes = Vec::with_capacity(clip.samples.len() * 4);
    for sample in clip.samples.iter() {
        bytes.extend_from_slice(&(sample * gain).to_le_bytes());
    }
    let mut sent = 0;
    let source = move |buffer: &mut [u8]| {
        let n = buffer.len().min(bytes.len() - sent);
        buffer[..n].copy_from_slice(&bytes[sent..sent + n]);
        sent += n;
        n
    };
    let channel_map = if clip.channels == 1 {
        protocol::ChannelMap::mono()
    } else {
        protocol::ChannelMap::stereo()
    };
    let mut props = protocol::Props::new();
    props.set(protocol::Prop::MediaName, c"Familiar cue");
    // "event" lets the desktop treat it as a notification sound (own volume, ducking rules).
    props.set(protocol::Prop::MediaRole, c"event");
    let params = protocol::PlaybackStreamParams {
        sample_spec: protocol::SampleSpec {
            format: protocol::SampleFormat::Float32Le,
            channels: clip.channels,
            sample_rate: clip.rate,
        },
        channel_map,
        sink_name: Some(protocol::DEFAULT_SINK.to_owned()),
        buffer_attr: BufferAttr {
            // Start as soon as the first 10 ms are in, instead of after the server's default
            // prebuffer (about 2 s, longer than most cues).
            pre_buffering: clip.rate * u32::from(clip.channels) * 4 / 100,
            ..BufferAttr::default()
        },
        props,
        // Streams with the same sync id play in lockstep, and the server refuses a second
        // one unless both are corked: give each its own, as libpulse does.
        sync_id: next_sync_id(),
        ..Default::default()
    };
    let stream = client
        .create_playback_stream(params, source.as_playback_source())
        .await
        .map_err(|err| match err {
            ClientError::ServerError(protocol::PulseError::NoEntity) => {
                ServerError::NoDevice(socket.clone())
            }
            ClientError::ServerError(code) => ServerError::Refused(format!("{code:?}")),
            other => ServerError::Lost(describe(&other)),
        })?;
    started();
    stream
        .play_all()
        .await
        .map_err(|err| ServerError::Lost(describe(&err)))
}

fn next_sync_id() -> u32 {
    static NEXT: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(1);
    NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
}

/// The client error with its causes on one line (its own Display hides them).
fn describe(err: &ClientError) -> String {
    let mut text = err.to_string();
    let mut source = std::error::Error::source(err);
    while let Some(cause) = source {
        text.push_str(": ");
        text.push_str(&cause.to_string());
        source = cause.source();
    }
    text
}

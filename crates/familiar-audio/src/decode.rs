//! Users' sound files (wav, ogg/vorbis, flac) decoded with symphonia into [`Pcm`]: interleaved
//! `f32` at the file's own rate, mono or stereo (more channels are folded to stereo). The
//! sound server resamples, so nothing is converted here beyond that.

use std::fs::File;
use std::path::Path;

use symphonia::core::audio::SampleBuffer;
use symphonia::core::codecs::{CODEC_TYPE_NULL, DecoderOptions};
use symphonia::core::errors::Error as SymphoniaError;
use symphonia::core::formats::FormatOptions;
use symphonia::core::io::MediaSourceStream;
use symphonia::core::meta::MetadataOptions;
use symphonia::core::probe::Hint;

/// Decoded audio, ready for a playback stream.
#[derive(Debug, Clone, PartialEq)]
pub struct Pcm {
    /// Interleaved samples in -1..1.
    pub samples: Vec<f32>,
    /// 1 or 2.
    pub channels: u8,
    pub rate: u32,
}

/// Longest user sound decoded: a cue, not a playlist.
pub const MAX_SECONDS: u32 = 30;

/// Why a file cannot be played. Causes are part of the message, not `source`s: each is
/// printed once however the error is shown.
#[derive(Debug, thiserror::Error)]
pub enum DecodeError {
    #[error("cannot open: {0}")]
    Open(std::io::Error),
    #[error("not a wav, ogg/vorbis or flac file this can read: {0}")]
    Format(SymphoniaError),
    #[error("no audio track")]
    NoTrack,
    #[error("unknown sample rate or channel layout")]
    NoSpec,
    #[error("longer than {MAX_SECONDS} s; sounds are short cues")]
    TooLong,
    #[error("no audio in it")]
    Empty,
}

/// Decode a whole file.
pub fn decode(path: &Path) -> Result<Pcm, DecodeError> {
    let file = File::open(path).map_err(DecodeError::Open)?;
    let stream = MediaSourceStream::new(Box::new(file), Default::default());
    let mut hint = Hint::new();
    if let Some(ext) = path.extension().and_then(|ext| ext.to_str()) {
        hint.with_extension(ext);
    }
    let probed = symphonia::default::get_probe()
        .format(
            &hint,
            stream,
            &FormatOptions::default(),
            &MetadataOptions::default(),
        )
        .map_err(DecodeError::Format)?;
    let mut format = probed.format;
    let track = format
        .tracks()
        .iter()
        .find(|track| track.codec_params.codec != CODEC_TYPE_NULL)
        .ok_or(DecodeError::NoTrack)?;
    let track_id = track.id;
    let mut decoder = symphonia::default::get_codecs()
        .make(&track.codec_params, &DecoderOptions::default())
        .map_err(DecodeError::Format)?;
    let mut samples = Vec::new();
    let mut spec = None;
    let mut buffer: Option<SampleBuffer<f32>> = None;
    loop {
        let packet = match format.next_packet() {
            Ok(packet) => packet,
            // The normal end of a file.
            Err(SymphoniaError::IoError(err))
                if err.kind() == std::io::ErrorKind::UnexpectedEof =>
            {
                break;
            }
            Err(err) => return Err(DecodeError::Format(err)),
        };
        if packet.track_id() != track_id {
            continue;
        }
        let decoded = match decoder.decode(&packet) {
            Ok(decoded) => decoded,
            // A damaged packet: skip it, as players do.
            Err(SymphoniaError::DecodeError(_)) => continue,
            Err(err) => return Err(DecodeError::Format(err)),
        };
        let this_spec = *decoded.spec();
        let buffer =
            buffer.get_or_insert_with(|| SampleBuffer::new(decoded.capacity() as u64, this_spec));
        if buffer.capacity() < decoded.capacity() * this_spec.channels.count() {
            *buffer = SampleBuffer::new(decoded.capacity() as u64, this_spec);
        }
        buffer.copy_interleaved_ref(decoded);
        spec.get_or_insert(this_spec);
        samples.extend_from_slice(buffer.samples());
        let limit = MAX_SECONDS as usize * this_spec.rate as usize * this_spec.channels.count();
        if samples.len() > limit {
            return Err(DecodeError::TooLong);
        }
    }
    let spec = spec.ok_or(DecodeError::Empty)?;
    let channels = spec.channels.count();
    if channels == 0 || spec.rate == 0 {
        return Err(DecodeError::NoSpec);
    }
    if samples.is_empty() {
        return Err(DecodeError::Empty);
    }
    Ok(fold_to_stereo(samples, channels, spec.rate))
}

/// Keep mono and stereo; fold more channels into two (odd channels left, even right).
fn fold_to_stereo(samples: Vec<f32>, channels: usize, rate: u32) -> Pcm {
    if channels <= 2 {
        return Pcm {
            samples,
            channels: channels as u8,
            rate,
        };
    }
    let mut folded = Vec::with_capacity(samples.len() / channels * 2);
    for frame in samples.chunks_exact(channels) {
        let (mut left, mut right) = (0.0, 0.0);
        for (i, sample) in frame.iter().enumerate() {
            if i % 2 == 0 {
                left += sample;
            } else {
                right += sample;
            }
        }
        let scale = 2.0 / channels as f32;
        folded.push(left * scale);
        folded.push(right * scale);
    }
    Pcm {
        samples: folded,
        channels: 2,
        rate,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A 16-bit PCM wav file, written by hand (the format is a 44-byte header).
    pub(crate) fn wav(samples: &[i16], channels: u16, rate: u32) -> Vec<u8> {
        let data_len = (samples.len() * 2) as u32;
        let mut out = Vec::new();
        out.extend_from_slice(b"RIFF");
        out.extend_from_slice(&(36 + data_len).to_le_bytes());
        out.extend_from_slice(b"WAVEfmt ");
        out.extend_from_slice(&16u32.to_le_bytes());
        out.extend_from_slice(&1u16.to_le_bytes());
        out.extend_from_slice(&channels.to_le_bytes());
        out.extend_from_slice(&rate.to_le_bytes());
        out.extend_from_slice(&(rate * u32::from(channels) * 2).to_le_bytes());
        out.extend_from_slice(&(channels * 2).to_le_bytes());
        out.extend_from_slice(&16u16.to_le_bytes());
        out.extend_from_slice(b"data");
        out.extend_from_slice(&data_len.to_le_bytes());
        for sample in samples {
            out.extend_from_slice(&sample.to_le_bytes());
        }
        out
    }

    #[test]
    fn a_wav_file_decodes_to_its_samples() {
        let dir = tempfile::tempdir().expect("dir");
        let path = dir.path().join("two.wav");
        let samples: Vec<i16> = (0..2_000)
            .map(|i| if i % 2 == 0 { 16_384 } else { -16_384 })
            .collect();
        std::fs::write(&path, wav(&samples, 2, 22_050)).expect("write");
        let pcm = decode(&path).expect("decodes");
        assert_eq!(
            (pcm.channels, pcm.rate, pcm.samples.len()),
            (2, 22_050, 2_000)
        );
        assert!((pcm.samples[0] - 0.5).abs() < 1e-3 && (pcm.samples[1] + 0.5).abs() < 1e-3);
    }

    #[test]
    fn a_broken_file_is_an_error_not_a_panic() {
        let dir = tempfile::tempdir().expect("dir");
        let path = dir.path().join("broken.ogg");
        std::fs::write(&path, b"OggS but not really an ogg file at all").expect("write");
        let err = decode(&path).expect_err("broken");
        assert!(matches!(err, DecodeError::Format(_)), "{err}");
        let missing = decode(&dir.path().join("none.flac")).expect_err("missing");
        assert!(matches!(missing, DecodeError::Open(_)), "{missing}");
    }

    #[test]
    fn six_channels_fold_to_stereo() {
        let pcm = fold_to_stereo(vec![0.3; 12], 6, 48_000);
        assert_eq!((pcm.channels, pcm.samples.len()), (2, 4));
        assert!((pcm.samples[0] - 0.3).abs() < 1e-6);
    }
}

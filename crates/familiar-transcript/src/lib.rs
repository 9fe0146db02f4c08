//! Transcript normalizer (being written).

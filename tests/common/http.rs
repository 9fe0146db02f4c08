//! The HTTP/1.1 request side the mock APIs share (`tests/real_claude/mock.rs`,
//! `tests/real_codex/mock.rs`): one POST read off a connection, its JSON body parsed. Each mock
//! writes its own answers (Anthropic Messages or OpenAI Responses streams).

use std::io::{BufRead as _, BufReader, Read as _, Write as _};
use std::net::TcpStream;
use std::time::Duration;

use serde_json::Value;

/// A request to `path`: its JSON body (`Null` when it is not JSON), and the stream to answer
/// on. Any other method or path is answered 404 here, and `None` is returned.
pub fn read_post(stream: TcpStream, path: &str) -> std::io::Result<Option<(Value, TcpStream)>> {
    stream.set_nonblocking(false)?;
    stream.set_read_timeout(Some(Duration::from_secs(30)))?;
    let mut reader = BufReader::new(stream.try_clone()?);
    let mut request_line = String::new();
    reader.read_line(&mut request_line)?;
    let mut length = 0_usize;
    loop {
        let mut header = String::new();
        if reader.read_line(&mut header)? == 0 || header.trim().is_empty() {
            break;
        }
        if let Some((name, value)) = header.split_once(':')
            && name.eq_ignore_ascii_case("content-length")
        {
            length = value.trim().parse().unwrap_or(0);
        }
    }
    let mut body = vec![0; length.min(64 << 20)];
    reader.read_exact(&mut body)?;
    let mut out = stream;
    if !request_line.starts_with("POST ") || !request_line.contains(path) {
        out.write_all(b"HTTP/1.1 404 Not Found\r\ncontent-length: 0\r\nconnection: close\r\n\r\n")?;
        return Ok(None);
    }
    Ok(Some((
        serde_json::from_slice(&body).unwrap_or(Value::Null),
        out,
    )))
}

//! What the mock APIs of the real-CLI tests share (`tests/real_*/mock.rs`): a listener on
//! 127.0.0.1 that hands each connection to the mock on a thread of its own ([`listen`]), and
//! one POST read off a connection, its JSON body parsed ([`read_post`]). Each mock writes its
//! own answers (Anthropic Messages, OpenAI Responses or Chat Completions, Gemini streams).

use std::io::{BufRead as _, BufReader, Read as _, Write as _};
use std::net::{TcpListener, TcpStream};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

/// A mock's listener: where it listens, how many connections it took, and the flag that
/// stops it (set on drop).
pub struct Listening {
    /// `http://127.0.0.1:PORT`.
    pub base: String,
    pub requests: Arc<AtomicUsize>,
    stop: Arc<AtomicBool>,
}

impl Drop for Listening {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
    }
}

/// Listen on a free port of 127.0.0.1 and give each connection, with its number (from 1), to
/// `serve` on a thread of its own, until dropped, `lifetime` passes or `max_requests`
/// connections were taken (a CLI retrying forever cannot keep a test running). A CLI that
/// hangs up mid-answer is not the mock's failure: `serve`'s error is dropped.
pub fn listen(
    max_requests: usize,
    lifetime: Duration,
    serve: impl Fn(TcpStream, u64) -> std::io::Result<()> + Send + Sync + 'static,
) -> Listening {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind 127.0.0.1");
    listener
        .set_nonblocking(true)
        .expect("nonblocking listener");
    let base = format!("http://{}", listener.local_addr().expect("local addr"));
    let stop = Arc::new(AtomicBool::new(false));
    let requests = Arc::new(AtomicUsize::new(0));
    let (stop_flag, count) = (Arc::clone(&stop), Arc::clone(&requests));
    let serve = Arc::new(serve);
    std::thread::spawn(move || {
        let started = Instant::now();
        while !stop_flag.load(Ordering::SeqCst) && started.elapsed() < lifetime {
            match listener.accept() {
                Ok((stream, _)) => {
                    let number = count.fetch_add(1, Ordering::SeqCst) + 1;
                    if number > max_requests {
                        continue;
                    }
                    let serve = Arc::clone(&serve);
                    std::thread::spawn(move || {
                        let _ = serve(stream, number as u64);
                    });
                }
                Err(_) => std::thread::sleep(Duration::from_millis(10)),
            }
        }
    });
    Listening {
        base,
        requests,
        stop,
    }
}

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

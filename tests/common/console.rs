//! A plain HTTP/1.1 client for the venue console over std sockets (plain
//! or rustls), and an SSE reader that hands each event to the test.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::sync::mpsc;
use std::time::{Duration, Instant};

/// An answer: status, head (status line and headers), body.
#[derive(Debug)]
pub struct Resp {
    /// Status code.
    pub status: u16,
    /// Status line and headers.
    pub head: String,
    /// Body (Content-Length bodies only).
    pub body: String,
}

impl Resp {
    /// The body as JSON.
    pub fn json(&self) -> serde_json::Value {
        serde_json::from_str(&self.body).unwrap_or_else(|e| panic!("{e}: {}", self.body))
    }

    /// A header's value (name case-insensitive).
    pub fn header(&self, name: &str) -> Option<String> {
        self.head.lines().find_map(|l| {
            let (k, v) = l.split_once(':')?;
            k.eq_ignore_ascii_case(name).then(|| v.trim().to_string())
        })
    }
}

/// The raw request text, `Connection: close`.
pub fn request_text(
    port: u16,
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
    body: &str,
) -> String {
    let mut req =
        format!("{method} {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nConnection: close\r\n");
    for (k, v) in headers {
        req.push_str(&format!("{k}: {v}\r\n"));
    }
    if !body.is_empty() || method == "POST" {
        req.push_str(&format!(
            "Content-Type: application/json\r\nContent-Length: {}\r\n",
            body.len()
        ));
    }
    req + "\r\n" + body
}

/// Parses a whole answer read until the server closed.
pub fn parse(raw: &[u8]) -> Resp {
    let text = String::from_utf8_lossy(raw);
    let (head, body) = text.split_once("\r\n\r\n").unwrap_or((&text, ""));
    let status = head
        .split_whitespace()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| panic!("no status in {text:?}"));
    Resp {
        status,
        head: head.to_string(),
        body: body.to_string(),
    }
}

/// One request on a new connection to 127.0.0.1:`port`.
pub fn http(port: u16, method: &str, path: &str, headers: &[(&str, &str)], body: &str) -> Resp {
    let mut s = TcpStream::connect(("127.0.0.1", port)).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    s.write_all(request_text(port, method, path, headers, body).as_bytes())
        .unwrap();
    let mut raw = Vec::new();
    let _ = s.read_to_end(&mut raw);
    parse(&raw)
}

/// `GET` with no extra headers.
pub fn get(port: u16, path: &str) -> Resp {
    http(port, "GET", path, &[], "")
}

/// One SSE event.
#[derive(Debug, Clone)]
pub struct Event {
    /// `id:`.
    pub id: u64,
    /// `event:`.
    pub event: String,
    /// `data:` as JSON.
    pub data: serde_json::Value,
}

/// An open `GET /api/events`, read by a thread.
pub struct Events {
    rx: mpsc::Receiver<Event>,
    /// The answer's head.
    pub head: String,
}

impl Events {
    /// Opens the stream with `headers`; panics unless it is a 200.
    pub fn open(port: u16, headers: &[(&str, &str)]) -> Events {
        let mut s = TcpStream::connect(("127.0.0.1", port)).unwrap();
        let mut req = format!("GET /api/events HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n");
        for (k, v) in headers {
            req.push_str(&format!("{k}: {v}\r\n"));
        }
        s.write_all((req + "\r\n").as_bytes()).unwrap();
        let mut r = BufReader::new(s);
        let mut head = String::new();
        loop {
            let mut line = String::new();
            r.read_line(&mut line).unwrap();
            if line == "\r\n" || line.is_empty() {
                break;
            }
            head.push_str(&line);
        }
        assert!(head.starts_with("HTTP/1.1 200"), "{head}");
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || read_chunks(r, tx));
        Events { rx, head }
    }

    /// The next event within `timeout`.
    pub fn next(&self, timeout: Duration) -> Option<Event> {
        self.rx.recv_timeout(timeout).ok()
    }

    /// Every event received so far and not yet taken.
    pub fn drain(&self) -> Vec<Event> {
        self.rx.try_iter().collect()
    }

    /// Events until one of type `event` satisfying `f` (returned with all
    /// before it); panics after `timeout`.
    pub fn until(&self, timeout: Duration, event: &str, f: impl Fn(&Event) -> bool) -> Vec<Event> {
        let end = Instant::now() + timeout;
        let mut seen = Vec::new();
        while let Some(e) = self.next(end.saturating_duration_since(Instant::now())) {
            let done = e.event == event && f(&e);
            seen.push(e);
            if done {
                return seen;
            }
        }
        let types: Vec<&str> = seen.iter().map(|e| e.event.as_str()).collect();
        panic!("no {event} event within {timeout:?}; saw {types:?}");
    }
}

/// Decodes the chunked body into SSE events until the stream ends.
fn read_chunks(mut r: BufReader<TcpStream>, tx: mpsc::Sender<Event>) {
    let mut buf = String::new();
    loop {
        let mut size = String::new();
        if r.read_line(&mut size).unwrap_or(0) == 0 {
            return;
        }
        let Ok(n) = usize::from_str_radix(size.trim(), 16) else {
            return;
        };
        if n == 0 {
            return;
        }
        let mut chunk = vec![0; n + 2];
        if r.read_exact(&mut chunk).is_err() {
            return;
        }
        buf.push_str(&String::from_utf8_lossy(&chunk[..n]));
        while let Some(at) = buf.find("\n\n") {
            let msg: String = buf.drain(..at + 2).collect();
            if let Some(e) = parse_event(&msg) {
                if tx.send(e).is_err() {
                    return;
                }
            }
        }
    }
}

fn parse_event(msg: &str) -> Option<Event> {
    let (mut id, mut event, mut data) = (None, None, None);
    for l in msg.lines() {
        if let Some(v) = l.strip_prefix("id: ") {
            id = v.parse().ok();
        } else if let Some(v) = l.strip_prefix("event: ") {
            event = Some(v.to_string());
        } else if let Some(v) = l.strip_prefix("data: ") {
            data = serde_json::from_str(v).ok();
        }
    }
    Some(Event {
        id: id?,
        event: event?,
        data: data?,
    })
}

/// A connection to the event stream with a 4 KiB receive buffer, the
/// request sent, nothing ever read: a client that has stalled.
pub fn stalled_stream(port: u16) -> TcpStream {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        let s = tokio::net::TcpSocket::new_v4().unwrap();
        s.set_recv_buffer_size(4096).unwrap();
        let mut c = s.connect(([127, 0, 0, 1], port).into()).await.unwrap();
        let req = format!("GET /api/events HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n\r\n");
        tokio::io::AsyncWriteExt::write_all(&mut c, req.as_bytes())
            .await
            .unwrap();
        c.into_std().unwrap()
    })
}

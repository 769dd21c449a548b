//! The metrics endpoint at `metrics.listen`: `GET /metrics` and
//! `GET /healthz`. A tiny HTTP/1.1 responder, one request per connection.

use super::endpoint::{
    connection_budget, open_files_limit, Acceptor, Closed, HttpStats, Server, METRICS_CONNECTIONS,
};
use super::{health, health_notes, render, MetricsSnapshot};
use std::sync::{Arc, Mutex};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::Semaphore;
use tokio_util::sync::CancellationToken;

/// Longest request head (request line and headers) the endpoint reads;
/// a longer one is answered `431`.
pub const MAX_REQUEST_HEAD: usize = 8 * 1024;
/// How long a client may take to send its request head before the
/// connection is closed without an answer.
pub const REQUEST_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(5);

/// What reading a request head gave.
#[derive(Debug, PartialEq, Eq)]
pub enum RequestHead {
    /// The head, up to and without the blank line.
    Complete(String),
    /// More than [`MAX_REQUEST_HEAD`] bytes without the blank line.
    TooLarge,
    /// The client closed, failed or was too slow before the head ended.
    Incomplete,
}

/// Reads until the blank line that ends an HTTP request head, however the
/// client splits its writes, at most `max` bytes.
pub async fn read_head<R: tokio::io::AsyncRead + Unpin>(r: &mut R, max: usize) -> RequestHead {
    let mut head = Vec::with_capacity(512);
    let mut buf = [0u8; 1024];
    loop {
        let n = match r.read(&mut buf).await {
            Ok(0) | Err(_) => return RequestHead::Incomplete,
            Ok(n) => n,
        };
        // Look for the end only in the part that can contain it.
        let from = head.len().saturating_sub(3);
        head.extend_from_slice(&buf[..n]);
        if let Some(i) = head[from..].windows(4).position(|w| w == b"\r\n\r\n") {
            let end = from + i;
            if end > max {
                return RequestHead::TooLarge;
            }
            return RequestHead::Complete(String::from_utf8_lossy(&head[..end]).into_owned());
        }
        if head.len() > max {
            return RequestHead::TooLarge;
        }
    }
}

/// Serves `/metrics` and `/healthz` until `shutdown`: at most
/// [`METRICS_CONNECTIONS`] connections at once (fewer under a low
/// descriptor limit, see [`connection_budget`]); one more is closed at once.
pub async fn serve(
    listener: TcpListener,
    snapshot: Arc<Mutex<MetricsSnapshot>>,
    shutdown: CancellationToken,
) {
    let stats = snapshot.lock().map(|g| g.http.clone()).unwrap_or_default();
    let (cap, _) = connection_budget(open_files_limit(), METRICS_CONNECTIONS, 0);
    let slots = Arc::new(Semaphore::new(cap));
    let mut acceptor = Acceptor::new(listener, Server::Metrics, stats.clone());
    loop {
        let (sock, peer) = tokio::select! {
            _ = shutdown.cancelled() => return,
            s = acceptor.accept() => s,
        };
        let Ok(slot) = slots.clone().try_acquire_owned() else {
            acceptor.refused(peer, cap);
            continue;
        };
        let (snapshot, stats) = (snapshot.clone(), stats.clone());
        tokio::spawn(async move {
            answer(sock, peer, &snapshot, &stats).await;
            drop(slot);
        });
    }
}

/// Reads one request head (within [`REQUEST_TIMEOUT`]) and answers it.
async fn answer(
    mut sock: TcpStream,
    peer: std::net::SocketAddr,
    snapshot: &Mutex<MetricsSnapshot>,
    stats: &HttpStats,
) {
    let head =
        match tokio::time::timeout(REQUEST_TIMEOUT, read_head(&mut sock, MAX_REQUEST_HEAD)).await {
            Ok(h) => h,
            Err(_) => {
                stats.closed(Server::Metrics, Closed::HeadTimedOut, peer);
                return;
            }
        };
    let (status, body) = match head {
        // Nothing to answer: the client is gone.
        RequestHead::Incomplete => return,
        RequestHead::TooLarge => (
            "431 Request Header Fields Too Large",
            format!("request head longer than {MAX_REQUEST_HEAD} bytes\n"),
        ),
        RequestHead::Complete(req) => respond(&req, snapshot),
    };
    let resp = format!(
        "HTTP/1.1 {status}\r\nContent-Type: text/plain; version=0.0.4\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
    let _ = sock.write_all(resp.as_bytes()).await;
    let _ = sock.shutdown().await;
}

/// The status line and body for one request head.
fn respond(req: &str, snapshot: &Mutex<MetricsSnapshot>) -> (&'static str, String) {
    let mut words = req.split_whitespace();
    let method = words.next().unwrap_or("");
    let path = words.next().unwrap_or("/");
    if method != "GET" {
        return ("405 Method Not Allowed", "only GET is served\n".to_string());
    }
    match path {
        "/metrics" => {
            // The lock is held only to clone a small snapshot.
            let s = snapshot.lock().map(|g| g.clone()).unwrap_or_default();
            ("200 OK", render(&s))
        }
        "/healthz" => {
            let s = snapshot.lock().map(|g| g.clone()).unwrap_or_default();
            match health(&s, crate::util::time::now_micros()) {
                Ok(()) => match health_notes(&s) {
                    None => ("200 OK", "ok\n".to_string()),
                    Some(note) => ("200 OK", format!("ok; {note}\n")),
                },
                Err(why) => ("503 Service Unavailable", format!("unhealthy: {why}\n")),
            }
        }
        _ => ("404 Not Found", "try /metrics or /healthz\n".to_string()),
    }
}

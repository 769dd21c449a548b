//! The loop against a scripted HTTP server on loopback (the console's own
//! server is tested with this client in tests/alerts_follow.rs).

use super::*;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

const TOKEN: &str = "a-token-of-20-chars!";

/// Reads a request head; returns it.
async fn head(s: &mut TcpStream) -> String {
    let mut buf = Vec::new();
    let mut b = [0u8; 1];
    while !buf.ends_with(b"\r\n\r\n") {
        assert_eq!(s.read(&mut b).await.unwrap(), 1, "request cut short");
        buf.push(b[0]);
    }
    String::from_utf8(buf).unwrap()
}

/// A server answering each connection with the next of `replies`
/// (a status line and body, written in small pieces); the request heads it saw.
async fn serve(
    replies: Vec<(&'static str, &'static str)>,
) -> (String, tokio::task::JoinHandle<Vec<String>>) {
    let l = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", l.local_addr().unwrap());
    let task = tokio::spawn(async move {
        let mut heads = Vec::new();
        let mut open = Vec::new();
        for (status, body) in replies {
            let (mut s, _) = l.accept().await.unwrap();
            heads.push(head(&mut s).await);
            let reply = format!("HTTP/1.1 {status}\r\ncontent-type: text/event-stream\r\nconnection: close\r\n\r\n{body}");
            for piece in reply.as_bytes().chunks(7) {
                s.write_all(piece).await.unwrap();
                s.flush().await.unwrap();
            }
            if status.starts_with("200") && body.ends_with("\n\n") {
                open.push(s); // kept open: the client decides when it is done
            }
        }
        heads
    });
    (url, task)
}

fn target(url: &str) -> Target {
    Target {
        url: format!("{url}/api/events"),
        token: Some(TOKEN.into()),
        roots: Vec::new(),
    }
}

#[tokio::test]
async fn events_arrive_with_the_bearer_token_across_a_reconnect() {
    let (url, server) = serve(vec![
        ("200 OK", "id: 1\nevent: alert\ndata: {\"a\":1}\n\n: bye\n"),
        ("503 Service Unavailable", ""),
        (
            "200 OK",
            "id: 2\nevent: state\ndata: {}\n\nid: 3\nevent: ack\ndata: {\"by\":\ndata: \"x\"}\n\n",
        ),
    ])
    .await;
    let mut f = Follower::new(target(&url)).unwrap();
    let mut got = Vec::new();
    f.run(|event, data| {
        got.push((event.to_string(), data.to_string()));
        event != "ack"
    })
    .await
    .unwrap();
    assert_eq!(
        got,
        [
            ("alert".to_string(), "{\"a\":1}".to_string()),
            ("state".into(), "{}".into()),
            ("ack".into(), "{\"by\":\n\"x\"}".into()),
        ]
    );
    let heads = server.await.unwrap();
    assert_eq!(
        heads.len(),
        3,
        "reconnected after the close and after the 503"
    );
    for h in &heads {
        assert!(h.starts_with("GET /api/events HTTP/1.1\r\n"), "{h}");
        assert!(
            h.to_ascii_lowercase().contains(&format!(
                "authorization: bearer {}",
                TOKEN.to_ascii_lowercase()
            )),
            "{h}"
        );
    }
}

#[tokio::test]
async fn a_refused_token_ends_the_command_with_what_to_do() {
    let (url, _server) = serve(vec![("401 Unauthorized", "unauthorized")]).await;
    let mut f = Follower::new(target(&url)).unwrap();
    let e = f.run(|_, _| true).await.unwrap_err().to_string();
    assert!(
        e.contains("refused the token") && e.contains("--token-file"),
        "{e}"
    );
    assert!(!e.contains(TOKEN), "the token is never shown: {e}");
}

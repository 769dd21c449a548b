//! The console's listener: accepts connections (TLS first when
//! configured), serves each with hyper's HTTP/1 server under the head
//! limits of [`crate::telemetry`]'s endpoint, and ends a connection when
//! its event stream is dropped or the gateway stops.

use super::routes::{handle, App, Conn};
use crate::telemetry::{MAX_REQUEST_HEAD, REQUEST_TIMEOUT};
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper_util::rt::{TokioIo, TokioTimer};
use std::convert::Infallible;
use std::sync::Arc;
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::Semaphore;
use tokio_rustls::TlsAcceptor;
use tokio_util::sync::CancellationToken;

/// Open connections at most, beyond the event streams: page loads, API
/// calls, and clients still sending their request head.
pub const SPARE_CONNECTIONS: usize = 64;

/// Serves the console on `listener` until `shutdown`.
pub async fn serve(
    listener: TcpListener,
    tls: Option<TlsAcceptor>,
    app: Arc<App>,
    max_clients: usize,
    shutdown: CancellationToken,
) {
    let slots = Arc::new(Semaphore::new(max_clients + SPARE_CONNECTIONS));
    let mut refused = crate::util::log_limit::LogLimiter::new(10_000_000);
    loop {
        let (sock, peer) = tokio::select! {
            _ = shutdown.cancelled() => return,
            r = listener.accept() => match r {
                Ok(s) => s,
                Err(e) => {
                    tracing::warn!(error = %e, "Console accept failed.");
                    tokio::time::sleep(std::time::Duration::from_millis(100)).await;
                    continue;
                }
            },
        };
        // Too many connections: close this one at once.
        let Ok(slot) = slots.clone().try_acquire_owned() else {
            if let Some(held_back) = refused.allow(crate::util::time::now_micros()) {
                tracing::warn!(%peer, held_back, "Console connection refused: too many open connections.");
            }
            continue;
        };
        let _ = sock.set_nodelay(true);
        let (tls, app, shutdown) = (tls.clone(), app.clone(), shutdown.clone());
        tokio::spawn(async move {
            connection(sock, peer, tls, app, shutdown).await;
            drop(slot);
        });
    }
}

/// One connection, over TLS when `tls` is set.
async fn connection(
    sock: TcpStream,
    peer: std::net::SocketAddr,
    tls: Option<TlsAcceptor>,
    app: Arc<App>,
    shutdown: CancellationToken,
) {
    let conn = Conn {
        peer,
        kick: CancellationToken::new(),
    };
    match tls {
        None => http(sock, app, conn, shutdown).await,
        Some(acceptor) => {
            match tokio::time::timeout(REQUEST_TIMEOUT, acceptor.accept(sock)).await {
                Ok(Ok(s)) => http(s, app, conn, shutdown).await,
                Ok(Err(e)) => tracing::debug!(%peer, error = %e, "Console TLS handshake failed."),
                Err(_) => tracing::debug!(%peer, "Console TLS handshake too slow."),
            }
        }
    }
}

/// HTTP/1 on `io`: request heads of at most [`MAX_REQUEST_HEAD`] bytes
/// (longer: 431), each within [`REQUEST_TIMEOUT`].
async fn http<I>(io: I, app: Arc<App>, conn: Conn, shutdown: CancellationToken)
where
    I: AsyncRead + AsyncWrite + Unpin + Send + 'static,
{
    let kick = conn.kick.clone();
    let service = service_fn(move |req| {
        let (app, conn) = (app.clone(), conn.clone());
        async move { Ok::<_, Infallible>(handle(&app, req, &conn).await) }
    });
    let served = http1::Builder::new()
        .timer(TokioTimer::new())
        .header_read_timeout(REQUEST_TIMEOUT)
        .max_buf_size(MAX_REQUEST_HEAD)
        .serve_connection(TokioIo::new(io), service);
    tokio::select! {
        _ = served => {}
        _ = kick.cancelled() => {}
        _ = shutdown.cancelled() => {}
    }
}

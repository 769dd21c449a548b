//! The console's listener: accepts connections (with a backoff when the
//! system refuses, see [`crate::telemetry::endpoint`]), gives each a slot
//! ([`Slots`]: a newcomer evicts the oldest connection still silent),
//! serves it with hyper's HTTP/1 server (TLS first when configured) under
//! the head limits of the metrics endpoint, and ends a connection when it
//! is evicted, its event stream is dropped or the gateway stops.

use super::routes::{handle, App, Conn};
use super::slots::{Handle, SharedSlots, Slot, Slots, PER_IP_CONNECTIONS};
use crate::telemetry::endpoint::{
    connection_budget, open_files_limit, Acceptor, Closed, Server, METRICS_CONNECTIONS,
};
use crate::telemetry::{HttpStats, MAX_REQUEST_HEAD, REQUEST_TIMEOUT};
use crate::util::time::now_micros;
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper_util::rt::{TokioIo, TokioTimer};
use std::convert::Infallible;
use std::sync::{Arc, Mutex};
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::net::{TcpListener, TcpStream};
use tokio_rustls::TlsAcceptor;
use tokio_util::sync::CancellationToken;

/// Connection slots at most, beyond the event streams: page loads, API
/// calls, and clients still sending their request head (see [`Slots`]).
/// Fewer under a low descriptor limit ([`connection_budget`]).
pub const SPARE_CONNECTIONS: usize = 64;

/// Serves the console on `listener` until `shutdown`, counting connection
/// trouble into `http`.
pub async fn serve(
    listener: TcpListener,
    tls: Option<TlsAcceptor>,
    app: Arc<App>,
    max_clients: usize,
    http: Arc<HttpStats>,
    shutdown: CancellationToken,
) {
    let (_, budget) = connection_budget(
        open_files_limit(),
        METRICS_CONNECTIONS,
        max_clients + SPARE_CONNECTIONS,
    );
    if budget < max_clients + SPARE_CONNECTIONS {
        tracing::warn!(budget, wanted = max_clients + SPARE_CONNECTIONS,
            "Console connections capped by the open-files limit; raise LimitNOFILE (the unit sets 8192).");
    }
    // Event streams leave their slot (they count against max_clients).
    let cap = budget.saturating_sub(max_clients).max(4);
    let slots: SharedSlots<Handle> = Arc::new(Mutex::new(Slots::new(cap, PER_IP_CONNECTIONS)));
    let mut acceptor = Acceptor::new(listener, Server::Console, http.clone());
    loop {
        let (sock, peer) = tokio::select! {
            _ = shutdown.cancelled() => return,
            s = acceptor.accept() => s,
        };
        let kick = CancellationToken::new();
        let admitted = match slots.lock() {
            Ok(mut s) => s.admit(peer.ip(), now_micros(), (kick.clone(), peer)),
            Err(_) => return,
        };
        let id = match admitted {
            Ok((id, evicted)) => {
                if let Some((old, old_peer)) = evicted {
                    old.cancel();
                    http.closed(Server::Console, Closed::Evicted, old_peer);
                }
                id
            }
            Err(_) => {
                acceptor.refused(peer, cap);
                continue;
            }
        };
        let _ = sock.set_nodelay(true);
        let conn = Conn {
            peer,
            kick,
            slot: Slot::new(id, slots.clone()),
        };
        let (tls, app, http, shutdown) = (tls.clone(), app.clone(), http.clone(), shutdown.clone());
        tokio::spawn(async move {
            let slot = conn.slot.clone();
            connection(sock, conn, tls, app, &http, shutdown).await;
            slot.release();
        });
    }
}

/// One connection, over TLS when `tls` is set.
async fn connection(
    sock: TcpStream,
    conn: Conn,
    tls: Option<TlsAcceptor>,
    app: Arc<App>,
    stats: &HttpStats,
    shutdown: CancellationToken,
) {
    let peer = conn.peer;
    match tls {
        None => http(sock, app, conn, stats, shutdown).await,
        Some(acceptor) => {
            let kick = conn.kick.clone();
            let handshake = tokio::select! {
                r = tokio::time::timeout(REQUEST_TIMEOUT, acceptor.accept(sock)) => r,
                _ = kick.cancelled() => return,
            };
            match handshake {
                Ok(Ok(s)) => http(s, app, conn, stats, shutdown).await,
                Ok(Err(e)) => tracing::debug!(%peer, error = %e, "Console TLS handshake failed."),
                Err(_) => stats.closed(Server::Console, Closed::HeadTimedOut, peer),
            }
        }
    }
}

/// HTTP/1 on `io`: request heads of at most [`MAX_REQUEST_HEAD`] bytes
/// (longer: 431), each within [`REQUEST_TIMEOUT`] from the connection's
/// start or its previous answer (hyper starts the timer before the first
/// byte; a silent connection is closed and counted).
async fn http<I>(io: I, app: Arc<App>, conn: Conn, stats: &HttpStats, shutdown: CancellationToken)
where
    I: AsyncRead + AsyncWrite + Unpin + Send + 'static,
{
    let (kick, peer) = (conn.kick.clone(), conn.peer);
    let service = service_fn(move |req| {
        let (app, conn) = (app.clone(), conn.clone());
        async move {
            conn.slot.busy();
            let r = handle(&app, req, &conn).await;
            conn.slot.waiting(now_micros());
            Ok::<_, Infallible>(r)
        }
    });
    let served = http1::Builder::new()
        .timer(TokioTimer::new())
        .header_read_timeout(REQUEST_TIMEOUT)
        .max_buf_size(MAX_REQUEST_HEAD)
        .serve_connection(TokioIo::new(io), service);
    tokio::select! {
        r = served => {
            if r.is_err_and(|e| e.is_timeout()) {
                stats.closed(Server::Console, Closed::HeadTimedOut, peer);
            }
        }
        _ = kick.cancelled() => {}
        _ = shutdown.cancelled() => {}
    }
}

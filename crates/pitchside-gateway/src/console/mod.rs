//! The venue console (SPEC §10): a page and a small JSON/SSE API served by
//! the gateway itself at `console.listen`, for the people who act on alerts
//! during a match.
//!
//! ```text
//!  pipeline task ── ConsoleFeed (alerts; device statuses once a second; never waits)
//!       ▲                 ▼
//!       │ Command      feed_task ──► Hub (state doc, event numbering, one bounded queue per stream)
//!       │ (ack, pause,    ▲                  │
//!       │  resume)        │ ack / health     ▼
//!       └──────────── HTTP handlers ◄── server (hyper HTTP/1, optional TLS, token)
//! ```
//!
//! Routes: `GET /`, `/app.js`, `/style.css` (the page, [`assets`]);
//! `GET /api/state` (the state doc, [`doc`]); `GET /api/events` (SSE:
//! `alert`, `fatigue`, `device`, `ack`, `health`, `state` every second);
//! `POST /api/alerts/{alert_id}/ack`; `POST /api/health/pause|resume`.
//! Parts: [`auth`] (token, allowed host names), [`tls`], [`routes`] (handlers and
//! limits), [`ack_body`], [`server`] (connections), [`slots`] (who holds a
//! connection slot), [`hub`], [`queue`] (one stream's bounded queue),
//! [`feed`], [`journal`] (acks in the input journal), [`url`].

pub mod ack_body;
pub mod assets;
pub mod auth;
pub mod doc;
pub mod feed;
pub mod hub;
pub mod journal;
pub mod queue;
pub mod routes;
pub mod server;
pub mod slots;
pub mod tls;
pub mod url;

pub use feed::{Command, ConsoleFeed, COMMAND_QUEUE};

use crate::config::Config;
use crate::sinks::alerts::message::Origin;
use crate::telemetry::{ConsoleStats, MetricsSnapshot};
use std::sync::{Arc, Mutex};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

/// Why the console cannot start.
#[derive(Debug, thiserror::Error)]
pub enum ConsoleError {
    /// The address cannot be listened on.
    #[error("console.listen {addr}: {source} (is another pitchside or web server using it? set console.listen = \"\" to turn the console off)")]
    Listen {
        /// Address.
        addr: String,
        /// OS error.
        source: std::io::Error,
    },
    /// The token file is missing, unreadable or too short.
    #[error(transparent)]
    Token(#[from] auth::TokenError),
    /// The certificate or key cannot be used.
    #[error(transparent)]
    Tls(#[from] tls::TlsError),
}

/// What the pipeline task gets from a running console.
#[derive(Debug)]
pub struct ConsoleLink {
    /// Where its alerts and device statuses go.
    pub feed: ConsoleFeed,
    /// What the console asks of it.
    pub commands: mpsc::Receiver<Command>,
}

/// Starts the console when `console.listen` is set: reads the token and the
/// certificate, binds, and spawns the server on `tracker`. Returns the link
/// for the pipeline task; the console's stats go into `snapshot`.
pub async fn start(
    config: &Config,
    snapshot: Arc<Mutex<MetricsSnapshot>>,
    tracker: &TaskTracker,
    shutdown: CancellationToken,
) -> Result<Option<ConsoleLink>, ConsoleError> {
    let c = &config.console;
    let Some(addr) = &c.listen else {
        return Ok(None);
    };
    let token = c.token_file.as_deref().map(auth::Token::read).transpose()?;
    let tls = c.tls.as_ref().map(tls::acceptor).transpose()?;
    let listener = tokio::net::TcpListener::bind(addr)
        .await
        .map_err(|source| ConsoleError::Listen {
            addr: addr.clone(),
            source,
        })?;
    let stats = Arc::new(ConsoleStats::default());
    let mut http = Arc::default();
    if let Ok(mut g) = snapshot.lock() {
        g.console = stats.clone();
        http = g.http.clone();
    }
    let origin = Origin {
        venue_id: config.venue.id.clone(),
        gateway_id: config.venue.gateway_id.clone(),
    };
    let doc = doc::Doc::new(origin, config.health.silent_after);
    let hub = Arc::new(Mutex::new(hub::Hub::new(
        doc,
        (c.max_clients, c.client_queue_bytes),
        stats.clone(),
        snapshot,
    )));
    let (feed, inbox) = feed::feed(stats.clone());
    let (commands_tx, commands) = mpsc::channel(COMMAND_QUEUE);
    let app = Arc::new(routes::App {
        hub: hub.clone(),
        commands: commands_tx,
        secure: tls.is_some(),
        token,
        stats,
        allowed_hosts: c.allowed_hosts.clone(),
        host_log: Mutex::new(crate::util::log_limit::LogLimiter::new(10_000_000)),
    });
    let scheme = if tls.is_some() { "https" } else { "http" };
    let auth = if app.token.is_some() {
        "token required"
    } else {
        "no token (this machine only)"
    };
    // The bound address: with port 0 the system picked the port.
    let addr = listener
        .local_addr()
        .map_or(addr.clone(), |a| a.to_string());
    tracing::info!(addr = %addr, auth, "Venue console at {scheme}://{addr}/");
    let max = c.max_clients;
    tracker.spawn(server::serve(listener, tls, app, max, http, shutdown));
    tracker.spawn(feed::feed_task(inbox, hub));
    Ok(Some(ConsoleLink { feed, commands }))
}

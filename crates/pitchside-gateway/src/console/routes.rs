//! The console's HTTP API: one function per route, the token checked first.
//! See the module docs of [`super`] for the list.

use super::ack_body::parse_ack;
use super::assets;
use super::auth::{host_allowed, Token, COOKIE_NAME};
use super::doc::ack_json;
use super::feed::Command;
use super::hub::SharedHub;
use super::slots::{Handle, Slot};
use super::url::{percent_decode, query_param};
use crate::telemetry::ConsoleStats;
use crate::util::time::now_micros;
use bytes::Bytes;
use http_body_util::{combinators::BoxBody, BodyExt, Full, Limited, StreamBody};
use hyper::body::{Frame, Incoming};
use hyper::header::{self, HeaderValue};
use hyper::{Method, Request, Response, StatusCode};
use serde_json::{json, Value};
use std::convert::Infallible;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::{mpsc, oneshot};
use tokio_util::sync::CancellationToken;

/// Longest request body read; a longer one is answered `413`.
pub const MAX_BODY: usize = 4 * 1024;
/// How long a client may take to send its body, and how long the pipeline
/// may take to answer a command.
pub const BODY_TIMEOUT: Duration = Duration::from_secs(5);

/// A response body: a whole one, or an event stream.
pub type Body = BoxBody<Bytes, Infallible>;

/// What every handler shares.
pub struct App {
    /// The console's state.
    pub hub: SharedHub,
    /// To the pipeline task.
    pub commands: mpsc::Sender<Command>,
    /// `None`: no token (loopback only).
    pub token: Option<Token>,
    /// Counters.
    pub stats: Arc<ConsoleStats>,
    /// Served over TLS (the cookie is `Secure`).
    pub secure: bool,
    /// Host names served without a token besides loopback ones
    /// (`console.allowed_hosts`, lower case).
    pub allowed_hosts: Vec<String>,
    /// One log line per 10 s for refused host names.
    pub host_log: std::sync::Mutex<crate::util::log_limit::LogLimiter>,
}

/// One connection: who, and how to end it.
#[derive(Clone)]
pub struct Conn {
    /// The client's address.
    pub peer: std::net::SocketAddr,
    /// Cancelled to close the connection (a dropped event stream, an eviction).
    pub kick: CancellationToken,
    /// Its connection slot, freed when it becomes an event stream.
    pub slot: Slot<Handle>,
}

/// Answers one request.
pub async fn handle(app: &App, req: Request<Incoming>, conn: &Conn) -> Response<Body> {
    ConsoleStats::inc(&app.stats.requests);
    let (method, path) = (req.method().clone(), req.uri().path().to_string());
    if app.token.is_none() {
        if let Err(host) = host_allowed(req.headers().get(header::HOST), &app.allowed_hosts) {
            return misdirected(app, &host, conn);
        }
    }
    if method == Method::GET && path == "/" {
        if let Some(t) = req.uri().query().and_then(|q| query_param(q, "token")) {
            return token_login(app, &t);
        }
    }
    if let Some(t) = &app.token {
        if !t.admits(req.headers()) {
            ConsoleStats::inc(&app.stats.unauthorized);
            return text(StatusCode::UNAUTHORIZED, "unauthorized");
        }
    }
    if method == Method::POST && cross_origin(&req) {
        return text(StatusCode::FORBIDDEN, "cross-origin request refused");
    }
    match (method, path.as_str()) {
        (Method::GET, "/") => asset(assets::INDEX_HTML, "text/html; charset=utf-8"),
        (Method::GET, "/app.js") => asset(assets::APP_JS, "text/javascript; charset=utf-8"),
        (Method::GET, "/style.css") => asset(assets::STYLE_CSS, "text/css; charset=utf-8"),
        (Method::GET, "/api/state") => {
            let state = app.hub.lock().map(|h| h.state(now_micros()));
            match state {
                Ok(s) => json_response(StatusCode::OK, &s),
                Err(_) => text(
                    StatusCode::INTERNAL_SERVER_ERROR,
                    "console state unavailable",
                ),
            }
        }
        (Method::GET, p) if p.starts_with("/api/players/") => player(app, p),
        (Method::GET, "/api/events") => events(app, conn),
        (Method::POST, "/api/health/pause") => health(app, true).await,
        (Method::POST, "/api/health/resume") => health(app, false).await,
        (Method::POST, p) if ack_target(p).is_some() => ack(app, req).await,
        (_, "/" | "/app.js" | "/style.css" | "/api/state" | "/api/events") => {
            text(StatusCode::METHOD_NOT_ALLOWED, "use GET")
        }
        (_, p) if p.starts_with("/api/") => text(StatusCode::NOT_FOUND, "no such API"),
        _ => text(StatusCode::NOT_FOUND, "not found; the console is at /"),
    }
}

/// `GET /api/players/{player_id}`: the player's load and last windows.
fn player(app: &App, path: &str) -> Response<Body> {
    let Some(id) = path
        .strip_prefix("/api/players/")
        .and_then(|id| id.parse::<i64>().ok())
    else {
        return text(
            StatusCode::NOT_FOUND,
            "no such player: /api/players/{player_id}",
        );
    };
    match app.hub.lock().map(|h| h.player(id)) {
        Ok(Some(v)) => json_response(StatusCode::OK, &v),
        Ok(None) => text(StatusCode::NOT_FOUND, "no load for this player yet"),
        Err(_) => text(
            StatusCode::INTERNAL_SERVER_ERROR,
            "console state unavailable",
        ),
    }
}

/// `421`: a request for a host name this console does not answer to (DNS
/// rebinding: a hostile page whose name now points at 127.0.0.1).
fn misdirected(app: &App, host: &str, conn: &Conn) -> Response<Body> {
    ConsoleStats::inc(&app.stats.bad_host);
    let allowed = app
        .host_log
        .lock()
        .ok()
        .and_then(|mut l| l.allow(now_micros()));
    if let Some(held_back) = allowed {
        tracing::warn!(peer = %conn.peer, host, held_back,
            "Console request for a host name it does not serve refused (421, counted in pitchside_console_bad_host_total).");
    }
    text(
        StatusCode::MISDIRECTED_REQUEST,
        &format!(
            "Host {host:?} is not a name of this console (loopback names only, without a token); \
             if operators reach the console by that name, add it to console.allowed_hosts, \
             or set console.token_file"
        ),
    )
}

/// `GET /?token=…`: a right token sets the cookie and sends the browser to
/// `/` (so the token leaves the address bar); a wrong one is a 401.
fn token_login(app: &App, given: &str) -> Response<Body> {
    let Some(t) = &app.token else {
        return redirect_home(None);
    };
    if !t.matches(given.as_bytes()) {
        ConsoleStats::inc(&app.stats.unauthorized);
        return text(StatusCode::UNAUTHORIZED, "unauthorized");
    }
    let secure = if app.secure { "; Secure" } else { "" };
    let cookie = format!(
        "{COOKIE_NAME}={}; Path=/; HttpOnly; SameSite=Strict{secure}",
        t.expose()
    );
    redirect_home(Some(cookie))
}

fn redirect_home(cookie: Option<String>) -> Response<Body> {
    let mut r = text(StatusCode::SEE_OTHER, "");
    r.headers_mut()
        .insert(header::LOCATION, HeaderValue::from_static("/"));
    if let Some(c) = cookie.and_then(|c| HeaderValue::from_str(&c).ok()) {
        r.headers_mut().insert(header::SET_COOKIE, c);
    }
    r
}

/// A POST whose `Origin` is not this server (a page elsewhere posting to
/// the console through the operator's browser).
fn cross_origin(req: &Request<Incoming>) -> bool {
    let Some(origin) = req.headers().get(header::ORIGIN) else {
        return false;
    };
    let host = req.headers().get(header::HOST).map(|h| h.as_bytes());
    let authority = origin
        .as_bytes()
        .split(|&b| b == b'/')
        .nth(2)
        .unwrap_or(b"");
    host != Some(authority)
}

/// `GET /api/events`: the event stream, refused (503) past `max_clients`.
fn events(app: &App, conn: &Conn) -> Response<Body> {
    let rx = match app.hub.lock() {
        Ok(mut h) => h.subscribe(conn.peer, conn.kick.clone(), now_micros()),
        Err(_) => return text(StatusCode::INTERNAL_SERVER_ERROR, "console unavailable"),
    };
    let Ok(rx) = rx else {
        return text(
            StatusCode::SERVICE_UNAVAILABLE,
            "too many open consoles (console.max_clients)",
        );
    };
    // A stream counts against console.max_clients, not the spare slots.
    conn.slot.release();
    let stream = futures::stream::unfold(rx, |rx| async move {
        let msg = rx.recv().await?;
        Some((Ok::<_, Infallible>(Frame::data(msg)), rx))
    });
    let mut r = Response::new(BodyExt::boxed(StreamBody::new(stream)));
    let h = r.headers_mut();
    h.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/event-stream"),
    );
    h.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    r
}

/// `POST /api/health/pause` and `/resume`.
async fn health(app: &App, pause: bool) -> Response<Body> {
    let (reply, rx) = oneshot::channel();
    let cmd = if pause {
        Command::Pause { reply }
    } else {
        Command::Resume { reply }
    };
    let paused = match ask(app, cmd, rx).await {
        Ok(p) => p,
        Err(r) => return r,
    };
    if let Ok(mut h) = app.hub.lock() {
        h.health(paused, now_micros());
    }
    json_response(StatusCode::OK, &json!({ "paused": paused }))
}

/// `POST /api/alerts/{alert_id}/ack` with `{"by", "note"}`: answered once
/// the pipeline has journalled the ack.
async fn ack(app: &App, req: Request<Incoming>) -> Response<Body> {
    let raw = ack_target(req.uri().path()).unwrap_or("");
    let alert_id = match percent_decode(raw).filter(|a| !a.is_empty() && a.len() <= 256) {
        Some(a) => a,
        None => {
            return text(
                StatusCode::BAD_REQUEST,
                "alert_id: 1-256 bytes, percent-encoded",
            )
        }
    };
    let body = match read_body(req).await {
        Ok(b) => b,
        Err(r) => return r,
    };
    let (by, note) = match parse_ack(&body) {
        Ok(x) => x,
        Err(why) => return text(StatusCode::BAD_REQUEST, &why),
    };
    let (reply, rx) = oneshot::channel();
    let record = match ask(
        app,
        Command::Ack {
            alert_id,
            by,
            note,
            reply,
        },
        rx,
    )
    .await
    {
        Ok(r) => r,
        Err(r) => return r,
    };
    if let Ok(mut h) = app.hub.lock() {
        h.ack(&record, now_micros());
    }
    json_response(StatusCode::OK, &ack_json(&record, true))
}

/// The (still encoded) alert id of `/api/alerts/{alert_id}/ack`.
fn ack_target(path: &str) -> Option<&str> {
    path.strip_prefix("/api/alerts/")?.strip_suffix("/ack")
}

/// Sends a command to the pipeline task and waits for its answer.
async fn ask<T>(app: &App, cmd: Command, rx: oneshot::Receiver<T>) -> Result<T, Response<Body>> {
    let busy = || {
        text(
            StatusCode::SERVICE_UNAVAILABLE,
            "the pipeline is busy or stopping; try again (an ack sent again is recorded once)",
        )
    };
    if app.commands.try_send(cmd).is_err() {
        return Err(busy());
    }
    match tokio::time::timeout(BODY_TIMEOUT, rx).await {
        Ok(Ok(v)) => Ok(v),
        _ => Err(busy()),
    }
}

/// The request body, at most [`MAX_BODY`] bytes (413) within [`BODY_TIMEOUT`] (408).
async fn read_body(req: Request<Incoming>) -> Result<Bytes, Response<Body>> {
    let too_large = || {
        text(
            StatusCode::PAYLOAD_TOO_LARGE,
            "request body over 4096 bytes",
        )
    };
    let declared = req
        .headers()
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok()?.parse::<u64>().ok());
    if declared.is_some_and(|n| n > MAX_BODY as u64) {
        return Err(too_large());
    }
    let limited = Limited::new(req.into_body(), MAX_BODY);
    match tokio::time::timeout(BODY_TIMEOUT, limited.collect()).await {
        Ok(Ok(b)) => Ok(b.to_bytes()),
        Ok(Err(e)) if e.is::<http_body_util::LengthLimitError>() => Err(too_large()),
        Ok(Err(_)) => Err(text(StatusCode::BAD_REQUEST, "request body broken off")),
        Err(_) => Err(text(StatusCode::REQUEST_TIMEOUT, "request body too slow")),
    }
}

fn full(status: StatusCode, body: Bytes, content_type: &'static str) -> Response<Body> {
    let mut r = Response::new(BodyExt::boxed(Full::new(body)));
    *r.status_mut() = status;
    let h = r.headers_mut();
    h.insert(header::CONTENT_TYPE, HeaderValue::from_static(content_type));
    h.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    h.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    h.insert(
        header::REFERRER_POLICY,
        HeaderValue::from_static("no-referrer"),
    );
    r
}

/// A plain-text answer.
pub fn text(status: StatusCode, body: &str) -> Response<Body> {
    full(
        status,
        Bytes::from(body.to_string()),
        "text/plain; charset=utf-8",
    )
}

fn json_response(status: StatusCode, v: &Value) -> Response<Body> {
    full(status, Bytes::from(v.to_string()), "application/json")
}

fn asset(body: &'static str, content_type: &'static str) -> Response<Body> {
    let mut r = full(
        StatusCode::OK,
        Bytes::from_static(body.as_bytes()),
        content_type,
    );
    let h = r.headers_mut();
    h.insert(
        header::CONTENT_SECURITY_POLICY,
        HeaderValue::from_static("default-src 'self'; frame-ancestors 'none'"),
    );
    h.insert(header::X_FRAME_OPTIONS, HeaderValue::from_static("DENY"));
    r
}

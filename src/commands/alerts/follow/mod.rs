//! The connection loop of `alerts --follow`: GET the event stream, feed
//! its bytes to the parser, hand each event on; when the stream ends or
//! cannot be had, say so on stderr and try again with backoff (0.5 s
//! doubling to 10 s, or the server's `retry:`). A refused token or an
//! address that is no console ends the command: retrying cannot help.

use super::sse::SseParser;
use super::Target;
use crate::util::backoff::Backoff;
use anyhow::Context as _;
use std::time::Duration;

/// First reconnect delay.
const MIN_DELAY: Duration = Duration::from_millis(500);
/// Longest reconnect delay.
const MAX_DELAY: Duration = Duration::from_secs(10);
/// The console sends `state` every second: this long without a byte means
/// the connection is dead (a gateway that lost power leaves it half open).
const IDLE: Duration = Duration::from_secs(15);
/// An event bigger than this is skipped (the state doc of a big venue is
/// well under it).
const MAX_EVENT: usize = 4 << 20;

/// Why one connection ended.
enum Ended {
    /// The reader closed stdout: the command is done.
    ReaderGone,
    /// Try again after a pause; the reason, for stderr.
    Retry(String),
}

/// Follows one console's event stream.
pub struct Follower {
    client: reqwest::Client,
    target: Target,
    parser: SseParser,
    backoff: Backoff,
    /// Whether a connection has been up (the first is not a "re"connect).
    was_up: bool,
}

impl Follower {
    /// A follower of `target` (no connection yet).
    pub fn new(target: Target) -> anyhow::Result<Follower> {
        // reqwest's rustls needs a process-wide crypto provider: ring.
        let _ = rustls::crypto::ring::default_provider().install_default();
        let mut builder = reqwest::Client::builder().connect_timeout(Duration::from_secs(5));
        if !target.roots.is_empty() {
            builder = builder.tls_backend_preconfigured(super::pin::pinned_config(&target.roots)?);
        }
        Ok(Follower {
            client: builder.build().context("cannot set up the HTTP client")?,
            target,
            parser: SseParser::new(MAX_EVENT),
            backoff: Backoff::new(MIN_DELAY, MAX_DELAY),
            was_up: false,
        })
    }

    /// Hands every event (type, data) to `on_event` until it returns
    /// `false` (then `Ok`), or until the console refuses us (an error).
    pub async fn run(
        &mut self,
        mut on_event: impl FnMut(&str, &str) -> bool,
    ) -> anyhow::Result<()> {
        loop {
            match self.connect_and_read(&mut on_event).await? {
                Ended::ReaderGone => return Ok(()),
                Ended::Retry(why) => {
                    self.parser.reset();
                    let delay = self
                        .parser
                        .retry_ms()
                        .map(Duration::from_millis)
                        .map_or_else(|| self.backoff.next_delay(), |d| d.max(MIN_DELAY));
                    say(format!(
                        "{why}; trying again in {:.1} s",
                        delay.as_secs_f64()
                    ));
                    tokio::time::sleep(delay).await;
                }
            }
        }
    }

    /// One connection: the request, then its body until it ends.
    async fn connect_and_read(
        &mut self,
        on_event: &mut impl FnMut(&str, &str) -> bool,
    ) -> anyhow::Result<Ended> {
        let url = &self.target.url;
        let mut req = self
            .client
            .get(url)
            .header("Accept", "text/event-stream")
            .header("Cache-Control", "no-cache");
        if let Some(t) = &self.target.token {
            req = req.bearer_auth(t);
        }
        let mut resp = match req.send().await {
            Ok(r) => r,
            Err(e) => {
                return Ok(Ended::Retry(format!(
                    "cannot reach the console at {url}: {}",
                    cause(&e)
                )))
            }
        };
        match resp.status().as_u16() {
            200 => {}
            401 | 403 => anyhow::bail!(
                "the console at {url} refused the token ({}): give its token with --token-file \
                 (the file named by console.token_file)",
                resp.status()
            ),
            404 => anyhow::bail!(
                "{url} has no event stream (404): is that the console's address (console.listen)?"
            ),
            _ => {
                return Ok(Ended::Retry(format!(
                    "the console at {url} answered {}",
                    resp.status()
                )))
            }
        }
        self.backoff.reset();
        say(format!(
            "{} {url}",
            if std::mem::replace(&mut self.was_up, true) {
                "reconnected to"
            } else {
                "following"
            }
        ));
        loop {
            let chunk = match tokio::time::timeout(IDLE, resp.chunk()).await {
                Err(_) => {
                    return Ok(Ended::Retry(format!(
                        "nothing from the console for {} s",
                        IDLE.as_secs()
                    )))
                }
                Ok(Err(e)) => {
                    return Ok(Ended::Retry(format!(
                        "the event stream broke: {}",
                        cause(&e)
                    )))
                }
                Ok(Ok(None)) => {
                    return Ok(Ended::Retry(
                        "the console closed the event stream (gateway restarting?)".into(),
                    ))
                }
                Ok(Ok(Some(c))) => c,
            };
            let skipped = self.parser.skipped();
            for e in self.parser.push(&chunk) {
                if !on_event(&e.event, &e.data) {
                    return Ok(Ended::ReaderGone);
                }
            }
            if self.parser.skipped() > skipped {
                say(format!("an event over {} MiB was skipped", MAX_EVENT >> 20));
            }
        }
    }
}

/// A line on stderr about the connection (stdout has only events).
fn say(text: String) {
    use std::io::Write as _;
    let _ = writeln!(std::io::stderr(), "pitchside alerts: {text}");
}

/// An HTTP error with its causes (reqwest's own text is terse).
fn cause(e: &reqwest::Error) -> String {
    let mut text = e.to_string();
    let mut source = std::error::Error::source(e);
    while let Some(s) = source {
        text.push_str(&format!(": {s}"));
        source = s.source();
    }
    text
}

#[cfg(test)]
mod tests;

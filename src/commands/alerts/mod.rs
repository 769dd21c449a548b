//! `pitchside alerts --follow`: the venue console's live events in a
//! terminal, one line per alert, fatigue alert, device event and ack
//! (`--json`: the event's JSON), from the console's `GET /api/events`
//! (Server-Sent Events). Reconnects by itself when the gateway restarts.
//!
//! Parts: `sse` (the event-stream parser), `line` (the text for a
//! person), `follow` (the connection loop), `pin` (trusting the console's
//! own certificate).

mod follow;
mod line;
mod pin;
pub mod sse;

use crate::config;
use anyhow::{bail, Context as _};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

pub use follow::Follower;

/// Options of `pitchside alerts`.
#[derive(Debug, Clone, clap::Args)]
pub struct AlertsArgs {
    /// Follow the live events until Ctrl-C.
    #[arg(long, required = true)]
    pub follow: bool,
    /// Find the console from this config (`console.listen`, `console.tls`,
    /// `console.token_file`).
    #[arg(long, conflicts_with = "url")]
    pub config: Option<PathBuf>,
    /// The console's address (default http://127.0.0.1:8080).
    #[arg(long)]
    pub url: Option<String>,
    /// A file holding the console's access token (sent as `Authorization: Bearer`).
    #[arg(long)]
    pub token_file: Option<PathBuf>,
    /// Print each event's JSON (one line each) instead of text.
    #[arg(long)]
    pub json: bool,
}

/// Where the events are and how to be let in.
#[derive(Clone)]
pub struct Target {
    /// `…/api/events`.
    pub url: String,
    /// The bearer token, if the console needs one.
    pub token: Option<String>,
    /// The console's own certificate (PEM, from its config): when given,
    /// the server must show exactly it (pinned); otherwise the system's roots.
    pub roots: Vec<u8>,
}

impl std::fmt::Debug for Target {
    // Never the token.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Target")
            .field("url", &self.url)
            .field("token", &self.token.as_ref().map(|_| "…"))
            .finish()
    }
}

/// Follows until the reader closes stdout (exit 0) or the console refuses
/// us (an error saying why).
pub async fn execute(args: AlertsArgs) -> anyhow::Result<ExitCode> {
    let target = target(&args)?;
    let mut follower = Follower::new(target)?;
    let json = args.json;
    follower.run(|event, data| print(event, data, json)).await?;
    Ok(ExitCode::SUCCESS)
}

/// Prints one event; `false` once stdout is closed.
fn print(event: &str, data: &str, json: bool) -> bool {
    let value: serde_json::Value = match serde_json::from_str(data) {
        Ok(v) => v,
        Err(e) => {
            crate::commands::terminal::print_error(format!(
                "the console sent a {event} event that is not JSON ({e}); skipped"
            ));
            return true;
        }
    };
    let text = if json {
        matches!(event, "alert" | "fatigue" | "device" | "ack").then(|| value.to_string())
    } else {
        line::line(event, &value)
    };
    let Some(text) = text else { return true };
    let mut out = std::io::stdout().lock();
    let written = std::io::Write::write_all(&mut out, format!("{text}\n").as_bytes())
        .and_then(|()| std::io::Write::flush(&mut out));
    crate::commands::terminal::still_open(written).unwrap_or(false)
}

/// The events URL and token from the options.
fn target(args: &AlertsArgs) -> anyhow::Result<Target> {
    let (base, config_token, roots) = match (&args.config, &args.url) {
        (Some(path), _) => from_config(path)?,
        (None, Some(url)) => (url.trim_end_matches('/').to_string(), None, Vec::new()),
        (None, None) => ("http://127.0.0.1:8080".to_string(), None, Vec::new()),
    };
    if !base.starts_with("http://") && !base.starts_with("https://") {
        bail!(
            "--url {base:?}: give the console's address as http://host:port or https://host:port"
        );
    }
    let url = if base.ends_with("/api/events") {
        base
    } else {
        format!("{base}/api/events")
    };
    let token = match args.token_file.as_ref().or(config_token.as_ref()) {
        Some(f) => Some(read_token(f)?),
        None => None,
    };
    Ok(Target { url, token, roots })
}

/// The console's address, token file and certificate from a gateway config.
fn from_config(path: &Path) -> anyhow::Result<(String, Option<PathBuf>, Vec<u8>)> {
    let c = config::load(path)?;
    let listen = c.console.listen.context(
        "console.listen is \"\" in that config: the gateway serves no console to follow",
    )?;
    let (host, port) = listen
        .rsplit_once(':')
        .with_context(|| format!("console.listen {listen:?} has no port"))?;
    // A console listening on every address is reached here on loopback.
    let host = match host {
        "0.0.0.0" | "" => "127.0.0.1",
        "[::]" => "[::1]",
        h => h,
    };
    let (scheme, roots) = match &c.console.tls {
        Some(tls) => (
            "https",
            std::fs::read(&tls.cert)
                .with_context(|| format!("cannot read console.tls.cert {}", tls.cert.display()))?,
        ),
        None => ("http", Vec::new()),
    };
    Ok((
        format!("{scheme}://{host}:{port}"),
        c.console.token_file,
        roots,
    ))
}

/// The token in `path`, trimmed.
fn read_token(path: &Path) -> anyhow::Result<String> {
    let text = std::fs::read_to_string(path)
        .with_context(|| format!("cannot read the token file {}", path.display()))?;
    let token = text.trim();
    if token.is_empty() {
        bail!("the token file {} is empty", path.display());
    }
    Ok(token.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args() -> AlertsArgs {
        AlertsArgs {
            follow: true,
            config: None,
            url: None,
            token_file: None,
            json: false,
        }
    }

    /// A gateway config in `dir` with `[console]` lines `console`.
    fn config(dir: &Path, console: &str) -> PathBuf {
        let path = dir.join("venue.toml");
        let text = format!(
            "[venue]\nid = \"v\"\ngateway_id = \"gw\"\n[output]\nstore = \"file://{d}/store\"\n\
             spool_dir = \"{d}/spool\"\n[console]\n{console}",
            d = dir.display()
        );
        std::fs::write(&path, text).unwrap();
        path
    }

    #[test]
    fn the_url_defaults_to_the_local_console_and_gets_the_events_path() {
        assert_eq!(
            target(&args()).unwrap().url,
            "http://127.0.0.1:8080/api/events"
        );
        for url in [
            "http://gw:8080",
            "http://gw:8080/",
            "http://gw:8080/api/events",
        ] {
            let a = AlertsArgs {
                url: Some(url.into()),
                ..args()
            };
            assert_eq!(target(&a).unwrap().url, "http://gw:8080/api/events");
        }
        let bad = AlertsArgs {
            url: Some("gw:8080".into()),
            ..args()
        };
        assert!(target(&bad)
            .unwrap_err()
            .to_string()
            .contains("http://host:port"));
    }

    #[test]
    fn a_config_gives_the_address_on_loopback_and_the_token_trimmed() {
        let dir = tempfile::tempdir().unwrap();
        let token = dir.path().join("token");
        std::fs::write(&token, "  0123456789abcdef-token\n").unwrap();
        let cfg = config(
            dir.path(),
            &format!(
                "listen = \"0.0.0.0:8181\"\ntoken_file = \"{}\"\n",
                token.display()
            ),
        );
        let t = target(&AlertsArgs {
            config: Some(cfg),
            ..args()
        })
        .unwrap();
        assert_eq!(t.url, "http://127.0.0.1:8181/api/events");
        assert_eq!(t.token.as_deref(), Some("0123456789abcdef-token"));
        assert!(
            !format!("{t:?}").contains("0123456789abcdef"),
            "Debug hides the token"
        );
    }

    #[test]
    fn a_config_with_the_console_off_or_an_empty_token_file_is_an_error() {
        let dir = tempfile::tempdir().unwrap();
        let off = config(dir.path(), "listen = \"\"\n");
        let e = target(&AlertsArgs {
            config: Some(off),
            ..args()
        })
        .unwrap_err();
        assert!(format!("{e:#}").contains("serves no console"), "{e:#}");
        let empty = dir.path().join("empty");
        std::fs::write(&empty, "\n").unwrap();
        let e = target(&AlertsArgs {
            token_file: Some(empty),
            ..args()
        })
        .unwrap_err();
        assert!(e.to_string().contains("is empty"), "{e}");
    }
}

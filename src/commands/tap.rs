//! `pitchside tap`: what a source's inputs decode to, one JSON line per
//! input, without the pipeline or the spool (like `telegraf --test`). Live
//! from the source (a serial port, an MQTT subscription with its own client
//! id and a clean session, so it never takes the daemon's messages), or
//! from a sample file with `--input`.
//!
//! Each line is `{"source", "received_at", "input", "event"}` (or
//! `"events"` for a generic map with several metrics), or
//! `{"source", "received_at", "input", "reject": {"reason", "detail"}}`.
//! Blank lines and CSV header lines print nothing.

use crate::commands::logging::init_logging;
use crate::commands::terminal::still_open;
use crate::config::sources::InputSource;
use crate::config::{self, Config};
use crate::model::{RawInput, Reject, RejectReason};
use crate::mqtt::conn::BrokerSettings;
use crate::pipeline::decode::map::Context;
use crate::pipeline::decode::render::to_json;
use crate::pipeline::decode::{Decoded, Decoder};
use crate::sources::framing::{Line, LineFramer};
use crate::sources::mqtt::MqttSource;
use crate::sources::serial::{SerialSettings, SerialSource};
use crate::sources::SourceStats;
use crate::util::time::{format_rfc3339, now_micros};
use anyhow::{bail, Context as _};
use serde_json::json;
use std::io::{Read, Write};
use std::path::PathBuf;
use std::sync::Arc;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

/// Options of `pitchside tap`.
#[derive(Debug, Clone, clap::Args)]
pub struct TapArgs {
    /// Venue config file.
    #[arg(long)]
    pub config: PathBuf,
    /// The source's name (`name`, or `serial:{path}` / `mqtt:{topic filter}`).
    #[arg(long)]
    pub source: String,
    /// Stop after this many inputs (default: until Ctrl-C or the end of --input).
    #[arg(long)]
    pub count: Option<u64>,
    /// Decode this sample file ("-" for stdin) instead of reading the source live.
    #[arg(long)]
    pub input: Option<PathBuf>,
    /// With --input: the MQTT topic the lines stand for (for topic_level maps).
    #[arg(long)]
    pub topic: Option<String>,
}

/// Runs `tap`.
pub async fn execute(args: TapArgs) -> anyhow::Result<()> {
    let cfg = config::load(&args.config)?;
    init_logging(Some(&cfg));
    let Some(src) = cfg.inputs.get(&args.source).cloned() else {
        bail!(
            "no source named {:?} in {}; the sources are: {}",
            args.source,
            args.config.display(),
            cfg.inputs.names()
        );
    };
    let live = args.input.is_none();
    let mut tap = Tap {
        decoder: Decoder::new(
            cfg.limits.max_event_bytes,
            cfg.limits.ranges.clone(),
            live.then_some(cfg.limits.max_future),
        )
        .with_formats(src.format.iter().cloned().collect()),
        src,
        left: args.count.unwrap_or(u64::MAX),
    };
    match &args.input {
        Some(path) => tap.file(path, args.topic.as_deref(), &cfg),
        None => tap.live(&cfg).await,
    }
}

struct Tap {
    decoder: Decoder,
    src: InputSource,
    /// Inputs still to print.
    left: u64,
}

impl Tap {
    /// Decodes and prints one input; `false` once `--count` inputs are
    /// printed or stdout is closed.
    fn show(
        &mut self,
        source: &str,
        topic: Option<&str>,
        payload: &[u8],
        received_at: i64,
    ) -> anyhow::Result<bool> {
        let decoded = self.decode(topic, payload, received_at);
        self.print(source, payload, received_at, decoded)
    }

    fn decode<'a>(
        &mut self,
        topic: Option<&str>,
        payload: &'a [u8],
        received_at: i64,
    ) -> Decoded<'a> {
        let clock = now_micros();
        match &self.src.format {
            Some(f) => {
                let cx = Context {
                    topic,
                    received_at,
                    clock,
                };
                self.decoder.decode_mapped(&f.name, payload, &cx)
            }
            None => self.decoder.decode_bytes(payload, self.src.sensor, clock),
        }
    }

    /// Prints one input's line; `false` once `--count` inputs are printed
    /// or stdout is closed.
    fn print(
        &mut self,
        source: &str,
        payload: &[u8],
        received_at: i64,
        decoded: Decoded,
    ) -> anyhow::Result<bool> {
        let mut line = json!({
            "source": source,
            "received_at": format_rfc3339(received_at),
            "input": String::from_utf8_lossy(payload),
        });
        match decoded {
            Decoded::Skip => return Ok(self.left > 0),
            Decoded::Event(e) => line["event"] = to_json(&e),
            Decoded::Events(es) => line["events"] = es.iter().map(to_json).collect(),
            Decoded::Reject(r) => {
                line["reject"] = json!({ "reason": r.reason.as_str(), "detail": r.detail })
            }
        }
        self.left = self.left.saturating_sub(1);
        let mut out = std::io::stdout().lock();
        let open = still_open(writeln!(out, "{line}").and_then(|()| out.flush()))?;
        Ok(open && self.left > 0)
    }

    /// Every line of a sample file.
    fn file(&mut self, path: &PathBuf, topic: Option<&str>, cfg: &Config) -> anyhow::Result<()> {
        let mut reader: Box<dyn Read> = if path.as_os_str() == "-" {
            Box::new(std::io::stdin().lock())
        } else {
            Box::new(
                std::fs::File::open(path)
                    .with_context(|| format!("cannot read input {}", path.display()))?,
            )
        };
        let source = format!("tap:{}", path.display());
        let mut framer = LineFramer::new(cfg.limits.max_event_bytes);
        let mut chunk = vec![0u8; 64 * 1024];
        let mut result = Ok(true);
        let mut each = |line: Line<'_>, result: &mut anyhow::Result<bool>| {
            if matches!(result, Ok(true)) {
                let now = now_micros();
                *result = match line {
                    Line::Ok(b) => self.show(&source, topic, b, now),
                    Line::TooLarge { prefix, len } => {
                        let detail = format!(
                            "{len} bytes, limit is {} (limits.max_event_bytes)",
                            prefix.len()
                        );
                        let r = Reject::new(RejectReason::TooLarge, detail);
                        self.print(&source, prefix, now, Decoded::Reject(r))
                    }
                };
            }
        };
        loop {
            let n = reader
                .read(&mut chunk)
                .with_context(|| format!("cannot read input {}", path.display()))?;
            if n == 0 {
                break;
            }
            framer.push(&chunk[..n], &mut |line| each(line, &mut result));
            if !matches!(result, Ok(true)) {
                return result.map(drop);
            }
        }
        framer.finish(&mut |line| each(line, &mut result));
        result.map(drop)
    }

    /// The source itself, until `--count` inputs or Ctrl-C.
    async fn live(&mut self, cfg: &Config) -> anyhow::Result<()> {
        let (tx, mut rx) = mpsc::channel::<RawInput>(1024);
        let stop = CancellationToken::new();
        let stats = Arc::new(SourceStats::default());
        let task = start(cfg, &self.src.name, tx, stats, stop.clone())?;
        // On stderr: stdout carries only the JSON lines.
        tracing::info!(source = %self.src.name, "Tapping the source (Ctrl-C to stop).");
        loop {
            let input = tokio::select! {
                i = rx.recv() => i,
                _ = tokio::signal::ctrl_c() => None,
            };
            let Some(mut input) = input else { break };
            // As the pipeline decodes it: the source names its map on the
            // input, and an overlong line is `too_large`.
            let decoded = self.decoder.decode(&input, now_micros());
            let go_on = self.print(&input.source, &input.payload, input.received_at, decoded)?;
            if let Some(ack) = input.ack.take() {
                ack.ack();
            }
            if !go_on {
                break;
            }
        }
        stop.cancel();
        let _ = task.await;
        Ok(())
    }
}

/// Starts the one source named `name`; its inputs go to `tx`.
fn start(
    cfg: &Config,
    name: &str,
    tx: mpsc::Sender<RawInput>,
    stats: Arc<SourceStats>,
    stop: CancellationToken,
) -> anyhow::Result<tokio::task::JoinHandle<()>> {
    if let Some(s) = cfg.sources.serial.iter().find(|s| s.name() == name) {
        let settings = SerialSettings::from_section(s, cfg.limits.max_event_bytes);
        let source = SerialSource::new(settings, tx, stats);
        return Ok(tokio::spawn(source.run(stop)));
    }
    for (i, m) in cfg.sources.mqtt.iter().enumerate() {
        let Some(sub) = m.subscriptions.iter().find(|s| s.name() == name) else {
            continue;
        };
        let mut section = m.clone();
        section.subscriptions = vec![sub.clone()];
        // Its own client id, never the daemon's: the broker would drop one of the two.
        let id = format!(
            "{}-tap-{}",
            m.broker
                .client_id
                .clone()
                .unwrap_or_else(|| format!("pitchside-{}-{}", cfg.venue.id, cfg.venue.gateway_id)),
            std::process::id()
        );
        section.broker.client_id = Some(id.clone());
        let broker = BrokerSettings::new(
            &format!("sources.mqtt[{i}].broker"),
            &section.broker,
            &id,
            true,
        )?;
        let source = MqttSource::new(&section, broker, cfg.limits.max_event_bytes, tx, stats);
        return Ok(tokio::spawn(source.run(stop)));
    }
    bail!("source {name:?} is neither a serial port nor an MQTT subscription")
}

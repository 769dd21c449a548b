//! `pitchside simulate`: sensor events (with injected anomalies and fatigue)
//! as JSON lines, to stdout, a file, a serial port or an MQTT broker.

use crate::commands::logging::init_logging;
use crate::commands::shutdown::shutdown_on_signals;
use crate::commands::terminal::still_open;
use crate::config::{self, SimulatorSection};
use crate::sources::sim_output::SimOutput;
use crate::sources::sim_profiles::{DeviceProfile, DeviceStream};
use crate::sources::simulator::Simulator;
use crate::util::time::{now_micros, parse_rfc3339};
use anyhow::Context as _;
use std::io::Write;
use std::path::PathBuf;
use std::time::Duration;
use tokio_util::sync::CancellationToken;

/// Options of `pitchside simulate`.
#[derive(Debug, Clone, clap::Args)]
pub struct SimulateArgs {
    /// Take device counts and rates from this config's [sources.simulator].
    #[arg(long)]
    pub config: Option<PathBuf>,
    /// Events per second (event-time spacing, and pace with --realtime).
    #[arg(long)]
    pub rate: Option<f64>,
    /// Stop after this many lines (default: run until stopped, in real time).
    #[arg(long)]
    pub count: Option<u64>,
    /// Write only the events of one device profile (config/devices/), in
    /// that device's bytes: sound-level-meter, radar-gun, ble-heart-rate,
    /// ball-tracker, crowd-counter or wearable-hub.
    #[arg(long = "as", value_name = "PROFILE")]
    pub as_profile: Option<String>,
    /// Event time of the first event, RFC 3339 (default: now).
    #[arg(long)]
    pub start: Option<String>,
    /// Random seed.
    #[arg(long)]
    pub seed: Option<u64>,
    /// Chance per reading of an injected 4–6σ anomaly.
    #[arg(long)]
    pub anomaly_rate: Option<f64>,
    /// Pace output in real time even with --count.
    #[arg(long)]
    pub realtime: bool,
    /// Write to this file instead of stdout.
    #[arg(long)]
    pub output: Option<PathBuf>,
    /// Write to this serial port instead (8N1, `--baud`).
    #[arg(long, conflicts_with_all = ["output", "mqtt_host"])]
    pub serial: Option<String>,
    /// Baud rate for --serial.
    #[arg(long, default_value_t = 115_200)]
    pub baud: u32,
    /// Publish to this MQTT broker instead (QoS 1, topic {prefix}/{sensor}/{device_id}).
    #[arg(long, conflicts_with = "output")]
    pub mqtt_host: Option<String>,
    /// MQTT port (default 1883, 8883 with --mqtt-ca).
    #[arg(long)]
    pub mqtt_port: Option<u16>,
    /// MQTT topic prefix (with --as: the ble-heart-rate and crowd-counter
    /// profiles publish on their devices' own topics, the others on
    /// {prefix}/{profile}).
    #[arg(long, default_value = "pitchside/sensors")]
    pub mqtt_topic_prefix: String,
    /// MQTT user name.
    #[arg(long)]
    pub mqtt_username: Option<String>,
    /// Environment variable holding the MQTT password.
    #[arg(long)]
    pub mqtt_password_env: Option<String>,
    /// CA file: connect with TLS.
    #[arg(long)]
    pub mqtt_ca: Option<String>,
}

/// Generates events until `--count` or until stopped (SIGINT, SIGTERM, or a
/// reader that closed stdout).
pub async fn execute(a: SimulateArgs) -> anyhow::Result<()> {
    let sim_cfg = simulator_section(&a)?;
    let start = match &a.start {
        Some(s) => parse_rfc3339(s).map_err(|e| anyhow::anyhow!("--start {s:?}: {e}"))?,
        None => now_micros(),
    };
    let profile = match &a.as_profile {
        Some(name) => Some(DeviceProfile::parse(name).with_context(|| {
            format!(
                "--as {name:?} is not a device profile; the profiles are: {}",
                DeviceProfile::NAMES.join(", ")
            )
        })?),
        None => None,
    };
    let sim = DeviceStream::new(Simulator::new(&sim_cfg, start), profile).with_context(|| {
        format!(
            "--as {}: the simulator makes no {} events (see [sources.simulator] of --config)",
            a.as_profile.as_deref().unwrap_or(""),
            profile.map_or("", |p| p.sensor().as_str())
        )
    })?;
    if a.serial.is_some() || a.mqtt_host.is_some() {
        return to_device(&a, sim, start).await;
    }
    to_file(&a, sim, start).await
}

/// `[sources.simulator]` of `--config` (or the defaults), with the options over it.
fn simulator_section(a: &SimulateArgs) -> anyhow::Result<SimulatorSection> {
    let mut sim_cfg = match &a.config {
        Some(p) => config::load(p)?.sources.simulator.unwrap_or_default(),
        None => SimulatorSection::default(),
    };
    if let Some(r) = a.rate {
        anyhow::ensure!(
            r.is_finite() && (0.001..=10_000_000.0).contains(&r),
            "--rate must be between 0.001 and 10000000 events per second"
        );
        sim_cfg.rate = r;
    }
    if let Some(s) = a.seed {
        sim_cfg.seed = s;
    }
    if let Some(x) = a.anomaly_rate {
        anyhow::ensure!(
            (0.0..=1.0).contains(&x),
            "--anomaly-rate is a chance per reading, between 0 and 1"
        );
        sim_cfg.anomaly_rate = x;
    }
    Ok(sim_cfg)
}

/// Lines to `--output` or stdout; a closed stdout (`| head`) ends quietly.
async fn to_file(a: &SimulateArgs, mut sim: DeviceStream, start: i64) -> anyhow::Result<()> {
    let mut out: Box<dyn Write> = match &a.output {
        Some(p) => Box::new(std::io::BufWriter::new(
            std::fs::File::create(p).with_context(|| format!("cannot create {}", p.display()))?,
        )),
        None => Box::new(std::io::BufWriter::new(std::io::stdout().lock())),
    };
    let mut pace = Pace::new(a, start);
    while pace.more() {
        if let Some(wait) = pace.wait_for(sim.next_time()) {
            if !still_open(out.flush())? {
                return Ok(());
            }
            tokio::time::sleep(wait).await;
        }
        let line = sim.next_line();
        if !still_open(writeln!(out, "{}", line.text))? {
            return Ok(());
        }
        pace.sent += 1;
    }
    still_open(out.flush())?;
    Ok(())
}

/// `simulate --serial` / `--mqtt-host`: the same stream, to a device or broker.
async fn to_device(a: &SimulateArgs, mut sim: DeviceStream, start: i64) -> anyhow::Result<()> {
    init_logging(None);
    let mut out = match (&a.serial, &a.mqtt_host) {
        (Some(path), _) => SimOutput::serial(path, a.baud)?,
        (None, Some(host)) => SimOutput::mqtt(&broker(a, host), &a.mqtt_topic_prefix).await?,
        (None, None) => anyhow::bail!("--serial or --mqtt-host is needed"),
    };
    let mut pace = Pace::new(a, start);
    while pace.more() {
        if let Some(wait) = pace.wait_for(sim.next_time()) {
            tokio::time::sleep(wait).await;
        }
        let line = sim.next_line();
        let topic = line.topic.or_else(|| {
            let p = a.as_profile.as_deref()?;
            Some(format!("{}/{p}", a.mqtt_topic_prefix))
        });
        out.send_on(topic.as_deref(), &line.text).await?;
        pace.sent += 1;
    }
    let acked = out.finish().await?;
    tracing::info!(events = pace.sent, acked, "Simulation sent.");
    Ok(())
}

/// The broker of `--mqtt-host` and the other `--mqtt-*` options.
fn broker(a: &SimulateArgs, host: &str) -> config::MqttBroker {
    config::MqttBroker {
        host: host.to_string(),
        port: a.mqtt_port,
        client_id: None,
        username: a.mqtt_username.clone(),
        password_env: a.mqtt_password_env.clone(),
        password_file: None,
        keep_alive: "30s".into(),
        tls: a.mqtt_ca.as_ref().map(|ca| config::MqttTls {
            ca_file: ca.clone(),
            client_cert: None,
            client_key: None,
        }),
    }
}

/// How many events go out and when: each at its event time's offset from
/// the first (in real time), or as fast as the output takes them.
struct Pace {
    realtime: bool,
    count: Option<u64>,
    /// Events sent so far.
    sent: u64,
    /// Event time of the first event.
    start: i64,
    /// Wall time the first event went out.
    wall0: i64,
    stop: CancellationToken,
}

impl Pace {
    fn new(a: &SimulateArgs, start: i64) -> Pace {
        let realtime = a.realtime || a.count.is_none();
        let stop = shutdown_on_signals();
        Pace {
            realtime,
            count: a.count,
            sent: 0,
            start,
            wall0: now_micros(),
            stop,
        }
    }

    /// Whether another event goes out: `--count` not reached, not stopped.
    fn more(&self) -> bool {
        self.count.is_none_or(|c| self.sent < c) && !self.stop.is_cancelled()
    }

    /// How long to wait before the event at `event_time`; `None`: now.
    fn wait_for(&self, event_time: Option<i64>) -> Option<Duration> {
        let event_time = event_time?;
        let due = self.wall0 + (event_time - self.start);
        let now = now_micros();
        (self.realtime && due > now).then(|| Duration::from_micros((due - now) as u64))
    }
}

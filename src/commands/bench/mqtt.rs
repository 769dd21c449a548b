//! `pitchside bench-mqtt`: end-to-end latency and ingest rate through a real
//! MQTT broker. Starts `pitchside run` as a child process (MQTT source and
//! MQTT alert output on the broker given), publishes generic events at fixed
//! rates with ~2 % injected anomalies, and times each anomaly from the
//! publish call to the arrival of its alert on `bench/alerts/#`. Then floods
//! QoS 1 events as fast as the broker takes them and reports how fast the
//! gateway ingested them and whether it dropped any.

use crate::commands::logging::init_logging;
use crate::commands::terminal::emit;
use crate::util::rng::Rng;
use crate::util::time::parse_rfc3339;
use anyhow::{bail, Context};
use rumqttc::{AsyncClient, Event, MqttOptions, Packet, QoS};
use std::collections::HashMap;
use std::fmt::Write as _;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::Duration;
use tokio::sync::mpsc;
use tokio::time::Instant;

/// Options of `pitchside bench-mqtt`.
#[derive(Debug, Clone, clap::Args)]
pub struct BenchMqttArgs {
    /// Broker host (start one first, e.g. `mosquitto -p 18830`).
    #[arg(long, default_value = "127.0.0.1")]
    pub host: String,
    /// Broker port.
    #[arg(long, default_value_t = 1883)]
    pub port: u16,
    /// Publish rates to measure latency at, events/s.
    #[arg(long, value_delimiter = ',', default_value = "1000,5000")]
    pub rates: Vec<u32>,
    /// Seconds per rate.
    #[arg(long, default_value_t = 10)]
    pub seconds: u64,
    /// Events in the final as-fast-as-possible flood (0 skips it).
    #[arg(long, default_value_t = 200_000)]
    pub flood: u64,
    /// Devices the events are spread over.
    #[arg(long, default_value_t = 100)]
    pub devices: u32,
}

const ANOMALY: f64 = 0.02;

struct Gateway {
    child: Child,
    metrics: u16,
}

impl Gateway {
    fn start(a: &BenchMqttArgs, dir: &Path) -> anyhow::Result<Gateway> {
        let metrics = std::net::TcpListener::bind("127.0.0.1:0")?
            .local_addr()?
            .port();
        let pid = std::process::id();
        let broker = |suffix: &str| {
            format!(
                "host = \"{}\"\nport = {}\nclient_id = \"pitchside-bench-{pid}{suffix}\"\n",
                a.host, a.port
            )
        };
        let cfg = format!(
            "[venue]\nid = \"bench\"\ngateway_id = \"gw-bench\"\n[output]\nstore = \"file://{d}/store\"\nspool_dir = \"{d}/spool\"\nflush_interval = \"5s\"\n\
             [metrics]\nprogress_interval = \"100ms\"\nlisten = \"127.0.0.1:{metrics}\"\n\
             [[sources.mqtt]]\n[sources.mqtt.broker]\n{}[[sources.mqtt.subscriptions]]\ntopic = \"bench/in/#\"\nsensor = \"generic\"\n\
             [alerts]\ntopic_prefix = \"bench/alerts\"\n[alerts.mqtt]\n{}",
            broker(""),
            broker("-alerts"),
            d = dir.display(),
        );
        let path = dir.join("bench.toml");
        std::fs::write(&path, cfg)?;
        let log = std::fs::File::create(dir.join("gateway.log"))?;
        let child = Command::new(std::env::current_exe()?)
            // The child shuts down (draining) when this process dies, even by
            // SIGKILL or an abort, where the Drop below never runs.
            .args([
                "run",
                "--parent-pid",
                &std::process::id().to_string(),
                "--config",
            ])
            .arg(&path)
            .env("PITCHSIDE_LOG", "warn")
            .stdout(Stdio::null())
            .stderr(log)
            .spawn()
            .context("cannot start pitchside run")?;
        Ok(Gateway { child, metrics })
    }

    async fn metric(&self, name: &str) -> f64 {
        use tokio::io::{AsyncReadExt, AsyncWriteExt};
        let Ok(mut s) = tokio::net::TcpStream::connect(("127.0.0.1", self.metrics)).await else {
            return 0.0;
        };
        let _ = s
            .write_all(b"GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n")
            .await;
        let mut text = String::new();
        let _ = s.read_to_string(&mut text).await;
        text.lines()
            .find_map(|l| l.strip_prefix(name)?.strip_prefix(' ')?.trim().parse().ok())
            .unwrap_or(0.0)
    }

    async fn wait_inputs(&self, n: f64, timeout: Duration) -> anyhow::Result<Instant> {
        let end = Instant::now() + timeout;
        loop {
            if self.metric("pitchside_input_rows_total").await >= n {
                return Ok(Instant::now());
            }
            if Instant::now() > end {
                bail!("gateway took in fewer than {n} events in {timeout:?}");
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }
}

impl Drop for Gateway {
    fn drop(&mut self) {
        let _ = Command::new("kill")
            .args(["-TERM", &self.child.id().to_string()])
            .status();
        let _ = self.child.wait();
    }
}

struct Publisher {
    client: AsyncClient,
    rng: Rng,
    event_ms: i64,
    seq: u64,
    devices: u32,
}

impl Publisher {
    /// Publishes one event; returns its (device, event time) key.
    async fn event(&mut self, anomaly: bool) -> anyhow::Result<(u32, i64)> {
        let dev = (self.seq % self.devices as u64) as u32;
        self.seq += 1;
        self.event_ms += 1;
        let v = if anomaly {
            35.0
        } else {
            20.0 + 0.5 * self.rng.normal()
        };
        let line = format!(
            r#"{{"device_id":"dev-{dev}","event_time":{},"metric":"temp","value":{v:.4}}}"#,
            self.event_ms
        );
        self.client
            .publish(format!("bench/in/dev-{dev}"), QoS::AtLeastOnce, false, line)
            .await?;
        Ok((dev, self.event_ms))
    }
}

fn percentile(sorted: &[f64], p: f64) -> f64 {
    if sorted.is_empty() {
        return f64::NAN;
    }
    sorted[((sorted.len() as f64 * p) as usize).min(sorted.len() - 1)]
}

/// `pitchside bench-mqtt`: runs the benchmark and prints the report.
pub async fn execute(a: &BenchMqttArgs) -> anyhow::Result<()> {
    init_logging(None);
    emit(&run(a).await?)
}

/// Alerts as they arrive on `bench/alerts/#`, with their arrival time.
type Alerts = mpsc::UnboundedReceiver<(Instant, bytes::Bytes)>;

/// Runs the benchmark and returns the report.
pub async fn run(a: &BenchMqttArgs) -> anyhow::Result<String> {
    let dir = std::env::temp_dir().join(format!("pitchside-bench-mqtt-{}", std::process::id()));
    std::fs::create_dir_all(&dir)?;
    let gw = Gateway::start(a, &dir)?;
    let (client, mut alerts) = subscribe_to_alerts(a).await?;
    let now_ms = crate::util::time::now_micros() / 1000;
    let mut p = Publisher {
        client,
        rng: Rng::new(11),
        event_ms: now_ms - 30 * 60_000,
        seq: 0,
        devices: a.devices.max(1),
    };
    warm_up(&gw, &mut p, &dir).await?;
    tokio::time::sleep(Duration::from_millis(500)).await;
    while alerts.try_recv().is_ok() {}

    let mut report = String::new();
    writeln!(
        report,
        "broker {}:{} (QoS 1 in and out), {} devices, {:.0} % anomalies",
        a.host,
        a.port,
        p.devices,
        ANOMALY * 100.0
    )?;
    writeln!(
        report,
        "{:>8} {:>8} {:>9} {:>9} {:>9} {:>9} {:>9}",
        "rate/s", "events", "anomalies", "alerts", "p50 ms", "p99 ms", "max ms"
    )?;
    for &rate in &a.rates {
        report.push_str(&latency_at(rate, a.seconds, &mut p, &mut alerts).await?);
    }
    if a.flood > 0 {
        report.push_str(&flood(a.flood, &gw, &mut p).await?);
    }
    drop(gw);
    let _ = std::fs::remove_dir_all(&dir);
    Ok(report)
}

/// A client of its own on the broker, subscribed to the gateway's alerts.
async fn subscribe_to_alerts(a: &BenchMqttArgs) -> anyhow::Result<(AsyncClient, Alerts)> {
    let mut opts = MqttOptions::new(
        format!("pitchside-bench-client-{}", std::process::id()),
        &a.host,
        a.port,
    );
    opts.set_inflight(1000)
        .set_keep_alive(Duration::from_secs(30));
    let (client, mut eventloop) = AsyncClient::new(opts, 10_000);
    let (alert_tx, alerts) = mpsc::unbounded_channel::<(Instant, bytes::Bytes)>();
    let (sub_tx, mut sub_rx) = mpsc::channel::<()>(1);
    tokio::spawn(async move {
        loop {
            match eventloop.poll().await {
                Ok(Event::Incoming(Packet::Publish(p))) => {
                    let _ = alert_tx.send((Instant::now(), p.payload));
                }
                Ok(Event::Incoming(Packet::SubAck(_))) => {
                    let _ = sub_tx.try_send(());
                }
                Ok(_) => {}
                Err(e) => {
                    tracing::warn!(error = %e, "bench client: broker connection");
                    tokio::time::sleep(Duration::from_millis(500)).await;
                }
            }
        }
    });
    client.subscribe("bench/alerts/#", QoS::AtLeastOnce).await?;
    tokio::time::timeout(Duration::from_secs(10), sub_rx.recv())
        .await
        .context("bench client could not subscribe (is the broker running?)")?;
    Ok((client, alerts))
}

/// Until the gateway has subscribed, probes are lost; then warm up baselines.
async fn warm_up(gw: &Gateway, p: &mut Publisher, dir: &Path) -> anyhow::Result<()> {
    let ready_by = Instant::now() + Duration::from_secs(30);
    while gw.metric("pitchside_input_rows_total").await < 1.0 {
        if Instant::now() > ready_by {
            bail!(
                "gateway did not start taking MQTT input; see {}",
                dir.join("gateway.log").display()
            );
        }
        p.event(false).await?;
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    for _ in 0..(20 * p.devices) {
        p.event(false).await?;
    }
    gw.wait_inputs(20.0 * p.devices as f64 + 1.0, Duration::from_secs(30))
        .await?;
    Ok(())
}

/// Publishes at `rate` for `seconds`, then times each anomaly from its
/// publish to its alert; one row of the report.
async fn latency_at(
    rate: u32,
    seconds: u64,
    p: &mut Publisher,
    alerts: &mut Alerts,
) -> anyhow::Result<String> {
    let total = rate as u64 * seconds;
    let mut sent_at: HashMap<(u32, i64), Instant> = HashMap::new();
    let start = Instant::now();
    for k in 0..total {
        let due = start + Duration::from_secs_f64(k as f64 / rate as f64);
        if due > Instant::now() {
            tokio::time::sleep_until(due).await;
        }
        let anomaly = p.rng.uniform() < ANOMALY;
        let t = Instant::now();
        let key = p.event(anomaly).await?;
        if anomaly {
            sent_at.insert(key, t);
        }
    }
    tokio::time::sleep(Duration::from_secs(2)).await;
    let mut lat = latencies(alerts, &sent_at);
    lat.sort_by(f64::total_cmp);
    Ok(format!(
        "{rate:>8} {total:>8} {:>9} {:>9} {:>9.2} {:>9.2} {:>9.2}\n",
        sent_at.len(),
        lat.len(),
        percentile(&lat, 0.5),
        percentile(&lat, 0.99),
        lat.last().copied().unwrap_or(f64::NAN)
    ))
}

/// Milliseconds from publish to alert, for the alerts that match an anomaly sent.
fn latencies(alerts: &mut Alerts, sent_at: &HashMap<(u32, i64), Instant>) -> Vec<f64> {
    let mut lat = Vec::new();
    while let Ok((at, payload)) = alerts.try_recv() {
        let Ok(v) = serde_json::from_slice::<serde_json::Value>(&payload) else {
            continue;
        };
        let dev = v["device_id"]
            .as_str()
            .and_then(|d| d.strip_prefix("dev-")?.parse::<u32>().ok());
        let t = v["event_time"].as_str().and_then(|s| parse_rfc3339(s).ok());
        if let (Some(dev), Some(t)) = (dev, t) {
            if let Some(s) = sent_at.get(&(dev, t / 1000)) {
                lat.push(at.duration_since(*s).as_secs_f64() * 1e3);
            }
        }
    }
    lat
}

/// Publishes `events` as fast as the broker takes them and measures how fast
/// the gateway took them in; the report's last line.
async fn flood(events: u64, gw: &Gateway, p: &mut Publisher) -> anyhow::Result<String> {
    let before = gw.metric("pitchside_input_rows_total").await;
    gw.wait_inputs(before, Duration::from_secs(10)).await?;
    let start = Instant::now();
    for _ in 0..events {
        p.event(false).await?;
    }
    let published = start.elapsed().as_secs_f64();
    let target = before + events as f64;
    // Until all arrived, or nothing more for 3 s (the broker dropped some:
    // mosquitto's max_queued_messages).
    let (mut got, mut last_change) = (before, Instant::now());
    while got < target && last_change.elapsed() < Duration::from_secs(3) {
        tokio::time::sleep(Duration::from_millis(20)).await;
        let now = gw.metric("pitchside_input_rows_total").await;
        if now > got {
            (got, last_change) = (now, Instant::now());
        }
    }
    let took = last_change.duration_since(start).as_secs_f64();
    let received = got - before;
    Ok(format!(
        "flood: {} QoS 1 events published in {published:.2} s ({:.0}/s); gateway took in {received} in {took:.2} s = {:.0} events/s; gateway dropped {}; never arrived (dropped by the broker) {}\n",
        events,
        events as f64 / published,
        received / took,
        gw.metric("pitchside_mqtt_dropped_messages_total").await,
        target - got
    ))
}

#[cfg(test)]
mod tests {
    use super::BenchMqttArgs;
    use clap::Parser;

    #[derive(Parser)]
    struct Cli {
        #[command(flatten)]
        args: BenchMqttArgs,
    }

    /// The default is written as `--rates` is (comma-separated), and means
    /// the same two rates.
    #[test]
    fn rates_default_and_list_are_comma_separated() {
        let rates = |argv: &[&str]| Cli::try_parse_from(argv).map(|c| c.args.rates);
        assert_eq!(rates(&["b"]).unwrap(), [1000, 5000]);
        assert_eq!(rates(&["b", "--rates", "200,300"]).unwrap(), [200, 300]);
        assert!(rates(&["b", "--rates", "200", "300"]).is_err());
    }
}

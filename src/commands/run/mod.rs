//! Wiring for `pitchside run`: sources → bounded channel → pipeline task →
//! bounded channel → encoder thread → spool → uploader. Each task owns its
//! state; shutdown flows downstream as channels close.

pub mod task;

use crate::commands::run::task::{pipeline_task, Batch, PipelineParts};
use crate::config::reload::Reloadable;
use crate::config::Config;
use crate::model::RawInput;
use crate::mqtt::conn::BrokerSettings;
use crate::sinks::alerts_mqtt::{AlertPublisher, AlertSettings};
use crate::sinks::spool::{Spool, SpooledFile};
use crate::sinks::spool_queue::{lock, SpoolQueue};
use crate::sinks::store::Store;
use crate::sinks::upload::{SpoolLimits, Uploader};
use crate::sinks::writer::TableWriter;
use crate::sinks::UploadStats;
use crate::sources::mqtt::MqttSource;
use crate::sources::serial::{SerialSettings, SerialSource};
use crate::sources::simulator::Simulator;
use crate::sources::SourceStats;
use crate::state::StateStats;
use crate::telemetry::systemd::{feed_watchdog, watchdog_interval, Heartbeat, Notifier};
use crate::telemetry::MetricsSnapshot;
use crate::util::time::now_micros;
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::signal::unix::{signal, Signal, SignalKind};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;
use tracing::{error, info, warn};

/// Start-up failures; once running, errors are counted and logged instead.
#[derive(Debug, thiserror::Error)]
pub enum AppError {
    /// The spool folder cannot be used.
    #[error(transparent)]
    Spool(#[from] crate::sinks::spool::SpoolError),
    /// The store cannot be opened.
    #[error(transparent)]
    Store(#[from] crate::sinks::store::StoreError),
    /// The metrics endpoint cannot listen.
    #[error("metrics.listen {addr}: {source} (is another pitchside running? set metrics.listen = \"\" to turn it off)")]
    Listen {
        /// Address.
        addr: String,
        /// OS error.
        source: std::io::Error,
    },
    /// An MQTT connection cannot be set up (password, certificates).
    #[error(transparent)]
    Mqtt(#[from] crate::mqtt::conn::ConnError),
    /// No source is configured.
    #[error("{}", crate::commands::preflight::NO_SOURCES)]
    NoSources,
    /// A start-up check failed (the same checks as `check-config`).
    #[error(transparent)]
    Preflight(#[from] crate::config::ConfigError),
}

/// How long stages get to drain after shutdown before they are named as stuck.
pub const GRACE: Duration = Duration::from_secs(20);

/// SIGHUP, SIGUSR1 and SIGUSR2, taken over from their default action (which
/// ends the process) as soon as `pitchside run` starts.
pub struct Signals {
    hup: Signal,
    usr1: Signal,
    usr2: Signal,
}

impl Signals {
    /// Installs the handlers (inside the runtime). From here on these
    /// signals never end the process; [`run_with`] acts on them.
    pub fn install() -> std::io::Result<Signals> {
        Ok(Signals {
            hup: signal(SignalKind::hangup())?,
            usr1: signal(SignalKind::user_defined1())?,
            usr2: signal(SignalKind::user_defined2())?,
        })
    }
}

/// Reads the config again, from the same file (and board) as at start-up.
pub type LoadConfig = Box<dyn Fn() -> Result<Config, crate::config::ConfigError> + Send + Sync>;
/// Sets the log level (`log.level`); `Err` says why it cannot.
pub type SetLogLevel = Box<dyn Fn(&str) -> Result<(), String> + Send + Sync>;

/// How `pitchside run` controls the daemon besides shutdown: SIGHUP
/// reloads the config ([`crate::config::reload`] says what can change), SIGUSR1
/// logs a status summary, SIGUSR2 is logged and ignored.
pub struct Control {
    /// The installed signal handlers.
    pub signals: Signals,
    /// Where a reload reads the config; `None` (the built-in demo) has nothing to reload.
    pub load: Option<LoadConfig>,
    /// Applies a reloaded `log.level`.
    pub set_log_level: SetLogLevel,
}

/// Runs the daemon until `shutdown` is cancelled, then drains and returns.
pub async fn run(config: Config, shutdown: CancellationToken) -> Result<(), AppError> {
    run_with(config, shutdown, None).await
}

/// [`run`], with signals and config reload when `control` is given.
pub async fn run_with(
    config: Config,
    shutdown: CancellationToken,
    control: Option<Control>,
) -> Result<(), AppError> {
    let checks = crate::commands::preflight::preflight(&config);
    for warning in &checks.warnings {
        warn!("{warning}");
    }
    checks.into_result()?;
    let store = Store::open(&config)?;
    let mut spool = Spool::open(
        &config.output.spool_dir,
        &config.venue.id,
        &config.venue.gateway_id,
    )?;
    crate::sinks::upload::continue_store_sequence(&mut spool, &store, &config).await?;
    let stats = Arc::new(UploadStats::default());
    let state_stats = Arc::new(StateStats::default());
    let pending = spool.pending()?;
    if !pending.is_empty() {
        info!(
            files = pending.len(),
            "Spool has files from an earlier run; uploading them first."
        );
    }
    let snapshot = Arc::new(Mutex::new(MetricsSnapshot::default()));
    let tracker = TaskTracker::new();

    if let Some(addr) = &config.metrics.listen {
        let listener = tokio::net::TcpListener::bind(addr)
            .await
            .map_err(|source| AppError::Listen {
                addr: addr.clone(),
                source,
            })?;
        info!(addr = %addr, "Metrics at http://{addr}/metrics");
        tracker.spawn(crate::telemetry::serve(
            listener,
            snapshot.clone(),
            shutdown.clone(),
        ));
    }

    let (input_tx, input_rx) = mpsc::channel::<RawInput>(config.pipeline.input_queue);
    let mut sources = 0;
    if let Some(sim) = &config.sources.simulator {
        sources += 1;
        let sim = Simulator::new(sim, now_micros());
        tracker.spawn(simulator_source(sim, input_tx.clone(), shutdown.clone()));
    }
    let source_stats = Arc::new(SourceStats::default());
    if let Ok(mut g) = snapshot.lock() {
        g.sources = source_stats.clone();
        g.health_grace = config.metrics.health_grace;
    }
    for s in &config.sources.serial {
        sources += 1;
        let settings = SerialSettings::from_section(s, config.limits.max_event_bytes);
        let source = SerialSource::new(settings, input_tx.clone(), source_stats.clone());
        tracker.spawn(source.run(shutdown.clone()));
    }
    let client_id = format!("pitchside-{}-{}", config.venue.id, config.venue.gateway_id);
    for (i, m) in config.sources.mqtt.iter().enumerate() {
        sources += 1;
        let key = format!("sources.mqtt[{i}].broker");
        let broker = BrokerSettings::new(&key, &m.broker, &client_id, false)?;
        let source = MqttSource::new(m, broker, input_tx.clone(), source_stats.clone());
        tracker.spawn(source.run(shutdown.clone()));
    }
    drop(input_tx);
    if sources == 0 {
        return Err(AppError::NoSources);
    }
    let (alert_settings_tx, alert_settings_rx) =
        tokio::sync::watch::channel(AlertSettings::from_section(&config.alerts));
    let alert_out = match &config.alerts.mqtt {
        Some(b) => {
            let id = format!("{client_id}-alerts");
            let broker = BrokerSettings::new("alerts.mqtt", b, &id, true)?;
            let (publisher, sender, rx) = AlertPublisher::new(
                &config.alerts,
                broker,
                &config.venue.id,
                &config.venue.gateway_id,
                source_stats.clone(),
            );
            tracker.spawn(publisher.with_reload(alert_settings_rx).run(rx));
            Some(sender)
        }
        None => None,
    };

    let (table_tx, mut table_rx) = mpsc::channel::<Batch>(config.pipeline.encode_queue);
    // Finished files go into the queue the encoder shares with the uploader;
    // this channel only wakes the uploader (and closes when the encoder ends).
    let (wake_tx, wake_rx) = mpsc::channel::<()>(1);
    let limits = SpoolLimits {
        root: config.output.spool_dir.clone(),
        max_bytes: config.output.spool_max_bytes,
        min_free_disk: config.output.min_free_disk,
        permanent_retry: Duration::from_micros(config.output.permanent_retry as u64),
    };
    let queue = SpoolQueue::new(pending, limits, stats.clone()).shared();
    let uploader = Uploader::with_queue(store.clone(), stats.clone(), queue.clone());
    tracker.spawn(uploader.run(wake_rx, shutdown.clone()));

    let mut writer = TableWriter::new(spool, config.output.snappy, config.output.max_rows_per_file)
        .with_queue(queue.clone());
    let enc_stats = stats.clone();
    let enc_state_stats = state_stats.clone();
    let spool_dir = config.output.spool_dir.clone();
    let checkpoint = match crate::state::checkpoint::read(&config.output.spool_dir) {
        Ok(c) => c,
        Err(e) => {
            state_stats
                .checkpoint_failures
                .fetch_add(1, Ordering::Relaxed);
            error!(error = %e, "Checkpoint not used; starting with empty state.");
            None
        }
    };
    let encoder = std::thread::Builder::new()
        .name("encoder".into())
        .spawn(move || {
            // One batch's files enter the queue together, so that eviction
            // sees every table of a flush before it picks a victim.
            let hand_over = |files: Vec<SpooledFile>| {
                if !files.is_empty() {
                    lock(&queue).insert_all(files);
                    let _ = wake_tx.try_send(());
                }
            };
            let failing = |stats: &UploadStats| {
                let _ = stats.spool_failing_since.compare_exchange(0, now_micros(), Ordering::Relaxed, Ordering::Relaxed);
            };
            while let Some(batch) = table_rx.blocking_recv() {
                let mut finished = Vec::new();
                for buf in &batch.tables {
                    match writer.append(buf, &enc_stats) {
                        Ok(closed) => {
                            enc_stats.spool_failing_since.store(0, Ordering::Relaxed);
                            finished.extend(closed);
                        }
                        // The writer has counted and logged the lost rows.
                        Err(_) => failing(&enc_stats),
                    }
                }
                if batch.flush {
                    match writer.close_all(&enc_stats) {
                        Ok(files) => {
                            finished.extend(files);
                            finished.extend(writer.take_orphans());
                            hand_over(std::mem::take(&mut finished));
                            // Every row of this state is durable now: so is the state.
                            if let Some(cp) = &batch.checkpoint {
                                match crate::state::checkpoint::write(&spool_dir, &cp.bytes) {
                                    Ok(()) => crate::state::journal::remove_before(&cp.journal_dir, cp.journal_generation),
                                    Err(e) => {
                                        enc_state_stats.checkpoint_failures.fetch_add(1, Ordering::Relaxed);
                                        error!(error = %e, "Checkpoint could not be written; the journal is kept and replayed from the previous one.")
                                    }
                                }
                            }
                        }
                        // The writer has counted and logged the lost rows; no
                        // checkpoint for a flush that did not complete.
                        Err(_) => failing(&enc_stats),
                    }
                }
                finished.extend(writer.take_orphans());
                hand_over(finished);
            }
        })
        .map_err(|source| AppError::Listen { addr: "encoder thread".into(), source })?;

    info!(
        venue = %config.venue.id,
        gateway = %config.venue.gateway_id,
        store = %store.url(),
        spool = %config.output.spool_dir.display(),
        "pitchside running; Ctrl-C to stop."
    );
    let heartbeat = Heartbeat::default();
    let (reload_tx, reload_rx) =
        tokio::sync::watch::channel(Arc::new(Reloadable::from_config(&config)));
    if let Some(control) = control {
        tracker.spawn(control_task(
            control,
            config.file.clone(),
            Reloaders {
                pipeline: reload_tx,
                alerts: alert_settings_tx,
                snapshot: snapshot.clone(),
            },
            shutdown.clone(),
        ));
    }
    let pipeline_task = tracker.spawn(pipeline_task(PipelineParts {
        reload: reload_rx,
        config,
        rx: input_rx,
        tables: table_tx,
        stats,
        state_stats,
        snapshot,
        alert_out,
        checkpoint,
        heartbeat: heartbeat.clone(),
    }));
    let notifier = Arc::new(Notifier::from_env());
    if let Some(period) = watchdog_interval() {
        tracker.spawn(feed_watchdog(
            notifier.clone(),
            period,
            heartbeat,
            shutdown.clone(),
        ));
    }
    notifier.notify("READY=1\nSTATUS=running");
    tracker.close();

    shutdown.cancelled().await;
    notifier.notify("STOPPING=1\nSTATUS=draining");
    info!("Draining: sources stopped; flushing tables, writing the checkpoint, uploading.");
    if tokio::time::timeout(GRACE, pipeline_task).await.is_err() {
        error!(
            grace_s = GRACE.as_secs(),
            "Pipeline stage did not drain in time."
        );
    }
    let joined = tokio::task::spawn_blocking(move || encoder.join());
    if tokio::time::timeout(GRACE, joined).await.is_err() {
        error!(
            grace_s = GRACE.as_secs(),
            "Encoder stage did not finish in time."
        );
    }
    if tokio::time::timeout(GRACE, tracker.wait()).await.is_err() {
        error!(
            grace_s = GRACE.as_secs(),
            "Uploader or a source did not stop in time."
        );
    }
    info!("Stopped.");
    Ok(())
}

async fn simulator_source(
    mut sim: Simulator,
    tx: mpsc::Sender<RawInput>,
    shutdown: CancellationToken,
) {
    let source: crate::model::SourceName = Arc::from("simulator");
    let mut tick = tokio::time::interval(Duration::from_millis(20));
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Skip);
    info!(kinds = ?sim.kinds(), "Simulator started.");
    loop {
        tokio::select! {
            _ = shutdown.cancelled() => break,
            _ = tick.tick() => {}
        }
        let now = now_micros();
        while sim.next_time() <= now {
            let (line, _) = sim.next_line();
            let input = RawInput {
                source: source.clone(),
                sensor_hint: None,
                payload: line.into_bytes(),
                received_at: now,
                framing_error: None,
                ack: None,
            };
            // A full queue makes the simulator wait: it has nothing to lose.
            if tx.send(input).await.is_err() {
                return;
            }
        }
    }
}

/// Where a reload sends what it changed.
struct Reloaders {
    pipeline: tokio::sync::watch::Sender<Arc<Reloadable>>,
    alerts: tokio::sync::watch::Sender<AlertSettings>,
    snapshot: Arc<Mutex<MetricsSnapshot>>,
}

/// Acts on SIGHUP, SIGUSR1 and SIGUSR2 until shutdown. `running` is the
/// config file in force (reloaded keys included).
async fn control_task(
    mut control: Control,
    mut running: crate::config::ConfigFile,
    to: Reloaders,
    shutdown: CancellationToken,
) {
    loop {
        tokio::select! {
            _ = shutdown.cancelled() => return,
            Some(()) = control.signals.hup.recv() => reload(&control, &mut running, &to),
            Some(()) = control.signals.usr1.recv() => log_status(&to.snapshot),
            Some(()) = control.signals.usr2.recv() => {
                info!("SIGUSR2 received: pitchside does not use it; ignored (SIGHUP reloads, SIGUSR1 logs a status summary).");
            }
        }
    }
}

/// SIGHUP: read the config again; apply what can change while running,
/// name what needs a restart, keep everything on a broken file.
fn reload(control: &Control, running: &mut crate::config::ConfigFile, to: &Reloaders) {
    let Some(load) = &control.load else {
        warn!("SIGHUP received, but this is the built-in demo config (no --config): nothing to reload.");
        return;
    };
    info!("SIGHUP received: reloading the config.");
    let new = match load() {
        Ok(c) => c,
        Err(e) => {
            // One log line: the problems joined, so journald keeps them together.
            let problems = e
                .to_string()
                .lines()
                .map(str::trim)
                .filter(|l| !l.is_empty() && *l != "|")
                .collect::<Vec<_>>()
                .join(" / ");
            error!(problems = %problems, "Config reload failed; still running with the previous config. Fix the file (pitchside check-config --config ...) and send SIGHUP again.");
            return;
        }
    };
    let plan = crate::config::reload::plan(running, &new.file);
    if plan.apply.is_empty() {
        info!("Config reloaded: nothing that can change while running changed.");
    } else {
        info!(changed = %plan.apply.join(", "), "Config reloaded; applied now.");
    }
    if !plan.restart.is_empty() {
        warn!(keys = %plan.restart.join(", "), "Config keys changed that need a restart to take effect (systemctl restart pitchside); running with their old values.");
    }
    if plan.apply.is_empty() {
        return;
    }
    to.pipeline
        .send_replace(Arc::new(Reloadable::from_config(&new)));
    to.alerts
        .send_replace(AlertSettings::from_section(&new.alerts));
    if let Ok(mut g) = to.snapshot.lock() {
        g.health_grace = new.metrics.health_grace;
    }
    if plan.apply.iter().any(|k| k == "log.level") {
        if let Err(why) = (control.set_log_level)(&new.log.level) {
            warn!("log.level not changed: {why}");
        }
    }
    *running = crate::config::reload::merge(running, &new.file);
}

/// SIGUSR1: one log line with health and the main counters.
fn log_status(snapshot: &Mutex<MetricsSnapshot>) {
    let s = snapshot.lock().map(|g| g.clone()).unwrap_or_default();
    let health = match crate::telemetry::health(&s, now_micros()) {
        Ok(()) => "ok".to_string(),
        Err(why) => format!("unhealthy: {why}"),
    };
    let down: Vec<String> = s
        .sources
        .down_sources(now_micros())
        .into_iter()
        .map(|(name, us)| format!("{name} ({} s)", us / 1_000_000))
        .collect();
    info!(
        health = %health,
        inputs = s.counters.input_rows,
        rejected = s.counters.rejected_total(),
        alerts = s.counters.alerts,
        fatigue_alerts = s.counters.fatigue_alerts,
        sources_down = %down.join(", "),
        spool_files = s.progress.spool_files,
        uploaded_files = s.uploaded_files_total,
        upload_failures = s.upload_failures_total,
        "Status (SIGUSR1)"
    );
}

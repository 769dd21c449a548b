//! Wiring for `pitchside run`: sources → bounded channel → pipeline task →
//! bounded channel → encoder thread → spool → uploader. Each task owns its
//! state; shutdown flows downstream as channels close.
//!
//! [`run_with`] reads as the list of start-up steps. The parts: `cli` (the
//! command line), `task` (the pipeline task) and `restore` (how it starts),
//! `alert_log` (the alert log line), `console` (the venue console's
//! commands and device statuses), `encoder` (the encoder thread),
//! `control` (SIGHUP reload, SIGUSR1 status), `simulator` (the built-in
//! source), `error` (why start-up fails).

pub mod cli;
pub mod control;
mod error;
mod simulator;

use crate::commands::run::control::{control_task, Reloaders};
use crate::commands::run::simulator::simulator_source;
use crate::config::reload::Reloadable;
use crate::config::Config;
use crate::daemon::encoder;
use crate::daemon::task::{pipeline_task, PipelineParts};
use crate::model::RawInput;
use crate::mqtt::conn::BrokerSettings;
use crate::sinks::alerts::{AlertPublisher, AlertSender, AlertSettings, AlertStats};
use crate::sinks::spool::queue::{SharedQueue, SpoolQueue};
use crate::sinks::spool::{Numbering, Spool, SpooledFile};
use crate::sinks::store::Store;
use crate::sinks::upload::{SpoolLimits, Uploader};
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
use tokio::sync::{mpsc, watch};
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;
use tracing::{error, info, warn};

pub use control::{Control, LoadConfig, SetLogLevel, Signals};
pub use error::AppError;

/// How long stages get to drain after shutdown before they are named as stuck.
pub const GRACE: Duration = Duration::from_secs(20);

/// What the stages of one `run` share.
struct Daemon {
    /// Every task but the encoder thread.
    tracker: TaskTracker,
    shutdown: CancellationToken,
    /// What `/metrics`, `/healthz` and SIGUSR1 show.
    snapshot: Arc<Mutex<MetricsSnapshot>>,
    stats: Arc<UploadStats>,
    state_stats: Arc<StateStats>,
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
    preflight(&config)?;
    let (store, spool, pending) = open_spool_and_store(&config).await?;
    let d = Daemon {
        tracker: TaskTracker::new(),
        shutdown,
        snapshot: Arc::new(Mutex::new(MetricsSnapshot::default())),
        stats: Arc::new(UploadStats::default()),
        state_stats: Arc::new(StateStats::default()),
    };
    (d.stats.seq_counter_failures).store(spool.unreadable_counters(), Ordering::Relaxed);
    serve_metrics(&config, &d).await?;
    let console =
        crate::console::start(&config, d.snapshot.clone(), &d.tracker, d.shutdown.clone()).await?;
    let input_rx = start_sources(&config, &d)?;
    let (alert_settings_tx, alert_out) = start_alerts(&config, &d)?;
    let (queue, wake_tx) = start_uploader(&config, store.clone(), pending, spool.numbering(), &d);
    let checkpoint = read_checkpoint(&config, &d.state_stats);
    let (table_tx, encoder) =
        encoder::start(&config, spool, queue, wake_tx, &d.stats, &d.state_stats)
            .map_err(encoder_failed)?;
    info!(
        venue = %config.venue.id,
        gateway = %config.venue.gateway_id,
        store = %store.url(),
        spool = %config.output.spool_dir.display(),
        "pitchside running; Ctrl-C to stop."
    );
    let heartbeat = Heartbeat::default();
    let (reload_tx, reload_rx) = watch::channel(Arc::new(Reloadable::from_config(&config)));
    if let Some(control) = control {
        d.tracker.spawn(control_task(
            control,
            config.file.clone(),
            Reloaders {
                pipeline: reload_tx,
                alerts: alert_settings_tx,
                snapshot: d.snapshot.clone(),
            },
            d.shutdown.clone(),
        ));
    }
    let pipeline = d.tracker.spawn(pipeline_task(PipelineParts {
        reload: reload_rx,
        config,
        rx: input_rx,
        tables: table_tx,
        stats: d.stats.clone(),
        state_stats: d.state_stats.clone(),
        snapshot: d.snapshot.clone(),
        alert_out,
        checkpoint,
        heartbeat: heartbeat.clone(),
        console,
    }));
    let notifier = notify_ready(&d, heartbeat);
    drain(d, &notifier, pipeline, encoder).await;
    Ok(())
}

/// The start-up checks `check-config` makes; warnings are logged.
fn preflight(config: &Config) -> Result<(), AppError> {
    let checks = crate::commands::preflight::preflight(config);
    for warning in &checks.warnings {
        warn!("{warning}");
    }
    checks.into_result()?;
    Ok(())
}

/// The encoder thread could not be started.
fn encoder_failed(source: std::io::Error) -> AppError {
    AppError::Listen {
        addr: "encoder thread".into(),
        source,
    }
}

/// Opens the store and the spool (continuing the store's file numbers);
/// returns them with the files an earlier run left in the spool.
async fn open_spool_and_store(
    config: &Config,
) -> Result<(Store, Spool, Vec<SpooledFile>), AppError> {
    let store = Store::open(config)?;
    let mut spool = Spool::open(
        &config.output.spool_dir,
        &config.venue.id,
        &config.venue.gateway_id,
    )?;
    crate::sinks::upload::continue_store_sequence(&mut spool, &store, config).await?;
    let pending = spool.pending()?;
    if !pending.is_empty() {
        info!(
            files = pending.len(),
            "Spool has files from an earlier run; uploading them first."
        );
    }
    Ok((store, spool, pending))
}

/// Serves `/metrics` and `/healthz` when `metrics.listen` is set.
async fn serve_metrics(config: &Config, d: &Daemon) -> Result<(), AppError> {
    if let Some(addr) = &config.metrics.listen {
        let listener = tokio::net::TcpListener::bind(addr)
            .await
            .map_err(|source| AppError::Listen {
                addr: addr.clone(),
                source,
            })?;
        // The bound address: with port 0 the system picked the port.
        let addr = listener
            .local_addr()
            .map_or(addr.clone(), |a| a.to_string());
        info!(addr = %addr, "Metrics at http://{addr}/metrics");
        d.tracker.spawn(crate::telemetry::serve(
            listener,
            d.snapshot.clone(),
            d.shutdown.clone(),
        ));
    }
    Ok(())
}

/// Starts every configured source on one bounded channel; returns its
/// receiving end. The sources' stats go into the metrics snapshot.
fn start_sources(config: &Config, d: &Daemon) -> Result<mpsc::Receiver<RawInput>, AppError> {
    let Daemon {
        tracker,
        shutdown,
        snapshot,
        ..
    } = d;
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
    let client_id = mqtt_client_id(config);
    for (i, m) in config.sources.mqtt.iter().enumerate() {
        sources += 1;
        let key = format!("sources.mqtt[{i}].broker");
        let broker = BrokerSettings::new(&key, &m.broker, &client_id, false)?;
        let source = MqttSource::new(
            m,
            broker,
            config.limits.max_event_bytes,
            input_tx.clone(),
            source_stats.clone(),
        );
        tracker.spawn(source.run(shutdown.clone()));
    }
    drop(input_tx);
    if sources == 0 {
        return Err(AppError::NoSources);
    }
    Ok(input_rx)
}

/// The MQTT client id of this gateway; the alert output adds `-alerts`.
fn mqtt_client_id(config: &Config) -> String {
    format!("pitchside-{}-{}", config.venue.id, config.venue.gateway_id)
}

/// Starts the MQTT alert publisher when `alerts.mqtt` is set (its stats go
/// into the metrics snapshot); returns where reloaded alert settings go, and
/// where the pipeline offers its alerts.
fn start_alerts(
    config: &Config,
    d: &Daemon,
) -> Result<(watch::Sender<AlertSettings>, Option<AlertSender>), AppError> {
    let tracker = &d.tracker;
    let alert_stats = Arc::new(AlertStats::default());
    if let Ok(mut g) = d.snapshot.lock() {
        g.alerts = alert_stats.clone();
    }
    let client_id = mqtt_client_id(config);
    let (alert_settings_tx, alert_settings_rx) =
        watch::channel(AlertSettings::from_config(&config.alerts));
    let alert_out = match &config.alerts.mqtt {
        Some(b) => {
            let id = format!("{client_id}-alerts");
            let broker = BrokerSettings::new("alerts.mqtt", b, &id, true)?;
            let (publisher, sender, rx) = AlertPublisher::new(
                &config.alerts,
                broker,
                &config.venue.id,
                &config.venue.gateway_id,
                alert_stats,
            );
            tracker.spawn(publisher.with_reload(alert_settings_rx).run(rx));
            Some(sender)
        }
        None => None,
    };
    Ok((alert_settings_tx, alert_out))
}

/// Starts the uploader on the spool queue it shares with the encoder;
/// returns the queue and the channel that wakes the uploader.
fn start_uploader(
    config: &Config,
    store: Store,
    pending: Vec<SpooledFile>,
    numbering: Numbering,
    d: &Daemon,
) -> (SharedQueue, mpsc::Sender<()>) {
    // Finished files go into the queue the encoder shares with the uploader;
    // this channel only wakes the uploader (and closes when the encoder ends).
    let (wake_tx, wake_rx) = mpsc::channel::<()>(1);
    let limits = SpoolLimits {
        root: config.output.spool_dir.clone(),
        max_bytes: config.output.spool_max_bytes,
        min_free_disk: config.output.min_free_disk,
        permanent_retry: Duration::from_micros(config.output.permanent_retry as u64),
    };
    let queue = SpoolQueue::new(pending, limits, d.stats.clone()).shared();
    let uploader = Uploader::with_queue(store, d.stats.clone(), queue.clone(), numbering);
    d.tracker.spawn(uploader.run(wake_rx, d.shutdown.clone()));
    (queue, wake_tx)
}

/// The checkpoint an earlier run left, if any; an unreadable one is
/// counted and logged, and the run starts with empty state.
fn read_checkpoint(config: &Config, state_stats: &StateStats) -> Option<Vec<u8>> {
    match crate::state::checkpoint::read(&config.output.spool_dir) {
        Ok(c) => c,
        Err(e) => {
            state_stats
                .checkpoint_failures
                .fetch_add(1, Ordering::Relaxed);
            error!(error = %e, "Checkpoint not used; starting with empty state.");
            None
        }
    }
}

/// Feeds the systemd watchdog (when it asks for it) and tells systemd the
/// gateway is ready.
fn notify_ready(d: &Daemon, heartbeat: Heartbeat) -> Arc<Notifier> {
    let notifier = Arc::new(Notifier::from_env());
    if let Some(period) = watchdog_interval() {
        d.tracker.spawn(feed_watchdog(
            notifier.clone(),
            period,
            heartbeat,
            d.shutdown.clone(),
        ));
    }
    notifier.notify("READY=1\nSTATUS=running");
    notifier
}

/// Waits for shutdown, then for the stages in flow order: sources stop on
/// the token, the pipeline flushes (with a checkpoint), the encoder
/// finishes its files, the uploader and the rest stop. A stage that takes
/// longer than [`GRACE`] is named in the log.
async fn drain(
    d: Daemon,
    notifier: &Notifier,
    pipeline: tokio::task::JoinHandle<()>,
    encoder: std::thread::JoinHandle<()>,
) {
    d.tracker.close();
    d.shutdown.cancelled().await;
    notifier.notify("STOPPING=1\nSTATUS=draining");
    info!("Draining: sources stopped; flushing tables, writing the checkpoint, uploading.");
    if tokio::time::timeout(GRACE, pipeline).await.is_err() {
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
    if tokio::time::timeout(GRACE, d.tracker.wait()).await.is_err() {
        error!(
            grace_s = GRACE.as_secs(),
            "Uploader or a source did not stop in time."
        );
    }
    info!("Stopped.");
}

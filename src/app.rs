//! Wiring for `pitchside run`: sources → bounded channel → pipeline task →
//! bounded channel → encoder thread → spool → uploader. Each task owns its
//! state; shutdown flows downstream as channels close.

use crate::config::Config;
use crate::model::RawInput;
use crate::pipeline_task::{pipeline_task, Batch, PipelineParts};
use crate::sinks::alerts_mqtt::AlertPublisher;
use crate::sinks::spool::{Spool, SpooledFile};
use crate::sinks::store::Store;
use crate::sinks::upload::{SpoolLimits, Uploader};
use crate::sinks::writer::TableWriter;
use crate::sources::mqtt::conn::BrokerSettings;
use crate::sources::mqtt::MqttSource;
use crate::sources::serial::{SerialSettings, SerialSource};
use crate::sources::simulator::Simulator;
use crate::sources::SourceStats;
use crate::telemetry::systemd::{feed_watchdog, watchdog_interval, Heartbeat, Notifier};
use crate::telemetry::{MetricsSnapshot, UploadStats};
use crate::timefmt::now_micros;
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};
use std::time::Duration;
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
    Mqtt(#[from] crate::sources::mqtt::conn::ConnError),
    /// No source is configured.
    #[error("{}", crate::preflight::NO_SOURCES)]
    NoSources,
    /// A start-up check failed (the same checks as `check-config`).
    #[error(transparent)]
    Preflight(#[from] crate::config::ConfigError),
}

/// How long stages get to drain after shutdown before they are named as stuck.
pub const GRACE: Duration = Duration::from_secs(20);

/// Runs the daemon until `shutdown` is cancelled, then drains and returns.
pub async fn run(config: Config, shutdown: CancellationToken) -> Result<(), AppError> {
    let checks = crate::preflight::preflight(&config);
    for warning in &checks.warnings {
        warn!("{warning}");
    }
    checks.into_result()?;
    let store = Store::open(&config)?;
    let mut spool = Spool::open(&config.spool_dir, &config.venue_id, &config.gateway_id)?;
    crate::sinks::upload::continue_store_sequence(&mut spool, &store, &config).await?;
    let stats = Arc::new(UploadStats::default());
    let pending = spool.pending()?;
    if !pending.is_empty() {
        info!(
            files = pending.len(),
            "Spool has files from an earlier run; uploading them first."
        );
    }
    let snapshot = Arc::new(Mutex::new(MetricsSnapshot::default()));
    let tracker = TaskTracker::new();

    if let Some(addr) = &config.metrics_listen {
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

    let (input_tx, input_rx) = mpsc::channel::<RawInput>(config.input_queue);
    let mut sources = 0;
    if let Some(sim) = &config.file.sources.simulator {
        sources += 1;
        let sim = Simulator::new(sim, now_micros());
        tracker.spawn(simulator_source(sim, input_tx.clone(), shutdown.clone()));
    }
    let source_stats = Arc::new(SourceStats::default());
    if let Ok(mut g) = snapshot.lock() {
        g.sources = source_stats.clone();
        g.health_grace = config.health_grace;
    }
    for s in &config.file.sources.serial {
        sources += 1;
        let settings = SerialSettings::from_section(s, config.max_event_bytes);
        let source = SerialSource::new(settings, input_tx.clone(), source_stats.clone());
        tracker.spawn(source.run(shutdown.clone()));
    }
    let client_id = format!("pitchside-{}-{}", config.venue_id, config.gateway_id);
    for (i, m) in config.file.sources.mqtt.iter().enumerate() {
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
    let alert_out = match &config.file.alerts.mqtt {
        Some(b) => {
            let id = format!("{client_id}-alerts");
            let broker = BrokerSettings::new("alerts.mqtt", b, &id, true)?;
            let (publisher, sender, rx) = AlertPublisher::new(
                &config.file.alerts,
                broker,
                &config.venue_id,
                &config.gateway_id,
                source_stats.clone(),
            );
            tracker.spawn(publisher.run(rx));
            Some(sender)
        }
        None => None,
    };

    let (table_tx, mut table_rx) = mpsc::channel::<Batch>(config.encode_queue);
    let (file_tx, file_rx) = mpsc::channel::<SpooledFile>(1024);
    let limits = SpoolLimits {
        root: config.spool_dir.clone(),
        max_bytes: config.spool_max_bytes,
        min_free_disk: config.min_free_disk,
        permanent_retry: Duration::from_micros(config.permanent_retry as u64),
    };
    let uploader = Uploader::new(store.clone(), stats.clone(), pending, limits);
    tracker.spawn(uploader.run(file_rx, shutdown.clone()));

    let mut writer = TableWriter::new(spool, config.snappy, config.max_rows_per_file);
    let enc_stats = stats.clone();
    let spool_dir = config.spool_dir.clone();
    let checkpoint = match crate::checkpoint::read(&config.spool_dir) {
        Ok(c) => c,
        Err(e) => {
            stats.checkpoint_failures.fetch_add(1, Ordering::Relaxed);
            error!(error = %e, "Checkpoint not used; starting with empty state.");
            None
        }
    };
    let encoder = std::thread::Builder::new()
        .name("encoder".into())
        .spawn(move || {
            let hand_over = |f: SpooledFile| {
                if file_tx.blocking_send(f).is_err() {
                    warn!("Uploader stopped; file stays in the spool for the next start.");
                }
            };
            while let Some(batch) = table_rx.blocking_recv() {
                for buf in &batch.tables {
                    match writer.append(buf, &enc_stats) {
                        Ok(closed) => {
                            enc_stats.spool_failing_since.store(0, Ordering::Relaxed);
                            closed.into_iter().for_each(hand_over)
                        }
                        // These rows are lost: say so loudly.
                        Err(e) => {
                            let _ = enc_stats.spool_failing_since.compare_exchange(0, now_micros(), Ordering::Relaxed, Ordering::Relaxed);
                            error!(table = buf.table.name(), rows = buf.rows, error = %e, "Rows could not be written; they are lost.")
                        }
                    }
                }
                if batch.flush {
                    match writer.close_all(&enc_stats) {
                        Ok(files) => {
                            files.into_iter().for_each(hand_over);
                            // Every row of this state is durable now: so is the state.
                            if let Some(cp) = &batch.checkpoint {
                                match crate::checkpoint::write(&spool_dir, &cp.bytes) {
                                    Ok(()) => crate::journal::remove_before(&cp.journal_dir, cp.journal_generation),
                                    Err(e) => error!(error = %e, "Checkpoint could not be written; the journal is kept and replayed from the previous one."),
                                }
                            }
                        }
                        Err(e) => {
                            let _ = enc_stats.spool_failing_since.compare_exchange(0, now_micros(), Ordering::Relaxed, Ordering::Relaxed);
                            error!(error = %e, "Table files could not be finished; their rows are lost.")
                        }
                    }
                }
            }
        })
        .map_err(|source| AppError::Listen { addr: "encoder thread".into(), source })?;

    info!(
        venue = %config.venue_id,
        gateway = %config.gateway_id,
        store = %store.url(),
        spool = %config.spool_dir.display(),
        "pitchside running; Ctrl-C to stop."
    );
    let heartbeat = Heartbeat::default();
    let pipeline_task = tracker.spawn(pipeline_task(PipelineParts {
        config,
        rx: input_rx,
        tables: table_tx,
        stats,
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

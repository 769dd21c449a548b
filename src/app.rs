//! Wiring for `pitchside run`: sources → bounded channel → pipeline task →
//! bounded channel → encoder thread → spool → uploader. Each task owns its
//! state; shutdown flows downstream as channels close.

use crate::config::Config;
use crate::journal::Recorder;
use crate::model::RawInput;
use crate::pipeline::{LiveAlert, Pipeline};
use crate::sinks::alerts_mqtt::{AlertPublisher, AlertSender};
use crate::sinks::spool::{Spool, SpooledFile};
use crate::sinks::store::Store;
use crate::sinks::upload::{SpoolLimits, Uploader};
use crate::sinks::writer::TableWriter;
use crate::sources::mqtt::conn::BrokerSettings;
use crate::sources::mqtt::MqttSource;
use crate::sources::serial::{SerialSettings, SerialSource};
use crate::sources::simulator::Simulator;
use crate::sources::SourceStats;
use crate::tables::TableBuffer;
use crate::telemetry::systemd::{feed_watchdog, watchdog_interval, Heartbeat, Notifier};
use crate::telemetry::{MetricsSnapshot, ProgressTracker, UploadStats};
use crate::timefmt::{format_rfc3339, now_micros};
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
    #[error(
        "no source configured: add [sources.simulator] (or a serial/MQTT source) to the config"
    )]
    NoSources,
}

/// How long stages get to drain after shutdown before they are named as stuck.
pub const GRACE: Duration = Duration::from_secs(20);

/// Runs the daemon until `shutdown` is cancelled, then drains and returns.
pub async fn run(config: Config, shutdown: CancellationToken) -> Result<(), AppError> {
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

/// What the pipeline task owns and talks to.
struct PipelineParts {
    config: Config,
    rx: mpsc::Receiver<RawInput>,
    tables: mpsc::Sender<Batch>,
    stats: Arc<UploadStats>,
    snapshot: Arc<Mutex<MetricsSnapshot>>,
    alert_out: Option<AlertSender>,
    checkpoint: Option<Vec<u8>>,
    heartbeat: Heartbeat,
}

async fn pipeline_task(parts: PipelineParts) {
    let PipelineParts {
        config,
        mut rx,
        tables,
        stats,
        snapshot,
        alert_out,
        checkpoint,
        heartbeat,
    } = parts;
    heartbeat.beat();
    let mut p = Pipeline::new(&config, true);
    let from = resume(&mut p, &config, checkpoint, &stats);
    // Inputs since that checkpoint are in the journal: replay them with the
    // clock they arrived at, rebuilding exactly the state the crash cut short.
    let sync_interval = Duration::from_micros(config.sync_interval.max(1) as u64);
    let (mut recorder, replayed) =
        Recorder::start(&config.spool_dir, from, sync_interval, |input| {
            p.process(&input, input.received_at);
        });
    if replayed > 0 {
        let _ = p.drain_alerts();
        info!(
            inputs = replayed,
            "Replayed the journal since the last checkpoint."
        );
    }
    let mut sync_tick = tokio::time::interval(sync_interval);
    let row_group = row_group_rows(&config);
    let mut progress = ProgressTracker::new(now_micros());
    let period = |us: i64| Duration::from_micros(us.max(1) as u64);
    let mut flush = tokio::time::interval(period(config.flush_interval));
    let mut report = tokio::time::interval(period(config.progress_interval));
    flush.tick().await;
    report.tick().await;
    let mut batch = Vec::with_capacity(256);
    loop {
        tokio::select! {
            n = rx.recv_many(&mut batch, 256) => {
                if n == 0 {
                    break;
                }
                heartbeat.beat();
                let t0 = std::time::Instant::now();
                let clock = now_micros();
                for mut input in batch.drain(..) {
                    recorder.record(&mut input);
                    p.process(&input, clock);
                }
                recorder.commit(false);
                progress.add_busy(t0.elapsed().as_micros() as u64);
                let alerts = p.drain_alerts();
                log_alerts(&alerts);
                // Never waits for the broker: a full alert queue drops and counts.
                if let Some(out) = alert_out.as_ref().filter(|_| !alerts.is_empty()) {
                    out.offer(alerts);
                }
                if p.max_buffered_rows() >= row_group {
                    send(&tables, p.take_tables(row_group), false).await;
                }
            }
            _ = sync_tick.tick() => recorder.commit(false),
            _ = flush.tick() => flush_with_checkpoint(&tables, &mut p, &mut recorder).await,
            _ = report.tick() => {
                heartbeat.beat();
                p.expire_idle();
                let row = progress.tick(now_micros(), &p, &stats);
                p.push_progress(&row);
                info!("{}", row.summary(stats.files_written.load(Ordering::Relaxed)));
                publish(&snapshot, &p, &row, &stats);
            }
        }
    }
    let row = progress.tick(now_micros(), &p, &stats);
    p.push_progress(&row);
    flush_with_checkpoint(&tables, &mut p, &mut recorder).await;
    info!(
        inputs = p.counters().input_rows,
        alerts = p.counters().alerts,
        "Pipeline drained; open windows are kept in the checkpoint."
    );
}

/// Rows the pipeline hands to the encoder at a time: one row group.
pub fn row_group_rows(config: &Config) -> usize {
    ROW_GROUP_ROWS.min(config.max_rows_per_file)
}

/// Rows per Parquet row group (and per buffer handed to the encoder).
pub const ROW_GROUP_ROWS: usize = 8_192;

/// Table buffers for the encoder; `flush` closes every open file after them.
#[derive(Debug)]
pub struct Batch {
    /// Row groups, one buffer per table.
    pub tables: Vec<TableBuffer>,
    /// Finish every open file after appending.
    pub flush: bool,
    /// The pipeline's state as of these rows, written once the files are
    /// durable, so that state and files always agree.
    pub checkpoint: Option<Checkpoint>,
}

async fn send(tx: &mpsc::Sender<Batch>, tables: Vec<TableBuffer>, flush: bool) {
    send_batch(
        tx,
        Batch {
            tables,
            flush,
            checkpoint: None,
        },
    )
    .await;
}

async fn send_batch(tx: &mpsc::Sender<Batch>, b: Batch) {
    if (b.flush || !b.tables.is_empty()) && tx.send(b).await.is_err() {
        error!("Encoder stopped; these rows are lost.");
    }
}

/// A flush with a checkpoint of the state the flushed rows came from; the
/// journal starts a new generation, and older ones go once it is durable.
async fn flush_with_checkpoint(
    tx: &mpsc::Sender<Batch>,
    p: &mut Pipeline,
    recorder: &mut Recorder,
) {
    let generation = recorder.rotate();
    let checkpoint = Some(Checkpoint {
        bytes: p.checkpoint(generation),
        journal_dir: recorder.dir().to_path_buf(),
        journal_generation: generation,
    });
    send_batch(
        tx,
        Batch {
            tables: p.take_tables(1),
            flush: true,
            checkpoint,
        },
    )
    .await;
}

/// A sealed checkpoint and the journal generations it makes unnecessary.
#[derive(Debug)]
pub struct Checkpoint {
    /// Sealed state.
    pub bytes: Vec<u8>,
    /// The journal folder.
    pub journal_dir: std::path::PathBuf,
    /// Generations before this one are covered by the checkpoint.
    pub journal_generation: u64,
}

/// Restores the checkpoint into a fresh pipeline; an unusable one is set
/// aside (ERROR, counted) and the pipeline starts empty. Returns the journal
/// generation to replay from.
fn resume(p: &mut Pipeline, config: &Config, body: Option<Vec<u8>>, stats: &UploadStats) -> u64 {
    let Some(body) = body else { return 0 };
    match p.restore(&body) {
        Ok(generation) => {
            info!(
                keys = p.detector().keys(),
                open_windows = p.windows().open_cells(),
                "Resumed from checkpoint: baselines, open windows and watermarks restored."
            );
            generation
        }
        Err(e) => {
            let path = crate::checkpoint::path(&config.spool_dir);
            let err = crate::checkpoint::set_aside(&path, e.0.to_string());
            stats.checkpoint_failures.fetch_add(1, Ordering::Relaxed);
            error!(error = %err, "Checkpoint not used; starting with empty state.");
            *p = Pipeline::new(config, true);
            0
        }
    }
}

fn publish(
    snapshot: &Mutex<MetricsSnapshot>,
    p: &Pipeline,
    row: &crate::telemetry::ProgressRow,
    s: &UploadStats,
) {
    if let Ok(mut g) = snapshot.lock() {
        g.counters = p.counters().clone();
        g.progress = row.clone();
        g.uploaded_files_total = s.uploaded_files.load(Ordering::Relaxed);
        g.upload_failures_total = s.upload_failures.load(Ordering::Relaxed);
        g.files_written_total = s.files_written.load(Ordering::Relaxed);
        g.spool_evictions_total = s.spool_evictions.load(Ordering::Relaxed);
        g.checkpoint_failures_total = s.checkpoint_failures.load(Ordering::Relaxed);
        g.spool_failing_since = s.spool_failing_since.load(Ordering::Relaxed);
    }
}

fn log_alerts(alerts: &[LiveAlert]) {
    for a in alerts {
        match a {
            LiveAlert::ZScore(a) => info!(
                sensor = %a.sensor,
                device = %a.device_id,
                metric = %a.metric,
                value = a.value,
                z = format!("{:.2}", a.z_score),
                at = %format_rfc3339(a.event_time),
                "ALERT anomaly"
            ),
            LiveAlert::Fatigue(f) => info!(
                match_id = f.match_id,
                player = f.player_id,
                name = f.player_name.as_deref().unwrap_or(""),
                heart_rate_mean = format!("{:.1}", f.heart_rate_mean),
                baseline = format!("{:.1}", f.finding.baseline_mean),
                window = %format_rfc3339(f.window_start),
                "ALERT fatigue"
            ),
        }
    }
}

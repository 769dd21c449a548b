//! The pipeline task of `pitchside run`: takes inputs from the sources,
//! journals them, runs the [`Pipeline`], hands row groups and flushes (with
//! checkpoints) to the encoder, publishes alerts and progress.

use crate::config::Config;
use crate::daemon::alert_log::log_alerts;
use crate::daemon::batch::{flush_with_checkpoint, send, send_replayed, Batch};
use crate::daemon::restore::{restore, sync_interval};
use crate::model::RawInput;
use crate::pipeline::{clock_input, ClockChange, Pipeline};
use crate::sinks::alerts::{AlertSender, NotifyCooldown};
use crate::sinks::writer::row_group_limit;
use crate::sinks::UploadStats;
use crate::state::journal::Recorder;
use crate::state::StateStats;
use crate::tables::RowGroupLimit;
use crate::telemetry::systemd::Heartbeat;
use crate::telemetry::{MetricsSnapshot, ProgressTracker};
use crate::util::clock::{ClockWatch, KernelClock, StepWatch};
use crate::util::time::now_micros;
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::sync::mpsc;
use tracing::info;

/// What the pipeline task owns and talks to.
pub struct PipelineParts {
    /// The validated config the gateway started with.
    pub config: Config,
    /// The sources' inputs (bounded: `pipeline.input_queue`).
    pub rx: mpsc::Receiver<RawInput>,
    /// Batches to the encoder (bounded: `pipeline.encode_queue`).
    pub tables: mpsc::Sender<Batch>,
    /// Upload counters, shared with the uploader and telemetry.
    pub stats: Arc<UploadStats>,
    /// Journal and checkpoint counters.
    pub state_stats: Arc<StateStats>,
    /// The metrics snapshot this task refreshes for `/metrics` and the console.
    pub snapshot: Arc<Mutex<MetricsSnapshot>>,
    /// Alerts out over MQTT, when `[alerts.mqtt]` is set.
    pub alert_out: Option<AlertSender>,
    /// The checkpoint to restore from, if the spool had one.
    pub checkpoint: Option<Vec<u8>>,
    /// The systemd watchdog's heartbeat, fed as the task makes progress.
    pub heartbeat: Heartbeat,
    /// Reloaded settings (SIGHUP); the current value is already in `config`.
    pub reload: tokio::sync::watch::Receiver<Arc<crate::config::reload::Reloadable>>,
    /// The venue console, when `console.listen` is set.
    pub console: Option<crate::console::ConsoleLink>,
}

/// Runs until the sources' channel closes, then flushes every table with a
/// final checkpoint.
pub async fn pipeline_task(parts: PipelineParts) {
    let PipelineParts {
        config,
        mut rx,
        tables,
        stats,
        state_stats,
        snapshot,
        alert_out,
        checkpoint,
        heartbeat,
        mut reload,
        console,
    } = parts;
    let (console, mut commands) = console.map(|c| (c.feed, c.commands)).unzip();
    let mut reload_open = true;
    heartbeat.beat();
    let row_group = row_group_limit(&config);
    let (p, recorder) = restore(&config, checkpoint, &state_stats, &mut |p| {
        send_replayed(&tables, p, row_group, &stats)
    });
    let mut sync_tick = tokio::time::interval(sync_interval(&config));
    let synced = p.clock_synchronized();
    let mut task = Task {
        notify: notify_cooldown(&config, &snapshot),
        p,
        recorder,
        tables,
        stats,
        state_stats,
        snapshot,
        alert_out,
        console,
        heartbeat,
        row_group,
        progress: ProgressTracker::new(now_micros()),
        clock: ClockWatch::new(KernelClock::default(), synced),
        steps: StepWatch::default(),
    };
    task.watch_clock(now_micros());
    let period = |us: i64| Duration::from_micros(us.max(1) as u64);
    let mut flush = tokio::time::interval(period(config.output.flush_interval));
    let mut report = tokio::time::interval(period(config.metrics.progress_interval));
    // Once a second: device health on the wall clock too (silence is noticed
    // when nothing arrives), then the device statuses to the console.
    let mut second = tokio::time::interval(Duration::from_secs(1));
    second.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Skip);
    flush.tick().await;
    report.tick().await;
    let mut batch = Vec::with_capacity(256);
    loop {
        tokio::select! {
            n = rx.recv_many(&mut batch, 256) => {
                if n == 0 {
                    break;
                }
                task.take(&mut batch).await;
            }
            r = reload.changed(), if reload_open => match r {
                Ok(()) => {
                    let new = reload.borrow_and_update().clone();
                    task.apply_reload(&new);
                }
                Err(_) => reload_open = false,
            },
            _ = sync_tick.tick() => task.recorder.commit(false),
            _ = flush.tick() => task.flush().await,
            _ = report.tick() => task.report(),
            cmd = next_command(&mut commands) => match cmd {
                Some(cmd) => super::console_commands::handle(&mut task.p, &mut task.recorder, cmd),
                None => commands = None,
            },
            _ = second.tick() => task.every_second(),
        }
    }
    task.finish().await;
}

/// `alerts.notify_cooldown`, counting into the alert output's stats.
fn notify_cooldown(config: &Config, snapshot: &Mutex<MetricsSnapshot>) -> NotifyCooldown {
    let alert_stats = snapshot
        .lock()
        .map(|g| g.alerts.clone())
        .unwrap_or_default();
    NotifyCooldown::new(
        config.alerts.notify_cooldown,
        config.detector.max_keys,
        alert_stats,
    )
}

/// The pipeline task's state between events.
struct Task {
    p: Pipeline,
    recorder: Recorder,
    tables: mpsc::Sender<Batch>,
    stats: Arc<UploadStats>,
    state_stats: Arc<StateStats>,
    snapshot: Arc<Mutex<MetricsSnapshot>>,
    alert_out: Option<AlertSender>,
    /// `alerts.notify_cooldown` before the log line, MQTT and the console.
    notify: NotifyCooldown,
    console: Option<crate::console::ConsoleFeed>,
    heartbeat: Heartbeat,
    /// When a table's rows go to the encoder as a row group.
    row_group: RowGroupLimit,
    progress: ProgressTracker,
    /// Whether the kernel's clock is synchronised (asked at most once a second).
    clock: ClockWatch,
    /// Steps of the wall clock.
    steps: StepWatch,
}

impl Task {
    /// Journals and processes inputs; logs and offers the alerts they
    /// raised; sends full row groups to the encoder.
    async fn take(&mut self, batch: &mut Vec<RawInput>) {
        self.heartbeat.beat();
        let t0 = std::time::Instant::now();
        let clock = now_micros();
        self.watch_clock(clock);
        for mut input in batch.drain(..) {
            self.recorder.record(&mut input);
            self.p.process(&input, clock);
        }
        self.recorder.commit(false);
        self.progress.add_busy(t0.elapsed().as_micros() as u64);
        self.send_alerts(clock);
        if self.p.tables_due(self.row_group) {
            let tables = self.p.take_tables(self.row_group);
            send(&self.tables, tables, false, &self.stats).await;
        }
    }

    /// Asks whether the clock is synchronised and whether it stepped; a
    /// change is journaled first (so that a replay of the journal judges
    /// inputs as they were judged here), then applied to the pipeline.
    fn watch_clock(&mut self, clock: crate::model::Micros) {
        let stepped = self.steps.observe(clock, std::time::Instant::now());
        let synced = self.clock.poll(clock);
        let changes = [
            stepped.map(ClockChange::Stepped),
            synced.map(ClockChange::Synchronized),
        ];
        for change in changes.into_iter().flatten() {
            self.recorder.record(&mut clock_input(change, clock));
            self.p.clock_changed(change, clock);
        }
    }

    /// Logs and offers the alerts raised since the last call, past
    /// `alerts.notify_cooldown`.
    fn send_alerts(&mut self, clock: crate::model::Micros) {
        let alerts = self.notify.filter(self.p.drain_alerts(), clock);
        log_alerts(&alerts);
        if let Some(console) = &self.console {
            console.offer(&alerts);
        }
        // Never waits for the broker: a full alert queue drops and counts.
        if let Some(out) = self.alert_out.as_ref().filter(|_| !alerts.is_empty()) {
            out.offer(alerts);
        }
    }

    /// Once a second: the clock's state and steps, device health, the
    /// console's device statuses.
    fn every_second(&mut self) {
        self.watch_clock(now_micros());
        self.check_health();
        self.publish_console();
    }

    /// Devices silent for `health.silent_after` are reported.
    fn check_health(&mut self) {
        let now = now_micros();
        self.p.check_health(now);
        self.send_alerts(now);
    }

    /// Device statuses to the console.
    fn publish_console(&self) {
        if let Some(feed) = &self.console {
            super::console_commands::publish(&self.p, feed);
        }
    }

    /// Settings a SIGHUP reload changed.
    fn apply_reload(&mut self, new: &crate::config::reload::Reloadable) {
        self.p.apply_reload(new);
        info!(
            threshold = new.detector.threshold,
            ranges = new.limits.ranges.len(),
            "Pipeline settings reloaded."
        );
    }

    async fn flush(&mut self) {
        flush_with_checkpoint(&self.tables, &mut self.p, &mut self.recorder, &self.stats).await
    }

    /// Every `metrics.progress_interval`: idle keys expire, a progress row
    /// is written and logged, the metrics snapshot is updated.
    fn report(&mut self) {
        self.heartbeat.beat();
        self.p.expire_idle();
        let row = self.progress.tick(now_micros(), &self.p, &self.stats);
        self.p.push_progress(&row);
        info!(
            "{}",
            row.summary(self.stats.files_written.load(Ordering::Relaxed))
        );
        publish(
            &self.snapshot,
            &self.p,
            &row,
            (&self.stats, &self.state_stats),
        );
    }

    /// The sources are done: a last progress row, a last flush with checkpoint.
    async fn finish(mut self) {
        let row = self.progress.tick(now_micros(), &self.p, &self.stats);
        self.p.push_progress(&row);
        self.flush().await;
        info!(
            inputs = self.p.counters().input_rows,
            alerts = self.p.counters().alerts,
            "Pipeline drained; open windows are kept in the checkpoint."
        );
    }
}

/// The next console command; never, without a console.
async fn next_command(
    rx: &mut Option<mpsc::Receiver<crate::console::Command>>,
) -> Option<crate::console::Command> {
    match rx {
        Some(rx) => rx.recv().await,
        None => std::future::pending().await,
    }
}

fn publish(
    snapshot: &Mutex<MetricsSnapshot>,
    p: &Pipeline,
    row: &crate::tables::ProgressRow,
    (s, st): (&UploadStats, &StateStats),
) {
    if let Ok(mut g) = snapshot.lock() {
        g.counters = p.counters().clone();
        g.progress = row.clone();
        g.uploaded_files_total = s.uploaded_files.load(Ordering::Relaxed);
        g.upload_failures_total = s.upload_failures.load(Ordering::Relaxed);
        g.files_written_total = s.files_written.load(Ordering::Relaxed);
        g.spool_evictions_total = s.spool_evictions.load(Ordering::Relaxed);
        g.checkpoint_failures_total = st.checkpoint_failures.load(Ordering::Relaxed);
        g.spool_failing_since = s.spool_failing_since.load(Ordering::Relaxed);
        g.lost_rows_total = std::array::from_fn(|i| s.lost_rows[i].load(Ordering::Relaxed));
        g.vanished_files_total = s.vanished_files.load(Ordering::Relaxed);
        g.upload_conflicts_total = s.upload_conflicts.load(Ordering::Relaxed);
        g.upload_stuck_files = s.stuck_files.load(Ordering::Relaxed);
        g.seq_counter_failures_total = s.seq_counter_failures.load(Ordering::Relaxed);
        g.journal_down_since = st.journal_down_since.load(Ordering::Relaxed);
        g.unjournaled_inputs_total = st.unjournaled_inputs.load(Ordering::Relaxed);
        g.journal_failures_total = st.journal_failures.load(Ordering::Relaxed);
    }
}

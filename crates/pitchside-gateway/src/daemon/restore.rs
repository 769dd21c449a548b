//! How the pipeline task of `pitchside run` starts: the state of the last
//! run restored from its checkpoint, the journal since then replayed, and
//! the time the gateway was down marked on the windows it overlaps.

use crate::config::Config;
use crate::pipeline::Pipeline;
use crate::state::journal::Recorder;
use crate::state::StateStats;
use crate::util::time::{format_rfc3339, now_micros};
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Duration;
use tracing::{error, info};

/// How often the journal is made durable (`output.sync_interval`).
pub fn sync_interval(config: &Config) -> Duration {
    Duration::from_micros(config.output.sync_interval.max(1) as u64)
}

/// How many replayed inputs between two offers of full row groups.
const HAND_OVER_EVERY: u32 = 1024;

/// The pipeline as the last run left it: its checkpoint restored, the
/// journal since then replayed, the downtime between marked. Returns it
/// with the journal recorder of this run. Every [`HAND_OVER_EVERY`] inputs
/// of the replay, `hand_over` may take the pipeline's full row groups to
/// the encoder, so that a long journal is not held in memory as rows.
pub fn restore(
    config: &Config,
    checkpoint: Option<Vec<u8>>,
    state_stats: &Arc<StateStats>,
    hand_over: &mut dyn FnMut(&mut Pipeline),
) -> (Pipeline, Recorder) {
    let started = now_micros();
    // Before this run writes any journal file or checkpoint.
    let last_ran = crate::state::downtime::last_activity(&config.output.spool_dir);
    let mut p = Pipeline::new(config, true);
    let from = resume(&mut p, config, checkpoint, state_stats);
    let (mut since, mut inputs) = (0u32, 0u64);
    // Inputs since that checkpoint are in the journal: replay them with the
    // clock they arrived at, rebuilding exactly the state the crash cut short.
    let (recorder, replayed) = Recorder::start(
        &config.output.spool_dir,
        from,
        (sync_interval(config), config.output.max_journal_bytes),
        state_stats.clone(),
        |input| {
            inputs += u64::from(replay_one(&mut p, &input));
            since += 1;
            if since == HAND_OVER_EVERY {
                since = 0;
                hand_over(&mut p);
            }
        },
    );
    if replayed > 0 {
        let _ = p.drain_alerts();
        info!(
            inputs,
            records = replayed,
            "Replayed the journal since the last checkpoint."
        );
    }
    note_downtime(&mut p, last_ran, started);
    (p, recorder)
}

/// One journal record: a sensor input to the pipeline, a console ack to
/// `alert_acks`, a change of the clock (its state, a step) to the pipeline.
/// `false` for a clock record (not an input).
fn replay_one(p: &mut Pipeline, input: &crate::model::RawInput) -> bool {
    use crate::console::journal::{journaled, Journaled};
    if let Some(change) = crate::pipeline::clock_record(input) {
        p.clock_changed(change, input.received_at);
        return false;
    }
    match journaled(input) {
        Journaled::Input => p.process(input, input.received_at),
        Journaled::Ack(a) => {
            p.ack(&a);
        }
        Journaled::Broken => {
            tracing::warn!("A console ack in the journal cannot be read; skipped.")
        }
    }
    true
}

/// Marks windows overlapping the time since the last run (after the journal
/// replay, so replayed windows come out as the last run would have written them).
fn note_downtime(p: &mut Pipeline, last_ran: Option<i64>, started: i64) {
    match last_ran {
        None => info!(
            "No earlier state in output.spool_dir: windows that began before now are marked as partial (gateway_downtime_ms)."
        ),
        Some(t) if t > started => tracing::warn!(
            last_write = %format_rfc3339(t),
            "The clock is behind the last state this gateway wrote (no real-time clock?): the downtime before this start is unknown and not marked."
        ),
        Some(t) => info!(
            from = %format_rfc3339(t),
            seconds = (started - t) / 1_000_000,
            "Gateway was not running since its last durable write: windows overlapping that time are marked (gateway_downtime_ms)."
        ),
    }
    p.add_downtime(last_ran.unwrap_or(i64::MIN), started);
}

/// Restores the checkpoint into a fresh pipeline; an unusable one is set
/// aside (ERROR, counted) and the pipeline starts empty. Returns the journal
/// generation to replay from.
fn resume(p: &mut Pipeline, config: &Config, body: Option<Vec<u8>>, stats: &StateStats) -> u64 {
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
            let path = crate::state::checkpoint::path(&config.output.spool_dir);
            let err = crate::state::checkpoint::set_aside(&path, e.0.to_string());
            stats.checkpoint_failures.fetch_add(1, Ordering::Relaxed);
            error!(error = %err, "Checkpoint not used; starting with empty state.");
            *p = Pipeline::new(config, true);
            0
        }
    }
}

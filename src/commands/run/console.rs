//! The pipeline task's side of the venue console: carrying out its
//! commands (ack, pause, resume) between batches, and the device statuses
//! it is sent once a second.

use crate::console::journal::ack_input;
use crate::console::{Command, ConsoleFeed};
use crate::pipeline::console_rows::AckRecord;
use crate::pipeline::Pipeline;
use crate::state::journal::Recorder;
use crate::util::time::now_micros;

/// Carries out one console command. An ack is journalled and fsynced
/// before it is written to `alert_acks` and answered, so that a crash after
/// the console's 200 loses nothing (journal replay writes it again).
pub(super) fn handle(p: &mut Pipeline, recorder: &mut Recorder, cmd: Command) {
    match cmd {
        Command::Ack {
            alert_id,
            by,
            note,
            reply,
        } => {
            let record = AckRecord {
                alert_id,
                by,
                note,
                acked_at: now_micros(),
            };
            recorder.record(&mut ack_input(&record));
            recorder.commit(true);
            p.ack(&record);
            let _ = reply.send(record);
        }
        Command::Pause { reply } => {
            health::pause(p, now_micros());
            tracing::info!("Device health paused from the console: no device is reported silent until resumed.");
            let _ = reply.send(health::paused(p));
        }
        Command::Resume { reply } => {
            health::resume(p, now_micros());
            tracing::info!("Device health resumed from the console: silence is counted from now.");
            let _ = reply.send(health::paused(p));
        }
    }
}

/// Once a second: the device statuses to the console (which sends its
/// `state` event on them).
pub(super) fn publish(p: &Pipeline, feed: &ConsoleFeed) {
    feed.devices(health::statuses(p), health::paused(p));
}

/// The adapter to the health tracker (helper "health", `pipeline/health/`);
/// on this branch it calls `pipeline/health_placeholder.rs`.
mod health {
    use crate::model::Micros;
    use crate::pipeline::{DeviceStatus, Pipeline};

    pub(super) fn statuses(p: &Pipeline) -> Vec<DeviceStatus> {
        p.device_statuses()
    }

    pub(super) fn pause(p: &mut Pipeline, at: Micros) {
        p.pause_health(at);
    }

    pub(super) fn resume(p: &mut Pipeline, at: Micros) {
        p.resume_health(at);
    }

    pub(super) fn paused(p: &Pipeline) -> bool {
        p.health_paused()
    }
}

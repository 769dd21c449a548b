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
/// the console's 200 loses nothing (journal replay writes it again). An ack
/// of an alert by someone who already acked it (a retry after a 503 or a
/// lost answer) is answered with the first record and written nowhere.
pub fn handle(p: &mut Pipeline, recorder: &mut Recorder, cmd: Command) {
    match cmd {
        Command::Ack {
            alert_id,
            by,
            note,
            reply,
        } => {
            if let Some(first) = p.acked(&alert_id, &by) {
                tracing::debug!(
                    alert_id,
                    by,
                    "Console ack repeated; answered with the first."
                );
                let _ = reply.send(first.clone());
                return;
            }
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
            // The pipeline logs the pause (and the resume) itself.
            p.pause_health(now_micros());
            let _ = reply.send(p.health_paused());
        }
        Command::Resume { reply } => {
            p.resume_health(now_micros());
            let _ = reply.send(p.health_paused());
        }
    }
}

/// Once a second: the players' load and the device statuses to the
/// console (which sends its `state` event on the statuses).
pub fn publish(p: &Pipeline, feed: &ConsoleFeed) {
    feed.load(p.load_statuses());
    feed.devices(p.device_statuses(), p.health_paused());
}

//! The pipeline → encoder hand-over of `pitchside run`: a [`Batch`] of row
//! groups (and, at a flush, the [`Checkpoint`] of the state they came from)
//! sent over the bounded `pipeline.encode_queue`; rows the encoder can no
//! longer take are counted as lost.

use crate::pipeline::Pipeline;
use crate::sinks::UploadStats;
use crate::state::journal::Recorder;
use crate::tables::{RowGroupLimit, TableBuffer};
use std::sync::atomic::Ordering;
use tokio::sync::mpsc;
use tracing::error;

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

/// Sends rows to the encoder without a checkpoint (counted as lost if the
/// encoder has stopped).
pub async fn send(
    tx: &mpsc::Sender<Batch>,
    tables: Vec<TableBuffer>,
    flush: bool,
    stats: &UploadStats,
) {
    send_batch(
        tx,
        Batch {
            tables,
            flush,
            checkpoint: None,
        },
        stats,
    )
    .await;
}

async fn send_batch(tx: &mpsc::Sender<Batch>, b: Batch, stats: &UploadStats) {
    if b.flush || !b.tables.is_empty() {
        if let Err(lost) = tx.send(b).await {
            count_lost(&lost.0, stats);
        }
    }
}

/// Full row groups of the journal replay to the encoder, as [`Task::take`]
/// sends them, waiting for a place in `pipeline.encode_queue` (the replay
/// is synchronous: `block_in_place` on the multi-thread runtime `run` uses;
/// on another runtime the rows wait for the first flush).
pub fn send_replayed(
    tx: &mpsc::Sender<Batch>,
    p: &mut Pipeline,
    limit: RowGroupLimit,
    stats: &UploadStats,
) {
    let flavor = tokio::runtime::Handle::try_current().map(|h| h.runtime_flavor());
    if !matches!(flavor, Ok(tokio::runtime::RuntimeFlavor::MultiThread)) || !p.tables_due(limit) {
        return;
    }
    let b = Batch {
        tables: p.take_tables(limit),
        flush: false,
        checkpoint: None,
    };
    if let Err(lost) = tokio::task::block_in_place(|| tx.blocking_send(b)) {
        count_lost(&lost.0, stats);
    }
}

/// Counts and logs the rows of a batch the encoder did not take.
fn count_lost(b: &Batch, stats: &UploadStats) {
    let mut rows = 0;
    for t in &b.tables {
        rows += t.rows;
        stats.lost_rows[t.table.index()].fetch_add(t.rows as u64, Ordering::Relaxed);
    }
    error!(
        rows,
        "Encoder stopped; these rows are lost (counted in pitchside_lost_rows_total)."
    );
}

/// A flush with a checkpoint of the state the flushed rows came from; the
/// journal starts a new generation, and older ones go once it is durable.
pub async fn flush_with_checkpoint(
    tx: &mpsc::Sender<Batch>,
    p: &mut Pipeline,
    recorder: &mut Recorder,
    stats: &UploadStats,
) {
    let generation = recorder.rotate();
    let checkpoint = Some(Checkpoint {
        bytes: crate::state::checkpoint::seal(&p.snapshot(generation)),
        journal_dir: recorder.dir().to_path_buf(),
        journal_generation: generation,
    });
    send_batch(
        tx,
        Batch {
            tables: p.take_tables(RowGroupLimit::ANY),
            flush: true,
            checkpoint,
        },
        stats,
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

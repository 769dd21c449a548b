//! The encoder thread of `pitchside run`: appends the pipeline's row groups
//! to Parquet files in the spool, hands finished files to the uploader's
//! queue, and writes each flush's checkpoint once its rows are durable.

use crate::config::Config;
use crate::daemon::batch::{Batch, Checkpoint};
use crate::sinks::spool::queue::{lock, SharedQueue};
use crate::sinks::spool::{Spool, SpooledFile};
use crate::sinks::writer::TableWriter;
use crate::sinks::UploadStats;
use crate::state::StateStats;
use crate::util::time::now_micros;
use std::path::PathBuf;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use tokio::sync::mpsc;
use tracing::error;

/// Starts the encoder thread, writing to `spool` and handing finished files
/// to `queue` (waking the uploader); returns where the pipeline task sends
/// it batches (`pipeline.encode_queue`), and the thread. The thread ends
/// when that sender is dropped.
pub fn start(
    config: &Config,
    spool: Spool,
    queue: SharedQueue,
    wake: mpsc::Sender<()>,
    stats: &Arc<UploadStats>,
    state_stats: &Arc<StateStats>,
) -> std::io::Result<(mpsc::Sender<Batch>, std::thread::JoinHandle<()>)> {
    let (table_tx, table_rx) = mpsc::channel::<Batch>(config.pipeline.encode_queue);
    let writer = TableWriter::new(spool, config.output.snappy, config.output.max_rows_per_file)
        .with_queue(queue.clone());
    let encoder = Encoder {
        batches: table_rx,
        writer,
        queue,
        wake,
        spool_dir: config.output.spool_dir.clone(),
        stats: stats.clone(),
        state_stats: state_stats.clone(),
    };
    let thread = std::thread::Builder::new()
        .name("encoder".into())
        .spawn(move || encoder.run())?;
    Ok((table_tx, thread))
}

/// What the encoder thread owns and talks to.
struct Encoder {
    /// Row groups and flushes from the pipeline task.
    batches: mpsc::Receiver<Batch>,
    /// Parquet files in the spool.
    writer: TableWriter,
    /// The queue the encoder shares with the uploader.
    queue: SharedQueue,
    /// Wakes the uploader (and closes when the encoder ends).
    wake: mpsc::Sender<()>,
    /// Where the checkpoint is written.
    spool_dir: PathBuf,
    stats: Arc<UploadStats>,
    state_stats: Arc<StateStats>,
}

impl Encoder {
    fn run(mut self) {
        while let Some(batch) = self.batches.blocking_recv() {
            let mut finished = Vec::new();
            for buf in &batch.tables {
                match self.writer.append(buf, &self.stats) {
                    Ok(closed) => {
                        self.stats.spool_failing_since.store(0, Ordering::Relaxed);
                        finished.extend(closed);
                    }
                    // The writer has counted and logged the lost rows.
                    Err(_) => self.failing(),
                }
            }
            if batch.flush {
                self.flush(&mut finished, batch.checkpoint.as_ref());
            }
            finished.extend(self.writer.take_orphans());
            self.hand_over(finished);
        }
    }

    /// Closes every open file and hands them over; then, every row of this
    /// state being durable, writes the state's checkpoint.
    fn flush(&mut self, finished: &mut Vec<SpooledFile>, checkpoint: Option<&Checkpoint>) {
        match self.writer.close_all(&self.stats) {
            Ok(files) => {
                finished.extend(files);
                finished.extend(self.writer.take_orphans());
                self.hand_over(std::mem::take(finished));
                if let Some(cp) = checkpoint {
                    self.write_checkpoint(cp);
                }
            }
            // The writer has counted and logged the lost rows; no
            // checkpoint for a flush that did not complete.
            Err(_) => self.failing(),
        }
    }

    fn write_checkpoint(&self, cp: &Checkpoint) {
        match crate::state::checkpoint::write(&self.spool_dir, &cp.bytes) {
            Ok(()) => crate::state::journal::remove_before(&cp.journal_dir, cp.journal_generation),
            Err(e) => {
                self.state_stats
                    .checkpoint_failures
                    .fetch_add(1, Ordering::Relaxed);
                error!(error = %e, "Checkpoint could not be written; the journal is kept and replayed from the previous one.")
            }
        }
    }

    /// One batch's files enter the queue together, so that eviction sees
    /// every table of a flush before it picks a victim.
    fn hand_over(&self, files: Vec<SpooledFile>) {
        if !files.is_empty() {
            lock(&self.queue).insert_all(files);
            let _ = self.wake.try_send(());
        }
    }

    /// Marks the spool as failing since now, unless it already was.
    fn failing(&self) {
        let _ = self.stats.spool_failing_since.compare_exchange(
            0,
            now_micros(),
            Ordering::Relaxed,
            Ordering::Relaxed,
        );
    }
}

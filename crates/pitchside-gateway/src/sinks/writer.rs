//! The encoder stage: table buffers → row groups of open Parquet files in
//! the spool's `tmp/` → complete, fsynced files under `outgoing/`.
//!
//! Rows reach this stage in row-group-sized buffers, so memory stays flat
//! however large a file grows. A table's file is closed when the next row
//! group would take it past `output.max_rows_per_file`, and on every flush.
//!
//! With the spool's queue attached ([`TableWriter::with_queue`], as in
//! `run`), a row group that might not fit on the disk first makes room:
//! it waits briefly while a reachable store drains the spool, then deletes
//! spooled files of lower priority than its own table. A write that fails
//! anyway (ENOSPC, an I/O error) is retried once into a fresh file after
//! making room; rows that still cannot be written are counted per table in
//! `pitchside_lost_rows_total` and logged at ERROR.

use super::parquet::{properties, ParquetFile};
use super::spool::queue::{free_disk, lock, SharedQueue};
use super::spool::{Spool, SpoolError, SpooledFile};
use crate::config::Config;
use crate::sinks::UploadStats;
use crate::tables::{ColumnBuf, RowGroupLimit, TableBuffer, TableId};
use crate::util::time::format_date;
use std::fs::File;
use std::io::BufWriter;
use std::path::PathBuf;
use std::sync::atomic::Ordering;

/// When the pipeline hands a table's rows to the encoder: one row group.
pub fn row_group_limit(config: &Config) -> RowGroupLimit {
    RowGroupLimit {
        rows: ROW_GROUP_ROWS.min(config.output.max_rows_per_file),
        bytes: ROW_GROUP_BYTES,
        raw_rows: RAW_ROW_GROUP_ROWS.min(config.output.max_rows_per_file),
        raw_bytes: RAW_ROW_GROUP_BYTES,
    }
}

/// Rows per Parquet row group (and per buffer handed to the encoder).
pub const ROW_GROUP_ROWS: usize = 8_192;

/// Bytes of buffered rows at which a table's row group is full before
/// [`ROW_GROUP_ROWS`]: 8,192 rows of a windows or alerts table take 2–3 MiB,
/// and a table that fills slowly (alerts) would hold its rows until the flush.
/// Bounds the table buffers together to about this much per busy table. At
/// 1 MiB the peak RSS of a 1,000,000-line venue replay was 1.6 MiB higher
/// (docs/src/perf-log.md).
pub const ROW_GROUP_BYTES: usize = 512 << 10;

/// [`ROW_GROUP_ROWS`] for the `raw` table, one row a reading: twice as many
/// rows a row group. The `parquet` crate builds every column's writer afresh
/// for each row group (a zstd context, its work space, page and dictionary
/// buffers), and glibc hands that memory back to the kernel when it is freed,
/// to be faulted in again for the next one. With half as many row groups, a
/// replay of 1,000,000 venue lines with `raw` on took 406 fewer instructions
/// an event (13,484 → 13,078, −3.0 %) and 15 % less time (median of seven,
/// 2.19 → 1.87 s), for 1 MiB more peak RSS. At 32,768 rows: −682, no faster
/// than 16,384, 3.5 MiB more (docs/src/perf-log.md).
pub const RAW_ROW_GROUP_ROWS: usize = 16_384;

/// [`ROW_GROUP_BYTES`] for the `raw` table: [`RAW_ROW_GROUP_ROWS`] of its
/// rows take about 1.8 MiB. A 1 MiB bound split each of those row groups in
/// two, which took 164 more instructions an event with `raw` on (more pages,
/// smaller zstd frames). Its rows are narrow, so this bound only binds for
/// the longest ids.
pub const RAW_ROW_GROUP_BYTES: usize = 2 << 20;

/// Why a table could not be written.
#[derive(Debug, thiserror::Error)]
pub enum WriteError {
    /// Encoding failed.
    #[error("cannot write table {table} as Parquet: {source} (check output.spool_dir's disk)")]
    Encode {
        /// Table name.
        table: &'static str,
        /// Parquet's error.
        source: parquet::errors::ParquetError,
    },
    /// The spool could not take the file.
    #[error(transparent)]
    Spool(#[from] SpoolError),
}

struct OpenFile {
    file: ParquetFile<BufWriter<File>>,
    tmp: PathBuf,
}

/// Writes tables into the spool.
pub struct TableWriter {
    spool: Spool,
    snappy: bool,
    max_rows: usize,
    open: Vec<Option<OpenFile>>,
    queue: Option<SharedQueue>,
    /// Files committed by a call that then failed: still to be handed over.
    orphans: Vec<SpooledFile>,
}

/// Room left for the Parquet footer and the write buffer beyond a row
/// group's own bytes.
const WRITE_MARGIN: u64 = 256 * 1024;

/// How long a row group that does not fit waits for a reachable store to
/// drain the spool before lower-priority files are deleted for it.
const DRAIN_WAIT: std::time::Duration = std::time::Duration::from_secs(2);

/// An upper bound of the bytes a buffer takes on disk as a row group
/// (plain encoding; compression only makes it smaller).
fn plain_bytes(buf: &TableBuffer) -> u64 {
    let cols: usize = buf
        .columns
        .iter()
        .map(|c| match c {
            ColumnBuf::Bytes { data, offsets } => data.len() + 4 * offsets.len(),
            ColumnBuf::I64(v) => 8 * v.len(),
            ColumnBuf::F64(v) => 8 * v.len(),
            ColumnBuf::Bool(v) => v.len(),
        })
        .sum();
    let defs: usize = buf.defs.iter().map(|d| d.len() / 4 + 1).sum();
    (cols + defs) as u64 + WRITE_MARGIN
}

impl TableWriter {
    /// A writer into `spool`, closing files at `max_rows` rows.
    pub fn new(spool: Spool, snappy: bool, max_rows: usize) -> TableWriter {
        TableWriter {
            spool,
            snappy,
            max_rows: max_rows.max(1),
            open: TableId::ALL.iter().map(|_| None).collect(),
            queue: None,
            orphans: Vec::new(),
        }
    }

    /// Files that were committed to the spool by a call that then returned
    /// an error; the caller hands them to the uploader like the others.
    pub fn take_orphans(&mut self) -> Vec<SpooledFile> {
        std::mem::take(&mut self.orphans)
    }

    /// Lets the writer make room on a short disk by evicting spooled files
    /// of lower priority (see the module docs).
    pub fn with_queue(mut self, queue: SharedQueue) -> TableWriter {
        self.queue = Some(queue);
        self
    }

    /// Makes `need` bytes free on the spool's disk if it can: waits for a
    /// reachable store to drain the spool, then evicts lower-priority files.
    fn make_room(&self, t: TableId, need: u64) {
        let Some(q) = &self.queue else { return };
        let root = self.spool.root();
        let fits = || free_disk(root).is_none_or(|free| free >= need);
        let waited = std::time::Instant::now();
        while !fits() && waited.elapsed() < DRAIN_WAIT {
            {
                let q = lock(q);
                if q.store_failing() || q.is_empty() {
                    break;
                }
            }
            std::thread::sleep(std::time::Duration::from_millis(50));
        }
        if !fits() {
            lock(q).make_room(t, need);
        }
    }

    /// Counts rows that are lost and says so.
    fn lost(&self, t: TableId, rows: usize, stats: &UploadStats, error: &dyn std::fmt::Display) {
        if rows == 0 {
            return;
        }
        stats.lost_rows[t.index()].fetch_add(rows as u64, Ordering::Relaxed);
        tracing::error!(table = t.name(), rows, error = %error, "Rows could not be written to the spool; they are lost. Free space on output.spool_dir's disk.");
    }

    /// Drops a table's open file after a failed write; returns its rows.
    fn discard(&mut self, t: TableId) -> usize {
        match self.open[t.index()].take() {
            Some(o) => {
                let _ = std::fs::remove_file(&o.tmp);
                o.file.rows
            }
            None => 0,
        }
    }

    /// The spool.
    pub fn spool(&self) -> &Spool {
        &self.spool
    }

    /// Appends a buffer as a row group of its table's open file; returns the
    /// file it closed to make room, if any. The first `raw` row group sets the
    /// allocator to keep freed memory ([`super::heap`]).
    pub fn append(
        &mut self,
        buf: &TableBuffer,
        stats: &UploadStats,
    ) -> Result<Option<SpooledFile>, WriteError> {
        if buf.rows == 0 {
            return Ok(None);
        }
        let t = buf.table;
        if t == TableId::Raw {
            super::heap::keep_freed_memory();
        }
        let mut closed = None;
        if self.open[t.index()]
            .as_ref()
            .is_some_and(|f| f.file.rows + buf.rows > self.max_rows)
        {
            closed = self.close(t, stats)?;
        }
        let need = plain_bytes(buf);
        self.make_room(t, need);
        let result = self.append_or_retry(buf, need, stats);
        if result.is_err() {
            self.orphans.extend(closed.take());
        }
        result.map(|()| closed)
    }

    fn append_or_retry(
        &mut self,
        buf: &TableBuffer,
        need: u64,
        stats: &UploadStats,
    ) -> Result<(), WriteError> {
        let t = buf.table;
        if let Err(first) = self.try_append(buf) {
            // The open file is broken: its earlier row groups are lost with it.
            let earlier = self.discard(t);
            self.lost(t, earlier, stats, &first);
            if self.queue.is_none() {
                self.lost(t, buf.rows, stats, &first);
                return Err(first);
            }
            self.make_room(t, need);
            if let Err(e) = self.try_append(buf) {
                self.discard(t);
                self.lost(t, buf.rows, stats, &e);
                return Err(e);
            }
            tracing::warn!(
                table = t.name(),
                rows = buf.rows,
                "Row group written after making room in the spool."
            );
        }
        Ok(())
    }

    fn try_append(&mut self, buf: &TableBuffer) -> Result<(), WriteError> {
        let t = buf.table;
        let enc = |source| WriteError::Encode {
            table: t.name(),
            source,
        };
        if self.open[t.index()].is_none() {
            let (f, tmp) = self.spool.create_temp(t)?;
            let props = properties(self.snappy, self.max_rows).map_err(enc)?;
            let file =
                ParquetFile::new(BufWriter::with_capacity(64 * 1024, f), t, props).map_err(enc)?;
            self.open[t.index()] = Some(OpenFile { file, tmp });
        }
        if let Some(o) = self.open[t.index()].as_mut() {
            // Flush the buffered bytes too, so a full disk shows here and not
            // at close, where nothing can be retried.
            o.file.append(buf).map_err(enc)?;
            o.file.flush().map_err(enc)?;
        }
        Ok(())
    }

    /// Finishes a table's open file and commits it to the spool.
    pub fn close(
        &mut self,
        t: TableId,
        stats: &UploadStats,
    ) -> Result<Option<SpooledFile>, WriteError> {
        let Some(o) = self.open[t.index()].take() else {
            return Ok(None);
        };
        let Some(min_time) = o.file.min_time else {
            let _ = std::fs::remove_file(&o.tmp);
            return Ok(None);
        };
        let rows = o.file.rows;
        self.make_room(t, WRITE_MARGIN);
        let tmp = o.tmp.clone();
        let finished = self.finish(t, o, min_time);
        let spooled = match finished {
            Ok(f) => f,
            Err(e) => {
                let _ = std::fs::remove_file(&tmp);
                self.lost(t, rows, stats, &e);
                return Err(e);
            }
        };
        stats.commit_micros.fetch_add(spooled.1, Ordering::Relaxed);
        let spooled = spooled.0;
        stats.files_written.fetch_add(1, Ordering::Relaxed);
        tracing::debug!(table = t.name(), rows, bytes = spooled.size, key = %spooled.key, "Table file written to spool.");
        Ok(Some(spooled))
    }

    /// Writes the footer and commits the file; returns it and the µs spent
    /// making it durable.
    fn finish(
        &mut self,
        t: TableId,
        o: OpenFile,
        min_time: crate::model::Micros,
    ) -> Result<(SpooledFile, u64), WriteError> {
        let enc = |source| WriteError::Encode {
            table: t.name(),
            source,
        };
        let out = o.file.finish().map_err(enc)?;
        let file = out.into_inner().map_err(|e| {
            enc(parquet::errors::ParquetError::External(Box::new(
                e.into_error(),
            )))
        })?;
        let t0 = std::time::Instant::now();
        let spooled = self.spool.commit(t, file, &o.tmp, &format_date(min_time))?;
        Ok((spooled, t0.elapsed().as_micros() as u64))
    }

    /// Finishes every open file (a flush).
    /// A table that fails does not stop the others from being closed; on
    /// an error, the files that were closed are in [`TableWriter::take_orphans`].
    pub fn close_all(&mut self, stats: &UploadStats) -> Result<Vec<SpooledFile>, WriteError> {
        let mut out = Vec::new();
        let mut failed = None;
        for t in TableId::ALL {
            match self.close(t, stats) {
                Ok(f) => out.extend(f),
                Err(e) => {
                    failed.get_or_insert(e);
                }
            }
        }
        match failed {
            None => Ok(out),
            Some(e) => {
                self.orphans.extend(out);
                Err(e)
            }
        }
    }
}

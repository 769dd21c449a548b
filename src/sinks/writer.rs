//! The encoder stage: table buffers → row groups of open Parquet files in
//! the spool's `tmp/` → complete, fsynced files under `outgoing/`.
//!
//! Rows reach this stage in row-group-sized buffers, so memory stays flat
//! however large a file grows. A table's file is closed when the next row
//! group would take it past `output.max_rows_per_file`, and on every flush.

use super::parquet::{properties, ParquetFile};
use super::spool::{Spool, SpoolError, SpooledFile};
use crate::tables::{TableBuffer, TableId};
use crate::telemetry::UploadStats;
use crate::timefmt::format_date;
use std::fs::File;
use std::io::BufWriter;
use std::path::PathBuf;
use std::sync::atomic::Ordering;

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
}

impl TableWriter {
    /// A writer into `spool`, closing files at `max_rows` rows.
    pub fn new(spool: Spool, snappy: bool, max_rows: usize) -> TableWriter {
        TableWriter {
            spool,
            snappy,
            max_rows: max_rows.max(1),
            open: TableId::ALL.iter().map(|_| None).collect(),
        }
    }

    /// The spool.
    pub fn spool(&self) -> &Spool {
        &self.spool
    }

    /// Appends a buffer as a row group of its table's open file; returns the
    /// file it closed to make room, if any.
    pub fn append(
        &mut self,
        buf: &TableBuffer,
        stats: &UploadStats,
    ) -> Result<Option<SpooledFile>, WriteError> {
        if buf.rows == 0 {
            return Ok(None);
        }
        let t = buf.table;
        let mut closed = None;
        if self.open[t.index()]
            .as_ref()
            .is_some_and(|f| f.file.rows + buf.rows > self.max_rows)
        {
            closed = self.close(t, stats)?;
        }
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
            o.file.append(buf).map_err(enc)?;
        }
        Ok(closed)
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
        stats
            .commit_micros
            .fetch_add(t0.elapsed().as_micros() as u64, Ordering::Relaxed);
        stats.files_written.fetch_add(1, Ordering::Relaxed);
        tracing::debug!(table = t.name(), rows, bytes = spooled.size, key = %spooled.key, "Table file written to spool.");
        Ok(Some(spooled))
    }

    /// Finishes every open file (a flush).
    pub fn close_all(&mut self, stats: &UploadStats) -> Result<Vec<SpooledFile>, WriteError> {
        let mut out = Vec::new();
        for t in TableId::ALL {
            if let Some(f) = self.close(t, stats)? {
                out.push(f);
            }
        }
        Ok(out)
    }
}

//! The encoder stage: table buffers → Parquet bytes → a complete spool file.

use super::parquet::encode;
use super::spool::{Spool, SpoolError, SpooledFile};
use crate::tables::TableBuffer;
use crate::telemetry::UploadStats;
use crate::timefmt::format_date;
use std::sync::atomic::Ordering;

/// Why a table could not be written.
#[derive(Debug, thiserror::Error)]
pub enum WriteError {
    /// Encoding failed (a bug: the rows do not fit their schema).
    #[error("cannot encode table {table} as Parquet: {source}")]
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

/// Encodes tables into the spool.
#[derive(Debug)]
pub struct TableWriter {
    spool: Spool,
    snappy: bool,
}

impl TableWriter {
    /// A writer into `spool`.
    pub fn new(spool: Spool, snappy: bool) -> TableWriter {
        TableWriter { spool, snappy }
    }

    /// The spool.
    pub fn spool(&self) -> &Spool {
        &self.spool
    }

    /// Writes one table's rows as one file; `None` for an empty buffer.
    pub fn write(&mut self, buf: &TableBuffer, stats: &UploadStats) -> Result<Option<SpooledFile>, WriteError> {
        let Some(min_time) = buf.min_time.filter(|_| buf.rows > 0) else {
            return Ok(None);
        };
        let bytes = encode(buf, self.snappy).map_err(|source| WriteError::Encode {
            table: buf.table.name(),
            source,
        })?;
        let file = self.spool.write(buf.table, &format_date(min_time), &bytes)?;
        stats.files_written.fetch_add(1, Ordering::Relaxed);
        stats.spool_files.fetch_add(1, Ordering::Relaxed);
        stats.spool_bytes.fetch_add(file.size, Ordering::Relaxed);
        tracing::debug!(table = buf.table.name(), rows = buf.rows, bytes = file.size, key = %file.key, "Table written to spool.");
        Ok(Some(file))
    }
}

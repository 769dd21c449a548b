//! Parquet encoding of a [`TableBuffer`]: one row group, the table's schema,
//! `TIMESTAMP(MICROS, UTC)` timestamps, UTF-8 strings, zstd or snappy.
//!
//! The output depends only on the rows and the settings (the `created_by`
//! string is fixed), so encoding the same rows twice gives the same bytes.

use crate::model::Micros;
use crate::tables::{ColType, ColumnBuf, TableBuffer, TableId};
use bytes::Bytes;
use parquet::basic::{
    Compression, Encoding, LogicalType, Repetition, TimeUnit, Type as Physical, ZstdLevel,
};
use parquet::data_type::{BoolType, ByteArray, ByteArrayType, DoubleType, Int64Type};
use parquet::errors::ParquetError;
use parquet::file::properties::{WriterProperties, WriterVersion};
use parquet::file::writer::SerializedFileWriter;
use parquet::schema::types::{ColumnPath, Type};
use std::io::Write;
use std::sync::Arc;

mod kept;
use kept::Repeated;

/// Columns written without a dictionary: the reading columns of `raw`,
/// `late` and `alerts` (and `received_at` of `rejects`), nearly one
/// distinct value a row. A dictionary of them
/// is larger than the values and costs a hash lookup a value; plain values
/// compress better (the `raw` table of 1,000,000 venue lines: 27.7 → 19.2 MB,
/// 786 fewer instructions an event). No table of windows has these names.
/// `clock_synchronized` is a boolean: Parquet has no dictionary for those.
/// The sums of `load_player_1m` that differ row by row go plain too.
const PLAIN_COLUMNS: [&str; 15] = [
    "value",
    "event_id",
    "event_time",
    "received_at",
    "clock_synchronized",
    "trimp_edwards",
    "trimp_banister",
    "distance_m",
    "hsr_distance_m",
    "hsr_s",
    "accel_load",
    "session_distance_m",
    "session_hsr_distance_m",
    "session_trimp_edwards",
    "session_accel_load",
];

/// The integer ones among them, written `DELTA_BINARY_PACKED`: ids and
/// times that climb row by row take a byte or two a value instead of eight,
/// so zstd has a fifth of the bytes to compress (the `raw` table of 100,000
/// venue lines: 1.92 → 1.50 MB, 496 fewer instructions an event). Spark reads
/// the encoding from 3.3 on (the ingest tests read it with 3.5), as do
/// pyarrow, DuckDB and delta-rs. `value` stays `PLAIN`: the encoding for
/// floats (`BYTE_STREAM_SPLIT`) has no vectorized reader in Spark 3.5.
const DELTA_COLUMNS: [&str; 3] = ["event_id", "event_time", "received_at"];

/// String columns with few distinct values that come back row after row:
/// their values are handed to the writer as kept static bytes ([`kept`]),
/// without a reference count each.
const REPEATED_COLUMNS: [&str; 6] = [
    "venue_id",
    "gateway_id",
    "sensor",
    "metric",
    "source",
    "reason",
];

/// Rows handed to the column writers at a time.
const CHUNK_ROWS: usize = 8192;

/// The Parquet schema of a table.
pub fn schema(table: TableId) -> Result<Type, ParquetError> {
    let fields = table
        .columns()
        .iter()
        .map(|c| {
            let (physical, logical) = match c.ty {
                ColType::Utf8 => (Physical::BYTE_ARRAY, Some(LogicalType::String)),
                ColType::Binary => (Physical::BYTE_ARRAY, None),
                ColType::I64 => (Physical::INT64, None),
                ColType::F64 => (Physical::DOUBLE, None),
                ColType::Bool => (Physical::BOOLEAN, None),
                ColType::Ts => (
                    Physical::INT64,
                    Some(LogicalType::timestamp(true, TimeUnit::MICROS)),
                ),
            };
            let rep = if c.nullable {
                Repetition::OPTIONAL
            } else {
                Repetition::REQUIRED
            };
            Type::primitive_type_builder(&c.name, physical)
                .with_repetition(rep)
                .with_logical_type(logical)
                .build()
                .map(Arc::new)
        })
        .collect::<Result<Vec<_>, _>>()?;
    Type::group_type_builder("schema")
        .with_fields(fields)
        .build()
}

/// Writer settings for every file (fixed `created_by`, so same rows → same bytes).
pub fn properties(snappy: bool, row_group_rows: usize) -> Result<WriterProperties, ParquetError> {
    let plain = PLAIN_COLUMNS
        .iter()
        .fold(WriterProperties::builder(), |b, c| {
            b.set_column_dictionary_enabled(ColumnPath::from(*c), false)
        });
    let plain = DELTA_COLUMNS.iter().fold(plain, |b, c| {
        b.set_column_encoding(ColumnPath::from(*c), Encoding::DELTA_BINARY_PACKED)
    });
    Ok(plain
        .set_writer_version(WriterVersion::PARQUET_1_0)
        .set_created_by(format!("pitchside {}", env!("CARGO_PKG_VERSION")))
        .set_compression(if snappy {
            Compression::SNAPPY
        } else {
            Compression::ZSTD(ZstdLevel::try_new(1)?)
        })
        .set_max_row_group_row_count(Some(row_group_rows.max(1)))
        .build())
}

/// A Parquet file being written one row group at a time.
pub struct ParquetFile<W: Write + Send> {
    writer: SerializedFileWriter<W>,
    table: TableId,
    /// Rows written so far.
    pub rows: usize,
    /// Earliest partition time of the rows so far.
    pub min_time: Option<Micros>,
    /// Per column: the kept strings of a [`REPEATED_COLUMNS`] one.
    repeated: Vec<Option<Repeated>>,
}

impl<W: Write + Send> ParquetFile<W> {
    /// Starts a file for `table` on `out`.
    pub fn new(out: W, table: TableId, props: WriterProperties) -> Result<Self, ParquetError> {
        Ok(ParquetFile {
            writer: SerializedFileWriter::new(out, Arc::new(schema(table)?), Arc::new(props))?,
            table,
            rows: 0,
            min_time: None,
            repeated: table
                .columns()
                .iter()
                .map(|c| {
                    REPEATED_COLUMNS
                        .contains(&c.name.as_str())
                        .then(Repeated::default)
                })
                .collect(),
        })
    }

    /// Writes a buffer's rows as one row group.
    pub fn append(&mut self, buf: &TableBuffer) -> Result<(), ParquetError> {
        debug_assert_eq!(buf.table, self.table);
        if buf.rows == 0 {
            return Ok(());
        }
        let mut rg = self.writer.next_row_group()?;
        let mut i = 0;
        while let Some(mut col) = rg.next_column()? {
            let nullable = buf.table.columns()[i].nullable;
            let defs = &buf.defs[i];
            // One copy of this column's string bytes, made when a value
            // is not a kept one; values are cheap slices of it.
            let mut shared: Option<Bytes> = None;
            let mut repeated = self.repeated[i].as_mut();
            // Hand values over in chunks so that per-value wrappers (ByteArray)
            // never exist for a whole row group at once.
            let mut v0 = 0;
            for r0 in (0..buf.rows).step_by(CHUNK_ROWS) {
                let r1 = (r0 + CHUNK_ROWS).min(buf.rows);
                let (chunk_defs, n) = if nullable {
                    let d = &defs[r0..r1];
                    (Some(d), d.iter().filter(|&&x| x == 1).count())
                } else {
                    (None, r1 - r0)
                };
                let v1 = v0 + n;
                match &buf.columns[i] {
                    ColumnBuf::I64(v) => {
                        col.typed::<Int64Type>()
                            .write_batch(&v[v0..v1], chunk_defs, None)?;
                    }
                    ColumnBuf::F64(v) => {
                        col.typed::<DoubleType>()
                            .write_batch(&v[v0..v1], chunk_defs, None)?;
                    }
                    ColumnBuf::Bool(v) => {
                        col.typed::<BoolType>()
                            .write_batch(&v[v0..v1], chunk_defs, None)?;
                    }
                    ColumnBuf::Bytes { data, offsets } => {
                        let values =
                            byte_values(data, &offsets[v0..=v1], &mut shared, &mut repeated);
                        col.typed::<ByteArrayType>()
                            .write_batch(&values, chunk_defs, None)?;
                    }
                }
                v0 = v1;
            }
            col.close()?;
            i += 1;
        }
        rg.close()?;
        self.rows += buf.rows;
        if let Some(t) = buf.min_time {
            self.min_time = Some(self.min_time.map_or(t, |m| m.min(t)));
        }
        Ok(())
    }

    /// Pushes buffered bytes to the output, so a full disk shows now.
    pub fn flush(&mut self) -> Result<(), ParquetError> {
        self.writer
            .flush()
            .map_err(|e| ParquetError::External(Box::new(e)))
    }

    /// Writes the footer and returns the output.
    pub fn finish(self) -> Result<W, ParquetError> {
        self.writer.into_inner()
    }
}

/// The values between `offsets` as the writer takes them: kept static
/// bytes for a repeated column's names, otherwise slices of one copy of
/// `data` (`shared`, made at the first such value).
fn byte_values(
    data: &[u8],
    offsets: &[usize],
    shared: &mut Option<Bytes>,
    repeated: &mut Option<&mut Repeated>,
) -> Vec<ByteArray> {
    let mut values = Vec::with_capacity(offsets.len().saturating_sub(1));
    for w in offsets.windows(2) {
        let v = &data[w[0]..w[1]];
        // The kept bytes come back as a (pointer, length) pair in
        // registers and the `Bytes` is built where it is stored: an
        // `Option<ByteArray>` returned through the stack made the store
        // into the vector wait for it (45 % of this loop's samples).
        let bytes = match repeated.as_mut().and_then(|r| r.get(v)) {
            Some(s) => Bytes::from_static(s),
            None => shared
                .get_or_insert_with(|| Bytes::copy_from_slice(data))
                .slice(w[0]..w[1]),
        };
        values.push(ByteArray::from(bytes));
    }
    values
}

/// Encodes a buffer's rows as a complete in-memory Parquet file (one row group).
pub fn encode(buf: &TableBuffer, snappy: bool) -> Result<Vec<u8>, ParquetError> {
    let mut f = ParquetFile::new(Vec::new(), buf.table, properties(snappy, buf.rows)?)?;
    f.append(buf)?;
    f.finish()
}

#[cfg(test)]
mod tests;

//! Parquet encoding of a [`TableBuffer`]: one row group, the table's schema,
//! `TIMESTAMP(MICROS, UTC)` timestamps, UTF-8 strings, zstd or snappy.
//!
//! The output depends only on the rows and the settings (the `created_by`
//! string is fixed), so encoding the same rows twice gives the same bytes.

use crate::tables::{ColType, ColumnBuf, TableBuffer, TableId};
use bytes::Bytes;
use parquet::basic::{Compression, LogicalType, Repetition, TimeUnit, Type as Physical, ZstdLevel};
use parquet::data_type::{ByteArray, ByteArrayType, DoubleType, Int64Type};
use parquet::errors::ParquetError;
use parquet::file::properties::{WriterProperties, WriterVersion};
use parquet::file::writer::SerializedFileWriter;
use parquet::schema::types::Type;
use std::sync::Arc;

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
    Type::group_type_builder("schema").with_fields(fields).build()
}

/// Encodes a buffer's rows as a complete Parquet file.
pub fn encode(buf: &TableBuffer, snappy: bool) -> Result<Vec<u8>, ParquetError> {
    let props = WriterProperties::builder()
        .set_writer_version(WriterVersion::PARQUET_1_0)
        .set_created_by(format!("pitchside {}", env!("CARGO_PKG_VERSION")))
        .set_compression(if snappy {
            Compression::SNAPPY
        } else {
            Compression::ZSTD(ZstdLevel::try_new(1)?)
        })
        .set_max_row_group_row_count(Some(buf.rows.max(1)))
        .build();
    let mut out = Vec::with_capacity(buf.bytes() / 4 + 1024);
    let mut writer = SerializedFileWriter::new(&mut out, Arc::new(schema(buf.table)?), Arc::new(props))?;
    let mut rg = writer.next_row_group()?;
    let mut i = 0;
    while let Some(mut col) = rg.next_column()? {
        let defs = buf.table.columns()[i].nullable.then(|| buf.defs[i].as_slice());
        match &buf.columns[i] {
            ColumnBuf::I64(v) => {
                col.typed::<Int64Type>().write_batch(v, defs, None)?;
            }
            ColumnBuf::F64(v) => {
                col.typed::<DoubleType>().write_batch(v, defs, None)?;
            }
            ColumnBuf::Bytes { data, offsets } => {
                let shared = Bytes::copy_from_slice(data);
                let values: Vec<ByteArray> = offsets
                    .windows(2)
                    .map(|w| ByteArray::from(shared.slice(w[0]..w[1])))
                    .collect();
                col.typed::<ByteArrayType>().write_batch(&values, defs, None)?;
            }
        }
        col.close()?;
        i += 1;
    }
    rg.close()?;
    writer.close()?;
    Ok(out)
}

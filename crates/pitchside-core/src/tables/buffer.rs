//! A columnar row buffer for one table.
//!
//! Strings of a column share one byte buffer with offsets, so appending a row
//! allocates nothing once the vectors have grown. Nullable columns keep a
//! definition level per row (1 = value, 0 = null) and values only for rows
//! that have one, the layout a Parquet column writer takes directly.

use super::{ColType, TableId};
use crate::model::Micros;

/// One column's data.
#[derive(Debug, Clone)]
pub enum ColumnBuf {
    /// Strings or bytes: `data[offsets[i]..offsets[i+1]]`.
    Bytes {
        /// Concatenated values.
        data: Vec<u8>,
        /// `len + 1` offsets.
        offsets: Vec<usize>,
    },
    /// 64-bit integers and timestamps.
    I64(Vec<i64>),
    /// 64-bit floats.
    F64(Vec<f64>),
    /// Booleans.
    Bool(Vec<bool>),
}

/// A table's rows since the last flush.
#[derive(Debug, Clone)]
pub struct TableBuffer {
    /// Which table.
    pub table: TableId,
    /// Column data, in schema order.
    pub columns: Vec<ColumnBuf>,
    /// Definition levels of nullable columns (empty vectors for required ones).
    pub defs: Vec<Vec<i16>>,
    /// Rows.
    pub rows: usize,
    /// Earliest partition time of the rows (SPEC §5 `date`).
    pub min_time: Option<Micros>,
    /// Bit `i` set: column `i` is nullable (the schema's, kept here so that
    /// appending a value does not look the schema up).
    nullable: u64,
}

/// The nullable columns of `table` as a bit mask.
fn nullable_mask(table: TableId) -> u64 {
    let cols = table.columns();
    assert!(
        cols.len() <= 64,
        "{} has more than 64 columns",
        table.name()
    );
    cols.iter()
        .enumerate()
        .fold(0, |m, (i, c)| m | (c.nullable as u64) << i)
}

impl TableBuffer {
    /// An empty buffer.
    pub fn new(table: TableId) -> TableBuffer {
        let cols = table.columns();
        TableBuffer {
            table,
            columns: cols
                .iter()
                .map(|c| match c.ty {
                    ColType::Utf8 | ColType::Binary => ColumnBuf::Bytes {
                        data: Vec::new(),
                        offsets: vec![0],
                    },
                    ColType::I64 | ColType::Ts => ColumnBuf::I64(Vec::new()),
                    ColType::F64 => ColumnBuf::F64(Vec::new()),
                    ColType::Bool => ColumnBuf::Bool(Vec::new()),
                })
                .collect(),
            defs: cols.iter().map(|_| Vec::new()).collect(),
            rows: 0,
            min_time: None,
            nullable: nullable_mask(table),
        }
    }

    /// Starts a row whose partition time is `time`. Every column must be set,
    /// in order; the row counts once [`RowWriter::finish`] is called.
    #[inline]
    pub fn row(&mut self, time: Micros) -> RowWriter<'_> {
        self.min_time = Some(self.min_time.map_or(time, |m| m.min(time)));
        RowWriter { buf: self, col: 0 }
    }

    /// Takes the rows out, leaving an empty buffer sized for as many rows:
    /// the next rows fill it with one allocation per column instead of a
    /// dozen as it doubles (pages not yet written cost no memory).
    pub fn take(&mut self) -> TableBuffer {
        let next = TableBuffer {
            table: self.table,
            columns: self
                .columns
                .iter()
                .map(|c| match c {
                    ColumnBuf::Bytes { data, offsets } => {
                        let mut o = Vec::with_capacity(offsets.len());
                        o.push(0);
                        ColumnBuf::Bytes {
                            data: Vec::with_capacity(data.len()),
                            offsets: o,
                        }
                    }
                    ColumnBuf::I64(v) => ColumnBuf::I64(Vec::with_capacity(v.len())),
                    ColumnBuf::F64(v) => ColumnBuf::F64(Vec::with_capacity(v.len())),
                    ColumnBuf::Bool(v) => ColumnBuf::Bool(Vec::with_capacity(v.len())),
                })
                .collect(),
            defs: self
                .defs
                .iter()
                .map(|d| Vec::with_capacity(d.len()))
                .collect(),
            rows: 0,
            min_time: None,
            nullable: self.nullable,
        };
        std::mem::replace(self, next)
    }

    /// Empties the buffer in place, keeping its capacity for the next rows.
    pub fn clear(&mut self) {
        for c in &mut self.columns {
            match c {
                ColumnBuf::Bytes { data, offsets } => {
                    data.clear();
                    offsets.truncate(1);
                }
                ColumnBuf::I64(v) => v.clear(),
                ColumnBuf::F64(v) => v.clear(),
                ColumnBuf::Bool(v) => v.clear(),
            }
        }
        self.defs.iter_mut().for_each(Vec::clear);
        self.rows = 0;
        self.min_time = None;
    }

    /// Approximate heap bytes held.
    pub fn bytes(&self) -> usize {
        self.columns
            .iter()
            .map(|c| match c {
                ColumnBuf::Bytes { data, offsets } => data.len() + offsets.len() * 8,
                ColumnBuf::I64(v) => v.len() * 8,
                ColumnBuf::F64(v) => v.len() * 8,
                ColumnBuf::Bool(v) => v.len(),
            })
            .sum::<usize>()
            + self.defs.iter().map(|d| d.len() * 2).sum::<usize>()
    }
}

/// Appends one row, column by column.
pub struct RowWriter<'a> {
    buf: &'a mut TableBuffer,
    col: usize,
}

impl RowWriter<'_> {
    #[inline]
    fn next(&mut self, present: bool) -> usize {
        let i = self.col;
        debug_assert!(
            i < self.buf.columns.len(),
            "too many values for {}",
            self.buf.table.name()
        );
        let nullable = self.buf.nullable >> i & 1 != 0;
        debug_assert!(
            present || nullable,
            "null in required column {}",
            self.buf.table.columns()[i].name
        );
        if nullable {
            self.buf.defs[i].push(present as i16);
        }
        self.col += 1;
        i
    }

    /// A string or bytes value.
    #[inline(always)]
    pub fn bytes(mut self, v: &[u8]) -> Self {
        let i = self.next(true);
        if let ColumnBuf::Bytes { data, offsets } = &mut self.buf.columns[i] {
            data.extend_from_slice(v);
            offsets.push(data.len());
        } else {
            debug_assert!(false, "column {i} is not a byte column");
        }
        self
    }

    /// A string value.
    #[inline]
    pub fn str(self, v: &str) -> Self {
        self.bytes(v.as_bytes())
    }

    /// An optional value: `put` it, or a null.
    #[inline]
    fn opt<T>(mut self, v: Option<T>, put: impl FnOnce(Self, T) -> Self) -> Self {
        match v {
            Some(x) => put(self, x),
            None => {
                self.next(false);
                self
            }
        }
    }

    /// An optional string value.
    #[inline]
    pub fn opt_str(self, v: Option<&str>) -> Self {
        self.opt(v, Self::str)
    }

    /// An integer or timestamp value.
    #[inline]
    pub fn i64(mut self, v: i64) -> Self {
        let i = self.next(true);
        if let ColumnBuf::I64(vals) = &mut self.buf.columns[i] {
            vals.push(v);
        } else {
            debug_assert!(false, "column {i} is not an integer column");
        }
        self
    }

    /// An optional integer or timestamp value.
    #[inline]
    pub fn opt_i64(self, v: Option<i64>) -> Self {
        self.opt(v, Self::i64)
    }

    /// A float value.
    #[inline]
    pub fn f64(mut self, v: f64) -> Self {
        let i = self.next(true);
        if let ColumnBuf::F64(vals) = &mut self.buf.columns[i] {
            vals.push(v);
        } else {
            debug_assert!(false, "column {i} is not a float column");
        }
        self
    }

    /// An optional float value.
    #[inline]
    pub fn opt_f64(self, v: Option<f64>) -> Self {
        self.opt(v, Self::f64)
    }

    /// A boolean value.
    #[inline]
    pub fn bool(mut self, v: bool) -> Self {
        let i = self.next(true);
        if let ColumnBuf::Bool(vals) = &mut self.buf.columns[i] {
            vals.push(v);
        } else {
            debug_assert!(false, "column {i} is not a boolean column");
        }
        self
    }

    /// An optional boolean value.
    #[inline]
    pub fn opt_bool(self, v: Option<bool>) -> Self {
        self.opt(v, Self::bool)
    }

    /// Ends the row.
    #[inline]
    pub fn finish(self) {
        debug_assert_eq!(
            self.col,
            self.buf.columns.len(),
            "row of {} is missing columns",
            self.buf.table.name()
        );
        self.buf.rows += 1;
    }
}

/// Test rows: `rows` rows of the buffer's table, every string `id_len` bytes
/// long, every number the row's index.
#[cfg(test)]
pub(super) fn fill(buf: &mut TableBuffer, rows: usize, id_len: usize) {
    let id = "d".repeat(id_len);
    let table = buf.table;
    for k in 0..rows {
        let mut r = buf.row(k as i64);
        for c in table.columns() {
            r = match c.ty {
                ColType::Utf8 | ColType::Binary => r.opt_str(Some(&id)),
                ColType::I64 | ColType::Ts => r.opt_i64(Some(k as i64)),
                ColType::F64 => r.opt_f64(Some(0.5)),
                ColType::Bool => r.opt_bool(Some(k % 2 == 0)),
            };
        }
        r.finish();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every table's rows keep a definition level for exactly its nullable
    /// columns (the mask the row writer uses instead of the schema), and
    /// [`TableBuffer::take`] keeps the mask.
    #[test]
    fn definition_levels_follow_the_schema_of_every_table() {
        for table in TableId::ALL {
            let mut buf = TableBuffer::new(table);
            for round in 0..2 {
                let mut r = buf.row(0);
                for c in table.columns() {
                    r = match (c.ty, c.nullable) {
                        // A null pushes only the definition level, whatever the type.
                        (_, true) => r.opt_i64(None),
                        (ColType::Utf8 | ColType::Binary, false) => r.str("x"),
                        (ColType::I64 | ColType::Ts, false) => r.i64(1),
                        (ColType::F64, false) => r.f64(1.0),
                        (ColType::Bool, false) => r.bool(true),
                    };
                }
                r.finish();
                for (c, defs) in table.columns().iter().zip(&buf.defs) {
                    let want: &[i16] = if c.nullable { &[0] } else { &[] };
                    assert_eq!(defs.as_slice(), want, "{} {}", table.name(), c.name);
                }
                assert_eq!(buf.rows, 1, "{} round {round}", table.name());
                buf.take();
            }
        }
    }

    /// An emptied buffer is an empty buffer that keeps its memory: the same
    /// rows after `clear` give the same buffer as in a new one.
    #[test]
    fn clear_empties_in_place_and_the_next_rows_are_as_in_a_new_buffer() {
        let table = TableId::WindowsWearable;
        let mut reused = TableBuffer::new(table);
        fill(&mut reused, 100, 30);
        let held = reused.columns.iter().map(col_capacity).collect::<Vec<_>>();
        reused.clear();
        let empty = TableBuffer::new(table).bytes();
        assert_eq!(
            (reused.rows, reused.min_time, reused.bytes()),
            (0, None, empty)
        );
        let kept = reused.columns.iter().map(col_capacity).collect::<Vec<_>>();
        assert_eq!(kept, held, "capacity kept");
        fill(&mut reused, 7, 3);
        let mut fresh = TableBuffer::new(table);
        fill(&mut fresh, 7, 3);
        assert_eq!(format!("{reused:?}"), format!("{fresh:?}"));
    }

    fn col_capacity(c: &ColumnBuf) -> usize {
        match c {
            ColumnBuf::Bytes { data, offsets } => data.capacity() + offsets.capacity(),
            ColumnBuf::I64(v) => v.capacity(),
            ColumnBuf::F64(v) => v.capacity(),
            ColumnBuf::Bool(v) => v.capacity(),
        }
    }
}

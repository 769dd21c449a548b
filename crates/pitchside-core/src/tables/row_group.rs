//! When a table's buffered rows go to the encoder as one row group.

use super::{TableBuffer, TableId};

/// When a table's buffered rows are due to go to the encoder as one row
/// group: at `rows` rows or at `bytes` bytes of data (`raw_rows` and
/// `raw_bytes` for the `raw` table), whichever comes first. The bytes bound
/// wide tables (windows, alerts) and rare ones that would otherwise sit in
/// memory until they reach `rows`; the `raw` table, narrow and one row a
/// reading, has bounds of its own: larger row groups, fewer of them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RowGroupLimit {
    /// Rows of a full row group.
    pub rows: usize,
    /// Bytes of buffered data ([`TableBuffer::bytes`]) of a full row group.
    pub bytes: usize,
    /// Rows of a full row group of the `raw` table.
    pub raw_rows: usize,
    /// Bytes of a full row group of the `raw` table.
    pub raw_bytes: usize,
}

impl RowGroupLimit {
    /// Every table that holds a row: a flush.
    pub const ANY: RowGroupLimit = RowGroupLimit {
        rows: 1,
        bytes: usize::MAX,
        raw_rows: 1,
        raw_bytes: usize::MAX,
    };

    /// Whether `t` holds a full row group.
    #[inline]
    pub fn reached_by(&self, t: &TableBuffer) -> bool {
        let (rows, bytes) = match t.table {
            TableId::Raw => (self.raw_rows, self.raw_bytes),
            _ => (self.rows, self.bytes),
        };
        t.rows > 0 && (t.rows >= rows || t.bytes() >= bytes)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tables::buffer::fill;

    /// A row group is full at its rows or its bytes, whichever comes first;
    /// an empty table never is, and `ANY` is every table with a row.
    #[test]
    fn a_row_group_is_full_at_its_rows_or_its_bytes() {
        let limit = RowGroupLimit {
            rows: 10,
            bytes: 8192,
            raw_rows: usize::MAX,
            raw_bytes: usize::MAX,
        };
        let mut buf = TableBuffer::new(TableId::WindowsWearable);
        assert!(!limit.reached_by(&buf) && !RowGroupLimit::ANY.reached_by(&buf));
        fill(&mut buf, 1, 3);
        assert!(!limit.reached_by(&buf) && RowGroupLimit::ANY.reached_by(&buf));
        fill(&mut buf, 9, 3);
        assert!(buf.bytes() < 8192 && limit.reached_by(&buf), "10 rows");
        let mut wide = TableBuffer::new(TableId::WindowsWearable);
        fill(&mut wide, 2, 1000);
        assert!(!limit.reached_by(&wide), "{} bytes", wide.bytes());
        fill(&mut wide, 2, 1000);
        assert!(
            wide.rows < 10 && limit.reached_by(&wide),
            "{} bytes",
            wide.bytes()
        );
    }

    /// The `raw` table is held to `raw_bytes`, every other table to `bytes`.
    #[test]
    fn the_raw_table_has_its_own_byte_limit() {
        let limit = RowGroupLimit {
            rows: 1000,
            bytes: 8192,
            raw_rows: 1000,
            raw_bytes: 32768,
        };
        let mut raw = TableBuffer::new(TableId::Raw);
        let mut late = TableBuffer::new(TableId::Late);
        while raw.bytes() < 8192 || late.bytes() < 8192 {
            fill(&mut raw, 1, 20);
            fill(&mut late, 1, 20);
        }
        assert!(limit.reached_by(&late) && !limit.reached_by(&raw));
        while raw.bytes() < 32768 {
            assert!(!limit.reached_by(&raw), "{} bytes", raw.bytes());
            fill(&mut raw, 1, 20);
        }
        assert!(raw.rows < 1000 && limit.reached_by(&raw));
    }

    /// The `raw` table is held to `raw_rows`, every other table to `rows`.
    #[test]
    fn the_raw_table_has_its_own_row_limit() {
        let limit = RowGroupLimit {
            rows: 10,
            bytes: usize::MAX,
            raw_rows: 20,
            raw_bytes: usize::MAX,
        };
        let mut raw = TableBuffer::new(TableId::Raw);
        let mut late = TableBuffer::new(TableId::Late);
        fill(&mut raw, 10, 20);
        fill(&mut late, 10, 20);
        assert!(limit.reached_by(&late) && !limit.reached_by(&raw));
        fill(&mut raw, 9, 20);
        assert!(!limit.reached_by(&raw));
        fill(&mut raw, 1, 20);
        assert!(limit.reached_by(&raw));
    }
}

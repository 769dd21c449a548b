use super::*;
use parquet::file::reader::{FileReader, SerializedFileReader};

/// 100 `raw` rows: ids and times that climb, with jumps back and nulls
/// among the event ids (a delta column's definition levels).
fn raw_rows() -> (TableBuffer, Vec<(Option<i64>, i64, i64)>) {
    let mut buf = TableBuffer::new(TableId::Raw);
    let mut rows = Vec::new();
    for k in 0..100i64 {
        let t = 1_764_531_000_000_000 + k * 1000 - (k % 7 == 3) as i64 * 90_000_000;
        let id = (k % 11 != 5).then_some(k * 3 - (k % 13 == 0) as i64 * 1000);
        buf.row(t)
            .str("venue")
            .str("gw")
            .str("wearable")
            .str(&format!("band-{}", k % 5))
            .str("heart_rate")
            .f64(140.0 + k as f64 / 100.0)
            .i64(1042)
            .opt_i64(id)
            .i64(t)
            .i64(t + 7 + k % 3)
            .opt_bool((k % 4 != 0).then_some(k % 2 == 0))
            .finish();
        rows.push((id, t, t + 7 + k % 3));
    }
    (buf, rows)
}

#[test]
fn reading_columns_are_plain_or_delta_and_repeated_ones_keep_their_dictionary() {
    let (buf, _) = raw_rows();
    let bytes = encode(&buf, false).expect("encodes");
    let file = SerializedFileReader::new(Bytes::from(bytes)).expect("reads back");
    let rg = file.metadata().row_group(0);
    for c in rg.columns() {
        let name = c.column_path().string();
        let dict = c.encodings().any(|e| e == Encoding::RLE_DICTIONARY);
        assert_eq!(dict, !PLAIN_COLUMNS.contains(&name.as_str()), "{name}");
        let delta = c.encodings().any(|e| e == Encoding::DELTA_BINARY_PACKED);
        assert_eq!(delta, DELTA_COLUMNS.contains(&name.as_str()), "{name}");
    }
    assert_eq!(file.metadata().file_metadata().num_rows(), 100);
}

/// More distinct metric names than the process keeps (3,000 of 40
/// bytes, twice the 64 KiB bound): the ones past the bound are written
/// as slices, and every row reads back as written.
#[test]
fn repeated_columns_read_back_past_the_kept_bound() {
    let names: Vec<String> = (0..3000).map(|k| format!("{k:0>40}")).collect();
    let mut buf = TableBuffer::new(TableId::Raw);
    for (k, name) in names.iter().chain(names.iter().rev()).enumerate() {
        buf.row(k as i64)
            .str("venue")
            .str("gw")
            .str(["wearable", "pitch", "crowd"][k % 3])
            .str("band-1")
            .str(name)
            .f64(1.0)
            .i64(1)
            .opt_i64(None)
            .i64(k as i64)
            .i64(k as i64)
            .opt_bool(None)
            .finish();
    }
    let bytes = encode(&buf, false).expect("encodes");
    let file = SerializedFileReader::new(Bytes::from(bytes)).expect("reads back");
    let read: Vec<(String, String)> = file
        .get_row_iter(None)
        .expect("rows")
        .map(|row| {
            let row = row.expect("a row");
            let s = |name: &str| match row.get_column_iter().find(|(n, _)| n.as_str() == name) {
                Some((_, parquet::record::Field::Str(v))) => v.clone(),
                other => panic!("{name}: {other:?}"),
            };
            (s("sensor"), s("metric"))
        })
        .collect();
    let want: Vec<(String, String)> = names
        .iter()
        .chain(names.iter().rev())
        .enumerate()
        .map(|(k, n)| (["wearable", "pitch", "crowd"][k % 3].to_string(), n.clone()))
        .collect();
    assert_eq!(read, want);
}

#[test]
fn delta_columns_read_back_as_written() {
    let (buf, rows) = raw_rows();
    let bytes = encode(&buf, false).expect("encodes");
    let file = SerializedFileReader::new(Bytes::from(bytes)).expect("reads back");
    let read: Vec<(Option<i64>, i64, i64)> = file
        .get_row_iter(None)
        .expect("rows")
        .map(|row| {
            let row = row.expect("a row");
            let int = |name: &str| {
                row.get_column_iter()
                    .find(|(n, _)| n.as_str() == name)
                    .map(|(_, f)| f.clone())
            };
            let as_i64 = |f: Option<parquet::record::Field>| match f {
                Some(parquet::record::Field::Long(v)) => Some(v),
                Some(parquet::record::Field::TimestampMicros(v)) => Some(v),
                _ => None,
            };
            (
                as_i64(int("event_id")),
                as_i64(int("event_time")).expect("event_time"),
                as_i64(int("received_at")).expect("received_at"),
            )
        })
        .collect();
    assert_eq!(read, rows);
}

#[test]
fn the_boolean_column_reads_back_with_its_nulls() {
    let (buf, _) = raw_rows();
    let bytes = encode(&buf, false).expect("encodes");
    let file = SerializedFileReader::new(Bytes::from(bytes)).expect("reads back");
    let read: Vec<Option<bool>> = file
        .get_row_iter(None)
        .expect("rows")
        .map(|row| {
            let row = row.expect("a row");
            match row.get_column_iter().last() {
                Some((n, parquet::record::Field::Bool(b))) if n == "clock_synchronized" => Some(*b),
                Some((n, parquet::record::Field::Null)) if n == "clock_synchronized" => None,
                other => panic!("last column {other:?}"),
            }
        })
        .collect();
    let want: Vec<Option<bool>> = (0..100)
        .map(|k| (k % 4 != 0).then_some(k % 2 == 0))
        .collect();
    assert_eq!(read, want);
}

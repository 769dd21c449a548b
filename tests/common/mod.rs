//! Helpers shared by the integration tests: running the binary, reading
//! Parquet back with the `parquet` crate (an independent reader of what the
//! gateway wrote).
#![allow(dead_code)]

pub mod broker;
pub mod config;
pub mod console;
pub mod replay;
pub mod serial;
pub mod services;
pub mod stores;
pub mod tmpfs;

// Not every test file uses both.
#[allow(unused_imports)]
pub use config::VenueConfig;
#[allow(unused_imports)]
pub use replay::Replay;

use parquet::file::reader::{FileReader, SerializedFileReader};
use parquet::record::Field;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// The pitchside binary built for this test run, or the one named by
/// `PITCHSIDE_BIN` (to run a test against an older build by hand).
pub fn bin() -> Command {
    Command::new(bin_path())
}

/// The path [`bin`] runs.
pub fn bin_path() -> PathBuf {
    std::env::var_os("PITCHSIDE_BIN").map_or_else(
        || PathBuf::from(env!("CARGO_BIN_EXE_pitchside")),
        PathBuf::from,
    )
}

/// Total size of the files under `dir` (0 if it cannot be read), in bytes.
pub fn bytes_under(dir: &Path) -> u64 {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return 0;
    };
    entries
        .flatten()
        .map(|e| match e.file_type() {
            Ok(t) if t.is_dir() => bytes_under(&e.path()),
            _ => e.metadata().map_or(0, |m| m.len()),
        })
        .sum()
}

/// Writes a minimal config ([`VenueConfig::new`]) into `dir` with `extra`
/// TOML appended; returns its path.
pub fn config(dir: &Path, extra: &str) -> PathBuf {
    VenueConfig::new(dir).extra(extra).write()
}

/// Runs `cmd` and asserts that it succeeded (its stderr in the message).
pub fn succeed(cmd: &mut Command) -> Output {
    let o = cmd.output().unwrap();
    assert!(
        o.status.success(),
        "{cmd:?} failed: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    o
}

/// Every `.parquet` file under `root/table`, sorted.
pub fn files(root: &Path, table: &str) -> Vec<PathBuf> {
    let mut out = Vec::new();
    fn walk(d: &Path, out: &mut Vec<PathBuf>) {
        if let Ok(rd) = std::fs::read_dir(d) {
            for e in rd.flatten() {
                let p = e.path();
                if p.is_dir() {
                    walk(&p, out);
                } else if p.extension().is_some_and(|x| x == "parquet") {
                    out.push(p);
                }
            }
        }
    }
    walk(&root.join(table), &mut out);
    out.sort();
    out
}

/// A row as column name → field.
pub type Row = BTreeMap<String, Field>;

/// Reads every row of every file of a table.
pub fn rows(root: &Path, table: &str) -> Vec<Row> {
    let mut out = Vec::new();
    for f in files(root, table) {
        let reader = SerializedFileReader::new(std::fs::File::open(&f).unwrap()).unwrap();
        for row in reader.get_row_iter(None).unwrap() {
            let row = row.unwrap();
            out.push(
                row.get_column_iter()
                    .map(|(k, v)| (k.clone(), v.clone()))
                    .collect(),
            );
        }
    }
    out
}

/// A string field.
pub fn s<'a>(r: &'a Row, k: &str) -> &'a str {
    match &r[k] {
        Field::Str(s) => s,
        f => panic!("{k} is not a string: {f:?}"),
    }
}

/// An integer or timestamp field.
pub fn i(r: &Row, k: &str) -> i64 {
    match &r[k] {
        Field::Long(v) => *v,
        Field::TimestampMicros(v) => *v,
        f => panic!("{k} is not an integer: {f:?}"),
    }
}

/// A float field.
pub fn f(r: &Row, k: &str) -> f64 {
    match &r[k] {
        Field::Double(v) => *v,
        f => panic!("{k} is not a double: {f:?}"),
    }
}

/// Whether a field is null.
pub fn is_null(r: &Row, k: &str) -> bool {
    matches!(r[k], Field::Null)
}

/// The sequence number of a `{gateway}-{seq:012}.parquet` file name or key.
pub fn seq_of(name: &str) -> u64 {
    name.rsplit('/')
        .next()
        .and_then(|n| n.trim_end_matches(".parquet").rsplit('-').next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("{name} is not a pitchside file name"))
}

/// Asserts that the keys of every table number 0..n with no gap or repeat.
pub fn assert_contiguous_seqs<'a>(keys: impl IntoIterator<Item = &'a str>) {
    let mut by_table: BTreeMap<&str, Vec<u64>> = BTreeMap::new();
    for k in keys {
        by_table
            .entry(k.split('/').next().unwrap_or(""))
            .or_default()
            .push(seq_of(k));
    }
    for (table, mut seqs) in by_table {
        seqs.sort();
        assert_eq!(
            seqs,
            (0..seqs.len() as u64).collect::<Vec<_>>(),
            "{table} has gaps or repeats"
        );
    }
}

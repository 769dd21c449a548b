//! Once the table writer has written a `raw` row group, memory a row group
//! frees stays in the C allocator's heap for the next one (`sinks::heap`);
//! before that, and so with `raw` off, glibc keeps its defaults. One test in
//! its own binary: the allocator's thresholds are process-wide and glibc moves
//! them as blocks are freed, so the process must be fresh.

#![cfg(all(target_os = "linux", target_env = "gnu"))]

use pitchside::sinks::heap::{MMAP_THRESHOLD, TRIM_THRESHOLD};
use pitchside::sinks::spool::Spool;
use pitchside::sinks::writer::TableWriter;
use pitchside::sinks::UploadStats;
use pitchside::tables::{ColType, TableBuffer, TableId};
use std::hint::black_box;

/// A block of `len` bytes, touched and freed; then the free bytes the
/// allocator holds in its heaps.
fn free_heap_after_a_block_of(len: usize) -> usize {
    let v = black_box(vec![7u8; len]);
    drop(v);
    // SAFETY: mallinfo2 only reads the allocator's counters.
    unsafe { libc::mallinfo2() }.fordblks
}

/// One row of `table`, every column set.
fn one_row(table: TableId) -> TableBuffer {
    let mut buf = TableBuffer::new(table);
    let mut r = buf.row(1_764_583_200_000_000);
    for c in table.columns() {
        r = match c.ty {
            ColType::Utf8 | ColType::Binary => r.str("x"),
            ColType::I64 | ColType::Ts => r.i64(1_764_583_200_000_000),
            ColType::F64 => r.f64(1.5),
            ColType::Bool => r.bool(true),
        };
    }
    r.finish();
    buf
}

#[test]
fn freed_memory_is_kept_from_the_first_raw_row_group_on() {
    // glibc raises its own threshold to the size of a mapped block once it
    // is freed: each check uses a larger block than the one before, so that
    // what one leaves behind cannot make the next pass.
    const SMALL: usize = 256 << 10;
    const MEDIUM: usize = 1 << 20;
    const LARGE: usize = (3 << 19) + (1 << 18);
    const _: () = assert!(LARGE < MMAP_THRESHOLD && LARGE < TRIM_THRESHOLD);

    let off = free_heap_after_a_block_of(SMALL);
    assert!(
        off < SMALL,
        "glibc's defaults map a 256 KiB block alone and give it back ({off} bytes free in the heap)"
    );

    let dir = tempfile::tempdir().expect("temp dir");
    let spool = Spool::open(dir.path(), "venue", "gw").expect("spool");
    let mut writer = TableWriter::new(spool, false, 1_000);
    let stats = UploadStats::default();
    writer
        .append(&one_row(TableId::WindowsGeneric), &stats)
        .expect("windows row group");
    let windows = free_heap_after_a_block_of(MEDIUM);
    assert!(
        windows < MEDIUM,
        "a windows row group leaves glibc's defaults ({windows} bytes free in the heap)"
    );

    writer
        .append(&one_row(TableId::Raw), &stats)
        .expect("raw row group");
    let raw = free_heap_after_a_block_of(LARGE);
    assert!(
        raw >= LARGE,
        "after a raw row group a freed 1.75 MiB block stays in the heap ({raw} bytes free)"
    );
}

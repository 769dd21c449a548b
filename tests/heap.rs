//! With `raw` on, memory a row group frees stays in the C allocator's heap
//! for the next one (`sinks::heap`); with `raw` off glibc keeps its defaults.
//! One test in its own binary: the allocator's thresholds are process-wide
//! and glibc moves them as blocks are freed, so the process must be fresh.

#![cfg(all(target_os = "linux", target_env = "gnu"))]

use pitchside::sinks::heap::{keep_freed_memory, MMAP_THRESHOLD, TRIM_THRESHOLD};
use std::hint::black_box;

/// A block of `len` bytes, touched and freed; then the free bytes the
/// allocator holds in its heaps.
fn free_heap_after_a_block_of(len: usize) -> usize {
    let v = black_box(vec![7u8; len]);
    drop(v);
    // SAFETY: mallinfo2 only reads the allocator's counters.
    unsafe { libc::mallinfo2() }.fordblks
}

#[test]
fn a_freed_row_group_block_is_kept_only_when_raw_is_on() {
    // glibc raises its own threshold to the size of a mapped block once it
    // is freed: the raw-off block is smaller than the raw-on one, so that
    // what it leaves behind cannot make the second check pass.
    const SMALL: usize = 256 << 10;
    const LARGE: usize = 3 << 19;
    const _: () = assert!(SMALL < LARGE && LARGE < MMAP_THRESHOLD && LARGE < TRIM_THRESHOLD);

    keep_freed_memory(false);
    let off = free_heap_after_a_block_of(SMALL);
    assert!(
        off < SMALL,
        "raw off: glibc's defaults map a 256 KiB block alone and give it back ({off} bytes free in the heap)"
    );

    keep_freed_memory(true);
    let on = free_heap_after_a_block_of(LARGE);
    assert!(
        on >= LARGE,
        "raw on: the freed 1.5 MiB block stays in the heap for the next row group ({on} bytes free)"
    );
}

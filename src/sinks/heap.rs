//! How the C allocator hands freed memory back, set for the `raw` table.
//!
//! The `parquet` crate builds every column's writer afresh for each row group
//! (a zstd context and its work space, page, dictionary and value buffers) and
//! frees it all when the row group is written. glibc maps blocks above a
//! threshold on their own and gives the top of its heap back to the kernel
//! once more than a few hundred KiB of it is free, so each row group faults
//! the same memory in again: with `raw` on, a replay of 1,000,000 venue lines
//! took 42,000 page faults and about a tenth of its time in the kernel
//! zeroing pages (README "Performance").
//!
//! [`keep_freed_memory`] asks glibc to serve blocks under [`MMAP_THRESHOLD`]
//! from its heap and to keep up to [`TRIM_THRESHOLD`] of free heap: the next
//! row group reuses the pages of the last. It is called only when `raw` is on:
//! without it the tables are a few row groups a minute, there is nothing to
//! gain, and the kept memory would count against the raw-off RSS target. The
//! cost is bounded by the two settings (measured: +1.6 MiB peak RSS).
//!
//! On a C library other than glibc (musl) it does nothing.

/// Blocks smaller than this come from the heap, not a mapping of their own.
pub const MMAP_THRESHOLD: usize = 2 << 20;

/// Free memory at the top of the heap kept before any is given back.
pub const TRIM_THRESHOLD: usize = 4 << 20;

/// Sets the allocator for `raw` (see the module docs): keeps freed memory
/// when `raw` is on, leaves glibc's defaults otherwise. Process-wide; a later
/// call with `raw` off does not undo an earlier one.
pub fn keep_freed_memory(raw: bool) {
    if raw {
        set_thresholds();
    }
}

#[cfg(all(target_os = "linux", target_env = "gnu"))]
#[allow(unsafe_code)]
fn set_thresholds() {
    // SAFETY: mallopt only reads its two integer arguments; it is safe to call
    // from any thread at any time (glibc takes its arena locks).
    let ok = unsafe {
        libc::mallopt(libc::M_MMAP_THRESHOLD, MMAP_THRESHOLD as libc::c_int) == 1
            && libc::mallopt(libc::M_TRIM_THRESHOLD, TRIM_THRESHOLD as libc::c_int) == 1
    };
    if !ok {
        tracing::debug!("the C allocator refused its thresholds; row groups fault their memory in again (slower, nothing lost)");
    }
}

#[cfg(not(all(target_os = "linux", target_env = "gnu")))]
fn set_thresholds() {}

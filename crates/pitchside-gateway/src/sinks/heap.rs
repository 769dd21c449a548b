//! How the C allocator hands freed memory back, set once `raw` row groups
//! are written.
//!
//! The `parquet` crate builds every column's writer afresh for each row group
//! (a zstd context and its work space, page, dictionary and value buffers) and
//! frees it all when the row group is written. glibc maps blocks above a
//! threshold on their own and gives the top of its heap back to the kernel
//! once a few hundred KiB of it are free, so each row group faulted the same
//! memory in again: with `raw` on, a replay of 1,000,000 venue lines took
//! 43,000 page faults and a tenth of its time in the kernel zeroing pages
//! (docs/src/perf-log.md).
//!
//! [`keep_freed_memory`] asks glibc to serve blocks under [`MMAP_THRESHOLD`]
//! from its heap and to keep up to [`TRIM_THRESHOLD`] of free heap, so that a
//! row group reuses the pages of the last. The table writer calls it at the
//! first `raw` row group: the `raw` table is the one written row group after
//! row group, one row a reading. With `raw` off the other tables are a few row
//! groups a minute, there is nothing to gain, and the kept memory would count
//! against the raw-off RSS target; an idle gateway has written no row group
//! and keeps its small footprint. The cost is bounded by the two settings
//! (measured: about 2 MiB more peak RSS in a raw-on replay).
//!
//! On a C library other than glibc (musl) it does nothing.

use std::sync::Once;

/// Blocks smaller than this come from the heap, not a mapping of their own.
pub const MMAP_THRESHOLD: usize = 2 << 20;

/// Free memory at the top of the heap kept before any is given back.
pub const TRIM_THRESHOLD: usize = 4 << 20;

/// Sets the allocator to keep freed memory (see the module docs). The first
/// call sets it, for the whole process and for good; later calls cost one
/// atomic load.
pub fn keep_freed_memory() {
    static SET: Once = Once::new();
    SET.call_once(set_thresholds);
}

#[cfg(all(target_os = "linux", target_env = "gnu"))]
#[allow(unsafe_code)]
fn set_thresholds() {
    // SAFETY: mallopt only reads its two integer arguments and takes glibc's
    // own arena locks; it may be called from any thread at any time.
    let ok = unsafe {
        libc::mallopt(libc::M_MMAP_THRESHOLD, MMAP_THRESHOLD as libc::c_int) == 1
            && libc::mallopt(libc::M_TRIM_THRESHOLD, TRIM_THRESHOLD as libc::c_int) == 1
    };
    if !ok {
        tracing::debug!(
            "the C allocator refused its thresholds: row groups fault their memory \
             in again (slower, nothing lost)"
        );
    }
}

#[cfg(not(all(target_os = "linux", target_env = "gnu")))]
fn set_thresholds() {}

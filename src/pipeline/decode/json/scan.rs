//! Word-at-a-time scanning for the reader's hot loops: portable integer
//! arithmetic on eight bytes at once, no platform intrinsics, so the same
//! code runs (and is tested under qemu) on every target.

const ONES: u64 = 0x0101_0101_0101_0101;
const HIGH: u64 = 0x8080_8080_8080_8080;

/// Bytes at the start of `b` that are none of `"`, `\\` and the control
/// characters below 0x20 (a string's plain run), eight at a time. It stops
/// at the last whole word at the latest: the caller reads the tail.
pub(super) fn plain_prefix(b: &[u8]) -> usize {
    for (k, chunk) in b.chunks_exact(8).enumerate() {
        let w = u64::from_le_bytes(chunk.try_into().unwrap_or_default());
        let quote = w ^ (ONES * b'"' as u64);
        let slash = w ^ (ONES * b'\\' as u64);
        // The high bit of each byte that is zero (quote, backslash) or
        // below 0x20 (control); exact up to the first such byte, which is
        // the lowest on a little-endian read.
        let hits = (quote.wrapping_sub(ONES) & !quote
            | slash.wrapping_sub(ONES) & !slash
            | w.wrapping_sub(ONES * 0x20) & !w)
            & HIGH;
        if hits != 0 {
            return k * 8 + (hits.trailing_zeros() / 8) as usize;
        }
    }
    b.len() / 8 * 8
}

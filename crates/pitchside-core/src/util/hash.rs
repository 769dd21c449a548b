//! A fast, non-cryptographic hasher for the detector's and windows' key maps.
//!
//! Keys are short byte strings (`sensor + device_id + metric`); SipHash costs
//! more than the rest of a reading's work. The seed is fixed so that runs are
//! reproducible; keys come from the venue's own sensors, and every map using
//! it has a hard size cap, so a hostile key set can slow lookups but never
//! grow memory.

use std::hash::{BuildHasherDefault, Hasher};

/// Fx-style multiplicative hasher (as used inside rustc).
#[derive(Default, Clone, Copy)]
pub struct FxHasher {
    hash: u64,
}

const SEED: u64 = 0x51_7c_c1_b7_27_22_0a_95;

impl FxHasher {
    #[inline]
    fn add(&mut self, word: u64) {
        self.hash = (self.hash.rotate_left(5) ^ word).wrapping_mul(SEED);
    }
}

impl Hasher for FxHasher {
    #[inline]
    fn write(&mut self, bytes: &[u8]) {
        let mut chunks = bytes.chunks_exact(8);
        for c in &mut chunks {
            // chunks_exact yields exactly 8 bytes.
            self.add(u64::from_le_bytes(c.try_into().unwrap_or([0; 8])));
        }
        let rest = chunks.remainder();
        if !rest.is_empty() {
            self.add(tail_word(rest) ^ ((rest.len() as u64) << 56));
        }
    }

    #[inline]
    fn write_u8(&mut self, i: u8) {
        self.add(i as u64);
    }

    #[inline]
    fn write_u64(&mut self, i: u64) {
        self.add(i);
    }

    #[inline]
    fn write_usize(&mut self, i: usize) {
        self.add(i as u64);
    }

    #[inline]
    fn finish(&self) -> u64 {
        // Final avalanche so that low bits (used by hashbrown's buckets) mix well.
        let mut h = self.hash;
        h ^= h >> 33;
        h = h.wrapping_mul(0xff51_afd7_ed55_8ccd);
        h ^= h >> 33;
        h
    }
}

/// The 1–7 bytes of `rest` as a little-endian word, zero above them, read
/// with at most three loads from `rest` itself. Copying them into a zeroed
/// buffer and reading that back made the CPU wait for the copy's stores on
/// every hash of a key whose length is not a multiple of 8.
#[inline]
fn tail_word(rest: &[u8]) -> u64 {
    let n = rest.len();
    let at = |i: usize| rest.get(i).copied().unwrap_or(0) as u64;
    let word4 = |i: usize| {
        rest.get(i..i + 4)
            .and_then(|b| b.try_into().ok())
            .map_or(0, u32::from_le_bytes) as u64
    };
    if n >= 4 {
        // Two 4-byte reads that overlap when n < 8: equal bytes meet.
        word4(0) | word4(n - 4) << (8 * (n - 4))
    } else {
        // n of 1–3: bytes 0, n/2 and n-1 cover them all.
        at(0) | at(n / 2) << (8 * (n / 2)) | at(n - 1) << (8 * (n - 1))
    }
}

/// `HashMap` hasher builder using [`FxHasher`].
pub type FxBuild = BuildHasherDefault<FxHasher>;

/// A `HashMap` with [`FxHasher`].
pub type FxHashMap<K, V> = std::collections::HashMap<K, V, FxBuild>;

/// The [`FxHasher`] hash of a byte string, for tables that keep their keys
/// themselves (`hashbrown::HashTable`).
#[inline]
pub fn fx_hash(bytes: &[u8]) -> u64 {
    use std::hash::BuildHasher;
    FxBuild::default().hash_one(bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_tail_word_is_its_bytes_zero_padded() {
        let bytes: Vec<u8> = (1..=7u8).map(|b| b.wrapping_mul(0x9d) | 0x80).collect();
        for n in 1..=7 {
            let rest = &bytes[..n];
            let mut buf = [0u8; 8];
            buf[..n].copy_from_slice(rest);
            assert_eq!(tail_word(rest), u64::from_le_bytes(buf), "{n} bytes");
        }
    }

    #[test]
    fn hashes_are_those_of_the_hasher_as_it_was() {
        // The word sequence FxHasher has always hashed: the length, whole
        // 8-byte words, then the tail zero-padded with its length on top.
        fn reference(bytes: &[u8]) -> u64 {
            let mut h = FxHasher::default();
            h.add(bytes.len() as u64);
            let mut chunks = bytes.chunks_exact(8);
            for c in &mut chunks {
                h.add(u64::from_le_bytes(c.try_into().unwrap()));
            }
            let rest = chunks.remainder();
            if !rest.is_empty() {
                let mut buf = [0u8; 8];
                buf[..rest.len()].copy_from_slice(rest);
                h.add(u64::from_le_bytes(buf) ^ ((rest.len() as u64) << 56));
            }
            h.finish()
        }
        let text = b"\x01band-00042-9e37\x00heart_rate and more bytes";
        for n in 0..text.len() {
            assert_eq!(fx_hash(&text[..n]), reference(&text[..n]), "{n} bytes");
        }
    }
}

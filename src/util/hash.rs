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
            let mut buf = [0u8; 8];
            buf[..rest.len()].copy_from_slice(rest);
            self.add(u64::from_le_bytes(buf) ^ ((rest.len() as u64) << 56));
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

//! Short byte strings kept inside the struct that owns them.
//!
//! The detector's and device health's tables hold thousands of keys, more
//! than the CPU's caches. A key compared through a pointer costs a cache
//! miss of its own; kept inline, it is read with the record the caller needs
//! next anyway. Strings longer than the inline room (none that the decoder
//! accepts, SPEC §1) go to the heap and work the same.

/// Whether `a` and `b` are the same bytes: `a == b`, with no call to
/// `memcmp` for the lengths ids and names have. Up to 16 bytes are two
/// overlapping 8-byte (or 4-byte) words from each end; a call costs more
/// than the compare itself, and a table lookup makes one or two of them.
#[inline(always)]
pub fn short_eq(a: &[u8], b: &[u8]) -> bool {
    let n = a.len();
    if n != b.len() {
        return false;
    }
    // Words from both ends: they overlap when `n` is short of twice the word.
    fn ends<const W: usize>(s: &[u8]) -> ([u8; W], [u8; W]) {
        let mut head = [0; W];
        let mut tail = [0; W];
        head.copy_from_slice(&s[..W]);
        tail.copy_from_slice(&s[s.len() - W..]);
        (head, tail)
    }
    match n {
        8..=16 => ends::<8>(a) == ends::<8>(b),
        4..=7 => ends::<4>(a) == ends::<4>(b),
        _ => a == b,
    }
}

/// Up to `N` bytes inline, longer ones on the heap.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum InlineBytes<const N: usize> {
    /// The first `len` bytes of `bytes`.
    Inline {
        /// Bytes used.
        len: u8,
        /// The bytes, zero past `len`.
        bytes: [u8; N],
    },
    /// Longer than `N`.
    Heap(Box<[u8]>),
}

impl<const N: usize> InlineBytes<N> {
    /// The empty string.
    pub const EMPTY: Self = InlineBytes::Inline {
        len: 0,
        bytes: [0; N],
    };

    /// A copy of `b`.
    pub fn new(b: &[u8]) -> Self {
        if b.len() > N || b.len() > u8::MAX as usize {
            return InlineBytes::Heap(b.into());
        }
        let mut bytes = [0; N];
        bytes[..b.len()].copy_from_slice(b);
        InlineBytes::Inline {
            len: b.len() as u8,
            bytes,
        }
    }

    /// The bytes.
    #[inline]
    pub fn as_slice(&self) -> &[u8] {
        match self {
            InlineBytes::Inline { len, bytes } => &bytes[..*len as usize],
            InlineBytes::Heap(b) => b,
        }
    }

    /// Bytes held on the heap (0 when inline).
    pub fn heap_len(&self) -> usize {
        match self {
            InlineBytes::Inline { .. } => 0,
            InlineBytes::Heap(b) => b.len(),
        }
    }
}

/// A string of up to `N` bytes inline (see [`InlineBytes`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InlineStr<const N: usize>(InlineBytes<N>);

impl<const N: usize> InlineStr<N> {
    /// The empty string.
    pub const EMPTY: Self = InlineStr(InlineBytes::EMPTY);

    /// A copy of `s`.
    pub fn new(s: &str) -> Self {
        InlineStr(InlineBytes::new(s.as_bytes()))
    }

    /// The string.
    #[inline]
    pub fn as_str(&self) -> &str {
        // Only ever built from a `&str`, so always UTF-8.
        std::str::from_utf8(self.0.as_slice()).unwrap_or_default()
    }

    /// The string's bytes (no UTF-8 check, unlike [`InlineStr::as_str`]).
    #[inline]
    pub fn as_bytes(&self) -> &[u8] {
        self.0.as_slice()
    }

    /// Whether this is `s` (no UTF-8 check, unlike [`InlineStr::as_str`]).
    #[inline]
    pub fn is(&self, s: &str) -> bool {
        short_eq(self.0.as_slice(), s.as_bytes())
    }

    /// Bytes held on the heap (0 when inline).
    pub fn heap_len(&self) -> usize {
        self.0.heap_len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn short_strings_stay_inline_and_long_ones_go_to_the_heap() {
        let mut cases: Vec<String> = [0, 1, 7, 8, 9, 63, 64, 65, 200]
            .map(|n| "x".repeat(n))
            .into();
        cases.push("é".repeat(32)); // 64 bytes
        cases.push("é".repeat(33));
        for s in &cases {
            let b = InlineStr::<64>::new(s);
            assert_eq!(b.as_str(), s);
            assert!(b.is(s) && !b.is("y"));
            assert_eq!(b.as_bytes(), s.as_bytes());
            assert_eq!(b.heap_len(), if s.len() > 64 { s.len() } else { 0 });
            assert_eq!(b, InlineStr::<64>::new(s));
        }
        assert_eq!(
            InlineBytes::<300>::new(&[7; 256]).heap_len(),
            256,
            "past u8 lengths"
        );
        assert_eq!(InlineBytes::<300>::new(&[7; 255]).heap_len(), 0);
        assert_eq!(InlineBytes::<4>::EMPTY.as_slice(), b"");
    }

    /// `short_eq` answers as `==` does: every length through the word
    /// sizes' edges, a difference at every position, and other lengths.
    #[test]
    fn short_eq_is_slice_equality() {
        for n in 0..40 {
            let a: Vec<u8> = (0..n).map(|i| (i * 37 + 11) as u8).collect();
            assert!(short_eq(&a, &a.clone()), "{n} bytes");
            for at in 0..n {
                let mut b = a.clone();
                b[at] ^= 0x20;
                assert!(!short_eq(&a, &b), "{n} bytes, byte {at} differs");
                assert!(!short_eq(&b, &a), "{n} bytes, byte {at} differs");
            }
            let longer = [a.as_slice(), &[0]].concat();
            assert!(!short_eq(&a, &longer) && !short_eq(&longer, &a), "{n}");
        }
        assert!(short_eq(b"band-00001-9e37", b"band-00001-9e37"));
        assert!(!short_eq(b"band-00001-9e37", b"band-00001-9e38"));
        assert!(!short_eq(b"heart_rate", b"heart_rat"));
    }
}

//! The framing both state files share: a file header (what the file is and
//! which format it has) and checksummed frames around bodies. Pure: bytes in,
//! bytes out; [`super::checkpoint`] and [`super::journal`] do the file I/O.
//!
//! All numbers are little-endian.
//!
//! ```text
//! header (12 bytes):  magic [u8; 8]   version u32
//! frame (12 + n):     length u64 (n)  CRC-32 u32 of the body   body [u8; n]
//! ```
//!
//! CRC-32 is the IEEE polynomial (`crc32fast`, as in zlib and gzip). Builds
//! before this one used FNV-1a 64 with other field widths: [`LEGACY_CHECKPOINT`]
//! and [`LEGACY_JOURNAL`] read those files once after an upgrade; nothing
//! writes them any more.

/// Bytes of a file header: magic and version.
pub const HEADER_LEN: usize = 12;

/// What the first bytes of a file say, for a reader expecting `magic`.
#[derive(Debug, PartialEq, Eq)]
pub enum Header<'a> {
    /// The expected magic and a version; `rest` follows the header.
    Ours {
        /// Format version.
        version: u32,
        /// The bytes after the header.
        rest: &'a [u8],
    },
    /// Fewer bytes than a header, all matching the magic as far as they go
    /// (an empty file included): a file cut short before its header was
    /// complete.
    Cut,
    /// Some other magic: not this kind of file, or one with no header.
    Other,
}

/// Appends a file header.
pub fn put_header(out: &mut Vec<u8>, magic: &[u8; 8], version: u32) {
    out.extend_from_slice(magic);
    out.extend_from_slice(&version.to_le_bytes());
}

/// Reads the header a file starts with.
pub fn header<'a>(bytes: &'a [u8], magic: &[u8; 8]) -> Header<'a> {
    let seen = bytes.len().min(magic.len());
    if bytes[..seen] != magic[..seen] {
        return Header::Other;
    }
    match bytes.get(8..HEADER_LEN) {
        Some(v) => Header::Ours {
            version: u32::from_le_bytes(v.try_into().unwrap_or_default()),
            rest: &bytes[HEADER_LEN..],
        },
        None => Header::Cut,
    }
}

/// Why a frame could not be read.
#[derive(Debug, PartialEq, Eq)]
pub enum FrameError {
    /// Fewer bytes than a frame's head (length and checksum): a write cut
    /// short (a crash mid-write, or a truncated file).
    CutHead,
    /// Fewer bytes than the frame's length field says: a write cut short.
    Torn {
        /// Body bytes the length field announces.
        want: u64,
        /// Body bytes there are.
        have: usize,
    },
    /// The checksum does not match the body: damaged.
    Damaged,
}

/// How frames are laid out: the widths of the length and checksum fields
/// (in this order, before the body) and the checksum.
#[derive(Debug)]
pub struct Framing {
    len_bytes: usize,
    sum_bytes: usize,
    sum: fn(&[u8]) -> u64,
}

/// The framing this build writes: `u64` length, CRC-32 `u32`.
pub const CURRENT: Framing = Framing {
    len_bytes: 8,
    sum_bytes: 4,
    sum: crc32,
};

/// Checkpoints of version 1: `u64` length, FNV-1a 64 `u64`.
pub const LEGACY_CHECKPOINT: Framing = Framing {
    len_bytes: 8,
    sum_bytes: 8,
    sum: fnv1a,
};

/// Journal files without a header: `u32` length, FNV-1a 64 `u64`.
pub const LEGACY_JOURNAL: Framing = Framing {
    len_bytes: 4,
    sum_bytes: 8,
    sum: fnv1a,
};

fn crc32(b: &[u8]) -> u64 {
    crc32fast::hash(b) as u64
}

fn fnv1a(b: &[u8]) -> u64 {
    b.iter().fold(0xcbf2_9ce4_8422_2325, |h, &x| {
        (h ^ x as u64).wrapping_mul(0x0000_0100_0000_01b3)
    })
}

/// Reads `width` little-endian bytes (at most 8) as a `u64`.
fn le(bytes: &[u8], width: usize) -> u64 {
    let mut a = [0u8; 8];
    a[..width].copy_from_slice(&bytes[..width]);
    u64::from_le_bytes(a)
}

impl Framing {
    /// Bytes before the body: length and checksum.
    pub const fn head_len(&self) -> usize {
        self.len_bytes + self.sum_bytes
    }

    /// Appends `body` as a frame.
    pub fn put(&self, out: &mut Vec<u8>, body: &[u8]) {
        let at = out.len();
        out.resize(at + self.head_len(), 0);
        out.extend_from_slice(body);
        self.fill_head(out, at);
    }

    /// Writes the head of the frame whose head starts at `at` in `buf` and
    /// whose body is the rest of `buf` (for bodies encoded in place).
    pub fn fill_head(&self, buf: &mut [u8], at: usize) {
        let (head, body) = buf[at..].split_at_mut(self.head_len());
        let len = (body.len() as u64).to_le_bytes();
        let sum = (self.sum)(body).to_le_bytes();
        head[..self.len_bytes].copy_from_slice(&len[..self.len_bytes]);
        head[self.len_bytes..].copy_from_slice(&sum[..self.sum_bytes]);
    }

    /// Splits the frame at the start of `bytes` into its checked body and
    /// the bytes after it.
    pub fn split<'a>(&self, bytes: &'a [u8]) -> Result<(&'a [u8], &'a [u8]), FrameError> {
        let body_and_rest = bytes.get(self.head_len()..).ok_or(FrameError::CutHead)?;
        let want = le(bytes, self.len_bytes);
        let sum = le(&bytes[self.len_bytes..], self.sum_bytes);
        let have = body_and_rest.len();
        let n = usize::try_from(want)
            .ok()
            .filter(|&n| n <= have)
            .ok_or(FrameError::Torn { want, have })?;
        let (body, rest) = body_and_rest.split_at(n);
        if (self.sum)(body) != sum {
            return Err(FrameError::Damaged);
        }
        Ok((body, rest))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #[test]
        fn any_bytes_read_as_a_frame_or_refused_never_a_panic(
            bytes in prop::collection::vec(any::<u8>(), 0..48)
        ) {
            for framing in [&CURRENT, &LEGACY_CHECKPOINT, &LEGACY_JOURNAL] {
                if let Ok((body, rest)) = framing.split(&bytes) {
                    prop_assert_eq!(framing.head_len() + body.len() + rest.len(), bytes.len());
                }
            }
            let _ = header(&bytes, b"PSTEST\0\0");
        }

        #[test]
        fn every_body_comes_back_from_its_frame(
            body in prop::collection::vec(any::<u8>(), 0..300),
            cut in 0usize..312,
        ) {
            let mut out = Vec::new();
            CURRENT.put(&mut out, &body);
            prop_assert_eq!(CURRENT.split(&out), Ok((&body[..], &[][..])));
            if cut < out.len() {
                prop_assert!(CURRENT.split(&out[..cut]).is_err());
            }
        }
    }

    #[test]
    fn crc32_is_the_ieee_check_value() {
        // The standard check value of CRC-32/ISO-HDLC.
        assert_eq!(crc32(b"123456789"), 0xcbf4_3926);
    }

    #[test]
    fn frames_round_trip_and_refuse_damage() {
        let mut out = b"xy".to_vec();
        CURRENT.put(&mut out, b"hello");
        CURRENT.put(&mut out, b"");
        assert_eq!(out.len(), 2 + 12 + 5 + 12);
        assert_eq!(&out[2..10], &5u64.to_le_bytes());
        assert_eq!(&out[10..14], &crc32fast::hash(b"hello").to_le_bytes());
        let (body, rest) = CURRENT.split(&out[2..]).unwrap();
        assert_eq!((body, rest.len()), (&b"hello"[..], 12));
        assert_eq!(CURRENT.split(rest).unwrap(), (&b""[..], &b""[..]));

        let frame = &out[2..19];
        assert_eq!(
            CURRENT.split(&frame[..16]),
            Err(FrameError::Torn { want: 5, have: 4 })
        );
        assert_eq!(CURRENT.split(&frame[..11]), Err(FrameError::CutHead));
        let mut flipped = frame.to_vec();
        flipped[14] ^= 1;
        assert_eq!(CURRENT.split(&flipped), Err(FrameError::Damaged));
        let mut huge = frame.to_vec();
        huge[..8].copy_from_slice(&u64::MAX.to_le_bytes());
        assert!(matches!(
            CURRENT.split(&huge),
            Err(FrameError::Torn { want: u64::MAX, .. })
        ));
    }

    #[test]
    fn a_header_is_ours_cut_short_or_other() {
        let mut h = Vec::new();
        put_header(&mut h, b"PSTEST\0\0", 7);
        h.push(9);
        assert_eq!(
            header(&h, b"PSTEST\0\0"),
            Header::Ours {
                version: 7,
                rest: &[9]
            }
        );
        for cut in [0, 3, 8, 11] {
            assert_eq!(header(&h[..cut], b"PSTEST\0\0"), Header::Cut, "{cut}");
        }
        assert_eq!(header(&h, b"PSCKPT\0\0"), Header::Other);
        assert_eq!(header(b"PSX", b"PSTEST\0\0"), Header::Other);
    }
}

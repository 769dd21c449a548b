//! The binary encoding of saved state: little-endian values appended to a
//! body ([`Enc`]) and read back in the same order ([`Dec`]). Pure: the
//! detector, windows and fatigue encode their snapshots with it, the journal
//! its records, and `state::frame` wraps the bodies in checksummed frames
//! that `state::checkpoint` / `state::journal` store.

/// A malformed body.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DecodeError(pub &'static str);

/// Appends values to a body.
#[derive(Debug, Default)]
pub struct Enc(pub Vec<u8>);

impl Enc {
    /// A `u8`.
    pub fn u8(&mut self, v: u8) {
        self.0.push(v);
    }
    /// A `u32`.
    pub fn u32(&mut self, v: u32) {
        self.0.extend_from_slice(&v.to_le_bytes());
    }
    /// A `u64`.
    pub fn u64(&mut self, v: u64) {
        self.0.extend_from_slice(&v.to_le_bytes());
    }
    /// An `i64`.
    pub fn i64(&mut self, v: i64) {
        self.0.extend_from_slice(&v.to_le_bytes());
    }
    /// An `f64` (bit-exact).
    pub fn f64(&mut self, v: f64) {
        self.0.extend_from_slice(&v.to_bits().to_le_bytes());
    }
    /// Length-prefixed bytes.
    pub fn bytes(&mut self, v: &[u8]) {
        self.u32(v.len() as u32);
        self.0.extend_from_slice(v);
    }
    /// A string.
    pub fn str(&mut self, v: &str) {
        self.bytes(v.as_bytes());
    }
    /// An optional `i64`.
    pub fn opt_i64(&mut self, v: Option<i64>) {
        match v {
            Some(x) => {
                self.u8(1);
                self.i64(x);
            }
            None => self.u8(0),
        }
    }
    /// An optional string.
    pub fn opt_str(&mut self, v: Option<&str>) {
        match v {
            Some(x) => {
                self.u8(1);
                self.str(x);
            }
            None => self.u8(0),
        }
    }
}

/// Reads values from a body; every read checks bounds.
#[derive(Debug)]
pub struct Dec<'a> {
    b: &'a [u8],
    i: usize,
}

type R<T> = Result<T, DecodeError>;

impl<'a> Dec<'a> {
    /// A reader over `b`.
    pub fn new(b: &'a [u8]) -> Dec<'a> {
        Dec { b, i: 0 }
    }
    fn take(&mut self, n: usize) -> R<&'a [u8]> {
        let end = self
            .i
            .checked_add(n)
            .ok_or(DecodeError("length overflow"))?;
        let s = self.b.get(self.i..end).ok_or(DecodeError("truncated"))?;
        self.i = end;
        Ok(s)
    }
    fn arr<const N: usize>(&mut self) -> R<[u8; N]> {
        let mut a = [0u8; N];
        a.copy_from_slice(self.take(N)?);
        Ok(a)
    }
    /// A `u8`.
    pub fn u8(&mut self) -> R<u8> {
        Ok(self.take(1)?[0])
    }
    /// A `u32`.
    pub fn u32(&mut self) -> R<u32> {
        Ok(u32::from_le_bytes(self.arr()?))
    }
    /// A `u64`.
    pub fn u64(&mut self) -> R<u64> {
        Ok(u64::from_le_bytes(self.arr()?))
    }
    /// An `i64`.
    pub fn i64(&mut self) -> R<i64> {
        Ok(i64::from_le_bytes(self.arr()?))
    }
    /// An `f64`.
    pub fn f64(&mut self) -> R<f64> {
        Ok(f64::from_bits(self.u64()?))
    }
    /// Length-prefixed bytes.
    pub fn bytes(&mut self) -> R<&'a [u8]> {
        let n = self.u32()? as usize;
        self.take(n)
    }
    /// A string.
    pub fn string(&mut self) -> R<String> {
        String::from_utf8(self.bytes()?.to_vec()).map_err(|_| DecodeError("string is not UTF-8"))
    }
    /// An optional `i64`.
    pub fn opt_i64(&mut self) -> R<Option<i64>> {
        Ok(match self.u8()? {
            0 => None,
            1 => Some(self.i64()?),
            _ => return Err(DecodeError("bad option tag")),
        })
    }
    /// An optional string.
    pub fn opt_string(&mut self) -> R<Option<String>> {
        Ok(match self.u8()? {
            0 => None,
            1 => Some(self.string()?),
            _ => return Err(DecodeError("bad option tag")),
        })
    }
    /// A count of items that each take at least `min_item` bytes (guards
    /// against absurd counts in damaged files).
    pub fn count(&mut self, min_item: usize) -> R<usize> {
        let n = self.u64()? as usize;
        if n.saturating_mul(min_item.max(1)) > self.b.len() - self.i {
            return Err(DecodeError("count larger than the file"));
        }
        Ok(n)
    }
    /// Whether everything was read.
    pub fn finished(&self) -> bool {
        self.i == self.b.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_round_trip_through_the_codec() {
        let mut e = Enc::default();
        e.u8(7);
        e.i64(-5);
        e.f64(1e9 + 0.001);
        e.str("é");
        e.opt_i64(None);
        e.opt_str(Some("x"));
        let mut d = Dec::new(&e.0);
        assert_eq!(d.u8().unwrap(), 7);
        assert_eq!(d.i64().unwrap(), -5);
        assert_eq!(d.f64().unwrap(), 1e9 + 0.001);
        assert_eq!(d.string().unwrap(), "é");
        assert_eq!(d.opt_i64().unwrap(), None);
        assert_eq!(d.opt_string().unwrap().as_deref(), Some("x"));
        assert!(d.finished());
    }
}

//! How a section lists its keys for the schema walker: each key's name, what
//! it holds and whether it is required. Every section module keeps its list
//! (`KEYS`) next to its struct; `config::file::ROOT` puts them together.

/// What a key holds.
#[derive(Debug, Clone, Copy)]
pub enum Ty {
    /// Any text in quotes.
    Text,
    /// A duration string: "30s".
    Duration,
    /// A size string: "256MiB".
    Size,
    /// A whole number of bytes or a size string.
    BytesOrSize,
    /// A whole number from 0 to the bound.
    Whole(u64),
    /// Any whole number.
    Int,
    /// An integer or a float.
    Number,
    /// `true` or `false`.
    Bool,
    /// A section (`[a.b]` or an inline table).
    Table(&'static [Key]),
    /// A list of sections (`[[a.b]]` or a list of inline tables).
    Tables(&'static [Key]),
    /// A list of texts: `["a", "b"]`.
    TextList,
    /// Text, a number or `true`/`false`: a fixed value.
    Scalar,
    /// Text, or a section with these keys (`event_time = "arrival"` or
    /// `event_time = { field = "ts" }`).
    TextOrTable(&'static [Key]),
    /// A section whose keys are names of the user's choosing, each holding
    /// a section with these keys (`[….map.metrics]`).
    Named(&'static [Key]),
}

/// One key of a section.
#[derive(Debug, Clone, Copy)]
pub struct Key {
    /// The key's name within its section.
    pub name: &'static str,
    /// What it holds.
    pub ty: Ty,
    /// Whether the section must have it.
    pub required: bool,
}

/// An optional key.
pub const fn k(name: &'static str, ty: Ty) -> Key {
    Key {
        name,
        ty,
        required: false,
    }
}

/// A required key.
pub const fn req(name: &'static str, ty: Ty) -> Key {
    Key {
        name,
        ty,
        required: true,
    }
}

/// The keys `a` then `b` as one list of `N` keys, for sections that share
/// a group of keys; `N` must be their total (checked when compiling).
pub const fn join<const N: usize>(a: &[Key], b: &[Key]) -> [Key; N] {
    assert!(a.len() + b.len() == N, "join: N is not the number of keys");
    let mut out = [k("", Ty::Text); N];
    let mut i = 0;
    while i < a.len() {
        out[i] = a[i];
        i += 1;
    }
    let mut j = 0;
    while j < b.len() {
        out[i + j] = b[j];
        j += 1;
    }
    out
}

/// A `u8`.
pub const U8: Ty = Ty::Whole(u8::MAX as u64);
/// A `u16`.
pub const U16: Ty = Ty::Whole(u16::MAX as u64);
/// A `u32`.
pub const U32: Ty = Ty::Whole(u32::MAX as u64);
/// A `u64` that TOML can hold (TOML integers are `i64`).
pub const U64: Ty = Ty::Whole(i64::MAX as u64);

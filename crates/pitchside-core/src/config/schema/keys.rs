//! How a section lists its keys for the schema walker and the reference:
//! each key's name, what it holds, whether it is required, its default and
//! its doc text. The lists are not written by hand: [`crate::config::section!`]
//! makes each from the section's one declaration; `config::file::ConfigFile`
//! is the root.

/// What a key holds.
#[derive(Debug, Clone, Copy)]
pub enum Ty {
    /// Any text in quotes.
    Text,
    /// One of these texts; the words say what each means, for problems
    /// ("\"mark\" must be {words}").
    Choice(&'static [&'static str], &'static str),
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
    /// A list of numbers: `[50, 60, 70]`.
    NumberList,
    /// A list of whole numbers: `[7, 9]`.
    IntList,
    /// Text, a number or `true`/`false`: a fixed value.
    Scalar,
    /// Text, or a section with these keys (`event_time = "arrival"` or
    /// `event_time = { field = "ts" }`).
    TextOrTable(&'static [Key]),
    /// A section whose keys are names of the user's choosing, each holding
    /// a section with these keys (`[….map.metrics]`).
    Named(&'static [Key]),
    /// Not a key: these keys, written in the section itself (serde's
    /// `flatten`, such as the input keys every source shares).
    Flatten(&'static [Key]),
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
    /// Its doc text, as declared (lines joined by `\n`).
    pub doc: &'static str,
    /// Its default as TOML (`None` from the function: unset), or `None` for
    /// a required key.
    pub default: Option<fn() -> Option<toml::Value>>,
}

impl Key {
    /// The keys of a section, with the flattened groups written out.
    pub fn each(keys: &'static [Key]) -> impl Iterator<Item = &'static Key> {
        keys.iter()
            .flat_map(|k| -> Box<dyn Iterator<Item = &'static Key>> {
                match k.ty {
                    Ty::Flatten(inner) => Box::new(Key::each(inner)),
                    _ => Box::new(std::iter::once(k)),
                }
            })
    }

    /// Its doc text on one line.
    pub fn doc_line(&self) -> String {
        self.doc.split_whitespace().collect::<Vec<_>>().join(" ")
    }
}

/// A Rust type as a config value: what the schema calls it, unless the
/// declaration says otherwise (a `String` that holds a duration).
pub trait Setting {
    /// Its schema type.
    const TY: Ty;
}

/// A section made by [`crate::config::section!`]: its keys.
pub trait Section {
    /// Its keys, in declaration order.
    const KEYS: &'static [Key];
}

macro_rules! setting {
    ($($t:ty => $ty:expr),* $(,)?) => {
        $(impl Setting for $t {
            const TY: Ty = $ty;
        })*
    };
}

setting! {
    String => Ty::Text,
    std::path::PathBuf => Ty::Text,
    bool => Ty::Bool,
    f64 => Ty::Number,
    i64 => Ty::Int,
    u8 => U8,
    u16 => U16,
    u32 => U32,
    u64 => U64,
}

impl<T: Setting> Setting for Option<T> {
    const TY: Ty = T::TY;
}

impl<T: Section> Setting for Vec<T> {
    const TY: Ty = Ty::Tables(T::KEYS);
}

/// A default value as TOML (`None` when it does not print, as an unset option).
pub fn toml_value<T: serde::Serialize>(v: T) -> Option<toml::Value> {
    toml::Value::try_from(v).ok()
}

/// A `u8`.
pub const U8: Ty = Ty::Whole(u8::MAX as u64);
/// A `u16`.
pub const U16: Ty = Ty::Whole(u16::MAX as u64);
/// A `u32`.
pub const U32: Ty = Ty::Whole(u32::MAX as u64);
/// A `u64` that TOML can hold (TOML integers are `i64`).
pub const U64: Ty = Ty::Whole(i64::MAX as u64);

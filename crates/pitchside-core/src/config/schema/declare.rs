//! [`section!`]: a config section declared once. Each key is written with
//! its doc text, its Rust type (with the schema type when the Rust type
//! does not say it, such as a `String` holding a duration) and its default
//! (none: the key is required). From that one declaration come the serde
//! struct, its `Default`, its keys for the schema walker ([`Section::KEYS`])
//! and its rows of the configuration reference.
//!
//! ```text
//! section! {
//!     /// `[windows]`.
//!     #[serde(deny_unknown_fields)]
//!     pub struct WindowsSection {
//!         /// Tumbling window size.
//!         size: String [Duration] = "1m".into(),
//!         /// Open (window, group) cells at most.
//!         max_open_groups: u32 = 100_000,
//!     }
//! }
//! ```
//!
//! Serde fills every missing key from `Default` (a required key's stand-in
//! is its type's default); the schema walker reports a missing required key
//! first, and the file is then not built (`config::structure`).
//!
//! [`Section::KEYS`]: super::keys::Section::KEYS

/// Declares a config section once; see the module doc.
macro_rules! section {
    (
        $(#[doc = $sdoc:literal])*
        $(#[serde($($sattr:tt)*)])*
        pub struct $S:ident {
            $(
                $(#[doc = $doc:literal])*
                $(#[serde($($fattr:tt)*)])*
                $f:ident : $t:ty $([$($ty:tt)*])? $(= $def:expr)?
            ),* $(,)?
        }
    ) => {
        $(#[doc = $sdoc])*
        #[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
        #[serde(default)]
        $(#[serde($($sattr)*)])*
        pub struct $S {
            $(
                $(#[doc = $doc])*
                $(#[serde($($fattr)*)])*
                pub $f: $t,
            )*
        }

        impl Default for $S {
            fn default() -> Self {
                $S {
                    $($f: $crate::config::section!(@value $($def)?),)*
                }
            }
        }

        impl $crate::config::schema::keys::Section for $S {
            const KEYS: &'static [$crate::config::schema::keys::Key] = &[
                $($crate::config::schema::keys::Key {
                    name: stringify!($f),
                    ty: $crate::config::section!(@ty $t $(; $($ty)*)?),
                    required: $crate::config::section!(@required $($def)?),
                    doc: concat!($($doc, "\n",)*),
                    default: $crate::config::section!(@default $t $(; $def)?),
                },)*
            ];
        }

        impl $crate::config::schema::keys::Setting for $S {
            const TY: $crate::config::schema::keys::Ty = $crate::config::schema::keys::Ty::Table(
                <$S as $crate::config::schema::keys::Section>::KEYS,
            );
        }
    };
    (@value) => { Default::default() };
    (@value $def:expr) => { $def };
    (@required) => { true };
    (@required $def:expr) => { false };
    (@default $t:ty) => { None };
    (@default $t:ty; $def:expr) => {
        Some(|| {
            let v: $t = $def;
            $crate::config::schema::keys::toml_value(v)
        })
    };
    (@ty $t:ty) => { <$t as $crate::config::schema::keys::Setting>::TY };
    (@ty $t:ty; $($ty:tt)*) => {{
        #[allow(unused_imports)]
        use $crate::config::schema::keys::{Section, Ty::*, U16, U32, U64, U8};
        $($ty)*
    }};
}

pub(crate) use section;

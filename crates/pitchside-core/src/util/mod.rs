//! Small pure helpers with no knowledge of the gateway: time and size
//! strings, hashing, the state codec, a seeded RNG, retry backoff, log rate
//! limits, the kernel clock check, and the line parsers of the device
//! formats (`formats`: CSV, logfmt, Influx line protocol). Depends on [`crate::model`] only.

pub mod backoff;
pub mod bounded;
pub mod clock;
pub mod codec;
pub mod formats;
pub mod hash;
pub mod inline;
pub mod intern;
pub mod json_pointer;
pub mod log_limit;
pub mod rng;
pub mod slots;
pub mod strftime;
pub mod time;
pub mod units;
pub mod venue_mix;

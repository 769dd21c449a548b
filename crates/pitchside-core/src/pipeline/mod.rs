//! The data path, pure (no I/O): decode a line into an event or a reject,
//! the rolling z-score detector, event-time windows with watermarks,
//! fatigue, player load, and the stage that runs them in order and fills table rows.
//! Every part encodes its own snapshot with [`crate::util::codec`].

pub mod console_rows;
pub mod decode;
pub mod detect;
pub mod downtime;
pub mod fatigue;
pub mod health;
pub mod load;
pub mod load_rows;
pub mod rows;
mod stage;
pub mod time_guard;
pub mod window;

pub use health::DeviceStatus;
pub use stage::*;

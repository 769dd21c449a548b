//! Plain data shared by every stage: sensor kinds, metrics, decoded events
//! and the readings they carry. No I/O, no clocks.

use std::borrow::Cow;
use std::fmt;
use std::sync::Arc;

/// Microseconds since the Unix epoch, UTC. Every timestamp in the pipeline is one.
pub type Micros = i64;

/// The four kinds of sensor the gateway understands (SPEC §1).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum SensorKind {
    /// Player wearables: heart rate, acceleration, running distance.
    Wearable,
    /// Ball tracking: impact position, speed, spin.
    Pitch,
    /// Crowd zones: noise and density.
    Crowd,
    /// Anything else: one named metric per event.
    Generic,
}

impl SensorKind {
    /// All kinds, in table order.
    pub const ALL: [SensorKind; 4] = [
        SensorKind::Wearable,
        SensorKind::Pitch,
        SensorKind::Crowd,
        SensorKind::Generic,
    ];

    /// The name used in input, tables and object keys.
    pub fn as_str(self) -> &'static str {
        match self {
            SensorKind::Wearable => "wearable",
            SensorKind::Pitch => "pitch",
            SensorKind::Crowd => "crowd",
            SensorKind::Generic => "generic",
        }
    }

    /// Parses a kind name; `None` for anything else.
    pub fn parse(s: &str) -> Option<SensorKind> {
        match s {
            "wearable" => Some(SensorKind::Wearable),
            "pitch" => Some(SensorKind::Pitch),
            "crowd" => Some(SensorKind::Crowd),
            "generic" => Some(SensorKind::Generic),
            _ => None,
        }
    }

    /// Index into per-kind arrays (`[T; 4]`).
    pub fn index(self) -> usize {
        self as usize
    }

    /// The fixed metric names of this kind; empty for `generic`, whose metric is named per event.
    pub fn metrics(self) -> &'static [&'static str] {
        match self {
            SensorKind::Wearable => &["heart_rate", "acceleration", "running_dist"],
            SensorKind::Pitch => &["impact_x", "impact_y", "ball_speed", "spin_rate"],
            SensorKind::Crowd => &["decibels", "density"],
            SensorKind::Generic => &[],
        }
    }
}

impl fmt::Display for SensorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Where an input came from: `serial:{path}`, `mqtt:{topic}`, `replay:{file}` or `simulator`.
pub type SourceName = Arc<str>;

/// Acknowledges an input to its source once its readings are durable (an
/// MQTT PUBACK). Dropping it without calling [`AckToken::ack`] means "not
/// acknowledged": the broker delivers the message again.
pub struct AckToken(Box<dyn FnOnce() + Send>);

impl AckToken {
    /// A token that runs `f` when acknowledged.
    pub fn new(f: impl FnOnce() + Send + 'static) -> AckToken {
        AckToken(Box::new(f))
    }

    /// Acknowledges.
    pub fn ack(self) {
        (self.0)()
    }
}

impl fmt::Debug for AckToken {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("AckToken")
    }
}

/// One input line or message, before decoding.
#[derive(Debug)]
pub struct RawInput {
    /// `serial:/dev/ttyUSB0`, `mqtt:venue/wearable/7`, `replay:file.jsonl`, `simulator`.
    pub source: SourceName,
    /// The kind configured for the source, used when the event has no `sensor`.
    pub sensor_hint: Option<SensorKind>,
    /// The bytes, without the trailing newline.
    pub payload: Vec<u8>,
    /// Wall-clock arrival time.
    pub received_at: Micros,
    /// Set by a framing layer that already knows the input is bad (an overlong
    /// serial line is cut short before it reaches the decoder).
    pub framing_error: Option<FramingError>,
    /// To be called once the input is durable (MQTT); `None` for sources
    /// that cannot replay (serial, simulator).
    pub ack: Option<AckToken>,
    /// The configured source whose device format and map decode the input
    /// (SPEC §9); `None` for SPEC §1 JSON.
    pub mapping: Option<SourceName>,
}

/// Problems a source finds before the decoder sees the bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FramingError {
    /// The line exceeded `limits.max_event_bytes`; `payload` holds its first bytes.
    TooLarge {
        /// Length of the whole line in bytes.
        len: usize,
    },
}

/// Identity fields of an event, by kind. Strings borrow from the input
/// when they can (`Identity<'static>` owns them).
#[derive(Debug, Clone, PartialEq)]
pub enum Identity<'a> {
    /// A wearable's player.
    Wearable {
        /// Player number, required.
        player_id: i64,
        /// Display name, optional.
        player_name: Option<Cow<'a, str>>,
    },
    /// A pitch event's delivery.
    Pitch {
        /// Delivery number, optional.
        delivery_id: Option<i64>,
    },
    /// A crowd sensor's zone.
    Crowd {
        /// Zone name, required.
        zone_id: Cow<'a, str>,
    },
    /// A generic sensor's metric name.
    Generic {
        /// Metric name, required.
        metric: Cow<'a, str>,
    },
}

impl Identity<'_> {
    /// The same identity owning its strings.
    pub fn into_owned(self) -> Identity<'static> {
        match self {
            Identity::Wearable {
                player_id,
                player_name,
            } => Identity::Wearable {
                player_id,
                player_name: player_name.map(|n| Cow::Owned(n.into_owned())),
            },
            Identity::Pitch { delivery_id } => Identity::Pitch { delivery_id },
            Identity::Crowd { zone_id } => Identity::Crowd {
                zone_id: Cow::Owned(zone_id.into_owned()),
            },
            Identity::Generic { metric } => Identity::Generic {
                metric: Cow::Owned(metric.into_owned()),
            },
        }
    }
}

/// Most metrics an event carries (a pitch event's four).
pub const MAX_METRICS: usize = 4;

/// An event's metric values as (metric index, value), held inline: an
/// event's readings never allocate.
pub type Readings = heapless::Vec<(u8, f64), MAX_METRICS>;

/// A valid event, decoded and checked (SPEC §1). Its strings borrow from
/// the input line when they have no escapes, so decoding one allocates
/// nothing; `Event<'static>` owns them (device formats, tests).
#[derive(Debug, Clone, PartialEq)]
pub struct Event<'a> {
    /// Sensor kind (from the event or its source).
    pub sensor: SensorKind,
    /// Device that sent it.
    pub device_id: Cow<'a, str>,
    /// Event time, µs UTC.
    pub event_time: Micros,
    /// Match number, default 0.
    pub match_id: i64,
    /// Optional producer-assigned id.
    pub event_id: Option<i64>,
    /// Kind-specific identity.
    pub identity: Identity<'a>,
    /// Metric values present in the event, as (metric index, value). For
    /// `generic` the index is 0 and the name is in `identity`.
    pub values: Readings,
}

impl Event<'_> {
    /// The name of a metric index of this event.
    pub fn metric_name(&self, index: u8) -> &str {
        match &self.identity {
            Identity::Generic { metric } => metric,
            _ => self.sensor.metrics()[index as usize],
        }
    }

    /// Player name for wearables.
    pub fn player_name(&self) -> Option<&str> {
        match &self.identity {
            Identity::Wearable { player_name, .. } => player_name.as_deref(),
            _ => None,
        }
    }

    /// The same event owning its strings.
    pub fn into_owned(self) -> Event<'static> {
        Event {
            sensor: self.sensor,
            device_id: Cow::Owned(self.device_id.into_owned()),
            event_time: self.event_time,
            match_id: self.match_id,
            event_id: self.event_id,
            identity: self.identity.into_owned(),
            values: self.values,
        }
    }
}

/// Reject reason codes (SPEC §1), as written to the `rejects` table.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum RejectReason {
    /// Longer than `limits.max_event_bytes`.
    TooLarge,
    /// Not UTF-8.
    InvalidUtf8,
    /// Not JSON.
    InvalidJson,
    /// JSON, but not an object.
    NotAnObject,
    /// A required field is absent or null.
    MissingField,
    /// A field has the wrong type or shape.
    InvalidField,
    /// NaN or ±Infinity.
    NonFinite,
    /// A number outside its range (configured or representable).
    OutOfRange,
    /// `sensor` is not a known kind.
    UnknownSensor,
    /// `sensor` differs from the source's configured kind.
    SensorMismatch,
    /// No metric field present.
    NoMetrics,
    /// `event_time` cannot be parsed.
    InvalidTime,
    /// `event_time` too far in the future or before 2020 (live sources only).
    ImplausibleTime,
    /// A device-format input does not fit its source's map (SPEC §9): a
    /// field missing, a pattern that did not match, a value of the wrong type.
    Unmapped,
}

impl RejectReason {
    /// Every reason, in a stable order (for metrics).
    pub const ALL: [RejectReason; 14] = [
        RejectReason::TooLarge,
        RejectReason::InvalidUtf8,
        RejectReason::InvalidJson,
        RejectReason::NotAnObject,
        RejectReason::MissingField,
        RejectReason::InvalidField,
        RejectReason::NonFinite,
        RejectReason::OutOfRange,
        RejectReason::UnknownSensor,
        RejectReason::SensorMismatch,
        RejectReason::NoMetrics,
        RejectReason::InvalidTime,
        RejectReason::ImplausibleTime,
        RejectReason::Unmapped,
    ];

    /// The reason code as written to `rejects.reason`.
    pub fn as_str(self) -> &'static str {
        match self {
            RejectReason::TooLarge => "too_large",
            RejectReason::InvalidUtf8 => "invalid_utf8",
            RejectReason::InvalidJson => "invalid_json",
            RejectReason::NotAnObject => "not_an_object",
            RejectReason::MissingField => "missing_field",
            RejectReason::InvalidField => "invalid_field",
            RejectReason::NonFinite => "non_finite",
            RejectReason::OutOfRange => "out_of_range",
            RejectReason::UnknownSensor => "unknown_sensor",
            RejectReason::SensorMismatch => "sensor_mismatch",
            RejectReason::NoMetrics => "no_metrics",
            RejectReason::InvalidTime => "invalid_time",
            RejectReason::ImplausibleTime => "implausible_time",
            RejectReason::Unmapped => "unmapped",
        }
    }
}

/// A rejected input with its reason and a human-readable detail.
#[derive(Debug, Clone, PartialEq)]
pub struct Reject {
    /// Reason code.
    pub reason: RejectReason,
    /// What exactly was wrong, naming the field.
    pub detail: String,
}

impl Reject {
    /// Builds a reject.
    pub fn new(reason: RejectReason, detail: impl Into<String>) -> Reject {
        Reject {
            reason,
            detail: detail.into(),
        }
    }
}

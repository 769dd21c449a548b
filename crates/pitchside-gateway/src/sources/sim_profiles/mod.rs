//! `pitchside simulate --as PROFILE`: the simulator's events in the bytes of
//! one of the device profiles of `config/devices/` (SPEC §9), so that a venue
//! can rehearse a device's source, format and map before the device exists.
//!
//! Each simulated §1 line is decoded to an [`Event`]; the events of the
//! profile's sensor kind are written as that device writes them (the
//! profile's pattern, CSV with its header first, logfmt, line protocol),
//! the rest are left out.

use crate::model::{Event, Identity, Micros, SensorKind};
use crate::pipeline::decode::formats::{csv, influx, logfmt};
use crate::pipeline::decode::{Decoded, Decoder};
use crate::sources::simulator::Simulator;
use crate::util::time::format_rfc3339;
use std::borrow::Cow;
use std::collections::VecDeque;
use std::fmt::Write;

/// km/h per mph: the radar gun prints mph, the profile scales by this.
const KMH_PER_MPH: f64 = 1.609344;
/// The sound meter's local clock: +05:30, µs.
const LOCAL_OFFSET: Micros = 19_800_000_000;
/// The ball tracker's CSV header.
const TRACKER_HEADER: &str = "timestamp_ms,tracker,delivery,speed_kmh,spin_rpm,impact_x,impact_y";

/// A device profile of `config/devices/`, by its file name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DeviceProfile {
    /// `sound-level-meter`: `2026-11-29 19:30:05 LAeq,1s=84.3 dB`, local time.
    SoundLevelMeter,
    /// `radar-gun`: `S 91.3 MPH`.
    RadarGun,
    /// `ble-heart-rate`: `{"id":"C7:…","hr":{"bpm":151},"rssi":-61}` on
    /// `ble/hr/{player}/{strap}`.
    BleHeartRate,
    /// `ball-tracker`: CSV with a header line, epoch ms.
    BallTracker,
    /// `crowd-counter`: line protocol on `venue/crowd/{zone}`, epoch ns.
    CrowdCounter,
    /// `wearable-hub`: logfmt, RFC 3339.
    WearableHub,
}

impl DeviceProfile {
    /// Every profile, in the order of [`DeviceProfile::NAMES`].
    pub const ALL: [DeviceProfile; 6] = [
        DeviceProfile::SoundLevelMeter,
        DeviceProfile::RadarGun,
        DeviceProfile::BleHeartRate,
        DeviceProfile::BallTracker,
        DeviceProfile::CrowdCounter,
        DeviceProfile::WearableHub,
    ];

    /// The profiles' names, as `--as` takes them.
    pub const NAMES: [&'static str; 6] = [
        "sound-level-meter",
        "radar-gun",
        "ble-heart-rate",
        "ball-tracker",
        "crowd-counter",
        "wearable-hub",
    ];

    /// The profile called `name`.
    pub fn parse(name: &str) -> Option<DeviceProfile> {
        let at = Self::NAMES.iter().position(|n| *n == name)?;
        Self::ALL.get(at).copied()
    }

    /// Its name (the file name in `config/devices/`).
    pub fn name(self) -> &'static str {
        let at = Self::ALL.iter().position(|p| *p == self).unwrap_or(0);
        Self::NAMES.get(at).copied().unwrap_or("")
    }

    /// The sensor kind whose events this device sends.
    pub fn sensor(self) -> SensorKind {
        match self {
            DeviceProfile::SoundLevelMeter | DeviceProfile::CrowdCounter => SensorKind::Crowd,
            DeviceProfile::RadarGun | DeviceProfile::BallTracker => SensorKind::Pitch,
            DeviceProfile::BleHeartRate | DeviceProfile::WearableHub => SensorKind::Wearable,
        }
    }

    /// Whether the device is one instrument on its own line (its profile
    /// names it with a fixed `value`): the stream then renders the
    /// simulator's first device of the kind only.
    pub fn single_device(self) -> bool {
        matches!(
            self,
            DeviceProfile::SoundLevelMeter | DeviceProfile::RadarGun
        )
    }

    /// The shortest time between two readings the device prints, µs (the
    /// sound meter prints one a second, stamped to the second).
    pub fn min_interval(self) -> Micros {
        match self {
            DeviceProfile::SoundLevelMeter => 1_000_000,
            _ => 0,
        }
    }

    /// The line the device sends before its first reading (the CSV header).
    pub fn header(self) -> Option<&'static str> {
        (self == DeviceProfile::BallTracker).then_some(TRACKER_HEADER)
    }

    /// The MQTT topic the device publishes `e` on (`None`: a serial device).
    pub fn topic(self, e: &Event) -> Option<String> {
        match (self, &e.identity) {
            (DeviceProfile::BleHeartRate, Identity::Wearable { player_id, .. }) => {
                Some(format!("ble/hr/{player_id}/{}", strap_address(*player_id)))
            }
            (DeviceProfile::CrowdCounter, Identity::Crowd { zone_id }) => {
                Some(format!("venue/crowd/{zone_id}"))
            }
            _ => None,
        }
    }

    /// Writes `e` as the device's line (no line break) into `out`; `false`
    /// (and nothing written) when the device would not send it: another
    /// kind, or without the metric the device measures.
    pub fn render(self, e: &Event, out: &mut String) -> bool {
        if e.sensor != self.sensor() {
            return false;
        }
        // Writing to a String cannot fail.
        match (self, &e.identity) {
            (DeviceProfile::SoundLevelMeter, _) => {
                let Some(db) = value(e, 0) else { return false };
                let local = format_rfc3339(e.event_time.saturating_add(LOCAL_OFFSET));
                let stamp = local.get(..19).unwrap_or(&local).replacen('T', " ", 1);
                let _ = write!(out, "{stamp} LAeq,1s={db:.1} dB");
            }
            (DeviceProfile::RadarGun, _) => {
                let Some(kmh) = value(e, 2) else { return false };
                let mph = (kmh / KMH_PER_MPH).clamp(0.0, 999.9);
                let _ = write!(out, "S {mph:.1} MPH");
            }
            (DeviceProfile::BleHeartRate, Identity::Wearable { player_id, .. }) => {
                let Some(hr) = value(e, 0) else { return false };
                let bpm = hr.round().clamp(0.0, 255.0) as u8;
                let id = strap_address(*player_id);
                let _ = write!(out, r#"{{"id":"{id}","hr":{{"bpm":{bpm}}},"rssi":-61}}"#);
            }
            (DeviceProfile::BallTracker, Identity::Pitch { delivery_id }) => {
                let cell = |i: u8, digits: usize| {
                    value(e, i).map_or(String::new(), |x| format!("{x:.digits$}"))
                };
                let cells = [
                    e.event_time.div_euclid(1_000).to_string(),
                    e.device_id.to_string(),
                    delivery_id.map_or(String::new(), |d| d.to_string()),
                    cell(2, 1),
                    cell(3, 0),
                    cell(0, 2),
                    cell(1, 2),
                ];
                let cells: Vec<&str> = cells.iter().map(String::as_str).collect();
                csv::render(&cells, b',', out);
            }
            (DeviceProfile::CrowdCounter, Identity::Crowd { zone_id }) => {
                let Some(density) = value(e, 1) else {
                    return false;
                };
                let point = influx::Point {
                    measurement: Cow::Borrowed("crowd"),
                    tags: vec![
                        (Cow::Borrowed("zone"), Cow::Borrowed(zone_id)),
                        (Cow::Borrowed("counter"), Cow::Borrowed(&e.device_id)),
                    ],
                    fields: vec![(Cow::Borrowed("density"), influx::FieldValue::Float(density))],
                    timestamp: e.event_time.checked_mul(1_000),
                };
                influx::render(&point, out);
            }
            (
                DeviceProfile::WearableHub,
                Identity::Wearable {
                    player_id,
                    player_name,
                },
            ) => {
                render_hub(e, *player_id, player_name.as_deref(), out);
            }
            _ => return false,
        }
        true
    }
}

/// The wearable hub's logfmt line: time, hub, vest, player, the metrics present.
fn render_hub(e: &Event, player_id: i64, name: Option<&str>, out: &mut String) {
    let (ts, player) = (format_rfc3339(e.event_time), player_id.to_string());
    let mut pairs = vec![
        ("ts", ts),
        ("hub", "wh-1".to_string()),
        ("vest", e.device_id.to_string()),
        ("player", player),
    ];
    if let Some(n) = name {
        pairs.push(("name", n.to_string()));
    }
    for (key, i) in [("hr", 0), ("acc", 1), ("dist", 2)] {
        if let Some(x) = value(e, i) {
            pairs.push((key, x.to_string()));
        }
    }
    let pairs: Vec<(&str, &str)> = pairs.iter().map(|(k, v)| (*k, v.as_str())).collect();
    logfmt::render(&pairs, out);
}

/// A strap's Bluetooth address for a player: `C7:1A:2B:3C:{hi}:{lo}`.
pub fn strap_address(player_id: i64) -> String {
    let n = player_id.rem_euclid(0x1_0000);
    format!("C7:1A:2B:3C:{:02X}:{:02X}", n >> 8, n & 0xff)
}

/// The value of metric `index`, if the event has it.
fn value(e: &Event, index: u8) -> Option<f64> {
    e.values.iter().find(|(i, _)| *i == index).map(|&(_, x)| x)
}

/// One line for a device output, and the MQTT topic it goes on.
#[derive(Debug, Clone, PartialEq)]
pub struct DeviceLine {
    /// The topic the device publishes on (`None`: the caller's default).
    pub topic: Option<String>,
    /// The line, without a line break.
    pub text: String,
}

/// The simulator's stream, as §1 lines or in a profile's bytes.
pub struct DeviceStream {
    sim: Simulator,
    profile: Option<DeviceProfile>,
    decoder: Decoder,
    /// Lines made and not yet taken, with their event times (none: the header).
    queue: VecDeque<(Option<Micros>, DeviceLine)>,
    /// A single device's id, once its first reading is rendered.
    device: Option<String>,
    /// The event time of the last reading rendered.
    last: Option<Micros>,
}

impl DeviceStream {
    /// The stream of `sim`, in `profile`'s bytes (its header first) or as
    /// §1 lines. `None` when the simulator makes no event of the profile's
    /// kind (the stream would never write a line).
    pub fn new(sim: Simulator, profile: Option<DeviceProfile>) -> Option<DeviceStream> {
        let mut queue = VecDeque::new();
        if let Some(p) = profile {
            if !sim.kinds().contains(&p.sensor()) {
                return None;
            }
            if let Some(h) = p.header() {
                let text = h.to_string();
                queue.push_back((None, DeviceLine { topic: None, text }));
            }
        }
        Some(DeviceStream {
            sim,
            profile,
            decoder: Decoder::new(usize::MAX, vec![], None),
            queue,
            device: None,
            last: None,
        })
    }

    /// Event time of the next line (`None`: a line without one, the header).
    pub fn next_time(&mut self) -> Option<Micros> {
        self.fill();
        self.queue.front().and_then(|(t, _)| *t)
    }

    /// The next line.
    pub fn next_line(&mut self) -> DeviceLine {
        loop {
            if let Some((_, line)) = self.queue.pop_front() {
                return line;
            }
            self.fill();
        }
    }

    /// Makes the next line when none waits: the simulator's next events
    /// until one is the profile's.
    fn fill(&mut self) {
        while self.queue.is_empty() {
            let t = self.sim.next_time();
            let (text, _) = self.sim.next_line();
            let Some(p) = self.profile else {
                self.queue
                    .push_back((Some(t), DeviceLine { topic: None, text }));
                return;
            };
            if let Decoded::Event(e) = self.decoder.decode_bytes(text.as_bytes(), None, 0) {
                if !self.takes(p, &e) {
                    continue;
                }
                let mut out = String::new();
                if p.render(&e, &mut out) {
                    self.last = Some(e.event_time);
                    if p.single_device() {
                        self.device.get_or_insert_with(|| e.device_id.to_string());
                    }
                    let line = DeviceLine {
                        topic: p.topic(&e),
                        text: out,
                    };
                    self.queue.push_back((Some(t), line));
                }
            }
        }
    }

    /// Whether the device sends `e`: its own device's, and not sooner
    /// than its interval after the last.
    fn takes(&self, p: DeviceProfile, e: &Event) -> bool {
        let own = self.device.as_ref().is_none_or(|d| *d == e.device_id);
        let interval = p.min_interval();
        let due = self.last.is_none_or(|last| {
            interval == 0 || e.event_time.div_euclid(interval) > last.div_euclid(interval)
        });
        own && due
    }
}

#[cfg(test)]
mod tests;

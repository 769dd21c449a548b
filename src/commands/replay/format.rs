//! How `replay` decodes its lines: SPEC §1 JSON with `--sensor`, or a
//! configured source's device format (`--source`, SPEC §9), and when they
//! arrived (`--received-at`).

use super::ReplayArgs;
use crate::config::Config;
use crate::model::SensorKind;
use anyhow::Context as _;

/// How a replay decodes its lines.
#[derive(Debug, Clone, Default)]
pub struct LineFormat {
    /// The sensor kind for lines without one (`--sensor`, or the source's).
    pub sensor: Option<SensorKind>,
    /// The device format: the mapped source's name, and the topic.
    pub mapping: Option<(String, Option<String>)>,
    /// `--received-at` and `--received-step`, µs.
    pub arrival: Option<(i64, i64)>,
}

impl LineFormat {
    /// From the command line: `--sensor`, or `--source` (and `--topic`).
    pub fn from_args(args: &ReplayArgs, cfg: &Config) -> anyhow::Result<LineFormat> {
        let mut f = LineFormat::default();
        if let Some(s) = &args.sensor {
            f.sensor = Some(SensorKind::parse(s).with_context(|| {
                format!("--sensor {s:?} must be wearable, pitch, crowd or generic")
            })?);
        }
        if let Some(name) = &args.source {
            let src = cfg.inputs.get(name).with_context(|| {
                format!(
                    "--source {name:?} is not a source of the config; the sources are: {}",
                    cfg.inputs.names()
                )
            })?;
            if f.sensor.is_some() && src.format.is_some() {
                anyhow::bail!(
                    "--sensor does not apply to --source {name:?}: its map says the kind"
                );
            }
            f.sensor = f.sensor.or(src.sensor);
            f.mapping = src
                .format
                .as_ref()
                .map(|m| (m.name.to_string(), args.topic.clone()));
        }
        if let Some(t) = &args.received_at {
            let start = crate::util::time::parse_rfc3339(t)
                .map_err(|why| anyhow::anyhow!("--received-at {t:?} is not RFC 3339: {why}"))?;
            let step = crate::util::units::parse_duration(&args.received_step)
                .map_err(|why| anyhow::anyhow!("--received-step: {why}"))?;
            f.arrival = Some((start, step));
        }
        if let Some(name) = &args.source {
            check_arrival(name, cfg, f.arrival)?;
        }
        Ok(f)
    }
}

/// A source whose map takes the event time from the arrival (a device with
/// no clock) needs arrival times one step apart: a file has none, and lines
/// given one read time would all be one instant, duplicates of each other.
fn check_arrival(name: &str, cfg: &Config, arrival: Option<(i64, i64)>) -> anyhow::Result<()> {
    let by_arrival = cfg
        .inputs
        .get(name)
        .and_then(|s| s.format.as_ref())
        .is_some_and(|f| {
            matches!(
                f.map.event_time,
                crate::config::sources::format::TimeFrom::Arrival
            )
        });
    match arrival {
        _ if !by_arrival => Ok(()),
        None => anyhow::bail!(
            "--source {name:?} takes its event times from the arrival of each line \
             (event_time = \"arrival\": a device with no clock), and a file has no arrival \
             times: give the arrival of the first line and the device's period, e.g. \
             --received-at 2026-11-29T19:30:00Z --received-step 1s"
        ),
        Some((_, step)) if step <= 0 => anyhow::bail!(
            "--received-step must be more than 0 s for --source {name:?}: its event times \
             are the arrival times, and lines one instant apart would be duplicates of each \
             other (give the device's period, e.g. --received-step 1s)"
        ),
        Some(_) => Ok(()),
    }
}

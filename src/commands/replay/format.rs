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
        Ok(f)
    }
}

//! Config reload on SIGHUP: which keys `pitchside run` applies while it
//! runs, and which only take effect after a restart.
//!
//! Reloaded in place (safe at any moment, no state depends on them):
//! `log.level`, `detector.threshold`, `limits.range` (per-metric ranges),
//! `metrics.health_grace`, the alert output's `alerts.topic_prefix`,
//! `alerts.queue`, `alerts.when_full`, and all of `[load]` with the roster
//! file's players (read again on every reload, so that a changed roster
//! applies although no key changed; load state is kept). Everything else (sources, store,
//! spool, window and detector sizes, the alert broker connection, ...)
//! sizes or opens something at start-up, or shapes state in the checkpoint:
//! a change there is named in a WARN line and applied at the next restart.

use crate::config::{Config, ConfigFile, DetectorConfig, LimitsConfig, LoadConfig};
use std::collections::BTreeMap;

/// The keys (and key prefixes) that a reload applies while running.
pub const RELOADABLE: [&str; 8] = [
    "log.level",
    "detector.threshold",
    "limits.range",
    "metrics.health_grace",
    "alerts.topic_prefix",
    "alerts.queue",
    "alerts.when_full",
    "load",
];

/// The pipeline's share of a reload: the validated sections whose
/// reloadable keys it applies (`detector.threshold`, `limits.range`), what
/// [`crate::pipeline::Pipeline::apply_reload`] takes. Each component takes
/// from its section what a reload may change.
#[derive(Debug, Clone)]
pub struct Reloadable {
    /// `[detector]`, validated.
    pub detector: DetectorConfig,
    /// `[limits]`, validated.
    pub limits: LimitsConfig,
    /// `[load]`, validated, with its roster.
    pub load: LoadConfig,
}

impl Reloadable {
    /// The pipeline's sections of a validated config.
    pub fn from_config(c: &Config) -> Reloadable {
        Reloadable {
            detector: c.detector,
            limits: c.limits.clone(),
            load: c.load.clone(),
        }
    }
}

/// What a reload does with the keys that changed.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Plan {
    /// Changed keys applied now.
    pub apply: Vec<String>,
    /// Changed keys that need a restart; the running values stay.
    pub restart: Vec<String>,
}

/// Whether `key` (a dotted path such as `detector.threshold`) is applied on reload.
pub fn is_reloadable(key: &str) -> bool {
    RELOADABLE.iter().any(|r| {
        key == *r
            || key
                .strip_prefix(r)
                .is_some_and(|rest| rest.starts_with('.') || rest.starts_with('['))
    })
}

/// The keys whose values differ between `old` and `new`, as dotted paths
/// (an array of tables, such as `sources.serial`, is one key).
pub fn changed_keys(old: &ConfigFile, new: &ConfigFile) -> Vec<String> {
    let (a, b) = (flatten(old), flatten(new));
    let mut keys: Vec<String> = a
        .keys()
        .chain(b.keys())
        .filter(|k| a.get(*k) != b.get(*k))
        .cloned()
        .collect();
    keys.sort();
    keys.dedup();
    keys
}

/// Sorts the changes between the running file and a new one.
pub fn plan(running: &ConfigFile, new: &ConfigFile) -> Plan {
    let (apply, restart) = changed_keys(running, new)
        .into_iter()
        .partition(|k| is_reloadable(k));
    Plan { apply, restart }
}

/// The running file with the reloadable keys taken from `new`: what runs
/// after a reload (so the next reload compares against it).
pub fn merge(running: &ConfigFile, new: &ConfigFile) -> ConfigFile {
    let mut m = running.clone();
    m.log.level = new.log.level.clone();
    m.detector.threshold = new.detector.threshold;
    m.limits.range = new.limits.range.clone();
    m.metrics.health_grace = new.metrics.health_grace.clone();
    m.alerts.topic_prefix = new.alerts.topic_prefix.clone();
    m.alerts.queue = new.alerts.queue;
    m.alerts.when_full = new.alerts.when_full.clone();
    m.load = new.load.clone();
    m
}

fn flatten(file: &ConfigFile) -> BTreeMap<String, toml::Value> {
    let mut out = BTreeMap::new();
    // Plain structs of strings and numbers always serialise.
    if let Ok(toml::Value::Table(t)) = toml::Value::try_from(file) {
        walk("", &t, &mut out);
    }
    out
}

fn walk(prefix: &str, t: &toml::Table, out: &mut BTreeMap<String, toml::Value>) {
    for (k, v) in t {
        let key = if prefix.is_empty() {
            k.clone()
        } else {
            format!("{prefix}.{k}")
        };
        match v {
            toml::Value::Table(inner) => walk(&key, inner, out),
            v => {
                out.insert(key, v.clone());
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file(extra: &str) -> ConfigFile {
        crate::config::parse(
            &format!("[venue]\nid = \"v\"\ngateway_id = \"g\"\n[output]\nstore = \"file:///tmp/s\"\nspool_dir = \"/tmp/sp\"\n{extra}"),
            "test",
        )
        .unwrap()
    }

    #[test]
    fn threshold_level_and_ranges_apply_sizes_and_sources_need_a_restart() {
        let old = file("[detector]\nthreshold = 3.5\n[sources.simulator]\nrate = 10\n");
        let new = file(
            "[detector]\nthreshold = 4.0\nwindow = 50\n[log]\nlevel = \"debug\"\n\
             [[limits.range]]\nsensor = \"generic\"\nmetric = \"temp\"\nmax = 80.0\n\
             [sources.simulator]\nrate = 20\n",
        );
        let p = plan(&old, &new);
        assert_eq!(p.apply, ["detector.threshold", "limits.range", "log.level"]);
        assert_eq!(p.restart, ["detector.window", "sources.simulator.rate"]);
        // After the merge only the restart keys still differ.
        let merged = merge(&old, &new);
        assert_eq!(plan(&merged, &new).apply, Vec::<String>::new());
        assert_eq!(plan(&merged, &new).restart, p.restart);
    }

    #[test]
    fn an_unchanged_file_plans_nothing() {
        let f = file("[sources.simulator]\n");
        assert_eq!(plan(&f, &f.clone()), Plan::default());
    }

    #[test]
    fn reloadable_matches_whole_path_segments_only() {
        assert!(is_reloadable("alerts.queue"));
        assert!(is_reloadable("limits.range"));
        assert!(!is_reloadable("alerts.queued"));
        assert!(!is_reloadable("alerts.mqtt.host"));
        assert!(!is_reloadable("detector.thresholds"));
    }
}

//! How `pitchside run` is controlled besides shutdown: SIGHUP reloads the
//! config, SIGUSR1 logs a status summary, SIGUSR2 is logged and ignored.

use crate::config::reload::Reloadable;
use crate::config::Config;
use crate::sinks::alerts::AlertSettings;
use crate::telemetry::MetricsSnapshot;
use crate::util::time::now_micros;
use std::sync::{Arc, Mutex};
use tokio::signal::unix::{signal, Signal, SignalKind};
use tokio_util::sync::CancellationToken;
use tracing::{error, info, warn};

/// SIGHUP, SIGUSR1 and SIGUSR2, taken over from their default action (which
/// ends the process) as soon as `pitchside run` starts.
pub struct Signals {
    hup: Signal,
    usr1: Signal,
    usr2: Signal,
}

impl Signals {
    /// Installs the handlers (inside the runtime). From here on these
    /// signals never end the process; [`run_with`](super::run_with) acts on them.
    pub fn install() -> std::io::Result<Signals> {
        Ok(Signals {
            hup: signal(SignalKind::hangup())?,
            usr1: signal(SignalKind::user_defined1())?,
            usr2: signal(SignalKind::user_defined2())?,
        })
    }
}

/// Reads the config again, from the same file (and board) as at start-up.
pub type LoadConfig = Box<dyn Fn() -> Result<Config, crate::config::ConfigError> + Send + Sync>;
/// Sets the log level (`log.level`); `Err` says why it cannot.
pub type SetLogLevel = Box<dyn Fn(&str) -> Result<(), String> + Send + Sync>;

/// How `pitchside run` controls the daemon besides shutdown: SIGHUP
/// reloads the config ([`crate::config::reload`] says what can change), SIGUSR1
/// logs a status summary, SIGUSR2 is logged and ignored.
pub struct Control {
    /// The installed signal handlers.
    pub signals: Signals,
    /// Where a reload reads the config; `None` (the built-in demo) has nothing to reload.
    pub load: Option<LoadConfig>,
    /// Applies a reloaded `log.level`.
    pub set_log_level: SetLogLevel,
}

/// Where a reload sends what it changed.
pub(crate) struct Reloaders {
    pub(crate) pipeline: tokio::sync::watch::Sender<Arc<Reloadable>>,
    pub(crate) alerts: tokio::sync::watch::Sender<AlertSettings>,
    pub(crate) snapshot: Arc<Mutex<MetricsSnapshot>>,
}

/// Acts on SIGHUP, SIGUSR1 and SIGUSR2 until shutdown. `running` is the
/// config file in force (reloaded keys included).
pub(crate) async fn control_task(
    mut control: Control,
    mut running: crate::config::ConfigFile,
    to: Reloaders,
    shutdown: CancellationToken,
) {
    loop {
        tokio::select! {
            _ = shutdown.cancelled() => return,
            Some(()) = control.signals.hup.recv() => reload(&control, &mut running, &to),
            Some(()) = control.signals.usr1.recv() => log_status(&to.snapshot),
            Some(()) = control.signals.usr2.recv() => {
                info!("SIGUSR2 received: pitchside does not use it; ignored (SIGHUP reloads, SIGUSR1 logs a status summary).");
            }
        }
    }
}

/// SIGHUP: read the config again; apply what can change while running,
/// name what needs a restart, keep everything on a broken file.
fn reload(control: &Control, running: &mut crate::config::ConfigFile, to: &Reloaders) {
    let Some(load) = &control.load else {
        warn!("SIGHUP received, but this is the built-in demo config (no --config): nothing to reload.");
        return;
    };
    info!("SIGHUP received: reloading the config.");
    let new = match load() {
        Ok(c) => c,
        Err(e) => {
            // One log line: the problems joined, so journald keeps them together.
            let problems = e
                .to_string()
                .lines()
                .map(str::trim)
                .filter(|l| !l.is_empty() && *l != "|")
                .collect::<Vec<_>>()
                .join(" / ");
            error!(problems = %problems, "Config reload failed; still running with the previous config. Fix the file (pitchside check-config --config ...) and send SIGHUP again.");
            return;
        }
    };
    let mut plan = crate::config::reload::plan(running, &new.file);
    // The roster file is read again on every reload: its players may have
    // changed with no key of the config changing.
    if to.pipeline.borrow().load.roster != new.load.roster
        && !plan.apply.iter().any(|k| k.starts_with("load."))
    {
        plan.apply.push(format!(
            "load.roster (the file: {} players)",
            new.load.roster.len()
        ));
    }
    if plan.apply.is_empty() {
        info!("Config reloaded: nothing that can change while running changed.");
    } else {
        info!(changed = %plan.apply.join(", "), "Config reloaded; applied now.");
    }
    if !plan.restart.is_empty() {
        warn!(keys = %plan.restart.join(", "), "Config keys changed that need a restart to take effect (systemctl restart pitchside); running with their old values.");
    }
    if plan.apply.is_empty() {
        return;
    }
    to.pipeline
        .send_replace(Arc::new(Reloadable::from_config(&new)));
    to.alerts
        .send_replace(AlertSettings::from_config(&new.alerts));
    if let Ok(mut g) = to.snapshot.lock() {
        g.health_grace = new.metrics.health_grace;
    }
    if plan.apply.iter().any(|k| k == "log.level") {
        if let Err(why) = (control.set_log_level)(&new.log.level) {
            warn!("log.level not changed: {why}");
        }
    }
    *running = crate::config::reload::merge(running, &new.file);
}

/// SIGUSR1: one log line with health and the main counters.
fn log_status(snapshot: &Mutex<MetricsSnapshot>) {
    let s = snapshot.lock().map(|g| g.clone()).unwrap_or_default();
    let health = match crate::telemetry::health(&s, now_micros()) {
        Ok(()) => "ok".to_string(),
        Err(why) => format!("unhealthy: {why}"),
    };
    let down: Vec<String> = s
        .sources
        .down_sources(now_micros())
        .into_iter()
        .map(|(name, us)| format!("{name} ({} s)", us / 1_000_000))
        .collect();
    info!(
        health = %health,
        inputs = s.counters.input_rows,
        rejected = s.counters.rejected_total(),
        alerts = s.counters.alerts,
        fatigue_alerts = s.counters.fatigue_alerts,
        sources_down = %down.join(", "),
        spool_files = s.progress.spool_files,
        uploaded_files = s.uploaded_files_total,
        upload_failures = s.upload_failures_total,
        "Status (SIGUSR1)"
    );
}

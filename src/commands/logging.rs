//! Logging of the commands: text (or JSON, `log.json`) on stderr, at the
//! level of `PITCHSIDE_LOG`, else `log.level`, else `info`; `run` may change
//! the level while running (SIGHUP reload).

use crate::config::Config;
use tracing_subscriber::filter::LevelFilter;

/// Handle to change the log level of the running process.
pub type LevelHandle =
    tracing_subscriber::reload::Handle<LevelFilter, tracing_subscriber::Registry>;

/// `PITCHSIDE_LOG` when set (and not empty): it overrides `log.level`.
pub fn env_log_level() -> Option<String> {
    std::env::var("PITCHSIDE_LOG")
        .ok()
        .filter(|v| !v.is_empty())
}

fn parse_level(level: &str) -> Option<LevelFilter> {
    level
        .parse::<tracing::Level>()
        .ok()
        .map(LevelFilter::from_level)
}

/// Installs the global subscriber; `config` gives `log.level` and `log.json`.
pub fn init_logging(config: Option<&Config>) -> LevelHandle {
    use tracing_subscriber::layer::SubscriberExt as _;
    use tracing_subscriber::util::SubscriberInitExt as _;
    let level = env_log_level()
        .or_else(|| config.map(|c| c.log.level.clone()))
        .unwrap_or_else(|| "info".into());
    let level = parse_level(&level).unwrap_or(LevelFilter::INFO);
    let (filter, handle) = tracing_subscriber::reload::Layer::new(level);
    let json = config.is_some_and(|c| c.log.json);
    let ansi = std::io::IsTerminal::is_terminal(&std::io::stderr());
    let text = (!json).then(|| {
        tracing_subscriber::fmt::layer()
            .with_writer(std::io::stderr)
            .with_ansi(ansi)
            .with_target(false)
    });
    let json = json.then(|| {
        tracing_subscriber::fmt::layer()
            .json()
            .with_writer(std::io::stderr)
            .with_ansi(ansi)
            .with_target(false)
    });
    tracing_subscriber::registry()
        .with(filter)
        .with(text)
        .with(json)
        .init();
    handle
}

/// Sets the level to `level` (a reloaded `log.level`); `Err` says why not.
pub fn set_level(handle: &LevelHandle, level: &str) -> Result<(), String> {
    if let Some(env) = env_log_level() {
        return Err(format!("PITCHSIDE_LOG={env} overrides it"));
    }
    let filter = parse_level(level).ok_or_else(|| format!("{level:?} is not a level"))?;
    handle.reload(filter).map_err(|e| e.to_string())
}

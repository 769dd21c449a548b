//! `pitchside run` on the command line: reads the config (or the built-in
//! demo), sets up logging and signals, then hands over to [`run_with`].

use crate::commands::logging::{init_logging, set_level};
use crate::commands::run::control::{Control, LoadConfig, SetLogLevel, Signals};
use crate::commands::run::run_with;
use crate::commands::shutdown::{exit_with_parent, shutdown_on_signals};
use crate::config::{self, Config, ConfigError};
use anyhow::Context as _;
use std::path::{Path, PathBuf};

/// Options of `pitchside run`.
#[derive(Debug, Clone, clap::Args)]
pub struct RunArgs {
    /// Venue config file.
    #[arg(long)]
    pub config: Option<PathBuf>,
    /// Board file (boards/*.toml) whose defaults lie under the config
    /// (default: $PITCHSIDE_BOARD, which the board's systemd drop-in sets).
    #[arg(long, requires = "config")]
    pub board: Option<PathBuf>,
    /// Shut down (draining) when the process with this id stops being our
    /// parent: how `bench-mqtt` makes its gateway die with it.
    #[arg(long, hide = true)]
    pub parent_pid: Option<u32>,
}

/// `$PITCHSIDE_BOARD` (set by the board's systemd drop-in), for `run` and `check-config`.
pub fn board_from_env() -> Option<PathBuf> {
    std::env::var_os("PITCHSIDE_BOARD")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
}

/// Runs the gateway until SIGTERM or SIGINT, then drains.
pub async fn execute(args: RunArgs) -> anyhow::Result<()> {
    let board = args.board.or_else(board_from_env);
    let cfg = match &args.config {
        Some(p) => load(p, board.as_deref())?,
        None => config::parse(config::DEMO, "embedded demo config")?.validate()?,
    };
    let level = init_logging(Some(&cfg));
    // Before anything else: from here on SIGHUP/SIGUSR1/SIGUSR2 never end the process.
    let signals = Signals::install().context("cannot install the signal handlers")?;
    let token = shutdown_on_signals();
    if args.config.is_none() {
        tracing::info!("No --config given: running the built-in demo (config/demo.toml).");
    }
    if let Some(parent) = args.parent_pid {
        exit_with_parent(parent, token.clone());
    }
    let load: Option<LoadConfig> = args
        .config
        .map(|path| Box::new(move || load(&path, board.as_deref())) as LoadConfig);
    let set_log_level: SetLogLevel = Box::new(move |l: &str| set_level(&level, l));
    let control = Control {
        signals,
        load,
        set_log_level,
    };
    run_with(cfg, token, Some(control)).await?;
    Ok(())
}

/// The config file, over the board's defaults when a board is given.
fn load(path: &Path, board: Option<&Path>) -> Result<Config, ConfigError> {
    match board {
        Some(b) => config::load_with_board(path, b).map(|(c, _)| c),
        None => config::load(path),
    }
}

//! `pitchside check-config`: the start-up checks of `run` on a config file
//! (and board), without running; prints the effective configuration. With
//! `--reference`, prints the reference of every config key instead.

use crate::commands::run::cli::board_from_env;
use crate::commands::terminal::emit;
use crate::config::{self, Config};
use std::path::PathBuf;

/// Options of `pitchside check-config`.
#[derive(Debug, Clone, clap::Args)]
pub struct CheckConfigArgs {
    /// Venue config file.
    #[arg(long, required_unless_present = "reference")]
    pub config: Option<PathBuf>,
    /// Board file (boards/*.toml): its defaults lie under the config, and the
    /// result must fit the board's memory (default: $PITCHSIDE_BOARD, as for `run`).
    #[arg(long)]
    pub board: Option<PathBuf>,
    /// Print the reference of every config key (Markdown: section, key,
    /// type, required, default, description) and check nothing.
    #[arg(long, conflicts_with_all = ["config", "board"])]
    pub reference: bool,
}

/// Checks the config; prints `# <file>: valid` (and the board it fits) and
/// the effective configuration, or fails with every problem.
pub fn execute(args: CheckConfigArgs) -> anyhow::Result<()> {
    let Some(path) = &args.config else {
        // clap requires --config unless --reference is given.
        return emit(&config::reference::markdown());
    };
    let text = match args.board.or_else(board_from_env) {
        Some(b) => {
            let (cfg, board) = config::load_with_board(path, &b)?;
            check_startup(&cfg)?;
            let i = &board.info;
            format!(
                "# {}: valid on {} ({}; serial {}; MemoryMax {})\n{}\n",
                path.display(),
                i.name,
                i.target,
                i.serial_device,
                i.memory_max,
                cfg.to_toml()
            )
        }
        None => {
            let cfg = config::load(path)?;
            check_startup(&cfg)?;
            format!("# {}: valid\n{}\n", path.display(), cfg.to_toml())
        }
    };
    emit(&text)
}

/// The start-up checks of `run` (same errors, same words), warnings on stderr.
fn check_startup(cfg: &Config) -> anyhow::Result<()> {
    let report = crate::commands::preflight::preflight(cfg);
    let busy = crate::commands::preflight::busy(cfg);
    for w in report.warnings.iter().chain(&busy) {
        eprintln!("warning: {w}");
    }
    report.into_result()?;
    Ok(())
}

//! `pitchside service-dropin`: a systemd drop-in for pitchside.service sized
//! to a board (MemoryMax, and PITCHSIDE_BOARD for `run`).

use crate::commands::terminal::emit;
use crate::config;
use anyhow::Context as _;
use std::path::PathBuf;

/// Options of `pitchside service-dropin`.
#[derive(Debug, Clone, clap::Args)]
pub struct ServiceDropinArgs {
    /// Board file, or "auto": the board in --boards-dir whose models match --model-file.
    #[arg(long, default_value = "auto")]
    pub board: String,
    /// Where the board files are (for --board auto).
    #[arg(long, default_value = "/usr/share/pitchside/boards")]
    pub boards_dir: PathBuf,
    /// The device's model string (for --board auto).
    #[arg(long, default_value = "/proc/device-tree/model")]
    pub model_file: PathBuf,
}

/// Prints the drop-in for the board named, or detected from the model file.
pub fn execute(args: ServiceDropinArgs) -> anyhow::Result<()> {
    let (path, board) = if args.board == "auto" {
        let model = std::fs::read_to_string(&args.model_file).with_context(|| {
            format!(
                "cannot read the device model from {}: not a Raspberry Pi? pass --board <file>",
                args.model_file.display()
            )
        })?;
        config::detect_board(&args.boards_dir, &model)?
    } else {
        let p = PathBuf::from(args.board);
        let b = config::Board::load(&p)?;
        (std::fs::canonicalize(&p).unwrap_or(p), b)
    };
    emit(&board.systemd_dropin(&path))
}

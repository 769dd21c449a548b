//! Board files (`boards/*.toml`): what a Raspberry Pi model is (target triple,
//! serial device, RAM) and the defaults sized to it. A board's `[defaults]`
//! lie under the venue config: every key the venue sets wins.

use super::{ConfigError, ConfigFile};
use crate::util::units::parse_size;
use serde::Deserialize;
use std::path::Path;

/// Target triples a board may name.
pub const TARGETS: [&str; 2] = ["aarch64-unknown-linux-gnu", "armv7-unknown-linux-gnueabihf"];

/// `[board]` of a board file.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BoardInfo {
    /// Marketing name.
    pub name: String,
    /// Rust target triple of the Raspberry Pi OS build to install.
    pub target: String,
    /// Default serial device for sensors on the GPIO UART.
    pub serial_device: String,
    /// RAM of the smallest variant of the model.
    pub ram: String,
    /// systemd `MemoryMax` for the service on this board.
    pub memory_max: String,
    /// Device-tree model prefixes (`/proc/device-tree/model`) that identify the
    /// board, e.g. "Raspberry Pi 4 Model B" for "Raspberry Pi 4 Model B Rev 1.4".
    pub models: Vec<String>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct BoardFile {
    board: BoardInfo,
    #[serde(default)]
    defaults: toml::Table,
}

/// A parsed board file.
#[derive(Debug, Clone)]
pub struct Board {
    /// `[board]`.
    pub info: BoardInfo,
    defaults: toml::Table,
}

fn parse_err(origin: &str, message: String) -> ConfigError {
    ConfigError::Parse {
        origin: origin.to_string(),
        message,
    }
}

impl Board {
    /// Reads and checks a board file.
    pub fn load(path: &Path) -> Result<Board, ConfigError> {
        let origin = path.display().to_string();
        let text = std::fs::read_to_string(path).map_err(|source| ConfigError::Read {
            path: origin.clone(),
            source,
        })?;
        Board::parse(&text, &origin)
    }

    /// Parses and checks board TOML.
    pub fn parse(text: &str, origin: &str) -> Result<Board, ConfigError> {
        let f: BoardFile = toml::from_str(text).map_err(|e| parse_err(origin, e.to_string()))?;
        let mut problems = Vec::new();
        if !TARGETS.contains(&f.board.target.as_str()) {
            problems.push(format!(
                "board.target: {:?} must be one of {}",
                f.board.target,
                TARGETS.join(", ")
            ));
        }
        for (key, v) in [
            ("board.ram", &f.board.ram),
            ("board.memory_max", &f.board.memory_max),
        ] {
            if let Err(e) = parse_size(v) {
                problems.push(format!("{key}: {e}"));
            }
        }
        if let (Ok(ram), Ok(max)) = (parse_size(&f.board.ram), parse_size(&f.board.memory_max)) {
            if max > ram / 2 {
                problems.push(format!(
                    "board.memory_max: {} is more than half of board.ram {}: leave room for the OS",
                    f.board.memory_max, f.board.ram
                ));
            }
        }
        if f.board.models.iter().all(|m| m.trim().is_empty()) {
            problems
                .push("board.models: name at least one /proc/device-tree/model prefix".to_string());
        }
        if !problems.is_empty() {
            return Err(ConfigError::Invalid { problems });
        }
        Ok(Board {
            info: f.board,
            defaults: f.defaults,
        })
    }

    /// The venue config with this board's defaults under it.
    pub fn apply(&self, venue_text: &str, origin: &str) -> Result<ConfigFile, ConfigError> {
        match super::structure(self.merged(venue_text, origin)?, origin) {
            (Some(file), problems) if problems.is_empty() => Ok(file),
            (_, problems) => Err(ConfigError::Invalid { problems }),
        }
    }

    fn merged(&self, venue_text: &str, origin: &str) -> Result<toml::Table, ConfigError> {
        let venue: toml::Table =
            toml::from_str(venue_text).map_err(|e| parse_err(origin, e.to_string()))?;
        let mut merged = self.defaults.clone();
        merge(&mut merged, venue);
        Ok(merged)
    }

    /// Checks that a config built with this board fits the board's memory:
    /// the detector's state (`max_keys × window × 16` bytes) at most half of
    /// `memory_max`.
    pub fn check_fits(&self, c: &super::Config) -> Result<(), ConfigError> {
        let max = parse_size(&self.info.memory_max).unwrap_or(u64::MAX);
        let state = c.detector.state_bytes();
        if state > max / 2 {
            return Err(ConfigError::Invalid {
                problems: vec![format!(
                    "detector.max_keys x detector.window: {} MiB of detector state is more than half of {}'s memory_max {}",
                    state >> 20,
                    self.info.name,
                    self.info.memory_max
                )],
            });
        }
        Ok(())
    }

    /// Whether a device-tree model string (`/proc/device-tree/model`, which
    /// ends in a NUL) names this board.
    pub fn matches_model(&self, model: &str) -> bool {
        let model = model.trim_end_matches('\0').trim();
        self.info
            .models
            .iter()
            .any(|m| !m.trim().is_empty() && model.starts_with(m.trim()))
    }

    /// A systemd drop-in for `pitchside.service` on this board: the board's
    /// `memory_max` as `MemoryMax=`, and `PITCHSIDE_BOARD` (read by `run` when
    /// `--board` is not given) so that its defaults lie under the venue config.
    /// `board_path` is where the board file is installed. The unit's own
    /// `ExecStart` stays in force, so package upgrades may change it.
    pub fn systemd_dropin(&self, board_path: &Path) -> String {
        let max = parse_size(&self.info.memory_max).unwrap_or(u64::MAX);
        format!(
            "# {name}: written by `pitchside service-dropin`; edit or delete freely.\n\
             [Service]\n\
             MemoryMax={max}\n\
             Environment=\"PITCHSIDE_BOARD={board}\"\n",
            name = self.info.name,
            board = board_path.display(),
        )
    }
}

/// Finds the board file in `dir` whose `models` match a device-tree model
/// string. Errors name the model and the boards tried.
pub fn detect(dir: &Path, model: &str) -> Result<(std::path::PathBuf, Board), ConfigError> {
    let entries = std::fs::read_dir(dir).map_err(|source| ConfigError::Read {
        path: dir.display().to_string(),
        source,
    })?;
    let mut paths: Vec<_> = entries
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "toml"))
        .collect();
    paths.sort();
    let mut tried = Vec::new();
    for p in paths {
        let b = Board::load(&p)?;
        if b.matches_model(model) {
            return Ok((p, b));
        }
        tried.push(b.info.name);
    }
    Err(ConfigError::Invalid {
        problems: vec![format!(
            "no board file in {} matches the model {:?} (boards: {}); pass --board <file>",
            dir.display(),
            model.trim_end_matches('\0').trim(),
            tried.join(", ")
        )],
    })
}

/// Deep merge: tables merge key by key, anything else in `over` replaces.
fn merge(base: &mut toml::Table, over: toml::Table) {
    for (k, v) in over {
        match (base.get_mut(&k), v) {
            (Some(toml::Value::Table(b)), toml::Value::Table(o)) => merge(b, o),
            (_, v) => {
                base.insert(k, v);
            }
        }
    }
}

/// Reads a venue config with a board's defaults under it, validates it and
/// checks that it fits the board.
pub fn load_with_board(venue: &Path, board: &Path) -> Result<(super::Config, Board), ConfigError> {
    let b = Board::load(board)?;
    let origin = venue.display().to_string();
    let text = std::fs::read_to_string(venue).map_err(|source| ConfigError::Read {
        path: origin.clone(),
        source,
    })?;
    let c = super::build(b.merged(&text, &origin)?, &origin)?;
    b.check_fits(&c)?;
    Ok((c, b))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn boards() -> Vec<std::path::PathBuf> {
        let dir = Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../..")).join("boards");
        let mut v: Vec<_> = std::fs::read_dir(dir)
            .unwrap()
            .flatten()
            .map(|e| e.path())
            .filter(|p| p.extension().is_some_and(|x| x == "toml"))
            .collect();
        v.sort();
        v
    }

    #[test]
    fn every_board_file_validates_with_every_venue_config() {
        let boards = boards();
        assert!(boards.len() >= 5, "Pi Zero 2 W, 3, 4, 5, CM4");
        let config_dir = Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../..")).join("config");
        for b in &boards {
            for venue in ["example-venue.toml", "demo.toml"] {
                load_with_board(&config_dir.join(venue), b)
                    .unwrap_or_else(|e| panic!("{} + {venue}: {e}", b.display()));
            }
        }
    }

    #[test]
    fn venue_keys_win_over_board_defaults() {
        let b = Board::parse(
            "[board]\nname = \"t\"\ntarget = \"aarch64-unknown-linux-gnu\"\nserial_device = \"/dev/serial0\"\nram = \"1GiB\"\nmemory_max = \"256MiB\"\nmodels = [\"T\"]\n[defaults.detector]\nmax_keys = 123\nwindow = 50\n",
            "t",
        )
        .unwrap();
        let venue = "[venue]\nid = \"v\"\ngateway_id = \"g\"\n[detector]\nwindow = 60\n[output]\nstore = \"file:///x\"\nspool_dir = \"/y\"\n";
        let c = b.apply(venue, "v").unwrap().validate().unwrap();
        assert_eq!(c.detector.max_keys, 123, "board default used");
        assert_eq!(c.detector.window, 60, "venue wins");
    }

    #[test]
    fn a_board_whose_defaults_do_not_fit_its_memory_is_refused() {
        let b = Board::parse(
            "[board]\nname = \"tiny\"\ntarget = \"armv7-unknown-linux-gnueabihf\"\nserial_device = \"/dev/serial0\"\nram = \"512MiB\"\nmemory_max = \"64MiB\"\nmodels = [\"T\"]\n[defaults.detector]\nmax_keys = 100000\n",
            "t",
        )
        .unwrap();
        let venue = "[venue]\nid = \"v\"\ngateway_id = \"g\"\n[output]\nstore = \"file:///x\"\nspool_dir = \"/y\"\n";
        let c = b.apply(venue, "v").unwrap().validate().unwrap();
        let err = b.check_fits(&c).unwrap_err().to_string();
        assert!(err.contains("memory_max"), "{err}");
        assert!(Board::parse("[board]\nname = \"x\"\ntarget = \"x86_64\"\nserial_device = \"/dev/ttyS0\"\nram = \"1GiB\"\nmemory_max = \"1GiB\"\nmodels = [\"T\"]\n", "t").is_err());
    }

    #[test]
    fn every_board_is_found_by_its_device_tree_model_and_gets_a_dropin() {
        let dir = Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../..")).join("boards");
        for (model, file, max) in [
            ("Raspberry Pi 4 Model B Rev 1.4\0", "pi4.toml", 512u64 << 20),
            ("Raspberry Pi 400 Rev 1.0\0", "pi4.toml", 512 << 20),
            (
                "Raspberry Pi Compute Module 5 Rev 1.0\0",
                "pi5.toml",
                1 << 30,
            ),
            (
                "Raspberry Pi Zero 2 W Rev 1.0\0",
                "pi-zero-2w.toml",
                192 << 20,
            ),
            (
                "Raspberry Pi 3 Model B Plus Rev 1.3\0",
                "pi3.toml",
                384 << 20,
            ),
            ("Raspberry Pi 5 Model B Rev 1.0\0", "pi5.toml", 1 << 30),
            (
                "Raspberry Pi Compute Module 4 Rev 1.0\0",
                "cm4.toml",
                512 << 20,
            ),
        ] {
            let (path, board) = detect(&dir, model).unwrap_or_else(|e| panic!("{model}: {e}"));
            assert_eq!(path.file_name().unwrap(), file, "{model}");
            let d = board.systemd_dropin(
                Path::new("/usr/share/pitchside/boards")
                    .join(file)
                    .as_path(),
            );
            assert!(d.contains(&format!("\nMemoryMax={max}\n")), "{d}");
            assert!(
                d.contains(&format!(
                    "\nEnvironment=\"PITCHSIDE_BOARD=/usr/share/pitchside/boards/{file}\"\n"
                )),
                "{d}"
            );
            assert!(
                !d.contains("ExecStart"),
                "the unit's ExecStart stays in force: {d}"
            );
        }
        let e = detect(&dir, "Raspberry Pi Model B Rev 2\0")
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("Raspberry Pi Model B Rev 2") && e.contains("--board"),
            "{e}"
        );
    }

    #[test]
    fn a_board_without_models_is_refused() {
        let e = Board::parse(
            "[board]\nname = \"t\"\ntarget = \"aarch64-unknown-linux-gnu\"\nserial_device = \"/dev/serial0\"\nram = \"1GiB\"\nmemory_max = \"256MiB\"\nmodels = []\n",
            "t",
        )
        .unwrap_err()
        .to_string();
        assert!(e.contains("board.models"), "{e}");
    }
}

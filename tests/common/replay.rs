//! The one `pitchside replay` runner: config and input, optionally
//! `--output` and `--sensor`; the caller takes the whole [`Output`] or has
//! success asserted.

use std::path::Path;
use std::process::{Command, Output};

/// A `pitchside replay` command line being built.
pub struct Replay(Command);

impl Replay {
    /// `pitchside replay --config cfg --input input`.
    pub fn new(cfg: &Path, input: &Path) -> Replay {
        let mut c = super::bin();
        c.args(["replay", "--config"])
            .arg(cfg)
            .arg("--input")
            .arg(input);
        Replay(c)
    }

    /// Adds `--output dir` (a local folder instead of the configured store).
    pub fn output(mut self, dir: &Path) -> Replay {
        self.0.arg("--output").arg(dir);
        self
    }

    /// Adds `--sensor kind` (the kind of lines without a `sensor` field).
    pub fn sensor(mut self, kind: &str) -> Replay {
        self.0.args(["--sensor", kind]);
        self
    }

    /// The command, for a caller that runs it its own way.
    pub fn command(self) -> Command {
        self.0
    }

    /// Runs it to the end, whatever the outcome.
    pub fn run(mut self) -> Output {
        self.0.output().unwrap()
    }

    /// Runs it and asserts that it succeeded (its stderr in the message).
    pub fn succeed(mut self) -> Output {
        super::succeed(&mut self.0)
    }
}

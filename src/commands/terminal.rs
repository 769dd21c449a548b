//! What the commands print: stdout that a reader may close early (`| head`),
//! and errors as one line on stderr.

use anyhow::Context as _;
use std::io::Write as _;

/// Writes `text` to stdout. A closed stdout (`| head`) is not an error:
/// the reader has what it wanted, so the command ends quietly.
pub fn emit(text: &str) -> anyhow::Result<()> {
    let mut out = std::io::stdout().lock();
    match out.write_all(text.as_bytes()).and_then(|()| out.flush()) {
        Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => {
            Err(e).context("cannot write to stdout")
        }
        _ => Ok(()),
    }
}

/// `true` when a write went through, `false` when the reader has closed
/// stdout (`| head`): the command ends quietly. Other errors are errors.
pub fn still_open(written: std::io::Result<()>) -> anyhow::Result<bool> {
    match written {
        Ok(()) => Ok(true),
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(false),
        Err(e) => Err(e.into()),
    }
}

/// An error's text, said once: its chain, leaving out causes that an outer
/// message already quotes (our errors name their cause in their own text).
pub fn error_text(e: &anyhow::Error) -> String {
    let mut text = String::new();
    for cause in e.chain() {
        let part = cause.to_string();
        if !text.contains(&part) {
            if !text.is_empty() {
                text.push_str(": ");
            }
            text.push_str(&part);
        }
    }
    text
}

/// Prints `error: <text>` on stderr. Not `eprintln!`: a closed stderr must
/// not turn an error into a panic.
pub fn print_error(text: impl std::fmt::Display) {
    let _ = writeln!(std::io::stderr(), "error: {text}");
}

//! Start-up checks shared by `run` and `check-config`: everything that would
//! stop `run` at start-up (no source, an unset `password_env`, a missing
//! password, TLS or credentials file, a store without credentials, a spool or
//! store folder that cannot be created, a metrics address this machine does
//! not have) is an error here, with the same words in both commands, because
//! `run` calls [`preflight`] first. What lets the gateway start but will bite
//! later (a serial device not plugged in yet, a spool filesystem too small for
//! `min_free_disk`) is a warning.

use crate::config::{exact_size, Config, ConfigError};
use crate::console::auth::Token;
use crate::mqtt::conn::BrokerSettings;
use crate::sinks::store::Store;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// Said by `run` and `check-config` when no source is configured.
pub const NO_SOURCES: &str =
    "no source configured: add [sources.simulator] (or a serial/MQTT source) to the config";

/// What the start-up checks found.
#[derive(Debug, Default)]
pub struct Report {
    /// Problems that stop `run`; each starts with the key to fix.
    pub errors: Vec<String>,
    /// Problems `run` starts with anyway, but an operator should know.
    pub warnings: Vec<String>,
}

impl Report {
    /// Ok, or the errors as [`ConfigError::Invalid`].
    pub fn into_result(self) -> Result<(), ConfigError> {
        if self.errors.is_empty() {
            Ok(())
        } else {
            Err(ConfigError::Invalid {
                problems: self.errors,
            })
        }
    }
}

/// Every start-up check of `run` that depends on the config and this machine.
/// Reads the files the config names and binds nothing for long; creates nothing.
pub fn preflight(c: &Config) -> Report {
    let mut r = Report::default();
    if c.sources.simulator.is_none() && c.sources.serial.is_empty() && c.sources.mqtt.is_empty() {
        r.errors.push(NO_SOURCES.to_string());
    }
    let client_id = format!("pitchside-{}-{}", c.venue.id, c.venue.gateway_id);
    for (i, m) in c.sources.mqtt.iter().enumerate() {
        let key = format!("sources.mqtt[{i}].broker");
        if let Err(e) = BrokerSettings::new(&key, &m.broker, &client_id, false) {
            r.errors.push(e.to_string());
        }
    }
    if let Some(b) = &c.alerts.mqtt {
        let id = format!("{client_id}-alerts");
        if let Err(e) = BrokerSettings::new("alerts.mqtt", b, &id, true) {
            r.errors.push(e.to_string());
        }
    }
    match c.output.store.strip_prefix("file://") {
        Some(path) => r
            .errors
            .extend(folder_problem("output.store", Path::new(path))),
        // Builds the client only: no request is made.
        None => {
            let timeout = Duration::from_micros(c.output.upload_timeout.max(1) as u64);
            if let Err(e) = Store::from_settings(&c.file.output, timeout) {
                r.errors.push(e.to_string());
            }
        }
    }
    r.errors
        .extend(folder_problem("output.spool_dir", &c.output.spool_dir));
    if let Some(addr) = &c.metrics.listen {
        r.errors.extend(listen_problem("metrics.listen", addr));
    }
    r.errors.extend(console_problems(c));
    for (i, s) in c.sources.serial.iter().enumerate() {
        r.warnings.extend(serial_warning(
            &format!("sources.serial[{i}].path"),
            &s.path,
        ));
    }
    let (at, space) = fs_space(&c.output.spool_dir);
    if let Some(space) = space {
        r.warnings.extend(spool_fit(
            &at,
            space,
            c.output.spool_max_bytes,
            c.output.min_free_disk,
        ));
    }
    r
}

/// Conditions of the moment that stop `run` but are most likely caused by
/// the gateway already running with this config (`check-config` says them as
/// warnings; `run` fails on them with its own message).
pub fn busy(c: &Config) -> Vec<String> {
    let mut out = Vec::new();
    for (key, addr) in [
        ("metrics.listen", &c.metrics.listen),
        ("console.listen", &c.console.listen),
    ] {
        let Some(addr) = addr else { continue };
        if let Err(e) = std::net::TcpListener::bind(addr.as_str()) {
            if e.kind() == std::io::ErrorKind::AddrInUse {
                out.push(format!(
                    "{key} {addr} is in use now (by the running gateway?): `run` with this config fails while it is"
                ));
            }
        }
    }
    let lock = c.output.spool_dir.join("lock");
    if let Ok(file) = std::fs::File::open(&lock) {
        if nix::fcntl::Flock::lock(file, nix::fcntl::FlockArg::LockExclusiveNonblock).is_err() {
            out.push(format!(
                "output.spool_dir {} is in use by another pitchside process now (the running gateway?): `run` with this config fails while it is",
                c.output.spool_dir.display()
            ));
        }
    }
    out
}

/// `path` itself if it exists, else its nearest existing ancestor.
fn nearest_existing(path: &Path) -> PathBuf {
    let mut p = path;
    loop {
        if p.as_os_str().is_empty() {
            return PathBuf::from(".");
        }
        if std::fs::symlink_metadata(p).is_ok() {
            return p.to_path_buf();
        }
        match p.parent() {
            Some(parent) => p = parent,
            None => return PathBuf::from("/"),
        }
    }
}

/// Why a folder `run` creates (or writes into) cannot be, if it cannot.
fn folder_problem(key: &str, path: &Path) -> Option<String> {
    let at = nearest_existing(path);
    let meta = match std::fs::metadata(&at) {
        Ok(m) => m,
        Err(e) => return Some(format!("{key}: {}: {e}", at.display())),
    };
    if !meta.is_dir() {
        return Some(format!(
            "{key}: {} cannot be a folder: {} is a file; choose another path",
            path.display(),
            at.display()
        ));
    }
    let flags = nix::unistd::AccessFlags::W_OK | nix::unistd::AccessFlags::X_OK;
    if nix::unistd::access(&at, flags).is_err() {
        let what = if at == path {
            "is not writable".to_string()
        } else {
            format!("cannot be created: {} is not writable", at.display())
        };
        return Some(format!(
            "{key}: {} {what} by the user pitchside runs as; create it and give that user write access, or choose another folder",
            path.display()
        ));
    }
    None
}

/// Why `key` (`metrics.listen`, `console.listen`) cannot be bound, unless
/// only because it is in use.
fn listen_problem(key: &str, addr: &str) -> Option<String> {
    match std::net::TcpListener::bind(addr) {
        Ok(_) => None,
        Err(e) if e.kind() == std::io::ErrorKind::AddrInUse => None,
        Err(e) => Some(format!(
            "{key} {addr}: {e} (use an address of this machine and a free port, or \"\" to turn it off)"
        )),
    }
}

/// The console's address, token file and certificate, as `run` reads them.
fn console_problems(c: &Config) -> Vec<String> {
    let mut out = Vec::new();
    let Some(addr) = &c.console.listen else {
        return out;
    };
    out.extend(listen_problem("console.listen", addr));
    if let Some(Err(e)) = c.console.token_file.as_deref().map(Token::read) {
        out.push(e.to_string());
    }
    if let Some(Err(e)) = c.console.tls.as_ref().map(crate::console::tls::acceptor) {
        out.push(e.to_string());
    }
    out
}

/// A serial device that is not there (yet), or that this user cannot open.
fn serial_warning(key: &str, path: &str) -> Option<String> {
    let p = Path::new(path);
    if !p.exists() {
        return Some(format!(
            "{key}: {path} does not exist (yet); the gateway starts anyway and opens it when it appears (a USB adapter plugged in later)"
        ));
    }
    let flags = nix::unistd::AccessFlags::R_OK | nix::unistd::AccessFlags::W_OK;
    if nix::unistd::access(p, flags).is_err() {
        return Some(format!(
            "{key}: {path} cannot be opened for reading and writing by the user pitchside runs as; add that user to the device's group (usually dialout)"
        ));
    }
    None
}

/// Size and free space of a filesystem, in bytes.
#[derive(Debug, Clone, Copy)]
pub struct FsSpace {
    /// Total size.
    pub total: u64,
    /// Free for unprivileged users.
    pub available: u64,
}

/// The filesystem of `path` (or of its nearest existing parent).
fn fs_space(path: &Path) -> (PathBuf, Option<FsSpace>) {
    let at = nearest_existing(path);
    let space = nix::sys::statvfs::statvfs(&at).ok().map(|s| {
        // The fields are 32 bits wide on 32-bit targets (armv7): the casts matter there.
        #[allow(clippy::unnecessary_cast)]
        let (blocks, avail, frag) = (
            s.blocks() as u64,
            s.blocks_available() as u64,
            s.fragment_size() as u64,
        );
        FsSpace {
            total: blocks.saturating_mul(frag),
            available: avail.saturating_mul(frag),
        }
    });
    (at, space)
}

/// `n` bytes for a person: "8.0 MiB".
fn human(n: u64) -> String {
    let f = n as f64;
    match n {
        n if n >= 1 << 30 => format!("{:.1} GiB", f / (1u64 << 30) as f64),
        n if n >= 1 << 20 => format!("{:.1} MiB", f / (1u64 << 20) as f64),
        n if n >= 1 << 10 => format!("{:.1} KiB", f / 1024.0),
        n => format!("{n} B"),
    }
}

/// `n` rounded down to a whole number of KiB, MiB or GiB, as a config value.
fn size_floor(n: u64) -> String {
    for (unit, size) in [(1u64 << 30, "GiB"), (1 << 20, "MiB"), (1 << 10, "KiB")] {
        if n >= 4 * unit {
            return format!("{}{size}", n / unit);
        }
    }
    exact_size(n)
}

/// Whether `output.spool_max_bytes` and `output.min_free_disk` can work on a
/// filesystem of `space` (at `at`, for the message); one warning per problem,
/// each saying what to set instead.
pub fn spool_fit(at: &Path, space: FsSpace, spool_max: u64, min_free: u64) -> Vec<String> {
    let mut out = Vec::new();
    let fs = format!(
        "the spool's filesystem ({} at {})",
        human(space.total),
        at.display()
    );
    // Leave a tenth of the disk free, and let the spool have half of the rest.
    let min_free_hint = space.total / 10;
    if min_free >= space.total {
        out.push(format!(
            "output.min_free_disk: {} is not less than the size of {fs}: every file would be deleted before it is uploaded; set min_free_disk = \"{}\" (a tenth of it) and spool_max_bytes = \"{}\"",
            human(min_free),
            size_floor(min_free_hint),
            size_floor((space.total - min_free_hint) / 2)
        ));
        return out;
    }
    if spool_max.saturating_add(min_free) > space.total {
        out.push(format!(
            "output.spool_max_bytes: {} plus output.min_free_disk {} is more than {fs}: files would be evicted long before the spool reaches spool_max_bytes; set spool_max_bytes = \"{}\" or less",
            human(spool_max),
            human(min_free),
            size_floor((space.total - min_free) / 2)
        ));
    }
    if space.available < min_free {
        out.push(format!(
            "output.min_free_disk: {fs} has only {} free now, less than min_free_disk {}: files would be evicted as soon as they are written; free space there, or lower min_free_disk",
            human(space.available),
            human(min_free)
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    const MIB: u64 = 1 << 20;

    fn fit(total: u64, available: u64, spool_max: u64, min_free: u64) -> Vec<String> {
        spool_fit(
            Path::new("/spool"),
            FsSpace { total, available },
            spool_max,
            min_free,
        )
    }

    /// Asserts one warning for that filesystem (total, available) and those
    /// limits, starting with `start` and containing each of `parts`.
    fn warned_once(fs: (u64, u64), spool_max: u64, min_free: u64, start: &str, parts: &[&str]) {
        let w = fit(fs.0, fs.1, spool_max, min_free);
        assert_eq!(w.len(), 1, "{w:?}");
        assert!(w[0].starts_with(start), "{w:?}");
        for part in parts {
            assert!(w[0].contains(part), "{part:?} missing: {w:?}");
        }
    }

    #[test]
    fn min_free_disk_as_large_as_the_filesystem_is_warned_with_values_that_fit() {
        warned_once(
            (8 * MIB, 8 * MIB),
            1 << 30,
            256 * MIB,
            "output.min_free_disk: 256.0 MiB",
            &[
                "8.0 MiB at /spool",
                "min_free_disk = \"819KiB\"",
                "spool_max_bytes = \"3686KiB\"",
            ],
        );
    }

    #[test]
    fn spool_max_bytes_beyond_the_filesystem_is_warned() {
        warned_once(
            (1024 * MIB, 1000 * MIB),
            1024 * MIB,
            256 * MIB,
            "output.spool_max_bytes",
            &["spool_max_bytes = \"384MiB\""],
        );
    }

    #[test]
    fn too_little_free_space_now_is_warned() {
        warned_once(
            (100_000 * MIB, 100 * MIB),
            1024 * MIB,
            256 * MIB,
            "",
            &["has only 100.0 MiB free now"],
        );
    }

    #[test]
    fn a_spool_that_fits_gets_no_warning() {
        assert!(fit(32_000 * MIB, 20_000 * MIB, 1024 * MIB, 256 * MIB).is_empty());
        // Exactly full is still fine.
        assert!(fit(1280 * MIB, 1280 * MIB, 1024 * MIB, 256 * MIB).is_empty());
    }

    #[test]
    fn a_folder_under_a_file_cannot_be_created() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("f");
        std::fs::write(&file, "x").unwrap();
        let p = folder_problem("output.spool_dir", &file.join("spool")).unwrap();
        assert!(
            p.starts_with("output.spool_dir: ") && p.contains("is a file"),
            "{p}"
        );
        assert!(folder_problem("output.spool_dir", &dir.path().join("a/b")).is_none());
    }
}

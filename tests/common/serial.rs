//! Serial ports for tests: pseudo-terminals made by `socat`, the
//! `[[sources.serial]]` section that reads one, and a gateway set up to read
//! a port in a temp folder.

use super::services::{free_port, have, wait_until, Gateway};
use super::VenueConfig;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

/// A `socat` making pseudo-terminals; killed on drop.
pub struct Pty {
    child: Child,
}

impl Pty {
    /// `socat` copying what the test writes to a new pty whose slave is
    /// linked at `link`.
    pub fn open(link: &Path) -> Pty {
        let mut c = Command::new("socat");
        c.arg("-u").arg("STDIN").arg(pty_address(link));
        Pty::spawn(c.stdin(Stdio::piped()), &[link])
    }

    /// A linked pair of pseudo-terminals: what is written to `a` is read from `b`.
    pub fn pair(a: &Path, b: &Path) -> Pty {
        let mut c = Command::new("socat");
        c.arg(pty_address(a)).arg(pty_address(b));
        Pty::spawn(&mut c, &[a, b])
    }

    fn spawn(cmd: &mut Command, links: &[&Path]) -> Pty {
        let child = cmd.stderr(Stdio::null()).spawn().unwrap();
        assert!(
            wait_until(Duration::from_secs(5), || links.iter().all(|l| l.exists())),
            "socat made no pty"
        );
        Pty { child }
    }

    /// Writes to the pty opened with [`Pty::open`].
    pub fn write(&mut self, bytes: &[u8]) {
        let stdin = self.child.stdin.as_mut().unwrap();
        stdin.write_all(bytes).unwrap();
        stdin.flush().unwrap();
    }

    /// Closes the far end: socat sees end of input, closes the pty and exits.
    pub fn close(mut self) {
        drop(self.child.stdin.take());
        let _ = self.child.wait();
    }
}

impl Drop for Pty {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn pty_address(link: &Path) -> String {
    format!("PTY,raw,echo=0,link={}", link.display())
}

/// A `[[sources.serial]]` section reading `path`, with `keys` (TOML lines) added.
pub fn serial_source(path: &Path, keys: &str) -> String {
    format!("[[sources.serial]]\npath = \"{}\"\n{keys}", path.display())
}

/// A temp folder with a fast venue config ([`VenueConfig::fast`]) whose
/// only serial source reads the pseudo-terminal `tty` in that folder.
pub struct SerialRig {
    /// The folder (store, spool, config, the pty link).
    pub dir: tempfile::TempDir,
    /// The serial port's path.
    pub tty: PathBuf,
    /// The metrics port.
    pub port: u16,
    /// The config file.
    pub cfg: PathBuf,
}

impl SerialRig {
    /// `keys` go into the serial section after its `path`; `edit` changes
    /// the rest of the config.
    pub fn new(tty: &str, keys: &str, edit: impl FnOnce(VenueConfig) -> VenueConfig) -> SerialRig {
        let dir = tempfile::tempdir().unwrap();
        let tty = dir.path().join(tty);
        let port = free_port();
        let cfg = edit(VenueConfig::fast(dir.path(), port))
            .extra(&serial_source(&tty, keys))
            .write();
        SerialRig {
            dir,
            tty,
            port,
            cfg,
        }
    }

    /// [`SerialRig::new`] where `socat` is installed; `None` (after a loud
    /// notice, see [`have`]) where it is not.
    pub fn with_socat(
        tty: &str,
        keys: &str,
        edit: impl FnOnce(VenueConfig) -> VenueConfig,
    ) -> Option<SerialRig> {
        have(&["socat"]).then(|| SerialRig::new(tty, keys, edit))
    }

    /// Starts the gateway (the device may not exist yet).
    pub fn start(&self) -> Gateway {
        Gateway::start(&self.cfg, self.port, &[])
    }

    /// Opens the device, starts the gateway and waits until it has opened the port.
    pub fn start_with_device(&self) -> (Pty, Gateway) {
        let pty = Pty::open(&self.tty);
        let gw = self.start();
        gw.log
            .wait_for("Serial port opened.", 1, Duration::from_secs(15));
        (pty, gw)
    }
}

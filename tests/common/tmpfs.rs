//! A small tmpfs for tests about full or small disks: mounted on a folder
//! for the test's lifetime, unmounted on drop.

use super::services::skip;
use std::path::{Path, PathBuf};
use std::process::Command;

/// A mounted tmpfs.
pub struct Tmpfs(PathBuf);

impl Tmpfs {
    /// Mounts a tmpfs of `size` (`"8m"`) on `at`, made first. `None` after a
    /// loud notice where mounting is not allowed (not root), or a panic under
    /// `PITCHSIDE_REQUIRE_SERVICES=1`: CI runs as root and must mount.
    pub fn mount(at: &Path, size: &str) -> Option<Tmpfs> {
        std::fs::create_dir_all(at).unwrap();
        let out = Command::new("mount")
            .args(["-t", "tmpfs", "-o", &format!("size={size}"), "tmpfs"])
            .arg(at)
            .output();
        match out {
            Ok(o) if o.status.success() => Some(Tmpfs(at.to_path_buf())),
            other => {
                let why = match other {
                    Ok(o) => String::from_utf8_lossy(&o.stderr).trim().to_string(),
                    Err(e) => e.to_string(),
                };
                skip(&format!(
                    "this test mounts a tmpfs (needs root or CAP_SYS_ADMIN): {why}"
                ));
                None
            }
        }
    }

    /// Makes it read-only (`mount -o remount,ro`): writes fail with EROFS,
    /// even as root.
    pub fn read_only(&self) {
        let status = Command::new("mount")
            .args(["-o", "remount,ro"])
            .arg(&self.0)
            .status()
            .unwrap();
        assert!(status.success(), "remount read-only failed");
    }

    /// Where it is mounted.
    pub fn path(&self) -> &Path {
        &self.0
    }
}

impl Drop for Tmpfs {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg("-l").arg(&self.0).status();
    }
}

//! The one builder for the venue configs the tests write: the `[venue]`,
//! `[output]` and `[metrics]` basics, any key set or replaced per section,
//! and raw TOML (arrays of tables such as `[[sources.serial]]`, or text a
//! test breaks on purpose) appended after the sections.

use std::fmt::Display;
use std::path::{Path, PathBuf};

/// A venue config being built; cloned to write variants of one config.
#[derive(Clone, Debug)]
pub struct VenueConfig {
    dir: PathBuf,
    /// `[section]` name and its `key = value` lines, in the order written.
    sections: Vec<(String, Vec<(String, String)>)>,
    extra: String,
}

impl VenueConfig {
    /// Venue `testvenue`, gateway `gw-1`, store `file://{dir}/store`, spool
    /// `{dir}/spool`, metrics endpoint and console off.
    pub fn new(dir: &Path) -> VenueConfig {
        VenueConfig {
            dir: dir.to_path_buf(),
            sections: Vec::new(),
            extra: String::new(),
        }
        .set_str("venue", "id", "testvenue")
        .set_str("venue", "gateway_id", "gw-1")
        .set_str(
            "output",
            "store",
            format!("file://{}", dir.join("store").display()),
        )
        .set_str("output", "spool_dir", dir.join("spool").display())
        .set_str("metrics", "listen", "")
        .set_str("console", "listen", "")
    }

    /// What the service tests run with: [`VenueConfig::new`] plus 1 s
    /// windows without watermark delay, a flush every 500 ms, progress every
    /// 200 ms, and metrics on `127.0.0.1:{metrics_port}`.
    pub fn fast(dir: &Path, metrics_port: u16) -> VenueConfig {
        VenueConfig::new(dir)
            .set_str("windows", "size", "1s")
            .set_str("windows", "watermark_delay", "0s")
            .set_str("output", "flush_interval", "500ms")
            .set_str("metrics", "progress_interval", "200ms")
            .set_str("metrics", "listen", format!("127.0.0.1:{metrics_port}"))
    }

    /// Sets `key` of `[section]` to the TOML value `value` (a number, or text
    /// written as it stands), replacing an earlier value. A new section goes
    /// after the others.
    pub fn set(mut self, section: &str, key: &str, value: impl Display) -> VenueConfig {
        let value = value.to_string();
        let at = match self.sections.iter().position(|(s, _)| s == section) {
            Some(at) => at,
            None => {
                self.sections.push((section.to_string(), Vec::new()));
                self.sections.len() - 1
            }
        };
        let keys = &mut self.sections[at].1;
        match keys.iter_mut().find(|(k, _)| k == key) {
            Some((_, v)) => *v = value,
            None => keys.push((key.to_string(), value)),
        }
        self
    }

    /// Sets `key` of `[section]` to the string `value` (quoted here).
    pub fn set_str(self, section: &str, key: &str, value: impl Display) -> VenueConfig {
        self.set(section, key, format!("\"{value}\""))
    }

    /// Sets each (key, string value) of `pairs` in `[section]`.
    pub fn set_strs(self, section: &str, pairs: &[(&str, &str)]) -> VenueConfig {
        pairs
            .iter()
            .fold(self, |c, (k, v)| c.set_str(section, k, v))
    }

    /// Appends raw TOML after the sections.
    pub fn extra(mut self, toml: &str) -> VenueConfig {
        self.extra.push_str(toml);
        self
    }

    /// The config text.
    pub fn text(&self) -> String {
        let mut out = String::new();
        for (section, keys) in &self.sections {
            out.push_str(&format!("[{section}]\n"));
            for (k, v) in keys {
                out.push_str(&format!("{k} = {v}\n"));
            }
        }
        out + &self.extra
    }

    /// Writes the text to `venue.toml` in the folder; returns its path.
    pub fn write(&self) -> PathBuf {
        self.write_as("venue.toml")
    }

    /// Writes the text to `name` in the folder; returns its path.
    pub fn write_as(&self, name: &str) -> PathBuf {
        let path = self.dir.join(name);
        std::fs::write(&path, self.text()).unwrap();
        path
    }
}

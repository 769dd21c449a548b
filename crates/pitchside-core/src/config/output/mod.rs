//! `[output]`: tables, spool and store (SPEC §5), with the cloud store
//! sections in [`cloud`].

pub mod cloud;

use crate::config::error::Problems;
use crate::model::Micros;
use crate::util::time::MICROS_PER_SEC;
use cloud::{AzureSection, GcsSection, S3Section};
use std::path::PathBuf;

crate::config::section! {
    /// `[output]`.
    #[serde(deny_unknown_fields)]
    pub struct OutputSection {
        /// `file:///path`, or (with the upload feature) `s3://`, `gs://`, `az://`.
        store: String,
        /// Local folder for finished files waiting for upload, and for state.
        spool_dir: String,
        /// Write open tables at least this often.
        flush_interval: String [Duration] = "60s".into(),
        /// Write a table as soon as it has this many rows.
        max_rows_per_file: u32 = 100_000,
        /// `zstd` or `snappy`.
        compression: String = "zstd".into(),
        /// Write the `raw` table.
        raw: bool = true,
        /// Most bytes the spool may hold; past it the lowest-priority files are
        /// evicted (raw first, alerts last).
        spool_max_bytes: String [Size] = "1GiB".into(),
        /// Free disk space to leave on the spool's filesystem; below it files are
        /// evicted as above.
        min_free_disk: String [Size] = "256MiB".into(),
        /// Longest a single upload attempt may take before it counts as failed.
        upload_timeout: String [Duration] = "30s".into(),
        /// Retry interval after a permanent error (permission, missing bucket).
        permanent_retry: String [Duration] = "5m".into(),
        /// Longest time an input waits in the journal before it is fsynced; a
        /// power cut loses at most this much serial input. MQTT messages are
        /// fsynced before they are acknowledged, whatever this says.
        sync_interval: String [Duration] = "200ms".into(),
        /// Most bytes the input journal may hold while checkpoints fail; past
        /// it the journal is switched off until a checkpoint is written again
        /// (at least 64 KiB).
        max_journal_bytes: String [Size] = "256MiB".into(),
        /// `[output.s3]`: S3 and S3-compatible stores.
        #[serde(skip_serializing_if = "Option::is_none")]
        s3: Option<S3Section> = None,
        /// `[output.azure]`: Azure Blob Storage.
        #[serde(skip_serializing_if = "Option::is_none")]
        azure: Option<AzureSection> = None,
        /// `[output.gcs]`: Google Cloud Storage.
        #[serde(skip_serializing_if = "Option::is_none")]
        gcs: Option<GcsSection> = None,
    }
}

/// `[output]`, in bytes and µs. The cloud sections are read from the file
/// ([`OutputSection`]) when the store client is built.
#[derive(Debug, Clone)]
pub struct OutputConfig {
    /// Store URL.
    pub store: String,
    /// Spool folder.
    pub spool_dir: PathBuf,
    /// Flush interval, µs.
    pub flush_interval: Micros,
    /// Rows per file cap.
    pub max_rows_per_file: usize,
    /// Use snappy instead of zstd.
    pub snappy: bool,
    /// Write `raw`.
    pub raw: bool,
    /// Spool byte ceiling.
    pub spool_max_bytes: u64,
    /// Free disk to keep.
    pub min_free_disk: u64,
    /// Per-attempt upload timeout, µs.
    pub upload_timeout: Micros,
    /// Retry interval after a permanent upload error, µs.
    pub permanent_retry: Micros,
    /// Journal fsync interval, µs.
    pub sync_interval: Micros,
    /// Journal byte ceiling.
    pub max_journal_bytes: u64,
}

impl OutputSection {
    /// Checks every key, and that the cloud sections fit the store.
    pub fn validate(&self) -> Result<OutputConfig, Vec<String>> {
        let mut p = Problems::default();
        let o = self;
        check_store(&mut p, &o.store);
        p.check(!o.spool_dir.is_empty(), || {
            "output.spool_dir: must name a folder".to_string()
        });
        let flush_interval = p.duration(
            "output.flush_interval",
            &o.flush_interval,
            MICROS_PER_SEC / 10,
        );
        p.check(o.max_rows_per_file >= 1, || {
            "output.max_rows_per_file: must be at least 1".to_string()
        });
        p.check(matches!(o.compression.as_str(), "zstd" | "snappy"), || {
            format!(
                "output.compression: {:?} must be \"zstd\" or \"snappy\"",
                o.compression
            )
        });
        let spool_max_bytes = p.size("output.spool_max_bytes", &o.spool_max_bytes, 1 << 20);
        let min_free_disk = p.size("output.min_free_disk", &o.min_free_disk, 0);
        let upload_timeout = p.duration("output.upload_timeout", &o.upload_timeout, MICROS_PER_SEC);
        let permanent_retry =
            p.duration("output.permanent_retry", &o.permanent_retry, MICROS_PER_SEC);
        let sync_interval = p.duration("output.sync_interval", &o.sync_interval, 1000);
        let max_journal_bytes = p.size("output.max_journal_bytes", &o.max_journal_bytes, 64 << 10);
        cloud::check(&mut p, &o.store, &o.s3, &o.azure, &o.gcs);
        p.finish(OutputConfig {
            store: o.store.clone(),
            spool_dir: PathBuf::from(&o.spool_dir),
            flush_interval,
            max_rows_per_file: o.max_rows_per_file as usize,
            snappy: o.compression == "snappy",
            raw: o.raw,
            spool_max_bytes,
            min_free_disk,
            upload_timeout,
            permanent_retry,
            sync_interval,
            max_journal_bytes,
        })
    }
}

/// `output.store`: a URL of a known scheme that names a folder or bucket.
fn check_store(p: &mut Problems, store: &str) {
    p.check(
        ["file://", "s3://", "gs://", "az://"]
            .iter()
            .any(|s| store.starts_with(s)),
        || {
            format!(
                "output.store: {store:?} must be a URL: file:///path, s3://bucket/prefix, gs://bucket/prefix or az://container/prefix"
            )
        },
    );
    if let Some(path) = store.strip_prefix("file://") {
        p.check(
            path.starts_with('/') || path.starts_with("./") || path.starts_with("../"),
            || {
                format!(
                    "output.store: {store:?} must name a folder as file:///absolute/path or file://./relative/path"
                )
            },
        );
    }
    for scheme in ["s3://", "gs://", "az://"] {
        if let Some(rest) = store.strip_prefix(scheme) {
            p.check(!rest.trim_matches('/').is_empty(), || {
                format!(
                    "output.store: {store:?} must name a bucket or container, e.g. {scheme}bucket/prefix"
                )
            });
        }
    }
}

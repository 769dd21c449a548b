//! The TOML file as written by a person, with documented defaults.

use serde::{Deserialize, Serialize};

pub use super::sources::{
    AlertsSection, MqttBroker, MqttSourceSection, MqttSubscription, MqttTls, SerialSection,
};

/// The whole file.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ConfigFile {
    /// `[venue]`: who this gateway is.
    pub venue: VenueSection,
    /// `[detector]`: rolling z-score (SPEC §2).
    #[serde(default)]
    pub detector: DetectorSection,
    /// `[windows]`: event-time windows (SPEC §3).
    #[serde(default)]
    pub windows: WindowsSection,
    /// `[fatigue]`: fatigue alerts (SPEC §4).
    #[serde(default)]
    pub fatigue: FatigueSection,
    /// `[limits]`: input limits and per-metric ranges (SPEC §1, §3).
    #[serde(default)]
    pub limits: LimitsSection,
    /// `[output]`: tables, spool and store (SPEC §5).
    pub output: OutputSection,
    /// `[metrics]`: progress rows and the Prometheus endpoint (SPEC §6).
    #[serde(default)]
    pub metrics: MetricsSection,
    /// `[pipeline]`: queue capacities between stages.
    #[serde(default)]
    pub pipeline: PipelineSection,
    /// `[sources.*]`: where events come from.
    #[serde(default)]
    pub sources: SourcesSection,
    /// `[alerts]`: real-time alert output (MQTT).
    #[serde(default)]
    pub alerts: AlertsSection,
    /// `[log]`: log format and level.
    #[serde(default)]
    pub log: LogSection,
}

/// `[venue]`.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct VenueSection {
    /// Venue id, `[a-z0-9-]{1,32}`.
    pub id: String,
    /// Gateway id, `[a-z0-9-]{1,32}`.
    pub gateway_id: String,
}

/// `[detector]`.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct DetectorSection {
    /// Readings kept per key (default 100).
    pub window: u32,
    /// |z| above which a reading is an anomaly (default 3.5).
    pub threshold: f64,
    /// Readings needed before a key can alert (default 10).
    pub min_baseline: u32,
    /// A key with no reading for this long (event time) is forgotten (default "30m").
    pub idle_timeout: String,
    /// Hard cap on live keys; the least recently appended is evicted (default 10000).
    pub max_keys: u32,
}

impl Default for DetectorSection {
    fn default() -> Self {
        DetectorSection {
            window: 100,
            threshold: 3.5,
            min_baseline: 10,
            idle_timeout: "30m".into(),
            max_keys: 10_000,
        }
    }
}

/// `[windows]`.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct WindowsSection {
    /// Tumbling window size (default "1m").
    pub size: String,
    /// Watermark = max event time of the kind minus this (default "30s").
    pub watermark_delay: String,
    /// Cap on open (window, group) cells over all kinds; past it new groups are
    /// dropped and counted (default 100000).
    pub max_open_groups: u32,
}

impl Default for WindowsSection {
    fn default() -> Self {
        WindowsSection {
            size: "1m".into(),
            watermark_delay: "30s".into(),
            max_open_groups: 100_000,
        }
    }
}

/// `[fatigue]`.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct FatigueSection {
    /// Previous windows forming the baseline (default 3).
    pub baseline_windows: u32,
    /// Alert when the mean exceeds baseline mean + k·σ (default 1.5).
    pub k: f64,
    /// Cap on players with fatigue history; the stalest is forgotten (default 10000).
    pub max_players: u32,
}

impl Default for FatigueSection {
    fn default() -> Self {
        FatigueSection {
            baseline_windows: 3,
            k: 1.5,
            max_players: 10_000,
        }
    }
}

/// `[limits]`.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct LimitsSection {
    /// Longest accepted line or message: bytes, or a size string such as "4KiB" (default 4096).
    pub max_event_bytes: ByteSize,
    /// Live sources reject event times further ahead of the clock (default "5m").
    pub max_future: String,
    /// Optional per-metric ranges; a value outside rejects the event (`out_of_range`).
    pub range: Vec<RangeEntry>,
}

impl Default for LimitsSection {
    fn default() -> Self {
        LimitsSection {
            max_event_bytes: ByteSize::Bytes(4096),
            max_future: "5m".into(),
            range: Vec::new(),
        }
    }
}

/// `[[limits.range]]`: an accepted interval for one metric.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RangeEntry {
    /// Sensor kind.
    pub sensor: String,
    /// Metric name (for `generic`, the event's `metric`).
    pub metric: String,
    /// Smallest accepted value (inclusive).
    pub min: Option<f64>,
    /// Largest accepted value (inclusive).
    pub max: Option<f64>,
}

/// `[output]`.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct OutputSection {
    /// `file:///path`, or (with the upload feature) `s3://`, `gs://`, `az://`.
    pub store: String,
    /// Local folder for finished files waiting for upload, and for state.
    pub spool_dir: String,
    /// Write open tables at least this often (default "60s").
    #[serde(default = "default_flush_interval")]
    pub flush_interval: String,
    /// Write a table as soon as it has this many rows (default 100000).
    #[serde(default = "default_max_rows")]
    pub max_rows_per_file: u32,
    /// `zstd` (default) or `snappy`.
    #[serde(default = "default_compression")]
    pub compression: String,
    /// Write the `raw` table (default true).
    #[serde(default = "default_true")]
    pub raw: bool,
    /// Most bytes the spool may hold; past it the lowest-priority files are
    /// evicted (raw first, alerts last) (default "1GiB").
    #[serde(default = "default_spool_max")]
    pub spool_max_bytes: String,
    /// Free disk space to leave on the spool's filesystem; below it files are
    /// evicted as above (default "256MiB").
    #[serde(default = "default_min_free")]
    pub min_free_disk: String,
    /// Longest a single upload attempt may take before it counts as failed (default "30s").
    #[serde(default = "default_upload_timeout")]
    pub upload_timeout: String,
    /// Retry interval after a permanent error (permission, missing bucket) (default "5m").
    #[serde(default = "default_permanent_retry")]
    pub permanent_retry: String,
    /// Longest time an input waits in the journal before it is fsynced; a
    /// power cut loses at most this much serial input (default "200ms").
    /// MQTT messages are fsynced before they are acknowledged, whatever this says.
    #[serde(default = "default_sync_interval")]
    pub sync_interval: String,
    /// `[output.s3]`: S3 and S3-compatible stores.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub s3: Option<S3Section>,
    /// `[output.azure]`: Azure Blob Storage.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub azure: Option<AzureSection>,
    /// `[output.gcs]`: Google Cloud Storage.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gcs: Option<GcsSection>,
}

fn default_spool_max() -> String {
    "1GiB".into()
}
fn default_min_free() -> String {
    "256MiB".into()
}
fn default_upload_timeout() -> String {
    "30s".into()
}
fn default_sync_interval() -> String {
    "200ms".into()
}
fn default_permanent_retry() -> String {
    "5m".into()
}

/// `[output.s3]`. Credentials come from `AWS_ACCESS_KEY_ID` /
/// `AWS_SECRET_ACCESS_KEY` / `AWS_SESSION_TOKEN` (and the rest of the AWS
/// environment), or from the files named here — never from this file.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct S3Section {
    /// Endpoint URL for S3-compatible servers (MinIO, Ceph, …); empty for AWS.
    pub endpoint: String,
    /// Region (default: `AWS_REGION`, else "us-east-1").
    pub region: String,
    /// Path-style requests (`endpoint/bucket/key`), needed by most S3-compatible servers.
    pub path_style: bool,
    /// Allow plain `http://` endpoints (test servers only).
    pub allow_http: bool,
    /// File holding the access key id.
    pub access_key_id_file: String,
    /// File holding the secret access key.
    pub secret_access_key_file: String,
    /// `"explicit"` (default): keys from the environment or the files above;
    /// start-up refuses when there are none. `"instance"`: without them, ask
    /// the EC2 instance metadata service (an instance profile).
    pub credentials: String,
}

impl Default for S3Section {
    fn default() -> Self {
        S3Section {
            endpoint: String::new(),
            region: String::new(),
            path_style: false,
            allow_http: false,
            access_key_id_file: String::new(),
            secret_access_key_file: String::new(),
            credentials: default_credentials(),
        }
    }
}

/// `credentials` of the cloud store sections.
pub fn default_credentials() -> String {
    "explicit".into()
}

/// `[output.azure]`. The key comes from `AZURE_STORAGE_ACCOUNT_KEY` or the
/// file named here.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct AzureSection {
    /// Storage account name (default: `AZURE_STORAGE_ACCOUNT_NAME`).
    pub account: String,
    /// Blob endpoint URL for emulators and sovereign clouds; empty for Azure.
    pub endpoint: String,
    /// Allow plain `http://` endpoints (test servers only).
    pub allow_http: bool,
    /// File holding the account key.
    pub access_key_file: String,
    /// `"explicit"` (default): a key, SAS token or service principal from the
    /// environment, or the file above. `"instance"`: without them, use the
    /// VM's managed identity (instance metadata service).
    pub credentials: String,
}

impl Default for AzureSection {
    fn default() -> Self {
        AzureSection {
            account: String::new(),
            endpoint: String::new(),
            allow_http: false,
            access_key_file: String::new(),
            credentials: default_credentials(),
        }
    }
}

/// `[output.gcs]`. Credentials from `GOOGLE_SERVICE_ACCOUNT` or the file named here.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct GcsSection {
    /// Service account JSON key file.
    pub service_account_file: String,
    /// `"explicit"` (default): a service account key from the environment,
    /// the file above or gcloud's application default credentials.
    /// `"instance"`: without them, use the VM's service account (metadata server).
    pub credentials: String,
}

impl Default for GcsSection {
    fn default() -> Self {
        GcsSection {
            service_account_file: String::new(),
            credentials: default_credentials(),
        }
    }
}

fn default_flush_interval() -> String {
    "60s".into()
}
fn default_max_rows() -> u32 {
    100_000
}
fn default_compression() -> String {
    "zstd".into()
}
fn default_true() -> bool {
    true
}

/// `[metrics]`.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct MetricsSection {
    /// Progress row and log line interval (default "10s").
    pub progress_interval: String,
    /// Prometheus endpoint address, `host:port` (default "127.0.0.1:9898"); "" turns it off.
    pub listen: String,
    /// `/healthz` fails once a source has been down, or the spool
    /// unwritable, for longer than this (default "60s").
    pub health_grace: String,
}

impl Default for MetricsSection {
    fn default() -> Self {
        MetricsSection {
            progress_interval: "10s".into(),
            listen: "127.0.0.1:9898".into(),
            health_grace: "60s".into(),
        }
    }
}

/// `[pipeline]`.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct PipelineSection {
    /// Inputs queued between the sources and the pipeline (default 8192). When
    /// full, sources wait (serial, simulator) — see the README for MQTT.
    pub input_queue: u32,
    /// Finished table batches queued for the Parquet encoder (default 4).
    pub encode_queue: u32,
}

impl Default for PipelineSection {
    fn default() -> Self {
        PipelineSection {
            input_queue: 8192,
            encode_queue: 4,
        }
    }
}

/// `[sources]`.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SourcesSection {
    /// `[sources.simulator]`: the built-in simulator, off unless present.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub simulator: Option<SimulatorSection>,
    /// `[[sources.serial]]`: serial ports.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub serial: Vec<SerialSection>,
    /// `[[sources.mqtt]]`: MQTT broker subscriptions.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub mqtt: Vec<MqttSourceSection>,
}

/// `[sources.simulator]`.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct SimulatorSection {
    /// Events per second over all devices (default 50).
    pub rate: f64,
    /// Wearable players (default 22).
    pub players: u32,
    /// Ball trackers (default 1).
    pub pitch_devices: u32,
    /// Crowd zones (default 4).
    pub crowd_zones: u32,
    /// Generic sensors (default 2).
    pub generic_devices: u32,
    /// Chance per reading of an injected 4–6σ anomaly (default 0.002).
    pub anomaly_rate: f64,
    /// Chance per player-minute that a fatigue episode starts (default 0.02).
    pub fatigue_rate: f64,
    /// Match number stamped on events (default 1).
    pub match_id: i64,
    /// Random seed; equal seeds give equal streams (default 42).
    pub seed: u64,
}

impl Default for SimulatorSection {
    fn default() -> Self {
        SimulatorSection {
            rate: 50.0,
            players: 22,
            pitch_devices: 1,
            crowd_zones: 4,
            generic_devices: 2,
            anomaly_rate: 0.002,
            fatigue_rate: 0.02,
            match_id: 1,
            seed: 42,
        }
    }
}

/// `[log]`.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct LogSection {
    /// `error`, `warn`, `info` (default), `debug` or `trace`. `PITCHSIDE_LOG` overrides.
    pub level: String,
    /// `text` (default) or `json`.
    pub format: String,
}

impl Default for LogSection {
    fn default() -> Self {
        LogSection {
            level: "info".into(),
            format: "text".into(),
        }
    }
}

/// A size given as a plain number of bytes or as a string with a unit
/// (`B`, `KiB`, `MiB`, `GiB`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum ByteSize {
    /// A number of bytes.
    Bytes(u64),
    /// A string such as "4KiB".
    Text(String),
}

impl ByteSize {
    /// The size in bytes.
    pub fn bytes(&self) -> Result<u64, String> {
        match self {
            ByteSize::Bytes(n) => Ok(*n),
            ByteSize::Text(t) => crate::util::units::parse_size(t),
        }
    }
}

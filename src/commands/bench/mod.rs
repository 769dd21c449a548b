//! `pitchside bench`: generates events into a file, replays them through the
//! real replay path (decode, detect, windows, Parquet, spool, local store),
//! and reports events/s, peak RSS and detector state size.

mod formats;
pub mod mqtt;
pub use crate::util::venue_mix as venue;

use crate::commands::terminal::emit;
use crate::config;
use crate::util::rng::Rng;
use std::fmt;
use std::io::Write;

/// Benchmark options.
#[derive(Debug, Clone, clap::Args)]
pub struct BenchArgs {
    /// Events to generate and replay.
    #[arg(long, default_value_t = 1_000_000)]
    pub events: u64,
    /// Detector keys: distinct devices with one metric each (`--mix venue`:
    /// devices with 1–3 metrics adding up to this many).
    #[arg(long, default_value_t = 10_000)]
    pub keys: u64,
    /// Every event from a new device id (key churn), instead of cycling through --keys.
    #[arg(long)]
    pub churn: bool,
    /// detector.max_keys.
    #[arg(long, default_value_t = 10_000)]
    pub max_keys: u32,
    /// Write the raw table too (output.raw = true).
    #[arg(long)]
    pub raw: bool,
    /// Keep the generated input and output in this folder instead of a temporary one.
    #[arg(long)]
    pub dir: Option<std::path::PathBuf>,
    /// Input format: pitchside (SPEC §1 JSON), or a device format decoded
    /// through a map (SPEC §9): json, csv, regex, logfmt, influx.
    #[arg(long, default_value = "pitchside", value_parser = formats::FORMATS)]
    pub format: String,
    /// The events: `generic` (one `temp` reading per line, about 130 bytes)
    /// or `venue` (SPEC §1 JSON as a venue sends it: wearable, pitch, crowd
    /// and generic devices, 1–3 metrics, RFC 3339 and epoch-ms times, 2 %
    /// late and 2 % duplicate lines, about 205 bytes; --keys counts
    /// detector keys). `venue` takes the `pitchside` format only.
    #[arg(long, default_value = "generic", value_parser = ["generic", "venue"])]
    pub mix: String,
}

/// Benchmark results.
#[derive(Debug, Clone)]
pub struct BenchReport {
    args: BenchArgs,
    input_bytes: u64,
    seconds: f64,
    peak_rss_kib: u64,
    rss_before_kib: u64,
    minor_faults: u64,
    state_keys: usize,
    state_bytes: usize,
    alerts: u64,
    files: u64,
    evictions: u64,
}

impl fmt::Display for BenchReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let a = &self.args;
        let bound = 1.2 * (self.state_keys as f64) * 100.0 * 16.0;
        writeln!(f, "events           {}", a.events)?;
        writeln!(
            f,
            "input            {:.1} MiB",
            self.input_bytes as f64 / 1048576.0
        )?;
        writeln!(f, "format           {} ({} mix)", a.format, a.mix)?;
        writeln!(f, "raw table        {}", if a.raw { "on" } else { "off" })?;
        writeln!(
            f,
            "devices          {}",
            if a.churn {
                format!("{} distinct (churn)", a.events)
            } else {
                a.keys.to_string()
            }
        )?;
        writeln!(f, "elapsed          {:.3} s", self.seconds)?;
        writeln!(
            f,
            "throughput       {:.0} events/s",
            a.events as f64 / self.seconds
        )?;
        writeln!(
            f,
            "peak RSS         {:.1} MiB (before replay {:.1} MiB)",
            self.peak_rss_kib as f64 / 1024.0,
            self.rss_before_kib as f64 / 1024.0
        )?;
        writeln!(f, "page faults      {} (minor, replay)", self.minor_faults)?;
        writeln!(
            f,
            "live keys        {} (max_keys {}, evictions {})",
            self.state_keys, a.max_keys, self.evictions
        )?;
        writeln!(
            f,
            "state bytes      {} ({:.2} MiB; 1.2 x keys x window x 16 = {:.2} MiB)",
            self.state_bytes,
            self.state_bytes as f64 / 1048576.0,
            bound / 1048576.0
        )?;
        write!(
            f,
            "alerts           {}\nfiles written    {}",
            self.alerts, self.files
        )
    }
}

fn rss_kib(field: &str) -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with(field))
                .and_then(|l| l.split_whitespace().nth(1).and_then(|v| v.parse().ok()))
        })
        .unwrap_or(0)
}

/// Minor page faults of this process so far (`/proc/self/stat`, field 10).
fn minor_faults() -> u64 {
    let stat = std::fs::read_to_string("/proc/self/stat").unwrap_or_default();
    // The fields after the command name, which is in parentheses and may
    // hold spaces; `minflt` is the eighth of them.
    stat.rsplit_once(')')
        .and_then(|(_, rest)| rest.split_whitespace().nth(7)?.parse().ok())
        .unwrap_or(0)
}

/// `pitchside bench`: runs the benchmark and prints the report.
pub async fn execute(a: &BenchArgs) -> anyhow::Result<()> {
    let report = run(a).await?;
    emit(&format!("{report}\n"))
}

/// Writes the bench's input lines to `input`; returns their bytes.
fn write_input(a: &BenchArgs, input: &std::path::Path) -> anyhow::Result<u64> {
    let mut w = std::io::BufWriter::new(std::fs::File::create(input)?);
    let venue = a.mix == "venue";
    anyhow::ensure!(
        !venue || (a.format == "pitchside" && !a.churn),
        "--mix venue is SPEC §1 JSON over a fixed set of devices: it takes neither --format nor --churn"
    );
    let mut rng = Rng::new(7);
    let mut mix = venue.then(|| venue::VenueMix::new(a.keys, 7));
    let t0: i64 = 1_764_444_600_000_000;
    let mut bytes = 0u64;
    let mut line = String::new();
    for i in 0..a.events {
        if let Some(mix) = &mut mix {
            line.clear();
            mix.line(&mut line);
            bytes += line.len() as u64;
            w.write_all(line.as_bytes())?;
            continue;
        }
        let dev = if a.churn { i } else { i % a.keys.max(1) };
        let mut v = 20.0 + rng.normal();
        if rng.uniform() < 0.001 {
            v += 8.0;
        }
        line.clear();
        formats::line(&a.format, &mut line, dev, (t0 + i as i64 * 1000) / 1000, v);
        bytes += line.len() as u64;
        w.write_all(line.as_bytes())?;
    }
    w.flush()?;
    Ok(bytes)
}

/// Runs the benchmark.
pub async fn run(a: &BenchArgs) -> anyhow::Result<BenchReport> {
    anyhow::ensure!(
        a.events > 0 && a.keys > 0,
        "--events and --keys must be at least 1"
    );
    let tmp;
    let dir = match &a.dir {
        Some(d) => {
            std::fs::create_dir_all(d)?;
            // The store URL below needs an absolute path (`--dir out` made
            // "file://out/store", which the config check refused).
            std::path::absolute(d)?
        }
        None => {
            tmp = std::env::temp_dir().join(format!("pitchside-bench-{}", std::process::id()));
            std::fs::create_dir_all(&tmp)?;
            tmp
        }
    };
    let input = dir.join("input.jsonl");
    let bytes = write_input(a, &input)?;
    let source = formats::source(&a.format);
    let text = format!(
        "[venue]\nid = \"bench\"\ngateway_id = \"gw-bench\"\n[detector]\nmax_keys = {}\n[output]\nstore = \"file://{}\"\nspool_dir = \"{}\"\nraw = {}\n[metrics]\nlisten = \"\"\n{}",
        a.max_keys,
        dir.join("store").display(),
        dir.join("spool").display(),
        a.raw,
        source.as_deref().unwrap_or("")
    );
    let cfg = config::parse(&text, "bench")?.validate()?;
    let line_format = crate::commands::replay::LineFormat {
        mapping: source.map(|_| ("bench".to_string(), None)),
        ..Default::default()
    };
    let out = dir.join("out");
    let _ = std::fs::remove_dir_all(&out);
    let rss_before = rss_kib("VmRSS:");
    let faults_before = minor_faults();
    let started = std::time::Instant::now();
    let summary = crate::commands::replay::replay(&cfg, &input, Some(&out), line_format).await?;
    let seconds = started.elapsed().as_secs_f64();
    let faults = minor_faults().saturating_sub(faults_before);
    let report = BenchReport {
        args: a.clone(),
        input_bytes: bytes,
        seconds,
        peak_rss_kib: rss_kib("VmHWM:"),
        rss_before_kib: rss_before,
        minor_faults: faults,
        state_keys: summary.state_keys,
        state_bytes: summary.state_bytes,
        alerts: summary.counters.alerts,
        files: summary.files,
        evictions: summary.counters.evictions,
    };
    if a.dir.is_none() {
        let _ = std::fs::remove_dir_all(&dir);
    }
    Ok(report)
}

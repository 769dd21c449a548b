//! `pitchside replay`: a file of input lines through the whole pipeline, as
//! if it had arrived on one source, then every table written and uploaded.
//! Deterministic: results depend on the input only, never on the clock
//! (except the `received_at`/`detected_at` columns, which say when).
//!
//! A reject's `detail` starts with `line N: ` (1-based, blank lines counted).
//! When lines were read but none was accepted, the caller exits with
//! [`EXIT_NOTHING_ACCEPTED`]: a wrong `--sensor` or a file of another format
//! must not look like success to a script.

mod format;
mod summary;

use crate::commands::logging::init_logging;
use crate::commands::terminal::emit;
use crate::config::{self, Config};
use crate::model::RejectReason;
use crate::pipeline::Pipeline;
use crate::sinks::spool::{max_seq_in_folder, Numbering, Spool, SpooledFile};
use crate::sinks::store::Store;
use crate::sinks::upload::{SpoolLimits, Uploader};
use crate::sinks::writer::{row_group_limit, TableWriter};
use crate::sinks::UploadStats;
use crate::sources::framing::{Line, LineFramer};
use crate::tables::{RowGroupLimit, TableBuffer};
use crate::telemetry::ProgressTracker;
use crate::util::time::now_micros;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Instant;

pub use format::LineFormat;
pub use summary::{NothingAccepted, ReplaySummary, EXIT_NOTHING_ACCEPTED};

/// Options of `pitchside replay`.
#[derive(Debug, Clone, clap::Args)]
pub struct ReplayArgs {
    /// Venue config file.
    #[arg(long)]
    pub config: PathBuf,
    /// Input file, one JSON event per line ("-" for stdin).
    #[arg(long)]
    pub input: PathBuf,
    /// Write the tables to this folder (laid out as the store) instead of the configured store.
    #[arg(long)]
    pub output: Option<PathBuf>,
    /// Sensor kind for lines without "sensor".
    #[arg(long)]
    pub sensor: Option<String>,
    /// Decode the lines with this configured source's format, map and sensor
    /// kind (SPEC §9), as if they had arrived on it.
    #[arg(long)]
    pub source: Option<String>,
    /// With --source: the MQTT topic the lines stand for (for topic_level maps).
    #[arg(long, requires = "source")]
    pub topic: Option<String>,
    /// The arrival time of the first line (RFC 3339), each next line
    /// --received-step later: reproducible `received_at` and
    /// `event_time = "arrival"` (required by a source that maps it). Default:
    /// the wall clock.
    #[arg(long)]
    pub received_at: Option<String>,
    /// With --received-at: the time between lines (default "1s").
    #[arg(long, requires = "received_at", default_value = "1s")]
    pub received_step: String,
}

/// Replays `--input` and prints the summary; fails with [`NothingAccepted`]
/// when lines were read and every one was rejected.
pub async fn execute(args: ReplayArgs) -> anyhow::Result<()> {
    let cfg = config::load(&args.config)?;
    init_logging(Some(&cfg));
    let format = LineFormat::from_args(&args, &cfg)?;
    let summary = replay(&cfg, &args.input, args.output.as_deref(), format).await?;
    // A closed stdout (`| head`) must not turn a finished replay into a failure.
    emit(&summary.to_string())?;
    summary.check_accepted()?;
    Ok(())
}

/// Why a replay failed (bad input lines never fail it: they are rejects).
#[derive(Debug, thiserror::Error)]
pub enum ReplayError {
    /// The input file could not be read.
    #[error("cannot read input {path}: {source}")]
    Input {
        /// Path.
        path: PathBuf,
        /// OS error.
        source: std::io::Error,
    },
    /// The output folder could not be used.
    #[error("cannot use output folder {path}: {source}")]
    Output {
        /// Path.
        path: PathBuf,
        /// OS error.
        source: std::io::Error,
    },
    /// Writing a table failed.
    #[error(transparent)]
    Write(#[from] crate::sinks::writer::WriteError),
    /// The spool could not be opened.
    #[error(transparent)]
    Spool(#[from] crate::sinks::spool::SpoolError),
    /// The store could not be opened or did not take the files.
    #[error(transparent)]
    Store(Box<crate::sinks::store::StoreError>),
}

/// Replays `input` (a path, or `-` for stdin).
pub async fn replay(
    config: &Config,
    input: &Path,
    output: Option<&Path>,
    format: LineFormat,
) -> Result<ReplaySummary, ReplayError> {
    // Open the input first: a missing file must not leave an empty output behind.
    let mut input_file = Input::open(input)?;
    let (out, spool) = open_output(config, output).await?;
    let pending = spool.pending()?;
    let mut tables = Tables {
        writer: TableWriter::new(spool, config.output.snappy, config.output.max_rows_per_file),
        stats: Arc::new(UploadStats::default()),
        files: 0,
    };
    let mut pipeline = Pipeline::new(config, false);
    pipeline.disable_live_alerts();
    let mut lines = Lines {
        source: format!("replay:{}", input.display()),
        format,
        line_no: 0,
    };
    read_all(
        &mut input_file,
        config,
        &mut lines,
        &mut pipeline,
        &mut tables,
    )?;
    let counters = pipeline.counters().clone();
    let (state_keys, state_bytes) = (
        pipeline.detector().keys(),
        pipeline.detector().state_bytes(),
    );
    // The state is no longer needed: free it before files are read for upload.
    drop(pipeline);
    let mut pending_all = pending;
    pending_all.extend(tables.writer.spool().pending()?);
    pending_all.sort();
    pending_all.dedup();
    let numbering = tables.writer.spool().numbering();
    let (uploaded_bytes, upload_seconds) =
        upload(config, &out, &tables.stats, pending_all, numbering).await?;
    let commit_ms_per_file = tables.stats.commit_micros.load(Ordering::Relaxed) as f64
        / 1e3
        / (tables.files.max(1) as f64);
    if out.temporary_spool {
        let _ = std::fs::remove_dir_all(&out.spool_root);
    }
    Ok(ReplaySummary {
        counters,
        files: tables.files,
        store_url: out.store.url().to_string(),
        state_keys,
        state_bytes,
        uploaded_bytes,
        upload_seconds,
        commit_ms_per_file,
    })
}

/// The input being replayed.
struct Input {
    path: PathBuf,
    reader: Box<dyn Read>,
}

impl Input {
    /// The input file, or stdin for `-`.
    fn open(path: &Path) -> Result<Input, ReplayError> {
        let reader: Box<dyn Read> = if path.display().to_string() == "-" {
            Box::new(std::io::stdin().lock())
        } else {
            Box::new(
                std::fs::File::open(path).map_err(|source| ReplayError::Input {
                    path: path.to_path_buf(),
                    source,
                })?,
            )
        };
        Ok(Input {
            path: path.to_path_buf(),
            reader,
        })
    }

    /// Reads the next chunk into `buf`; 0 at the end.
    fn read(&mut self, buf: &mut [u8]) -> Result<usize, ReplayError> {
        loop {
            match self.reader.read(buf) {
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                r => {
                    return r.map_err(|source| ReplayError::Input {
                        path: self.path.clone(),
                        source,
                    })
                }
            }
        }
    }
}

/// Where a replay's tables go.
struct Output {
    store: Store,
    /// Where files wait for the upload.
    spool_root: PathBuf,
    /// The spool is ours (under `--output`): removed after the upload, never bounded.
    temporary_spool: bool,
}

/// The store (`--output` as a local store, or the configured one) and a
/// spool whose file numbers continue the store's.
async fn open_output(
    config: &Config,
    output: Option<&Path>,
) -> Result<(Output, Spool), ReplayError> {
    let out = match output {
        Some(dir) => Output {
            store: Store::local(dir.to_path_buf()).map_err(|source| ReplayError::Output {
                path: dir.to_path_buf(),
                source,
            })?,
            // Spark and delta-rs skip folders starting with '_'.
            spool_root: dir.join("_pitchside_spool"),
            temporary_spool: true,
        },
        None => Output {
            store: Store::open(config)?,
            spool_root: config.output.spool_dir.clone(),
            temporary_spool: false,
        },
    };
    let mut spool = Spool::open(&out.spool_root, &config.venue.id, &config.venue.gateway_id)?;
    if let Some(dir) = output {
        for (table, max) in max_seq_in_folder(dir, &config.venue.gateway_id) {
            spool.reserve_seq(table, max + 1)?;
        }
    } else {
        crate::sinks::upload::continue_store_sequence(&mut spool, &out.store, config).await?;
    }
    Ok((out, spool))
}

/// The table writer, with what it has written.
struct Tables {
    writer: TableWriter,
    stats: Arc<UploadStats>,
    /// Files finished so far.
    files: u64,
}

impl Tables {
    /// Appends row groups; `flush` then finishes every open file.
    fn write(&mut self, bufs: &[&TableBuffer], flush: bool) -> Result<(), ReplayError> {
        for b in bufs {
            self.files += self.writer.append(b, &self.stats)?.is_some() as u64;
        }
        if flush {
            self.files += self.writer.close_all(&self.stats)?.len() as u64;
        }
        Ok(())
    }
}

/// Every line of `input` through the pipeline, row groups written as they
/// fill; at the end the open windows, a progress row and every table.
fn read_all(
    input: &mut Input,
    config: &Config,
    lines: &mut Lines,
    pipeline: &mut Pipeline,
    tables: &mut Tables,
) -> Result<(), ReplayError> {
    let row_group = row_group_limit(config);
    let mut progress = ProgressTracker::new(now_micros());
    let mut framer = LineFramer::new(config.limits.max_event_bytes);
    let mut chunk = vec![0u8; 64 * 1024];
    loop {
        let n = input.read(&mut chunk)?;
        if n == 0 {
            break;
        }
        let now = now_micros();
        let t0 = Instant::now();
        framer.push(&chunk[..n], &mut |line| lines.feed(pipeline, line, now));
        progress.add_busy(t0.elapsed().as_micros() as u64);
        if pipeline.tables_due(row_group) {
            pipeline.write_tables(row_group, |full| tables.write(full, false))?;
        }
    }
    let now = now_micros();
    framer.finish(&mut |line| lines.feed(pipeline, line, now));
    pipeline.flush_windows();
    let row = progress.tick(now_micros(), pipeline, &tables.stats);
    pipeline.push_progress(&row);
    pipeline.write_tables(RowGroupLimit::ANY, |all| tables.write(all, true))
}

/// Uploads every file in the spool (this replay's and any an earlier run
/// left); returns the bytes uploaded and the seconds it took.
async fn upload(
    config: &Config,
    out: &Output,
    stats: &Arc<UploadStats>,
    pending: Vec<SpooledFile>,
    numbering: Numbering,
) -> Result<(u64, f64), ReplayError> {
    let limits = if out.temporary_spool {
        SpoolLimits::unbounded(out.spool_root.clone())
    } else {
        SpoolLimits {
            root: out.spool_root.clone(),
            max_bytes: config.output.spool_max_bytes,
            min_free_disk: config.output.min_free_disk,
            permanent_retry: std::time::Duration::from_micros(config.output.permanent_retry as u64),
        }
    };
    let mut uploader = Uploader::new(out.store.clone(), stats.clone(), pending, limits, numbering);
    let started = Instant::now();
    uploader.drain(5).await?;
    let seconds = started.elapsed().as_secs_f64();
    Ok((stats.uploaded_bytes.load(Ordering::Relaxed), seconds))
}

/// One input's lines into the pipeline, numbered from 1 (blank lines counted).
struct Lines {
    /// `replay:<input>`.
    source: String,
    /// How lines are decoded.
    format: LineFormat,
    line_no: u64,
}

impl Lines {
    fn feed(&mut self, p: &mut Pipeline, line: Line<'_>, now: i64) {
        self.line_no += 1;
        let (source, line_no) = (self.source.as_str(), self.line_no);
        let now = match self.format.arrival {
            Some((start, step)) => start.saturating_add(step.saturating_mul(line_no as i64 - 1)),
            None => now,
        };
        match line {
            Line::Ok(bytes) => match &self.format.mapping {
                Some((name, topic)) => {
                    p.process_mapped_line(source, name, topic.as_deref(), bytes, line_no, now, now)
                }
                None => p.process_line(source, self.format.sensor, bytes, line_no, now, now),
            },
            Line::TooLarge { prefix, len } => p.reject_input(
                source,
                RejectReason::TooLarge,
                &format!(
                    "line {line_no}: {len} bytes, limit is {} (limits.max_event_bytes)",
                    prefix.len()
                ),
                prefix,
                now,
            ),
        }
    }
}

impl From<crate::sinks::store::StoreError> for ReplayError {
    fn from(e: crate::sinks::store::StoreError) -> Self {
        ReplayError::Store(Box::new(e))
    }
}

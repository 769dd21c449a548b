//! `pitchside replay`: a file of input lines through the whole pipeline, as
//! if it had arrived on one source, then every table written and uploaded.
//! Deterministic: results depend on the input only, never on the clock
//! (except the `received_at`/`detected_at` columns, which say when).
//!
//! A reject's `detail` starts with `line N: ` (1-based, blank lines counted).
//! When lines were read but none was accepted, the caller exits with
//! [`EXIT_NOTHING_ACCEPTED`]: a wrong `--sensor` or a file of another format
//! must not look like success to a script.

use crate::config::Config;
use crate::model::{RejectReason, SensorKind};
use crate::pipeline::{Pipeline, PipelineCounters};
use crate::sinks::spool::{max_seq_in_folder, Spool};
use crate::sinks::store::Store;
use crate::sinks::upload::{SpoolLimits, Uploader};
use crate::sinks::writer::TableWriter;
use crate::sinks::UploadStats;
use crate::sources::framing::{Line, LineFramer};
use crate::tables::TableBuffer;
use crate::telemetry::ProgressTracker;
use crate::util::time::now_micros;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// Exit code of `pitchside replay` when input lines were read but every one was rejected.
pub const EXIT_NOTHING_ACCEPTED: u8 = 3;

/// Every input line was rejected (the tables, rejects included, were written).
#[derive(Debug, thiserror::Error)]
#[error(
    "no input line was accepted: all {rejected} were rejected (see the reasons above and the \
     rejects table; a wrong --sensor, or a file in another format?)"
)]
pub struct NothingAccepted {
    /// Rejected inputs.
    pub rejected: u64,
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

/// What a replay did.
#[derive(Debug, Clone)]
pub struct ReplaySummary {
    /// Pipeline counters at the end.
    pub counters: PipelineCounters,
    /// Files written.
    pub files: u64,
    /// Where the tables went.
    pub store_url: String,
    /// Live detector keys at the end.
    pub state_keys: usize,
    /// Detector state bytes at the end.
    pub state_bytes: usize,
    /// Bytes uploaded to the store.
    pub uploaded_bytes: u64,
    /// Wall time of the upload phase.
    pub upload_seconds: f64,
    /// Average time to make one spool file durable (fsync, rename, fsync folder), ms.
    pub commit_ms_per_file: f64,
}

impl std::fmt::Display for ReplaySummary {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let c = &self.counters;
        writeln!(
            f,
            "replayed {} inputs: {} events accepted, {} rejected, {} duplicate readings, {} late readings",
            c.input_rows,
            c.accepted,
            c.rejected_total(),
            c.duplicate_rows,
            c.late_rows
        )?;
        writeln!(
            f,
            "{} alerts, {} fatigue alerts, {} windows; {} files written to {}",
            c.alerts, c.fatigue_alerts, c.windows_emitted, self.files, self.store_url
        )?;
        writeln!(
            f,
            "uploaded {:.1} MiB in {:.2} s ({:.1} MiB/s); {:.2} ms per file to make it durable in the spool",
            self.uploaded_bytes as f64 / 1048576.0,
            self.upload_seconds,
            self.uploaded_bytes as f64 / 1048576.0 / self.upload_seconds.max(1e-9),
            self.commit_ms_per_file
        )?;
        for r in RejectReason::ALL {
            let n = c.rejected[r as usize];
            if n > 0 {
                writeln!(f, "  rejected {}: {n}", r.as_str())?;
            }
        }
        if c.duplicate_conflicts > 0 {
            writeln!(
                f,
                "  duplicate readings with another value than the one kept: {}",
                c.duplicate_conflicts
            )?;
        }
        for (sensor, name, n) in c.unknown_fields.iter() {
            writeln!(
                f,
                "  unknown numeric field {sensor}.{}: {n} events (ignored; a misspelled metric?)",
                name.escape_debug()
            )?;
        }
        Ok(())
    }
}

impl ReplaySummary {
    /// `Err` when input lines were read and none was accepted (an empty
    /// input is not an error).
    pub fn check_accepted(&self) -> Result<(), NothingAccepted> {
        let c = &self.counters;
        if c.input_rows > 0 && c.accepted == 0 {
            Err(NothingAccepted {
                rejected: c.rejected_total(),
            })
        } else {
            Ok(())
        }
    }
}

/// Replays `input` (a path, or `-` for stdin).
pub async fn replay(
    config: &Config,
    input: &Path,
    output: Option<&Path>,
    sensor: Option<SensorKind>,
) -> Result<ReplaySummary, ReplayError> {
    // Open the input first: a missing file must not leave an empty output behind.
    let name = input.display().to_string();
    let source = format!("replay:{name}");
    let mut reader: Box<dyn Read> = if name == "-" {
        Box::new(std::io::stdin().lock())
    } else {
        Box::new(
            std::fs::File::open(input).map_err(|source| ReplayError::Input {
                path: input.to_path_buf(),
                source,
            })?,
        )
    };
    let (store, spool_root, temporary_spool) = match output {
        Some(dir) => {
            let store = Store::local(dir.to_path_buf()).map_err(|source| ReplayError::Output {
                path: dir.to_path_buf(),
                source,
            })?;
            // Spark and delta-rs skip folders starting with '_'.
            (store, dir.join("_pitchside_spool"), true)
        }
        None => (Store::open(config)?, config.output.spool_dir.clone(), false),
    };
    let mut spool = Spool::open(&spool_root, &config.venue.id, &config.venue.gateway_id)?;
    if let Some(dir) = output {
        for (table, max) in max_seq_in_folder(dir, &config.venue.gateway_id) {
            spool.reserve_seq(table, max + 1)?;
        }
    } else {
        crate::sinks::upload::continue_store_sequence(&mut spool, &store, config).await?;
    }
    let stats = Arc::new(UploadStats::default());
    let pending = spool.pending()?;
    let mut writer = TableWriter::new(spool, config.output.snappy, config.output.max_rows_per_file);
    let row_group = crate::sinks::writer::row_group_rows(config);
    let mut pipeline = Pipeline::new(config, false);
    pipeline.disable_live_alerts();

    let started = now_micros();
    let mut progress = ProgressTracker::new(started);
    let mut framer = LineFramer::new(config.limits.max_event_bytes);
    let mut chunk = vec![0u8; 64 * 1024];
    let mut line_no = 0u64;
    let mut files = 0u64;
    let mut write =
        |bufs: Vec<TableBuffer>, w: &mut TableWriter, flush: bool| -> Result<(), ReplayError> {
            for b in &bufs {
                files += w.append(b, &stats)?.is_some() as u64;
            }
            if flush {
                files += w.close_all(&stats)?.len() as u64;
            }
            Ok(())
        };
    loop {
        let n = match reader.read(&mut chunk) {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(source) => {
                return Err(ReplayError::Input {
                    path: input.to_path_buf(),
                    source,
                })
            }
        };
        let now = now_micros();
        let t0 = std::time::Instant::now();
        framer.push(&chunk[..n], &mut |line| {
            line_no += 1;
            feed(&mut pipeline, &source, sensor, line, line_no, now)
        });
        progress.add_busy(t0.elapsed().as_micros() as u64);
        if pipeline.max_buffered_rows() >= row_group {
            write(pipeline.take_tables(row_group), &mut writer, false)?;
        }
    }
    let now = now_micros();
    framer.finish(&mut |line| {
        line_no += 1;
        feed(&mut pipeline, &source, sensor, line, line_no, now)
    });
    pipeline.flush_windows();
    let row = progress.tick(now_micros(), &pipeline, &stats);
    pipeline.push_progress(&row);
    write(pipeline.take_tables(1), &mut writer, true)?;

    let counters = pipeline.counters().clone();
    let (state_keys, state_bytes) = (
        pipeline.detector().keys(),
        pipeline.detector().state_bytes(),
    );
    // The state is no longer needed: free it before files are read for upload.
    drop(pipeline);
    let mut pending_all = pending;
    pending_all.extend(writer.spool().pending()?);
    pending_all.sort();
    pending_all.dedup();
    let limits = if temporary_spool {
        SpoolLimits::unbounded(spool_root.clone())
    } else {
        SpoolLimits {
            root: spool_root.clone(),
            max_bytes: config.output.spool_max_bytes,
            min_free_disk: config.output.min_free_disk,
            permanent_retry: std::time::Duration::from_micros(config.output.permanent_retry as u64),
        }
    };
    let mut uploader = Uploader::new(store.clone(), stats.clone(), pending_all, limits);
    let upload_started = std::time::Instant::now();
    uploader.drain(5).await?;
    let upload_seconds = upload_started.elapsed().as_secs_f64();
    let uploaded_bytes = stats
        .uploaded_bytes
        .load(std::sync::atomic::Ordering::Relaxed);
    let commit_ms_per_file = stats
        .commit_micros
        .load(std::sync::atomic::Ordering::Relaxed) as f64
        / 1e3
        / (files.max(1) as f64);
    if temporary_spool {
        let _ = std::fs::remove_dir_all(&spool_root);
    }
    Ok(ReplaySummary {
        counters,
        files,
        store_url: store.url().to_string(),
        state_keys,
        state_bytes,
        uploaded_bytes,
        upload_seconds,
        commit_ms_per_file,
    })
}

fn feed(
    p: &mut Pipeline,
    source: &str,
    sensor: Option<SensorKind>,
    line: Line<'_>,
    line_no: u64,
    now: i64,
) {
    match line {
        Line::Ok(bytes) => p.process_line(source, sensor, bytes, line_no, now, now),
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

impl From<crate::sinks::store::StoreError> for ReplayError {
    fn from(e: crate::sinks::store::StoreError) -> Self {
        ReplayError::Store(Box::new(e))
    }
}

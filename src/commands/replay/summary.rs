//! What `pitchside replay` reports: counts, files, upload speed, and
//! whether anything was accepted at all.

use crate::model::RejectReason;
use crate::pipeline::PipelineCounters;

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
            "{} alerts, {} fatigue alerts, {} load alerts, {} windows; {} files written to {}",
            c.alerts,
            c.fatigue_alerts,
            c.load_alerts,
            c.windows_emitted,
            self.files,
            self.store_url
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

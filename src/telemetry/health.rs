//! `/healthz` (and the SIGUSR1 status line): healthy, or why not.

use super::MetricsSnapshot;

/// `Ok` when healthy, else why not: a source down, or the spool
/// unwritable, for longer than `health_grace`.
pub fn health(s: &MetricsSnapshot, now: i64) -> Result<(), String> {
    let mut why = Vec::new();
    // Each source down past the grace, by name (`serial:/dev/ttyUSB0`, `mqtt:host:1883`).
    for (name, down) in s.sources.down_sources(now) {
        if down > s.health_grace {
            why.push(format!("source {name} down for {} s", down / 1_000_000));
        }
    }
    if s.spool_failing_since > 0 && now - s.spool_failing_since > s.health_grace {
        why.push(format!(
            "spool unwritable for {} s",
            (now - s.spool_failing_since) / 1_000_000
        ));
    }
    if s.journal_down_since > 0 && now - s.journal_down_since > s.health_grace {
        why.push(format!(
            "input journal off for {} s (a crash would lose inputs; free space on output.spool_dir's disk)",
            (now - s.journal_down_since) / 1_000_000
        ));
    }
    if why.is_empty() {
        Ok(())
    } else {
        Err(why.join("; "))
    }
}

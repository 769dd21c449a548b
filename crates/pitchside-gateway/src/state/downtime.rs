//! When the gateway last ran, read from the state files it leaves: the
//! start of the gap [`crate::pipeline::downtime::Downtime`] records.

use crate::model::Micros;
use std::path::Path;

/// When a pitchside process last wrote durable state in this spool: the
/// newest modification time of the checkpoint and the journal files; `None`
/// for a fresh spool. Read before this run writes any.
pub fn last_activity(spool_dir: &Path) -> Option<Micros> {
    let micros = |p: &Path| -> Option<Micros> {
        let t = std::fs::metadata(p).ok()?.modified().ok()?;
        let d = t.duration_since(std::time::UNIX_EPOCH).ok()?;
        Some(d.as_micros() as Micros)
    };
    let journal = crate::state::journal::dir(spool_dir);
    let journal_files = std::fs::read_dir(&journal)
        .map(|rd| {
            rd.flatten()
                .map(|e| e.path())
                .filter(|p| p.extension().is_some_and(|x| x == "log"))
                .collect::<Vec<_>>()
        })
        .unwrap_or_default();
    std::iter::once(crate::state::checkpoint::path(spool_dir))
        .chain(journal_files)
        .filter_map(|p| micros(&p))
        .max()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn last_activity_is_the_newest_checkpoint_or_journal_write() {
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(last_activity(dir.path()), None);
        let before = crate::util::time::now_micros() - 2_000_000;
        let mut j =
            crate::state::journal::Journal::open(&crate::state::journal::dir(dir.path()), 0)
                .unwrap();
        let _ = j.rotate().unwrap();
        let t = last_activity(dir.path()).unwrap();
        assert!(t >= before && t <= crate::util::time::now_micros() + 2_000_000);
    }
}

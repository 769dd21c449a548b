//! The journal bound's healthy side, alone in its test binary so that no
//! other test loads the machine meanwhile: a gateway whose checkpoints work
//! never reaches `output.max_journal_bytes`, however much it journals.
//! (Its full side, checkpoints failing, is in `tests/journal.rs`.)

mod common;

use common::services::*;
use common::{bytes_under, VenueConfig};
use std::time::Duration;

/// The journal bound's other side: a healthy gateway journals more than 10
/// times `output.max_journal_bytes` over many flushes and never reaches it
/// (generations are deleted after each checkpoint), so no input runs
/// without the journal.
#[test]
fn a_healthy_gateway_journals_ten_times_the_bound_without_reaching_it() {
    let dir = tempfile::tempdir().unwrap();
    let port = free_port();
    // About 350 KB a second: the bound is 3 s of input, so the encoder may
    // lag by a few flushes (a loaded machine) without the bound being
    // reached; no raw table, the encoder's largest cost.
    let bound = 1 << 20;
    let cfg = VenueConfig::fast(dir.path(), port)
        .set_str("output", "max_journal_bytes", "1MiB")
        .set_str("output", "flush_interval", "300ms")
        .set("output", "raw", false)
        .extra("[sources.simulator]\nrate = 1500\n")
        .write();
    let gw = Gateway::start(&cfg, port, &[]);
    let journal = dir.path().join("spool/journal");
    let mut largest = 0;
    // A simulator event is at least 150 bytes, its record at least 190
    // (`pitchside simulate`): this many inputs are over 10 bounds.
    let enough = 10 * bound / 190;
    let end = std::time::Instant::now() + Duration::from_secs(120);
    while gw.metric("pitchside_input_rows_total") < enough as f64 {
        assert!(std::time::Instant::now() < end, "too slow");
        largest = largest.max(bytes_under(&journal));
        std::thread::sleep(Duration::from_millis(50));
    }
    assert_eq!(gw.metric("pitchside_unjournaled_inputs_total"), 0.0);
    assert_eq!(gw.metric("pitchside_journal_enabled"), 1.0);
    let log = gw.stop();
    eprintln!("largest journal seen: {largest} bytes of a {bound} bound");
    assert!(largest < bound, "{largest}");
    assert!(!log.contains("max_journal_bytes"), "{log}");
}

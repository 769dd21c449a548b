//! The hot path allocates (almost) nothing per event: decode → detect →
//! windows → fatigue → table buffers, handed to the encoder a row group at a
//! time, with the `raw` table off and on. Counted with a
//! counting global allocator over the bench's venue mix (every sensor kind,
//! RFC 3339 and epoch-ms times, late and duplicate lines), per kind, in
//! steady state: every key seen, windows opening and closing.

use pitchside::config;
use pitchside::model::SensorKind;
use pitchside::pipeline::Pipeline;
use pitchside::sinks::writer::{
    RAW_ROW_GROUP_BYTES, RAW_ROW_GROUP_ROWS, ROW_GROUP_BYTES, ROW_GROUP_ROWS,
};
use pitchside::tables::RowGroupLimit;
use pitchside::util::venue_mix::VenueMix;
#[path = "common/counting_alloc.rs"]
mod counting_alloc;
use counting_alloc::allocations;

/// The bound: heap allocations per event in steady state.
const BOUND: f64 = 0.05;
/// Detector keys of the mix: few enough that every key and window is warm
/// after `WARM` lines in a debug build.
const KEYS: u64 = 1_000;
const WARM: usize = 60_000;
const MEASURED: usize = 60_000;
/// The row groups `run` hands to the encoder.
const ROW_GROUP: RowGroupLimit = RowGroupLimit {
    rows: ROW_GROUP_ROWS,
    bytes: ROW_GROUP_BYTES,
    raw_rows: RAW_ROW_GROUP_ROWS,
    raw_bytes: RAW_ROW_GROUP_BYTES,
};

fn kind_of(line: &str) -> SensorKind {
    let rest = line
        .strip_prefix("{\"sensor\":\"")
        .expect("mix lines start with sensor");
    let name = &rest[..rest.find('"').expect("closing quote")];
    SensorKind::parse(name).expect("a known kind")
}

/// Allocations per line of each kind, after warming up.
fn per_event(raw: bool) -> [f64; 4] {
    let text = format!(
        "[venue]\nid = \"alloc\"\ngateway_id = \"gw-alloc\"\n[output]\nstore = \"file:///nonexistent\"\n\
         spool_dir = \"/nonexistent\"\nraw = {raw}\n[windows]\nsize = \"10s\"\nwatermark_delay = \"5s\"\n\
         [metrics]\nlisten = \"\"\n[console]\nlisten = \"\"\n"
    );
    let cfg = config::parse(&text, "alloc").unwrap().validate().unwrap();
    let mut p = Pipeline::new(&cfg, false);
    p.disable_live_alerts();
    let mut mix = VenueMix::new(KEYS, 11);
    let lines: Vec<String> = (0..WARM + MEASURED)
        .map(|_| {
            let mut s = String::new();
            mix.line(&mut s);
            s.truncate(s.len() - 1);
            s
        })
        .collect();
    let mut counts = [0u64; 4];
    let mut events = [0u64; 4];
    for (n, line) in lines.iter().enumerate() {
        let a = allocations(|| {
            p.process_line("replay:mix", None, line.as_bytes(), n as u64 + 1, 0, 0);
            if p.tables_due(ROW_GROUP) {
                // The encoder's turn (it only reads them).
                drop(p.take_tables(ROW_GROUP));
            }
        });
        if n >= WARM {
            let k = kind_of(line).index();
            counts[k] += a;
            events[k] += 1;
        }
    }
    let c = p.counters();
    assert_eq!(c.rejected_total(), 0, "the mix is valid input");
    assert!(c.late_rows > 0 && c.duplicate_rows > 0 && c.windows_emitted > 0);
    std::array::from_fn(|k| counts[k] as f64 / events[k].max(1) as f64)
}

fn check(raw: bool) {
    let got = per_event(raw);
    for k in SensorKind::ALL {
        println!(
            "raw {raw}: {k}: {:.4} allocations per event",
            got[k.index()]
        );
    }
    for k in SensorKind::ALL {
        let a = got[k.index()];
        assert!(
            a <= BOUND,
            "raw {raw}: {k} events cost {a:.3} heap allocations each (bound {BOUND}); all: {got:?}"
        );
    }
}

#[test]
fn steady_state_events_allocate_at_most_one_in_twenty_raw_off() {
    check(false);
}

#[test]
fn steady_state_events_allocate_at_most_one_in_twenty_raw_on() {
    check(true);
}

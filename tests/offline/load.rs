//! Player load's bound (`load.max_players`, SPEC §11), tested twice as
//! every bound is: full under churn (ten times the cap of distinct players
//! go through, the state stays at the cap and every eviction is counted),
//! and healthy under ten times its bound of traffic (a squad at the cap
//! plays on, nothing is evicted and every window has its row).

use pitchside::config::{parse, Config};
use pitchside::pipeline::Pipeline;
use pitchside::tables::{RowGroupLimit, TableId};

/// 2026-11-29T19:30:00Z, µs.
const T0: i64 = 1_795_980_600_000_000;

fn config(max_players: u32) -> Config {
    parse(
        &format!(
            "[venue]\nid = \"v\"\ngateway_id = \"g\"\n[output]\nstore = \"file:///tmp/pitchside-load-store\"\n\
             spool_dir = \"/tmp/pitchside-load-spool\"\nraw = false\n[load]\nmax_players = {max_players}\n"
        ),
        "test",
    )
    .unwrap()
    .validate()
    .unwrap()
}

/// A wearable line of `player` at `t` µs with a cumulative distance.
fn line(player: i64, t: i64, dist: f64) -> Vec<u8> {
    format!(
        r#"{{"sensor":"wearable","device_id":"vest-{player}","event_time":{},"match_id":1,"player_id":{player},"heart_rate":150,"running_dist":{dist}}}"#,
        t / 1000
    )
    .into_bytes()
}

/// Rows written to `load_player_1m` so far.
fn load_rows(p: &mut Pipeline) -> usize {
    p.take_tables(RowGroupLimit::ANY)
        .iter()
        .filter(|t| t.table == TableId::LoadPlayer1m)
        .map(|t| t.rows)
        .sum()
}

#[test]
fn ten_times_the_cap_of_distinct_players_keeps_the_state_at_the_cap_and_counts_each_eviction() {
    let cap = 50;
    let mut p = Pipeline::new(&config(cap), false);
    // 500 players, one reading each, a second apart.
    for player in 0..500 {
        let t = T0 + player * 1_000_000;
        p.process_bytes("test", None, &line(player, t, 10.0), t, t);
        assert!(p.counters().load_players <= cap as u64);
    }
    let c = p.counters();
    assert_eq!(c.load_players, cap as u64);
    assert_eq!(c.load.evictions, 500 - cap as u64);
    assert_eq!(c.load.unrostered, 500);
    p.flush_windows();
    // Windows of forgotten players write no load row. Player i (at i s) is
    // forgotten when player i + 50 arrives; its window [minute, minute + 60 s)
    // is emitted before that when the watermark (30 s behind) passes its end
    // by then: i mod 60 >= 41. The last 50 are flushed at the end.
    let kept = (0..500i64)
        .filter(|&i| i >= 500 - cap as i64 || 60 - i % 60 <= 19)
        .count();
    assert_eq!(kept, 183);
    let tables = p.take_tables(RowGroupLimit::ANY);
    let count =
        |t: TableId| -> usize { tables.iter().filter(|b| b.table == t).map(|b| b.rows).sum() };
    assert_eq!(count(TableId::WindowsWearable), 500);
    assert_eq!(count(TableId::LoadPlayer1m), kept);
}

#[test]
fn a_squad_at_the_cap_plays_ten_times_the_bound_with_no_eviction_and_a_row_per_window() {
    let cap = 22;
    let mut p = Pipeline::new(&config(cap), false);
    let minutes = 20;
    let mut rows = 0;
    // 22 players at 1 Hz for 20 minutes: 26,400 updates, 1,200 times the cap.
    for s in 0..minutes * 60 {
        for player in 0..cap as i64 {
            let t = T0 + s * 1_000_000 + player * 1000;
            p.process_bytes("test", None, &line(player, t, 4.0 * s as f64), t, t);
        }
        rows += load_rows(&mut p);
    }
    p.flush_windows();
    rows += load_rows(&mut p);
    let c = p.counters();
    assert_eq!((c.load.evictions, c.load_players), (0, cap as u64));
    assert_eq!(rows, (minutes * cap as i64) as usize);
}

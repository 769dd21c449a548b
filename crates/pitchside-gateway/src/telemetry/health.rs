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

/// What a healthy gateway still wants an operator to know, for `/healthz`'s
/// body after `ok`: an unsynchronised clock (the gateway works on, judging
/// event times against the time the devices agree on).
pub fn health_notes(s: &MetricsSnapshot) -> Option<String> {
    let c = &s.counters;
    c.clock_unsynchronized.then(|| {
        format!(
            "clock unsynchronised: event times are judged against the time two devices agree on \
             ({} accepted, {} refused as implausible_time so far)",
            c.clock_unsynced_events, c.clock_unvouched_events
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_healthy_gateway_with_an_unsynchronised_clock_says_so_in_a_note() {
        let mut s = MetricsSnapshot::default();
        assert_eq!(health(&s, 0), Ok(()));
        assert_eq!(health_notes(&s), None);
        s.counters.clock_unsynchronized = true;
        s.counters.clock_unsynced_events = 40;
        s.counters.clock_unvouched_events = 2;
        assert_eq!(health(&s, 0), Ok(()), "a stale clock is no outage");
        let note = health_notes(&s).unwrap();
        assert!(note.contains("clock unsynchronised"), "{note}");
        assert!(note.contains("40 accepted, 2 refused"), "{note}");
    }
}

//! Counters of the real sources (serial ports, MQTT), shared with the
//! Prometheus endpoint. Plain atomics: updated once per connection event or
//! message, read when `/metrics` is scraped.

use std::sync::atomic::{AtomicI64, AtomicU64, Ordering};

/// Cumulative counters of serial ports and MQTT connections, and which sources are down.
#[derive(Debug, Default)]
pub struct SourceStats {
    /// Serial devices that went away (unplugged, closed, read error).
    pub serial_disconnects: AtomicU64,
    /// Serial lines dropped because the pipeline queue and the hold buffer were full.
    pub serial_dropped: AtomicU64,
    /// MQTT source connections lost (or refused) after having been up.
    pub mqtt_disconnects: AtomicU64,
    /// MQTT messages received by the sources.
    pub mqtt_messages: AtomicU64,
    /// MQTT messages dropped because the pipeline queue and the hold buffer were full.
    pub mqtt_dropped: AtomicU64,
    /// MQTT messages over `limits.max_event_bytes`, acknowledged and
    /// rejected as `too_large` (only their first bytes are kept).
    pub mqtt_oversized: AtomicU64,
    /// Serial and MQTT sources not connected now (a gauge; a source counts
    /// as down from its start until it first connects).
    pub sources_down: AtomicU64,
    /// Since when (µs) at least one source has been down; 0 when all are up.
    pub down_since: AtomicI64,
    /// The sources down now, by name: how many of that name and since when (µs).
    down: std::sync::Mutex<std::collections::BTreeMap<String, (u32, i64)>>,
}

impl SourceStats {
    /// Adds one to a counter.
    pub fn inc(counter: &AtomicU64) {
        counter.fetch_add(1, Ordering::Relaxed);
    }

    /// Reads a counter.
    pub fn get(counter: &AtomicU64) -> u64 {
        counter.load(Ordering::Relaxed)
    }

    /// Source `name` went down (or starts, not yet connected).
    pub fn source_down(&self, name: &str) {
        let now = crate::util::time::now_micros();
        if let Ok(mut down) = self.down.lock() {
            let e = down.entry(name.to_string()).or_insert((0, now));
            e.0 += 1;
        }
        if self.sources_down.fetch_add(1, Ordering::Relaxed) == 0 {
            self.down_since.store(now, Ordering::Relaxed);
        }
    }

    /// Source `name` connected.
    pub fn source_up(&self, name: &str) {
        if let Ok(mut down) = self.down.lock() {
            if let Some(e) = down.get_mut(name) {
                e.0 = e.0.saturating_sub(1);
                if e.0 == 0 {
                    down.remove(name);
                }
            }
        }
        let before = self
            .sources_down
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |n| {
                Some(n.saturating_sub(1))
            })
            .unwrap_or(0);
        if before <= 1 {
            self.down_since.store(0, Ordering::Relaxed);
        }
    }

    /// The sources down now and for how long (µs), longest first.
    pub fn down_sources(&self, now: crate::model::Micros) -> Vec<(String, i64)> {
        let mut v: Vec<(String, i64)> = self
            .down
            .lock()
            .map(|d| {
                d.iter()
                    .map(|(k, (_, since))| (k.clone(), now - since))
                    .collect()
            })
            .unwrap_or_default();
        v.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
        v
    }

    /// µs since sources have been down (0 when all are up).
    pub fn down_for(&self, now: crate::model::Micros) -> i64 {
        match self.down_since.load(Ordering::Relaxed) {
            0 => 0,
            t => now - t,
        }
    }
}

//! Serial ports: one JSON event per line, read with the bounded
//! [`LineFramer`], reopened with backoff when the device goes away.
//!
//! The reader never waits for the pipeline: lines go straight into the input
//! queue when it has room, else into a hold queue of `max_held` lines; past
//! that they are dropped and counted (`pitchside_serial_dropped_lines_total`).
//! Waiting instead would let the kernel's small tty buffer overflow, which
//! loses bytes silently and mangles lines.

use crate::config::sources::serial as config;
use crate::config::SerialSection;
use crate::model::{FramingError, RawInput, SensorKind, SourceName};
use crate::sources::framing::{Line, LineFramer};
use crate::sources::handover::{self, Holder};
use crate::sources::stats::SourceStats;
use crate::util::backoff::Backoff;
use crate::util::bounded::{Bounded, WhenFull};
use crate::util::log_limit::LogLimiter;
use crate::util::time::now_micros;
use std::sync::Arc;
use std::time::Duration;
use tokio::io::AsyncReadExt;
use tokio::sync::mpsc;
use tokio_serial::{DataBits, Parity, SerialPortBuilderExt, SerialStream, StopBits};
use tokio_util::sync::CancellationToken;
use tracing::{debug, info, warn};

/// A serial port's settings, checked and typed.
#[derive(Debug, Clone)]
pub struct SerialSettings {
    /// Device path.
    pub path: String,
    /// Baud rate.
    pub baud: u32,
    /// Data bits.
    pub data_bits: DataBits,
    /// Parity.
    pub parity: Parity,
    /// Stop bits.
    pub stop_bits: StopBits,
    /// Kind of lines without `sensor`.
    pub sensor: Option<SensorKind>,
    /// The source's name when its device format decodes its lines (SPEC §9).
    pub mapping: Option<SourceName>,
    /// Longest line in bytes.
    pub max_line: usize,
    /// Lines held while the pipeline queue is full.
    pub max_held: usize,
}

impl SerialSettings {
    /// Settings from a validated config section.
    pub fn from_section(s: &SerialSection, max_event_bytes: usize) -> SerialSettings {
        SerialSettings {
            path: s.path.clone(),
            baud: s.baud,
            data_bits: match s.data_bits {
                5 => DataBits::Five,
                6 => DataBits::Six,
                7 => DataBits::Seven,
                _ => DataBits::Eight,
            },
            parity: match s.parity {
                config::Parity::None => Parity::None,
                config::Parity::Odd => Parity::Odd,
                config::Parity::Even => Parity::Even,
            },
            stop_bits: if s.stop_bits == 2 {
                StopBits::Two
            } else {
                StopBits::One
            },
            sensor: s.sensor.as_deref().and_then(SensorKind::parse),
            mapping: s.input.is_mapped().then(|| SourceName::from(s.name())),
            max_line: s.max_line_bytes.map_or(max_event_bytes, |m| m as usize),
            max_held: s.max_held as usize,
        }
    }

    /// Opens the port (must run inside the tokio runtime).
    pub fn open(&self) -> Result<SerialStream, tokio_serial::Error> {
        tokio_serial::new(&self.path, self.baud)
            .data_bits(self.data_bits)
            .parity(self.parity)
            .stop_bits(self.stop_bits)
            .open_native_async()
    }
}

enum Ended {
    Shutdown,
    Disconnected(String),
}

/// Reads one serial port into the pipeline queue until shutdown.
pub struct SerialSource {
    settings: SerialSettings,
    name: SourceName,
    tx: mpsc::Sender<RawInput>,
    stats: Arc<SourceStats>,
    framer: LineFramer,
    held: Bounded<RawInput>,
    drop_log: LogLimiter,
}

impl SerialSource {
    /// A source named `serial:{path}`.
    pub fn new(
        settings: SerialSettings,
        tx: mpsc::Sender<RawInput>,
        stats: Arc<SourceStats>,
    ) -> SerialSource {
        let name: SourceName = Arc::from(format!("serial:{}", settings.path));
        // Down until the port first opens.
        stats.source_down(&name);
        SerialSource {
            name,
            framer: LineFramer::new(settings.max_line),
            held: Bounded::new(settings.max_held, WhenFull::DropNewest),
            settings,
            tx,
            stats,
            drop_log: LogLimiter::new(10_000_000),
        }
    }

    /// Opens, reads, and reopens after a disconnect, until `shutdown`.
    pub async fn run(mut self, shutdown: CancellationToken) {
        let path = self.settings.path.clone();
        let mut backoff = Backoff::default();
        let mut failing = false;
        loop {
            let port = match self.settings.open() {
                Ok(p) => p,
                Err(e) => {
                    if !failing {
                        warn!(port = %path, error = %e, "Serial port cannot be opened; retrying with backoff.");
                        failing = true;
                    } else {
                        debug!(port = %path, error = %e, "Serial port still cannot be opened.");
                    }
                    if self.pause(backoff.next_delay(), &shutdown).await {
                        break;
                    }
                    continue;
                }
            };
            info!(port = %path, baud = self.settings.baud, "Serial port opened.");
            self.stats.source_up(&self.name);
            backoff.reset();
            match self.read(port, &shutdown).await {
                Ended::Shutdown => break,
                Ended::Disconnected(reason) => {
                    SourceStats::inc(&self.stats.serial_disconnects);
                    self.stats.source_down(&self.name);
                    warn!(port = %path, reason = %reason, "Serial port disconnected; reopening with backoff.");
                    // A partial line from before the disconnect is not an event.
                    self.framer.reset();
                    // Reopen attempts are quiet until one succeeds.
                    failing = true;
                    if self.pause(backoff.next_delay(), &shutdown).await {
                        break;
                    }
                }
            }
        }
        // The pipeline runs until every source has stopped: hand over what is held.
        handover::hand_over_rest(&mut self.held, &self.tx, |input| input).await;
        info!(port = %path, "Serial source stopped.");
    }

    /// Sleeps `d` while still handing held lines over; true on shutdown.
    async fn pause(&mut self, d: Duration, shutdown: &CancellationToken) -> bool {
        handover::pause(&mut self.held, &self.tx, d, shutdown).await
    }

    async fn read(&mut self, mut port: SerialStream, shutdown: &CancellationToken) -> Ended {
        let mut buf = vec![0u8; 4096];
        let tx = self.tx.clone();
        loop {
            tokio::select! {
                biased;
                _ = shutdown.cancelled() => return Ended::Shutdown,
                permit = tx.reserve(), if self.held.is_holding() => match permit {
                    Ok(p) => self.held.hand_over(p),
                    Err(_) => return Ended::Shutdown,
                },
                r = port.read(&mut buf) => match r {
                    // A pty whose other end closed reads as end of file or EIO.
                    Ok(0) => return Ended::Disconnected("end of file".into()),
                    Ok(n) => self.frame(&buf[..n]),
                    Err(e) => return Ended::Disconnected(e.to_string()),
                },
            }
        }
    }

    fn frame(&mut self, data: &[u8]) {
        let received_at = now_micros();
        let Self {
            framer,
            held,
            tx,
            name,
            settings,
            stats,
            drop_log,
        } = self;
        framer.push(data, &mut |line| {
            let (payload, framing_error) = match line {
                Line::Ok([]) => return,
                Line::Ok(b) => (b.to_vec(), None),
                Line::TooLarge { prefix, len } => {
                    (prefix.to_vec(), Some(FramingError::TooLarge { len }))
                }
            };
            let input = RawInput {
                source: name.clone(),
                sensor_hint: settings.sensor,
                payload,
                received_at,
                framing_error,
                ack: None,
                mapping: settings.mapping.clone(),
            };
            let input = if held.is_empty() {
                match tx.try_send(input) {
                    Ok(()) => return,
                    Err(mpsc::error::TrySendError::Full(i)) => i,
                    // The pipeline stopped: shutdown is under way.
                    Err(mpsc::error::TrySendError::Closed(_)) => return,
                }
            } else {
                input
            };
            if held.push(input).is_some() {
                SourceStats::inc(&stats.serial_dropped);
                if let Some(n) = drop_log.allow(received_at) {
                    let dropped = n + 1;
                    warn!(port = %settings.path, dropped, "Pipeline is behind; serial lines dropped (counted in pitchside_serial_dropped_lines_total).");
                }
            }
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_the_full_pipeline_queue_cannot_take_are_held_up_to_max_held_then_dropped() {
        let settings = SerialSettings {
            path: "/dev/ttyTEST".into(),
            baud: 9600,
            data_bits: DataBits::Eight,
            parity: Parity::None,
            stop_bits: StopBits::One,
            sensor: None,
            mapping: None,
            max_line: 64,
            max_held: 2,
        };
        let (tx, mut rx) = mpsc::channel(1);
        let stats = Arc::new(SourceStats::default());
        let mut source = SerialSource::new(settings, tx, stats.clone());
        source.frame(b"a\nb\nc\nd\n");
        assert_eq!(rx.try_recv().unwrap().payload, b"a");
        let held: Vec<&[u8]> = source.held.iter().map(|i| &i.payload[..]).collect();
        assert_eq!(held, [b"b", b"c"]);
        assert_eq!(SourceStats::get(&stats.serial_dropped), 1);
    }
}

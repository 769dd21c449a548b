//! Where `pitchside simulate` can send its lines besides stdout and files:
//! a serial port (one line per event, `\n`-terminated) or an MQTT broker
//! (one QoS 1 message per event on `{topic_prefix}/{sensor}/{device_id}`),
//! so that a venue can be rehearsed end to end with no sensors.

use crate::config::MqttBroker;
use crate::mqtt::conn::{describe, BrokerSettings, ConnError};
use rumqttc::{AsyncClient, Event, Packet, QoS};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;
use tokio::io::AsyncWriteExt;
use tokio::sync::oneshot;

/// Why the simulator cannot send.
#[derive(Debug, thiserror::Error)]
pub enum SimOutputError {
    /// The serial port cannot be opened.
    #[error("cannot open serial port {path}: {source}")]
    OpenSerial {
        /// Device path.
        path: String,
        /// Driver error.
        source: tokio_serial::Error,
    },
    /// Writing to the serial port failed.
    #[error("serial port {path}: {source}")]
    WriteSerial {
        /// Device path.
        path: String,
        /// OS error.
        source: std::io::Error,
    },
    /// The broker settings are unusable.
    #[error(transparent)]
    Settings(#[from] ConnError),
    /// The broker cannot be reached or refused us.
    #[error("{0}")]
    Connect(String),
    /// The MQTT client stopped.
    #[error("MQTT client stopped: {0}")]
    Client(#[from] rumqttc::ClientError),
}

/// A serial port or an MQTT broker.
pub enum SimOutput {
    /// A serial port.
    Serial {
        /// Device path.
        path: String,
        /// The open port.
        port: tokio_serial::SerialStream,
    },
    /// An MQTT broker.
    Mqtt {
        /// The client.
        client: AsyncClient,
        /// Topic prefix.
        prefix: String,
        /// Messages sent.
        sent: u64,
        /// Messages the broker acknowledged.
        acked: Arc<AtomicU64>,
    },
}

impl SimOutput {
    /// Opens a serial port at `baud`, 8N1.
    pub fn serial(path: &str, baud: u32) -> Result<SimOutput, SimOutputError> {
        use tokio_serial::SerialPortBuilderExt;
        let port = tokio_serial::new(path, baud)
            .open_native_async()
            .map_err(|source| SimOutputError::OpenSerial {
                path: path.to_string(),
                source,
            })?;
        Ok(SimOutput::Serial {
            path: path.to_string(),
            port,
        })
    }

    /// Connects to a broker (waits for its answer, 10 s at most).
    pub async fn mqtt(broker: &MqttBroker, prefix: &str) -> Result<SimOutput, SimOutputError> {
        let id = format!("pitchside-simulate-{}", std::process::id());
        let settings = BrokerSettings::new("--mqtt", broker, &id, true)?;
        let addr = settings.addr.clone();
        let (client, mut eventloop) = AsyncClient::new(settings.options, 1024);
        let acked = Arc::new(AtomicU64::new(0));
        let (ready_tx, ready_rx) = oneshot::channel();
        let counter = acked.clone();
        tokio::spawn(async move {
            let mut ready = Some(ready_tx);
            loop {
                match eventloop.poll().await {
                    Ok(Event::Incoming(Packet::ConnAck(_))) => {
                        if let Some(r) = ready.take() {
                            let _ = r.send(Ok(()));
                        }
                    }
                    Ok(Event::Incoming(Packet::PubAck(_))) => {
                        counter.fetch_add(1, Ordering::Relaxed);
                    }
                    Ok(_) => {}
                    Err(rumqttc::ConnectionError::RequestsDone) => return,
                    Err(e) => {
                        let (_, message) = describe(&addr, &e);
                        match ready.take() {
                            Some(r) => {
                                let _ = r.send(Err(message));
                                return;
                            }
                            None => {
                                tracing::warn!("{message}; retrying.");
                                tokio::time::sleep(Duration::from_secs(1)).await;
                            }
                        }
                    }
                }
            }
        });
        match tokio::time::timeout(Duration::from_secs(10), ready_rx).await {
            Ok(Ok(Ok(()))) => {}
            Ok(Ok(Err(message))) => return Err(SimOutputError::Connect(message)),
            _ => {
                return Err(SimOutputError::Connect(format!(
                    "MQTT broker {}:{} did not answer in 10 s",
                    broker.host,
                    broker.port.unwrap_or(1883)
                )))
            }
        }
        Ok(SimOutput::Mqtt {
            client,
            prefix: prefix.to_string(),
            sent: 0,
            acked,
        })
    }

    /// Sends one event line (waits when the client's queue is full).
    pub async fn send(&mut self, line: &str) -> Result<(), SimOutputError> {
        self.send_on(None, line).await
    }

    /// Sends one line; to a broker on `topic`, or (`None`) on the §1 line's
    /// `{prefix}/{sensor}/{device_id}`.
    pub async fn send_on(&mut self, topic: Option<&str>, line: &str) -> Result<(), SimOutputError> {
        match self {
            SimOutput::Serial { path, port } => {
                let mut buf = Vec::with_capacity(line.len() + 1);
                buf.extend_from_slice(line.as_bytes());
                buf.push(b'\n');
                port.write_all(&buf)
                    .await
                    .map_err(|source| SimOutputError::WriteSerial {
                        path: path.clone(),
                        source,
                    })
            }
            SimOutput::Mqtt {
                client,
                prefix,
                sent,
                ..
            } => {
                let topic = topic.map_or_else(|| topic_for(prefix, line), str::to_string);
                client
                    .publish(topic, QoS::AtLeastOnce, false, line.as_bytes().to_vec())
                    .await?;
                *sent += 1;
                Ok(())
            }
        }
    }

    /// Waits (10 s at most) until the broker acknowledged every message, or
    /// the serial port drained; returns how many the broker acknowledged.
    pub async fn finish(self) -> Result<u64, SimOutputError> {
        match self {
            SimOutput::Serial { path, mut port } => {
                port.flush()
                    .await
                    .map_err(|source| SimOutputError::WriteSerial { path, source })?;
                Ok(0)
            }
            SimOutput::Mqtt {
                client,
                sent,
                acked,
                ..
            } => {
                let end = tokio::time::Instant::now() + Duration::from_secs(10);
                while acked.load(Ordering::Relaxed) < sent && tokio::time::Instant::now() < end {
                    tokio::time::sleep(Duration::from_millis(20)).await;
                }
                let _ = client.disconnect().await;
                Ok(acked.load(Ordering::Relaxed))
            }
        }
    }
}

/// `{prefix}/{sensor}/{device_id}` of a simulated line (`…/unknown/unknown`
/// if the line lacks them).
pub fn topic_for(prefix: &str, line: &str) -> String {
    let v: serde_json::Value = serde_json::from_str(line).unwrap_or_default();
    let field = |k: &str| {
        v.get(k)
            .and_then(|x| x.as_str())
            .unwrap_or("unknown")
            .to_string()
    };
    format!("{prefix}/{}/{}", field("sensor"), field("device_id"))
}

#[cfg(test)]
mod tests {
    #[test]
    fn topic_is_prefix_sensor_and_device() {
        let line = r#"{"sensor":"crowd","device_id":"mic-2","decibels":80}"#;
        assert_eq!(super::topic_for("venue/in", line), "venue/in/crowd/mic-2");
    }
}

//! How an ack is kept in the input journal, so that a crash right after the
//! console answered 200 loses no ack: a [`RawInput`] whose source is
//! [`ACK_SOURCE`] and whose payload is the ack as JSON. Journal replay at
//! start-up hands such records to `Pipeline::ack` instead of the decoder.

use crate::model::RawInput;
use crate::pipeline::console_rows::AckRecord;
use std::sync::Arc;

/// The journal source of an ack.
pub const ACK_SOURCE: &str = "console:ack";

/// The journal record of `a`.
pub fn ack_input(a: &AckRecord) -> RawInput {
    let payload = serde_json::json!({
        "alert_id": a.alert_id, "by": a.by, "note": a.note, "acked_at": a.acked_at,
    });
    RawInput {
        source: Arc::from(ACK_SOURCE),
        sensor_hint: None,
        payload: payload.to_string().into_bytes(),
        received_at: a.acked_at,
        framing_error: None,
        ack: None,
        mapping: None,
    }
}

/// What a journal record is.
#[derive(Debug, PartialEq, Eq)]
pub enum Journaled {
    /// A sensor input, for the pipeline.
    Input,
    /// An ack.
    Ack(AckRecord),
    /// An ack record that cannot be read (never written so; logged).
    Broken,
}

/// Sorts a replayed journal record.
pub fn journaled(input: &RawInput) -> Journaled {
    if &*input.source != ACK_SOURCE {
        return Journaled::Input;
    }
    #[derive(serde::Deserialize)]
    struct Ack {
        alert_id: String,
        by: String,
        note: Option<String>,
        acked_at: i64,
    }
    match serde_json::from_slice::<Ack>(&input.payload) {
        Ok(a) => Journaled::Ack(AckRecord {
            alert_id: a.alert_id,
            by: a.by,
            note: a.note,
            acked_at: a.acked_at,
        }),
        Err(_) => Journaled::Broken,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_ack_round_trips_through_its_journal_record() {
        let a = AckRecord {
            alert_id: "demo/wearable/band-07/heart_rate/9".into(),
            by: "Dr \"K\" Khan".into(),
            note: None,
            acked_at: 1_764_583_200_000_000,
        };
        let input = ack_input(&a);
        assert_eq!(input.received_at, a.acked_at);
        assert_eq!(journaled(&input), Journaled::Ack(a));
        let mut sensor = ack_input(&AckRecord {
            note: Some("x".into()),
            ..journaled_ack()
        });
        sensor.source = Arc::from("simulator");
        assert_eq!(journaled(&sensor), Journaled::Input);
        let mut broken = ack_input(&journaled_ack());
        broken.payload = b"{".to_vec();
        assert_eq!(journaled(&broken), Journaled::Broken);
    }

    fn journaled_ack() -> AckRecord {
        AckRecord {
            alert_id: "a".into(),
            by: "b".into(),
            note: None,
            acked_at: 1,
        }
    }
}

use bytes::{Buf, BytesMut};
use tokio_util::codec::{Decoder, Encoder};

use super::{Error, Packet, Publish};
use crate::mqttbytes::{parse_fixed_header, PacketType};

/// MQTT v4 codec
#[derive(Debug, Clone)]
pub struct Codec {
    /// Maximum packet size allowed by client
    pub max_incoming_size: usize,
    /// Maximum packet size allowed by broker
    pub max_outgoing_size: usize,
    /// pitchside patch: bytes of an oversized PUBLISH still to read past.
    pub discard: usize,
}

impl Codec {
    /// pitchside patch: a PUBLISH longer than `max_incoming_size` does not
    /// fail the connection. Its first `max_incoming_size` bytes (topic,
    /// packet id, the start of the payload) are handed over as a
    /// [`Publish`] with `oversize` set, so that it can be acknowledged; the
    /// rest is read past as it arrives, never held in memory. Other packet
    /// types over the limit still fail the connection.
    fn oversized_publish(&mut self, src: &mut BytesMut) -> Result<Option<Packet>, Error> {
        let fixed_header = parse_fixed_header(src.iter())?;
        if fixed_header.packet_type()? != PacketType::Publish {
            return Err(Error::PayloadSizeLimitExceeded(fixed_header.remaining_len));
        }
        let keep = fixed_header.fixed_header_len + self.max_incoming_size;
        if src.len() < keep {
            src.reserve(keep - src.len());
            return Ok(None);
        }
        let head = src.split_to(keep).freeze();
        self.discard = fixed_header.frame_length() - keep;
        let remaining_len = fixed_header.remaining_len;
        let mut publish = Publish::read(fixed_header, head)?;
        publish.oversize = Some(remaining_len);
        // Whatever of the rest is already buffered goes now.
        self.skip(src);
        Ok(Some(Packet::Publish(publish)))
    }

    /// Drops what is buffered of an oversized packet's rest; `true` once
    /// all of it is gone.
    fn skip(&mut self, src: &mut BytesMut) -> bool {
        let n = self.discard.min(src.len());
        src.advance(n);
        self.discard -= n;
        self.discard == 0
    }
}

impl Decoder for Codec {
    type Item = Packet;
    type Error = Error;

    fn decode(&mut self, src: &mut BytesMut) -> Result<Option<Self::Item>, Self::Error> {
        if !self.skip(src) {
            return Ok(None);
        }
        match Packet::read(src, self.max_incoming_size) {
            Ok(packet) => Ok(Some(packet)),
            Err(Error::InsufficientBytes(b)) => {
                // Get more packets to construct the incomplete packet
                src.reserve(b);
                Ok(None)
            }
            Err(Error::PayloadSizeLimitExceeded(_)) => self.oversized_publish(src),
            Err(e) => Err(e),
        }
    }
}

impl Encoder<Packet> for Codec {
    type Error = Error;

    fn encode(&mut self, item: Packet, dst: &mut BytesMut) -> Result<(), Self::Error> {
        item.write(dst, self.max_outgoing_size)?;

        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use bytes::BytesMut;
    use tokio_util::codec::Encoder;

    use super::Codec;
    use crate::{mqttbytes::Error, Packet, Publish, QoS};

    #[test]
    fn outgoing_max_packet_size_check() {
        let mut buf = BytesMut::new();
        let mut codec = Codec {
            max_incoming_size: 100,
            max_outgoing_size: 200,
            discard: 0,
        };

        let mut small_publish = Publish::new("hello/world", QoS::AtLeastOnce, vec![1; 100]);
        small_publish.pkid = 1;
        codec
            .encode(Packet::Publish(small_publish), &mut buf)
            .unwrap();

        let large_publish = Publish::new("hello/world", QoS::AtLeastOnce, vec![1; 265]);
        match codec.encode(Packet::Publish(large_publish), &mut buf) {
            Err(Error::OutgoingPacketTooLarge {
                pkt_size: 281,
                max: 200,
            }) => {}
            _ => unreachable!(),
        }
    }

    #[test]
    fn oversized_publish_is_cut_and_the_next_packet_still_decodes() {
        use tokio_util::codec::Decoder;
        let mut codec = Codec {
            max_incoming_size: 64,
            max_outgoing_size: 1 << 20,
            discard: 0,
        };
        let mut big = Publish::new("a/b", QoS::AtLeastOnce, vec![7; 10_000]);
        big.pkid = 9;
        let mut small = Publish::new("a/b", QoS::AtLeastOnce, vec![1; 3]);
        small.pkid = 10;
        let mut wire = BytesMut::new();
        Packet::Publish(big).write(&mut wire, 1 << 20).unwrap();
        Packet::Publish(small.clone()).write(&mut wire, 1 << 20).unwrap();
        // Fed in small pieces, as a socket would.
        let mut src = BytesMut::new();
        let mut out = Vec::new();
        for chunk in wire.chunks(100) {
            src.extend_from_slice(chunk);
            while let Some(p) = codec.decode(&mut src).unwrap() {
                out.push(p);
            }
            assert!(src.len() <= 200, "the oversized body is not buffered");
        }
        match &out[..] {
            [Packet::Publish(cut), Packet::Publish(next)] => {
                assert_eq!((cut.pkid, cut.topic.as_str()), (9, "a/b"));
                assert_eq!(cut.oversize, Some(2 + 3 + 2 + 10_000));
                assert_eq!(cut.payload.len(), 64 - 7);
                assert_eq!(next, &small);
            }
            other => panic!("{other:?}"),
        }
    }
}

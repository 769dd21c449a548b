//! Any byte stream, split anywhere, through the line framer: never a panic,
//! never a line over the limit, and the same lines however it is split.
#![no_main]

use libfuzzer_sys::fuzz_target;
use pitchside::sources::framing::{Line, LineFramer};

fn frame(pieces: &[&[u8]]) -> Vec<(bool, Vec<u8>, usize)> {
    let mut f = LineFramer::new(16);
    let mut out = Vec::new();
    let mut emit = |l: Line<'_>| match l {
        Line::Ok(b) => {
            assert!(b.len() <= 16);
            out.push((true, b.to_vec(), b.len()));
        }
        Line::TooLarge { prefix, len } => {
            assert!(prefix.len() <= 16 && len > 16);
            out.push((false, prefix.to_vec(), len));
        }
    };
    for p in pieces {
        f.push(p, &mut emit);
    }
    f.finish(&mut emit);
    out
}

fuzz_target!(|data: &[u8]| {
    let whole = frame(&[data]);
    let split = data.len() / 3;
    let pieces: Vec<&[u8]> = data.chunks(split.max(1)).collect();
    assert_eq!(whole, frame(&pieces));
});

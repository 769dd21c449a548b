//! For the arenas' tests: the ring positions a key's appends go to, as the
//! detector appends (`Detector::append`), to check `Times` and `Values`
//! against a model of one key's window.

/// One append to a ring.
pub(super) struct Append {
    /// The position written.
    pub pos: usize,
    /// The positions of the other live readings, oldest first.
    pub others: Vec<usize>,
    /// The ring's oldest position after the append.
    pub head: usize,
    /// Live readings after the append.
    pub len: usize,
}

impl Append {
    /// The live positions after the append, oldest first.
    pub fn live(&self, window: usize) -> impl Iterator<Item = usize> + '_ {
        (0..self.len).map(move |k| (self.head + k) % window)
    }
}

/// The positions of `count` appends to an empty ring of `window`.
pub(super) fn appends(count: usize, window: usize) -> Vec<Append> {
    let (mut head, mut len) = (0usize, 0usize);
    let mut out = Vec::with_capacity(count);
    for _ in 0..count {
        let (pos, others) = if len == window {
            let others = (1..window).map(|k| (head + k) % window).collect();
            let pos = head;
            head = (head + 1) % window;
            (pos, others)
        } else {
            let others = (0..len).map(|k| (head + k) % window).collect();
            len += 1;
            ((head + len - 1) % window, others)
        };
        out.push(Append {
            pos,
            others,
            head,
            len,
        });
    }
    out
}

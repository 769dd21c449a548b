//! One half of the detector's cells, coded per key: 3 bytes a reading, exact.
//!
//! What goes in the half (a time in `times`, a value in `values`) is coded
//! against one code per key ([`Coding`]) as a word of at most 24 bits. A
//! reading that does not fit its key's code has the key's live readings
//! re-coded with one that fits them all; a key no code fits is kept whole:
//! the low 24 of each reading's 64 bits in the cell and the high 40 on the
//! side, 5 more bytes a reading for that key only.

use super::{Cell, Cells};
use crate::util::hash::FxHashMap;
use std::marker::PhantomData;

/// Bytes of a cell's half.
pub(super) const LANE_BYTES: usize = 3;
/// The largest word a half holds.
pub(super) const LANE_MAX: u32 = (1 << (8 * LANE_BYTES)) - 1;
/// Bytes a reading of a key kept whole takes on the side.
pub(super) const HIGH_BYTES: usize = 8 - LANE_BYTES;

/// The word in half `lane` of `cell`.
#[inline(always)]
pub(super) fn load(cell: &Cell, lane: usize) -> u32 {
    let b = &cell[lane * LANE_BYTES..][..LANE_BYTES];
    b[0] as u32 | (b[1] as u32) << 8 | (b[2] as u32) << 16
}

/// Puts `word` (at most [`LANE_MAX`]) in half `lane` of `cell`.
#[inline(always)]
fn store(cell: &mut Cell, lane: usize, word: u32) {
    debug_assert!(word <= LANE_MAX, "{word} does not fit a cell's half");
    cell[lane * LANE_BYTES..][..LANE_BYTES].copy_from_slice(&word.to_le_bytes()[..LANE_BYTES]);
}

/// The high bits of a whole reading, kept on the side.
type High = [u8; HIGH_BYTES];

fn high_of(bits: u64) -> High {
    let b = (bits >> (8 * LANE_BYTES)).to_le_bytes();
    std::array::from_fn(|i| b[i])
}

fn whole(cell_word: u32, high: &High) -> u64 {
    let mut b = [0u8; 8];
    b[..HIGH_BYTES].copy_from_slice(high);
    u64::from_le_bytes(b) << (8 * LANE_BYTES) | cell_word as u64
}

/// How one kind of reading is put in 3 bytes.
pub(super) trait Coding {
    /// What is stored: a time or a value.
    type Item: Copy;
    /// A key's code.
    type Code: Copy + PartialEq + std::fmt::Debug;
    /// The half of a cell it is kept in.
    const LANE: usize;
    /// `x` in code `c`, if it fits: a word of at most [`LANE_MAX`].
    fn encode(x: Self::Item, c: Self::Code) -> Option<u32>;
    /// The reading a cell holds in code `c`.
    fn decode(cell: u32, c: Self::Code) -> Self::Item;
    /// A code that fits every one of `items`, if one does: the cheapest,
    /// or `hint` (the code last picked for any key) when it fits, which
    /// saves a search when keys are alike.
    fn fit(
        items: impl Iterator<Item = Self::Item> + Clone,
        hint: Option<Self::Code>,
    ) -> Option<Self::Code>;
    /// The reading's 64 bits, for a key kept whole.
    fn to_bits(x: Self::Item) -> u64;
    /// A reading from its 64 bits.
    fn from_bits(bits: u64) -> Self::Item;
}

/// How one key's readings are stored.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) enum State<C> {
    /// No reading yet.
    Empty,
    /// In this code.
    Coded(C),
    /// Whole: the high bits in [`Packed::high`].
    Whole,
}

/// The codes of every key's readings in one half of the cells.
#[derive(Debug)]
pub(super) struct Packed<C: Coding> {
    /// Readings a key keeps.
    pub(super) window: usize,
    /// Per key.
    pub(super) states: Vec<State<C::Code>>,
    /// The high bits of the readings of the keys kept whole.
    pub(super) high: FxHashMap<u32, Box<[High]>>,
    /// The code last picked, tried first for the next key to re-code.
    last: Option<C::Code>,
    coding: PhantomData<C>,
}

impl<C: Coding> Packed<C> {
    /// The codes of windows of `window` readings.
    pub(super) fn new(window: usize) -> Packed<C> {
        Packed {
            window,
            states: Vec::new(),
            high: FxHashMap::default(),
            last: None,
            coding: PhantomData,
        }
    }

    /// Forgets key `id`'s readings (its window is emptied).
    pub(super) fn clear(&mut self, id: u32) {
        let i = id as usize;
        if i >= self.states.len() {
            self.states.resize(i + 1, State::Empty);
        }
        if self.states[i] == State::Whole {
            self.high.remove(&id);
        }
        self.states[i] = State::Empty;
    }

    /// Bytes of one key's code.
    pub(super) fn code_bytes(&self) -> usize {
        std::mem::size_of::<State<C::Code>>()
    }

    /// Keys whose readings are kept whole ([`HIGH_BYTES`] more a reading).
    pub(super) fn whole_keys(&self) -> usize {
        self.high.len()
    }

    /// The reading at ring position `pos` of key `id`.
    #[inline]
    pub(super) fn get(&self, cells: &Cells, id: u32, pos: usize) -> C::Item {
        let cell = load(&cells[id as usize * self.window + pos], C::LANE);
        match self.states[id as usize] {
            State::Coded(c) => C::decode(cell, c),
            State::Whole => C::from_bits(whole(cell, &self.high[&id][pos])),
            State::Empty => unreachable!("a reading from an empty window"),
        }
    }

    /// Stores `x` at ring position `pos` of key `id`, whose other live
    /// readings are at `others`. Re-codes the key's readings when `x` does
    /// not fit.
    #[inline]
    pub(super) fn set<I>(&mut self, cells: &mut Cells, id: u32, pos: usize, x: C::Item, others: I)
    where
        I: Iterator<Item = usize> + Clone,
    {
        if let State::Coded(c) = self.states[id as usize] {
            if let Some(word) = C::encode(x, c) {
                store(&mut cells[id as usize * self.window + pos], C::LANE, word);
                return;
            }
        }
        self.set_slow(cells, id, pos, x, others);
    }

    /// [`Packed::set`] for a reading that does not fit the key's code (its
    /// first, or one past the code's range) or a key kept whole.
    #[cold]
    #[inline(never)]
    fn set_slow<I: Iterator<Item = usize> + Clone>(
        &mut self,
        cells: &mut Cells,
        id: u32,
        pos: usize,
        x: C::Item,
        others: I,
    ) {
        if self.states[id as usize] != State::Whole {
            self.recode(cells, id, x, others);
        }
        let at = id as usize * self.window + pos;
        match self.states[id as usize] {
            State::Coded(c) => {
                store(
                    &mut cells[at],
                    C::LANE,
                    C::encode(x, c).expect("the new code fits x"),
                );
            }
            _ => {
                let bits = C::to_bits(x);
                store(&mut cells[at], C::LANE, bits as u32 & LANE_MAX);
                if let Some(h) = self.high.get_mut(&id) {
                    h[pos] = high_of(bits);
                }
            }
        }
    }

    /// Picks the code that fits key `id`'s live readings and `x`, else
    /// whole readings, and rewrites the live readings in it.
    fn recode<I: Iterator<Item = usize> + Clone>(
        &mut self,
        cells: &mut Cells,
        id: u32,
        x: C::Item,
        others: I,
    ) {
        let live = others.clone().map(|p| self.get(cells, id, p));
        let new = match C::fit(std::iter::once(x).chain(live), self.last) {
            Some(c) => {
                self.last = Some(c);
                State::Coded(c)
            }
            None => State::Whole,
        };
        if new == State::Whole {
            self.high
                .insert(id, vec![[0; HIGH_BYTES]; self.window].into_boxed_slice());
        }
        // Each reading is read in the old code before its cell is rewritten.
        let base = id as usize * self.window;
        for pos in others {
            let v = self.get(cells, id, pos);
            let bits = C::to_bits(v);
            let word = match new {
                State::Coded(c) => C::encode(v, c).expect("the new code fits"),
                _ => bits as u32 & LANE_MAX,
            };
            store(&mut cells[base + pos], C::LANE, word);
            if let Some(h) = self.high.get_mut(&id) {
                h[pos] = high_of(bits);
            }
        }
        self.states[id as usize] = new;
    }
}

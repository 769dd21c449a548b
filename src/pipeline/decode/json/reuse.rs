//! One fields vector for every document: [`FieldBuf`] keeps the vector
//! [`super::parse_into`] fills, so that parsing allocates nothing once it
//! has grown to the widest object seen.

use super::Member;

/// A vector of fields kept from one document to the next, so that parsing
/// an object allocates nothing once it has grown to the widest object seen.
#[derive(Debug, Default)]
pub struct FieldBuf(Vec<Member<'static>>);

impl FieldBuf {
    /// The (empty) vector, for a document of any lifetime.
    pub fn take<'a>(&mut self) -> Vec<Member<'a>> {
        relabel(std::mem::take(&mut self.0))
    }

    /// Gives the vector back once the document's fields are no longer used.
    pub fn put(&mut self, fields: Vec<Member<'_>>) {
        self.0 = relabel(fields);
    }
}

/// The vector emptied, with the lifetime its next contents will have. The
/// two element types have one layout, so `collect` reuses the allocation
/// (std's in-place iteration; `tests/event_alloc.rs` would see it if not).
fn relabel<'b>(mut v: Vec<Member<'_>>) -> Vec<Member<'b>> {
    v.clear();
    v.into_iter().map(|_| unreachable!("emptied")).collect()
}

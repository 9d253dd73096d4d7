//! Cutting a pass into parts of whole islands, for the threads to share.
//!
//! Islands share no spring (a fixed body they both hang from is only read),
//! so a part of whole islands writes only its own slots, and every body
//! sums its springs' forces in row order however many parts there are.

use core::ops::Range;

/// The slots and spring rows of an island (or a run of islands) within its
/// group.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Span {
    pub slots: Range<usize>,
    pub rows: Range<usize>,
}

/// Groups a group's islands into about `parts` parts of equal work (bodies
/// and springs), each a run of whole islands.
pub fn balance(islands: &[Span], parts: usize) -> Vec<Span> {
    let work = |span: &Span| span.slots.len() + span.rows.len();
    let total: usize = islands.iter().map(work).sum();
    let mut out: Vec<Span> = Vec::with_capacity(parts);
    let mut done = 0;
    let mut open: Option<Span> = None;
    for span in islands {
        let part = open.get_or_insert(Span {
            slots: span.slots.start..span.slots.start,
            rows: span.rows.start..span.rows.start,
        });
        part.slots.end = span.slots.end;
        part.rows.end = span.rows.end;
        done += work(span);
        if done * parts >= total * (out.len() + 1) {
            out.extend(open.take());
        }
    }
    out.extend(open);
    out
}

/// Cuts `slice`, which holds the slots from `base` on, into the slots of
/// each part (parts in slot order, with no gaps).
pub fn pieces<'a, T>(
    mut slice: &'a mut [T],
    base: usize,
    parts: &'a [Span],
) -> impl Iterator<Item = &'a mut [T]> {
    let mut at = base;
    parts.iter().map(move |part| {
        let (piece, rest) = core::mem::take(&mut slice).split_at_mut(part.slots.end - at);
        slice = rest;
        at = part.slots.end;
        piece
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn span(slots: Range<usize>, rows: Range<usize>) -> Span {
        Span { slots, rows }
    }

    /// Parts are runs of whole islands that cover every island once, in
    /// order, and no part is empty.
    #[test]
    fn parts_cover_the_islands_in_order() {
        let islands: Vec<Span> = (0..10)
            .map(|i| span(i * 10..i * 10 + 10, i * 9..i * 9 + 9))
            .collect();
        for parts in 1..=12 {
            let cut = balance(&islands, parts);
            assert!(cut.len() <= parts.max(1));
            assert_eq!(cut.first().unwrap().slots.start, 0);
            assert_eq!(cut.last().unwrap().slots.end, 100);
            for pair in cut.windows(2) {
                assert_eq!(pair[0].slots.end, pair[1].slots.start);
                assert_eq!(pair[0].rows.end, pair[1].rows.start);
            }
            assert!(cut.iter().all(|part| !part.slots.is_empty()));
        }
    }

    /// The pieces of a slice are the parts' slots.
    #[test]
    fn pieces_follow_the_parts() {
        let mut slots: Vec<usize> = (5..15).collect();
        let parts = [span(5..8, 0..0), span(8..9, 0..0), span(9..15, 0..0)];
        let cut: Vec<Vec<usize>> = pieces(&mut slots, 5, &parts).map(|p| p.to_vec()).collect();
        assert_eq!(cut, [vec![5, 6, 7], vec![8], vec![9, 10, 11, 12, 13, 14]]);
    }
}

//! The broad phase: which round things are near each other, on a uniform
//! grid.
//!
//! Each item is a ball of `reach` around `pos` (its radius plus a margin);
//! two items are a pair when `|p_a − p_b| < reach_a + reach_b`. The cell
//! size is twice the largest reach among the ordinary items, so a pair
//! lies in the same or a neighbouring cell; items far larger than the
//! median (a boulder among pebbles) are kept out of the grid and tested
//! against every item, so one huge radius neither makes every cell hold
//! the whole scene nor makes the grid allocate without bound. On an even
//! scene the cost is O(n).
//!
//! The pairs come out in an order that depends only on the items'
//! positions, reaches and keys, not on their indices: items are sorted by
//! cell, then key, and each cell is paired with itself and its forward
//! neighbours in that order. A caller that keys items by something stable
//! (an entity) gets the same order whatever its own layout.
//!
//! Each pair also has a *class*, the direction from the first item's cell
//! to the second's ([`BroadPhase::class_of`]): a caller may order pairs by
//! class ([`by_class`]), so that a run of them goes one direction at a
//! time (the contact solver does, see
//! [`solver::contacts`](crate::solver::contacts)).

use bevy::math::Vec3A;

/// One round thing.
#[derive(Debug, Clone, Copy)]
pub struct Reach {
    pub pos: Vec3A,
    /// Radius plus margin, finite and not negative.
    pub reach: f32,
    /// A stable key that orders items within a cell.
    pub key: u64,
}

/// Whether two items are near enough to pair: `|p_a − p_b| < reach_a +
/// reach_b`.
#[inline]
pub fn near(a: &Reach, b: &Reach) -> bool {
    let sum = a.reach + b.reach;
    (b.pos - a.pos).length_squared() < sum * sum
}

/// An item's cell on each axis, kept well inside `i32` so that a
/// neighbour's index does not overflow (items beyond share the edge
/// cells, which stays exact, only slower).
type Cell = [i32; 3];

const LIMIT: f32 = (1 << 30) as f32;

/// The broad phase's buffers, kept between calls so that a step allocates
/// nothing once the scene has settled.
///
/// [`pairs`](Self::pairs) finds every pair at once. A caller that splits
/// the work calls [`lay_out`](Self::lay_out), then
/// [`cell_pairs`](Self::cell_pairs) on consecutive runs of the occupied
/// cells (at once, on any threads: it reads only) and
/// [`large_pairs`](Self::large_pairs) last; the outputs laid end to end in
/// that order are what `pairs` gives.
#[derive(Debug, Default)]
pub struct BroadPhase {
    /// Grid items by cell, then key: (cell, key, item).
    entries: Vec<(Cell, u64, u32)>,
    /// The occupied cells in order, each with its run of `entries`.
    cells: Vec<(Cell, u32, u32)>,
    /// The neighbouring cells after a cell (see [`forward_offsets`]).
    offsets: Vec<Cell>,
    /// Items kept out of the grid, by key.
    large: Vec<(u64, u32)>,
    /// The usable items' reaches, to find their median (filled only where
    /// some item may reach beyond 4 times it).
    reaches: Vec<f32>,
    /// The sort's buffers (see [`sort_by_cell`]).
    scratch: Vec<(Cell, u64, u32)>,
    counts: Vec<u32>,
    /// Per item of the last call: its place in the sorted `entries`
    /// (`u32::MAX` for one out of the grid).
    rank: Vec<u32>,
}

impl BroadPhase {
    /// Appends to `pairs` each pair `(i, j)` of `items` that is [`near`]
    /// and that `accept(i, j)` takes, once, in the order described in the
    /// [module docs](self). Items with a non-finite position or reach are
    /// left out.
    pub fn pairs(
        &mut self,
        items: &[Reach],
        accept: impl Fn(u32, u32) -> bool,
        pairs: &mut Vec<(u32, u32)>,
    ) {
        let cells = self.lay_out(items);
        self.cell_pairs(items, 0..cells, &accept, pairs);
        self.large_pairs(items, &accept, pairs);
    }

    /// Lays `items` out in the grid; returns how many cells they occupy.
    pub fn lay_out(&mut self, items: &[Reach]) -> usize {
        self.entries.clear();
        self.cells.clear();
        self.large.clear();
        self.offsets.clear();
        let usable =
            |item: &Reach| item.pos.is_finite() && item.reach.is_finite() && item.reach >= 0.0;
        let reaches = || items.iter().filter(|item| usable(item)).map(|i| i.reach);
        let (least, most) =
            reaches().fold((f32::INFINITY, 0.0f32), |(l, m), r| (l.min(r), m.max(r)));
        if least == f32::INFINITY {
            // No usable item (a usable reach is finite).
            return 0;
        }
        // Ordinary items reach at most 4 times the median. Where the
        // largest reach is within 4 times the smallest, every item is
        // ordinary (the median is at least the smallest), and the median
        // need not be found.
        let (bound, largest) = if most <= 4.0 * least {
            (most, most)
        } else {
            self.reaches.clear();
            self.reaches.extend(reaches());
            let middle = self.reaches.len() / 2;
            let median = *self
                .reaches
                .select_nth_unstable_by(middle, f32::total_cmp)
                .1;
            let bound = 4.0 * median;
            let largest = (self.reaches.iter().copied())
                .filter(|&r| r <= bound)
                .fold(0.0f32, f32::max);
            (bound, largest)
        };
        let size = (2.0 * largest).max(f32::MIN_POSITIVE);
        let mut flat = [true; 3];
        let mut first: Option<Cell> = None;
        for (i, item) in items.iter().enumerate() {
            if !usable(item) {
                continue;
            }
            if item.reach > bound {
                self.large.push((item.key, i as u32));
                continue;
            }
            let scaled = (item.pos / size).floor();
            let axis = |x: f32| x.clamp(-LIMIT, LIMIT) as i32;
            let cell = [axis(scaled.x), axis(scaled.y), axis(scaled.z)];
            let first = *first.get_or_insert(cell);
            for k in 0..3 {
                flat[k] &= cell[k] == first[k];
            }
            self.entries.push((cell, item.key, i as u32));
        }
        // (The last call's ranks only speed the sort up where the items
        // are the same ones.)
        if self.rank.len() != items.len() {
            self.rank.clear();
        }
        let buffers = (&mut self.scratch, &mut self.counts);
        sort_by_cell(&mut self.entries, &self.rank, buffers);
        self.rank.clear();
        self.rank.resize(items.len(), u32::MAX);
        for (at, &(_, _, i)) in self.entries.iter().enumerate() {
            self.rank[i as usize] = at as u32;
        }
        let mut start = 0;
        while start < self.entries.len() {
            let end = run_end(&self.entries, start);
            self.cells
                .push((self.entries[start].0, start as u32, end as u32));
            start = end;
        }
        self.large.sort_unstable();
        self.offsets = forward_offsets(flat);
        self.cells.len()
    }

    /// The occupied cell at whose start about `share` of the grid's items
    /// lie before (0 for 0, the cell count for 1): where to cut
    /// [`cell_pairs`](Self::cell_pairs) into parts of even work.
    pub fn cut(&self, share: f32) -> usize {
        let at = (share.clamp(0.0, 1.0) * self.entries.len() as f32) as u32;
        self.cells.partition_point(|&(_, start, _)| start < at)
    }

    /// Appends the pairs of the occupied cells `cells` (indices in cell
    /// order, after [`lay_out`](Self::lay_out)) with themselves and their
    /// following neighbours, as [`pairs`](Self::pairs) does.
    pub fn cell_pairs(
        &self,
        items: &[Reach],
        cells: core::ops::Range<usize>,
        accept: &impl Fn(u32, u32) -> bool,
        pairs: &mut Vec<(u32, u32)>,
    ) {
        let Some(&(first, _, _)) = self.cells.get(cells.start) else {
            return;
        };
        let mut test = |i: u32, j: u32| {
            if near(&items[i as usize], &items[j as usize]) && accept(i, j) {
                pairs.push((i, j));
            }
        };
        // One cursor into the cells for each offset: adding an offset keeps
        // the cells' order, so each cursor only moves on.
        let mut cursors = [0usize; 13];
        for (cursor, offset) in cursors.iter_mut().zip(&self.offsets) {
            let next = add(first, *offset);
            *cursor = self.cells.partition_point(|c| c.0 < next);
        }
        for &(cell, start, end) in &self.cells[cells.start..cells.end.min(self.cells.len())] {
            let own = &self.entries[start as usize..end as usize];
            for (n, &(_, _, i)) in own.iter().enumerate() {
                for &(_, _, j) in &own[n + 1..] {
                    test(i, j);
                }
            }
            for (cursor, offset) in cursors.iter_mut().zip(&self.offsets) {
                let next = add(cell, *offset);
                while self.cells.get(*cursor).is_some_and(|c| c.0 < next) {
                    *cursor += 1;
                }
                let Some(&(found, from, to)) = self.cells.get(*cursor) else {
                    continue;
                };
                if found != next {
                    continue;
                }
                for &(_, _, i) in own {
                    for &(_, _, j) in &self.entries[from as usize..to as usize] {
                        test(i, j);
                    }
                }
            }
        }
    }

    /// The class of a pair `(i, j)` that [`cell_pairs`](Self::cell_pairs)
    /// or [`large_pairs`](Self::large_pairs) gave since the last
    /// [`lay_out`](Self::lay_out): 0 for two items of one cell,
    /// `9·dx + 3·dy + dz` (1 to 13, in the order `cell_pairs` visits the
    /// neighbours) for `j` in the neighbour `(dx, dy, dz)` after `i`'s
    /// cell, and [`LARGE`] for a pair with an item kept out of the grid
    /// (or any other pair).
    pub fn class_of(&self, i: u32, j: u32) -> u8 {
        let cell = |i: u32| {
            let rank = *self.rank.get(i as usize)?;
            self.entries.get(rank as usize).map(|entry| entry.0)
        };
        let (Some(a), Some(b)) = (cell(i), cell(j)) else {
            return LARGE;
        };
        // Cells lie within ±2³⁰, so the differences do not overflow.
        let class = 9 * (b[0] - a[0]) + 3 * (b[1] - a[1]) + (b[2] - a[2]);
        match u8::try_from(class) {
            Ok(class) if class < LARGE => class,
            _ => LARGE,
        }
    }

    /// Appends the pairs of the items kept out of the grid (after every
    /// cell's, in [`pairs`](Self::pairs)).
    pub fn large_pairs(
        &self,
        items: &[Reach],
        accept: &impl Fn(u32, u32) -> bool,
        pairs: &mut Vec<(u32, u32)>,
    ) {
        let mut test = |i: u32, j: u32| {
            if near(&items[i as usize], &items[j as usize]) && accept(i, j) {
                pairs.push((i, j));
            }
        };
        for (n, &(_, i)) in self.large.iter().enumerate() {
            for &(_, _, j) in &self.entries {
                test(i, j);
            }
            for &(_, j) in &self.large[n + 1..] {
                test(i, j);
            }
        }
    }
}

/// The class of a pair with an item kept out of the grid (see
/// [`BroadPhase::class_of`]), after every neighbour's.
pub const LARGE: u8 = 14;

/// Orders `items` by their `class` (below [`LARGE`] or equal to it),
/// keeping the order within a class: a stable counting sort, in linear
/// time. `scratch` is a buffer kept between calls.
pub fn by_class<T: Copy>(items: &mut [T], class: impl Fn(&T) -> u8, scratch: &mut Vec<T>) {
    let mut starts = [0usize; LARGE as usize + 2];
    for item in items.iter() {
        starts[usize::from(class(item).min(LARGE)) + 1] += 1;
    }
    if starts.iter().filter(|&&n| n > 0).count() < 2 {
        // One class (or none): already in order.
        return;
    }
    for k in 1..starts.len() {
        starts[k] += starts[k - 1];
    }
    scratch.clear();
    scratch.extend_from_slice(items);
    for item in scratch.iter() {
        let at = &mut starts[usize::from(class(item).min(LARGE))];
        items[*at] = *item;
        *at += 1;
    }
}

/// Sorts `entries` by cell, then key, then item, as `sort_unstable` does.
///
/// Where the occupied cells' bounding box holds at most [`DENSE`] cells
/// per entry (a pile, a cloth, a heap), in linear time: a stable counting
/// sort by the cell's place in the box (its lexicographic order), then
/// each cell's few entries by key. A sparse scene (items spread over a
/// volume far larger than they fill: ropes hanging apart) is sorted by
/// comparison, starting from the last call's order (`rank`: each item's
/// place in the last sorted entries, or empty): a scene moves little from
/// step to step, and the adaptive sort takes nearly sorted runs in about
/// linear time. The result does not depend on the entries' order before.
/// `scratch` and `counts` are kept between calls.
fn sort_by_cell(
    entries: &mut Vec<(Cell, u64, u32)>,
    rank: &[u32],
    (scratch, counts): (&mut Vec<(Cell, u64, u32)>, &mut Vec<u32>),
) {
    let Some(&(first, _, _)) = entries.first() else {
        return;
    };
    let (mut low, mut high) = (first, first);
    for &(cell, _, _) in entries.iter() {
        for k in 0..3 {
            low[k] = low[k].min(cell[k]);
            high[k] = high[k].max(cell[k]);
        }
    }
    let span = [0, 1, 2].map(|k| (i64::from(high[k]) - i64::from(low[k]) + 1) as u64);
    let box_cells = span[0]
        .checked_mul(span[1])
        .and_then(|cells| cells.checked_mul(span[2]));
    let limit = (DENSE * entries.len() as u64).max(4096);
    let Some(box_cells) = box_cells.filter(|&cells| cells <= limit) else {
        in_last_order(entries, rank, scratch);
        entries.sort();
        return;
    };
    // The cell's place in the box: lexicographic order of (x, y, z).
    let place = |cell: Cell| {
        let d = [0, 1, 2].map(|k| (i64::from(cell[k]) - i64::from(low[k])) as usize);
        (d[0] * span[1] as usize + d[1]) * span[2] as usize + d[2]
    };
    counts.clear();
    counts.resize(box_cells as usize + 1, 0);
    for &(cell, _, _) in entries.iter() {
        counts[place(cell) + 1] += 1;
    }
    for i in 1..counts.len() {
        counts[i] += counts[i - 1];
    }
    scratch.clear();
    scratch.resize(entries.len(), NONE);
    for &entry in entries.iter() {
        let at = &mut counts[place(entry.0)];
        scratch[*at as usize] = entry;
        *at += 1;
    }
    core::mem::swap(entries, scratch);
    // Each cell's run by key (then item): runs are a few entries long.
    let mut start = 0;
    while start < entries.len() {
        let end = run_end(entries, start);
        entries[start..end].sort_unstable();
        start = end;
    }
}

/// Where the run of `entries` (grouped by cell) that shares the cell of
/// entry `start` ends.
#[inline]
fn run_end(entries: &[(Cell, u64, u32)], start: usize) -> usize {
    let cell = entries[start].0;
    start
        + entries[start..]
            .iter()
            .take_while(|entry| entry.0 == cell)
            .count()
}

/// An empty place in [`in_last_order`]'s buffer.
const NONE: (Cell, u64, u32) = ([0; 3], 0, u32::MAX);

/// Puts `entries` in the order of their items' `rank` (see
/// [`sort_by_cell`]), those without one after, in linear time.
fn in_last_order(
    entries: &mut Vec<(Cell, u64, u32)>,
    rank: &[u32],
    scratch: &mut Vec<(Cell, u64, u32)>,
) {
    if rank.is_empty() {
        return;
    }
    let ranked = |i: u32| rank.get(i as usize).copied().unwrap_or(u32::MAX);
    let places = entries
        .iter()
        .map(|e| ranked(e.2))
        .filter(|&r| r != u32::MAX)
        .max()
        .map_or(0, |r| r as usize + 1);
    scratch.clear();
    scratch.resize(places, NONE);
    let mut rest = Vec::new();
    for &entry in entries.iter() {
        match ranked(entry.2) {
            u32::MAX => rest.push(entry),
            r => scratch[r as usize] = entry,
        }
    }
    entries.clear();
    entries.extend(scratch.iter().filter(|e| e.2 != u32::MAX));
    entries.extend(rest);
}

/// The most cells per entry in the occupied cells' bounding box for which
/// [`sort_by_cell`] counts rather than compares.
const DENSE: u64 = 8;

/// `cell + offset`.
fn add(cell: Cell, offset: Cell) -> Cell {
    [0, 1, 2].map(|k| cell[k] + offset[k])
}

/// The neighbouring cells after a cell (offsets greater than zero in
/// lexicographic order), leaving out every offset along an axis on which
/// all items share one cell.
fn forward_offsets(flat: [bool; 3]) -> Vec<[i32; 3]> {
    let range = |k: usize| if flat[k] { 0..=0 } else { -1..=1 };
    let mut offsets = Vec::with_capacity(13);
    for x in range(0) {
        for y in range(1) {
            for z in range(2) {
                if [x, y, z] > [0, 0, 0] {
                    offsets.push([x, y, z]);
                }
            }
        }
    }
    offsets
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every near pair, by brute force, as sorted `(min, max)` indices.
    fn brute(items: &[Reach]) -> Vec<(u32, u32)> {
        let mut pairs = Vec::new();
        for i in 0..items.len() {
            for j in i + 1..items.len() {
                if near(&items[i], &items[j]) {
                    pairs.push((i as u32, j as u32));
                }
            }
        }
        pairs
    }

    fn sorted(pairs: &[(u32, u32)]) -> Vec<(u32, u32)> {
        let mut pairs: Vec<_> = pairs.iter().map(|&(a, b)| (a.min(b), a.max(b))).collect();
        pairs.sort_unstable();
        pairs
    }

    /// A small deterministic generator.
    fn scatter(n: usize, spread: f32, seed: u64, flat: bool) -> Vec<Reach> {
        let mut s = seed;
        let mut next = move || {
            s = s
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            ((s >> 40) as f32) / (1u64 << 24) as f32
        };
        (0..n)
            .map(|i| Reach {
                pos: Vec3A::new(
                    next() * spread - spread / 2.0,
                    next() * spread,
                    if flat { 0.0 } else { next() * spread },
                ),
                reach: 0.05 + 0.1 * next(),
                key: (i as u64 * 7919) % 1000,
            })
            .collect()
    }

    /// The grid finds exactly the near pairs, each once, in 2D and 3D, with
    /// a few large items among them.
    #[test]
    fn finds_every_near_pair_once() {
        for (flat, seed) in [(true, 1), (false, 2), (true, 3), (false, 4)] {
            let mut items = scatter(600, 4.0, seed, flat);
            items[5].reach = 1.5;
            items[17].reach = 3.0;
            let mut broad = BroadPhase::default();
            let mut pairs = Vec::new();
            broad.pairs(&items, |_, _| true, &mut pairs);
            let found = sorted(&pairs);
            let mut unique = found.clone();
            unique.dedup();
            assert_eq!(found, unique, "a pair came out twice");
            assert_eq!(found, brute(&items));
            assert!(!found.is_empty());
        }
    }

    /// The order of the pairs, read as keys, does not depend on the order
    /// of the items.
    #[test]
    fn the_order_follows_keys_not_indices() {
        let mut items = scatter(300, 2.0, 9, true);
        for (i, item) in items.iter_mut().enumerate() {
            item.key = i as u64;
        }
        let mut broad = BroadPhase::default();
        let as_keys = |items: &[Reach], pairs: &[(u32, u32)]| -> Vec<(u64, u64)> {
            pairs
                .iter()
                .map(|&(a, b)| (items[a as usize].key, items[b as usize].key))
                .collect()
        };
        let mut pairs = Vec::new();
        broad.pairs(&items, |_, _| true, &mut pairs);
        let first = as_keys(&items, &pairs);
        items.reverse();
        pairs.clear();
        broad.pairs(&items, |_, _| true, &mut pairs);
        assert_eq!(as_keys(&items, &pairs), first);
    }

    /// Non-finite items and a huge reach neither panic nor pair wrongly.
    #[test]
    fn bad_items_are_left_out() {
        let mut items = scatter(50, 1.0, 5, false);
        items[0].pos = Vec3A::NAN;
        items[1].reach = f32::INFINITY;
        items[2].reach = 1e30;
        items[3].pos = Vec3A::splat(1e30);
        let mut broad = BroadPhase::default();
        let mut pairs = Vec::new();
        broad.pairs(&items, |_, _| true, &mut pairs);
        assert!(pairs.iter().all(|&(a, b)| a > 1 && b > 1));
        // The huge one touches every other finite item near the origin.
        assert!(pairs.iter().filter(|&&(a, b)| a == 2 || b == 2).count() >= 40);
    }

    /// Cut into parts at [`BroadPhase::cut`], the cells' pairs and then the
    /// large items' give exactly what one call gives, in the same order.
    #[test]
    fn parts_give_the_order_of_one_call() {
        for (flat, seed) in [(true, 11), (false, 12)] {
            let mut items = scatter(2000, 3.0, seed, flat);
            items[7].reach = 2.0;
            let mut broad = BroadPhase::default();
            let mut whole = Vec::new();
            broad.pairs(&items, |_, _| true, &mut whole);
            let cells = broad.lay_out(&items);
            let mut cuts: Vec<usize> = (0..=5).map(|k| broad.cut(k as f32 / 5.0)).collect();
            cuts[5] = cells;
            assert!(
                cuts.windows(2).all(|w| w[0] < w[1]),
                "uneven cuts: {cuts:?}"
            );
            let mut parts = Vec::new();
            for w in cuts.windows(2) {
                broad.cell_pairs(&items, w[0]..w[1], &|_, _| true, &mut parts);
            }
            broad.large_pairs(&items, &|_, _| true, &mut parts);
            assert_eq!(parts, whole);
            assert_eq!(sorted(&whole), brute(&items));
        }
    }

    /// The counting sort orders the entries exactly as a comparison sort
    /// does: dense and sparse, flat and not, with cells beyond the clamp.
    #[test]
    fn the_counting_sort_gives_the_sorted_order() {
        for (n, spread, flat, seed) in [
            (2000, 3.0, true, 21),
            (2000, 3.0, false, 22),
            (50, 1e6, false, 23),
            (1, 1.0, true, 24),
        ] {
            let items = scatter(n, spread, seed, flat);
            let mut entries: Vec<(Cell, u64, u32)> = items
                .iter()
                .enumerate()
                .map(|(i, item)| {
                    let c = (item.pos / 0.1).floor();
                    ([c.x as i32, c.y as i32, c.z as i32], item.key, i as u32)
                })
                .collect();
            if n > 2 {
                entries[1].0 = [i32::MIN / 2, 0, 0];
                entries[2].0 = [0, i32::MAX / 2, 0];
            }
            let mut expected = entries.clone();
            expected.sort_unstable();
            let (mut scratch, mut counts) = (Vec::new(), Vec::new());
            sort_by_cell(&mut entries, &[], (&mut scratch, &mut counts));
            assert_eq!(entries, expected);
            // From a stale order (every other item's rank, reversed): the
            // same.
            let mut again = expected.clone();
            again.reverse();
            let rank: Vec<u32> = (0..n as u32)
                .map(|i| if i % 2 == 0 { n as u32 - i } else { u32::MAX })
                .collect();
            sort_by_cell(&mut again, &rank, (&mut scratch, &mut counts));
            assert_eq!(again, expected);
            // Dense without the far entries: counted, the same order.
            let mut dense: Vec<_> = expected
                .iter()
                .copied()
                .filter(|e| e.0[0].abs() < 1000 && e.0[1].abs() < 1000)
                .rev()
                .collect();
            let mut sorted = dense.clone();
            sorted.sort_unstable();
            sort_by_cell(&mut dense, &[], (&mut scratch, &mut counts));
            assert_eq!(dense, sorted);
        }
    }

    /// Each pair's class is the direction from its first item's cell to
    /// its second's, `9·dx + 3·dy + dz`, with the cells worked out here
    /// from the cell size the module docs give (twice the largest reach,
    /// all reaches equal); a pair with an item kept out of the grid is
    /// [`LARGE`]. In 2D and 3D, several classes show up.
    #[test]
    fn classes_are_the_directions_between_cells() {
        for (flat, seed) in [(true, 31), (false, 32)] {
            let mut items = scatter(800, 3.0, seed, flat);
            for item in &mut items {
                item.reach = 0.1;
            }
            items[3].reach = 1.0;
            let mut broad = BroadPhase::default();
            let mut pairs = Vec::new();
            broad.pairs(&items, |_, _| true, &mut pairs);
            let cell = |i: u32| (items[i as usize].pos / (2.0 * 0.1)).floor();
            let mut seen = [0usize; LARGE as usize + 1];
            for &(i, j) in &pairs {
                let class = broad.class_of(i, j);
                seen[class as usize] += 1;
                if i == 3 || j == 3 {
                    assert_eq!(class, LARGE, "({i}, {j})");
                    continue;
                }
                let d = cell(j) - cell(i);
                let expected = 9.0 * d.x + 3.0 * d.y + d.z;
                assert!((0.0..=13.0).contains(&expected), "({i}, {j}): {d}");
                assert_eq!(f32::from(class), expected, "({i}, {j})");
            }
            let classes = seen.iter().filter(|&&n| n > 0).count();
            assert!(classes >= if flat { 5 } else { 10 }, "{seen:?}");
            assert!(seen[LARGE as usize] > 0);
        }
    }

    /// An item reaching 4 times the median is ordinary (in the grid, whose
    /// cells it then sizes); one reaching a little more is kept out of it.
    /// Both ways the pairs are exactly the near ones.
    #[test]
    fn items_beyond_four_times_the_median_are_kept_out() {
        for (most, out) in [(0.4, false), (0.4001, true)] {
            let mut items = scatter(400, 3.0, 41, true);
            for item in &mut items {
                item.reach = 0.1;
            }
            items[9].reach = most;
            let mut broad = BroadPhase::default();
            let mut pairs = Vec::new();
            broad.pairs(&items, |_, _| true, &mut pairs);
            assert_eq!(sorted(&pairs), brute(&items));
            let of_nine: Vec<u8> = (pairs.iter())
                .filter(|&&(i, j)| i == 9 || j == 9)
                .map(|&(i, j)| broad.class_of(i, j))
                .collect();
            assert!(!of_nine.is_empty());
            // Every pair of it is `LARGE` when it is kept out, none when not.
            assert!(
                of_nine.iter().all(|&c| (c == LARGE) == out),
                "{most}: {of_nine:?}"
            );
        }
    }

    /// [`by_class`] orders items as a stable sort by class does: by class,
    /// each class in the order before.
    #[test]
    fn by_class_is_a_stable_sort_by_class() {
        let mut s = 7u64;
        let mut next = move || {
            s = s
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (s >> 33) as u32
        };
        let mut scratch = Vec::new();
        for (n, classes) in [(500, 15), (40, 3), (1, 15), (0, 15), (30, 1)] {
            let items: Vec<(u8, u32)> = (0..n).map(|i| ((next() % classes) as u8, i)).collect();
            let mut sorted = items.clone();
            sorted.sort_by_key(|item| item.0);
            let mut ordered = items.clone();
            by_class(&mut ordered, |item| item.0, &mut scratch);
            assert_eq!(ordered, sorted);
        }
    }

    /// `accept` filters pairs.
    #[test]
    fn accept_filters() {
        let items = scatter(200, 1.0, 6, true);
        let mut broad = BroadPhase::default();
        let mut pairs = Vec::new();
        broad.pairs(&items, |a, b| (a + b) % 2 == 0, &mut pairs);
        let expected: Vec<_> = brute(&items)
            .into_iter()
            .filter(|(a, b)| (a + b) % 2 == 0)
            .collect();
        assert_eq!(sorted(&pairs), expected);
    }
}

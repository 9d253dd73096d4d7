//! Blocks of contacts that share no moving body, so that a large pile's
//! contacts can be solved on several threads with the bits of one.
//!
//! Sequential impulses solve contacts one after another, each on the
//! velocities the ones before it left. Two runs of contacts that share no
//! moving body do not see each other: solved one after the other, or at
//! once, they give the same bits. [`split`] cuts a step's pairs, in the
//! broad phase's order (by grid cell, so a run of them is a region of the
//! scene), into blocks of about equal size, and takes out of each block
//! the pairs that reach a body another block also reaches: the blocks then
//! share no moving body and may be solved at once, each in its own order,
//! and the pairs taken out are solved after them, in order. Most pairs keep
//! their place in the order, so a round converges as the uncut order does.
//! (The contact solver then orders each large batch by direction, see
//! [`by_class`](super::broad::by_class); that keeps every pair in its
//! batch.)
//! The cut depends on the pairs alone, never on the thread count, so one
//! thread solves the same batches in the same order as many.
//!
//! A fixed body is only read by a contact (its inverse mass is 0 and its
//! velocity is never written), so it does not count: pairs of every block
//! may lean on the same fixed ball.

use core::ops::Range;
use core::sync::atomic::{AtomicU32, AtomicUsize, Ordering};
use std::sync::{Mutex, PoisonError};

use bevy::math::Vec3A;

/// At most this many blocks a step: enough for as many threads.
pub const MAX_BLOCKS: usize = 16;

/// A run of rows (or of the contacts found on them).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Batch {
    pub rows: Range<usize>,
    /// Joined to the batch before it: it shares no moving body with the
    /// batches of its stage (the last batch that is not joined, and those
    /// joined after it), and may run at once with them.
    pub joined: bool,
}

/// Buffers kept between steps, so that splitting allocates nothing once
/// warm.
#[derive(Debug, Default)]
pub struct Blocks {
    /// Per slot: the block that reaches its moving body, [`NOBODY`] or
    /// [`SHARED`] (written by the blocks at once).
    owners: Vec<AtomicU32>,
}

impl Blocks {
    /// Room for slots `0..slots`: [`split`] needs every moving end below
    /// what its buffers cover.
    pub fn cover(&mut self, slots: usize) {
        if self.owners.len() < slots {
            self.owners.resize_with(slots, || AtomicU32::new(NOBODY));
        }
    }
}

const NOBODY: u32 = u32::MAX;
const SHARED: u32 = u32::MAX - 1;

/// How [`split`] runs its jobs: `each(n, f)` calls `f` once on each of
/// `0..n`, in any order, maybe at once on several threads ([`in_turn`]
/// on this one).
pub type Each<'a> = &'a dyn Fn(usize, &(dyn Fn(usize) + Sync));

/// Calls `f` on each of `0..n` in turn, on this thread.
#[cfg(test)]
pub fn in_turn(n: usize, f: &(dyn Fn(usize) + Sync)) {
    (0..n).for_each(f);
}

/// Marks `owner`'s body as reached by `block`: its block if none other
/// reaches it, [`SHARED`] once two do (the same whatever the order).
fn claim(owner: &AtomicU32, block: u32) {
    let mut now = owner.load(Ordering::Relaxed);
    loop {
        let new = match now {
            NOBODY => block,
            own if own == block || own == SHARED => return,
            _ => SHARED,
        };
        match owner.compare_exchange_weak(now, new, Ordering::Relaxed, Ordering::Relaxed) {
            Ok(_) => return,
            Err(was) => now = was,
        }
    }
}

/// Appends `src`'s rows (each `row(item)`) to `out`, cut into blocks of at
/// least `per_block` rows (at most [`MAX_BLOCKS`]; fewer than two such
/// blocks: one batch, in `src`'s order), each block's shared pairs moved
/// after all blocks, stably, and lists the batches into `batches` (cleared
/// first; their rows counted from where `out` started): the blocks, joined,
/// then the shared pairs. `ends(row)` gives a row's two slots,
/// `moving(slot)` whether that body moves; `buffers` must
/// [`cover`](Blocks::cover) every moving end. Each block's rows are read and
/// written by a job of `each` (the blocks at once, on several threads if it
/// runs them so), with the same result however they run.
#[allow(clippy::too_many_arguments)]
pub fn split<T: Sync, R: Copy + Send + Sync>(
    src: &[T],
    row: impl Fn(&T) -> R + Sync,
    ends: impl Fn(&R) -> (u32, u32) + Sync,
    moving: impl Fn(u32) -> bool + Sync,
    per_block: usize,
    buffers: &mut Blocks,
    (out, batches): (&mut Vec<R>, &mut Vec<Batch>),
    each: Each,
) {
    batches.clear();
    let len = src.len();
    let k = (len / per_block.max(1)).min(MAX_BLOCKS);
    if k < 2 {
        out.extend(src.iter().map(&row));
        if len > 0 {
            batches.push(Batch {
                rows: 0..len,
                joined: false,
            });
        }
        return;
    }
    // Row `i` is in block `i·k / len`.
    let block = |b: usize| &src[(b * len).div_ceil(k)..((b + 1) * len).div_ceil(k)];
    let moving_ends = |item: &T| {
        let (a, b) = ends(&row(item));
        [a, b].into_iter().filter(|&s| moving(s))
    };
    let owners = &buffers.owners[..];
    each(k, &|b| {
        for s in block(b).iter().flat_map(moving_ends) {
            claim(&owners[s as usize], b as u32);
        }
    });
    let inside = |item: &T, b: usize| {
        moving_ends(item).all(|s| owners[s as usize].load(Ordering::Relaxed) == b as u32)
    };
    let counts: [AtomicUsize; MAX_BLOCKS] = core::array::from_fn(|_| AtomicUsize::new(0));
    each(k, &|b| {
        let n = block(b).iter().filter(|item| inside(item, b)).count();
        counts[b].store(n, Ordering::Relaxed);
    });
    let counts = counts.map(AtomicUsize::into_inner);
    let within: usize = counts.iter().sum();
    let mut at = 0;
    for &count in &counts[..k] {
        if count > 0 {
            // Blocks after the first run at once with the ones before.
            batches.push(Batch {
                rows: at..at + count,
                joined: at > 0,
            });
        }
        at += count;
    }
    if within < len {
        batches.push(Batch {
            rows: within..len,
            joined: false,
        });
    }
    // Each block's rows inside it, and those it shares, each to their run.
    let base = out.len();
    out.resize(base + len, row(&src[0]));
    let (mut blocks, mut shared) = out[base..].split_at_mut(within);
    // Each block's two runs of `out`, for its job to take.
    type Runs<'a, R> = Mutex<Option<(&'a mut [R], &'a mut [R])>>;
    let runs: [Runs<R>; MAX_BLOCKS] = core::array::from_fn(|b| {
        if b >= k {
            return Mutex::new(None);
        }
        let (own, rest) = core::mem::take(&mut blocks).split_at_mut(counts[b]);
        blocks = rest;
        let others = block(b).len() - counts[b];
        let (theirs, rest) = core::mem::take(&mut shared).split_at_mut(others);
        shared = rest;
        Mutex::new(Some((own, theirs)))
    });
    each(k, &|b| {
        let taken = runs[b]
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take();
        let Some((own, theirs)) = taken else {
            return;
        };
        let (mut i, mut j) = (0, 0);
        for item in block(b) {
            if inside(item, b) {
                own[i] = row(item);
                i += 1;
            } else {
                theirs[j] = row(item);
                j += 1;
            }
        }
    });
    each(k, &|b| {
        for s in block(b).iter().flat_map(moving_ends) {
            owners[s as usize].store(NOBODY, Ordering::Relaxed);
        }
    });
}

/// Runs work over batches, maybe running joined ones on several threads
/// at once.
///
/// # Safety
///
/// [`solve_pairs`](super::constraints) writes velocities from the runs at
/// once through [`SharedVelocities`], so an implementation must call `f`
/// on each batch's rows exactly once, and at the same time as another call
/// only for batches of one *stage* (a batch that is not joined and the
/// batches joined after it): every call of a stage returns before a call of
/// the next stage begins.
pub unsafe trait Spread: Sync {
    /// Calls `f` on each batch's rows, stage after stage (see the trait's
    /// docs).
    fn spread(&self, batches: &[Batch], f: &(dyn Fn(Range<usize>) + Sync));
}

/// [`Spread`] on the calling thread alone, batch after batch.
pub struct OneThread;

// SAFETY: one call at a time, each batch once, in order.
unsafe impl Spread for OneThread {
    fn spread(&self, batches: &[Batch], f: &(dyn Fn(Range<usize>) + Sync)) {
        for batch in batches {
            f(batch.rows.clone());
        }
    }
}

/// Velocities that joined batches of contacts update from several threads
/// at once.
///
/// The contacts of each batch write only moving bodies that no joined
/// batch reads or writes, and read fixed bodies, which no contact writes;
/// so no slot is written by one thread while another touches it. [`SharedVelocities::get`] and
/// [`SharedVelocities::set`] rely on that, and are used nowhere else.
pub struct SharedVelocities<'a> {
    ptr: *mut Vec3A,
    len: usize,
    _borrow: core::marker::PhantomData<&'a mut [Vec3A]>,
}

// SAFETY: see the type's docs: joined batches touch disjoint moving
// slots, and only read the rest.
unsafe impl Sync for SharedVelocities<'_> {}

impl<'a> SharedVelocities<'a> {
    /// Borrows `vel` for the length of one batch.
    pub fn new(vel: &'a mut [Vec3A]) -> Self {
        Self {
            ptr: vel.as_mut_ptr(),
            len: vel.len(),
            _borrow: core::marker::PhantomData,
        }
    }

    /// The velocity of `slot`.
    ///
    /// # Safety
    /// `slot` is below the slice's length (the caller checks its slots once,
    /// outside its hot loop), and no other thread writes it meanwhile (see
    /// the type's docs).
    #[inline(always)]
    pub unsafe fn get(&self, slot: usize) -> Vec3A {
        debug_assert!(slot < self.len);
        // SAFETY: in bounds and not written by another thread (the
        // caller's promise).
        unsafe { *self.ptr.add(slot) }
    }

    /// Sets the velocity of `slot`.
    ///
    /// # Safety
    /// `slot` is below the slice's length, and no other thread reads or
    /// writes it meanwhile.
    #[inline(always)]
    pub unsafe fn set(&self, slot: usize, value: Vec3A) {
        debug_assert!(slot < self.len);
        // SAFETY: in bounds and touched by this thread alone (the caller's
        // promise).
        unsafe { *self.ptr.add(slot) = value }
    }
}

/// Items of a slice that threads take disjoint runs of.
pub struct SharedSlice<'a, T> {
    ptr: *mut T,
    len: usize,
    _borrow: core::marker::PhantomData<&'a mut [T]>,
}

// SAFETY: each thread takes a run no other thread takes (`Spread`'s runs
// are disjoint), and `T` is sent to it.
unsafe impl<T: Send> Sync for SharedSlice<'_, T> {}

impl<'a, T> SharedSlice<'a, T> {
    pub fn new(items: &'a mut [T]) -> Self {
        Self {
            ptr: items.as_mut_ptr(),
            len: items.len(),
            _borrow: core::marker::PhantomData,
        }
    }

    /// The items of `run`.
    ///
    /// # Safety
    /// No other borrow of any of them is alive (runs handed out are
    /// disjoint).
    #[allow(clippy::mut_from_ref)]
    pub unsafe fn run(&self, run: Range<usize>) -> &'a mut [T] {
        assert!(run.start <= run.end && run.end <= self.len);
        // SAFETY: in bounds (checked); disjoint from every other run.
        unsafe { core::slice::from_raw_parts_mut(self.ptr.add(run.start), run.len()) }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A deterministic pseudo-random sequence.
    fn lcg(seed: &mut u64) -> u32 {
        *seed = seed
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        (*seed >> 33) as u32
    }

    /// The batches cover the rows, every row once; joined batches share no
    /// moving body (a fixed one may be shared); each batch keeps the rows'
    /// order; most rows stay in their block; and the buffers come back
    /// clean (the same rows cut the same way again).
    #[test]
    fn joined_blocks_share_no_moving_body_and_keep_order() {
        let mut seed = 7;
        let moving = |slot: u32| !slot.is_multiple_of(10);
        // Pairs of nearby slots, in slot order (as the broad phase's
        // cells order them), with a few reaching far.
        let rows: Vec<(u32, u32, usize)> = (0..5_000)
            .map(|i| {
                let a = (i as u32 * 4000 / 5000) + lcg(&mut seed) % 3;
                let far = lcg(&mut seed).is_multiple_of(50);
                let b = if far {
                    lcg(&mut seed) % 4000
                } else {
                    a + 1 + lcg(&mut seed) % 6
                };
                (a, b, i)
            })
            .collect();
        let before = rows;
        let (mut buffers, mut batches) = (Blocks::default(), Vec::new());
        buffers.cover(
            before
                .iter()
                .map(|r| r.0.max(r.1) as usize + 1)
                .max()
                .unwrap(),
        );
        let cut_by = |buffers: &mut Blocks, batches: &mut Vec<Batch>, each: Each| {
            let mut out = vec![(0, 0, 0)];
            split(
                &before,
                |&r| r,
                |r| (r.0, r.1),
                moving,
                500,
                buffers,
                (&mut out, batches),
                each,
            );
            out.remove(0);
            out
        };
        let cut =
            |buffers: &mut Blocks, batches: &mut Vec<Batch>| cut_by(buffers, batches, &in_turn);
        let rows = cut(&mut buffers, &mut batches);
        let mut seen: Vec<usize> = rows.iter().map(|r| r.2).collect();
        seen.sort_unstable();
        assert_eq!(seen, (0..before.len()).collect::<Vec<_>>());
        assert_eq!(batches.len(), MAX_BLOCKS.min(10) + 1);
        assert_eq!(batches.first().unwrap().rows.start, 0);
        assert_eq!(batches.last().unwrap().rows.end, rows.len());
        assert!(!batches[0].joined && !batches.last().unwrap().joined);
        assert!(batches[1..batches.len() - 1].iter().all(|b| b.joined));
        for pair in batches.windows(2) {
            assert_eq!(pair[0].rows.end, pair[1].rows.start);
        }
        for batch in &batches {
            let run = &rows[batch.rows.clone()];
            assert!(run.windows(2).all(|w| w[0].2 < w[1].2), "order kept");
        }
        let shared = batches.last().unwrap().rows.len();
        assert!(shared < rows.len() / 5, "{shared} rows shared");
        let mut owner = std::collections::HashMap::new();
        let mut fixed_shared = false;
        for (b, batch) in batches[..batches.len() - 1].iter().enumerate() {
            for row in &rows[batch.rows.clone()] {
                for slot in [row.0, row.1] {
                    let was = *owner.entry(slot).or_insert(b);
                    if moving(slot) {
                        assert_eq!(was, b, "slot {slot} in blocks {was} and {b}");
                    } else if was != b {
                        fixed_shared = true;
                    }
                }
            }
        }
        assert!(fixed_shared, "the test's fixed bodies were never shared");
        let mut again_batches = Vec::new();
        assert_eq!(cut(&mut buffers, &mut again_batches), rows);
        assert_eq!(again_batches, batches);
        // The blocks' jobs backwards, and each on a thread of its own: the
        // same cut.
        let backwards = |n: usize, f: &(dyn Fn(usize) + Sync)| (0..n).rev().for_each(f);
        let threads = |n: usize, f: &(dyn Fn(usize) + Sync)| {
            std::thread::scope(|scope| {
                for b in 0..n {
                    scope.spawn(move || f(b));
                }
            });
        };
        for each in [&backwards as Each, &threads] {
            let mut other = Vec::new();
            assert_eq!(cut_by(&mut buffers, &mut other, each), rows);
            assert_eq!(other, batches);
        }
    }

    /// Fewer rows than two blocks: one batch, the rows as they were.
    #[test]
    fn a_small_step_is_one_batch_in_its_order() {
        let before: Vec<(u32, u32)> = (0..300).map(|i| (i, i + 1)).collect();
        let (mut rows, mut batches) = (Vec::new(), Vec::new());
        split(
            &before,
            |&r| r,
            |r| (r.0, r.1),
            |_| true,
            200,
            &mut Blocks::default(),
            (&mut rows, &mut batches),
            &in_turn,
        );
        assert_eq!(rows, before);
        assert_eq!(
            batches,
            [Batch {
                rows: 0..300,
                joined: false
            }]
        );
    }
}

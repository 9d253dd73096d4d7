//! Contacts between round bodies: which pairs are within reach in this
//! step, and whether the islands still follow them.
//!
//! Two round bodies are *within reach* when
//! `|x_a − x_b| < reach_a + reach_b`, with `reach = 1.1·r + h·|v|` (see
//! [`reach`]): touching, nearly touching, or about to within the step.
//! Bodies within reach share an island, so islands are a function of the
//! bodies' positions and velocities alone: the rebuild joins them
//! ([`rebuild`](super::rebuild), stage 2), and a snapshot restore or a
//! rollback, which rebuilds, finds the islands the run it came from had.
//!
//! Once per step, after the rebuild and the bodies your code wrote,
//! [`find_pairs`] runs the broad phase over the round bodies with a slot
//! (and those of sleeping islands, which do not move), keeps the pairs
//! that may touch (not both fixed, not joined directly, in groups that
//! touch) and checks them against the islands: a pair across two islands,
//! a body within reach of a sleeping one, or an island whose bodies no
//! longer hold together means the islands are stale, and
//! [`rebuild_touched`](super::rebuild::rebuild_touched) rebuilds them at
//! once, in the same step, before [`find_pairs_again`] lists the pairs on
//! the new slots. The pairs are kept by pass group in the broad phase's
//! order, which follows entities, not slots, cut into batches that threads
//! may solve at once, and each large batch ordered by class (the direction
//! between the two bodies' cells, see [`lay_out_pairs`]).

use core::sync::atomic::{AtomicBool, Ordering};

use bevy::math::Vec3A;
use bevy::prelude::*;
use bevy::tasks::TaskPool;

use crate::data::constraints::CollisionGroups;
use crate::data::requests::SolverRequests;
use crate::data::settings::PhysicsSettings;
use crate::kernels::batches::{Batch, Blocks, split};
use crate::kernels::broad::{BroadPhase, Reach, by_class};
use crate::kernels::constraints::{Material, PairRow};
use crate::kernels::union_find::UnionFind;
use crate::solver::SolverState;
use crate::solver::par::{JOBS_PER_THREAD, each_over, for_each_part, run_size, split_pool};

/// The fewest pairs in a block of a group's pairs that threads may solve at
/// once: a group of fewer than twice as many keeps its pairs in the broad
/// phase's order, as one batch.
pub(crate) const PAIRS_PER_BLOCK: usize = 2048;

/// The fewest pairs in a batch that [`lay_out_pairs`] orders by class. A
/// batch of fewer keeps the broad phase's order, and so its bits: the
/// ragdoll example's heap (one batch of about 120 pairs) settled a contact
/// 0.22 radii deep when ordered by class. The speed was measured only on
/// piles of 1 000 balls and more; the value was chosen to sit between the
/// two (`docs/performance.md`, session 46).
pub(crate) const CLASSED_FROM: usize = 1024;

/// How far a round body of radius `radius` moving at `vel` reaches in a
/// step of `h`: its radius, a tenth more, and the distance it covers.
#[inline]
pub(crate) fn reach(radius: f32, vel: Vec3A, h: f32) -> f32 {
    1.1 * radius + h * vel.length()
}

/// The key that orders round bodies within a cell of the broad phase: its
/// entity, which a restore keeps.
#[inline]
pub(crate) fn key(entity: Entity) -> u64 {
    entity.to_bits()
}

/// A round body as contacts see it.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Toucher {
    pub entity: Entity,
    pub radius: f32,
    pub material: Material,
    pub groups: CollisionGroups,
}

/// A round body of a sleeping island.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Sleeper {
    pub pos: Vec3A,
    pub reach: f32,
    pub body: Toucher,
}

/// What the last rebuild laid out for contacts.
#[derive(Debug, Default)]
pub(crate) struct Touch {
    /// Round bodies with a slot (awake dynamic and fixed), by slot.
    pub slots: Vec<(u32, Toucher)>,
    /// Round bodies of sleeping islands.
    pub sleepers: Vec<Sleeper>,
    /// Per slot: its island, or `u32::MAX` for a fixed body.
    pub island_of_slot: Vec<u32>,
    /// Per slot `s`, the slots joined to it directly (by a spring or a rod)
    /// are `joined[joined_start[s]..joined_start[s + 1]]`.
    pub joined_start: Vec<u32>,
    pub joined: Vec<u32>,
    /// Whether bodies within reach joined islands that joins alone would
    /// have kept apart (then each step checks that they still hold).
    pub merged: bool,
    /// Set by [`find_pairs`] when the islands no longer follow the pairs.
    pub stale: bool,
    /// Set by the rebuild that follows.
    pub rebuilt: bool,
    items: Vec<Reach>,
    found: Vec<(u32, u32)>,
    /// Each thread's job's pairs and rows, when the broad phase is split.
    parts: Vec<Part>,
    /// Buffers of each step's check, kept to allocate nothing per step.
    rows: Vec<(u32, PairRow)>,
    blocks: Blocks,
    /// One buffer per batch that [`order_by_class`] sorts at once.
    classed: Vec<Vec<PairRow>>,
    touching: Vec<AtomicBool>,
    union: UnionFind,
    seen: Vec<bool>,
}

impl Touch {
    /// Whether slots `a` and `b` are joined directly.
    fn joined(&self, a: u32, b: u32) -> bool {
        let a = a as usize;
        match self.joined_start.get(a..a + 2) {
            Some(&[from, to]) => self.joined[from as usize..to as usize].contains(&b),
            _ => false,
        }
    }
}

/// Start of the fixed step, after the bodies your code wrote: the pairs of
/// round bodies within reach, by group; marks the islands stale when they
/// no longer follow the pairs (see the [module docs](self)).
pub(crate) fn find_pairs(
    mut solver: ResMut<SolverState>,
    mut requests: ResMut<SolverRequests>,
    settings: Res<PhysicsSettings>,
) {
    let stale = list_pairs(&mut solver, settings.parallel_threshold);
    solver.touch.stale = stale;
    if stale {
        requests.dirty = true;
    }
}

/// After [`rebuild_touched`](super::rebuild::rebuild_touched) rebuilt the
/// islands: the pairs on the new slots. (Were they still stale, the next
/// step would rebuild again.)
pub(crate) fn find_pairs_again(
    mut solver: ResMut<SolverState>,
    mut requests: ResMut<SolverRequests>,
    settings: Res<PhysicsSettings>,
) {
    if !core::mem::take(&mut solver.touch.rebuilt) {
        return;
    }
    if list_pairs(&mut solver, settings.parallel_threshold) {
        requests.dirty = true;
    }
}

/// Lists this step's pairs into `solver.pairs` by group; true if the
/// islands are stale. From `threshold` round bodies on, the broad phase's
/// cells are split over the compute threads (the pairs come out in the
/// same order).
fn list_pairs(solver: &mut SolverState, threshold: usize) -> bool {
    let solver = &mut *solver;
    for group in &mut solver.groups {
        group.pairs = 0..0;
        group.pair_batches.clear();
    }
    solver.pairs.clear();
    let touch = &mut solver.touch;
    if touch.slots.is_empty() {
        return false;
    }
    let h = solver.timestep;
    let (pos, vel, valid, inv_mass) = (&solver.pos, &solver.vel, &solver.valid, &solver.inv_mass);
    let mut items = core::mem::take(&mut touch.items);
    let mut found = core::mem::take(&mut touch.found);
    let mut parts = core::mem::take(&mut touch.parts);
    let mut touching = core::mem::take(&mut touch.touching);
    touching.clear();
    touching.resize_with(solver.islands.len(), AtomicBool::default);
    let mut rows = core::mem::take(&mut touch.rows);
    rows.clear();
    items.clear();
    found.clear();
    for &(slot, body) in &touch.slots {
        let s = slot as usize;
        items.push(Reach {
            // An invalid body is left out.
            pos: if valid[s] { pos[s] } else { Vec3A::NAN },
            reach: reach(body.radius, vel[s], h),
            key: key(body.entity),
        });
    }
    items.extend(touch.sleepers.iter().map(|sleeper| Reach {
        pos: sleeper.pos,
        reach: sleeper.reach,
        key: key(sleeper.body.entity),
    }));
    let awake = touch.slots.len() as u32;
    let body = |i: u32| {
        if i < awake {
            touch.slots[i as usize].1
        } else {
            touch.sleepers[(i - awake) as usize].body
        }
    };
    let slot = |i: u32| touch.slots[i as usize].0;
    let accept = |a: u32, b: u32| {
        if !body(a).groups.touches(&body(b).groups) {
            return false;
        }
        match (a < awake, b < awake) {
            (true, true) => {
                let (sa, sb) = (slot(a), slot(b));
                (inv_mass[sa as usize] > 0.0 || inv_mass[sb as usize] > 0.0)
                    && !touch.joined(sa, sb)
            }
            // An awake dynamic body within reach of a sleeping one.
            (true, false) => inv_mass[slot(a) as usize] > 0.0,
            (false, true) => inv_mass[slot(b) as usize] > 0.0,
            (false, false) => false,
        }
    };
    let split = split_pool().filter(|_| items.len() >= threshold);
    // Groups hold consecutive runs of slots; fixed slots come after all.
    let groups = &solver.groups;
    let group_of = |s: u32| {
        let g = groups.partition_point(|group| group.slots.end <= s as usize);
        match groups.get(g) {
            Some(group) if group.slots.contains(&(s as usize)) => g as u32,
            _ => u32::MAX,
        }
    };
    // A run of pairs as rows, by group, each with its class in `broad`;
    // marks each island that touches itself; true if the islands no longer
    // follow the pairs.
    let to_rows = |broad: &BroadPhase, found: &[(u32, u32)], rows: &mut Vec<(u32, PairRow)>| {
        let mut stale = false;
        for &(a, b) in found {
            if a >= awake || b >= awake {
                stale = true;
                continue;
            }
            let (sa, sb) = (slot(a), slot(b));
            let (ia, ib) = (
                touch.island_of_slot[sa as usize],
                touch.island_of_slot[sb as usize],
            );
            if ia != u32::MAX && ib != u32::MAX {
                if ia == ib {
                    touching[ia as usize].store(true, Ordering::Relaxed);
                } else {
                    stale = true;
                }
            }
            let (ga, gb) = (group_of(sa), group_of(sb));
            let group = if ga == u32::MAX { gb } else { ga };
            if group == u32::MAX || (gb != u32::MAX && gb != group) {
                // Two pass counts, or two bodies in fixed slots (one made
                // dynamic since the rebuild): left out until the islands are
                // rebuilt.
                continue;
            }
            let (ta, tb) = (body(a), body(b));
            rows.push((
                group,
                PairRow {
                    a: sa,
                    b: sb,
                    radius: ta.radius + tb.radius,
                    material: ta.material.combine(tb.material),
                    class: broad.class_of(a, b),
                },
            ));
        }
        stale
    };
    let mut stale = broad_pairs(
        &mut solver.broad,
        &items,
        (&accept, &to_rows),
        split,
        &mut parts,
        (&mut found, &mut rows),
    );
    if groups.len() > 1 {
        rows.sort_by_key(|&(group, _)| group);
    }
    lay_out_pairs(solver, &rows, split);
    // An island that came to touch itself, or stopped, changes its pass
    // count.
    stale |= solver.islands.iter().zip(&touching).any(|(island, now)| {
        !island.slots.is_empty() && island.touching != now.load(Ordering::Relaxed)
    });
    let (mut union, mut seen) = (
        core::mem::take(&mut solver.touch.union),
        core::mem::take(&mut solver.touch.seen),
    );
    if !stale && solver.touch.merged {
        stale = !islands_hold(solver, &mut union, &mut seen, split);
    }
    let touch = &mut solver.touch;
    (touch.items, touch.found, touch.rows, touch.parts) = (items, found, rows, parts);
    (touch.touching, touch.union, touch.seen) = (touching, union, seen);
    stale
}

/// Pairs as rows, each with its group.
type Rows = Vec<(u32, PairRow)>;

/// A job's share of a split broad phase: its pairs, and their rows.
#[derive(Debug, Default)]
struct Part {
    pairs: Vec<(u32, u32)>,
    rows: Rows,
    stale: bool,
}

/// The broad phase's pairs of `items` that `accept` takes, as rows
/// (`to_rows`, which says whether the islands are stale) into `rows`;
/// over `split`'s threads when given, each pairing a run of the grid's
/// cells and making their rows in its own part of `parts`, the rows laid
/// end to end in order (those of one call, in the same order). `found`
/// is a buffer. True if stale.
fn broad_pairs<R>(
    broad: &mut BroadPhase,
    items: &[Reach],
    (accept, to_rows): (&(impl Fn(u32, u32) -> bool + Sync), &R),
    split: Option<(&'static TaskPool, usize)>,
    parts: &mut Vec<Part>,
    (found, rows): (&mut Vec<(u32, u32)>, &mut Rows),
) -> bool
where
    R: Fn(&BroadPhase, &[(u32, u32)], &mut Rows) -> bool + Sync,
{
    let cells = broad.lay_out(items);
    let broad = &*broad;
    let mut stale = false;
    match split {
        None => broad.cell_pairs(items, 0..cells, accept, found),
        Some((pool, threads)) => {
            let jobs = threads * JOBS_PER_THREAD;
            parts.resize_with(jobs, Part::default);
            let cut = |k: usize| broad.cut(k as f32 / jobs as f32);
            for_each_part(
                Some((pool, threads)),
                parts.iter_mut().enumerate(),
                |(k, part)| {
                    part.pairs.clear();
                    part.rows.clear();
                    broad.cell_pairs(items, cut(k)..cut(k + 1), accept, &mut part.pairs);
                    part.stale = to_rows(broad, &part.pairs, &mut part.rows);
                    false
                },
            );
            for part in parts.iter() {
                rows.extend_from_slice(&part.rows);
                stale |= part.stale;
            }
        }
    }
    broad.large_pairs(items, accept, found);
    stale | to_rows(broad, found, rows)
}

/// Gives each group its run of `rows` (sorted by group) and writes them into
/// `solver.pairs` in blocks that share no moving body, with the pairs
/// between blocks after them (see [`batches`](crate::kernels::batches)):
/// the cut follows the pairs alone, so threads may take the blocks at once.
/// Each batch of at least [`CLASSED_FROM`] pairs is then ordered by class,
/// the broad phase's order kept within a class ([`by_class`]): a round goes
/// over a batch one direction at a time, so consecutive contacts seldom
/// share a body and a batch packs into few levels (see
/// [`pack`](crate::kernels::lanes::pack)).
/// Clears the warm impulses.
fn lay_out_pairs(
    solver: &mut SolverState,
    rows: &[(u32, PairRow)],
    pool: Option<(&'static TaskPool, usize)>,
) {
    let mut at = 0;
    for (g, group) in solver.groups.iter_mut().enumerate() {
        let start = at;
        at += rows[at..]
            .iter()
            .take_while(|(group, _)| *group == g as u32)
            .count();
        group.pairs = start..at;
    }
    let mut blocks = core::mem::take(&mut solver.touch.blocks);
    let scratch = &mut solver.touch.classed;
    let (pairs, inv_mass) = (&mut solver.pairs, &solver.inv_mass);
    blocks.cover(inv_mass.len());
    for group in &mut solver.groups {
        split(
            &rows[group.pairs.clone()],
            |&(_, row)| row,
            |row| (row.a, row.b),
            |slot| inv_mass[slot as usize] > 0.0,
            PAIRS_PER_BLOCK,
            &mut blocks,
            (pairs, &mut group.pair_batches),
            &|n, f| each_over(pool, n, f),
        );
        order_by_class(
            &mut pairs[group.pairs.clone()],
            &group.pair_batches,
            scratch,
            pool,
        );
    }
    solver.touch.blocks = blocks;
}

/// Orders each of `batches` (runs of `pairs`, in order and apart) that
/// holds at least [`CLASSED_FROM`] pairs by class ([`by_class`]); the
/// others keep their order. The batches are sorted at once over `pool`'s
/// threads, each apart from the others, so the order does not depend on
/// the threads. `scratch` holds a buffer per sorted batch, kept between
/// calls.
fn order_by_class(
    pairs: &mut [PairRow],
    batches: &[Batch],
    scratch: &mut Vec<Vec<PairRow>>,
    pool: Option<(&TaskPool, usize)>,
) {
    let large = || batches.iter().filter(|b| b.rows.len() >= CLASSED_FROM);
    let count = large().count();
    if scratch.len() < count {
        scratch.resize_with(count, Vec::new);
    }
    // Each large batch's run of `pairs`, in turn.
    let (mut rest, mut at) = (pairs, 0);
    let runs = large().map(|batch| {
        let (_, from) = core::mem::take(&mut rest).split_at_mut(batch.rows.start - at);
        let (run, after) = from.split_at_mut(batch.rows.len());
        (rest, at) = (after, batch.rows.end);
        run
    });
    // A single batch is sorted without waking the pool's threads.
    let pool = pool.filter(|_| count > 1);
    for_each_part(pool, runs.zip(scratch), |(run, scratch)| {
        by_class(run, |row| row.class, scratch);
        false
    });
}

/// Whether every awake island's bodies still hold together through its
/// springs, rods and pairs within reach (an island that contacts joined
/// may fall apart when they end). The pairs are joined in runs over
/// `pool`'s threads when given: which bodies share a set does not depend
/// on the order of the joins, so neither does the answer.
fn islands_hold(
    solver: &SolverState,
    union: &mut UnionFind,
    seen: &mut Vec<bool>,
    pool: Option<(&'static TaskPool, usize)>,
) -> bool {
    let n = solver.fixed_slots.start;
    union.reset(n);
    let join = |(a, b): (u32, u32)| {
        if (a as usize) < n && (b as usize) < n {
            union.union(a, b);
        }
    };
    solver
        .springs
        .iter()
        .map(|row| (row.a, row.b))
        .chain(solver.rods.iter().map(|rod| (rod.a, rod.b)))
        .chain(solver.angles.iter().flat_map(|l| [(l.a, l.p), (l.p, l.b)]))
        .for_each(join);
    let pairs = &solver.pairs;
    for_each_part(pool, pairs.chunks(run_size(pool, pairs.len())), |run| {
        run.iter().for_each(|pair| join((pair.a, pair.b)));
        false
    });
    let union = &*union;
    seen.clear();
    seen.resize(n, false);
    for island in &solver.islands {
        let Some(first) = island.slots.clone().next() else {
            continue;
        };
        let root = union.find(first as u32);
        if core::mem::replace(&mut seen[root as usize], true) {
            return false;
        }
        if island.slots.clone().any(|s| union.find(s as u32) != root) {
            return false;
        }
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Pair `n` of a test's batches, of class `n·step` mod 15.
    fn row(n: usize, step: usize) -> PairRow {
        PairRow {
            a: n as u32,
            b: n as u32 + 1,
            radius: 0.1,
            material: Material {
                restitution: 0.0,
                friction: 0.5,
            },
            class: (n * step % 15) as u8,
        }
    }

    /// Each row's first slot and class, to compare orders.
    fn ends(rows: &[PairRow]) -> Vec<(u32, u8)> {
        rows.iter().map(|r| (r.a, r.class)).collect()
    }

    /// A batch of [`CLASSED_FROM`] pairs is ordered by class, the order
    /// within a class kept; a batch of one pair fewer keeps its order.
    #[test]
    fn only_large_batches_are_ordered_by_class() {
        let row = |n| row(n, 7);
        let (small, large) = (CLASSED_FROM - 1, CLASSED_FROM);
        let before: Vec<PairRow> = (0..small + large).map(row).collect();
        let batches = [
            Batch {
                rows: 0..small,
                joined: false,
            },
            Batch {
                rows: small..small + large,
                joined: false,
            },
        ];
        let mut pairs = before.clone();
        order_by_class(&mut pairs, &batches, &mut Vec::new(), None);
        assert_eq!(ends(&pairs[..small]), ends(&before[..small]));
        let mut sorted = before[small..].to_vec();
        sorted.sort_by_key(|r| r.class);
        assert_eq!(ends(&pairs[small..]), ends(&sorted));
        assert_ne!(ends(&sorted), ends(&before[small..]));
    }

    /// Over two threads, several large batches come out each as a stable
    /// sort by class, the small ones between them untouched: the order
    /// does not depend on the threads.
    #[test]
    fn batches_ordered_over_threads_are_each_sorted_apart() {
        let row = |n| row(n, 11);
        let sizes = [10, CLASSED_FROM, CLASSED_FROM + 7, 3, 0, 2 * CLASSED_FROM];
        let mut batches = Vec::new();
        for size in sizes {
            let start = batches.last().map_or(0, |b: &Batch| b.rows.end);
            batches.push(Batch {
                rows: start..start + size,
                joined: false,
            });
        }
        let before: Vec<PairRow> = (0..batches.last().unwrap().rows.end).map(row).collect();
        let mut expected = before.clone();
        for batch in batches.iter().filter(|b| b.rows.len() >= CLASSED_FROM) {
            expected[batch.rows.clone()].sort_by_key(|r| r.class);
        }
        let pool = bevy::tasks::TaskPoolBuilder::new().num_threads(2).build();
        let mut pairs = before.clone();
        let mut scratch = Vec::new();
        order_by_class(&mut pairs, &batches, &mut scratch, Some((&pool, 2)));
        assert_eq!(ends(&pairs), ends(&expected));
        assert_ne!(ends(&pairs), ends(&before));
        assert_eq!(scratch.len(), 3, "one buffer per sorted batch");
    }
}

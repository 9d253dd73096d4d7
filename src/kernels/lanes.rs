//! Pair contacts four at a time: laid out once per step in wide rows
//! (structure of arrays, one contact to each of a [`Vec4`]'s lanes), so
//! that a round solves four contacts with the instructions of one.
//!
//! Four contacts solved at once must not write one body twice. [`pack`]
//! gives each contact, in the order found, a *level*: one more than the
//! levels of the contacts before it that hold one of its moving bodies.
//! Contacts of one level share no moving body, and two contacts that share
//! one keep their order. Contacts that share no moving body commute (each
//! reads and writes only its own two bodies), so solving the levels in
//! turn, each level's contacts four lanes at once, gives the bits of
//! solving the contacts one by one in the order found: the packing changes
//! the speed of a round, never its result
//! (`packed_lanes_give_the_bits_of_one_by_one`). The groups of one level
//! do not depend on each other, so the processor may overlap their work.
//!
//! A fixed body (inverse mass 0) is read, never written, so it may sit in
//! every lane of a group. A group with fewer than four contacts is padded
//! with lanes of no mass, which write nothing.
//!
//! Each lane's arithmetic is the same as the tests' `solve_one` (one
//! contact in plain `f32`s), operation for operation (no fused
//! multiply-add; `max` as SSE's `x > 0 ? x : 0`), in the same order: the
//! lanes give one contact's bits whatever the platform's vector width.
//!
//! Where the processor has AVX, [`solve_groups`] visits each group of the
//! level of the group before it together with that one, eight lanes at
//! once ([`wide`]), with the same bits.

use bevy::math::{Vec3A, Vec4};

use super::batches::Batch;
use super::constraints::Rounds;
use super::kept::HeldPair;

#[cfg(target_arch = "x86_64")]
mod wide;

/// Contacts to a group.
pub const WIDTH: usize = 4;

/// One pair contact, as [`pack`] takes it. The step's finding sets its
/// bodies, masses, materials and the impulses it starts from (see
/// [`kept`](super::kept)); its normal and targets start at 0 and, once
/// packed, live in its [`Group`] (aimed each pass).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct One {
    pub a: u32,
    pub b: u32,
    /// The inverse masses of `a` and `b`.
    pub wa: f32,
    pub wb: f32,
    /// The sum of their radii.
    pub radius: f32,
    /// Their materials, combined.
    pub restitution: f32,
    /// Unit, from `a` to `b` (as of the pass).
    pub normal: Vec3A,
    /// The normal speed aimed for, with and without the position bias.
    pub target: f32,
    pub relaxed: f32,
    pub friction: f32,
    /// `1 / (w_a + w_b)`.
    pub mass: f32,
    pub normal_impulse: f32,
    pub friction_impulse: Vec3A,
}

/// Four pair contacts of four different moving bodies, one to a lane.
#[derive(Debug, Clone, Copy, Default)]
pub struct Group {
    /// Each lane's bodies (below [`Lanes`]'s `bound`; an empty lane reads
    /// the first lane's `a`).
    a: [u32; WIDTH],
    b: [u32; WIDTH],
    /// The lanes whose `a`, and whose `b`, is written (a moving body), one
    /// bit per lane.
    writes: [u8; 2],
    /// Whether it is of the level of the group before it (in the same
    /// run of [`pack`]): the two share no moving body, so they may be
    /// solved at once (see [`wide`], on x86_64 only: elsewhere nothing
    /// reads it).
    #[cfg_attr(not(target_arch = "x86_64"), allow(dead_code))]
    beside: bool,
    wa: Vec4,
    wb: Vec4,
    radius: Vec4,
    restitution: Vec4,
    normal: [Vec4; 3],
    target: Vec4,
    relaxed: Vec4,
    friction: Vec4,
    mass: Vec4,
    normal_impulse: Vec4,
    friction_impulse: [Vec4; 3],
}

impl Group {
    /// A group of one to four contacts (the lanes after them empty).
    fn of(contacts: &[One], indices: &[u32]) -> Self {
        let first = &contacts[indices[0] as usize];
        let pad = One {
            a: first.a,
            b: first.a,
            ..One::default()
        };
        let lane = |i: usize| indices.get(i).map_or(&pad, |&c| &contacts[c as usize]);
        let [o0, o1, o2, o3] = [lane(0), lane(1), lane(2), lane(3)];
        // A field of the four, one to a lane (written out field by field:
        // this runs for every group of every step).
        macro_rules! lanes {
            ($field:ident) => {
                Vec4::new(o0.$field, o1.$field, o2.$field, o3.$field)
            };
        }
        macro_rules! axes {
            ($field:ident) => {
                transpose_in([o0.$field, o1.$field, o2.$field, o3.$field])
            };
        }
        let (wa, wb) = (lanes!(wa), lanes!(wb));
        let mask = |w: Vec4| w.cmpgt(Vec4::ZERO).bitmask() as u8;
        Self {
            a: [o0.a, o1.a, o2.a, o3.a],
            b: [o0.b, o1.b, o2.b, o3.b],
            writes: [mask(wa), mask(wb)],
            beside: false,
            wa,
            wb,
            radius: lanes!(radius),
            restitution: lanes!(restitution),
            normal: axes!(normal),
            target: lanes!(target),
            relaxed: lanes!(relaxed),
            friction: lanes!(friction),
            mass: lanes!(mass),
            normal_impulse: lanes!(normal_impulse),
            friction_impulse: axes!(friction_impulse),
        }
    }

    /// The contact in lane `i`, if any (a lane without one, or left out,
    /// has no mass).
    #[cfg(test)]
    pub fn get(&self, i: usize) -> Option<One> {
        (self.wa[i] + self.wb[i] > 0.0).then(|| One {
            a: self.a[i],
            b: self.b[i],
            wa: self.wa[i],
            wb: self.wb[i],
            radius: self.radius[i],
            restitution: self.restitution[i],
            normal: Vec3A::new(self.normal[0][i], self.normal[1][i], self.normal[2][i]),
            target: self.target[i],
            relaxed: self.relaxed[i],
            friction: self.friction[i],
            mass: self.mass[i],
            normal_impulse: self.normal_impulse[i],
            friction_impulse: Vec3A::new(
                self.friction_impulse[0][i],
                self.friction_impulse[1][i],
                self.friction_impulse[2][i],
            ),
        })
    }

    /// The contacts of its lanes that are not empty.
    #[cfg(test)]
    pub fn contacts(&self) -> impl Iterator<Item = One> + '_ {
        (0..WIDTH).filter_map(|i| self.get(i))
    }

    /// Adds its lanes' impulses to `sums` (the normal impulses, then the
    /// friction impulses by axis, one lane each): what a step's passes
    /// gave, summed pass by pass.
    #[inline]
    pub fn add_impulses(&self, sums: &mut [Vec4; 4]) {
        sums[0] += self.normal_impulse;
        for (sum, friction) in sums[1..].iter_mut().zip(self.friction_impulse) {
            *sum += friction;
        }
    }

    /// Adds to `into` the pairs of its lanes that still hold (not empty,
    /// nor left out), with `sums` (see [`add_impulses`](Self::add_impulses))
    /// times `per_second` as their forces, those that pushed (a finite
    /// normal force above 0, a finite friction), in lane order.
    #[inline]
    pub fn held(&self, sums: &[Vec4; 4], per_second: f32, into: &mut Vec<HeldPair>) {
        let scale = Vec4::splat(per_second);
        let normal = sums[0] * scale;
        let holds =
            normal.cmpgt(Vec4::ZERO) & normal.is_finite_mask() & self.mass.cmpgt(Vec4::ZERO);
        let lanes = holds.bitmask();
        if lanes == 0 {
            return;
        }
        let friction = transpose_out([sums[1] * scale, sums[2] * scale, sums[3] * scale]);
        let normal = normal.to_array();
        for i in 0..WIDTH {
            if lanes & (1 << i) != 0 && friction[i].is_finite() {
                into.push(HeldPair {
                    a: self.a[i],
                    b: self.b[i],
                    normal: normal[i],
                    friction: friction[i],
                });
            }
        }
    }

    /// Each lane's two bodies.
    #[inline(always)]
    pub fn ends(&self) -> ([u32; WIDTH], [u32; WIDTH]) {
        (self.a, self.b)
    }

    /// Turns the four contacts to their bodies' positions `pa`, `pb` and
    /// velocities `va`, `vb` at the start of a pass of `rounds.h`: the normal
    /// from `a` to `b` (`+y` where they are at one point), the normal speeds
    /// aimed for with and without the position bias (see the module docs of
    /// [`constraints`](super::constraints)), and the friction impulse turned
    /// into the plane across the new normal.
    #[inline(always)]
    pub fn refresh(&mut self, [pa, pb, va, vb]: [[Vec4; 3]; 4], rounds: &Rounds) {
        let d = sub(pb, pa);
        let distance = sqrt(dot(d, d));
        let apart = distance.cmpgt(Vec4::ZERO);
        let n = [
            Vec4::select(apart, d[0] / distance, Vec4::ZERO),
            Vec4::select(apart, d[1] / distance, Vec4::ONE),
            Vec4::select(apart, d[2] / distance, Vec4::ZERO),
        ];
        let gap = distance - self.radius;
        let approach = dot(n, sub(vb, va));
        let h = Vec4::splat(rounds.h);
        let hits = (gap + h * approach).cmplt(Vec4::ZERO);
        let fast = approach.cmplt(Vec4::splat(-rounds.bounce_threshold));
        let bounce = Vec4::select(hits & fast, -self.restitution * approach, Vec4::ZERO);
        let outside = gap.cmpge(Vec4::ZERO);
        let close = -gap / h;
        let biased = Vec4::select(outside, close, Vec4::splat(-rounds.beta) * gap / h);
        let relaxed = Vec4::select(outside, close, Vec4::ZERO);
        let bouncing = bounce.cmpgt(Vec4::ZERO);
        self.target = Vec4::select(bouncing, bounce.max(biased), biased);
        self.relaxed = Vec4::select(bouncing, bounce.max(relaxed), relaxed);
        let f = self.friction_impulse;
        self.friction_impulse = sub(f, scale(dot(n, f), n));
        self.normal = n;
    }

    /// Leaves out the lanes whose `keep` is false for the rest of the step:
    /// no mass, no impulse, nothing written.
    pub fn drop_lanes(&mut self, keep: [bool; WIDTH]) {
        for (i, keep) in keep.into_iter().enumerate() {
            if !keep {
                self.writes[0] &= !(1 << i);
                self.writes[1] &= !(1 << i);
                self.wa[i] = 0.0;
                self.wb[i] = 0.0;
                self.mass[i] = 0.0;
                self.normal_impulse[i] = 0.0;
                for f in &mut self.friction_impulse {
                    f[i] = 0.0;
                }
            }
        }
    }

    /// The impulses the four contacts hold, applied to their bodies'
    /// velocities again (the warm start of a pass); gives the new ones.
    #[inline(always)]
    pub fn warm_start(&self, va: [Vec4; 3], vb: [Vec4; 3]) -> ([Vec4; 3], [Vec4; 3]) {
        let push = add(
            scale(self.normal_impulse, self.normal),
            self.friction_impulse,
        );
        (sub(va, scale(self.wa, push)), add(vb, scale(self.wb, push)))
    }

    /// One round of the four contacts on their bodies' velocities (each
    /// lane as the tests' `solve_one`); gives the new velocities.
    #[inline(always)]
    pub fn solve(&mut self, va: [Vec4; 3], vb: [Vec4; 3]) -> ([Vec4; 3], [Vec4; 3]) {
        self.solve_to(self.target, va, vb)
    }

    /// The relaxing round: [`solve`](Self::solve) aiming every lane at its
    /// normal speed without the position bias.
    #[inline(always)]
    pub fn relax(&mut self, va: [Vec4; 3], vb: [Vec4; 3]) -> ([Vec4; 3], [Vec4; 3]) {
        self.solve_to(self.relaxed, va, vb)
    }

    /// One round aiming at the normal speeds `target`.
    #[inline(always)]
    fn solve_to(&mut self, target: Vec4, va: [Vec4; 3], vb: [Vec4; 3]) -> ([Vec4; 3], [Vec4; 3]) {
        let n = self.normal;
        // Normal: accumulated, never pulling.
        let speed = dot(n, sub(vb, va));
        let total = max0(self.normal_impulse + (target - speed) * self.mass);
        let change = total - self.normal_impulse;
        let push = n.map(|n| change * n);
        let (va, vb) = (sub(va, scale(self.wa, push)), add(vb, scale(self.wb, push)));
        self.normal_impulse = total;
        // Friction: accumulated, within the Coulomb cone.
        let relative = sub(vb, va);
        let along = dot(n, relative);
        let tangential = sub(relative, scale(along, n));
        let wanted = sub(self.friction_impulse, scale(self.mass, tangential));
        let limit = self.friction * total;
        let length2 = dot(wanted, wanted);
        let over = length2.cmpgt(limit * limit);
        // Scaled back to the cone where it is outside (in a resting pile,
        // few lanes are: the root and the division are skipped).
        let total = if over.any() {
            let shrink = limit / sqrt(length2);
            wanted.map(|w| Vec4::select(over, w * shrink, w))
        } else {
            wanted
        };
        let push = sub(total, self.friction_impulse);
        self.friction_impulse = total;
        (sub(va, scale(self.wa, push)), add(vb, scale(self.wb, push)))
    }
}

/// One round of one contact on its bodies' velocities `va` and `vb`: the
/// normal impulse accumulated and never pulling, then the friction impulse
/// accumulated within the Coulomb cone; gives the new velocities. What a
/// lane of [`Group::solve`] does, in the same operations.
#[cfg(test)]
pub fn solve_one(one: &mut One, va: Vec3A, vb: Vec3A) -> (Vec3A, Vec3A) {
    let dot = |p: Vec3A, q: Vec3A| p.x * q.x + p.y * q.y + p.z * q.z;
    let max0 = |x: f32| if x > 0.0 { x } else { 0.0 };
    let n = one.normal;
    let speed = dot(n, vb - va);
    let total = max0(one.normal_impulse + (one.target - speed) * one.mass);
    let push = (total - one.normal_impulse) * n;
    let (va, vb) = (va - one.wa * push, vb + one.wb * push);
    one.normal_impulse = total;
    let relative = vb - va;
    let tangential = relative - dot(n, relative) * n;
    let wanted = one.friction_impulse - one.mass * tangential;
    let limit = one.friction * total;
    let length2 = dot(wanted, wanted);
    let total = if length2 > limit * limit {
        wanted * (limit / length2.sqrt())
    } else {
        wanted
    };
    let push = total - one.friction_impulse;
    one.friction_impulse = total;
    (va - one.wa * push, vb + one.wb * push)
}

/// A pass's pair contacts in groups, with the batches of groups that the
/// batches of contacts became, and buffers kept between steps.
#[derive(Debug, Default)]
pub struct Lanes {
    pub groups: Vec<Group>,
    pub batches: Vec<Batch>,
    /// One more than the largest slot a group holds (0 for none): the
    /// slices of velocities the groups are solved on must be at least as
    /// long.
    bound: usize,
    /// Per slot: the level of the last contact holding that moving body
    /// (0: none), while packing; all 0 between packings.
    last: Vec<u32>,
    /// Per contact of a batch: its level, then its place in level order.
    level: Vec<u32>,
    /// Per level: how many contacts, then where its first one goes.
    counts: Vec<u32>,
    /// A batch's contacts in level order.
    order: Vec<u32>,
}

/// Lays `contacts` (in `batches`, each batch of contacts a run of them)
/// out in groups of four into `lanes`, batch by batch (a batch's groups
/// are a run, and its batch of groups keeps its `joined`).
///
/// Each contact gets a *level*: one more than the levels of the contacts
/// before it that hold one of its moving bodies. Contacts of one level
/// share no moving body, and every contact comes after those it depends
/// on, so solving level after level gives the bits of the order found.
/// Each level's contacts (in the order found) fill groups of four; the
/// groups of a level do not depend on each other, so the processor may
/// overlap their work. `slots` is how many bodies there are.
///
/// With `merge` (the batches will run on one thread), all batches are
/// levelled as one run: the levels keep every contact after those it
/// depends on, so the bits are the same, and the blocks' levels
/// interleave (blocks share no moving body), so the processor overlaps
/// their work.
pub fn pack(contacts: &[One], batches: &[Batch], slots: usize, merge: bool, lanes: &mut Lanes) {
    let Lanes {
        groups,
        batches: packed,
        bound,
        last,
        level,
        counts,
        order,
    } = lanes;
    groups.clear();
    packed.clear();
    *bound = contacts
        .iter()
        .map(|one| one.a.max(one.b) as usize + 1)
        .max()
        .unwrap_or(0);
    assert!(*bound <= slots, "a contact beyond the bodies");
    if last.len() < slots {
        last.resize(slots, 0);
    }
    let mut runs = batches.iter().cloned().peekable();
    while let Some(mut batch) = runs.next() {
        while let Some(next) = runs.next_if(|_| merge) {
            batch.rows.end = next.rows.end;
        }
        let run = &contacts[batch.rows.clone()];
        if run.is_empty() {
            continue;
        }
        // Levels, and how many contacts each holds.
        level.clear();
        counts.clear();
        for one in run {
            let (a, b) = (one.a as usize, one.b as usize);
            let (ma, mb) = (one.wa > 0.0, one.wb > 0.0);
            let at = 1 + if ma { last[a] } else { 0 }.max(if mb { last[b] } else { 0 });
            if ma {
                last[a] = at;
            }
            if mb {
                last[b] = at;
            }
            level.push(at);
            if counts.len() <= at as usize {
                counts.resize(at as usize + 1, 0);
            }
            counts[at as usize] += 1;
        }
        for one in run {
            last[one.a as usize] = 0;
            last[one.b as usize] = 0;
        }
        let (start, mut place, mut added) = (groups.len(), 0, 0);
        for count in counts.iter_mut() {
            let n = *count;
            *count = place;
            place += n;
            added += (n as usize).div_ceil(WIDTH);
        }
        // The contacts in level order (stable: each level in the order
        // found); `counts[l]` then tells where level `l + 1` starts.
        order.clear();
        order.resize(run.len(), 0);
        for (i, &at) in level.iter().enumerate() {
            let to = &mut counts[at as usize];
            order[*to as usize] = i as u32;
            *to += 1;
        }
        groups.reserve(added);
        let mut from = 0;
        for &end in counts.iter() {
            for (k, four) in order[from as usize..end as usize].chunks(WIDTH).enumerate() {
                groups.push(Group {
                    beside: k > 0,
                    ..Group::of(run, four)
                });
            }
            from = end;
        }
        packed.push(Batch {
            rows: start..groups.len(),
            joined: batch.joined && !packed.is_empty(),
        });
    }
}

/// The velocities of four bodies, by axis.
#[inline(always)]
pub fn gather(vel: impl Fn(usize) -> Vec3A, slots: [u32; WIDTH]) -> [Vec4; 3] {
    transpose_in(slots.map(|s| vel(s as usize)))
}

/// Writes four bodies' velocities `v` (by axis) back, those of the lanes
/// in `writes` (a bit per lane).
#[inline(always)]
pub fn scatter(mut set: impl FnMut(usize, Vec3A), slots: [u32; WIDTH], writes: u8, v: [Vec4; 3]) {
    let rows = transpose_out(v);
    if writes == (1 << WIDTH) - 1 {
        for i in 0..WIDTH {
            set(slots[i] as usize, rows[i]);
        }
    } else {
        for i in 0..WIDTH {
            if writes & (1 << i) != 0 {
                set(slots[i] as usize, rows[i]);
            }
        }
    }
}

/// What one visit of a group does to its bodies' velocities.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Visit {
    /// Applies the impulses held (the warm start).
    WarmStart,
    /// One round of impulses.
    Round,
    /// The relaxing round: one round without the position bias.
    Relax,
}

impl Lanes {
    /// See the field `bound`.
    pub fn bound(&self) -> usize {
        self.bound
    }

    /// Room for `groups` groups of slots below `bound`, to be written in
    /// place (a settled scene keeps about as many from step to step, so
    /// this rarely writes anything itself); `batches` are the caller's.
    pub fn make_room(&mut self, groups: usize, bound: usize) -> &mut [Group] {
        self.groups.resize(groups, Group::default());
        self.bound = bound;
        &mut self.groups
    }
}

/// Visits `groups` in order on `vel` (read and written through `get` and
/// `set`): where the processor can, two groups of one level at once (see
/// [`wide`]), with the same bits.
#[inline(always)]
pub fn solve_groups(
    groups: &mut [Group],
    visit: Visit,
    get: impl Fn(usize) -> Vec3A,
    set: impl FnMut(usize, Vec3A),
) {
    #[cfg(target_arch = "x86_64")]
    if wide::available() {
        // SAFETY: the processor has the features `in_pairs` is built for
        // (checked at run time).
        unsafe { wide::in_pairs(groups, visit, get, set) };
        return;
    }
    groups_one_by_one(groups, visit, get, set);
}

/// [`solve_groups`], a group at a time.
#[inline(always)]
fn groups_one_by_one(
    groups: &mut [Group],
    visit: Visit,
    get: impl Fn(usize) -> Vec3A,
    mut set: impl FnMut(usize, Vec3A),
) {
    for group in groups {
        visit_one(group, visit, &get, &mut set);
    }
}

/// One visit of one group.
#[inline(always)]
fn visit_one(
    group: &mut Group,
    visit: Visit,
    get: &impl Fn(usize) -> Vec3A,
    set: &mut impl FnMut(usize, Vec3A),
) {
    let (va, vb) = (gather(get, group.a), gather(get, group.b));
    let (va, vb) = match visit {
        Visit::WarmStart => group.warm_start(va, vb),
        Visit::Round => group.solve(va, vb),
        Visit::Relax => group.relax(va, vb),
    };
    scatter(&mut *set, group.a, group.writes[0], va);
    scatter(&mut *set, group.b, group.writes[1], vb);
}

#[inline(always)]
fn dot(p: [Vec4; 3], q: [Vec4; 3]) -> Vec4 {
    p[0] * q[0] + p[1] * q[1] + p[2] * q[2]
}

#[inline(always)]
fn add(p: [Vec4; 3], q: [Vec4; 3]) -> [Vec4; 3] {
    [p[0] + q[0], p[1] + q[1], p[2] + q[2]]
}

#[inline(always)]
fn sub(p: [Vec4; 3], q: [Vec4; 3]) -> [Vec4; 3] {
    [p[0] - q[0], p[1] - q[1], p[2] - q[2]]
}

#[inline(always)]
fn scale(s: Vec4, p: [Vec4; 3]) -> [Vec4; 3] {
    p.map(|p| s * p)
}

/// `x > 0 ? x : 0` in each lane.
#[inline(always)]
fn max0(x: Vec4) -> Vec4 {
    #[cfg(all(target_arch = "x86_64", target_feature = "sse2"))]
    {
        use core::arch::x86_64::{_mm_max_ps, _mm_setzero_ps};
        // SAFETY: SSE is enabled (the `cfg` above); no memory is touched.
        Vec4::from(unsafe { _mm_max_ps(x.into(), _mm_setzero_ps()) })
    }
    #[cfg(not(all(target_arch = "x86_64", target_feature = "sse2")))]
    {
        Vec4::from_array(x.to_array().map(|x| if x > 0.0 { x } else { 0.0 }))
    }
}

/// The square root of each lane.
#[inline(always)]
fn sqrt(x: Vec4) -> Vec4 {
    #[cfg(all(target_arch = "x86_64", target_feature = "sse2"))]
    {
        use core::arch::x86_64::_mm_sqrt_ps;
        // SAFETY: SSE is enabled (the `cfg` above); no memory is touched.
        Vec4::from(unsafe { _mm_sqrt_ps(x.into()) })
    }
    #[cfg(not(all(target_arch = "x86_64", target_feature = "sse2")))]
    {
        Vec4::from_array(x.to_array().map(f32::sqrt))
    }
}

/// Four vectors as their x, y and z across four lanes.
#[inline(always)]
fn transpose_in(rows: [Vec3A; WIDTH]) -> [Vec4; 3] {
    #[cfg(all(target_arch = "x86_64", target_feature = "sse2"))]
    {
        use core::arch::x86_64::{
            __m128, _mm_movehl_ps, _mm_movelh_ps, _mm_unpackhi_ps, _mm_unpacklo_ps,
        };
        let [r0, r1, r2, r3] = rows.map(__m128::from);
        // SAFETY: SSE is enabled (the `cfg` above); no memory is touched.
        unsafe {
            let (t0, t1) = (_mm_unpacklo_ps(r0, r1), _mm_unpacklo_ps(r2, r3));
            let (t2, t3) = (_mm_unpackhi_ps(r0, r1), _mm_unpackhi_ps(r2, r3));
            [
                Vec4::from(_mm_movelh_ps(t0, t1)),
                Vec4::from(_mm_movehl_ps(t1, t0)),
                Vec4::from(_mm_movelh_ps(t2, t3)),
            ]
        }
    }
    #[cfg(not(all(target_arch = "x86_64", target_feature = "sse2")))]
    {
        [
            Vec4::from_array(rows.map(|r| r.x)),
            Vec4::from_array(rows.map(|r| r.y)),
            Vec4::from_array(rows.map(|r| r.z)),
        ]
    }
}

/// [`transpose_in`] undone.
#[inline(always)]
fn transpose_out([x, y, z]: [Vec4; 3]) -> [Vec3A; WIDTH] {
    #[cfg(all(target_arch = "x86_64", target_feature = "sse2"))]
    {
        use core::arch::x86_64::{
            __m128, _mm_movehl_ps, _mm_movelh_ps, _mm_setzero_ps, _mm_unpackhi_ps, _mm_unpacklo_ps,
        };
        let (x, y, z) = (__m128::from(x), __m128::from(y), __m128::from(z));
        // SAFETY: SSE is enabled (the `cfg` above); no memory is touched.
        unsafe {
            let w = _mm_setzero_ps();
            let (t0, t1) = (_mm_unpacklo_ps(x, y), _mm_unpacklo_ps(z, w));
            let (t2, t3) = (_mm_unpackhi_ps(x, y), _mm_unpackhi_ps(z, w));
            [
                Vec3A::from(_mm_movelh_ps(t0, t1)),
                Vec3A::from(_mm_movehl_ps(t1, t0)),
                Vec3A::from(_mm_movelh_ps(t2, t3)),
                Vec3A::from(_mm_movehl_ps(t3, t2)),
            ]
        }
    }
    #[cfg(not(all(target_arch = "x86_64", target_feature = "sse2")))]
    {
        core::array::from_fn(|i| Vec3A::new(x[i], y[i], z[i]))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A deterministic pseudo-random sequence in `[0, 1)`.
    fn rand(seed: &mut u64) -> f32 {
        *seed = seed
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        (*seed >> 40) as f32 / (1u64 << 24) as f32
    }

    /// `n` contacts among `slots` bodies (the last two fixed), in random
    /// pairs, with random normals, targets and impulses held.
    fn contacts(n: usize, slots: usize, seed: &mut u64) -> (Vec<One>, Vec<f32>, Vec<Vec3A>) {
        let inv_mass: Vec<f32> = (0..slots)
            .map(|i| {
                if i + 2 >= slots {
                    0.0
                } else {
                    0.5 + rand(seed)
                }
            })
            .collect();
        let vel = (0..slots)
            .map(|_| Vec3A::new(rand(seed), rand(seed), rand(seed)) - 0.5)
            .collect();
        let mut out = Vec::new();
        while out.len() < n {
            let a = (rand(seed) * slots as f32) as u32;
            let b = (rand(seed) * slots as f32) as u32;
            let (wa, wb) = (inv_mass[a as usize], inv_mass[b as usize]);
            if a == b || wa + wb <= 0.0 {
                continue;
            }
            let normal = (Vec3A::new(rand(seed), rand(seed), rand(seed)) - 0.5).normalize();
            out.push(One {
                a,
                b,
                // Each contact tagged by its index (the rounds do not read it).
                radius: out.len() as f32,
                restitution: 0.0,
                wa,
                wb,
                normal,
                target: rand(seed) - 0.3,
                relaxed: rand(seed) - 0.5,
                friction: rand(seed),
                mass: 1.0 / (wa + wb),
                normal_impulse: rand(seed) * 0.1,
                friction_impulse: Vec3A::new(rand(seed), rand(seed), rand(seed)) * 0.01,
            });
        }
        (out, inv_mass, vel)
    }

    /// `found` packed as one batch of `slots` bodies.
    fn packed_as_one_batch(found: &[One], slots: usize) -> Lanes {
        let batches = [Batch {
            rows: 0..found.len(),
            joined: false,
        }];
        let mut lanes = Lanes::default();
        pack(found, &batches, slots, false, &mut lanes);
        lanes
    }

    /// Whether a contact pushes with its friction at its cone (slides).
    fn slides(one: &One) -> bool {
        let cone = one.friction * one.normal_impulse;
        one.normal_impulse > 0.0 && one.friction_impulse.length() > 0.999 * cone
    }

    /// Solved in groups, four lanes at once, contacts give the same bits
    /// (velocities and impulses) as solved one by one in the order found,
    /// over several rounds; no group holds a moving body twice; every
    /// contact is in one lane.
    #[test]
    fn packed_lanes_give_the_bits_of_one_by_one() {
        let (mut seed, mut pushing, mut sliding) = (7, 0, 0);
        for (n, slots) in [(1, 3), (5, 4), (40, 12), (300, 60), (2000, 90)] {
            let (found, _, vel) = contacts(n, slots, &mut seed);
            let mut lanes = packed_as_one_batch(&found, slots);
            assert_eq!(lanes.batches.len(), 1);
            assert_eq!(lanes.batches[0].rows, 0..lanes.groups.len());
            let mut seen = vec![false; n];
            for group in &lanes.groups {
                let mut moving: Vec<u32> = group
                    .contacts()
                    .flat_map(|one| [(one.a, one.wa), (one.b, one.wb)])
                    .filter(|&(_, w)| w > 0.0)
                    .map(|(slot, _)| slot)
                    .collect();
                let len = moving.len();
                moving.sort_unstable();
                moving.dedup();
                assert_eq!(moving.len(), len, "a group writes a body twice");
                for one in group.contacts() {
                    assert!(!core::mem::replace(&mut seen[one.radius as usize], true));
                    assert_eq!(one, found[one.radius as usize]);
                }
            }
            assert!(seen.iter().all(|&s| s));

            let (mut one_by_one, mut ones) = (vel.clone(), found.clone());
            let mut packed = vel;
            for _ in 0..3 {
                for one in &mut ones {
                    let (a, b) = (one.a as usize, one.b as usize);
                    let (va, vb) = solve_one(one, one_by_one[a], one_by_one[b]);
                    if one.wa > 0.0 {
                        one_by_one[a] = va;
                    }
                    if one.wb > 0.0 {
                        one_by_one[b] = vb;
                    }
                }
                let cell = core::cell::RefCell::new(&mut packed);
                solve_groups(
                    &mut lanes.groups,
                    Visit::Round,
                    |s| cell.borrow()[s],
                    |s, v| cell.borrow_mut()[s] = v,
                );
            }
            for (p, q) in packed.iter().zip(&one_by_one) {
                assert_eq!(
                    p.to_array().map(f32::to_bits),
                    q.to_array().map(f32::to_bits)
                );
            }
            for group in &lanes.groups {
                for one in group.contacts() {
                    let expected = ones[one.radius as usize];
                    assert_eq!(
                        one.normal_impulse.to_bits(),
                        expected.normal_impulse.to_bits()
                    );
                    assert_eq!(
                        one.friction_impulse.to_array().map(f32::to_bits),
                        expected.friction_impulse.to_array().map(f32::to_bits)
                    );
                }
            }
            pushing += ones.iter().filter(|one| one.normal_impulse > 0.0).count();
            sliding += ones.iter().filter(|one| slides(one)).count();
        }
        // Both branches of each lane were taken: contacts that push and
        // contacts that slide (friction at its cone).
        assert!(pushing > 100 && sliding > 100, "{pushing} {sliding}");
    }

    /// Two groups of one level visited at once (eight lanes, with AVX)
    /// give the bits of visiting them one after the other: velocities and
    /// impulses, through warm starts, rounds and relaxing rounds, with
    /// lanes that push, slide, are empty or write one body only.
    #[cfg(target_arch = "x86_64")]
    #[test]
    fn two_at_once_give_the_bits_of_one_after_the_other() {
        if !wide::available() {
            eprintln!("no AVX on this processor: the wide path never runs here");
            return;
        }
        let mut seed = 11;
        let (mut pairs, mut sliding) = (0, 0);
        for (n, slots) in [(7, 6), (60, 20), (400, 50), (3000, 400)] {
            let (found, _, vel) = contacts(n, slots, &mut seed);
            let mut lanes = packed_as_one_batch(&found, slots);
            pairs += lanes.groups.iter().filter(|g| g.beside).count();
            let mut groups = lanes.groups.clone();
            let (mut paired, mut single) = (vel.clone(), vel);
            let visits = [Visit::WarmStart, Visit::Round, Visit::Round, Visit::Relax];
            for visit in visits.into_iter().cycle().take(12) {
                let cell = core::cell::RefCell::new(&mut paired);
                // SAFETY: the processor has AVX (checked above).
                unsafe {
                    wide::in_pairs(
                        &mut lanes.groups,
                        visit,
                        |s| cell.borrow()[s],
                        |s, v| cell.borrow_mut()[s] = v,
                    );
                }
                let cell = core::cell::RefCell::new(&mut single);
                groups_one_by_one(
                    &mut groups,
                    visit,
                    |s| cell.borrow()[s],
                    |s, v| cell.borrow_mut()[s] = v,
                );
            }
            let bits = |v: &[Vec3A]| -> Vec<[u32; 3]> {
                v.iter().map(|v| v.to_array().map(f32::to_bits)).collect()
            };
            assert_eq!(bits(&paired), bits(&single), "velocities, {n} contacts");
            for (p, q) in lanes.groups.iter().zip(&groups) {
                let held = |g: &Group| {
                    let f = g.friction_impulse.map(|f| f.to_array().map(f32::to_bits));
                    (g.normal_impulse.to_array().map(f32::to_bits), f)
                };
                assert_eq!(held(p), held(q), "impulses, {n} contacts");
                sliding += p.contacts().filter(slides).count();
            }
        }
        // Groups were visited in pairs, and lanes slid at their cone.
        assert!(pairs > 50 && sliding > 50, "{pairs} {sliding}");
    }

    /// Batches of contacts become batches of groups in order, keeping
    /// `joined`; a batch that is empty is left out; packing leaves its
    /// per-body marks cleared, so a second packing gives the same groups.
    #[test]
    fn batches_become_runs_of_groups() {
        let mut seed = 3;
        let (found, _, _) = contacts(60, 40, &mut seed);
        let batches = [
            Batch {
                rows: 0..20,
                joined: false,
            },
            Batch {
                rows: 20..20,
                joined: true,
            },
            Batch {
                rows: 20..45,
                joined: true,
            },
            Batch {
                rows: 45..60,
                joined: false,
            },
        ];
        let mut lanes = Lanes::default();
        pack(&found, &batches, 40, false, &mut lanes);
        assert_eq!(lanes.batches.len(), 3);
        assert_eq!(
            lanes.batches.iter().map(|b| b.joined).collect::<Vec<_>>(),
            [false, true, false]
        );
        for (pair, rows) in lanes.batches.windows(2).zip([0..20, 20..45]) {
            assert_eq!(pair[0].rows.end, pair[1].rows.start);
            let warm: Vec<u32> = lanes.groups[pair[0].rows.clone()]
                .iter()
                .flat_map(|g| g.contacts().map(|one| one.radius as u32))
                .collect();
            let mut sorted = warm.clone();
            sorted.sort_unstable();
            assert_eq!(sorted, rows.map(|r| r as u32).collect::<Vec<_>>());
        }
        let tags = |lanes: &Lanes| -> Vec<Vec<u32>> {
            let tag = |g: &Group| g.contacts().map(|one| one.radius as u32).collect();
            lanes.groups.iter().map(tag).collect()
        };
        let first = tags(&lanes);
        pack(&found, &batches, 40, false, &mut lanes);
        let second = tags(&lanes);
        assert_eq!(first, second);
    }

    /// What the contact solver orders each batch of pairs by class for: the
    /// contacts of a settled pile (a thousand balls, as many pairs as the
    /// broad phase finds within reach) pack into a few levels by class,
    /// where the broad phase's order (each ball's contacts one after the
    /// other) chains them into many more. Either way every contact is in
    /// one lane.
    #[test]
    fn by_class_a_pile_packs_into_few_levels() {
        use crate::kernels::broad::{BroadPhase, Reach, by_class};
        // Rows of balls of radius 0.05, every other row shifted half a ball.
        let (r, n) = (0.05f32, 1000u32);
        let items: Vec<Reach> = (0..n)
            .map(|i| {
                let (row, col) = ((i / 40) as f32, (i % 40) as f32);
                let shift = if (i / 40) % 2 == 1 { r } else { 0.0 };
                Reach {
                    pos: Vec3A::new(col * 2.0 * r + shift, row * 1.75 * r, 0.0),
                    reach: 1.1 * r,
                    key: u64::from(i),
                }
            })
            .collect();
        let mut broad = BroadPhase::default();
        let mut pairs = Vec::new();
        broad.pairs(&items, |_, _| true, &mut pairs);
        let one = |&(a, b): &(u32, u32)| One {
            a,
            b,
            wa: 1.0,
            wb: 1.0,
            mass: 0.5,
            normal: Vec3A::X,
            ..One::default()
        };
        let found: Vec<One> = pairs.iter().map(one).collect();
        let mut classed = pairs.clone();
        by_class(
            &mut classed,
            |&(a, b)| broad.class_of(a, b),
            &mut Vec::new(),
        );
        let classed: Vec<One> = classed.iter().map(one).collect();
        // A level starts at each group not beside the one before.
        let levels = |found: &[One]| {
            let lanes = packed_as_one_batch(found, n as usize);
            let held: usize = lanes.groups.iter().map(|g| g.contacts().count()).sum();
            assert_eq!(held, found.len());
            lanes.groups.iter().filter(|g| !g.beside).count()
        };
        let (in_cells, in_classes) = (levels(&found), levels(&classed));
        assert!(found.len() > 2 * n as usize, "{} pairs", found.len());
        assert!(
            4 * in_classes < in_cells,
            "{in_classes} levels by class, {in_cells} in the broad phase's order"
        );
    }

    /// Lanes of different bodies fill groups: 8 contacts of 16 different
    /// bodies take two groups; 8 contacts all on one moving body take
    /// eight.
    #[test]
    fn groups_fill_with_different_bodies_only() {
        let one = |a: u32, b: u32, tag: u32| One {
            a,
            b,
            radius: tag as f32,
            wa: 1.0,
            wb: 1.0,
            mass: 0.5,
            normal: Vec3A::X,
            ..One::default()
        };
        let batches = [Batch {
            rows: 0..8,
            joined: false,
        }];
        let mut lanes = Lanes::default();
        let apart: Vec<One> = (0..8).map(|i| one(2 * i, 2 * i + 1, i)).collect();
        pack(&apart, &batches, 16, false, &mut lanes);
        assert_eq!(lanes.groups.len(), 2);
        let shared: Vec<One> = (0..8).map(|i| one(0, i + 1, i)).collect();
        pack(&shared, &batches, 16, false, &mut lanes);
        assert_eq!(lanes.groups.len(), 8);
    }
}

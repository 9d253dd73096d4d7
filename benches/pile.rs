//! A settled pile: N balls (radius 0.05 m, mass 1) poured into a box, then
//! one fixed step of the plugin beside a plain-Rust loop of the same
//! contact physics in the same run.
//!
//! The plain loop does what the plugin does for such a pile, tuned, on
//! plain arrays: the same broad phase (pairs within `1.1·r + h·|v|` of
//! each other, found in a uniform grid laid out each step by a counting
//! sort), then `contact_substeps` (4) passes of gravity, contacts with the
//! three planes (found each pass, warm-started from the pass before) and
//! between pairs (found at the step's first pass for the whole step, turned
//! to each pass's positions, keeping their impulses), in columns, 4 rounds
//! of sequential impulses, one relaxing round and the drift. The plain loop
//! solves one contact at a time; the plugin solves its pair contacts four
//! at a time in SIMD lanes (with the bits of one at a time in its own
//! order). Sleeping is off in both. After the timed rounds it prints how
//! deep each pile's bodies sink (the deepest and the mean overlap), so the
//! two are seen to do the same work.
//!
//! `cargo bench --bench pile` prints, per N in 1 000, 10 000 and 100 000
//! (or the sizes given after `--`),
//! the median plugin / plain-loop ratio of interleaved rounds on one thread
//! and on two, and the bytes per body each holds (counted by a global
//! allocator: what building and settling the scene left allocated). The
//! plain loop runs on one thread; the plugin's two-thread app keeps the
//! default `parallel_threshold` (16 384 bodies), so a smaller pile steps on
//! one thread there too.

use std::hint::black_box;

use bevy::app::FixedMain;
use bevy::math::Vec3A;
use bevy::prelude::*;
use bevy_euler_physics::prelude::*;

mod common;
use common::{Counting, live_bytes, median, time};
use common::{H, PILE_R, bench_app, pile_layout, spawn_pile};

#[global_allocator]
static ALLOCATOR: Counting = Counting;

const R: f32 = PILE_R;
const SIZES: [usize; 3] = [1_000, 10_000, 100_000];
const G: f32 = -9.81;

/// The plugin's app with the pile poured and settled.
fn plugin_app(n: usize, parallel: bool, settle: usize) -> App {
    let mut app = bench_app(parallel);
    if parallel {
        // A pile is one island: it splits over threads by batches of
        // contacts, from the default size on, as in a game.
        app.world_mut()
            .resource_mut::<PhysicsSettings>()
            .parallel_threshold = PhysicsSettings::default().parallel_threshold;
    }
    spawn_pile(app.world_mut(), n);
    app.update();
    for _ in 0..settle {
        app.world_mut().run_schedule(FixedMain);
    }
    app
}

/// The plain loop's contacts of one pass, as columns: with a plane (`k` of
/// the three) or between two bodies, each with its normal, its targets
/// (biased, then relaxed), the impulses it holds, and where its warm start
/// goes.
#[derive(Default)]
struct Touches {
    a: Vec<u32>,
    /// The other body, or the plane's number.
    b: Vec<u32>,
    n: Vec<Vec3A>,
    target: Vec<f32>,
    relaxed: Vec<f32>,
    normal: Vec<f32>,
    friction: Vec<Vec3A>,
    warm: Vec<u32>,
}

impl Touches {
    fn clear(&mut self) {
        self.a.clear();
        self.b.clear();
        self.n.clear();
        self.target.clear();
        self.relaxed.clear();
        self.normal.clear();
        self.friction.clear();
        self.warm.clear();
    }

    #[allow(clippy::too_many_arguments)]
    fn push(
        &mut self,
        a: usize,
        b: usize,
        n: Vec3A,
        gap: f32,
        h: f32,
        warm: usize,
        held: (f32, Vec3A),
    ) {
        self.a.push(a as u32);
        self.b.push(b as u32);
        self.n.push(n);
        self.target.push(target(gap, h, true));
        self.relaxed.push(target(gap, h, false));
        self.normal.push(held.0);
        self.friction.push(held.1);
        self.warm.push(warm as u32);
    }
}

/// The speed a contact aims at along its normal: closing a gap within the
/// pass, or pushing out a fraction of an overlap (when `biased`).
fn target(gap: f32, h: f32, biased: bool) -> f32 {
    if gap >= 0.0 {
        -gap / h
    } else if biased {
        -0.2 * gap / h
    } else {
        0.0
    }
}

/// The 13 neighbour cells a cell pairs with besides itself (the other 13
/// pair with it).
const FORWARD: [[i32; 3]; 13] = [
    [1, 0, 0],
    [-1, 1, 0],
    [0, 1, 0],
    [1, 1, 0],
    [-1, -1, 1],
    [0, -1, 1],
    [1, -1, 1],
    [-1, 0, 1],
    [0, 0, 1],
    [1, 0, 1],
    [-1, 1, 1],
    [0, 1, 1],
    [1, 1, 1],
];

/// The plain loop, tuned: the pile's state on plain arrays, a grid laid
/// out by a counting sort each step, the contacts of a pass in columns,
/// planes apart from pairs.
struct Plain {
    pos: Vec<Vec3A>,
    vel: Vec<Vec3A>,
    planes: [(Vec3A, f32); 3],
    pairs: Vec<(u32, u32)>,
    warm: Vec<(f32, Vec3A)>,
    planes_touched: Touches,
    pairs_touched: Touches,
    reach: Vec<f32>,
    cell_of: Vec<u32>,
    /// Per cell, where its bodies start in `order` (one more entry: the
    /// end).
    starts: Vec<u32>,
    order: Vec<u32>,
    before: Vec<Vec3A>,
}

impl Plain {
    fn new(app: &mut App, n: usize) -> Self {
        let world = app.world_mut();
        let mut bodies: Vec<(Entity, Body)> = world
            .query::<(Entity, &Body)>()
            .iter(world)
            .map(|(e, b)| (e, *b))
            .collect();
        bodies.sort_by_key(|(e, _)| *e);
        let (_, half) = pile_layout(n);
        Self {
            pos: bodies.iter().map(|(_, b)| b.position.into()).collect(),
            vel: bodies.iter().map(|(_, b)| b.velocity.into()).collect(),
            planes: [(Vec3A::Y, 0.0), (Vec3A::X, -half), (Vec3A::NEG_X, -half)],
            pairs: Vec::new(),
            warm: Vec::new(),
            planes_touched: Touches::default(),
            pairs_touched: Touches::default(),
            reach: Vec::new(),
            cell_of: Vec::new(),
            starts: Vec::new(),
            order: Vec::new(),
            before: Vec::new(),
        }
    }

    /// Pairs within `1.1·r + h·|v|` of each other each: a uniform grid of
    /// cells twice the largest reach, over the bodies' bounding box (at
    /// most 8 cells per body), filled by a counting sort.
    fn broad_phase(&mut self) {
        let n = self.pos.len();
        self.reach.clear();
        self.reach
            .extend(self.vel.iter().map(|v| 1.1 * R + H * v.length()));
        let (mut low, mut high) = (Vec3A::splat(f32::MAX), Vec3A::splat(f32::MIN));
        for &p in &self.pos {
            low = low.min(p);
            high = high.max(p);
        }
        let mut size = 2.0 * self.reach.iter().copied().fold(0.0, f32::max);
        let dims = |size: f32| ((high - low) / size).floor().as_ivec3() + 1;
        while dims(size).as_i64vec3().element_product() > 8 * n as i64 {
            size *= 2.0;
        }
        let d = dims(size);
        self.cell_of.clear();
        self.cell_of.extend(self.pos.iter().map(|&p| {
            let c = ((p - low) / size).floor().as_ivec3().min(d - 1);
            (c.x + d.x * (c.y + d.y * c.z)) as u32
        }));
        let cells = d.element_product() as usize;
        self.starts.clear();
        self.starts.resize(cells + 1, 0);
        for &c in &self.cell_of {
            self.starts[c as usize + 1] += 1;
        }
        for c in 0..cells {
            self.starts[c + 1] += self.starts[c];
        }
        self.order.clear();
        self.order.resize(n, 0);
        let mut next = self.starts.clone();
        for (i, &c) in self.cell_of.iter().enumerate() {
            self.order[next[c as usize] as usize] = i as u32;
            next[c as usize] += 1;
        }
        self.pairs.clear();
        let (pos, reach, order, starts) = (&self.pos, &self.reach, &self.order, &self.starts);
        let test = |i: u32, j: u32, pairs: &mut Vec<(u32, u32)>| {
            let s = reach[i as usize] + reach[j as usize];
            if (pos[j as usize] - pos[i as usize]).length_squared() < s * s {
                pairs.push((i.min(j), i.max(j)));
            }
        };
        for z in 0..d.z {
            for y in 0..d.y {
                for x in 0..d.x {
                    let c = (x + d.x * (y + d.y * z)) as usize;
                    let here = &order[starts[c] as usize..starts[c + 1] as usize];
                    for (k, &i) in here.iter().enumerate() {
                        for &j in &here[k + 1..] {
                            test(i, j, &mut self.pairs);
                        }
                    }
                    for [dx, dy, dz] in FORWARD {
                        let (u, v, w) = (x + dx, y + dy, z + dz);
                        if u < 0 || v < 0 || w < 0 || u >= d.x || v >= d.y || w >= d.z {
                            continue;
                        }
                        let c = (u + d.x * (v + d.y * w)) as usize;
                        let there = &order[starts[c] as usize..starts[c + 1] as usize];
                        for &i in here {
                            for &j in there {
                                test(i, j, &mut self.pairs);
                            }
                        }
                    }
                }
            }
        }
    }

    fn pass(&mut self, h: f32, first: bool) {
        for v in &mut self.vel {
            v.y += h * G;
        }
        let (pos, vel, warm) = (&self.pos, &mut self.vel, &self.warm);
        let planes = &mut self.planes_touched;
        planes.clear();
        for (i, (&p, &v)) in pos.iter().zip(vel.iter()).enumerate() {
            for (k, &(normal, offset)) in self.planes.iter().enumerate() {
                let gap = normal.dot(p) - offset - R;
                if gap + h * normal.dot(v) >= 0.0 && gap >= R + h * v.length() {
                    continue;
                }
                let w = i * 3 + k;
                planes.push(i, k, normal, gap, h, w, warm[w]);
            }
        }
        // The pair contacts: found at the step's first pass for the whole
        // step, turned to each pass's positions, their impulses kept.
        let pairs = &mut self.pairs_touched;
        if first {
            pairs.clear();
            for &(a, b) in &self.pairs {
                let (a, b) = (a as usize, b as usize);
                let gap = pos[b].distance(pos[a]) - 2.0 * R;
                if gap >= R + H * (vel[b] - vel[a]).length() {
                    continue;
                }
                pairs.push(a, b, Vec3A::ZERO, 0.0, h, 0, (0.0, Vec3A::ZERO));
            }
        }
        for t in 0..pairs.a.len() {
            let (a, b) = (pairs.a[t] as usize, pairs.b[t] as usize);
            let d = pos[b] - pos[a];
            let dist = d.length();
            let n = if dist > 0.0 { d / dist } else { Vec3A::Y };
            let gap = dist - 2.0 * R;
            pairs.n[t] = n;
            pairs.target[t] = target(gap, h, true);
            pairs.relaxed[t] = target(gap, h, false);
            let f = pairs.friction[t];
            pairs.friction[t] = f - n.dot(f) * n;
        }
        // Warm start.
        for t in 0..planes.a.len() {
            vel[planes.a[t] as usize] += planes.normal[t] * planes.n[t] + planes.friction[t];
        }
        for t in 0..pairs.a.len() {
            let push = pairs.normal[t] * pairs.n[t] + pairs.friction[t];
            vel[pairs.a[t] as usize] -= push;
            vel[pairs.b[t] as usize] += push;
        }
        for _ in 0..4 {
            solve_planes(planes, vel);
            solve_pairs(pairs, vel);
        }
        self.before.clear();
        self.before.extend_from_slice(vel);
        for touches in [&mut *planes, &mut *pairs] {
            touches.target.copy_from_slice(&touches.relaxed);
        }
        solve_planes(planes, vel);
        solve_pairs(pairs, vel);
        for w in &mut self.warm {
            *w = (0.0, Vec3A::ZERO);
        }
        for t in 0..planes.a.len() {
            self.warm[planes.warm[t] as usize] = (planes.normal[t], planes.friction[t]);
        }
        // The relaxing round's difference moves the bodies, then the drift
        // with the relaxed velocity: `x += h·v_biased` in all.
        for (x, v) in self.pos.iter_mut().zip(&self.before) {
            *x += h * *v;
        }
    }

    fn step(&mut self) {
        self.broad_phase();
        self.warm.clear();
        self.warm.resize(3 * self.pos.len(), (0.0, Vec3A::ZERO));
        for pass in 0..4 {
            self.pass(H / 4.0, pass == 0);
        }
    }
}

impl Plain {
    /// The deepest and the mean overlap of touching bodies (with each
    /// other and with the planes), as shares of the radius.
    fn overlaps(&mut self) -> (f32, f32) {
        self.broad_phase();
        let mut depths = Vec::new();
        for &(a, b) in &self.pairs {
            let gap = self.pos[a as usize].distance(self.pos[b as usize]) - 2.0 * R;
            if gap < 0.0 {
                depths.push(-gap / R);
            }
        }
        for &p in &self.pos {
            for &(normal, offset) in &self.planes {
                let gap = normal.dot(p) - offset - R;
                if gap < 0.0 {
                    depths.push(-gap / R);
                }
            }
        }
        let deepest = depths.iter().copied().fold(0.0, f32::max);
        (
            deepest,
            depths.iter().sum::<f32>() / depths.len().max(1) as f32,
        )
    }
}

/// One round over the plane contacts: each body's accumulated normal
/// impulse (never pulling) and friction within 0.6 of it (mass 1).
fn solve_planes(t: &mut Touches, vel: &mut [Vec3A]) {
    for k in 0..t.a.len() {
        let (a, n) = (t.a[k] as usize, t.n[k]);
        let total = (t.normal[k] + t.target[k] - n.dot(vel[a])).max(0.0);
        vel[a] += (total - t.normal[k]) * n;
        t.normal[k] = total;
        let v = vel[a];
        let tangent = v - n.dot(v) * n;
        let total = (t.friction[k] - tangent).clamp_length_max(0.6 * t.normal[k]);
        vel[a] += total - t.friction[k];
        t.friction[k] = total;
    }
}

/// One round over the pair contacts: as [`solve_planes`], the impulses
/// shared half and half (equal masses of 1).
fn solve_pairs(t: &mut Touches, vel: &mut [Vec3A]) {
    for k in 0..t.a.len() {
        let (a, b, n) = (t.a[k] as usize, t.b[k] as usize, t.n[k]);
        let total = (t.normal[k] + (t.target[k] - n.dot(vel[b] - vel[a])) * 0.5).max(0.0);
        let push = (total - t.normal[k]) * n;
        vel[a] -= push;
        vel[b] += push;
        t.normal[k] = total;
        let rel = vel[b] - vel[a];
        let tangent = rel - n.dot(rel) * n;
        let total = (t.friction[k] - tangent * 0.5).clamp_length_max(0.6 * t.normal[k]);
        let push = total - t.friction[k];
        vel[a] -= push;
        vel[b] += push;
        t.friction[k] = total;
    }
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    // `cargo test --benches` runs this once as a smoke test: the smallest
    // pile, a few steps.
    let smoke = !args.iter().any(|a| a == "--bench");
    // `cargo bench --bench pile -- 10000` runs the sizes named alone.
    let named: Vec<usize> = args.iter().filter_map(|a| a.parse().ok()).collect();
    let sizes: &[usize] = if smoke {
        &SIZES[..1]
    } else if named.is_empty() {
        &SIZES
    } else {
        &named
    };
    for &n in sizes {
        let settle = if smoke { 10 } else { 400 };
        let before = live_bytes();
        let mut one = plugin_app(n, false, settle);
        let plugin_bytes = live_bytes() - before;
        let mut two = plugin_app(n, true, settle);
        let before = live_bytes();
        let mut plain = Plain::new(&mut one, n);
        plain.step();
        let plain_bytes = live_bytes() - before;
        let rounds = if smoke { 1 } else { 11 };
        let steps = if smoke { 1 } else { (2_000_000 / n).max(2) };
        let (mut r1, mut r2, mut micros) = (Vec::new(), Vec::new(), Vec::new());
        for _ in 0..rounds {
            let reference = time(steps, || {
                plain.step();
                black_box(&plain.pos);
            });
            micros.push(reference / steps as f64 * 1e6);
            r1.push(time(steps, || one.world_mut().run_schedule(FixedMain)) / reference);
            r2.push(time(steps, || two.world_mut().run_schedule(FixedMain)) / reference);
        }
        let ((m1, a1, b1), (m2, a2, b2)) = (median(r1), median(r2));
        let plain_micros = median(micros).0;
        // Both piles after the same steps: how deep their bodies sink.
        let (plugin_deepest, plugin_mean) = Plain::new(&mut one, n).overlaps();
        let (plain_deepest, plain_mean) = plain.overlaps();
        assert!(plain.pos.iter().all(|p| p.is_finite()));
        println!(
            "pile/{n}: plugin / plain loop, median of {rounds} interleaved rounds of {steps} steps: \
             1 thread {m1:.2}× ({a1:.2}–{b1:.2}), 2 threads {m2:.2}× ({a2:.2}–{b2:.2}) \
             (the plain loop {plain_micros:.0} µs a step, {} pair contacts in its last pass); \
             bytes per body: plugin {}, plain loop {}; deepest / mean overlap (share of r): \
             plugin {:.0} % / {:.1} %, plain loop {:.0} % / {:.1} %",
            plain.pairs_touched.a.len(),
            plugin_bytes / n as isize,
            plain_bytes / n as isize,
            100.0 * plugin_deepest,
            100.0 * plugin_mean,
            100.0 * plain_deepest,
            100.0 * plain_mean,
        );
    }
}

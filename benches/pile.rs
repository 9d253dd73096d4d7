//! A settled pile: N balls (radius 0.05 m, mass 1) poured into a box, then
//! one fixed step of the plugin beside a plain-Rust loop of the same
//! contact physics in the same run.
//!
//! The plain loop does what the plugin does for such a pile, on plain
//! arrays: the same broad phase (a uniform grid, pairs within
//! `1.1·r + h·|v|` of each other), then `contact_substeps` (4) passes of
//! gravity, contacts with the three planes and between pairs (warm-started
//! from the pass before), 4 rounds of sequential impulses, one relaxing
//! round and the drift. Sleeping is off in both.
//!
//! `cargo bench --bench pile` prints, per N in 1 000, 10 000 and 100 000
//! (or the sizes given after `--`),
//! the median plugin / plain-loop ratio of interleaved rounds on one thread
//! and on two, and the bytes per body each holds (counted by a global
//! allocator: what building and settling the scene left allocated). The
//! plain loop runs on one thread; the plugin's two-thread app keeps the
//! default `parallel_threshold` (16 384 bodies), so a smaller pile steps on
//! one thread there too.

use std::collections::HashMap;
use std::hint::black_box;

use bevy::app::FixedMain;
use bevy::math::Vec3A;
use bevy::prelude::*;
use bevy_euler_physics::prelude::*;

mod common;
use common::{Counting, live_bytes, median, time};
use common::{H, bench_app};

#[global_allocator]
static ALLOCATOR: Counting = Counting;

const R: f32 = 0.05;
const SIZES: [usize; 3] = [1_000, 10_000, 100_000];
const G: f32 = -9.81;

/// Columns of the pile and the box's half width: about twice as wide as
/// high.
fn layout(n: usize) -> (usize, f32) {
    let columns = ((2 * n) as f32).sqrt().ceil() as usize;
    (columns, columns as f32 * 2.2 * R / 2.0 + R)
}

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
    let (columns, half) = layout(n);
    let world = app.world_mut();
    world.spawn(GroundPlane::horizontal(0.0));
    world.spawn(GroundPlane::new(Vec3::X, -half));
    world.spawn(GroundPlane::new(Vec3::NEG_X, -half));
    for i in 0..n {
        let (row, col) = (i / columns, i % columns);
        let jitter = ((i * 7919) % 13) as f32 / 13.0 - 0.5;
        let x = -half + R + col as f32 * 2.2 * R + 0.1 * R * jitter;
        world.spawn((
            Body::new(1.0).with_position(Vec3::new(x, R + row as f32 * 2.2 * R, 0.0)),
            Radius(R),
        ));
    }
    app.update();
    for _ in 0..settle {
        app.world_mut().run_schedule(FixedMain);
    }
    app
}

/// One contact of a pass in the plain loop: bodies `a` and `b` (`b` is
/// `usize::MAX` for a plane), normal, target speed, biased target, impulses.
struct Touch {
    a: usize,
    b: usize,
    n: Vec3A,
    target: f32,
    relaxed: f32,
    warm: usize,
    normal: f32,
    friction: Vec3A,
}

/// The plain loop: the pile's state on arrays, and what a step keeps.
struct Plain {
    pos: Vec<Vec3A>,
    vel: Vec<Vec3A>,
    planes: [(Vec3A, f32); 3],
    pairs: Vec<(usize, usize)>,
    warm: Vec<(f32, Vec3A)>,
    touches: Vec<Touch>,
    cells: HashMap<[i32; 3], (u32, u32)>,
    order: Vec<([i32; 3], u32)>,
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
        let (_, half) = layout(n);
        Self {
            pos: bodies.iter().map(|(_, b)| b.position.into()).collect(),
            vel: bodies.iter().map(|(_, b)| b.velocity.into()).collect(),
            planes: [(Vec3A::Y, 0.0), (Vec3A::X, -half), (Vec3A::NEG_X, -half)],
            pairs: Vec::new(),
            warm: Vec::new(),
            touches: Vec::new(),
            cells: HashMap::new(),
            order: Vec::new(),
            before: Vec::new(),
        }
    }

    fn broad_phase(&mut self) {
        let reach: Vec<f32> = self.vel.iter().map(|v| 1.1 * R + H * v.length()).collect();
        let size = 2.0 * reach.iter().copied().fold(0.0, f32::max);
        let cell = |p: Vec3A| [0, 1, 2].map(|k| (p[k] / size).floor() as i32);
        self.order.clear();
        self.order.extend(
            self.pos
                .iter()
                .enumerate()
                .map(|(i, &p)| (cell(p), i as u32)),
        );
        self.order.sort_unstable();
        self.cells.clear();
        let mut start = 0;
        while start < self.order.len() {
            let c = self.order[start].0;
            let end = start + self.order[start..].iter().take_while(|e| e.0 == c).count();
            self.cells.insert(c, (start as u32, end as u32));
            start = end;
        }
        self.pairs.clear();
        let near = |i: usize, j: usize| {
            let s = reach[i] + reach[j];
            (self.pos[j] - self.pos[i]).length_squared() < s * s
        };
        let forward = [[0, 0, 0], [0, 1, 0], [1, -1, 0], [1, 0, 0], [1, 1, 0]];
        let mut start = 0;
        while start < self.order.len() {
            let c = self.order[start].0;
            let (_, end) = self.cells[&c];
            for offset in forward {
                let next = [c[0] + offset[0], c[1] + offset[1], c[2]];
                let Some(&(from, to)) = self.cells.get(&next) else {
                    continue;
                };
                for x in start..end as usize {
                    let first = if offset == [0, 0, 0] {
                        x + 1
                    } else {
                        from as usize
                    };
                    for y in first..to as usize {
                        let (i, j) = (self.order[x].1 as usize, self.order[y].1 as usize);
                        if near(i, j) {
                            self.pairs.push((i, j));
                        }
                    }
                }
            }
            start = end as usize;
        }
    }

    fn target(gap: f32, h: f32, biased: bool) -> f32 {
        if gap >= 0.0 {
            -gap / h
        } else if biased {
            -0.2 * gap / h
        } else {
            0.0
        }
    }

    fn pass(&mut self, h: f32) {
        let n = self.pos.len();
        for v in &mut self.vel {
            v.y += h * G;
        }
        self.touches.clear();
        for i in 0..n {
            for (k, &(normal, offset)) in self.planes.iter().enumerate() {
                let gap = normal.dot(self.pos[i]) - offset - R;
                let approach = normal.dot(self.vel[i]);
                if gap + h * approach >= 0.0 && gap >= R + h * self.vel[i].length() {
                    continue;
                }
                let w = self.pairs.len() + i * 3 + k;
                self.touches.push(Touch {
                    a: i,
                    b: usize::MAX,
                    n: normal,
                    target: Self::target(gap, h, true),
                    relaxed: Self::target(gap, h, false),
                    warm: w,
                    normal: self.warm[w].0,
                    friction: self.warm[w].1,
                });
            }
        }
        for (p, &(a, b)) in self.pairs.iter().enumerate() {
            let d = self.pos[b] - self.pos[a];
            let dist = d.length();
            let n = if dist > 0.0 { d / dist } else { Vec3A::Y };
            let gap = dist - 2.0 * R;
            let rel = self.vel[b] - self.vel[a];
            let approach = n.dot(rel);
            if gap + h * approach >= 0.0 && gap >= R + h * rel.length() {
                continue;
            }
            self.touches.push(Touch {
                a,
                b,
                n,
                target: Self::target(gap, h, true),
                relaxed: Self::target(gap, h, false),
                warm: p,
                normal: self.warm[p].0,
                friction: self.warm[p].1,
            });
        }
        let vel = &mut self.vel;
        for t in &self.touches {
            let push = t.normal * t.n + t.friction;
            if t.b == usize::MAX {
                vel[t.a] += push;
            } else {
                vel[t.a] -= push;
                vel[t.b] += push;
            }
        }
        for _ in 0..4 {
            for t in self.touches.iter_mut() {
                solve(t, vel);
            }
        }
        self.before.clear();
        self.before.extend_from_slice(vel);
        for t in self.touches.iter_mut() {
            t.target = t.relaxed;
            solve(t, vel);
        }
        for w in &mut self.warm {
            *w = (0.0, Vec3A::ZERO);
        }
        for t in &self.touches {
            self.warm[t.warm] = (t.normal, t.friction);
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
        self.warm
            .resize(self.pairs.len() + 3 * self.pos.len(), (0.0, Vec3A::ZERO));
        for _ in 0..4 {
            self.pass(H / 4.0);
        }
    }
}

/// One contact's accumulated normal and friction impulses (equal masses
/// of 1: a pair shares each impulse half and half).
fn solve(t: &mut Touch, vel: &mut [Vec3A]) {
    let pair = t.b != usize::MAX;
    let (rel, mass) = if pair {
        (vel[t.b] - vel[t.a], 0.5)
    } else {
        (vel[t.a], 1.0)
    };
    let total = (t.normal + (t.target - t.n.dot(rel)) * mass).max(0.0);
    let push = (total - t.normal) * t.n;
    t.normal = total;
    apply(t, vel, push, pair);
    let rel = if pair { vel[t.b] - vel[t.a] } else { vel[t.a] };
    let tangent = rel - t.n.dot(rel) * t.n;
    let total = (t.friction - tangent * mass).clamp_length_max(0.6 * t.normal);
    let push = total - t.friction;
    t.friction = total;
    apply(t, vel, push, pair);
}

fn apply(t: &Touch, vel: &mut [Vec3A], push: Vec3A, pair: bool) {
    if pair {
        vel[t.a] -= push;
        vel[t.b] += push;
    } else {
        vel[t.a] += push;
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
        let (mut r1, mut r2) = (Vec::new(), Vec::new());
        for _ in 0..rounds {
            let reference = time(steps, || {
                plain.step();
                black_box(&plain.pos);
            });
            r1.push(time(steps, || one.world_mut().run_schedule(FixedMain)) / reference);
            r2.push(time(steps, || two.world_mut().run_schedule(FixedMain)) / reference);
        }
        let ((m1, a1, b1), (m2, a2, b2)) = (median(r1), median(r2));
        println!(
            "pile/{n}: plugin / plain loop, median of {rounds} interleaved rounds of {steps} steps: \
             1 thread {m1:.2}× ({a1:.2}–{b1:.2}), 2 threads {m2:.2}× ({a2:.2}–{b2:.2}); \
             bytes per body: plugin {}, plain loop {}",
            plugin_bytes / n as isize,
            plain_bytes / n as isize
        );
    }
}

//! Stiff ropes: implicit springs against the automatic substeps that hold
//! the same ropes stable, and against a plain-Rust conjugate-gradient loop
//! of the same implicit step.
//!
//! `cargo bench --bench implicit` steps 100 ropes of 100 bodies (0.1 kg on
//! 1e5 N/m springs: `ω·h ≈ 31` at 64 Hz) and prints, per round of
//! interleaved timings, the medians of: the implicit plugin step over the
//! substepped plugin step, and over the plain loop. `-- 10` (a rope count)
//! runs another size. `cargo test --benches` runs it once, small.

mod common;

use std::hint::black_box;

use bevy::app::FixedMain;
use bevy::math::{Mat3A, Vec3A};
use bevy::prelude::*;
use bevy_euler_physics::prelude::*;
use common::{bench_app, median, time};

/// The fixed step of these ropes (64 Hz), their bodies' mass, springs.
const H: f32 = 1.0 / 64.0;
const M: f32 = 0.1;
const K: f32 = 1e5;
const C: f32 = 0.5;
const REST: f32 = 0.1;
const G: Vec3A = Vec3A::new(0.0, -9.81, 0.0);

/// Where body `s` of rope `r` starts: level, so that it swings down.
fn start(r: usize, s: usize) -> Vec3A {
    Vec3A::new(r as f32 + REST * s as f32, 0.0, 0.0)
}

/// The plugin with `ropes` ropes of `links` bodies, each rope's first body
/// carrying `mark` (implicit springs, or automatic substeps).
fn plugin_app(ropes: usize, links: usize, mark: impl Bundle + Clone) -> App {
    let mut app = bench_app(false);
    app.insert_resource(Time::<Fixed>::from_duration(
        std::time::Duration::from_secs_f32(H),
    ));
    let world = app.world_mut();
    for r in 0..ropes {
        let mut prev = world.spawn(Body::fixed(start(r, 0).into())).id();
        for s in 1..=links {
            let mut e = world.spawn(Body::new(M).with_position(start(r, s).into()));
            if s == 1 {
                e.insert(mark.clone());
            }
            let e = e.id();
            world.spawn(Spring::new(prev, e, REST, K).with_damping(C));
            prev = e;
        }
    }
    app.world_mut().run_schedule(FixedMain);
    app
}

/// The reference: the same ropes and the same implicit step, as plain
/// arrays and a plain Jacobi-preconditioned conjugate-gradient loop per
/// rope (slot 0 of each rope fixed), with the plugin's default iteration
/// cap and tolerance.
struct Plain {
    ropes: usize,
    n: usize,
    pos: Vec<Vec3A>,
    vel: Vec<Vec3A>,
    blocks: Vec<Mat3A>,
    b: Vec<Vec3A>,
    x: Vec<Vec3A>,
    r: Vec<Vec3A>,
    z: Vec<Vec3A>,
    p: Vec<Vec3A>,
    q: Vec<Vec3A>,
    diag: Vec<Vec3A>,
}

impl Plain {
    fn new(ropes: usize, links: usize) -> Self {
        let n = links + 1;
        let pos = (0..ropes)
            .flat_map(|r| (0..n).map(move |s| start(r, s)))
            .collect();
        let zeros = vec![Vec3A::ZERO; n];
        Plain {
            ropes,
            n,
            pos,
            vel: vec![Vec3A::ZERO; ropes * n],
            blocks: vec![Mat3A::ZERO; n],
            b: zeros.clone(),
            x: zeros.clone(),
            r: zeros.clone(),
            z: zeros.clone(),
            p: zeros.clone(),
            q: zeros.clone(),
            diag: zeros,
        }
    }

    fn step(&mut self) {
        for rope in 0..self.ropes {
            self.rope(rope * self.n);
        }
    }

    /// One rope: spring j joins bodies j and j + 1; body 0 is fixed.
    fn rope(&mut self, base: usize) {
        let n = self.n;
        for i in 0..n {
            self.b[i] = H * M * G;
            self.diag[i] = Vec3A::splat(M);
        }
        for j in 0..n - 1 {
            let (a, b) = (base + j, base + j + 1);
            let d = self.pos[b] - self.pos[a];
            let l = d.length();
            let u = d / l;
            let dv = self.vel[b] - self.vel[a];
            let f = u * (K * (l - REST) + C * dv.dot(u));
            let along = Mat3A::from_cols(u * u.x, u * u.y, u * u.z);
            let stiff = along * K + (Mat3A::IDENTITY - along) * (K * (1.0 - REST / l).max(0.0));
            let block = along * (H * C) + stiff * (H * H);
            self.blocks[j] = block;
            let kv = stiff * dv * (H * H);
            self.b[j] += H * f + kv;
            self.b[j + 1] -= H * f + kv;
            let d = Vec3A::new(block.x_axis.x, block.y_axis.y, block.z_axis.z);
            self.diag[j] += d;
            self.diag[j + 1] += d;
        }
        // Body 0 is fixed: its row and column drop out.
        let norm = |v: &[Vec3A]| {
            v[1..]
                .iter()
                .map(|v| v.length_squared())
                .sum::<f32>()
                .sqrt()
        };
        let dot = |a: &[Vec3A], b: &[Vec3A]| {
            a[1..]
                .iter()
                .zip(&b[1..])
                .map(|(a, b)| a.dot(*b))
                .sum::<f32>()
        };
        self.x.fill(Vec3A::ZERO);
        self.r.copy_from_slice(&self.b);
        let rhs = norm(&self.r);
        for i in 1..n {
            self.z[i] = self.r[i] / self.diag[i];
        }
        self.p.copy_from_slice(&self.z);
        self.p[0] = Vec3A::ZERO;
        let mut rz = dot(&self.r, &self.z);
        for _ in 0..100 {
            for i in 1..n {
                self.q[i] = M * self.p[i];
            }
            for j in 0..n - 1 {
                let f = self.blocks[j] * (self.p[j] - self.p[j + 1]);
                if j > 0 {
                    self.q[j] += f;
                }
                self.q[j + 1] -= f;
            }
            let alpha = rz / dot(&self.p, &self.q);
            for i in 1..n {
                self.x[i] += alpha * self.p[i];
                self.r[i] -= alpha * self.q[i];
            }
            if norm(&self.r) <= 1e-5 * rhs {
                break;
            }
            for i in 1..n {
                self.z[i] = self.r[i] / self.diag[i];
            }
            let next = dot(&self.r, &self.z);
            let beta = next / rz;
            rz = next;
            for i in 1..n {
                self.p[i] = self.z[i] + beta * self.p[i];
            }
        }
        for i in 1..n {
            self.vel[base + i] += self.x[i];
            self.pos[base + i] += H * self.vel[base + i];
        }
    }
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let smoke = !args.iter().any(|a| a == "--bench");
    let named: Vec<usize> = args.iter().filter_map(|a| a.parse().ok()).collect();
    let ropes = if smoke {
        2
    } else {
        named.first().copied().unwrap_or(100)
    };
    let links = if smoke { 10 } else { 100 };
    let mut implicit = plugin_app(ropes, links, ImplicitSprings);
    let mut substeps = plugin_app(ropes, links, AutoSubsteps);
    let passes = {
        let world = substeps.world_mut();
        let mut islands = world.query::<&Island>();
        islands.iter(world).map(Island::substeps).max().unwrap_or(1)
    };
    let mut plain = Plain::new(ropes, links);
    plain.step();
    let rounds = if smoke { 1 } else { 11 };
    let steps = if smoke { 1 } else { 40 };
    let (mut over_substeps, mut over_plain) = (Vec::new(), Vec::new());
    for _ in 0..rounds {
        let reference = time(steps, || {
            plain.step();
            black_box(&plain.pos);
        });
        let i = time(steps, || implicit.world_mut().run_schedule(FixedMain));
        let s = time(steps, || substeps.world_mut().run_schedule(FixedMain));
        over_substeps.push(i / s);
        over_plain.push(i / reference);
    }
    let ((s, s0, s1), (p, p0, p1)) = (median(over_substeps), median(over_plain));
    println!(
        "implicit/{ropes}x{links}: median of {rounds} interleaved rounds of {steps} steps, one thread: \
         implicit / automatic substeps ({passes} passes) {s:.2}× ({s0:.2}–{s1:.2}); \
         implicit / plain CG loop {p:.2}× ({p0:.2}–{p1:.2})"
    );
}

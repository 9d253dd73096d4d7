//! Stiff ropes: implicit springs against the automatic substeps that hold
//! the same ropes stable, and against plain-Rust loops of the same
//! implicit step.
//!
//! `cargo bench --bench implicit` steps 100 ropes of 100 bodies (0.1 kg on
//! 1e5 N/m springs: `ω·h ≈ 31` at 64 Hz) and prints the medians, over
//! rounds of interleaved timings, of: the implicit plugin step (solved
//! directly, the default for a rope) over the substepped plugin step, and
//! over a plain block-tridiagonal elimination; and the implicit plugin
//! step forced to conjugate gradients (with Jacobi's preconditioner) over
//! a plain conjugate-gradient loop. Then a cloth like the `cloth`
//! example's, 40×40 and 64×64: milliseconds per step with conjugate
//! gradients preconditioned by multigrid (the default) and by Jacobi, and
//! by the automatic substeps. `-- 10` (a rope count) runs another size.
//! `cargo test --benches` runs it once, small.

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

/// The references: the same ropes and the same implicit step as plain
/// arrays, solved per rope (slot 0 of each rope fixed) either by a plain
/// Jacobi-preconditioned conjugate-gradient loop (the plugin's default
/// iteration cap and tolerance) or directly, by block-tridiagonal
/// elimination (the plain form of the plugin's factorisation on a chain).
struct Plain {
    ropes: usize,
    n: usize,
    direct: bool,
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
    pivots: Vec<Mat3A>,
    lower: Vec<Mat3A>,
}

impl Plain {
    fn new(ropes: usize, links: usize, direct: bool) -> Self {
        let n = links + 1;
        let pos = (0..ropes)
            .flat_map(|r| (0..n).map(move |s| start(r, s)))
            .collect();
        let zeros = vec![Vec3A::ZERO; n];
        Plain {
            ropes,
            n,
            direct,
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
            pivots: vec![Mat3A::ZERO; n],
            lower: vec![Mat3A::ZERO; n],
        }
    }

    fn step(&mut self) {
        for rope in 0..self.ropes {
            let base = rope * self.n;
            self.assemble(base);
            if self.direct {
                self.eliminate();
            } else {
                self.conjugate_gradients();
            }
            for i in 1..self.n {
                self.vel[base + i] += self.x[i];
                self.pos[base + i] += H * self.vel[base + i];
            }
        }
    }

    /// One rope's right-hand side, spring blocks and diagonal: spring j
    /// joins bodies j and j + 1.
    fn assemble(&mut self, base: usize) {
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
    }

    /// Block-tridiagonal elimination over bodies 1..n (body 0 is fixed):
    /// the diagonal `M + B_{i−1} + B_i`, the coupling `−B_i`.
    fn eliminate(&mut self) {
        let n = self.n;
        let mass = Mat3A::from_diagonal(Vec3::splat(M));
        self.pivots[1] = mass + self.blocks[0] + if n > 2 { self.blocks[1] } else { Mat3A::ZERO };
        self.x[1] = self.b[1];
        for i in 1..n - 1 {
            let inverse = self.pivots[i].inverse();
            let coupling = -self.blocks[i];
            let lower = coupling * inverse;
            let next = if i + 2 < n {
                self.blocks[i + 1]
            } else {
                Mat3A::ZERO
            };
            self.pivots[i + 1] = mass + self.blocks[i] + next - lower * coupling;
            self.x[i + 1] = self.b[i + 1] - lower * self.x[i];
            self.pivots[i] = inverse;
            self.lower[i] = lower;
        }
        self.pivots[n - 1] = self.pivots[n - 1].inverse();
        for i in 1..n {
            self.x[i] = self.pivots[i] * self.x[i];
        }
        for i in (1..n - 1).rev() {
            let (l, next) = (self.lower[i], self.x[i + 1]);
            self.x[i] -= Vec3A::new(l.x_axis.dot(next), l.y_axis.dot(next), l.z_axis.dot(next));
        }
    }

    /// Jacobi-preconditioned conjugate gradients over bodies 1..n.
    fn conjugate_gradients(&mut self) {
        let n = self.n;
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
    }
}

/// A cloth of `size`×`size` bodies like the `cloth` example's (2.5 kg,
/// 2 m square, structural, shear and bend springs, two corners fixed,
/// level at the start so that it falls and swings), stepped implicitly
/// with the example's settings and `implicit`'s preconditioner, or (for
/// `None`) by automatic substeps.
fn cloth_app(size: usize, implicit: Option<ImplicitPreconditioner>) -> App {
    let mut app = bench_app(false);
    app.insert_resource(ImplicitSettings {
        max_iterations: 200,
        tolerance: 1e-3,
        preconditioner: implicit.unwrap_or_default(),
        ..default()
    });
    let spacing = 2.0 / (size - 1) as f32;
    let mass = 2.5 / (size * size) as f32;
    let world = app.world_mut();
    let mut bodies = Vec::with_capacity(size * size);
    for i in 0..size {
        for j in 0..size {
            let at = Vec3::new(spacing * j as f32, 0.0, spacing * i as f32);
            let body = if i == 0 && (j == 0 || j == size - 1) {
                Body::fixed(at)
            } else {
                Body::new(mass).with_position(at)
            };
            let mut e = world.spawn((body, Damping(0.05)));
            if (i, j) == (1, 1) {
                if implicit.is_some() {
                    e.insert(ImplicitSprings);
                } else {
                    e.insert(AutoSubsteps);
                }
            }
            bodies.push(e.id());
        }
    }
    // As stiff per length at every size: the example's 40×40 springs,
    // scaled by (size − 1) / 39.
    let finer = (size - 1) as f32 / 39.0;
    let mut join = |a: (usize, usize), b: (usize, usize), k: f32| {
        let k = k * finer;
        let rest = spacing * ((a.0.abs_diff(b.0).pow(2) + a.1.abs_diff(b.1).pow(2)) as f32).sqrt();
        let (ea, eb) = (bodies[a.0 * size + a.1], bodies[b.0 * size + b.1]);
        world.spawn(Spring::new(ea, eb, rest, k).with_damping(0.02));
    };
    for i in 0..size {
        for j in 0..size {
            if j + 1 < size {
                join((i, j), (i, j + 1), 2000.0);
            }
            if i + 1 < size {
                join((i, j), (i + 1, j), 2000.0);
                if j + 1 < size {
                    join((i, j), (i + 1, j + 1), 1000.0);
                    join((i, j + 1), (i + 1, j), 1000.0);
                }
            }
            if j + 2 < size {
                join((i, j), (i, j + 2), 200.0);
            }
            if i + 2 < size {
                join((i, j), (i + 2, j), 200.0);
            }
        }
    }
    // Past the first, smooth steps: the cloth has fallen and swings.
    for _ in 0..30 {
        app.world_mut().run_schedule(FixedMain);
    }
    app
}

/// The cloth's cost: milliseconds per fixed step, implicit (conjugate
/// gradients with each preconditioner) and by automatic substeps,
/// interleaved.
fn cloth(smoke: bool, size: usize) {
    let size = if smoke { 8 } else { size };
    let mut implicit = cloth_app(size, Some(ImplicitPreconditioner::Multigrid));
    let mut jacobi = cloth_app(size, Some(ImplicitPreconditioner::Jacobi));
    let mut substeps = cloth_app(size, None);
    let passes = {
        let world = substeps.world_mut();
        let mut islands = world.query::<&Island>();
        islands.iter(world).map(Island::substeps).max().unwrap_or(1)
    };
    let (rounds, steps) = if smoke { (1, 1) } else { (5, 10) };
    let mut runs: [Vec<f64>; 5] = Default::default();
    for _ in 0..rounds {
        let i = time(steps, || implicit.world_mut().run_schedule(FixedMain));
        let s = time(steps, || substeps.world_mut().run_schedule(FixedMain));
        let j = time(steps, || jacobi.world_mut().run_schedule(FixedMain));
        for (run, value) in runs.iter_mut().zip([
            i * 1e3 / steps as f64,
            j * 1e3 / steps as f64,
            s * 1e3 / steps as f64,
            i / s,
            j / s,
        ]) {
            run.push(value);
        }
    }
    let [
        (i, i0, i1),
        (j, j0, j1),
        (s, s0, s1),
        (r, r0, r1),
        (q, q0, q1),
    ] = runs.map(median);
    println!(
        "implicit/cloth {size}x{size}: median of {rounds} interleaved rounds of {steps} steps, one thread: \
         implicit (conjugate gradients, tolerance 1e-3) with multigrid {i:.2} ms ({i0:.2}–{i1:.2}), \
         with Jacobi {j:.2} ms ({j0:.2}–{j1:.2}); automatic substeps ({passes} passes) {s:.2} ms ({s0:.2}–{s1:.2}); \
         multigrid / substeps {r:.2}× ({r0:.2}–{r1:.2}); Jacobi / substeps {q:.2}× ({q0:.2}–{q1:.2})"
    );
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
    let mut direct = plugin_app(ropes, links, ImplicitSprings);
    let mut iterative = plugin_app(ropes, links, ImplicitSprings);
    // The plain loop's algorithm: conjugate gradients with Jacobi's
    // preconditioner.
    iterative.insert_resource(ImplicitSettings {
        solver: ImplicitSolver::ConjugateGradients,
        preconditioner: ImplicitPreconditioner::Jacobi,
        ..default()
    });
    iterative.world_mut().run_schedule(FixedMain);
    let mut substeps = plugin_app(ropes, links, AutoSubsteps);
    let passes = {
        let world = substeps.world_mut();
        let mut islands = world.query::<&Island>();
        islands.iter(world).map(Island::substeps).max().unwrap_or(1)
    };
    let (mut plain_direct, mut plain_cg) = (
        Plain::new(ropes, links, true),
        Plain::new(ropes, links, false),
    );
    plain_direct.step();
    plain_cg.step();
    let rounds = if smoke { 1 } else { 11 };
    let steps = if smoke { 1 } else { 40 };
    let mut ratios = [Vec::new(), Vec::new(), Vec::new()];
    for _ in 0..rounds {
        let d = time(steps, || direct.world_mut().run_schedule(FixedMain));
        let s = time(steps, || substeps.world_mut().run_schedule(FixedMain));
        let pd = time(steps, || {
            plain_direct.step();
            black_box(&plain_direct.pos);
        });
        let i = time(steps, || iterative.world_mut().run_schedule(FixedMain));
        let pc = time(steps, || {
            plain_cg.step();
            black_box(&plain_cg.pos);
        });
        ratios[0].push(d / s);
        ratios[1].push(d / pd);
        ratios[2].push(i / pc);
    }
    let [(s, s0, s1), (d, d0, d1), (c, c0, c1)] = ratios.map(median);
    println!(
        "implicit/{ropes}x{links}: median of {rounds} interleaved rounds of {steps} steps, one thread: \
         implicit (direct) / automatic substeps ({passes} passes) {s:.2}× ({s0:.2}–{s1:.2}); \
         implicit (direct) / plain block-tridiagonal loop {d:.2}× ({d0:.2}–{d1:.2}); \
         implicit (conjugate gradients) / plain CG loop {c:.2}× ({c0:.2}–{c1:.2})"
    );
    for size in [40, 64] {
        cloth(smoke, size);
        if smoke {
            break;
        }
    }
}

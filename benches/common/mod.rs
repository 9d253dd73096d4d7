//! What the benchmarks share: the rope scene's constants, the scene as a
//! plain array loop (the reference every speed claim is measured against),
//! and ropes spawned as bodies and springs. (`compare/` includes this file
//! too, so that avian and rapier are measured against the same loop.)
#![allow(dead_code)]

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicIsize, Ordering};

use bevy::app::FixedMain;
use bevy::ecs::schedule::{ScheduleLabel, SingleThreadedExecutor};
use bevy::prelude::*;
use bevy_euler_physics::prelude::*;

/// The fixed step.
pub const H: f32 = 1.0 / 60.0;
/// Spring stiffness, damping and rest length.
pub const K: f32 = 1000.0;
pub const C: f32 = 1.0;
pub const REST: f32 = 0.1;
pub const G: Vec3 = Vec3::new(0.0, -9.81, 0.0);
/// How far apart the ropes hang.
pub const SPACING: f32 = 0.5;

/// Initial positions of the scene, rope by rope: the fixed body first.
pub fn rope_positions(ropes: usize, links: usize) -> impl Iterator<Item = (usize, Vec3)> {
    (0..ropes).flat_map(move |r| {
        let x = r as f32 * SPACING;
        (0..=links).map(move |s| {
            let p = if s == 0 {
                Vec3::new(x, 0.0, 0.0)
            } else {
                swinging(x, s)
            };
            (s, p)
        })
    })
}

/// Where body `s` (from 1) of a swinging rope hanging from `(x, 0)` starts:
/// its rest place, nudged 0.02 sideways.
pub fn swinging(x: f32, s: usize) -> Vec3 {
    Vec3::new(x + 0.02, -REST * s as f32, 0.0)
}

/// The reference: the same physics as plain arrays.
pub struct Plain {
    pub pos: Vec<Vec3>,
    vel: Vec<Vec3>,
    inv_mass: Vec<f32>,
    force: Vec<Vec3>,
    springs: Vec<(u32, u32)>,
}

impl Plain {
    pub fn new(ropes: usize, links: usize) -> Self {
        let mut plain = Plain {
            pos: Vec::new(),
            vel: Vec::new(),
            inv_mass: Vec::new(),
            force: Vec::new(),
            springs: Vec::new(),
        };
        for (s, p) in rope_positions(ropes, links) {
            let i = plain.pos.len() as u32;
            plain.pos.push(p);
            plain.vel.push(Vec3::ZERO);
            plain.inv_mass.push(if s == 0 { 0.0 } else { 1.0 });
            if s > 0 {
                plain.springs.push((i - 1, i));
            }
        }
        plain.force = vec![Vec3::ZERO; plain.pos.len()];
        plain
    }

    pub fn step(&mut self) {
        self.force.fill(Vec3::ZERO);
        for &(a, b) in &self.springs {
            let (a, b) = (a as usize, b as usize);
            let d = self.pos[b] - self.pos[a];
            let len = d.length();
            if len > 0.0 {
                let n = d / len;
                let f = n * (K * (len - REST) + C * (self.vel[b] - self.vel[a]).dot(n));
                self.force[a] += f;
                self.force[b] -= f;
            }
        }
        for i in 0..self.pos.len() {
            let w = self.inv_mass[i];
            if w > 0.0 {
                self.vel[i] += H * (G + self.force[i] * w);
                self.pos[i] += H * self.vel[i];
            }
        }
    }
}

/// A rope of `links` bodies at `x`, hanging at rest (each spring stretched
/// by the weight below it) when `resting`, else nudged sideways to swing.
/// Returns its bodies.
pub fn rope(
    world: &mut World,
    x: f32,
    links: usize,
    resting: bool,
    extra: impl Bundle + Clone,
) -> Vec<Entity> {
    let mut prev = world.spawn(Body::fixed(Vec3::new(x, 0.0, 0.0))).id();
    let mut y = 0.0;
    let mut bodies = Vec::new();
    for s in 1..=links {
        let position = if resting {
            // The spring above body s carries the weight of the
            // links − s + 1 bodies from it down.
            y -= REST + (links - s + 1) as f32 * 9.81 / K;
            Vec3::new(x, y, 0.0)
        } else {
            // Where `rope_positions` (and so the plain loop) puts it.
            swinging(x, s)
        };
        let e = world
            .spawn((Body::new(1.0).with_position(position), extra.clone()))
            .id();
        world.spawn(Spring::new(prev, e, REST, K).with_damping(C));
        bodies.push(e);
        prev = e;
    }
    bodies
}

/// Runs `FixedMain` and its schedules on Bevy's single-threaded executor.
/// The multi-threaded one wakes the compute pool's threads for every
/// schedule it runs (six per fixed step), whatever the physics does.
pub fn single_threaded_fixed_main(app: &mut App) {
    for label in [
        FixedMain.intern(),
        FixedFirst.intern(),
        FixedPreUpdate.intern(),
        FixedUpdate.intern(),
        FixedPostUpdate.intern(),
        FixedLast.intern(),
    ] {
        app.edit_schedule(label, |schedule| {
            schedule.set_executor(SingleThreadedExecutor::new());
        });
    }
}

/// An app for a benchmark: the plugin on `MinimalPlugins` with a compute
/// pool of 1 thread, the fixed step `H`, sleeping off (the plain loops
/// never sleep); with `parallel`, every pass split over two threads (the
/// pool's and the calling thread, which runs a scope's tasks while it
/// waits: what Bevy's default pools give a two-core machine) and Bevy's
/// multi-threaded executor, else no split and `FixedMain` on the
/// single-threaded executor.
pub fn bench_app(parallel: bool) -> App {
    let mut app = App::new();
    let mut pools = TaskPoolPlugin::default();
    pools.task_pool_options.compute.min_threads = 1;
    pools.task_pool_options.compute.max_threads = 1;
    app.add_plugins((MinimalPlugins.set(pools), EulerPhysicsPlugin))
        .insert_resource(Time::<Fixed>::from_duration(
            std::time::Duration::from_secs_f32(H),
        ))
        .insert_resource(PhysicsSettings {
            substeps: 1,
            parallel_threshold: if parallel { 1 } else { usize::MAX },
            ..default()
        })
        .insert_resource(SleepSettings {
            enabled: false,
            ..default()
        });
    if !parallel {
        single_threaded_fixed_main(&mut app);
    }
    app
}

/// An allocator that counts the bytes allocated and not yet freed; a
/// benchmark that measures memory makes it its global allocator
/// (`#[global_allocator] static ALLOCATOR: Counting = Counting;`).
pub struct Counting;

static LIVE: AtomicIsize = AtomicIsize::new(0);

// SAFETY: every call goes to the system allocator unchanged; the count is
// all that is added.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        LIVE.fetch_add(layout.size() as isize, Ordering::Relaxed);
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        LIVE.fetch_sub(layout.size() as isize, Ordering::Relaxed);
        unsafe { System.dealloc(ptr, layout) }
    }
}

/// Bytes allocated through [`Counting`] and not yet freed.
pub fn live_bytes() -> isize {
    LIVE.load(Ordering::Relaxed)
}

/// The `main` of a benchmark with a comparison of its own: criterion's
/// groups, then, under `cargo bench` (which passes `--bench`), `compare`
/// with the names given after `--` (e.g. `-- 00x100`). The smoke runs
/// (`cargo test --benches`, `cargo bench -- --test`, where criterion runs
/// each benchmark once) skip the comparison.
pub fn main_with(groups: fn(), compare: impl FnOnce(&[String])) {
    groups();
    criterion::Criterion::default()
        .configure_from_args()
        .final_summary();
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.iter().any(|a| a == "--bench") && !args.iter().any(|a| a == "--test") {
        let names: Vec<String> = args.into_iter().filter(|a| !a.starts_with('-')).collect();
        compare(&names);
    }
}

/// Seconds that `steps` calls of `f` take.
pub fn time(steps: usize, mut f: impl FnMut()) -> f64 {
    let start = std::time::Instant::now();
    for _ in 0..steps {
        f();
    }
    start.elapsed().as_secs_f64()
}

/// The median, smallest and largest of `xs`.
pub fn median(mut xs: Vec<f64>) -> (f64, f64, f64) {
    xs.sort_by(f64::total_cmp);
    (xs[xs.len() / 2], xs[0], xs[xs.len() - 1])
}

/// The radius of `benches/pile.rs`'s balls, in metres (1 kg each).
pub const PILE_R: f32 = 0.05;

/// Columns of `benches/pile.rs`'s pile of `n` balls and its box's half
/// width: about twice as wide as high.
pub fn pile_layout(n: usize) -> (usize, f32) {
    let columns = ((2 * n) as f32).sqrt().ceil() as usize;
    (columns, columns as f32 * 2.2 * PILE_R / 2.0 + PILE_R)
}

/// Spawns `benches/pile.rs`'s pile: a box of three planes and `n` balls on
/// a grid of spacing `2.2·r`, each column nudged by up to 5 % of `r`.
pub fn spawn_pile(world: &mut World, n: usize) {
    let (columns, half) = pile_layout(n);
    let r = PILE_R;
    world.spawn(GroundPlane::horizontal(0.0));
    world.spawn(GroundPlane::new(Vec3::X, -half));
    world.spawn(GroundPlane::new(Vec3::NEG_X, -half));
    for i in 0..n {
        let (row, col) = (i / columns, i % columns);
        let jitter = ((i * 7919) % 13) as f32 / 13.0 - 0.5;
        let x = -half + r + col as f32 * 2.2 * r + 0.1 * r * jitter;
        world.spawn((
            Body::new(1.0).with_position(Vec3::new(x, r + row as f32 * 2.2 * r, 0.0)),
            Radius(r),
        ));
    }
}

//! One fixed step of the "ropes R×S" scene: the plugin beside a plain array
//! loop of the identical physics, in the same run.
//!
//! Scene: R ropes, each a fixed body with S bodies of mass 1 hanging below it
//! 0.1 apart, consecutive bodies joined by springs (k = 1000, c = 1, rest
//! 0.1); gravity; h = 1/60; every hanging body nudged 0.02 sideways so the
//! ropes swing.
//!
//! `cargo bench --bench step` prints, per size (criterion):
//! - `plain`: the reference, a plain array loop (one thread);
//! - `plugin_1_thread`: one `FixedMain` run on one thread: the parallel
//!   passes off, and `FixedMain`'s schedules on Bevy's single-threaded
//!   executor (the multi-threaded executor would wake the pool's thread
//!   for every schedule);
//! - `plugin_2_threads`: the same with every pass split over two threads,
//!   the compute pool's one and the calling thread (what Bevy's default
//!   pools give a two-core machine; Bevy's own parallel queries run on one
//!   thread with such a pool, so the plugin splits without them), and
//!   Bevy's default executors as the plugin leaves them
//!   (`lean_fixed_schedules`: `FixedPostUpdate`, which holds one system of
//!   Bevy's, single-threaded; before it, that schedule's wake of a pool
//!   thread cost tens of microseconds per step).
//!
//! Then, since this machine's speed can change between criterion's separate
//! measurements, the same three interleaved round by round, with a fourth:
//! one thread with a system that does nothing in each of the four sets of
//! `PhysicsSubstep` (the cost of copying the pass's bodies out to their
//! components and back around systems of yours), and a fifth: two threads
//! with `lean_fixed_schedules` off (every fixed schedule on Bevy's
//! multi-threaded executor, as before that setting). `ratio/RxS` lines give the
//! median plugin / plain-loop ratio of 15 rounds and its range, and the
//! median of each round's one-thread time over its two-thread time.

use std::hint::black_box;
use std::time::{Duration, Instant};

use bevy::app::FixedMain;
use bevy::prelude::*;
use bevy_euler_physics::prelude::*;
use criterion::{BenchmarkId, Criterion, criterion_group};

mod common;
use common::{Plain, bench_app, rope};

const SIZES: [(usize, usize); 3] = [(10, 100), (100, 100), (1000, 100)];

/// Does nothing, but sits in a substep set.
fn watch(_bodies: SubstepBodies<&Body>) {}

/// `app` with `lean_fixed_schedules` off, its fixed schedules given back
/// to Bevy's default executor.
fn not_lean(mut app: App) -> App {
    app.world_mut()
        .resource_mut::<PhysicsSettings>()
        .lean_fixed_schedules = false;
    app.update();
    app
}

fn plugin_app(ropes: usize, links: usize, parallel: bool) -> App {
    plugin_app_with(ropes, links, parallel, false)
}

/// The scene's app; `watched` puts [`watch`] in each set of
/// `PhysicsSubstep`.
fn plugin_app_with(ropes: usize, links: usize, parallel: bool, watched: bool) -> App {
    let mut app = bench_app(parallel);
    if watched {
        for set in SubstepSystems::ALL {
            app.add_systems(PhysicsSubstep, watch.in_set(set));
        }
    }
    for r in 0..ropes {
        rope(app.world_mut(), r as f32 * 0.5, links, false, ());
    }
    app.update();
    // Warm: the first step builds the solver's index (and the fixed
    // schedules); the update after it lets the plugin choose their
    // executors, as it does in any app (`lean_fixed_schedules`).
    app.world_mut().run_schedule(FixedMain);
    app.update();
    app
}

fn step(c: &mut Criterion) {
    let mut group = c.benchmark_group("ropes");
    group.warm_up_time(Duration::from_secs(1));
    group.measurement_time(Duration::from_secs(3));
    for (ropes, links) in SIZES {
        let label = format!("{ropes}x{links}");
        let mut plain = Plain::new(ropes, links);
        group.bench_function(BenchmarkId::new("plain", &label), |b| {
            b.iter(|| {
                plain.step();
                black_box(&plain.pos);
            })
        });
        for (name, parallel) in [("plugin_1_thread", false), ("plugin_2_threads", true)] {
            let mut app = plugin_app(ropes, links, parallel);
            group.bench_function(BenchmarkId::new(name, &label), |b| {
                b.iter(|| app.world_mut().run_schedule(FixedMain))
            });
        }
    }
    group.finish();
}

/// Rounds of the interleaved comparison.
const ROUNDS: usize = 15;

/// The time of `steps` calls of `f`.
fn time(steps: usize, mut f: impl FnMut()) -> Duration {
    let start = Instant::now();
    for _ in 0..steps {
        f();
    }
    start.elapsed()
}

/// Median, least and greatest of `ratios`.
fn spread(mut ratios: Vec<f64>) -> (f64, f64, f64) {
    ratios.sort_by(f64::total_cmp);
    (
        ratios[ratios.len() / 2],
        ratios[0],
        ratios[ratios.len() - 1],
    )
}

/// The plugin against the plain loop, interleaved: each round times the
/// plain loop, then the plugin on one thread, then on two, over the same
/// number of steps (about 20 ms of the plain loop), so that a change in the
/// machine's speed between criterion's separate measurements does not land
/// in the ratio. Prints the median ratio of `ROUNDS` rounds and the range.
fn interleaved(filters: &[String]) {
    for (ropes, links) in SIZES {
        let label = format!("ratio/{ropes}x{links}");
        if !filters.is_empty() && !filters.iter().any(|f| label.contains(f.as_str())) {
            continue;
        }
        let mut plain = Plain::new(ropes, links);
        let mut apps = [
            plugin_app(ropes, links, false),
            plugin_app(ropes, links, true),
            plugin_app_with(ropes, links, false, true),
            not_lean(plugin_app(ropes, links, true)),
        ];
        let probe = time(10, || plain.step()) / 10;
        let steps = (Duration::from_millis(20).as_secs_f64() / probe.as_secs_f64().max(1e-9))
            .ceil()
            .max(1.0) as usize;
        let (mut one, mut two, mut watched) = (Vec::new(), Vec::new(), Vec::new());
        let (mut bevy_executors, mut speedup) = (Vec::new(), Vec::new());
        for _ in 0..ROUNDS {
            let reference = time(steps, || {
                plain.step();
                black_box(&plain.pos);
            })
            .as_secs_f64();
            let [single, split, with_systems, split_not_lean] = apps
                .each_mut()
                .map(|app| time(steps, || app.world_mut().run_schedule(FixedMain)).as_secs_f64());
            one.push(single / reference);
            two.push(split / reference);
            watched.push(with_systems / reference);
            bevy_executors.push(split_not_lean / reference);
            speedup.push(single / split);
        }
        let ((m1, lo1, hi1), (m2, lo2, hi2)) = (spread(one), spread(two));
        let (mw, low, hiw) = spread(watched);
        let (mb, lob, hib) = spread(bevy_executors);
        let (ms, los, his) = spread(speedup);
        println!(
            "{label}: plugin / plain loop, median of {ROUNDS} interleaved rounds of {steps} steps: \
             1 thread {m1:.2}× ({lo1:.2}–{hi1:.2}), 2 threads {m2:.2}× ({lo2:.2}–{hi2:.2}), \
             1 thread with substep systems {mw:.2}× ({low:.2}–{hiw:.2}), \
             2 threads with every fixed schedule on Bevy's multi-threaded executor \
             {mb:.2}× ({lob:.2}–{hib:.2}); 2 threads faster than 1: {ms:.2}× ({los:.2}–{his:.2})"
        );
    }
}

criterion_group!(benches, step);

fn main() {
    common::main_with(benches, interleaved);
}

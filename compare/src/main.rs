//! The "ropes R×S" scene on three engines in one process and one run:
//! this plugin (`bevy_euler_physics`), avian2d 0.7.0 and bevy_rapier2d
//! 0.36.0 (the last releases of both on Bevy 0.19), each beside a plain
//! array loop of the same physics measured in the same run.
//!
//! Scene (the repository's benchmark scene, `benches/common/mod.rs`): R
//! ropes, each a fixed body with S bodies of mass 1 hanging below it 0.1
//! apart, consecutive bodies joined by springs (k = 1000, c = 1, rest
//! 0.1); gravity; fixed step h = 1/60; every hanging body nudged 0.02
//! sideways so the ropes swing; sleeping off. avian and rapier get point
//! masses without colliders and their nearest equivalent of a damped spring
//! (see `avian.rs` and `rapier.rs`).
//!
//! Measured, per size:
//! - step time: one fixed step is one `FixedMain` run (as `benches/step.rs`
//!   times the plugin), Bevy's fixed-time accumulator not involved. In 15
//!   interleaved rounds (each: the plain loop, then every engine row, the
//!   same number of steps, about 20 ms of the plain loop), the median of
//!   each row's time over the plain loop's time in the same round, its
//!   range, and the median microseconds per step;
//! - memory: the bytes an app with the scene holds beyond the same app
//!   without it, after the same steps, per body (anchors included),
//!   counted by a counting global allocator, apps built one at a time;
//!   and the plain loop's arrays per body;
//! - a sanity check: after 60 steps no position is NaN and the lowest body
//!   of the first rope has moved; the lowest body's y and the hanging
//!   bodies' mean y are printed (all rows should hang near the same place),
//!   and the first rope's lowest body's fall in the first step (g·h² =
//!   0.00273 m for one step of semi-implicit Euler from rest; less where an
//!   engine splits the step: one step per `FixedMain` run shows here).
//!
//! Every row runs on one thread: Bevy's compute pool has one thread, and
//! `FixedMain`'s schedules run on Bevy's single-threaded executor (avian
//! puts its own `PhysicsSchedule` and `SubstepSchedule` there too; rapier
//! is built without its `parallel` feature, avian without its own).
//!
//! Run (from the repository root; sizes 100×100 and 1000×100 unless given):
//!
//! ```text
//! cargo run --release --manifest-path compare/Cargo.toml
//! cargo run --release --manifest-path compare/Cargo.toml -- --ropes 100 --segments 100
//! ```
//!
//! `-- --pile` runs the pile scene instead (`pile.rs`: balls settling in a
//! box, at 1 000 and 10 000 balls, or the counts given after `--pile`;
//! `--only NAME` keeps the engines whose name holds NAME).

mod apps;
mod avian;
mod euler;
mod pile;
mod rapier;
mod scene;

use std::hint::black_box;

use bevy::math::Vec2;
use bevy::prelude::*;

use apps::{Probe, WARM_STEPS, step};
use scene::{Counting, H, Plain, live_bytes, median, time};

#[global_allocator]
static ALLOCATOR: Counting = Counting;

/// Rounds of the interleaved timing.
const ROUNDS: usize = 15;
/// Plain-loop time per round, in seconds.
const ROUND_SECONDS: f64 = 0.020;
/// Steps before the memory count (the warm-up's included).
const MEMORY_STEPS: usize = 3;
/// Steps before the sanity check (the memory count's included).
const CHECK_STEPS: usize = 60;
/// Steps each timed app takes before the first round.
const TIMING_WARM_STEPS: usize = 3;

/// One engine with one configuration.
struct Row {
    engine: &'static str,
    settings: String,
    build: Box<dyn Fn(usize, usize) -> App>,
    positions: fn(&mut World) -> Vec<(Entity, Vec2)>,
}

fn rows() -> Vec<Row> {
    let avian_default = avian::DEFAULT_SUBSTEPS;
    let rapier_default = rapier::default_iterations();
    vec![
        Row {
            engine: "bevy_euler_physics",
            settings: "substeps 1".into(),
            build: Box::new(euler::app),
            positions: euler::positions,
        },
        Row {
            engine: "avian2d 0.7.0",
            settings: "SubstepCount(1)".into(),
            build: Box::new(|r, s| avian::app(r, s, 1)),
            positions: avian::positions,
        },
        Row {
            engine: "avian2d 0.7.0",
            settings: format!("SubstepCount({avian_default}), its default"),
            build: Box::new(move |r, s| avian::app(r, s, avian_default)),
            positions: avian::positions,
        },
        Row {
            engine: "bevy_rapier2d 0.36.0",
            settings: "num_solver_iterations 1".into(),
            build: Box::new(|r, s| rapier::app(r, s, 1)),
            positions: rapier::positions,
        },
        Row {
            engine: "bevy_rapier2d 0.36.0",
            settings: format!("num_solver_iterations {rapier_default}, its default"),
            build: Box::new(move |r, s| rapier::app(r, s, rapier_default)),
            positions: rapier::positions,
        },
    ]
}

/// What the memory count and the sanity check found for a row.
struct Checked {
    bytes_per_body: f64,
    first_fall: f32,
    lowest_y: f32,
    mean_y: f32,
}

/// The probe body's position.
fn probe_position(app: &mut App, row: &Row) -> (Probe, Vec2) {
    let probe = *app.world().resource::<Probe>();
    let position = (row.positions)(app.world_mut())
        .into_iter()
        .find(|&(e, _)| e == probe.body)
        .map(|(_, p)| p)
        .expect("the probe body has a position");
    (probe, position)
}

/// Memory per body, then the sanity check, on apps built one at a time.
fn check(row: &Row, ropes: usize, links: usize) -> Checked {
    // A first empty app, not counted: what a process allocates once (the
    // task pools, registries) lands here.
    drop((row.build)(0, links));

    let before = live_bytes();
    let mut empty = (row.build)(0, links);
    for _ in WARM_STEPS..MEMORY_STEPS {
        step(&mut empty);
    }
    let base = live_bytes() - before;
    drop(empty);

    let before = live_bytes();
    let mut app = (row.build)(ropes, links);
    // One step so far: the probe's first fall.
    let (probe, after_one) = probe_position(&mut app, row);
    for _ in WARM_STEPS..MEMORY_STEPS {
        step(&mut app);
    }
    let with_scene = live_bytes() - before;
    let bodies = (ropes * (links + 1)) as f64;
    let bytes_per_body = (with_scene - base) as f64 / bodies;

    for _ in MEMORY_STEPS..CHECK_STEPS {
        step(&mut app);
    }
    let positions = (row.positions)(app.world_mut());
    assert_eq!(positions.len(), ropes * links, "{}: bodies", row.engine);
    assert!(
        positions.iter().all(|(_, p)| p.is_finite()),
        "{} ({}): a position is not finite after {CHECK_STEPS} steps",
        row.engine,
        row.settings
    );
    let (_, now) = probe_position(&mut app, row);
    assert!(
        now.distance(probe.start) > 1e-3,
        "{} ({}): the probe body did not move in {CHECK_STEPS} steps",
        row.engine,
        row.settings
    );
    let lowest_y = positions
        .iter()
        .map(|(_, p)| p.y)
        .fold(f32::INFINITY, f32::min);
    let mean_y = positions.iter().map(|(_, p)| p.y).sum::<f32>() / positions.len() as f32;
    drop(app);
    Checked {
        bytes_per_body,
        first_fall: after_one.y - probe.start.y,
        lowest_y,
        mean_y,
    }
}

/// The plain loop's arrays per body, its first fall and its lowest body's
/// y after `CHECK_STEPS` steps.
fn check_plain(ropes: usize, links: usize) -> Checked {
    let before = live_bytes();
    let mut plain = Plain::new(ropes, links);
    let bytes = live_bytes() - before;
    // The first rope's lowest body.
    let probe = links;
    let start = plain.pos[probe].y;
    plain.step();
    let first_fall = plain.pos[probe].y - start;
    for _ in 1..CHECK_STEPS {
        plain.step();
    }
    assert!(plain.pos.iter().all(|p| p.is_finite()));
    // The hanging bodies' mean y (the anchors, at y = 0, left out).
    let hanging = (ropes * links) as f32;
    Checked {
        bytes_per_body: bytes as f64 / (ropes * (links + 1)) as f64,
        first_fall,
        lowest_y: plain.pos.iter().map(|p| p.y).fold(f32::INFINITY, f32::min),
        mean_y: plain.pos.iter().map(|p| p.y).sum::<f32>() / hanging,
    }
}

/// Per row: median ratio to the plain loop, its range, median µs per step;
/// and the plain loop's median µs per step and the steps per round.
struct Timing {
    rows: Vec<(f64, f64, f64, f64)>,
    plain_us: f64,
    steps: usize,
}

fn interleaved(rows: &[Row], ropes: usize, links: usize) -> Timing {
    let mut plain = Plain::new(ropes, links);
    let mut apps: Vec<App> = rows.iter().map(|row| (row.build)(ropes, links)).collect();
    for app in &mut apps {
        for _ in 0..TIMING_WARM_STEPS {
            step(app);
        }
    }
    for _ in 0..TIMING_WARM_STEPS {
        plain.step();
    }
    let probe = time(10, || plain.step()) / 10.0;
    let steps = (ROUND_SECONDS / probe.max(1e-9)).ceil().max(1.0) as usize;
    let mut ratios = vec![Vec::new(); rows.len()];
    let mut micros = vec![Vec::new(); rows.len()];
    let mut plain_micros = Vec::new();
    for _ in 0..ROUNDS {
        let reference = time(steps, || {
            plain.step();
            black_box(&plain.pos);
        });
        plain_micros.push(reference / steps as f64 * 1e6);
        for (i, app) in apps.iter_mut().enumerate() {
            let t = time(steps, || step(app));
            ratios[i].push(t / reference);
            micros[i].push(t / steps as f64 * 1e6);
        }
    }
    let rows = ratios
        .into_iter()
        .zip(micros)
        .map(|(r, m)| {
            let (median_ratio, lo, hi) = median(r);
            (median_ratio, lo, hi, median(m).0)
        })
        .collect();
    Timing {
        rows,
        plain_us: median(plain_micros).0,
        steps,
    }
}

fn run(ropes: usize, links: usize) {
    let label = format!("ropes {ropes}x{links}");
    let bodies = ropes * (links + 1);
    println!(
        "{label}: {bodies} bodies ({ropes} anchors), h = 1/60 s, k = 1000, c = 1, rest 0.1, \
         sleeping off; every row on 1 thread (compute pool of 1 thread, FixedMain's schedules \
         on Bevy's SingleThreadedExecutor); one step = one FixedMain run"
    );
    let rows = rows();
    let plain = check_plain(ropes, links);
    let checked: Vec<Checked> = rows.iter().map(|row| check(row, ropes, links)).collect();
    let timing = interleaved(&rows, ropes, links);
    println!(
        "{label} | plain loop (1 thread) | {:.1} µs/step | {:.0} bytes/body (arrays) | \
         first-step fall {:.5} m | after {CHECK_STEPS} steps: lowest y {:.3}, mean y {:.3}",
        timing.plain_us, plain.bytes_per_body, plain.first_fall, plain.lowest_y, plain.mean_y
    );
    for ((row, c), &(ratio, lo, hi, us)) in rows.iter().zip(&checked).zip(&timing.rows) {
        println!(
            "{label} | {} ({}, 1 thread) | {us:.1} µs/step = {ratio:.2}× plain ({lo:.2}–{hi:.2}) | \
             {:.0} bytes/body | first-step fall {:.5} m | after {CHECK_STEPS} steps: lowest y {:.3}, \
             mean y {:.3}",
            row.engine, row.settings, c.bytes_per_body, c.first_fall, c.lowest_y, c.mean_y
        );
    }
    println!(
        "{label}: ratios are medians of {ROUNDS} interleaved rounds of {} steps each \
         (range in brackets); memory is the app with the scene minus the same app without it, \
         after {MEMORY_STEPS} steps, per body, anchors included; free fall in one step from rest \
         would be {:.5} m",
        timing.steps,
        -9.81 * H * H
    );
}

/// `--ropes R --segments S`; either alone keeps 100 for the other; neither
/// runs 100×100 and 1000×100.
fn sizes() -> Vec<(usize, usize)> {
    let mut args = std::env::args().skip(1);
    let (mut ropes, mut segments) = (None, None);
    while let Some(arg) = args.next() {
        let value = |v: Option<String>| -> usize {
            v.and_then(|v| v.parse().ok())
                .unwrap_or_else(|| panic!("{arg} needs a number"))
        };
        match arg.as_str() {
            "--ropes" => ropes = Some(value(args.next())),
            "--segments" => segments = Some(value(args.next())),
            _ => panic!("unknown argument {arg}; use --ropes R --segments S"),
        }
    }
    if ropes.is_none() && segments.is_none() {
        vec![(100, 100), (1000, 100)]
    } else {
        vec![(ropes.unwrap_or(100), segments.unwrap_or(100))]
    }
}

fn main() {
    // `--pile N [N…]`: the pile scene (`pile.rs`) at each size instead.
    let args: Vec<String> = std::env::args().skip(1).collect();
    // `--only NAME` keeps the engines whose name contains NAME (to profile
    // one alone).
    if args.first().is_some_and(|a| a == "--pile") {
        let mut rest = args[1..].iter();
        let (mut sizes, mut only) = (Vec::new(), None);
        while let Some(arg) = rest.next() {
            if arg == "--only" {
                only = Some(rest.next().expect("--only takes an engine's name").as_str());
            } else {
                sizes.push(arg.parse().expect("--pile takes ball counts"));
            }
        }
        for n in if sizes.is_empty() { vec![1000, 10_000] } else { sizes } {
            pile::run(n, only);
        }
        return;
    }
    for (ropes, links) in sizes() {
        assert!(ropes > 0 && links > 0, "at least one rope of one body");
        run(ropes, links);
    }
}

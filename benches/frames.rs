//! Frames between fixed steps: 1 000 ropes of 100 bodies (100 000 awake
//! bodies, sleeping off), frames a tenth of a fixed step long, so nine
//! frames in ten only draw (interpolate) and one also steps. The average
//! frame of an app of `MinimalPlugins` and the plugin, beside a plain loop
//! that does the same work on arrays on one thread: the ropes' physics
//! every tenth frame, and every frame a lerp of each body between its last
//! two positions into a `Transform`-sized record (48 bytes: translation,
//! rotation, scale, as `Transform` is with `Quat` aligned to 16). The app
//! has Bevy's default task pools, so above `parallel_threshold` its step
//! is split over the compute pool's threads and the calling thread (two
//! threads on a 2-core machine, whose pool has one), and its
//! interpolation over the pool when it has two threads or more (on a
//! 2-core machine it runs on one): the ratio is not one thread's against
//! one.
//!
//! `cargo bench --bench frames` prints criterion's times of one frame
//! (`plain`, `plain_draw_only` (the lerp alone), `plugin`, and
//! `plugin_draw_only`, a frame that steps nothing), then the interleaved
//! ratio of the average frame over 15 rounds of 100 frames, with its range
//! and the cost per body per frame, and the same for frames that step
//! nothing. First it prints the bytes per body the scene holds, beside the
//! plain loop's, and where a frame's time goes (with Bevy's transform
//! propagation added: the fixed loop, the interpolation, the propagation
//! and the rest).

use std::hint::black_box;
use std::time::Duration;

use bevy::prelude::*;
use bevy::time::TimeUpdateStrategy;
use bevy_euler_physics::prelude::*;
use criterion::{Criterion, criterion_group};

mod common;
use common::{Counting, H, Plain, live_bytes, median, rope, time};
#[path = "../examples/support/part_times.rs"]
mod part_times;
use part_times::{PartTimes, time_part};

#[global_allocator]
static ALLOCATOR: Counting = Counting;

const ROPES: usize = 1000;
const LINKS: usize = 100;
/// Frames per fixed step.
const FRAMES: u32 = 10;

/// A `Transform`-sized record.
#[derive(Clone, Copy, Default)]
#[allow(dead_code)]
struct Record {
    translation: Vec3,
    rotation: Quat,
    scale: Vec3,
}

/// The plain reference: the physics, the previous positions, the records.
struct PlainFrames {
    plain: Plain,
    previous: Vec<Vec3>,
    records: Vec<Record>,
    frame: u32,
}

impl PlainFrames {
    fn new() -> Self {
        let plain = Plain::new(ROPES, LINKS);
        let n = plain.pos.len();
        PlainFrames {
            previous: plain.pos.clone(),
            records: vec![
                Record {
                    scale: Vec3::ONE,
                    ..default()
                };
                n
            ],
            plain,
            frame: 0,
        }
    }

    fn frame(&mut self) {
        self.frame += 1;
        if self.frame.is_multiple_of(FRAMES) {
            self.previous.copy_from_slice(&self.plain.pos);
            self.plain.step();
        }
        self.draw();
    }

    /// The lerp alone: a frame that steps nothing.
    fn draw(&mut self) {
        let alpha = (self.frame % FRAMES) as f32 / FRAMES as f32;
        for ((record, previous), current) in self
            .records
            .iter_mut()
            .zip(&self.previous)
            .zip(&self.plain.pos)
        {
            record.translation = previous.lerp(*current, alpha);
        }
        black_box(&self.records);
    }
}

/// The scene's app, a frame a tenth of `H` long, warmed over 20 frames (one
/// fixed step: Bevy's first update has no time).
fn plugin_app() -> App {
    scene_app(ROPES)
}

/// [`plugin_app`] with `ropes` ropes.
fn scene_app(ropes: usize) -> App {
    let mut app = App::new();
    app.add_plugins((MinimalPlugins, EulerPhysicsPlugin))
        .insert_resource(Time::<Fixed>::from_duration(Duration::from_secs_f32(H)))
        .insert_resource(TimeUpdateStrategy::ManualDuration(
            Duration::from_secs_f32(H) / FRAMES,
        ))
        .insert_resource(SleepSettings {
            enabled: false,
            ..default()
        });
    for r in 0..ropes {
        rope(app.world_mut(), r as f32 * 0.5, LINKS, false, ());
    }
    for _ in 0..2 * FRAMES {
        app.update();
    }
    // (The next step comes in the second measured frame.)
    app
}

fn frames(c: &mut Criterion) {
    let mut group = c.benchmark_group("frames");
    group.sample_size(20);
    group.warm_up_time(Duration::from_secs(1));
    group.measurement_time(Duration::from_secs(4));
    let mut plain = PlainFrames::new();
    group.bench_function("plain", |b| b.iter(|| plain.frame()));
    group.bench_function("plain_draw_only", |b| b.iter(|| plain.draw()));
    let mut app = plugin_app();
    group.bench_function("plugin", |b| b.iter(|| app.update()));
    let mut app = plugin_app();
    app.insert_resource(TimeUpdateStrategy::ManualDuration(Duration::ZERO));
    group.bench_function("plugin_draw_only", |b| b.iter(|| app.update()));
    group.finish();
}

/// Bytes per body of the scene: what an app with it holds beyond the same
/// app without it (its entities' components, springs included, the
/// solver's arrays, Bevy's tables and indices), per body; and the plain
/// loop's arrays per body.
fn memory() {
    let before = live_bytes();
    let empty = scene_app(0);
    let base = live_bytes() - before;
    let before = live_bytes();
    let full = plugin_app();
    let with_scene = live_bytes() - before;
    let bodies = (ROPES * (LINKS + 1)) as f64;
    let plugin = (with_scene - base) as f64 / bodies;
    let before = live_bytes();
    let plain = PlainFrames::new();
    let plain_bytes = (live_bytes() - before) as f64 / bodies;
    println!(
        "frames/{ROPES}x{LINKS}/memory: {plugin:.0} bytes per body with the plugin (a body and \
         its spring, beyond the same app without the scene), {plain_bytes:.0} in the plain loop's \
         arrays (its positions, velocities, masses, forces, springs, previous positions and \
         Transform-sized records)"
    );
    drop((empty, full, plain));
}

/// Where a frame's time goes, headless: the scene's app with Bevy's
/// `TransformPlugin` (so `GlobalTransform`s are propagated, as a game's
/// are), timed by exclusive systems around the fixed loop, the
/// interpolation and the transform propagation over 200 frames (20 fixed
/// steps); the rest of the frame is Bevy's schedules. Render extraction
/// needs a renderer and is not in it.
fn split() {
    use bevy::app::{RunFixedMainLoop, RunFixedMainLoopSystems};
    use bevy::transform::TransformSystems;

    let mut app = plugin_app();
    app.add_plugins(bevy::transform::TransformPlugin);
    let parts = [
        time_part(
            &mut app,
            RunFixedMainLoop,
            RunFixedMainLoopSystems::FixedMainLoop,
            None,
        ),
        time_part(&mut app, Update, InterpolationSystems::Interpolate, None),
        time_part(&mut app, PostUpdate, TransformSystems::Propagate, None),
    ];
    for _ in 0..2 * FRAMES {
        app.update();
    }
    app.world_mut().resource_mut::<PartTimes>().reset();
    const MEASURED: u32 = 20 * FRAMES;
    let total = time(MEASURED as usize, || app.update());
    let spent = &app.world().resource::<PartTimes>().spent;
    let per_frame = |d: Duration| d.as_secs_f64() * 1e6 / f64::from(MEASURED);
    let [fixed, draw, propagate] = parts.map(|part| per_frame(spent[part]));
    let frame = total * 1e6 / f64::from(MEASURED);
    println!(
        "frames/{ROPES}x{LINKS}/split: per frame (one step in {FRAMES}, {MEASURED} frames): \
         {frame:.0} µs, of which the fixed loop {fixed:.0} µs, the interpolation {draw:.0} µs, \
         transform propagation {propagate:.0} µs, the rest of Bevy's schedules {:.0} µs",
        frame - fixed - draw - propagate
    );
}

/// The average frame of each, round by round; then frames that step
/// nothing (the plugin's with no time passing, so it draws the same
/// positions again and writes no `Transform`) against the lerp alone.
fn interleaved() {
    const ROUNDS: usize = 15;
    const PER_ROUND: usize = 10 * FRAMES as usize;
    let bodies = (ROPES * LINKS) as f64;
    let per_body = |seconds: f64| seconds / PER_ROUND as f64 / bodies * 1e9;
    let mut plain = PlainFrames::new();
    let mut app = plugin_app();
    let mut still = plugin_app();
    still.insert_resource(TimeUpdateStrategy::ManualDuration(Duration::ZERO));
    let [mut ratios, mut plain_ns, mut plugin_ns] = [(); 3].map(|_| Vec::new());
    let [mut draw_ratios, mut lerp_ns, mut draw_ns] = [(); 3].map(|_| Vec::new());
    for _ in 0..ROUNDS {
        let reference = time(PER_ROUND, || plain.frame());
        let measured = time(PER_ROUND, || app.update());
        ratios.push(measured / reference);
        plain_ns.push(per_body(reference));
        plugin_ns.push(per_body(measured));
        let lerp = time(PER_ROUND, || plain.draw());
        let draw = time(PER_ROUND, || still.update());
        draw_ratios.push(draw / lerp);
        lerp_ns.push(per_body(lerp));
        draw_ns.push(per_body(draw));
    }
    let (m, lo, hi) = median(ratios);
    let (p, q) = (median(plain_ns).0, median(plugin_ns).0);
    println!(
        "frames/{ROPES}x{LINKS}: average frame (one step in {FRAMES}), plugin / plain loop: \
         {m:.2}× ({lo:.2}–{hi:.2}), median of {ROUNDS} interleaved rounds of {PER_ROUND} frames; \
         per body per frame: plugin {q:.2} ns, plain {p:.2} ns"
    );
    let (m, lo, hi) = median(draw_ratios);
    let (p, q) = (median(lerp_ns).0, median(draw_ns).0);
    println!(
        "frames/{ROPES}x{LINKS}/draw_only: a frame that steps nothing, plugin / plain lerp: \
         {m:.2}× ({lo:.2}–{hi:.2}); per body: plugin {q:.2} ns, plain {p:.2} ns"
    );
}

criterion_group!(benches, frames);

fn main() {
    common::main_with(benches, |_| {
        memory();
        split();
        interleaved();
    });
}

//! What the bridge costs: avian's boxes and this plugin's ropes stepped
//! together, tied to each other, against each stepped alone.
//!
//! `cargo bench -p bevy_euler_physics_avian3d --bench coupled` prints
//! criterion's times for one fixed step (`FixedMain`, 1/60 s, sleeping off
//! in both engines) of three scenes:
//!
//! - `boxes`: avian alone, 1 000 dynamic boxes (0.4 m, 1 kg) resting on a
//!   static floor in a grid 1 m apart;
//! - `ropes`: this plugin alone, 100 ropes of 50 round bodies (2.5 m,
//!   radius 0.02, implicit springs: see [`IMPLICIT`]), each hanging from
//!   a fixed point and tied at its lower end to an entity of its own (a
//!   point, not a rigid body) where the box top would be;
//! - `both`: both engines and the bridge, the same boxes and ropes, each
//!   rope tied to the top of one of the boxes (the rope pulls the box and
//!   the box the rope), every box a set of obstacles the rope bodies are
//!   tested against.
//!
//! Then the median of 9 interleaved rounds of `both / (boxes + ropes)`,
//! with its range: the bridge's cost beside what the two engines cost
//! alone, measured in the same run. The goal is at most 1.2.
//!
//! With [`IMPLICIT`] false (tied ropes' default), each rope's 50 links of
//! 5 cm take `AutoSubsteps`' 64 passes a step, and the passes, not the
//! bridge, take the time (measured once, in a version of this benchmark
//! in which avian's step never ran: `ropes` 284 ms a step, `both` 1.01 s).
//!
//! The steps are run by hand (`FixedMain`), so [`fixed_clock`] sets the
//! generic `Time` as Bevy's fixed loop would: avian takes its step's
//! length from it, and skips its step where it reads zero.

use std::hint::black_box;
use std::time::{Duration, Instant};

use avian3d::prelude::{Collider, Mass, Physics, PhysicsPlugins, RigidBody, SleepingDisabled};
use bevy::app::FixedMain;
use bevy::prelude::*;
use bevy::time::TimeUpdateStrategy;
use bevy_euler_physics::prelude::*;
use bevy_euler_physics_avian3d::AvianBridgePlugin;
use criterion::{Criterion, criterion_group};

const H: f32 = 1.0 / 60.0;
const BOXES: usize = 1000;
const ROPES: usize = 100;
const LINKS: u32 = 50;
const ROPE: f32 = 2.5;
const SIDE: f32 = 0.4;
/// Whether the ropes' springs are implicit (one pass a step). Tied ropes
/// are explicit by default, and 50 links of 5 cm take `AutoSubsteps`' 64
/// passes a step: see the file's docs.
const IMPLICIT: bool = true;

/// Which engines a scene runs.
#[derive(Clone, Copy, PartialEq)]
enum Scene {
    Boxes,
    Ropes,
    Both,
}

/// Where box `i` rests (its centre).
fn box_at(i: usize) -> Vec3 {
    Vec3::new((i % 40) as f32, SIDE / 2.0, (i / 40) as f32)
}

/// The scene's app, its first steps run (schedules built, ropes spawned,
/// colliders mirrored).
fn app(scene: Scene) -> App {
    let mut app = App::new();
    app.add_plugins((
        MinimalPlugins,
        TransformPlugin,
        bevy::asset::AssetPlugin::default(),
        bevy::mesh::MeshPlugin,
    ))
    .insert_resource(Time::<Fixed>::from_duration(Duration::from_secs_f32(H)))
    // The steps are run by hand (`FixedMain`); a frame runs none.
    .insert_resource(TimeUpdateStrategy::ManualDuration(Duration::ZERO));
    if scene != Scene::Ropes {
        app.add_plugins(PhysicsPlugins::default());
    }
    if scene != Scene::Boxes {
        app.add_plugins(EulerPhysicsPlugin)
            .insert_resource(SleepSettings {
                enabled: false,
                ..default()
            });
    }
    if scene == Scene::Both {
        app.add_plugins(AvianBridgePlugin);
    }
    app.finish();
    app.cleanup();
    let world = app.world_mut();
    if scene != Scene::Ropes {
        world.spawn((
            RigidBody::Static,
            Collider::cuboid(60.0, 0.2, 40.0),
            Transform::from_xyz(20.0, -0.1, 12.0),
        ));
    }
    let mut boxes = Vec::new();
    for i in 0..BOXES {
        let at = box_at(i);
        boxes.push(if scene == Scene::Ropes {
            // Only the point the rope is tied to.
            world.spawn(Transform::from_translation(at)).id()
        } else {
            world
                .spawn((
                    RigidBody::Dynamic,
                    Collider::cuboid(SIDE, SIDE, SIDE),
                    Mass(1.0),
                    SleepingDisabled,
                    Transform::from_translation(at),
                ))
                .id()
        });
    }
    if scene != Scene::Boxes {
        for r in 0..ROPES {
            let i = r * (BOXES / ROPES);
            let top = box_at(i) + Vec3::Y * (SIDE / 2.0 + ROPE);
            world.spawn(
                Rope::new(
                    RopeEnd::Fixed(top),
                    RopeEnd::Tied(boxes[i], Vec3::Y * (SIDE / 2.0)),
                )
                .with_segments(LINKS)
                .with_length(ROPE)
                .with_radius(0.02)
                .implicit(IMPLICIT),
            );
        }
    }
    app.update();
    fixed_clock(&mut app);
    for _ in 0..30 {
        step(&mut app);
    }
    // One more frame, as a game's next one: the plugin puts the fixed
    // schedules on the executor they need before each frame's fixed
    // steps (`PhysicsSettings::lean_fixed_schedules`), and it looks at
    // a schedule only once it has run; the steps here are run by hand.
    app.update();
    fixed_clock(&mut app);
    // (A benchmark of boxes that avian never stepped would time nothing.)
    if let Some(clock) = app.world().get_resource::<Time<Physics>>() {
        let stepped = clock.elapsed_secs() / H;
        assert!(stepped > 29.5, "avian stepped {stepped} times of 30");
    }
    app
}

/// Sets the generic `Time` to a clock whose last step was `H`, as Bevy's
/// fixed loop does before each `FixedMain` run. The steps here run
/// `FixedMain` directly, which skips that loop, and avian takes its step
/// from this clock: left at a frame's (whose time does not advance here),
/// avian would skip its whole step. Nothing changes it until the next
/// `App::update`.
fn fixed_clock(app: &mut App) {
    let mut clock = Time::<()>::default();
    clock.advance_by(Duration::from_secs_f32(H));
    *app.world_mut().resource_mut::<Time>() = clock;
}

fn step(app: &mut App) {
    app.world_mut().run_schedule(FixedMain);
}

fn coupled(c: &mut Criterion) {
    let mut group = c.benchmark_group("coupled");
    group.sample_size(20);
    group.warm_up_time(Duration::from_secs(1));
    group.measurement_time(Duration::from_secs(4));
    for (name, scene) in [
        ("boxes", Scene::Boxes),
        ("ropes", Scene::Ropes),
        ("both", Scene::Both),
    ] {
        let mut app = app(scene);
        group.bench_function(name, |b| b.iter(|| step(black_box(&mut app))));
    }
    group.finish();
}

/// Seconds for `steps` steps of `app`.
fn time(app: &mut App, steps: usize) -> f64 {
    let start = Instant::now();
    for _ in 0..steps {
        step(app);
    }
    start.elapsed().as_secs_f64()
}

/// `both / (boxes + ropes)`, round by round, so that a change in the
/// machine's speed lands in both sides of a ratio.
fn interleaved() {
    const ROUNDS: usize = 9;
    const STEPS: usize = 60;
    let mut apps = [Scene::Boxes, Scene::Ropes, Scene::Both].map(app);
    let mut ratios = Vec::new();
    let mut ms = [Vec::new(), Vec::new(), Vec::new()];
    for _ in 0..ROUNDS {
        let t = apps.each_mut().map(|app| time(app, STEPS));
        for (ms, t) in ms.iter_mut().zip(t) {
            ms.push(t / STEPS as f64 * 1e3);
        }
        ratios.push(t[2] / (t[0] + t[1]));
    }
    let median = |mut v: Vec<f64>| {
        v.sort_by(f64::total_cmp);
        (v[v.len() / 2], v[0], v[v.len() - 1])
    };
    for (name, ms) in ["boxes", "ropes", "both"].iter().zip(ms) {
        let (m, lo, hi) = median(ms);
        println!("coupled/{name}: {m:.3} ms per step ({lo:.3}–{hi:.3})");
    }
    let (m, lo, hi) = median(ratios);
    println!(
        "coupled: both / (boxes + ropes) = {m:.3} ({lo:.3}–{hi:.3}), median of {ROUNDS} \
         interleaved rounds of {STEPS} steps"
    );
}

criterion_group!(benches, coupled);

fn main() {
    benches();
    Criterion::default().configure_from_args().final_summary();
    // The interleaved rounds under `cargo bench` only (`cargo test
    // --benches` runs each benchmark once, as a smoke test).
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.iter().any(|a| a == "--bench") && !args.iter().any(|a| a == "--test") {
        interleaved();
    }
}

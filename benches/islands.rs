//! What islands cost and save, per fixed step (one `FixedMain` run, one
//! thread).
//!
//! `cargo bench --bench islands` prints:
//!
//! - `substeps/100_ropes`: 100 ropes of 100 bodies at 1 pass;
//!   `substeps/101_ropes`: one more rope, also at 1 pass (one rope's worth);
//!   `substeps/100_ropes+1_at_8`: the 100 ropes plus one rope with
//!   `Substeps(8)`. Islands share no forces, so the last should cost about
//!   8 ropes' worth more than the first, not 8 times the scene.
//! - `sleeping/awake` and `sleeping/asleep`: 1000 resting ropes of 20
//!   bodies, kept awake, then all asleep; `sleeping/empty`: the plugin with
//!   no bodies (what a fixed step costs before any physics: Bevy's own
//!   `FixedMain` schedules). The ropes' own cost asleep against awake is
//!   `(asleep − empty) / (awake − empty)`, from one run.
//!
//! Ropes: a fixed body with bodies of mass 1 hanging below it 0.1 apart,
//! springs k = 1000, c = 1, rest 0.1, gravity, h = 1/60.

use std::time::Duration;

use bevy::app::FixedMain;
use bevy::prelude::*;
use bevy_euler_physics::prelude::*;
use criterion::{Criterion, criterion_group, criterion_main};

mod common;
use common::{H, rope};

fn app() -> App {
    let mut app = App::new();
    app.add_plugins((MinimalPlugins, EulerPhysicsPlugin))
        .insert_resource(Time::<Fixed>::from_duration(Duration::from_secs_f32(H)));
    app
}

fn warm(app: &mut App) {
    app.update();
    // The first steps build the index (and apply sleep commands).
    for _ in 0..3 {
        app.world_mut().run_schedule(FixedMain);
    }
}

fn substeps(c: &mut Criterion) {
    let mut group = c.benchmark_group("substeps");
    group.warm_up_time(Duration::from_secs(1));
    group.measurement_time(Duration::from_secs(3));
    let scenes: [(&str, usize, bool); 3] = [
        ("100_ropes", 100, false),
        ("101_ropes", 101, false),
        ("100_ropes+1_at_8", 100, true),
    ];
    for (name, ropes, fine) in scenes {
        let mut app = app();
        app.insert_resource(SleepSettings {
            enabled: false,
            ..default()
        });
        let world = app.world_mut();
        for r in 0..ropes {
            rope(world, r as f32 * 0.5, 100, false, ());
        }
        if fine {
            rope(world, -10.0, 100, false, Substeps(8));
        }
        warm(&mut app);
        group.bench_function(name, |b| b.iter(|| app.world_mut().run_schedule(FixedMain)));
    }
    group.finish();
}

fn sleeping(c: &mut Criterion) {
    let mut group = c.benchmark_group("sleeping");
    group.warm_up_time(Duration::from_secs(1));
    group.measurement_time(Duration::from_secs(3));
    for asleep in [false, true] {
        let mut app = app();
        let world = app.world_mut();
        let mut firsts = Vec::new();
        for r in 0..1000 {
            let bodies = if asleep {
                rope(world, r as f32 * 0.5, 20, true, ())
            } else {
                rope(world, r as f32 * 0.5, 20, true, SleepingDisabled)
            };
            firsts.push(bodies[0]);
        }
        if asleep {
            let mut commands = world.commands();
            for &e in &firsts {
                commands.entity(e).sleep_island();
            }
            world.flush();
        }
        warm(&mut app);
        let sleeping = app
            .world_mut()
            .query_filtered::<(), With<Sleeping>>()
            .iter(app.world())
            .count();
        assert_eq!(sleeping, if asleep { 20_000 } else { 0 });
        let name = if asleep { "asleep" } else { "awake" };
        group.bench_function(name, |b| b.iter(|| app.world_mut().run_schedule(FixedMain)));
    }
    let mut empty = app();
    warm(&mut empty);
    group.bench_function("empty", |b| {
        b.iter(|| empty.world_mut().run_schedule(FixedMain))
    });
    group.finish();
}

criterion_group!(benches, substeps, sleeping);
criterion_main!(benches);

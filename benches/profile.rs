//! A fixed number of fixed steps of one scene, for instruction counts under
//! callgrind (which criterion's timing loop does not give) and for timing
//! the phases of a step by hand.
//!
//! ```text
//! cargo bench --no-default-features --bench profile --no-run
//! SCENE=ropes ROPES=100 STEPS=120 valgrind --tool=callgrind target/release/deps/profile-*
//! ```
//!
//! Run it with two step counts and subtract to get the cost of one step
//! without the setup. Environment:
//!
//! - `SCENE`: `ropes` (default; the scene of `benches/step.rs`: `ROPES`
//!   ropes of 100 bodies, sleeping off), `plain` (the same as a plain array
//!   loop), `fine` (`ROPES` ropes, the last one with `Substeps(8)`),
//!   `awake`, `asleep`, `mixed` or `empty` (the resting scene of
//!   `benches/islands.rs`: 1000 ropes of 20, kept awake, all asleep, every
//!   other one asleep, or no bodies), `one` (one falling body), or `bare`
//!   (no bodies and no plugin: Bevy's own `FixedMain`), or `pile`
//!   (`benches/pile.rs`'s pile of `BALLS` balls, default 100 000,
//!   sleeping off, settled for `SETTLE` steps, default 400, before the
//!   timing);
//! - `ROPES` (default 100), `STEPS` (default 100);
//! - `SYSTEMS=1`: a system of yours that does nothing in each of the four
//!   sets of `PhysicsSubstep` (as the fourth column of `benches/step.rs`),
//!   so that each pass copies its bodies out and back around each set;
//! - `THREADS` (compute threads, default 1; 0 for Bevy's default pools)
//!   and `THRESHOLD`
//!   (`PhysicsSettings::parallel_threshold`, default: never parallel);
//! - `EXECUTOR=single`: `FixedMain`'s schedules on Bevy's single-threaded
//!   executor (default: Bevy's multi-threaded one); `SINGLE=main`, `update`
//!   or `post`: `FixedMain`, `FixedUpdate` or `FixedPostUpdate` alone on
//!   it. (The plugin's `lean_fixed_schedules` chooses executors only when
//!   the app updates, which this loop of `FixedMain` runs never does.)
//!
//! It prints the mean wall time of a step.

use std::time::{Duration, Instant};

use bevy::app::FixedMain;
use bevy::prelude::*;
use bevy_euler_physics::prelude::*;

mod common;
use common::{H, Plain, rope, single_threaded_fixed_main, spawn_pile};

fn var(name: &str, default: usize) -> usize {
    std::env::var(name)
        .ok()
        .and_then(|value| value.parse().ok())
        .unwrap_or(default)
}

/// Does nothing, but sits in a substep set.
fn watch(_bodies: SubstepBodies<&Body>) {}

/// The ropes scene as plain arrays, stepped `steps` times.
fn plain(ropes: usize, steps: usize) -> Duration {
    let mut plain = Plain::new(ropes, 100);
    let start = Instant::now();
    for _ in 0..steps {
        plain.step();
        std::hint::black_box(&plain.pos);
    }
    start.elapsed()
}

fn main() {
    let scene = std::env::var("SCENE").unwrap_or_else(|_| "ropes".into());
    let (ropes, steps) = (var("ROPES", 100), var("STEPS", 100).max(1));
    if scene == "plain" {
        let time = plain(ropes, steps);
        println!("plain: {:?} per step", time / steps as u32);
        return;
    }
    let threads = var("THREADS", 1);
    let mut pools = TaskPoolPlugin::default();
    if threads > 0 {
        pools.task_pool_options.compute.min_threads = threads;
        pools.task_pool_options.compute.max_threads = threads;
    }
    let mut app = App::new();
    app.add_plugins(MinimalPlugins.set(pools))
        .insert_resource(Time::<Fixed>::from_duration(Duration::from_secs_f32(H)));
    if scene != "bare" {
        app.add_plugins(EulerPhysicsPlugin)
            .insert_resource(PhysicsSettings {
                parallel_threshold: var("THRESHOLD", usize::MAX),
                ..default()
            });
    }
    if var("SYSTEMS", 0) > 0 {
        for set in SubstepSystems::ALL {
            app.add_systems(PhysicsSubstep, watch.in_set(set));
        }
    }
    if std::env::var("EXECUTOR").is_ok_and(|e| e == "single") {
        single_threaded_fixed_main(&mut app);
    }
    if let Ok(only) = std::env::var("SINGLE") {
        use bevy::ecs::schedule::ScheduleLabel;
        let label = match only.as_str() {
            "main" => FixedMain.intern(),
            "update" => FixedUpdate.intern(),
            "post" => FixedPostUpdate.intern(),
            other => panic!("unknown SINGLE {other}: main, update or post"),
        };
        app.edit_schedule(label, |s| {
            s.set_executor(bevy::ecs::schedule::SingleThreadedExecutor::new());
        });
    }
    let world = app.world_mut();
    match scene.as_str() {
        "ropes" | "fine" => {
            world.insert_resource(SleepSettings {
                enabled: false,
                ..default()
            });
            for r in 0..ropes {
                if scene == "fine" && r + 1 == ropes {
                    rope(world, r as f32 * 0.5, 100, false, Substeps(8));
                } else {
                    rope(world, r as f32 * 0.5, 100, false, ());
                }
            }
        }
        "awake" | "asleep" | "mixed" => {
            for r in 0..1000 {
                let x = r as f32 * 0.5;
                if scene == "awake" || (scene == "mixed" && r % 2 == 0) {
                    rope(world, x, 20, true, SleepingDisabled);
                } else {
                    rope(world, x, 20, true, ());
                }
            }
        }
        "pile" => {
            world.insert_resource(SleepSettings {
                enabled: false,
                ..default()
            });
            spawn_pile(world, var("BALLS", 100_000));
        }
        "empty" | "bare" => {}
        "one" => {
            world.spawn(Body::new(1.0));
        }
        other => panic!("unknown SCENE {other}"),
    }
    if scene == "asleep" || scene == "mixed" {
        let bodies: Vec<Entity> = world
            .query_filtered::<(Entity, &Body), Without<SleepingDisabled>>()
            .iter(world)
            .filter(|(_, body)| !body.is_fixed())
            .map(|(entity, _)| entity)
            .collect();
        let mut commands = world.commands();
        for entity in bodies {
            commands.entity(entity).sleep_island();
        }
        world.flush();
    }
    app.update();
    // The first steps build the index (and apply sleep commands); a pile
    // settles first.
    let settle = if scene == "pile" {
        var("SETTLE", 400)
    } else {
        3
    };
    for _ in 0..settle {
        app.world_mut().run_schedule(FixedMain);
    }
    let start = Instant::now();
    for _ in 0..steps {
        app.world_mut().run_schedule(FixedMain);
    }
    println!("{scene}: {:?} per step", start.elapsed() / steps as u32);
}

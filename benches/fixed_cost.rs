//! The fixed cost of a step: what an app of `MinimalPlugins` (Bevy's
//! default executors and task pools) pays per fixed step for an empty or a
//! one-body scene, beside the plain array loop of the ropes scene at 1 000
//! bodies (10 ropes of 100), measured in the same run.
//!
//! Variants, each one `FixedMain` run:
//! - `bare`: `MinimalPlugins` alone (Bevy's own fixed schedules);
//! - `empty`, `one`: the plugin with no body, with one falling body;
//! - `one_not_lean`: one body with `PhysicsSettings::lean_fixed_schedules`
//!   off (every fixed schedule on Bevy's multi-threaded executor);
//! - `one_pooled`: one body beside a pool of 10 000 bodies spawned
//!   `Disabled` (which the step must notice when they are enabled again).
//!
//! `cargo bench --bench fixed_cost` prints criterion's times, then the
//! median ratio to the plain loop of 15 interleaved rounds, with its range.

use std::hint::black_box;

use bevy::app::FixedMain;
use bevy::prelude::*;
use bevy_euler_physics::prelude::*;
use criterion::{Criterion, criterion_group};

mod common;
use common::{H, Plain, median, time};

/// The variants' names.
const VARIANTS: [&str; 5] = ["bare", "empty", "one", "one_not_lean", "one_pooled"];

/// The bodies `one_pooled` holds disabled.
const POOLED: usize = 10_000;

/// A default app for `variant`, warmed: its first fixed steps build the
/// schedules, and the updates after them let the plugin choose their
/// executors.
fn app(variant: &str) -> App {
    let mut app = App::new();
    app.add_plugins(MinimalPlugins)
        .insert_resource(Time::<Fixed>::from_duration(
            std::time::Duration::from_secs_f32(H),
        ));
    if variant != "bare" {
        app.add_plugins(EulerPhysicsPlugin)
            .insert_resource(PhysicsSettings {
                lean_fixed_schedules: variant != "one_not_lean",
                ..default()
            });
    }
    if variant.starts_with("one") {
        app.world_mut().spawn(Body::new(1.0));
    }
    if variant == "one_pooled" {
        let pool = (0..POOLED).map(|i| {
            (
                Body::new(1.0).with_position(Vec3::X * i as f32),
                bevy::ecs::entity_disabling::Disabled,
            )
        });
        app.world_mut().spawn_batch(pool);
    }
    for _ in 0..3 {
        app.update();
        app.world_mut().run_schedule(FixedMain);
    }
    app.update();
    app
}

fn fixed_cost(c: &mut Criterion) {
    let mut group = c.benchmark_group("fixed_cost");
    group.warm_up_time(std::time::Duration::from_secs(1));
    group.measurement_time(std::time::Duration::from_secs(3));
    let mut plain = Plain::new(10, 100);
    group.bench_function("plain_1000", |b| {
        b.iter(|| {
            plain.step();
            black_box(&plain.pos);
        })
    });
    for variant in VARIANTS {
        let mut app = app(variant);
        group.bench_function(variant, |b| {
            b.iter(|| app.world_mut().run_schedule(FixedMain))
        });
    }
    group.finish();
}

/// Each variant against the plain loop, round by round, so that a change
/// in the machine's speed lands in both sides of a ratio.
fn interleaved() {
    const ROUNDS: usize = 15;
    const STEPS: usize = 2000;
    let mut plain = Plain::new(10, 100);
    let mut apps: Vec<App> = VARIANTS.iter().map(|v| app(v)).collect();
    let mut ratios = vec![Vec::new(); VARIANTS.len()];
    let mut plain_us = Vec::new();
    for _ in 0..ROUNDS {
        let reference = time(STEPS, || {
            plain.step();
            black_box(&plain.pos);
        });
        plain_us.push(reference / STEPS as f64 * 1e6);
        for (app, ratios) in apps.iter_mut().zip(&mut ratios) {
            ratios.push(time(STEPS, || app.world_mut().run_schedule(FixedMain)) / reference);
        }
    }
    let (us, lo, hi) = median(plain_us);
    println!("plain loop, 1 000 bodies: {us:.2} µs per step ({lo:.2}–{hi:.2})");
    for (variant, ratios) in VARIANTS.iter().zip(ratios) {
        let (m, lo, hi) = median(ratios);
        println!(
            "fixed_cost/{variant}: {m:.2}× the plain loop at 1 000 bodies ({lo:.2}–{hi:.2}), \
             median of {ROUNDS} interleaved rounds of {STEPS} steps"
        );
    }
}

criterion_group!(benches, fixed_cost);

fn main() {
    common::main_with(benches, |_| interleaved());
}

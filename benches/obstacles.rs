//! What obstacles cost a step (one `FixedMain` run, one thread).
//!
//! `cargo bench --bench obstacles` prints, for 10 000 and 100 000 round
//! bodies at rest in a grid 0.5 m apart (no gravity, sleeping off, no
//! two within reach of each other): `N/none`, the bodies alone, and
//! `N/100`, the same bodies among 100 boxes spread over the same region.
//! The obstacles cost `(N/100 − N/none)`; per body it should stay about
//! the same from 10 000 to 100 000 bodies (each body looks up one grid
//! cell, not every obstacle).
//!
//! Then `pile/plane` and `pile/mesh`: 10 000 balls (radius 0.05, a grid
//! 0.11 apart, 60 steps poured before timing) on a `GroundPlane`, and on a
//! flat `TriangleMesh` of 100 352 triangles over 40 m × 40 m at the same
//! height. The mesh should cost at most 1.5× the plane.

use std::time::Duration;

use bevy::app::FixedMain;
use bevy::prelude::*;
use bevy_euler_physics::prelude::*;
use criterion::{Criterion, criterion_group, criterion_main};

mod common;
use common::H;

fn scene(bodies: usize, obstacles: usize) -> App {
    let mut app = App::new();
    app.add_plugins((MinimalPlugins, EulerPhysicsPlugin))
        .insert_resource(Time::<Fixed>::from_duration(Duration::from_secs_f32(H)))
        .insert_resource(Gravity(Vec3::ZERO))
        .insert_resource(SleepSettings {
            enabled: false,
            ..default()
        });
    let side = (bodies as f32).sqrt().ceil() as usize;
    let world = app.world_mut();
    for i in 0..bodies {
        let at = Vec3::new((i % side) as f32 * 0.5, (i / side) as f32 * 0.5, 0.0);
        world.spawn((Body::new(1.0).with_position(at), Radius(0.05)));
    }
    let extent = side as f32 * 0.5;
    for k in 0..obstacles {
        let at = Vec3::new((k % 10) as f32 + 0.5, (k / 10) as f32 + 0.5, 0.0) * extent / 10.0;
        world.spawn((
            Obstacle::from(Cuboid::new(0.3, 0.3, 0.3)),
            Transform::from_translation(at + Vec3::new(0.25, 0.25, 0.0)),
        ));
    }
    app.update();
    for _ in 0..3 {
        app.world_mut().run_schedule(FixedMain);
    }
    app
}

fn obstacles(c: &mut Criterion) {
    for bodies in [10_000, 100_000] {
        let mut group = c.benchmark_group(format!("{bodies}"));
        group.warm_up_time(Duration::from_secs(1));
        group.measurement_time(Duration::from_secs(4));
        group.sample_size(20);
        for count in [0, 100] {
            let mut app = scene(bodies, count);
            let name = if count == 0 {
                "none".to_owned()
            } else {
                count.to_string()
            };
            group.bench_function(name, |b| b.iter(|| app.world_mut().run_schedule(FixedMain)));
        }
        group.finish();
    }
}

/// 10 000 balls poured on the ground: a plane, or a flat mesh of
/// 100 352 triangles.
fn pile(mesh: bool) -> App {
    let mut app = App::new();
    app.add_plugins((MinimalPlugins, EulerPhysicsPlugin))
        .insert_resource(Time::<Fixed>::from_duration(Duration::from_secs_f32(H)))
        .insert_resource(SleepSettings {
            enabled: false,
            ..default()
        });
    let world = app.world_mut();
    if mesh {
        let (n, size) = (225u32, 40.0);
        let step = size / (n - 1) as f32;
        let vertices = (0..n * n)
            .map(|i| {
                Vec3::new(
                    (i % n) as f32 * step - size / 2.0,
                    0.0,
                    (i / n) as f32 * step - size / 2.0,
                )
            })
            .collect();
        let mut triangles = Vec::new();
        for r in 0..n - 1 {
            for c in 0..n - 1 {
                let i = r * n + c;
                triangles.push([i, i + n, i + 1]);
                triangles.push([i + 1, i + n, i + n + 1]);
            }
        }
        world.spawn(Obstacle::from(
            TriangleMesh::new(vertices, triangles).one_sided(),
        ));
    } else {
        world.spawn(GroundPlane::horizontal(0.0));
    }
    for i in 0..10_000 {
        let at = Vec3::new(
            (i % 25) as f32 * 0.11 - 1.4,
            0.06 + (i / 625) as f32 * 0.11,
            ((i / 25) % 25) as f32 * 0.11 - 1.4,
        );
        world.spawn((
            Body::new(1.0).with_position(at),
            Radius(0.05),
            ContactMaterial::new(0.0, 0.5),
        ));
    }
    app.update();
    for _ in 0..60 {
        app.world_mut().run_schedule(FixedMain);
    }
    app
}

fn piles(c: &mut Criterion) {
    let mut group = c.benchmark_group("pile");
    group.warm_up_time(Duration::from_secs(1));
    group.measurement_time(Duration::from_secs(5));
    group.sample_size(10);
    for mesh in [false, true] {
        let mut app = pile(mesh);
        let name = if mesh { "mesh" } else { "plane" };
        group.bench_function(name, |b| b.iter(|| app.world_mut().run_schedule(FixedMain)));
    }
    group.finish();
}

criterion_group!(benches, obstacles, piles);
criterion_main!(benches);

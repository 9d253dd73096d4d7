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
//!
//! Then `cloth/alone` and `cloth/character`: a cloth of 64 × 64 bodies
//! (2 m square, springs along and across, `ImplicitSprings`, pinned along
//! its top edge) hanging alone, and draped over a character of 20
//! capsules (torso, hips, head, arms, legs, hands and feet). The character
//! should cost at most 1.3× the cloth alone.

use std::time::Duration;

use bevy::app::FixedMain;
use bevy::prelude::*;
use bevy_euler_physics::prelude::*;
use criterion::{Criterion, criterion_group, criterion_main};

mod common;
use common::H;

/// The plugin at `H`, sleeping off.
fn awake_app() -> App {
    let mut app = App::new();
    app.add_plugins((MinimalPlugins, EulerPhysicsPlugin))
        .insert_resource(Time::<Fixed>::from_duration(Duration::from_secs_f32(H)))
        .insert_resource(SleepSettings {
            enabled: false,
            ..default()
        });
    app
}

/// `bodies` round bodies at rest in a grid 0.5 m apart, without gravity,
/// among `obstacles` boxes spread over the same region.
fn scene(bodies: usize, obstacles: usize) -> App {
    let mut app = awake_app();
    app.insert_resource(Gravity(Vec3::ZERO));
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
        let scenes = vec![("none", scene(bodies, 0)), ("100", scene(bodies, 100))];
        steps(c, &bodies.to_string(), scenes);
    }
}

/// 10 000 balls poured on the ground: a plane, or a flat mesh of
/// 100 352 triangles.
fn pile(mesh: bool) -> App {
    let mut app = awake_app();
    let world = app.world_mut();
    if mesh {
        let n = 225;
        let floor = HeightField::new(vec![0.0; n * n], n as u32, Vec2::splat(40.0));
        world.spawn(Obstacle::from(floor.triangle_mesh().unwrap()));
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

/// One fixed step of each scene, in a group of `name`.
fn steps(c: &mut Criterion, name: &str, scenes: Vec<(&str, App)>) {
    let mut group = c.benchmark_group(name);
    group.warm_up_time(Duration::from_secs(1));
    group.measurement_time(Duration::from_secs(5));
    group.sample_size(10);
    for (name, mut app) in scenes {
        group.bench_function(name, |b| b.iter(|| app.world_mut().run_schedule(FixedMain)));
    }
    group.finish();
}

fn piles(c: &mut Criterion) {
    steps(
        c,
        "pile",
        vec![("plane", pile(false)), ("mesh", pile(true))],
    );
}

/// The 20 capsules of a standing character about 1.8 m tall: (centre,
/// half length, radius, axis turned from Y about Z).
const CHARACTER: [(Vec3, f32, f32, f32); 20] = [
    (Vec3::new(0.0, 1.25, 0.0), 0.2, 0.17, 0.0),    // chest
    (Vec3::new(0.0, 0.95, 0.0), 0.1, 0.15, 0.0),    // belly
    (Vec3::new(0.0, 0.8, 0.0), 0.12, 0.14, 1.57),   // hips
    (Vec3::new(0.0, 1.62, 0.0), 0.05, 0.11, 0.0),   // head
    (Vec3::new(0.0, 1.48, 0.0), 0.04, 0.05, 0.0),   // neck
    (Vec3::new(-0.22, 1.4, 0.0), 0.08, 0.07, 1.57), // shoulders
    (Vec3::new(0.22, 1.4, 0.0), 0.08, 0.07, 1.57),
    (Vec3::new(-0.3, 1.2, 0.0), 0.12, 0.05, 0.0), // upper arms
    (Vec3::new(0.3, 1.2, 0.0), 0.12, 0.05, 0.0),
    (Vec3::new(-0.32, 0.92, 0.05), 0.11, 0.045, 0.2), // forearms
    (Vec3::new(0.32, 0.92, 0.05), 0.11, 0.045, -0.2),
    (Vec3::new(-0.34, 0.74, 0.08), 0.03, 0.045, 0.0), // hands
    (Vec3::new(0.34, 0.74, 0.08), 0.03, 0.045, 0.0),
    (Vec3::new(-0.1, 0.55, 0.0), 0.16, 0.07, 0.0), // thighs
    (Vec3::new(0.1, 0.55, 0.0), 0.16, 0.07, 0.0),
    (Vec3::new(-0.1, 0.2, 0.0), 0.15, 0.055, 0.0), // shins
    (Vec3::new(0.1, 0.2, 0.0), 0.15, 0.055, 0.0),
    (Vec3::new(-0.1, 0.03, 0.06), 0.06, 0.04, 1.57), // feet
    (Vec3::new(0.1, 0.03, 0.06), 0.06, 0.04, 1.57),
    (Vec3::new(0.0, 1.1, -0.05), 0.15, 0.12, 0.0), // back
];

/// A cloth of 64 × 64 bodies 2 m square, pinned along its top edge just
/// above the character's head, with the character's capsules or without.
fn cloth(character: bool) -> App {
    const N: usize = 64;
    let mut app = awake_app();
    let world = app.world_mut();
    let spacing = 2.0 / (N - 1) as f32;
    let mass = 2.5 / (N * N) as f32;
    let mut bodies = Vec::with_capacity(N * N);
    for i in 0..N {
        for j in 0..N {
            // Hanging in the XY plane in front of the character's chest,
            // its top edge at 1.9 m.
            let at = Vec3::new(
                -1.0 + j as f32 * spacing,
                1.9 - i as f32 * spacing,
                0.25 - 0.3 * (j as f32 * spacing - 1.0).powi(2),
            );
            let body = if i == 0 {
                Body::fixed(at)
            } else {
                Body::new(mass).with_position(at)
            };
            bodies.push(
                world
                    .spawn((body, Radius(spacing * 0.4), ImplicitSprings, Damping(0.05)))
                    .id(),
            );
        }
    }
    for i in 0..N {
        for j in 0..N {
            let k = i * N + j;
            let mut join = |other: usize, rest: f32| {
                world.spawn(Spring::new(bodies[k], bodies[other], rest, 400.0).with_damping(0.02));
            };
            if j + 1 < N {
                join(k + 1, spacing);
            }
            if i + 1 < N {
                join(k + N, spacing);
            }
            if i + 1 < N && j + 1 < N {
                join(k + N + 1, spacing * std::f32::consts::SQRT_2);
            }
        }
    }
    if character {
        for (at, half, radius, turn) in CHARACTER {
            world.spawn((
                Obstacle::from(Capsule3d::new(radius, 2.0 * half)),
                Transform::from_translation(at).with_rotation(Quat::from_rotation_z(turn)),
            ));
        }
    }
    app.update();
    // Draped: a second of settling before timing.
    for _ in 0..60 {
        app.world_mut().run_schedule(FixedMain);
    }
    if character {
        // What the cloth does there: bodies resting on the capsules, and
        // none inside one.
        let (mut touching, mut inside) = (0, 0);
        let world = app.world_mut();
        for body in world.query::<&Body>().iter(world) {
            let gap = CHARACTER
                .iter()
                .map(|&(at, half, radius, turn)| {
                    let axis = Quat::from_rotation_z(turn) * Vec3::Y;
                    let t = (body.position - at).dot(axis).clamp(-half, half);
                    body.position.distance(at + t * axis) - radius
                })
                .fold(f32::INFINITY, f32::min);
            touching += usize::from(gap < spacing);
            inside += usize::from(gap < 0.0);
        }
        println!(
            "cloth over the character: {touching} bodies within a spacing of a capsule, {inside} inside one"
        );
    }
    app
}

fn cloths(c: &mut Criterion) {
    steps(
        c,
        "cloth",
        vec![("alone", cloth(false)), ("character", cloth(true))],
    );
}

criterion_group!(benches, obstacles, piles, cloths);
criterion_main!(benches);

//! The "pile N" scene on the three engines: N balls settling in a box.
//!
//! Balls of radius 0.05 m and 1 kg (as a density of `1/(π·r²)` where the
//! engine computes masses from shapes), friction 0.5, restitution 0,
//! placed on a grid of spacing 0.11 m (`2.2·r`, each column nudged by up
//! to 5 % of `r` so the pile does not stand in perfect columns), about
//! twice as wide as high, in a box of a floor and two walls (planes here,
//! static boxes 1 m thick for avian and rapier). Gravity 9.81 m/s², 60 Hz,
//! sleeping off, every engine at its defaults otherwise:
//!
//! - this plugin: `Radius` and `ContactMaterial` on each `Body`,
//!   `GroundPlane`s for the box; its default passes and rounds;
//! - avian2d: `RigidBody::Dynamic`, `Collider::circle`, `ColliderDensity`,
//!   `Friction`, `Restitution`, `SleepingDisabled`; its default 6
//!   substeps;
//! - bevy_rapier2d: `RigidBody::Dynamic`, `Collider::ball`,
//!   `ColliderMassProperties::Density`, `Friction`, `Restitution`,
//!   `Sleeping::disabled()`; its default 4 solver iterations.
//!
//! After `SETTLE` steps, the engines step in turn, `ROUNDS` rounds of
//! `STEPS_PER_ROUND` steps each (steps 300 to 899 timed, interleaved),
//! and each row gives its median milliseconds per step; then, from the
//! positions, the deepest and the mean overlap of touching balls (with
//! each other and with the box) as a share of `r`, and the pile's height
//! (the highest ball's top).

use bevy::math::Vec2;
use bevy::prelude::*;

use crate::apps::{step, warm};
use crate::scene::{median, time};

/// Radius, mass and grid spacing of the balls, in metres and kg.
pub const R: f32 = 0.05;
const SPACING: f32 = 2.2 * R;
const FRICTION: f32 = 0.5;
/// Steps before the timing, rounds and steps per round.
const SETTLE: usize = 300;
const ROUNDS: usize = 6;
const STEPS_PER_ROUND: usize = 100;

/// The balls' starting points and the box's half width.
pub fn layout(n: usize) -> (Vec<Vec2>, f32) {
    let columns = ((2 * n) as f32).sqrt().ceil() as usize;
    let half = columns as f32 * SPACING / 2.0 + R;
    let balls = (0..n)
        .map(|i| {
            let (row, col) = (i / columns, i % columns);
            let jitter = ((i * 7919) % 13) as f32 / 13.0 - 0.5;
            Vec2::new(
                -half + R + col as f32 * SPACING + 0.1 * R * jitter,
                R + row as f32 * SPACING,
            )
        })
        .collect();
    (balls, half)
}

/// The box as static boxes 1 m thick: a floor with its top at 0 and two
/// walls with their inner faces at `±half`, 2 m above the highest ball:
/// each box's centre and size.
fn walls(balls: &[Vec2], half: f32) -> [(Vec2, Vec2); 3] {
    let height = balls.iter().map(|p| p.y).fold(0.0, f32::max) + 2.0;
    [
        (Vec2::new(0.0, -0.5), Vec2::new(2.0 * half + 2.0, 1.0)),
        (Vec2::new(-half - 0.5, height / 2.0), Vec2::new(1.0, height)),
        (Vec2::new(half + 0.5, height / 2.0), Vec2::new(1.0, height)),
    ]
}

/// The density that gives a ball of radius `R` a mass of 1 kg.
fn density() -> f32 {
    1.0 / (core::f32::consts::PI * R * R)
}

mod euler {
    use super::*;
    use bevy_euler_physics::prelude::*;

    pub fn app(n: usize) -> App {
        let mut app = crate::euler::bare_app(PhysicsSettings::default());
        let (balls, half) = layout(n);
        let world = app.world_mut();
        for (normal, offset) in [(Vec3::Y, 0.0), (Vec3::X, -half), (Vec3::NEG_X, -half)] {
            world.spawn(
                GroundPlane::new(normal, offset)
                    .with_friction(FRICTION)
                    .with_restitution(0.0),
            );
        }
        for p in balls {
            world.spawn((
                Body::new(1.0).with_position(p.extend(0.0)),
                Radius(R),
                ContactMaterial::new(0.0, FRICTION),
            ));
        }
        warm(&mut app);
        app
    }

    pub fn positions(world: &mut World) -> Vec<Vec2> {
        world
            .query::<&Body>()
            .iter(world)
            .filter(|b| b.inv_mass > 0.0)
            .map(|b| b.position.truncate())
            .collect()
    }
}

mod avian {
    use super::*;
    use avian2d::prelude::*;

    pub fn app(n: usize) -> App {
        let mut app = crate::avian::bare_app(crate::avian::DEFAULT_SUBSTEPS);
        let (balls, half) = layout(n);
        let world = app.world_mut();
        for (at, size) in walls(&balls, half) {
            world.spawn((
                RigidBody::Static,
                Position(at),
                Collider::rectangle(size.x, size.y),
                Friction::new(FRICTION),
                Restitution::new(0.0),
            ));
        }
        for p in balls {
            world.spawn((
                RigidBody::Dynamic,
                Position(p),
                Collider::circle(R),
                ColliderDensity(density()),
                Friction::new(FRICTION),
                Restitution::new(0.0),
                SleepingDisabled,
            ));
        }
        warm(&mut app);
        app
    }

    pub fn positions(world: &mut World) -> Vec<Vec2> {
        world
            .query::<(&RigidBody, &Position)>()
            .iter(world)
            .filter(|(body, _)| body.is_dynamic())
            .map(|(_, p)| p.0)
            .collect()
    }
}

mod rapier {
    use super::*;
    use bevy_rapier2d::prelude::*;

    pub fn app(n: usize) -> App {
        let mut app = crate::rapier::bare_app(crate::rapier::default_iterations());
        let (balls, half) = layout(n);
        let world = app.world_mut();
        for (at, size) in walls(&balls, half) {
            world.spawn((
                RigidBody::Fixed,
                Transform::from_translation(at.extend(0.0)),
                Collider::cuboid(size.x / 2.0, size.y / 2.0),
                Friction::new(FRICTION),
                Restitution::new(0.0),
            ));
        }
        for p in balls {
            world.spawn((
                RigidBody::Dynamic,
                Transform::from_translation(p.extend(0.0)),
                Collider::ball(R),
                ColliderMassProperties::Density(density()),
                Friction::new(FRICTION),
                Restitution::new(0.0),
                Sleeping::disabled(),
            ));
        }
        warm(&mut app);
        app
    }

    pub fn positions(world: &mut World) -> Vec<Vec2> {
        world
            .query::<(&RigidBody, &Transform)>()
            .iter(world)
            .filter(|(body, _)| matches!(body, RigidBody::Dynamic))
            .map(|(_, t)| t.translation.truncate())
            .collect()
    }
}

/// One engine's pile.
struct Row {
    engine: &'static str,
    settings: &'static str,
    build: fn(usize) -> App,
    positions: fn(&mut World) -> Vec<Vec2>,
}

fn rows() -> [Row; 3] {
    [
        Row {
            engine: "bevy_euler_physics",
            settings: "defaults",
            build: euler::app,
            positions: euler::positions,
        },
        Row {
            engine: "avian2d 0.7.0",
            settings: "defaults (6 substeps)",
            build: avian::app,
            positions: avian::positions,
        },
        Row {
            engine: "bevy_rapier2d 0.36.0",
            settings: "defaults (4 iterations)",
            build: rapier::app,
            positions: rapier::positions,
        },
    ]
}

/// The deepest and the mean overlap of touching balls (with each other
/// and with the box), as shares of `R`, and the highest ball's top.
pub fn measure(balls: &[Vec2], half: f32) -> (f32, f32, f32) {
    let mut depths = Vec::new();
    // Balls sorted by x: a ball's neighbours within 2r are near it.
    let mut sorted: Vec<Vec2> = balls.to_vec();
    sorted.sort_by(|a, b| a.x.total_cmp(&b.x));
    for (i, a) in sorted.iter().enumerate() {
        for b in &sorted[i + 1..] {
            if b.x - a.x >= 2.0 * R {
                break;
            }
            let gap = a.distance(*b) - 2.0 * R;
            if gap < 0.0 {
                depths.push(-gap / R);
            }
        }
        for gap in [a.y - R, a.x + half - R, half - a.x - R] {
            if gap < 0.0 {
                depths.push(-gap / R);
            }
        }
    }
    let deepest = depths.iter().copied().fold(0.0, f32::max);
    let mean = depths.iter().sum::<f32>() / depths.len().max(1) as f32;
    let top = balls.iter().map(|p| p.y + R).fold(0.0, f32::max);
    (deepest, mean, top)
}

/// The pile of `n` balls on every engine (or those whose name contains
/// `only`): step time, overlaps, height.
pub fn run(n: usize, only: Option<&str>) {
    let rows: Vec<Row> = rows()
        .into_iter()
        .filter(|row| only.is_none_or(|name| row.engine.contains(name)))
        .collect();
    let (_, half) = layout(n);
    let mut apps: Vec<App> = rows.iter().map(|row| (row.build)(n)).collect();
    for app in &mut apps {
        for _ in 0..SETTLE {
            step(app);
        }
    }
    let mut millis = vec![Vec::new(); rows.len()];
    for _ in 0..ROUNDS {
        for (i, app) in apps.iter_mut().enumerate() {
            millis[i].push(time(STEPS_PER_ROUND, || step(app)) / STEPS_PER_ROUND as f64 * 1e3);
        }
    }
    println!(
        "pile {n}: balls r = {R} m, 1 kg, friction {FRICTION}, restitution 0, 60 Hz, sleeping \
         off, every row on 1 thread; steps {SETTLE} to {} timed, {ROUNDS} interleaved rounds of \
         {STEPS_PER_ROUND}",
        SETTLE + ROUNDS * STEPS_PER_ROUND - 1
    );
    for ((row, app), ms) in rows.iter().zip(&mut apps).zip(millis) {
        let balls = (row.positions)(app.world_mut());
        assert_eq!(balls.len(), n, "{}: balls", row.engine);
        assert!(balls.iter().all(|p| p.is_finite()), "{}: NaN", row.engine);
        let (deepest, mean, top) = measure(&balls, half);
        let (median_ms, lo, hi) = median(ms);
        println!(
            "pile {n} | {} ({}) | {median_ms:.2} ms/step ({lo:.2}–{hi:.2}) | deepest overlap \
             {:.0} % of r, mean {:.1} % | height {top:.3} m",
            row.engine,
            row.settings,
            100.0 * deepest,
            100.0 * mean
        );
    }
}

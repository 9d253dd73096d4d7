//! The built-in constraints: rods hold their length and join islands;
//! contacts with planes do not sink, bounce by their restitution, stop by
//! Coulomb friction and let bodies come to rest and sleep.

mod common;

use bevy::prelude::*;
use bevy_euler_physics::prelude::*;
use common::*;

fn no_sleep(app: &mut App) {
    app.insert_resource(SleepSettings {
        enabled: false,
        ..default()
    });
}

/// A pendulum on a rod swings for 4000 steps: its length error stays below
/// 0.5 %, and its energy does not grow: semi-implicit Euler's energy
/// fluctuates by O(h) within a swing (here under 5 % of m·g·L) but the
/// largest value in the second half is no larger than in the first.
#[test]
fn a_rod_keeps_its_length_and_adds_no_energy() {
    let mut app = app();
    no_sleep(&mut app);
    let pivot = spawn(&mut app, Body::fixed(Vec3::new(0.0, 2.0, 0.0)));
    let m = 2.0;
    let bob = spawn(
        &mut app,
        Body::new(m).with_position(Vec3::new(1.0, 2.0, 0.0)),
    );
    spawn(&mut app, DistanceConstraint::new(pivot, bob, 1.0));
    let g = 9.81f64;
    let mgl = f64::from(m) * g;
    // Energy relative to the pivot: kinetic + m·g·y; 0 at the start.
    let energy = |app: &App| {
        let b = body(app, bob);
        f64::from(b.kinetic_energy()) + f64::from(m) * g * f64::from(b.position.y - 2.0)
    };
    let mut max_error = 0.0f32;
    let mut max_energy = [f64::NEG_INFINITY; 2];
    for n in 0..4000 {
        step(&mut app, 1);
        let b = body(&app, bob);
        max_error = max_error.max((b.position.distance(Vec3::new(0.0, 2.0, 0.0)) - 1.0).abs());
        let e = energy(&app);
        assert!(e.abs() < 0.05 * mgl, "step {n}: energy {e}");
        max_energy[n / 2000] = max_energy[n / 2000].max(e);
    }
    assert!(max_error < 0.005, "length error up to {max_error}");
    assert!(
        max_energy[1] <= max_energy[0] + 1e-3 * mgl,
        "energy grew: {max_energy:?}"
    );
}

/// Two free bodies on a rod: momentum is conserved exactly up to rounding,
/// and both are one island.
#[test]
fn a_rod_between_free_bodies_conserves_momentum_and_joins_them() {
    let mut app = app();
    no_sleep(&mut app);
    set_gravity(&mut app, Vec3::ZERO);
    let a = spawn(
        &mut app,
        Body::new(1.0).with_velocity(Vec3::new(0.0, 2.0, 0.0)),
    );
    let b = spawn(
        &mut app,
        (
            Body::new(3.0)
                .with_position(Vec3::X)
                .with_velocity(Vec3::new(0.5, -1.0, 0.0)),
            Substeps(2),
        ),
    );
    spawn(&mut app, DistanceConstraint::new(a, b, 1.0));
    let p0 = body(&app, a).momentum() + body(&app, b).momentum();
    for _ in 0..500 {
        step(&mut app, 1);
        let p = body(&app, a).momentum() + body(&app, b).momentum();
        assert_close(p, p0, 1e-4, "momentum");
    }
    let island = |e| *app.world().get::<Island>(e).unwrap();
    assert_eq!(island(a).id(), island(b).id());
    assert_eq!(island(a).substeps(), 2);
    let d = body(&app, a).position.distance(body(&app, b).position);
    assert!((d - 1.0).abs() < 0.01, "distance {d}");
}

/// A ball dropped on the ground with no restitution never sinks more than
/// a millimetre below its radius, comes to rest on it, and sleeps.
#[test]
fn a_dropped_ball_rests_on_the_ground_and_sleeps() {
    let mut app = app();
    spawn(&mut app, GroundPlane::horizontal(0.0).with_restitution(0.0));
    let r = 0.25;
    let ball = spawn(
        &mut app,
        (
            Body::new(1.0).with_position(Vec3::new(0.0, 3.0, 0.0)),
            Radius(r),
        ),
    );
    let mut lowest = f32::INFINITY;
    let mut slept = false;
    for _ in 0..400 {
        step(&mut app, 1);
        lowest = lowest.min(body(&app, ball).position.y);
        slept |= app.world().get::<Sleeping>(ball).is_some();
    }
    assert!(lowest >= r - 1e-3, "sank to {lowest}");
    assert!(
        (body(&app, ball).position.y - r).abs() < 1e-3,
        "rests at {}",
        body(&app, ball).position.y
    );
    assert!(slept, "the resting ball fell asleep");
}

/// With restitution e, a ball dropped from height H rebounds to about e²·H.
#[test]
fn restitution_sets_the_rebound_height() {
    let mut app = app();
    no_sleep(&mut app);
    let e = 0.6;
    spawn(
        &mut app,
        GroundPlane::horizontal(0.0)
            .with_restitution(e)
            .with_friction(0.0),
    );
    let drop = 2.0;
    let ball = spawn(
        &mut app,
        (
            Body::new(1.0).with_position(Vec3::new(0.0, drop, 0.0)),
            Radius(0.0),
        ),
    );
    // Fall, bounce, then record the apex of the first rebound.
    let mut bounced = false;
    let mut apex = 0.0f32;
    for _ in 0..400 {
        step(&mut app, 1);
        let b = body(&app, ball);
        if b.velocity.y > 0.0 {
            bounced = true;
        }
        if bounced {
            apex = apex.max(b.position.y);
            if b.velocity.y < 0.0 {
                break;
            }
        }
    }
    let expected = e * e * drop;
    assert!(bounced);
    assert!(
        (apex - expected).abs() < 0.1 * expected,
        "apex {apex}, expected about {expected}"
    );
}

/// A ball sliding on the ground at v₀ with friction μ stops after about
/// v₀² / (2·μ·g) (Coulomb), and stays stopped.
#[test]
fn friction_stops_a_sliding_ball_where_coulomb_says() {
    let mut app = app();
    no_sleep(&mut app);
    let mu = 0.5;
    spawn(
        &mut app,
        GroundPlane::horizontal(0.0)
            .with_restitution(0.0)
            .with_friction(mu),
    );
    let r = 0.1;
    let v0 = 3.0;
    let ball = spawn(
        &mut app,
        (
            Body::new(1.0)
                .with_position(Vec3::new(0.0, r, 0.0))
                .with_velocity(Vec3::new(v0, 0.0, 0.0)),
            Radius(r),
        ),
    );
    step(&mut app, 200);
    let b = body(&app, ball);
    let expected = v0 * v0 / (2.0 * mu * 9.81);
    assert!(
        (b.position.x - expected).abs() < 0.05 * expected,
        "stopped at {}, expected {expected}",
        b.position.x
    );
    assert!(b.velocity.length() < 1e-4);
    assert!((b.position.y - r).abs() < 1e-3);
}

/// A wall (any normal) holds too, and a plane never moves fixed bodies.
#[test]
fn walls_hold_and_fixed_bodies_stay() {
    let mut app = app();
    no_sleep(&mut app);
    set_gravity(&mut app, Vec3::ZERO);
    // Solid where x > 2.
    spawn(
        &mut app,
        GroundPlane::new(Vec3::NEG_X, -2.0).with_restitution(0.0),
    );
    let ball = spawn(
        &mut app,
        (Body::new(1.0).with_velocity(Vec3::X * 5.0), Radius(0.5)),
    );
    let pinned = spawn(
        &mut app,
        (Body::fixed(Vec3::new(2.2, 0.0, 0.0)), Radius(0.5)),
    );
    step(&mut app, 100);
    assert!(body(&app, ball).position.x <= 1.5 + 1e-3);
    assert_eq!(body(&app, pinned).position, Vec3::new(2.2, 0.0, 0.0));
}

/// Bad input: a rod to a missing entity, a negative length, a NaN radius —
/// one warning each, nothing else disturbed.
#[test]
fn bad_constraints_are_reported_once() {
    let mut app = app();
    spawn(&mut app, GroundPlane::horizontal(-10.0));
    let a = spawn(&mut app, Body::new(1.0));
    let ghost = app.world_mut().spawn_empty().id();
    app.world_mut().despawn(ghost);
    let dangling = spawn(&mut app, DistanceConstraint::new(a, ghost, 1.0));
    let b = spawn(&mut app, Body::new(1.0).with_position(Vec3::X));
    let negative = spawn(&mut app, DistanceConstraint::new(a, b, -1.0));
    let odd = spawn(
        &mut app,
        (
            Body::new(1.0).with_position(Vec3::Y * 3.0),
            Radius(f32::NAN),
        ),
    );
    step(&mut app, 30);
    assert_eq!(
        warnings_for(&app, dangling),
        vec![PhysicsIssue::MissingEndpoint { endpoint: ghost }]
    );
    assert_eq!(
        warnings_for(&app, negative),
        vec![PhysicsIssue::InvalidLength { length: -1.0 }]
    );
    assert_eq!(warnings_for(&app, odd).len(), 1);
    assert!(all_bodies_finite(&mut app));
    // Fixing the length readmits the rod.
    let rod = *app.world().get::<DistanceConstraint>(negative).unwrap();
    app.world_mut()
        .entity_mut(negative)
        .insert(DistanceConstraint { length: 1.0, ..rod });
    step(&mut app, 2);
    assert!(!has_error(&app, negative));
}

/// A NaN position bias is read as the default, not spread into velocities.
#[test]
fn a_nan_position_bias_spreads_no_nan() {
    let mut app = app();
    app.insert_resource(ConstraintSettings {
        position_bias: f32::NAN,
        ..default()
    });
    let pivot = spawn(&mut app, Body::fixed(Vec3::ZERO));
    let bob = spawn(&mut app, Body::new(1.0).with_position(Vec3::X));
    spawn(&mut app, DistanceConstraint::new(pivot, bob, 1.0));
    step(&mut app, 50);
    assert!(all_bodies_finite(&mut app));
    assert!(!has_error(&app, bob));
    assert!((body(&app, bob).position.length() - 1.0).abs() < 0.01);
}

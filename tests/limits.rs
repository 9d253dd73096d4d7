//! Joint limits: a distance limit is free fall while slack and never longer
//! than its bound; an angle limit stops a swinging bone at its bound and
//! brings a limit violated at spawn inside without throwing the bodies;
//! bad limits are reported and left out.

mod common;

use std::f32::consts::{FRAC_PI_2, PI};

use bevy::prelude::*;
use bevy_euler_physics::prelude::*;
use common::*;

fn no_sleep(app: &mut App) {
    app.insert_resource(SleepSettings {
        enabled: false,
        ..default()
    });
}

/// A body 0.5 m above a post, tied to it by a cord of 2 m, falls: while
/// the cord is slack its height is exactly semi-implicit Euler's free fall
/// `y_n = y_0 − g·h²·n(n+1)/2`; once taut it is never more than 1 % beyond
/// 2 m from the post.
#[test]
fn a_distance_limit_is_free_fall_while_slack_and_never_longer_than_max() {
    let mut app = app();
    no_sleep(&mut app);
    let post = spawn(&mut app, Body::fixed(Vec3::ZERO));
    let y0 = 0.5f32;
    let bob = spawn(
        &mut app,
        Body::new(1.0).with_position(Vec3::new(0.0, y0, 0.0)),
    );
    spawn(&mut app, DistanceLimit::new(post, bob, 0.0, 2.0));
    let g = 9.81f64;
    let h = f64::from(H);
    let mut slack_steps = 0;
    let mut longest = 0.0f32;
    for n in 1..=400u32 {
        step(&mut app, 1);
        let y = body(&app, bob).position.y;
        let free = f64::from(y0) - g * h * h * f64::from(n * (n + 1)) / 2.0;
        if free > -1.9 {
            // Slack all step long: free fall.
            assert!(
                (f64::from(y) - free).abs() < 1e-4,
                "step {n}: {y} where free fall gives {free}"
            );
            slack_steps += 1;
        }
        longest = longest.max(body(&app, bob).position.length());
    }
    assert!(slack_steps > 20, "{slack_steps} slack steps");
    assert!(longest <= 2.0 * 1.01, "the cord stretched to {longest}");
    assert!(longest > 1.95, "the cord never went taut ({longest})");
}

/// A strut (`max = ∞`) keeps two free bodies flying at each other at least
/// `min` apart, with their momentum kept.
#[test]
fn a_strut_keeps_bodies_apart_and_momentum() {
    let mut app = app();
    no_sleep(&mut app);
    app.insert_resource(Gravity(Vec3::ZERO));
    let a = spawn(
        &mut app,
        Body::new(1.0)
            .with_position(Vec3::new(-1.0, 0.0, 0.0))
            .with_velocity(Vec3::new(1.0, 0.2, 0.0)),
    );
    let b = spawn(
        &mut app,
        Body::new(2.0)
            .with_position(Vec3::new(1.0, 0.0, 0.0))
            .with_velocity(Vec3::new(-1.0, 0.0, 0.0)),
    );
    spawn(&mut app, DistanceLimit::new(a, b, 1.0, f32::INFINITY));
    let momentum = |app: &App| body(app, a).momentum() + body(app, b).momentum();
    let p0 = momentum(&app);
    let mut closest = f32::INFINITY;
    for _ in 0..200 {
        step(&mut app, 1);
        closest = closest.min(body(&app, a).position.distance(body(&app, b).position));
    }
    assert!(closest > 0.99, "the strut let them within {closest}");
    assert!((momentum(&app) - p0).length() < 1e-4);
}

/// The signed angle the limit measures, from the bodies' positions.
fn angle(app: &App, a: Entity, pivot: Entity, b: Entity) -> f32 {
    AngleLimit::angle(
        body(app, a).position,
        body(app, pivot).position,
        body(app, b).position,
        Vec3::Z,
    )
}

/// A bone on a rod from a fixed pivot, pushed over from straight up,
/// swings down; its angle from a fixed reference arm (along +x) is
/// limited to `[−π/4, π/2 + 0.3]`. It never swings more than 0.02 rad past
/// either bound, and comes to rest against the lower one, where gravity
/// holds it.
#[test]
fn an_angle_limit_stops_a_swinging_bone_at_its_bound() {
    let mut app = app();
    no_sleep(&mut app);
    let pivot = spawn(&mut app, Body::fixed(Vec3::ZERO));
    // The reference arm points along +x; the bone starts at +y, at π/2.
    let reference = spawn(&mut app, Body::fixed(Vec3::X));
    let bone = spawn(
        &mut app,
        (Body::new(1.0).with_position(Vec3::Y), Damping(0.5)),
    );
    spawn(&mut app, DistanceConstraint::new(pivot, bone, 1.0));
    // Allowed from −π/4 (below the reference arm) to π/2 + 0.3: the bone
    // falls clockwise from π/2 through 0 and must stop at −π/4.
    let (min, max) = (-PI / 4.0, FRAC_PI_2 + 0.3);
    spawn(&mut app, AngleLimit::new(reference, pivot, bone, min, max));
    // A push to start it falling to the right.
    body_mut(&mut app, bone).velocity = Vec3::new(0.5, 0.0, 0.0);
    let mut lowest = f32::INFINITY;
    for _ in 0..600 {
        step(&mut app, 1);
        let theta = angle(&app, reference, pivot, bone);
        lowest = lowest.min(theta);
        assert!(theta <= max + 0.02, "swung past the upper bound: {theta}");
    }
    assert!(lowest >= min - 0.02, "swung past the bound to {lowest}");
    let theta = angle(&app, reference, pivot, bone);
    assert!((theta - min).abs() < 0.02, "rests at {theta}, bound {min}");
    // The rod holds too.
    assert!((body(&app, bone).position.length() - 1.0).abs() < 0.01);
}

/// Three free bodies bent to π/2 at spawn with a limit of `[2.5, π]`: the
/// limit opens the angle inside its bounds within a second, without
/// throwing the bodies and without moving their centre of mass. "Not
/// thrown": no body moves faster than it would closing the whole
/// violation (0.93 rad on 1 m arms, 0.93 m) in half a second. (With the
/// position bias left in the velocities, the first step threw the arms at
/// 26 m/s.)
#[test]
fn a_limit_violated_at_spawn_comes_inside_gently() {
    let mut app = app();
    no_sleep(&mut app);
    app.insert_resource(Gravity(Vec3::ZERO));
    let a = spawn(&mut app, Body::new(1.0).with_position(Vec3::X));
    let p = spawn(&mut app, Body::new(2.0));
    let b = spawn(&mut app, Body::new(1.0).with_position(Vec3::Y));
    spawn(&mut app, DistanceConstraint::new(a, p, 1.0));
    spawn(&mut app, DistanceConstraint::new(p, b, 1.0));
    // The angle from the arm to a (x) to the arm to b (y) is +π/2.
    spawn(&mut app, AngleLimit::new(a, p, b, 2.5, PI));
    let centre = |app: &App| {
        let bodies = [a, p, b].map(|e| body(app, e));
        let mass: f32 = bodies.iter().map(|b| b.mass()).sum();
        bodies.iter().map(|b| b.position * b.mass()).sum::<Vec3>() / mass
    };
    let c0 = centre(&app);
    let mut fastest = 0.0f32;
    for _ in 0..64 {
        step(&mut app, 1);
        for e in [a, p, b] {
            fastest = fastest.max(body(&app, e).velocity.length());
        }
    }
    let theta = angle(&app, a, p, b);
    assert!(theta >= 2.5 - 0.01, "still bent at {theta}");
    assert!(fastest < (2.5 - FRAC_PI_2) / 0.5, "thrown at {fastest} m/s");
    assert!((centre(&app) - c0).length() < 1e-4, "the centre moved");
}

/// Bad limits: bounds in the wrong order, NaN, an angle out of range, a
/// zero axis, a limit whose bodies coincide. Each is reported, marked with
/// a `PhysicsError` and left out; nothing panics and the bodies stay
/// finite and fall freely.
#[test]
fn bad_limits_are_reported_and_left_out() {
    let mut app = app();
    no_sleep(&mut app);
    let x = spawn(&mut app, Body::new(1.0).with_position(Vec3::X));
    let y = spawn(&mut app, Body::new(1.0).with_position(Vec3::Y));
    let z = spawn(&mut app, Body::new(1.0));
    let bad = [
        spawn(&mut app, DistanceLimit::new(x, y, 2.0, 1.0)),
        spawn(&mut app, DistanceLimit::new(x, y, f32::NAN, 1.0)),
        spawn(&mut app, DistanceLimit::new(x, y, 0.0, f32::NAN)),
        spawn(&mut app, DistanceLimit::new(x, x, 0.0, 1.0)),
        spawn(&mut app, AngleLimit::new(x, z, y, 1.0, 0.5)),
        spawn(&mut app, AngleLimit::new(x, z, y, -4.0, 0.5)),
        spawn(
            &mut app,
            AngleLimit::new(x, z, y, 0.0, 1.0).with_axis(Vec3::ZERO),
        ),
        spawn(&mut app, AngleLimit::new(x, x, y, 0.0, 1.0)),
    ];
    step(&mut app, 30);
    for limit in bad {
        assert!(has_error(&app, limit), "{limit} was not reported");
        assert_eq!(
            warnings_for(&app, limit).len(),
            1,
            "{limit} reported more than once"
        );
    }
    // Free fall, as with no limit at all.
    let t = 30.0 * H;
    for e in [x, y, z] {
        let v = body(&app, e).velocity;
        assert!(v.is_finite());
        assert!((v.y + 9.81 * t).abs() < 1e-3, "{e} falls at {v}");
    }
    // Replaced by a valid limit, the first comes back into the step.
    app.world_mut()
        .entity_mut(bad[0])
        .insert(DistanceLimit::new(x, y, 0.0, 3.0));
    step(&mut app, 2);
    assert!(!has_error(&app, bad[0]), "the fixed limit stayed out");
}

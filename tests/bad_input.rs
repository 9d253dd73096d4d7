//! Bad input: no panic, one warning naming the entity, no NaN elsewhere, the
//! offending item out of the step until fixed.

mod common;

use bevy::prelude::*;
use bevy_euler_physics::prelude::*;
use common::*;

/// A healthy pendulum beside the bad input: it must behave as if alone.
struct Witness {
    anchor: Entity,
    bob: Entity,
}

fn witness(app: &mut App) -> Witness {
    let anchor = spawn(app, Body::fixed(Vec3::new(10.0, 0.0, 0.0)));
    let bob = spawn(
        app,
        Body::new(1.0).with_position(Vec3::new(10.5, -1.0, 0.0)),
    );
    spawn(app, Spring::new(anchor, bob, 1.0, 100.0).with_damping(0.1));
    Witness { anchor, bob }
}

/// Steps a twin of the witness alone, to compare with.
fn witness_alone(steps: usize) -> Body {
    let mut app = app();
    let w = witness(&mut app);
    step(&mut app, steps);
    let _ = w.anchor;
    body(&app, w.bob)
}

#[track_caller]
fn assert_one_warning(app: &App, entity: Entity, expected: impl Fn(&PhysicsIssue) -> bool) {
    let issues = warnings_for(app, entity);
    assert_eq!(
        issues.len(),
        1,
        "exactly one warning for {entity}, got {issues:?}"
    );
    assert!(
        expected(&issues[0]),
        "wrong issue for {entity}: {:?}",
        issues[0]
    );
}

/// The common checks after 60 steps.
#[track_caller]
fn assert_contained(app: &mut App, w: &Witness, culprit: Entity) {
    assert!(has_error(app, culprit), "{culprit} must carry PhysicsError");
    assert!(!has_error(app, w.bob), "the witness must not");
    assert_eq!(
        body(app, w.bob),
        witness_alone(60),
        "the witness must move as if alone"
    );
    let finite_except_culprit = {
        let world = app.world_mut();
        let mut q = world.query::<(Entity, &Body)>();
        q.iter(world)
            .filter(|(e, _)| *e != culprit)
            .all(|(_, b)| b.position.is_finite() && b.velocity.is_finite())
    };
    assert!(finite_except_culprit, "NaN spread to other bodies");
}

#[test]
fn spring_to_a_despawned_entity() {
    let mut app = app();
    let w = witness(&mut app);
    let gone = spawn(&mut app, Body::new(1.0));
    app.world_mut().despawn(gone);
    let spring = spawn(&mut app, Spring::new(w.bob, gone, 1.0, 10.0));
    step(&mut app, 60);
    assert_one_warning(
        &app,
        spring,
        |i| matches!(i, PhysicsIssue::MissingEndpoint { endpoint } if *endpoint == gone),
    );
    assert_contained(&mut app, &w, spring);
}

#[test]
fn spring_to_an_entity_without_body() {
    let mut app = app();
    let w = witness(&mut app);
    let bodiless = spawn(&mut app, Transform::default());
    let spring = spawn(&mut app, Spring::new(bodiless, w.bob, 1.0, 10.0));
    step(&mut app, 60);
    assert_one_warning(
        &app,
        spring,
        |i| matches!(i, PhysicsIssue::EndpointWithoutBody { endpoint } if *endpoint == bodiless),
    );
    assert_contained(&mut app, &w, spring);

    // Giving the entity a body brings the spring back.
    app.world_mut()
        .entity_mut(bodiless)
        .insert(Body::fixed(Vec3::ZERO));
    step(&mut app, 2);
    assert!(
        !has_error(&app, spring),
        "the spring must rejoin once its end has a body"
    );
}

#[test]
fn spring_from_a_body_to_itself() {
    let mut app = app();
    let w = witness(&mut app);
    let spring = spawn(&mut app, Spring::new(w.bob, w.bob, 1.0, 10.0));
    step(&mut app, 60);
    assert_one_warning(&app, spring, |i| matches!(i, PhysicsIssue::SelfSpring));
    assert_contained(&mut app, &w, spring);
}

type IssueCheck = fn(&PhysicsIssue) -> bool;

#[test]
fn invalid_spring_parameters() {
    let cases: [(Spring, IssueCheck); 5] = {
        let p = Entity::PLACEHOLDER;
        [
            (Spring::new(p, p, 1.0, -5.0), |i| {
                matches!(i, PhysicsIssue::InvalidStiffness { .. })
            }),
            (Spring::new(p, p, 1.0, f32::NAN), |i| {
                matches!(i, PhysicsIssue::InvalidStiffness { .. })
            }),
            (Spring::new(p, p, 1.0, 5.0).with_damping(-1.0), |i| {
                matches!(i, PhysicsIssue::InvalidSpringDamping { .. })
            }),
            (Spring::new(p, p, -1.0, 5.0), |i| {
                matches!(i, PhysicsIssue::InvalidRestLength { .. })
            }),
            (Spring::new(p, p, f32::INFINITY, 5.0), |i| {
                matches!(i, PhysicsIssue::InvalidRestLength { .. })
            }),
        ]
    };
    for (template, expected) in cases {
        let mut app = app();
        let w = witness(&mut app);
        let other = spawn(
            &mut app,
            Body::new(1.0).with_position(Vec3::new(10.0, -2.0, 0.0)),
        );
        let spring = spawn(
            &mut app,
            Spring {
                a: w.bob,
                b: other,
                ..template
            },
        );
        step(&mut app, 60);
        assert_one_warning(&app, spring, expected);
        assert!(has_error(&app, spring));
        assert_eq!(
            body(&app, w.bob),
            witness_alone(60),
            "{template:?} must not touch the witness"
        );
        assert!(all_bodies_finite(&mut app));

        // Fixing the value (springs are immutable: a new value replaces
        // the old) brings the spring back.
        let broken = *app.world().get::<Spring>(spring).unwrap();
        app.world_mut().entity_mut(spring).insert(
            broken
                .with_stiffness(5.0)
                .with_damping(0.0)
                .with_rest_length(1.0),
        );
        step(&mut app, 2);
        assert!(
            !has_error(&app, spring),
            "{template:?}: fixed spring must rejoin"
        );
    }
}

#[test]
fn invalid_masses() {
    for mass in [-1.0f32, 0.0, f32::NAN] {
        let mut app = app();
        let w = witness(&mut app);
        let bad = spawn(
            &mut app,
            Body::new(mass).with_position(Vec3::new(10.5, -2.0, 0.0)),
        );
        spawn(&mut app, Spring::new(w.bob, bad, 1.0, 100.0));
        step(&mut app, 60);
        assert_one_warning(&app, bad, |i| matches!(i, PhysicsIssue::InvalidMass { .. }));
        assert!(has_error(&app, bad));
        // Left untouched, and nothing spread.
        assert_eq!(
            body(&app, bad).position,
            Vec3::new(10.5, -2.0, 0.0),
            "mass {mass}"
        );
        assert!(body(&app, w.bob).position.is_finite() && body(&app, w.bob).velocity.is_finite());

        body_mut(&mut app, bad).inv_mass = 1.0;
        step(&mut app, 2);
        assert!(
            !has_error(&app, bad),
            "mass {mass}: a fixed body must rejoin"
        );
    }
}

#[test]
fn non_finite_velocity_or_position_from_the_user() {
    for (position, velocity) in [
        (Vec3::new(10.5, -2.0, 0.0), Vec3::new(f32::NAN, 0.0, 0.0)),
        (Vec3::new(f32::INFINITY, -2.0, 0.0), Vec3::ZERO),
    ] {
        let mut app = app();
        let w = witness(&mut app);
        let bad = spawn(
            &mut app,
            Body::new(1.0).with_position(Vec3::new(10.5, -2.0, 0.0)),
        );
        spawn(&mut app, Spring::new(w.bob, bad, 1.0, 100.0));
        step(&mut app, 5);
        {
            let mut b = body_mut(&mut app, bad);
            b.position = position;
            b.velocity = velocity;
        }
        step(&mut app, 60);
        assert_one_warning(&app, bad, |i| matches!(i, PhysicsIssue::NonFinite { .. }));
        assert!(has_error(&app, bad));
        assert!(body(&app, w.bob).position.is_finite() && body(&app, w.bob).velocity.is_finite());
        assert!(body(&app, w.anchor).position.is_finite());

        {
            let mut b = body_mut(&mut app, bad);
            b.position = Vec3::new(10.5, -2.0, 0.0);
            b.velocity = Vec3::ZERO;
        }
        step(&mut app, 2);
        assert!(!has_error(&app, bad), "a repaired body must rejoin");
        assert!(all_bodies_finite(&mut app));
    }
}

#[test]
fn negative_damping() {
    let mut app = app();
    let w = witness(&mut app);
    let bad = spawn(&mut app, (Body::new(1.0), Damping(-3.0)));
    step(&mut app, 60);
    assert_one_warning(&app, bad, |i| {
        matches!(i, PhysicsIssue::InvalidDamping { .. })
    });
    assert_contained(&mut app, &w, bad);
    app.world_mut().get_mut::<Damping>(bad).unwrap().0 = 3.0;
    step(&mut app, 2);
    assert!(!has_error(&app, bad));
}

#[derive(Resource)]
struct Poison(Entity);

fn poison_once(
    poison: Res<Poison>,
    mut forces: Query<&mut AccumulatedForce>,
    mut done: Local<bool>,
) {
    if !*done {
        forces.get_mut(poison.0).unwrap().0 = Vec3::new(f32::NAN, 0.0, 0.0);
        *done = true;
    }
}

/// A body whose state turns non-finite inside a step (here a NaN force from
/// a user system) keeps its last finite position, is frozen and reported;
/// its spring neighbour stays finite.
#[test]
fn state_turning_non_finite_during_a_step_is_frozen() {
    let mut app = app();
    let w = witness(&mut app);
    let victim = spawn(
        &mut app,
        Body::new(1.0).with_position(Vec3::new(10.5, -2.0, 0.0)),
    );
    spawn(&mut app, Spring::new(w.bob, victim, 1.0, 100.0));
    step(&mut app, 10);
    let before = body(&app, victim).position;
    app.insert_resource(Poison(victim)).add_systems(
        PhysicsSubstep,
        poison_once.in_set(SubstepSystems::AccumulateForces),
    );
    step(&mut app, 60);
    assert_one_warning(&app, victim, |i| {
        matches!(i, PhysicsIssue::NonFinite { .. })
    });
    assert!(has_error(&app, victim));
    let frozen = body(&app, victim).position;
    assert!(frozen.is_finite(), "keeps its last finite position");
    assert!((frozen - before).length() < 1.0);
    assert!(body(&app, w.bob).position.is_finite() && body(&app, w.bob).velocity.is_finite());
    assert!(!has_error(&app, w.bob));
}

/// Despawning a body that springs point to: no panic; each spring is
/// reported once and left out; the rest go on.
#[test]
fn despawning_a_jointed_body() {
    let mut app = app();
    let w = witness(&mut app);
    let middle = spawn(
        &mut app,
        Body::new(1.0).with_position(Vec3::new(10.5, -2.0, 0.0)),
    );
    let end = spawn(
        &mut app,
        Body::new(1.0).with_position(Vec3::new(10.5, -3.0, 0.0)),
    );
    let s1 = spawn(&mut app, Spring::new(w.bob, middle, 1.0, 100.0));
    let s2 = spawn(&mut app, Spring::new(middle, end, 1.0, 100.0));
    step(&mut app, 10);
    app.world_mut().despawn(middle);
    step(&mut app, 50);
    for s in [s1, s2] {
        assert_one_warning(
            &app,
            s,
            |i| matches!(i, PhysicsIssue::MissingEndpoint { endpoint } if *endpoint == middle),
        );
    }
    assert!(all_bodies_finite(&mut app));
    // `end` now falls freely.
    assert!(body(&app, end).velocity.y < -3.0);
}

/// A spring past ω·h = 2 is reported once, with the substeps that would
/// make it stable; whatever it does after, nothing panics and no position
/// becomes non-finite.
#[test]
fn unstable_spring_is_reported_once() {
    let mut app = app();
    let w = witness(&mut app);
    let anchor = spawn(&mut app, Body::fixed(Vec3::ZERO));
    let a = spawn(
        &mut app,
        Body::new(1.0).with_position(Vec3::new(0.0, -1.1, 0.0)),
    );
    // ω = 1000 rad/s, h = 1/64: ω·h ≈ 15.6.
    let spring = spawn(&mut app, Spring::new(anchor, a, 1.0, 1.0e6));
    step(&mut app, 300);
    assert_one_warning(&app, spring, |i| match *i {
        PhysicsIssue::Unstable {
            omega_h,
            substeps_needed,
            ..
        } => (omega_h - 1000.0 * H).abs() < 1e-3 && substeps_needed == 8,
        _ => false,
    });
    let world = app.world_mut();
    let mut q = world.query::<&Body>();
    assert!(q.iter(world).all(|b| b.position.is_finite()));
    assert_eq!(body(&app, w.bob), witness_alone(300));
}

#[test]
fn zero_substeps_is_clamped() {
    let mut app = app();
    app.insert_resource(PhysicsSettings {
        substeps: 0,
        ..default()
    });
    let e = spawn(&mut app, Body::new(1.0));
    step(&mut app, 4);
    assert!(
        body(&app, e).velocity.y < 0.0,
        "the step still runs one pass"
    );
}

/// A zero-length spring has no direction: it exerts no force and gives no NaN.
#[test]
fn zero_length_spring_gives_no_nan() {
    let mut app = app();
    set_gravity(&mut app, Vec3::ZERO);
    let a = spawn(&mut app, Body::new(1.0));
    let b = spawn(&mut app, Body::new(1.0));
    spawn(&mut app, Spring::new(a, b, 1.0, 100.0).with_damping(1.0));
    step(&mut app, 10);
    assert!(all_bodies_finite(&mut app));
    assert!(warnings(&app).is_empty());
}

/// A non-finite `Gravity` for one step harms no body: the step runs as
/// without gravity, nothing is left out, and once gravity is finite again
/// bodies fall as before.
#[test]
fn non_finite_gravity_harms_no_body() {
    for bad in [f32::NAN, f32::INFINITY] {
        let mut app = app();
        let w = witness(&mut app);
        let ball = spawn(
            &mut app,
            Body::new(1.0).with_position(Vec3::new(0.0, 5.0, 0.0)),
        );
        step(&mut app, 5);
        let before = *app.world().get::<Body>(ball).unwrap();
        app.insert_resource(Gravity(Vec3::new(0.0, bad, 0.0)));
        step(&mut app, 1);
        let during = *app.world().get::<Body>(ball).unwrap();
        // Without gravity: the velocity is kept, the body drifts on.
        assert_eq!(during.velocity, before.velocity, "gravity {bad}");
        assert_eq!(during.position, before.position + H * before.velocity);
        app.insert_resource(Gravity::default());
        step(&mut app, 1);
        let after = *app.world().get::<Body>(ball).unwrap();
        assert!((after.velocity.y - (during.velocity.y - 9.81 * H)).abs() < 1e-5);
        let world = app.world_mut();
        assert_eq!(world.query::<&PhysicsError>().iter(world).count(), 0);
        assert!(app.world().get::<Body>(w.bob).unwrap().position.is_finite());
    }
}

/// `wake_island` and `sleep_island` on an entity despawned earlier in the
/// same command queue do nothing, and do not panic.
#[test]
fn island_commands_on_a_despawned_entity_do_nothing() {
    let mut app = app();
    let body = spawn(&mut app, Body::new(1.0));
    step(&mut app, 1);
    let world = app.world_mut();
    let mut commands = world.commands();
    commands.entity(body).despawn();
    commands.entity(body).wake_island();
    commands.entity(body).sleep_island();
    world.flush();
    step(&mut app, 2);
    assert!(app.world().get_entity(body).is_err());
}

/// A plane normal of any finite, non-zero length holds a ball up: very
/// long and very short normals are scaled before they are normalised.
#[test]
fn plane_normals_of_extreme_length_still_hold() {
    for length in [1e-25, 1e-3, 1.0, 1e20, 1e25, f32::MAX] {
        let mut app = app();
        spawn(&mut app, GroundPlane::new(Vec3::Y * length, 0.0));
        let ball = spawn(
            &mut app,
            (
                Body::new(1.0).with_position(Vec3::new(0.0, 0.5, 0.0)),
                Radius(0.1),
            ),
        );
        step(&mut app, 120);
        let y = app.world().get::<Body>(ball).unwrap().position.y;
        assert!(
            (y - 0.1).abs() < 0.01,
            "normal length {length}: ball at {y}"
        );
    }
}

/// A fixed step too short for the substeps asked for (100 ns in 256
/// passes would give passes of 0 ns, and a rod divides by the pass step)
/// runs at most one pass per nanosecond, with a warning: a rod pendulum
/// stays finite and in the step, and holds its length.
#[test]
fn passes_shorter_than_a_nanosecond_are_clamped() {
    let mut app = app_with_timestep(100e-9);
    let pivot = spawn(&mut app, Body::fixed(Vec3::ZERO));
    let bob = spawn(
        &mut app,
        (
            Body::new(1.0)
                .with_position(Vec3::X)
                .with_velocity(Vec3::new(0.0, 3.0, 0.0)),
            Substeps(256),
        ),
    );
    spawn(&mut app, DistanceConstraint::new(pivot, bob, 1.0));
    step(&mut app, 50);
    let state = body(&app, bob);
    assert!(
        state.position.is_finite() && state.velocity.is_finite(),
        "{state:?}"
    );
    assert!(!has_error(&app, bob), "the bob stays in the step");
    let timestep = app.world().resource::<Time<Fixed>>().timestep();
    assert!(timestep.as_nanos() < 256, "{timestep:?}");
    assert_eq!(
        app.world().resource::<PhysicsStep>().passes as u128,
        timestep.as_nanos(),
        "one pass per nanosecond"
    );
    assert!(
        (state.position.length() - 1.0).abs() < 1e-3,
        "the rod holds: {}",
        state.position.length()
    );
}

/// A radius that is negative, not finite or beyond `Radius::MAX` is
/// reported once and gives the body no contacts: the ball falls through
/// the ground as in free fall, instead of being thrown out of it.
#[test]
fn radii_no_scene_can_mean_are_refused() {
    for radius in [-1.0, f32::NAN, f32::INFINITY, 1e30, Radius::MAX * 2.0] {
        let mut app = app();
        let w = witness(&mut app);
        spawn(&mut app, GroundPlane::horizontal(0.0));
        let ball = spawn(
            &mut app,
            (Body::new(1.0).with_position(Vec3::Y), Radius(radius)),
        );
        step(&mut app, 60);
        assert_one_warning(
            &app,
            ball,
            |issue| matches!(issue, PhysicsIssue::InvalidRadius { radius: r } if r.to_bits() == radius.to_bits()),
        );
        // Free fall for 60 steps of h: v = g·60h exactly as the kicks add.
        let v = body(&app, ball).velocity;
        let expected = -9.81 * 60.0 * H;
        assert!(
            (v.y - expected).abs() < 1e-3 && v.x == 0.0 && v.z == 0.0,
            "Radius({radius}): {v} (free fall {expected})"
        );
        assert_eq!(body(&app, w.bob), witness_alone(60), "Radius({radius})");
    }
}

/// A negative damping is reported on a fixed body too, whether or not it
/// anchors anything.
#[test]
fn negative_damping_on_a_fixed_body_is_reported() {
    for anchors in [false, true] {
        let mut app = app();
        let w = witness(&mut app);
        let fixed = spawn(&mut app, (Body::fixed(Vec3::ZERO), Damping(-1.0)));
        if anchors {
            let bob = spawn(&mut app, Body::new(1.0).with_position(-Vec3::Y));
            spawn(&mut app, Spring::new(fixed, bob, 1.0, 10.0));
        }
        step(&mut app, 60);
        assert_one_warning(
            &app,
            fixed,
            |issue| matches!(issue, PhysicsIssue::InvalidDamping { damping } if *damping == -1.0),
        );
        assert!(has_error(&app, fixed), "anchors: {anchors}");
        assert_eq!(body(&app, w.bob), witness_alone(60), "anchors: {anchors}");
    }
}

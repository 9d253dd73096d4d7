//! Bodies pinned to entities (`PinnedTo`) and entities that follow bodies
//! (`FollowsBody`): Galilean invariance of a pendulum under a moving
//! target, teleports without a velocity spike, targets in a hierarchy,
//! sleep and wake, bad targets reported and contained, and followers
//! drawn where their bodies are drawn.

mod common;

use std::time::Duration;

use bevy::prelude::*;
use bevy::time::TimeUpdateStrategy;
use bevy_euler_physics::prelude::*;
use common::*;

/// The target's velocity, when it moves.
const U: Vec3 = Vec3::new(3.0, 0.0, 0.0);

/// Moves every [`Mover`] by its velocity each fixed step, before the
/// physics.
#[derive(Component)]
struct Mover(Vec3);

fn move_targets(time: Res<Time>, mut movers: Query<(&Mover, &mut Transform)>) {
    for (mover, mut transform) in &mut movers {
        transform.translation += mover.0 * time.delta_secs();
    }
}

fn app_with_movers() -> App {
    let mut app = app();
    app.add_systems(FixedUpdate, move_targets.in_set(PhysicsSystems::Prepare));
    app
}

/// Makes each frame of `app` last `steps` fixed steps (a fraction: frames
/// that end between steps).
fn frames_of(app: &mut App, steps: f32) {
    app.insert_resource(TimeUpdateStrategy::ManualDuration(Duration::from_secs_f32(
        H * steps,
    )));
}

/// A damped pendulum (1 kg on a 50 N/m spring, pulled sideways) hung from a
/// fixed body pinned to a target moving at `u`; the bob's position and
/// velocity relative to the pin's, step by step. The pin sits where the
/// target is at a step's start; the bob's state at a step's end is
/// measured against where the pin will be at the next one (`p + h·u`),
/// and it is set off the same way.
fn pendulum_under(u: Vec3, steps: usize) -> Vec<(Vec3, Vec3)> {
    let mut app = app_with_movers();
    let target = spawn(&mut app, (Transform::from_xyz(0.0, 2.0, 0.0), Mover(u)));
    let pin = spawn(
        &mut app,
        (
            Body::fixed(Vec3::ZERO),
            PinnedTo::new(target).with_offset(Vec3::new(0.0, 0.5, 0.0)),
        ),
    );
    let bob = spawn(
        &mut app,
        Body::new(1.0).with_position(Vec3::new(0.6, 1.5, 0.0)),
    );
    spawn(&mut app, Spring::new(pin, bob, 1.0, 50.0).with_damping(0.3));
    // The pin takes its place (a teleport) in the first step; the bob is
    // then set off relative to it, at the target's velocity.
    step(&mut app, 1);
    let p = body(&app, pin);
    {
        let mut b = body_mut(&mut app, bob);
        b.position = p.position + H * u + Vec3::new(0.6, -1.0, 0.0);
        b.velocity = u;
    }
    (0..steps)
        .map(|_| {
            step(&mut app, 1);
            let (p, b) = (body(&app, pin), body(&app, bob));
            (
                b.position - (p.position + H * p.velocity),
                b.velocity - p.velocity,
            )
        })
        .collect()
}

/// Galilean invariance: under a target moving at constant velocity, the
/// pendulum swings relative to its pin as it does under a still target
/// (within 1 % of the swing), and the pin moves at the target's velocity.
#[test]
fn a_pendulum_under_a_moving_target_swings_as_under_a_still_one() {
    let still = pendulum_under(Vec3::ZERO, 400);
    let moving = pendulum_under(U, 400);
    let swing = still.iter().map(|(x, _)| x.x.abs()).fold(0.0, f32::max);
    let speed = still.iter().map(|(_, v)| v.length()).fold(0.0, f32::max);
    assert!(
        swing > 0.3 && speed > 0.5,
        "the pendulum swings: {swing} m, {speed} m/s"
    );
    for (n, ((xs, vs), (xm, vm))) in still.iter().zip(&moving).enumerate() {
        assert!(
            (*xs - *xm).length() <= 0.01 * swing,
            "step {n}: relative position {xm} under the moving target, {xs} under the still one"
        );
        assert!(
            (*vs - *vm).length() <= 0.01 * speed,
            "step {n}: relative velocity {vm} against {vs}"
        );
    }
}

/// The pin's velocity is the target's motion over the step, and it is
/// drawn between where it started the step and where it ended.
#[test]
fn a_pin_moves_at_its_targets_velocity_and_is_drawn_between() {
    let mut app = app_with_movers();
    frames_of(&mut app, 1.3);
    let target = spawn(&mut app, (Transform::default(), Mover(U)));
    let pin = spawn(&mut app, (Body::fixed(Vec3::ZERO), PinnedTo::new(target)));
    step(&mut app, 4);
    let b = body(&app, pin);
    assert_close(b.velocity, U, 1e-4, "the pin's velocity");
    let target_at = app.world().get::<Transform>(target).unwrap().translation;
    assert_eq!(b.position, target_at, "the pin is where the target is");
    let alpha = app.world().resource::<Time<Fixed>>().overstep_fraction();
    assert!(alpha > 0.1 && alpha < 0.9, "a frame between steps: {alpha}");
    let drawn = translation(&app, pin);
    assert_close(
        drawn,
        b.position - (1.0 - alpha) * H * b.velocity,
        1e-4,
        "drawn between the step's start and end",
    );
}

/// A target in a hierarchy: the pin follows the child's world transform
/// (its parent moving and turned), with the offset in the child's frame.
#[test]
fn a_pin_follows_a_child_through_its_parents() {
    let mut app = app_with_movers();
    let parent = spawn(
        &mut app,
        (
            Transform::from_xyz(1.0, 0.0, 0.0)
                .with_rotation(Quat::from_rotation_z(core::f32::consts::FRAC_PI_2)),
            Mover(U),
        ),
    );
    let child = app
        .world_mut()
        .spawn((Transform::from_xyz(2.0, 0.0, 0.0), ChildOf(parent)))
        .id();
    let pin = spawn(
        &mut app,
        (
            Body::fixed(Vec3::ZERO),
            PinnedTo::new(child).with_offset(Vec3::X),
        ),
    );
    step(&mut app, 5);
    let parent_at = app.world().get::<Transform>(parent).unwrap().translation;
    // The parent turned a quarter: the child's x is the world's y.
    assert_close(
        body(&app, pin).position,
        parent_at + Vec3::new(0.0, 3.0, 0.0),
        1e-4,
        "the pin",
    );
    assert_close(body(&app, pin).velocity, U, 1e-3, "its velocity");
}

/// A target that jumps further than the teleport distance: the pin is put
/// there at rest (no velocity spike), drawn there at once, and the bob
/// hanging from it feels no more than the spring's pull.
#[test]
fn a_teleported_target_makes_no_velocity_spike() {
    let mut app = app();
    let target = spawn(&mut app, Transform::default());
    let pin = spawn(
        &mut app,
        (
            Body::fixed(Vec3::ZERO),
            PinnedTo::new(target).with_teleport_distance(1.0),
        ),
    );
    step(&mut app, 3);
    // A short move: a velocity.
    app.world_mut()
        .get_mut::<Transform>(target)
        .unwrap()
        .translation = Vec3::new(0.5, 0.0, 0.0);
    step(&mut app, 1);
    assert_close(
        body(&app, pin).velocity,
        Vec3::new(0.5 / H, 0.0, 0.0),
        1e-3,
        "a short move",
    );
    // A long one: a teleport.
    let far = Vec3::new(100.0, 0.0, 0.0);
    app.world_mut()
        .get_mut::<Transform>(target)
        .unwrap()
        .translation = far;
    step(&mut app, 1);
    let b = body(&app, pin);
    assert_eq!(b.position, far);
    assert_eq!(b.velocity, Vec3::ZERO, "no spike");
    assert_eq!(
        app.world().get::<PositionHistory>(pin).unwrap().previous(),
        far,
        "drawn there at once"
    );
    assert_eq!(translation(&app, pin), far);
}

/// An island hanging from a still target falls asleep (the pin writes
/// nothing), and wakes when the target moves.
#[test]
fn a_still_target_lets_its_island_sleep_and_a_move_wakes_it() {
    let mut app = app();
    let target = spawn(&mut app, Transform::from_xyz(0.0, 2.0, 0.0));
    let pin = spawn(&mut app, (Body::fixed(Vec3::ZERO), PinnedTo::new(target)));
    let bob = spawn(
        &mut app,
        (
            Body::new(1.0).with_position(Vec3::new(0.0, 0.8, 0.0)),
            Damping(4.0),
        ),
    );
    spawn(&mut app, Spring::new(pin, bob, 1.0, 50.0));
    let asleep = |app: &App| app.world().get::<Sleeping>(bob).is_some();
    let mut steps = 0;
    while !asleep(&app) {
        step(&mut app, 1);
        steps += 1;
        assert!(steps < 2000, "the island never slept");
    }
    let changed_before = app
        .world()
        .entity(pin)
        .get_ref::<Body>()
        .unwrap()
        .last_changed();
    step(&mut app, 30);
    assert!(asleep(&app), "stays asleep under a still target");
    assert_eq!(
        app.world()
            .entity(pin)
            .get_ref::<Body>()
            .unwrap()
            .last_changed(),
        changed_before,
        "the pin wrote nothing"
    );
    app.world_mut()
        .get_mut::<Transform>(target)
        .unwrap()
        .translation
        .x += 0.2;
    step(&mut app, 1);
    assert!(!asleep(&app), "the target's move wakes the island");
    assert!(body(&app, bob).velocity.length() > 0.0);
}

/// Bad input, each reported once naming the pinned entity, the rest of
/// the scene untouched: a despawned target (the body stays fixed where it
/// was, at rest), a target without a transform, a non-finite target, and
/// a pin on a dynamic body (left alone).
#[test]
fn bad_pins_are_reported_once_and_contained() {
    /// A pendulum beside the bad pins, and its twin alone in an app.
    fn witness(app: &mut App) -> Entity {
        let anchor = spawn(app, Body::fixed(Vec3::new(10.0, 0.0, 0.0)));
        let bob = spawn(
            app,
            Body::new(1.0).with_position(Vec3::new(10.5, -1.0, 0.0)),
        );
        spawn(app, Spring::new(anchor, bob, 1.0, 50.0));
        bob
    }
    let mut app = app_with_movers();
    let witness_bob = witness(&mut app);
    let mut twin = app_with_movers();
    let twin_bob = witness(&mut twin);

    let moving = spawn(&mut app, (Transform::default(), Mover(U)));
    let gone = spawn(&mut app, (Body::fixed(Vec3::ZERO), PinnedTo::new(moving)));
    let bare = app.world_mut().spawn_empty().id();
    let no_transform = spawn(&mut app, (Body::fixed(Vec3::ONE), PinnedTo::new(bare)));
    let nan_target = spawn(&mut app, Transform::from_xyz(f32::NAN, 0.0, 0.0));
    let not_finite = spawn(&mut app, (Body::fixed(Vec3::Y), PinnedTo::new(nan_target)));
    let target = spawn(&mut app, Transform::default());
    let dynamic = spawn(
        &mut app,
        (
            Body::new(1.0).with_position(Vec3::new(-5.0, 0.0, 0.0)),
            PinnedTo::new(target),
        ),
    );
    step(&mut app, 10);
    let held = body(&app, gone);
    assert!(held.velocity.length() > 0.0, "the pin followed its target");
    app.world_mut().despawn(moving);
    step(&mut app, 50);
    step(&mut twin, 60);

    let after = body(&app, gone);
    assert_eq!(
        after.velocity,
        Vec3::ZERO,
        "at rest once its target is gone"
    );
    assert_eq!(after.position, held.position, "where it was");
    for (entity, expect) in [
        (gone, "PinTargetInvalid"),
        (no_transform, "PinTargetInvalid"),
        (not_finite, "PinTargetInvalid"),
        (dynamic, "PinnedDynamicBody"),
    ] {
        let issues = warnings_for(&app, entity);
        assert_eq!(issues.len(), 1, "{entity}: once: {issues:?}");
        assert!(
            format!("{:?}", issues[0]).starts_with(expect),
            "{entity}: {issues:?}"
        );
    }
    assert_eq!(body(&app, no_transform).position, Vec3::ONE);
    assert_eq!(body(&app, not_finite).position, Vec3::Y);
    assert!(
        body(&app, dynamic).velocity.y < -5.0,
        "the dynamic body falls, unpinned"
    );
    assert_eq!(
        body(&app, witness_bob),
        body(&twin, twin_bob),
        "the rest as if alone"
    );
    assert!(all_bodies_finite(&mut app));
}

/// A follower's translation is its body's drawn translation plus the
/// offset, every frame, also between steps and under a moving parent; a
/// follower of a missing body is reported once and stays where it is.
#[test]
fn a_follower_is_drawn_where_its_body_is() {
    let mut app = app();
    frames_of(&mut app, 0.7);
    let body_e = spawn(
        &mut app,
        Body::new(1.0)
            .with_position(Vec3::Y)
            .with_velocity(Vec3::new(2.0, 3.0, 0.0)),
    );
    let offset = Vec3::new(0.0, -0.2, 0.0);
    let lantern = spawn(&mut app, FollowsBody::new(body_e).with_offset(offset));
    // No TransformPlugin here: the parent's GlobalTransform is set by hand.
    let parent_transform = Transform::from_xyz(5.0, 0.0, 0.0).with_scale(Vec3::splat(2.0));
    let parent = spawn(
        &mut app,
        (parent_transform, GlobalTransform::from(parent_transform)),
    );
    let child = app
        .world_mut()
        .spawn((FollowsBody::new(body_e), ChildOf(parent)))
        .id();
    for _ in 0..20 {
        app.update();
        let drawn = translation(&app, body_e);
        assert_eq!(translation(&app, lantern), drawn + offset);
        let world = parent_transform.transform_point(translation(&app, child));
        assert_close(world, drawn, 1e-4, "the child lands on the body");
    }
    let gone = spawn(&mut app, Transform::from_xyz(7.0, 7.0, 7.0));
    app.world_mut().entity_mut(gone).despawn();
    let orphan = spawn(
        &mut app,
        (FollowsBody::new(gone), Transform::from_xyz(1.0, 2.0, 3.0)),
    );
    step(&mut app, 5);
    assert_eq!(translation(&app, orphan), Vec3::new(1.0, 2.0, 3.0));
    let issues = warnings_for(&app, orphan);
    assert_eq!(issues.len(), 1, "{issues:?}");
    assert!(matches!(issues[0], PhysicsIssue::MissingEndpoint { endpoint } if endpoint == gone));
}

/// A placement at another target than the last is a teleport: a new
/// target (in place, or by a new `PinnedTo`), and a target valid again
/// after it was gone, give no velocity spike.
#[test]
fn re_targeting_makes_no_velocity_spike() {
    let mut app = app();
    let first = spawn(&mut app, Transform::default());
    let second = spawn(&mut app, Transform::from_xyz(2.0, 0.0, 0.0));
    let pin = spawn(&mut app, (Body::fixed(Vec3::ZERO), PinnedTo::new(first)));
    step(&mut app, 3);
    assert_eq!(
        app.world().get::<PinPlaced>(pin).unwrap().target(),
        Some(first)
    );
    app.world_mut().get_mut::<PinnedTo>(pin).unwrap().target = second;
    step(&mut app, 1);
    assert_eq!(body(&app, pin).position, Vec3::new(2.0, 0.0, 0.0));
    assert_eq!(
        body(&app, pin).velocity,
        Vec3::ZERO,
        "a new target in place"
    );
    app.world_mut().entity_mut(pin).insert(PinnedTo::new(first));
    step(&mut app, 1);
    assert_eq!(body(&app, pin).velocity, Vec3::ZERO, "a new PinnedTo");
    // The target loses its transform, then gets it back 1 m away.
    app.world_mut().entity_mut(first).remove::<Transform>();
    step(&mut app, 2);
    app.world_mut()
        .entity_mut(first)
        .insert(Transform::from_xyz(0.0, 1.0, 0.0));
    step(&mut app, 1);
    assert_eq!(body(&app, pin).position, Vec3::Y);
    assert_eq!(body(&app, pin).velocity, Vec3::ZERO, "a target valid again");
}

/// A target with a `Body` is read at its body's position (not at its
/// drawn translation, which depends on the frame), the offset turned by
/// its `Transform`'s rotation.
#[test]
fn a_target_with_a_body_is_read_at_its_position() {
    let mut app = app();
    frames_of(&mut app, 0.6);
    let mover = spawn(
        &mut app,
        (
            Body::new(1.0).with_velocity(Vec3::new(1.0, 0.0, 0.0)),
            Transform::default().with_rotation(Quat::from_rotation_z(core::f32::consts::FRAC_PI_2)),
        ),
    );
    let pin = spawn(
        &mut app,
        (
            Body::fixed(Vec3::ZERO),
            PinnedTo::new(mover).with_offset(Vec3::X),
        ),
    );
    let mut checked = 0;
    for _ in 0..20 {
        app.update();
        if app
            .world()
            .get::<PinPlaced>(pin)
            .unwrap()
            .target()
            .is_none()
        {
            continue;
        }
        checked += 1;
        let target = body(&app, mover).position;
        let pinned = body(&app, pin).position;
        // Placed at the start of the step from the position the step
        // started from: one step behind the target's end.
        let started = app
            .world()
            .get::<PositionHistory>(mover)
            .unwrap()
            .previous();
        assert_close(
            pinned,
            started + Vec3::Y,
            1e-5,
            "at the body's position, offset turned",
        );
        assert!(target.is_finite());
    }
    assert!(checked > 10);
}

/// A snapshot taken before a pin's first placement and restored repeats
/// the run to the bit (the pin's state is saved with the bodies).
#[test]
fn a_restored_snapshot_places_pins_as_the_first_run_did() {
    let mut app = app_with_movers();
    let target = spawn(&mut app, (Transform::from_xyz(0.0, 1.4, 0.0), Mover(U)));
    let pin = spawn(&mut app, (Body::fixed(Vec3::ZERO), PinnedTo::new(target)));
    let bob = spawn(
        &mut app,
        Body::new(1.0).with_position(Vec3::new(0.3, 0.4, 0.0)),
    );
    spawn(&mut app, Spring::new(pin, bob, 1.0, 40.0).with_damping(0.5));
    let saved = PhysicsSnapshot::save(app.world_mut());
    let target_saved = *app.world().get::<Transform>(target).unwrap();
    let run = |app: &mut App| {
        (0..40)
            .map(|_| {
                step(app, 1);
                (body(app, pin), body(app, bob))
            })
            .collect::<Vec<_>>()
    };
    let first = run(&mut app);
    saved.restore(app.world_mut());
    *app.world_mut().get_mut::<Transform>(target).unwrap() = target_saved;
    let again = run(&mut app);
    assert_eq!(first[0].0.velocity, Vec3::ZERO, "placed at rest first");
    assert_eq!(first, again);
}

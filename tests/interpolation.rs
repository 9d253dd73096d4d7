//! Drawing between fixed steps: the lerp, teleports, spawning, opting out.

mod common;

use std::time::Duration;

use bevy::ecs::system::RunSystemOnce;
use bevy::prelude::*;
use bevy::time::TimeUpdateStrategy;
use bevy_euler_physics::prelude::*;
use common::*;

#[derive(Resource, Default)]
struct Steps(u32);

fn count(mut steps: ResMut<Steps>) {
    steps.0 += 1;
}

fn frame(app: &mut App, fixed_steps: f64) {
    let d = Duration::from_secs_f64(f64::from(H) * fixed_steps);
    app.insert_resource(TimeUpdateStrategy::ManualDuration(d));
    app.update();
}

fn overstep(app: &App) -> f32 {
    app.world().resource::<Time<Fixed>>().overstep_fraction()
}

/// Frames of 1.5, 1.5, 0.25, 0.5, 3, 0 and 0.75 fixed steps run 1, 2, 0, 0,
/// 3, 0 and 1 steps (the overstep carries over: 0.5, 0, 0.25, 0.75, 0.75,
/// 0.75, 0.5); after each, the drawn position is the lerp between the last two
/// fixed positions at the overstep fraction — checked against the closed
/// form of uniform motion, `x(t) = x0 + t·v`, at `t = (steps − 1 + α)·h`.
#[test]
fn transform_is_the_lerp_of_the_last_two_fixed_states() {
    let mut app = app();
    set_gravity(&mut app, Vec3::ZERO);
    app.init_resource::<Steps>().add_systems(FixedUpdate, count);
    let x0 = Vec3::new(-1.0, 2.0, 0.0);
    let v = Vec3::new(4.0, -2.0, 1.0);
    let e = spawn(&mut app, Body::new(1.0).with_position(x0).with_velocity(v));
    let mut ran = Vec::new();
    for fixed_steps in [1.5, 1.5, 0.25, 0.5, 3.0, 0.0, 0.75] {
        let before = app.world().resource::<Steps>().0;
        frame(&mut app, fixed_steps);
        let steps = app.world().resource::<Steps>().0;
        ran.push(steps - before);
        let alpha = overstep(&app);
        let drawn = translation(&app, e);
        let history = *app.world().get::<PositionHistory>(e).unwrap();
        let current = body(&app, e).position;
        assert_eq!(drawn, history.previous().lerp(current, alpha));
        let t = (steps as f32 - 1.0 + alpha) * H;
        assert_close(
            drawn,
            x0 + t * v,
            1e-5,
            &format!("after {steps} steps, α = {alpha}"),
        );
    }
    assert_eq!(ran, [1, 2, 0, 0, 3, 0, 1], "steps per frame");
}

/// A body gliding at 1 m/s along x with no gravity, after a frame of 1.5
/// fixed steps.
fn gliding() -> (App, Entity) {
    let mut app = app();
    set_gravity(&mut app, Vec3::ZERO);
    let e = spawn(
        &mut app,
        Body::new(1.0).with_velocity(Vec3::new(1.0, 0.0, 0.0)),
    );
    frame(&mut app, 1.5);
    (app, e)
}

/// A position written outside the fixed step is drawn at once, and the next
/// step starts from it: no streak from the old place.
#[test]
fn a_teleport_snaps() {
    let (mut app, e) = gliding();
    let far = Vec3::new(100.0, 50.0, 0.0);
    body_mut(&mut app, e).position = far;
    // A frame with no fixed step: drawn at the new place exactly.
    frame(&mut app, 0.25);
    assert_eq!(translation(&app, e), far);
    // Next steps interpolate from the new place onwards.
    frame(&mut app, 1.0);
    let drawn = translation(&app, e);
    assert!(
        drawn.x >= far.x && drawn.x <= far.x + 2.0 * H,
        "drawn at {drawn}"
    );
    assert_eq!(drawn.y, far.y);
}

/// A write of the velocity alone between steps (a kick from `Update`, say)
/// is no teleport: the body is still drawn between its last two fixed
/// positions, in that frame and after.
#[test]
fn a_velocity_write_does_not_snap() {
    let (mut app, e) = gliding();
    let (start, end) = (
        app.world().get::<PositionHistory>(e).unwrap().previous(),
        body(&app, e).position,
    );
    assert_ne!(start, end);
    body_mut(&mut app, e).velocity = Vec3::new(0.0, 5.0, 0.0);
    // A frame with no fixed step: the lerp, not the end position.
    frame(&mut app, 0.25);
    let alpha = overstep(&app);
    assert!(alpha > 0.5 && alpha < 1.0, "α = {alpha}");
    assert_eq!(translation(&app, e), start.lerp(end, alpha));
    assert_ne!(translation(&app, e), end);
}

/// What `DrawnPositions` gives is what the plugin draws: the lerp, a
/// teleport's new place, and nothing for an entity without `Body`. Its
/// walk of every body (`iter`) lists each body once, with what `get`
/// gives, and nothing else.
#[test]
fn drawn_positions_give_what_is_drawn() {
    #[derive(Resource, Default)]
    struct Seen(Vec<Option<Vec3>>, Vec<(Entity, Vec3)>);
    let mut app = app();
    set_gravity(&mut app, Vec3::ZERO);
    let e = spawn(
        &mut app,
        Body::new(1.0).with_velocity(Vec3::new(1.0, 2.0, 0.0)),
    );
    let still = spawn(&mut app, Body::new(2.0).with_position(Vec3::Y));
    let other = app.world_mut().spawn(Transform::default()).id();
    app.init_resource::<Seen>().add_systems(
        PostUpdate,
        move |drawn: DrawnPositions, mut seen: ResMut<Seen>| {
            seen.0 = vec![drawn.get(e), drawn.get(other), drawn.get(still)];
            seen.1 = drawn.iter().collect();
            seen.1.sort_by_key(|&(entity, _)| entity);
        },
    );
    for (fixed_steps, teleport) in [(1.5, false), (0.25, false), (0.0, true), (1.0, false)] {
        if teleport {
            body_mut(&mut app, e).position = Vec3::new(-4.0, 3.0, 0.0);
        }
        frame(&mut app, fixed_steps);
        let seen = &app.world().resource::<Seen>().0;
        assert_eq!(
            seen[0],
            Some(translation(&app, e)),
            "after {fixed_steps} steps"
        );
        assert_eq!(seen[1], None);
        if teleport {
            assert_eq!(seen[0], Some(Vec3::new(-4.0, 3.0, 0.0)));
        }
        let mut listed = vec![(e, seen[0].unwrap()), (still, seen[2].unwrap())];
        listed.sort_by_key(|&(entity, _)| entity);
        assert_eq!(app.world().resource::<Seen>().1, listed);
    }
}

/// A body spawned with only `Body` is drawn at its position from its first
/// frame, even if that frame runs no fixed step.
#[test]
fn a_new_body_gets_a_transform_at_its_position() {
    let mut app = app();
    let at = Vec3::new(3.0, 4.0, 5.0);
    let e = spawn(&mut app, Body::new(1.0).with_position(at));
    assert_eq!(translation(&app, e), at);
    frame(&mut app, 0.25);
    assert_eq!(translation(&app, e), at);

    // Spawned through commands, in the middle of a frame.
    let at2 = Vec3::new(-3.0, 1.0, 0.0);
    app.add_systems(
        Update,
        move |mut commands: Commands, mut done: Local<bool>| {
            if !*done {
                commands.spawn(Body::new(1.0).with_position(at2));
                *done = true;
            }
        },
    );
    frame(&mut app, 0.25);
    let world = app.world_mut();
    let mut q = world.query::<(&Body, &Transform)>();
    let found = q
        .iter(world)
        .any(|(b, t)| b.position == at2 && t.translation == at2);
    assert!(found, "body spawned by commands is drawn at its position");
}

/// `TransformSyncDisabled` leaves the transform alone.
#[test]
fn opted_out_bodies_keep_their_transform() {
    let mut app = app();
    let mine = Transform::from_xyz(7.0, 7.0, 7.0);
    let e = spawn(
        &mut app,
        (
            Body::new(1.0).with_velocity(Vec3::X),
            mine,
            TransformSyncDisabled,
        ),
    );
    step(&mut app, 10);
    assert_eq!(*app.world().get::<Transform>(e).unwrap(), mine);
    assert_ne!(body(&app, e).position, Vec3::ZERO);
}

/// With `PhysicsSettings::interpolate` off, a body is drawn exactly where the
/// last fixed step left it, whatever the overstep; switching it back on
/// draws the lerp again.
#[test]
fn interpolation_can_be_switched_off() {
    let mut app = app();
    set_gravity(&mut app, Vec3::ZERO);
    let v = Vec3::new(2.0, 0.0, 0.0);
    let e = spawn(&mut app, Body::new(1.0).with_velocity(v));
    app.world_mut()
        .resource_mut::<PhysicsSettings>()
        .interpolate = false;
    frame(&mut app, 1.5);
    let alpha = overstep(&app);
    assert!(alpha > 0.25, "the frame ends between steps (α = {alpha})");
    assert_eq!(translation(&app, e), body(&app, e).position);

    app.world_mut()
        .resource_mut::<PhysicsSettings>()
        .interpolate = true;
    frame(&mut app, 0.25);
    let alpha = overstep(&app);
    let history = *app.world().get::<PositionHistory>(e).unwrap();
    let current = body(&app, e).position;
    assert_eq!(
        translation(&app, e),
        history.previous().lerp(current, alpha)
    );
    assert_ne!(translation(&app, e), current);
}

/// How often the plain body's `Transform` was marked changed when
/// [`watch_marks`] looked, and how often it looked.
#[derive(Resource, Default)]
struct Marked {
    body: Option<Entity>,
    changed: u32,
    frames: u32,
}

/// In `PostUpdate`, before the propagation: whether the plain body's
/// `Transform` is marked changed since this system last ran.
fn watch_marks(mut marked: ResMut<Marked>, transforms: Query<Ref<Transform>>) {
    let Some(body) = marked.body else { return };
    marked.frames += 1;
    if transforms.get(body).is_ok_and(|t| t.is_changed()) {
        marked.changed += 1;
    }
}

/// Bodies a system of yours turns before the drawing, and after it.
#[derive(Component)]
struct TurnedBefore;
#[derive(Component)]
struct TurnedAfter;

fn turn_before(mut transforms: Query<&mut Transform, With<TurnedBefore>>) {
    for mut transform in &mut transforms {
        transform.rotate_z(0.1);
    }
}

fn turn_after(mut transforms: Query<&mut Transform, With<TurnedAfter>>) {
    for mut transform in &mut transforms {
        transform.rotate_x(0.05);
    }
}

/// The bits of an affine map.
fn bits(affine: bevy::math::Affine3A) -> [u32; 12] {
    affine.to_cols_array().map(f32::to_bits)
}

/// With Bevy's `TransformPlugin`, over frames of 0.4 fixed steps: a body
/// outside any hierarchy (plain, and one rotated and scaled), a body with
/// a child, and two bodies a system of yours turns each frame (one before
/// the drawing, one after). After every frame each `GlobalTransform` holds
/// the bits Bevy's propagation makes of the `Transform`s (the child's: its
/// parent's times its own), each translation is what `DrawnPositions`
/// gives, and, with `write_global_transforms` on, the drawing never marks
/// the plain body's `Transform` changed (off, or in an app without the
/// `TransformPlugin`: it does in every frame that moves the body).
#[test]
fn global_transforms_are_what_bevys_propagation_makes() {
    // (Whether the setting is on, whether the app propagates transforms.)
    for (write_globals, propagated) in [(true, true), (false, true), (true, false)] {
        let mut app = App::new();
        app.add_plugins((MinimalPlugins, EulerPhysicsPlugin));
        if propagated {
            app.add_plugins(TransformPlugin);
        }
        app.insert_resource(Time::<Fixed>::from_duration(Duration::from_secs_f32(H)))
            .insert_resource(PhysicsSettings {
                write_global_transforms: write_globals,
                ..default()
            })
            .init_resource::<Marked>()
            .add_systems(
                Update,
                (
                    turn_before.before(InterpolationSystems::Interpolate),
                    turn_after.after(InterpolationSystems::Interpolate),
                ),
            )
            .add_systems(
                PostUpdate,
                watch_marks.before(bevy::transform::TransformSystems::Propagate),
            );
        app.update();
        let at = |x: f32| Body::new(1.0).with_position(Vec3::new(x, 0.0, 0.0));
        let plain = spawn(&mut app, at(0.0).with_velocity(Vec3::X));
        let turned = Transform::from_rotation(Quat::from_rotation_z(0.7))
            .with_scale(Vec3::new(2.0, 0.5, 1.0));
        let scaled = spawn(&mut app, (at(1.0), turned));
        let parent = spawn(&mut app, at(2.0));
        let child = spawn(
            &mut app,
            (Transform::from_xyz(0.0, 0.3, 0.0), ChildOf(parent)),
        );
        let before = spawn(&mut app, (at(3.0), TurnedBefore));
        let after = spawn(&mut app, (at(4.0), TurnedAfter));
        let bodies = [plain, scaled, parent, before, after];
        frame(&mut app, 0.4);
        app.world_mut().resource_mut::<Marked>().body = Some(plain);
        let (mut last, mut moved) = (translation(&app, plain), 0);
        for n in 0..40 {
            frame(&mut app, 0.4);
            moved += u32::from(translation(&app, plain) != last);
            last = translation(&app, plain);
            if !propagated {
                continue;
            }
            let world = app.world();
            let global = |e: Entity| world.get::<GlobalTransform>(e).unwrap().affine();
            let local = |e: Entity| *world.get::<Transform>(e).unwrap();
            for e in bodies {
                assert_eq!(
                    bits(global(e)),
                    bits(GlobalTransform::from(local(e)).affine()),
                    "body {e} after frame {n} (writing globals: {write_globals})"
                );
            }
            let expected = GlobalTransform::from(global(parent)).mul_transform(local(child));
            assert_eq!(bits(global(child)), bits(expected.affine()), "the child");
        }
        let drawn = app
            .world_mut()
            .run_system_once(move |drawn: DrawnPositions| bodies.map(|e| drawn.get(e).unwrap()))
            .unwrap();
        for (e, position) in bodies.into_iter().zip(drawn) {
            assert_eq!(translation(&app, e), position);
        }
        assert!(body(&app, plain).position.x > 0.2, "it moves");
        let marked = app.world().resource::<Marked>();
        assert_eq!(marked.frames, 40);
        assert!(moved > 30, "the body moved in {moved} frames of 40");
        let expected = if write_globals && propagated {
            0
        } else {
            moved
        };
        assert_eq!(
            marked.changed, expected,
            "frames with the plain body's Transform marked changed"
        );
    }
}

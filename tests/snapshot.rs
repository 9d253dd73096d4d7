//! Snapshots: restoring a saved state and stepping on gives the same bits
//! as stepping on from when it was saved — sleep states and resting times
//! included — and the checksum tells states apart.

mod common;

use bevy::prelude::*;
use bevy_euler_physics::prelude::*;
use common::*;

struct Scene {
    /// A rope that comes to rest and falls asleep during the run.
    settling: Vec<Entity>,
    /// A body whose island is asleep when the snapshot is taken.
    sleeper: Entity,
}

/// Ropes (one with `Substeps(3)`), a rod pendulum that hits the ground, a
/// damped rope that settles and sleeps, and a sleeping body.
fn scene(app: &mut App) -> Scene {
    let world = app.world_mut();
    world.spawn(GroundPlane::horizontal(-3.0).with_restitution(0.3));
    let mut settling = Vec::new();
    for r in 0..3 {
        let x = r as f32 * 2.0;
        let mut prev = world.spawn(Body::fixed(Vec3::new(x, 0.0, 0.0))).id();
        for s in 1..=8 {
            let mut e = world.spawn((
                Body::new(0.5).with_position(Vec3::new(x + 0.05 * s as f32, -0.3 * s as f32, 0.0)),
                Radius(0.05),
            ));
            if r == 1 && s == 1 {
                e.insert(Substeps(3));
            }
            if r == 2 {
                e.insert(Damping(4.0));
            }
            let e = e.id();
            world.spawn(Spring::new(prev, e, 0.3, 300.0).with_damping(0.5));
            if r == 2 {
                settling.push(e);
            }
            prev = e;
        }
    }
    let pivot = world.spawn(Body::fixed(Vec3::new(-3.0, 0.0, 0.0))).id();
    let bob = world
        .spawn((
            Body::new(1.0).with_position(Vec3::new(-0.5, 0.0, 0.0)),
            Radius(0.2),
        ))
        .id();
    world.spawn(DistanceConstraint::new(pivot, bob, 3.0));
    let sleeper = world
        .spawn(Body::new(1.0).with_position(Vec3::new(10.0, 5.0, 0.0)))
        .id();
    Scene { settling, sleeper }
}

fn bits(app: &mut App) -> Vec<(Entity, [u32; 6], bool)> {
    let world = app.world_mut();
    let mut q = world.query::<(Entity, &Body, Has<Sleeping>)>();
    let mut all: Vec<_> = q
        .iter(world)
        .map(|(e, b, s)| {
            let [x, y, z] = b.position.to_array().map(f32::to_bits);
            let [u, v, w] = b.velocity.to_array().map(f32::to_bits);
            (e, [x, y, z, u, v, w], s)
        })
        .collect();
    all.sort_by_key(|(e, ..)| *e);
    all
}

#[test]
fn restoring_and_stepping_on_repeats_the_same_bits() {
    let mut app = app();
    let scene = scene(&mut app);
    app.world_mut()
        .commands()
        .entity(scene.sleeper)
        .sleep_island();
    step(&mut app, 40);
    assert!(app.world().get::<Sleeping>(scene.sleeper).is_some());
    assert!(app.world().get::<Sleeping>(scene.settling[0]).is_none());
    let saved = PhysicsSnapshot::save(app.world_mut());
    let saved_sum = saved.checksum();
    assert_eq!(physics_checksum(app.world_mut()), saved_sum);

    // On from the save: the damped rope falls asleep on the way, and the
    // sleeper is woken.
    let mut first = Vec::new();
    for n in 0..120 {
        if n == 60 {
            body_mut(&mut app, scene.sleeper).velocity = Vec3::X;
        }
        step(&mut app, 1);
        first.push(physics_checksum(app.world_mut()));
    }
    let end = bits(&mut app);
    assert!(
        app.world().get::<Sleeping>(scene.settling[0]).is_some(),
        "the damped rope fell asleep after the save"
    );
    assert!(app.world().get::<Sleeping>(scene.sleeper).is_none());

    // Back to the save, and on again the same way.
    let report = saved.restore(app.world_mut());
    assert_eq!(report.restored, saved.bodies().len());
    assert_eq!(report.missing, 0);
    assert_eq!(physics_checksum(app.world_mut()), saved_sum);
    assert!(app.world().get::<Sleeping>(scene.sleeper).is_some());
    assert!(app.world().get::<Sleeping>(scene.settling[0]).is_none());
    for (n, expected) in first.iter().enumerate() {
        if n == 60 {
            body_mut(&mut app, scene.sleeper).velocity = Vec3::X;
        }
        step(&mut app, 1);
        assert_eq!(
            physics_checksum(app.world_mut()),
            *expected,
            "step {n} after the restore"
        );
    }
    assert_eq!(bits(&mut app), end);
}

#[test]
fn the_checksum_sees_one_bit_and_restore_counts_missing_bodies() {
    let mut app = app();
    let scene = scene(&mut app);
    step(&mut app, 5);
    let saved = PhysicsSnapshot::save(app.world_mut());
    let a = saved.checksum();
    let mut moved = body_mut(&mut app, scene.settling[3]);
    moved.position.x = f32::from_bits(moved.position.x.to_bits() ^ 1);
    assert_ne!(physics_checksum(app.world_mut()), a);
    app.world_mut().despawn(scene.sleeper);
    let report = saved.restore(app.world_mut());
    assert_eq!(report.missing, 1);
    assert_eq!(report.restored, saved.bodies().len() - 1);
    // The restored bodies are as saved.
    let state = saved
        .bodies()
        .iter()
        .find(|s| s.entity == scene.settling[3])
        .unwrap();
    assert_eq!(body(&app, scene.settling[3]), state.body);
}

/// An island asleep when saved and still asleep when restored stays asleep:
/// the restore's own writes are not a touch.
#[test]
fn restoring_keeps_islands_asleep_that_slept_throughout() {
    let mut app = app();
    let scene = scene(&mut app);
    app.world_mut()
        .commands()
        .entity(scene.sleeper)
        .sleep_island();
    step(&mut app, 10);
    assert!(app.world().get::<Sleeping>(scene.sleeper).is_some());
    let saved = PhysicsSnapshot::save(app.world_mut());
    step(&mut app, 30);
    let mut first = Vec::new();
    for _ in 0..30 {
        step(&mut app, 1);
        first.push(physics_checksum(app.world_mut()));
    }
    saved.restore(app.world_mut());
    step(&mut app, 30);
    for (n, expected) in first.iter().enumerate() {
        step(&mut app, 1);
        assert_eq!(physics_checksum(app.world_mut()), *expected, "step {n}");
    }
    assert!(app.world().get::<Sleeping>(scene.sleeper).is_some());
    let woke = app
        .world()
        .resource::<Messages<IslandWoke>>()
        .iter_current_update_messages()
        .count();
    assert_eq!(woke, 0);
}

/// A pile of 1 600 balls, packed so that its pairs (about 4 700) are cut
/// into blocks that threads may solve at once, onto which a chain with a
/// distance limit and an angle limit falls: restored from a save taken while
/// the pile settles and the chain falls, the run repeats bit for bit,
/// contacts, limits and wakes included (the pairs, their blocks and the
/// warm impulses follow the bodies, not the slots a rebuild gives them).
#[test]
fn a_pile_and_limits_restored_mid_fall_repeat_the_same_bits() {
    const R: f32 = 0.05;
    let mut app = app();
    let world = app.world_mut();
    world.spawn(GroundPlane::horizontal(0.0));
    world.spawn(GroundPlane::new(Vec3::X, -2.06));
    world.spawn(GroundPlane::new(Vec3::NEG_X, -2.06));
    // Rows offset by a radius, each touching its six neighbours.
    let mut balls = Vec::new();
    for i in 0..1600 {
        let (row, col) = (i / 40, i % 40);
        let x = -2.0 + col as f32 * 2.0 * R + if row % 2 == 1 { R } else { 0.0 };
        let y = R + row as f32 * 3f32.sqrt() * R;
        balls.push(
            world
                .spawn((
                    Body::new(1.0).with_position(Vec3::new(x, y, 0.0)),
                    Radius(R),
                    ContactMaterial::new(0.2, 0.5),
                ))
                .id(),
        );
    }
    let links: Vec<Entity> = (0..4)
        .map(|k| {
            world
                .spawn((
                    Body::new(0.5).with_position(Vec3::new(-0.3 + 0.2 * k as f32, 4.6, 0.0)),
                    Radius(0.06),
                ))
                .id()
        })
        .collect();
    world.spawn(DistanceConstraint::new(links[0], links[1], 0.2));
    world.spawn(DistanceLimit::new(links[1], links[2], 0.1, 0.25));
    world.spawn(DistanceConstraint::new(links[2], links[3], 0.2));
    world.spawn(AngleLimit::new(links[0], links[1], links[2], -2.8, 2.8));
    step(&mut app, 20);
    let saved = PhysicsSnapshot::save(app.world_mut());
    let mut first = Vec::new();
    for _ in 0..60 {
        step(&mut app, 1);
        first.push(physics_checksum(app.world_mut()));
    }
    let end = bits(&mut app);
    // The chain came down onto the balls within the run.
    let top = balls
        .iter()
        .map(|&e| body(&app, e).position.y)
        .fold(f32::NEG_INFINITY, f32::max);
    let lowest = links
        .iter()
        .map(|&e| body(&app, e).position.y)
        .fold(f32::INFINITY, f32::min);
    assert!(
        lowest < top + 0.3,
        "the chain at {lowest}, the pile's top at {top}"
    );

    // Other slots: what was spawned later takes slots before the pile's
    // after the restore's rebuild.
    let extra = spawn(
        &mut app,
        Body::new(1.0).with_position(Vec3::new(50.0, 0.0, 0.0)),
    );
    saved.restore(app.world_mut());
    app.world_mut().despawn(extra);
    for (n, expected) in first.iter().enumerate() {
        step(&mut app, 1);
        assert_eq!(physics_checksum(app.world_mut()), *expected, "step {n}");
    }
    assert_eq!(bits(&mut app), end);
}

/// A ball falls asleep on the ground beside a platform that moves every
/// step, its sweep within the ball's reach: the next step wakes it, in the
/// run and in a run restored from the step it fell asleep in (the sleepers
/// an obstacle wakes are read from the state, not from the solver's list
/// of the last rebuild, which lacked the ball in the run and held the
/// left state's in the restored one).
#[test]
fn a_moving_obstacle_wakes_a_ball_just_asleep_in_a_restored_run_too() {
    let mut app = app();
    app.insert_resource(SleepSettings {
        time_to_sleep: 0.2,
        ..default()
    });
    spawn(&mut app, GroundPlane::horizontal(0.0));
    let ball = spawn(
        &mut app,
        (
            Body::new(1.0).with_position(Vec3::new(0.0, 0.1, 0.0)),
            Radius(0.1),
        ),
    );
    let platform = spawn(
        &mut app,
        (
            Obstacle::from(Cuboid::new(1.0, 0.1, 1.0)),
            Transform::from_xyz(0.605, 0.15, 0.0),
        ),
    );
    let asleep = |app: &App| app.world().get::<Sleeping>(ball).is_some();
    let nudge = |app: &mut App| {
        let mut t = app.world_mut().get_mut::<Transform>(platform).unwrap();
        t.translation.y += 1e-3;
    };
    let mut steps = 0;
    while !asleep(&app) {
        nudge(&mut app);
        step(&mut app, 1);
        steps += 1;
        assert!(steps < 200, "the ball never fell asleep");
    }
    let saved = PhysicsSnapshot::save(app.world_mut());
    let after = |app: &mut App| {
        let mut states = Vec::new();
        for _ in 0..3 {
            nudge(app);
            step(app, 1);
            states.push(asleep(app));
        }
        states
    };
    let first = after(&mut app);
    assert!(!first[0], "the moving platform woke the ball at once");
    saved.restore(app.world_mut());
    app.world_mut()
        .get_mut::<Transform>(platform)
        .unwrap()
        .translation
        .y -= 3e-3;
    assert_eq!(after(&mut app), first);
}

//! The physics under bevy_ggrs: GGRS's own determinism check (a SyncTest
//! session re-simulates the last frames every frame and compares checksums)
//! over a scene with a rope, a rod-jointed ragdoll (with angle limits at the
//! hips and a shoulder) on the ground, two more
//! falling onto each other and onto a sleeping ball (contacts between
//! bodies), sleeping islands and substeps, driven by scripted inputs (a
//! push and a drag).

#![cfg(feature = "ggrs")]

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use bevy::platform::collections::HashMap;
use bevy::prelude::*;
use bevy::time::TimeUpdateStrategy;
use bevy_euler_physics::prelude::*;
use bevy_euler_physics::rollback::EulerPhysicsRollbackPlugin;
use bevy_ggrs::prelude::*;
use bevy_ggrs::{LocalInputs, LocalPlayers, RollbackFrameCount};

type Config = GgrsConfig<u8, usize>;

/// Bit 0: push the rope's end. Bit 1: drag the hand anchor right; bit 2:
/// left.
const PUSH: u8 = 1;
const RIGHT: u8 = 2;
const LEFT: u8 = 4;

/// The scripted input of frame `n`.
fn script(n: u32) -> u8 {
    let mut input = 0;
    if (100..160).contains(&n) || (600..620).contains(&n) {
        input |= PUSH;
    }
    if (200..260).contains(&n) {
        input |= RIGHT;
    }
    if (300..330).contains(&n) || (900..940).contains(&n) {
        input |= LEFT;
    }
    input
}

fn read_inputs(mut commands: Commands, players: Res<LocalPlayers>, mut frame: Local<u32>) {
    let mut inputs = HashMap::new();
    for &handle in &players.0 {
        inputs.insert(handle, script(*frame));
    }
    *frame += 1;
    commands.insert_resource(LocalInputs::<Config>(inputs));
}

#[derive(Component, Clone, Copy)]
struct RopeEnd;

#[derive(Component, Clone, Copy)]
struct Hand;

/// Turns inputs into physics: a constant force on the rope's end, a moving
/// fixed body the ragdoll's head hangs from by a spring.
fn apply_inputs(
    inputs: Res<PlayerInputs<Config>>,
    mut ends: Query<&mut ConstantForce, With<RopeEnd>>,
    mut hands: Query<&mut Body, With<Hand>>,
) {
    let input = inputs[0].0;
    for mut force in &mut ends {
        let push = if input & PUSH != 0 {
            Vec3::new(6.0, 0.0, 0.0)
        } else {
            Vec3::ZERO
        };
        if force.0 != push {
            force.0 = push;
        }
    }
    for mut hand in &mut hands {
        if input & RIGHT != 0 {
            hand.position.x += 0.02;
        }
        if input & LEFT != 0 {
            hand.position.x -= 0.02;
        }
    }
}

fn scene(mut commands: Commands) {
    commands.spawn((
        GroundPlane::horizontal(-2.0).with_restitution(0.1),
        Rollback,
    ));
    // A rope with 3 substeps.
    let mut prev = commands.spawn((Body::fixed(Vec3::ZERO), Rollback)).id();
    for i in 1..=10 {
        let mut e = commands.spawn((
            Body::new(0.3).with_position(Vec3::new(0.1 * i as f32, -0.1 * i as f32, 0.0)),
            Damping(0.2),
            ConstantForce(Vec3::ZERO),
            Substeps(3),
            Rollback,
        ));
        if i == 10 {
            e.insert(RopeEnd);
        }
        let e = e.id();
        commands.spawn((
            Spring::new(prev, e, 0.12, 800.0).with_damping(0.3),
            Rollback,
        ));
        prev = e;
    }
    // A small ragdoll of rods, hanging from a dragged hand by a spring,
    // its feet on the ground.
    let hand = commands
        .spawn((Body::fixed(Vec3::new(3.0, 0.0, 0.0)), Hand, Rollback))
        .id();
    let parts = ragdoll(&mut commands, Vec3::new(3.0, 0.0, 0.0));
    commands.spawn((
        Spring::new(hand, parts[0], 0.5, 200.0).with_damping(2.0),
        Rollback,
    ));
    // Two free ragdolls dropped across each other onto the ground: their
    // bodies touch each other, the ground and the ball below.
    ragdoll(&mut commands, Vec3::new(-3.0, 4.0, 0.0));
    ragdoll(&mut commands, Vec3::new(-2.9, 5.2, 0.0));
    // A ball resting on the ground: it falls asleep early and stays so
    // until the ragdolls land on it.
    commands.spawn((
        Body::new(1.0).with_position(Vec3::new(-3.0, -1.95, 0.0)),
        Radius(0.05),
        Rollback,
    ));
}

/// A small ragdoll of rods, its head at `head`; its parts, head first.
fn ragdoll(commands: &mut Commands, head: Vec3) -> Vec<Entity> {
    let points = [
        Vec3::new(0.0, -0.5, 0.0),  // head
        Vec3::new(0.0, -0.9, 0.0),  // chest
        Vec3::new(0.0, -1.4, 0.0),  // hips
        Vec3::new(-0.2, -1.9, 0.0), // left foot
        Vec3::new(0.2, -1.9, 0.0),  // right foot
        Vec3::new(-0.4, -1.0, 0.0), // left hand
        Vec3::new(0.4, -1.0, 0.0),  // right hand
    ]
    .map(|p| p + head);
    let parts: Vec<Entity> = points
        .iter()
        .map(|&p| {
            commands
                .spawn((
                    Body::new(1.0).with_position(p),
                    Radius(0.1),
                    Damping(0.1),
                    Rollback,
                ))
                .id()
        })
        .collect();
    for (a, b) in [
        (0, 1),
        (1, 2),
        (2, 3),
        (2, 4),
        (1, 5),
        (1, 6),
        (3, 4),
        (5, 2),
        (6, 2),
    ] {
        let length = points[a].distance(points[b]);
        commands.spawn((
            DistanceConstraint::new(parts[a], parts[b], length),
            Rollback,
        ));
    }
    // Hips that bend one way and a shoulder (the spawn pose is inside
    // each).
    for (a, pivot, b, min, max) in [
        (1, 2, 3, 2.3, 3.1),
        (1, 2, 4, -3.1, -2.3),
        (0, 1, 5, 1.0, 2.6),
    ] {
        commands.spawn((
            AngleLimit::new(parts[a], parts[pivot], parts[b], min, max),
            Rollback,
        ));
    }
    parts
}

/// A SyncTest session app (one player, check distance 7, 60 Hz, the
/// scripted inputs) with the physics under rollback, setting `flag` on a
/// mismatch; no scene.
fn session_app(flag: &'static AtomicBool) -> App {
    let session = SessionBuilder::<Config>::new()
        .with_num_players(1)
        .unwrap()
        .with_check_distance(7)
        .add_player(PlayerType::Local, 0)
        .unwrap()
        .start_synctest_session()
        .unwrap();
    let mut app = App::new();
    app.add_plugins((MinimalPlugins, GgrsPlugin::<Config>::default()))
        .add_plugins((EulerPhysicsPlugin, EulerPhysicsRollbackPlugin))
        .insert_resource(Time::<Fixed>::from_hz(60.0))
        .insert_resource(TimeUpdateStrategy::ManualDuration(Duration::from_secs_f64(
            1.0 / 60.0,
        )))
        .insert_resource(Session::SyncTest(session))
        .add_systems(ReadInputs, read_inputs);
    app.world_mut()
        .add_observer(move |_: On<SyncTestMismatch>| {
            flag.store(true, Ordering::SeqCst);
        });
    app
}

/// The SyncTest app over [`scene`], setting `flag` on a mismatch.
fn synctest_app(flag: &'static AtomicBool) -> App {
    let mut app = session_app(flag);
    app.rollback_component_with_copy::<ConstantForce>()
        .add_systems(Startup, scene)
        .add_systems(GgrsSchedule, apply_inputs.in_set(PhysicsSystems::Prepare));
    app
}

static MISMATCH: AtomicBool = AtomicBool::new(false);

#[test]
fn synctest_1000_frames_at_check_distance_7_has_no_mismatch() {
    let mut app = synctest_app(&MISMATCH);
    let mut slept = false;
    let mut hand_moved = false;
    let mut touched = false;
    let start = Vec3::new(3.0, 0.0, 0.0);
    for _ in 0..1000 {
        app.update();
        let world = app.world_mut();
        slept |= world.query::<&Sleeping>().iter(world).next().is_some();
        touched |= world
            .resource::<Messages<IslandWoke>>()
            .iter_current_update_messages()
            .any(|woke| matches!(woke.cause, WakeCause::Touched(_)));
        hand_moved |= world
            .query_filtered::<&Body, With<Hand>>()
            .iter(world)
            .any(|b| b.position != start);
    }
    assert!(
        !MISMATCH.load(Ordering::SeqCst),
        "SyncTest found a mismatch"
    );
    let frames = app.world().resource::<RollbackFrameCount>().0;
    assert!(frames >= 999, "{frames} frames ran");
    // The run did what the scene is for: islands slept, the drag moved the
    // hand, and everything stayed finite.
    assert!(slept, "an island fell asleep during the run");
    assert!(hand_moved);
    assert!(touched, "a body touched a sleeping island and woke it");
    let world = app.world_mut();
    assert!(
        world
            .query::<&Body>()
            .iter(world)
            .all(|b| b.position.is_finite() && b.velocity.is_finite())
    );
}

static NOTICED: AtomicBool = AtomicBool::new(false);
static CALLS: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);

/// A force from outside the rollback state (a global counter): each
/// re-simulation differs, which the checksums must catch.
fn leak(mut ends: Query<&mut Body, With<RopeEnd>>) {
    let calls = CALLS.fetch_add(1, Ordering::SeqCst);
    for mut body in &mut ends {
        // Re-simulations of a frame are 7 runs apart here (the check
        // distance): a modulus of 5 makes each differ.
        body.velocity.x += 1e-3 * (calls % 5) as f32;
    }
}

/// The negative control: the same check does catch a non-deterministic step.
#[test]
fn synctest_catches_a_step_that_is_not_deterministic() {
    let mut app = synctest_app(&NOTICED);
    app.add_systems(GgrsSchedule, leak.in_set(PhysicsSystems::Finish));
    for _ in 0..60 {
        app.update();
    }
    assert!(
        NOTICED.load(Ordering::SeqCst),
        "the mismatch went unnoticed"
    );
}

/// A probe flying through cells of 8 m carries the floating origin, a ball
/// rests on the ground and a spring pair tumbles: every shift moves the
/// origin, the plane and the bodies, and re-simulated frames must shift
/// the same (the origin and the planes are rolled back).
fn flight(mut commands: Commands) {
    commands.insert_resource(PhysicsOrigin::default().with_cell(8.0));
    commands.spawn((GroundPlane::horizontal(-1.0), Rollback));
    commands.spawn((
        Body::new(1.0).with_position(Vec3::new(0.0, -0.5, 0.0)),
        Radius(0.5),
        Rollback,
    ));
    commands.spawn((
        Body::new(1.0)
            .with_position(Vec3::new(0.0, 3.0, 0.0))
            .with_velocity(Vec3::new(12.0, 6.0, -5.0)),
        FloatingOrigin,
        Rollback,
    ));
    let a = commands
        .spawn((
            Body::new(1.0)
                .with_position(Vec3::new(2.0, 1.0, 0.0))
                .with_velocity(Vec3::new(3.0, 2.0, 0.0)),
            Rollback,
        ))
        .id();
    let b = commands
        .spawn((
            Body::new(1.0).with_position(Vec3::new(2.5, 1.0, 0.0)),
            Rollback,
        ))
        .id();
    commands.spawn((Spring::new(a, b, 0.4, 100.0), Rollback));
}

static SHIFT_MISMATCH: AtomicBool = AtomicBool::new(false);

#[test]
fn synctest_with_origin_shifts_has_no_mismatch() {
    let mut app = synctest_app(&SHIFT_MISMATCH);
    app.add_systems(Startup, flight);
    for _ in 0..300 {
        app.update();
    }
    assert!(
        !SHIFT_MISMATCH.load(Ordering::SeqCst),
        "SyncTest found a mismatch"
    );
    let origin = app.world().resource::<PhysicsOrigin>().position;
    // 12 m/s for 5 s, in cells of 8 m.
    assert!(origin.x >= 48.0, "the origin moved: {origin}");
}

/// Moves the pins' target each frame, faster while the input pushes.
fn move_target(inputs: Res<PlayerInputs<Config>>, mut targets: Query<&mut Transform, With<Hand>>) {
    let input = inputs[0].0;
    for mut target in &mut targets {
        target.translation.x += if input & PUSH != 0 { 0.05 } else { 0.01 };
    }
}

/// The second target the pin moves to, from frame [`RETARGET`] on.
#[derive(Component, Clone, Copy)]
struct Second;

const RETARGET: i32 = 150;

/// From frame [`RETARGET`] on, the pin follows the second target (a
/// placement at another target: a teleport).
fn retarget(
    frame: Res<RollbackFrameCount>,
    second: Query<Entity, With<Second>>,
    mut pins: Query<&mut PinnedTo>,
) {
    let Ok(second) = second.single() else {
        return;
    };
    if frame.0 >= RETARGET {
        for mut pin in &mut pins {
            if pin.target != second {
                pin.target = second;
            }
        }
    }
}

/// A pendulum under a fixed body pinned to a moving target (spawned away
/// from it, so its first placement is a teleport), moved to a second
/// target at frame [`RETARGET`].
fn pinned_scene(mut commands: Commands) {
    commands.spawn((Transform::from_xyz(2.0, 2.0, 0.0), Hand, Second, Rollback));
    let target = commands
        .spawn((Transform::from_xyz(0.0, 2.0, 0.0), Hand, Rollback))
        .id();
    let pin = commands
        .spawn((
            Body::fixed(Vec3::ZERO),
            PinnedTo::new(target).with_offset(Vec3::new(0.0, -0.2, 0.0)),
            Rollback,
        ))
        .id();
    let bob = commands
        .spawn((
            Body::new(1.0).with_position(Vec3::new(0.5, 1.0, 0.0)),
            Rollback,
        ))
        .id();
    commands.spawn((Spring::new(pin, bob, 1.0, 50.0).with_damping(0.5), Rollback));
}

static PIN_MISMATCH: AtomicBool = AtomicBool::new(false);

/// Pins under GGRS: the pin's first placement, its motion with the target,
/// its move to another target and the pendulum under it re-simulate to
/// the same checksums (the targets' `Transform` and the `PinnedTo`
/// registered for rollback by the game, the pin's state by the plugin).
#[test]
fn synctest_with_a_pinned_pendulum_has_no_mismatch() {
    let mut app = session_app(&PIN_MISMATCH);
    app.rollback_component_with_copy::<Transform>()
        .rollback_component_with_copy::<PinnedTo>()
        .add_systems(Startup, pinned_scene)
        .add_systems(
            GgrsSchedule,
            (move_target, retarget)
                .chain()
                .in_set(PhysicsSystems::Prepare),
        );
    let mut fastest: f32 = 0.0;
    let mut followed_second = false;
    for _ in 0..300 {
        app.update();
        let world = app.world_mut();
        let second = world
            .query_filtered::<Entity, With<Second>>()
            .single(world)
            .unwrap();
        for (body, placed) in world.query::<(&Body, &PinPlaced)>().iter(world) {
            fastest = fastest.max(body.velocity.x);
            followed_second |= placed.target() == Some(second) && body.velocity.x > 0.0;
        }
    }
    assert!(
        followed_second,
        "the pin moved to the second target and on with it"
    );
    assert!(
        !PIN_MISMATCH.load(Ordering::SeqCst),
        "SyncTest found a mismatch"
    );
    // Pushed from frame 100 on: 0.05 m a frame at 60 Hz.
    assert!(
        (fastest - 3.0).abs() < 1e-3,
        "the pin moved with its target: {fastest} m/s"
    );
}

/// A cloth pinned along its top edge to its own entity, which the inputs
/// move (the pins follow its transform), and a pressed ball falling onto
/// the ground: the soft meshes' bodies, springs and pressure re-simulate
/// to the same checksums.
fn soft_scene(mut commands: Commands, mut meshes: ResMut<Assets<Mesh>>) {
    let cloth = meshes.add(
        Plane3d::new(Vec3::Z, Vec2::splat(0.5))
            .mesh()
            .subdivisions(6)
            .build(),
    );
    commands.spawn((
        Mesh3d(cloth),
        Transform::from_xyz(0.0, 2.0, 0.0),
        Hand,
        SoftMesh::default().pin(PinSelect::Where(PinTest(|p| p.y > 0.49))),
        Rollback,
    ));
    commands.spawn((GroundPlane::horizontal(0.0), Rollback));
    let ball = meshes.add(Sphere::new(0.2).mesh().ico(1).unwrap());
    commands.spawn((
        Mesh3d(ball),
        Transform::from_xyz(1.5, 0.6, 0.0),
        SoftMesh::default().with_pressure(1000.0).with_radius(0.02),
        Rollback,
    ));
}

static SOFT_MISMATCH: AtomicBool = AtomicBool::new(false);

#[test]
fn synctest_with_soft_meshes_has_no_mismatch() {
    let mut app = session_app(&SOFT_MISMATCH);
    app.add_plugins((
        AssetPlugin::default(),
        bevy::mesh::MeshPlugin,
        TransformPlugin,
    ))
    .rollback_component_with_copy::<Transform>()
    .add_systems(Startup, soft_scene)
    .add_systems(GgrsSchedule, move_target.in_set(PhysicsSystems::Prepare));
    app.update();
    let world = app.world_mut();
    let mut parts: Vec<(bool, SoftMeshParts)> = world
        .query::<(Has<Hand>, &SoftMeshParts)>()
        .iter(world)
        .map(|(cloth, parts)| (cloth, parts.clone()))
        .collect();
    parts.sort_by_key(|(cloth, _)| !cloth);
    let parts: Vec<SoftMeshParts> = parts.into_iter().map(|(_, parts)| parts).collect();
    assert_eq!(parts.len(), 2);
    let mut marked = world.query_filtered::<(), (With<PartOfSoftMesh>, With<Rollback>)>();
    let all: usize = parts.iter().map(|p| p.bodies.len() + p.springs.len()).sum();
    assert_eq!(marked.iter(world).count(), all, "every part has Rollback");
    let start: Vec<Body> = parts[0]
        .bodies
        .iter()
        .map(|&b| *world.get::<Body>(b).unwrap())
        .collect();
    for _ in 0..200 {
        app.update();
    }
    assert!(
        !SOFT_MISMATCH.load(Ordering::SeqCst),
        "SyncTest found a mismatch"
    );
    let world = app.world_mut();
    // The cloth went with its entity (0.01 m a frame at least).
    let moved = parts[0]
        .bodies
        .iter()
        .zip(&start)
        .all(|(&b, start)| world.get::<Body>(b).unwrap().position.x > start.position.x + 0.5);
    assert!(moved, "the cloth moved with its entity");
}

/// An obstacle the inputs move.
#[derive(Component, Clone, Copy)]
struct Platform;

/// Moves each platform right and up a little each frame, faster while the
/// input pushes, and turns it.
fn move_platforms(
    inputs: Res<PlayerInputs<Config>>,
    mut platforms: Query<&mut Transform, With<Platform>>,
) {
    let input = inputs[0].0;
    for mut platform in &mut platforms {
        let v = if input & PUSH != 0 { 0.03 } else { 0.01 };
        platform.translation += Vec3::new(v, 0.2 * v, 0.0);
        platform.rotate_y(0.01);
    }
}

/// Balls resting on a turning, moving platform and on a static ramp.
fn obstacle_scene(mut commands: Commands) {
    commands.spawn((
        Obstacle::from(Cuboid::new(3.0, 0.2, 3.0)),
        Transform::default(),
        Platform,
        Rollback,
    ));
    commands.spawn((
        Obstacle::from(Cuboid::new(3.0, 0.2, 3.0)),
        Transform::from_xyz(-3.0, -1.0, 0.0).with_rotation(Quat::from_rotation_z(0.4)),
        Rollback,
    ));
    commands.spawn((
        Obstacle::from(HalfSpace::new(Vec3::NEG_Y.extend(-3.0))),
        Rollback,
    ));
    for i in 0..30 {
        let at = Vec3::new((i % 6) as f32 * 0.3 - 2.5, 0.5 + (i / 6) as f32 * 0.3, 0.0);
        commands.spawn((Body::new(1.0).with_position(at), Radius(0.12), Rollback));
    }
}

static OBSTACLE_MISMATCH: AtomicBool = AtomicBool::new(false);

/// Obstacles under GGRS: balls carried by a platform the inputs move and
/// turn (its `Transform` registered by the game, where each obstacle was
/// left by the plugin) re-simulate to the same checksums.
#[test]
fn synctest_with_moving_obstacles_has_no_mismatch() {
    let mut app = session_app(&OBSTACLE_MISMATCH);
    app.rollback_component_with_copy::<Transform>()
        .add_systems(Startup, obstacle_scene)
        .add_systems(GgrsSchedule, move_platforms.in_set(PhysicsSystems::Prepare));
    let mut carried: f32 = 0.0;
    for _ in 0..300 {
        app.update();
        let world = app.world_mut();
        for body in world.query::<&Body>().iter(world) {
            carried = carried.max(body.position.x);
        }
    }
    assert!(
        !OBSTACLE_MISMATCH.load(Ordering::SeqCst),
        "SyncTest found a mismatch"
    );
    assert!(carried > 2.0, "the platform carried balls along: {carried}");
}

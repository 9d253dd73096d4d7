//! avian3d's rigid bodies and this plugin's bodies acting on each other,
//! both ways, through the avian bridge (`bridges/avian3d`).
//!
//! `cargo run --release --example crane`
//!
//! - A crane's arm (an avian kinematic body) swings a rope of this
//!   plugin's bodies, tied at its other end to an avian crate
//!   (`RopeEnd::Tied`): the rope lifts the crate, and the crate pulls the
//!   rope taut and swings it.
//! - A net of this plugin's bodies, its border fixed, catches avian boxes
//!   dropped on it: the boxes sink in and are held.
//! - Balls of this plugin roll down an avian ramp into a row of light avian
//!   boxes and push them along the floor.
//!
//! Keys: R drops the boxes and balls again, F1 hides the physics panel.

mod support;

use avian3d::prelude::{Collider, LinearVelocity, Mass, PhysicsPlugins, Position, RigidBody};
use bevy::core_pipeline::tonemapping::Tonemapping;
use bevy::prelude::*;
use bevy_euler_physics::prelude::*;
use bevy_euler_physics_avian3d::AvianBridgePlugin;
use support::parts::example_app;

/// The crane arm's height, and how far and how fast it swings along X.
const ARM: Vec3 = Vec3::new(4.0, 4.2, -1.0);
const SWING: f32 = 1.0;
const SWING_RATE: f32 = 0.8;
/// The rope's length.
const ROPE: f32 = 2.0;
/// The net's height and its centre.
const NET: Vec3 = Vec3::new(1.4, 1.4, 0.6);
const BALLS: usize = 30;
const BALL_RADIUS: f32 = 0.1;

#[derive(Component)]
struct Arm;

#[derive(Component)]
struct Crate;

/// A box dropped on the net.
#[derive(Component)]
struct NetBox;

/// A box the balls push, with where it started.
#[derive(Component)]
struct Pushed(Vec3);

/// What `R` drops again.
#[derive(Component)]
struct Dropped;

/// The meshes and materials things are drawn with.
#[derive(Resource)]
struct Looks {
    ball: Handle<Mesh>,
    red: Handle<StandardMaterial>,
    small_box: Handle<Mesh>,
    wood: Handle<StandardMaterial>,
}

fn main() {
    example_app("crane")
        .add_plugins((PhysicsPlugins::default(), AvianBridgePlugin))
        .insert_resource(ClearColor(Color::srgb(0.55, 0.62, 0.72)))
        .add_systems(Startup, setup)
        .add_systems(FixedUpdate, swing_arm.in_set(PhysicsSystems::Prepare))
        .add_systems(Update, (controls, report))
        .run();
}

fn setup(
    mut commands: Commands,
    mut meshes: ResMut<Assets<Mesh>>,
    mut materials: ResMut<Assets<StandardMaterial>>,
) {
    commands.spawn((
        Camera3d::default(),
        Tonemapping::None,
        Transform::from_xyz(3.0, 3.4, 9.5).looking_at(Vec3::new(3.0, 1.5, 0.0), Vec3::Y),
    ));
    support::daylight(&mut commands, 500.0);
    let stone = materials.add(Color::srgb(0.55, 0.55, 0.5));
    let steel = materials.add(Color::srgb(0.3, 0.35, 0.45));
    let looks = Looks {
        ball: meshes.add(Sphere::new(BALL_RADIUS)),
        red: materials.add(Color::srgb(0.85, 0.2, 0.15)),
        small_box: meshes.add(Cuboid::new(0.3, 0.3, 0.3)),
        wood: materials.add(Color::srgb(0.75, 0.55, 0.3)),
    };
    // avian's floor and ramp.
    let mut solid = |size: Vec3, at: Transform| {
        (
            RigidBody::Static,
            Collider::cuboid(size.x, size.y, size.z),
            Mesh3d(meshes.add(Cuboid::from_size(size))),
            MeshMaterial3d(stone.clone()),
            at,
        )
    };
    commands.spawn(solid(
        Vec3::new(14.0, 0.2, 6.0),
        Transform::from_xyz(3.0, -0.1, 0.0),
    ));
    commands.spawn(solid(
        Vec3::new(3.0, 0.15, 1.2),
        Transform::from_xyz(7.6, 1.0, 0.8).with_rotation(Quat::from_rotation_z(0.6)),
    ));
    // The crane's arm, kinematic, and the crate on its rope.
    let arm = commands
        .spawn((
            RigidBody::Kinematic,
            Collider::cuboid(0.8, 0.2, 0.2),
            Mesh3d(meshes.add(Cuboid::new(0.8, 0.2, 0.2))),
            MeshMaterial3d(steel.clone()),
            Transform::from_translation(ARM),
            Arm,
        ))
        .id();
    let crate_ = commands
        .spawn((
            RigidBody::Dynamic,
            Collider::cuboid(0.6, 0.6, 0.6),
            Mass(1.5),
            Mesh3d(meshes.add(Cuboid::new(0.6, 0.6, 0.6))),
            MeshMaterial3d(looks.wood.clone()),
            Transform::from_translation(ARM - Vec3::Y * (ROPE + 0.4)),
            Crate,
        ))
        .id();
    commands.spawn((
        Rope::new(
            RopeEnd::Pinned(arm, Vec3::new(0.0, -0.1, 0.0)),
            RopeEnd::Tied(crate_, Vec3::new(0.0, 0.3, 0.0)),
        )
        .with_segments(20)
        .with_length(ROPE),
        RopeMesh::tube(0.03),
        MeshMaterial3d(materials.add(Color::srgb(0.85, 0.75, 0.45))),
    ));
    // A net of 13 × 13 knots 0.15 m apart, its border fixed.
    let net = support::Net {
        corner: NET - Vec3::new(6.0, 0.0, 6.0) * 0.15,
        n: 13,
        spacing: 0.15,
        mass: 0.05,
        radius: 0.05,
        drag: 1.0,
        stiffness: 60.0,
        border: true,
    };
    net.spawn(&mut commands, &mut meshes, &mut materials);
    // A row of light boxes at the ramp's foot.
    for i in 0..4 {
        let at = Vec3::new(5.9 - 0.32 * i as f32, 0.15, 0.8);
        commands.spawn((
            RigidBody::Dynamic,
            Collider::cuboid(0.3, 0.3, 0.3),
            Mass(0.3),
            Mesh3d(looks.small_box.clone()),
            MeshMaterial3d(looks.wood.clone()),
            Transform::from_translation(at),
            Pushed(at),
        ));
    }
    drop_things(&mut commands, &looks);
    commands.insert_resource(looks);
    commands.spawn(support::readout(Color::BLACK));
}

/// Three boxes above the net, and the balls above the ramp.
fn drop_things(commands: &mut Commands, looks: &Looks) {
    for (i, dx) in [-0.3f32, 0.25, 0.0].into_iter().enumerate() {
        commands.spawn((
            RigidBody::Dynamic,
            Collider::cuboid(0.3, 0.3, 0.3),
            Mass(0.5),
            Mesh3d(looks.small_box.clone()),
            MeshMaterial3d(looks.wood.clone()),
            Transform::from_translation(NET + Vec3::new(dx, 1.0 + 0.6 * i as f32, 0.1 * i as f32))
                .with_rotation(Quat::from_rotation_y(0.4 * i as f32)),
            NetBox,
            Dropped,
        ));
    }
    for i in 0..BALLS {
        let k = i as f32;
        let at = Vec3::new(
            7.6 + 0.25 * (i % 5) as f32,
            2.6 + 0.25 * (k / 5.0).floor(),
            0.5 + 0.12 * (i % 3) as f32,
        );
        commands.spawn((
            Body::new(0.4).with_position(at),
            Radius(BALL_RADIUS),
            ContactMaterial::new(0.1, 0.2),
            Mesh3d(looks.ball.clone()),
            MeshMaterial3d(looks.red.clone()),
            Dropped,
        ));
    }
}

/// The arm swings back and forth along X (a kinematic body: avian moves
/// it by its velocity).
fn swing_arm(time: Res<Time>, mut arms: Query<&mut LinearVelocity, With<Arm>>) {
    for mut velocity in &mut arms {
        velocity.0 = Vec3::X * SWING * SWING_RATE * (SWING_RATE * time.elapsed_secs()).cos();
    }
}

fn controls(
    keys: Res<ButtonInput<KeyCode>>,
    mut commands: Commands,
    dropped: Query<Entity, With<Dropped>>,
    looks: Res<Looks>,
) {
    if keys.just_pressed(KeyCode::KeyR) {
        for entity in &dropped {
            commands.entity(entity).despawn();
        }
        drop_things(&mut commands, &looks);
    }
}

/// The readout, and a log line each second (`CRANE ...`) for the
/// screenshot test.
fn report(
    arm: Query<&Position, With<Arm>>,
    crate_: Query<&Position, With<Crate>>,
    net_boxes: Query<&Position, With<NetBox>>,
    pushed: Query<(&Position, &Pushed)>,
    bodies: Query<&Body>,
    mut text: Query<&mut Text>,
    mut frame: Local<u32>,
) {
    *frame += 1;
    let (Ok(arm), Ok(crate_)) = (arm.single(), crate_.single()) else {
        return;
    };
    let hang = arm.0.y - crate_.0.y;
    let lowest = net_boxes
        .iter()
        .map(|p| p.0.y)
        .fold(f32::INFINITY, f32::min);
    let moved = pushed
        .iter()
        .map(|(p, from)| p.0.distance(from.0))
        .fold(0.0, f32::max);
    let finite = bodies.iter().all(|b| b.position.is_finite());
    for mut text in &mut text {
        text.0 = format!("crate {hang:.2} m below the arm\nR: drop again");
    }
    if (*frame).is_multiple_of(60) {
        info!(
            "CRANE hang {hang} lowest {lowest} moved {moved} finite {} net {}",
            u8::from(finite),
            NET.y
        );
    }
}

//! bevy_rapier3d's rigid bodies and this plugin's bodies acting on each
//! other, both ways, through the rapier bridge (`bridges/rapier3d`).
//!
//! `cargo run --release --example wrecking_ball`
//!
//! - A rope of this plugin's bodies hangs from a rapier beam, tied at its
//!   other end to a heavy rapier ball (`RopeEnd::Tied`): let go at the
//!   beam's height, the ball swings down on the rope, which holds it, and
//!   knocks over a stack of rapier boxes.
//! - A net of this plugin's bodies, its border fixed, catches rapier boxes
//!   dropped on it: the boxes sink in and are held.
//!
//! rapier runs in `FixedPostUpdate` with a fixed timestep of the fixed
//! step's length, right after this plugin's step (see the bridge's docs).
//!
//! Keys: R lets the ball go and drops the boxes again, F1 hides the
//! physics panel.

mod support;

use bevy::core_pipeline::tonemapping::Tonemapping;
use bevy::prelude::*;
use bevy_euler_physics::prelude::*;
use bevy_euler_physics_rapier3d::RapierBridgePlugin;
use bevy_rapier3d::prelude::{
    Collider, ColliderMassProperties, NoUserData, RapierPhysicsPlugin, RigidBody, TimestepMode,
};
use support::parts::example_app;

/// The point the rope hangs from, and the rope's length.
const BEAM: Vec3 = Vec3::new(0.0, 4.0, 0.0);
const ROPE: f32 = 3.0;
const BALL_RADIUS: f32 = 0.35;
/// The stack's foot, right under the beam.
const STACK: Vec3 = Vec3::new(0.4, 0.0, 0.0);
const BOX: f32 = 0.4;
/// The net's height and its centre.
const NET: Vec3 = Vec3::new(-3.2, 1.2, 0.0);

#[derive(Component)]
struct Wrecker;

/// A box of the stack, with where it started.
#[derive(Component)]
struct Stacked(Vec3);

/// A box dropped on the net.
#[derive(Component)]
struct NetBox;

/// What `R` spawns again.
#[derive(Component)]
struct Respawned;

/// The meshes and materials things are drawn with.
#[derive(Resource)]
struct Looks {
    ball: Handle<Mesh>,
    red: Handle<StandardMaterial>,
    small_box: Handle<Mesh>,
    net_box: Handle<Mesh>,
    wood: Handle<StandardMaterial>,
    rope: Handle<StandardMaterial>,
}

fn main() {
    let fixed = Time::<Fixed>::default().timestep().as_secs_f32();
    example_app("wrecking_ball")
        .add_plugins((
            RapierPhysicsPlugin::<NoUserData>::default().in_schedule(FixedPostUpdate),
            RapierBridgePlugin,
        ))
        .insert_resource(TimestepMode::Fixed {
            dt: fixed,
            substeps: 1,
        })
        .insert_resource(ClearColor(Color::srgb(0.55, 0.62, 0.72)))
        .add_systems(Startup, setup)
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
        Transform::from_xyz(-1.2, 3.2, 9.0).looking_at(Vec3::new(-1.2, 1.6, 0.0), Vec3::Y),
    ));
    support::daylight(&mut commands, 500.0);
    let stone = materials.add(Color::srgb(0.55, 0.55, 0.5));
    let steel = materials.add(Color::srgb(0.3, 0.35, 0.45));
    let looks = Looks {
        ball: meshes.add(Sphere::new(BALL_RADIUS)),
        red: materials.add(Color::srgb(0.85, 0.2, 0.15)),
        small_box: meshes.add(Cuboid::from_length(BOX)),
        net_box: meshes.add(Cuboid::from_length(0.3)),
        wood: materials.add(Color::srgb(0.75, 0.55, 0.3)),
        rope: materials.add(Color::srgb(0.85, 0.75, 0.45)),
    };
    // rapier's floor and the beam (both fixed).
    commands.spawn((
        RigidBody::Fixed,
        Collider::cuboid(7.0, 0.1, 3.0),
        Mesh3d(meshes.add(Cuboid::new(14.0, 0.2, 6.0))),
        MeshMaterial3d(stone),
        Transform::from_xyz(0.0, -0.1, 0.0),
    ));
    commands.spawn((
        RigidBody::Fixed,
        Collider::cuboid(0.6, 0.1, 0.1),
        Mesh3d(meshes.add(Cuboid::new(1.2, 0.2, 0.2))),
        MeshMaterial3d(steel),
        Transform::from_translation(BEAM + Vec3::Y * 0.1),
        Name::new("beam"),
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
    respawn(&mut commands, &looks);
    commands.insert_resource(looks);
    commands.spawn(support::readout(Color::BLACK));
}

/// The ball at the beam's height on its rope (let go from there), the
/// stack of boxes, and three boxes above the net.
fn respawn(commands: &mut Commands, looks: &Looks) {
    let ball = commands
        .spawn((
            RigidBody::Dynamic,
            Collider::ball(BALL_RADIUS),
            ColliderMassProperties::Mass(8.0),
            Mesh3d(looks.ball.clone()),
            MeshMaterial3d(looks.red.clone()),
            Transform::from_translation(BEAM + Vec3::X * (ROPE + BALL_RADIUS)),
            Wrecker,
            Respawned,
        ))
        .id();
    commands.spawn((
        Rope::new(
            RopeEnd::Fixed(BEAM),
            RopeEnd::Tied(ball, Vec3::new(-BALL_RADIUS, 0.0, 0.0)),
        )
        .with_segments(20)
        .with_length(ROPE),
        RopeMesh::tube(0.03),
        MeshMaterial3d(looks.rope.clone()),
        Respawned,
    ));
    // Three columns of three boxes, in the ball's path at the bottom of
    // its swing.
    for column in 0..3 {
        for row in 0..3 {
            let at = STACK
                + Vec3::new(
                    0.0,
                    BOX * (row as f32 + 0.5),
                    BOX * 1.05 * (column as f32 - 1.0),
                );
            commands.spawn((
                RigidBody::Dynamic,
                Collider::cuboid(BOX / 2.0, BOX / 2.0, BOX / 2.0),
                ColliderMassProperties::Mass(0.5),
                Mesh3d(looks.small_box.clone()),
                MeshMaterial3d(looks.wood.clone()),
                Transform::from_translation(at),
                Stacked(at),
                Respawned,
            ));
        }
    }
    for (i, dx) in [-0.3f32, 0.25, 0.0].into_iter().enumerate() {
        commands.spawn((
            RigidBody::Dynamic,
            Collider::cuboid(0.15, 0.15, 0.15),
            ColliderMassProperties::Mass(0.3),
            Mesh3d(looks.net_box.clone()),
            MeshMaterial3d(looks.wood.clone()),
            Transform::from_translation(NET + Vec3::new(dx, 1.0 + 0.6 * i as f32, 0.1 * i as f32))
                .with_rotation(Quat::from_rotation_y(0.4 * i as f32)),
            NetBox,
            Respawned,
        ));
    }
}

fn controls(
    keys: Res<ButtonInput<KeyCode>>,
    mut commands: Commands,
    respawned: Query<Entity, With<Respawned>>,
    looks: Res<Looks>,
) {
    if keys.just_pressed(KeyCode::KeyR) {
        for entity in &respawned {
            commands.entity(entity).despawn();
        }
        respawn(&mut commands, &looks);
    }
}

/// The readout, and a log line each second (`WRECKING ...`) for the
/// screenshot test: the ball's distance from the beam now and at most (the
/// rope holds it), how far a box of the stack was knocked, the lowest box
/// on the net.
fn report(
    ball: Query<&Transform, With<Wrecker>>,
    stacked: Query<(&Transform, &Stacked)>,
    net_boxes: Query<&Transform, With<NetBox>>,
    bodies: Query<&Body>,
    mut text: Query<&mut Text>,
    mut frame: Local<u32>,
    mut farthest: Local<f32>,
) {
    *frame += 1;
    let Ok(ball) = ball.single() else {
        return;
    };
    let reach = ball.translation.distance(BEAM);
    *farthest = farthest.max(reach);
    let knocked = stacked
        .iter()
        .map(|(t, from)| t.translation.distance(from.0))
        .fold(0.0, f32::max);
    let lowest = net_boxes
        .iter()
        .map(|t| t.translation.y)
        .fold(f32::INFINITY, f32::min);
    let finite = bodies.iter().all(|b| b.position.is_finite());
    for mut text in &mut text {
        text.0 = format!("a box knocked {knocked:.2} m\nR: let go again");
    }
    if (*frame).is_multiple_of(60) {
        info!(
            "WRECKING reach {reach} farthest {} knocked {knocked} lowest {lowest} finite {} net {}",
            *farthest,
            u8::from(finite),
            NET.y
        );
    }
}

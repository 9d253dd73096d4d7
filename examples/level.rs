//! A small level for the bodies to live in: triangles loaded from a glTF
//! file, a height-field hill, a moving platform, ropes, a net and loose
//! balls.
//!
//! `cargo run --release --example level`
//!
//! `assets/level.gltf` (written by `examples/make_level.rs`) holds a floor,
//! a ramp, stairs and a wall, as an artist would export them. Once Bevy has
//! loaded the mesh, its entity gets an [`Obstacle`] of the mesh's
//! triangles (`TriangleMesh::from_mesh`). The hill is a [`HeightField`],
//! drawn by a mesh of the same heights. The platform is a box moved in
//! `FixedUpdate`: the balls on it ride along. Two ropes hang over the
//! stairs and a net is stretched over the floor; 60 balls fall on all of
//! it.
//!
//! Keys: R drops the balls again, ←/→ orbit the camera, F1 hides the
//! physics panel. Mouse: drag any body (left button).

mod support;

use bevy::core_pipeline::tonemapping::Tonemapping;
use bevy::gltf::GltfAssetLabel;
use bevy::prelude::*;
use bevy_euler_physics::prelude::*;
use support::parts::example_app;

/// The loose balls.
const BALLS: usize = 60;
const BALL_RADIUS: f32 = 0.12;
/// The hill: heights in a square of `HILL_SIDE` samples over `HILL_SIZE`.
const HILL_SIDE: u32 = 25;
const HILL_SIZE: f32 = 4.0;
const HILL_AT: Vec3 = Vec3::new(3.8, 0.0, 1.8);

/// The level's mesh, until its triangles become an obstacle.
#[derive(Component)]
struct LevelMesh;

#[derive(Component)]
struct Ball;

#[derive(Component)]
struct Platform;

#[derive(Resource)]
struct Orbit(f32);

fn main() {
    example_app("level")
        .insert_resource(ClearColor(Color::srgb(0.55, 0.62, 0.72)))
        .insert_resource(Orbit(-0.35))
        .add_systems(Startup, setup)
        .add_systems(FixedUpdate, move_platform.in_set(PhysicsSystems::Prepare))
        .add_systems(Update, (make_obstacle, controls, orbit, report))
        .run();
}

/// A ball's material, and the balls' mesh.
#[derive(Resource)]
struct Looks {
    ball: Handle<Mesh>,
    red: Handle<StandardMaterial>,
}

fn setup(
    mut commands: Commands,
    assets: Res<AssetServer>,
    mut meshes: ResMut<Assets<Mesh>>,
    mut materials: ResMut<Assets<StandardMaterial>>,
) {
    commands.spawn((Camera3d::default(), Tonemapping::None, Transform::default()));
    support::daylight(&mut commands, 500.0);
    let stone = materials.add(Color::srgb(0.55, 0.55, 0.5));
    commands.spawn((
        Mesh3d(
            assets.load(
                GltfAssetLabel::Primitive {
                    mesh: 0,
                    primitive: 0,
                }
                .from_asset("level.gltf"),
            ),
        ),
        MeshMaterial3d(stone.clone()),
        LevelMesh,
    ));
    // The hill: a bump, as heights, and a mesh of the same heights.
    let heights: Vec<f32> = (0..HILL_SIDE * HILL_SIDE)
        .map(|i| {
            let u = (i % HILL_SIDE) as f32 / (HILL_SIDE - 1) as f32 * 2.0 - 1.0;
            let v = (i / HILL_SIDE) as f32 / (HILL_SIDE - 1) as f32 * 2.0 - 1.0;
            0.9 * (-3.0 * (u * u + v * v)).exp() - 0.05
        })
        .collect();
    let hill = HeightField::new(heights, HILL_SIDE, Vec2::splat(HILL_SIZE));
    commands.spawn((
        Mesh3d(meshes.add(hill_mesh(&hill))),
        MeshMaterial3d(materials.add(Color::srgb(0.35, 0.55, 0.3))),
        Obstacle::from(hill),
        Transform::from_translation(HILL_AT),
    ));
    // The moving platform.
    commands.spawn((
        Obstacle::from(Cuboid::new(1.4, 0.2, 1.4)),
        Mesh3d(meshes.add(Cuboid::new(1.4, 0.2, 1.4))),
        MeshMaterial3d(materials.add(Color::srgb(0.3, 0.4, 0.7))),
        Transform::from_xyz(-3.0, 0.7, 2.0),
        ContactMaterial::new(0.0, 0.9),
        Platform,
    ));
    // Two ropes hanging over the stairs.
    let rope = materials.add(Color::srgb(0.85, 0.75, 0.45));
    for z in [-2.6, -1.4] {
        commands.spawn((
            Rope::new(
                RopeEnd::Fixed(Vec3::new(1.6, 2.6, z)),
                RopeEnd::Free(Vec3::new(2.8, 2.6, z)),
            )
            .with_segments(20)
            .with_length(2.2)
            .with_radius(0.04),
            RopeMesh::tube(0.04),
            MeshMaterial3d(rope.clone()),
        ));
    }
    // A net of 12 × 12 knots 0.2 m apart over the floor, its corners
    // fixed at 1.2 m.
    let net = support::Net {
        corner: Vec3::new(-1.1, 1.2, 0.4),
        n: 12,
        spacing: 0.2,
        mass: 0.02,
        radius: 0.04,
        drag: 0.3,
        stiffness: 60.0,
        border: false,
    };
    net.spawn(&mut commands, &mut meshes, &mut materials);
    let looks = Looks {
        ball: meshes.add(Sphere::new(BALL_RADIUS)),
        red: materials.add(Color::srgb(0.85, 0.2, 0.15)),
    };
    drop_balls(&mut commands, &looks);
    commands.insert_resource(looks);
    commands.spawn(support::readout(Color::BLACK));
}

/// 60 balls above the level: over the ramp, the stairs, the hill, the
/// platform and the net.
fn drop_balls(commands: &mut Commands, looks: &Looks) {
    for i in 0..BALLS {
        let spot = [
            Vec3::new(-3.5, 2.5, -2.0),
            Vec3::new(2.0, 3.0, -2.0),
            Vec3::new(3.8, 2.5, 1.8),
            Vec3::new(-3.0, 2.5, 2.0),
            Vec3::new(0.0, 3.0, 1.5),
        ][i % 5];
        let k = (i / 5) as f32;
        let at = spot + Vec3::new((k * 1.7).sin() * 0.4, k * 0.3, (k * 2.3).cos() * 0.4);
        commands.spawn((
            Body::new(0.3).with_position(at),
            Radius(BALL_RADIUS),
            ContactMaterial::new(0.2, 0.6),
            Mesh3d(looks.ball.clone()),
            MeshMaterial3d(looks.red.clone()),
            Ball,
        ));
    }
}

/// The hill's mesh: the height field's own triangles, with smooth
/// normals.
fn hill_mesh(hill: &HeightField) -> Mesh {
    let triangles = hill
        .triangle_mesh()
        .expect("the hill's heights fill its grid");
    let positions: Vec<[f32; 3]> = triangles.vertices.iter().map(|v| v.to_array()).collect();
    let indices = triangles.triangles.iter().flatten().copied().collect();
    support::triangle_mesh(positions, indices)
}

/// Once the level's mesh is loaded, its triangles become an obstacle.
fn make_obstacle(
    mut commands: Commands,
    levels: Query<(Entity, &Mesh3d), With<LevelMesh>>,
    meshes: Res<Assets<Mesh>>,
) {
    for (entity, mesh) in &levels {
        let Some(mesh) = meshes.get(&mesh.0) else {
            continue;
        };
        let mut level = commands.entity(entity);
        level.remove::<LevelMesh>();
        match TriangleMesh::from_mesh(mesh) {
            Ok(triangles) => {
                info!("LEVEL_MESH triangles {}", triangles.triangles.len());
                level.insert(Obstacle::from(triangles));
            }
            Err(problem) => error!("the level's mesh has no triangles: {problem}"),
        }
    }
}

/// The platform glides back and forth along X.
fn move_platform(time: Res<Time>, mut platforms: Query<&mut Transform, With<Platform>>) {
    for mut platform in &mut platforms {
        platform.translation.x = -3.0 + 1.2 * (0.6 * time.elapsed_secs()).sin();
    }
}

fn controls(
    keys: Res<ButtonInput<KeyCode>>,
    mut commands: Commands,
    balls: Query<Entity, With<Ball>>,
    looks: Res<Looks>,
    mut orbit: ResMut<Orbit>,
    time: Res<Time>,
) {
    if keys.just_pressed(KeyCode::KeyR) {
        for ball in &balls {
            commands.entity(ball).despawn();
        }
        drop_balls(&mut commands, &looks);
    }
    let turn =
        f32::from(keys.pressed(KeyCode::ArrowRight)) - f32::from(keys.pressed(KeyCode::ArrowLeft));
    orbit.0 += turn * time.delta_secs();
}

fn orbit(orbit: Res<Orbit>, mut cameras: Query<&mut Transform, With<Camera3d>>) {
    for mut camera in &mut cameras {
        let eye = Vec3::new(orbit.0.sin() * 9.5 - 1.5, 6.0, orbit.0.cos() * 9.5);
        *camera = Transform::from_translation(eye).looking_at(Vec3::new(-1.5, 0.3, 0.0), Vec3::Y);
    }
}

/// A readout, and once a second a log line for the screenshot test: the
/// balls, whether every body is finite, how many balls fell through the
/// floor, and how many rest on the hill, the platform and the stairs.
fn report(
    balls: Query<&Body, With<Ball>>,
    bodies: Query<&Body>,
    obstacles: Query<(), With<Obstacle>>,
    mut text: Query<&mut Text>,
    mut frame: Local<u32>,
) {
    *frame += 1;
    let finite = bodies.iter().all(|b| b.position.is_finite());
    let fallen = balls
        .iter()
        .filter(|b| b.position.y < BALL_RADIUS * 0.5)
        .count();
    let on_hill = balls
        .iter()
        .filter(|b| b.position.xz().distance(HILL_AT.xz()) < 0.8 && b.position.y > 0.5)
        .count();
    let high = balls.iter().filter(|b| b.position.y > 0.5).count();
    for mut text in &mut text {
        text.0 = format!(
            "{} balls, {} obstacles\nR: drop again",
            balls.iter().count(),
            obstacles.iter().count()
        );
    }
    if (*frame).is_multiple_of(60) {
        info!(
            "LEVEL balls {} finite {} fallen {fallen} on_hill {on_hill} high {high} obstacles {}",
            balls.iter().count(),
            u8::from(finite),
            obstacles.iter().count()
        );
    }
}

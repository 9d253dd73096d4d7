//! A flag loaded from a glTF file, made soft, on a pole that sways and
//! moves, in gusts of wind.
//!
//! `cargo run --release --example flag`
//!
//! `assets/flag.gltf` (written by `examples/make_flag.rs`) is an ordinary
//! mesh: 672 vertices, of which the 21 along its UV cut are in the file
//! twice; its left column is painted red. One [`SoftMesh`] on the entity
//! that draws it makes it cloth: the duplicated vertices are welded (651
//! bodies), and the vertices painted red are pinned to the pole
//! ([`SoftMesh::pin_to`] with [`PinSelect::Colour`]), whose transform the
//! game moves in the fixed step. The mesh is drawn from the bodies every
//! frame, normals and tangents included.
//!
//! Keys: W toggles the wind, space stops and starts the pole, R starts
//! over, F1 hides the physics panel. Mouse: drag any body (left button).

mod support;

use bevy::core_pipeline::tonemapping::Tonemapping;
use bevy::gltf::GltfAssetLabel;
use bevy::prelude::*;
use bevy_euler_physics::prelude::*;
use support::parts::example_app;

/// The pole's height; the flag's top edge is at its top.
const POLE: f32 = 3.0;

#[derive(Resource)]
struct Scene {
    pole: Entity,
    flag: Entity,
    wind: bool,
    moving: bool,
    time: f32,
}

#[derive(Component)]
struct Readout;

fn main() {
    example_app("flag")
        .insert_resource(ClearColor(Color::srgb(0.55, 0.68, 0.85)))
        .add_systems(Startup, setup)
        .add_systems(
            FixedUpdate,
            (move_pole, blow).chain().in_set(PhysicsSystems::Prepare),
        )
        .add_systems(Update, (controls, readout.after(SoftMeshSystems::Draw)))
        .run();
}

/// The flag: its mesh as soft cloth, the red vertices pinned to the pole.
fn soft_flag(pole: Entity) -> SoftMesh {
    SoftMesh::default()
        .with_mass(SoftMass::PerSquareMetre(0.25))
        .with_stretch(6.0, 0.2)
        .with_bend(0.05)
        .with_drag(0.3)
        .pin_to(
            PinSelect::Colour {
                colour: LinearRgba::RED,
                tolerance: 0.1,
            },
            pole,
        )
}

fn setup(
    mut commands: Commands,
    assets: Res<AssetServer>,
    mut meshes: ResMut<Assets<Mesh>>,
    mut materials: ResMut<Assets<StandardMaterial>>,
) {
    commands.spawn((
        Camera3d::default(),
        Tonemapping::None,
        Transform::from_xyz(0.8, 2.2, 5.5).looking_at(Vec3::new(0.8, 2.0, 0.0), Vec3::Y),
    ));
    support::daylight(&mut commands, 500.0);
    commands.spawn((
        Mesh3d(meshes.add(Plane3d::default().mesh().size(20.0, 20.0))),
        MeshMaterial3d(materials.add(Color::srgb(0.35, 0.45, 0.3))),
    ));
    // The pole: its origin at its foot; the flag hangs from its top.
    let pole = commands
        .spawn((
            Transform::default(),
            Visibility::default(),
            children![(
                Mesh3d(meshes.add(Cylinder::new(0.04, POLE + 0.1).mesh())),
                MeshMaterial3d(materials.add(Color::srgb(0.3, 0.3, 0.32))),
                Transform::from_xyz(0.0, (POLE + 0.1) / 2.0, 0.0),
            )],
        ))
        .id();
    let flag = commands
        .spawn((
            Mesh3d(
                assets.load(
                    GltfAssetLabel::Primitive {
                        mesh: 0,
                        primitive: 0,
                    }
                    .from_asset("flag.gltf"),
                ),
            ),
            // The vertex colours tint it: the pinned edge red.
            MeshMaterial3d(materials.add(StandardMaterial {
                base_color: Color::srgb(0.2, 0.35, 0.95),
                double_sided: true,
                cull_mode: None,
                perceptual_roughness: 0.7,
                ..default()
            })),
            Transform::from_xyz(0.04, POLE - 1.0, 0.0),
            soft_flag(pole),
        ))
        .id();
    commands.spawn((Readout, support::readout(Color::srgb(0.05, 0.05, 0.1))));
    commands.insert_resource(Scene {
        pole,
        flag,
        wind: true,
        moving: true,
        time: 0.0,
    });
}

/// The pole sways (a tilt about Z) and walks to and fro along X, before
/// the step: the pinned vertices follow it step by step.
fn move_pole(
    time: Res<Time<Fixed>>,
    mut scene: ResMut<Scene>,
    mut transforms: Query<&mut Transform>,
) {
    if !scene.moving {
        return;
    }
    scene.time += time.delta_secs();
    let t = scene.time;
    if let Ok(mut pole) = transforms.get_mut(scene.pole) {
        pole.translation.x = 0.6 * (0.4 * t).sin();
        pole.rotation = Quat::from_rotation_z(0.08 * (1.1 * t).sin());
    }
}

/// Gusts along +X with a swirl that runs along the flag, as forces in
/// proportion to each body's mass (its share of the cloth).
fn blow(
    scene: Res<Scene>,
    mut bodies: Query<(&Body, &mut AccumulatedForce), With<PartOfSoftMesh>>,
) {
    if !scene.wind {
        return;
    }
    let t = scene.time;
    // Stronger than gravity, so that the flag flies.
    let gust = 13.0 + 5.0 * (0.9 * t).sin() * (0.37 * t).cos();
    for (body, mut force) in &mut bodies {
        if body.is_fixed() {
            continue;
        }
        let x = body.position.x;
        let swirl = Vec3::new(0.0, 1.5, 6.0) * (3.0 * x - 5.0 * t).sin();
        force.0 += body.mass() * (Vec3::X * gust + swirl);
    }
}

fn controls(keys: Res<ButtonInput<KeyCode>>, mut scene: ResMut<Scene>, mut commands: Commands) {
    if keys.just_pressed(KeyCode::KeyW) {
        scene.wind = !scene.wind;
    }
    if keys.just_pressed(KeyCode::Space) {
        scene.moving = !scene.moving;
    }
    if keys.just_pressed(KeyCode::KeyR) {
        commands.entity(scene.flag).insert(soft_flag(scene.pole));
    }
}

fn readout(
    scene: Res<Scene>,
    flags: Query<&SoftMeshParts>,
    meshes: Res<Assets<Mesh>>,
    handles: Query<&Mesh3d>,
    bodies: Query<&Body>,
    mut text: Query<&mut Text, With<Readout>>,
) {
    let (Ok(mut text), Ok(parts)) = (text.single_mut(), flags.get(scene.flag)) else {
        return;
    };
    let vertices = handles
        .get(scene.flag)
        .ok()
        .and_then(|m| meshes.get(&m.0))
        .map_or(0, Mesh::count_vertices);
    let flag: Vec<&Body> = bodies.iter_many(&parts.bodies).collect();
    let pinned = flag.iter().filter(|b| b.is_fixed()).count();
    **text = format!(
        "{vertices} vertices welded into {} bodies, {pinned} pinned\n\
         wind: {} (W), pole: {} (space)",
        parts.bodies.len(),
        if scene.wind { "on" } else { "off" },
        if scene.moving { "moving" } else { "still" },
    );
    if support::capturing() {
        let pole_x = flag
            .iter()
            .filter(|b| b.is_fixed())
            .map(|b| b.position.x)
            .sum::<f32>()
            / pinned.max(1) as f32;
        let reach = flag
            .iter()
            .map(|b| b.position.x - pole_x)
            .fold(0.0f32, f32::max);
        let lowest = flag
            .iter()
            .map(|b| b.position.y)
            .fold(f32::INFINITY, f32::min);
        let finite = flag.iter().all(|b| b.position.is_finite());
        info!(
            "FLAG t {:.3} vertices {vertices} bodies {} pinned {pinned} reach {reach} lowest {lowest} pole {pole_x} finite {}",
            scene.time,
            parts.bodies.len(),
            u8::from(finite)
        );
    }
}

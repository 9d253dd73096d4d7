//! Jellies: closed meshes with a pressure, dropped onto the ground and
//! onto each other.
//!
//! `cargo run --release --example jelly`
//!
//! Each jelly is a Bevy primitive's mesh (an icosphere, a torus, a capsule)
//! made soft with a [`SoftMesh`] and a pressure
//! ([`SoftMesh::with_pressure`]): a bulk modulus that pushes its surface out
//! as much as its volume has shrunk. Its bodies carry a radius, so jellies
//! touch the ground and each other (each jelly in a collision group of its
//! own: its bodies do not touch one another).
//!
//! Keys: space drops another jelly, R starts over, F1 hides the physics
//! panel. Mouse: drag any body (left button).

mod support;

use bevy::core_pipeline::tonemapping::Tonemapping;
use bevy::mesh::VertexAttributeValues;
use bevy::prelude::*;
use bevy_euler_physics::prelude::*;
use support::parts::example_app;

/// A jelly's shape, colour and where it drops from.
#[derive(Component)]
struct Jelly {
    /// The volume of its mesh as built, in m³.
    rest: f32,
}

#[derive(Resource, Default)]
struct Dropped(u32);

#[derive(Component)]
struct Readout;

fn main() {
    example_app("jelly")
        .insert_resource(ClearColor(Color::srgb(0.6, 0.66, 0.75)))
        .init_resource::<Dropped>()
        .add_systems(Startup, setup)
        .add_systems(Update, (controls, readout.after(SoftMeshSystems::Draw)))
        .run();
}

/// The volume a closed triangle mesh encloses, from its positions.
fn mesh_volume(mesh: &Mesh) -> f32 {
    let (Some(VertexAttributeValues::Float32x3(p)), Some(indices)) =
        (mesh.attribute(Mesh::ATTRIBUTE_POSITION), mesh.indices())
    else {
        return 0.0;
    };
    let indices: Vec<usize> = indices.iter().collect();
    indices
        .chunks_exact(3)
        .map(|t| {
            let [a, b, c] = [t[0], t[1], t[2]].map(|v| Vec3::from(p[v]));
            a.dot(b.cross(c))
        })
        .sum::<f32>()
        / 6.0
}

/// Drops jelly number `n`: the shapes and colours in turn, from a little
/// higher each time.
fn drop_jelly(
    n: u32,
    commands: &mut Commands,
    meshes: &mut Assets<Mesh>,
    materials: &mut Assets<StandardMaterial>,
) {
    let shapes: [Mesh; 3] = [
        Sphere::new(0.4).mesh().ico(3).expect("a small icosphere"),
        Torus::new(0.15, 0.45).mesh().build(),
        Capsule3d::new(0.25, 0.4)
            .mesh()
            .rings(4)
            .latitudes(12)
            .longitudes(16)
            .build(),
    ];
    let colours = [
        Color::srgb(0.9, 0.2, 0.3),
        Color::srgb(0.25, 0.8, 0.35),
        Color::srgb(0.95, 0.7, 0.15),
        Color::srgb(0.3, 0.45, 0.95),
    ];
    let mesh = shapes[n as usize % 3].clone();
    let rest = mesh_volume(&mesh);
    let x = [-0.6, 0.5, -0.1, 0.7, -0.9][n as usize % 5];
    let z = [0.0, 0.3, -0.3, 0.1, -0.2][n as usize % 5];
    let group = 1 << (n % 32);
    commands.spawn((
        Jelly { rest },
        Mesh3d(meshes.add(mesh)),
        MeshMaterial3d(materials.add(StandardMaterial {
            base_color: colours[n as usize % 4],
            perceptual_roughness: 0.35,
            ..default()
        })),
        Transform::from_xyz(x, 1.0 + 1.1 * n as f32, z)
            .with_rotation(Quat::from_rotation_x(0.3 * n as f32)),
        SoftMesh::default()
            .with_mass(SoftMass::Total(2.0))
            .with_stretch(3.0, 0.3)
            .with_bend(0.2)
            // Within the explicit pressure's limit (ω·h < 2) for these
            // shapes at 2 kg: see `SoftMesh::pressure`.
            .with_pressure(1000.0)
            .with_radius(0.05)
            .with_groups(CollisionGroups::new(group, !group)),
    ));
}

fn setup(
    mut commands: Commands,
    mut meshes: ResMut<Assets<Mesh>>,
    mut materials: ResMut<Assets<StandardMaterial>>,
    mut dropped: ResMut<Dropped>,
) {
    commands.spawn((
        Camera3d::default(),
        Tonemapping::None,
        Transform::from_xyz(0.0, 2.2, 6.0).looking_at(Vec3::new(0.0, 1.0, 0.0), Vec3::Y),
    ));
    support::daylight(&mut commands, 500.0);
    commands.spawn((
        GroundPlane::horizontal(0.0),
        Mesh3d(meshes.add(Plane3d::default().mesh().size(12.0, 12.0))),
        MeshMaterial3d(materials.add(Color::srgb(0.4, 0.42, 0.45))),
    ));
    for n in 0..4 {
        drop_jelly(n, &mut commands, &mut meshes, &mut materials);
    }
    dropped.0 = 4;
    commands.spawn((Readout, support::readout(Color::srgb(0.05, 0.05, 0.1))));
}

fn controls(
    keys: Res<ButtonInput<KeyCode>>,
    mut commands: Commands,
    mut meshes: ResMut<Assets<Mesh>>,
    mut materials: ResMut<Assets<StandardMaterial>>,
    mut dropped: ResMut<Dropped>,
    jellies: Query<Entity, With<Jelly>>,
) {
    if keys.just_pressed(KeyCode::Space) && dropped.0 < 32 {
        drop_jelly(dropped.0, &mut commands, &mut meshes, &mut materials);
        dropped.0 += 1;
    }
    if keys.just_pressed(KeyCode::KeyR) {
        for jelly in &jellies {
            commands.entity(jelly).despawn();
        }
        for n in 0..4 {
            drop_jelly(n, &mut commands, &mut meshes, &mut materials);
        }
        dropped.0 = 4;
    }
}

/// Each jelly's volume now against its volume as built, from its drawn
/// mesh (the entity's transform keeps volumes).
fn readout(
    jellies: Query<(&Jelly, &Mesh3d, &SoftMeshParts)>,
    meshes: Res<Assets<Mesh>>,
    bodies: Query<&Body>,
    mut text: Query<&mut Text, With<Readout>>,
) {
    let Ok(mut text) = text.single_mut() else {
        return;
    };
    let mut volumes = Vec::new();
    let (mut lowest, mut finite, mut count) = (f32::INFINITY, true, 0);
    for (jelly, mesh, parts) in &jellies {
        if let Some(mesh) = meshes.get(&mesh.0) {
            volumes.push(mesh_volume(mesh) / jelly.rest);
        }
        for body in bodies.iter_many(&parts.bodies) {
            lowest = lowest.min(body.position.y);
            finite &= body.position.is_finite();
            count += 1;
        }
    }
    let list: Vec<String> = volumes
        .iter()
        .map(|v| format!("{:.0}", v * 100.0))
        .collect();
    **text = format!(
        "{} jellies, {count} bodies (space drops one)\nvolumes: {} %",
        volumes.len(),
        list.join(" ")
    );
    if support::capturing() {
        let least = volumes.iter().copied().fold(f32::INFINITY, f32::min);
        let most = volumes.iter().copied().fold(0.0f32, f32::max);
        info!(
            "JELLY jellies {} bodies {count} least {least} most {most} lowest {lowest} finite {}",
            volumes.len(),
            u8::from(finite)
        );
    }
}

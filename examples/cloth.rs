//! A stiff cloth in 3D, stepped by implicit springs.
//!
//! `cargo run --release --example cloth` (a 64×64 cloth; add `-- --size
//! 40` for another side, 4 to 128)
//!
//! A square cloth of bodies joined by structural, shear and bend springs
//! hangs from its two top corners over a ball, drawn as one mesh whose
//! vertices follow the bodies every frame (between their last two fixed
//! positions). Its springs are stiff: a body of 0.6 g (2.5 kg over
//! 64×64) on one of its 3 200 N/m structural springs alone has `ω·h ≈ 36`
//! at 64 Hz, and the cloth's fastest mode about twice that, far past the
//! explicit limit of 2. With [`ImplicitSprings`] the cloth's island steps them by backward
//! Euler in one pass (conjugate gradients with the multigrid
//! preconditioner, to a tolerance of 1e-3); press T to step it instead
//! with the automatic substeps that hold it stable, and compare the look
//! and the step time in the physics panel (the readout gives the passes).
//!
//! Keys: T toggles implicit springs and automatic substeps, W the wind,
//! R starts over, ←/→ orbit the camera, ↑/↓ zoom, F1 hides the physics
//! panel. Mouse: drag any body (left button).

mod support;

use bevy::asset::RenderAssetUsages;
use bevy::core_pipeline::tonemapping::Tonemapping;
use bevy::mesh::{Indices, PrimitiveTopology};
use bevy::prelude::*;
use bevy_euler_physics::prelude::*;
use support::parts::example_app;

/// The cloth's side, in metres, and its mass.
const SIDE: f32 = 2.0;
const MASS: f32 = 2.5;
/// Spring stiffness (structural, shear, bend) of a 40×40 cloth, and
/// damping. A finer cloth has more springs in series, each shorter: its
/// stiffness is scaled by `(size − 1) / 39` so that the cloth as a whole
/// stretches as much at any size.
const STRUCTURAL: f32 = 2000.0;
const SHEAR: f32 = 1000.0;
const BEND: f32 = 200.0;
const SPRING_DAMPING: f32 = 0.02;
/// The ball the cloth drapes over.
const BALL: Vec3 = Vec3::new(0.95, 0.45, -0.35);
const BALL_RADIUS: f32 = 0.45;
/// Contacts: the cloth touches the ball and the ground, not itself.
const CLOTH: u32 = 1;
const SOLID: u32 = 2;

#[derive(Resource)]
struct Cloth {
    size: usize,
    bodies: Vec<Entity>,
    mesh: Handle<Mesh>,
    implicit: bool,
    wind: bool,
    time: f32,
}

#[derive(Component)]
struct Part;

#[derive(Component)]
struct Readout;

#[derive(Resource)]
struct Orbit {
    yaw: f32,
    distance: f32,
}

fn main() {
    let size = std::env::args()
        .skip_while(|arg| arg != "--size")
        .nth(1)
        .map(|n| n.parse().expect("--size takes a number of bodies per side"))
        .unwrap_or(64usize)
        .clamp(4, 128);
    example_app("cloth")
        .insert_resource(ClearColor(Color::srgb(0.55, 0.62, 0.72)))
        .insert_resource(ImplicitSettings {
            max_iterations: 200,
            tolerance: 1e-3,
            ..default()
        })
        .insert_resource(ConstraintSettings {
            contact_substeps: 1,
            ..default()
        })
        .insert_resource(Orbit {
            yaw: 0.5,
            distance: 5.5,
        })
        .insert_resource(DebugUiSettings {
            draw_springs: false,
            draw_bodies: false,
            ..default()
        })
        .add_systems(
            Startup,
            move |mut commands: Commands,
                  meshes: ResMut<Assets<Mesh>>,
                  materials: ResMut<Assets<StandardMaterial>>| {
                setup(&mut commands, meshes, materials, size);
            },
        )
        .add_systems(FixedUpdate, blow.in_set(PhysicsSystems::Prepare))
        .add_systems(
            Update,
            (
                controls,
                (orbit, (draw_cloth, readout))
                    .chain()
                    .after(InterpolationSystems::Interpolate),
            ),
        )
        .run();
}

fn setup(
    commands: &mut Commands,
    mut meshes: ResMut<Assets<Mesh>>,
    mut materials: ResMut<Assets<StandardMaterial>>,
    size: usize,
) {
    commands.spawn((Camera3d::default(), Tonemapping::None, Transform::default()));
    commands.spawn((
        DirectionalLight {
            illuminance: 9000.0,
            shadow_maps_enabled: false,
            ..default()
        },
        Transform::from_xyz(3.0, 6.0, 4.0).looking_at(Vec3::ZERO, Vec3::Y),
    ));
    commands.insert_resource(GlobalAmbientLight {
        brightness: 400.0,
        ..default()
    });
    // The ground, and the ball: a fixed body with a radius.
    commands.spawn((
        GroundPlane::horizontal(-1.5),
        Mesh3d(meshes.add(Plane3d::default().mesh().size(12.0, 12.0))),
        MeshMaterial3d(materials.add(Color::srgb(0.35, 0.4, 0.35))),
        Transform::from_xyz(0.0, -1.5, 0.0),
    ));
    commands.spawn((
        Body::fixed(BALL),
        Radius(BALL_RADIUS),
        CollisionGroups::new(SOLID, CLOTH),
        Mesh3d(meshes.add(Sphere::new(BALL_RADIUS * 0.97).mesh().uv(48, 24))),
        MeshMaterial3d(materials.add(Color::srgb(0.85, 0.3, 0.25))),
    ));
    let mesh = meshes.add(Mesh::new(
        PrimitiveTopology::TriangleList,
        RenderAssetUsages::default(),
    ));
    commands.spawn((
        Mesh3d(mesh.clone()),
        MeshMaterial3d(materials.add(StandardMaterial {
            base_color: Color::srgb(0.95, 0.8, 0.3),
            double_sided: true,
            cull_mode: None,
            perceptual_roughness: 0.8,
            ..default()
        })),
    ));
    commands.spawn((Readout, support::readout(Color::srgb(0.05, 0.05, 0.1))));
    let bodies = spawn_cloth(commands, size, true);
    commands.insert_resource(Cloth {
        size,
        bodies,
        mesh,
        implicit: true,
        wind: false,
        time: 0.0,
    });
}

/// The cloth's bodies, row by row from the top edge (level, at `y = 1.6`,
/// in the x–z plane), and its springs; the two top corners fixed.
fn spawn_cloth(commands: &mut Commands, size: usize, implicit: bool) -> Vec<Entity> {
    let spacing = SIDE / (size - 1) as f32;
    let mass = MASS / (size * size) as f32;
    let at = |i: usize, j: usize| {
        Vec3::new(
            -SIDE / 2.0 + spacing * j as f32,
            1.6,
            -SIDE / 2.0 + spacing * i as f32,
        )
    };
    let mut bodies = Vec::with_capacity(size * size);
    for i in 0..size {
        for j in 0..size {
            let corner = i == 0 && (j == 0 || j == size - 1);
            let body = if corner {
                Body::fixed(at(i, j))
            } else {
                Body::new(mass).with_position(at(i, j))
            };
            let mut e = commands.spawn((
                body,
                Part,
                TransformSyncDisabled,
                Radius(spacing * 0.4),
                CollisionGroups::new(CLOTH, SOLID),
                Damping(0.05),
            ));
            if (i, j) == (1, 1) {
                if implicit {
                    e.insert(ImplicitSprings);
                } else {
                    e.insert(AutoSubsteps);
                }
            }
            bodies.push(e.id());
        }
    }
    let finer = (size - 1) as f32 / 39.0;
    let mut join = |a: (usize, usize), b: (usize, usize), k: f32| {
        let k = k * finer;
        let (ea, eb) = (bodies[a.0 * size + a.1], bodies[b.0 * size + b.1]);
        let rest = at(a.0, a.1).distance(at(b.0, b.1));
        commands.spawn((
            Spring::new(ea, eb, rest, k).with_damping(SPRING_DAMPING),
            Part,
        ));
    };
    for i in 0..size {
        for j in 0..size {
            if j + 1 < size {
                join((i, j), (i, j + 1), STRUCTURAL);
            }
            if i + 1 < size {
                join((i, j), (i + 1, j), STRUCTURAL);
            }
            if i + 1 < size && j + 1 < size {
                join((i, j), (i + 1, j + 1), SHEAR);
                join((i, j + 1), (i + 1, j), SHEAR);
            }
            if j + 2 < size {
                join((i, j), (i, j + 2), BEND);
            }
            if i + 2 < size {
                join((i, j), (i + 2, j), BEND);
            }
        }
    }
    bodies
}

/// Gusts of wind along x, when on: a force on every body, written before
/// the step (so it acts for the whole step, at any pass count).
fn blow(
    time: Res<Time<Fixed>>,
    mut cloth: ResMut<Cloth>,
    mut forces: Query<&mut AccumulatedForce, With<Part>>,
) {
    cloth.time += time.delta_secs();
    if !cloth.wind {
        return;
    }
    let t = cloth.time;
    let gust = 0.6 + 0.4 * (1.3 * t).sin() * (0.7 * t).cos();
    let per_body = MASS / (cloth.size * cloth.size) as f32 * 6.0 * gust;
    for mut force in &mut forces {
        force.0 += Vec3::new(per_body, 0.0, 0.3 * per_body);
    }
}

fn controls(
    keys: Res<ButtonInput<KeyCode>>,
    mut commands: Commands,
    mut cloth: ResMut<Cloth>,
    parts: Query<Entity, With<Part>>,
    mut orbit: ResMut<Orbit>,
    time: Res<Time>,
) {
    let dt = time.delta_secs();
    if keys.pressed(KeyCode::ArrowLeft) {
        orbit.yaw -= dt;
    }
    if keys.pressed(KeyCode::ArrowRight) {
        orbit.yaw += dt;
    }
    if keys.pressed(KeyCode::ArrowUp) {
        orbit.distance = (orbit.distance - 3.0 * dt).max(2.0);
    }
    if keys.pressed(KeyCode::ArrowDown) {
        orbit.distance = (orbit.distance + 3.0 * dt).min(15.0);
    }
    if keys.just_pressed(KeyCode::KeyW) {
        cloth.wind = !cloth.wind;
    }
    let toggle = keys.just_pressed(KeyCode::KeyT);
    if toggle || keys.just_pressed(KeyCode::KeyR) {
        if toggle {
            cloth.implicit = !cloth.implicit;
        }
        // Start over (a cloth switched mid-swing would hide the change).
        for entity in &parts {
            commands.entity(entity).despawn();
        }
        cloth.bodies = spawn_cloth(&mut commands, cloth.size, cloth.implicit);
        cloth.time = 0.0;
    }
}

fn orbit(orbit: Res<Orbit>, mut camera: Query<&mut Transform, With<Camera3d>>) {
    if let Ok(mut camera) = camera.single_mut() {
        let at = Vec3::new(orbit.yaw.sin(), 0.35, orbit.yaw.cos()) * orbit.distance;
        *camera = Transform::from_translation(at + Vec3::Y * 0.5)
            .looking_at(Vec3::new(0.0, 0.3, 0.0), Vec3::Y);
    }
}

/// The cloth's mesh from where its bodies are drawn this frame: two
/// triangles per square, normals averaged from the faces around each
/// vertex.
fn draw_cloth(cloth: Res<Cloth>, drawn: DrawnPositions, mut meshes: ResMut<Assets<Mesh>>) {
    let n = cloth.size;
    if cloth.bodies.len() != n * n {
        return;
    }
    let positions: Vec<Vec3> = cloth
        .bodies
        .iter()
        .map(|&e| drawn.get(e).unwrap_or(Vec3::ZERO))
        .collect();
    let mut normals = vec![Vec3::ZERO; n * n];
    let mut indices = Vec::with_capacity((n - 1) * (n - 1) * 6);
    for i in 0..n - 1 {
        for j in 0..n - 1 {
            let (a, b, c, d) = (
                i * n + j,
                i * n + j + 1,
                (i + 1) * n + j,
                (i + 1) * n + j + 1,
            );
            for [p, q, r] in [[a, c, b], [b, c, d]] {
                let face = (positions[q] - positions[p]).cross(positions[r] - positions[p]);
                for v in [p, q, r] {
                    normals[v] += face;
                }
                indices.extend([p as u32, q as u32, r as u32]);
            }
        }
    }
    let normals: Vec<[f32; 3]> = normals
        .into_iter()
        .map(|v| v.normalize_or(Vec3::Y).to_array())
        .collect();
    let positions: Vec<[f32; 3]> = positions.into_iter().map(|v| v.to_array()).collect();
    if let Some(mut mesh) = meshes.get_mut(&cloth.mesh) {
        mesh.insert_attribute(Mesh::ATTRIBUTE_POSITION, positions);
        mesh.insert_attribute(Mesh::ATTRIBUTE_NORMAL, normals);
        mesh.insert_indices(Indices::U32(indices));
    }
}

fn readout(
    cloth: Res<Cloth>,
    bodies: Query<(&Body, &Island)>,
    springs: Query<&Spring, With<Part>>,
    mut text: Query<&mut Text, With<Readout>>,
) {
    let Ok(mut text) = text.single_mut() else {
        return;
    };
    let passes = cloth
        .bodies
        .get(cloth.size + 1)
        .and_then(|&e| bodies.get(e).ok())
        .map_or(0, |(_, island)| island.substeps());
    // The largest stretch of a spring, against its rest length.
    let stretch = springs
        .iter()
        .filter_map(|s| {
            let (a, b) = (bodies.get(s.a).ok()?.0, bodies.get(s.b).ok()?.0);
            Some(a.position.distance(b.position) / s.rest_length - 1.0)
        })
        .fold(0.0f32, f32::max);
    let lowest = cloth
        .bodies
        .iter()
        .filter_map(|&e| bodies.get(e).ok())
        .map(|(b, _)| b.position.y)
        .fold(f32::INFINITY, f32::min);
    let finite = cloth
        .bodies
        .iter()
        .filter_map(|&e| bodies.get(e).ok())
        .all(|(b, _)| b.position.is_finite());
    **text = format!(
        "{} x {} cloth, {} springs\n\
         springs: {} (T), {} pass{}\n\
         wind: {} (W)\n\
         largest stretch: {:.1} %",
        cloth.size,
        cloth.size,
        springs.iter().count(),
        if cloth.implicit {
            "implicit"
        } else {
            "automatic substeps"
        },
        passes,
        if passes == 1 { "" } else { "es" },
        if cloth.wind { "on" } else { "off" },
        stretch * 100.0,
    );
    if support::capturing() {
        info!(
            "CLOTH t {:.3} bodies {} passes {passes} stretch {stretch} lowest {lowest} finite {}",
            cloth.time,
            cloth.bodies.len(),
            u8::from(finite)
        );
    }
}

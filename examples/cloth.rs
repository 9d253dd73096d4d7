//! A stiff cloth in 3D: the game's own mesh made soft, stepped by
//! implicit springs.
//!
//! `cargo run --release --example cloth` (a 64×64 cloth; add `-- --size
//! 40` for another side, 4 to 128)
//!
//! A square plane mesh of 64×64 vertices becomes cloth with one component,
//! [`SoftMesh`]: a body per vertex, springs along and across its triangles
//! (their stiffness set by a frequency, so the cloth stretches as much at
//! any size), its two top corners pinned, drawn back into the mesh every
//! frame. It hangs over a ball. The springs are stiff: the fastest mode of
//! the cloth is far past the explicit limit `ω·h < 2` at 64 Hz, so the
//! cloth's bodies get [`ImplicitSprings`] (backward Euler in one pass,
//! conjugate gradients with the multigrid preconditioner, to a tolerance of
//! 1e-3); press T to step it instead with the automatic substeps that hold
//! it stable, and compare the look and the step time in the physics panel
//! (the readout gives the passes).
//!
//! Keys: T toggles implicit springs and automatic substeps, W the wind,
//! R starts over, ←/→ orbit the camera, ↑/↓ zoom, F1 hides the physics
//! panel. Mouse: drag any body (left button).

mod support;

use bevy::core_pipeline::tonemapping::Tonemapping;
use bevy::prelude::*;
use bevy_euler_physics::prelude::*;
use support::parts::example_app;

/// The cloth's side, in metres, and its mass.
const SIDE: f32 = 2.0;
const MASS: f32 = 2.5;
/// The ball the cloth drapes over.
const BALL: Vec3 = Vec3::new(0.95, 0.45, -0.35);
const BALL_RADIUS: f32 = 0.45;
/// Contacts: the cloth touches the ball and the ground, not itself.
const CLOTH: u32 = 1;
const SOLID: u32 = 2;

#[derive(Resource)]
struct Cloth {
    size: usize,
    entity: Entity,
    implicit: bool,
    wind: bool,
    time: f32,
}

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
                (controls, substeps_when_explicit),
                (orbit, readout).chain().after(SoftMeshSystems::Draw),
            ),
        )
        .run();
}

/// The cloth: a plane mesh of `size × size` vertices, 1.6 m up, made soft
/// with its two top corners pinned where they are.
fn soft_cloth(size: usize, implicit: bool) -> SoftMesh {
    let spacing = SIDE / (size - 1) as f32;
    SoftMesh::default()
        .with_mass(SoftMass::Total(MASS))
        .with_stretch(9.0, 0.05)
        .with_bend(0.1)
        .with_drag(0.05)
        .with_radius(spacing * 0.4)
        .with_groups(CollisionGroups::new(CLOTH, SOLID))
        .implicit(implicit)
        // Each top corner held like a clothes peg: the vertices within
        // 5 cm of it (a single vertex would carry half the cloth's weight
        // through two springs).
        .pin(PinSelect::Where(PinTest(|p| {
            let corner = Vec2::new(SIDE / 2.0, -SIDE / 2.0);
            Vec2::new(p.x.abs(), p.z).distance(corner) < 0.05
        })))
}

fn setup(
    commands: &mut Commands,
    mut meshes: ResMut<Assets<Mesh>>,
    mut materials: ResMut<Assets<StandardMaterial>>,
    size: usize,
) {
    commands.spawn((Camera3d::default(), Tonemapping::None, Transform::default()));
    support::daylight(commands, 400.0);
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
    let plane = Plane3d::new(Vec3::Y, Vec2::splat(SIDE / 2.0))
        .mesh()
        .subdivisions(size as u32 - 2);
    let entity = commands
        .spawn((
            Mesh3d(meshes.add(plane)),
            MeshMaterial3d(materials.add(StandardMaterial {
                base_color: Color::srgb(0.95, 0.8, 0.3),
                double_sided: true,
                cull_mode: None,
                perceptual_roughness: 0.8,
                ..default()
            })),
            Transform::from_xyz(0.0, 1.6, 0.0),
            soft_cloth(size, true),
        ))
        .id();
    commands.spawn((Readout, support::readout(Color::srgb(0.05, 0.05, 0.1))));
    commands.insert_resource(Cloth {
        size,
        entity,
        implicit: true,
        wind: false,
        time: 0.0,
    });
}

/// With explicit springs, the automatic substeps that hold the cloth
/// stable, on one of its bodies (they count for its island).
fn substeps_when_explicit(
    cloth: Res<Cloth>,
    built: Query<&SoftMeshParts, Changed<SoftMeshParts>>,
    mut commands: Commands,
) {
    if let Ok(parts) = built.get(cloth.entity)
        && !cloth.implicit
        && let Some(&body) = parts.bodies.get(cloth.size + 1)
    {
        commands.entity(body).insert(AutoSubsteps);
    }
}

/// Gusts of wind along x, when on: a force on every body, written before
/// the step (so it acts for the whole step, at any pass count).
fn blow(
    time: Res<Time<Fixed>>,
    mut cloth: ResMut<Cloth>,
    mut forces: Query<&mut AccumulatedForce, With<PartOfSoftMesh>>,
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
        // Start over: a new `SoftMesh` builds the cloth anew (a cloth
        // switched mid-swing would hide the change).
        commands
            .entity(cloth.entity)
            .insert(soft_cloth(cloth.size, cloth.implicit));
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

fn readout(
    cloth: Res<Cloth>,
    soft: Query<&SoftMeshParts>,
    bodies: Query<(&Body, &Island)>,
    springs: Query<&Spring>,
    mut text: Query<&mut Text, With<Readout>>,
) {
    let (Ok(mut text), Ok(parts)) = (text.single_mut(), soft.get(cloth.entity)) else {
        return;
    };
    let passes = parts
        .bodies
        .get(cloth.size + 1)
        .and_then(|&e| bodies.get(e).ok())
        .map_or(0, |(_, island)| island.substeps());
    // The largest stretch of an edge of the mesh, against its rest length
    // (the bending springs, across the edges, lengthen as the cloth
    // shears and folds, not as it stretches).
    let stretch = springs
        .iter_many(&parts.springs[..parts.edge_springs])
        .filter_map(|s| {
            let (a, b) = (bodies.get(s.a).ok()?.0, bodies.get(s.b).ok()?.0);
            Some(a.position.distance(b.position) / s.rest_length - 1.0)
        })
        .fold(0.0f32, f32::max);
    let cloth_bodies = || bodies.iter_many(&parts.bodies).map(|(b, _)| b);
    let lowest = cloth_bodies()
        .map(|b| b.position.y)
        .fold(f32::INFINITY, f32::min);
    let finite = cloth_bodies().all(|b| b.position.is_finite());
    **text = format!(
        "{} x {} cloth, {} springs\n\
         springs: {} (T), {} pass{}\n\
         wind: {} (W)\n\
         largest stretch of an edge: {:.1} %",
        cloth.size,
        cloth.size,
        parts.springs.len(),
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
            parts.bodies.len(),
            u8::from(finite)
        );
    }
}

//! Ropes of springs hanging from fixed anchors and swinging.
//!
//! `cargo run --release --example spring_rope`
//!
//! Five ropes, soft to stiff, each a chain of bodies joined by damped
//! springs, and each its own island. The physics steps at 64 Hz; every rope
//! has `AutoSubsteps`, so each runs the fewest passes that keep it stable (a
//! chain of masses `m` and springs `k` is stable while `2·√(k/m)·h' < 2`):
//! the soft ropes run 1 pass per step, the stiffest several, and the text
//! shows each rope's count and load. Ropes that come to rest fall asleep
//! (drawn dimmer) and wake when kicked. Every frame draws the bodies between
//! their last two fixed positions, so the motion is smooth at any frame
//! rate. Press Space to kick every rope sideways, G to flip gravity.

use bevy::prelude::*;
use bevy_euler_physics::prelude::*;

/// Pixels per metre: the physics works in metres.
const SCALE: f32 = 100.0;

/// One rope: where it hangs, how many links, how stiff, its colour.
struct RopeSpec {
    x: f32,
    links: usize,
    stiffness: f32,
    color: Color,
}

#[derive(Component)]
struct RopeColor(Color);

/// A rope's first body and stiffness, for the readout.
#[derive(Component)]
struct RopeHead {
    stiffness: f32,
}

/// The readout text.
#[derive(Component)]
struct Readout;

fn main() {
    App::new()
        .add_plugins((
            DefaultPlugins.set(WindowPlugin {
                primary_window: Some(Window {
                    title: "bevy_euler_physics: spring rope".into(),
                    resolution: (1280, 720).into(),
                    ..default()
                }),
                ..default()
            }),
            EulerPhysicsPlugin,
        ))
        .insert_resource(ClearColor(Color::srgb(0.08, 0.09, 0.12)))
        .add_systems(Startup, setup)
        .add_systems(
            Update,
            (
                controls.before(PhysicsSystems::Interpolate),
                draw_springs.after(PhysicsSystems::Interpolate),
                readout,
            ),
        )
        .run();
}

fn setup(
    mut commands: Commands,
    mut meshes: ResMut<Assets<Mesh>>,
    mut materials: ResMut<Assets<ColorMaterial>>,
) {
    commands.spawn((
        Camera2d,
        Projection::Orthographic(OrthographicProjection {
            scale: 1.0 / SCALE,
            ..OrthographicProjection::default_2d()
        }),
        Transform::from_xyz(0.0, -0.9, 0.0),
    ));
    commands.spawn((
        Readout,
        Text::new("spring_rope: Space kicks the ropes, G flips gravity"),
        TextFont {
            font_size: FontSize::Px(18.0),
            ..default()
        },
        Node {
            position_type: PositionType::Absolute,
            left: Val::Px(12.0),
            bottom: Val::Px(10.0),
            ..default()
        },
    ));

    let ropes = [
        RopeSpec {
            x: -4.8,
            links: 24,
            stiffness: 500.0,
            color: Color::srgb(0.95, 0.55, 0.35),
        },
        RopeSpec {
            x: -2.4,
            links: 22,
            stiffness: 800.0,
            color: Color::srgb(0.95, 0.8, 0.3),
        },
        RopeSpec {
            x: 0.0,
            links: 20,
            stiffness: 2000.0,
            color: Color::srgb(0.45, 0.85, 0.45),
        },
        RopeSpec {
            x: 2.4,
            links: 22,
            stiffness: 5000.0,
            color: Color::srgb(0.35, 0.7, 0.95),
        },
        RopeSpec {
            x: 4.8,
            links: 24,
            stiffness: 10000.0,
            color: Color::srgb(0.7, 0.5, 0.95),
        },
    ];
    let anchor_mesh = meshes.add(Rectangle::new(0.3, 0.08));
    let anchor_material = materials.add(Color::srgb(0.8, 0.8, 0.85));
    let ball = meshes.add(Circle::new(0.05));
    let link = 0.12;
    for rope in ropes {
        let material = materials.add(rope.color);
        let top = Vec3::new(rope.x, 2.2, 0.0);
        let mut prev = commands
            .spawn((
                Body::fixed(top),
                Mesh2d(anchor_mesh.clone()),
                MeshMaterial2d(anchor_material.clone()),
            ))
            .id();
        for i in 1..=rope.links {
            // Start each rope swung out to one side, so it swings.
            let along = Vec3::new(0.5, -0.87, 0.0) * (link * i as f32);
            let last = i == rope.links;
            let mass = if last { 1.0 } else { 0.2 };
            let size = if last { 2.0 } else { 1.0 };
            let mut bob = commands.spawn((
                Body::new(mass).with_position(top + along),
                Damping(0.05),
                // Only the scale matters: the plugin sets the translation.
                Transform::from_scale(Vec3::splat(size)),
                Mesh2d(ball.clone()),
                MeshMaterial2d(material.clone()),
            ));
            if i == 1 {
                // One body is enough: the whole island follows it.
                bob.insert((
                    AutoSubsteps,
                    RopeHead {
                        stiffness: rope.stiffness,
                    },
                ));
            }
            let bob = bob.id();
            commands.spawn((
                Spring::new(prev, bob, link, rope.stiffness).with_damping(0.5),
                RopeColor(rope.color),
            ));
            prev = bob;
        }
    }
}

/// Springs as lines between the drawn (interpolated) positions of their
/// ends; dimmer while asleep.
fn draw_springs(
    springs: Query<(&Spring, &RopeColor)>,
    transforms: Query<(&Transform, Has<Sleeping>), With<Body>>,
    mut gizmos: Gizmos,
) {
    for (spring, color) in &springs {
        if let (Ok((a, _)), Ok((b, asleep))) = (transforms.get(spring.a), transforms.get(spring.b))
        {
            let color = if asleep {
                color.0.with_alpha(0.35)
            } else {
                color.0
            };
            gizmos.line_2d(a.translation.truncate(), b.translation.truncate(), color);
        }
    }
}

/// Each rope's passes per step, stability load and sleep state.
fn readout(
    heads: Query<(&RopeHead, &Island, Has<Sleeping>)>,
    mut text: Single<&mut Text, With<Readout>>,
) {
    let mut lines = String::from(
        "spring_rope: Space kicks the ropes, G flips gravity. Each rope is an island:",
    );
    let mut ropes: Vec<_> = heads.iter().collect();
    ropes.sort_by(|a, b| a.0.stiffness.total_cmp(&b.0.stiffness));
    for (head, island, asleep) in ropes {
        lines.push_str(&format!(
            "\n  k = {:>5}: {} pass{}, load {:.2}{}",
            head.stiffness,
            island.substeps(),
            if island.substeps() == 1 { "" } else { "es" },
            island.load(),
            if asleep { ", asleep" } else { "" }
        ));
    }
    if text.0 != lines {
        text.0 = lines;
    }
}

fn controls(
    keys: Res<ButtonInput<KeyCode>>,
    mut bodies: Query<&mut Body>,
    mut gravity: ResMut<Gravity>,
) {
    if keys.just_pressed(KeyCode::Space) {
        for mut body in &mut bodies {
            if !body.is_fixed() {
                body.velocity += Vec3::new(3.0, 1.0, 0.0);
            }
        }
    }
    if keys.just_pressed(KeyCode::KeyG) {
        gravity.0 = -gravity.0;
    }
}

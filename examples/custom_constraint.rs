//! Your own constraint in the physics step: beads threaded on rings.
//!
//! `cargo run --release --example custom_constraint`
//!
//! A constraint is a system in `SubstepSystems::SolveConstraints` (in the
//! `PhysicsSubstep` schedule). It runs after the velocity update and before
//! the position update, once per pass, and changes velocities so that the
//! coming drift `x ← x + h·v` keeps the rule. `SubstepBodies` gives it the
//! bodies of the current pass and the pass's step `h`, so it is right under
//! any substep count (the right ring runs 4 substeps).
//!
//! Here the rule is "stay on your ring": each bead loses the part of its
//! velocity that points off the ring, and is aimed so that the drift ends
//! on the circle. Two beads are also joined by a spring, so the constraint
//! and the spring work on the same bodies. Press Space to flick the beads.

mod support;

use bevy::prelude::*;
use bevy_euler_physics::prelude::*;

/// Pixels per metre.
const SCALE: f32 = 110.0;

/// Keeps a body on a circle in the xy plane.
#[derive(Component, Clone, Copy)]
struct OnRing {
    center: Vec3,
    radius: f32,
}

fn main() {
    App::new()
        .add_plugins((
            DefaultPlugins.set(WindowPlugin {
                primary_window: Some(Window {
                    title: "bevy_euler_physics: custom constraint".into(),
                    resolution: (1280, 720).into(),
                    ..default()
                }),
                ..default()
            }),
            EulerPhysicsPlugin,
            support::CapturePlugin,
        ))
        .insert_resource(ClearColor(Color::srgb(0.08, 0.09, 0.12)))
        .add_systems(Startup, setup)
        .add_systems(
            PhysicsSubstep,
            stay_on_ring.in_set(SubstepSystems::SolveConstraints),
        )
        .add_systems(
            Update,
            (
                flick.before(InterpolationSystems::Interpolate),
                draw.after(InterpolationSystems::Interpolate),
            ),
        )
        .run();
}

/// The constraint: for each bead of this pass, remove the velocity off the
/// ring and aim the drift at the circle.
fn stay_on_ring(mut beads: SubstepBodies<(&mut Body, &OnRing)>) {
    let h = beads.dt();
    for (mut body, ring) in beads.iter_mut() {
        let offset = body.position - ring.center;
        let distance = offset.length();
        if distance <= f32::EPSILON {
            continue;
        }
        let radial = offset / distance;
        let velocity = body.velocity;
        let tangential = velocity - velocity.dot(radial) * radial;
        // Moving h·v_t along the tangent ends √(d² + h²v_t²) from the
        // centre; pick the radial speed that lands on the circle instead.
        let reach = (ring.radius * ring.radius - (h * tangential).length_squared())
            .max(0.0)
            .sqrt();
        body.velocity = tangential + radial * (reach - distance) / h;
    }
}

fn setup(mut commands: Commands) {
    commands.spawn(support::camera(SCALE, Vec2::ZERO));
    commands.spawn((
        Text::new(
            "custom_constraint: beads held on rings by a user system in SolveConstraints \
             (right ring: 4 substeps). Space flicks them.",
        ),
        TextFont {
            font_size: FontSize::Px(18.0),
            ..default()
        },
        Node {
            position_type: PositionType::Absolute,
            left: Val::Px(12.0),
            top: Val::Px(10.0),
            ..default()
        },
    ));

    let left = OnRing {
        center: Vec3::new(-3.5, 0.0, 0.0),
        radius: 1.5,
    };
    let middle = OnRing {
        center: Vec3::new(0.0, 0.0, 0.0),
        radius: 1.5,
    };
    let right = OnRing {
        center: Vec3::new(3.5, 0.0, 0.0),
        radius: 1.5,
    };
    // A lone bead, started at the top with a push.
    commands.spawn((
        Body::new(1.0)
            .with_position(left.center + Vec3::Y * left.radius)
            .with_velocity(Vec3::X * 0.5),
        left,
    ));
    // Two beads on the middle ring, joined by a spring across it.
    let a = commands
        .spawn((
            Body::new(1.0).with_position(middle.center + Vec3::X * middle.radius),
            Damping(0.05),
            middle,
        ))
        .id();
    let b = commands
        .spawn((
            Body::new(0.5).with_position(middle.center + Vec3::Y * middle.radius),
            Damping(0.05),
            middle,
        ))
        .id();
    commands.spawn(Spring::new(a, b, 1.0, 40.0));
    // A fast bead with 4 substeps.
    commands.spawn((
        Body::new(1.0)
            .with_position(right.center - Vec3::Y * right.radius)
            .with_velocity(Vec3::X * 9.0),
        right,
        Substeps(4),
        SleepingDisabled,
    ));
}

fn flick(keys: Res<ButtonInput<KeyCode>>, mut beads: Query<&mut Body, With<OnRing>>) {
    if keys.just_pressed(KeyCode::Space) {
        for mut body in &mut beads {
            // Along +x; the constraint keeps only the part along the ring.
            body.velocity += Vec3::X * 4.0;
        }
    }
}

fn draw(
    beads: Query<(&Transform, &OnRing, Has<Sleeping>)>,
    springs: Query<&Spring>,
    transforms: Query<&Transform>,
    mut gizmos: Gizmos,
) {
    for (transform, ring, asleep) in &beads {
        gizmos.circle_2d(
            ring.center.truncate(),
            ring.radius,
            Color::srgb(0.4, 0.4, 0.5),
        );
        let color = if asleep {
            Color::srgb(0.4, 0.5, 0.9)
        } else {
            Color::srgb(0.95, 0.7, 0.3)
        };
        gizmos.circle_2d(transform.translation.truncate(), 0.12, color);
    }
    for spring in &springs {
        if let (Ok(a), Ok(b)) = (transforms.get(spring.a), transforms.get(spring.b)) {
            gizmos.line_2d(
                a.translation.truncate(),
                b.translation.truncate(),
                Color::srgb(0.5, 0.85, 0.5),
            );
        }
    }
}

//! bevy_rapier2d 0.36.0 (rapier2d 0.35): point masses without colliders,
//! joined by spring joints.
//!
//! - Hanging body: `RigidBody::Dynamic`, `Transform` at its position,
//!   `AdditionalMassProperties::Mass(1.0)` (no collider, so no angular
//!   inertia: rapier then leaves its rotation alone), `Sleeping::disabled()`,
//!   and the spring to the body above as `ImpulseJoint::new(above,
//!   SpringJointBuilder::new(REST, K, C))` (rest length, stiffness N/m,
//!   damping N·s/m: rapier's `SpringJoint` is a force-based motor on the
//!   distance, solved implicitly).
//! - Anchor: `RigidBody::Fixed` at its position.
//! - Gravity `(0, -9.81)`; `RapierPhysicsPlugin::<NoUserData>::default()
//!   .in_fixed_schedule()` (in `FixedUpdate`) with `TimestepMode::Fixed {
//!   dt: H, substeps: 1 }`, and `num_solver_iterations` as given; Bevy's
//!   `TransformPlugin`, which rapier needs.

use bevy::math::Vec2;
use bevy::prelude::*;
use bevy_rapier2d::prelude::*;
use bevy_rapier2d::rapier::dynamics::IntegrationParameters;

use crate::apps::{Probe, minimal_app, single_threaded_fixed_main, warm};
use crate::scene::{C, G, H, K, REST, SPACING, swinging};

/// rapier's default `num_solver_iterations`.
pub fn default_iterations() -> usize {
    IntegrationParameters::default().num_solver_iterations
}

/// rapier with `iterations` solver iterations per step, on one thread,
/// gravity `G`, no scene yet.
pub fn bare_app(iterations: usize) -> App {
    let mut app = minimal_app();
    // Before the plugin, which only adds a default mode if there is none.
    app.insert_resource(TimestepMode::Fixed { dt: H, substeps: 1 });
    let initialization = RapierContextInitialization::InitializeDefaultRapierContext {
        integration_parameters: IntegrationParameters {
            dt: H,
            num_solver_iterations: iterations,
            ..default()
        },
        rapier_configuration: RapierConfiguration {
            gravity: G.truncate(),
            ..RapierConfiguration::new(1.0)
        },
    };
    // Bevy's `TransformPlugin` too: rapier runs Bevy's transform
    // propagation in its own sync set, and that needs the plugin's
    // resource (the other rows' apps run without it; it adds nothing to
    // `FixedMain`).
    app.add_plugins((
        TransformPlugin,
        RapierPhysicsPlugin::<NoUserData>::default()
            .with_custom_initialization(initialization)
            .in_fixed_schedule(),
    ));
    single_threaded_fixed_main(&mut app);
    app
}

/// The scene's app with `iterations` solver iterations per step, warmed.
pub fn app(ropes: usize, links: usize, iterations: usize) -> App {
    let mut app = bare_app(iterations);
    for r in 0..ropes {
        let x = r as f32 * SPACING;
        let world = app.world_mut();
        let mut prev = world
            .spawn((RigidBody::Fixed, Transform::from_xyz(x, 0.0, 0.0)))
            .id();
        for s in 1..=links {
            let start = swinging(x, s);
            let e = world
                .spawn((
                    RigidBody::Dynamic,
                    Transform::from_translation(start),
                    AdditionalMassProperties::Mass(1.0),
                    Sleeping::disabled(),
                    ImpulseJoint::new(prev, SpringJointBuilder::new(REST, K, C)),
                ))
                .id();
            if r == 0 && s == links {
                world.insert_resource(Probe {
                    body: e,
                    start: start.truncate(),
                });
            }
            prev = e;
        }
    }
    warm(&mut app);
    app
}

/// The moving bodies' positions (as rapier writes them back).
pub fn positions(world: &mut World) -> Vec<(Entity, Vec2)> {
    world
        .query::<(Entity, &RigidBody, &Transform)>()
        .iter(world)
        .filter(|(_, body, _)| matches!(body, RigidBody::Dynamic))
        .map(|(e, _, t)| (e, t.translation.truncate()))
        .collect()
}

//! avian2d 0.7.0: point masses without colliders, joined by compliant
//! distance joints with joint damping.
//!
//! - Hanging body: `RigidBody::Dynamic`, `Position`, `Mass(1.0)` and
//!   `AngularInertia(1.0)` (without a collider avian computes no mass or
//!   inertia, and a dynamic body needs both; the joints pull at the bodies'
//!   centres, so the inertia never acts), `SleepingDisabled`.
//! - Anchor: `RigidBody::Static` at its position.
//! - Spring: `DistanceJoint` between consecutive bodies with both limits at
//!   the rest length (so it pulls and pushes toward it) and compliance
//!   `1 / K` (avian's compliance is the inverse of stiffness, m/N; solved
//!   by XPBD, one iteration per substep, which is an implicit spring of
//!   stiffness `K`), and `JointDamping { linear: C (w1 + w2), angular: 0 }`:
//!   avian's joint damping changes the relative velocity by
//!   `linear · dt` of itself per substep, shared by inverse mass, so a
//!   dashpot of `C` N·s/m is `linear = C (w1 + w2)` (2 between two hanging
//!   bodies, 1 below the anchor). It damps the whole relative velocity,
//!   not only its part along the joint as the spring's damper does.
//! - Gravity `(0, -9.81)`, `PhysicsPlugins::default()` (in
//!   `FixedPostUpdate`), `SubstepCount` as given.

use avian2d::prelude::*;
use bevy::math::Vec2;
use bevy::prelude::*;

use crate::apps::{Probe, minimal_app, single_threaded_fixed_main, warm};
use crate::scene::{C, G, K, REST, SPACING, swinging};

/// avian's default substep count.
pub const DEFAULT_SUBSTEPS: u32 = 6;

/// avian with `substeps` substeps per step, on one thread, gravity `G`,
/// no scene yet.
pub fn bare_app(substeps: u32) -> App {
    let mut app = minimal_app();
    app.add_plugins(PhysicsPlugins::default())
        .insert_resource(Gravity(G.truncate()))
        .insert_resource(SubstepCount(substeps));
    single_threaded_fixed_main(&mut app);
    app
}

/// The scene's app with `substeps` substeps per step, warmed.
pub fn app(ropes: usize, links: usize, substeps: u32) -> App {
    let mut app = bare_app(substeps);
    for r in 0..ropes {
        let x = r as f32 * SPACING;
        let world = app.world_mut();
        let mut prev = world
            .spawn((RigidBody::Static, Position(Vec2::new(x, 0.0))))
            .id();
        // Inverse mass of the body above.
        let mut w_prev = 0.0;
        for s in 1..=links {
            let start = swinging(x, s).truncate();
            let e = world
                .spawn((
                    RigidBody::Dynamic,
                    Position(start),
                    Mass(1.0),
                    AngularInertia(1.0),
                    SleepingDisabled,
                ))
                .id();
            world.spawn((
                DistanceJoint::new(prev, e)
                    .with_limits(REST, REST)
                    .with_compliance(1.0 / K),
                JointDamping {
                    linear: C * (w_prev + 1.0),
                    angular: 0.0,
                },
            ));
            if r == 0 && s == links {
                world.insert_resource(Probe { body: e, start });
            }
            prev = e;
            w_prev = 1.0;
        }
    }
    warm(&mut app);
    app
}

/// The moving bodies' positions.
pub fn positions(world: &mut World) -> Vec<(Entity, Vec2)> {
    world
        .query::<(Entity, &RigidBody, &Position)>()
        .iter(world)
        .filter(|(_, body, _)| body.is_dynamic())
        .map(|(e, _, p)| (e, p.0))
        .collect()
}

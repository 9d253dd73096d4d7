//! Shapes of the game's world that bodies touch: walls, ramps, platforms,
//! a character's limbs.
//!
//! An [`Obstacle`] holds one of Bevy's primitives, a [`TriangleMesh`]
//! (a level's geometry) or a [`HeightField`] (a terrain), and is placed by
//! its entity's transform. Round bodies (those with a
//! [`Radius`](crate::Radius)) meet it as they meet a
//! [`GroundPlane`](crate::GroundPlane): found each pass within the
//! speculative margin, with the obstacle's
//! [`ContactMaterial`](crate::ContactMaterial) and
//! [`CollisionGroups`](crate::CollisionGroups). An obstacle that moves is
//! swept through each fixed step from where the last one left it
//! ([`ObstacleState`]) and pushes bodies with the velocity of that sweep
//! (or its [`ObstacleVelocity`]); obstacles never move because of bodies
//! within a step, but an [`ObstacleReaction`] tells what the bodies pushed
//! one with, for a game (or a bridge to another engine) to move it by.
//! They join no island: a pile resting on one sleeps as on the ground, and
//! wakes when the obstacle moves, changes, or goes.
//!
//! ```
//! use bevy::prelude::*;
//! use bevy_euler_physics::prelude::*;
//!
//! let mut app = App::new();
//! app.add_plugins((MinimalPlugins, TransformPlugin, EulerPhysicsPlugin));
//! let world = app.world_mut();
//! // A ball dropped on a box whose top is at y = 1.
//! world.spawn((Obstacle::from(Cuboid::new(2.0, 1.0, 2.0)), Transform::from_xyz(0.0, 0.5, 0.0)));
//! let ball = world
//!     .spawn((Body::new(1.0).with_position(Vec3::new(0.0, 1.5, 0.0)), Radius(0.1)))
//!     .id();
//! for _ in 0..120 {
//!     app.world_mut().run_schedule(FixedUpdate);
//! }
//! let y = app.world().get::<Body>(ball).unwrap().position.y;
//! assert!((y - 1.1).abs() < 0.002, "rests at its radius above the box: {y}");
//! ```

pub use crate::data::obstacles::{
    HeightField, Obstacle, ObstacleMass, ObstacleReaction, ObstacleState, ObstacleVelocity, TiedTo,
    TriangleMesh,
};
pub use crate::solver::obstacles::ObstaclePoses;

//! Large worlds: a floating origin that keeps the simulated scene near
//! local zero, where `f32` is precise.
//!
//! An `f32` has 24 significant bits: 1 km from zero it resolves 0.12 mm,
//! 1 000 km out only 6 cm, and a rope there jitters and never rests. Every
//! position the plugin holds is therefore *local*: an offset from
//! [`PhysicsOrigin::position`], which is an `f64` world position. Put
//! [`FloatingOrigin`] on the entity the game follows (the player, the ship,
//! the camera); at the end of each fixed step, when that entity is more
//! than a [cell](PhysicsOrigin::cell) from local zero on an axis, the
//! plugin moves the origin by whole cells to bring it back within half a
//! cell, and every local position by the opposite:
//!
//! - every [`Body`](crate::Body), awake or asleep, with its
//!   [`PositionHistory`](crate::PositionHistory) (so a body drawn between
//!   two steps neither jumps nor streaks) and its `Transform`;
//! - every [`GroundPlane`](crate::GroundPlane) (its offset along its
//!   normal) and its `Transform`;
//! - the solver's own copy of the positions, so nothing is gathered again;
//! - the `Transform` of each [`ShiftWithOrigin`] entity (the level's
//!   meshes, markers), and of the [`FloatingOrigin`] itself when it has no
//!   body.
//!
//! It then sends [`OriginShifted`], for what else lives in local
//! coordinates (trails, a camera that you move yourself, particles).
//! Joins, limits and contacts hold no positions, so they need nothing.
//!
//! **Exact.** A cell is a power of two metres (default 512 m), so a shift
//! is a whole number of cells, and subtracting it from a position near the
//! floating origin is exact: the scene around it keeps every bit of its
//! relative positions, and a scene shifted and stepped gives the same bits
//! as the same scene built at the new origin. Velocities, sleep states,
//! islands and rest timers are untouched; a shift wakes nothing and is not
//! a write of yours (no `Changed<Body>`). Bodies far from the floating
//! origin (beyond a few cells) lose the bits that the larger local
//! coordinates cannot hold, as they would anyway.
//!
//! **When.** The shift is the last stage of [`PhysicsSystems::Step`](crate::PhysicsSystems::Step):
//! your `Finish` systems, the interpolation in `Update` and everything
//! after see the new origin. [`PhysicsSnapshot`](crate::PhysicsSnapshot)
//! saves the origin and a restore puts it back (moving planes and marked
//! entities with it); under rollback the origin and the ground planes are
//! rolled back with the bodies.
//!
//! # Example
//!
//! ```
//! use bevy::math::DVec3;
//! use bevy::prelude::*;
//! use bevy_euler_physics::prelude::*;
//!
//! let mut app = App::new();
//! app.add_plugins((MinimalPlugins, EulerPhysicsPlugin))
//!     .insert_resource(Gravity(Vec3::ZERO));
//! // A probe leaving at 8 km/s, followed by the origin.
//! let probe = app
//!     .world_mut()
//!     .spawn((Body::new(1.0).with_velocity(Vec3::new(8000.0, 0.0, 0.0)), FloatingOrigin))
//!     .id();
//! for _ in 0..64 * 10 {
//!     app.world_mut().run_schedule(FixedUpdate);
//! }
//! let origin = *app.world().resource::<PhysicsOrigin>();
//! let local = app.world().get::<Body>(probe).unwrap().position;
//! // 80 km out, yet within half a cell of local zero.
//! assert!(origin.position.x > 79_000.0);
//! assert!(local.x.abs() <= origin.cell);
//! assert!((origin.world(local).x - 80_000.0).abs() < 0.5);
//! ```
//!
//! # With big_space
//!
//! [big_space](https://crates.io/crates/big_space) places every entity in
//! a grid of `i64` cells with an `f32` offset, and its own floating origin
//! rebases what is drawn. The solver needs one local frame shared by every
//! body it steps (springs and contacts subtract positions), which
//! [`PhysicsOrigin`] is. A game using big_space can keep its physics
//! entities outside big_space's grids, in this frame, and move its
//! big_space origin on each [`OriginShifted`]; see the README.

pub use crate::data::origin::{FloatingOrigin, OriginShifted, PhysicsOrigin, ShiftWithOrigin};

//! The constraint hook and the built-in constraints: rigid rods
//! ([`DistanceConstraint`]) and contacts of round bodies ([`Radius`]) with
//! planes ([`GroundPlane`]).
//!
//! Both are solved on velocities, in
//! [`PhysicsSystems::SolveConstraints`](crate::PhysicsSystems::SolveConstraints):
//! after the kick, before the drift. Each pass runs
//! [`ConstraintSettings::iterations`] rounds of sequential impulses over the
//! pass's rods and contacts, in a fixed order (so results do not depend on
//! the thread count):
//!
//! - **Rod** between `a` and `b` of length `L`, along `n = (x_b − x_a)/|…|`:
//!   the relative velocity along `n` is driven to
//!   `(√(L² − h²·v_t²) − L)/h − β·C/h`, where `v_t` is the relative
//!   tangential velocity (the first term cancels the lengthening a turn of
//!   `h·v_t` causes), `C = |x_b − x_a| − L` the length error and `β` the
//!   [`position_bias`](ConstraintSettings::position_bias). The impulse is
//!   shared by inverse mass, so momentum is conserved.
//! - **Contact** of a body of radius `r` with a half-space `n·x ≥ d`: with
//!   the gap `s = n·x − d − r` and the normal speed `v_n = n·v`, a contact
//!   exists when `s + h·v_n < 0` (the drift would cross the plane). The
//!   normal speed becomes at least `−s/h` (reach the plane, not cross it),
//!   `−e·v_n` when approaching faster than
//!   [`bounce_threshold`](ConstraintSettings::bounce_threshold) (restitution
//!   `e`), and at least `−β·s/h` when already inside. Coulomb friction caps
//!   the tangential impulse at `μ` times the normal one, so sliding bodies
//!   stop and resting ones stay.
//!
//! Rods join islands like springs (and wake them when added, changed or
//! removed); contacts do not join anything.
//!
//! # Your own constraints
//!
//! Add a system to `SolveConstraints` that changes the velocities of the
//! bodies [`SubstepBodies`](crate::SubstepBodies) yields; see the
//! `custom_constraint` example.
//!
//! # Example
//!
//! ```
//! use bevy::prelude::*;
//! use bevy_euler_physics::prelude::*;
//!
//! let mut app = App::new();
//! app.add_plugins((MinimalPlugins, EulerPhysicsPlugin));
//! let world = app.world_mut();
//! world.spawn(GroundPlane::horizontal(0.0));
//! let anchor = world.spawn(Body::fixed(Vec3::new(0.0, 3.0, 0.0))).id();
//! let bob = world
//!     .spawn((Body::new(1.0).with_position(Vec3::new(1.0, 3.0, 0.0)), Radius(0.1)))
//!     .id();
//! world.spawn(DistanceConstraint::new(anchor, bob, 1.0));
//! for _ in 0..100 {
//!     app.world_mut().run_schedule(FixedUpdate);
//! }
//! let bob = app.world().get::<Body>(bob).unwrap();
//! assert!((bob.position.distance(Vec3::new(0.0, 3.0, 0.0)) - 1.0).abs() < 0.01);
//! ```

pub use crate::data::constraints::{ConstraintSettings, DistanceConstraint, GroundPlane, Radius};

//! The constraint hook and the built-in constraints: rigid rods
//! ([`DistanceConstraint`]) and contacts of round bodies ([`Radius`]) with
//! planes ([`GroundPlane`]) and with each other.
//!
//! Both are solved on velocities, in
//! [`SubstepSystems::SolveConstraints`](crate::SubstepSystems::SolveConstraints):
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
//! - **Contact** of two round bodies with radii summing to `R`: the same,
//!   along `n = (x_b − x_a)/|…|`, with the gap `s = |x_b − x_a| − R` and
//!   the relative normal speed `v_n = n·(v_b − v_a)`; the impulse is shared
//!   by inverse mass, so momentum is conserved, and no bounce is faster
//!   than the approach, so no energy is added. Restitution and friction
//!   come from each body's [`ContactMaterial`], combined per pair (the
//!   larger restitution, the geometric mean of the frictions).
//!
//! # Which bodies touch
//!
//! Any two bodies with a [`Radius`] touch (dynamic against dynamic or
//! fixed), except bodies joined directly by a spring or a rod and bodies
//! whose [`CollisionGroups`] leave each other out. Once per fixed step a
//! broad phase on a uniform grid (sized from the radii; O(n) on an even
//! scene) lists the pairs within reach of each other: within
//! `r_a + r_b` plus a margin of a tenth of each radius and the distance
//! each body covers in the step, so a fast body meets what it would pass
//! through within the step. Each pass then finds which of those pairs
//! touch, as for planes.
//!
//! Rods join islands like springs (and wake them when added, changed or
//! removed). Bodies within reach of each other share an island for as long
//! as they are: the same pass count and the same sleep. An awake body that
//! comes within reach of a sleeping one wakes its island
//! ([`WakeCause::Touched`](crate::WakeCause::Touched)). Islands follow the
//! bodies' positions alone, so a snapshot restore or a rollback finds the
//! same islands as the run it came from.
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

pub use crate::data::constraints::{
    AngleLimit, CollisionGroups, ConstraintSettings, ContactMaterial, DistanceConstraint,
    DistanceLimit, GroundPlane, Radius,
};
pub use crate::data::contacts::{ContactForces, PairForce};

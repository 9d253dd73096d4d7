//! Bad input: what is checked, how it is reported, and how it recovers.
//!
//! Nothing the user writes makes the step panic or spreads NaN. A body or
//! spring with invalid values is reported once — a `warn!` log and a
//! [`PhysicsWarning`] message, both naming the entity — and gets a
//! [`PhysicsError`] component that keeps it out of the step. The plugin
//! checks the entities that carry one at the start of every fixed step and
//! removes the component once the values are valid again.
//!
//! Every check reports alike whether the bodies and joins it concerns are
//! awake or asleep: a bad value put on a sleeping body is reported in the
//! next step, as on an awake one (a `Damping`, inserted or changed in
//! place, at the step's end; a `Substeps` or `SleepThreshold` at its
//! start), without waking its island; edits that wake an island (a body written, a
//! spring, rod or limit inserted, a `Radius` changed) are checked as the
//! island wakes. The reports about how an island steps
//! ([`PhysicsIssue::ImplicitNotConverged`], [`PhysicsIssue::ImplicitFailed`],
//! [`PhysicsIssue::EnergyGrowth`]) come once it steps, and name the
//! island by its entity of lowest index, however it got its slots.
//!
//! ```
//! use bevy::prelude::*;
//! use bevy_euler_physics::prelude::*;
//!
//! let mut app = App::new();
//! app.add_plugins((MinimalPlugins, EulerPhysicsPlugin));
//! let anchor = app.world_mut().spawn(Body::fixed(Vec3::ZERO)).id();
//! let bob = app.world_mut().spawn(Body::new(1.0).with_position(-Vec3::Y)).id();
//! app.world_mut().spawn(Spring::new(anchor, bob, 1.0, 50.0));
//! app.world_mut().entity_mut(bob).insert(Sleeping::default());
//! // A fixed step per update, then the island sleeps.
//! app.insert_resource(bevy::time::TimeUpdateStrategy::FixedTimesteps(1));
//! for _ in 0..3 {
//!     app.update();
//! }
//! assert!(app.world().get::<Sleeping>(bob).is_some());
//! // A negative damping on the anchor of the sleeping island.
//! app.world_mut().entity_mut(anchor).insert(Damping(-1.0));
//! app.update();
//! assert!(app.world().get::<PhysicsError>(anchor).is_some());
//! assert!(app.world().get::<Sleeping>(bob).is_some(), "nothing woke");
//! ```

pub use crate::data::issues::{
    MeshProblem, ObstacleProblem, PhysicsError, PhysicsIssue, PhysicsWarning,
};

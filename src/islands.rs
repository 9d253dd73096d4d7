//! Islands: the unit that substeps and the unit that sleeps.
//!
//! Dynamic bodies joined by springs (directly or through other dynamic
//! bodies) form an island. Fixed bodies join no island: two ropes hanging
//! from one anchor are two islands. Islands share no forces, so each can be
//! stepped on its own:
//!
//! - **Substeps.** Each island runs its own number of passes of the
//!   [`PhysicsSubstep`](crate::PhysicsSubstep) schedule per fixed step, each
//!   with `h / passes`: the largest [`Substeps`] of its bodies, or the
//!   automatic count when one of them has [`AutoSubsteps`], or else the
//!   global default ([`PhysicsSettings::substeps`](crate::PhysicsSettings::substeps),
//!   [`PhysicsSettings::auto_substeps`](crate::PhysicsSettings::auto_substeps)). Islands with the same count are
//!   stepped together; an island at 1 pass costs nothing more because
//!   another runs 8.
//! - **Stability.** When islands or their parameters change, the plugin
//!   bounds each island's fastest mode (see [`Island::load`]) and warns once
//!   about an island past the limit of semi-implicit Euler, naming its
//!   stiffest spring and the substep count that would make it stable.
//! - **Implicit springs.** An island with [`ImplicitSprings`] on one of its
//!   bodies steps its springs by linearised backward Euler instead,
//!   stable at one pass for any stiffness ([`ImplicitSettings`] sets the
//!   solver; the maths are in [`ImplicitSprings`]).
//! - **Sleeping.** An island whose bodies all stayed slower than the
//!   threshold of [`SleepSettings`] for [`SleepSettings::time_to_sleep`]
//!   falls asleep: its bodies get [`Sleeping`], and forces, integration and
//!   interpolation skip them, so their state stays the same bit for bit. It
//!   wakes when something touches it; each wake is announced by an
//!   [`IslandWoke`] message with its [`WakeCause`].
//!
//! Your own systems in [`PhysicsSubstep`](crate::PhysicsSubstep) see the
//! pass's bodies through [`SubstepBodies`].
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
//! let anchor = world.spawn(Body::fixed(Vec3::ZERO)).id();
//! // A stiff pendulum: 4 passes of h/4 for its island only.
//! let bob = world
//!     .spawn((Body::new(1.0).with_position(Vec3::new(1.0, 0.0, 0.0)), Substeps(4)))
//!     .id();
//! world.spawn(Spring::new(anchor, bob, 1.0, 20_000.0));
//! // One fixed step.
//! app.world_mut().run_schedule(FixedUpdate);
//! assert_eq!(app.world().get::<Island>(bob).unwrap().substeps(), 4);
//! ```

pub use crate::data::islands::{
    AutoSubsteps, ImplicitPreconditioner, ImplicitSettings, ImplicitSolver, ImplicitSprings,
    IslandCommands, IslandSlept, IslandWoke, RestTime, SleepSettings, SleepThreshold, Sleeping,
    SleepingDisabled, Substeps,
};
pub use crate::data::requests::{Island, WakeCause};
pub use crate::substep::SubstepBodies;

//! Stable, fast point-mass physics for Bevy: bodies, springs, damping and
//! constraints, stepped by semi-implicit Euler on Bevy's fixed timestep and
//! drawn with interpolation.
//!
//! ```
//! use bevy::prelude::*;
//! use bevy_euler_physics::prelude::*;
//!
//! fn setup(mut commands: Commands) {
//!     let anchor = commands.spawn(Body::fixed(Vec3::new(0.0, 2.0, 0.0))).id();
//!     let bob = commands
//!         .spawn((Body::new(1.0).with_position(Vec3::new(0.5, 1.0, 0.0)), Damping(0.1)))
//!         .id();
//!     commands.spawn(Spring::new(anchor, bob, 1.0, 200.0).with_damping(0.5));
//! }
//!
//! let mut app = App::new();
//! app.add_plugins((MinimalPlugins, EulerPhysicsPlugin))
//!     .add_systems(Startup, setup);
//! app.update();
//! ```
//!
//! # How a step runs
//!
//! [`EulerPhysicsPlugin`] adds to [`FixedUpdate`](bevy::app::FixedUpdate) the sets
//! [`PhysicsSystems::Prepare`] → [`PhysicsSystems::Step`] →
//! [`PhysicsSystems::Finish`]. `Step` checks and indexes the scene (finding
//! its [islands], which wake or sleep), then runs the passes of each group
//! of islands with the same substep count ([`Substeps`], [`AutoSubsteps`],
//! [`PhysicsSettings::substeps`]), then reports what went wrong and puts
//! resting islands to sleep. Each pass runs spring forces → the kick with
//! damping → constraints → the drift: semi-implicit Euler, velocity first,
//! then position with the new velocity. Every pass runs on the solver's own
//! arrays, and each [`Body`] is written once at the end of the fixed step;
//! systems of yours in the [`PhysicsSubstep`] sets run between the stages,
//! with the pass's bodies copied out to their components for them. See [`body`] for the maths, [`PhysicsSystems`], [`SubstepSystems`] and
//! [`SubstepBodies`] for where your own forces and constraints go,
//! [`islands`] for substeps, stability and sleeping, and [`interpolation`]
//! for how bodies are drawn between steps.
//!
//! To tie bodies to the game's own moving entities, [`PinnedTo`] makes a
//! fixed body follow an entity (a bone, a hand, a platform) and
//! [`FollowsBody`] makes an entity follow a body; see [`pins`]. A [`Rope`]
//! spawns a rope between two ends in one call; see [`ropes`].
//!
//! [`Body`] is the state. Its position is the truth and
//! [`Transform::translation`](bevy::transform::components::Transform::translation) is what is drawn: write bodies, read
//! transforms (or [`DrawnPositions`]).
//!
//! # Bad input
//!
//! Invalid values never panic and never spread NaN to other bodies; see
//! [`diagnostics`] for what is checked and how it is reported.
//!
//! # Features
//!
//! None is on by default: the physics alone builds without any rendering,
//! windowing, GPU, egui, networking or file-watching crate. Each feature
//! adds, for games and the bundled examples:
//!
//! - `render`: a window, 2D rendering, UI text and gizmos (for the examples);
//! - `debug-ui`: the `debug_ui` module, `EulerPhysicsDebugPlugin` (an egui
//!   panel, inspector, mouse drag and gizmos);
//! - `model-assets`: the `model` module, models as RON files loaded through
//!   Bevy's asset server (`PhysicsModelPlugin`, `PhysicsModelInstance`);
//! - `hot-reload`: Bevy's file watcher, so edited model files reload;
//! - `ggrs`: the `rollback` module, `EulerPhysicsRollbackPlugin`;
//! - `soft-mesh`: the `soft_mesh` module, the game's meshes made soft
//!   (`SoftMesh`), with Bevy's mesh and asset crates.
//!
//! # Determinism
//!
//! The same scene stepped the same way gives bit-identical state, whatever
//! the number of threads: every pass computes each body's and each spring's
//! value independently and sums forces in a fixed order (threads split a
//! pass by whole islands, which share no spring).

#![warn(missing_docs)]

// The layers, bottom up (imports only point down): `kernels` (pure maths on
// arrays), `data` (components, resources, sets, issue types), `solver` (the
// solver's state and stages), then the step, the plugin and the public
// modules, then the features. See docs/architecture.md.
mod data;
mod kernels;
mod solver;

mod executors;
mod plugin;
mod step;
mod substep;

pub mod body;
pub mod constraints;
pub mod diagnostics;
pub mod forces;
pub mod interpolation;
pub mod islands;
pub mod obstacles;
pub mod origin;
pub mod spring;

#[cfg(feature = "debug-ui")]
pub mod debug_ui;
pub mod integrators;
#[cfg(feature = "model-assets")]
pub mod model;
pub mod pins;
#[cfg(feature = "ggrs")]
pub mod rollback;
pub mod ropes;
pub mod snapshot;
#[cfg(feature = "soft-mesh")]
pub mod soft_mesh;

pub use body::{Body, Damping};
pub use constraints::{
    AngleLimit, CollisionGroups, ConstraintSettings, ContactForces, ContactMaterial,
    DistanceConstraint, DistanceLimit, GroundPlane, PairForce, Radius,
};
pub use data::settings::{
    InterpolationSystems, PhysicsSettings, PhysicsStep, PhysicsSubstep, PhysicsSystems,
    SubstepSystems,
};
#[cfg(feature = "debug-ui")]
pub use debug_ui::{DebugUiSettings, Energy, EulerPhysicsDebugPlugin, pick_body};
pub use diagnostics::{PhysicsError, PhysicsIssue, PhysicsWarning};
pub use forces::{AccumulatedForce, ConstantForce, Gravity};
pub use interpolation::{DrawnPositions, PositionHistory, TransformSyncDisabled};
pub use islands::{
    AutoSubsteps, ImplicitPreconditioner, ImplicitSettings, ImplicitSolver, ImplicitSprings,
    Island, IslandCommands, IslandSlept, IslandWoke, RestTime, SleepSettings, SleepThreshold,
    Sleeping, SleepingDisabled, SubstepBodies, Substeps, WakeCause,
};
pub use kernels::stability::SpringStability;
pub use obstacles::{
    HeightField, Obstacle, ObstacleMass, ObstacleReaction, ObstacleState, ObstacleVelocity, TiedTo,
    TriangleMesh,
};
pub use origin::{FloatingOrigin, OriginShifted, PhysicsOrigin, ShiftWithOrigin};
pub use pins::{FollowsBody, PinPlaced, PinnedTo};
pub use plugin::EulerPhysicsPlugin;
pub use ropes::{PartOfRope, Rope, RopeEnd, RopeParts};
pub use snapshot::{BodyState, PhysicsSnapshot, RestoreReport, physics_checksum};
pub use spring::{Spring, SpringFrequency};

/// Everything a game needs: `use bevy_euler_physics::prelude::*;`.
pub mod prelude {
    #[cfg(feature = "model-assets")]
    pub use crate::model::{
        ModelParts, ModelSpawned, ModelSystems, PhysicsModel, PhysicsModelInstance,
        PhysicsModelPlugin,
    };
    #[cfg(feature = "soft-mesh")]
    pub use crate::soft_mesh::{
        PartOfSoftMesh, PinFrame, PinSelect, PinTest, RopeMesh, SoftMass, SoftMesh, SoftMeshParts,
        SoftMeshSystems, VertexPin,
    };
    pub use crate::{
        AccumulatedForce, AngleLimit, AutoSubsteps, Body, CollisionGroups, ConstantForce,
        ConstraintSettings, ContactForces, ContactMaterial, Damping, DistanceConstraint,
        DistanceLimit, DrawnPositions, EulerPhysicsPlugin, FloatingOrigin, FollowsBody, Gravity,
        GroundPlane, HeightField, ImplicitPreconditioner, ImplicitSettings, ImplicitSolver,
        ImplicitSprings, InterpolationSystems, Island, IslandCommands, IslandSlept, IslandWoke,
        Obstacle, ObstacleMass, ObstacleReaction, ObstacleState, ObstacleVelocity, OriginShifted,
        PairForce, PhysicsError, PhysicsIssue, PhysicsOrigin, PhysicsSettings, PhysicsSnapshot,
        PhysicsStep, PhysicsSubstep, PhysicsSystems, PhysicsWarning, PinPlaced, PinnedTo,
        PositionHistory, Radius, RestTime, Rope, RopeEnd, RopeParts, ShiftWithOrigin,
        SleepSettings, SleepThreshold, Sleeping, SleepingDisabled, Spring, SpringFrequency,
        SubstepBodies, SubstepSystems, Substeps, TiedTo, TransformSyncDisabled, TriangleMesh,
        WakeCause, physics_checksum,
    };
    #[cfg(feature = "debug-ui")]
    pub use crate::{DebugUiSettings, Energy, EulerPhysicsDebugPlugin, pick_body};
}

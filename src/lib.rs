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
//! [`EulerPhysicsPlugin`] adds to [`FixedUpdate`] the sets
//! [`PhysicsSystems::Prepare`] → [`PhysicsSystems::Step`] →
//! [`PhysicsSystems::Finish`]. `Step` checks and indexes the scene (finding
//! its [islands], which wake or sleep), runs the [`PhysicsSubstep`]
//! schedule once per pass of each group of islands with the same substep
//! count ([`Substeps`], [`AutoSubsteps`], [`PhysicsSettings::substeps`]),
//! then reports what went wrong and puts resting islands to sleep; each pass
//! runs
//! `AccumulateForces` → `IntegrateVelocities` → `SolveConstraints` →
//! `IntegratePositions`: semi-implicit Euler, velocity first, then position
//! with the new velocity. While no system of yours sits in
//! `PhysicsSubstep`, the passes run on the solver's own dense arrays
//! without running the schedule, and each [`Body`] is written once at the
//! end of the fixed step (the results are the same bit for bit; see
//! [`PhysicsSubstep`]). See [`body`] for the maths, [`PhysicsSystems`] and
//! [`SubstepBodies`] for where your own forces and constraints go,
//! [`islands`] for substeps, stability and sleeping, and [`interpolation`]
//! for how bodies are drawn between steps.
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
//! The library itself needs none: with `default-features = false` it builds
//! without any rendering, windowing, GPU, egui or networking crate. The
//! default features add, for games and the bundled examples:
//!
//! - `render`: a window, 2D rendering, UI text and gizmos (for the examples);
//! - `debug-ui`: the `debug_ui` module, `EulerPhysicsDebugPlugin` (an egui
//!   panel, inspector, mouse drag and gizmos);
//! - `model-assets`: the `model` module, models as RON files loaded through
//!   Bevy's asset server (`PhysicsModelPlugin`, `PhysicsModelInstance`);
//! - `hot-reload`: Bevy's file watcher, so edited model files reload;
//! - `ggrs`: the `rollback` module, `EulerPhysicsRollbackPlugin`.
//!
//! # Determinism
//!
//! The same scene stepped the same way gives bit-identical state, whatever
//! the number of threads: every pass computes each body's and each spring's
//! value independently and sums forces in a fixed order (threads split a
//! pass by whole islands, which share no spring).

#![warn(missing_docs)]

pub mod body;
pub mod constraints;
#[cfg(feature = "debug-ui")]
pub mod debug_ui;
mod dense;
pub mod diagnostics;
pub mod forces;
pub mod integrators;
pub mod interpolation;
pub mod islands;
#[cfg(feature = "model-assets")]
pub mod model;
#[cfg(feature = "ggrs")]
pub mod rollback;
mod schedule;
pub mod snapshot;
mod solver;
pub mod spring;
mod stability;

pub use body::{Body, Damping};
pub use constraints::{ConstraintSettings, DistanceConstraint, GroundPlane, Radius};
#[cfg(feature = "debug-ui")]
pub use debug_ui::{DebugUiSettings, Energy, EulerPhysicsDebugPlugin, pick_body};
pub use diagnostics::{PhysicsError, PhysicsIssue, PhysicsWarning};
pub use forces::{AccumulatedForce, ConstantForce, Gravity};
pub use interpolation::{DrawnPositions, PositionHistory, TransformSyncDisabled};
pub use islands::{
    AutoSubsteps, Island, IslandCommands, IslandSlept, IslandWoke, RestTime, SleepSettings,
    SleepThreshold, Sleeping, SleepingDisabled, SubstepBodies, Substeps, WakeCause,
};
pub use schedule::{PhysicsSettings, PhysicsStep, PhysicsSubstep, PhysicsSystems};
pub use snapshot::{BodyState, PhysicsSnapshot, RestoreReport, physics_checksum};
pub use spring::Spring;
pub use stability::SpringStability;

/// Everything a game needs: `use bevy_euler_physics::prelude::*;`.
pub mod prelude {
    #[cfg(feature = "model-assets")]
    pub use crate::model::{
        ModelParts, ModelSpawned, PhysicsModel, PhysicsModelInstance, PhysicsModelPlugin,
    };
    pub use crate::{
        AccumulatedForce, AutoSubsteps, Body, ConstantForce, ConstraintSettings, Damping,
        DistanceConstraint, DrawnPositions, EulerPhysicsPlugin, Gravity, GroundPlane, Island,
        IslandCommands, IslandSlept, IslandWoke, PhysicsError, PhysicsIssue, PhysicsSettings,
        PhysicsSnapshot, PhysicsStep, PhysicsSubstep, PhysicsSystems, PhysicsWarning,
        PositionHistory, Radius, RestTime, SleepSettings, SleepThreshold, Sleeping,
        SleepingDisabled, Spring, SubstepBodies, Substeps, TransformSyncDisabled, WakeCause,
        physics_checksum,
    };
    #[cfg(feature = "debug-ui")]
    pub use crate::{DebugUiSettings, Energy, EulerPhysicsDebugPlugin, pick_body};
}

use bevy::app::{App, FixedUpdate, Plugin, Update};
use bevy::ecs::schedule::common_conditions::{not, resource_exists};
use bevy::ecs::schedule::{IntoScheduleConfigs, Schedule, ScheduleLabel, SingleThreadedExecutor};

use crate::schedule::{StepEnd, StepStart, run_step};
use crate::solver::SolverState;

/// Adds point-mass physics to an app: the resources, the systems in
/// [`FixedUpdate`] and [`Update`], and the reflection of every public type.
///
/// Works with `DefaultPlugins` or `MinimalPlugins`; needs nothing else. The
/// step rate is Bevy's fixed timestep (`Time<Fixed>`, 64 Hz by default).
///
/// # Example
///
/// ```
/// use bevy::prelude::*;
/// use bevy_euler_physics::prelude::*;
///
/// App::new()
///     .add_plugins((MinimalPlugins, EulerPhysicsPlugin))
///     // Step at 120 Hz.
///     .insert_resource(Time::<Fixed>::from_hz(120.0));
/// ```
#[derive(Debug, Clone, Copy, Default)]
pub struct EulerPhysicsPlugin;

impl Plugin for EulerPhysicsPlugin {
    fn build(&self, app: &mut App) {
        use PhysicsSystems::*;

        app.init_resource::<Gravity>()
            .init_resource::<PhysicsSettings>()
            .init_resource::<PhysicsStep>()
            .init_resource::<SolverState>()
            .init_resource::<SleepSettings>()
            .init_resource::<ConstraintSettings>()
            .add_message::<PhysicsWarning>()
            .add_message::<IslandWoke>()
            .add_message::<IslandSlept>()
            .register_type::<Body>()
            .register_type::<Damping>()
            .register_type::<Spring>()
            .register_type::<Gravity>()
            .register_type::<ConstantForce>()
            .register_type::<AccumulatedForce>()
            .register_type::<PositionHistory>()
            .register_type::<TransformSyncDisabled>()
            .register_type::<PhysicsError>()
            .register_type::<PhysicsIssue>()
            .register_type::<PhysicsWarning>()
            .register_type::<PhysicsSettings>()
            .register_type::<PhysicsStep>()
            .register_type::<Substeps>()
            .register_type::<AutoSubsteps>()
            .register_type::<Island>()
            .register_type::<RestTime>()
            .register_type::<Sleeping>()
            .register_type::<SleepingDisabled>()
            .register_type::<SleepThreshold>()
            .register_type::<SleepSettings>()
            .register_type::<WakeCause>()
            .register_type::<IslandWoke>()
            .register_type::<IslandSlept>()
            .register_type::<DistanceConstraint>()
            .register_type::<Radius>()
            .register_type::<GroundPlane>()
            .register_type::<ConstraintSettings>()
            // The tick the last step ended at stays comparable as the
            // world's ticks wrap.
            .add_observer(schedule::age_step_end);

        // Chains of small systems: a single-threaded executor runs them
        // inline, where a multi-threaded one would wake threads for each.
        for label in [
            PhysicsSubstep.intern(),
            StepStart.intern(),
            StepEnd.intern(),
        ] {
            let mut schedule = Schedule::new(label);
            schedule.set_executor(SingleThreadedExecutor::new());
            app.add_schedule(schedule);
        }

        app.configure_sets(FixedUpdate, (Prepare, Step, Finish).chain())
            .configure_sets(
                PhysicsSubstep,
                (
                    AccumulateForces,
                    IntegrateVelocities,
                    SolveConstraints,
                    IntegratePositions,
                )
                    .chain(),
            )
            .add_systems(
                FixedUpdate,
                run_step
                    .in_set(Step)
                    .run_if(not(resource_exists::<schedule::SteppedElsewhere>)),
            )
            .add_systems(
                StepStart,
                (
                    diagnostics::check_settings,
                    diagnostics::readmit_fixed,
                    solver::detect_wakes,
                    solver::rebuild,
                    solver::gather_written,
                    solver::gather,
                )
                    .chain(),
            )
            .add_systems(
                StepEnd,
                (
                    dense::scatter,
                    diagnostics::report_invalid_bodies,
                    solver::update_sleep,
                )
                    .chain(),
            )
            .add_systems(
                PhysicsSubstep,
                (
                    spring::spring_forces.in_set(AccumulateForces),
                    body::integrate_velocities.in_set(IntegrateVelocities),
                    constraints::solve_constraints.in_set(SolveConstraints),
                    body::integrate_positions.in_set(IntegratePositions),
                ),
            )
            .add_systems(Update, interpolation::interpolate.in_set(Interpolate));
    }
}

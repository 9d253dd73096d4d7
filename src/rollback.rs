//! Rollback netcode: the physics inside [bevy_ggrs](https://github.com/gschup/bevy_ggrs)
//! (feature `ggrs`).
//!
//! Rollback netcode re-simulates past frames when late inputs arrive, so the
//! step must depend only on state the session can save and restore.
//! [`EulerPhysicsRollbackPlugin`] makes that so:
//!
//! - it runs the physics step in [`GgrsSchedule`] (once per GGRS frame,
//!   with `Time<Fixed>`'s timestep as `h`: set it to the session's frame
//!   time) instead of `FixedUpdate`, with the same
//!   [`PhysicsSystems`] sets
//!   (`Prepare` → `Step` → `Finish`) for your systems there;
//! - it registers for rollback every component the next step depends on
//!   besides your scene's: [`Body`], [`Sleeping`], [`RestTime`] (how long
//!   each island has rested), [`AccumulatedForce`], [`PositionHistory`]
//!   [`PinPlaced`] (which target each pin last placed its body at) and
//!   [`ObstacleState`] (where each obstacle was left, which the next step
//!   sweeps it from; the `Transform` of a moving obstacle is yours to
//!   register);
//!   and what an origin shift moves ([`origin`](crate::origin)): the
//!   [`PhysicsOrigin`] resource and each [`GroundPlane`] (the `Transform`
//!   of a [`ShiftWithOrigin`](crate::ShiftWithOrigin) entity is yours to
//!   register if it matters to the game's state); and the
//!   [`ContactForces`] resource (the forces touching round bodies held over
//!   the step, which the next step's contacts start from), its
//!   entities mapped as bevy_ggrs maps rollback entities;
//! - it adds to the session's checksum each [`Body`] (the bits of its
//!   position, velocity and inverse mass), which bodies are [`Sleeping`] and
//!   each body's [`RestTime`], so a desync in sleep states shows at once,
//!   the origin and the [`ContactForces`];
//! - after each rollback it tells the solver to rebuild its index, islands,
//!   substep counts and stability loads from the restored components (they
//!   are derived, not saved) and not to take the restore for a touch that
//!   wakes sleeping islands (a ground plane put back is no edit either);
//!   the restored [`ContactForces`] are then found in the new slots by
//!   entity;
//! - it keeps every snapshot store of the session (yours included) able to
//!   hold the first frames: bevy_ggrs 0.22 sizes each store to the
//!   session's `max_prediction` frames, while before the first confirmed
//!   frame a peer saves `max_prediction + 1` (frames 0 to
//!   `max_prediction`), so frame 0's snapshot was gone when a remote
//!   input for frame 0 arrived late (a peer started on a busy machine, or
//!   a latency over `max_prediction` frames) and bevy_ggrs panicked with
//!   "Could not rollback to 0". Until the first frame is confirmed, the
//!   stores keep bevy_ggrs's default depth of 60 frames instead (so keep
//!   `max_prediction` below 60); from then on, bevy_ggrs sizes them as it
//!   does (a confirmed frame leaves `max_prediction` frames to roll back
//!   to). While the snapshots are saved, before the first confirmed frame,
//!   `MaxPredictionWindow` is out of the world: a system of yours in
//!   `SaveWorld` that reads it should run before
//!   `SaveWorldSystems::Snapshot`.
//!
//! Your own components that change during play — springs you add, forces,
//! `Substeps`, `SleepingDisabled`, a dragged anchor's `Body` is already in
//! — register them yourself (`rollback_component_with_copy`), and give every
//! physics entity the `Rollback` marker (`commands.spawn((Body::new(1.0), Rollback))`).
//! The bodies and springs a [`Rope`](crate::Rope) (or a `SoftMesh`, feature
//! `soft-mesh`) spawns get the marker when their owner has it.
//!
//! # Example
//!
//! ```
//! use bevy::prelude::*;
//! use bevy_euler_physics::prelude::*;
//! use bevy_euler_physics::rollback::EulerPhysicsRollbackPlugin;
//! use bevy_ggrs::prelude::*;
//!
//! type Config = GgrsConfig<u8>;
//!
//! let mut app = App::new();
//! app.add_plugins((MinimalPlugins, GgrsPlugin::<Config>::default()))
//!     .add_plugins((EulerPhysicsPlugin, EulerPhysicsRollbackPlugin))
//!     // One physics step per GGRS frame, at its rate.
//!     .insert_resource(Time::<Fixed>::from_hz(60.0))
//!     .rollback_component_with_copy::<ConstantForce>();
//! ```

use bevy::ecs::relationship::Relationship;
use bevy::ecs::system::SystemChangeTick;
use bevy::prelude::*;
use bevy_ggrs::{
    ConfirmedFrameCount, GgrsSchedule, LoadWorld, LoadWorldSystems, MaxPredictionWindow,
    ResourceMapEntitiesPlugin, Rollback, RollbackApp, SaveWorld, SaveWorldSystems,
};

use crate::body::Body;
use crate::constraints::{ContactForces, GroundPlane};
use crate::data::islands::asleep_at;
use crate::data::requests::{AnchorAsleep, SolverRequests};
use crate::data::settings::PhysicsSystems;
use crate::forces::AccumulatedForce;
use crate::interpolation::PositionHistory;
use crate::islands::{RestTime, Sleeping};
use crate::obstacles::ObstacleState;
use crate::origin::PhysicsOrigin;
use crate::pins::PinPlaced;
use crate::ropes::PartOfRope;
use crate::snapshot::{body_checksum, origin_checksum};
use crate::step::{SteppedElsewhere, run_step};

/// Runs the physics under bevy_ggrs; see the [module docs](self). Add it
/// after [`EulerPhysicsPlugin`](crate::EulerPhysicsPlugin) and bevy_ggrs's
/// `GgrsPlugin`.
///
/// ```
/// # use bevy::prelude::*;
/// # use bevy_euler_physics::prelude::*;
/// # use bevy_euler_physics::rollback::EulerPhysicsRollbackPlugin;
/// # use bevy_ggrs::prelude::*;
/// App::new()
///     .add_plugins((MinimalPlugins, GgrsPlugin::<GgrsConfig<u8>>::default()))
///     .add_plugins((EulerPhysicsPlugin, EulerPhysicsRollbackPlugin));
/// ```
#[derive(Debug, Clone, Copy, Default)]
pub struct EulerPhysicsRollbackPlugin;

impl Plugin for EulerPhysicsRollbackPlugin {
    fn build(&self, app: &mut App) {
        use PhysicsSystems::*;
        app.insert_resource(SteppedElsewhere)
            .configure_sets(GgrsSchedule, (Prepare, Step, Finish).chain())
            .add_systems(GgrsSchedule, run_step.in_set(Step))
            .rollback_component_with_copy::<Body>()
            .rollback_component_with_copy::<Sleeping>()
            .rollback_component_with_copy::<RestTime>()
            .rollback_component_with_copy::<AccumulatedForce>()
            .rollback_component_with_copy::<PositionHistory>()
            .rollback_component_with_copy::<PinPlaced>()
            // Where each obstacle was left, which the next step sweeps it
            // from.
            .rollback_component_with_copy::<ObstacleState>()
            .add_observer(roll_back_parts::<PartOfRope>)
            // Origin shifts move the origin and the ground planes.
            .rollback_component_with_copy::<GroundPlane>()
            .rollback_resource_with_copy::<PhysicsOrigin>()
            // The forces the pair contacts held, which the next step
            // starts from.
            .rollback_resource_with_clone::<ContactForces>()
            .add_plugins(ResourceMapEntitiesPlugin::<ContactForces>::default())
            .checksum_resource::<ContactForces>(ContactForces::checksum)
            .checksum_resource::<PhysicsOrigin>(origin_checksum)
            .checksum_component::<Body>(body_checksum)
            // Which bodies sleep, and how long their islands have rested.
            .checksum_component::<Sleeping>(|_| 1)
            .checksum_component::<RestTime>(|rest| u64::from(rest.seconds().to_bits()))
            .add_systems(
                LoadWorld,
                resync_after_rollback
                    .after(LoadWorldSystems::DataFlush)
                    .before(LoadWorldSystems::Mapping),
            )
            .add_systems(
                SaveWorld,
                (
                    hide_prediction_window
                        .after(SaveWorldSystems::Checksum)
                        .before(SaveWorldSystems::Snapshot),
                    show_prediction_window.after(SaveWorldSystems::Snapshot),
                ),
            );
        #[cfg(feature = "soft-mesh")]
        app.add_observer(roll_back_parts::<crate::soft_mesh::PartOfSoftMesh>)
            .configure_sets(
                bevy::app::PreUpdate,
                crate::soft_mesh::SoftMeshSystems::Build.before(bevy_ggrs::RunGgrsSystems),
            );
    }
}

/// A part a rope or soft mesh spawned (`R` names its owner) gets
/// `Rollback` when its owner has it.
fn roll_back_parts<R: Relationship>(
    added: On<Add, R>,
    parts: Query<&R>,
    rolled_back: Query<(), With<Rollback>>,
    mut commands: Commands,
) {
    if let Ok(part) = parts.get(added.entity)
        && rolled_back.contains(part.get())
    {
        commands.entity(added.entity).insert(Rollback);
    }
}

/// bevy_ggrs's `MaxPredictionWindow`, put aside while the snapshots are
/// saved (see the [module docs](self)).
#[derive(Resource)]
struct HiddenPredictionWindow(MaxPredictionWindow);

/// Before the snapshots of a save, while no frame is confirmed: without
/// `MaxPredictionWindow`, each store keeps its depth of 60 frames instead
/// of being cut to `max_prediction`, one frame short of what a rollback
/// before the first confirmed frame needs.
fn hide_prediction_window(world: &mut World) {
    let confirmed = world
        .get_resource::<ConfirmedFrameCount>()
        .is_some_and(|frame| frame.0 >= 0);
    if confirmed {
        return;
    }
    if let Some(window) = world.remove_resource::<MaxPredictionWindow>() {
        world.insert_resource(HiddenPredictionWindow(window));
    }
}

/// After the snapshots of a save: `MaxPredictionWindow` is back for your
/// systems.
fn show_prediction_window(world: &mut World) {
    if let Some(HiddenPredictionWindow(window)) = world.remove_resource() {
        world.insert_resource(window);
    }
}

/// After a rollback: the restored state is not a touch (sleeping islands
/// count from now), and the solver rebuilds from it.
fn resync_after_rollback(
    mut requests: ResMut<SolverRequests>,
    mut sleeping: Query<&mut Sleeping>,
    mut anchors: Query<&mut AnchorAsleep>,
    ticks: SystemChangeTick,
) {
    requests.resync();
    requests.quiet_since = Some(ticks.this_run());
    // (A sleep request your code made stays one.)
    for mut sleeping in &mut sleeping {
        if !sleeping.is_request() {
            sleeping.since = asleep_at(ticks.this_run());
        }
    }
    for mut anchor in &mut anchors {
        anchor.since = ticks.this_run();
    }
}

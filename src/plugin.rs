//! [`EulerPhysicsPlugin`]: the resources, schedules, sets and systems of
//! the physics, wired together.

use bevy::app::{App, FixedUpdate, Plugin};
use bevy::ecs::schedule::common_conditions::{not, resource_exists};
use bevy::ecs::schedule::{IntoScheduleConfigs, Schedule, ScheduleLabel, SingleThreadedExecutor};

use crate::data::body::{Body, Damping};
use crate::data::constraints::{
    AngleLimit, CollisionGroups, ConstraintSettings, ContactMaterial, DistanceConstraint,
    DistanceLimit, GroundPlane, Radius,
};
use crate::data::drawing::{PositionHistory, TransformSyncDisabled};
use crate::data::forces::{AccumulatedForce, ConstantForce, Gravity};
use crate::data::islands::{
    AutoSubsteps, ImplicitPreconditioner, ImplicitSettings, ImplicitSolver, ImplicitSprings,
    IslandSlept, IslandWoke, RestTime, SleepSettings, SleepThreshold, Sleeping, SleepingDisabled,
    Substeps,
};
use crate::data::issues::{PhysicsError, PhysicsIssue, PhysicsWarning};
use crate::data::joins::{Spring, SpringFrequency};
use crate::data::origin::{FloatingOrigin, OriginShifted, PhysicsOrigin, ShiftWithOrigin};
use crate::data::requests::{Island, SolverRequests, WakeCause};
use crate::data::settings::{
    PhysicsSettings, PhysicsStep, PhysicsSubstep, PhysicsSystems, SubstepSystems, age_step_end,
};
use crate::executors;
use crate::interpolation;
use crate::pins::{self, FollowsBody, PinPlaced, PinReports, PinnedTo};
use crate::ropes::{Rope, RopeEnd};
use crate::snapshot::{BodyState, PhysicsSnapshot};
use crate::solver::{
    SolverState, contacts, energy, frequency, gather, held, obstacles, origin, rebuild, report,
    scatter, sleep, wakes,
};
use crate::step::{
    BuiltIn, CurrentPass, StepEnd, StepStart, StepTimer, SteppedElsewhere, SubstepUsers, built_in,
    run_step,
};

/// Adds point-mass physics to an app: the resources, the systems in
/// [`FixedUpdate`] and [`Update`](bevy::app::Update), and the reflection of every public type.
///
/// Works with `DefaultPlugins` or `MinimalPlugins`; needs nothing else. The
/// step rate is Bevy's fixed timestep (`Time<Fixed>`, 64 Hz by default).
///
/// Each of Bevy's fixed schedules that holds at most one system that is not
/// exclusive runs on the single-threaded executor, which costs a few
/// microseconds where the multi-threaded one's wake of a pool thread cost
/// 55–80 µs per fixed step here; such a schedule has nothing to run in
/// parallel. [`PhysicsSettings::lean_fixed_schedules`](crate::PhysicsSettings::lean_fixed_schedules)
/// turns this off.
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
        use PhysicsSystems::{Finish, Prepare, Step};
        use SubstepSystems::{
            AccumulateForces, IntegratePositions, IntegrateVelocities, SolveConstraints,
        };

        app.init_resource::<Gravity>()
            .init_resource::<PhysicsSettings>()
            .init_resource::<PhysicsStep>()
            .init_resource::<SolverState>()
            .init_resource::<SolverRequests>()
            .init_resource::<SubstepUsers>()
            .init_resource::<CurrentPass>()
            .init_resource::<StepTimer>()
            .init_resource::<SleepSettings>()
            .init_resource::<ConstraintSettings>()
            .init_resource::<crate::data::contacts::ContactForces>()
            .init_resource::<PhysicsOrigin>()
            .init_resource::<ImplicitSettings>()
            .init_resource::<PinReports>()
            .add_message::<PhysicsWarning>()
            .add_message::<IslandWoke>()
            .add_message::<IslandSlept>()
            .add_message::<OriginShifted>()
            // The tick the last step ended at stays comparable as the
            // world's ticks wrap.
            .add_observer(age_step_end);
        register_types(app);

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
                    BuiltIn::Forces,
                    AccumulateForces,
                    BuiltIn::Kick,
                    IntegrateVelocities,
                    BuiltIn::Constraints,
                    SolveConstraints,
                    BuiltIn::Drift,
                    IntegratePositions,
                    BuiltIn::End,
                )
                    .chain(),
            )
            .add_systems(
                FixedUpdate,
                run_step
                    .in_set(Step)
                    .run_if(not(resource_exists::<SteppedElsewhere>)),
            )
            .add_systems(
                StepStart,
                (
                    report::check_settings,
                    frequency::resolve_frequencies,
                    report::readmit_fixed,
                    report::readmit_limits,
                    pins::follow_targets,
                    #[cfg(feature = "soft-mesh")]
                    crate::soft_mesh::press_soft_meshes,
                    obstacles::place_obstacles,
                    wakes::detect_wakes,
                    rebuild::rebuild,
                    gather::gather_written,
                    contacts::find_pairs,
                    rebuild::rebuild_touched,
                    contacts::find_pairs_again,
                    held::recall_forces,
                    gather::gather,
                    gather::gather_forces,
                    obstacles::lay_out_obstacles,
                    obstacles::place_ties,
                )
                    .chain(),
            )
            .add_systems(
                StepEnd,
                (
                    scatter::scatter,
                    held::keep_forces,
                    obstacles::write_obstacle_reactions,
                    pins::draw_pins_between,
                    report::report_invalid_bodies,
                    report::report_implicit,
                    energy::watch_energy,
                    sleep::update_sleep,
                    origin::float_origin,
                )
                    .chain(),
            )
            .add_systems(
                PhysicsSubstep,
                (
                    built_in::<0>.in_set(BuiltIn::Forces),
                    built_in::<1>.in_set(BuiltIn::Kick),
                    built_in::<2>.in_set(BuiltIn::Constraints),
                    built_in::<3>.in_set(BuiltIn::Drift),
                    built_in::<4>.in_set(BuiltIn::End),
                ),
            )
            .add_systems(
                bevy::app::Update,
                pins::follow_bodies.after(crate::data::settings::InterpolationSystems::Interpolate),
            )
            .add_plugins((interpolation::plugin, executors::plugin));
        #[cfg(feature = "soft-mesh")]
        soft_meshes(app);
    }
}

/// The soft meshes' build (`PreUpdate`) and drawing (`Update`), which run
/// in an app with Bevy's mesh assets.
#[cfg(feature = "soft-mesh")]
fn soft_meshes(app: &mut App) {
    use crate::soft_mesh::{
        self, SoftMeshSystems, build_soft_meshes, draw_rope_meshes, draw_soft_meshes,
        lay_out_rope_meshes,
    };
    use bevy::asset::Assets;
    use bevy::mesh::Mesh;

    app.configure_sets(
        bevy::app::Update,
        SoftMeshSystems::Draw.after(crate::data::settings::InterpolationSystems::Interpolate),
    )
    .add_systems(
        bevy::app::PreUpdate,
        (build_soft_meshes, lay_out_rope_meshes)
            .run_if(resource_exists::<Assets<Mesh>>)
            .in_set(SoftMeshSystems::Build),
    )
    .add_systems(
        bevy::app::Update,
        (draw_soft_meshes, draw_rope_meshes)
            .run_if(resource_exists::<Assets<Mesh>>)
            .in_set(SoftMeshSystems::Draw),
    )
    .register_type::<soft_mesh::SoftMesh>()
    .register_type::<soft_mesh::SoftMass>()
    .register_type::<soft_mesh::PinSelect>()
    .register_type::<soft_mesh::PinTest>()
    .register_type::<soft_mesh::PinFrame>()
    .register_type::<soft_mesh::VertexPin>()
    .register_type::<soft_mesh::RopeMesh>();
}

/// Registers every public reflected type, the snapshot's included
/// (`tests/registry.rs` checks the list).
fn register_types(app: &mut App) {
    app.register_type::<Body>()
        .register_type::<Damping>()
        .register_type::<Spring>()
        .register_type::<SpringFrequency>()
        .register_type::<Gravity>()
        .register_type::<ConstantForce>()
        .register_type::<AccumulatedForce>()
        .register_type::<PositionHistory>()
        .register_type::<TransformSyncDisabled>()
        .register_type::<PhysicsError>()
        .register_type::<PhysicsIssue>()
        .register_type::<PhysicsWarning>()
        .register_type::<crate::data::issues::MeshProblem>()
        .register_type::<crate::data::issues::ObstacleProblem>()
        .register_type::<crate::Obstacle>()
        .register_type::<crate::ObstacleState>()
        .register_type::<crate::ObstacleVelocity>()
        .register_type::<crate::ObstacleReaction>()
        .register_type::<crate::ObstacleMass>()
        .register_type::<crate::TiedTo>()
        .register_type::<crate::TriangleMesh>()
        .register_type::<crate::HeightField>()
        .register_type::<PhysicsSettings>()
        .register_type::<PhysicsStep>()
        .register_type::<Substeps>()
        .register_type::<AutoSubsteps>()
        .register_type::<ImplicitSprings>()
        .register_type::<ImplicitSettings>()
        .register_type::<ImplicitSolver>()
        .register_type::<ImplicitPreconditioner>()
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
        .register_type::<DistanceLimit>()
        .register_type::<AngleLimit>()
        .register_type::<Radius>()
        .register_type::<ContactMaterial>()
        .register_type::<CollisionGroups>()
        .register_type::<GroundPlane>()
        .register_type::<ConstraintSettings>()
        .register_type::<PhysicsOrigin>()
        .register_type::<FloatingOrigin>()
        .register_type::<ShiftWithOrigin>()
        .register_type::<OriginShifted>()
        .register_type::<PhysicsSnapshot>()
        .register_type::<BodyState>()
        .register_type::<PinnedTo>()
        .register_type::<FollowsBody>()
        .register_type::<PinPlaced>()
        .register_type::<Rope>()
        .register_type::<RopeEnd>();
}

#[cfg(test)]
mod tests {
    use core::time::Duration;

    use bevy::time::TimeUpdateStrategy;

    use bevy::prelude::*;

    use super::EulerPhysicsPlugin;
    use crate::data::body::Body;
    use crate::data::requests::{BodyIndex, SolverRequests};
    use crate::solver::SolverState;

    /// A component that disables entities.
    #[derive(Component)]
    struct Off;

    /// An app that runs one fixed step per update, with [`Off`] a
    /// disabling component.
    fn app_with_off() -> App {
        let mut app = App::new();
        app.add_plugins((MinimalPlugins, EulerPhysicsPlugin))
            .insert_resource(Time::<Fixed>::from_duration(Duration::from_millis(16)))
            .insert_resource(TimeUpdateStrategy::FixedTimesteps(1));
        app.world_mut().register_disabling_component::<Off>();
        app
    }

    fn rebuild_now(app: &mut App) {
        app.world_mut().spawn(Body::new(1.0));
        app.update();
    }

    /// The solver's rebuild (`solver/rebuild/layout.rs`) keeps exactly the bodies of its layout before that are
    /// disabled: not one whose `Body` was removed, nor one despawned since
    /// (and their lookups would cost every step otherwise); and it clears
    /// the disabled one's index.
    #[test]
    fn the_rebuild_lists_the_disabled_bodies_it_no_longer_sees() {
        let mut app = app_with_off();
        let [off, stripped, kept] = [(); 3].map(|_| app.world_mut().spawn(Body::new(1.0)).id());
        app.update();
        app.update();
        assert_ne!(app.world().get::<BodyIndex>(off), Some(&BodyIndex::NONE));
        app.world_mut().entity_mut(off).insert(Off);
        app.world_mut().entity_mut(stripped).remove::<Body>();
        rebuild_now(&mut app);
        assert_eq!(app.world().resource::<SolverState>().unseen, [off]);
        assert_eq!(app.world().get::<BodyIndex>(off), Some(&BodyIndex::NONE));
        assert!(app.world().get::<BodyIndex>(kept).unwrap().slot < 4);
        app.world_mut().despawn(off);
        rebuild_now(&mut app);
        assert!(app.world().resource::<SolverState>().unseen.is_empty());
    }

    /// Bodies that come and go while no step runs (no rebuild takes the
    /// list of inserted bodies) leave that list bounded: 20 000 spawned
    /// and despawned one at a time beside 3 000 that stay, and the list
    /// still holds every body that stays, to be listed if disabled.
    #[test]
    fn the_list_of_inserted_bodies_stays_bounded_without_a_step() {
        let mut app = App::new();
        app.add_plugins((MinimalPlugins, EulerPhysicsPlugin));
        let world = app.world_mut();
        let stay: Vec<Entity> = (0..3000)
            .map(|_| world.spawn(Body::new(1.0)).id())
            .collect();
        for _ in 0..20_000 {
            let gone = world.spawn(Body::new(1.0)).id();
            world.despawn(gone);
        }
        let listed = &world.resource::<SolverRequests>().inserted;
        assert!(listed.len() <= 8192, "{} listed", listed.len());
        assert!(stay.iter().all(|e| listed.contains(e)));
    }

    /// A listed (disabled) body enabled again brings a rebuild at the next
    /// step, by Bevy's `Disabled` or by a disabling component of yours,
    /// and also after your code despawned the plugin's observer; steps
    /// with listed bodies and nothing enabled rebuild nothing, and neither
    /// does a body disabled and enabled again between two steps that no
    /// rebuild listed.
    #[test]
    fn a_listed_body_enabled_again_and_only_that_rebuilds() {
        use bevy::ecs::entity_disabling::Disabled;
        let mut app = app_with_off();
        let [by_bevy, by_off, flicker] =
            [(); 3].map(|_| app.world_mut().spawn(Body::new(1.0)).id());
        app.update();
        app.world_mut().entity_mut(by_bevy).insert(Disabled);
        app.world_mut().entity_mut(by_off).insert(Off);
        rebuild_now(&mut app);
        let layouts = |app: &App| app.world().resource::<SolverState>().layouts;
        let mut listed = [by_bevy, by_off];
        listed.sort();
        assert_eq!(app.world().resource::<SolverState>().unseen, listed);
        let before = layouts(&app);
        for _ in 0..3 {
            app.update();
        }
        app.world_mut().entity_mut(flicker).insert(Off);
        app.world_mut().entity_mut(flicker).remove::<Off>();
        app.update();
        assert_eq!(layouts(&app), before, "nothing enabled that was listed");
        for body in [by_off, by_bevy] {
            let before = layouts(&app);
            if body == by_bevy {
                // Swept away with every entity, say.
                let world = app.world_mut();
                let observers: Vec<Entity> = world
                    .query_filtered::<Entity, With<Observer>>()
                    .iter(world)
                    .collect();
                assert!(!observers.is_empty());
                for observer in observers {
                    world.despawn(observer);
                }
            }
            let mut entity = app.world_mut().entity_mut(body);
            if body == by_off {
                entity.remove::<Off>();
            } else {
                entity.remove::<Disabled>();
            }
            app.update();
            assert_eq!(layouts(&app), before + 1, "{body} enabled again");
            assert_ne!(app.world().get::<BodyIndex>(body), Some(&BodyIndex::NONE));
        }
        assert!(app.world().resource::<SolverState>().unseen.is_empty());
    }
}

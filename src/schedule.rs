//! The system sets and the substep schedule, and the system that runs the
//! substep passes of one fixed step.

use bevy::ecs::change_detection::{CheckChangeTicks, Tick};
use bevy::ecs::schedule::ScheduleLabel;
use bevy::prelude::*;

use crate::constraints::ConstraintSettings;
use crate::dense::run_pass;
use crate::forces::Gravity;
use crate::solver::SolverState;

/// The system sets of the physics step, in the order they run.
///
/// In [`FixedUpdate`], chained:
///
/// 1. [`Prepare`](Self::Prepare): for your systems that must run before any
///    body moves in this fixed step.
/// 2. [`Step`](Self::Step): one exclusive system that
///    - re-admits repaired bodies and springs and rebuilds the solver's dense
///      index when bodies or springs were added, removed or changed;
///    - runs the [`PhysicsSubstep`] schedule once per pass (see
///      [`PhysicsSettings::substeps`]), or, while no system of yours is in
///      that schedule, the same passes on the solver's arrays, writing each
///      [`Body`](crate::Body) once at the end (a *dense* step, bit for bit
///      the same);
///    - reports and freezes invalid or non-finite state, and puts resting
///      islands to sleep.
///
///    The plugin's own bookkeeping runs inside this one system, on
///    single-threaded schedules, so that a fixed step costs one hand-off of
///    Bevy's multi-threaded executor rather than one per system.
/// 3. [`Finish`](Self::Finish): for your systems that read the finished step.
///
/// In [`PhysicsSubstep`], chained:
///
/// 4. [`AccumulateForces`](Self::AccumulateForces): spring forces; add your
///    own forces here, to [`AccumulatedForce`](crate::AccumulatedForce).
/// 5. [`IntegrateVelocities`](Self::IntegrateVelocities):
///    `v ← v + h·(g + F·inv_mass)`, then the Padé damping `v ← v / (1 + h·c)`.
/// 6. [`SolveConstraints`](Self::SolveConstraints): the constraint hook. Systems
///    here see the new velocities and the old positions, and may change
///    `Body::velocity`.
/// 7. [`IntegratePositions`](Self::IntegratePositions): `x ← x + h·v`.
///
/// In [`Update`]:
///
/// 8. [`Interpolate`](Self::Interpolate): draws each body between its last two
///    fixed positions.
///
/// # Example
///
/// A user constraint that keeps every body above `y = 0`:
///
/// ```
/// use bevy::prelude::*;
/// use bevy_euler_physics::prelude::*;
///
/// // `SubstepBodies` yields the bodies this pass moves, with its step size.
/// fn floor(mut bodies: SubstepBodies<&mut Body>) {
///     let dt = bodies.dt();
///     for mut body in bodies.iter_mut() {
///         // The position this pass will reach with the current velocity.
///         let next_y = body.position.y + dt * body.velocity.y;
///         if next_y < 0.0 {
///             body.velocity.y = -body.position.y / dt;
///         }
///     }
/// }
///
/// let mut app = App::new();
/// app.add_plugins((MinimalPlugins, EulerPhysicsPlugin))
///     .add_systems(PhysicsSubstep, floor.in_set(PhysicsSystems::SolveConstraints));
/// ```
#[derive(SystemSet, Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum PhysicsSystems {
    /// Before the step (your systems).
    Prepare,
    /// The step: bookkeeping, then [`PhysicsSubstep`] once per pass, then
    /// reports.
    Step,
    /// After the step (your systems).
    Finish,
    /// Spring forces, then your forces (in [`PhysicsSubstep`]).
    AccumulateForces,
    /// The velocity kick and the damping (in [`PhysicsSubstep`]).
    IntegrateVelocities,
    /// The constraint hook (in [`PhysicsSubstep`]).
    SolveConstraints,
    /// The position drift (in [`PhysicsSubstep`]).
    IntegratePositions,
    /// Transform interpolation (in [`Update`]).
    Interpolate,
}

/// The schedule of one substep pass. [`PhysicsSystems::Step`] runs it
/// [`PhysicsStep::passes`] times per fixed step, each with step size
/// [`PhysicsStep::dt`].
///
/// It runs on a single-threaded executor (the stages are a chain, so a
/// multi-threaded one would only add thread wake-ups); the built-in passes
/// spread large scenes over the compute task pool themselves.
///
/// While it holds only the plugin's own four systems, nothing can look at
/// a body between passes, and the step runs its passes on the solver's
/// dense arrays without running this schedule, writing each [`Body`] once
/// at the end of the fixed step. Adding a system of yours here makes every
/// pass keep the components current for it, which costs more per body;
/// forces that are the same for every pass of a fixed step are cheaper in
/// a system in `FixedUpdate` before [`PhysicsSystems::Step`] (an
/// [`AccumulatedForce`] written there acts on the first pass; a
/// [`ConstantForce`] acts on every pass). The results are the same bit
/// for bit either way.
///
/// [`Body`]: crate::Body
/// [`AccumulatedForce`]: crate::AccumulatedForce
/// [`ConstantForce`]: crate::ConstantForce
///
/// # Example
///
/// ```
/// use bevy::prelude::*;
/// use bevy_euler_physics::prelude::*;
///
/// // A wind that pushes every body along +x. Islands with different
/// // substep counts run in separate passes: `SubstepBodies` yields the
/// // bodies of the current one.
/// fn wind(mut forces: SubstepBodies<&mut AccumulatedForce>) {
///     for mut force in forces.iter_mut() {
///         force.0.x += 2.0;
///     }
/// }
///
/// App::new()
///     .add_plugins((MinimalPlugins, EulerPhysicsPlugin))
///     .add_systems(PhysicsSubstep, wind.in_set(PhysicsSystems::AccumulateForces));
/// ```
#[derive(ScheduleLabel, Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct PhysicsSubstep;

/// Global settings of the physics step.
///
/// # Example
///
/// ```
/// use bevy::prelude::*;
/// use bevy_euler_physics::prelude::*;
///
/// App::new()
///     .add_plugins((MinimalPlugins, EulerPhysicsPlugin))
///     // Four passes of h/4 per fixed step for islands without their own
///     // count: a four times higher stability limit.
///     .insert_resource(PhysicsSettings { substeps: 4, ..default() });
/// ```
#[derive(Resource, Reflect, Debug, Clone, Copy, PartialEq)]
#[reflect(Resource, Default, Debug, PartialEq, Clone)]
pub struct PhysicsSettings {
    /// Substep passes per fixed step for islands whose bodies have no
    /// [`Substeps`](crate::Substeps). Each pass runs the whole
    /// [`PhysicsSubstep`] schedule with `h = timestep / substeps`, which
    /// raises the stability limit of springs `substeps`-fold. `0` is read as
    /// `1` (with a warning); counts above [`PhysicsSettings::MAX_SUBSTEPS`]
    /// are clamped. Default: 1.
    pub substeps: u32,
    /// Whether islands without [`Substeps`](crate::Substeps) choose their
    /// count automatically, as with [`AutoSubsteps`](crate::AutoSubsteps).
    /// Default: false.
    pub auto_substeps: bool,
    /// The most passes automatic substeps choose. Default: 64; clamped to
    /// `1..=MAX_SUBSTEPS`.
    pub max_auto_substeps: u32,
    /// The [`Island::load`](crate::Island::load) automatic substeps keep
    /// islands at or below: the share of the stability limit an island may
    /// use. Default: 0.9; read within `(0, 1]`.
    pub stability_target: f32,
    /// Groups of islands with at least this many bodies spread the built-in
    /// passes over Bevy's compute task pool, island by island (one island is
    /// never split, so a scene of one big island stays on one thread);
    /// smaller ones run on one thread, where waking threads would cost more
    /// than it saves. The result is the same bit for bit either way.
    /// Default: 16 384.
    pub parallel_threshold: usize,
    /// Whether [`PhysicsSystems::Interpolate`] draws bodies between their last
    /// two fixed positions (`true`), or at their latest fixed position
    /// (`false`: the picture then moves in steps of the fixed rate, and
    /// stutters when the frame rate and the fixed rate beat). Default: true.
    pub interpolate: bool,
}

impl PhysicsSettings {
    /// The largest substep count the step accepts.
    pub const MAX_SUBSTEPS: u32 = 256;

    /// The substep count actually used: `substeps` clamped to
    /// `1..=MAX_SUBSTEPS`.
    ///
    /// ```
    /// use bevy_euler_physics::prelude::*;
    /// assert_eq!(PhysicsSettings { substeps: 0, ..Default::default() }.passes(), 1);
    /// ```
    pub fn passes(&self) -> u32 {
        self.substeps.clamp(1, Self::MAX_SUBSTEPS)
    }

    /// `max_auto_substeps` as used: clamped to `1..=MAX_SUBSTEPS`.
    ///
    /// ```
    /// use bevy_euler_physics::prelude::*;
    /// assert_eq!(PhysicsSettings { max_auto_substeps: 0, ..Default::default() }.auto_cap(), 1);
    /// ```
    pub fn auto_cap(&self) -> u32 {
        self.max_auto_substeps.clamp(1, Self::MAX_SUBSTEPS)
    }

    /// `stability_target` as used: NaN or values outside `(0, 1]` read as
    /// the nearest sensible value (0.9 for NaN).
    ///
    /// ```
    /// use bevy_euler_physics::prelude::*;
    /// assert_eq!(PhysicsSettings { stability_target: 2.0, ..Default::default() }.target_load(), 1.0);
    /// ```
    pub fn target_load(&self) -> f32 {
        if self.stability_target.is_nan() {
            0.9
        } else {
            self.stability_target.clamp(0.01, 1.0)
        }
    }
}

impl Default for PhysicsSettings {
    fn default() -> Self {
        Self {
            substeps: 1,
            auto_substeps: false,
            max_auto_substeps: 64,
            stability_target: 0.9,
            parallel_threshold: 16_384,
            interpolate: true,
        }
    }
}

/// The pass now running: its step size and its place in the fixed step.
///
/// Read it from systems in [`PhysicsSubstep`] so that a force or a constraint
/// does the right thing under substeps (or use
/// [`SubstepBodies`](crate::SubstepBodies), which holds it and yields the
/// bodies of the pass). Outside the step it holds the last pass.
///
/// # Example
///
/// ```
/// use bevy::prelude::*;
/// use bevy_euler_physics::prelude::*;
///
/// // Cap every body's speed at 10 m/s, as an impulse in the constraint hook.
/// fn speed_limit(step: Res<PhysicsStep>, mut bodies: SubstepBodies<&mut Body>) {
///     debug_assert!(step.dt > 0.0);
///     for mut body in bodies.iter_mut() {
///         body.velocity = body.velocity.clamp_length_max(10.0);
///     }
/// }
/// # App::new().add_systems(PhysicsSubstep, speed_limit.in_set(PhysicsSystems::SolveConstraints));
/// ```
#[derive(Resource, Reflect, Debug, Clone, Copy, PartialEq)]
#[reflect(Resource, Default, Debug, PartialEq, Clone)]
pub struct PhysicsStep {
    /// The step size `h` of this pass, in seconds: the fixed timestep divided
    /// by [`passes`](Self::passes).
    pub dt: f32,
    /// Which pass this is, from 0.
    pub pass: u32,
    /// How many passes this fixed step runs for the islands of this pass.
    pub passes: u32,
    /// Which group of islands (those with the same pass count) this pass
    /// steps; see [`SubstepBodies`](crate::SubstepBodies).
    #[reflect(ignore)]
    pub(crate) group: u32,
    /// The change tick at which the last fixed step ended: a body written
    /// after it was moved by other code (see
    /// [`DrawnPositions`](crate::DrawnPositions)).
    #[reflect(ignore)]
    pub(crate) ended: Tick,
}

impl Default for PhysicsStep {
    fn default() -> Self {
        Self {
            dt: 1.0 / 64.0,
            pass: 0,
            passes: 1,
            group: 0,
            ended: Tick::new(0),
        }
    }
}

/// Keeps [`PhysicsStep::ended`] comparable as the world's change ticks
/// wrap around.
pub(crate) fn age_step_end(check: On<CheckChangeTicks>, mut step: ResMut<PhysicsStep>) {
    step.bypass_change_detection().ended.check_tick(*check);
}

impl PhysicsStep {
    /// Whether this is the first pass of the fixed step.
    ///
    /// ```
    /// # use bevy_euler_physics::prelude::*;
    /// assert!(PhysicsStep::default().is_first());
    /// ```
    pub fn is_first(&self) -> bool {
        self.pass == 0
    }
}

/// Present when the physics step runs in another schedule than
/// `FixedUpdate` (rollback): the `FixedUpdate` step then stands down.
#[derive(Resource, Debug, Clone, Copy, Default)]
pub(crate) struct SteppedElsewhere;

/// The plugin's bookkeeping at the start of a fixed step (single-threaded).
#[derive(ScheduleLabel, Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) struct StepStart;

/// The plugin's reports at the end of a fixed step (single-threaded).
#[derive(ScheduleLabel, Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) struct StepEnd;

/// [`PhysicsSystems::Step`]: [`StepStart`], then [`PhysicsSubstep`] once per
/// pass of each group of islands, then [`StepEnd`].
pub(crate) fn run_step(world: &mut World) {
    // With no system of the user's in the substep schedule, nothing looks at
    // the bodies between passes: the passes run on the solver's arrays.
    let dense = world
        .resource::<Schedules>()
        .get(PhysicsSubstep)
        // The graph's count: it follows systems added or removed since the
        // schedule last ran (which a dense step never does).
        .is_none_or(|schedule| schedule.graph().systems.len() <= OWN_SUBSTEP_SYSTEMS);
    world.resource_mut::<SolverState>().dense = dense;
    world.run_schedule(StepStart);
    let timestep = world.resource::<Time<Fixed>>().timestep();
    let groups = world.resource::<SolverState>().groups.len();
    let dense = dense.then(|| {
        (
            Vec3A::from(world.resource::<Gravity>().0),
            *world.resource::<PhysicsSettings>(),
            *world.resource::<ConstraintSettings>(),
        )
    });
    for group in 0..groups {
        let passes = world.resource::<SolverState>().groups[group].passes;
        // `timestep / passes` in whole nanoseconds, as `Time<Fixed>` would
        // hold it: a pass of h/k is then the same as a fixed step of h/k.
        let dt = if passes == 1 {
            timestep.as_secs_f32()
        } else {
            (timestep / passes).as_secs_f32()
        };
        for pass in 0..passes {
            let mut step = world.resource_mut::<PhysicsStep>();
            *step = PhysicsStep {
                dt,
                pass,
                passes,
                group: group as u32,
                ..*step
            };
            match &dense {
                Some((g, settings, constraints)) => run_pass(
                    &mut world.resource_mut::<SolverState>(),
                    group,
                    dt,
                    pass == 0,
                    *g,
                    settings,
                    constraints,
                ),
                None => world.run_schedule(PhysicsSubstep),
            }
        }
    }
    world.run_schedule(StepEnd);
}

/// The plugin's own systems in [`PhysicsSubstep`].
pub(crate) const OWN_SUBSTEP_SYSTEMS: usize = 4;

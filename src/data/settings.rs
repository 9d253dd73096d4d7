//! The system sets, the substep schedule, and the step's settings.

use bevy::ecs::change_detection::{CheckChangeTicks, Tick};
use bevy::ecs::schedule::ScheduleLabel;
use bevy::prelude::*;

/// The system sets of the physics step in [`FixedUpdate`] (or, under
/// rollback, bevy_ggrs's `GgrsSchedule`), chained. The sets of the other
/// schedules have their own types: [`SubstepSystems`] in
/// [`PhysicsSubstep`], [`InterpolationSystems`] in [`Update`], so that
/// ordering against a set of another schedule, which Bevy would silently
/// ignore, does not come up.
///
/// 1. [`Prepare`](Self::Prepare): for your systems that must run before any
///    body moves in this fixed step.
/// 2. [`Step`](Self::Step): one exclusive system that
///    - re-admits repaired bodies and springs and rebuilds the solver's dense
///      index when bodies or springs were added, removed or changed;
///    - runs the passes of each group of islands (see
///      [`PhysicsSettings::substeps`]) on the solver's arrays, writing each
///      [`Body`](crate::Body) once at the end; systems of yours in the
///      [`SubstepSystems`] sets run between a pass's stages;
///    - reports and freezes invalid or non-finite state, puts resting
///      islands to sleep and moves the [origin](crate::origin).
///
///    The plugin's own bookkeeping runs inside this one system, on
///    single-threaded schedules, so that a fixed step costs one hand-off of
///    Bevy's multi-threaded executor rather than one per system.
/// 3. [`Finish`](Self::Finish): for your systems that read the finished step.
///
/// # Example
///
/// ```
/// use bevy::prelude::*;
/// use bevy_euler_physics::prelude::*;
///
/// #[derive(Component)]
/// struct Thruster(Vec3);
///
/// // Written before the step: acts for the whole fixed step.
/// fn thrust(mut bodies: Query<(&Thruster, &mut AccumulatedForce)>) {
///     for (thruster, mut force) in &mut bodies {
///         force.0 += thruster.0;
///     }
/// }
///
/// App::new()
///     .add_plugins((MinimalPlugins, EulerPhysicsPlugin))
///     .add_systems(FixedUpdate, thrust.in_set(PhysicsSystems::Prepare));
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
}

/// The system sets of one pass, in [`PhysicsSubstep`], chained:
///
/// 1. [`AccumulateForces`](Self::AccumulateForces): after the spring
///    forces; add your own forces here, to
///    [`AccumulatedForce`](crate::AccumulatedForce) (taken by this pass's
///    kick).
/// 2. [`IntegrateVelocities`](Self::IntegrateVelocities): after
///    `v ← v + h·(g + F·inv_mass)` and the Padé damping `v ← v / (1 + h·c)`.
/// 3. [`SolveConstraints`](Self::SolveConstraints): the constraint hook,
///    after the built-in rods and contacts. Systems here see the new
///    velocities and the old positions, and may change `Body::velocity`.
/// 4. [`IntegratePositions`](Self::IntegratePositions): after `x ← x + h·v`.
///
/// Each set runs after the plugin's own stage of the same name, on the
/// pass's bodies copied out to their components for it (and read back
/// after it); see [`PhysicsSubstep`].
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
///     .add_systems(PhysicsSubstep, floor.in_set(SubstepSystems::SolveConstraints));
/// ```
#[derive(SystemSet, Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SubstepSystems {
    /// Spring forces, then your forces.
    AccumulateForces,
    /// The velocity kick and the damping.
    IntegrateVelocities,
    /// The constraint hook.
    SolveConstraints,
    /// The position drift.
    IntegratePositions,
}

impl SubstepSystems {
    /// The four sets, in the order a pass runs them.
    ///
    /// # Example
    ///
    /// A system that runs after every stage of every pass:
    ///
    /// ```
    /// use bevy::prelude::*;
    /// use bevy_euler_physics::prelude::*;
    ///
    /// fn watch(bodies: SubstepBodies<&Body>) {
    ///     assert!(bodies.iter().all(|body| body.position.is_finite()));
    /// }
    ///
    /// let mut app = App::new();
    /// app.add_plugins((MinimalPlugins, EulerPhysicsPlugin));
    /// for set in SubstepSystems::ALL {
    ///     app.add_systems(PhysicsSubstep, watch.in_set(set));
    /// }
    /// ```
    pub const ALL: [SubstepSystems; 4] = [
        SubstepSystems::AccumulateForces,
        SubstepSystems::IntegrateVelocities,
        SubstepSystems::SolveConstraints,
        SubstepSystems::IntegratePositions,
    ];
}

/// The system set that draws bodies, in [`Update`]:
/// [`Interpolate`](Self::Interpolate) sets each body's
/// `Transform::translation` between its last two fixed positions. Run
/// what follows a body on screen (a camera) after it.
///
/// # Example
///
/// ```
/// use bevy::prelude::*;
/// use bevy_euler_physics::prelude::*;
///
/// #[derive(Component)]
/// struct Player;
///
/// fn follow(
///     player: Single<&Transform, With<Player>>,
///     mut camera: Single<&mut Transform, (With<Camera>, Without<Player>)>,
/// ) {
///     camera.translation.x = player.translation.x;
/// }
///
/// App::new().add_systems(Update, follow.after(InterpolationSystems::Interpolate));
/// ```
#[derive(SystemSet, Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum InterpolationSystems {
    /// Transform interpolation.
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
/// Every pass runs on the solver's arrays. While this schedule holds no
/// system of yours, the step does not run it at all, and writes each
/// [`Body`] once at the end of the fixed step. With systems of yours in
/// one of the four sets, the pass copies its bodies out to their
/// components before that set and reads them back after it (with the
/// forces your systems added to [`AccumulatedForce`]), which costs more per
/// body; sets without systems of yours cost nothing. Forces that are the
/// same for every pass of a fixed step are cheaper in a system in
/// `FixedUpdate` before [`PhysicsSystems::Step`] (an [`AccumulatedForce`]
/// written there acts in every pass of the step, as a [`ConstantForce`]
/// does). Copied out or not, the results are the same bit for bit. A system of
/// yours here in none of the four sets runs at some point of the pass; the
/// pass then copies around every stage for it.
///
/// Contacts between round bodies are found at the first pass of a fixed
/// step, for the whole step, and aimed at each pass's positions: if your
/// system moves a body next to one it was not near at the step's start,
/// the two meet from the next step. Contacts with planes are found each
/// pass.
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
///     .add_systems(PhysicsSubstep, wind.in_set(SubstepSystems::AccumulateForces));
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
    /// passes over Bevy's compute task pool: spring forces island by island,
    /// the kick and the drift body by body (so one big island splits too;
    /// a group of several islands of springs alone runs each thread's
    /// islands through forces, kick and drift at once),
    /// and the pair contacts of a pile in blocks that share no moving body
    /// (from half as many contacts a round); rods, limits and plane contacts
    /// stay on one thread. Smaller groups run on one thread, where waking
    /// threads would cost more than it saves. The result is the same bit
    /// for bit either way. Default: 16 384.
    pub parallel_threshold: usize,
    /// Whether [`InterpolationSystems::Interpolate`] draws bodies between their last
    /// two fixed positions (`true`), or at their latest fixed position
    /// (`false`: the picture then moves in steps of the fixed rate, and
    /// stutters when the frame rate and the fixed rate beat). Default: true.
    pub interpolate: bool,
    /// Whether the plugin runs each of Bevy's fixed schedules (`FixedFirst`
    /// … `FixedLast`) on the single-threaded executor while it holds at
    /// most one system that is not exclusive, and on Bevy's default
    /// (multi-threaded) one otherwise. Such a schedule has nothing to run
    /// in parallel, and the multi-threaded executor's wake of a pool thread
    /// cost 55–80 µs per fixed step in a small app here, more than ten
    /// times the step of a one-body scene (`benches/fixed_cost.rs`). The
    /// choice is made before each fixed loop, again whenever a schedule's
    /// system count changes. Bevy cannot say which executor a schedule
    /// runs on, so while this is on, an executor your code set on a fixed
    /// schedule of at most one such system is replaced: set it to `false`
    /// to choose executors yourself (the schedules it switched go back to
    /// Bevy's default). Default: true.
    ///
    /// ```
    /// use bevy::prelude::*;
    /// use bevy_euler_physics::prelude::*;
    ///
    /// App::new()
    ///     .add_plugins((MinimalPlugins, EulerPhysicsPlugin))
    ///     .insert_resource(PhysicsSettings {
    ///         lean_fixed_schedules: false,
    ///         ..default()
    ///     });
    /// ```
    pub lean_fixed_schedules: bool,
    /// Whether [`InterpolationSystems::Interpolate`] writes the
    /// `GlobalTransform` of a body with no parent and no children itself
    /// (what Bevy's transform propagation would write: the translation
    /// drawn, with the rotation and scale it holds), and its `Transform`
    /// without marking it changed, so that the propagation skips it. At
    /// 100 000 moving bodies that propagation took three quarters of a
    /// headless frame (about 40 ns a body here, `benches/frames.rs`). So
    /// `Changed<Transform>` does not see those bodies move; nothing in Bevy
    /// reads it but the propagation, which still runs for a body whose
    /// `Transform` your code changed. Set it to `false` to have every drawn
    /// `Transform` marked changed and propagated by Bevy. A body with a
    /// parent or children, or without a `GlobalTransform`, and every body
    /// in an app without Bevy's `TransformPlugin` (no propagation to spare,
    /// and nothing reads `GlobalTransform` there), is always drawn the
    /// second way. Default: true.
    ///
    /// ```
    /// use bevy::prelude::*;
    /// use bevy_euler_physics::prelude::*;
    ///
    /// // A system of yours reacts to moved bodies through `Changed<Transform>`.
    /// fn follow(moved: Query<&Transform, (With<Body>, Changed<Transform>)>) {
    ///     for transform in &moved {
    ///         // …
    ///         # let _ = transform;
    ///     }
    /// }
    ///
    /// App::new()
    ///     .add_plugins((MinimalPlugins, TransformPlugin, EulerPhysicsPlugin))
    ///     .insert_resource(PhysicsSettings {
    ///         write_global_transforms: false,
    ///         ..default()
    ///     })
    ///     .add_systems(PostUpdate, follow);
    /// ```
    pub write_global_transforms: bool,
}

/// [`Radius::MAX`](crate::Radius::MAX), here for the issue messages.
pub(crate) const MAX_RADIUS: f32 = 1.0e4;

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

    /// The most passes a fixed step of `timestep` can be cut into: each
    /// pass is a whole number of nanoseconds (as `Time<Fixed>` counts), at
    /// least one. An island asking for more passes gets this many, with a
    /// warning.
    ///
    /// ```
    /// use std::time::Duration;
    /// use bevy_euler_physics::prelude::*;
    /// assert_eq!(PhysicsSettings::most_passes(Duration::from_nanos(100)), 100);
    /// assert_eq!(PhysicsSettings::most_passes(Duration::from_secs(1)), PhysicsSettings::MAX_SUBSTEPS);
    /// ```
    pub fn most_passes(timestep: core::time::Duration) -> u32 {
        let nanos = u32::try_from(timestep.as_nanos()).unwrap_or(u32::MAX);
        nanos.clamp(1, Self::MAX_SUBSTEPS)
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
            lean_fixed_schedules: true,
            write_global_transforms: true,
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
/// # App::new().add_systems(PhysicsSubstep, speed_limit.in_set(SubstepSystems::SolveConstraints));
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

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

use bevy::ecs::change_detection::Tick;
use bevy::ecs::lifecycle::HookContext;
use bevy::ecs::query::{IterQueryData, QueryData, QueryFilter, QueryItem, ROQueryItem};
use bevy::ecs::system::SystemParam;
use bevy::ecs::world::DeferredWorld;
use bevy::prelude::*;

use crate::body::mark_solver_dirty;
use crate::schedule::PhysicsStep;
use crate::solver::{SolverState, Stepped};

/// Runs this body's island with `k` passes of `h / k` per fixed step.
///
/// An island takes the largest count among its bodies; bodies without it
/// follow [`PhysicsSettings::substeps`](crate::PhysicsSettings::substeps)
/// (or the automatic count, see [`AutoSubsteps`]). Changing it takes effect
/// from the next fixed step. `Substeps(0)` is read as 1 and counts above
/// [`PhysicsSettings::MAX_SUBSTEPS`](crate::PhysicsSettings::MAX_SUBSTEPS)
/// are clamped, each with one warning.
///
/// `k` passes of `h / k` give the same state, bit for bit, as `k` fixed
/// steps of `h / k` without substeps.
///
/// ```
/// use bevy::prelude::*;
/// use bevy_euler_physics::prelude::*;
///
/// fn spawn_stiff(mut commands: Commands) {
///     commands.spawn((Body::new(0.1), Substeps(8)));
/// }
/// # App::new().add_systems(Startup, spawn_stiff);
/// ```
#[derive(Component, Reflect, Debug, Clone, Copy, PartialEq, Eq)]
#[reflect(Component, Debug, PartialEq, Clone)]
#[component(on_insert = mark_solver_dirty, on_remove = mark_solver_dirty)]
pub struct Substeps(pub u32);

/// Lets the plugin choose this body's island's substep count: the smallest
/// that keeps the island's [`Island::load`] at or below
/// [`PhysicsSettings::stability_target`](crate::PhysicsSettings::stability_target),
/// up to [`PhysicsSettings::max_auto_substeps`](crate::PhysicsSettings::max_auto_substeps).
///
/// An explicit [`Substeps`] in the same island is a floor. Read the chosen
/// count from [`Island::substeps`].
/// [`PhysicsSettings::auto_substeps`](crate::PhysicsSettings::auto_substeps)
/// makes this the default for every island.
///
/// ```
/// use bevy::prelude::*;
/// use bevy_euler_physics::prelude::*;
///
/// fn spawn(mut commands: Commands) {
///     commands.spawn((Body::new(0.05), AutoSubsteps));
/// }
/// # App::new().add_systems(Startup, spawn);
/// ```
#[derive(Component, Reflect, Debug, Clone, Copy, PartialEq, Eq, Default)]
#[reflect(Component, Default, Debug, PartialEq, Clone)]
#[component(on_insert = mark_solver_dirty, on_remove = mark_solver_dirty)]
pub struct AutoSubsteps;

/// What the plugin worked out for this body's island. Read-only: the plugin
/// rewrites it whenever islands change. Fixed bodies and bodies left out of
/// the step (see [`PhysicsError`](crate::PhysicsError)) carry [`Island::NONE`].
///
/// ```
/// use bevy::prelude::*;
/// use bevy_euler_physics::prelude::*;
///
/// fn show(islands: Query<(Entity, &Island)>) {
///     for (entity, island) in &islands {
///         if island.is_some() {
///             info!("{entity}: {} passes, margin {:.2}", island.substeps(), island.margin());
///         }
///     }
/// }
/// # App::new().add_systems(Update, show);
/// ```
#[derive(Component, Reflect, Debug, Clone, Copy, PartialEq)]
#[reflect(Component, Default, Debug, PartialEq, Clone)]
pub struct Island {
    pub(crate) id: u32,
    pub(crate) substeps: u32,
    pub(crate) load: f32,
    /// The pass group of the island (internal).
    pub(crate) group: u32,
}

impl Default for Island {
    fn default() -> Self {
        Self::NONE
    }
}

impl Island {
    /// Not in an island: a fixed body, or one not yet indexed.
    pub const NONE: Self = Self {
        id: u32::MAX,
        substeps: 1,
        load: 0.0,
        group: u32::MAX,
    };

    /// Whether the body is in an island.
    ///
    /// ```
    /// # use bevy_euler_physics::prelude::*;
    /// assert!(!Island::NONE.is_some());
    /// ```
    pub fn is_some(&self) -> bool {
        self.id != u32::MAX
    }

    /// The island's index among this step's islands. Bodies with the same id
    /// are in the same island; the ids change when islands change.
    ///
    /// ```
    /// # use bevy_euler_physics::prelude::*;
    /// assert_eq!(Island::NONE.id(), u32::MAX);
    /// ```
    pub fn id(&self) -> u32 {
        self.id
    }

    /// Passes per fixed step the island runs.
    ///
    /// ```
    /// # use bevy_euler_physics::prelude::*;
    /// assert_eq!(Island::NONE.substeps(), 1);
    /// ```
    pub fn substeps(&self) -> u32 {
        self.substeps
    }

    /// How much of the stability limit the island's fastest mode uses at its
    /// pass step `h'`: `max(√((ω·h')² + 2·γ·h') / 2, γ·h' / 2)`, where `ω²`
    /// and `γ` bound the island's stiffness and damping over mass (a
    /// Gershgorin bound: exact for a pair, and for a long uniform chain
    /// within a few percent of its fastest mode `2·√(k/m)`). Below 1 the
    /// island is stable; 0 for an island without springs.
    ///
    /// ```
    /// # use bevy_euler_physics::prelude::*;
    /// assert_eq!(Island::NONE.load(), 0.0);
    /// ```
    pub fn load(&self) -> f32 {
        self.load
    }

    /// `1 − load`: the share of the stability limit left; negative when
    /// unstable.
    ///
    /// ```
    /// # use bevy_euler_physics::prelude::*;
    /// assert_eq!(Island::NONE.margin(), 1.0);
    /// ```
    pub fn margin(&self) -> f32 {
        1.0 - self.load
    }
}

/// How long this body's island has been resting (every body slower than
/// its sleep threshold), in seconds of simulated time; 0 while it moves or
/// sleeps. Read-only: the plugin writes it. It is part of the state a
/// snapshot or a rollback restores, since it decides when the island sleeps.
///
/// ```
/// use bevy::prelude::*;
/// use bevy_euler_physics::prelude::*;
///
/// fn almost_asleep(bodies: Query<(Entity, &RestTime)>, sleep: Res<SleepSettings>) {
///     for (entity, rest) in &bodies {
///         if rest.seconds() > 0.8 * sleep.time_to_sleep {
///             debug!("{entity} is about to sleep");
///         }
///     }
/// }
/// # App::new().add_systems(Update, almost_asleep);
/// ```
#[derive(Component, Reflect, Debug, Clone, Copy, PartialEq, Default)]
#[reflect(Component, Default, Debug, PartialEq, Clone)]
pub struct RestTime(pub(crate) f32);

impl RestTime {
    /// The resting time in seconds.
    ///
    /// ```
    /// # use bevy_euler_physics::prelude::*;
    /// assert_eq!(RestTime::default().seconds(), 0.0);
    /// ```
    pub fn seconds(&self) -> f32 {
        self.0
    }
}

/// Marks a body whose island is asleep. Set and removed by the plugin; put an
/// island to sleep or wake it with [`IslandCommands`].
///
/// A sleeping body has no [`AccumulatedForce`](crate::AccumulatedForce):
/// systems that add to every body's accumulated force skip it, and so
/// spend nothing on it. To push a sleeping body, insert an
/// `AccumulatedForce` or a [`ConstantForce`](crate::ConstantForce) (either
/// wakes its island), or write its velocity. It gets its `AccumulatedForce`
/// back when it wakes.
///
/// ```
/// use bevy::prelude::*;
/// use bevy_euler_physics::prelude::*;
///
/// fn count_asleep(asleep: Query<(), With<Sleeping>>) {
///     info!("{} bodies asleep", asleep.iter().count());
/// }
/// # App::new().add_systems(Update, count_asleep);
/// ```
#[derive(Component, Reflect, Debug, Clone, Copy, PartialEq, Eq, Default)]
#[reflect(Component, Default, Debug, PartialEq, Clone)]
#[component(on_insert = mark_solver_dirty, on_remove = on_sleeping_remove)]
pub struct Sleeping {
    /// When the island fell asleep: changes after it are the user's.
    #[reflect(ignore)]
    pub(crate) since: Tick,
}

/// Keeps this body's island awake. Removing it lets the island sleep again.
///
/// ```
/// use bevy::prelude::*;
/// use bevy_euler_physics::prelude::*;
///
/// fn spawn_player(mut commands: Commands) {
///     commands.spawn((Body::new(70.0), SleepingDisabled));
/// }
/// # App::new().add_systems(Startup, spawn_player);
/// ```
#[derive(Component, Reflect, Debug, Clone, Copy, PartialEq, Eq, Default)]
#[reflect(Component, Default, Debug, PartialEq, Clone)]
#[component(on_insert = wake_on_sleeping_disabled, on_remove = mark_solver_dirty)]
pub struct SleepingDisabled;

/// This body's speed threshold for sleeping, in m/s, instead of
/// [`SleepSettings::speed_threshold`]. A negative or non-finite value is
/// read as 0 (the body never counts as resting), with one warning.
///
/// ```
/// use bevy::prelude::*;
/// use bevy_euler_physics::prelude::*;
///
/// fn spawn_jittery(mut commands: Commands) {
///     commands.spawn((Body::new(1.0), SleepThreshold(0.2)));
/// }
/// # App::new().add_systems(Startup, spawn_jittery);
/// ```
#[derive(Component, Reflect, Debug, Clone, Copy, PartialEq)]
#[reflect(Component, Debug, PartialEq, Clone)]
#[component(on_insert = mark_solver_dirty, on_remove = mark_solver_dirty)]
pub struct SleepThreshold(pub f32);

/// When islands fall asleep.
///
/// An island sleeps once every body in it has been slower than its
/// threshold for `time_to_sleep` seconds of simulated time, unless one of
/// them has [`SleepingDisabled`]. Negative or non-finite values are read as
/// 0 with one warning.
///
/// ```
/// use bevy::prelude::*;
/// use bevy_euler_physics::prelude::*;
///
/// App::new()
///     .add_plugins((MinimalPlugins, EulerPhysicsPlugin))
///     .insert_resource(SleepSettings { time_to_sleep: 1.0, ..default() });
/// ```
#[derive(Resource, Reflect, Debug, Clone, Copy, PartialEq)]
#[reflect(Resource, Default, Debug, PartialEq, Clone)]
pub struct SleepSettings {
    /// Whether islands may sleep at all. Default: true.
    pub enabled: bool,
    /// Speed below which a body counts as resting, in m/s. Default: 0.05.
    pub speed_threshold: f32,
    /// How long an island must rest before it sleeps, in seconds.
    /// Default: 0.5.
    pub time_to_sleep: f32,
}

impl Default for SleepSettings {
    fn default() -> Self {
        Self {
            enabled: true,
            speed_threshold: 0.05,
            time_to_sleep: 0.5,
        }
    }
}

impl SleepSettings {
    /// `speed_threshold` as used: negative or non-finite reads as 0.
    ///
    /// ```
    /// # use bevy_euler_physics::prelude::*;
    /// let s = SleepSettings { speed_threshold: -1.0, ..Default::default() };
    /// assert_eq!(s.threshold(), 0.0);
    /// ```
    pub fn threshold(&self) -> f32 {
        sanitize(self.speed_threshold)
    }

    /// `time_to_sleep` as used: negative or non-finite reads as 0.
    ///
    /// ```
    /// # use bevy_euler_physics::prelude::*;
    /// let s = SleepSettings { time_to_sleep: f32::NAN, ..Default::default() };
    /// assert_eq!(s.sleep_time(), 0.0);
    /// ```
    pub fn sleep_time(&self) -> f32 {
        sanitize(self.time_to_sleep)
    }
}

pub(crate) fn sanitize(x: f32) -> f32 {
    if x.is_finite() && x > 0.0 { x } else { 0.0 }
}

/// Why an island woke: the `cause` of an [`IslandWoke`].
///
/// ```
/// use bevy::prelude::*;
/// use bevy_euler_physics::prelude::*;
///
/// // Tell wakes from your own code apart from the others.
/// fn count_pokes(mut woke: MessageReader<IslandWoke>, mut pokes: Local<u32>) {
///     for wake in woke.read() {
///         if let WakeCause::BodyWritten(_) | WakeCause::Command(_) = wake.cause {
///             *pokes += 1;
///         }
///     }
/// }
/// # App::new().add_systems(Update, count_pokes);
/// ```
#[derive(Reflect, Debug, Clone, Copy, PartialEq, Eq)]
#[reflect(Debug, PartialEq, Clone)]
pub enum WakeCause {
    /// Your code wrote this body's [`Body`](crate::Body) (position,
    /// velocity or mass).
    BodyWritten(Entity),
    /// A force on this body was added, changed or removed:
    /// [`ConstantForce`](crate::ConstantForce), or a non-zero
    /// [`AccumulatedForce`](crate::AccumulatedForce).
    ForceChanged(Entity),
    /// This spring was added, changed or removed.
    SpringChanged(Entity),
    /// This constraint was added, changed or removed: a
    /// [`DistanceConstraint`](crate::DistanceConstraint), a body's
    /// [`Radius`](crate::Radius) or a [`GroundPlane`](crate::GroundPlane).
    ConstraintChanged(Entity),
    /// This fixed body, which the island hangs from, moved.
    FixedBodyMoved(Entity),
    /// [`Gravity`](crate::Gravity) changed.
    GravityChanged,
    /// This body got [`SleepingDisabled`].
    SleepingDisabled(Entity),
    /// This body of the island was despawned or lost its `Body`.
    BodyRemoved(Entity),
    /// A new join merged the island with an awake one.
    Joined,
    /// [`IslandCommands::wake_island`] on this body.
    Command(Entity),
}

/// Sent when a sleeping island wakes.
///
/// ```
/// use bevy::prelude::*;
/// use bevy_euler_physics::prelude::*;
///
/// fn log_wakes(mut woke: MessageReader<IslandWoke>) {
///     for wake in woke.read() {
///         info!("{} bodies woke: {:?}", wake.bodies.len(), wake.cause);
///     }
/// }
/// # App::new().add_systems(Update, log_wakes);
/// ```
#[derive(Message, Reflect, Debug, Clone, PartialEq)]
#[reflect(Debug, PartialEq, Clone)]
pub struct IslandWoke {
    /// The island's bodies.
    pub bodies: Vec<Entity>,
    /// What woke it (the first cause found, when several did).
    pub cause: WakeCause,
}

/// Sent when an island falls asleep.
///
/// ```
/// use bevy::prelude::*;
/// use bevy_euler_physics::prelude::*;
///
/// fn log_sleeps(mut slept: MessageReader<IslandSlept>) {
///     for sleep in slept.read() {
///         info!("{} bodies fell asleep", sleep.bodies.len());
///     }
/// }
/// # App::new().add_systems(Update, log_sleeps);
/// ```
#[derive(Message, Reflect, Debug, Clone, PartialEq)]
#[reflect(Debug, PartialEq, Clone)]
pub struct IslandSlept {
    /// The island's bodies.
    pub bodies: Vec<Entity>,
}

/// Commands that put a body's island to sleep or wake it. Both take effect
/// at the start of the next fixed step.
///
/// ```
/// use bevy::prelude::*;
/// use bevy_euler_physics::prelude::*;
///
/// #[derive(Resource)]
/// struct Paused(bool);
///
/// fn freeze_when_paused(
///     paused: Res<Paused>,
///     bodies: Query<Entity, With<Body>>,
///     mut commands: Commands,
/// ) {
///     if paused.is_changed() {
///         for body in &bodies {
///             if paused.0 {
///                 commands.entity(body).sleep_island();
///             } else {
///                 commands.entity(body).wake_island();
///             }
///         }
///     }
/// }
/// # App::new().add_systems(Update, freeze_when_paused);
/// ```
pub trait IslandCommands {
    /// Wakes the island of this body (announced with
    /// [`WakeCause::Command`]).
    fn wake_island(&mut self) -> &mut Self;
    /// Puts the island of this body to sleep, however fast it moves, unless
    /// one of its bodies has [`SleepingDisabled`].
    fn sleep_island(&mut self) -> &mut Self;
}

impl IslandCommands for EntityCommands<'_> {
    fn wake_island(&mut self) -> &mut Self {
        self.queue(|entity: EntityWorldMut| {
            let id = entity.id();
            let world = entity.into_world_mut();
            if let Some(mut solver) = world.get_resource_mut::<SolverState>() {
                solver.request_wake(WakeTarget::Body(id), WakeCause::Command(id));
            }
        })
    }

    fn sleep_island(&mut self) -> &mut Self {
        self.queue(|entity: EntityWorldMut| {
            let id = entity.id();
            let world = entity.into_world_mut();
            if let Some(mut solver) = world.get_resource_mut::<SolverState>() {
                solver.sleep_requests.push(id);
                solver.dirty = true;
            }
        })
    }
}

/// What a wake request points at.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum WakeTarget {
    /// The island of this body.
    Body(Entity),
    /// The island with this id in the last build.
    Island(u32),
    /// Every island.
    All,
    /// The islands this fixed body holds.
    Anchor(Entity),
}

fn wake_on_sleeping_disabled(mut world: DeferredWorld, ctx: HookContext) {
    if let Some(mut solver) = world.get_resource_mut::<SolverState>() {
        solver.request_wake(
            WakeTarget::Body(ctx.entity),
            WakeCause::SleepingDisabled(ctx.entity),
        );
    }
}

/// Hook: a body woke. It gets its [`AccumulatedForce`](crate::AccumulatedForce)
/// back (sleeping bodies have none).
fn on_sleeping_remove(mut world: DeferredWorld, ctx: HookContext) {
    world
        .commands()
        .entity(ctx.entity)
        .try_insert_if_new(crate::AccumulatedForce::default());
    mark_solver_dirty(world, ctx);
}

/// Hook: a force component was added, replaced or removed. A sleeping
/// body's island wakes.
pub(crate) fn wake_on_force(mut world: DeferredWorld, ctx: HookContext) {
    if !world.entity(ctx.entity).contains::<Sleeping>() {
        return;
    }
    if let Some(mut solver) = world.get_resource_mut::<SolverState>() {
        solver.request_wake(
            WakeTarget::Body(ctx.entity),
            WakeCause::ForceChanged(ctx.entity),
        );
    }
}

/// The bodies the current [`PhysicsSubstep`](crate::PhysicsSubstep) pass
/// moves, for your force and constraint systems, with the pass's step size.
///
/// Islands with different substep counts run in separate passes, and
/// sleeping islands run in none; this parameter yields exactly the dynamic
/// bodies of the islands in the current pass (a `Query<D, F>` narrowed to
/// them). Use [`dt`](Self::dt) as the step: it is `h / passes` for this
/// island.
///
/// # Example
///
/// A drag force and a floor constraint that are right under any substep
/// count:
///
/// ```
/// use bevy::prelude::*;
/// use bevy_euler_physics::prelude::*;
///
/// fn air_drag(mut bodies: SubstepBodies<(&Body, &mut AccumulatedForce)>) {
///     for (body, mut force) in bodies.iter_mut() {
///         force.0 -= 0.1 * body.velocity;
///     }
/// }
///
/// fn floor(mut bodies: SubstepBodies<&mut Body>) {
///     let dt = bodies.dt();
///     for mut body in bodies.iter_mut() {
///         // Where this pass's drift will take it.
///         if body.position.y + dt * body.velocity.y < 0.0 {
///             body.velocity.y = -body.position.y / dt;
///         }
///     }
/// }
///
/// let mut app = App::new();
/// app.add_plugins((MinimalPlugins, EulerPhysicsPlugin)).add_systems(
///     PhysicsSubstep,
///     (
///         air_drag.in_set(PhysicsSystems::AccumulateForces),
///         floor.in_set(PhysicsSystems::SolveConstraints),
///     ),
/// );
/// let body = app
///     .world_mut()
///     .spawn((Body::new(1.0).with_position(Vec3::Y * 0.01), Substeps(4)))
///     .id();
/// for _ in 0..10 {
///     app.update();
/// }
/// assert!(app.world().get::<Body>(body).unwrap().position.y >= 0.0);
/// ```
#[derive(SystemParam)]
pub struct SubstepBodies<'w, 's, D: QueryData + 'static, F: QueryFilter + 'static = ()> {
    step: Res<'w, PhysicsStep>,
    query: Query<'w, 's, (D, &'static Island), (F, Stepped)>,
}

impl<'w, 's, D: QueryData + 'static, F: QueryFilter + 'static> SubstepBodies<'w, 's, D, F> {
    /// The step size of this pass, in seconds.
    ///
    /// ```
    /// # use bevy::prelude::*;
    /// # use bevy_euler_physics::prelude::*;
    /// fn show(bodies: SubstepBodies<&Body>) {
    ///     debug!("pass step {}", bodies.dt());
    /// }
    /// # App::new().add_systems(PhysicsSubstep, show);
    /// ```
    pub fn dt(&self) -> f32 {
        self.step.dt
    }

    /// The current pass: its step size and its place in the fixed step.
    ///
    /// ```
    /// # use bevy::prelude::*;
    /// # use bevy_euler_physics::prelude::*;
    /// fn first_pass_only(bodies: SubstepBodies<&Body>) {
    ///     if bodies.step().is_first() { /* once per fixed step */ }
    /// }
    /// # App::new().add_systems(PhysicsSubstep, first_pass_only);
    /// ```
    pub fn step(&self) -> &PhysicsStep {
        &self.step
    }

    /// The pass's bodies, read-only.
    ///
    /// ```
    /// # use bevy::prelude::*;
    /// # use bevy_euler_physics::prelude::*;
    /// fn lowest(bodies: SubstepBodies<&Body>) {
    ///     let _y = bodies.iter().map(|b| b.position.y).fold(f32::INFINITY, f32::min);
    /// }
    /// # App::new().add_systems(PhysicsSubstep, lowest);
    /// ```
    pub fn iter(&self) -> impl Iterator<Item = ROQueryItem<'_, 's, D>> {
        let group = self.step.group;
        self.query
            .iter()
            .filter_map(move |(item, island)| (island.group == group).then_some(item))
    }

    /// The pass's bodies.
    ///
    /// ```
    /// # use bevy::prelude::*;
    /// # use bevy_euler_physics::prelude::*;
    /// fn lift(mut bodies: SubstepBodies<&mut AccumulatedForce>) {
    ///     for mut force in bodies.iter_mut() {
    ///         force.0.y += 1.0;
    ///     }
    /// }
    /// # App::new().add_systems(PhysicsSubstep, lift);
    /// ```
    pub fn iter_mut(&mut self) -> impl Iterator<Item = QueryItem<'_, 's, D>>
    where
        D: IterQueryData,
    {
        let group = self.step.group;
        self.query
            .iter_mut()
            .filter_map(move |(item, island)| (island.group == group).then_some(item))
    }

    /// Whether `entity` is moved by this pass.
    ///
    /// ```
    /// # use bevy::prelude::*;
    /// # use bevy_euler_physics::prelude::*;
    /// fn check(bodies: SubstepBodies<&Body>, all: Query<Entity, With<Body>>) {
    ///     let _in_pass = all.iter().filter(|&e| bodies.contains(e)).count();
    /// }
    /// # App::new().add_systems(PhysicsSubstep, check);
    /// ```
    pub fn contains(&self, entity: Entity) -> bool {
        self.query
            .get(entity)
            .is_ok_and(|(_, island)| island.group == self.step.group)
    }

    /// `entity`'s item, if this pass moves it.
    ///
    /// ```
    /// # use bevy::prelude::*;
    /// # use bevy_euler_physics::prelude::*;
    /// #[derive(Resource)]
    /// struct Player(Entity);
    ///
    /// fn push_player(player: Res<Player>, mut bodies: SubstepBodies<&mut AccumulatedForce>) {
    ///     if let Some(mut force) = bodies.get_mut(player.0) {
    ///         force.0.x += 10.0;
    ///     }
    /// }
    /// # App::new().add_systems(PhysicsSubstep, push_player);
    /// ```
    pub fn get_mut(&mut self, entity: Entity) -> Option<QueryItem<'_, 's, D>> {
        let group = self.step.group;
        match self.query.get_mut(entity) {
            Ok((item, island)) if island.group == group => Some(item),
            _ => None,
        }
    }
}

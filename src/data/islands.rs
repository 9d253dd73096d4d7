//! The islands' components, settings and messages; what islands are is in
//! the public [`islands`](crate::islands) module's docs.

use bevy::ecs::change_detection::Tick;
use bevy::ecs::lifecycle::HookContext;
use bevy::ecs::world::DeferredWorld;
use bevy::prelude::*;

use crate::data::forces::AccumulatedForce;
use crate::data::requests::{
    BodyIndex, Island, SolverRequests, WakeCause, WakeTarget, mark_dirty, request,
};

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
#[component(on_insert = mark_dirty, on_remove = mark_dirty)]
pub struct Substeps(pub u32);

/// Lets the plugin choose this body's island's substep count: the smallest
/// that keeps the island's [`Island::load`](crate::Island::load) at or below
/// [`PhysicsSettings::stability_target`](crate::PhysicsSettings::stability_target),
/// up to [`PhysicsSettings::max_auto_substeps`](crate::PhysicsSettings::max_auto_substeps).
///
/// An explicit [`Substeps`] in the same island is a floor. Read the chosen
/// count from [`Island::substeps`](crate::Island::substeps).
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
#[component(on_insert = mark_dirty, on_remove = mark_dirty)]
pub struct AutoSubsteps;

/// Steps this body's island's springs implicitly, by linearised backward
/// Euler: one pass is stable at any stiffness, where an explicit step
/// needs `ω·h < 2` (and so more substeps as springs stiffen). Each pass
/// solves a linear system over the island's bodies by conjugate gradients
/// ([`ImplicitSettings`]); gravity, your forces, damping, rods, limits and
/// contacts keep their place in the step.
///
/// Backward Euler takes energy out of fast modes (a stiff spring's
/// ringing dies out within a few steps) while slow motion (a rope's
/// swing, a soft spring's period) stays right: choose it for stiff
/// content (cloth, hair, stiff ropes) where substeps would cost many
/// passes, and substeps where fast oscillation must be kept. The island
/// runs one pass unless one of its bodies has [`Substeps`]; it is never
/// warned about as unstable, and [`AutoSubsteps`] does not apply to it.
///
/// ```
/// use bevy::prelude::*;
/// use bevy_euler_physics::prelude::*;
///
/// fn spawn(mut commands: Commands) {
///     let anchor = commands.spawn(Body::fixed(Vec3::ZERO)).id();
///     // 0.1 kg on 100 000 N/m: ω·h ≈ 16 at 64 Hz, one pass.
///     let bob = commands
///         .spawn((Body::new(0.1).with_position(Vec3::new(0.0, -0.1, 0.0)), ImplicitSprings))
///         .id();
///     commands.spawn(Spring::new(anchor, bob, 0.1, 1e5));
/// }
/// # App::new().add_systems(Startup, spawn);
/// ```
#[derive(Component, Reflect, Debug, Clone, Copy, PartialEq, Eq, Default)]
#[reflect(Component, Default, Debug, PartialEq, Clone)]
#[component(on_insert = mark_dirty, on_remove = mark_dirty)]
pub struct ImplicitSprings;

/// How islands with [`ImplicitSprings`] solve each pass.
///
/// By default ([`ImplicitSolver::Auto`]) an island whose matrix factors
/// cheaply (a rope, a chain, a ragdoll's tree) is solved exactly by a
/// sparse factorisation, and any other (a cloth) by
/// conjugate gradients, which stop after `max_iterations` or when the
/// residual is below `tolerance` times the right-hand side's. An island
/// that does not converge uses its last iterate and is reported once (a
/// [`PhysicsWarning`](crate::PhysicsWarning) with
/// [`PhysicsIssue::ImplicitNotConverged`](crate::PhysicsIssue::ImplicitNotConverged)).
///
/// ```
/// use bevy::prelude::*;
/// use bevy_euler_physics::prelude::*;
///
/// App::new()
///     .add_plugins((MinimalPlugins, EulerPhysicsPlugin))
///     .insert_resource(ImplicitSettings { max_iterations: 200, ..default() });
/// ```
#[derive(Resource, Reflect, Debug, Clone, Copy, PartialEq)]
#[reflect(Resource, Default, Debug, PartialEq, Clone)]
pub struct ImplicitSettings {
    /// Conjugate-gradient iterations per island and pass, at most (default
    /// 100).
    pub max_iterations: u32,
    /// The relative residual at which conjugate gradients stop (default
    /// 1e-5).
    pub tolerance: f32,
    /// Direct, iterative, or chosen per island (default
    /// [`ImplicitSolver::Auto`]).
    pub solver: ImplicitSolver,
    /// What conjugate gradients are preconditioned with (default
    /// [`ImplicitPreconditioner::Multigrid`]).
    pub preconditioner: ImplicitPreconditioner,
}

/// What conjugate gradients are preconditioned with
/// ([`ImplicitSettings::preconditioner`]).
///
/// Jacobi's preconditioner (each unknown scaled by its diagonal) costs
/// nothing to set up and one product per iteration, but leaves the
/// system's conditioning as it is: a cloth needs more iterations the more
/// bodies it has and the stiffer its springs (a 64×64 cloth of stiff
/// springs reached the cap of 200 per pass). Multigrid groups the island's
/// bodies into aggregates along its stiffest springs, level below level,
/// once per layout, and applies one V-cycle per iteration (about three
/// times an iteration's own work): the iterations stay few as the cloth
/// grows.
///
/// ```
/// use bevy::prelude::*;
/// use bevy_euler_physics::prelude::*;
///
/// // Jacobi's preconditioner, for small islands solved iteratively.
/// let settings = ImplicitSettings {
///     preconditioner: ImplicitPreconditioner::Jacobi,
///     ..default()
/// };
/// # App::new().insert_resource(settings);
/// ```
#[derive(Reflect, Debug, Clone, Copy, PartialEq, Eq, Default)]
#[reflect(Default, Debug, PartialEq, Clone)]
pub enum ImplicitPreconditioner {
    /// Aggregation multigrid: one V-cycle per iteration, block-Jacobi
    /// sweeps on each level and an exact solve of the coarsest.
    #[default]
    Multigrid,
    /// Each unknown scaled by its diagonal.
    Jacobi,
}

/// How an implicit island's linear system is solved
/// ([`ImplicitSettings::solver`]).
///
/// A direct solve is exact and costs, for a chain or a tree, about as much
/// as eight explicit passes (100 stiff ropes in `benches/implicit.rs`:
/// 0.41–0.53× their 18 automatic substeps); its cost grows with the fill
/// of the factor,
/// which for a square cloth of `n` bodies grows faster than `n`.
/// Conjugate gradients cost a fixed amount per iteration; with Jacobi's
/// preconditioner they need more iterations as islands grow longer and
/// stiffer, with multigrid (the default, see [`ImplicitPreconditioner`])
/// few more (a 64×64 cloth of stiff springs: about 14 a pass, against
/// Jacobi's cap of 200).
///
/// ```
/// use bevy::prelude::*;
/// use bevy_euler_physics::prelude::*;
///
/// // Conjugate gradients for every island, to a looser tolerance.
/// let settings = ImplicitSettings {
///     solver: ImplicitSolver::ConjugateGradients,
///     tolerance: 1e-3,
///     ..default()
/// };
/// # App::new().insert_resource(settings);
/// ```
#[derive(Reflect, Debug, Clone, Copy, PartialEq, Eq, Default)]
#[reflect(Default, Debug, PartialEq, Clone)]
pub enum ImplicitSolver {
    /// A direct solve where the island's factor needs at most 8 block
    /// updates per body and spring (every chain and tree, and meshes with
    /// little fill), conjugate gradients elsewhere (a cloth of 8×8 bodies
    /// with shear and bend springs needs 12, and more as it grows).
    #[default]
    Auto,
    /// A direct solve for every island, whatever it costs.
    Direct,
    /// Conjugate gradients for every island.
    ConjugateGradients,
}

impl ImplicitSettings {
    /// The settings as used: at least one iteration, and a finite,
    /// non-negative tolerance (else the default's).
    ///
    /// ```
    /// # use bevy::prelude::*;
    /// # use bevy_euler_physics::prelude::*;
    /// let bad = ImplicitSettings { max_iterations: 0, tolerance: f32::NAN, ..default() };
    /// assert_eq!(bad.cg().max_iterations, 1);
    /// ```
    pub fn cg(&self) -> crate::kernels::implicit::Cg {
        use crate::kernels::implicit::Method;
        let tolerance = if self.tolerance.is_finite() && self.tolerance >= 0.0 {
            self.tolerance
        } else {
            Self::default().tolerance
        };
        crate::kernels::implicit::Cg {
            max_iterations: self.max_iterations.max(1),
            tolerance,
            method: match self.solver {
                ImplicitSolver::Auto => Method::Auto,
                ImplicitSolver::Direct => Method::Direct,
                ImplicitSolver::ConjugateGradients => Method::ConjugateGradients,
            },
            multigrid: self.preconditioner == ImplicitPreconditioner::Multigrid,
        }
    }
}

impl Default for ImplicitSettings {
    fn default() -> Self {
        Self {
            max_iterations: 100,
            tolerance: 1e-5,
            solver: ImplicitSolver::Auto,
            preconditioner: ImplicitPreconditioner::Multigrid,
        }
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

/// Marks a body whose island is asleep. The plugin sets and removes it;
/// your code may too, with the same meaning as [`IslandCommands`]:
///
/// - **Inserting** `Sleeping::default()` on a body of an awake island asks
///   the island to sleep, as [`sleep_island`](IslandCommands::sleep_island)
///   does: at the start of the next fixed step the whole island falls
///   asleep, with one [`IslandSlept`], unless one of its bodies has
///   [`SleepingDisabled`], in which case the plugin takes the marker off
///   again and the island stays awake (no message). An island of which
///   part sleeps (an awake body just joined it) wakes whole instead, with
///   an [`IslandWoke`]. Inserted on a body that already sleeps, it changes
///   nothing (a write to the body earlier in the frame still wakes it); on
///   a fixed body, it is taken off. Removed again before the step, the
///   request is gone.
/// - **Removing** it from a body of a sleeping island wakes the whole
///   island, as [`wake_island`](IslandCommands::wake_island) does (with
///   [`WakeCause::Command`]).
///
/// Until the step, a body you marked counts as asleep to your queries
/// (`With<Sleeping>`) and is not interpolated.
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
///
/// Putting an island to sleep by marking one of its bodies:
///
/// ```
/// use bevy::prelude::*;
/// use bevy_euler_physics::prelude::*;
///
/// #[derive(Component)]
/// struct Crate;
///
/// fn settle_crates(crates: Query<Entity, With<Crate>>, mut commands: Commands) {
///     for body in &crates {
///         commands.entity(body).insert(Sleeping::default());
///     }
/// }
/// # App::new().add_systems(Startup, settle_crates);
/// ```
#[derive(Component, Reflect, Debug, Clone, Copy, PartialEq, Eq, Default)]
#[reflect(Component, Default, Debug, PartialEq, Clone)]
#[component(
    on_insert = on_sleeping_insert,
    on_discard = on_sleeping_discard,
    on_remove = on_sleeping_remove
)]
pub struct Sleeping {
    /// When the island fell asleep: changes after it are the user's. The
    /// default (tick 0, which the plugin never stamps: see `asleep_at`)
    /// marks a request from your code
    /// that the next rebuild carries out or refuses.
    #[reflect(ignore)]
    pub(crate) since: Tick,
}

impl Sleeping {
    /// Made by your code (`Sleeping::default()`, or a scene), not yet
    /// carried out by the plugin: a sleep request.
    pub(crate) fn is_request(&self) -> bool {
        self.since == Tick::default()
    }
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
#[component(on_insert = wake_on_sleeping_disabled, on_remove = mark_dirty)]
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
#[component(on_insert = mark_dirty, on_remove = mark_dirty)]
pub struct SleepThreshold(pub f32);

/// When islands fall asleep.
///
/// An island sleeps once every body in it has been resting for
/// `time_to_sleep` seconds of simulated time, unless one of them has
/// [`SleepingDisabled`]. A body rests at the end of a step when its
/// velocity is below its threshold, or when it moved less than the
/// threshold times the step over the step (a body that a contact holds
/// against a rod or a limit may keep a velocity it does not move with).
/// Negative or non-finite values are read as 0 with one warning.
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
    /// Speed below which a body counts as resting, in m/s (see above).
    /// Default: 0.05.
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
        let id = self.id();
        // Queued on the world, not the entity: a body despawned earlier in
        // the same command queue is no error here (the request then finds
        // nothing to wake).
        self.commands_mut().queue(move |world: &mut World| {
            if let Some(mut requests) = world.get_resource_mut::<SolverRequests>() {
                requests.wake(WakeTarget::Body(id), WakeCause::Command(id));
            }
        });
        self
    }

    fn sleep_island(&mut self) -> &mut Self {
        let id = self.id();
        self.commands_mut().queue(move |world: &mut World| {
            if let Some(mut requests) = world.get_resource_mut::<SolverRequests>() {
                requests.sleeps.push(id);
                requests.dirty = true;
            }
        });
        self
    }
}

fn wake_on_sleeping_disabled(mut world: DeferredWorld, ctx: HookContext) {
    request(&mut world, |requests| {
        requests.wake(
            WakeTarget::Body(ctx.entity),
            WakeCause::SleepingDisabled(ctx.entity),
        );
    });
}

/// Hook: a `Sleeping` is about to be replaced (or removed): keep its tick
/// for the `on_insert` hook that follows a replacement.
fn on_sleeping_discard(mut world: DeferredWorld, ctx: HookContext) {
    if let Some(since) = world.get::<Sleeping>(ctx.entity).map(|s| s.since) {
        request(&mut world, |requests| {
            requests.replaced_sleep = Some((ctx.entity, since));
        });
    }
}

/// Hook: the plugin, a restore or your code marked a body asleep. Your
/// marker put over one the plugin set (the body already sleeps) keeps the
/// old one's tick, so writes made before it still wake the island; any
/// other marker of yours is a request the next rebuild reads.
fn on_sleeping_insert(mut world: DeferredWorld, ctx: HookContext) {
    let replaced = world
        .get_resource_mut::<SolverRequests>()
        .and_then(|mut requests| requests.replaced_sleep.take())
        .filter(|&(entity, since)| entity == ctx.entity && since != Tick::default());
    if let Some((_, since)) = replaced
        && let Some(mut sleeping) = world.get_mut::<Sleeping>(ctx.entity)
        && sleeping.is_request()
    {
        sleeping.since = since;
    }
    mark_dirty(world, ctx);
}

/// The tick a body falls asleep at, as the plugin stamps it: never tick 0,
/// which marks a request from your code (a tick that wrapped round to 0
/// is stamped one earlier, so a write in that tick still counts as after
/// it).
pub(crate) fn asleep_at(tick: Tick) -> Tick {
    if tick == Tick::default() {
        Tick::new(u32::MAX)
    } else {
        tick
    }
}

/// Hook: a body woke. It gets its [`AccumulatedForce`](crate::AccumulatedForce)
/// back (sleeping bodies have none). Removed by your code from a body of a
/// sleeping island (the plugin marks an island awake before it removes
/// `Sleeping`), it wakes the island as `wake_island` does.
///
/// Taken off with the `Body` it marked (the body's slot gone first), it
/// gives nothing back and wakes nothing: the body's removal woke its island.
fn on_sleeping_remove(mut world: DeferredWorld, ctx: HookContext) {
    // (Its `on_discard` ran first; no insertion follows a removal.)
    request(&mut world, |requests| requests.replaced_sleep = None);
    if !world.entity(ctx.entity).contains::<BodyIndex>() {
        mark_dirty(world, ctx);
        return;
    }
    // Only onto a body still there when the command runs: a `Body` removed
    // with `Sleeping` in one bundle has its hook's clean-up queued first.
    world
        .commands()
        .entity(ctx.entity)
        .queue_silenced(|mut entity: EntityWorldMut| {
            if entity.contains::<BodyIndex>() {
                entity.insert_if_new(AccumulatedForce::default());
            }
        });
    if world
        .get::<Island>(ctx.entity)
        .is_some_and(Island::is_asleep)
    {
        request(&mut world, |requests| {
            requests.wake(WakeTarget::Body(ctx.entity), WakeCause::Command(ctx.entity));
        });
    } else {
        mark_dirty(world, ctx);
    }
}

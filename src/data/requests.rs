//! What component hooks and commands ask of the solver, and the plugin's
//! own per-body markers.
//!
//! Hooks run in the middle of other code's commands, so they only record:
//! a request to rebuild the index, to wake or put to sleep an island. The
//! rebuild at the start of the next fixed step drains [`SolverRequests`].

use bevy::ecs::change_detection::Tick;
use bevy::ecs::lifecycle::HookContext;
use bevy::ecs::world::DeferredWorld;
use bevy::prelude::*;

/// Why an island woke: the `cause` of an [`IslandWoke`](crate::IslandWoke).
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
    /// This body got [`SleepingDisabled`](crate::SleepingDisabled).
    SleepingDisabled(Entity),
    /// This body of the island was despawned or lost its `Body`.
    BodyRemoved(Entity),
    /// This [`Obstacle`](crate::Obstacle) moved, changed, came or went
    /// near a body of the island.
    ObstacleMoved(Entity),
    /// A new join merged the island with an awake one.
    Joined,
    /// This awake body touched a body of the island (both have a
    /// [`Radius`](crate::Radius)).
    Touched(Entity),
    /// [`IslandCommands::wake_island`](crate::IslandCommands::wake_island) on
    /// this body, or your code removed its [`Sleeping`](crate::Sleeping).
    Command(Entity),
}

/// Which island a wake request names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum WakeTarget {
    /// The island of this body.
    Body(Entity),
    /// The island of this id in the last rebuild.
    Island(u32),
    /// Every island.
    All,
    /// The islands that this fixed body holds.
    Anchor(Entity),
}

/// Requests for the next rebuild of the solver's index.
#[derive(Resource, Debug, Default)]
pub(crate) struct SolverRequests {
    /// The set of bodies, joins or per-body settings changed.
    pub dirty: bool,
    /// Islands to wake, and why.
    pub wakes: Vec<(WakeTarget, WakeCause)>,
    /// Bodies whose islands should fall asleep.
    pub sleeps: Vec<Entity>,
    /// The state was restored wholesale (a snapshot, a rollback): sleeping
    /// islands may exist that the solver does not know of yet.
    pub resynced: bool,
    /// Ground planes changed up to this tick were put back by a restore
    /// (a snapshot, a rollback), which touches nothing; taken by the next
    /// wake scan.
    pub quiet_since: Option<Tick>,
    /// The `Sleeping` an insertion is replacing, from its `on_discard`
    /// hook to the `on_insert` hook that follows at once.
    pub replaced_sleep: Option<(Entity, Tick)>,
    /// Bodies whose `Body` was inserted since the last rebuild, which lists
    /// those of them it does not see (disabled from their spawn, say) with
    /// the bodies of its layout before (`SolverState::unseen`).
    pub inserted: Vec<Entity>,
}

impl SolverRequests {
    /// Asks the start of the next step to wake an island.
    pub fn wake(&mut self, target: WakeTarget, cause: WakeCause) {
        self.wakes.push((target, cause));
        self.dirty = true;
    }

    /// After the state was restored wholesale: forgets the wake and sleep
    /// requests the restore itself made, and rebuilds from the restored
    /// components at the next step.
    pub fn resync(&mut self) {
        self.wakes.clear();
        self.sleeps.clear();
        self.dirty = true;
        self.resynced = true;
    }
}

/// Records a request from a hook, if the plugin is there.
pub(crate) fn request(world: &mut DeferredWorld, f: impl FnOnce(&mut SolverRequests)) {
    if let Some(mut requests) = world.get_resource_mut::<SolverRequests>() {
        f(&mut requests);
    }
}

/// Takes `entity`'s slot and island from it (`NONE` both), writing each
/// only if it holds another value, so that nothing is marked changed for
/// nothing. For a body the step no longer holds, or not yet: its `Body`
/// removed or added (a clone of a body comes with copies of the
/// original's), or disabled while a rebuild ran.
pub(crate) fn forget_slot(world: &mut DeferredWorld, entity: Entity) {
    if world.get::<BodyIndex>(entity) != Some(&BodyIndex::NONE)
        && let Some(mut index) = world.get_mut::<BodyIndex>(entity)
    {
        *index = BodyIndex::NONE;
    }
    if world.get::<Island>(entity) != Some(&Island::NONE)
        && let Some(mut island) = world.get_mut::<Island>(entity)
    {
        *island = Island::NONE;
    }
}

/// Hook for every structural change that changes which bodies or joins
/// take part in the step.
pub(crate) fn mark_dirty(mut world: DeferredWorld, _ctx: HookContext) {
    request(&mut world, |requests| requests.dirty = true);
}

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
    /// island is stable; 0 for an island without springs, and for one with
    /// [`ImplicitSprings`](crate::ImplicitSprings), stable at any step.
    ///
    /// The bound is linear: it does not see a spring whose ends pass
    /// through each other within one step (an undamped rope whipping),
    /// which heats the island at any load. The energy watch reports an
    /// island that heats up with nothing pushing it
    /// ([`PhysicsIssue::EnergyGrowth`](crate::PhysicsIssue::EnergyGrowth)).
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

    /// Whether the island sleeps (it has no pass group).
    pub(crate) fn is_asleep(&self) -> bool {
        self.is_some() && self.group == u32::MAX
    }
}

/// A body's slot in the solver's dense arrays, and its pass group.
#[derive(Component, Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct BodyIndex {
    pub slot: u32,
    pub group: u32,
}

impl Default for BodyIndex {
    fn default() -> Self {
        Self::NONE
    }
}

impl BodyIndex {
    /// No slot: the body is not stepped.
    pub const NONE: Self = Self {
        slot: u32::MAX,
        group: u32::MAX,
    };
}

/// The kinds of bad per-body settings (`Substeps`, `SleepThreshold`,
/// `Radius`: one bit each) already reported for this body, so that each is
/// said once while it stays bad. Taken off with the `Body`, so a body
/// inserted later is reported anew.
#[derive(Component, Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct SettingsReported(pub u8);

/// Marks a fixed body that only sleeping islands hang from: the passes skip
/// it, and moving it wakes them.
#[derive(Component, Debug, Clone, Copy)]
pub(crate) struct AnchorAsleep {
    pub since: Tick,
}

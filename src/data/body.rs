//! [`Body`] and [`Damping`]; the maths of a pass is in the public
//! [`body`](crate::body) module's docs.

use bevy::ecs::lifecycle::HookContext;
use bevy::ecs::world::DeferredWorld;
use bevy::prelude::*;

use crate::data::drawing::{PositionHistory, TransformSyncDisabled};
use crate::data::forces::AccumulatedForce;
use crate::data::islands::{RestTime, Sleeping};
use crate::data::issues::PhysicsError;
use crate::data::requests::{
    AnchorAsleep, BodyIndex, Island, SettingsReported, SolverRequests, WakeCause, WakeTarget,
    forget_slot, request,
};

/// A point mass: the physics state of an entity.
///
/// `inv_mass == 0` makes a fixed body: forces, gravity and springs never move
/// it, but your code may (write `position` to drag it; a spring's damping
/// sees the `velocity` you give it). Positions live here, not in
/// [`Transform`]: the plugin writes `Transform::translation` from the body
/// every frame (see [`InterpolationSystems::Interpolate`](crate::InterpolationSystems::Interpolate)),
/// so write the body, not the transform. Writing `position` between fixed
/// steps is a teleport: the body is drawn there at once, with no streak.
///
/// A body gets a [`Transform`] at its position, an [`AccumulatedForce`] and a
/// [`PositionHistory`] when it is spawned.
///
/// Spawned with a [`Transform`] and no position of its own (`position` at
/// the origin, as [`Body::new`] leaves it), a body starts at the
/// transform's translation; a position set on the body wins, and the
/// transform is moved to it. This holds when the `Body` is added to an
/// entity that has none; inserting a `Body` over another one takes its
/// position as given.
///
/// ```
/// use bevy::prelude::*;
/// use bevy_euler_physics::prelude::*;
///
/// let mut world = World::new();
/// let placed = world.spawn((Body::new(1.0), Transform::from_xyz(3.0, 4.0, 0.0))).id();
/// assert_eq!(world.get::<Body>(placed).unwrap().position, Vec3::new(3.0, 4.0, 0.0));
///
/// let given = world
///     .spawn((Body::new(1.0).with_position(Vec3::X), Transform::from_xyz(3.0, 4.0, 0.0)))
///     .id();
/// assert_eq!(world.get::<Body>(given).unwrap().position, Vec3::X);
/// assert_eq!(world.get::<Transform>(given).unwrap().translation, Vec3::X);
/// ```
///
/// Default: a 1 kg body at rest at the origin.
///
/// # Example
///
/// ```
/// use bevy::prelude::*;
/// use bevy_euler_physics::prelude::*;
///
/// fn setup(mut commands: Commands) {
///     let anchor = commands.spawn(Body::fixed(Vec3::new(0.0, 2.0, 0.0))).id();
///     let bob = commands
///         .spawn(Body::new(2.0).with_position(Vec3::new(0.5, 1.0, 0.0)))
///         .id();
///     commands.spawn(Spring::new(anchor, bob, 1.0, 200.0));
/// }
/// # App::new().add_systems(Startup, setup);
/// ```
///
/// # Removing it, and entities reused from pools
///
/// Removing `Body` takes off everything the plugin put on the entity for
/// it: [`Sleeping`], [`RestTime`], [`AccumulatedForce`],
/// [`PositionHistory`], [`Island`], and a [`PhysicsError`] about the body's
/// own values. A `Body` inserted on the entity later is a new body, as on
/// a fresh entity; what your code put there (`Damping`, `ConstantForce`,
/// `Radius`, ...) stays and applies to it.
///
/// ```
/// use bevy::prelude::*;
/// use bevy_euler_physics::prelude::*;
///
/// let mut world = World::new();
/// let e = world.spawn((Body::new(1.0), Sleeping::default(), Damping(2.0))).id();
/// world.entity_mut(e).remove::<Body>();
/// assert!(world.get::<Sleeping>(e).is_none());
/// assert!(world.get::<RestTime>(e).is_none());
/// assert_eq!(world.get::<Damping>(e), Some(&Damping(2.0)));
/// ```
///
/// # Invalid values
///
/// A body with a negative, zero or non-finite mass, or a non-finite position
/// or velocity, is reported once (a `warn!` log and a
/// [`PhysicsWarning`](crate::PhysicsWarning)), gets a
/// [`PhysicsError`](crate::PhysicsError), and is left out of the step until you fix it.
#[derive(Component, Reflect, Debug, Clone, Copy, PartialEq)]
#[reflect(Component, Default, Debug, PartialEq, Clone)]
#[require(
    Transform,
    AccumulatedForce,
    PositionHistory,
    BodyIndex,
    Island,
    RestTime
)]
#[component(on_add = on_body_add, on_insert = on_body_insert, on_remove = on_body_remove)]
pub struct Body {
    /// Position in world space, in metres.
    pub position: Vec3,
    /// Velocity in metres per second.
    pub velocity: Vec3,
    /// `1 / mass` in 1/kg; `0` for a fixed body.
    pub inv_mass: f32,
}

impl Default for Body {
    fn default() -> Self {
        Self::new(1.0)
    }
}

impl Body {
    /// A dynamic body of `mass` kilograms at rest at the origin.
    ///
    /// `mass` must be positive and finite; any other value is reported and
    /// the body left out of the step (use [`Body::fixed`] for an immovable
    /// body).
    ///
    /// ```
    /// # use bevy_euler_physics::prelude::*;
    /// let body = Body::new(4.0);
    /// assert_eq!(body.inv_mass, 0.25);
    /// assert_eq!(body.mass(), 4.0);
    /// ```
    pub fn new(mass: f32) -> Self {
        Self {
            position: Vec3::ZERO,
            velocity: Vec3::ZERO,
            inv_mass: 1.0 / mass,
        }
    }

    /// A fixed body at `position`: infinite mass, moved only by your code.
    ///
    /// ```
    /// # use bevy::prelude::*;
    /// # use bevy_euler_physics::prelude::*;
    /// let anchor = Body::fixed(Vec3::Y);
    /// assert!(anchor.is_fixed());
    /// ```
    pub const fn fixed(position: Vec3) -> Self {
        Self {
            position,
            velocity: Vec3::ZERO,
            inv_mass: 0.0,
        }
    }

    /// The same body at `position`.
    ///
    /// ```
    /// # use bevy::prelude::*;
    /// # use bevy_euler_physics::prelude::*;
    /// assert_eq!(Body::new(1.0).with_position(Vec3::X).position, Vec3::X);
    /// ```
    pub const fn with_position(mut self, position: Vec3) -> Self {
        self.position = position;
        self
    }

    /// The same body moving at `velocity`.
    ///
    /// ```
    /// # use bevy::prelude::*;
    /// # use bevy_euler_physics::prelude::*;
    /// assert_eq!(Body::new(1.0).with_velocity(Vec3::Y).velocity, Vec3::Y);
    /// ```
    pub const fn with_velocity(mut self, velocity: Vec3) -> Self {
        self.velocity = velocity;
        self
    }

    /// The mass in kilograms; infinite for a fixed body.
    ///
    /// ```
    /// # use bevy::prelude::*;
    /// # use bevy_euler_physics::prelude::*;
    /// assert_eq!(Body::fixed(Vec3::ZERO).mass(), f32::INFINITY);
    /// ```
    pub fn mass(&self) -> f32 {
        1.0 / self.inv_mass
    }

    /// Whether this body is fixed (`inv_mass == 0`).
    ///
    /// ```
    /// # use bevy_euler_physics::prelude::*;
    /// assert!(!Body::new(1.0).is_fixed());
    /// ```
    pub fn is_fixed(&self) -> bool {
        self.inv_mass == 0.0
    }

    /// Whether forces move this body: `inv_mass` is positive and finite.
    pub(crate) fn is_dynamic(&self) -> bool {
        self.inv_mass > 0.0 && self.inv_mass.is_finite()
    }

    /// Momentum `m·v` in kg·m/s (zero for a fixed body).
    ///
    /// ```
    /// # use bevy::prelude::*;
    /// # use bevy_euler_physics::prelude::*;
    /// assert_eq!(Body::new(2.0).with_velocity(Vec3::X).momentum(), Vec3::new(2.0, 0.0, 0.0));
    /// ```
    pub fn momentum(&self) -> Vec3 {
        if self.is_dynamic() {
            self.velocity / self.inv_mass
        } else {
            Vec3::ZERO
        }
    }

    /// Kinetic energy `½·m·|v|²` in joules (zero for a fixed body).
    ///
    /// ```
    /// # use bevy::prelude::*;
    /// # use bevy_euler_physics::prelude::*;
    /// assert_eq!(Body::new(2.0).with_velocity(Vec3::X * 3.0).kinetic_energy(), 9.0);
    /// ```
    pub fn kinetic_energy(&self) -> f32 {
        if self.is_dynamic() {
            0.5 * self.velocity.length_squared() / self.inv_mass
        } else {
            0.0
        }
    }
}

/// Linear damping `c`, in 1/s: the body loses velocity as `dv/dt = −c·v`,
/// integrated as `v ← v / (1 + h·c)` after the force kick (see the
/// [module docs](crate::body)). Stable for any step and any `c ≥ 0`; under
/// gravity alone the body reaches the terminal speed `|g| / c` exactly.
///
/// Default: 0 (no damping; a body without the component is undamped).
/// Negative or non-finite values are reported and the body left out of the
/// step until fixed.
///
/// # Example
///
/// ```
/// use bevy::prelude::*;
/// use bevy_euler_physics::prelude::*;
///
/// fn spawn_leaf(mut commands: Commands) {
///     // Falls at |g| / 4 ≈ 2.45 m/s at most.
///     commands.spawn((Body::new(0.01), Damping(4.0)));
/// }
/// # App::new().add_systems(Startup, spawn_leaf);
/// ```
#[derive(Component, Reflect, Debug, Clone, Copy, PartialEq, Default)]
#[reflect(Component, Default, Debug, PartialEq, Clone)]
pub struct Damping(pub f32);

impl Damping {
    /// Whether `c` is finite and not negative.
    pub(crate) fn is_valid(self) -> bool {
        self.0 >= 0.0 && self.0.is_finite()
    }
}

/// A body added to an entity has no slot and no island yet, and, with no
/// position of its own (at the origin), starts where the entity's
/// `Transform` puts it.
///
/// Only an entity cloned from a body comes here with a slot and an island:
/// copies of the original's (the remove hook clears them on a body that
/// loses its `Body`). Kept, they would make the clone the original's twin
/// until the next rebuild, as the scatter, the gather and the copies
/// around systems of yours trust `BodyIndex`.
fn on_body_add(mut world: DeferredWorld, ctx: HookContext) {
    forget_slot(&mut world, ctx.entity);
    let Some(&Transform { translation, .. }) = world.get::<Transform>(ctx.entity) else {
        return;
    };
    if translation != Vec3::ZERO
        && translation.is_finite()
        && !world.entity(ctx.entity).contains::<TransformSyncDisabled>()
        && let Some(mut body) = world.get_mut::<Body>(ctx.entity)
        && body.position == Vec3::ZERO
    {
        body.position = translation;
    }
}

fn on_body_insert(mut world: DeferredWorld, ctx: HookContext) {
    let Some(body) = world.get::<Body>(ctx.entity).copied() else {
        return;
    };
    // A new or re-inserted body is drawn where it is, with no history.
    if let Some(mut history) = world.get_mut::<PositionHistory>(ctx.entity) {
        *history = PositionHistory::at(body.position);
    }
    if body.position.is_finite()
        && !world.entity(ctx.entity).contains::<TransformSyncDisabled>()
        && let Some(mut transform) = world.get_mut::<Transform>(ctx.entity)
    {
        transform.translation = body.position;
    }
    note_inserted(&mut world, ctx.entity);
}

/// Asks for a rebuild and notes `entity` in
/// [`SolverRequests::inserted`](crate::data::requests::SolverRequests).
/// Should no rebuild take the list for a while (the fixed step paused)
/// while bodies come and go, the list drops the entities that no longer
/// hold a `Body` whenever it is full (from [`PRUNE_FROM`] entries on), and
/// keeps room for at least as many again as are left: it stays within a
/// few times the bodies there are, and each prune follows at least as
/// many inserts as it keeps.
fn note_inserted(world: &mut DeferredWorld, entity: Entity) {
    let Some(mut requests) = world.get_resource_mut::<SolverRequests>() else {
        return;
    };
    requests.dirty = true;
    let list = &mut requests.inserted;
    if list.len() < PRUNE_FROM || list.len() < list.capacity() {
        list.push(entity);
        return;
    }
    let mut list = core::mem::take(list);
    list.sort_unstable();
    list.dedup();
    list.retain(|&listed| world.get::<Body>(listed).is_some());
    list.reserve(list.len());
    list.push(entity);
    world.resource_mut::<SolverRequests>().inserted = list;
}

/// The length from which [`note_inserted`] prunes its list.
const PRUNE_FROM: usize = 4096;

/// A body left: its island (if asleep) wakes, and may split. The entity
/// keeps no slot, and loses every component the plugin put on it for this
/// body ([`take_off_the_plugins`]), so that a `Body` inserted on it later
/// (an entity reused from a pool) is a new body. What your code put on it
/// (`Transform`, `Damping`, `ConstantForce`, `Radius`, ...) stays.
fn on_body_remove(mut world: DeferredWorld, ctx: HookContext) {
    let island = world.get::<Island>(ctx.entity).copied();
    let fixed = world.get::<Body>(ctx.entity).is_some_and(Body::is_fixed);
    forget_slot(&mut world, ctx.entity);
    request(&mut world, |requests| {
        requests.dirty = true;
        if fixed {
            requests.wake(
                WakeTarget::Anchor(ctx.entity),
                WakeCause::BodyRemoved(ctx.entity),
            );
        }
        if let Some(island) = island.filter(Island::is_some) {
            requests.wake(
                WakeTarget::Island(island.id()),
                WakeCause::BodyRemoved(ctx.entity),
            );
        }
    });
    // (Despawned, the entity is gone when the command runs: nothing to do.)
    world
        .commands()
        .entity(ctx.entity)
        .queue_silenced(take_off_the_plugins);
}

/// Takes off an entity that lost its `Body` what the plugin put on it for
/// that body: its sleep marker, rest time, accumulated force, drawing
/// history, island and slot, and a [`PhysicsError`] about the body (one
/// about a join on the same entity stays). Runs as a command right after
/// the removal (and its observers), before the next command; a `Body`
/// already back by then keeps them.
fn take_off_the_plugins(mut entity: EntityWorldMut) {
    if entity.contains::<Body>() {
        return;
    }
    // The slot first: `Sleeping`'s remove hook reads it to tell a body's
    // wake from a removal.
    entity.remove::<(
        BodyIndex,
        Island,
        AnchorAsleep,
        RestTime,
        AccumulatedForce,
        PositionHistory,
        SettingsReported,
    )>();
    entity.remove::<Sleeping>();
    if entity
        .get::<PhysicsError>()
        .is_some_and(|error| error.0.is_about_a_body())
    {
        entity.remove::<PhysicsError>();
    }
}

/// The bodies a step moves: with a `Body`, neither left out for an error
/// nor asleep (nor a fixed body that only sleeping islands hang from).
pub(crate) type Stepped = (
    With<Body>,
    Without<PhysicsError>,
    Without<Sleeping>,
    Without<AnchorAsleep>,
);

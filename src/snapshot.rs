//! Saving and restoring the physics state, and a checksum of it: for
//! replays, level resets and rollback.
//!
//! A [`PhysicsSnapshot`] holds, for every body, what the next step depends
//! on besides your scene's components: its [`Body`], whether it sleeps, how
//! long its island has been resting, its pending [`AccumulatedForce`], and
//! its [`PositionHistory`]. Restoring it and stepping gives the same state,
//! bit for bit, as stepping on from when it was saved (restoring also puts
//! each body's `Transform` at its position). It also holds the
//! [`PhysicsOrigin`] (see [`origin`](crate::origin)) and each
//! [`GroundPlane`]'s offset, which origin shifts move: a restore puts them
//! back; and each [`Obstacle`](crate::Obstacle)'s [`ObstacleState`] (where
//! the last step left it, which the next step sweeps it from; its
//! `Transform` is your scene's); and the [`ContactForces`] the touching
//! round bodies held, which the next step's contacts start from. Islands,
//! substep counts and the solver's
//! index are worked out again from the components at the next step, so they
//! need no saving.
//!
//! Springs, constraints, forces, damping and substep settings are your
//! components: a replay that changes them saves and restores them itself
//! (under GGRS, register them for rollback).
//!
//! # Example
//!
//! ```
//! use bevy::prelude::*;
//! use bevy_euler_physics::prelude::*;
//!
//! let mut app = App::new();
//! app.add_plugins((MinimalPlugins, EulerPhysicsPlugin));
//! let ball = app.world_mut().spawn(Body::new(1.0).with_velocity(Vec3::X)).id();
//! let step = |app: &mut App| app.world_mut().run_schedule(FixedUpdate);
//!
//! step(&mut app);
//! let saved = PhysicsSnapshot::save(app.world_mut());
//! for _ in 0..10 {
//!     step(&mut app);
//! }
//! let later = *app.world().get::<Body>(ball).unwrap();
//!
//! saved.restore(app.world_mut());
//! for _ in 0..10 {
//!     step(&mut app);
//! }
//! assert_eq!(*app.world().get::<Body>(ball).unwrap(), later);
//! ```

use bevy::ecs::entity::EntityHashSet;
use bevy::math::DVec3;
use bevy::prelude::*;

use crate::body::Body;
use crate::constraints::{
    AngleLimit, ContactForces, DistanceConstraint, DistanceLimit, GroundPlane,
};
use crate::data::islands::asleep_at;
use crate::data::requests::{AnchorAsleep, SolverRequests, WakeTarget};
use crate::forces::AccumulatedForce;
use crate::interpolation::PositionHistory;
use crate::islands::WakeCause;
use crate::islands::{RestTime, Sleeping};
use crate::kernels::hash::WordHash;
use crate::obstacles::ObstacleState;
use crate::origin::PhysicsOrigin;
use crate::pins::PinPlaced;
use crate::solver::origin::{Shift, shift_origin};
use crate::spring::Spring;

/// The bodies restored asleep that a spring, rod or limit joins to an
/// entity without a `Body`, each with that entity, in entity order.
fn lost_anchors(world: &mut World, saved: &[BodyState]) -> Vec<(Entity, Entity)> {
    let asleep: EntityHashSet = saved
        .iter()
        .filter(|state| state.sleeping)
        .map(|state| state.entity)
        .filter(|&entity| world.get::<Body>(entity).is_some())
        .collect();
    if asleep.is_empty() {
        return Vec::new();
    }
    let mut ends: Vec<(Entity, Entity)> = Vec::new();
    let mut springs = world.query::<&Spring>();
    ends.extend(springs.iter(world).map(|spring| (spring.a, spring.b)));
    let mut rods = world.query::<&DistanceConstraint>();
    ends.extend(rods.iter(world).map(|rod| (rod.a, rod.b)));
    let mut limits = world.query::<&DistanceLimit>();
    ends.extend(limits.iter(world).map(|limit| (limit.a, limit.b)));
    let mut angles = world.query::<&AngleLimit>();
    ends.extend(angles.iter(world).flat_map(AngleLimit::pairs));
    let mut lost: Vec<(Entity, Entity)> = ends
        .into_iter()
        .flat_map(|(a, b)| [(a, b), (b, a)])
        .filter(|&(body, other)| asleep.contains(&body) && world.get::<Body>(other).is_none())
        .collect();
    lost.sort_unstable();
    lost.dedup();
    lost
}

/// One body's saved state.
///
/// ```
/// # use bevy::prelude::*;
/// # use bevy_euler_physics::prelude::*;
/// let mut app = App::new();
/// app.add_plugins((MinimalPlugins, EulerPhysicsPlugin));
/// let e = app
///     .world_mut()
///     .spawn(Body::new(2.0).with_velocity(Vec3::X))
///     .id();
/// let saved = PhysicsSnapshot::save(app.world_mut());
/// let state = &saved.bodies()[0];
/// assert_eq!(state.entity, e);
/// assert_eq!(state.body.velocity, Vec3::X);
/// assert!(!state.sleeping);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Reflect)]
#[reflect(Debug, PartialEq, Clone)]
pub struct BodyState {
    /// The body.
    pub entity: Entity,
    /// Its position, velocity and inverse mass.
    pub body: Body,
    /// Whether it was asleep.
    pub sleeping: bool,
    /// How long its island had been resting, in seconds.
    pub rest_time: f32,
    /// Force added for the next pass and not yet consumed.
    pub accumulated: Vec3,
    /// Where it started the last fixed step.
    pub history: PositionHistory,
    /// For a pinned body: the target its pin last placed it at (see
    /// [`PinPlaced`]).
    pub pin_placed: Option<Entity>,
}

/// The physics state of every body; see the [module docs](self).
///
/// ```
/// # use bevy::prelude::*;
/// # use bevy_euler_physics::prelude::*;
/// let mut world = World::new();
/// world.init_resource::<bevy_euler_physics::PhysicsSettings>();
/// let snapshot = PhysicsSnapshot::save(&mut world);
/// assert!(snapshot.bodies().is_empty());
/// ```
#[derive(Debug, Clone, Default, PartialEq, Reflect)]
#[reflect(Debug, PartialEq, Clone, Default)]
pub struct PhysicsSnapshot {
    bodies: Vec<BodyState>,
    /// [`PhysicsOrigin::position`] when saved (none without the resource).
    origin: Option<DVec3>,
    /// Each ground plane's offset, which origin shifts move, in entity
    /// order.
    planes: Vec<(Entity, f32)>,
    /// Where the last step left each obstacle, in entity order.
    obstacles: Vec<(Entity, ObstacleState)>,
    /// The forces the pair contacts held, which the next step starts from.
    #[reflect(ignore)]
    contacts: ContactForces,
}

/// What [`PhysicsSnapshot::restore`] did.
///
/// ```
/// # use bevy::prelude::*;
/// # use bevy_euler_physics::prelude::*;
/// let mut app = App::new();
/// app.add_plugins((MinimalPlugins, EulerPhysicsPlugin));
/// app.world_mut().spawn(Body::new(1.0));
/// let gone = app.world_mut().spawn(Body::new(1.0)).id();
/// let saved = PhysicsSnapshot::save(app.world_mut());
/// app.world_mut().despawn(gone);
/// let report = saved.restore(app.world_mut());
/// assert_eq!((report.restored, report.missing), (1, 1));
/// assert!(report.lost_anchors.is_empty());
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RestoreReport {
    /// Bodies written back.
    pub restored: usize,
    /// Saved bodies that no longer exist (or lost their `Body`); skipped.
    pub missing: usize,
    /// `(body, gone)` for each body restored asleep whose spring or rod
    /// leads to an entity `gone` that has no `Body` any more (an anchor
    /// despawned since the save): its island wakes at the next step (an
    /// [`IslandWoke`](crate::IslandWoke) with
    /// [`WakeCause::BodyRemoved`]) instead of
    /// sleeping where nothing holds it. In entity order.
    pub lost_anchors: Vec<(Entity, Entity)>,
}

impl PhysicsSnapshot {
    /// Saves every body's state, in entity order.
    ///
    /// ```
    /// # use bevy::prelude::*;
    /// # use bevy_euler_physics::prelude::*;
    /// let mut app = App::new();
    /// app.add_plugins((MinimalPlugins, EulerPhysicsPlugin));
    /// app.world_mut().spawn(Body::new(1.0));
    /// assert_eq!(PhysicsSnapshot::save(app.world_mut()).bodies().len(), 1);
    /// ```
    pub fn save(world: &mut World) -> Self {
        let mut query = world.query::<(
            Entity,
            &Body,
            Option<&Sleeping>,
            Option<&AccumulatedForce>,
            Option<&PositionHistory>,
            Option<&RestTime>,
            Option<&PinPlaced>,
        )>();
        let mut bodies: Vec<BodyState> = query
            .iter(world)
            .map(
                |(entity, body, sleeping, accumulated, history, rest, placed)| BodyState {
                    entity,
                    body: *body,
                    // A sleep request not yet carried out is no sleep.
                    sleeping: sleeping.is_some_and(|s| !s.is_request()),
                    rest_time: rest.map_or(0.0, RestTime::seconds),
                    accumulated: accumulated.map_or(Vec3::ZERO, |f| f.0),
                    history: history
                        .copied()
                        .unwrap_or_else(|| PositionHistory::at(body.position)),
                    pin_placed: placed.and_then(PinPlaced::target),
                },
            )
            .collect();
        bodies.sort_by_key(|state| state.entity);
        let origin = world
            .get_resource::<PhysicsOrigin>()
            .map(|origin| origin.position);
        let mut planes = world.query::<(Entity, &GroundPlane)>();
        let mut planes: Vec<(Entity, f32)> = planes
            .iter(world)
            .map(|(entity, plane)| (entity, plane.offset))
            .collect();
        planes.sort_by_key(|&(entity, _)| entity);
        let mut obstacles = world.query::<(Entity, &ObstacleState)>();
        let mut obstacles: Vec<(Entity, ObstacleState)> = obstacles
            .iter(world)
            .map(|(entity, state)| (entity, *state))
            .collect();
        obstacles.sort_by_key(|&(entity, _)| entity);
        let contacts = world
            .get_resource::<ContactForces>()
            .cloned()
            .unwrap_or_default();
        Self {
            bodies,
            origin,
            planes,
            obstacles,
            contacts,
        }
    }

    /// Where local zero was in the world when saved
    /// ([`PhysicsOrigin::position`]); `None` in a world without the
    /// resource.
    ///
    /// ```
    /// # use bevy::math::DVec3;
    /// # use bevy::prelude::*;
    /// # use bevy_euler_physics::prelude::*;
    /// let mut app = App::new();
    /// app.add_plugins((MinimalPlugins, EulerPhysicsPlugin))
    ///     .insert_resource(PhysicsOrigin::new(DVec3::new(0.0, 0.0, 4096.0)));
    /// let saved = PhysicsSnapshot::save(app.world_mut());
    /// assert_eq!(saved.origin(), Some(DVec3::new(0.0, 0.0, 4096.0)));
    /// ```
    pub fn origin(&self) -> Option<DVec3> {
        self.origin
    }

    /// The saved bodies, in entity order.
    ///
    /// ```
    /// # use bevy_euler_physics::prelude::*;
    /// assert!(PhysicsSnapshot::default().bodies().is_empty());
    /// ```
    pub fn bodies(&self) -> &[BodyState] {
        &self.bodies
    }

    /// Writes the saved state back into the bodies that still exist; the
    /// next fixed step continues from it exactly as the saved one did.
    /// Bodies spawned since keep their state. When the origin moved since
    /// the save, it is put back, with the ground planes and
    /// [`ShiftWithOrigin`](crate::ShiftWithOrigin) entities, and an
    /// [`OriginShifted`](crate::OriginShifted) is sent.
    ///
    /// ```
    /// # use bevy::prelude::*;
    /// # use bevy_euler_physics::prelude::*;
    /// let mut app = App::new();
    /// app.add_plugins((MinimalPlugins, EulerPhysicsPlugin));
    /// let e = app.world_mut().spawn(Body::new(1.0)).id();
    /// let saved = PhysicsSnapshot::save(app.world_mut());
    /// app.world_mut().get_mut::<Body>(e).unwrap().position = Vec3::X;
    /// assert_eq!(saved.restore(app.world_mut()).restored, 1);
    /// assert_eq!(app.world().get::<Body>(e).unwrap().position, Vec3::ZERO);
    /// ```
    pub fn restore(&self, world: &mut World) -> RestoreReport {
        let mut report = RestoreReport::default();
        self.restore_origin(world);
        for state in &self.bodies {
            let Ok(mut entity) = world.get_entity_mut(state.entity) else {
                report.missing += 1;
                continue;
            };
            let Some(mut body) = entity.get_mut::<Body>() else {
                report.missing += 1;
                continue;
            };
            *body = state.body;
            if let Some(mut history) = entity.get_mut::<PositionHistory>() {
                *history = state.history;
            }
            if state.body.position.is_finite()
                && let Some(mut transform) = entity.get_mut::<Transform>()
            {
                transform.translation = state.body.position;
            }
            if let Some(mut rest) = entity.get_mut::<RestTime>() {
                rest.0 = state.rest_time;
            }
            if let Some(mut placed) = entity.get_mut::<PinPlaced>() {
                placed.set_if_neq(PinPlaced(state.pin_placed));
            }
            report.restored += 1;
        }
        // Sleep states last, at a later tick than the writes above, so the
        // writes do not count as touching a sleeping island.
        world.increment_change_tick();
        let since = asleep_at(world.change_tick());
        for state in &self.bodies {
            let Ok(mut entity) = world.get_entity_mut(state.entity) else {
                continue;
            };
            if !entity.contains::<Body>() {
                continue;
            }
            if state.sleeping {
                match entity.get_mut::<Sleeping>() {
                    // Asleep before and after: the writes above are not a
                    // touch either.
                    Some(mut sleeping) => sleeping.since = since,
                    None => {
                        entity.remove::<AccumulatedForce>();
                        entity.insert(Sleeping { since });
                    }
                }
            } else {
                if entity.contains::<Sleeping>() {
                    entity.remove::<Sleeping>();
                }
                match entity.get_mut::<AccumulatedForce>() {
                    Some(mut force) => {
                        if force.0 != state.accumulated {
                            force.0 = state.accumulated;
                        }
                    }
                    None => {
                        entity.insert(AccumulatedForce(state.accumulated));
                    }
                }
            }
        }
        world.flush();
        // Moving an anchor wakes what hangs from it; restoring it does not.
        let mut anchors = world.query::<&mut AnchorAsleep>();
        for mut anchor in anchors.iter_mut(world) {
            anchor.since = since;
        }
        report.lost_anchors = lost_anchors(world, &self.bodies);
        if let Some(mut contacts) = world.get_resource_mut::<ContactForces>() {
            *contacts = self.contacts.clone();
        }
        if let Some(mut requests) = world.get_resource_mut::<SolverRequests>() {
            requests.resync();
            requests.quiet_since = Some(since);
            for &(body, gone) in &report.lost_anchors {
                requests.wake(WakeTarget::Body(body), WakeCause::BodyRemoved(gone));
            }
        }
        report
    }

    /// Puts the origin back where it was saved, moving the scenery with it
    /// (the bodies are restored in the saved frame already), and the saved
    /// ground planes' offsets (exact, where a shift back along a tilted
    /// normal would round).
    fn restore_origin(&self, world: &mut World) {
        if let (Some(saved), Some(now)) = (self.origin, world.get_resource::<PhysicsOrigin>())
            && now.position != saved
        {
            // A whole number of cells when both come from shifts: exact.
            let offset = (saved - now.position).as_vec3();
            shift_origin(world, offset, Shift::Scenery);
            world.resource_mut::<PhysicsOrigin>().position = saved;
        }
        for &(entity, offset) in &self.planes {
            if let Some(mut plane) = world.get_mut::<GroundPlane>(entity)
                && plane.offset.to_bits() != offset.to_bits()
            {
                plane.offset = offset;
            }
        }
        // In the saved frame, after the shift above moved them.
        for &(entity, state) in &self.obstacles {
            if let Some(mut now) = world.get_mut::<ObstacleState>(entity) {
                *now = state;
            }
        }
    }

    /// A checksum of the saved state: a 64-bit multiply-rotate hash (as in
    /// FxHash) over the origin and every body's entity, position, velocity,
    /// inverse mass, sleep state and resting time, bit by bit, in entity
    /// order, and the [`ContactForces`] (their pairs and bits, in any
    /// order). It is
    /// defined here, not by the standard library, so equal states give equal
    /// checksums on every platform and Rust version.
    ///
    /// ```
    /// # use bevy::prelude::*;
    /// # use bevy_euler_physics::prelude::*;
    /// let mut app = App::new();
    /// app.add_plugins((MinimalPlugins, EulerPhysicsPlugin));
    /// app.world_mut().spawn(Body::new(1.0));
    /// let a = PhysicsSnapshot::save(app.world_mut()).checksum();
    /// let b = PhysicsSnapshot::save(app.world_mut()).checksum();
    /// assert_eq!(a, b);
    /// ```
    pub fn checksum(&self) -> u64 {
        let mut hash = WordHash::default();
        write_dvec3(&mut hash, self.origin.unwrap_or(DVec3::ZERO));
        for state in &self.bodies {
            hash.write(state.entity.to_bits());
            write_body(&mut hash, &state.body);
            hash.write(u64::from(state.sleeping));
            hash.write(u64::from(state.rest_time.to_bits()));
        }
        hash.write(self.contacts.checksum());
        hash.finish()
    }
}

/// A checksum of one body (the bits of its position, velocity and inverse
/// mass), for a rollback session's checksum.
#[cfg(feature = "ggrs")]
pub(crate) fn body_checksum(body: &Body) -> u64 {
    let mut hash = WordHash::default();
    write_body(&mut hash, body);
    hash.finish()
}

/// A checksum of the origin's position, for a rollback session's
/// checksum.
#[cfg(feature = "ggrs")]
pub(crate) fn origin_checksum(origin: &PhysicsOrigin) -> u64 {
    let mut hash = WordHash::default();
    write_dvec3(&mut hash, origin.position);
    hash.finish()
}

/// The checksum of the current physics state (see
/// [`PhysicsSnapshot::checksum`]) without keeping a snapshot.
///
/// ```
/// # use bevy::prelude::*;
/// # use bevy_euler_physics::prelude::*;
/// let mut app = App::new();
/// app.add_plugins((MinimalPlugins, EulerPhysicsPlugin));
/// let empty = physics_checksum(app.world_mut());
/// app.world_mut().spawn(Body::new(1.0));
/// assert_ne!(physics_checksum(app.world_mut()), empty);
/// ```
pub fn physics_checksum(world: &mut World) -> u64 {
    PhysicsSnapshot::save(world).checksum()
}

/// The bits of a world position into `hash`.
fn write_dvec3(hash: &mut WordHash, v: DVec3) {
    for x in v.to_array() {
        hash.write(x.to_bits());
    }
}

/// The bits of a body's position, velocity and inverse mass into `hash`.
fn write_body(hash: &mut WordHash, body: &Body) {
    for x in body
        .position
        .to_array()
        .into_iter()
        .chain(body.velocity.to_array())
    {
        hash.write(u64::from(x.to_bits()));
    }
    hash.write(u64::from(body.inv_mass.to_bits()));
}

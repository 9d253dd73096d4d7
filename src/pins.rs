//! Bodies pinned to entities, and entities that follow bodies: the bridge
//! between the physics and the game's own moving things (a bone of an
//! animated character, a hand, a moving platform, a lantern at the end of
//! a rope).
//!
//! - [`PinnedTo`] makes a fixed body follow another entity's transform,
//!   with an offset in that entity's frame. The body moves kinematically:
//!   at the start of each fixed step it is put where the target is and
//!   given the target's motion over the step as its velocity, so springs'
//!   damping, contacts' friction and restitution see the motion. A move
//!   longer than [`PinnedTo::teleport_distance`] (a respawn) is a
//!   teleport: no velocity, and drawn there at once.
//! - [`FollowsBody`] makes an entity's `Transform` follow a body as it is
//!   drawn (between its last two fixed states), with an offset.
//!
//! # The step they take
//!
//! The pin is a stage of the step's start (before anything reads the
//! bodies), so it runs wherever the step runs, in `FixedUpdate` or under
//! rollback. It reads the target's transform as it is then, composed up
//! its parents from their `Transform`s (Bevy's
//! [`TransformHelper`]), so a
//! target moved in `FixedUpdate` before the step (in
//! [`PhysicsSystems::Prepare`](crate::PhysicsSystems::Prepare)) is followed
//! in the same step. A target your code moves once per frame in `Update`
//! moves once per frame for the pin too: in a frame that runs two fixed
//! steps, the first sees the whole move and the second none. An animated
//! character is best sampled at the fixed clock: the `cape` example
//! pauses its `AnimationPlayer`, seeks it to each step's time in
//! [`PhysicsSystems::Prepare`](crate::PhysicsSystems::Prepare) and poses
//! the character there with Bevy's `animate_targets`.
//!
//! Within a step (and each of its passes) the pinned body sits where the
//! target is at the step's start, moving at the target's velocity. Under a
//! target moving at a constant velocity `u`, a pendulum hung from the pin
//! swings as it does from a still one: with the anchor at `A_k` in step
//! `k`, the bob's state relative to the anchor's next place,
//! `x − (A_k + h·u)` and `v − u`, follows the recurrence of the still
//! pendulum (semi-implicit Euler is Galilean invariant). Seen at a step's
//! end, the bob hangs one step's motion `h·u` further along than under a
//! still pin: the pin was put in place at the step's start, and the bob
//! moved through the step.
//!
//! A target standing still writes nothing, so an island hanging from it
//! falls asleep as from any fixed body, and wakes when the target moves.
//!
//! A target with a [`Body`] of its own is read at its body's position (its
//! drawn `Transform` depends on the frame's timing). With a
//! [`FloatingOrigin`](crate::FloatingOrigin), give the targets (or their
//! root) [`ShiftWithOrigin`](crate::ShiftWithOrigin): an origin shift
//! moves the pinned bodies, and a target left behind would then be a cell
//! away (a teleport). Under rollback, register the targets' `Transform`
//! for rollback; the pins' own state ([`PinPlaced`]) is registered by the
//! rollback plugin.

use bevy::ecs::entity::EntityHashSet;
use bevy::ecs::lifecycle::HookContext;
use bevy::ecs::world::DeferredWorld;
use bevy::prelude::*;
use bevy::transform::helper::TransformHelper;

use crate::data::body::Body;
use crate::data::drawing::PositionHistory;
use crate::data::issues::{PhysicsError, PhysicsIssue};
use crate::interpolation::DrawnPositions;
use crate::solver::report::{Reporter, missing_body};

/// Makes this fixed body follow `target`'s transform, at `offset` in the
/// target's frame (turned and scaled with it): a rope tied to a
/// character's hand, a cloth corner on a moving pole, a platform's anchor.
///
/// The body must be fixed ([`Body::fixed`]); a pin on a dynamic body is
/// reported once ([`PhysicsIssue::PinnedDynamicBody`]) and does nothing.
/// A target that does not exist, has no `Transform` (it or a parent), or
/// whose transform is not finite, is reported once
/// ([`PhysicsIssue::PinTargetInvalid`]); the body then stays fixed where it
/// was, at rest. See the [module docs](crate::pins) for when the target
/// is read.
///
/// # Example
///
/// ```
/// use bevy::prelude::*;
/// use bevy_euler_physics::prelude::*;
///
/// #[derive(Component)]
/// struct Hand;
///
/// fn setup(mut commands: Commands) {
///     let hand = commands.spawn((Hand, Transform::from_xyz(0.0, 1.5, 0.0))).id();
///     // A fixed body 10 cm below the hand, and a lantern on a spring under it.
///     let grip = commands
///         .spawn((Body::fixed(Vec3::ZERO), PinnedTo::new(hand).with_offset(-0.1 * Vec3::Y)))
///         .id();
///     let lantern = commands
///         .spawn(Body::new(0.5).with_position(Vec3::new(0.0, 0.9, 0.0)))
///         .id();
///     commands.spawn(Spring::new(grip, lantern, 0.5, 80.0).with_damping(1.0));
/// }
///
/// /// The hand moves in the fixed step, before the physics, so the pin
/// /// follows it step by step.
/// fn wave(time: Res<Time>, mut hands: Query<&mut Transform, With<Hand>>) {
///     for mut hand in &mut hands {
///         hand.translation.x = time.elapsed_secs().sin();
///     }
/// }
///
/// App::new()
///     .add_plugins((MinimalPlugins, EulerPhysicsPlugin))
///     .add_systems(Startup, setup)
///     .add_systems(FixedUpdate, wave.in_set(PhysicsSystems::Prepare));
/// ```
#[derive(Component, Reflect, Debug, Clone, Copy, PartialEq)]
#[reflect(Component, Debug, PartialEq, Clone)]
#[require(PinPlaced)]
#[component(on_insert = unplace)]
pub struct PinnedTo {
    /// The entity followed.
    #[entities]
    pub target: Entity,
    /// Where on the target, in the target's frame. Default: its origin.
    pub offset: Vec3,
    /// A move of the target longer than this within one step, in metres,
    /// is a teleport: the body is put there at rest and drawn there at
    /// once. Default: [`PinnedTo::DEFAULT_TELEPORT_DISTANCE`].
    pub teleport_distance: f32,
}

impl PinnedTo {
    /// 5 m in one step: 320 m/s at 64 Hz.
    pub const DEFAULT_TELEPORT_DISTANCE: f32 = 5.0;

    /// Follows `target`'s origin.
    ///
    /// ```
    /// # use bevy::prelude::*;
    /// # use bevy_euler_physics::prelude::*;
    /// let pin = PinnedTo::new(Entity::PLACEHOLDER);
    /// assert_eq!(pin.offset, Vec3::ZERO);
    /// assert_eq!(pin.teleport_distance, PinnedTo::DEFAULT_TELEPORT_DISTANCE);
    /// ```
    pub const fn new(target: Entity) -> Self {
        Self {
            target,
            offset: Vec3::ZERO,
            teleport_distance: Self::DEFAULT_TELEPORT_DISTANCE,
        }
    }

    /// The same pin at `offset` in the target's frame.
    ///
    /// ```
    /// # use bevy::prelude::*;
    /// # use bevy_euler_physics::prelude::*;
    /// let pin = PinnedTo::new(Entity::PLACEHOLDER).with_offset(Vec3::Y);
    /// assert_eq!(pin.offset, Vec3::Y);
    /// ```
    pub const fn with_offset(mut self, offset: Vec3) -> Self {
        self.offset = offset;
        self
    }

    /// The same pin, teleporting on moves longer than `distance` within a
    /// step.
    ///
    /// ```
    /// # use bevy::prelude::*;
    /// # use bevy_euler_physics::prelude::*;
    /// let pin = PinnedTo::new(Entity::PLACEHOLDER).with_teleport_distance(0.5);
    /// assert_eq!(pin.teleport_distance, 0.5);
    /// ```
    pub const fn with_teleport_distance(mut self, distance: f32) -> Self {
        self.teleport_distance = distance;
        self
    }
}

/// Which target a [`PinnedTo`] last placed its body at: none before its
/// first placement, after a bad target or while the body is dynamic, and
/// again whenever the `PinnedTo` is inserted. A placement at another
/// target than the last (the first, a new target, a target valid again)
/// is a teleport, with no velocity. Part of the physics state:
/// [`PhysicsSnapshot`](crate::PhysicsSnapshot) saves it and
/// [`EulerPhysicsRollbackPlugin`](crate::rollback) rolls it back, so a
/// restored run places its pins as the first run did.
///
/// ```
/// use bevy::prelude::*;
/// use bevy_euler_physics::prelude::*;
///
/// let mut world = World::new();
/// let pin = world.spawn((Body::fixed(Vec3::ZERO), PinnedTo::new(Entity::PLACEHOLDER))).id();
/// assert_eq!(world.get::<PinPlaced>(pin).unwrap().target(), None);
/// ```
#[derive(Component, Reflect, Debug, Clone, Copy, PartialEq, Eq, Default)]
#[reflect(Component, Debug, PartialEq, Clone, Default)]
pub struct PinPlaced(#[entities] pub(crate) Option<Entity>);

impl PinPlaced {
    /// The target the body was last placed at, if any.
    pub fn target(&self) -> Option<Entity> {
        self.0
    }
}

/// Hook: a pin inserted (or replaced) places its body anew, at rest.
fn unplace(mut world: DeferredWorld, ctx: HookContext) {
    if let Some(mut placed) = world.get_mut::<PinPlaced>(ctx.entity)
        && placed.0.is_some()
    {
        placed.0 = None;
    }
}

/// Makes this entity's `Transform::translation` follow `body` as it is
/// drawn (between its last two fixed states, as the body itself is), plus
/// `offset` in world space: a lantern, a light or a particle emitter at the
/// end of a rope. Written in `Update`, after the bodies' interpolation
/// ([`InterpolationSystems::Interpolate`](crate::InterpolationSystems::Interpolate)).
/// For an entity with a parent, the translation is set so that the entity
/// lands there in the world (through the parent's transform as it is now,
/// composed up its parents' `Transform`s).
///
/// A `body` that does not exist or has no [`Body`] is reported once
/// ([`PhysicsIssue::MissingEndpoint`] or
/// [`PhysicsIssue::EndpointWithoutBody`], naming this entity); the entity
/// then stays where it is.
///
/// ```
/// use bevy::prelude::*;
/// use bevy_euler_physics::prelude::*;
///
/// fn setup(mut commands: Commands) {
///     let end = commands.spawn(Body::new(0.5).with_position(Vec3::Y)).id();
///     // A light 20 cm under the rope's end.
///     commands.spawn((PointLight::default(), FollowsBody::new(end).with_offset(-0.2 * Vec3::Y)));
/// }
/// # App::new().add_systems(Startup, setup);
/// ```
#[derive(Component, Reflect, Debug, Clone, Copy, PartialEq)]
#[reflect(Component, Debug, PartialEq, Clone)]
#[require(Transform)]
pub struct FollowsBody {
    /// The body followed.
    #[entities]
    pub body: Entity,
    /// Added to the body's drawn position, in world space. Default: zero.
    pub offset: Vec3,
}

impl FollowsBody {
    /// Follows `body` with no offset.
    ///
    /// ```
    /// # use bevy::prelude::*;
    /// # use bevy_euler_physics::prelude::*;
    /// assert_eq!(FollowsBody::new(Entity::PLACEHOLDER).offset, Vec3::ZERO);
    /// ```
    pub const fn new(body: Entity) -> Self {
        Self {
            body,
            offset: Vec3::ZERO,
        }
    }

    /// The same, at `offset` from the body.
    ///
    /// ```
    /// # use bevy::prelude::*;
    /// # use bevy_euler_physics::prelude::*;
    /// assert_eq!(FollowsBody::new(Entity::PLACEHOLDER).with_offset(Vec3::X).offset, Vec3::X);
    /// ```
    pub const fn with_offset(mut self, offset: Vec3) -> Self {
        self.offset = offset;
        self
    }
}

/// The pins and followers reported, so that each is said once while it
/// stays wrong.
#[derive(Resource, Default)]
pub(crate) struct PinReports {
    pins: EntityHashSet,
    followers: EntityHashSet,
}

/// Reports `issue` for `entity` once while it lasts (`set` holds those
/// said).
fn report_once(
    reporter: &mut Reporter,
    set: &mut EntityHashSet,
    entity: Entity,
    issue: PhysicsIssue,
) {
    if set.insert(entity) {
        reporter.warn(entity, issue);
    }
}

/// Start of the fixed step, before anything reads the bodies: each pinned
/// body to where its target is, moving at the target's velocity over the
/// step (or at rest, for a teleport or a placement at another target than
/// the last, see [`PinPlaced`]). Writes a body only when that changes it.
pub(crate) fn follow_targets(
    mut pinned: Query<(Entity, &PinnedTo, &mut Body, &mut PinPlaced), Without<PhysicsError>>,
    targets: Targets,
    time: Res<Time<Fixed>>,
    mut reports: ResMut<PinReports>,
    mut reporter: Reporter,
) {
    let h = time.timestep().as_secs_f32();
    let reports = &mut *reports;
    if !reports.pins.is_empty() {
        reports.pins.retain(|&entity| pinned.contains(entity));
    }
    for (entity, pin, mut body, mut placed) in &mut pinned {
        let to = if body.is_fixed() {
            targets
                .place(pin)
                .ok_or(PhysicsIssue::PinTargetInvalid { target: pin.target })
        } else {
            Err(PhysicsIssue::PinnedDynamicBody)
        };
        let to = match to {
            Ok(to) => to,
            Err(issue) => {
                report_once(&mut reporter, &mut reports.pins, entity, issue);
                // A fixed body stays where it was, at rest; a dynamic one
                // is left alone.
                if body.is_fixed() && body.velocity != Vec3::ZERO {
                    body.velocity = Vec3::ZERO;
                }
                placed.set_if_neq(PinPlaced(None));
                continue;
            }
        };
        reports.pins.remove(&entity);
        let moved = to - body.position;
        // (A NaN distance reads as a teleport.)
        let within = moved.length() <= pin.teleport_distance.max(0.0);
        let teleport = placed.0 != Some(pin.target) || h <= 0.0 || !within;
        let velocity = if teleport { Vec3::ZERO } else { moved / h };
        if to != body.position || velocity != body.velocity {
            body.position = to;
            body.velocity = velocity;
        }
        placed.set_if_neq(PinPlaced(Some(pin.target)));
    }
}

/// Where pins' targets are: a target with a [`Body`] (not itself pinned)
/// at its body's position, the offset turned and scaled by its
/// `Transform` (a body's drawn translation depends on the frame's timing;
/// its position does not); any other through its `Transform` composed up
/// its parents.
#[derive(bevy::ecs::system::SystemParam)]
pub(crate) struct Targets<'w, 's> {
    transforms: TransformHelper<'w, 's>,
    bodies: Query<'w, 's, (&'static Body, Option<&'static Transform>), Without<PinnedTo>>,
}

impl Targets<'_, '_> {
    /// Where `pin` puts its body now, if its target is valid.
    fn place(&self, pin: &PinnedTo) -> Option<Vec3> {
        let to = match self.bodies.get(pin.target) {
            Ok((body, transform)) => {
                let turn = transform.copied().unwrap_or_default();
                body.position + turn.rotation * (turn.scale * pin.offset)
            }
            Err(_) => self
                .transforms
                .compute_global_transform(pin.target)
                .ok()?
                .transform_point(pin.offset),
        };
        to.is_finite().then_some(to)
    }
}

/// Pinned bodies not left out for an error.
type PinsInTheStep = (With<PinnedTo>, Without<PhysicsError>);

/// End of the fixed step, after the scatter (which drew every body from
/// where it stands now): a pinned body that moved with its target is drawn
/// from where it started the step, `position − h·velocity` (a teleport has
/// no velocity, and so no streak).
pub(crate) fn draw_pins_between(
    mut pinned: Query<(&Body, &mut PositionHistory), PinsInTheStep>,
    time: Res<Time<Fixed>>,
) {
    let h = time.timestep().as_secs_f32();
    for (body, mut history) in &mut pinned {
        if body.is_fixed() && body.velocity != Vec3::ZERO {
            let from = body.position - h * body.velocity;
            if from.is_finite() {
                *history = PositionHistory::at(from);
            }
        }
    }
}

/// `entity`'s transform composed up its parents from their `Transform`s,
/// as it is now (its `GlobalTransform` is last frame's until Bevy's
/// propagation); `None` if one of them has none or follows a body itself.
fn parent_transform(
    parents: &Query<(&Transform, Option<&ChildOf>), Without<FollowsBody>>,
    entity: Entity,
) -> Option<GlobalTransform> {
    let (transform, mut up) = parents.get(entity).ok()?;
    let mut global = GlobalTransform::from(*transform);
    while let Some(parent) = up {
        let (transform, next) = parents.get(parent.parent()).ok()?;
        global = GlobalTransform::from(*transform) * global;
        up = next;
    }
    Some(global)
}

/// `Update`, after the interpolation: each follower's translation to its
/// body's drawn position plus the offset.
pub(crate) fn follow_bodies(
    mut followers: Query<(Entity, &FollowsBody, &mut Transform, Option<&ChildOf>)>,
    drawn: DrawnPositions,
    parents: Query<(&Transform, Option<&ChildOf>), Without<FollowsBody>>,
    globals: Query<&GlobalTransform>,
    entities: &bevy::ecs::entity::Entities,
    mut reports: ResMut<PinReports>,
    mut reporter: Reporter,
) {
    if !reports.followers.is_empty() {
        reports
            .followers
            .retain(|&entity| followers.contains(entity));
    }
    for (entity, follows, mut transform, parent) in &mut followers {
        let Some(at) = drawn.get(follows.body) else {
            let issue = missing_body(follows.body, entities);
            report_once(&mut reporter, &mut reports.followers, entity, issue);
            continue;
        };
        reports.followers.remove(&entity);
        let world = at + follows.offset;
        let parent = parent.and_then(|p| {
            parent_transform(&parents, p.parent()).or_else(|| globals.get(p.parent()).ok().copied())
        });
        let local = match parent {
            Some(parent) => parent.affine().inverse().transform_point3(world),
            None => world,
        };
        if local.is_finite() && transform.translation != local {
            transform.translation = local;
        }
    }
}

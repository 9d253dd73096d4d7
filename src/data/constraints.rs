//! The built-in constraints' data: rods ([`DistanceConstraint`]), round
//! bodies ([`Radius`]), planes ([`GroundPlane`]) and
//! [`ConstraintSettings`]. How they are solved is in the public
//! [`constraints`](crate::constraints) module's docs.

use bevy::ecs::lifecycle::HookContext;
use bevy::ecs::world::DeferredWorld;
use bevy::prelude::*;

use crate::data::issues::PhysicsIssue;
use crate::data::requests::{WakeCause, WakeTarget, mark_dirty, request};

/// A rigid rod: keeps bodies `a` and `b` at `length` from each other.
/// Its own entity, like a [`Spring`](crate::Spring).
///
/// ```
/// use bevy::prelude::*;
/// use bevy_euler_physics::prelude::*;
///
/// fn spawn_pendulum(mut commands: Commands) {
///     let pivot = commands.spawn(Body::fixed(Vec3::Y)).id();
///     let bob = commands.spawn(Body::new(1.0).with_position(Vec3::X)).id();
///     // As long as the bob is from the pivot now: √2.
///     commands.spawn(DistanceConstraint::new(pivot, bob, 2.0_f32.sqrt()));
/// }
/// # App::new().add_systems(Startup, spawn_pendulum);
/// ```
///
/// Like a spring, a rod is an immutable component: insert a new value to
/// change it (its hooks tell the step at once).
#[derive(Component, Reflect, Debug, Clone, Copy, PartialEq)]
#[reflect(Component, Debug, PartialEq, Clone)]
#[component(immutable, on_insert = wake_ends, on_discard = wake_ends)]
pub struct DistanceConstraint {
    /// One end.
    #[entities]
    pub a: Entity,
    /// The other end.
    #[entities]
    pub b: Entity,
    /// The distance kept, in metres.
    pub length: f32,
}

impl DistanceConstraint {
    /// A rod of `length` between `a` and `b`.
    ///
    /// ```
    /// # use bevy::prelude::*;
    /// # use bevy_euler_physics::prelude::*;
    /// let rod = DistanceConstraint::new(Entity::PLACEHOLDER, Entity::PLACEHOLDER, 0.5);
    /// assert_eq!(rod.length, 0.5);
    /// ```
    pub const fn new(a: Entity, b: Entity, length: f32) -> Self {
        Self { a, b, length }
    }
}

impl From<ContactMaterial> for crate::kernels::constraints::Material {
    /// The material as the passes use it ([`ContactMaterial::sanitized`]).
    fn from(material: ContactMaterial) -> Self {
        let used = material.sanitized();
        Self {
            restitution: used.restitution,
            friction: used.friction,
        }
    }
}

/// Keeps the distance between bodies `a` and `b` within `[min, max]`:
/// slack inside, taut at either end. A cord when `min` is 0, a strut when
/// `max` is infinite. Its own entity, like a [`DistanceConstraint`]; it
/// joins islands like one, and its two bodies do not touch each other.
///
/// ```
/// use bevy::prelude::*;
/// use bevy_euler_physics::prelude::*;
///
/// fn spawn_tether(mut commands: Commands) {
///     let post = commands.spawn(Body::fixed(Vec3::Y * 2.0)).id();
///     let dog = commands.spawn(Body::new(10.0).with_position(Vec3::X)).id();
///     // A leash: free within 3 m of the post, never further.
///     commands.spawn(DistanceLimit::new(post, dog, 0.0, 3.0));
/// }
/// # App::new().add_systems(Startup, spawn_tether);
/// ```
///
/// Bounds that are NaN, a negative or infinite `min`, or `min > max` are
/// reported once ([`PhysicsIssue::InvalidLimit`]) and the limit is left
/// out of the step until it is replaced by a valid one.
#[derive(Component, Reflect, Debug, Clone, Copy, PartialEq)]
#[reflect(Component, Debug, PartialEq, Clone)]
#[component(immutable, on_insert = wake_limit_ends, on_discard = wake_limit_ends)]
pub struct DistanceLimit {
    /// One end.
    #[entities]
    pub a: Entity,
    /// The other end.
    #[entities]
    pub b: Entity,
    /// The shortest distance allowed, in metres.
    pub min: f32,
    /// The longest distance allowed, in metres (may be infinite).
    pub max: f32,
}

impl DistanceLimit {
    /// A limit keeping `a` and `b` between `min` and `max` apart.
    ///
    /// ```
    /// # use bevy::prelude::*;
    /// # use bevy_euler_physics::prelude::*;
    /// let cord = DistanceLimit::new(Entity::PLACEHOLDER, Entity::PLACEHOLDER, 0.0, 1.5);
    /// assert_eq!(cord.max, 1.5);
    /// ```
    pub const fn new(a: Entity, b: Entity, min: f32, max: f32) -> Self {
        Self { a, b, min, max }
    }

    /// Whether the bounds can be stepped; the issue reported if not.
    ///
    /// ```
    /// # use bevy::prelude::*;
    /// # use bevy_euler_physics::prelude::*;
    /// let e = Entity::PLACEHOLDER;
    /// assert!(DistanceLimit::new(e, e, 0.0, f32::INFINITY).check().is_ok());
    /// assert!(DistanceLimit::new(e, e, 2.0, 1.0).check().is_err());
    /// ```
    pub fn check(&self) -> Result<(), PhysicsIssue> {
        let (min, max) = (self.min, self.max);
        if min >= 0.0 && min.is_finite() && max >= min {
            Ok(())
        } else {
            Err(PhysicsIssue::InvalidLimit { min, max })
        }
    }
}

/// Keeps the signed angle at `pivot` between the arms to `a` and to `b`,
/// `θ = atan2(((a − p) × (b − p)) · axis, (a − p) · (b − p))`, within
/// `[min, max]` radians: a knee or an elbow that bends one way. The axis
/// is `Vec3::Z` (a 2D game's hinge); [`with_axis`](Self::with_axis) sets a
/// hinge in 3D. Its own entity; it joins the three bodies' islands, and
/// none of the three touches another. A limit violated at spawn is brought
/// inside over a few steps, by moving the bodies rather than speeding
/// them up, and without moving their centre of mass.
///
/// ```
/// use bevy::prelude::*;
/// use bevy_euler_physics::prelude::*;
///
/// fn spawn_leg(mut commands: Commands) {
///     let hip = commands.spawn(Body::new(4.0).with_position(Vec3::new(0.0, 1.0, 0.0))).id();
///     let knee = commands.spawn(Body::new(2.0).with_position(Vec3::new(0.0, 0.5, 0.0))).id();
///     let foot = commands.spawn(Body::new(1.0)).id();
///     commands.spawn(DistanceConstraint::new(hip, knee, 0.5));
///     commands.spawn(DistanceConstraint::new(knee, foot, 0.5));
///     // Straight (π) to bent back by 150°, one way only.
///     commands.spawn(AngleLimit::new(hip, knee, foot, 30f32.to_radians(), std::f32::consts::PI));
/// }
/// # App::new().add_systems(Startup, spawn_leg);
/// ```
///
/// Bounds that are not within `[−π, π]` or with `min > max`, or an axis
/// that is zero or not finite, are reported once and the limit is left out
/// of the step.
#[derive(Component, Reflect, Debug, Clone, Copy, PartialEq)]
#[reflect(Component, Debug, PartialEq, Clone)]
#[component(immutable, on_insert = wake_limit_ends, on_discard = wake_limit_ends)]
pub struct AngleLimit {
    /// The end of the first arm.
    #[entities]
    pub a: Entity,
    /// The body the angle is measured at.
    #[entities]
    pub pivot: Entity,
    /// The end of the second arm.
    #[entities]
    pub b: Entity,
    /// The smallest angle allowed, in radians, in `[−π, π]`.
    pub min: f32,
    /// The largest angle allowed, in radians, in `[min, π]`.
    pub max: f32,
    /// The hinge axis the angle turns about (normalised when used).
    pub axis: Vec3,
}

impl AngleLimit {
    /// A limit keeping the angle `a`–`pivot`–`b` in `[min, max]` about
    /// `Vec3::Z`.
    ///
    /// ```
    /// # use bevy::prelude::*;
    /// # use bevy_euler_physics::prelude::*;
    /// let e = Entity::PLACEHOLDER;
    /// assert_eq!(AngleLimit::new(e, e, e, 0.0, 1.0).axis, Vec3::Z);
    /// ```
    pub const fn new(a: Entity, pivot: Entity, b: Entity, min: f32, max: f32) -> Self {
        Self {
            a,
            pivot,
            b,
            min,
            max,
            axis: Vec3::Z,
        }
    }

    /// With a hinge about `axis` instead of `Vec3::Z`.
    ///
    /// ```
    /// # use bevy::prelude::*;
    /// # use bevy_euler_physics::prelude::*;
    /// let e = Entity::PLACEHOLDER;
    /// assert_eq!(AngleLimit::new(e, e, e, 0.0, 1.0).with_axis(Vec3::X).axis, Vec3::X);
    /// ```
    pub const fn with_axis(mut self, axis: Vec3) -> Self {
        self.axis = axis;
        self
    }

    /// The three pairs of bodies the limit holds: `a`–`pivot`,
    /// `pivot`–`b` and `a`–`b` (none of them touch each other).
    ///
    /// ```
    /// # use bevy::prelude::*;
    /// # use bevy_euler_physics::prelude::*;
    /// let e = Entity::PLACEHOLDER;
    /// assert_eq!(AngleLimit::new(e, e, e, 0.0, 1.0).pairs().len(), 3);
    /// ```
    pub const fn pairs(&self) -> [(Entity, Entity); 3] {
        [(self.a, self.pivot), (self.pivot, self.b), (self.a, self.b)]
    }

    /// The signed angle at `pivot` from the arm to `a` to the arm to `b`
    /// about `axis`, in `(−π, π]`.
    ///
    /// ```
    /// # use bevy::prelude::*;
    /// # use bevy_euler_physics::prelude::*;
    /// let right_angle = AngleLimit::angle(Vec3::X, Vec3::ZERO, Vec3::Y, Vec3::Z);
    /// assert!((right_angle - std::f32::consts::FRAC_PI_2).abs() < 1e-6);
    /// ```
    pub fn angle(a: Vec3, pivot: Vec3, b: Vec3, axis: Vec3) -> f32 {
        let (u, w) = (a - pivot, b - pivot);
        u.cross(w).dot(axis.normalize_or_zero()).atan2(u.dot(w))
    }

    /// How far `theta` lies outside `[min, max]`, in radians (0 inside),
    /// reading `theta ± 2π` when that is nearer: a knee limited to
    /// `[0.7, π]` and bent 0.1 rad past straight is 0.1 rad out, not 5.4.
    ///
    /// ```
    /// # use bevy::prelude::*;
    /// # use bevy_euler_physics::prelude::*;
    /// use std::f32::consts::PI;
    /// let e = Entity::PLACEHOLDER;
    /// let knee = AngleLimit::new(e, e, e, 0.7, PI);
    /// assert_eq!(knee.excess(1.0), 0.0);
    /// assert!((knee.excess(-PI + 0.1) - 0.1).abs() < 1e-5);
    /// ```
    pub fn excess(&self, theta: f32) -> f32 {
        let theta = crate::kernels::constraints::nearest_turn(theta, self.min, self.max);
        (self.min - theta).max(theta - self.max).max(0.0)
    }

    /// Whether the bounds and axis can be stepped; the issue reported if
    /// not.
    ///
    /// ```
    /// # use bevy::prelude::*;
    /// # use bevy_euler_physics::prelude::*;
    /// let e = Entity::PLACEHOLDER;
    /// assert!(AngleLimit::new(e, e, e, -1.0, 1.0).check().is_ok());
    /// assert!(AngleLimit::new(e, e, e, 1.0, f32::NAN).check().is_err());
    /// assert!(AngleLimit::new(e, e, e, 0.0, 1.0).with_axis(Vec3::ZERO).check().is_err());
    /// ```
    pub fn check(&self) -> Result<(), PhysicsIssue> {
        use core::f32::consts::PI;
        let (min, max) = (self.min, self.max);
        if !(-PI <= min && min <= max && max <= PI) {
            return Err(PhysicsIssue::InvalidLimit { min, max });
        }
        let axis = self.axis;
        if !axis.is_finite() || axis.length_squared() == 0.0 {
            return Err(PhysicsIssue::InvalidAxis { axis });
        }
        Ok(())
    }
}

/// The radius of a round body, in metres: with it, the body touches
/// [`GroundPlane`]s and every other body with a radius, except bodies it is
/// joined to directly (by a [`Spring`](crate::Spring) or a
/// [`DistanceConstraint`]: a rope's neighbours do not push each other
/// apart) and bodies its [`CollisionGroups`] leave out. Touching bodies
/// share an island (its pass count and its sleep) for as long as they
/// touch. A radius that is negative, not finite or above [`Radius::MAX`]
/// is reported once and the body has no contacts.
///
/// ```
/// use bevy::prelude::*;
/// use bevy_euler_physics::prelude::*;
///
/// fn spawn_ball(mut commands: Commands) {
///     commands.spawn((Body::new(1.0).with_position(Vec3::Y * 2.0), Radius(0.25)));
/// }
/// # App::new().add_systems(Startup, spawn_ball);
/// ```
#[derive(Component, Reflect, Debug, Clone, Copy, PartialEq)]
#[reflect(Component, Debug, PartialEq, Clone)]
#[component(on_insert = wake_body, on_discard = wake_body)]
pub struct Radius(pub f32);

impl Radius {
    /// The largest radius the step accepts: 10 km. No body of a game is
    /// larger, and a radius far beyond the scene (`Radius(1e30)`) would put
    /// the body that deep in the ground and throw it out at that speed.
    ///
    /// ```
    /// use bevy_euler_physics::prelude::*;
    /// assert!(Radius(0.5).0 <= Radius::MAX);
    /// ```
    pub const MAX: f32 = crate::data::settings::MAX_RADIUS;

    /// Whether the step accepts it: from 0 to [`MAX`](Self::MAX) (NaN is
    /// not).
    pub(crate) fn is_valid(self) -> bool {
        (0.0..=Self::MAX).contains(&self.0)
    }
}

/// What a round body's surface is made of, for its contacts: restitution
/// and friction. Two bodies in contact combine theirs as Box2D does: the
/// larger restitution and the geometric mean of the frictions. A body
/// without one counts as [`ContactMaterial::default`] against other
/// bodies; against a [`GroundPlane`], a body with one combines it with the
/// plane's by the same rule, and a body without one takes the plane's.
///
/// ```
/// use bevy::prelude::*;
/// use bevy_euler_physics::prelude::*;
///
/// fn spawn_rubber_ball(mut commands: Commands) {
///     commands.spawn((
///         Body::new(0.1).with_position(Vec3::Y),
///         Radius(0.05),
///         ContactMaterial::new(0.8, 0.9),
///     ));
/// }
/// # App::new().add_systems(Startup, spawn_rubber_ball);
/// ```
#[derive(Component, Reflect, Debug, Clone, Copy, PartialEq)]
#[reflect(Component, Default, Debug, PartialEq, Clone)]
#[component(on_insert = wake_body, on_discard = wake_body)]
pub struct ContactMaterial {
    /// Restitution `e` in `[0, 1]` (clamped when used): the share of the
    /// approach speed a body bounces back with, above
    /// [`ConstraintSettings::bounce_threshold`].
    pub restitution: f32,
    /// Coulomb friction coefficient `μ ≥ 0` (negative or NaN reads as 0).
    pub friction: f32,
}

impl ContactMaterial {
    /// A material of restitution `e` and friction `μ`.
    ///
    /// ```
    /// # use bevy_euler_physics::prelude::*;
    /// assert_eq!(ContactMaterial::new(0.5, 0.2).friction, 0.2);
    /// ```
    pub const fn new(restitution: f32, friction: f32) -> Self {
        Self {
            restitution,
            friction,
        }
    }

    /// The material as the passes use it: restitution clamped to `[0, 1]`,
    /// friction to `[0, ∞)`, NaN read as 0.
    ///
    /// ```
    /// # use bevy_euler_physics::prelude::*;
    /// let used = ContactMaterial::new(f32::NAN, -1.0).sanitized();
    /// assert_eq!((used.restitution, used.friction), (0.0, 0.0));
    /// ```
    pub fn sanitized(self) -> Self {
        let clean = |x: f32, max: f32| if x.is_nan() { 0.0 } else { x.clamp(0.0, max) };
        Self::new(clean(self.restitution, 1.0), clean(self.friction, f32::MAX))
    }
}

impl Default for ContactMaterial {
    /// No bounce, friction 0.6.
    ///
    /// ```
    /// # use bevy_euler_physics::prelude::*;
    /// assert_eq!(ContactMaterial::default(), ContactMaterial::new(0.0, 0.6));
    /// ```
    fn default() -> Self {
        Self::new(0.0, 0.6)
    }
}

/// Which round bodies touch which, as in avian's `CollisionLayers`: a body
/// is in the groups `memberships` and touches the groups `filters`. Two
/// bodies touch when each one's memberships meet the other's filters. A
/// body without the component is in every group and touches every group.
///
/// ```
/// use bevy::prelude::*;
/// use bevy_euler_physics::prelude::*;
///
/// const DEBRIS: u32 = 1 << 1;
///
/// fn spawn_debris(mut commands: Commands) {
///     // Debris touches everything but other debris.
///     commands.spawn((
///         Body::new(0.1),
///         Radius(0.05),
///         CollisionGroups::new(DEBRIS, !DEBRIS),
///     ));
/// }
/// # App::new().add_systems(Startup, spawn_debris);
/// ```
#[derive(Component, Reflect, Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[reflect(Component, Default, Debug, PartialEq, Clone)]
#[component(on_insert = wake_body, on_discard = wake_body)]
pub struct CollisionGroups {
    /// The groups the body is in, one bit each.
    pub memberships: u32,
    /// The groups the body touches.
    pub filters: u32,
}

impl CollisionGroups {
    /// In every group, touching every group (the default).
    pub const ALL: Self = Self::new(u32::MAX, u32::MAX);
    /// In no group, touching nothing.
    pub const NONE: Self = Self::new(0, 0);

    /// In `memberships`, touching `filters`.
    ///
    /// ```
    /// # use bevy_euler_physics::prelude::*;
    /// let player = CollisionGroups::new(1, !0);
    /// let ghost = CollisionGroups::new(2, 0);
    /// assert!(!player.touches(&ghost));
    /// assert!(player.touches(&CollisionGroups::ALL));
    /// ```
    pub const fn new(memberships: u32, filters: u32) -> Self {
        Self {
            memberships,
            filters,
        }
    }

    /// Whether bodies in these groups and in `other` touch: each one's
    /// memberships meet the other's filters.
    ///
    /// ```
    /// # use bevy_euler_physics::prelude::*;
    /// assert!(CollisionGroups::ALL.touches(&CollisionGroups::ALL));
    /// assert!(!CollisionGroups::NONE.touches(&CollisionGroups::ALL));
    /// ```
    pub const fn touches(&self, other: &Self) -> bool {
        self.memberships & other.filters != 0 && other.memberships & self.filters != 0
    }
}

impl Default for CollisionGroups {
    fn default() -> Self {
        Self::ALL
    }
}

/// A plane with solid ground behind it: the half-space `normal · x < offset`
/// (the ground, a wall, a ramp) that bodies
/// with a [`Radius`] stay out of. Its own entity; as many as you like.
///
/// ```
/// use bevy::prelude::*;
/// use bevy_euler_physics::prelude::*;
///
/// fn spawn_room(mut commands: Commands) {
///     commands.spawn(GroundPlane::horizontal(0.0));
///     // A wall at x = 5, solid beyond it.
///     commands.spawn(GroundPlane::new(Vec3::NEG_X, -5.0).with_friction(0.1));
/// }
/// # App::new().add_systems(Startup, spawn_room);
/// ```
#[derive(Component, Reflect, Debug, Clone, Copy, PartialEq)]
#[reflect(Component, Debug, PartialEq, Clone)]
#[component(on_insert = wake_all, on_discard = wake_all)]
pub struct GroundPlane {
    /// The outward normal (normalised when used; a zero or non-finite
    /// normal disables the plane).
    pub normal: Vec3,
    /// Points with `normal · x ≥ offset` are outside.
    pub offset: f32,
    /// Restitution `e` in `[0, 1]`: the share of the approach speed a body
    /// bounces back with.
    pub restitution: f32,
    /// Coulomb friction coefficient `μ ≥ 0`.
    pub friction: f32,
}

impl GroundPlane {
    /// A half-space with the given outward normal and offset, restitution
    /// 0.2 and friction 0.6.
    ///
    /// ```
    /// # use bevy::prelude::*;
    /// # use bevy_euler_physics::prelude::*;
    /// let wall = GroundPlane::new(Vec3::X, -3.0);
    /// assert_eq!(wall.friction, 0.6);
    /// ```
    pub const fn new(normal: Vec3, offset: f32) -> Self {
        Self {
            normal,
            offset,
            restitution: 0.2,
            friction: 0.6,
        }
    }

    /// The ground `y ≥ height`.
    ///
    /// ```
    /// # use bevy::prelude::*;
    /// # use bevy_euler_physics::prelude::*;
    /// assert_eq!(GroundPlane::horizontal(1.0).normal, Vec3::Y);
    /// ```
    pub const fn horizontal(height: f32) -> Self {
        Self::new(Vec3::Y, height)
    }

    /// With restitution `e` (clamped to `[0, 1]` when used).
    ///
    /// ```
    /// # use bevy_euler_physics::prelude::*;
    /// assert_eq!(GroundPlane::horizontal(0.0).with_restitution(0.8).restitution, 0.8);
    /// ```
    pub const fn with_restitution(mut self, restitution: f32) -> Self {
        self.restitution = restitution;
        self
    }

    /// The unit normal the plane is solved with, or `None` when
    /// [`GroundPlane::normal`] is zero or not finite (the plane is then
    /// ignored). A normal of any other length is normalised, scaled first
    /// so that very long or very short ones neither overflow nor vanish.
    ///
    /// ```
    /// # use bevy::prelude::*;
    /// # use bevy_euler_physics::prelude::*;
    /// assert_eq!(GroundPlane::new(Vec3::new(0.0, 3.0, 0.0), 0.0).unit_normal(), Some(Vec3::Y));
    /// assert_eq!(GroundPlane::new(Vec3::ZERO, 0.0).unit_normal(), None);
    /// ```
    pub fn unit_normal(&self) -> Option<Vec3> {
        let n = self.normal;
        let n = if n.length_squared().is_normal() {
            n
        } else {
            n / n.abs().max_element()
        };
        let n = n.normalize_or_zero();
        (n != Vec3::ZERO).then_some(n)
    }

    /// With friction coefficient `μ` (negative reads as 0).
    ///
    /// ```
    /// # use bevy_euler_physics::prelude::*;
    /// assert_eq!(GroundPlane::horizontal(0.0).with_friction(0.0).friction, 0.0);
    /// ```
    pub const fn with_friction(mut self, friction: f32) -> Self {
        self.friction = friction;
        self
    }
}

/// How the built-in constraints are solved.
///
/// ```
/// use bevy::prelude::*;
/// use bevy_euler_physics::prelude::*;
///
/// App::new()
///     .add_plugins((MinimalPlugins, EulerPhysicsPlugin))
///     // Stiffer ragdolls: more rounds per pass.
///     .insert_resource(ConstraintSettings { iterations: 8, ..default() });
/// ```
#[derive(Resource, Reflect, Debug, Clone, Copy, PartialEq)]
#[reflect(Resource, Default, Debug, PartialEq, Clone)]
pub struct ConstraintSettings {
    /// Rounds of sequential impulses per pass. Default: 4.
    pub iterations: u32,
    /// The share `β` of a position error corrected per pass (Baumgarte).
    /// Default: 0.2.
    pub position_bias: f32,
    /// Approach speed (m/s) below which contacts do not bounce, so resting
    /// bodies stay at rest. Default: 0.5.
    pub bounce_threshold: f32,
    /// The fewest passes per fixed step of an island in which round bodies
    /// touch each other (a pile, a heap of ragdolls): a pile's weight is
    /// carried from pass to pass, so four passes of 4 rounds hold what one
    /// pass of many more rounds would not. `1` leaves the pass count to
    /// [`Substeps`](crate::Substeps) and the settings alone. Default: 4,
    /// as Box2D's substeps.
    pub contact_substeps: u32,
    /// The share of the forces touching round bodies held over a step
    /// ([`ContactForces`](crate::ContactForces)) that their contacts start
    /// the next step with (the warm start across steps): a resting pile
    /// then starts each step holding much of its weight instead of finding
    /// it again in the step's rounds, so it sinks into itself less. The
    /// forces hold some of the position bias's push as well, so carrying
    /// all of them makes a pile tremble; half keeps it as still as
    /// starting cold does. `0` starts every step cold. Read clamped to `[0, 1]`; NaN
    /// reads as the default. Default: 0.5.
    pub warm_start: f32,
}

impl ConstraintSettings {
    /// [`warm_start`](Self::warm_start) as used: clamped to `[0, 1]`, NaN
    /// read as the default 0.5.
    ///
    /// ```
    /// # use bevy_euler_physics::prelude::*;
    /// let settings = ConstraintSettings { warm_start: 2.0, ..Default::default() };
    /// assert_eq!(settings.warm_share(), 1.0);
    /// let settings = ConstraintSettings { warm_start: f32::NAN, ..Default::default() };
    /// assert_eq!(settings.warm_share(), 0.5);
    /// ```
    pub fn warm_share(&self) -> f32 {
        if self.warm_start.is_nan() {
            0.5
        } else {
            self.warm_start.clamp(0.0, 1.0)
        }
    }

    /// `position_bias` as used: clamped to `[0, 1]`, and NaN or infinite
    /// read as the default 0.2.
    ///
    /// ```
    /// # use bevy_euler_physics::prelude::*;
    /// let s = ConstraintSettings { position_bias: f32::NAN, ..Default::default() };
    /// assert_eq!(s.bias(), 0.2);
    /// ```
    pub fn bias(&self) -> f32 {
        if self.position_bias.is_finite() {
            self.position_bias.clamp(0.0, 1.0)
        } else {
            0.2
        }
    }
}

impl Default for ConstraintSettings {
    fn default() -> Self {
        Self {
            iterations: 4,
            position_bias: 0.2,
            bounce_threshold: 0.5,
            contact_substeps: 4,
            warm_start: 0.5,
        }
    }
}

/// Hook: a rod was added, replaced or removed; its ends' islands wake.
fn wake_ends(mut world: DeferredWorld, ctx: HookContext) {
    let Some(rod) = world.get::<DistanceConstraint>(ctx.entity).copied() else {
        return;
    };
    request(&mut world, |requests| {
        for end in [rod.a, rod.b] {
            requests.wake(
                WakeTarget::Body(end),
                WakeCause::ConstraintChanged(ctx.entity),
            );
        }
    });
}

/// Hook: a limit was added, replaced or removed; its bodies' islands wake.
fn wake_limit_ends(mut world: DeferredWorld, ctx: HookContext) {
    let ends = if let Some(limit) = world.get::<DistanceLimit>(ctx.entity) {
        vec![limit.a, limit.b]
    } else if let Some(limit) = world.get::<AngleLimit>(ctx.entity) {
        vec![limit.a, limit.pivot, limit.b]
    } else {
        return;
    };
    request(&mut world, |requests| {
        for end in ends {
            requests.wake(
                WakeTarget::Body(end),
                WakeCause::ConstraintChanged(ctx.entity),
            );
        }
    });
}

/// Hook: a radius, material or collision groups were added, replaced or
/// removed; its body's island wakes.
fn wake_body(mut world: DeferredWorld, ctx: HookContext) {
    request(&mut world, |requests| {
        requests.wake(
            WakeTarget::Body(ctx.entity),
            WakeCause::ConstraintChanged(ctx.entity),
        );
    });
    mark_dirty(world, ctx);
}

/// Hook: a plane was added, replaced or removed; every island wakes.
fn wake_all(mut world: DeferredWorld, ctx: HookContext) {
    request(&mut world, |requests| {
        requests.wake(WakeTarget::All, WakeCause::ConstraintChanged(ctx.entity));
    });
}

//! Shapes of the game's world that round bodies touch: [`Obstacle`],
//! [`ObstacleVelocity`], [`ObstacleState`].

use bevy::math::primitives::{
    Capsule2d, Capsule3d, Circle, ConvexPolygon, Cuboid, Cylinder, HalfSpace, Rectangle, Sphere,
};
use bevy::prelude::*;

use crate::data::issues::ObstacleProblem;
use crate::kernels::shapes::Shape;

/// A shape of the game's world that bodies with a [`Radius`](crate::Radius)
/// touch and cannot pass: a wall, a ramp, a platform, a character's limb.
/// One of Bevy's primitives, placed by the entity's transform (its
/// `Transform` and those of its parents: translation, rotation and scale).
///
/// - 3D: [`Sphere`], [`Cuboid`], [`Capsule3d`] and [`Cylinder`] (both
///   along their local `Y`), [`HalfSpace`] (solid where it contains
///   points: `normal · p + d > 0`, the normal pointing into the solid).
/// - 2D, in the local `XY` plane, as prisms endless along local `Z`:
///   [`Circle`], [`Rectangle`], [`Capsule2d`], [`ConvexPolygon`].
///
/// A scale applies where the shape stays of its kind: per axis for a
/// cuboid, rectangle or polygon, `Y` apart from `XZ` for a cylinder
/// (`X` and `Z` equal), uniform for the rest. Any other scale, a size that
/// is zero, negative or not finite, a polygon of fewer than three corners
/// or one that is not convex, a non-finite transform, or an obstacle that
/// is also a [`Body`](crate::Body) is reported once
/// ([`PhysicsIssue::Obstacle`](crate::PhysicsIssue::Obstacle)) and the
/// shape is left out until it is fixed.
///
/// Its surface is the entity's [`ContactMaterial`](crate::ContactMaterial)
/// (combined with a body's own as for two bodies; the default without
/// one), and its [`CollisionGroups`](crate::CollisionGroups) filter which
/// bodies touch it. Contacts are found each pass within the speculative
/// margin, so a fast body does not tunnel through a thin shape.
///
/// An obstacle that moves pushes bodies with its own velocity, taken from
/// its motion between fixed steps (or from [`ObstacleVelocity`]): friction
/// carries a body resting on a moving platform along. Move it in
/// `FixedUpdate` (or animate it) and its motion is swept through the step;
/// [`ObstacleState::teleport`] moves it without pushing anything. Its pose
/// is read at the start of each fixed step from its `Transform` and its
/// parents' (not from `GlobalTransform`, which Bevy propagates only after
/// the fixed steps of a frame).
///
/// ```
/// use bevy::prelude::*;
/// use bevy_euler_physics::prelude::*;
///
/// fn spawn_level(mut commands: Commands) {
///     // A ramp: a box turned by 20°, a little slippery.
///     commands.spawn((
///         Obstacle::from(Cuboid::new(4.0, 0.2, 2.0)),
///         Transform::from_rotation(Quat::from_rotation_z(20f32.to_radians())),
///         ContactMaterial::new(0.0, 0.3),
///     ));
///     // The ground: solid below y = 0.
///     commands.spawn(Obstacle::from(HalfSpace::new(Vec3::NEG_Y.extend(0.0))));
///     // A ball to roll down it.
///     commands.spawn((Body::new(1.0).with_position(Vec3::new(-1.0, 2.0, 0.0)), Radius(0.1)));
/// }
/// # App::new().add_systems(Startup, spawn_level);
/// ```
#[derive(Component, Reflect, Debug, Clone, PartialEq)]
#[reflect(Component, Debug, PartialEq, Clone)]
#[require(Transform, ObstacleState)]
pub enum Obstacle {
    /// A ball.
    Sphere(Sphere),
    /// A box.
    Cuboid(Cuboid),
    /// A capsule along local `Y`.
    Capsule(Capsule3d),
    /// A cylinder along local `Y`.
    Cylinder(Cylinder),
    /// A half-space, solid along its normal.
    HalfSpace(HalfSpace),
    /// A 2D circle (an endless round column along `Z`).
    Circle(Circle),
    /// A 2D rectangle (an endless square column along `Z`).
    Rectangle(Rectangle),
    /// A 2D capsule along local `Y`.
    Capsule2d(Capsule2d),
    /// A 2D convex polygon.
    ConvexPolygon(ConvexPolygon),
}

macro_rules! obstacle_from {
    ($($kind:ident => $variant:ident),*) => {$(
        impl From<$kind> for Obstacle {
            fn from(shape: $kind) -> Self {
                Self::$variant(shape)
            }
        }
    )*};
}

obstacle_from!(
    Sphere => Sphere, Cuboid => Cuboid, Capsule3d => Capsule, Cylinder => Cylinder,
    HalfSpace => HalfSpace, Circle => Circle, Rectangle => Rectangle,
    Capsule2d => Capsule2d, ConvexPolygon => ConvexPolygon
);

/// Whether `a` and `b` are equal within a relative `1e-4`.
fn same(a: f32, b: f32) -> bool {
    (a - b).abs() <= 1e-4 * a.abs().max(b.abs())
}

impl Obstacle {
    /// The shape in its own frame with `scale` applied (the polygons'
    /// corners appended to `vertices`, counter-clockwise), or what is
    /// wrong with it.
    ///
    /// ```
    /// # use bevy::prelude::*;
    /// # use bevy_euler_physics::prelude::*;
    /// # use bevy_euler_physics::diagnostics::ObstacleProblem;
    /// let ball = Obstacle::from(Sphere::new(1.0));
    /// assert!(ball.check(Vec3::splat(2.0)).is_ok());
    /// assert_eq!(
    ///     ball.check(Vec3::new(1.0, 2.0, 1.0)),
    ///     Err(ObstacleProblem::NonUniformScale { scale: Vec3::new(1.0, 2.0, 1.0) })
    /// );
    /// assert_eq!(Obstacle::from(Sphere::new(-1.0)).check(Vec3::ONE), Err(ObstacleProblem::InvalidSize));
    /// ```
    pub fn check(&self, scale: Vec3) -> Result<(), ObstacleProblem> {
        self.shape(scale, &mut Vec::new()).map(|_| ())
    }

    pub(crate) fn shape(
        &self,
        scale: Vec3,
        vertices: &mut Vec<Vec2>,
    ) -> Result<Shape, ObstacleProblem> {
        let uniform = |s: Vec3| {
            if same(s.x, s.y) && same(s.y, s.z) {
                Ok(s.x)
            } else {
                Err(ObstacleProblem::NonUniformScale { scale: s })
            }
        };
        let flat = |s: Vec3| {
            if same(s.x, s.y) {
                Ok(s.x)
            } else {
                Err(ObstacleProblem::NonUniformScale { scale: s })
            }
        };
        let size = |x: f32| {
            if x > 0.0 && x.is_finite() {
                Ok(x)
            } else {
                Err(ObstacleProblem::InvalidSize)
            }
        };
        let length = |x: f32| {
            if x >= 0.0 && x.is_finite() {
                Ok(x)
            } else {
                Err(ObstacleProblem::InvalidSize)
            }
        };
        if !(scale.is_finite() && scale.min_element() > 0.0) {
            return Err(ObstacleProblem::InvalidSize);
        }
        Ok(match self {
            Self::Sphere(s) => Shape::Sphere {
                radius: size(s.radius * uniform(scale)?)?,
            },
            Self::Cuboid(c) => {
                let half = c.half_size * scale;
                for x in half.to_array() {
                    size(x)?;
                }
                Shape::Cuboid { half: half.into() }
            }
            Self::Capsule(c) => {
                let s = uniform(scale)?;
                Shape::Capsule {
                    radius: size(c.radius * s)?,
                    half_length: length(c.half_length * s)?,
                }
            }
            Self::Cylinder(c) => {
                if !same(scale.x, scale.z) {
                    return Err(ObstacleProblem::NonUniformScale { scale });
                }
                Shape::Cylinder {
                    radius: size(c.radius * scale.x)?,
                    half_height: size(c.half_height * scale.y)?,
                }
            }
            Self::HalfSpace(h) => {
                let normal = (Vec3::from(h.normal()) / scale).normalize_or_zero();
                if !(normal.length_squared() > 0.0 && h.d().is_finite()) {
                    return Err(ObstacleProblem::InvalidSize);
                }
                // The plane's point nearest the origin, scaled, stays on it.
                let on = Vec3::from(h.normal()) * -h.d() * scale;
                Shape::HalfSpace {
                    normal: normal.into(),
                    d: -normal.dot(on),
                }
            }
            Self::Circle(c) => Shape::Circle {
                radius: size(c.radius * flat(scale)?)?,
            },
            Self::Rectangle(r) => {
                let half = r.half_size * scale.truncate();
                size(half.x)?;
                size(half.y)?;
                Shape::Rectangle { half }
            }
            Self::Capsule2d(c) => {
                let s = flat(scale)?;
                Shape::Capsule2d {
                    radius: size(c.radius * s)?,
                    half_length: length(c.half_length * s)?,
                }
            }
            Self::ConvexPolygon(p) => polygon(p.vertices(), scale.truncate(), vertices)?,
        })
    }
}

/// A convex polygon's corners, scaled, appended counter-clockwise (on an
/// error, some may have been appended).
fn polygon(
    corners: &[Vec2],
    scale: Vec2,
    vertices: &mut Vec<Vec2>,
) -> Result<Shape, ObstacleProblem> {
    let n = corners.len();
    if n < 3 {
        return Err(ObstacleProblem::NotAPolygon);
    }
    let start = vertices.len();
    vertices.extend(corners.iter().map(|&c| c * scale));
    let scaled = &mut vertices[start..];
    if !scaled.iter().all(|c| c.is_finite()) {
        return Err(ObstacleProblem::InvalidSize);
    }
    let turn = |i: usize| {
        let (a, b, c) = (scaled[i], scaled[(i + 1) % n], scaled[(i + 2) % n]);
        (b - a).perp_dot(c - b)
    };
    let area: f32 = (0..n)
        .map(|i| scaled[i].perp_dot(scaled[(i + 1) % n]))
        .sum();
    // Convex: every corner turns the way the whole polygon does.
    if area == 0.0 || (0..n).any(|i| turn(i) * area < 0.0) {
        return Err(ObstacleProblem::NotAPolygon);
    }
    if area < 0.0 {
        scaled.reverse();
    }
    Ok(Shape::Polygon {
        start: start as u32,
        end: vertices.len() as u32,
    })
}

/// The velocity an [`Obstacle`]'s surface moves at, given by your code
/// instead of taken from its motion between steps: the linear velocity
/// of its frame's origin and its angular velocity (radians per second
/// about the axis). A conveyor belt is an obstacle that stays in place
/// with a velocity along its surface.
///
/// ```
/// use bevy::prelude::*;
/// use bevy_euler_physics::prelude::*;
///
/// fn spawn_belt(mut commands: Commands) {
///     commands.spawn((
///         Obstacle::from(Cuboid::new(6.0, 0.2, 1.0)),
///         ObstacleVelocity::linear(Vec3::X * 0.5),
///     ));
/// }
/// # App::new().add_systems(Startup, spawn_belt);
/// ```
#[derive(Component, Reflect, Debug, Clone, Copy, PartialEq, Default)]
#[reflect(Component, Debug, PartialEq, Clone, Default)]
pub struct ObstacleVelocity {
    /// Metres per second.
    pub linear: Vec3,
    /// Radians per second about the axis, through the frame's origin.
    pub angular: Vec3,
}

impl ObstacleVelocity {
    /// A surface moving at `linear`, not turning.
    ///
    /// ```
    /// # use bevy::prelude::*;
    /// # use bevy_euler_physics::prelude::*;
    /// assert_eq!(ObstacleVelocity::linear(Vec3::X).angular, Vec3::ZERO);
    /// ```
    pub const fn linear(linear: Vec3) -> Self {
        Self {
            linear,
            angular: Vec3::ZERO,
        }
    }
}

/// What the plugin keeps of an [`Obstacle`] between fixed steps (added
/// with it): where the last step left it, from which the next step sweeps
/// it to where it is now, and the problem last reported about it.
///
/// ```
/// use bevy::prelude::*;
/// use bevy_euler_physics::prelude::*;
///
/// // A door put back in its frame at once: it pushes nothing on the way.
/// fn reset_door(mut doors: Query<(&mut Transform, &mut ObstacleState), With<Obstacle>>) {
///     for (mut transform, mut state) in &mut doors {
///         transform.rotation = Quat::IDENTITY;
///         state.teleport();
///     }
/// }
/// # App::new().add_systems(FixedUpdate, reset_door.in_set(PhysicsSystems::Prepare));
/// ```
#[derive(Component, Reflect, Debug, Clone, Copy, PartialEq, Default)]
#[reflect(Component, Debug, PartialEq, Clone, Default)]
pub struct ObstacleState {
    /// Where the last step left it: translation and rotation (none before
    /// its first step).
    pub(crate) previous: Option<(Vec3, Quat)>,
    /// Whether the next step places it at once, without sweeping it.
    pub(crate) teleport: bool,
    /// The problem last reported, until it is fixed.
    pub(crate) reported: Option<ObstacleProblem>,
}

impl ObstacleState {
    /// Makes the next step place the obstacle where it is without moving
    /// it there: it pushes nothing on its way, and its surface is at rest
    /// for that step (unless an [`ObstacleVelocity`] says otherwise).
    ///
    /// ```
    /// # use bevy_euler_physics::prelude::*;
    /// let mut state = ObstacleState::default();
    /// state.teleport();
    /// assert!(state.teleports());
    /// ```
    pub fn teleport(&mut self) {
        self.teleport = true;
    }

    /// Whether the next step places the obstacle without sweeping it.
    ///
    /// ```
    /// # use bevy_euler_physics::prelude::*;
    /// assert!(!ObstacleState::default().teleports());
    /// ```
    pub fn teleports(&self) -> bool {
        self.teleport
    }

    /// Where the last step left the obstacle (translation, rotation).
    ///
    /// ```
    /// # use bevy_euler_physics::prelude::*;
    /// assert_eq!(ObstacleState::default().previous(), None);
    /// ```
    pub fn previous(&self) -> Option<(Vec3, Quat)> {
        self.previous
    }

    /// Moves where it was left by `−offset` (an origin shift).
    pub(crate) fn shift(&mut self, offset: Vec3) {
        if let Some((c, _)) = &mut self.previous {
            *c -= offset;
        }
    }
}

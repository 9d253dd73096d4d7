//! avian2d's colliders as shapes that
//! [bevy_euler_physics] bodies touch, both ways: the avian3d bridge's
//! twin for 2D games (the same source, `bridges/avian/bridge.rs`, as avian
//! builds its 2D and 3D crates from one).
//!
//! With [`AvianBridgePlugin`] beside avian's `PhysicsPlugins` and
//! [`EulerPhysicsPlugin`](bevy_euler_physics::EulerPhysicsPlugin), every
//! avian [`Collider`] (static, kinematic or dynamic, any shape: compounds,
//! convex polygons, trimeshes and height fields included) is met by this
//! plugin's round bodies (those with a [`Radius`](bevy_euler_physics::Radius))
//! in the XY plane, and what the bodies push a dynamic rigid body with goes
//! back to it as an impulse.
//!
//! - **Shapes.** Each collider gets its shape's parts ([`ColliderPart`]),
//!   each an [`Obstacle`] (one part at the collider's own origin, as a
//!   ball's or a box's, on the collider entity itself; the parts of any
//!   other shape on child entities of it), a column
//!   along `Z` as this plugin's 2D shapes are: a ball as a [`Circle`], a
//!   cuboid as a [`Rectangle`], a capsule as a [`Capsule2d`], a convex
//!   polygon, a regular polygon or a triangle as a [`ConvexPolygon`], an
//!   ellipse as a polygon of 32 corners on it, a trimesh as one
//!   polygon per triangle, a height field as one column per segment
//!   reaching a metre below it, voxels as one square per filled voxel, a
//!   half-space as a half-space, a compound as one part per shape of it.
//!   A rounded cuboid is its inner box grown by its border (its corners
//!   stay sharp); a rounded polygon or triangle is its inner shape, without
//!   the border. A segment or a polyline has no inside to keep a body out
//!   of, and a custom shape of the game's cannot be read: each is reported
//!   once and left out.
//! - **Filters, materials, both ways, ties**: as the avian3d bridge (its
//!   docs say how): [`CollisionLayers`] become [`CollisionGroups`],
//!   [`Friction`] and [`Restitution`] a [`ContactMaterial`]; each part of a
//!   dynamic rigid body carries its mass, inertia about `Z` and centre of
//!   mass ([`ObstacleMass`]); what it gained ([`ObstacleReaction`]) is
//!   applied to it before avian's step; a body with a [`TiedTo`] naming a
//!   rigid body is held at that point of it. A reaction's parts out of the
//!   plane (an impulse along `Z`, a moment about `X` or `Y`) are dropped:
//!   avian2d's bodies have none.
//!
//! # The coupling, step by step
//!
//! As with the avian3d bridge: at each fixed step, this plugin's step
//! (`FixedUpdate`) meets the colliders where avian's last step left them,
//! moving at avian's velocity ([`ObstacleVelocity`], with what gravity adds
//! over avian's substeps), and avian's step (`FixedPostUpdate`) starts from
//! the impulses of this plugin's step. The rigid body's pose is one step
//! behind the bodies within a step.
//!
//! [`Obstacle`]: bevy_euler_physics::Obstacle
//! [`TiedTo`]: bevy_euler_physics::TiedTo
//!
//! # Example
//!
//! ```
//! use avian2d::prelude::{Collider, PhysicsPlugins, RigidBody};
//! use bevy::prelude::*;
//! use bevy_euler_physics::prelude::*;
//! use bevy_euler_physics_avian2d::AvianBridgePlugin;
//!
//! let mut app = App::new();
//! app.add_plugins((
//!     MinimalPlugins,
//!     TransformPlugin,
//!     bevy::asset::AssetPlugin::default(),
//!     bevy::mesh::MeshPlugin,
//!     PhysicsPlugins::default(),
//!     EulerPhysicsPlugin,
//!     AvianBridgePlugin,
//! ))
//! // Each frame runs one fixed step of both engines (a game's frames run
//! // as many as its time calls for).
//! .insert_resource(bevy::time::TimeUpdateStrategy::FixedTimesteps(1));
//! app.finish();
//! app.cleanup();
//! // avian's floor, and one of this plugin's balls dropped on it.
//! app.world_mut().spawn((RigidBody::Static, Collider::rectangle(4.0, 0.2)));
//! let ball = app
//!     .world_mut()
//!     .spawn((Body::new(1.0).with_position(Vec3::new(0.0, 1.0, 0.0)), Radius(0.1)))
//!     .id();
//! for _ in 0..120 {
//!     app.update();
//! }
//! let y = app.world().get::<Body>(ball).unwrap().position.y;
//! assert!((y - 0.2).abs() < 0.002, "rests on the floor at its radius: {y}");
//! ```

#[cfg(doc)]
use avian2d::prelude::{Collider, CollisionLayers, Friction, Restitution};
#[cfg(doc)]
use bevy::math::primitives::{Capsule2d, Circle, ConvexPolygon, Rectangle};
#[cfg(doc)]
use bevy_euler_physics::prelude::{
    CollisionGroups, ContactMaterial, ObstacleMass, ObstacleReaction, ObstacleVelocity,
};

/// avian2d, for the bridge's file shared with avian3d's bridge.
use avian2d as avian;
/// parry2d as avian2d builds it, for the 2D shapes' file.
use avian2d::parry;

#[path = "../../avian/bridge.rs"]
mod bridge;
#[path = "../../kit.rs"]
mod kit;
#[path = "../../shapes2d.rs"]
mod shapes;

/// ```
/// use bevy::prelude::*;
/// use bevy_euler_physics_avian2d::AvianBridgePlugin;
///
/// App::new().add_plugins(AvianBridgePlugin);
/// ```
pub use bridge::AvianBridgePlugin;
/// ```
/// use bevy::prelude::*;
/// use bevy_euler_physics_avian2d::ColliderPart;
///
/// // How hard the bodies pushed each collider in the last step.
/// fn pushes(parts: Query<(&ColliderPart, &bevy_euler_physics::ObstacleReaction)>) {
///     for (part, reaction) in &parts {
///         info!("{:?} got {}", part.collider, reaction.impulse.truncate());
///     }
/// }
/// # App::new().add_systems(FixedPostUpdate, pushes);
/// ```
pub use kit::ColliderPart;
/// ```
/// use avian2d::prelude::Collider;
/// use bevy::prelude::*;
/// use bevy_euler_physics_avian2d::{Unsupported, parts_of};
///
/// let segment = Collider::segment(Vec2::ZERO, Vec2::X);
/// assert_eq!(parts_of(segment.shape()).unwrap_err(), Unsupported::NoInside("segment"));
/// ```
pub use shapes::Unsupported;
/// ```
/// use avian2d::prelude::Collider;
/// use bevy::prelude::*;
/// use bevy_euler_physics::prelude::Obstacle;
/// use bevy_euler_physics_avian2d::parts_of;
///
/// let parts = parts_of(Collider::circle(0.5).shape()).unwrap();
/// assert_eq!(parts, vec![(Transform::IDENTITY, Obstacle::from(Circle::new(0.5)))]);
/// ```
pub use shapes::parts_of;

/// The 2D side of the shared bridge: avian2d's vectors, rotations and
/// inertia as this plugin's, in the XY plane.
mod dim {
    use avian2d::prelude::{
        AngularVelocity, ComputedAngularInertia, ComputedCenterOfMass, Position, Rotation,
        WriteRigidBodyForces,
    };
    use bevy::prelude::*;

    /// A vector of avian's as this plugin's, in the XY plane.
    pub fn vec3(v: Vec2) -> Vec3 {
        v.extend(0.0)
    }

    /// The angular velocity, about `Z`.
    pub fn angular(w: &AngularVelocity) -> Vec3 {
        Vec3::Z * w.0
    }

    /// The world inverse inertia: about `Z` alone.
    pub fn inverse_inertia(inertia: &ComputedAngularInertia, _rotation: &Rotation) -> Mat3 {
        Mat3::from_diagonal(Vec3::new(0.0, 0.0, inertia.inverse()))
    }

    /// The centre of mass in the world.
    pub fn center_of_mass(
        position: &Position,
        rotation: &Rotation,
        center: &ComputedCenterOfMass,
    ) -> Vec3 {
        (position.0 + *rotation * center.0).extend(0.0)
    }

    /// Applies an impulse at a point, and an angular impulse, their parts
    /// in the plane.
    pub fn push(forces: &mut impl WriteRigidBodyForces, impulse: Vec3, at: Vec3, angular: Vec3) {
        forces.apply_linear_impulse_at_point(impulse.truncate(), at.truncate());
        forces.apply_angular_impulse(angular.z);
    }
}

//! avian3d's colliders as shapes that
//! [bevy_euler_physics] bodies touch, both ways.
//!
//! With [`AvianBridgePlugin`] beside avian's `PhysicsPlugins` and
//! [`EulerPhysicsPlugin`](bevy_euler_physics::EulerPhysicsPlugin), every
//! avian [`Collider`] (static, kinematic or dynamic, any shape: compounds,
//! convex hulls, trimeshes and height fields included) is met by this
//! plugin's round bodies (those with a [`Radius`](bevy_euler_physics::Radius))
//! as an [`Obstacle`], and what the bodies push a dynamic rigid body with
//! goes back to it as an impulse: a crate dropped on a net sinks into it
//! and the net holds it.
//!
//! - **Shapes.** Each collider gets its shape's parts ([`ColliderPart`]),
//!   each an [`Obstacle`] (one part at the collider's own origin, as a
//!   ball's or a box's, on the collider entity itself; the parts of any
//!   other shape on child entities of it): a ball, a
//!   cuboid, a capsule or a cylinder as the same primitive; a half-space
//!   as a half-space; a cone, a convex hull, a trimesh, a height field or
//!   voxels as a [`TriangleMesh`] (a hull's and a cone's one-sided); a
//!   compound as one part per shape of it; a rounded shape as its inner
//!   shape grown by its border (a box's corners then stay sharp). A
//!   segment, a polyline, a lone triangle or a custom shape has no inside
//!   to keep a body out of and is reported once and left out.
//! - **Filters and materials.** avian's [`CollisionLayers`] become the
//!   parts' [`CollisionGroups`] (the same rule: each one's memberships
//!   meet the other's filters), its [`Friction`] (the dynamic coefficient)
//!   and [`Restitution`] their [`ContactMaterial`]. A [`Sensor`] collider
//!   is left out.
//! - **Both ways.** Each part of a dynamic rigid body carries the body's
//!   mass, inertia and centre of mass ([`ObstacleMass`]), so that it gives
//!   way to the bodies within this plugin's step as a free body would
//!   (a light ball struck by a heavy one leaves faster than a heavy one);
//!   what it gained there ([`ObstacleReaction`]) is applied to the rigid
//!   body as an impulse before avian's step, which wakes it.
//! - **Ties.** A body with a [`TiedTo`] naming a rigid body is held at
//!   that point of it (a rope's end tied to a crate): the rope lifts the
//!   crate and the crate pulls the rope, through the same sharing.
//!
//! # The coupling, step by step
//!
//! Each fixed step runs this plugin's step first (`FixedUpdate`), then
//! avian's (`FixedPostUpdate`, avian's default schedule). At fixed step
//! `n`:
//!
//! 1. before this plugin's step, each part of a dynamic rigid body gets
//!    the body's mass, world inverse inertia and centre of mass as avian's
//!    step `n − 1` left them, and each part of a moving one (and the body
//!    itself, for ties) the velocity its frame will move at in avian's
//!    step `n` ([`ObstacleVelocity`]: avian's velocities, plus what
//!    gravity adds to a dynamic body's motion over avian's substeps);
//! 2. the bodies step against the colliders where avian's step `n − 1`
//!    left them, their surfaces moving at that velocity; a dynamic rigid
//!    body's velocity changes through its contacts and ties, one after
//!    another, as the step's rounds go, but its pose does not;
//! 3. before avian's step `n`, each rigid body gets what its parts and
//!    ties gained as an impulse (at each part's position, or its own, with
//!    the moment); avian's step `n` moves it from there, with its own
//!    contacts and gravity.
//!
//! The momentum the bodies and a rigid body exchange is conserved exactly
//! (one gets the opposite of the other's impulse). The rigid body moves by
//! what it gained one step later: its pose is one step behind the bodies
//! within a step. At rest the two engines agree to within the lag: a box
//! hanging from a rope of springs hangs 2.4 % of the rope's stretch lower
//! than the springs' closed form (`tests/bridge.rs`). avian's
//! `LockedAxes` are not seen within this plugin's step (a body locked
//! from turning turns there; avian then drops the turn).
//!
//! [`Obstacle`]: bevy_euler_physics::Obstacle
//! [`TiedTo`]: bevy_euler_physics::TiedTo
//! [`TriangleMesh`]: bevy_euler_physics::TriangleMesh
//!
//! # Example
//!
//! ```
//! use avian3d::prelude::{Collider, PhysicsPlugins, RigidBody};
//! use bevy::prelude::*;
//! use bevy_euler_physics::prelude::*;
//! use bevy_euler_physics_avian3d::AvianBridgePlugin;
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
//! // (What `App::run` does first: avian sets some resources up then.)
//! app.finish();
//! app.cleanup();
//! // avian's floor, and one of this plugin's balls dropped on it.
//! app.world_mut().spawn((RigidBody::Static, Collider::cuboid(4.0, 0.2, 4.0)));
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
use avian3d::prelude::{Collider, CollisionLayers, Friction, Restitution, Sensor};
#[cfg(doc)]
use bevy_euler_physics::prelude::{
    CollisionGroups, ContactMaterial, ObstacleMass, ObstacleReaction, ObstacleVelocity,
};

/// avian3d, for the bridge's file shared with avian2d's bridge.
use avian3d as avian;
/// parry3d as avian3d builds it, for the shapes' file shared with the
/// rapier bridge.
use avian3d::parry;

#[path = "../../avian/bridge.rs"]
mod bridge;
#[path = "../../kit.rs"]
mod kit;
#[path = "../../shapes3d.rs"]
mod shapes;

/// ```
/// use bevy::prelude::*;
/// use bevy_euler_physics_avian3d::AvianBridgePlugin;
///
/// App::new().add_plugins(AvianBridgePlugin);
/// ```
pub use bridge::AvianBridgePlugin;
/// ```
/// use bevy::prelude::*;
/// use bevy_euler_physics_avian3d::ColliderPart;
///
/// // How hard the bodies pushed each collider in the last step.
/// fn pushes(parts: Query<(&ColliderPart, &bevy_euler_physics::ObstacleReaction)>) {
///     for (part, reaction) in &parts {
///         info!("{:?} got {}", part.collider, reaction.impulse);
///     }
/// }
/// # App::new().add_systems(FixedPostUpdate, pushes);
/// ```
pub use kit::ColliderPart;
/// ```
/// use avian3d::prelude::Collider;
/// use bevy::prelude::*;
/// use bevy_euler_physics_avian3d::{Unsupported, parts_of};
///
/// let segment = Collider::segment(Vec3::ZERO, Vec3::X);
/// assert_eq!(parts_of(segment.shape()).unwrap_err(), Unsupported::NoInside("segment"));
/// ```
pub use shapes::Unsupported;
/// ```
/// use avian3d::prelude::Collider;
/// use bevy::prelude::*;
/// use bevy_euler_physics::prelude::Obstacle;
/// use bevy_euler_physics_avian3d::parts_of;
///
/// let parts = parts_of(Collider::sphere(0.5).shape()).unwrap();
/// assert_eq!(parts, vec![(Transform::IDENTITY, Obstacle::from(Sphere::new(0.5)))]);
/// ```
pub use shapes::parts_of;

/// The 3D side of the shared bridge: avian3d's vectors, rotations and
/// inertia as this plugin's.
mod dim {
    use avian3d::prelude::{
        AngularVelocity, ComputedAngularInertia, ComputedCenterOfMass, Position, Rotation,
        WriteRigidBodyForces,
    };
    use bevy::prelude::*;

    /// A vector of avian's as this plugin's.
    pub fn vec3(v: Vec3) -> Vec3 {
        v
    }

    /// The angular velocity, about an axis in the world.
    pub fn angular(w: &AngularVelocity) -> Vec3 {
        w.0
    }

    /// The world inverse inertia of a body so turned: `R I⁻¹ Rᵀ`, in
    /// glam's aligned matrices.
    pub fn inverse_inertia(inertia: &ComputedAngularInertia, rotation: &Rotation) -> Mat3 {
        let turn = Mat3A::from_quat(rotation.0);
        let local = Mat3A::from(inertia.inverse().to_mat3());
        Mat3::from(turn * local * turn.transpose())
    }

    /// The centre of mass in the world.
    pub fn center_of_mass(
        position: &Position,
        rotation: &Rotation,
        center: &ComputedCenterOfMass,
    ) -> Vec3 {
        position.0 + rotation.0 * center.0
    }

    /// Applies an impulse at a point, and an angular impulse.
    pub fn push(forces: &mut impl WriteRigidBodyForces, impulse: Vec3, at: Vec3, angular: Vec3) {
        forces.apply_linear_impulse_at_point(impulse, at);
        forces.apply_angular_impulse(angular);
    }
}

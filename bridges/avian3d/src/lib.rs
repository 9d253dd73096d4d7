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
//! - **Shapes.** Each collider gets a child entity per part of its shape
//!   ([`ColliderPart`]), carrying the part as an [`Obstacle`]: a ball, a
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
//! ));
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
//!     app.world_mut().run_schedule(bevy::app::FixedMain);
//! }
//! let y = app.world().get::<Body>(ball).unwrap().position.y;
//! assert!((y - 0.2).abs() < 0.002, "rests on the floor at its radius: {y}");
//! ```

use avian3d::prelude::{
    AngularVelocity, Collider, ColliderOf, CollisionLayers, ComputedAngularInertia,
    ComputedCenterOfMass, ComputedMass, Forces, Friction, Gravity, GravityScale, LinearVelocity,
    Position, Restitution, RigidBody, Rotation, Sensor, SubstepCount, WriteRigidBodyForces,
};
use bevy::ecs::entity::EntityHashSet;
use bevy::prelude::*;
use bevy::transform::helper::TransformHelper;
use bevy_euler_physics::prelude::{
    Body, CollisionGroups, ContactMaterial, ObstacleMass, ObstacleReaction, ObstacleVelocity,
};

mod shapes;

pub use shapes::{Unsupported, parts_of};

/// Makes avian3d's colliders shapes that bevy_euler_physics bodies touch,
/// and gives avian's dynamic rigid bodies what the bodies push them with
/// (see the [crate docs](crate)). Add it with avian's `PhysicsPlugins` and
/// `EulerPhysicsPlugin`.
///
/// ```
/// use bevy::prelude::*;
/// use bevy_euler_physics_avian3d::AvianBridgePlugin;
///
/// App::new().add_plugins(AvianBridgePlugin);
/// ```
#[derive(Debug, Default, Clone, Copy)]
pub struct AvianBridgePlugin;

impl Plugin for AvianBridgePlugin {
    fn build(&self, app: &mut App) {
        app.register_type::<ColliderPart>()
            .add_systems(
                FixedUpdate,
                (
                    report_bodies_with_colliders,
                    mirror_colliders,
                    weigh_rigid_bodies,
                    move_rigid_bodies,
                )
                    .chain()
                    .in_set(bevy_euler_physics::PhysicsSystems::Prepare),
            )
            .add_systems(
                FixedPostUpdate,
                push_rigid_bodies.in_set(avian3d::schedule::PhysicsSystems::First),
            );
    }
}

/// A part of an avian [`Collider`]'s shape, as an
/// [`Obstacle`](bevy_euler_physics::Obstacle) on a child
/// entity of the collider (spawned by [`AvianBridgePlugin`], despawned
/// with the collider or when its shape, layers or material change). A
/// part of a dynamic rigid body also has the body's [`ObstacleMass`],
/// written before each step.
///
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
#[derive(Component, Reflect, Debug, Clone, Copy, PartialEq, Eq)]
#[reflect(Component, Debug, PartialEq, Clone)]
pub struct ColliderPart {
    /// The collider entity this part belongs to (its parent).
    pub collider: Entity,
}

/// The parts a collider has now (on the collider entity).
#[derive(Component, Debug, Default)]
struct MirroredParts(Vec<Entity>);

/// What [`mirror_colliders`] reads of a collider.
type ColliderItem = (
    Entity,
    Ref<'static, Collider>,
    Option<Ref<'static, CollisionLayers>>,
    Option<Ref<'static, Friction>>,
    Option<Ref<'static, Restitution>>,
    Option<&'static MirroredParts>,
);

/// Gives each new or changed collider its parts (the old ones
/// despawned), and despawns the parts of colliders that are gone. A
/// collider that is also a [`Body`], a [`Sensor`], or whose shape has no
/// part this plugin's bodies can touch has none.
fn mirror_colliders(
    mut commands: Commands,
    colliders: Query<ColliderItem, (Without<Sensor>, Without<Body>)>,
    parts: Query<(Entity, &ColliderPart)>,
    mut reported: Local<EntityHashSet>,
) {
    for (entity, collider, layers, friction, restitution, mirrored) in &colliders {
        let changed = collider.is_changed()
            || layers.as_ref().is_some_and(|l| l.is_changed())
            || friction.as_ref().is_some_and(|f| f.is_changed())
            || restitution.as_ref().is_some_and(|r| r.is_changed());
        if mirrored.is_some() && !changed {
            continue;
        }
        for &part in mirrored.map_or(&[][..], |m| &m.0) {
            commands.entity(part).try_despawn();
        }
        let found = match parts_of(collider.shape()) {
            Ok(found) => {
                reported.remove(&entity);
                found
            }
            Err(problem) => {
                if reported.insert(entity) {
                    warn!("collider {entity}: {problem}; bodies do not touch it");
                }
                Vec::new()
            }
        };
        let groups = layers.map_or(CollisionGroups::ALL, |l| {
            CollisionGroups::new(l.memberships.0, l.filters.0)
        });
        let material = ContactMaterial::new(
            restitution.map_or(0.0, |r| r.coefficient),
            friction.map_or(0.5, |f| f.dynamic_coefficient),
        );
        let spawned = found
            .into_iter()
            .map(|(pose, obstacle)| {
                commands
                    .spawn((
                        obstacle,
                        pose,
                        groups,
                        material,
                        ObstacleReaction::default(),
                        ColliderPart { collider: entity },
                        ChildOf(entity),
                    ))
                    .id()
            })
            .collect();
        commands.entity(entity).insert(MirroredParts(spawned));
    }
    // Parts whose collider lost its `Collider` (or became a sensor or a
    // body).
    for (part, of) in &parts {
        if !colliders.contains(of.collider) {
            commands.entity(part).try_despawn();
            if let Ok(mut collider) = commands.get_entity(of.collider) {
                collider.try_remove::<MirroredParts>();
            }
        }
    }
}

/// What [`weigh_rigid_bodies`] reads of a rigid body.
type RigidItem = (
    &'static RigidBody,
    &'static Position,
    &'static Rotation,
    &'static ComputedMass,
    &'static ComputedAngularInertia,
    &'static ComputedCenterOfMass,
);

/// Before this plugin's step: each part of a dynamic rigid body gets the
/// body's mass, inverse inertia and centre of mass in the world as avian's
/// last step left them ([`ObstacleMass`]), so that it gives way to the
/// bodies within the step; a part of any other collider has none.
fn weigh_rigid_bodies(
    mut commands: Commands,
    mut parts: Query<(Entity, &ColliderPart, Option<&mut ObstacleMass>)>,
    colliders: Query<&ColliderOf>,
    bodies: Query<RigidItem>,
) {
    for (entity, part, mass) in &mut parts {
        let found = colliders
            .get(part.collider)
            .ok()
            .and_then(|of| Some(of.body).zip(bodies.get(of.body).ok()));
        let weighed = match found {
            Some((body, (RigidBody::Dynamic, position, rotation, m, inertia, center))) => {
                Some(ObstacleMass {
                    body,
                    inverse_mass: m.inverse(),
                    inverse_inertia: inertia.rotated(rotation.0).inverse().to_mat3(),
                    center_of_mass: position.0 + rotation.0 * center.0,
                })
            }
            _ => None,
        };
        match (mass, weighed) {
            (Some(mut mass), Some(weighed)) => {
                mass.set_if_neq(weighed);
            }
            (None, Some(weighed)) => {
                commands.entity(entity).insert(weighed);
            }
            (Some(_), None) => {
                commands.entity(entity).remove::<ObstacleMass>();
            }
            (None, None) => {}
        }
    }
}

/// What [`move_rigid_bodies`] reads of a rigid body.
type MovingItem = (
    Entity,
    &'static RigidBody,
    &'static LinearVelocity,
    &'static AngularVelocity,
    &'static Position,
    &'static Rotation,
    &'static ComputedCenterOfMass,
    Option<&'static GravityScale>,
    Has<ObstacleReaction>,
);

/// Before this plugin's step: how each moving rigid body's frame moves
/// over the coming step, as an [`ObstacleVelocity`] on the rigid body (for
/// the bodies tied to it, [`TiedTo`](bevy_euler_physics::TiedTo)) and on
/// each of its parts (instead of their sweep between steps): avian's
/// velocities, a dynamic body's with what the step's gravity will add to
/// its motion over the step (avian's substeps move it by
/// `(n + 1) / 2n · g·h²` over a step of `n` substeps), so that what holds
/// it up within this plugin's step meets it where it goes. A dynamic body also gets an
/// [`ObstacleReaction`] to hold what its ties pull it with.
fn move_rigid_bodies(
    mut commands: Commands,
    bodies: Query<MovingItem>,
    (parts, colliders): (Query<(Entity, &ColliderPart)>, Query<&ColliderOf>),
    (gravity, substeps): (Option<Res<Gravity>>, Option<Res<SubstepCount>>),
    time: Res<Time<Fixed>>,
    helper: TransformHelper,
    mut given: Query<&mut ObstacleVelocity>,
) {
    let n = substeps.map_or(1, |n| n.0.max(1)) as f32;
    let fall = gravity.map_or(Vec3::ZERO, |g| g.0)
        * time.timestep().as_secs_f32()
        * ((n + 1.0) / (2.0 * n));
    let moving = |body: Entity| {
        let (_, kind, linear, angular, position, rotation, center, scale, _) =
            bodies.get(body).ok()?;
        if kind.is_static() {
            return None;
        }
        let falls = if kind.is_dynamic() {
            fall * scale.map_or(1.0, |s| s.0)
        } else {
            Vec3::ZERO
        };
        // avian's velocity is its centre of mass's.
        let center = position.0 + rotation.0 * center.0;
        Some((linear.0 + falls, angular.0, center))
    };
    let velocity_at =
        |(linear, angular, center): (Vec3, Vec3, Vec3), origin: Vec3| ObstacleVelocity {
            linear: linear + angular.cross(origin - center),
            angular,
        };
    // Written in place where it is there already (no command each step);
    // `None` takes it off.
    let mut set = |entity: Entity, velocity: Option<ObstacleVelocity>| match (
        given.get_mut(entity),
        velocity,
    ) {
        (Ok(mut now), Some(velocity)) => {
            now.set_if_neq(velocity);
        }
        (Err(_), Some(velocity)) => {
            commands.entity(entity).insert(velocity);
        }
        (Ok(_), None) => {
            commands.entity(entity).remove::<ObstacleVelocity>();
        }
        (Err(_), None) => {}
    };
    for (entity, .., position, _, _, _, _) in &bodies {
        if let Some(moves) = moving(entity) {
            set(entity, Some(velocity_at(moves, position.0)));
        }
    }
    for (part, of) in &parts {
        let body = colliders.get(of.collider).ok().map(|c| c.body);
        let at = helper.compute_global_transform(part).ok();
        let velocity = body
            .and_then(&moving)
            .zip(at)
            .map(|(moves, at)| velocity_at(moves, at.translation()));
        set(part, velocity);
    }
    for (entity, kind, .., reacts) in &bodies {
        if kind.is_dynamic() && !reacts {
            commands.entity(entity).insert(ObstacleReaction::default());
        }
    }
}

/// Entities that are both a [`Body`] and an avian collider or rigid body.
type BodyAndAvian = (With<Body>, Or<(With<Collider>, With<RigidBody>)>);

/// Reports, once each, entities that are both a [`Body`] and an avian
/// collider or rigid body: they are left to avian alone (their collider
/// gets no part).
fn report_bodies_with_colliders(
    both: Query<Entity, BodyAndAvian>,
    mut reported: Local<EntityHashSet>,
) {
    for entity in &both {
        if reported.insert(entity) {
            warn!(
                "entity {entity} is both a bevy_euler_physics Body and an avian collider or \
                 rigid body; bodies do not touch its collider (make the Body an entity of its \
                 own, tied to the rigid body)"
            );
        }
    }
    reported.retain(|&entity| both.contains(entity));
}

/// Before avian's step: each part's reaction, applied to its collider's
/// dynamic rigid body as an impulse at the part's position plus its
/// moment, and what the ties pulled a dynamic rigid body with (its own
/// [`ObstacleReaction`]), at its position (waking the body).
fn push_rigid_bodies(
    reactions: Query<(Entity, Option<&ColliderPart>, &ObstacleReaction)>,
    colliders: Query<&ColliderOf>,
    mut bodies: Query<(&RigidBody, Forces)>,
    helper: TransformHelper,
) {
    for (entity, part, reaction) in &reactions {
        if reaction.impulse == Vec3::ZERO && reaction.angular_impulse == Vec3::ZERO {
            continue;
        }
        let body = match part {
            Some(part) => match colliders.get(part.collider) {
                Ok(of) => of.body,
                Err(_) => continue,
            },
            None => entity,
        };
        let Ok((RigidBody::Dynamic, mut forces)) = bodies.get_mut(body) else {
            continue;
        };
        let Ok(at) = helper.compute_global_transform(entity) else {
            continue;
        };
        forces.apply_linear_impulse_at_point(reaction.impulse, at.translation());
        forces.apply_angular_impulse(reaction.angular_impulse);
    }
}

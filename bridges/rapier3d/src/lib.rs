//! bevy_rapier3d's colliders as shapes that
//! [bevy_euler_physics] bodies touch, both ways.
//!
//! With [`RapierBridgePlugin`] beside rapier's `RapierPhysicsPlugin` and
//! [`EulerPhysicsPlugin`](bevy_euler_physics::EulerPhysicsPlugin), every
//! rapier [`Collider`] (fixed, kinematic or dynamic, any shape: compounds,
//! convex hulls, trimeshes and height fields included) is met by this
//! plugin's round bodies (those with a [`Radius`](bevy_euler_physics::Radius))
//! as an [`Obstacle`], and what the bodies push a dynamic rigid body with
//! goes back to it as an impulse: a crate dropped on a net sinks into it
//! and the net holds it.
//!
//! - **Shapes.** Each collider gets its shape's parts ([`ColliderPart`]),
//!   each an [`Obstacle`] (one part at the collider's own origin, as a
//!   ball's or a box's, on the collider entity itself; the parts of any
//!   other shape on child entities of it), as the
//!   avian3d bridge does (the same file reads both engines' parry shapes):
//!   a ball, a cuboid, a capsule or a cylinder as the same primitive; a
//!   half-space as a half-space; a cone, a convex hull, a trimesh, a
//!   height field or voxels as a [`TriangleMesh`]; a compound as one part
//!   per shape of it; a rounded shape as its inner shape grown by its
//!   border. A segment, a polyline, a lone triangle or a custom shape has
//!   no inside to keep a body out of and is reported once and left out.
//!   The collider's scale is its entity's (rapier's default
//!   `ColliderScale`), which the parts inherit.
//! - **Filters and materials.** rapier's
//!   [`CollisionGroups`](bevy_rapier3d::prelude::CollisionGroups) become
//!   the parts' [`CollisionGroups`] (the same rule: each one's memberships
//!   meet the other's filters), its [`Friction`] and [`Restitution`]
//!   coefficients their [`ContactMaterial`]. A [`Sensor`] collider is left
//!   out.
//! - **Both ways.** Each part of a dynamic rigid body carries the body's
//!   mass, world inverse inertia (rapier's, so its `LockedAxes` turns are
//!   kept) and centre of mass ([`ObstacleMass`]), so that it gives way to
//!   the bodies within this plugin's step as a free body would; what it
//!   gained there ([`ObstacleReaction`]) is added to the rigid body's
//!   [`ExternalImpulse`], which rapier applies (waking it) before its
//!   next step.
//! - **Ties.** A body with a [`TiedTo`] naming a rigid body is held at
//!   that point of it (a rope's end tied to a crate): the rope lifts the
//!   crate and the crate pulls the rope, through the same sharing.
//!
//! # Setting rapier up
//!
//! The coupling is per fixed step: run rapier in `FixedPostUpdate` with a
//! fixed timestep of `Time<Fixed>`'s length, so that each of this plugin's
//! steps is followed by one of rapier's of the same length:
//!
//! ```
//! use bevy::prelude::*;
//! use bevy_rapier3d::prelude::{NoUserData, RapierPhysicsPlugin, TimestepMode};
//!
//! let mut app = App::new();
//! app.add_plugins(RapierPhysicsPlugin::<NoUserData>::default().in_schedule(FixedPostUpdate))
//!     .insert_resource(TimestepMode::Fixed { dt: 1.0 / 64.0, substeps: 1 });
//! ```
//!
//! Elsewhere (rapier's default, `PostUpdate` with a variable timestep) the
//! impulses still reach rapier, summed over the frame's fixed steps, but
//! the two engines then step at different times and the coupling is
//! looser.
//!
//! # The coupling, step by step
//!
//! At fixed step `n`:
//!
//! 1. before this plugin's step (`FixedUpdate`, in
//!    [`PhysicsSystems::Prepare`](bevy_euler_physics::PhysicsSystems::Prepare)),
//!    each part of a dynamic rigid body gets the body's mass, world
//!    inverse inertia and centre of mass as rapier's step `n − 1` left
//!    them, and each part of a moving one (and the body itself, for ties)
//!    the velocity its frame will move at in rapier's step `n`
//!    ([`ObstacleVelocity`]: rapier's velocities, plus what gravity adds
//!    to a dynamic body's motion over rapier's substeps);
//! 2. the bodies step against the colliders where rapier's step `n − 1`
//!    left them, their surfaces moving at that velocity; a dynamic rigid
//!    body's velocity changes through its contacts and ties as the step's
//!    rounds go, but its pose does not;
//! 3. after this plugin's step (in
//!    [`PhysicsSystems::Finish`](bevy_euler_physics::PhysicsSystems::Finish)),
//!    what each rigid body's parts and ties gained is added to its
//!    [`ExternalImpulse`], about its centre of mass; rapier's step `n`
//!    (`FixedPostUpdate`) applies it and moves the body from there, with
//!    its own contacts and gravity.
//!
//! The momentum the bodies and a rigid body exchange is conserved (one
//! gets the opposite of the other's impulse). The rigid body moves by what
//! it gained one step later: its pose is one step behind the bodies
//! within a step, as with the avian3d bridge (`tests/rapier.rs` measures
//! what that costs a box hanging from a rope).
//!
//! [`Obstacle`]: bevy_euler_physics::Obstacle
//! [`TiedTo`]: bevy_euler_physics::TiedTo
//! [`TriangleMesh`]: bevy_euler_physics::TriangleMesh
//!
//! # Example
//!
//! ```
//! use bevy::prelude::*;
//! use bevy_euler_physics::prelude::*;
//! use bevy_euler_physics_rapier3d::RapierBridgePlugin;
//! use bevy_rapier3d::prelude::{Collider, NoUserData, RapierPhysicsPlugin, RigidBody, TimestepMode};
//!
//! let mut app = App::new();
//! app.add_plugins((
//!     MinimalPlugins,
//!     TransformPlugin,
//!     RapierPhysicsPlugin::<NoUserData>::default().in_schedule(FixedPostUpdate),
//!     EulerPhysicsPlugin,
//!     RapierBridgePlugin,
//! ))
//! .insert_resource(TimestepMode::Fixed { dt: 1.0 / 64.0, substeps: 1 })
//! // Each frame runs one fixed step of both engines (a game's frames run
//! // as many as its time calls for).
//! .insert_resource(bevy::time::TimeUpdateStrategy::FixedTimesteps(1));
//! app.finish();
//! app.cleanup();
//! // rapier's floor, and one of this plugin's balls dropped on it.
//! app.world_mut().spawn((RigidBody::Fixed, Collider::cuboid(2.0, 0.1, 2.0)));
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

use bevy::ecs::entity::{EntityHashMap, EntityHashSet};
use bevy::prelude::*;
use bevy_euler_physics::obstacles::ObstaclePoses;
use bevy_euler_physics::prelude::{
    Body, CollisionGroups, ContactMaterial, ObstacleMass, ObstacleReaction, ObstacleVelocity,
};
use bevy_rapier3d::prelude::{
    Collider, ExternalImpulse, Friction, RapierConfiguration, RapierContextEntityLink,
    RapierContextSimulation, RapierRigidBodyHandle, RapierRigidBodySet, Restitution, RigidBody,
    Sensor, TimestepMode,
};
use bevy_rapier3d::rapier::dynamics::RigidBody as RapierBody;

/// parry3d as bevy_rapier3d builds it, for the shapes' file shared with the
/// other parry3d bridge.
use bevy_rapier3d::parry;

#[path = "../../kit.rs"]
mod kit;
#[path = "../../shapes3d.rs"]
mod shapes;

use kit::MirroredParts;

/// ```
/// use bevy::prelude::*;
/// use bevy_euler_physics_rapier3d::ColliderPart;
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
/// use bevy::prelude::*;
/// use bevy_euler_physics_rapier3d::{Unsupported, parts_of};
/// use bevy_rapier3d::prelude::Collider;
///
/// let segment = Collider::segment(Vec3::ZERO, Vec3::X);
/// assert_eq!(parts_of(&segment.raw).unwrap_err(), Unsupported::NoInside("segment"));
/// ```
pub use shapes::Unsupported;
/// ```
/// use bevy::prelude::*;
/// use bevy_euler_physics::prelude::Obstacle;
/// use bevy_euler_physics_rapier3d::parts_of;
/// use bevy_rapier3d::prelude::Collider;
///
/// let parts = parts_of(&Collider::ball(0.5).raw).unwrap();
/// assert_eq!(parts, vec![(Transform::IDENTITY, Obstacle::from(Sphere::new(0.5)))]);
/// ```
pub use shapes::parts_of;

/// Makes bevy_rapier3d's colliders shapes that bevy_euler_physics bodies
/// touch, and gives rapier's dynamic rigid bodies what the bodies push them
/// with (see the [crate docs](crate), which say how to set rapier up). Add
/// it with rapier's `RapierPhysicsPlugin` and `EulerPhysicsPlugin`.
///
/// ```
/// use bevy::prelude::*;
/// use bevy_euler_physics_rapier3d::RapierBridgePlugin;
///
/// App::new().add_plugins(RapierBridgePlugin);
/// ```
#[derive(Debug, Default, Clone, Copy)]
pub struct RapierBridgePlugin;

impl Plugin for RapierBridgePlugin {
    fn build(&self, app: &mut App) {
        app.register_type::<ColliderPart>();
        kit::add_bridge_systems(
            app,
            bevy_euler_physics::PhysicsSystems::Prepare,
            (
                report_bodies_with_colliders,
                mirror_colliders,
                weigh_rigid_bodies,
                move_rigid_bodies,
            )
                .chain(),
        );
        kit::add_bridge_systems(
            app,
            bevy_euler_physics::PhysicsSystems::Finish,
            push_rigid_bodies,
        );
    }
}

/// What [`mirror_colliders`] reads of a collider.
type ColliderItem = (
    Entity,
    Ref<'static, Collider>,
    Option<Ref<'static, bevy_rapier3d::prelude::CollisionGroups>>,
    Option<Ref<'static, Friction>>,
    Option<Ref<'static, Restitution>>,
    Option<&'static MirroredParts>,
    Has<Transform>,
);

/// Gives each new or changed collider its parts (the old ones
/// despawned; a collider without a `Transform`, which rapier puts at the
/// origin, gets one there), and despawns the parts of colliders that are
/// gone. A collider that is also a [`Body`], a [`Sensor`], or whose shape
/// has no part this plugin's bodies can touch has none.
fn mirror_colliders(
    mut commands: Commands,
    colliders: Query<ColliderItem, (Without<Sensor>, Without<Body>)>,
    parts: Query<(Entity, &ColliderPart)>,
    mut reported: Local<EntityHashSet>,
) {
    for (entity, collider, groups, friction, restitution, mirrored, placed) in &colliders {
        let changed = collider.is_changed()
            || groups.as_ref().is_some_and(|g| g.is_changed())
            || friction.as_ref().is_some_and(|f| f.is_changed())
            || restitution.as_ref().is_some_and(|r| r.is_changed());
        if mirrored.is_some() && !changed {
            continue;
        }
        // rapier scales the collider's shape by its entity's scale (and
        // marks it changed then); the parts, on the entity or children of
        // it, take that scale from it, so they are made of the unscaled
        // shape.
        let mut unscaled = Collider::clone(&collider);
        unscaled.set_scale(Vec3::ONE, 0);
        if !placed {
            // rapier puts a collider without a transform at the origin;
            // its parts, on its entity or children of it, need one to be
            // placed.
            commands.entity(entity).insert(Transform::IDENTITY);
        }
        let mirror = kit::Mirror {
            parts: parts_of(&unscaled.raw),
            groups: groups.map_or(CollisionGroups::ALL, |g| {
                CollisionGroups::new(g.memberships.bits(), g.filters.bits())
            }),
            material: ContactMaterial::new(
                restitution.map_or(0.0, |r| r.coefficient),
                friction.map_or(0.5, |f| f.coefficient),
            ),
        };
        kit::mirror_collider(&mut commands, entity, mirrored, mirror, &mut reported);
    }
    kit::drop_orphans(&mut commands, &parts, |c| colliders.contains(c));
}

/// rapier's rigid bodies as this bridge reads them: each entity's rigid
/// body in rapier's set (which holds its velocity, mass and centre of
/// mass as rapier's last step left them), and the rigid body a collider
/// belongs to (its own entity's, or the nearest ancestor's, as rapier
/// attaches it).
#[derive(bevy::ecs::system::SystemParam)]
struct RigidBodies<'w, 's> {
    kinds: Query<'w, 's, (Entity, &'static RigidBody, &'static RapierContextEntityLink)>,
    handles: Query<'w, 's, &'static RapierRigidBodyHandle>,
    sets: Query<'w, 's, &'static RapierRigidBodySet>,
    contexts: Query<
        'w,
        's,
        (
            &'static RapierConfiguration,
            &'static RapierContextSimulation,
        ),
    >,
    parents: Query<'w, 's, &'static ChildOf>,
}

impl RigidBodies<'_, '_> {
    /// The rigid body `collider` is attached to: its own entity or the
    /// nearest ancestor with a [`RigidBody`].
    fn of_collider(&self, collider: Entity) -> Option<Entity> {
        let mut at = collider;
        loop {
            if self.kinds.contains(at) {
                return Some(at);
            }
            at = self.parents.get(at).ok()?.parent();
        }
    }

    /// `entity`'s kind and its body in rapier's set (none before rapier
    /// has made it).
    fn get(&self, entity: Entity) -> Option<(RigidBody, &RapierBody)> {
        let (_, kind, link) = self.kinds.get(entity).ok()?;
        let handle = self.handles.get(entity).ok()?;
        let body = self.sets.get(link.0).ok()?.bodies.get(handle.0)?;
        Some((*kind, body))
    }

    /// What gravity adds to the velocity of the dynamic `body` (`rb` in
    /// rapier's set) over a step of `h` seconds, as its motion over the
    /// step sees it: rapier's `n` substeps (its solver iterations times
    /// the timestep's `substeps`) move it by `(n + 1) / 2n · g·h²`.
    fn fall(&self, body: Entity, rb: &RapierBody, h: f32, substeps: usize) -> Vec3 {
        let Ok((_, _, link)) = self.kinds.get(body) else {
            return Vec3::ZERO;
        };
        self.contexts
            .get(link.0)
            .map_or(Vec3::ZERO, |(config, simulation)| {
                let iterations = simulation.integration_parameters.num_solver_iterations;
                let n = (iterations.max(1) * substeps) as u32;
                kit::fall(config.gravity * rb.gravity_scale(), h, n)
            })
    }
}

/// Before this plugin's step: each part of a dynamic rigid body gets the
/// body's mass, inverse inertia and centre of mass in the world as rapier's
/// last step left them ([`ObstacleMass`]), so that it gives way to the
/// bodies within the step; a part of any other collider has none.
fn weigh_rigid_bodies(
    mut commands: Commands,
    mut parts: Query<(Entity, &ColliderPart, Option<&mut ObstacleMass>)>,
    rigid: RigidBodies,
) {
    for (entity, part, mass) in &mut parts {
        let found = rigid
            .of_collider(part.collider)
            .and_then(|body| Some(body).zip(rigid.get(body)));
        let weighed = match found {
            Some((body, (RigidBody::Dynamic, rb))) => {
                let props = rb.mass_properties();
                Some(ObstacleMass {
                    body,
                    // (The largest of rapier's per-axis inverse masses:
                    // its translation locks are not kept.)
                    inverse_mass: props.effective_inv_mass.max_element(),
                    inverse_inertia: props.effective_world_inv_inertia.mul_mat(Mat3::IDENTITY),
                    center_of_mass: props.world_com,
                })
            }
            _ => None,
        };
        kit::put(&mut commands, entity, mass, weighed);
    }
}

/// Before this plugin's step: how each moving rigid body's frame moves
/// over the coming step, as an [`ObstacleVelocity`] on the rigid body (for
/// the bodies tied to it, [`TiedTo`](bevy_euler_physics::TiedTo)) and on
/// each of its parts (instead of their sweep between steps): rapier's
/// velocities, a dynamic body's with what the step's gravity will add to
/// its motion over the step (rapier's `n` substeps, its solver iterations
/// times the timestep's substeps, move it by `(n + 1) / 2n · g·h²`), so
/// that what holds it up within this plugin's step meets it where it goes.
/// A fixed body and its parts have none (each part's velocity is taken
/// where the step places it, [`ObstaclePoses`]). A dynamic body also gets
/// an [`ObstacleReaction`] to hold what its ties pull it with.
fn move_rigid_bodies(
    mut commands: Commands,
    rigid: RigidBodies,
    parts: Query<(Entity, &ColliderPart)>,
    (mode, time): (Option<Res<TimestepMode>>, Res<Time<Fixed>>),
    reacting: Query<(), With<ObstacleReaction>>,
    poses: ObstaclePoses,
    mut given: Query<&mut ObstacleVelocity>,
) {
    let h = time.timestep().as_secs_f32();
    let substeps = match mode.as_deref() {
        Some(
            TimestepMode::Fixed { substeps, .. }
            | TimestepMode::Variable { substeps, .. }
            | TimestepMode::Interpolated { substeps, .. },
        ) => (*substeps).max(1),
        None => 1,
    };
    let moving = |body: Entity| {
        let (kind, rb) = rigid.get(body)?;
        if kind == RigidBody::Fixed {
            return None;
        }
        let falls = if kind == RigidBody::Dynamic {
            rigid.fall(body, rb, h, substeps)
        } else {
            Vec3::ZERO
        };
        // rapier's velocity is its centre of mass's; and the body's origin.
        let motion = (rb.linvel() + falls, rb.angvel(), rb.center_of_mass());
        Some((motion, rb.translation()))
    };
    // Written in place where it is there already (no command each step).
    let mut set = |entity: Entity, velocity: Option<ObstacleVelocity>| {
        kit::put(&mut commands, entity, given.get_mut(entity).ok(), velocity);
    };
    for (entity, ..) in &rigid.kinds {
        let moves = moving(entity);
        set(
            entity,
            moves.map(|(moves, origin)| kit::velocity_at(moves, origin)),
        );
    }
    for (part, of) in &parts {
        // (A rigid body that carries its collider's one part: the part's
        // velocity is the body's own, written above.)
        if rigid.kinds.contains(part) {
            continue;
        }
        // (Where this plugin's step places the part.)
        let at = poses.pose(part);
        let velocity = rigid
            .of_collider(of.collider)
            .and_then(&moving)
            .zip(at)
            .map(|((moves, _), at)| kit::velocity_at(moves, at.translation));
        set(part, velocity);
    }
    for (entity, kind, _) in &rigid.kinds {
        if *kind == RigidBody::Dynamic && !reacting.contains(entity) {
            commands.entity(entity).insert(ObstacleReaction::default());
        }
    }
}

/// Entities that are both a [`Body`] and a rapier collider or rigid body.
type BodyAndRapier = (With<Body>, Or<(With<Collider>, With<RigidBody>)>);

/// Reports, once each, entities that are both a [`Body`] and a rapier
/// collider or rigid body: they are left to rapier alone (their collider
/// gets no part).
fn report_bodies_with_colliders(
    both: Query<Entity, BodyAndRapier>,
    mut reported: Local<EntityHashSet>,
) {
    kit::report_bodies_with_colliders(&both, "a rapier", &mut reported);
}

/// After this plugin's step: each part's reaction, added to its collider's
/// dynamic rigid body's [`ExternalImpulse`] (at the part's position where
/// the step placed it, plus
/// its moment, about the body's centre of mass), and what the ties pulled
/// a dynamic rigid body with (its own [`ObstacleReaction`], at its
/// position). rapier applies it, waking the body, before its next step.
fn push_rigid_bodies(
    mut commands: Commands,
    // (The step marks each reaction it pushed changed: see
    // `ObstacleReaction`.)
    reactions: Query<(Entity, Option<&ColliderPart>, &ObstacleReaction), Changed<ObstacleReaction>>,
    rigid: RigidBodies,
    mut impulses: Query<&mut ExternalImpulse>,
    poses: ObstaclePoses,
    mut pushes: Local<EntityHashMap<ExternalImpulse>>,
) {
    for (entity, part, reaction) in &reactions {
        if reaction.impulse == Vec3::ZERO && reaction.angular_impulse == Vec3::ZERO {
            continue;
        }
        let body = match part {
            Some(part) => rigid.of_collider(part.collider),
            None => Some(entity),
        };
        let Some((body, (RigidBody::Dynamic, rb))) = body.and_then(|b| Some(b).zip(rigid.get(b)))
        else {
            continue;
        };
        let Some(at) = poses.pose(entity) else {
            continue;
        };
        let mut push =
            ExternalImpulse::at_point(reaction.impulse, at.translation, rb.center_of_mass());
        push.torque_impulse += reaction.angular_impulse;
        *pushes.entry(body).or_default() += push;
    }
    // Summed per rigid body first (its parts and ties), then added to
    // what rapier has not applied yet.
    for (body, push) in pushes.drain() {
        match impulses.get_mut(body) {
            Ok(mut impulse) => *impulse += push,
            Err(_) => {
                commands.entity(body).insert(push);
            }
        }
    }
}

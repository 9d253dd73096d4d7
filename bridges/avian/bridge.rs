//! The avian bridge itself, one file for avian2d and avian3d: included by
//! each bridge crate (`#[path]`), compiled against that crate's avian
//! (`crate::avian`) and its dimension's conversions (`crate::dim`), as
//! avian builds its own 2D and 3D crates from one source.

use bevy::ecs::entity::EntityHashSet;
use bevy::prelude::*;
use bevy::transform::helper::TransformHelper;
use bevy_euler_physics::prelude::{
    Body, CollisionGroups, ContactMaterial, ObstacleMass, ObstacleReaction, ObstacleVelocity,
};

use crate::avian::prelude::{
    AngularVelocity, Collider, ColliderOf, CollisionLayers, ComputedAngularInertia,
    ComputedCenterOfMass, ComputedMass, Forces, Friction, Gravity, GravityScale, LinearVelocity,
    Position, Restitution, RigidBody, Rotation, Sensor, SubstepCount,
};
use crate::dim;
use crate::kit::{self, ColliderPart, MirroredParts};

/// Makes avian's colliders shapes that bevy_euler_physics bodies touch,
/// and gives avian's dynamic rigid bodies what the bodies push them with
/// (see the [crate docs](crate)). Add it with avian's `PhysicsPlugins` and
/// `EulerPhysicsPlugin`.
#[derive(Debug, Default, Clone, Copy)]
pub struct AvianBridgePlugin;

impl Plugin for AvianBridgePlugin {
    fn build(&self, app: &mut App) {
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
        app.register_type::<ColliderPart>().add_systems(
            FixedPostUpdate,
            push_rigid_bodies.in_set(crate::avian::schedule::PhysicsSystems::First),
        );
    }
}

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
        let mirror = kit::Mirror {
            parts: crate::shapes::parts_of(collider.shape()),
            groups: layers.map_or(CollisionGroups::ALL, |l| {
                CollisionGroups::new(l.memberships.0, l.filters.0)
            }),
            material: ContactMaterial::new(
                restitution.map_or(0.0, |r| r.coefficient),
                friction.map_or(0.5, |f| f.dynamic_coefficient),
            ),
        };
        kit::mirror_collider(&mut commands, entity, mirrored, mirror, &mut reported);
    }
    kit::drop_orphans(&mut commands, &parts, |c| colliders.contains(c));
}

/// Whether avian has placed a rigid body: until its first step, a new
/// one's `Position` and `Rotation` are placeholders (not yet read from its
/// `Transform`), and it is left out of the coupling until then.
fn placed(position: &Position, rotation: &Rotation) -> bool {
    *position != Position::PLACEHOLDER && *rotation != Rotation::PLACEHOLDER
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
            Some((body, (RigidBody::Dynamic, position, rotation, m, inertia, center)))
                if placed(position, rotation) =>
            {
                Some(ObstacleMass {
                    body,
                    inverse_mass: m.inverse(),
                    inverse_inertia: dim::inverse_inertia(inertia, rotation),
                    center_of_mass: dim::center_of_mass(position, rotation, center),
                })
            }
            _ => None,
        };
        kit::put(&mut commands, entity, mass, weighed);
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
    let fall = kit::fall(
        gravity.map_or(Vec3::ZERO, |g| dim::vec3(g.0)),
        time.timestep().as_secs_f32(),
        substeps.map_or(1, |n| n.0),
    );
    let moving = |body: Entity| {
        let (_, kind, linear, angular, position, rotation, center, scale, _) =
            bodies.get(body).ok()?;
        if kind.is_static() || !placed(position, rotation) {
            return None;
        }
        let falls = if kind.is_dynamic() {
            fall * scale.map_or(1.0, |s| s.0)
        } else {
            Vec3::ZERO
        };
        // avian's velocity is its centre of mass's.
        let center = dim::center_of_mass(position, rotation, center);
        Some((dim::vec3(linear.0) + falls, dim::angular(angular), center))
    };
    // Written in place where it is there already (no command each step).
    let mut set = |entity: Entity, velocity: Option<ObstacleVelocity>| {
        kit::put(&mut commands, entity, given.get_mut(entity).ok(), velocity);
    };
    for (entity, .., position, _, _, _, _) in &bodies {
        if let Some(moves) = moving(entity) {
            set(entity, Some(kit::velocity_at(moves, dim::vec3(position.0))));
        }
    }
    for (part, of) in &parts {
        let body = colliders.get(of.collider).ok().map(|c| c.body);
        let at = helper.compute_global_transform(part).ok();
        let velocity = body
            .and_then(&moving)
            .zip(at)
            .map(|(moves, at)| kit::velocity_at(moves, at.translation()));
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
    kit::report_bodies_with_colliders(&both, "an avian", &mut reported);
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
        dim::push(
            &mut forces,
            reaction.impulse,
            at.translation(),
            reaction.angular_impulse,
        );
    }
}

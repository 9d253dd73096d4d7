//! The avian bridge itself, one file for avian2d and avian3d: included by
//! each bridge crate (`#[path]`), compiled against that crate's avian
//! (`crate::avian`) and its dimension's conversions (`crate::dim`), as
//! avian builds its own 2D and 3D crates from one source.

use bevy::ecs::entity::EntityHashSet;
use bevy::ecs::query::QueryData;
use bevy::prelude::*;
use bevy_euler_physics::obstacles::ObstaclePoses;
use bevy_euler_physics::prelude::{
    Body, CollisionGroups, ContactMaterial, ObstacleMass, ObstacleReaction, ObstacleVelocity,
};

use crate::avian::prelude::{
    AngularVelocity, Collider, ColliderOf, CollisionLayers, ComputedAngularInertia,
    ComputedCenterOfMass, ComputedMass, Forces, Friction, Gravity, GravityScale, LinearVelocity,
    Position, Restitution, RigidBody, RigidBodyColliders, Rotation, Sensor, SubstepCount,
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
                couple_rigid_bodies,
            )
                .chain(),
        );
        app.register_type::<ColliderPart>();
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

/// What [`couple_rigid_bodies`] reads of a rigid body.
type RigidItem = (
    &'static RigidBody,
    &'static LinearVelocity,
    &'static AngularVelocity,
    &'static Position,
    &'static Rotation,
    &'static ComputedMass,
    &'static ComputedAngularInertia,
    &'static ComputedCenterOfMass,
    Option<&'static GravityScale>,
);

/// What [`couple_rigid_bodies`] reads and writes of a rigid body (a
/// rigid body can carry its collider's one part itself).
type CoupledBody = (
    Entity,
    RigidItem,
    Has<ObstacleReaction>,
    Option<&'static RigidBodyColliders>,
    Option<&'static MirroredParts>,
    Option<&'static mut ObstacleMass>,
    Option<&'static mut ObstacleVelocity>,
);

/// What [`couple_rigid_bodies`] writes of a part (one of a collider that
/// is not itself a rigid body).
type CoupledPart = (
    Option<&'static mut ObstacleMass>,
    Option<&'static mut ObstacleVelocity>,
);

/// How a rigid body meets this plugin's bodies in the coming step.
struct Coupling {
    /// How its frame moves (see [`couple_rigid_bodies`]): the velocity of
    /// its centre of mass, its angular velocity and that centre; none for
    /// a static body.
    moves: Option<(Vec3, Vec3, Vec3)>,
    /// A dynamic body's mass, to give way to the bodies within the step.
    mass: Option<ObstacleMass>,
}

/// `body`'s [`Coupling`], with `fall` (what a step's gravity adds to a
/// dynamic body's motion). None until avian has placed it.
fn coupling(
    body: Entity,
    item: <RigidItem as QueryData>::Item<'_, '_>,
    fall: Vec3,
) -> Option<Coupling> {
    let (kind, linear, angular, position, rotation, mass, inertia, center, scale) = item;
    if !placed(position, rotation) {
        return None;
    }
    // avian's velocity is its centre of mass's.
    let center = dim::center_of_mass(position, rotation, center);
    let falls = match kind {
        RigidBody::Dynamic => fall * scale.map_or(1.0, |s| s.0),
        _ => Vec3::ZERO,
    };
    let moves =
        (!kind.is_static()).then(|| (dim::vec3(linear.0) + falls, dim::angular(angular), center));
    let mass = kind.is_dynamic().then(|| ObstacleMass {
        body,
        inverse_mass: mass.inverse(),
        inverse_inertia: dim::inverse_inertia(inertia, rotation),
        center_of_mass: center,
    });
    Some(Coupling { moves, mass })
}

/// Before this plugin's step, how each rigid body meets the bodies over
/// the coming step, as avian's last step left it:
///
/// - how its frame moves, as an [`ObstacleVelocity`] on each of its parts
///   (instead of their sweep between steps) and on a moving rigid body
///   itself (for the bodies tied to it,
///   [`TiedTo`](bevy_euler_physics::TiedTo)): avian's velocities, a
///   dynamic body's with what the step's gravity will add to its motion
///   over the step (avian's substeps move it by `(n + 1) / 2n · g·h²`
///   over a step of `n` substeps), so that what holds it up within this
///   plugin's step meets it where it goes;
/// - a dynamic body's mass, inverse inertia and centre of mass in the
///   world, as an [`ObstacleMass`] on each of its parts, so that they give
///   way to the bodies within the step; and an [`ObstacleReaction`] on the
///   body to hold what its ties pull it with.
///
/// A part of a static body or of a collider with none gets neither. Each
/// is written in place where it is there already (no command each step),
/// and each part's velocity is taken at the pose the step places it at
/// ([`ObstaclePoses`]).
fn couple_rigid_bodies(
    mut commands: Commands,
    mut bodies: Query<CoupledBody>,
    mut parts: Query<CoupledPart, (With<ColliderPart>, Without<RigidBody>)>,
    (mirrored, poses): (Query<&MirroredParts>, ObstaclePoses),
    (gravity, substeps): (Option<Res<Gravity>>, Option<Res<SubstepCount>>),
    time: Res<Time<Fixed>>,
    mut coupled: Local<[Vec<Entity>; 2]>,
) {
    let fall = kit::fall(
        gravity.map_or(Vec3::ZERO, |g| dim::vec3(g.0)),
        time.timestep().as_secs_f32(),
        substeps.map_or(1, |n| n.0),
    );
    // Body by body (their components read in the order they are stored),
    // each one's parts through its colliders.
    let [last, now] = &mut *coupled;
    now.clear();
    for (entity, item, reacts, colliders, own_parts, weighed, velocity) in &mut bodies {
        let (kind, position) = (item.0, dim::vec3(item.3.0));
        let coupled = coupling(entity, item, fall);
        let (moves, mass) = coupled.map_or((None, None), |c| (c.moves, c.mass));
        let own = moves.map(|m| kit::velocity_at(m, position));
        kit::put(&mut commands, entity, velocity, own);
        if kind.is_dynamic() && !reacts {
            commands.entity(entity).insert(ObstacleReaction::default());
        }
        // The body that carries its collider's one part: that part's mass
        // (its velocity is the body's own).
        if own_parts.is_some_and(|list| list.0.contains(&entity)) {
            kit::put(&mut commands, entity, weighed, mass);
        }
        if moves.is_none() && mass.is_none() {
            continue;
        }
        let lists = colliders.into_iter().flatten().filter_map(|collider| {
            if collider == entity {
                own_parts
            } else {
                mirrored.get(collider).ok()
            }
        });
        // (The body's own part was written above.)
        for &part in lists
            .flat_map(|list| &list.0)
            .filter(|&&part| part != entity)
        {
            let Ok((weighed, velocity)) = parts.get_mut(part) else {
                continue;
            };
            kit::put(&mut commands, part, weighed, mass);
            let at = moves.and_then(|_| poses.pose(part));
            let moved = moves
                .zip(at)
                .map(|(m, at)| kit::velocity_at(m, at.translation));
            kit::put(&mut commands, part, velocity, moved);
            now.push(part);
        }
    }
    // The parts coupled at the last step and not now (their body static,
    // gone, or not theirs any more): neither mass nor velocity. (The same
    // parts in the same order, as a world at rest has them: nothing to
    // look for.)
    if last != now {
        let mut found = now.clone();
        found.sort_unstable();
        for &part in last.iter() {
            if found.binary_search(&part).is_ok() {
                continue;
            }
            if let Ok((weighed, velocity)) = parts.get_mut(part) {
                kit::put(&mut commands, part, weighed, None);
                kit::put(&mut commands, part, velocity, None);
            }
        }
    }
    core::mem::swap(last, now);
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

/// After this plugin's step (in its `Finish` set), before avian's: each
/// part's reaction, applied to its collider's dynamic rigid body as an
/// impulse at the part's position (where the step placed it) plus its
/// moment, and what the ties pulled a dynamic rigid body with (its own
/// [`ObstacleReaction`]), at its position (waking the body).
fn push_rigid_bodies(
    // (The step marks each reaction it pushed changed: see
    // `ObstacleReaction`.)
    reactions: Query<(Entity, Option<&ColliderPart>, &ObstacleReaction), Changed<ObstacleReaction>>,
    colliders: Query<&ColliderOf>,
    mut bodies: Query<(&RigidBody, Forces)>,
    poses: ObstaclePoses,
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
        let Some(at) = poses.pose(entity) else {
            continue;
        };
        dim::push(
            &mut forces,
            reaction.impulse,
            at.translation,
            reaction.angular_impulse,
        );
    }
}

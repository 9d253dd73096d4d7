//! What every bridge does the same whatever its engine: one file, included
//! by each bridge crate (`#[path]`) as `crate::kit`. It knows this plugin
//! and Bevy, not the engines: each bridge reads its engine's colliders and
//! rigid bodies and hands the kit what it found.

use bevy::ecs::component::Mutable;
use bevy::ecs::entity::EntityHashSet;
use bevy::ecs::query::QueryFilter;
use bevy::prelude::*;
use bevy_euler_physics::PhysicsSystems;
use bevy_euler_physics::prelude::{
    CollisionGroups, ContactMaterial, Obstacle, ObstacleMass, ObstacleReaction, ObstacleState,
    ObstacleVelocity,
};

/// Why a collider's shape has no obstacle (see the example of
/// `parts_of`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unsupported {
    /// A shape with no inside to keep a body out of (a segment, a
    /// polyline, in 3D a lone triangle), of the kind named.
    NoInside(&'static str),
    /// A custom shape of the game's, which this bridge cannot read.
    Custom,
    /// A compound with no part bodies can touch.
    Empty,
}

impl core::fmt::Display for Unsupported {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self {
            Self::NoInside(kind) => write!(f, "a {kind} has no inside to keep a body out of"),
            Self::Custom => write!(f, "a custom shape cannot be read"),
            Self::Empty => write!(f, "a compound with no part bodies can touch"),
        }
    }
}

/// A part of a collider's shape, as an
/// [`Obstacle`](bevy_euler_physics::Obstacle) given by the bridge's
/// plugin and taken away with the collider or when its shape, layers or
/// material change. A shape of one part at the collider's own origin (a
/// ball, a box, a hull) has it on the collider entity itself, then
/// `collider` is that entity; the parts of any other shape (a compound, a
/// part placed off the origin) are child entities of the collider. A part
/// of a dynamic rigid body also has the body's
/// [`ObstacleMass`](bevy_euler_physics::ObstacleMass), written before each
/// step.
#[derive(Component, Reflect, Debug, Clone, Copy, PartialEq, Eq)]
#[reflect(Component, Debug, PartialEq, Clone)]
pub struct ColliderPart {
    /// The collider entity this part belongs to (itself, or its parent).
    pub collider: Entity,
}

/// The parts a collider has now (on the collider entity).
#[derive(Component, Debug, Default)]
pub struct MirroredParts(pub Vec<Entity>);

/// What a collider is met as: its shape's parts (or why it has none), its
/// groups and its material.
pub struct Mirror<P> {
    pub parts: Result<Vec<(Transform, Obstacle)>, P>,
    pub groups: CollisionGroups,
    pub material: ContactMaterial,
}

/// What a part carries besides its obstacle: taken off a collider that
/// carried its one part itself when it stops doing so. (A rigid body's
/// own velocity and reaction, for its ties, are written again before the
/// next step; a collider's that is no rigid body must not keep them, for
/// what is tied to it.)
type PartBundle = (
    Obstacle,
    ObstacleState,
    CollisionGroups,
    ContactMaterial,
    ObstacleMass,
    ObstacleVelocity,
    ObstacleReaction,
    ColliderPart,
);

/// Whether a collider with these parts carries its one part itself: a
/// single part at the collider's own origin (a ball, a box, a hull),
/// placed where the collider is, needs no entity of its own.
fn carried_by_collider<P>(parts: &Result<Vec<(Transform, Obstacle)>, P>) -> bool {
    matches!(parts, Ok(found) if found.len() == 1 && found[0].0 == Transform::IDENTITY)
}

/// Takes collider `entity`'s parts `old` away: each a child entity
/// despawned, or the collider's own part taken off it.
fn drop_parts(commands: &mut Commands, entity: Entity, old: &[Entity]) {
    for &part in old {
        if part == entity {
            if let Ok(mut collider) = commands.get_entity(entity) {
                collider.try_remove::<PartBundle>();
            }
        } else {
            commands.entity(part).try_despawn();
        }
    }
}

/// Gives the collider `entity` the parts of `mirror` in place of the parts
/// it had (`old`): each with its obstacle, pose, groups, material, an
/// [`ObstacleReaction`] and a [`ColliderPart`]. One part at the
/// collider's origin is carried by the collider entity itself; the parts
/// of any other shape are child entities. A shape with no part is warned
/// about once (`reported` remembers it until its shape has parts again).
pub fn mirror_collider<P: core::fmt::Display>(
    commands: &mut Commands,
    entity: Entity,
    old: Option<&MirroredParts>,
    mirror: Mirror<P>,
    reported: &mut EntityHashSet,
) {
    drop_parts(commands, entity, old.map_or(&[][..], |m| &m.0));
    let own = carried_by_collider(&mirror.parts);
    let found = match mirror.parts {
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
    let part = |obstacle| {
        (
            obstacle,
            mirror.groups,
            mirror.material,
            ObstacleReaction::default(),
            ColliderPart { collider: entity },
        )
    };
    let spawned = if own {
        let (_, obstacle) = found.into_iter().next().expect("one part");
        commands.entity(entity).insert(part(obstacle));
        vec![entity]
    } else {
        found
            .into_iter()
            .map(|(pose, obstacle)| commands.spawn((part(obstacle), pose, ChildOf(entity))).id())
            .collect()
    };
    commands.entity(entity).insert(MirroredParts(spawned));
}

/// Takes the parts away whose collider is no longer mirrored (it lost
/// its collider, or became a sensor or a body).
pub fn drop_orphans(
    commands: &mut Commands,
    parts: &Query<(Entity, &ColliderPart)>,
    mirrored: impl Fn(Entity) -> bool,
) {
    for (part, of) in parts {
        if !mirrored(of.collider) {
            drop_parts(commands, of.collider, &[part]);
            if let Ok(mut collider) = commands.get_entity(of.collider) {
                collider.try_remove::<MirroredParts>();
            }
        }
    }
}

/// Makes `entity`'s `C` what is `wanted`: written in place where it is
/// there already (`set_if_neq`: no command, no change unless it differs),
/// inserted where it is not, removed where nothing is wanted.
#[inline]
pub fn put<C: Component<Mutability = Mutable> + PartialEq>(
    commands: &mut Commands,
    entity: Entity,
    now: Option<Mut<C>>,
    wanted: Option<C>,
) {
    match (now, wanted) {
        (Some(mut now), Some(wanted)) => {
            now.set_if_neq(wanted);
        }
        (None, Some(wanted)) => {
            commands.entity(entity).insert(wanted);
        }
        (Some(_), None) => {
            commands.entity(entity).remove::<C>();
        }
        (None, None) => {}
    }
}

/// How a point at `origin` of a rigid body moves whose centre of mass
/// `center` moves at `linear` and turns at `angular`.
pub fn velocity_at(
    (linear, angular, center): (Vec3, Vec3, Vec3),
    origin: Vec3,
) -> ObstacleVelocity {
    ObstacleVelocity {
        linear: linear + angular.cross(origin - center),
        angular,
    }
}

/// What the step's gravity `g` adds to a dynamic body's motion over a
/// step of `h` seconds taken in `n` substeps, as a velocity over the
/// step: the substeps move it by `(n + 1) / 2n · g·h²`.
pub fn fall(g: Vec3, h: f32, n: u32) -> Vec3 {
    let n = n.max(1) as f32;
    g * h * ((n + 1.0) / (2.0 * n))
}

/// Warns, once each, about the entities in `both` (a [`Body`] that is
/// also one of `engine`'s colliders or rigid bodies): they are left to the
/// engine alone. `reported` forgets the ones no longer in `both`.
///
/// [`Body`]: bevy_euler_physics::Body
pub fn report_bodies_with_colliders<F: QueryFilter>(
    both: &Query<Entity, F>,
    engine: &str,
    reported: &mut EntityHashSet,
) {
    for entity in both {
        if reported.insert(entity) {
            warn!(
                "entity {entity} is both a bevy_euler_physics Body and {engine} collider or \
                 rigid body; bodies do not touch its collider (make the Body an entity of its \
                 own, tied to the rigid body)"
            );
        }
    }
    reported.retain(|&entity| both.contains(entity));
}

/// The bridge's own systems of one of this plugin's sets in
/// `FixedUpdate`: a schedule on the single-threaded executor, which one
/// exclusive system in that set runs.
///
/// Bevy's multi-threaded executor hands every system that is not
/// exclusive to a thread of its pool, and a fixed schedule with more than
/// one such system stays on it (see `PhysicsSettings::lean_fixed_schedules`):
/// the bridge's systems, added to `FixedUpdate` as they are, took this
/// plugin's whole step off the single-threaded executor, about 0.12 ms a
/// step in the `coupled` benchmark. They run one after another anyway.
#[derive(bevy::ecs::schedule::ScheduleLabel, Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct BridgeSchedule(pub PhysicsSystems);

/// Adds `systems` to the bridge's schedule of `set`, and the system that
/// runs it to `set` in `FixedUpdate` (once).
pub fn add_bridge_systems<M>(
    app: &mut App,
    set: PhysicsSystems,
    systems: impl IntoScheduleConfigs<bevy::ecs::system::ScheduleSystem, M>,
) {
    let label = BridgeSchedule(set);
    if app.get_schedule(label).is_none() {
        let mut schedule = Schedule::new(label);
        schedule.set_executor(bevy::ecs::schedule::SingleThreadedExecutor::new());
        app.add_schedule(schedule);
        let run = move |world: &mut World| world.run_schedule(label);
        app.add_systems(FixedUpdate, run.in_set(set));
    }
    app.add_systems(label, systems);
}

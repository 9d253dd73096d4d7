//! [`SubstepBodies`]: what a system of yours in
//! [`PhysicsSubstep`](crate::PhysicsSubstep) sees of the current pass.

use bevy::ecs::query::{IterQueryData, QueryData, QueryFilter, QueryItem, ROQueryItem};
use bevy::ecs::system::SystemParam;
use bevy::prelude::*;

use crate::data::body::Stepped;
use crate::data::requests::Island;
use crate::data::settings::PhysicsStep;

/// The bodies the current [`PhysicsSubstep`](crate::PhysicsSubstep) pass
/// moves, for your force and constraint systems, with the pass's step size.
///
/// Islands with different substep counts run in separate passes, and
/// sleeping islands run in none; this parameter yields exactly the dynamic
/// bodies of the islands in the current pass (a `Query<D, F>` narrowed to
/// them). Use [`dt`](Self::dt) as the step: it is `h / passes` for this
/// island.
///
/// # Example
///
/// A drag force and a floor constraint that are right under any substep
/// count:
///
/// ```
/// use bevy::prelude::*;
/// use bevy_euler_physics::prelude::*;
///
/// fn air_drag(mut bodies: SubstepBodies<(&Body, &mut AccumulatedForce)>) {
///     for (body, mut force) in bodies.iter_mut() {
///         force.0 -= 0.1 * body.velocity;
///     }
/// }
///
/// fn floor(mut bodies: SubstepBodies<&mut Body>) {
///     let dt = bodies.dt();
///     for mut body in bodies.iter_mut() {
///         // Where this pass's drift will take it.
///         if body.position.y + dt * body.velocity.y < 0.0 {
///             body.velocity.y = -body.position.y / dt;
///         }
///     }
/// }
///
/// let mut app = App::new();
/// app.add_plugins((MinimalPlugins, EulerPhysicsPlugin)).add_systems(
///     PhysicsSubstep,
///     (
///         air_drag.in_set(SubstepSystems::AccumulateForces),
///         floor.in_set(SubstepSystems::SolveConstraints),
///     ),
/// );
/// let body = app
///     .world_mut()
///     .spawn((Body::new(1.0).with_position(Vec3::Y * 0.01), Substeps(4)))
///     .id();
/// for _ in 0..10 {
///     app.update();
/// }
/// assert!(app.world().get::<Body>(body).unwrap().position.y >= 0.0);
/// ```
#[derive(SystemParam)]
pub struct SubstepBodies<'w, 's, D: QueryData + 'static, F: QueryFilter + 'static = ()> {
    step: Res<'w, PhysicsStep>,
    query: Query<'w, 's, (D, &'static Island), (F, Stepped)>,
}

impl<'w, 's, D: QueryData + 'static, F: QueryFilter + 'static> SubstepBodies<'w, 's, D, F> {
    /// The step size of this pass, in seconds.
    ///
    /// ```
    /// # use bevy::prelude::*;
    /// # use bevy_euler_physics::prelude::*;
    /// fn show(bodies: SubstepBodies<&Body>) {
    ///     debug!("pass step {}", bodies.dt());
    /// }
    /// # App::new().add_systems(PhysicsSubstep, show);
    /// ```
    pub fn dt(&self) -> f32 {
        self.step.dt
    }

    /// The current pass: its step size and its place in the fixed step.
    ///
    /// ```
    /// # use bevy::prelude::*;
    /// # use bevy_euler_physics::prelude::*;
    /// fn first_pass_only(bodies: SubstepBodies<&Body>) {
    ///     if bodies.step().is_first() { /* once per fixed step */ }
    /// }
    /// # App::new().add_systems(PhysicsSubstep, first_pass_only);
    /// ```
    pub fn step(&self) -> &PhysicsStep {
        &self.step
    }

    /// The pass's bodies, read-only.
    ///
    /// ```
    /// # use bevy::prelude::*;
    /// # use bevy_euler_physics::prelude::*;
    /// fn lowest(bodies: SubstepBodies<&Body>) {
    ///     let _y = bodies.iter().map(|b| b.position.y).fold(f32::INFINITY, f32::min);
    /// }
    /// # App::new().add_systems(PhysicsSubstep, lowest);
    /// ```
    pub fn iter(&self) -> impl Iterator<Item = ROQueryItem<'_, 's, D>> {
        let group = self.step.group;
        self.query
            .iter()
            .filter_map(move |(item, island)| (island.group == group).then_some(item))
    }

    /// The pass's bodies.
    ///
    /// ```
    /// # use bevy::prelude::*;
    /// # use bevy_euler_physics::prelude::*;
    /// fn lift(mut bodies: SubstepBodies<&mut AccumulatedForce>) {
    ///     for mut force in bodies.iter_mut() {
    ///         force.0.y += 1.0;
    ///     }
    /// }
    /// # App::new().add_systems(PhysicsSubstep, lift);
    /// ```
    pub fn iter_mut(&mut self) -> impl Iterator<Item = QueryItem<'_, 's, D>>
    where
        D: IterQueryData,
    {
        let group = self.step.group;
        self.query
            .iter_mut()
            .filter_map(move |(item, island)| (island.group == group).then_some(item))
    }

    /// Whether `entity` is moved by this pass.
    ///
    /// ```
    /// # use bevy::prelude::*;
    /// # use bevy_euler_physics::prelude::*;
    /// fn check(bodies: SubstepBodies<&Body>, all: Query<Entity, With<Body>>) {
    ///     let _in_pass = all.iter().filter(|&e| bodies.contains(e)).count();
    /// }
    /// # App::new().add_systems(PhysicsSubstep, check);
    /// ```
    pub fn contains(&self, entity: Entity) -> bool {
        self.query
            .get(entity)
            .is_ok_and(|(_, island)| island.group == self.step.group)
    }

    /// `entity`'s item, if this pass moves it.
    ///
    /// ```
    /// # use bevy::prelude::*;
    /// # use bevy_euler_physics::prelude::*;
    /// #[derive(Resource)]
    /// struct Player(Entity);
    ///
    /// fn push_player(player: Res<Player>, mut bodies: SubstepBodies<&mut AccumulatedForce>) {
    ///     if let Some(mut force) = bodies.get_mut(player.0) {
    ///         force.0.x += 10.0;
    ///     }
    /// }
    /// # App::new().add_systems(PhysicsSubstep, push_player);
    /// ```
    pub fn get_mut(&mut self, entity: Entity) -> Option<QueryItem<'_, 's, D>> {
        let group = self.step.group;
        match self.query.get_mut(entity) {
            Ok((item, island)) if island.group == group => Some(item),
            _ => None,
        }
    }
}

//! Bodies enabled again: how the step notices that a body the last rebuild
//! did not see (disabled, `SolverState::unseen`) is back.
//!
//! A disabled entity comes back when a disabling component of it is
//! removed (Bevy's `Disabled`, or one of yours registered with
//! `World::register_disabling_component`). An observer of the removal of
//! any such component asks for a rebuild when the entity is one of the
//! listed bodies, so that a step costs nothing per listed body: looking
//! each up at the start of every step cost about 1.5 ns a body (a pool of
//! 10 000 disabled bodies quadrupled the fixed cost of a step,
//! `benches/fixed_cost.rs`, `one_pooled`).
//!
//! The observer follows Bevy's `DefaultQueryFilters`: at the start of a
//! step in which the disabling components are not those it observes (the
//! first step, or after one was registered), or after your code despawned
//! it (a sweep of every entity, say), it is spawned again, and that step
//! looks the listed bodies up once, for any enabled before.

use bevy::ecs::component::ComponentId;
use bevy::ecs::entity::Entities;
use bevy::ecs::entity_disabling::DefaultQueryFilters;
use bevy::ecs::lifecycle::Remove;
use bevy::prelude::*;

use crate::data::requests::SolverRequests;
use crate::solver::SolverState;

/// The disabling components observed, and their observer's entity (see
/// the [module](self)).
#[derive(Debug, Default)]
pub(crate) struct Observed {
    ids: Vec<ComponentId>,
    observer: Option<Entity>,
}

/// Keeps one observer of the removal of every disabling component in
/// `filters`: spawns it again when that set changed or your code
/// despawned it, and then returns true (the caller looks the listed
/// bodies up itself, this once: they may have been enabled before).
pub(crate) fn observe(
    filters: Option<&DefaultQueryFilters>,
    observed: &mut Observed,
    entities: &Entities,
    commands: &mut Commands,
) -> bool {
    let ids = || {
        filters
            .into_iter()
            .flat_map(DefaultQueryFilters::disabling_ids)
    };
    let alive = observed.observer.is_some_and(|e| entities.contains(e));
    if ids().eq(observed.ids.iter().copied()) && (alive || observed.ids.is_empty()) {
        return false;
    }
    if let Some(old) = observed.observer.take()
        && let Ok(mut old) = commands.get_entity(old)
    {
        old.try_despawn();
    }
    observed.ids = ids().collect();
    if !observed.ids.is_empty() {
        let observer = commands.spawn((
            Observer::new(enabled_again).with_components(observed.ids.clone()),
            Name::new("bevy_euler_physics: bodies enabled again"),
        ));
        observed.observer = Some(observer.id());
    }
    true
}

/// Asks for a rebuild when a disabling component leaves a body the last
/// rebuild did not see. (While the solver's state is out of the world,
/// which no structural change meets, it asks either way.)
fn enabled_again(
    remove: On<Remove>,
    solver: Option<Res<SolverState>>,
    requests: Option<ResMut<SolverRequests>>,
) {
    let listed = solver.is_none_or(|solver| solver.unseen.binary_search(&remove.entity).is_ok());
    if listed && let Some(mut requests) = requests {
        requests.dirty = true;
    }
}

//! Bodies enabled again: how the step notices that a body the last rebuild
//! did not see (disabled, `SolverState::unseen`) is back.
//!
//! A disabled entity comes back when a disabling component of it is
//! removed (Bevy's `Disabled`, or one of yours registered with
//! `World::register_disabling_component`). An observer of the removal of
//! each such component asks for a rebuild when the entity is one of the
//! listed bodies, so that a step costs nothing per listed body: looking
//! each up at the start of every step cost about 1.5 ns a body (a pool of
//! 10 000 disabled bodies quadrupled the fixed cost of a step,
//! `benches/fixed_cost.rs`, `one_pooled`).
//!
//! The observers follow Bevy's `DefaultQueryFilters`: at the start of a
//! step, a disabling component not yet observed gets its observer, and
//! that step looks the listed bodies up once, for any enabled before. So
//! does the step after your code despawned an observer (a sweep of every
//! entity, say): all are observed again.

use bevy::ecs::component::ComponentId;
use bevy::ecs::entity::Entities;
use bevy::ecs::entity_disabling::DefaultQueryFilters;
use bevy::ecs::lifecycle::Remove;
use bevy::prelude::*;

use crate::data::requests::SolverRequests;
use crate::solver::SolverState;

/// The disabling components observed so far, and the observers' entities
/// (see the [module](self)).
#[derive(Debug, Default)]
pub(crate) struct Observed {
    ids: Vec<ComponentId>,
    observers: Vec<Entity>,
}

/// Observes the removal of each disabling component in `filters` not yet
/// in `observed` (of all of them, if an observer is gone); true if it
/// found any (the caller then looks the listed bodies up itself, this
/// once: they may have been enabled before).
pub(crate) fn observe_new(
    filters: Option<&DefaultQueryFilters>,
    observed: &mut Observed,
    entities: &Entities,
    commands: &mut Commands,
) -> bool {
    if !observed.observers.iter().all(|&e| entities.contains(e)) {
        for &observer in &observed.observers {
            if let Ok(mut observer) = commands.get_entity(observer) {
                observer.try_despawn();
            }
        }
        *observed = Observed::default();
    }
    let new: Vec<ComponentId> = filters
        .into_iter()
        .flat_map(DefaultQueryFilters::disabling_ids)
        .filter(|id| !observed.ids.contains(id))
        .collect();
    if new.is_empty() {
        return false;
    }
    observed.ids.extend_from_slice(&new);
    let observer = commands.spawn((
        Observer::new(enabled_again).with_components(new),
        Name::new("bevy_euler_physics: bodies enabled again"),
    ));
    observed.observers.push(observer.id());
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

//! The forces pair contacts hold from one step to the next (the warm start
//! across steps; see [`ContactForces`]).
//!
//! Each pass adds its pair contacts' impulses to the step's sums, and the
//! group's last pass turns them into mean forces over the step in
//! `SolverState::holding` (in slots; see `Pass::hold`); [`keep_forces`],
//! at the end of the
//! step, hands them to the [`ContactForces`] resource with the layout's
//! table of the slots' entities (made once per layout). [`recall_forces`],
//! at the start of the next step, once the slots are final, lays them out
//! by slot for the step's pair contacts to start from (see
//! [`kept`](crate::kernels::kept)): straight from the resource while it
//! holds the current layout's table (the very `Arc`), and otherwise (a
//! rebuild since, or a snapshot restore or a rollback, which rebuild and
//! map or copy the table) by entity, in the new slots. Either way a pair starts from the same forces, so a
//! restored run goes on with the bits of the run it came from.

use std::sync::Arc;

use bevy::ecs::entity::EntityHashMap;
use bevy::prelude::*;

use crate::data::contacts::ContactForces;
use crate::solver::SolverState;

/// Start of the fixed step, after
/// [`find_pairs_again`](super::contacts::find_pairs_again): the forces
/// the pairs held over the last step, laid out by this step's
/// slots (see the [module docs](self)).
pub(crate) fn recall_forces(mut solver: ResMut<SolverState>, forces: Res<ContactForces>) {
    let solver = &mut *solver;
    let slots = solver.pos.len();
    if forces.is_empty() {
        solver.kept.clear();
        return;
    }
    // Written by the solver in this layout: the same table.
    let table = slot_entities(solver);
    if Arc::ptr_eq(&forces.slots, &table) {
        solver.kept.lay_out(slots, &forces.pairs);
    } else {
        let slot_of: EntityHashMap<u32> = table
            .iter()
            .enumerate()
            .filter(|(_, entity)| **entity != Entity::PLACEHOLDER)
            .map(|(slot, &entity)| (entity, slot as u32))
            .collect();
        let mut pairs = core::mem::take(&mut solver.holding);
        forces.in_slots(|entity| slot_of.get(&entity).copied(), &mut pairs);
        solver.kept.lay_out(slots, &pairs);
        solver.holding = pairs;
    }
    solver.holding.clear();
}

/// End of the fixed step, after the scatter: this step's held forces into
/// [`ContactForces`], with the layout's table of the slots' entities.
pub(crate) fn keep_forces(mut solver: ResMut<SolverState>, mut forces: ResMut<ContactForces>) {
    let solver = &mut *solver;
    if solver.holding.is_empty() && forces.is_empty() {
        return;
    }
    let table = slot_entities(solver);
    let forces = &mut *forces;
    core::mem::swap(&mut forces.pairs, &mut solver.holding);
    solver.holding.clear();
    forces.slots = table;
}

/// Each slot's entity in the current layout (`Entity::PLACEHOLDER` for a
/// slot no body holds), made once per layout.
fn slot_entities(solver: &mut SolverState) -> Arc<Vec<Entity>> {
    let (made, table) = &solver.slot_entities;
    if *made == solver.layouts && table.len() == solver.pos.len() {
        return table.clone();
    }
    let mut table = vec![Entity::PLACEHOLDER; solver.pos.len()];
    let fixed = solver.fixed_slots.start;
    for group in &solver.groups {
        let dynamic = group.slots.len();
        for (i, &entity) in group.entities.iter().enumerate() {
            // Group 0's entities close with the fixed ones.
            let slot = if i < dynamic {
                group.slots.start + i
            } else {
                fixed + i - dynamic
            };
            if let Some(at) = table.get_mut(slot) {
                *at = entity;
            }
        }
    }
    let table = Arc::new(table);
    solver.slot_entities = (solver.layouts, table.clone());
    table
}

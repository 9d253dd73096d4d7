//! The rebuild's layout stages: slots, rows, and writing the index back to
//! the bodies.

use bevy::ecs::world::DeferredWorld;
use bevy::prelude::*;

use super::{Decided, Islands, Layout, Rebuild, Scene};
use crate::data::body::Body;
use crate::data::islands::Sleeping;
use crate::data::requests::{AnchorAsleep, BodyIndex, Island, forget_slot};
use crate::kernels::constraints::{AngleRow, RodRow, RoundRow};
use crate::kernels::parts::Span;
use crate::kernels::springs::SpringRow;
use crate::solver::report::Reporter;
use crate::solver::sleep::rest_anchor;
use crate::solver::{Group, state_is_valid};

/// Stage 6: one group per pass count among awake islands (fewest passes
/// first), slots by group, island and body, then the fixed bodies in group
/// 0 (a fixed body that only sleeping islands hang from is rested instead:
/// left out of the passes until moving it wakes them).
pub(super) fn slots(
    p: &mut Rebuild,
    scene: &Scene,
    islands: &Islands,
    decided: &mut Decided,
) -> Layout {
    let n = scene.nodes.len();
    let mut counts: Vec<(u32, bool)> = (0..decided.states.len())
        .filter(|&i| !decided.states[i].sleeping)
        .map(|i| (decided.passes[i], decided.implicit[i]))
        .collect();
    counts.sort_unstable();
    counts.dedup();
    if counts.is_empty() && scene.nodes.iter().any(|node| !node.dynamic) {
        counts.push((1, false));
    }
    let mut groups: Vec<Group> = counts
        .iter()
        .map(|&(passes, implicit)| Group {
            passes,
            implicit,
            ..default()
        })
        .collect();
    let mut slot_of = vec![u32::MAX; n];
    let mut group_of = vec![u32::MAX; n];
    let mut next = 0usize;
    for (g, group) in groups.iter_mut().enumerate() {
        let start = next;
        for (island, state) in decided.states.iter_mut().enumerate() {
            if state.sleeping
                || decided.passes[island] != group.passes
                || decided.implicit[island] != group.implicit
            {
                continue;
            }
            let first = next;
            for &i in &islands.members[islands.builds[island].members.clone()] {
                slot_of[i as usize] = next as u32;
                group_of[i as usize] = g as u32;
                group.entities.push(scene.nodes[i as usize].entity);
                next += 1;
            }
            state.slots = first..next;
            group.may_sleep |= p.sleep.enabled && state.can_sleep;
        }
        group.slots = start..next;
    }
    let fixed_start = next;
    let resting = resting_anchors(p, scene, islands, decided);
    for (i, node) in scene.nodes.iter().enumerate() {
        clear_stale_markers(&mut p.reporter, node.entity, node.dynamic, node);
        if node.dynamic {
            continue;
        }
        if resting[i] && !node.anchor_asleep {
            rest_anchor(p.reporter.commands(), node.entity, p.ticks.this_run());
        } else if !resting[i] && node.anchor_asleep {
            p.reporter
                .commands()
                .entity(node.entity)
                .try_remove::<AnchorAsleep>();
        }
        if !resting[i]
            && let Some(group) = groups.first_mut()
        {
            slot_of[i] = next as u32;
            group_of[i] = 0;
            group.entities.push(node.entity);
            next += 1;
        }
    }
    Layout {
        groups,
        slot_of,
        group_of,
        fixed_start,
        slots: next,
    }
}

/// Per node: whether it is a fixed body that only sleeping islands hang
/// from. Also records, for the wake scan, the fixed bodies that hold a
/// sleeping island.
fn resting_anchors(
    p: &mut Rebuild,
    scene: &Scene,
    islands: &Islands,
    decided: &Decided,
) -> Vec<bool> {
    let n = scene.nodes.len();
    let mut holds_awake = vec![false; n];
    let mut has_join = vec![false; n];
    p.solver.holding_sleepers.clear();
    for (a, b) in scene.joined_pairs() {
        let awake = !decided.states[islands.of_join(scene, a, b) as usize].sleeping;
        for end in [a as usize, b as usize] {
            has_join[end] = true;
            holds_awake[end] |= awake;
            if !awake && !scene.nodes[end].dynamic {
                p.solver.holding_sleepers.insert(scene.nodes[end].entity);
            }
        }
    }
    (0..n)
        .map(|i| !scene.nodes[i].dynamic && has_join[i] && !holds_awake[i])
        .collect()
}

/// Markers of the other kind, left by a body that switched between fixed
/// and dynamic: a dynamic body is never a resting anchor, a fixed one never
/// asleep (it joins no island).
fn clear_stale_markers(reporter: &mut Reporter, entity: Entity, dynamic: bool, node: &super::Node) {
    if dynamic && node.anchor_asleep {
        reporter
            .commands()
            .entity(entity)
            .try_remove::<AnchorAsleep>();
    }
    if !dynamic && (node.sleeping.is_some() || node.asks_sleep) {
        reporter.commands().entity(entity).try_remove::<Sleeping>();
    }
}

/// Stage 7: the rows of awake islands. Springs by group, then island (in
/// slot order), then entity order, so each body's springs keep their
/// relative order and its force sums do not depend on the layout; each
/// group's islands as spans of slots and rows, for splitting passes over
/// threads. Rods and round bodies by group.
pub(super) fn rows(
    p: &mut Rebuild,
    scene: &Scene,
    islands: &Islands,
    decided: &Decided,
    layout: &mut Layout,
) {
    let solver = &mut *p.solver;
    let (slot_of, group_of) = (&layout.slot_of, &layout.group_of);
    let mut rows_by_group = vec![Vec::new(); layout.groups.len()];
    for link in &scene.links {
        let island = islands.of_join(scene, link.a, link.b) as usize;
        if decided.states[island].sleeping {
            continue;
        }
        let g = group_of[scene.dynamic_end(link.a, link.b) as usize];
        let (a, b) = (slot_of[link.a as usize], slot_of[link.b as usize]);
        rows_by_group[g as usize].push((
            decided.states[island].slots.start,
            SpringRow { a, b, ..link.row },
        ));
    }
    solver.springs.clear();
    for (group, mut rows) in layout.groups.iter_mut().zip(rows_by_group) {
        rows.sort_by_key(|&(first_slot, _)| first_slot);
        let start = solver.springs.len();
        let mut at = start;
        for state in decided
            .states
            .iter()
            .filter(|state| !state.slots.is_empty() && group.slots.contains(&state.slots.start))
        {
            let end = at
                + rows[at - start..]
                    .iter()
                    .take_while(|(first_slot, _)| *first_slot == state.slots.start)
                    .count();
            group.islands.push(Span {
                slots: state.slots.clone(),
                rows: at..end,
            });
            at = end;
        }
        solver.springs.extend(rows.into_iter().map(|(_, row)| row));
        group.rows = start..solver.springs.len();
    }
    let groups = layout.groups.len();
    let mut rods_by_group = vec![Vec::new(); groups];
    for rod in &scene.rods {
        let end = scene.dynamic_end(rod.a, rod.b) as usize;
        let g = group_of[end];
        if g != u32::MAX && !decided.states[islands.island_of[end] as usize].sleeping {
            rods_by_group[g as usize].push(RodRow {
                a: slot_of[rod.a as usize],
                b: slot_of[rod.b as usize],
                min: rod.min,
                max: rod.max,
            });
        }
    }
    let mut angles_by_group = vec![Vec::new(); groups];
    for limit in &scene.angles {
        let Some(end) = [limit.a, limit.p, limit.b]
            .into_iter()
            .find(|&i| scene.nodes[i as usize].dynamic)
        else {
            continue;
        };
        let g = group_of[end as usize];
        let slots = [limit.a, limit.p, limit.b].map(|i| slot_of[i as usize]);
        if g != u32::MAX
            && !decided.states[islands.island_of[end as usize] as usize].sleeping
            && !slots.contains(&u32::MAX)
        {
            angles_by_group[g as usize].push(AngleRow {
                a: slots[0],
                p: slots[1],
                b: slots[2],
                min: limit.min,
                max: limit.max,
                axis: limit.axis,
            });
        }
    }
    solver.angles.clear();
    for (group, angles) in layout.groups.iter_mut().zip(angles_by_group) {
        let start = solver.angles.len();
        solver.angles.extend(angles);
        group.angles = start..solver.angles.len();
    }
    let mut rounds_by_group = vec![Vec::new(); groups];
    for (i, node) in scene.nodes.iter().enumerate() {
        if let Some(radius) = node.radius
            && node.dynamic
            && group_of[i] != u32::MAX
        {
            rounds_by_group[group_of[i] as usize].push(RoundRow {
                slot: slot_of[i],
                radius,
                material: node.material,
                groups: [node.groups.memberships, node.groups.filters],
            });
        }
    }
    solver.rods.clear();
    solver.rounds.clear();
    let by_group = layout
        .groups
        .iter_mut()
        .zip(rods_by_group)
        .zip(rounds_by_group);
    for ((group, rods), rounds) in by_group {
        let start = solver.rods.len();
        solver.rods.extend(rods);
        group.rods = start..solver.rods.len();
        let start = solver.rounds.len();
        solver.rounds.extend(rounds);
        group.rounds = start..solver.rounds.len();
    }
    solver.largest_radius = solver
        .rounds
        .iter()
        .map(|round| round.radius)
        .fold(0.0, f32::max);
}

/// Stage 8: each body's index, island and resting time (written only where
/// they changed), and its state into its slot; then the solver takes the
/// new layout.
pub(super) fn write_back(
    p: &mut Rebuild,
    scene: &Scene,
    islands: &Islands,
    decided: Decided,
    layout: Layout,
) {
    let solver = &mut *p.solver;
    let slots = layout.slots;
    solver.pos.clear();
    solver.pos.resize(slots, Vec3A::ZERO);
    solver.vel.clear();
    solver.vel.resize(slots, Vec3A::ZERO);
    solver.valid.clear();
    solver.valid.resize(slots, false);
    solver.inv_mass.clear();
    solver.inv_mass.resize(slots, 0.0);
    solver.sleep_speed2.clear();
    solver.sleep_speed2.resize(slots, 0.0);
    let mut any_invalid = false;
    for (i, (_, body, mut index, mut island, .., mut rest, _, _)) in p.bodies.iter_mut().enumerate()
    {
        let node = &scene.nodes[i];
        let slot = layout.slot_of[i];
        let new_index = BodyIndex {
            slot,
            group: layout.group_of[i],
        };
        if *index != new_index {
            *index = new_index;
        }
        let new_island = match islands.island_of[i] {
            u32::MAX => Island::NONE,
            id => Island {
                id,
                substeps: decided.passes[id as usize],
                load: decided.loads[id as usize],
                group: if decided.states[id as usize].sleeping {
                    u32::MAX
                } else {
                    layout.group_of[i]
                },
            },
        };
        if *island != new_island {
            *island = new_island;
        }
        let rest_time = match islands.island_of[i] {
            u32::MAX => 0.0,
            id => decided.states[id as usize].timer,
        };
        if rest.seconds() != rest_time {
            rest.0 = rest_time;
        }
        if slot != u32::MAX {
            let s = slot as usize;
            let valid = state_is_valid(&body);
            any_invalid |= !valid;
            solver.valid[s] = valid;
            solver.pos[s] = body.position.into();
            solver.vel[s] = body.velocity.into();
            solver.inv_mass[s] = node.inv_mass;
            solver.sleep_speed2[s] = node.sleep_speed2;
        }
    }
    solver.pass_has_invalid = any_invalid;
    if any_invalid {
        solver.request_report();
    }
    // Sized by the first pass that runs stage by stage (`Pass::run`).
    solver.force.clear();
    solver.fixed_slots = layout.fixed_start..slots;
    solver.masses_changed = false;
    solver.group_synced = vec![None; layout.groups.len()];
    let inserted = core::mem::take(&mut p.requests.inserted);
    let unseen = unseen_bodies(p, scene, &inserted);
    if !unseen.is_empty() {
        // Reached by entity, as a query does not reach a disabled one: no
        // slot, and no island (which would let `SubstepBodies` see it in
        // the passes of the step it is enabled again in).
        let listed = unseen.clone();
        p.reporter.commands().queue(move |world: &mut World| {
            let mut world = DeferredWorld::from(world);
            for entity in listed {
                forget_slot(&mut world, entity);
            }
        });
    }
    let solver = &mut *p.solver;
    solver.unseen = unseen;
    solver.groups = layout.groups;
    solver.any_sleeping = decided.states.iter().any(|island| island.sleeping);
    solver.islands = decided.states;
    solver.island_members = decided.members;
}

/// The bodies that an earlier layout held (or that an earlier rebuild
/// found unseen, or that got their `Body` since: `inserted`) and that this
/// rebuild does not see, though they still hold a `Body`: disabled by a
/// component of yours. (A body taken out of
/// the step by a `PhysicsError`, or whose `Body` was removed, asks for a
/// rebuild itself when it comes back.) Their `BodyIndex` is cleared, since
/// the slot it names may be another body's now, and
/// [`rebuild`](super::rebuild) runs again as soon as one of them is back
/// in its query.
fn unseen_bodies(p: &Rebuild, scene: &Scene, inserted: &[Entity]) -> Vec<Entity> {
    let Some(body) = p.components.component_id::<Body>() else {
        return Vec::new();
    };
    let holds_body = |entity: Entity| {
        p.entities
            .get_spawned(entity)
            .is_ok_and(|at| p.archetypes[at.archetype_id].contains(body))
    };
    let solver = &*p.solver;
    // The bodies of the layout before: every island's (asleep or not), and
    // the fixed ones, which close group 0's entities.
    let fixed = solver
        .groups
        .first()
        .map_or(&[][..], |group| &group.entities[group.slots.len()..]);
    let mut unseen: Vec<Entity> = solver
        .island_members
        .iter()
        .chain(fixed)
        .chain(&solver.unseen)
        .chain(inserted)
        .copied()
        .filter(|&entity| {
            !scene.node_of.contains_key(&entity)
                && !p.has_body.contains(entity)
                && holds_body(entity)
        })
        .collect();
    unseen.sort_unstable();
    unseen.dedup();
    unseen
}

//! Systems of yours in `PhysicsSubstep` see the pass's bodies as
//! components: the pass copies its slots out to each `Body` before a set
//! that holds such systems runs, and reads them back after it, with the
//! forces they added to `AccumulatedForce`.
//!
//! A scene without such systems never copies: its passes run on the
//! arrays alone and each `Body` is written once, by the scatter.
//!
//! A group that holds more than a tenth of the slots is copied by walking
//! the tables' columns, as the scatter writes them; a smaller one by
//! looking up its entities. (On the ropes of `benches/step.rs` at 1000×100 with a
//! system in each of the four sets, the lookups were most of the step.)

use bevy::prelude::*;

use crate::data::body::{Body, Stepped};
use crate::data::drawing::PositionHistory;
use crate::data::forces::AccumulatedForce;
use crate::data::requests::{BodyIndex, SolverRequests};
use crate::solver::columns::{BodyColumns, matched_tables, table_component, write_cells};
use crate::solver::{SolverState, state_is_valid};

/// What a copy out writes.
pub(crate) type CopyOut = (
    &'static mut Body,
    &'static BodyIndex,
    &'static mut PositionHistory,
);

/// What a copy in reads (and takes, for forces).
pub(crate) type CopyIn = (
    &'static Body,
    &'static BodyIndex,
    Option<&'static mut AccumulatedForce>,
);

/// A group holds more than this share of the slots (one in `WALK_SHARE`)
/// for its copies to walk the tables' columns, testing each row's group,
/// rather than look up the group's entities one by one. The two cost about
/// the same at a tenth (looking up a little less): with a system of yours
/// in each set, one rope of
/// 100 bodies at 8 passes beside others at one pass
/// (`SCENE=fine SYSTEMS=1` in `benches/profile.rs`) stepped in 118 µs
/// walking against 147–149 µs looking up with a third of the slots, 141
/// against 160–165 µs with a fifth, 196–198 against 190–191 µs with a
/// tenth, and 529–531 against 364–367 µs with a fortieth.
const WALK_SHARE: usize = 10;

/// Whether the copies of a group of `entities` walk the tables (see
/// [`WALK_SHARE`]).
fn walks(solver: &SolverState, entities: &[Entity]) -> bool {
    entities.len() * WALK_SHARE > solver.pos.len()
}

/// Whether a row walked by a copy holds one of group `group`'s bodies.
/// The walk trusts `BodyIndex` as the scatter does: a rebuild clears the
/// index of every body it does not see, so that no index names a slot of
/// an older layout (see `rebuild::layout`).
#[inline(always)]
fn in_group(index: &BodyIndex, group: usize) -> bool {
    index.group as usize == group
}

/// Writes the state of group `group`'s dynamic bodies from their slots to
/// their `Body`. The first copy of a fixed step also writes each body's
/// `PositionHistory` (where the step started), which the scatter then
/// leaves alone. A `Body` written is marked changed at the world's change
/// tick, as a `Mut` would mark it (walking the columns, without the
/// caller that Bevy's `track_location` feature records, as the scatter).
pub(crate) fn copy_out(world: &mut World, query: &mut QueryState<CopyOut, Stepped>, group: usize) {
    query.update_archetypes(world);
    let this_run = world.change_tick();
    world.resource_scope(|world, mut solver: Mut<SolverState>| {
        let solver = &mut *solver;
        let first = !core::mem::replace(&mut solver.copied_out[group], true);
        let solver = &*solver;
        let entities = &solver.groups[group].entities;
        if walks(solver, entities) {
            let ids = BodyColumns::of(world);
            for (table, matched) in matched_tables(query, world) {
                // SAFETY: the world is borrowed whole here (the solver's
                // state is out of it), and nothing else reaches these
                // columns while the slices live.
                let Some(rows) = (unsafe { ids.rows(table) }) else {
                    continue;
                };
                matched.for_each(rows.len(), |row| {
                    if in_group(&rows.index[row], group)
                        && out_one(
                            solver,
                            first,
                            &mut rows.body[row],
                            &rows.index[row],
                            &mut rows.history[row],
                        )
                    {
                        rows.changed[row] = this_run;
                    }
                });
            }
            return;
        }
        let mut bodies = query.query_mut(world);
        let mut items = bodies.iter_many_mut(entities);
        while let Some((mut body, index, mut history)) = items.fetch_next() {
            let history = history.bypass_change_detection();
            if out_one(
                solver,
                first,
                body.bypass_change_detection(),
                index,
                history,
            ) {
                body.set_changed();
            }
        }
    });
}

/// [`copy_out`] of one body; true if its `Body` changed.
#[inline(always)]
fn out_one(
    solver: &SolverState,
    first: bool,
    body: &mut Body,
    index: &BodyIndex,
    history: &mut PositionHistory,
) -> bool {
    if first {
        history.previous = body.position;
    }
    let i = index.slot as usize;
    if i < solver.fixed_slots.start && solver.inv_mass[i] > 0.0 && solver.valid[i] {
        let position = Vec3::from(solver.pos[i]);
        let velocity = Vec3::from(solver.vel[i]);
        if body.position != position || body.velocity != velocity {
            body.position = position;
            body.velocity = velocity;
            return true;
        }
    }
    false
}

/// What [`copy_in`] reads (`bodies`: exactly the bodies [`copy_out`]
/// wrote) and takes (`forces`: those systems of yours added), and what it
/// found.
struct Reading {
    bodies: bool,
    forces: bool,
    any_invalid: bool,
    mass_changed: bool,
}

/// Reads group `group`'s dynamic bodies back into their slots after systems
/// of yours ran on them (`read_bodies`: exactly the bodies [`copy_out`]
/// wrote), and takes the forces they added for the next kick
/// (`take_forces`). A slot that went non-finite in this step stays out
/// until the end of the step reports it.
pub(crate) fn copy_in(
    world: &mut World,
    query: &mut QueryState<CopyIn, Stepped>,
    group: usize,
    (read_bodies, take_forces): (bool, bool),
) {
    if !(read_bodies || take_forces) {
        return;
    }
    query.update_archetypes(world);
    let this_run = world.change_tick();
    let mut reading = Reading {
        bodies: read_bodies,
        forces: take_forces,
        any_invalid: false,
        mass_changed: false,
    };
    world.resource_scope(|world, mut solver: Mut<SolverState>| {
        let solver = &mut *solver;
        // Out of the solver while its slots are written.
        let entities = core::mem::take(&mut solver.groups[group].entities);
        if walks(solver, &entities) {
            let ids = (
                BodyColumns::of(world),
                table_component::<AccumulatedForce>(world),
            );
            for (table, matched) in matched_tables(query, world) {
                // SAFETY: the world is borrowed whole here (the solver's
                // state is out of it): nothing writes `Body` or
                // `BodyIndex`, read here, and nothing else reaches
                // `AccumulatedForce`'s column and ticks while these slices
                // live.
                let (rows, forces) = unsafe {
                    let rows = ids.0.read(table);
                    let forces = table.get_data_slice_for::<AccumulatedForce>(ids.1);
                    let ticks = table.get_changed_ticks_slice_for(ids.1);
                    (
                        rows,
                        forces
                            .zip(ticks)
                            .map(|(f, t)| (write_cells(f), write_cells(t))),
                    )
                };
                let (Some((body, index)), mut forces) = (rows, forces) else {
                    continue;
                };
                matched.for_each(body.len(), |row| {
                    if !in_group(&index[row], group) {
                        return;
                    }
                    let force = forces.as_mut().map(|(f, _)| &mut f[row]);
                    if in_one(solver, &mut reading, &body[row], &index[row], force)
                        && let Some((_, ticks)) = forces.as_mut()
                    {
                        ticks[row] = this_run;
                    }
                });
            }
        } else {
            let mut bodies = query.query_mut(world);
            let mut items = bodies.iter_many_mut(&entities);
            while let Some((body, index, mut force)) = items.fetch_next() {
                let plain = force.as_mut().map(|force| force.bypass_change_detection());
                if in_one(solver, &mut reading, body, index, plain)
                    && let Some(force) = force.as_mut()
                {
                    force.set_changed();
                }
            }
        }
        solver.groups[group].entities = entities;
        if reading.any_invalid {
            solver.pass_has_invalid = true;
            solver.request_report();
        }
        solver.masses_changed |= reading.mass_changed;
    });
    // Islands and loads follow a new mass from the next step; the passes
    // use it from now.
    if reading.mass_changed {
        world.resource_mut::<SolverRequests>().dirty = true;
    }
}

/// [`copy_in`] of one body; true if it took the body's force (which it
/// then zeroed).
#[inline(always)]
fn in_one(
    solver: &mut SolverState,
    reading: &mut Reading,
    body: &Body,
    index: &BodyIndex,
    force: Option<&mut AccumulatedForce>,
) -> bool {
    let i = index.slot as usize;
    if i >= solver.fixed_slots.start || solver.diverged[i] {
        return false;
    }
    // Only what the copy out wrote: a fixed body written by a system of
    // yours is read at the next step, as a write between steps is.
    if reading.bodies && solver.inv_mass[i] > 0.0 && solver.valid[i] {
        let valid = state_is_valid(body);
        solver.valid[i] = valid;
        reading.any_invalid |= !valid;
        if valid {
            let (pos, vel) = (Vec3A::from(body.position), Vec3A::from(body.velocity));
            if (pos, vel) != (solver.pos[i], solver.vel[i]) {
                // Moved by a system of yours: not the step's doing.
                solver.watch_skip.mark(i);
            }
            solver.pos[i] = pos;
            solver.vel[i] = vel;
            reading.mass_changed |= solver.inv_mass[i] != body.inv_mass;
            solver.inv_mass[i] = body.inv_mass;
        }
    }
    if reading.forces
        && let Some(force) = force
        && force.0 != Vec3::ZERO
    {
        solver.pending[i] += Vec3A::from(force.0);
        force.0 = Vec3::ZERO;
        solver.pending_slots.push(i as u32);
        solver.extra_slots.push(i as u32);
        solver.watch_skip.mark(i);
        return true;
    }
    false
}

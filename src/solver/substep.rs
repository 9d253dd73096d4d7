//! Systems of yours in `PhysicsSubstep` see the pass's bodies as
//! components: the pass copies its slots out to each `Body` before a set
//! that holds such systems runs, and reads them back after it, with the
//! forces they added to `AccumulatedForce`.
//!
//! A scene without such systems never copies: its passes run on the
//! arrays alone and each `Body` is written once, by the scatter.

use bevy::prelude::*;

use crate::data::body::{Body, Stepped};
use crate::data::drawing::PositionHistory;
use crate::data::forces::AccumulatedForce;
use crate::data::requests::{BodyIndex, SolverRequests};
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

/// Writes the state of group `group`'s dynamic bodies from their slots to
/// their `Body`. The first copy of a fixed step also writes each body's
/// `PositionHistory` (where the step started), which the scatter then
/// leaves alone.
pub(crate) fn copy_out(world: &mut World, query: &mut QueryState<CopyOut, Stepped>, group: usize) {
    world.resource_scope(|world, mut solver: Mut<SolverState>| {
        let solver = &mut *solver;
        let first = !core::mem::replace(&mut solver.copied_out[group], true);
        let dynamic = solver.fixed_slots.start;
        let mut bodies = query.query_mut(world);
        let mut items = bodies.iter_many_mut(&solver.groups[group].entities);
        while let Some((mut body, index, mut history)) = items.fetch_next() {
            if first {
                history.bypass_change_detection().previous = body.position;
            }
            let i = index.slot as usize;
            if i < dynamic && solver.inv_mass[i] > 0.0 && solver.valid[i] {
                let position = Vec3::from(solver.pos[i]);
                let velocity = Vec3::from(solver.vel[i]);
                if body.position != position || body.velocity != velocity {
                    body.position = position;
                    body.velocity = velocity;
                }
            }
        }
    });
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
    let mass_changed = world.resource_scope(|world, mut solver: Mut<SolverState>| {
        let solver = &mut *solver;
        let (mut any_invalid, mut mass_changed) = (false, false);
        let dynamic = solver.fixed_slots.start;
        let mut bodies = query.query_mut(world);
        let mut items = bodies.iter_many_mut(&solver.groups[group].entities);
        while let Some((body, index, force)) = items.fetch_next() {
            let i = index.slot as usize;
            if i >= dynamic || solver.diverged[i] {
                continue;
            }
            // Only what the copy out wrote: a fixed body written by a
            // system of yours is read at the next step, as a write between
            // steps is.
            if read_bodies && solver.inv_mass[i] > 0.0 && solver.valid[i] {
                let valid = state_is_valid(body);
                solver.valid[i] = valid;
                any_invalid |= !valid;
                if valid {
                    let (pos, vel) = (Vec3A::from(body.position), Vec3A::from(body.velocity));
                    if (pos, vel) != (solver.pos[i], solver.vel[i]) {
                        // Moved by a system of yours: not the step's doing.
                        solver.watch_skip.mark(i);
                    }
                    solver.pos[i] = pos;
                    solver.vel[i] = vel;
                    mass_changed |= solver.inv_mass[i] != body.inv_mass;
                    solver.inv_mass[i] = body.inv_mass;
                }
            }
            if take_forces
                && let Some(mut force) = force
                && force.0 != Vec3::ZERO
            {
                solver.pending[i] += Vec3A::from(force.0);
                force.0 = Vec3::ZERO;
                solver.pending_slots.push(i as u32);
                solver.extra_slots.push(i as u32);
                solver.watch_skip.mark(i);
            }
        }
        if any_invalid {
            solver.pass_has_invalid = true;
            solver.request_report();
        }
        solver.masses_changed |= mass_changed;
        mass_changed
    });
    // Islands and loads follow a new mass from the next step; the passes
    // use it from now.
    if mass_changed {
        world.resource_mut::<SolverRequests>().dirty = true;
    }
}

//! The gather at the start of a step: what your code wrote since the last
//! one (bodies, forces), constant forces, damping and ground planes, into
//! the solver's arrays.

use bevy::ecs::change_detection::Tick;
use bevy::prelude::*;

use crate::data::body::{Body, Damping, Stepped};
use crate::data::constraints::GroundPlane;
use crate::data::forces::{AccumulatedForce, ConstantForce};
use crate::data::requests::{BodyIndex, SolverRequests};
use crate::kernels::constraints::{PlaneRow, Warm};
use crate::solver::columns::{
    ChangedSince, Matched, column, for_each_changed, matched_tables, read_cells, table_component,
    write_cells,
};
use crate::solver::{SolverState, state_is_valid};

/// Start of the fixed step, after [`gather_written`]: collects the ground
/// planes, and reads each body's constant force and damping into its slot
/// ([`gather_forces`] then adds what your code pushed).
pub(crate) fn gather(
    mut solver: ResMut<SolverState>,
    extras: Query<(&BodyIndex, Option<&ConstantForce>, Option<&Damping>), ExtraFilter>,
    planes: Query<&GroundPlane>,
) {
    let solver = &mut *solver;
    solver.planes.clear();
    solver.planes.extend(planes.iter().filter_map(plane_row));
    // Each step's plane contacts start cold (pair contacts start from
    // `ContactForces`).
    solver.plane_warm.clear();
    solver
        .plane_warm
        .resize(solver.rounds.len() * solver.planes.len(), Warm::default());
    // Marks left by the last step (which reported them).
    if solver.diverged.len() != solver.pos.len() || core::mem::take(&mut solver.any_diverged) {
        solver.diverged.clear();
        solver.diverged.resize(solver.pos.len(), false);
    }
    let rebuilt = solver.rebuilt;
    gather_extras(solver, rebuilt, &extras);
}

/// What the scan for pushed bodies matches (it reads and takes their
/// forces by column).
type Pushed = (&'static BodyIndex, &'static AccumulatedForce);

/// Start of the fixed step, after [`gather`]: adds to each body's constant
/// force the accumulated force written since the last step (every body's
/// after a rebuild), which then acts in every pass, and takes it: zero,
/// marked changed at this system's tick, as a `Mut` would mark it (which
/// the next run does not see again).
///
/// A force written before the step acts for the whole fixed step, in every
/// pass, as a constant force does (its impulse is `F·h` at any pass
/// count). The scan reads one change tick per body, 64 at a time
/// ([`for_each_changed`]): 100 000 bodies took 31 µs a step through a
/// query's `Changed` filter.
pub(crate) fn gather_forces(world: &mut World, pushed: &mut QueryState<Pushed, Stepped>) {
    pushed.update_archetypes(world);
    // A body that joined the step at a rebuild (a `Body` inserted again, an
    // error fixed, an anchor woken) brings the force written to it while it
    // was out, which no change test finds.
    let rebuilt = core::mem::take(
        &mut world
            .resource_mut::<SolverState>()
            .bypass_change_detection()
            .rebuilt,
    );
    // (In an exclusive system the world's last change tick is the
    // system's last run.)
    let (since, now) = (world.last_change_tick(), world.change_tick());
    let changed = ChangedSince::new(since, now);
    let slots = world.resource::<SolverState>().pos.len();
    let ids = (
        table_component::<AccumulatedForce>(world),
        table_component::<BodyIndex>(world),
    );
    let (mut taken, mut rows) = (Vec::new(), Vec::new());
    for (table, matched) in matched_tables(pushed, world) {
        // SAFETY: the world is borrowed whole for this system, and these
        // are the columns of `AccumulatedForce` (with its changed ticks)
        // and of `BodyIndex`, apart from each other; nothing else here
        // reaches them while these slices live.
        let columns = unsafe {
            let forces = table.get_data_slice_for::<AccumulatedForce>(ids.0);
            let ticks = table.get_changed_ticks_slice_for(ids.0);
            let index = column::<BodyIndex>(table, ids.1);
            forces.zip(ticks).zip(index)
        };
        let Some(((forces, ticks), index)) = columns else {
            continue;
        };
        rows.clear();
        // SAFETY: as above; this shared view of the ticks ends before they
        // are written below.
        let read_ticks = unsafe { read_cells(ticks) };
        match (matched, rebuilt) {
            (Matched::All, false) => for_each_changed(read_ticks, changed, |row| rows.push(row)),
            (Matched::All, true) => rows.extend(0..forces.len()),
            (Matched::Rows(matched), false) => rows.extend(
                matched
                    .into_iter()
                    .filter(|&row| changed.test(read_ticks[row])),
            ),
            (Matched::Rows(matched), true) => rows = matched,
        }
        // SAFETY: as above.
        let (forces, ticks) = unsafe { (write_cells(forces), write_cells(ticks)) };
        for &row in &rows {
            let force = forces[row].0;
            if force == Vec3::ZERO {
                continue;
            }
            forces[row].0 = Vec3::ZERO;
            ticks[row] = now;
            let i = index[row].slot as usize;
            if i < slots {
                taken.push((i, force));
            }
        }
    }
    if taken.is_empty() {
        return;
    }
    let mut solver = world.resource_mut::<SolverState>();
    let solver = &mut *solver;
    for (i, force) in taken {
        solver.constant[i] += Vec3A::from(force);
        solver.extra_slots.push(i as u32);
        solver.watch_skip.mark(i);
    }
}

/// What the scan for written bodies matches (it reads their columns).
type Written = (&'static Body, &'static BodyIndex);

/// Start of the fixed step, after the rebuild (which copies every body
/// itself) and before [`gather`]: copies into its slot the state of each
/// body written since its group's slots were last in step with the bodies.
///
/// Every step writes every body it moves, so a scan of `Changed<Body>`
/// against this system's own last run would find them all. The scan runs
/// instead as of the oldest tick at which a group was in step: only bodies
/// written since then (by your code, as a rule) are found. It reads one
/// change tick per body, 64 at a time ([`for_each_changed`]): 100 000
/// bodies took 37 µs a step through a query's `Changed` filter.
pub(crate) fn gather_written(world: &mut World, every: &mut QueryState<Written, Stepped>) {
    every.update_archetypes(world);
    let now = world.change_tick();
    let solver = world.resource::<SolverState>();
    if solver.rebuilt {
        return;
    }
    // The oldest tick as of which a group's slots held its bodies' state;
    // `None` if a group's never did (then every body is read).
    let since = solver
        .group_synced
        .iter()
        .try_fold(None, |oldest: Option<Tick>, &synced| {
            let tick = synced?;
            Some(Some(match oldest {
                Some(oldest) if !oldest.is_newer_than(tick, now) => oldest,
                _ => tick,
            }))
        })
        .flatten();
    let changed = since.map(|since| ChangedSince::new(since, now));
    let (synced, slots) = (&solver.group_synced, solver.pos.len());
    let mut found = Vec::new();
    let (body_id, index_id) = (
        table_component::<Body>(world),
        table_component::<BodyIndex>(world),
    );
    for (table, matched) in matched_tables(every, world) {
        // SAFETY: the world is borrowed whole for this system, and these
        // are the columns of `Body` and `BodyIndex`, which nothing writes
        // while it runs.
        let columns = unsafe {
            column::<Body>(table, body_id)
                .zip(column::<BodyIndex>(table, index_id))
                .zip(
                    table
                        .get_changed_ticks_slice_for(body_id)
                        .map(|ticks| read_cells(ticks)),
                )
        };
        let Some(((bodies, index), ticks)) = columns else {
            continue;
        };
        // A body written since its group's slots were last in step with it.
        let visit = |row: usize| {
            let (i, group) = (index[row].slot as usize, index[row].group as usize);
            // A body spawned since the last rebuild has no slot yet; it joins
            // at the next step.
            let Some(&synced) = synced.get(group) else {
                return;
            };
            if let Some(synced) = synced
                && !ticks[row].is_newer_than(synced, now)
            {
                return;
            }
            if i < slots {
                found.push((i, bodies[row]));
            }
        };
        match (matched, changed) {
            (Matched::All, Some(changed)) => for_each_changed(ticks, changed, visit),
            (matched, _) => matched.for_each(ticks.len(), visit),
        }
    }
    apply_written(world, &found);
}

/// Copies the written bodies `found` (slot, state) into their slots.
fn apply_written(world: &mut World, found: &[(usize, Body)]) {
    let mut solver = world.resource_mut::<SolverState>();
    let solver = &mut *solver;
    let (mut any_invalid, mut mass_changed) = (false, false);
    for &(i, body) in found {
        solver.watch_skip.mark(i);
        let valid = state_is_valid(&body);
        solver.valid[i] = valid;
        if valid {
            solver.pos[i] = body.position.into();
            solver.vel[i] = body.velocity.into();
            if body.inv_mass != solver.inv_mass[i] {
                solver.inv_mass[i] = body.inv_mass;
                mass_changed = true;
            }
        } else {
            any_invalid = true;
        }
    }
    solver.pass_has_invalid = any_invalid;
    if any_invalid {
        solver.request_report();
    }
    // Islands and loads follow the new mass from the next step; the
    // passes use it from this one.
    if mass_changed {
        solver.masses_changed = true;
        world.resource_mut::<SolverRequests>().dirty = true;
    }
}

/// Bodies with a constant force or a damping.
type ExtraFilter = (Stepped, Or<(With<ConstantForce>, With<Damping>)>);

/// Clears the per-slot forces and damping of the last step and reads this
/// step's.
fn gather_extras(
    solver: &mut SolverState,
    rebuilt: bool,
    extras: &Query<(&BodyIndex, Option<&ConstantForce>, Option<&Damping>), ExtraFilter>,
) {
    let slots = solver.pos.len();
    if rebuilt || solver.damping.len() != slots {
        // New slots: start from nothing.
        solver.extra_slots.clear();
        solver.pending_slots.clear();
        for v in [&mut solver.pending, &mut solver.constant] {
            v.clear();
            v.resize(slots, Vec3A::ZERO);
        }
        solver.damping.clear();
        solver.damping.resize(slots, 0.0);
    }
    for slot in solver.extra_slots.drain(..) {
        let i = slot as usize;
        if i < slots {
            solver.pending[i] = Vec3A::ZERO;
            solver.constant[i] = Vec3A::ZERO;
            solver.damping[i] = 0.0;
        }
    }
    let mut bad_damping = false;
    for (index, constant, damping) in extras {
        // An invalid coefficient damps nothing (dividing by 1 + h·0 is
        // exact) and is reported at the end of the step, on any body (a
        // fixed body out of every pass too).
        let damping = damping.map(|&damping| {
            bad_damping |= !damping.is_valid();
            if damping.is_valid() { damping.0 } else { 0.0 }
        });
        let i = index.slot as usize;
        if i >= slots {
            continue;
        }
        solver.extra_slots.push(index.slot);
        if let Some(constant) = constant {
            solver.constant[i] = constant.0.into();
            if constant.0 != Vec3::ZERO {
                solver.watch_skip.mark(i);
            }
        }
        if let Some(damping) = damping {
            solver.damping[i] = damping;
        }
    }
    if bad_damping {
        solver.request_report();
    }
}

/// A plane as the passes use it, or `None` (with nothing stepped against
/// it) when it has no [unit normal](GroundPlane::unit_normal) or its offset
/// is not finite.
fn plane_row(plane: &GroundPlane) -> Option<PlaneRow> {
    let normal = Vec3A::from(plane.unit_normal()?);
    plane.offset.is_finite().then(|| PlaneRow {
        normal,
        offset: plane.offset,
        restitution: plane.restitution.clamp(0.0, 1.0),
        friction: plane.friction.max(0.0),
    })
}

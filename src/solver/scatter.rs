//! The scatter at the end of a step: each stepped body's new state from its
//! slot into its `Body`, and where the step started into its
//! `PositionHistory`, once per fixed step.
//!
//! It writes the components' table columns directly, as slices cut into
//! runs of rows, so that a large scene splits over the step's threads
//! ([`for_each_part`]) whatever the size of the compute pool. (Bevy's
//! parallel query runs its items one by one on a pool of one thread, which
//! is what Bevy's default pools give a two-core machine; there the scatter
//! was the largest part of the step left on one thread.)

use bevy::ecs::change_detection::Tick;
use bevy::math::Vec3A;
use bevy::prelude::*;

use crate::data::body::{Body, Stepped};
use crate::data::drawing::PositionHistory;
use crate::data::requests::BodyIndex;
use crate::data::settings::{PhysicsSettings, PhysicsStep};
use crate::solver::SolverState;
use crate::solver::columns::{BodyColumns, BodyRows, Matched, matched_tables};
use crate::solver::par::{JOBS_PER_THREAD, for_each_part, split_pool};

/// The bodies the scatter writes: those a step moves, with their index and
/// history (read only here; the scatter writes their columns).
pub(crate) type Scattered =
    QueryState<(&'static Body, &'static BodyIndex, &'static PositionHistory), Stepped>;

/// The fewest rows in one job of a split scatter: about what a split's
/// handing out and waiting costs (a body's rows take about 3 ns, a split
/// tens of microseconds), so a scene of 10 000 bodies does not split.
const MIN_ROWS: usize = 16_384;

/// End of every step: notes when it ended (see
/// [`DrawnPositions`](crate::DrawnPositions)), and writes each stepped
/// dynamic body's new state from its slot and its [`PositionHistory`]
/// (where the fixed step started; already written for a group whose bodies
/// were copied out for systems of yours in `PhysicsSubstep`). A written
/// `Body` is marked changed at this system's tick, as a `Mut` would mark
/// it.
///
/// A body made fixed since the rebuild keeps what your code wrote. (With
/// Bevy's `track_location` feature a `Mut` also records where a change
/// came from; the scatter records nothing there.)
pub(crate) fn scatter(world: &mut World, bodies: &mut Scattered) {
    let this_run = world.change_tick();
    world
        .resource_mut::<PhysicsStep>()
        .bypass_change_detection()
        .ended = this_run;
    let threshold = world.resource::<PhysicsSettings>().parallel_threshold;
    bodies.update_archetypes(world);
    let ids = BodyColumns::of(world);
    let state = world.resource::<SolverState>();
    let pool = split_pool().filter(|_| state.len() >= threshold);
    // Each row's code is chosen once for the whole scatter, so that the
    // common case (nothing copied out, every slot valid) tests nothing per
    // body for either.
    let copied = state.copied_out.contains(&true);
    // (Without an invalid slot in this step, none diverged either: both
    // set `pass_has_invalid`.)
    let clean = !state.pass_has_invalid;
    for (table, matched) in matched_tables(bodies, world) {
        // SAFETY: the world is borrowed whole for this system and the
        // three columns are of three components, so three columns apart
        // from each other and from `Body`'s ticks; nothing else here
        // reaches them: the solver's state is a resource, stored in a
        // sparse set (as `#[derive(Resource)]` makes every resource), not
        // in a table. So nothing reads or writes them while these slices
        // live.
        let rows = unsafe { ids.rows(table) };
        let Some(rows) = rows else { continue };
        if let Matched::Rows(matched) = matched {
            // Only the matched archetypes' rows, one by one.
            let BodyRows {
                body,
                changed,
                index,
                history,
            } = rows;
            let view = View::of(state, this_run);
            for row in matched {
                let one = (
                    &mut body[row],
                    &mut changed[row],
                    &index[row],
                    &mut history[row],
                );
                if copied {
                    view.write::<true, false>(one);
                } else {
                    view.write::<false, false>(one);
                }
            }
            continue;
        }
        let chunk = match pool {
            Some((_, threads)) => rows.len().div_ceil(threads * JOBS_PER_THREAD).max(MIN_ROWS),
            None => rows.len().max(1),
        };
        let pool = pool.filter(|_| rows.len() > chunk);
        for_each_part(pool, rows.chunks(chunk), |rows| match (copied, clean) {
            (false, true) => write_rows::<false, true>(rows, state, this_run),
            (false, false) => write_rows::<false, false>(rows, state, this_run),
            (true, true) => write_rows::<true, true>(rows, state, this_run),
            (true, false) => write_rows::<true, false>(rows, state, this_run),
        });
    }
    let mut solver = world.resource_mut::<SolverState>();
    let synced = (!solver.pass_has_invalid).then_some(this_run);
    solver.group_synced.fill(synced);
}

/// Writes each row's body (see [`View::write`]).
#[inline(always)]
fn write_rows<const COPIED: bool, const CLEAN: bool>(
    rows: BodyRows<'_>,
    state: &SolverState,
    this_run: Tick,
) -> bool {
    let view = View::of(state, this_run);
    let bodies = rows.body.iter_mut().zip(rows.changed.iter_mut());
    for ((body, changed), (index, history)) in bodies.zip(rows.index.iter().zip(rows.history)) {
        view.write::<COPIED, CLEAN>((body, changed, index, history));
    }
    false
}

/// What the scatter reads of the solver, sliced once for a run of rows.
struct View<'a> {
    pos: &'a [Vec3A],
    vel: &'a [Vec3A],
    valid: &'a [bool],
    diverged: &'a [bool],
    inv_mass: &'a [f32],
    copied_out: &'a [bool],
    /// Where the fixed slots start.
    dynamic: usize,
    masses_changed: bool,
    this_run: Tick,
}

impl<'a> View<'a> {
    #[inline(always)]
    fn of(state: &'a SolverState, this_run: Tick) -> Self {
        // All of one length, so that one test of the slot serves every
        // read.
        let slots = state.pos.len();
        Self {
            pos: &state.pos[..],
            vel: &state.vel[..slots],
            valid: &state.valid[..slots],
            diverged: &state.diverged[..slots],
            inv_mass: &state.inv_mass[..slots],
            copied_out: &state.copied_out[..],
            dynamic: state.fixed_slots.start,
            masses_changed: state.masses_changed,
            this_run,
        }
    }

    /// Writes a body's [`PositionHistory`] (unless its group was copied
    /// out, `COPIED` being whether any was) and, for a dynamic slot, its
    /// new state, marking it changed. `CLEAN`: every slot is valid and
    /// none diverged in this step, which then goes untested.
    #[inline(always)]
    fn write<const COPIED: bool, const CLEAN: bool>(
        &self,
        (body, changed, index, history): (&mut Body, &mut Tick, &BodyIndex, &mut PositionHistory),
    ) {
        let i = index.slot as usize;
        if i >= self.pos.len() {
            return;
        }
        if !COPIED
            || !self
                .copied_out
                .get(index.group as usize)
                .is_some_and(|&c| c)
        {
            // Nothing watches it, and a tick per body per step is
            // measurable.
            history.previous = body.position;
        }
        // Dynamic slots only, less bodies made fixed since the rebuild
        // (which keep what your code wrote).
        if i < self.dynamic && (!self.masses_changed || self.inv_mass[i] > 0.0) {
            if CLEAN || self.valid[i] {
                body.position = self.pos[i].into();
                body.velocity = self.vel[i].into();
                *changed = self.this_run;
            } else if self.diverged[i] {
                body.velocity = self.vel[i].into();
                *changed = self.this_run;
            }
        }
    }
}

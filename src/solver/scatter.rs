//! The scatter at the end of a step: each stepped body's new state from its
//! slot into its `Body`, and where the step started into its
//! `PositionHistory`, once per fixed step.

use bevy::ecs::system::SystemChangeTick;
use bevy::prelude::*;

use crate::data::body::{Body, Stepped};
use crate::data::drawing::PositionHistory;
use crate::data::requests::BodyIndex;
use crate::data::settings::{PhysicsSettings, PhysicsStep};
use crate::solver::SolverState;
use crate::solver::par::for_each_maybe_par;

/// What the scatter writes per body.
type ScatterData = (
    &'static mut Body,
    &'static BodyIndex,
    &'static mut PositionHistory,
);

/// End of every step: notes when it ended (see
/// [`DrawnPositions`](crate::DrawnPositions)), and writes each stepped
/// dynamic body's new state from its slot and its [`PositionHistory`]
/// (where the fixed step started; already written for a group whose bodies
/// were copied out for systems of yours in `PhysicsSubstep`).
///
/// A body made fixed since the rebuild keeps what your code wrote.
pub(crate) fn scatter(
    mut solver: ResMut<SolverState>,
    settings: Res<PhysicsSettings>,
    mut step: ResMut<PhysicsStep>,
    mut bodies: Query<ScatterData, Stepped>,
    ticks: SystemChangeTick,
) {
    step.bypass_change_detection().ended = ticks.this_run();
    let state = &*solver;
    let parallel = state.len() >= settings.parallel_threshold;
    // Two loops, so that the common one (nothing copied out) tests nothing
    // per body for it.
    if state.copied_out.contains(&true) {
        write_bodies::<true>(&mut bodies, state, parallel);
    } else {
        write_bodies::<false>(&mut bodies, state, parallel);
    }
    let synced = (!solver.pass_has_invalid).then(|| ticks.this_run());
    solver.group_synced.fill(synced);
}

/// Writes each body's [`PositionHistory`] (unless its group was copied
/// out, `COPIED` being whether any was) and, for a dynamic slot, its new
/// state.
#[inline(always)]
fn write_bodies<const COPIED: bool>(
    bodies: &mut Query<ScatterData, Stepped>,
    state: &SolverState,
    parallel: bool,
) {
    // All of one length, so that one test of the slot serves every read.
    let slots = state.pos.len();
    let (pos, vel) = (&state.pos[..], &state.vel[..slots]);
    let (valid, diverged) = (&state.valid[..slots], &state.diverged[..slots]);
    let inv_mass = &state.inv_mass[..slots];
    let (dynamic, masses_changed) = (state.fixed_slots.start, state.masses_changed);
    let copied_out = &state.copied_out[..];
    for_each_maybe_par!(bodies, parallel, |(mut body, index, mut history): (
        Mut<Body>,
        &BodyIndex,
        Mut<PositionHistory>
    )| {
        let i = index.slot as usize;
        if i >= slots {
            return;
        }
        if !COPIED || !copied_out.get(index.group as usize).is_some_and(|&c| c) {
            // Written without change detection: nothing watches it, and a
            // tick per body per step is measurable.
            history.bypass_change_detection().previous = body.position;
        }
        // Dynamic slots only, less bodies made fixed since the rebuild
        // (which keep what your code wrote).
        if i < dynamic && (!masses_changed || inv_mass[i] > 0.0) {
            if valid[i] {
                let body = &mut *body;
                body.position = pos[i].into();
                body.velocity = vel[i].into();
            } else if diverged[i] {
                body.velocity = vel[i].into();
            }
        }
    });
}

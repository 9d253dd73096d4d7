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
use crate::solver::{SolverState, state_is_valid};

/// What the scan for pushed bodies reads and takes.
type Pushed = (&'static BodyIndex, &'static mut AccumulatedForce);

/// The pushed bodies whose force changed since the last step.
type PushedSince<'w, 's> = Query<'w, 's, Pushed, (Stepped, Changed<AccumulatedForce>)>;

/// Start of the fixed step, after [`gather_written`]: collects the ground
/// planes, reads each body's constant force and damping into its slot, and
/// adds to its constant force the accumulated force written since the last
/// step (every body's after a rebuild), which then acts in every pass.
pub(crate) fn gather(
    mut solver: ResMut<SolverState>,
    mut forces: ParamSet<(PushedSince, Query<Pushed, Stepped>)>,
    extras: Query<(&BodyIndex, Option<&ConstantForce>, Option<&Damping>), ExtraFilter>,
    planes: Query<&GroundPlane>,
) {
    let solver = &mut *solver;
    solver.planes.clear();
    solver.planes.extend(planes.iter().filter_map(plane_row));
    // Each step's contacts start cold.
    solver.plane_warm.clear();
    solver
        .plane_warm
        .resize(solver.rounds.len() * solver.planes.len(), Warm::default());
    let rebuilt = core::mem::take(&mut solver.rebuilt);
    // Marks left by the last step (which reported them).
    if solver.diverged.len() != solver.pos.len() || core::mem::take(&mut solver.any_diverged) {
        solver.diverged.clear();
        solver.diverged.resize(solver.pos.len(), false);
    }
    gather_extras(solver, rebuilt, &extras);
    let slots = solver.pos.len();
    // Forces written since the last step (taking one marks it changed at
    // this system's tick, which the next run does not see again).
    let take = |(index, mut force): (&BodyIndex, Mut<AccumulatedForce>)| {
        let taken = force.0;
        if taken == Vec3::ZERO {
            return None;
        }
        force.0 = Vec3::ZERO;
        let i = index.slot as usize;
        (i < slots).then_some((i, taken))
    };
    // A force written before the step acts for the whole fixed step, in
    // every pass, as a constant force does (its impulse is `F·h` at any
    // pass count); it is cleared at the next gather.
    let (constant, extra_slots) = (&mut solver.constant, &mut solver.extra_slots);
    let skip = &mut solver.watch_skip;
    let mut apply = |(i, taken): (usize, Vec3)| {
        constant[i] += Vec3A::from(taken);
        extra_slots.push(i as u32);
        skip.mark(i);
    };
    if rebuilt {
        // A body that joined the step (a `Body` inserted again, an error
        // fixed, an anchor woken) brings the force written to it while it
        // was out, which no change filter finds.
        forces.p1().iter_mut().filter_map(take).for_each(&mut apply);
    } else {
        forces.p0().iter_mut().filter_map(take).for_each(&mut apply);
    }
}

/// What the scan for written bodies reads.
type Written = (Ref<'static, Body>, &'static BodyIndex);

/// Start of the fixed step, after the rebuild (which copies every body
/// itself) and before [`gather`]: copies into its slot the state of each
/// body written since its group's slots were last in step with the bodies.
///
/// Every step writes every body it moves, so a scan of `Changed<Body>`
/// against this system's own last run would find them all. The scan runs
/// instead as of the oldest tick at which a group was in step: only bodies
/// written since then (by your code, as a rule) pass the filter, which
/// reads one change tick per body.
///
/// Both scans of this module run on this thread at any size: a tick
/// compare per body is too little work to split. With the passes on two
/// threads, scanning 100 000 bodies in parallel took 98 µs (this one) and
/// 93 µs ([`gather`]'s), against 37 µs and 31 µs on one thread (the
/// threads' wake-up costs more than the scan).
pub(crate) fn gather_written(
    world: &mut World,
    changed: &mut QueryState<Written, (Stepped, Changed<Body>)>,
    every: &mut QueryState<Written, Stepped>,
) {
    world.resource_scope(|world, mut solver: Mut<SolverState>| {
        let solver = &mut *solver;
        if solver.rebuilt {
            return;
        }
        let now = world.change_tick();
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
        let synced = &solver.group_synced;
        let slots = solver.pos.len();
        let (mut any_invalid, mut mass_changed) = (false, false);
        let (pos, vel, valid_slots, inv_mass, skip) = (
            &mut solver.pos,
            &mut solver.vel,
            &mut solver.valid,
            &mut solver.inv_mass,
            &mut solver.watch_skip,
        );
        // Bodies written since their group's slots were last in step with
        // them.
        let written = |(body, index): (Ref<Body>, &BodyIndex)| {
            let i = index.slot as usize;
            // A body spawned since the last rebuild has no slot yet; it joins
            // at the next step.
            let &synced = synced.get(index.group as usize)?;
            if let Some(synced) = synced
                && !body.last_changed().is_newer_than(synced, now)
            {
                return None;
            }
            (i < slots).then_some((i, *body))
        };
        let mut apply = |(i, body): (usize, Body)| {
            skip.mark(i);
            let valid = state_is_valid(&body);
            valid_slots[i] = valid;
            if valid {
                pos[i] = body.position.into();
                vel[i] = body.velocity.into();
                if body.inv_mass != inv_mass[i] {
                    inv_mass[i] = body.inv_mass;
                    mass_changed = true;
                }
            } else {
                any_invalid = true;
            }
        };
        match since {
            Some(since) => world.last_change_tick_scope(since, |world| {
                let bodies = changed.query(world);
                bodies.into_iter().filter_map(written).for_each(&mut apply);
            }),
            None => {
                let bodies = every.query(world);
                bodies.into_iter().filter_map(written).for_each(&mut apply);
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
    });
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

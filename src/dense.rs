//! The fast path of the fixed step: its passes on the solver's arrays alone.
//!
//! When no system of yours sits in [`PhysicsSubstep`](crate::PhysicsSubstep),
//! nothing can look at a body between the passes of a fixed step, so the
//! step need not keep the components up to date pass by pass. It then runs
//! as a *dense* step:
//!
//! 1. the gather (start of the step) copies the state of bodies written
//!    since the last step into their slots, as always, and also takes each
//!    body's [`AccumulatedForce`](crate::AccumulatedForce) and reads its
//!    [`ConstantForce`](crate::ConstantForce) and
//!    [`Damping`](crate::Damping);
//! 2. every pass runs [`run_pass`] on the slots: spring forces, the kick
//!    with damping, the rods and contacts, the drift;
//! 3. [`scatter`] (end of the step) writes each body's new position and
//!    velocity and its [`PositionHistory`] once.
//!
//! The arithmetic is the same as the per-pass systems', in the same order,
//! so a dense step and a step through the `PhysicsSubstep` schedule give
//! bit-identical states (the unit tests at the bottom of this file compare
//! every bit of every body, every frame, with and without threads). With a
//! system of yours in `PhysicsSubstep`, every step goes through the
//! schedule, whose systems keep `Body` current for yours.
//!
//! Large groups split their islands over the compute task pool. Islands
//! share no spring (a fixed body they both hang from is only read), so
//! each body sums its springs' forces in row order whatever the number of
//! threads, and the state after a step does not depend on it.

use bevy::ecs::system::SystemChangeTick;
use bevy::prelude::*;
use bevy::tasks::{ComputeTaskPool, TaskPool};

use crate::body::{Body, drifted, kicked};
use crate::constraints::{ConstraintSettings, solve_group};
use crate::interpolation::PositionHistory;
use crate::schedule::{PhysicsSettings, PhysicsStep};
use crate::solver::{BodyIndex, SolverState, Span, Stepped, for_each_maybe_par};
use crate::spring::add_spring_forces;

/// How many parts a parallel pass is cut into: one per compute thread, and
/// at least two (the calling thread works on a part while it waits).
fn workers(pool: &TaskPool) -> usize {
    pool.thread_num().max(2)
}

/// What the kick and drift of one pass read.
struct Kick<'a> {
    h: f32,
    g: Vec3A,
    /// The first pass of the fixed step takes the accumulated forces.
    first: bool,
    /// Also move each body (no rods or contacts between kick and drift).
    drift: bool,
    /// Accumulated and constant forces and damping, when any body of the
    /// step has one.
    extras: Option<(&'a [Vec3A], &'a [Vec3A], &'a [f32])>,
    inv_mass: &'a [f32],
}

/// The slots of some of a group's islands, `base..base + pos.len()`, which
/// one part of a pass kicks and moves.
struct Part<'a> {
    base: usize,
    pos: &'a mut [Vec3A],
    vel: &'a mut [Vec3A],
    valid: &'a mut [bool],
    diverged: &'a mut [bool],
    force: &'a [Vec3A],
}

/// Cuts `slice`, which holds the slots from `base` on, into the slots of
/// each part.
fn pieces<'a, T>(
    mut slice: &'a mut [T],
    base: usize,
    parts: &'a [Span],
) -> impl Iterator<Item = &'a mut [T]> {
    let mut at = base;
    parts.iter().map(move |part| {
        let (piece, rest) = core::mem::take(&mut slice).split_at_mut(part.slots.end - at);
        slice = rest;
        at = part.slots.end;
        piece
    })
}

impl Kick<'_> {
    /// `v ← (v + h·(g + w·F)) / (1 + h·c)`, then (with `drift`)
    /// `x ← x + h·v`, for each valid dynamic slot of `part`, whose spring
    /// forces are in `part.force`; true if a position turned non-finite.
    fn run(&self, part: &mut Part) -> bool {
        let range = part.base..part.base + part.pos.len();
        let inv_mass = &self.inv_mass[range.clone()];
        match self.extras {
            None => self.run_with(part, inv_mass, |_, springs| springs + Vec3A::ZERO, |_| 0.0),
            Some((accumulated, constant, damping)) => {
                let (accumulated, constant, damping) = (
                    &accumulated[range.clone()],
                    &constant[range.clone()],
                    &damping[range],
                );
                let first = self.first;
                self.run_with(
                    part,
                    inv_mass,
                    |j, springs| {
                        // As the scheduled kick sums them.
                        let external = if first { accumulated[j] } else { Vec3A::ZERO };
                        springs + (external + constant[j])
                    },
                    |j| damping[j],
                )
            }
        }
    }

    /// The kick (and drift) with each body's total force from `force(j,
    /// springs)` and its damping from `damping(j)`.
    #[inline(always)]
    fn run_with(
        &self,
        part: &mut Part,
        inv_mass: &[f32],
        force: impl Fn(usize, Vec3A) -> Vec3A,
        damping: impl Fn(usize) -> f32,
    ) -> bool {
        let (h, g) = (self.h, self.g);
        let mut diverged = false;
        let bodies = part
            .pos
            .iter_mut()
            .zip(part.vel.iter_mut())
            .zip(part.valid.iter_mut().zip(part.diverged.iter_mut()))
            .zip(part.force.iter().zip(inv_mass));
        for (j, (((x, v), (valid, bad)), (&springs, &w))) in bodies.enumerate() {
            // A body made fixed since the rebuild stays put until the next.
            if !*valid || w <= 0.0 {
                continue;
            }
            let velocity = kicked(*v, h, g, force(j, springs), w, damping(j));
            *v = velocity;
            if self.drift {
                diverged |= drift(h, x, velocity, valid, bad);
            }
        }
        diverged
    }
}

/// `x ← x + h·v`; true (and the slot marked) if the new position is not
/// finite, which is then not written.
#[inline(always)]
fn drift(h: f32, x: &mut Vec3A, v: Vec3A, valid: &mut bool, diverged: &mut bool) -> bool {
    match drifted(*x, h, v) {
        Some(position) => {
            *x = position;
            false
        }
        None => {
            *valid = false;
            *diverged = true;
            true
        }
    }
}

/// The drift alone, after the rods and contacts.
fn drift_all(h: f32, inv_mass: &[f32], part: &mut Part) -> bool {
    let mut any = false;
    let inv_mass = &inv_mass[part.base..part.base + part.pos.len()];
    let bodies = part
        .pos
        .iter_mut()
        .zip(part.vel.iter())
        .zip(part.valid.iter_mut().zip(part.diverged.iter_mut()))
        .zip(inv_mass);
    for (((x, &v), (valid, bad)), &w) in bodies {
        if *valid && w > 0.0 {
            any |= drift(h, x, v, valid, bad);
        }
    }
    any
}

/// Borrows what the parts of a pass write and read of `solver` (see
/// [`Slots`]), field by field, so that its other fields stay free.
macro_rules! slots {
    ($solver:expr) => {
        (
            &mut $solver.pos[..],
            &mut $solver.vel[..],
            &mut $solver.valid[..],
            &mut $solver.diverged[..],
            &$solver.force[..],
        )
    };
}

/// One pass of group `group` with step `h` on the solver's arrays: spring
/// forces, kick and damping, rods and contacts, drift. A large group with
/// several islands is split by islands over the compute task pool.
pub(crate) fn run_pass(
    solver: &mut SolverState,
    group: usize,
    h: f32,
    first: bool,
    g: Vec3A,
    settings: &PhysicsSettings,
    constraints: &ConstraintSettings,
) {
    let this = &solver.groups[group];
    let constrained = !(this.rods.is_empty() && this.rounds.is_empty());
    let pool = ComputeTaskPool::try_get()
        .filter(|_| this.slots.len() >= settings.parallel_threshold && this.islands.len() > 1)
        .map(|pool| &**pool);
    // One thread: the whole group as one part, with nothing allocated.
    let whole = Span {
        slots: this.slots.clone(),
        rows: this.rows.clone(),
    };
    let balanced;
    let parts = match pool {
        Some(pool) => {
            balanced = balance(&this.islands, workers(pool));
            &balanced[..]
        }
        None => core::slice::from_ref(&whole),
    };
    let base = this.slots.start;
    let check = solver.pass_has_invalid;

    // Spring forces, each part into its own bodies' slots.
    let springs = &solver.springs;
    let state = (&solver.pos[..], &solver.vel[..], &solver.valid[..]);
    let forces = pieces(&mut solver.force[base..], base, parts);
    let jobs = parts.iter().zip(forces);
    for_each_part(pool, jobs, |(part, force)| {
        add_spring_forces(
            &springs[part.rows.clone()],
            state,
            check,
            part.slots.start,
            force,
        );
        false
    });

    // Kick, and drift unless rods or contacts come between.
    let kick = Kick {
        h,
        g,
        first,
        drift: !constrained,
        extras: (!solver.extra_slots.is_empty()).then_some((
            &solver.accumulated[..],
            &solver.constant[..],
            &solver.damping[..],
        )),
        inv_mass: &solver.inv_mass,
    };
    let mut diverged = for_each_part(pool, split(slots!(solver), parts), |mut part| {
        kick.run(&mut part)
    });
    if constrained {
        solve_group(solver, group, h, constraints);
        let inv_mass = &solver.inv_mass;
        diverged |= for_each_part(pool, split(slots!(solver), parts), |mut part| {
            drift_all(h, inv_mass, &mut part)
        });
    }
    if diverged {
        solver.any_diverged = true;
        solver.pass_has_invalid = true;
        solver.request_report();
    }
}

/// What a part writes (positions, velocities, validity, divergence) and
/// reads (spring forces), for all slots.
type Slots<'a> = (
    &'a mut [Vec3A],
    &'a mut [Vec3A],
    &'a mut [bool],
    &'a mut [bool],
    &'a [Vec3A],
);

/// `slots`, cut into `parts`.
fn split<'a>(
    (pos, vel, valid, diverged, force): Slots<'a>,
    parts: &'a [Span],
) -> impl Iterator<Item = Part<'a>> {
    let base = parts.first().map_or(0, |part| part.slots.start);
    pieces(&mut pos[base..], base, parts)
        .zip(pieces(&mut vel[base..], base, parts))
        .zip(pieces(&mut valid[base..], base, parts))
        .zip(pieces(&mut diverged[base..], base, parts))
        .zip(parts)
        .map(|((((pos, vel), valid), diverged), part)| Part {
            base: part.slots.start,
            pos,
            vel,
            valid,
            diverged,
            force: &force[part.slots.clone()],
        })
}

/// Groups a group's islands into about `parts` parts of equal work (bodies
/// and springs), each a run of whole islands.
fn balance(islands: &[Span], parts: usize) -> Vec<Span> {
    let work = |span: &Span| span.slots.len() + span.rows.len();
    let total: usize = islands.iter().map(work).sum();
    let mut out: Vec<Span> = Vec::with_capacity(parts);
    let mut done = 0;
    let mut open: Option<Span> = None;
    for span in islands {
        let part = open.get_or_insert(Span {
            slots: span.slots.start..span.slots.start,
            rows: span.rows.start..span.rows.start,
        });
        part.slots.end = span.slots.end;
        part.rows.end = span.rows.end;
        done += work(span);
        if done * parts >= total * (out.len() + 1) {
            out.extend(open.take());
        }
    }
    out.extend(open);
    out
}

/// Runs `f` on each job, on the compute task pool when `pool` is given;
/// true if `f` returned true for any.
fn for_each_part<J: Send>(
    pool: Option<&TaskPool>,
    jobs: impl IntoIterator<Item = J>,
    f: impl Fn(J) -> bool + Sync,
) -> bool {
    match pool {
        Some(pool) => {
            let f = &f;
            pool.scope(|scope| {
                for job in jobs {
                    scope.spawn(async move { f(job) });
                }
            })
            .into_iter()
            .any(|diverged| diverged)
        }
        None => jobs.into_iter().fold(false, |any, job| f(job) | any),
    }
}

/// What the scatter writes per body.
type ScatterData = (
    &'static mut Body,
    &'static BodyIndex,
    &'static mut PositionHistory,
);

/// End of every step: notes when it ended (see
/// [`DrawnPositions`](crate::DrawnPositions)). After a dense step, also
/// writes each stepped body's new state from its slot and its
/// [`PositionHistory`] (where the fixed step started).
pub(crate) fn scatter(
    mut solver: ResMut<SolverState>,
    settings: Res<PhysicsSettings>,
    mut step: ResMut<PhysicsStep>,
    mut bodies: Query<ScatterData, Stepped>,
    ticks: SystemChangeTick,
) {
    step.bypass_change_detection().ended = ticks.this_run();
    if !solver.dense {
        return;
    }
    let state = &*solver;
    let (pos, vel, valid, diverged) = (&state.pos, &state.vel, &state.valid, &state.diverged);
    let dynamic = state.fixed_slots.start;
    let parallel = state.len() >= settings.parallel_threshold;
    for_each_maybe_par!(bodies, parallel, |(mut body, index, mut history): (
        Mut<Body>,
        &BodyIndex,
        Mut<PositionHistory>
    )| {
        let i = index.slot as usize;
        if i >= pos.len() {
            return;
        }
        // Written without change detection: nothing watches it, and a tick
        // per body per step is measurable.
        history.bypass_change_detection().previous = body.position;
        if i < dynamic {
            if valid[i] {
                let body = &mut *body;
                body.position = pos[i].into();
                body.velocity = vel[i].into();
            } else if diverged[i] {
                body.velocity = vel[i].into();
            }
        }
    });
    let synced = (!solver.pass_has_invalid).then(|| ticks.this_run());
    solver.group_synced.fill(synced);
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use bevy::ecs::schedule::ScheduleCleanupPolicy;
    use bevy::time::TimeUpdateStrategy;

    use bevy::prelude::*;

    use crate::prelude::*;
    use crate::solver::SolverState;

    /// Pushes every awake body before the step (taken by the first pass).
    fn swirl(mut bodies: Query<(&Body, &mut AccumulatedForce)>) {
        for (body, mut force) in &mut bodies {
            force.0 += Vec3::new(-body.position.y, body.position.x, 0.0) * 0.2;
        }
    }

    /// Every 50th step, kicks the hanging end of each rope: a write of
    /// `Body` between steps, which the gather copies into the slots.
    fn kick(mut step: Local<u32>, mut bodies: Query<&mut Body, With<ConstantForce>>) {
        *step += 1;
        if step.is_multiple_of(50) {
            for mut body in &mut bodies {
                body.velocity += Vec3::new(0.0, 3.0, 1.0);
            }
        }
    }

    /// Does nothing, but sits in the substep schedule.
    fn watch(_bodies: SubstepBodies<&Body>) {}

    /// Ropes with damping, a constant force, explicit and automatic
    /// substeps; a box of rods with round corners that falls on a ground
    /// plane, slides and goes to sleep; user forces before every step and a
    /// kick every 50.
    /// `watched` adds a system of the user's to `PhysicsSubstep`.
    fn app(watched: bool, parallel_threshold: usize) -> App {
        let mut app = App::new();
        app.add_plugins((MinimalPlugins, EulerPhysicsPlugin))
            .insert_resource(Time::<Fixed>::from_duration(Duration::from_secs_f32(
                1.0 / 60.0,
            )))
            .insert_resource(TimeUpdateStrategy::FixedTimesteps(1))
            .insert_resource(PhysicsSettings {
                parallel_threshold,
                ..default()
            })
            .add_systems(FixedUpdate, (swirl, kick).in_set(PhysicsSystems::Prepare));
        if watched {
            app.add_systems(
                PhysicsSubstep,
                watch.in_set(PhysicsSystems::SolveConstraints),
            );
        }
        let world = app.world_mut();
        for r in 0..6 {
            let x = r as f32;
            let mut prev = world.spawn(Body::fixed(Vec3::new(x, 0.0, 0.0))).id();
            for s in 1..=30 {
                let mut e = world.spawn(Body::new(1.0 + (s % 3) as f32).with_position(Vec3::new(
                    x + 0.02 * s as f32,
                    -0.1 * s as f32,
                    0.0,
                )));
                if s % 4 == 0 {
                    e.insert(Damping(0.7));
                }
                if s == 30 {
                    e.insert(ConstantForce(Vec3::new(2.0, 0.0, 0.5)));
                }
                match (r, s) {
                    (1, 1) => {
                        e.insert(Substeps(3));
                    }
                    (2, 1) => {
                        e.insert(AutoSubsteps);
                    }
                    _ => {}
                }
                let e = e.id();
                let k = if r == 2 { 40_000.0 } else { 1000.0 };
                world.spawn(Spring::new(prev, e, 0.1, k).with_damping(1.0));
                prev = e;
            }
        }
        let corners = [(-0.3, 1.0), (0.3, 1.0), (0.3, 1.5), (-0.3, 1.5)].map(|(x, y)| {
            world
                .spawn((
                    Body::new(1.0).with_position(Vec3::new(x - 3.0, y, 0.0)),
                    Radius(0.05),
                ))
                .id()
        });
        for (a, b) in [(0, 1), (1, 2), (2, 3), (3, 0), (0, 2)] {
            let (pa, pb) = (
                world.get::<Body>(corners[a]).unwrap().position,
                world.get::<Body>(corners[b]).unwrap().position,
            );
            world.spawn(DistanceConstraint::new(
                corners[a],
                corners[b],
                pa.distance(pb),
            ));
        }
        world.spawn(GroundPlane::horizontal(-0.5));
        app.update();
        app
    }

    type State = Vec<(Entity, [u32; 9], bool)>;

    /// Every body's position, velocity and drawn history, as bits, and
    /// whether it sleeps.
    fn state(app: &mut App) -> State {
        let world = app.world_mut();
        let mut all: State = world
            .query::<(Entity, &Body, &PositionHistory, Has<Sleeping>)>()
            .iter(world)
            .map(|(e, b, h, asleep)| {
                let bits =
                    [b.position, b.velocity, h.previous()].map(|v| v.to_array().map(f32::to_bits));
                (e, bits.concat().try_into().unwrap(), asleep)
            })
            .collect();
        all.sort_by_key(|(e, ..)| *e);
        all
    }

    /// The passes on the arrays alone give the same bits as the passes
    /// through the substep schedule, on one thread and split over the pool.
    #[test]
    fn dense_steps_match_scheduled_steps_bit_for_bit() {
        let mut apps = [app(false, usize::MAX), app(false, 1), app(true, usize::MAX)];
        for frame in 0..600 {
            for app in &mut apps {
                app.update();
            }
            let dense: Vec<bool> = apps
                .iter()
                .map(|app| app.world().resource::<SolverState>().dense)
                .collect();
            assert_eq!(dense, [true, true, false]);
            let [a, b, c] = apps.each_mut().map(state);
            assert!(a == b, "frame {frame}: dense on one thread vs split");
            assert!(a == c, "frame {frame}: dense vs scheduled");
        }
        let end = state(&mut apps[0]);
        // Nothing blew up or froze, the box went to sleep, and the
        // automatic rope took several passes: every path was exercised.
        let world = apps[0].world_mut();
        assert!(world.query::<&PhysicsError>().iter(world).next().is_none());
        assert!(
            end.iter()
                .all(|(_, bits, _)| bits.iter().all(|&b| f32::from_bits(b).is_finite()))
        );
        assert!(end.iter().filter(|(.., asleep)| *asleep).count() >= 4);
        let passes = world
            .query::<&Island>()
            .iter(world)
            .map(|island| island.substeps())
            .max();
        assert!(passes >= Some(2), "passes {passes:?}");
    }

    /// A system added to `PhysicsSubstep` at run time switches the steps to
    /// scheduled ones, its removal back to dense ones, and adding one again
    /// (to a schedule that has run) to scheduled ones; the run stays bit for
    /// bit on the course of a run scheduled throughout.
    #[test]
    fn switching_to_scheduled_steps_mid_run_changes_no_bit() {
        let mut switched = app(false, usize::MAX);
        let mut scheduled = app(true, usize::MAX);
        for frame in 0..400 {
            if frame == 100 || frame == 300 {
                switched.add_systems(
                    PhysicsSubstep,
                    watch.in_set(PhysicsSystems::SolveConstraints),
                );
            }
            if frame == 200 {
                let removed = switched.remove_systems_in_set(
                    PhysicsSubstep,
                    watch,
                    ScheduleCleanupPolicy::RemoveSystemsOnly,
                );
                assert_eq!(removed.ok(), Some(1));
            }
            switched.update();
            scheduled.update();
            let dense = switched.world().resource::<SolverState>().dense;
            assert_eq!(
                dense,
                frame < 100 || (200..300).contains(&frame),
                "frame {frame}"
            );
            assert!(
                state(&mut switched) == state(&mut scheduled),
                "frame {frame}"
            );
        }
    }
}

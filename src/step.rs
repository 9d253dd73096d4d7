//! The fixed step: [`run_step`], the one exclusive system in
//! [`PhysicsSystems::Step`](crate::PhysicsSystems::Step), runs the solver's
//! stages in this order (see [`solver`](crate::solver) for each):
//!
//! ```text
//! StepStart (single-threaded schedule, chained)
//!   check_settings        warn once about bad PhysicsSettings / SleepSettings
//!   resolve_frequencies   springs tuned by frequency follow their ends' masses
//!   readmit_fixed         bodies and joins whose PhysicsError was fixed come back
//!   readmit_limits        the same for distance and angle limits
//!   detect_wakes          what touched a sleeping island → wake requests
//!   rebuild               the index, only when something structural changed
//!   gather_written        bodies your code wrote since the last step → slots
//!   find_pairs            round bodies within reach of each other (broad phase)
//!   rebuild_touched       the index again at once, if islands no longer follow them
//!   find_pairs_again      the pairs on the new slots, after such a rebuild
//!   recall_forces         the forces the pairs held last step, by slot
//!   gather                constant forces, damping, planes → slots
//!   gather_forces         forces your code added since the last step → slots
//! for each group of islands with the same pass count k, k passes of h/k:
//!   Forces → Kick → Constraints → Drift       on the solver's arrays
//!   (with your systems of PhysicsSubstep between them; see below)
//! StepEnd (single-threaded schedule, chained)
//!   scatter               each Body and PositionHistory written once
//!   keep_forces           the pairs' mean forces into ContactForces
//!   report_invalid_bodies freeze and report bodies that went non-finite
//!   report_implicit       implicit solves that did not converge
//!   watch_energy          islands whose energy climbs with nothing pushing them
//!   update_sleep          resting islands fall asleep
//!   float_origin          the origin follows a FloatingOrigin, by whole cells
//! ```
//!
//! A pass runs its four stages directly when no system of yours sits in
//! [`PhysicsSubstep`]. Otherwise the step runs that schedule once per pass:
//! it holds the plugin's own systems, one per stage ([`BuiltIn`]), each
//! before the set of yours that follows its stage. Around a set that holds
//! systems of yours, the pass's bodies are copied out to their components
//! before it and read back after it ([`substep`](crate::solver::substep)),
//! so sets without systems of yours cost nothing.

use bevy::ecs::schedule::{InternedSystemSet, ScheduleLabel};
use bevy::prelude::*;

use crate::data::body::Stepped;
use crate::data::constraints::ConstraintSettings;
use crate::data::forces::Gravity;
use crate::data::islands::ImplicitSettings;
use crate::data::settings::{PhysicsSettings, PhysicsStep, PhysicsSubstep, SubstepSystems};
use crate::solver::SolverState;
use crate::solver::par::{KEEP_AWAKE, keep_awake, let_sleep, split_pool, splits};
use crate::solver::pass::{Pass, Stage};
use crate::solver::report::checked_gravity;
use crate::solver::substep::{CopyIn, CopyOut, copy_in, copy_out};

/// The wall time of the steps run since your code (the debug panel) last
/// took it, and how many: the plugin's own cost, apart from Bevy's
/// schedules around it. Two clock reads per step.
#[derive(Resource, Debug, Clone, Copy, Default)]
pub(crate) struct StepTimer {
    pub elapsed: core::time::Duration,
    pub steps: u32,
}

/// Present when the physics step runs in another schedule than
/// `FixedUpdate` (rollback): the `FixedUpdate` step then stands down.
#[derive(Resource, Debug, Clone, Copy, Default)]
pub(crate) struct SteppedElsewhere;

/// The plugin's bookkeeping at the start of a fixed step (single-threaded).
#[derive(ScheduleLabel, Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) struct StepStart;

/// The plugin's reports at the end of a fixed step (single-threaded).
#[derive(ScheduleLabel, Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) struct StepEnd;

/// The plugin's own systems in [`PhysicsSubstep`], chained with the sets of
/// yours: `Forces`, `AccumulateForces`, `Kick`, `IntegrateVelocities`,
/// `Constraints`, `SolveConstraints`, `Drift`, `IntegratePositions`, `End`.
#[derive(SystemSet, Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum BuiltIn {
    /// Spring forces.
    Forces,
    /// The kick and damping.
    Kick,
    /// Rods and contacts.
    Constraints,
    /// The drift.
    Drift,
    /// Reads back what the systems of `IntegratePositions` wrote.
    End,
}

impl BuiltIn {
    /// Each built-in set, then the set of yours that follows it.
    pub const CHAIN: [(BuiltIn, Option<SubstepSystems>); 5] = [
        (BuiltIn::Forces, Some(SubstepSystems::AccumulateForces)),
        (BuiltIn::Kick, Some(SubstepSystems::IntegrateVelocities)),
        (BuiltIn::Constraints, Some(SubstepSystems::SolveConstraints)),
        (BuiltIn::Drift, Some(SubstepSystems::IntegratePositions)),
        (BuiltIn::End, None),
    ];
}

/// Which of the four sets of [`PhysicsSubstep`] hold systems of yours (all
/// of them when one of yours is in none of the sets: it may run anywhere).
#[derive(Resource, Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct SubstepUsers {
    /// `after[k]`: systems of yours run right after stage `k`.
    pub after: [bool; 4],
    /// Worked out from the schedule as built (then kept until it changes).
    pub known: bool,
}

impl SubstepUsers {
    /// Whether the substep schedule must run at all.
    pub fn any(&self) -> bool {
        self.after.iter().any(|&a| a)
    }

    /// Whether the kick also drifts (nothing of yours between them).
    fn fuse(&self) -> bool {
        !(self.after[1] || self.after[2])
    }
}

/// The pass now running, for the built-in systems in [`PhysicsSubstep`].
#[derive(Resource, Debug, Default)]
pub(crate) struct CurrentPass(Option<Pass>);

/// [`PhysicsSystems::Step`]: [`StepStart`], the passes of each group of
/// islands, then [`StepEnd`].
pub(crate) fn run_step(world: &mut World) {
    let start = bevy::platform::time::Instant::now();
    // A scene that split its last step over the pool will again: wake the
    // pool's threads now, so that they are up when the passes start.
    let splits_before = splits();
    if let Some((pool, threads)) =
        split_pool().filter(|_| world.resource::<SolverState>().split_last_step)
    {
        keep_awake(pool, threads, KEEP_AWAKE);
    }
    world.run_schedule(StepStart);
    let users = substep_users(world);
    *world.resource_mut::<SubstepUsers>() = users;
    let timestep = world.resource::<Time<Fixed>>().timestep();
    let gravity = world.resource::<Gravity>().0;
    let g = checked_gravity(gravity, &mut world.resource_mut::<SolverState>());
    world.resource_mut::<SolverState>().gravity = g;
    let settings = *world.resource::<PhysicsSettings>();
    let base = Pass {
        group: 0,
        h: 0.0,
        index: 0,
        passes: 1,
        g,
        constraints: *world.resource::<ConstraintSettings>(),
        parallel_threshold: settings.parallel_threshold,
        cg: world.resource::<ImplicitSettings>().cg(),
    };
    let groups = {
        let mut solver = world.resource_mut::<SolverState>();
        let groups = solver.groups.len();
        solver.copied_out.clear();
        solver.copied_out.resize(groups, false);
        groups
    };
    for group in 0..groups {
        // (At most one per nanosecond of the timestep: the rebuild, which
        // runs whenever the timestep changes, clamps it.)
        let passes = world.resource::<SolverState>().groups[group].passes;
        // `timestep / passes` in whole nanoseconds, as `Time<Fixed>` would
        // hold it: a pass of h/k is then the same as a fixed step of h/k.
        let dt = if passes == 1 {
            timestep.as_secs_f32()
        } else {
            (timestep / passes).as_secs_f32()
        };
        for index in 0..passes {
            let pass = Pass {
                group,
                h: dt,
                index,
                passes,
                ..base
            };
            let mut step = world.resource_mut::<PhysicsStep>();
            *step = PhysicsStep {
                dt,
                pass: index,
                passes,
                group: group as u32,
                ..*step
            };
            if users.any() {
                world.resource_mut::<CurrentPass>().0 = Some(pass);
                world.run_schedule(PhysicsSubstep);
            } else {
                pass.run_all(&mut world.resource_mut::<SolverState>());
            }
        }
    }
    world.resource_mut::<CurrentPass>().0 = None;
    world.run_schedule(StepEnd);
    let_sleep();
    world.resource_mut::<SolverState>().split_last_step = splits() != splits_before;
    if let Some(mut timer) = world.get_resource_mut::<StepTimer>() {
        // (Nothing takes it in an app without the debug panel.)
        timer.elapsed = timer.elapsed.saturating_add(start.elapsed());
        timer.steps = timer.steps.saturating_add(1);
    }
}

/// Finds which sets of [`PhysicsSubstep`] hold systems of yours: the
/// schedule's systems outside the plugin's [`BuiltIn`] sets, set by set.
/// Kept from the last step while the schedule is unchanged (only the step
/// runs it, so it is changed exactly when systems or sets were added).
fn substep_users(world: &mut World) -> SubstepUsers {
    let last = *world.resource::<SubstepUsers>();
    let changed = world
        .get_resource::<Schedules>()
        .and_then(|schedules| schedules.get(PhysicsSubstep))
        .is_none_or(Schedule::is_changed);
    if last.known && !changed {
        return last;
    }
    world
        .try_schedule_scope(PhysicsSubstep, |world, schedule| {
            // Builds the schedule only when it changed since it last ran.
            if let Err(error) = schedule.initialize(world) {
                warn!("bevy_euler_physics: the PhysicsSubstep schedule does not build: {error}");
            }
            let built_in: usize = BuiltIn::CHAIN
                .iter()
                .map(|&(set, _)| systems_in(schedule, set.intern()))
                .sum();
            let total = schedule.graph().systems.len();
            if total <= built_in {
                return SubstepUsers {
                    known: true,
                    ..default()
                };
            }
            let mut after = [false; 4];
            let mut grouped = 0;
            for (k, (_, set)) in BuiltIn::CHAIN[..4].iter().enumerate() {
                let n = set.map_or(0, |set| systems_in(schedule, set.intern()));
                after[k] = n > 0;
                grouped += n;
            }
            // A system of yours in none of the four sets may run between
            // any two stages.
            if total > built_in + grouped {
                after = [true; 4];
            }
            SubstepUsers { after, known: true }
        })
        .unwrap_or_default()
}

/// How many systems `set` holds in `schedule` (0 before it was built).
fn systems_in(schedule: &Schedule, set: InternedSystemSet) -> usize {
    schedule
        .graph()
        .systems_in_set(set)
        .map_or(0, |systems| systems.len())
}

/// The plugin's system for stage `K` of a pass in [`PhysicsSubstep`]
/// (`K = 4`: after the last stage): reads back what the set of yours
/// before it wrote, runs the stage, and copies the bodies out for the set
/// of yours after it.
pub(crate) fn built_in<const K: usize>(
    world: &mut World,
    out: &mut QueryState<CopyOut, Stepped>,
    into: &mut QueryState<CopyIn, Stepped>,
) {
    let Some(pass) = world.resource::<CurrentPass>().0 else {
        return;
    };
    let users = *world.resource::<SubstepUsers>();
    if K > 0 {
        let read_bodies = users.after[K - 1];
        // Forces added anywhere in the pass are taken for the kick.
        let take_forces = K == 1;
        copy_in(world, into, pass.group, (read_bodies, take_forces));
    }
    if let Some(&stage) = Stage::ALL.get(K) {
        pass.run(
            &mut world.resource_mut::<SolverState>(),
            stage,
            users.fuse(),
        );
        if users.after[K] {
            copy_out(world, out, pass.group);
        }
    }
}

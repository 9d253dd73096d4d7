//! One pass of a group of islands on the solver's arrays, in four stages:
//! spring forces, the kick (with Padé damping), rods and contacts, the
//! drift. The step runs them in order, directly or (when systems of yours
//! sit in `PhysicsSubstep`) from the plugin's systems in that schedule,
//! with the pass's bodies copied out to their components around your
//! systems (see [`substep`](super::substep)). The arithmetic is the same
//! either way.
//!
//! Large groups split their islands over the step's threads in parts of
//! whole islands, several per thread, taken by whichever thread is free
//! (see [`parts`](crate::kernels::parts) and
//! [`for_each_part`](crate::solver::par::for_each_part)), for the spring
//! forces; the kick and the drift, which treat each body alone,
//! split a large group into even runs of slots, even when it is one island
//! (a pile); and the rounds solve a large group's pair contacts in blocks
//! that threads take at once (see [`batches`](crate::kernels::batches)).
//!
//! A group of springs alone (no rods, limits or round bodies, not
//! implicit) with nothing of yours in `PhysicsSubstep` runs each pass as
//! one sweep ([`Pass::sweep`]): each part's islands, run by run, forces
//! then kick and drift, one split over the threads for the whole pass. A large
//! group of one island keeps the stages, so that its kick still splits.

use core::ops::Range;
use core::sync::atomic::{AtomicUsize, Ordering};

use std::sync::Mutex;

use bevy::math::Vec4;
use bevy::prelude::*;
use bevy::tasks::TaskPool;

use crate::data::constraints::ConstraintSettings;
use crate::kernels::batches::{Batch, Each, OneThread, Spread};
use crate::kernels::constraints::{
    Ahead, Bodies, Contact, Joints, Movers, Obstacles, PairBatches, PairContacts, PairPart,
    PairRow, PlaneRow, Relaxed, RoundRow, Rounds, Warm, WarmStart, aim_pairs, find_contacts,
    find_contacts_of, find_obstacle_contacts, find_pair_contacts, find_pair_contacts_in_parts,
    keep_obstacle_warm, solve,
};
use crate::kernels::implicit::{Cg, Island, State, plan, solve_island};
use crate::kernels::integrate::{Kick, Part, drift_all};
use crate::kernels::kept::Kept;
use crate::kernels::lanes::WIDTH;
use crate::kernels::parts::{Span, balance, pieces};
use crate::kernels::springs::{PartEnds, States, add_spring_forces};
use crate::solver::SolverState;
use crate::solver::par::{
    Done, JOBS_PER_THREAD, each_over, for_each_part, let_sleep, run_size, split_pool, wait_for,
};

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

/// The [`Kick`] of pass `$pass` (with the drift if `$drift`), borrowing
/// of `$solver` only the fields it reads, so that its slots stay free.
macro_rules! kick {
    ($pass:expr, $solver:expr, $drift:expr) => {
        Kick {
            h: $pass.h,
            g: $pass.g,
            drift: $drift,
            extras: (!$solver.extra_slots.is_empty()).then_some((
                &$solver.pending[..],
                &$solver.constant[..],
                &$solver.damping[..],
            )),
            inv_mass: &$solver.inv_mass,
        }
    };
}

/// What a pass needs besides the solver's arrays.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Pass {
    /// The group of islands it steps.
    pub group: usize,
    /// Its step size.
    pub h: f32,
    /// Which pass of the group's step it is, from 0, and how many there
    /// are.
    pub index: u32,
    pub passes: u32,
    /// Gravity, as used (finite).
    pub g: Vec3A,
    pub constraints: ConstraintSettings,
    /// Groups at least this large split over threads.
    pub parallel_threshold: usize,
    /// How implicit islands solve.
    pub cg: Cg,
}

/// The four stages of a pass, in order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Stage {
    /// Spring forces into `SolverState::force` (implicit groups: nothing;
    /// their solve in the kick computes them).
    Forces,
    /// `v ← (v + h·(g + w·F)) / (1 + h·c)`.
    Kick,
    /// Rods and contacts (with planes and between bodies) on the new
    /// velocities.
    Constraints,
    /// `x ← x + h·v`.
    Drift,
}

impl Stage {
    /// The stages in the order a pass runs them.
    pub const ALL: [Stage; 4] = [Stage::Forces, Stage::Kick, Stage::Constraints, Stage::Drift];
}

impl Pass {
    /// Whether the group has rods or round bodies.
    fn constrained(&self, solver: &SolverState) -> bool {
        let group = &solver.groups[self.group];
        !(group.rods.is_empty()
            && group.angles.is_empty()
            && group.rounds.is_empty()
            && group.pairs.is_empty()
            && self.ties(solver).is_empty())
    }

    /// The group's ties: a run of `ObstacleSet::ties` (sorted by slot).
    fn ties(&self, solver: &SolverState) -> Range<usize> {
        let (ties, slots) = (&solver.obstacles.ties, &solver.groups[self.group].slots);
        let start = ties.partition_point(|tie| (tie.slot as usize) < slots.start);
        let end = ties.partition_point(|tie| (tie.slot as usize) < slots.end);
        start..end
    }

    /// Runs `stage`. With `fuse`, the kick also drifts each body (one loop
    /// instead of two), and the drift stage then does nothing; the caller
    /// fuses only when nothing is to run between the two (no rods or
    /// contacts, no system of yours).
    pub fn run(&self, solver: &mut SolverState, stage: Stage, fuse: bool) {
        // The forces of every dynamic slot, which only this path keeps
        // (the sweep sums a run's at a time): allocated at its first use
        // after a rebuild, which clears it.
        let dynamic = solver.fixed_slots.start;
        if solver.force.len() != dynamic {
            solver.force.resize(dynamic, Vec3A::ZERO);
        }
        let fused = fuse && !self.constrained(solver);
        match stage {
            Stage::Forces => self.forces(solver),
            Stage::Kick => self.kick(solver, fused),
            Stage::Constraints => self.solve_constraints(solver),
            Stage::Drift if !fused => self.drift(solver),
            Stage::Drift => {}
        }
    }

    /// The whole pass, with no system of yours in it. A group of springs
    /// alone (explicit, no rods or contacts) goes through [`sweep`](Self::sweep);
    /// others stage by stage.
    pub fn run_all(&self, solver: &mut SolverState) {
        let group = &solver.groups[self.group];
        if !group.implicit && !self.constrained(solver) {
            let cut = self.parts(solver);
            if !self.one_large_island(solver, &cut) {
                self.sweep(solver, &cut);
                return;
            }
        }
        for stage in Stage::ALL {
            self.run(solver, stage, true);
        }
    }

    /// Whether the group is large enough to split over threads but cannot
    /// be cut into parts of whole islands (one island): stage by stage, its
    /// kick and drift still split body by body, where a sweep would run it
    /// all on one thread.
    /// `cut` is how [`parts`](Self::parts) cuts it.
    fn one_large_island(&self, solver: &SolverState, cut: &Parts) -> bool {
        matches!(cut, Parts::Whole(_)) && self.body_pool(solver).is_some()
    }

    /// A pass of a group of springs alone: each part of the group (runs of
    /// whole islands; see [`parts`](Self::parts)) takes its islands in runs
    /// of at least [`SWEEP`] slots, each run's spring forces (into a buffer
    /// the part's runs share, rather than the solver's `force`), then its
    /// kick and drift, while its bodies are still in that thread's cache. One
    /// job per part for the whole pass. Each body's forces are summed in
    /// row order and kicked as stage by stage, so the bits are the same.
    /// `cut` is how [`parts`](Self::parts) cuts the group.
    ///
    /// A part's springs read its own slots and the fixed ones
    /// ([`PartEnds`]): every end outside a part is a fixed slot (islands
    /// share no spring), and no pass writes a fixed slot.
    fn sweep(&self, solver: &mut SolverState, cut: &Parts) {
        let check = solver.pass_has_invalid;
        let kick = kick!(self, solver, true);
        let (springs, islands) = (&solver.springs[..], &solver.groups[self.group].islands[..]);
        let parts = cut.spans();
        let fixed = solver.fixed_slots.start;
        let (pos, fixed_pos) = solver.pos.split_at_mut(fixed);
        let (vel, fixed_vel) = solver.vel.split_at_mut(fixed);
        let (valid, fixed_valid) = solver.valid.split_at_mut(fixed);
        let fixed_state = States::new(fixed_pos, fixed_vel, fixed_valid);
        let base = parts.first().map_or(0, |part| part.slots.start);
        // One run's forces at a time, in a buffer that the part's runs
        // share (and later passes keep), which stays in cache; the
        // solver's `force` is not used.
        let buffers = &mut solver.sweep_forces;
        if buffers.len() < parts.len() {
            buffers.resize_with(parts.len(), Vec::new);
        }
        let jobs = pieces(&mut pos[base..], base, parts)
            .zip(pieces(&mut vel[base..], base, parts))
            .zip(pieces(&mut valid[base..], base, parts))
            .zip(pieces(&mut solver.diverged[base..], base, parts))
            .zip(buffers.iter_mut())
            .zip(parts);
        let diverged = for_each_part(cut.pool(), jobs, |job| {
            let (((((pos, vel), valid), diverged), forces), span) = job;
            let mut any = false;
            let own = islands
                .iter()
                .skip_while(|island| island.slots.start < span.slots.start)
                .take_while(|island| island.slots.end <= span.slots.end);
            for run in runs(own, SWEEP) {
                let local = run.slots.start - span.slots.start..run.slots.end - span.slots.start;
                let ends = PartEnds {
                    base: span.slots.start,
                    own: States::new(pos, vel, valid),
                    fixed,
                    fixed_state,
                };
                if forces.len() < local.len() {
                    forces.resize(local.len(), Vec3A::ZERO);
                }
                let force = &mut forces[..local.len()];
                add_spring_forces(&springs[run.rows], ends, check, run.slots.start, force);
                any |= kick.run(&mut Part {
                    base: run.slots.start,
                    pos: &mut pos[local.clone()],
                    vel: &mut vel[local.clone()],
                    valid: &mut valid[local.clone()],
                    diverged: &mut diverged[local],
                    force,
                });
            }
            any
        });
        self.spend_pending(solver);
        if diverged {
            mark_diverged(solver);
        }
    }

    /// How the group is cut for this pass: into runs of whole islands over
    /// the compute task pool when it is large and has several islands, or
    /// else as one part on this thread (nothing allocated).
    fn parts(&self, solver: &SolverState) -> Parts {
        self.parts_from(solver, self.parallel_threshold)
    }

    /// How the group's bodies are cut for a stage that treats each body
    /// alone (the kick, the drift): into even runs of slots over the
    /// compute task pool when the group is large, even if it is one
    /// island, or else as one part on this thread.
    fn body_parts(&self, solver: &SolverState) -> Parts {
        let slots = solver.groups[self.group].slots.clone();
        match self.body_pool(solver) {
            Some((pool, threads)) => {
                let parts = threads * JOBS_PER_THREAD;
                let spans = (0..parts)
                    .map(|i| Span {
                        slots: slots.start + slots.len() * i / parts
                            ..slots.start + slots.len() * (i + 1) / parts,
                        rows: 0..0,
                    })
                    .collect();
                Parts::Split(pool, threads, spans)
            }
            None => Parts::Whole(Span { slots, rows: 0..0 }),
        }
    }

    /// The pool and its thread count when [`body_parts`](Self::body_parts)
    /// splits the group (it is large enough), without cutting it.
    fn body_pool(&self, solver: &SolverState) -> Option<(&'static TaskPool, usize)> {
        let slots = solver.groups[self.group].slots.len();
        split_pool().filter(|_| slots >= self.parallel_threshold)
    }

    /// [`parts`](Self::parts), for groups of at least `threshold` slots.
    fn parts_from(&self, solver: &SolverState, threshold: usize) -> Parts {
        let group = &solver.groups[self.group];
        let whole = Span {
            slots: group.slots.clone(),
            rows: group.rows.clone(),
        };
        match split_pool().filter(|_| group.slots.len() >= threshold && group.islands.len() > 1) {
            Some((pool, threads)) => Parts::Split(
                pool,
                threads,
                balance(&group.islands, threads * JOBS_PER_THREAD),
            ),
            None => Parts::Whole(whole),
        }
    }

    /// Spring forces, each part into its own bodies' slots (an implicit
    /// group's solve computes its own, in the kick).
    fn forces(&self, solver: &mut SolverState) {
        if solver.groups[self.group].implicit {
            return;
        }
        let cut = self.parts(solver);
        let (pool, parts) = (cut.pool(), cut.spans());
        let base = solver.groups[self.group].slots.start;
        let check = solver.pass_has_invalid;
        let springs = &solver.springs;
        let state = States::new(&solver.pos, &solver.vel, &solver.valid);
        let forces = pieces(&mut solver.force[base..], base, parts);
        for_each_part(pool, parts.iter().zip(forces), |(part, force)| {
            add_spring_forces(
                &springs[part.rows.clone()],
                state,
                check,
                part.slots.start,
                force,
            );
            false
        });
    }

    /// The kick (and, `fused`, the drift); forces taken for this kick are
    /// then spent.
    fn kick(&self, solver: &mut SolverState, fused: bool) {
        if solver.groups[self.group].implicit {
            self.implicit(solver);
        }
        let cut = self.body_parts(solver);
        let (pool, parts) = (cut.pool(), cut.spans());
        let kick = kick!(self, solver, fused);
        let diverged = for_each_part(pool, split_slots(slots!(solver), parts), |mut part| {
            kick.run(&mut part)
        });
        self.spend_pending(solver);
        if diverged {
            mark_diverged(solver);
        }
    }

    /// For a group stepped implicitly: each island's backward-Euler
    /// velocity change `Δv` (see [`implicit`](crate::kernels::implicit)),
    /// written into its bodies' spring forces as the force that gives that
    /// change in the kick, `m·(Δv/h − g)` less the other forces. Islands
    /// are independent: large groups split them over threads, and each
    /// island's bits are the same on any thread.
    fn implicit(&self, solver: &mut SolverState) {
        self.plan_islands(solver);
        // An implicit body costs several explicit passes: split sooner.
        let cut = self.parts_from(solver, (self.parallel_threshold / 16).max(1));
        let (pool, parts) = (cut.pool(), cut.spans());
        let mut buffers = core::mem::take(&mut solver.implicit);
        buffers.resize_with(buffers.len().max(parts.len()), Default::default);
        let group = &solver.groups[self.group];
        let base = group.slots.start;
        let state = State {
            pos: &solver.pos,
            vel: &solver.vel,
            inv_mass: &solver.inv_mass,
            valid: solver.pass_has_invalid.then_some(&solver.valid[..]),
            extra: (!solver.extra_slots.is_empty())
                .then_some((&solver.pending[..], &solver.constant[..])),
            g: self.g,
            h: self.h,
        };
        let (islands, plans, rows) = (&group.islands, &group.plans, &solver.springs[..]);
        let forces = pieces(&mut solver.force[base..], base, parts);
        let jobs = parts.iter().zip(forces).zip(buffers.iter_mut());
        for_each_part(pool, jobs, |((part, force), (scratch, trouble))| {
            trouble.clear();
            // Islands are in slot order: this part's are one run of them.
            let own = islands
                .iter()
                .zip(plans)
                .skip_while(|(span, _)| span.slots.start < part.slots.start)
                .take_while(|(span, _)| span.slots.end <= part.slots.end);
            for (span, plan) in own {
                let island = Island {
                    base: span.slots.start,
                    n: span.slots.len(),
                    rows: &rows[span.rows.clone()],
                };
                let local = span.slots.start - part.slots.start..span.slots.end - part.slots.start;
                let solved =
                    solve_island(&island, &state, (self.cg, plan), scratch, &mut force[local]);
                if !solved.is_ok() {
                    trouble.push((island.base as u32, solved));
                }
            }
            false
        });
        for (_, trouble) in &buffers[..parts.len()] {
            solver.implicit_trouble.extend_from_slice(trouble);
        }
        solver.implicit = buffers;
    }

    /// Makes each island's plan of this implicit group, once per layout
    /// (and again if the method or the preconditioner changes).
    fn plan_islands(&self, solver: &mut SolverState) {
        let group = &mut solver.groups[self.group];
        let key = (self.cg.method, self.cg.multigrid);
        if group.planned == Some(key) && group.plans.len() == group.islands.len() {
            return;
        }
        group.plans = group
            .islands
            .iter()
            .map(|span| {
                let island = Island {
                    base: span.slots.start,
                    n: span.slots.len(),
                    rows: &solver.springs[span.rows.clone()],
                };
                plan(&island, self.cg)
            })
            .collect();
        group.planned = Some(key);
    }

    /// Clears the forces the kick took, in this group's slots.
    fn spend_pending(&self, solver: &mut SolverState) {
        if solver.pending_slots.is_empty() {
            return;
        }
        let slots = solver.groups[self.group].slots.clone();
        let pending = &mut solver.pending;
        solver.pending_slots.retain(|&slot| {
            let spent = slots.contains(&(slot as usize));
            if spent {
                pending[slot as usize] = Vec3A::ZERO;
            }
            !spent
        });
    }

    /// Whether the group has anything for the constraints stage; at the
    /// step's first pass, keeps where its bodies start the step (the kick
    /// moved none) for the rest test if it has and may sleep
    /// (`Group::start`).
    fn keep_start(&self, solver: &mut SolverState) -> bool {
        let constrained = self.constrained(solver);
        if self.index == 0 {
            let group = &mut solver.groups[self.group];
            group.start.clear();
            if constrained && group.may_sleep {
                group
                    .start
                    .extend_from_slice(&solver.pos[group.slots.clone()]);
            }
        }
        constrained
    }

    /// The group's rods and contacts, on the new velocities.
    fn solve_constraints(&self, solver: &mut SolverState) {
        if !self.keep_start(solver) {
            return;
        }
        // The group's ties, their points where this pass starts.
        // (A point whose body gives way moves on with what it gained so
        // far.)
        let tied = self.ties(solver);
        let since = self.index as f32 * self.h;
        let set = &mut solver.obstacles;
        for tie in &mut set.ties[tied.clone()] {
            let gained = set
                .yields
                .get(tie.mover as usize)
                .map_or(Vec3A::ZERO, |y| y.at(tie.arm));
            tie.at = tie.anchor + since * (tie.velocity + gained);
            if let Some(mover) = set.movers.get(tie.mover as usize) {
                tie.lay_out(mover, solver.inv_mass[tie.slot as usize]);
            }
        }
        let group = &solver.groups[self.group];
        let settings = &self.constraints;
        let rounds = Rounds {
            h: self.h,
            iterations: settings.iterations,
            beta: settings.bias(),
            bounce_threshold: settings.bounce_threshold,
        };
        let (rods, angles, round_rows, pairs) = (
            &solver.rods[group.rods.clone()],
            &solver.angles[group.angles.clone()],
            &solver.rounds[group.rounds.clone()],
            &solver.pairs[group.pairs.clone()],
        );
        let mut bodies = Bodies {
            pos: &solver.pos,
            vel: &mut solver.vel,
            valid: &solver.valid,
            inv_mass: &solver.inv_mass,
        };
        let (contacts, pair_contacts, pair_parts) = (
            &mut solver.contacts,
            &mut solver.pair_contacts,
            &mut solver.pair_parts,
        );
        let planes = solver.planes.len();
        let warm = WarmStart {
            planes: &mut solver.plane_warm[group.rounds.start * planes..group.rounds.end * planes],
        };
        // A large group's work splits over the threads; joined batches of
        // contacts run at once (a contact costs about what two bodies'
        // kicks do; a row is a group of four).
        let spread = Threads {
            pool: split_pool().filter(|_| group.slots.len() >= self.parallel_threshold),
            min: (self.parallel_threshold / 2 / WIDTH).max(1),
        };
        let planes = &solver.planes[..];
        let parts = &mut solver.plane_parts;
        let on_planes = (round_rows, planes, &mut *warm.planes);
        plane_contacts(spread.pool, on_planes, &bodies, &rounds, parts, contacts);
        // Obstacles where they are at this pass's start in their sweep.
        let set = &mut solver.obstacles;
        set.place(self.index as f32 / self.passes as f32);
        let obstacles = Obstacles {
            placed: &set.placed,
            vertices: &set.vertices,
            meshes: &set.meshes,
            speed: set.speed,
            grid: &set.grid,
            movers: &set.movers,
            yields: &set.yields,
            ties: &set.ties,
        };
        let obstacle_warm = &mut set.warm[self.group];
        find_obstacle_contacts(
            round_rows,
            obstacles,
            &bodies,
            &rounds,
            obstacle_warm,
            contacts,
        );
        // The pair contacts are found at the group's first pass for the
        // whole step, and turned to each pass's positions; on one thread,
        // all blocks are laid out as one run.
        if self.index == 0 {
            let ahead = self.ahead(&solver.kept);
            let batches = &group.pair_batches;
            let found = (&mut *pair_contacts, &mut *pair_parts);
            step_pair_contacts(spread.pool, (pairs, batches), &bodies, ahead, found);
        }
        // Each group of contacts is aimed alone: a large group's split over
        // the threads in even runs.
        let check = solver.pass_has_invalid;
        let groups = &mut pair_contacts.lanes.groups[..];
        let size = run_size(spread.pool, groups.len());
        for_each_part(spread.pool, groups.chunks_mut(size), |run| {
            aim_pairs(run, &bodies, &rounds, check);
            false
        });
        let mut before = core::mem::take(&mut solver.relaxed);
        let slots = group.slots.clone();
        let relaxed = Relaxed {
            slots: slots.clone(),
            before: &mut before,
            held: &mut solver.held,
        };
        let mut movers = Movers {
            movers: &set.movers,
            yields: &mut set.yields,
            ties: &mut set.ties[tied.clone()],
        };
        let relaxing = solve(
            Joints { rods, angles },
            (contacts, &mut movers),
            PairBatches {
                found: pair_contacts,
                spread: &spread,
            },
            &mut bodies,
            &rounds,
            warm,
            relaxed,
        );
        keep_obstacle_warm(contacts, obstacle_warm);
        solver.obstacles.react(contacts, &solver.inv_mass);
        solver.obstacles.pull(tied, &solver.inv_mass);
        self.hold(solver, spread.pool);
        // What the position bias asked for moves the body, not its speed:
        // each body whose velocity the relaxing round changed (a large
        // group's in even runs of slots at once).
        if relaxing {
            let (pos, vel) = (&mut solver.pos[slots.clone()], &solver.vel[slots]);
            let size = run_size(spread.pool, pos.len());
            let runs = pos
                .chunks_mut(size)
                .zip(vel.chunks(size))
                .zip(before.chunks(size));
            let bits = |v: Vec3A| v.to_array().map(f32::to_bits);
            for_each_part(spread.pool, runs, |((pos, vel), before)| {
                for ((pos, &vel), &biased) in pos.iter_mut().zip(vel).zip(before) {
                    if bits(biased) != bits(vel) {
                        *pos += self.h * (biased - vel);
                    }
                }
                false
            });
        }
        solver.relaxed = before;
    }

    /// What the group's pair contacts are found for at its first pass: the
    /// whole step, starting from the share of `kept` the settings carry.
    fn ahead<'a>(&self, kept: &'a Kept) -> Ahead<'a> {
        Ahead {
            span: self.h * self.passes as f32,
            h: self.h,
            kept,
            share: self.constraints.warm_share(),
        }
    }

    /// The impulses the group's pair contacts gave in this pass, added to
    /// the step's sums (a large group's in even runs at once); at the
    /// group's last pass, the mean force each pair pushed with over the
    /// step into `SolverState::holding`, for the next step to start from
    /// (see [`held`](super::held)).
    fn hold(&self, solver: &mut SolverState, pool: Option<(&'static TaskPool, usize)>) {
        let (groups, sums) = (&solver.pair_contacts.lanes.groups, &mut solver.impulse_sums);
        if self.index == 0 {
            sums.clear();
            sums.resize(groups.len(), [Vec4::ZERO; WIDTH]);
        }
        let size = run_size(pool, groups.len());
        let runs = groups.chunks(size).zip(sums.chunks_mut(size));
        for_each_part(pool, runs, |(groups, sums)| {
            for (group, sum) in groups.iter().zip(sums) {
                group.add_impulses(sum);
            }
            false
        });
        if self.index + 1 == self.passes {
            let per_second = 1.0 / (self.h * self.passes as f32);
            let holding = &mut solver.holding;
            holding.reserve(groups.len() * WIDTH);
            for (group, sum) in groups.iter().zip(sums.iter()) {
                group.held(sum, per_second, holding);
            }
        }
    }

    /// The drift alone, after the rods and contacts.
    fn drift(&self, solver: &mut SolverState) {
        let cut = self.body_parts(solver);
        let (pool, parts) = (cut.pool(), cut.spans());
        let (h, inv_mass) = (self.h, &solver.inv_mass[..]);
        let diverged = for_each_part(pool, split_slots(slots!(solver), parts), |mut part| {
            drift_all(h, inv_mass, &mut part)
        });
        if diverged {
            mark_diverged(solver);
        }
    }
}

/// The plane contacts of `rows` (see [`find_contacts`]) into `contacts`;
/// with a pool, runs of rows at once, each into its own list of `parts`,
/// laid end to end in order (the contacts of one call).
fn plane_contacts(
    pool: Option<(&'static TaskPool, usize)>,
    (rows, planes, warm): (&[RoundRow], &[PlaneRow], &mut [Warm]),
    bodies: &Bodies,
    rounds: &Rounds,
    parts: &mut Vec<Vec<Contact>>,
    contacts: &mut Vec<Contact>,
) {
    let Some((pool, threads)) = pool.filter(|_| !planes.is_empty()) else {
        find_contacts(rows, planes, bodies, rounds, warm, contacts);
        return;
    };
    let size = run_size(Some((pool, threads)), rows.len());
    parts.resize_with(rows.len().div_ceil(size), Vec::new);
    // Each run with its rows' warm entries.
    let warm = warm.chunks_mut(size * planes.len());
    let jobs = parts
        .iter_mut()
        .zip(rows.chunks(size))
        .zip(warm)
        .enumerate();
    for_each_part(Some((pool, threads)), jobs, |(k, ((part, run), warm))| {
        part.clear();
        find_contacts_of(run, k * size, planes, bodies, rounds, warm, part);
        false
    });
    contacts.clear();
    for part in parts.iter() {
        contacts.extend_from_slice(part);
    }
}

/// The pair contacts of the step (see [`find_pair_contacts`]) into
/// `found`; with a pool, runs of batches found and laid out in groups at
/// once, each in its part, then laid end to end (see
/// [`find_pair_contacts_in_parts`]); on one thread, all blocks laid out as
/// one run.
fn step_pair_contacts(
    pool: Option<(&'static TaskPool, usize)>,
    (pairs, batches): (&[PairRow], &[Batch]),
    bodies: &Bodies,
    ahead: Ahead,
    (found, parts): (&mut PairContacts, &mut Vec<Mutex<PairPart>>),
) {
    let Some((pool, threads)) = pool else {
        find_pair_contacts(pairs, batches, bodies, ahead, true, found);
        return;
    };
    let each = |n, f: &(dyn Fn(usize) + Sync)| each_over(Some((pool, threads)), n, f);
    let runs = (threads * JOBS_PER_THREAD, &each as Each);
    find_pair_contacts_in_parts(pairs, batches, bodies, ahead, runs, parts, found);
}

/// Runs joined batches of contacts at once on the compute task pool's
/// threads when a round holds at least `min` contacts: tasks take the
/// batches in order, and a batch waits until every batch before its own
/// stage is done. A task that starts late finds less to do, never a batch
/// that waits for it; a batch that panics still counts as done, so the
/// others finish and the scope passes the panic on.
struct Threads {
    /// The pool and how many tasks it takes (see [`split_pool`]).
    pool: Option<(&'static TaskPool, usize)>,
    min: usize,
}

// SAFETY: each batch is taken once (`next`), and a batch starts only when
// every batch before its stage is done (`done`, counted in order: a batch
// of a later stage cannot start, so cannot finish, before that).
unsafe impl Spread for Threads {
    fn spread(&self, batches: &[Batch], f: &(dyn Fn(Range<usize>) + Sync)) {
        let total: usize = batches.iter().map(|batch| batch.rows.len()).sum();
        // The widest stage: how many tasks can work at once.
        let (mut widest, mut width) = (1, 0);
        for batch in batches {
            width = if batch.joined { width + 1 } else { 1 };
            widest = widest.max(width);
        }
        let (pool, threads) = match self.pool {
            Some(pool) if total >= self.min && widest > 1 => pool,
            _ => return OneThread.spread(batches, f),
        };
        // How many batches come before batch `i`'s stage: the index of the
        // last batch up to `i` that is not joined (at most 16 back).
        let stage_of = |i: usize| {
            batches[..=i]
                .iter()
                .rposition(|batch| !batch.joined)
                .unwrap_or(0)
        };
        let (next, done) = (AtomicUsize::new(0), AtomicUsize::new(0));
        let work = || {
            loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                if i >= batches.len() {
                    return;
                }
                wait_for(&done, stage_of(i));
                let _done = Done(&done);
                f(batches[i].rows.clone());
            }
        };
        let work = &work;
        // Every worker is a task (the calling thread runs them too while
        // it waits), so a panic stays inside the scope.
        pool.scope(|scope| {
            for _ in 0..threads.min(widest) {
                scope.spawn(async move { work() });
            }
            // The tasks that kept threads awake for this end (see
            // `for_each_part`).
            let_sleep();
        });
    }
}

/// A group cut into the parts of a pass.
enum Parts {
    /// One part, on this thread.
    Whole(Span),
    /// Runs of whole islands (or, for the kick and the drift, of slots),
    /// [`JOBS_PER_THREAD`] for each of the pool's threads, with how many
    /// threads take them (see [`split_pool`]).
    Split(&'static TaskPool, usize, Vec<Span>),
}

impl Parts {
    fn pool(&self) -> Option<(&'static TaskPool, usize)> {
        match self {
            Parts::Whole(_) => None,
            Parts::Split(pool, threads, _) => Some((pool, *threads)),
        }
    }

    fn spans(&self) -> &[Span] {
        match self {
            Parts::Whole(span) => core::slice::from_ref(span),
            Parts::Split(_, _, spans) => spans,
        }
    }
}

/// A slot went non-finite: the end of the step reports it.
fn mark_diverged(solver: &mut SolverState) {
    solver.any_diverged = true;
    solver.pass_has_invalid = true;
    solver.request_report();
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
fn split_slots<'a>(
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

/// The fewest slots in a run of islands that [`Pass::sweep`] steps at
/// once: 2 048 bodies' positions, velocities and forces (96 KiB) stay in a
/// core's cache between the springs and the kick.
const SWEEP: usize = 2048;

/// `islands` (in slot order, their rows in the same order) joined into
/// runs of at least `slots` slots, the last run shorter.
fn runs<'a>(
    mut islands: impl Iterator<Item = &'a Span>,
    slots: usize,
) -> impl Iterator<Item = Span> {
    core::iter::from_fn(move || {
        let first = islands.next()?;
        let mut run = first.clone();
        while run.slots.len() < slots {
            let Some(next) = islands.next() else { break };
            run.slots.end = next.slots.end;
            run.rows.end = next.rows.end;
        }
        Some(run)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Runs join islands in order, with their rows, until they hold at
    /// least the asked slots (the last run less), and cover every island
    /// once.
    #[test]
    fn runs_join_whole_islands_in_order() {
        let sizes = [5, 1, 3000, 2, 2, 700, 1400, 1, 9];
        let (mut islands, mut slot, mut row) = (Vec::new(), 10, 0);
        for &n in &sizes {
            // An island of n bodies in a chain has n rows (one to a fixed
            // body), but a lone body none.
            let rows = if n == 1 { 0 } else { n };
            islands.push(Span {
                slots: slot..slot + n,
                rows: row..row + rows,
            });
            slot += n;
            row += rows;
        }
        let cut: Vec<Span> = runs(islands.iter(), 2048).collect();
        assert_eq!(
            cut.iter().map(|run| run.slots.clone()).collect::<Vec<_>>(),
            [10..3016, 3016..5120, 5120..5130]
        );
        assert_eq!(cut[0].rows, 0..3005);
        assert_eq!(cut.last().unwrap().rows.end, row);
        for pair in cut.windows(2) {
            assert_eq!(pair[0].rows.end, pair[1].rows.start);
        }
        assert_eq!(runs(islands[..0].iter(), 2048).count(), 0);
    }
}

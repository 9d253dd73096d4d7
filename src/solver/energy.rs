//! The energy watch: end of the fixed step, every [`EVERY`] steps, each
//! awake explicit island that nothing pushed or edited has its mechanical
//! energy measured, and one whose energy climbs well above the lowest it
//! had is reported ([`PhysicsIssue::EnergyGrowth`]).
//!
//! The stability bound ([`Island::load`](crate::Island::load)) sees only
//! the stiffness along each spring. An undamped rope whose links pass
//! through each other within one step (a whipping rope: the force keeps
//! its size `k·rest` while its direction turns over) is heated by each
//! such pass at any load, on average, and runs away. The watch sees the
//! result: the island's energy `E` (kinetic, springs', gravity's, in
//! `f64`) plus semi-implicit Euler's step correction `(h/2)·Σ v·F`, which
//! makes it constant up to rounding for a stable linear island (without
//! it `E` swings by a share of the kinetic energy every step). The island
//! is reported when `E` rises above the lowest value seen by more than
//! [`THRESHOLD`] times the most kinetic energy seen (or a small floor):
//! stable and damped islands stay below a tenth of that, a heating one
//! climbs past one.
//!
//! Everything resets (and is measured again from there) when islands
//! change or the origin shifts; an island resets when your code writes
//! one of its bodies or pushes it with a force, or when a fixed body is
//! written. Islands with rods, limits or round bodies and implicit
//! islands are not watched (their constraints and backward Euler take
//! energy out), nor islands with a tie (its target, moving or giving way,
//! does work on them).

use bevy::math::Vec3A;
use bevy::prelude::*;

use crate::data::issues::PhysicsIssue;
use crate::data::settings::PhysicsSettings;
use crate::solver::SolverState;
use crate::solver::par::{JOBS_PER_THREAD, for_each_part, split_pool};
use crate::solver::report::Reporter;

/// The watch measures every this many fixed steps: about once a second at
/// Bevy's default 64 Hz. A measurement reads every island's bodies and
/// springs in `f64`, about what a step of them costs; every 16th step it
/// took 6–7 % of a step of the ropes scene at 1000×100 on one thread.
pub const EVERY: u32 = 64;

/// How far above its lowest energy an island may climb, against the most
/// kinetic energy it had, before it is reported.
pub const THRESHOLD: f64 = 0.25;

/// The slots your code wrote or pushed with a force since the watch last
/// measured, which leaves their islands out of that measurement: one flag
/// per slot, so a body pushed every step costs one store, not a growing
/// list. Sized to the slots at each measurement; a slot past that (a new
/// layout since) is not kept, as the next measurement starts every island
/// again anyway.
#[derive(Debug, Default)]
pub(crate) struct WatchSkip(Vec<bool>);

impl WatchSkip {
    /// Leaves `slot`'s island out of the next measurement.
    #[inline]
    pub(crate) fn mark(&mut self, slot: usize) {
        if let Some(flag) = self.0.get_mut(slot) {
            *flag = true;
        }
    }

    /// No slot marked, for `slots` slots.
    fn reset(&mut self, slots: usize) {
        self.0.clear();
        self.0.resize(slots, false);
    }

    /// Whether a slot in `slots` is marked.
    fn any(&self, slots: core::ops::Range<usize>) -> bool {
        self.0.get(slots).is_some_and(|flags| flags.contains(&true))
    }
}

/// What the watch keeps of one island.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Watch {
    /// Whether `lowest` and `kinetic` hold a measurement.
    started: bool,
    lowest: f64,
    kinetic: f64,
    reported: bool,
}

/// The watch's state, per island in group order.
#[derive(Debug, Default)]
pub(crate) struct Watches {
    islands: Vec<Watch>,
    /// The solver's `layouts` as of `islands`.
    layout: u64,
    steps: u32,
    /// Per island in group order, whether it was pushed, edited or
    /// constrained since the last measurement (kept to reuse its memory).
    touched: Vec<bool>,
    /// Per island in group order, which one a measurement takes (its
    /// group and its place there; `None`: touched or implicit, not
    /// measured) and what it found, kept to reuse their memory.
    wanted: Vec<Option<(u32, u32)>>,
    energies: Vec<Option<(f64, f64, f64)>>,
}

/// End of the fixed step: see the [module docs](self). Between
/// measurements it only counts the step; `watch_skip` marks what your code
/// wrote or pushed until the next one.
pub(crate) fn watch_energy(
    mut solver: ResMut<SolverState>,
    settings: Res<PhysicsSettings>,
    mut reporter: Reporter,
) {
    let solver = &mut *solver;
    solver.watches.steps = solver.watches.steps.wrapping_add(1);
    if !solver.watches.steps.is_multiple_of(EVERY) {
        return;
    }
    let count: usize = solver.groups.iter().map(|group| group.islands.len()).sum();
    let mut watches = core::mem::take(&mut solver.watches);
    if watches.layout != solver.layouts || watches.islands.len() != count {
        // New islands (or moved positions): slots written under the old
        // layout name nothing now, and every island starts again.
        watches.islands.clear();
        watches.islands.resize(count, Watch::default());
        watches.layout = solver.layouts;
        solver.watch_skip.reset(solver.pos.len());
    }
    watches.touched.clear();
    watches.touched.resize(count, false);
    mark_touched(solver, &mut watches.touched);
    measure(
        solver,
        &mut watches,
        &mut reporter,
        settings.parallel_threshold,
    );
    solver.watch_skip.reset(solver.pos.len());
    solver.watches = watches;
}

/// Marks the islands with a slot in `watch_skip` (every island for a
/// fixed slot), and those with rods, limits or round bodies.
fn mark_touched(solver: &SolverState, touched: &mut [bool]) {
    let skip = &solver.watch_skip;
    if skip.any(solver.fixed_slots.clone()) {
        touched.fill(true);
        return;
    }
    let spans = solver.groups.iter().flat_map(|group| &group.islands);
    for (touched, span) in touched.iter_mut().zip(spans) {
        *touched = skip.any(span.slots.clone());
    }
    let constrained = solver
        .rods
        .iter()
        .flat_map(|rod| [rod.a, rod.b])
        .chain(
            solver
                .angles
                .iter()
                .flat_map(|angle| [angle.a, angle.p, angle.b]),
        )
        .chain(solver.rounds.iter().map(|round| round.slot))
        // A tie's target may move or give way: it does work on the island.
        .chain(solver.obstacles.ties.iter().map(|tie| tie.slot));
    for slot in constrained {
        if let Some(island) = island_of(solver, slot as usize) {
            touched[island] = true;
        }
    }
}

/// The island (in group order) whose dynamic slots hold `slot`.
fn island_of(solver: &SolverState, slot: usize) -> Option<usize> {
    let mut before = 0;
    for group in &solver.groups {
        if group.slots.contains(&slot) {
            let k = group.islands.partition_point(|span| span.slots.end <= slot);
            return (k < group.islands.len()).then_some(before + k);
        }
        before += group.islands.len();
    }
    None
}

/// Measures every explicit island nothing touched since the last
/// measurement, and reports the ones heating up. The energies are taken
/// first, on all compute threads for a scene of at least `parallel`
/// bodies (each island on one thread, so its sums are the same bits
/// however many there are), then compared on this thread.
fn measure(solver: &SolverState, watches: &mut Watches, reporter: &mut Reporter, parallel: usize) {
    let g = solver.gravity;
    // Per island in group order, the ones to measure: (group, island in it).
    let mut wanted = core::mem::take(&mut watches.wanted);
    wanted.clear();
    for (k, group) in solver.groups.iter().enumerate() {
        for island in 0..group.islands.len() {
            let measured = !group.implicit && !watches.touched[wanted.len()];
            wanted.push(measured.then_some((k as u32, island as u32)));
        }
    }
    let mut energies = core::mem::take(&mut watches.energies);
    energies.clear();
    energies.resize(wanted.len(), None);
    let energy_of = |&(k, island): &(u32, u32)| {
        let group = &solver.groups[k as usize];
        let h = f64::from(solver.timestep) / f64::from(group.passes.max(1));
        island_energy(solver, &group.islands[island as usize], g, h)
    };
    let pool = split_pool().filter(|_| solver.pos.len() >= parallel && wanted.len() > 1);
    let chunk = match pool {
        Some((_, threads)) => wanted.len().div_ceil(threads * JOBS_PER_THREAD),
        None => wanted.len().max(1),
    };
    let jobs = energies.chunks_mut(chunk).zip(wanted.chunks(chunk));
    for_each_part(pool, jobs, |(out, wanted)| {
        for (out, island) in out.iter_mut().zip(wanted) {
            *out = island.as_ref().and_then(energy_of);
        }
        false
    });
    let mut index = 0;
    for group in &solver.groups {
        for span in &group.islands {
            let watch = &mut watches.islands[index];
            // `None`: touched or implicit, not measured.
            let energy = energies[index];
            index += 1;
            let Some((energy, kinetic, floor)) = energy else {
                *watch = Watch::default();
                continue;
            };
            if !watch.started {
                *watch = Watch {
                    started: true,
                    lowest: energy,
                    kinetic,
                    reported: false,
                };
                continue;
            }
            watch.lowest = watch.lowest.min(energy);
            watch.kinetic = watch.kinetic.max(kinetic);
            let gained = energy - watch.lowest;
            if !watch.reported && gained > THRESHOLD * watch.kinetic.max(floor) {
                watch.reported = true;
                let Some(name) = group.name_of(span) else {
                    continue;
                };
                reporter.warn(
                    name,
                    PhysicsIssue::EnergyGrowth {
                        gained: gained as f32,
                        kinetic: watch.kinetic as f32,
                    },
                );
            }
        }
    }
    watches.wanted = wanted;
    watches.energies = energies;
}

/// The island's step-corrected energy, its kinetic energy, and the floor
/// below which a change is rounding: a thousandth of its weight times its
/// mean spring length, plus a thousand times what one `f32` rounding of
/// every position moves its energy by (forces times `ε·|x|`: large far
/// from the origin); `None` if a value is not finite.
fn island_energy(
    solver: &SolverState,
    span: &crate::kernels::parts::Span,
    g: Vec3A,
    h: f64,
) -> Option<(f64, f64, f64)> {
    let g64 = g.as_dvec3();
    let gravity = g64.length();
    // Per body: ½·m·v², −m·g·x, m·g·v, m, m·|x|∞.
    let (mut kinetic, mut potential, mut power, mut mass) = (0.0, 0.0, 0.0, 0.0);
    let mut far_mass = 0.0;
    let far = |x: Vec3A| f64::from(x.abs().max_element());
    for s in span.slots.clone() {
        let w = solver.inv_mass[s];
        if w <= 0.0 {
            continue;
        }
        let m = 1.0 / f64::from(w);
        let (x, v) = (solver.pos[s].as_dvec3(), solver.vel[s].as_dvec3());
        kinetic += 0.5 * m * v.length_squared();
        potential -= m * g64.dot(x);
        power += m * g64.dot(v);
        mass += m;
        far_mass += m * far(solver.pos[s]);
    }
    let (weight, mut rounding) = (mass * gravity, far_mass * gravity);
    let (mut length, mut rows) = (0.0, 0.0);
    for row in &solver.springs[span.rows.clone()] {
        let (a, b) = (row.a as usize, row.b as usize);
        let d = (solver.pos[b] - solver.pos[a]).as_dvec3();
        let l = d.length();
        let stretch = l - f64::from(row.rest);
        potential += 0.5 * f64::from(row.k) * stretch * stretch;
        rounding += f64::from(row.k) * stretch.abs() * (far(solver.pos[a]) + far(solver.pos[b]));
        length += f64::from(row.rest);
        rows += 1.0;
        if l > 0.0 {
            // The elastic force on `a`, against each end's velocity.
            let on_a = d * (f64::from(row.k) * stretch / l);
            let local = |slot: usize| span.slots.contains(&slot);
            if local(a) {
                power += on_a.dot(solver.vel[a].as_dvec3());
            }
            if local(b) {
                power -= on_a.dot(solver.vel[b].as_dvec3());
            }
        }
    }
    let energy = kinetic + potential + 0.5 * h * power;
    let floor = 1e-3 * weight * length / f64::max(rows, 1.0)
        + 1e3 * f64::from(f32::EPSILON) * rounding
        + 1e-9;
    energy.is_finite().then_some((energy, kinetic, floor))
}

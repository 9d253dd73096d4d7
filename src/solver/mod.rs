//! The solver: its dense view of the scene, and the stages that fill it,
//! step it and drain it.
//!
//! Springs need random access to the state of their two ends. Looking each
//! end up by [`Entity`] in every pass would dominate the step, so the solver
//! keeps a dense index: every valid awake body has a slot (stored in its
//! [`BodyIndex`](crate::data::requests::BodyIndex)) and every valid spring
//! a row holding its two slots. Every pass runs on these arrays.
//!
//! The stages, in the order [`step`](crate::step) runs them:
//!
//! 1. [`report`]: settings checked, repaired bodies and joins re-admitted;
//! 2. [`wakes`]: what touched a sleeping island since the last step;
//! 3. [`rebuild`] (only when something structural changed): read the
//!    bodies and joins, find the islands, apply wake and sleep requests,
//!    decide each island's sleep and pass count, lay out slots and rows,
//!    write each body's index back;
//! 4. [`gather`]: the bodies your code wrote since the last step, the
//!    forces it added, constant forces, damping and ground planes; and
//!    [`held`]: the forces the pair contacts held over the last step, by
//!    slot, which this step's start from;
//! 5. per pass of each group of islands with the same pass count,
//!    [`pass`]: spring forces, kick, rods and contacts, drift; with
//!    [`substep`] copying the pass's bodies out to their components and
//!    back around the sets of `PhysicsSubstep` that hold systems of yours;
//! 6. [`scatter`]: each stepped `Body` and `PositionHistory` written once,
//!    and the pair contacts' forces handed to `ContactForces` ([`held`]);
//! 7. [`report`] again for bodies that went non-finite, and [`sleep`]:
//!    resting islands fall asleep.
//!
//! Slots are laid out by pass group, then island, then body; fixed bodies
//! come last; sleeping bodies get none. Rows are laid out by pass group,
//! then island; each body's springs keep their order. Large groups are
//! split over threads by whole islands, which share no spring, so the
//! state after a step does not depend on the thread count.

use core::ops::Range;
use core::sync::atomic::{AtomicBool, Ordering};

use bevy::ecs::change_detection::Tick;
use bevy::ecs::entity::EntityHashSet;
use std::sync::{Arc, Mutex};

use bevy::math::Vec4;
use bevy::prelude::*;

use crate::data::body::Body;
use crate::kernels::broad::BroadPhase;
use crate::kernels::constraints::{
    AngleRow, Contact, PairContacts, PairPart, PairRow, PlaneRow, RodRow, RoundRow, Warm,
};
use crate::kernels::kept::{HeldPair, Kept};
use crate::kernels::lanes::WIDTH;
use crate::kernels::parts::Span;
use crate::kernels::springs::SpringRow;

pub(crate) mod columns;
pub(crate) mod contacts;
pub(crate) mod energy;
pub(crate) mod frequency;
pub(crate) mod gather;
pub(crate) mod held;
pub(crate) mod obstacles;
pub(crate) mod origin;
pub(crate) mod par;
pub(crate) mod pass;
pub(crate) mod rebuild;
pub(crate) mod report;
pub(crate) mod scatter;
pub(crate) mod sleep;
pub(crate) mod substep;
pub(crate) mod wakes;

/// The islands with one pass count, stepped together.
#[derive(Debug, Default)]
pub(crate) struct Group {
    /// Passes per fixed step.
    pub passes: u32,
    /// Its islands step their springs implicitly.
    pub implicit: bool,
    /// Its bodies in slot order: the dynamic ones, then (group 0 only) the
    /// fixed ones.
    pub entities: Vec<Entity>,
    /// The slots of its dynamic bodies.
    pub slots: Range<usize>,
    /// Its springs' rows.
    pub rows: Range<usize>,
    /// Its islands' slots and rows, in slot order.
    pub islands: Vec<Span>,
    /// Its rods (and distance limits), angle limits and round bodies.
    pub rods: Range<usize>,
    pub angles: Range<usize>,
    pub rounds: Range<usize>,
    /// Its pairs of round bodies within reach, this step, and their
    /// batches (relative to `pairs`).
    pub pairs: Range<usize>,
    pub pair_batches: Vec<crate::kernels::batches::Batch>,
    /// An implicit group's plan per island (a factor's structure, or
    /// conjugate gradients) and the method they were made for; made at the
    /// first pass after the layout.
    pub plans: Vec<crate::kernels::implicit::Plan>,
    pub planned: Option<(crate::kernels::implicit::Method, bool)>,
    /// Some island of it may fall asleep (sleeping is on, and one has no
    /// `SleepingDisabled`).
    pub may_sleep: bool,
    /// Per slot of the group (from `slots.start`): where its body was at
    /// the start of this step, kept where the group `may_sleep` and has
    /// anything for the constraints stage (rods, limits, round bodies,
    /// ties); else empty: a body of a group without them moves only with
    /// its velocity, and one that cannot sleep needs no rest test. What
    /// [`update_sleep`](sleep::update_sleep) measures how far a body moved
    /// by.
    pub start: Vec<Vec3A>,
}

impl Group {
    /// The entity a report about the island holding `slot` names: the one
    /// with the lowest index, so that the name does not depend on the
    /// order of its slots (which follows the order the tables hold its
    /// bodies in, and so how the island got there: a woken island, say).
    /// (`Entity`'s own order is not by index.)
    pub fn island_name(&self, slot: usize) -> Option<Entity> {
        let span = self
            .islands
            .iter()
            .find(|span| span.slots.contains(&slot))?;
        self.name_of(span)
    }

    /// [`island_name`](Self::island_name) for one of this group's
    /// islands.
    pub fn name_of(&self, span: &Span) -> Option<Entity> {
        let start = self.slots.start;
        self.entities
            .get(span.slots.start - start..span.slots.end - start)?
            .iter()
            .copied()
            .min_by_key(|entity| entity.index())
    }
}

/// One island, as the last rebuild found it.
#[derive(Debug, Clone)]
pub(crate) struct IslandState {
    /// Its bodies, in `SolverState::island_members`.
    pub members: Range<usize>,
    /// Its slots (empty while asleep).
    pub slots: Range<usize>,
    pub sleeping: bool,
    /// When it fell asleep.
    pub since: Tick,
    /// No body has `SleepingDisabled`.
    pub can_sleep: bool,
    /// How long all its bodies have been resting, in seconds.
    pub timer: f32,
    /// Whether two of its round bodies were within reach of each other (it
    /// then takes at least `ConstraintSettings::contact_substeps` passes).
    pub touching: bool,
}

/// The solver's dense scene; see the [module docs](self).
#[derive(Resource, Default)]
pub(crate) struct SolverState {
    /// Set by a rebuild, which gathers every slot itself.
    pub rebuilt: bool,
    /// The fixed timestep of the last rebuild, in seconds.
    pub timestep: f32,
    /// Per slot, gathered at the start of each step and updated by each
    /// pass.
    pub pos: Vec<Vec3A>,
    pub vel: Vec<Vec3A>,
    /// Per slot: whether the state can be stepped.
    pub valid: Vec<bool>,
    /// Per slot: the inverse mass (as of the last gather).
    pub inv_mass: Vec<f32>,
    /// Per slot: the squared speed below which the body rests.
    pub sleep_speed2: Vec<f32>,
    /// Whether any slot was invalid in this step.
    pub pass_has_invalid: bool,
    /// Valid springs of awake islands, by group, then island.
    pub springs: Vec<SpringRow>,
    /// Per dynamic slot: the sum of its springs' forces this pass, for
    /// the passes that run stage by stage (`Pass::run` sizes it; a
    /// rebuild empties it, and a sweep does not use it).
    pub force: Vec<Vec3A>,
    /// Per part of a sweep (`Pass::sweep`): one run's spring forces,
    /// kept from pass to pass.
    pub sweep_forces: Vec<Vec<Vec3A>>,
    /// Rods and round bodies of awake islands, by group.
    pub rods: Vec<RodRow>,
    pub angles: Vec<AngleRow>,
    pub rounds: Vec<RoundRow>,
    /// The largest radius among `rounds` (as of the last layout).
    pub largest_radius: f32,
    /// The valid ground planes, gathered at the start of each step, and
    /// the contacts of the current pass.
    pub planes: Vec<PlaneRow>,
    pub contacts: Vec<Contact>,
    /// The obstacles of this step, placed for the current pass: see
    /// [`obstacles`](obstacles).
    pub obstacles: obstacles::ObstacleSet,
    /// What the broad phase knows of round bodies: see
    /// [`contacts`](contacts).
    pub touch: contacts::Touch,
    /// Pairs of round bodies within reach this step, by group, each group's
    /// in blocks that threads may solve at once and the pairs between them
    /// (see [`batches`](crate::kernels::batches)), and the contacts among
    /// them: found at the first pass of the group's step, kept (with
    /// their impulses) for its other passes.
    pub pairs: Vec<PairRow>,
    pub pair_contacts: PairContacts,
    /// A large group's pair contacts while threads find them, a run of
    /// batches to each part (see
    /// [`find_pair_contacts_in_parts`](crate::kernels::constraints::find_pair_contacts_in_parts)).
    pub pair_parts: Vec<Mutex<PairPart>>,
    /// A large group's plane contacts while threads find them, a run of
    /// round bodies to each part.
    pub plane_parts: Vec<Vec<Contact>>,
    /// The plane contacts' impulses at the end of the last pass, for the
    /// next pass of the step: per round body and plane (by round row, then
    /// plane). Cleared at the start of each step: plane contacts start
    /// each step at 0 (pair contacts start from `ContactForces`).
    pub plane_warm: Vec<Warm>,
    /// The forces pair contacts held over the last step, by slot, that
    /// this step's pair contacts start from (laid out by
    /// [`recall_forces`](held::recall_forces)).
    pub kept: Kept,
    /// The impulses each group of the pass group's pair contacts gave over
    /// the step's passes so far, summed (normal, then friction by axis;
    /// one lane per contact).
    pub impulse_sums: Vec<[Vec4; WIDTH]>,
    /// The forces this step's pair contacts hold, by slot: each group's,
    /// added at its last pass, then handed to `ContactForces` at the end
    /// of the step (see [`held`]).
    pub holding: Vec<HeldPair>,
    /// Each slot's entity, and the layout it was made for.
    pub slot_entities: (u64, Arc<Vec<Entity>>),
    /// The velocities of the last pass group's bodies before its relaxing
    /// round (a buffer kept between passes).
    pub relaxed: Vec<Vec3A>,
    /// The impulses limits hold at their bounds in the current pass.
    pub held: Vec<f32>,
    pub broad: BroadPhase,
    /// The buffers of the implicit solves, one per part of a pass, and the
    /// islands whose solve did not converge or failed in this step (by
    /// their first slot), for the end of the step to report.
    pub implicit: Vec<(
        crate::kernels::implicit::Scratch,
        Vec<(u32, crate::kernels::implicit::Solved)>,
    )>,
    pub implicit_trouble: Vec<(u32, crate::kernels::implicit::Solved)>,
    /// Islands (by [`Group::island_name`]) already reported for an implicit
    /// solve, until it succeeds again.
    pub implicit_reported: EntityHashSet,
    /// Per slot: forces your substep systems added to `AccumulatedForce`,
    /// for the next kick; the force of the whole step (`ConstantForce` plus
    /// the `AccumulatedForce` written before the step); and the damping
    /// coefficient (0 for none).
    pub pending: Vec<Vec3A>,
    pub constant: Vec<Vec3A>,
    pub damping: Vec<f32>,
    /// The slots whose `pending`, `constant` or `damping` were set, to
    /// clear at the next gather.
    pub extra_slots: Vec<u32>,
    /// The slots whose `pending` force is not yet kicked.
    pub pending_slots: Vec<u32>,
    /// Per slot, whether its state turned non-finite in this step (its
    /// velocity is then written back, its position kept).
    pub diverged: Vec<bool>,
    pub any_diverged: bool,
    /// The slots of fixed bodies.
    pub fixed_slots: Range<usize>,
    /// Whether a slot's inverse mass changed since the rebuild (a body made
    /// fixed or dynamic; the next step rebuilds).
    pub masses_changed: bool,
    pub groups: Vec<Group>,
    /// The fixed timestep and pass count last warned about as too many
    /// passes for the timestep.
    pub short_passes_reported: Option<(core::time::Duration, u32)>,
    /// Per group: the tick as of which every slot of the group holds its
    /// body's state (set by the scatter when all was valid).
    pub group_synced: Vec<Option<Tick>>,
    /// Per group: whether this step copied its bodies out to their
    /// components (for systems of yours in `PhysicsSubstep`), which then
    /// hold where the step started in their `PositionHistory`.
    pub copied_out: Vec<bool>,
    /// Whether the last step split work over the compute pool: the next
    /// one wakes the pool's threads at its start (`run_step`).
    pub split_last_step: bool,
    pub islands: Vec<IslandState>,
    pub island_members: Vec<Entity>,
    /// Bodies of an earlier layout that the last rebuild did not see,
    /// though they hold a `Body` (disabled by a component of yours), and
    /// whose `BodyIndex` it cleared (see `rebuild::layout`); sorted. One of
    /// them back in the rebuild's query asks for a rebuild at the start of
    /// the next step.
    pub unseen: Vec<Entity>,
    pub any_sleeping: bool,
    /// Fixed bodies that sleeping islands hang from.
    pub holding_sleepers: EntityHashSet,
    /// Springs already reported as unstable.
    pub unstable_reported: EntityHashSet,
    /// Whether a non-finite `Gravity` was reported (until it is finite).
    pub gravity_reported: bool,
    /// Gravity as the last step used it.
    pub gravity: Vec3A,
    /// Counts layouts and origin shifts (what resets the energy watch).
    pub layouts: u64,
    /// Slots your code wrote or pushed with a force since the energy
    /// watch last measured, which then leaves their islands out.
    pub watch_skip: energy::WatchSkip,
    pub watches: energy::Watches,
    /// Set during a pass when something invalid was met; the end of the
    /// step then scans the bodies and reports.
    report_requested: AtomicBool,
}

impl SolverState {
    /// Number of body slots.
    pub fn len(&self) -> usize {
        self.pos.len()
    }

    /// Asks the end of the step to scan for invalid bodies (callable from
    /// parallel passes).
    pub fn request_report(&self) {
        self.report_requested.store(true, Ordering::Relaxed);
    }

    /// Takes the report request.
    pub fn take_report_request(&mut self) -> bool {
        core::mem::take(self.report_requested.get_mut())
    }
}

/// Whether a body's values can be stepped.
#[inline]
pub(crate) fn state_is_valid(body: &Body) -> bool {
    body.position.is_finite()
        && body.velocity.is_finite()
        && body.inv_mass >= 0.0
        && body.inv_mass.is_finite()
}

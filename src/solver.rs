//! The solver's dense view of the scene.
//!
//! Springs need random access to the state of their two ends. Looking each
//! end up by [`Entity`] in every pass would dominate the step, so the plugin
//! keeps a dense index: every valid body has a slot (stored in its
//! [`BodyIndex`]), every valid spring a row holding its two slots, and a
//! compressed adjacency lists the springs of each body in row order.
//!
//! The index is rebuilt at the start of the fixed step only when bodies or
//! springs were added, removed, re-inserted, marked invalid or changed;
//! between rebuilds each pass does:
//!
//! 1. `gather`: copy each body's position and velocity into its slot (on one
//!    thread the position pass already copied the state it produced, so
//!    only bodies whose change tick is newer than that pass — written by
//!    your code since — are copied again);
//! 2. `spring_forces`: each spring's force into its row's slot (in parallel
//!    for large scenes), then a sequential pass over the rows, in row order,
//!    adds each force to its two bodies' slots;
//! 3. the velocity integration reads each body's summed force from its slot.
//!
//! Each body's forces are summed in row order however many threads computed
//! them, so the state after a step does not depend on the thread count.

use core::sync::atomic::{AtomicBool, Ordering};

use bevy::ecs::change_detection::Tick;
use bevy::ecs::entity::{Entities, EntityHashMap, EntityHashSet};
use bevy::ecs::system::SystemChangeTick;
use bevy::prelude::*;

use crate::body::Body;
use crate::diagnostics::{PhysicsError, Reporter, validate_spring};
use crate::schedule::PhysicsSettings;
use crate::spring::{Spring, SpringRow};
use crate::stability::SpringStability;

/// Runs `$f` on every item of `$query`, on the compute task pool when
/// `$parallel` holds. `$f` must not depend on the order of the items.
macro_rules! for_each_maybe_par {
    ($query:expr, $parallel:expr, $f:expr) => {
        if $parallel && bevy::tasks::ComputeTaskPool::try_get().is_some() {
            $query.par_iter_mut().for_each($f)
        } else {
            $query.iter_mut().for_each($f)
        }
    };
}
pub(crate) use for_each_maybe_par;

/// A body's slot in the solver's dense arrays.
#[derive(Component, Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct BodyIndex(pub(crate) u32);

impl Default for BodyIndex {
    fn default() -> Self {
        Self(u32::MAX)
    }
}

/// The solver's dense scene; see the [module docs](self).
#[derive(Resource, Default)]
pub(crate) struct SolverState {
    /// Set by component hooks when the set of bodies or springs changed.
    pub dirty: bool,
    /// Per slot, gathered at the start of each pass.
    pub pos: Vec<Vec3>,
    pub vel: Vec<Vec3>,
    /// Per slot: whether the gathered state was valid.
    pub valid: Vec<bool>,
    /// Whether any slot was invalid in this pass.
    pub pass_has_invalid: bool,
    /// Valid springs, in a fixed order, and their forces this pass.
    pub springs: Vec<SpringRow>,
    pub spring_force: Vec<Vec3>,
    /// Per slot: the sum of its springs' forces this pass.
    pub force: Vec<Vec3>,
    /// Set when every slot holds its body's state as of this tick, all of it
    /// valid (the position pass copies it there): the next gather then
    /// copies only bodies changed since.
    pub synced: Option<Tick>,
    /// Springs already reported as unstable.
    unstable_reported: EntityHashSet,
    /// Set during a pass when something invalid was met; the end of the step then scans
    /// the bodies and reports.
    report_requested: AtomicBool,
}

impl SolverState {
    /// Number of body slots.
    pub fn len(&self) -> usize {
        self.pos.len()
    }

    /// The slot of `index`, if it is in the index and its state was valid
    /// this pass.
    #[inline]
    pub fn live_index(&self, index: &BodyIndex) -> Option<usize> {
        let i = index.0 as usize;
        (self.valid.get(i) == Some(&true)).then_some(i)
    }

    /// Asks the end of the step to scan for invalid bodies (callable from parallel
    /// passes).
    pub fn request_report(&self) {
        self.report_requested.store(true, Ordering::Relaxed);
    }

    /// Takes the report request.
    pub fn take_report_request(&mut self) -> bool {
        core::mem::take(self.report_requested.get_mut())
    }
}

/// Start of the fixed step: rebuilds the index
/// when bodies or springs changed, checking every spring on the way.
#[allow(clippy::too_many_arguments)]
pub(crate) fn rebuild(
    mut solver: ResMut<SolverState>,
    mut bodies: Query<(Entity, &Body, &mut BodyIndex), Without<PhysicsError>>,
    springs: Query<(Entity, &Spring), Without<PhysicsError>>,
    changed_springs: Query<(), (Changed<Spring>, Without<PhysicsError>)>,
    has_body: Query<(), With<Body>>,
    entities: &Entities,
    time: Res<Time<Fixed>>,
    settings: Res<PhysicsSettings>,
    mut reporter: Reporter,
) {
    if !solver.dirty && changed_springs.is_empty() {
        return;
    }
    let solver = &mut *solver;
    solver.dirty = false;

    // Bodies: slots in query order (deterministic for a given history of
    // spawns and despawns).
    let mut slot_of = EntityHashMap::<u32>::default();
    let mut inv_mass = Vec::new();
    for (entity, body, mut index) in &mut bodies {
        let slot = inv_mass.len() as u32;
        index.0 = slot;
        slot_of.insert(entity, slot);
        inv_mass.push(body.inv_mass);
    }
    let n = inv_mass.len();
    solver.pos.clear();
    solver.pos.resize(n, Vec3::ZERO);
    solver.vel.clear();
    solver.vel.resize(n, Vec3::ZERO);
    solver.valid.clear();
    solver.valid.resize(n, false);

    // Springs: check each, keep the valid ones.
    let h = time.timestep().as_secs_f32() / settings.passes() as f32;
    solver.springs.clear();
    for (entity, spring) in &springs {
        if let Err(issue) = validate_spring(spring, &has_body, entities) {
            reporter.reject(entity, issue);
            continue;
        }
        // An end that is itself invalid was reported already; the spring
        // waits for it.
        let (Some(&a), Some(&b)) = (slot_of.get(&spring.a), slot_of.get(&spring.b)) else {
            continue;
        };
        let stability = SpringStability::new(
            spring.stiffness,
            spring.damping,
            inv_mass[a as usize] + inv_mass[b as usize],
        );
        if stability.is_stable(h) {
            solver.unstable_reported.remove(&entity);
        } else if solver.unstable_reported.insert(entity) {
            reporter.warn(entity, stability.issue(h, settings.passes()));
        }
        solver.springs.push(SpringRow {
            a,
            b,
            rest: spring.rest_length,
            k: spring.stiffness,
            c: spring.damping,
        });
    }
    solver.spring_force.clear();
    solver.spring_force.resize(solver.springs.len(), Vec3::ZERO);

    solver.force.clear();
    solver.force.resize(n, Vec3::ZERO);
    solver.synced = None;
}

/// [`PhysicsSystems::AccumulateForces`](crate::PhysicsSystems), first: copies
/// each body's state into its slot — only the bodies written since the last
/// position pass synced the slots, if it did.
pub(crate) fn gather(
    mut solver: ResMut<SolverState>,
    bodies: Query<(Ref<Body>, &BodyIndex), Without<PhysicsError>>,
    ticks: SystemChangeTick,
) {
    let solver = &mut *solver;
    let synced = solver.synced.take();
    let mut any_invalid = false;
    let (pos, vel, valid_slots) = (&mut solver.pos, &mut solver.vel, &mut solver.valid);
    bodies.iter().for_each(|(body, index)| {
        if let Some(synced) = synced
            && !body.last_changed().is_newer_than(synced, ticks.this_run())
        {
            return;
        }
        let i = index.0 as usize;
        // A body spawned since the last rebuild has no slot yet; it joins at
        // the next step.
        if i < pos.len() {
            let valid = body.position.is_finite()
                && body.velocity.is_finite()
                && body.inv_mass >= 0.0
                && body.inv_mass.is_finite();
            valid_slots[i] = valid;
            if valid {
                pos[i] = body.position;
                vel[i] = body.velocity;
            } else {
                any_invalid = true;
            }
        }
    });
    solver.pass_has_invalid = any_invalid;
    if any_invalid {
        solver.request_report();
    }
}

//! The solver's dense view of the scene.
//!
//! Springs need random access to the state of their two ends. Looking each
//! end up by [`Entity`] in every pass would dominate the step, so the plugin
//! keeps a dense index: every valid body has a slot (stored in its
//! [`BodyIndex`]) and every valid spring a row holding its two slots.
//!
//! The index is rebuilt at the start of the fixed step only when bodies,
//! springs, substep counts or sleep states changed. The rebuild also finds
//! the islands (union-find over the springs between dynamic bodies), their
//! pass counts and stability loads, and which islands sleep or wake. Slots
//! are laid out by pass group, then island, then body; fixed bodies come
//! last; sleeping bodies get none. Rows are laid out by pass group, then
//! island; each body's springs keep their order.
//!
//! Then, every fixed step:
//!
//! 1. `gather_written` (once per fixed step): copy into its slot the state
//!    of each body written since the last step (the step keeps the slots of
//!    its own results), found by a `Changed<Body>` scan as of the tick the
//!    slots were last in step; then `gather`: ground planes, and in a dense
//!    step the forces and damping;
//! 2. per pass of a group: each spring's force, added to its two bodies'
//!    slots in row order; the kick, the constraints and the drift. Either
//!    on the arrays alone ([`crate::dense`]), or through the
//!    `PhysicsSubstep` schedule when a system of the user's is in it.
//!
//! Large groups are split over threads by islands, which share no spring,
//! so each body's forces are summed in row order however many threads run:
//! the state after a step does not depend on the thread count.

use core::ops::Range;
use core::sync::atomic::{AtomicBool, Ordering};

use bevy::ecs::change_detection::Tick;
use bevy::ecs::entity::{Entities, EntityHashMap, EntityHashSet};
use bevy::ecs::system::SystemChangeTick;
use bevy::prelude::*;
use bevy::tasks::ComputeTaskPool;
use bevy::utils::Parallel;

use crate::body::Body;
use crate::body::Damping;
use crate::constraints::{Contact, DistanceConstraint, GroundPlane, Radius, RodRow, RoundRow};
use crate::diagnostics::{PhysicsError, PhysicsIssue, Reporter, validate_ends, validate_spring};
use crate::forces::{AccumulatedForce, ConstantForce, Gravity};
use crate::interpolation::{PositionHistory, TransformSyncDisabled};
use crate::islands::{
    AutoSubsteps, Island, IslandSlept, IslandWoke, RestTime, SleepSettings, SleepThreshold,
    Sleeping, SleepingDisabled, Substeps, WakeCause, WakeTarget, sanitize,
};
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

/// The bodies a step moves: neither left out for an error nor asleep (nor a
/// fixed body that only sleeping islands hang from).
pub(crate) type Stepped = (
    Without<PhysicsError>,
    Without<Sleeping>,
    Without<AnchorAsleep>,
);

/// Marks a fixed body that only sleeping islands hang from: the passes skip
/// it, and moving it wakes them.
#[derive(Component, Debug, Clone, Copy)]
pub(crate) struct AnchorAsleep {
    pub since: Tick,
}

/// A body's slot in the solver's dense arrays, and its pass group.
#[derive(Component, Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct BodyIndex {
    pub slot: u32,
    pub group: u32,
}

impl Default for BodyIndex {
    fn default() -> Self {
        Self {
            slot: u32::MAX,
            group: u32::MAX,
        }
    }
}

/// The islands with one pass count, stepped together.
#[derive(Debug, Default)]
pub(crate) struct Group {
    /// Passes per fixed step.
    pub passes: u32,
    /// Its dynamic bodies (and, for group 0, the fixed bodies).
    pub entities: Vec<Entity>,
    /// The slots of its dynamic bodies.
    pub slots: Range<usize>,
    /// Its springs' rows.
    pub rows: Range<usize>,
    /// Its islands' slots and rows, in slot order.
    pub islands: Vec<Span>,
    /// Its rods and round bodies, and the bodies they touch (entity, slot).
    pub rods: Range<usize>,
    pub rounds: Range<usize>,
    pub constrained: Vec<(Entity, u32)>,
    /// Whether the passes visit every body and skip the others' (a large
    /// group), rather than look up each of its bodies.
    pub iterate_all: bool,
}

/// The slots and spring rows of an island within its group.
#[derive(Debug, Clone, Default)]
pub(crate) struct Span {
    pub slots: Range<usize>,
    pub rows: Range<usize>,
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
}

/// The solver's dense scene; see the [module docs](self).
#[derive(Resource, Default)]
pub(crate) struct SolverState {
    /// Set by component hooks when the set of bodies or springs changed.
    pub dirty: bool,
    /// Set by a rebuild, which gathers every slot itself.
    rebuilt: bool,
    /// The fixed timestep of the last rebuild, in seconds.
    timestep: f32,
    /// Per slot, gathered at the start of each step and updated by each
    /// position pass.
    pub pos: Vec<Vec3A>,
    pub vel: Vec<Vec3A>,
    /// Per slot: whether the state was valid.
    pub valid: Vec<bool>,
    /// Per slot: the inverse mass at the rebuild.
    pub inv_mass: Vec<f32>,
    /// Per slot: the squared speed below which the body rests.
    sleep_speed2: Vec<f32>,
    /// Whether any slot was invalid in this step.
    pub pass_has_invalid: bool,
    /// Valid springs of awake islands, by group, then island.
    pub springs: Vec<SpringRow>,
    /// Per dynamic slot: the sum of its springs' forces this pass.
    pub force: Vec<Vec3A>,
    /// Rods and round bodies of awake islands, by group.
    pub rods: Vec<RodRow>,
    pub rounds: Vec<RoundRow>,
    /// The ground planes, gathered at the start of each step, and the
    /// contacts of the current pass.
    pub planes: Vec<GroundPlane>,
    pub contacts: Vec<Contact>,
    /// Whether this step runs on the arrays alone (no user system in
    /// [`PhysicsSubstep`](crate::PhysicsSubstep)); see [`crate::dense`].
    pub dense: bool,
    /// Dense steps: per slot, the accumulated force taken for the first
    /// pass, the constant force, and the damping coefficient (0 for none).
    pub accumulated: Vec<Vec3A>,
    pub constant: Vec<Vec3A>,
    pub damping: Vec<f32>,
    /// The slots whose `accumulated`, `constant` or `damping` were set
    /// this step, to clear at the next.
    pub(crate) extra_slots: Vec<u32>,
    /// Dense steps: per slot, whether its state turned non-finite in this
    /// step (its velocity is then written back, its position kept).
    pub diverged: Vec<bool>,
    pub any_diverged: bool,
    /// The slots of fixed bodies.
    pub fixed_slots: Range<usize>,
    pub groups: Vec<Group>,
    /// Per group: the tick as of which every slot of the group holds its
    /// body's state (set by the group's position pass when all was valid).
    pub group_synced: Vec<Option<Tick>>,
    pub islands: Vec<IslandState>,
    pub island_members: Vec<Entity>,
    any_sleeping: bool,
    /// Fixed bodies that sleeping islands hang from.
    holding_sleepers: EntityHashSet,
    wake_requests: Vec<(WakeTarget, WakeCause)>,
    pub sleep_requests: Vec<Entity>,
    /// Springs already reported as unstable.
    unstable_reported: EntityHashSet,
    /// Bodies already reported for a bad `Substeps` or `SleepThreshold`.
    settings_reported: EntityHashMap<u8>,
    /// Set during a pass when something invalid was met; the end of the
    /// step then scans the bodies and reports.
    report_requested: AtomicBool,
}

impl SolverState {
    /// Number of body slots.
    pub fn len(&self) -> usize {
        self.pos.len()
    }

    /// The slot of `index`, if it is in the index and its state was valid.
    #[inline]
    pub fn live_index(&self, index: &BodyIndex) -> Option<usize> {
        let i = index.slot as usize;
        (self.valid.get(i) == Some(&true)).then_some(i)
    }

    /// After the state was restored wholesale (a snapshot, a rollback):
    /// forgets wake and sleep requests made by the restore itself and
    /// rebuilds the index from the restored components at the next step.
    pub fn resync(&mut self) {
        self.wake_requests.clear();
        self.sleep_requests.clear();
        self.dirty = true;
        // Until the rebuild knows better: the restored state may hold
        // sleeping islands that writes before the next step must wake.
        self.any_sleeping = true;
    }

    /// Asks the start of the next step to wake an island.
    pub fn request_wake(&mut self, target: WakeTarget, cause: WakeCause) {
        self.wake_requests.push((target, cause));
        self.dirty = true;
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

/// Rests a fixed body that only sleeping islands hang from.
fn rest_anchor(commands: &mut Commands, entity: Entity, since: Tick) {
    commands
        .entity(entity)
        .queue_silenced(move |mut e: EntityWorldMut| {
            settle(&mut e);
            e.insert(AnchorAsleep { since });
        });
}

/// Draws a body at its position, with no history to interpolate.
fn settle(e: &mut EntityWorldMut) {
    let Some(position) = e.get::<Body>().map(|b| b.position) else {
        return;
    };
    if let Some(mut history) = e.get_mut::<PositionHistory>() {
        *history = PositionHistory::at(position);
    }
    if position.is_finite()
        && !e.contains::<TransformSyncDisabled>()
        && let Some(mut transform) = e.get_mut::<Transform>()
    {
        transform.translation = position;
    }
}

/// Puts a body to sleep where it is: drawn at its position, no history.
fn fall_asleep(commands: &mut Commands, entity: Entity, since: Tick) {
    commands
        .entity(entity)
        .queue_silenced(move |mut e: EntityWorldMut| {
            settle(&mut e);
            // Writes to a sleeping body's accumulated force could only be
            // found by scanning every sleeping body every step; without the
            // component there are none to find.
            e.remove::<AccumulatedForce>();
            e.insert(Sleeping { since });
        });
}

/// Start of the fixed step: marks the index dirty when a radius or a plane
/// changed in place, and finds what touched a sleeping island since the
/// last step — your writes to its bodies or forces, a moved anchor, a
/// changed radius, plane or gravity — and asks the rebuild to wake it.
/// (Springs and rods are immutable; their hooks report every change.)
///
/// The scans cost a sleeping body one tick comparison per step: its `Body`
/// (`ConstantForce` only on bodies that have one; sleeping bodies have no
/// `AccumulatedForce`, whose insertion wakes them through its hook).
#[allow(clippy::too_many_arguments)]
pub(crate) fn detect_wakes(
    mut solver: ResMut<SolverState>,
    gravity: Res<Gravity>,
    written: Query<(Entity, Ref<Body>, &Sleeping), Changed<Body>>,
    forced: Query<(Entity, Ref<ConstantForce>, &Sleeping), Changed<ConstantForce>>,
    anchors: Query<(Entity, Ref<Body>, &AnchorAsleep), Changed<Body>>,
    awake_fixed: Query<Ref<Body>, (Without<Sleeping>, Without<AnchorAsleep>)>,
    changed: ChangedConstraints,
    ticks: SystemChangeTick,
) {
    let any_sleeping = solver.any_sleeping;
    for entity in &changed.radii {
        solver.request_wake(
            WakeTarget::Body(entity),
            WakeCause::ConstraintChanged(entity),
        );
    }
    if let Some(entity) = changed.planes.iter().next() {
        solver.request_wake(WakeTarget::All, WakeCause::ConstraintChanged(entity));
    }
    if !any_sleeping {
        return;
    }
    let now = ticks.this_run();
    for (entity, body, sleeping) in &written {
        if body.last_changed().is_newer_than(sleeping.since, now) {
            solver.request_wake(WakeTarget::Body(entity), WakeCause::BodyWritten(entity));
        }
    }
    for (entity, force, sleeping) in &forced {
        if force.last_changed().is_newer_than(sleeping.since, now) {
            solver.request_wake(WakeTarget::Body(entity), WakeCause::ForceChanged(entity));
        }
    }
    // A fixed body holding both awake and sleeping islands has no
    // `AnchorAsleep`; its move wakes the sleeping ones too. (Looked up one
    // by one: a scan of `Changed<Body>` would read every awake body, which
    // the step itself writes.)
    let mut moved: Vec<Entity> = solver
        .holding_sleepers
        .iter()
        .copied()
        .filter(|&entity| {
            awake_fixed
                .get(entity)
                .is_ok_and(|body| body.inv_mass == 0.0 && body.is_changed())
        })
        .collect();
    // In entity order, as a query would give them, not the set's.
    moved.sort_unstable();
    for entity in moved {
        solver.request_wake(
            WakeTarget::Anchor(entity),
            WakeCause::FixedBodyMoved(entity),
        );
    }
    for (entity, body, anchor) in &anchors {
        if body.last_changed().is_newer_than(anchor.since, now) {
            solver.request_wake(
                WakeTarget::Anchor(entity),
                WakeCause::FixedBodyMoved(entity),
            );
        }
    }
    if gravity.is_changed() && !gravity.is_added() {
        solver.request_wake(WakeTarget::All, WakeCause::GravityChanged);
    }
}

/// Radii and planes changed in place. (Springs and rods are immutable:
/// their hooks see every change.)
#[derive(bevy::ecs::system::SystemParam)]
pub(crate) struct ChangedConstraints<'w, 's> {
    radii: Query<'w, 's, Entity, Changed<Radius>>,
    planes: Query<'w, 's, Entity, Changed<GroundPlane>>,
}

/// A body as the rebuild sees it.
struct Node {
    entity: Entity,
    inv_mass: f32,
    dynamic: bool,
    /// `Some(since)` when asleep.
    sleeping: Option<Tick>,
    /// A fixed body marked `AnchorAsleep`.
    anchor_asleep: bool,
    changed: Tick,
    substeps: Option<u32>,
    auto: bool,
    no_sleep: bool,
    sleep_speed2: f32,
    /// A valid radius, for contacts.
    radius: Option<f32>,
    /// How long its island has been resting.
    rest_time: f32,
    /// Σ k·(1 + [other end dynamic]) over its springs (the Gershgorin row
    /// sum of the stiffness matrix, before the inverse mass); same for c.
    k_sum: f32,
    c_sum: f32,
}

/// One island under construction.
struct Build {
    members: Range<usize>,
    wake: Option<WakeCause>,
    sleep_request: bool,
    explicit: Option<u32>,
    auto: bool,
    no_sleep: bool,
    all_asleep: bool,
    any_asleep: bool,
    since: Tick,
    timer: f32,
    stability: SpringStability,
    /// The spring with the largest `k·(w_a + w_b)`.
    stiffest: Option<(Entity, f32)>,
}

/// Union-find with path halving and union by size.
struct UnionFind {
    parent: Vec<u32>,
    size: Vec<u32>,
}

impl UnionFind {
    fn new(n: usize) -> Self {
        Self {
            parent: (0..n as u32).collect(),
            size: vec![1; n],
        }
    }

    fn find(&mut self, mut i: u32) -> u32 {
        while self.parent[i as usize] != i {
            let grand = self.parent[self.parent[i as usize] as usize];
            self.parent[i as usize] = grand;
            i = grand;
        }
        i
    }

    fn union(&mut self, a: u32, b: u32) {
        let (mut a, mut b) = (self.find(a), self.find(b));
        if a == b {
            return;
        }
        if self.size[a as usize] < self.size[b as usize] {
            core::mem::swap(&mut a, &mut b);
        }
        self.parent[b as usize] = a;
        self.size[a as usize] += self.size[b as usize];
    }
}

/// The valid joins of one kind (springs or rods).
type Joins<'w, 's, T> = Query<'w, 's, (Entity, &'static T), Without<PhysicsError>>;

/// A body whose per-body island settings changed in place.
type ChangedSettingsFilter = Or<(Changed<Substeps>, Changed<SleepThreshold>)>;

type BuildData = (
    Entity,
    Ref<'static, Body>,
    &'static mut BodyIndex,
    &'static mut Island,
    Option<&'static Sleeping>,
    Option<&'static Substeps>,
    Has<AutoSubsteps>,
    Has<SleepingDisabled>,
    Option<&'static SleepThreshold>,
    Has<AnchorAsleep>,
    Option<&'static Radius>,
    &'static mut RestTime,
);

/// Start of the fixed step: when bodies, springs, substep counts, sleep
/// states or settings changed, finds the islands, wakes or puts to sleep
/// those asked to, works out each island's pass count and stability load,
/// and lays out the slots and rows; then copies every body's state into its
/// slot.
#[allow(clippy::too_many_arguments)]
pub(crate) fn rebuild(
    mut solver: ResMut<SolverState>,
    mut bodies: Query<BuildData, Without<PhysicsError>>,
    (springs, rods): (Joins<Spring>, Joins<DistanceConstraint>),
    changed_bodies: Query<(), ChangedSettingsFilter>,
    has_body: Query<(), With<Body>>,
    entities: &Entities,
    time: Res<Time<Fixed>>,
    (settings, sleep): (Res<PhysicsSettings>, Res<SleepSettings>),
    mut reporter: Reporter,
    (mut woke, mut slept): (MessageWriter<IslandWoke>, MessageWriter<IslandSlept>),
    ticks: SystemChangeTick,
) {
    let timestep = time.timestep();
    let h = timestep.as_secs_f32();
    if !solver.dirty
        && changed_bodies.is_empty()
        && !settings.is_changed()
        && !sleep.is_changed()
        && h == solver.timestep
    {
        return;
    }
    let solver = &mut *solver;
    solver.dirty = false;
    solver.rebuilt = true;
    solver.timestep = h;
    let now = ticks.this_run();

    // Bodies.
    let default_speed = sleep.threshold();
    let mut nodes = Vec::new();
    let mut node_of = EntityHashMap::<u32>::default();
    for (
        entity,
        body,
        _,
        _,
        sleeping,
        substeps,
        auto,
        no_sleep,
        threshold,
        anchor_asleep,
        radius,
        rest,
    ) in &bodies
    {
        // One warning per kind of bad value while it stays bad; a value
        // fixed and broken again is reported again.
        let was = solver.settings_reported.get(&entity).copied().unwrap_or(0);
        let mut now_bad = 0u8;
        let mut report = |bit: u8, issue| {
            now_bad |= bit;
            if was & bit == 0 {
                reporter.warn(entity, issue);
            }
        };
        let substeps = substeps.map(|&Substeps(k)| {
            let used = k.clamp(1, PhysicsSettings::MAX_SUBSTEPS);
            if used != k {
                report(1, PhysicsIssue::InvalidSubsteps { substeps: k, used });
            }
            used
        });
        let speed = threshold.map_or(default_speed, |&SleepThreshold(t)| {
            if sanitize(t) != t {
                report(2, PhysicsIssue::InvalidSleepThreshold { threshold: t });
            }
            sanitize(t)
        });
        let radius = radius.and_then(|&Radius(r)| {
            if r >= 0.0 && r.is_finite() {
                Some(r)
            } else {
                report(4, PhysicsIssue::InvalidRadius { radius: r });
                None
            }
        });
        if now_bad != was {
            if now_bad == 0 {
                solver.settings_reported.remove(&entity);
            } else {
                solver.settings_reported.insert(entity, now_bad);
            }
        }
        node_of.insert(entity, nodes.len() as u32);
        nodes.push(Node {
            entity,
            inv_mass: body.inv_mass,
            dynamic: body.inv_mass > 0.0 && body.inv_mass.is_finite(),
            sleeping: sleeping.map(|s| s.since),
            anchor_asleep,
            changed: body.last_changed(),
            substeps,
            auto,
            no_sleep,
            sleep_speed2: speed * speed,
            radius,
            rest_time: rest.0,
            k_sum: 0.0,
            c_sum: 0.0,
        });
    }
    let n = nodes.len();

    // Springs: check each, join islands, sum the stiffness bounds.
    struct Link {
        entity: Entity,
        a: u32,
        b: u32,
        row: SpringRow,
    }
    let mut links = Vec::new();
    let mut union = UnionFind::new(n);
    // A moved or removed anchor wakes the islands its springs hold.
    let mut anchor_wakes = EntityHashMap::<WakeCause>::default();
    solver
        .wake_requests
        .retain(|&(target, cause)| match target {
            WakeTarget::Anchor(anchor) => {
                anchor_wakes.entry(anchor).or_insert(cause);
                false
            }
            _ => true,
        });
    // In entity order, whatever the tables' order: the sums over a body's
    // springs then do not depend on how the scene was edited.
    let mut springs: Vec<_> = springs.iter().collect();
    springs.sort_unstable_by_key(|&(entity, _)| entity);
    for (entity, spring) in springs {
        if !anchor_wakes.is_empty() {
            for (end, other) in [(spring.a, spring.b), (spring.b, spring.a)] {
                if let Some(&cause) = anchor_wakes.get(&end) {
                    solver.wake_requests.push((WakeTarget::Body(other), cause));
                }
            }
        }
        if let Err(issue) = validate_spring(spring, &has_body, entities) {
            reporter.reject(entity, issue);
            continue;
        }
        // An end that is itself invalid was reported already; the spring
        // waits for it.
        let (Some(&a), Some(&b)) = (node_of.get(&spring.a), node_of.get(&spring.b)) else {
            continue;
        };
        let (da, db) = (nodes[a as usize].dynamic, nodes[b as usize].dynamic);
        if !da && !db {
            continue;
        }
        let weight = if da && db { 2.0 } else { 1.0 };
        for (end, dynamic) in [(a, da), (b, db)] {
            if dynamic {
                nodes[end as usize].k_sum += weight * spring.stiffness;
                nodes[end as usize].c_sum += weight * spring.damping;
            }
        }
        if da && db {
            union.union(a, b);
        }
        links.push(Link {
            entity,
            a,
            b,
            row: SpringRow {
                a,
                b,
                rest: spring.rest_length,
                k: spring.stiffness,
                c: spring.damping,
            },
        });
    }

    // Rods: check each, join islands.
    let mut rod_links = Vec::new();
    let mut rods: Vec<_> = rods.iter().collect();
    rods.sort_unstable_by_key(|&(entity, _)| entity);
    for (entity, rod) in rods {
        if !anchor_wakes.is_empty() {
            for (end, other) in [(rod.a, rod.b), (rod.b, rod.a)] {
                if let Some(&cause) = anchor_wakes.get(&end) {
                    solver.wake_requests.push((WakeTarget::Body(other), cause));
                }
            }
        }
        let checked = validate_ends(rod.a, rod.b, &has_body, entities).and_then(|()| {
            if rod.length >= 0.0 && rod.length.is_finite() {
                Ok(())
            } else {
                Err(PhysicsIssue::InvalidLength { length: rod.length })
            }
        });
        if let Err(issue) = checked {
            reporter.reject(entity, issue);
            continue;
        }
        let (Some(&a), Some(&b)) = (node_of.get(&rod.a), node_of.get(&rod.b)) else {
            continue;
        };
        let (da, db) = (nodes[a as usize].dynamic, nodes[b as usize].dynamic);
        if !da && !db {
            continue;
        }
        if da && db {
            union.union(a, b);
        }
        rod_links.push((a, b, rod.length));
    }

    // Islands, numbered in the order of their first body.
    let mut island_of = vec![u32::MAX; n];
    let mut island_of_root = vec![u32::MAX; n];
    let mut sizes = Vec::<usize>::new();
    for i in 0..n {
        if nodes[i].dynamic {
            let root = union.find(i as u32) as usize;
            if island_of_root[root] == u32::MAX {
                island_of_root[root] = sizes.len() as u32;
                sizes.push(0);
            }
            island_of[i] = island_of_root[root];
            sizes[island_of[i] as usize] += 1;
        }
    }
    let mut builds: Vec<Build> = Vec::with_capacity(sizes.len());
    let mut start = 0;
    for &size in &sizes {
        builds.push(Build {
            members: start..start,
            wake: None,
            sleep_request: false,
            explicit: None,
            auto: false,
            no_sleep: false,
            all_asleep: true,
            any_asleep: false,
            since: Tick::new(0),
            timer: f32::INFINITY,
            stability: SpringStability::new(0.0, 0.0, 0.0),
            stiffest: None,
        });
        start += size;
    }
    let mut members = vec![0u32; start];
    for i in 0..n {
        let Some(b) = builds.get_mut(island_of[i] as usize) else {
            continue;
        };
        members[b.members.end] = i as u32;
        b.members.end += 1;
        let node = &nodes[i];
        b.explicit = b.explicit.max(node.substeps);
        b.auto |= node.auto;
        b.no_sleep |= node.no_sleep;
        b.all_asleep &= node.sleeping.is_some();
        b.any_asleep |= node.sleeping.is_some();
        if let Some(since) = node.sleeping
            && since.is_newer_than(b.since, now)
        {
            b.since = since;
        }
        b.timer = b.timer.min(node.rest_time);
        b.stability.omega_squared = b.stability.omega_squared.max(node.k_sum * node.inv_mass);
        b.stability.gamma = b.stability.gamma.max(node.c_sum * node.inv_mass);
    }
    let island_of_link = |link: &Link| {
        let end = if nodes[link.a as usize].dynamic {
            link.a
        } else {
            link.b
        };
        island_of[end as usize]
    };
    for link in &links {
        let b = &mut builds[island_of_link(link) as usize];
        let pair = link.row.k * (nodes[link.a as usize].inv_mass + nodes[link.b as usize].inv_mass);
        if b.stiffest.is_none_or(|(_, k)| pair > k) {
            b.stiffest = Some((link.entity, pair));
        }
        // A fixed body a sleeping island hangs from, moved since it fell
        // asleep.
        for (end, other) in [(link.a, link.b), (link.b, link.a)] {
            let end = &nodes[end as usize];
            if !end.dynamic
                && b.wake.is_none()
                && nodes[other as usize].sleeping.is_some()
                && end.changed.is_newer_than(b.since, now)
            {
                b.wake = Some(WakeCause::FixedBodyMoved(end.entity));
            }
        }
    }

    // Wake and sleep requests.
    let mark = |builds: &mut Vec<Build>, node: Option<&u32>, cause: WakeCause| {
        if let Some(&i) = node
            && let Some(b) = builds.get_mut(island_of[i as usize] as usize)
            && b.wake.is_none()
        {
            b.wake = Some(cause);
        }
    };
    for (target, cause) in core::mem::take(&mut solver.wake_requests) {
        match target {
            WakeTarget::Body(entity) => mark(&mut builds, node_of.get(&entity), cause),
            WakeTarget::Island(old) => {
                if let Some(old) = solver.islands.get(old as usize) {
                    for entity in &solver.island_members[old.members.clone()] {
                        mark(&mut builds, node_of.get(entity), cause);
                    }
                }
            }
            WakeTarget::All => {
                for b in &mut builds {
                    b.wake.get_or_insert(cause);
                }
            }
            WakeTarget::Anchor(_) => {}
        }
    }
    for entity in core::mem::take(&mut solver.sleep_requests) {
        if let Some(&i) = node_of.get(&entity)
            && let Some(b) = builds.get_mut(island_of[i as usize] as usize)
        {
            b.sleep_request = true;
        }
    }

    // Each island: asleep or awake, pass count, load.
    let target = settings.target_load();
    let mut islands = Vec::with_capacity(builds.len());
    let mut passes_of = Vec::with_capacity(builds.len());
    let mut load_of = Vec::with_capacity(builds.len());
    let mut island_members = Vec::with_capacity(members.len());
    for b in &builds {
        let bodies_of = || {
            members[b.members.clone()]
                .iter()
                .map(|&i| nodes[i as usize].entity)
        };
        let sleeping = if b.any_asleep {
            match (b.all_asleep, b.wake) {
                (true, None) => true,
                (_, cause) => {
                    for i in &members[b.members.clone()] {
                        if nodes[*i as usize].sleeping.is_some() {
                            reporter
                                .commands()
                                .entity(nodes[*i as usize].entity)
                                .try_remove::<Sleeping>();
                        }
                    }
                    woke.write(IslandWoke {
                        bodies: bodies_of().collect(),
                        cause: cause.unwrap_or(WakeCause::Joined),
                    });
                    false
                }
            }
        } else if b.sleep_request && !b.no_sleep {
            for entity in bodies_of() {
                fall_asleep(reporter.commands(), entity, now);
            }
            slept.write(IslandSlept {
                bodies: bodies_of().collect(),
            });
            true
        } else {
            false
        };
        let auto = b.auto || (settings.auto_substeps && b.explicit.is_none());
        let base = b
            .explicit
            .unwrap_or(if auto { 1 } else { settings.passes() });
        let passes = if auto {
            base.max(
                b.stability
                    .substeps_for_load(h, target, settings.auto_cap()),
            )
        } else {
            base
        };
        let pass_h = (timestep / passes).as_secs_f32();
        let load = b.stability.load(pass_h);
        if let Some((spring, _)) = b.stiffest {
            if load < 1.0 {
                solver.unstable_reported.remove(&spring);
            } else if solver.unstable_reported.insert(spring) {
                reporter.warn(spring, b.stability.issue(pass_h, h));
            }
        }
        let start = island_members.len();
        island_members.extend(bodies_of());
        islands.push(IslandState {
            members: start..island_members.len(),
            slots: 0..0,
            sleeping,
            since: if sleeping && !b.any_asleep {
                now
            } else {
                b.since
            },
            can_sleep: !b.no_sleep,
            timer: if sleeping || b.wake.is_some() || !b.timer.is_finite() {
                0.0
            } else {
                b.timer
            },
        });
        passes_of.push(passes);
        load_of.push(load);
    }

    // Groups: one per pass count among awake islands, fewest passes first.
    let mut counts: Vec<u32> = (0..islands.len())
        .filter(|&i| !islands[i].sleeping)
        .map(|i| passes_of[i])
        .collect();
    counts.sort_unstable();
    counts.dedup();
    if counts.is_empty() && nodes.iter().any(|node| !node.dynamic) {
        counts.push(1);
    }
    let mut groups: Vec<Group> = counts
        .iter()
        .map(|&passes| Group {
            passes,
            ..default()
        })
        .collect();

    // Slots: by group, island, body; then fixed bodies in group 0.
    let mut slot_of = vec![u32::MAX; n];
    let mut group_of = vec![u32::MAX; n];
    let mut next = 0usize;
    for (g, group) in groups.iter_mut().enumerate() {
        let start = next;
        for (island, state) in islands.iter_mut().enumerate() {
            if state.sleeping || passes_of[island] != group.passes {
                continue;
            }
            let first = next;
            for &i in &members[builds[island].members.clone()] {
                slot_of[i as usize] = next as u32;
                group_of[i as usize] = g as u32;
                group.entities.push(nodes[i as usize].entity);
                next += 1;
            }
            state.slots = first..next;
        }
        group.slots = start..next;
    }
    // A fixed body that only sleeping islands hang from is left out of the
    // passes (moving it wakes them, which brings it back).
    let mut holds_awake = vec![false; n];
    let mut has_spring = vec![false; n];
    solver.holding_sleepers.clear();
    let ends = links
        .iter()
        .map(|link| (link.a, link.b))
        .chain(rod_links.iter().map(|&(a, b, _)| (a, b)));
    for (a, b) in ends {
        let dynamic_end = if nodes[a as usize].dynamic { a } else { b };
        let awake = !islands[island_of[dynamic_end as usize] as usize].sleeping;
        for end in [a as usize, b as usize] {
            has_spring[end] = true;
            holds_awake[end] |= awake;
            if !awake && !nodes[end].dynamic {
                solver.holding_sleepers.insert(nodes[end].entity);
            }
        }
    }
    let fixed_start = next;
    for (i, node) in nodes.iter().enumerate() {
        // Markers of the other kind, left by a body that switched between
        // fixed and dynamic: a dynamic body is never a resting anchor, a
        // fixed one never asleep (it joins no island).
        if node.dynamic && node.anchor_asleep {
            reporter
                .commands()
                .entity(node.entity)
                .try_remove::<AnchorAsleep>();
        }
        if !node.dynamic && node.sleeping.is_some() {
            reporter
                .commands()
                .entity(node.entity)
                .try_remove::<Sleeping>();
        }
        if node.dynamic {
            continue;
        }
        let resting = has_spring[i] && !holds_awake[i];
        if resting && !node.anchor_asleep {
            rest_anchor(reporter.commands(), node.entity, now);
        } else if !resting && node.anchor_asleep {
            reporter
                .commands()
                .entity(node.entity)
                .try_remove::<AnchorAsleep>();
        }
        if !resting && let Some(group) = groups.first_mut() {
            slot_of[i] = next as u32;
            group_of[i] = 0;
            group.entities.push(node.entity);
            next += 1;
        }
    }
    let slots = next;
    for group in &mut groups {
        group.iterate_all = 2 * group.entities.len() >= slots;
    }

    // Rows: the springs of awake islands, by group, then island (in slot
    // order), then query order. Each body's springs keep their relative
    // order, so its force sums do not depend on how islands are laid out.
    let mut rows_by_group = vec![Vec::new(); groups.len()];
    for link in &links {
        let island = island_of_link(link);
        if islands[island as usize].sleeping {
            continue;
        }
        let (a, b) = (slot_of[link.a as usize], slot_of[link.b as usize]);
        let g = group_of[if nodes[link.a as usize].dynamic {
            link.a
        } else {
            link.b
        } as usize];
        rows_by_group[g as usize].push((
            islands[island as usize].slots.start,
            SpringRow { a, b, ..link.row },
        ));
    }
    solver.springs.clear();
    for (group, mut rows) in groups.iter_mut().zip(rows_by_group) {
        rows.sort_by_key(|&(first_slot, _)| first_slot);
        let start = solver.springs.len();
        // Each island's slots and rows, for splitting passes over threads.
        let mut at = start;
        for state in islands
            .iter()
            .filter(|state| !state.slots.is_empty() && group.slots.contains(&state.slots.start))
        {
            let end = at
                + rows[at - start..]
                    .iter()
                    .take_while(|(first_slot, _)| *first_slot == state.slots.start)
                    .count();
            group.islands.push(Span {
                slots: state.slots.clone(),
                rows: at..end,
            });
            at = end;
        }
        solver.springs.extend(rows.into_iter().map(|(_, row)| row));
        group.rows = start..solver.springs.len();
    }

    // Rods and round bodies of awake islands, by group, and the bodies they
    // touch.
    let mut rods_by_group = vec![Vec::new(); groups.len()];
    for &(a, b, length) in &rod_links {
        let dynamic_end = if nodes[a as usize].dynamic { a } else { b };
        let g = group_of[dynamic_end as usize];
        if g != u32::MAX && !islands[island_of[dynamic_end as usize] as usize].sleeping {
            rods_by_group[g as usize].push(RodRow {
                a: slot_of[a as usize],
                b: slot_of[b as usize],
                length,
            });
        }
    }
    let mut rounds_by_group = vec![Vec::new(); groups.len()];
    for (i, node) in nodes.iter().enumerate() {
        if let Some(radius) = node.radius
            && node.dynamic
            && group_of[i] != u32::MAX
        {
            rounds_by_group[group_of[i] as usize].push(RoundRow {
                slot: slot_of[i],
                radius,
            });
        }
    }
    let mut entity_of_slot = vec![Entity::PLACEHOLDER; next];
    for (i, node) in nodes.iter().enumerate() {
        if slot_of[i] != u32::MAX {
            entity_of_slot[slot_of[i] as usize] = node.entity;
        }
    }
    solver.rods.clear();
    solver.rounds.clear();
    let mut touched = vec![false; next];
    for ((group, rods), rounds) in groups.iter_mut().zip(rods_by_group).zip(rounds_by_group) {
        let mut mark = |slot: u32| {
            if !core::mem::replace(&mut touched[slot as usize], true) {
                group
                    .constrained
                    .push((entity_of_slot[slot as usize], slot));
            }
        };
        for rod in &rods {
            mark(rod.a);
            mark(rod.b);
        }
        for round in &rounds {
            mark(round.slot);
        }
        let start = solver.rods.len();
        solver.rods.extend(rods);
        group.rods = start..solver.rods.len();
        let start = solver.rounds.len();
        solver.rounds.extend(rounds);
        group.rounds = start..solver.rounds.len();
    }

    // Write each body's index and island; gather its state.
    solver.pos.clear();
    solver.pos.resize(slots, Vec3A::ZERO);
    solver.vel.clear();
    solver.vel.resize(slots, Vec3A::ZERO);
    solver.valid.clear();
    solver.valid.resize(slots, false);
    solver.inv_mass.clear();
    solver.inv_mass.resize(slots, 0.0);
    solver.sleep_speed2.clear();
    solver.sleep_speed2.resize(slots, 0.0);
    let mut any_invalid = false;
    for (i, (_, body, mut index, mut island, .., mut rest)) in bodies.iter_mut().enumerate() {
        let node = &nodes[i];
        let slot = slot_of[i];
        let new_index = BodyIndex {
            slot,
            group: group_of[i],
        };
        if *index != new_index {
            *index = new_index;
        }
        let new_island = match island_of[i] {
            u32::MAX => Island::NONE,
            id => Island {
                id,
                substeps: passes_of[id as usize],
                load: load_of[id as usize],
                group: if islands[id as usize].sleeping {
                    u32::MAX
                } else {
                    group_of[i]
                },
            },
        };
        if *island != new_island {
            *island = new_island;
        }
        let rest_time = match island_of[i] {
            u32::MAX => 0.0,
            id => islands[id as usize].timer,
        };
        if rest.0 != rest_time {
            rest.0 = rest_time;
        }
        if slot != u32::MAX {
            let s = slot as usize;
            let valid = state_is_valid(&body);
            any_invalid |= !valid;
            solver.valid[s] = valid;
            solver.pos[s] = body.position.into();
            solver.vel[s] = body.velocity.into();
            solver.inv_mass[s] = node.inv_mass;
            solver.sleep_speed2[s] = node.sleep_speed2;
        }
    }
    solver.pass_has_invalid = any_invalid;
    if any_invalid {
        solver.request_report();
    }
    solver.force.clear();
    solver.force.resize(fixed_start, Vec3A::ZERO);
    solver.fixed_slots = fixed_start..slots;
    solver.group_synced = vec![None; groups.len()];
    solver.groups = groups;
    solver.any_sleeping = islands.iter().any(|island| island.sleeping);
    solver.islands = islands;
    solver.island_members = island_members;
}

/// Runs `$find` on each item of `$query` and `$apply` on what it returns:
/// with `$parallel`, the finds run on all compute threads into `$found`
/// (a `Parallel<Vec<_>>`), and the applies after them on this thread.
macro_rules! scan {
    ($query:expr, $parallel:expr, $found:expr, $find:expr, $apply:expr) => {
        if $parallel {
            $query.par_iter_mut().for_each(|item| {
                if let Some(found) = $find(item) {
                    $found.borrow_local_mut().push(found);
                }
            });
            $found.drain().for_each(&mut $apply);
        } else {
            $query.iter_mut().filter_map($find).for_each(&mut $apply);
        }
    };
}

/// Start of the fixed step, after [`gather_written`]: collects the ground
/// planes. In a dense step (see [`crate::dense`]) it also takes each body's
/// accumulated force and reads its constant force and damping into the
/// slot.
pub(crate) fn gather(
    mut solver: ResMut<SolverState>,
    settings: Res<PhysicsSettings>,
    mut found: Local<Parallel<Vec<(usize, Vec3)>>>,
    mut pushed: Query<(&BodyIndex, &mut AccumulatedForce), (Stepped, Changed<AccumulatedForce>)>,
    extras: Query<(&BodyIndex, Option<&ConstantForce>, Option<&Damping>), ExtraFilter>,
    planes: Query<&GroundPlane>,
) {
    let solver = &mut *solver;
    solver.planes.clear();
    solver.planes.extend(planes.iter().copied());
    let rebuilt = core::mem::take(&mut solver.rebuilt);
    if !solver.dense {
        return;
    }
    // Marks left by the last step (which reported them).
    if solver.diverged.len() != solver.pos.len() || core::mem::take(&mut solver.any_diverged) {
        solver.diverged.clear();
        solver.diverged.resize(solver.pos.len(), false);
    }
    gather_extras(solver, rebuilt, &extras);
    let slots = solver.pos.len();
    // Large scenes scan their bodies on all compute threads; what a scan
    // finds is then applied here, in any order (one body per slot).
    let parallel = slots >= settings.parallel_threshold && ComputeTaskPool::try_get().is_some();
    let found = &mut *found;
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
    let (accumulated, extra_slots) = (&mut solver.accumulated, &mut solver.extra_slots);
    let mut apply = |(i, taken): (usize, Vec3)| {
        accumulated[i] = taken.into();
        extra_slots.push(i as u32);
    };
    scan!(pushed, parallel, found, take, apply);
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
pub(crate) fn gather_written(
    world: &mut World,
    changed: &mut QueryState<Written, (Stepped, Changed<Body>)>,
    every: &mut QueryState<Written, Stepped>,
    mut found: Local<Parallel<Vec<(usize, Body)>>>,
) {
    let found = &mut *found;
    let threshold = world.resource::<PhysicsSettings>().parallel_threshold;
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
        let (pos, vel, valid_slots, inv_mass) = (
            &mut solver.pos,
            &mut solver.vel,
            &mut solver.valid,
            &mut solver.inv_mass,
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
        let parallel = slots >= threshold && ComputeTaskPool::try_get().is_some();
        match since {
            Some(since) => world.last_change_tick_scope(since, |world| {
                let mut bodies = changed.query(world);
                scan!(bodies, parallel, found, written, apply);
            }),
            None => {
                let mut bodies = every.query(world);
                scan!(bodies, parallel, found, written, apply);
            }
        }
        solver.pass_has_invalid = any_invalid;
        if any_invalid {
            solver.request_report();
        }
        // Islands and loads follow the new mass from the next step; the
        // passes use it from this one.
        if mass_changed {
            solver.dirty = true;
        }
    });
}

/// Bodies with a constant force or a damping.
type ExtraFilter = (Stepped, Or<(With<ConstantForce>, With<Damping>)>);

/// Dense steps: clears the per-slot forces and damping of the last step and
/// reads this step's.
fn gather_extras(
    solver: &mut SolverState,
    rebuilt: bool,
    extras: &Query<(&BodyIndex, Option<&ConstantForce>, Option<&Damping>), ExtraFilter>,
) {
    let slots = solver.pos.len();
    if rebuilt || solver.damping.len() != slots {
        // New slots: start from nothing.
        solver.extra_slots.clear();
        for v in [&mut solver.accumulated, &mut solver.constant] {
            v.clear();
            v.resize(slots, Vec3A::ZERO);
        }
        solver.damping.clear();
        solver.damping.resize(slots, 0.0);
    }
    for slot in solver.extra_slots.drain(..) {
        let i = slot as usize;
        if i < slots {
            solver.accumulated[i] = Vec3A::ZERO;
            solver.constant[i] = Vec3A::ZERO;
            solver.damping[i] = 0.0;
        }
    }
    let mut bad_damping = false;
    for (index, constant, damping) in extras {
        let i = index.slot as usize;
        if i >= slots {
            continue;
        }
        solver.extra_slots.push(index.slot);
        if let Some(constant) = constant {
            solver.constant[i] = constant.0.into();
        }
        if let Some(&damping) = damping {
            // An invalid coefficient damps nothing (dividing by 1 + h·0 is
            // exact) and is reported at the end of the step.
            if damping.is_valid() {
                solver.damping[i] = damping.0;
            } else {
                bad_damping = true;
            }
        }
    }
    if bad_damping {
        solver.request_report();
    }
}

/// End of the fixed step: advances each awake island's resting time and puts
/// the islands that rested long enough to sleep.
pub(crate) fn update_sleep(
    mut solver: ResMut<SolverState>,
    sleep: Res<SleepSettings>,
    mut commands: Commands,
    mut slept: MessageWriter<IslandSlept>,
    mut rest: Query<&mut RestTime>,
    ticks: SystemChangeTick,
) {
    if !sleep.enabled {
        return;
    }
    let solver = &mut *solver;
    let (h, time_to_sleep, now) = (solver.timestep, sleep.sleep_time(), ticks.this_run());
    let (vel, valid, speed2) = (&solver.vel, &solver.valid, &solver.sleep_speed2);
    for island in &mut solver.islands {
        if island.sleeping || island.slots.is_empty() {
            continue;
        }
        let resting = island
            .slots
            .clone()
            .all(|s| valid[s] && vel[s].length_squared() < speed2[s]);
        // An island kept awake keeps no time (nor writes it every step).
        let timer = if resting && island.can_sleep {
            island.timer + h
        } else {
            0.0
        };
        if timer != island.timer {
            island.timer = timer;
            // On the bodies too, where snapshots and rollback find it.
            for &entity in &solver.island_members[island.members.clone()] {
                if let Ok(mut rest) = rest.get_mut(entity) {
                    rest.0 = timer;
                }
            }
        }
        if resting && island.can_sleep && island.timer >= time_to_sleep {
            island.sleeping = true;
            island.since = now;
            solver.any_sleeping = true;
            let bodies = solver.island_members[island.members.clone()].to_vec();
            for &entity in &bodies {
                fall_asleep(&mut commands, entity, now);
            }
            slept.write(IslandSlept { bodies });
        }
    }
}

//! The rebuild of the solver's index, at the start of a fixed step when
//! bodies, joins, substep counts, sleep states or settings changed.
//!
//! Its stages, in order, each a function of its own:
//!
//! 1. [`read::bodies`]: every body not left out for an error, with its
//!    per-body settings checked;
//! 2. [`read::joins`]: springs and rods checked, islands joined
//!    (union-find over joins between dynamic bodies), stiffness bounds
//!    summed; then [`touch::join`]: round bodies within reach of each
//!    other join islands too;
//! 3. [`islands::find`]: the islands, numbered in the order of their first
//!    body, with what their bodies say (substeps, sleep, stiffest spring);
//! 4. [`islands::apply_requests`]: wake and sleep requests from hooks,
//!    commands and the wake scan;
//! 5. [`islands::decide`]: each island asleep or awake, its pass count and
//!    stability load (with the warning for an unstable one);
//! 6. [`layout::slots`]: groups of islands by pass count, slots by group,
//!    island, body, then the fixed bodies; anchors of sleeping islands
//!    rested;
//! 7. [`layout::rows`]: spring rows by group and island, rods and round
//!    bodies by group; [`touch::lay_out`]: what the broad phase needs;
//! 8. [`layout::write_back`]: each body's index, island and resting time,
//!    and its state into its slot.

use core::ops::Range;

use bevy::ecs::archetype::Archetypes;
use bevy::ecs::change_detection::Tick;
use bevy::ecs::component::Components;
use bevy::ecs::entity::{Entities, EntityHashMap};
use bevy::ecs::entity_disabling::DefaultQueryFilters;
use bevy::ecs::system::{SystemChangeTick, SystemParam};
use bevy::prelude::*;

use crate::data::body::Body;
use crate::data::constraints::{
    AngleLimit, CollisionGroups, ConstraintSettings, ContactMaterial, DistanceConstraint,
    DistanceLimit, Radius,
};
use crate::data::islands::{
    AutoSubsteps, ImplicitSprings, IslandSlept, IslandWoke, RestTime, SleepSettings,
    SleepThreshold, Sleeping, SleepingDisabled, Substeps,
};
use crate::data::issues::PhysicsError;
use crate::data::joins::Spring;
use crate::data::requests::{
    AnchorAsleep, BodyIndex, Island, SettingsReported, SolverRequests, WakeCause,
};
use crate::data::settings::PhysicsSettings;
use crate::kernels::constraints::Material;
use crate::kernels::springs::SpringRow;
use crate::kernels::stability::SpringStability;
use crate::kernels::union_find::UnionFind;
use crate::solver::SolverState;
use crate::solver::report::Reporter;

mod enabled;
mod islands;
mod layout;
mod read;
mod touch;

/// A body as the rebuild sees it.
struct Node {
    entity: Entity,
    inv_mass: f32,
    dynamic: bool,
    /// `Some(since)` when asleep.
    sleeping: Option<Tick>,
    /// Your code inserted `Sleeping` on it: a request to sleep (the body
    /// counts as awake until the request is carried out).
    asks_sleep: bool,
    /// A fixed body marked `AnchorAsleep`.
    anchor_asleep: bool,
    changed: Tick,
    substeps: Option<u32>,
    auto: bool,
    /// It has `ImplicitSprings`.
    implicit: bool,
    no_sleep: bool,
    sleep_speed2: f32,
    /// A valid radius, for contacts, and the body's own material.
    radius: Option<f32>,
    material: Option<Material>,
    groups: CollisionGroups,
    /// Its state, and whether it can be stepped.
    pos: Vec3A,
    vel: Vec3A,
    valid: bool,
    /// Within reach of another dynamic round body it is not joined to.
    touching: bool,
    /// How long its island has been resting.
    rest_time: f32,
    /// Σ k·(1 + [other end dynamic]) over its springs (the Gershgorin row
    /// sum of the stiffness matrix, before the inverse mass); same for c.
    k_sum: f32,
    c_sum: f32,
}

/// A valid spring between two nodes.
struct Link {
    entity: Entity,
    a: u32,
    b: u32,
    row: SpringRow,
}

/// A valid rod (`min == max`) or distance limit between two nodes.
struct RodLink {
    a: u32,
    b: u32,
    min: f32,
    max: f32,
}

/// A valid angle limit over three nodes.
struct AngleLink {
    a: u32,
    p: u32,
    b: u32,
    min: f32,
    max: f32,
    axis: Vec3A,
}

/// What the reading stages found.
struct Scene {
    nodes: Vec<Node>,
    node_of: EntityHashMap<u32>,
    links: Vec<Link>,
    rods: Vec<RodLink>,
    angles: Vec<AngleLink>,
    union: UnionFind,
}

impl Scene {
    /// The dynamic end of a join (a join has at least one).
    fn dynamic_end(&self, a: u32, b: u32) -> u32 {
        if self.nodes[a as usize].dynamic { a } else { b }
    }

    /// Every pair of nodes a join holds directly, with at least one end
    /// dynamic: springs, rods and distance limits, and the three pairs of
    /// each angle limit.
    fn joined_pairs(&self) -> impl Iterator<Item = (u32, u32)> + '_ {
        let angle_pairs = self
            .angles
            .iter()
            .flat_map(|l| [(l.a, l.p), (l.p, l.b), (l.a, l.b)]);
        self.links
            .iter()
            .map(|link| (link.a, link.b))
            .chain(self.rods.iter().map(|rod| (rod.a, rod.b)))
            .chain(angle_pairs)
            .filter(|&(a, b)| self.nodes[a as usize].dynamic || self.nodes[b as usize].dynamic)
    }
}

/// One island under construction.
struct Build {
    members: Range<usize>,
    wake: Option<WakeCause>,
    sleep_request: bool,
    explicit: Option<u32>,
    auto: bool,
    /// A body has `ImplicitSprings`.
    implicit: bool,
    no_sleep: bool,
    all_asleep: bool,
    any_asleep: bool,
    since: Tick,
    timer: f32,
    stability: SpringStability,
    /// Two of its round bodies are within reach of each other.
    touching: bool,
    /// The spring with the largest `k·(w_a + w_b)`.
    stiffest: Option<(Entity, f32)>,
}

/// The islands as found.
struct Islands {
    /// Per node: its island, or `u32::MAX` for a fixed body.
    island_of: Vec<u32>,
    builds: Vec<Build>,
    /// The nodes of each island, `builds[i].members` of it.
    members: Vec<u32>,
}

impl Islands {
    /// The island of a join.
    fn of_join(&self, scene: &Scene, a: u32, b: u32) -> u32 {
        self.island_of[scene.dynamic_end(a, b) as usize]
    }
}

/// What the decision made of each island.
struct Decided {
    states: Vec<crate::solver::IslandState>,
    passes: Vec<u32>,
    /// Per island: stepped implicitly.
    implicit: Vec<bool>,
    loads: Vec<f32>,
    /// The entities of each island, `states[i].members` of it.
    members: Vec<Entity>,
}

/// The slots as laid out.
struct Layout {
    groups: Vec<crate::solver::Group>,
    /// Per node: its slot and group, or `u32::MAX`.
    slot_of: Vec<u32>,
    group_of: Vec<u32>,
    /// The first slot of a fixed body, and the number of slots.
    fixed_start: usize,
    slots: usize,
}

/// The valid joins of one kind (springs or rods).
type Joins<'w, 's, T> = Query<'w, 's, (Entity, &'static T), Without<PhysicsError>>;

/// A body whose per-body island settings changed in place.
type ChangedSettingsFilter = Or<(Changed<Substeps>, Changed<SleepThreshold>)>;

/// What the rebuild reads and writes per body.
type BuildData = (
    Entity,
    Ref<'static, Body>,
    &'static mut BodyIndex,
    &'static mut Island,
    Option<&'static Sleeping>,
    Option<&'static Substeps>,
    (Has<AutoSubsteps>, Has<ImplicitSprings>),
    Has<SleepingDisabled>,
    (
        Option<&'static SleepThreshold>,
        Option<&'static SettingsReported>,
    ),
    Has<AnchorAsleep>,
    Option<&'static Radius>,
    &'static mut RestTime,
    Option<&'static ContactMaterial>,
    Option<&'static CollisionGroups>,
);

/// Everything the rebuild reads of the world.
#[derive(SystemParam)]
pub(crate) struct Rebuild<'w, 's> {
    solver: ResMut<'w, SolverState>,
    requests: ResMut<'w, SolverRequests>,
    bodies: Query<'w, 's, BuildData, Without<PhysicsError>>,
    springs: Joins<'w, 's, Spring>,
    rods: Joins<'w, 's, DistanceConstraint>,
    limits: Joins<'w, 's, DistanceLimit>,
    angle_limits: Joins<'w, 's, AngleLimit>,
    changed_bodies: Query<'w, 's, (), ChangedSettingsFilter>,
    has_body: Query<'w, 's, (), With<Body>>,
    entities: &'w Entities,
    archetypes: &'w Archetypes,
    components: &'w Components,
    time: Res<'w, Time<Fixed>>,
    settings: Res<'w, PhysicsSettings>,
    constraints: Res<'w, ConstraintSettings>,
    sleep: Res<'w, SleepSettings>,
    reporter: Reporter<'w, 's>,
    woke: MessageWriter<'w, IslandWoke>,
    slept: MessageWriter<'w, IslandSlept>,
    ticks: SystemChangeTick,
}

/// Start of the fixed step: when bodies, joins, substep counts, sleep
/// states or settings changed, or a body the last rebuild did not see was
/// enabled again (see [`enabled`]), rebuilds the index in the stages
/// listed in the [module docs](self); then copies every body's state into
/// its slot.
pub(crate) fn rebuild(
    mut p: Rebuild,
    mut observed: Local<enabled::Observed>,
    filters: Option<Res<DefaultQueryFilters>>,
    mut commands: Commands,
) {
    let h = p.time.timestep().as_secs_f32();
    // The listed bodies are looked up only when the observer is new;
    // after that, it asks for the rebuild.
    let look_up = enabled::observe(filters.as_deref(), &mut observed, p.entities, &mut commands);
    if !p.requests.dirty
        && p.changed_bodies.is_empty()
        && !p.settings.is_changed()
        && !p.constraints.is_changed()
        && !p.sleep.is_changed()
        && h == p.solver.timestep
        && !(look_up
            && p.solver
                .unseen
                .iter()
                .any(|&entity| p.bodies.contains(entity)))
    {
        return;
    }
    run(&mut p, h);
}

/// Start of the fixed step, after
/// [`find_pairs`](crate::solver::contacts::find_pairs): rebuilds the index
/// at once when the islands no longer follow the round bodies within reach
/// of each other (see [`contacts`](crate::solver::contacts)).
pub(crate) fn rebuild_touched(mut p: Rebuild) {
    if !core::mem::take(&mut p.solver.touch.stale) {
        return;
    }
    p.solver.touch.rebuilt = true;
    let h = p.time.timestep().as_secs_f32();
    run(&mut p, h);
}

/// The rebuild's stages.
fn run(p: &mut Rebuild, h: f32) {
    p.requests.dirty = false;
    p.solver.rebuilt = true;
    p.solver.layouts += 1;
    p.solver.timestep = h;
    let scene = read::bodies(p);
    let mut scene = read::joins(p, scene);
    touch::join(p, &mut scene);
    let mut islands = islands::find(p, &mut scene);
    islands::apply_requests(p, &scene, &mut islands);
    let mut decided = islands::decide(p, &scene, &islands);
    let mut layout = layout::slots(p, &scene, &islands, &mut decided);
    layout::rows(p, &scene, &islands, &decided, &mut layout);
    touch::lay_out(p, &scene, &islands, &decided, &layout);
    layout::write_back(p, &scene, &islands, decided, layout);
    p.requests.resynced = false;
}

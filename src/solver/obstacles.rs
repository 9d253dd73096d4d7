//! Obstacles in the step: where each is at the step's start and end, how
//! its surface moves, and the grid that finds those near a body.
//!
//! [`place_obstacles`] runs before the wakes are read: it places each
//! [`Obstacle`] by its transform (its `Transform` and its parents'),
//! reports the ones it cannot place, and wakes sleeping bodies near one
//! that moved, changed, came or went. The step sweeps an obstacle from
//! where the last step left it ([`ObstacleState`]) to where it is now:
//! each pass places it at the pass's start (translation interpolated,
//! rotation slerped) and its surface moves at the velocity of that sweep
//! (or its [`ObstacleVelocity`]). [`lay_out_obstacles`] runs after the
//! rebuild: it lays the swept bounds, widened by the reach of the fastest
//! round body, out in a grid, and clears the contacts' warm impulses.

use bevy::ecs::system::SystemParam;
use bevy::math::{Vec2, Vec3A};
use bevy::prelude::*;
use bevy::transform::helper::TransformHelper;

use crate::data::body::Body;
use crate::data::constraints::Radius;
use crate::data::constraints::{CollisionGroups, ContactMaterial};
use crate::data::islands::Sleeping;
use crate::data::issues::{ObstacleProblem, PhysicsIssue};
use crate::data::obstacles::TiedTo;
use crate::data::obstacles::{
    Obstacle, ObstacleMass, ObstacleReaction, ObstacleState, ObstacleVelocity,
};
use crate::data::requests::BodyIndex;
use crate::data::requests::{SolverRequests, WakeCause, WakeTarget};
use crate::kernels::constraints::{
    Contact, Material, Mover, ObstacleWarm, PlacedObstacle, TieRow, Yield,
};
use crate::kernels::shapes::{Grid, Shape, Triangles, local_bounds, placed_bounds};
use crate::solver::contacts::reach;
use crate::solver::report::Reporter;
use crate::solver::{SolverState, state_is_valid};

/// One obstacle of this step.
#[derive(Debug, Clone, Copy)]
pub(crate) struct ObstacleRow {
    pub entity: Entity,
    pub shape: Shape,
    /// Translation and rotation at the step's start and end.
    pub start: (Vec3A, Quat),
    pub end: (Vec3A, Quat),
    pub linear: Vec3A,
    pub angular: Vec3A,
    pub material: Material,
    pub groups: [u32; 2],
    /// The world bounds of its sweep.
    pub bounds: (Vec3A, Vec3A),
    /// The fastest a point of its surface moves (infinite for an endless
    /// shape that turns).
    pub speed: f32,
    /// Its [`Mover`] in [`ObstacleSet::movers`] (`u32::MAX`: it does not
    /// give way).
    pub mover: u32,
    /// Its bounds in its own frame (none for an endless shape).
    local: Option<(Vec3A, Vec3A)>,
    /// The pose [`pose_of`] composed, which it was placed from (none where
    /// Bevy's `TransformHelper` placed it).
    from: Option<Transform>,
    /// Its obstacle's place in the query's order this step.
    order: u32,
}

/// The obstacles of this step, by entity.
#[derive(Debug, Default)]
pub(crate) struct ObstacleSet {
    pub rows: Vec<ObstacleRow>,
    /// Each row's entity, in the rows' order (a compact copy to search).
    entities: Vec<Entity>,
    /// The polygons' corners.
    pub vertices: Vec<Vec2>,
    /// The triangles of this step's meshes and height fields (the index
    /// of `Shape::Mesh`), each with what it was built for: built again
    /// only when that changes (see [`MeshKey::serves`]).
    pub meshes: Vec<Triangles>,
    mesh_keys: Vec<MeshKey>,
    /// Meshes that could not be built (not checked again until what they
    /// were built for changes).
    broken: Vec<(MeshKey, ObstacleProblem)>,
    pub grid: Grid,
    /// Placed at the current pass's start.
    pub placed: Vec<PlacedObstacle>,
    /// Whether every row rests over this step (`start == end`), and
    /// whether `placed` holds this step's rows: then a pass's placing is
    /// what the last one placed.
    still: bool,
    placed_now: bool,
    /// Per group: the obstacle contacts' impulses at the end of its last
    /// pass (cleared at every step's start).
    pub warm: Vec<Vec<ObstacleWarm>>,
    /// The fastest any point of a bounded obstacle's surface moves in this
    /// step (a lookup's reach covers it).
    pub speed: f32,
    bounds: Vec<(Vec3A, Vec3A)>,
    /// The bodies of the obstacles that give way ([`ObstacleMass`]), one
    /// per body entity, in the order of their first rows.
    pub movers: Vec<Mover>,
    /// Each mover's index, by its body's entity.
    mover_of: bevy::ecs::entity::EntityHashMap<u32>,
    /// What [`Self::mover_of`] was built from: each obstacle with a mass
    /// and its body (by obstacle entity), and that obstacle's mover. Where
    /// the next step's are the same, so are the movers' indices.
    mover_keys: Vec<(Entity, Entity)>,
    mover_index: Vec<u32>,
    /// Per mover: how much its velocity changed in this step so far.
    pub yields: Vec<Yield>,
    /// The step's ties, by slot, and each one's target with the target's
    /// position (its reaction's moments are about it).
    pub ties: Vec<TieRow>,
    pub tie_targets: Vec<(Entity, Vec3A)>,
    /// What the ties pulled their targets with over this step, by target
    /// (sorted), with its moment about the target's position.
    pushes: Vec<(Entity, Vec3A, Vec3A)>,
    /// Tied bodies reported (`PhysicsIssue::BadTie`), until fixed.
    tie_reported: bevy::ecs::entity::EntityHashSet,
    /// Per row: what the bodies' contacts pushed it with over this step,
    /// the impulse and its moment about the row's end (see
    /// [`ObstacleReaction`]).
    reactions: Vec<(Vec3A, Vec3A)>,
    /// The last step's rows, kept for their buffer.
    spare_rows: Vec<ObstacleRow>,
    /// Per obstacle, in the query's order at the last step, its row there
    /// (`u32::MAX`: none): where [`place_obstacles`] finds what it placed
    /// the obstacle from and as, to keep it while nothing changed.
    order: Vec<u32>,
    /// The reactions [`write_obstacle_reactions`] left non-zero, by
    /// entity: set back to zero at its next run unless pushed again.
    written: Vec<(Entity, Vec3A, Vec3A)>,
}

impl ObstacleSet {
    /// One mover per body among `masses` (sorted by obstacle entity; the
    /// first obstacle of a body gives its values), and each row's.
    fn find_movers(&mut self, masses: &[(Entity, ObstacleMass)]) {
        // (A world at rest has the same obstacles of the same bodies step
        // after step: the indices serve again.)
        let keys = masses.iter().map(|&(entity, mass)| (entity, mass.body));
        if !keys.clone().eq(self.mover_keys.iter().copied()) {
            self.mover_of.clear();
            self.mover_keys.clear();
            self.mover_keys.extend(keys);
            self.mover_index.clear();
            for &(_, body) in &self.mover_keys {
                let next = self.mover_of.len() as u32;
                self.mover_index
                    .push(*self.mover_of.entry(body).or_insert(next));
            }
        }
        self.movers.clear();
        let mut row = 0;
        for (&(entity, mass), &index) in masses.iter().zip(&self.mover_index) {
            // (Indices come in the order of their bodies' first obstacles.)
            if index as usize == self.movers.len() {
                self.movers.push(Mover {
                    inv_mass: mass.inverse_mass,
                    inv_inertia: mass.inverse_inertia.into(),
                    center: mass.center_of_mass.into(),
                });
            }
            // Both sorted by entity: the row is at or after the cursor
            // (a walk: most rows have a mass, or none has).
            while self.entities.get(row).is_some_and(|&e| e < entity) {
                row += 1;
            }
            if self.entities.get(row) == Some(&entity) {
                self.rows[row].mover = index;
            }
        }
    }

    /// The rows in entity order, whatever the query's, with their
    /// entities and their places by query order (`count` items this step;
    /// [`Self::order`]); `masses` by entity too.
    fn sort_rows(&mut self, count: usize, masses: &mut [(Entity, ObstacleMass)]) {
        // (A stable sort, which takes the query's runs of ascending or
        // descending entities as they come; entities are distinct, so it
        // is the one order. Rows the query gave in entity order are not
        // sorted again.)
        if !self.rows.is_sorted_by_key(|row| row.entity) {
            self.rows.sort_by_key(|row| row.entity);
        }
        self.entities.clear();
        self.entities.extend(self.rows.iter().map(|row| row.entity));
        self.order.clear();
        self.order.resize(count, u32::MAX);
        for (i, row) in self.rows.iter().enumerate() {
            self.order[row.order as usize] = i as u32;
        }
        if !masses.is_sorted_by_key(|&(entity, _)| entity) {
            masses.sort_by_key(|&(entity, _)| entity);
        }
    }

    /// Adds what the ties `run` (of [`Self::ties`]) pulled their targets
    /// with in this pass.
    pub fn pull(&mut self, run: core::ops::Range<usize>, inv_mass: &[f32]) {
        let ties = self.ties[run.clone()].iter().zip(&self.tie_targets[run]);
        for (tie, &(target, origin)) in ties {
            let w = inv_mass[tie.slot as usize];
            if w <= 0.0 || tie.given == Vec3A::ZERO {
                continue;
            }
            let impulse = -tie.given / w;
            if let Ok(k) = self.pushes.binary_search_by_key(&target, |p| p.0) {
                let (_, linear, angular) = &mut self.pushes[k];
                *linear += impulse;
                *angular += (tie.anchor - origin).cross(impulse);
            }
        }
    }

    /// Adds what the obstacle contacts among `contacts` pushed their
    /// obstacles with in this pass (the groups' passes run one after
    /// another, in order: the sums have the same bits on any thread
    /// count).
    pub fn react(&mut self, contacts: &[Contact], inv_mass: &[f32]) {
        for (o, point, impulse) in contacts.iter().filter_map(|c| c.obstacle_push(inv_mass)) {
            let (o, center) = (o as usize, self.rows[o as usize].end.0);
            let (linear, angular) = &mut self.reactions[o];
            *linear += impulse;
            *angular += (point - center).cross(impulse);
        }
    }

    /// Places every obstacle at a share `t` of its sweep through the step
    /// (into `placed`).
    pub fn place(&mut self, t: f32) {
        if self.still && self.placed_now {
            return;
        }
        self.placed_now = true;
        self.placed.clear();
        self.placed.extend(self.rows.iter().map(|row| {
            let (center, rotation) = if row.start == row.end {
                row.end
            } else {
                (
                    row.start.0.lerp(row.end.0, t),
                    row.start.1.slerp(row.end.1, t),
                )
            };
            PlacedObstacle {
                shape: row.shape,
                center,
                rotation,
                to_local: rotation.inverse(),
                linear: row.linear,
                angular: row.angular,
                material: row.material,
                groups: row.groups,
                mover: row.mover,
            }
        }));
    }
}

/// What [`place_obstacles`] reads of each obstacle.
type ObstacleItem = (
    Entity,
    Ref<'static, Obstacle>,
    &'static mut ObstacleState,
    Option<&'static ObstacleVelocity>,
    Option<&'static ContactMaterial>,
    Option<&'static CollisionGroups>,
    Option<&'static ObstacleMass>,
    Has<Body>,
    (Option<&'static Transform>, Option<&'static ChildOf>),
);

/// The `Transform`s and parents of obstacles and their ancestors, for
/// their poses.
type Ancestors<'w, 's> = Query<'w, 's, (&'static Transform, Option<&'static ChildOf>)>;

/// The global pose the fixed step places an entity's [`Obstacle`] at: its
/// `Transform` composed with its ancestors' (its `GlobalTransform` as it
/// will be, read within the fixed step, before Bevy propagates
/// transforms). Code that moves something with an obstacle (a bridge to
/// another engine giving each collider part its velocity) reads the same
/// pose through it.
///
/// ```
/// use bevy::prelude::*;
/// use bevy_euler_physics::obstacles::ObstaclePoses;
///
/// fn where_is(poses: ObstaclePoses, named: Query<(Entity, &Name)>) {
///     for (entity, name) in &named {
///         if let Some(pose) = poses.pose(entity) {
///             info!("{name} is at {}", pose.translation);
///         }
///     }
/// }
/// # App::new().add_systems(FixedUpdate, where_is);
/// ```
#[derive(SystemParam)]
pub struct ObstaclePoses<'w, 's> {
    ancestors: Ancestors<'w, 's>,
    helper: TransformHelper<'w, 's>,
}

impl ObstaclePoses<'_, '_> {
    /// `entity`'s global pose, composed as `Transform`s where every
    /// ancestor's scale is uniform (exact and cheap), else through Bevy's
    /// `TransformHelper` (a matrix decomposed). `None` without a
    /// `Transform` or where an ancestor's is broken.
    pub fn pose(&self, entity: Entity) -> Option<Transform> {
        pose_of(entity, &self.ancestors).or_else(|| {
            let matrix = self.helper.compute_global_transform(entity).ok()?;
            Some(matrix.compute_transform())
        })
    }
}

/// `entity`'s global pose from its `Transform` and its ancestors',
/// composed as `Transform`s: what its `GlobalTransform` will be, without
/// composing and decomposing matrices. `None` where that composition is
/// not exact or not found (an ancestor whose scale is not uniform and
/// positive, a rotation that is not a unit quaternion, no `Transform`, or
/// a hierarchy deeper than 64): the caller then asks Bevy's
/// `TransformHelper`.
fn pose_of(entity: Entity, ancestors: &Ancestors) -> Option<Transform> {
    let (own, parent) = ancestors.get(entity).ok()?;
    compose(own, parent, ancestors)
}

/// [`pose_of`] an entity whose `Transform` is `own` and whose parent is
/// `parent`.
fn compose(own: &Transform, parent: Option<&ChildOf>, ancestors: &Ancestors) -> Option<Transform> {
    if !(own.scale.min_element() > 0.0 && own.rotation.is_normalized()) {
        return None;
    }
    let mut pose = *own;
    let mut up = parent.map(ChildOf::parent);
    for _ in 0..64 {
        let Some(at) = up else {
            return Some(pose);
        };
        let (transform, next) = ancestors.get(at).ok()?;
        let s = transform.scale;
        if !(s.x > 0.0 && s.x == s.y && s.y == s.z && transform.rotation.is_normalized()) {
            return None;
        }
        pose = transform.mul_transform(pose);
        up = next.map(ChildOf::parent);
    }
    None
}

/// Start of the fixed step, before the wakes are read: places every
/// obstacle for the step (see the [module docs](self)), reports those it
/// cannot place (once per problem), and wakes the sleeping bodies near an
/// obstacle that moved, changed, came or went.
pub(crate) fn place_obstacles(
    mut solver: ResMut<SolverState>,
    mut requests: ResMut<SolverRequests>,
    time: Res<Time<Fixed>>,
    poses: ObstaclePoses,
    mut obstacles: Query<ObstacleItem>,
    mut reporter: Reporter,
    sleepers: Sleepers,
) {
    let solver = &mut *solver;
    let set = &mut solver.obstacles;
    if obstacles.is_empty() && set.rows.is_empty() {
        return;
    }
    let h = time.timestep().as_secs_f32();
    // (The rows' buffer of the step before last, reused.)
    let mut old = core::mem::take(&mut set.spare_rows);
    old.clear();
    let old = core::mem::replace(&mut set.rows, old);
    set.vertices.clear();
    let mut built = Meshes {
        old: core::mem::take(&mut set.meshes)
            .into_iter()
            .zip(core::mem::take(&mut set.mesh_keys))
            .map(Some)
            .collect(),
        broken: core::mem::take(&mut set.broken),
        meshes: &mut set.meshes,
        keys: &mut set.mesh_keys,
        new_broken: Vec::new(),
        // A lookup reaches about twice a radius: its cube then spans about
        // two cells a side.
        min_cell: 4.0 * solver.largest_radius,
    };
    let mut moved = Vec::new();
    let mut masses = Vec::new();
    let items = obstacles.iter_mut().enumerate();
    let mut count = 0;
    for (k, item) in items {
        let (entity, obstacle, mut state, given, material, groups, mass, is_body, own) = item;
        count = k + 1;
        let pose = own.0.and_then(|t| compose(t, own.1, &poses.ancestors));
        let unchanged = !(obstacle.is_changed() || is_body);
        let kept = pose
            .filter(|_| unchanged)
            .and_then(|from| kept_row(&old, set.order.get(k).copied(), entity, from));
        let placed = match kept {
            Some((row, from)) => Ok(Placed {
                shape: row.shape,
                local: row.local,
                pose: row.end,
                scale: from.scale,
            }),
            None => place(
                entity,
                &obstacle,
                (&poses.helper, pose),
                is_body,
                &mut set.vertices,
            )
            .and_then(|placed| built.resolve(entity, &obstacle, placed)),
        };
        let Placed {
            shape,
            local,
            pose: end,
            ..
        } = match placed {
            Ok(found) => found,
            Err(problem) => {
                if state.reported != Some(problem) {
                    reporter.warn(entity, PhysicsIssue::Obstacle { problem });
                    state.bypass_change_detection().reported = Some(problem);
                }
                continue;
            }
        };
        let state = state.bypass_change_detection();
        let mass = checked_mass(entity, mass, state, &mut reporter);
        let start = match state.previous {
            Some((c, q)) if !state.teleport => (Vec3A::from(c), q),
            _ => end,
        };
        state.previous = Some((end.0.into(), end.1));
        state.teleport = false;
        let (linear, angular) = match given {
            Some(v) => (v.linear.into(), v.angular.into()),
            None => sweep_velocity(start, end, h),
        };
        let reach = local.map_or(f32::INFINITY, |(lo, hi)| lo.abs().max(hi.abs()).length());
        let spin = angular.length();
        let speed = linear.length() + if spin > 0.0 { spin * reach } else { 0.0 };
        // At rest where it rested: the same bounds.
        let rested = kept.filter(|(row, _)| row.start == row.end && start == end);
        let bounds = match rested {
            Some((row, _)) => row.bounds,
            None => swept_bounds(local, start, end),
        };
        let material = material.copied().unwrap_or_default().sanitized();
        let groups = groups.copied().unwrap_or_default();
        if start != end || obstacle.is_changed() {
            moved.push((entity, bounds));
        }
        set.rows.push(ObstacleRow {
            entity,
            shape,
            start,
            end,
            linear,
            angular,
            material: Material {
                restitution: material.restitution,
                friction: material.friction,
            },
            groups: [groups.memberships, groups.filters],
            bounds,
            speed,
            mover: u32::MAX,
            local,
            from: pose,
            order: k as u32,
        });
        if let Some(mass) = mass {
            masses.push((entity, mass));
        }
    }
    set.broken = built.new_broken;
    set.sort_rows(count, &mut masses);
    set.find_movers(&masses);
    // The rows gone since the last step (both lists sorted: a walk).
    let mut now = set.entities.iter().peekable();
    for row in &old {
        while now.next_if(|&&e| e < row.entity).is_some() {}
        if now.peek() != Some(&&row.entity) {
            moved.push((row.entity, row.bounds));
        }
    }
    set.spare_rows = old;
    wake_sleepers(solver, &mut requests, (&sleepers, h), &moved);
}

/// Asks to wake the sleeping round bodies within reach of an obstacle in
/// `moved` (see [`wake_near`]), with reaches over a step of `h`. They are
/// read from the state's components (`sleepers`), not from the solver's
/// list of the last rebuild, which this stage runs before: an island put
/// to sleep at the end of the last step is not on it yet, and after a
/// snapshot restore or a rollback it is the list of the state the solver
/// left.
fn wake_sleepers(
    solver: &SolverState,
    requests: &mut SolverRequests,
    (sleepers, h): (&Sleepers, f32),
    moved: &[(Entity, (Vec3A, Vec3A))],
) {
    if moved.is_empty() || !(solver.any_sleeping || requests.resynced) {
        return;
    }
    let sleepers = sleepers
        .iter()
        .filter_map(|(entity, body, radius, sleeping)| {
            let valid = state_is_valid(body) && radius.is_valid();
            (valid && !sleeping.is_request()).then(|| {
                let (pos, vel) = (Vec3A::from(body.position), Vec3A::from(body.velocity));
                (entity, pos, reach(radius.0, vel, h))
            })
        });
    wake_near(sleepers, moved, requests);
}

/// The last step's row of `entity` (at `order` among `old`, its place in
/// that step's query order), where it was placed from the pose `from` and
/// is not laid out anew each step (a polygon's corners and a mesh's
/// triangles are): what the last step placed it as serves again, with
/// `from`. The caller checks that the obstacle did not change.
fn kept_row(
    old: &[ObstacleRow],
    order: Option<u32>,
    entity: Entity,
    from: Transform,
) -> Option<(&ObstacleRow, Transform)> {
    let row = old.get(order? as usize)?;
    let laid_out = matches!(row.shape, Shape::Polygon { .. } | Shape::Mesh { .. });
    // (The same bits: a zero's sign would reach the pose.)
    let bits = |t: Transform| {
        let ([a, b, c], [d, e, f]) = (t.scale.to_array(), t.translation.to_array());
        let [g, h, i, j] = t.rotation.to_array();
        [a, b, c, d, e, f, g, h, i, j].map(f32::to_bits)
    };
    let same = row.from.is_some_and(|was| bits(was) == bits(from));
    (row.entity == entity && same && !laid_out).then_some((row, from))
}

/// `mass` where it is valid. A bad one is reported once (the obstacle
/// stays, as heavy as the world); a placed obstacle's problem reported
/// before is forgotten (`state`).
fn checked_mass(
    entity: Entity,
    mass: Option<&ObstacleMass>,
    state: &mut ObstacleState,
    reporter: &mut Reporter,
) -> Option<ObstacleMass> {
    let reported = state.reported.take();
    let problem = ObstacleProblem::InvalidMass;
    match mass {
        Some(mass) if !mass.is_valid() => {
            if reported != Some(problem) {
                reporter.warn(entity, PhysicsIssue::Obstacle { problem });
            }
            state.reported = Some(problem);
            None
        }
        mass => mass.copied(),
    }
}

/// The world bounds of a sweep from `start` to `end` of a shape whose
/// own bounds are `local` (endless without).
fn swept_bounds(
    local: Option<(Vec3A, Vec3A)>,
    start: (Vec3A, Quat),
    end: (Vec3A, Quat),
) -> (Vec3A, Vec3A) {
    match local {
        Some(local) => {
            let (a, b) = (
                placed_bounds(local, start.0, start.1),
                placed_bounds(local, end.0, end.1),
            );
            (a.0.min(b.0), a.1.max(b.1))
        }
        None => (Vec3A::NEG_INFINITY, Vec3A::INFINITY),
    }
}

/// An obstacle as its transform places it now.
struct Placed {
    /// Its shape, scaled.
    shape: Shape,
    /// Its bounds in its own frame (none for a half-space).
    local: Option<(Vec3A, Vec3A)>,
    /// Its translation and rotation, and its scale.
    pose: (Vec3A, Quat),
    scale: Vec3,
}

/// What a mesh's triangles were built for: its entity, its scale and the
/// least width of its grid's cells.
#[derive(Debug, Clone, Copy, PartialEq)]
struct MeshKey {
    entity: Entity,
    scale: Vec3,
    min_cell: f32,
}

impl MeshKey {
    /// Whether triangles built for `self` serve `wanted` (the obstacle
    /// unchanged): the same entity and scale, and cells wide enough for
    /// the bodies' lookups (not more than twice too narrow).
    fn serves(&self, wanted: &MeshKey) -> bool {
        self.entity == wanted.entity
            && self.scale == wanted.scale
            && 2.0 * self.min_cell >= wanted.min_cell
    }
}

/// The step's meshes as [`place_obstacles`] builds them: those of the last
/// step (taken when they still serve), and this step's.
struct Meshes<'a> {
    old: Vec<Option<(Triangles, MeshKey)>>,
    broken: Vec<(MeshKey, ObstacleProblem)>,
    meshes: &'a mut Vec<Triangles>,
    keys: &'a mut Vec<MeshKey>,
    new_broken: Vec<(MeshKey, ObstacleProblem)>,
    min_cell: f32,
}

impl Meshes<'_> {
    /// A placed mesh with its triangles found (the last step's, when they
    /// still serve and the obstacle did not change; else built), or what
    /// is wrong with them. Other shapes pass through.
    fn resolve(
        &mut self,
        entity: Entity,
        obstacle: &Ref<Obstacle>,
        placed: Placed,
    ) -> Result<Placed, ObstacleProblem> {
        let Shape::Mesh { .. } = placed.shape else {
            return Ok(placed);
        };
        let wanted = MeshKey {
            entity,
            scale: placed.scale,
            min_cell: self.min_cell,
        };
        let unchanged = !obstacle.is_changed();
        let kept = self
            .old
            .iter_mut()
            .find_map(|slot| slot.take_if(|(_, key)| unchanged && key.serves(&wanted)));
        let known = || {
            self.broken
                .iter()
                .find(|(key, _)| unchanged && key.serves(&wanted))
                .copied()
        };
        let (triangles, key) = match (kept, known()) {
            (Some(kept), _) => kept,
            (None, Some(broken)) => {
                self.new_broken.push(broken);
                return Err(broken.1);
            }
            // (Only meshes and height fields have triangles, and they
            // alone are `Shape::Mesh`.)
            (None, None) => match obstacle.triangles(placed.scale, self.min_cell) {
                Some(Ok(triangles)) => (triangles, wanted),
                Some(Err(problem)) => {
                    self.new_broken.push((wanted, problem));
                    return Err(problem);
                }
                None => return Err(ObstacleProblem::EmptyMesh),
            },
        };
        let local = Some(triangles.bounds);
        self.meshes.push(triangles);
        self.keys.push(key);
        Ok(Placed {
            shape: Shape::Mesh {
                mesh: self.meshes.len() as u32 - 1,
            },
            local,
            ..placed
        })
    }
}

/// An obstacle as its transform places it now, or what is wrong.
/// `pose` is its global pose where [`pose_of`] found it; else `helper`
/// finds it.
fn place(
    entity: Entity,
    obstacle: &Obstacle,
    (helper, pose): (&TransformHelper, Option<Transform>),
    is_body: bool,
    vertices: &mut Vec<Vec2>,
) -> Result<Placed, ObstacleProblem> {
    if is_body {
        return Err(ObstacleProblem::IsABody);
    }
    let (scale, rotation, translation) = match pose {
        Some(t) => (t.scale, t.rotation, t.translation),
        None => helper
            .compute_global_transform(entity)
            .map_err(|_| ObstacleProblem::NonFinitePose)?
            .to_scale_rotation_translation(),
    };
    if !translation.is_finite() {
        return Err(ObstacleProblem::NonFinitePose);
    }
    // (A zero scale leaves no rotation to find.)
    if !(scale.is_finite() && scale.min_element() > 0.0) {
        return Err(ObstacleProblem::InvalidSize);
    }
    if !rotation.is_finite() {
        return Err(ObstacleProblem::NonFinitePose);
    }
    let from = vertices.len();
    let shape = obstacle
        .shape(scale, vertices)
        .inspect_err(|_| vertices.truncate(from))?;
    Ok(Placed {
        local: local_bounds(&shape, vertices),
        shape,
        pose: (translation.into(), rotation.normalize()),
        scale,
    })
}

/// The velocity of a sweep from `start` to `end` within `h` seconds:
/// linear, and angular about the shorter way round.
fn sweep_velocity(start: (Vec3A, Quat), end: (Vec3A, Quat), h: f32) -> (Vec3A, Vec3A) {
    if h <= 0.0 || start == end {
        return (Vec3A::ZERO, Vec3A::ZERO);
    }
    let linear = (end.0 - start.0) / h;
    let mut turn = end.1 * start.1.inverse();
    if turn.w < 0.0 {
        turn = -turn;
    }
    let (axis, angle) = turn.to_axis_angle();
    let angular = if angle.is_finite() && axis.is_finite() {
        Vec3A::from(axis) * (angle / h)
    } else {
        Vec3A::ZERO
    };
    (linear, angular)
}

/// Asks to wake each sleeping body (`sleepers`: its entity, position and
/// reach) within reach of the bounds of an obstacle in `moved`.
fn wake_near(
    sleepers: impl Iterator<Item = (Entity, Vec3A, f32)> + Clone,
    moved: &[(Entity, (Vec3A, Vec3A))],
    requests: &mut SolverRequests,
) {
    for &(entity, (min, max)) in moved {
        for (sleeper, p, reach) in sleepers.clone() {
            let reach = Vec3A::splat(reach);
            if p.cmpge(min - reach).all() && p.cmple(max + reach).all() {
                requests.wake(WakeTarget::Body(sleeper), WakeCause::ObstacleMoved(entity));
            }
        }
    }
}

/// The round bodies asleep, as [`wake_sleepers`] reads them (it keeps, as
/// the rebuild's list does, valid bodies of a valid radius).
type Sleepers<'w, 's> = Query<'w, 's, (Entity, &'static Body, &'static Radius, &'static Sleeping)>;

/// Start of the fixed step, after the rebuild and the gather: lays the
/// obstacles' swept bounds out in the grid, finds how fast the fastest
/// bounded one moves, and clears the contacts' warm impulses and the
/// obstacles' reactions.
pub(crate) fn lay_out_obstacles(mut solver: ResMut<SolverState>) {
    let solver = &mut *solver;
    let groups = solver.groups.len();
    let min_cell = 4.0 * solver.largest_radius;
    let set = &mut solver.obstacles;
    set.warm.resize_with(groups, Vec::new);
    for warm in &mut set.warm {
        warm.clear();
    }
    set.reactions.clear();
    set.reactions
        .resize(set.rows.len(), (Vec3A::ZERO, Vec3A::ZERO));
    set.yields.clear();
    set.yields.resize(set.movers.len(), Yield::default());
    set.bounds.clear();
    set.bounds.extend(set.rows.iter().map(|row| row.bounds));
    set.still = set.rows.iter().all(|row| row.start == row.end);
    set.placed_now = false;
    // Widened by a lookup's usual reach (twice the radius), so that most
    // lookups visit one cell.
    set.grid.build(&set.bounds, min_cell, 0.5 * min_cell);
    // (Endless ones are checked against every body, whatever their speed.)
    set.speed = set
        .rows
        .iter()
        .filter(|row| row.bounds.0.is_finite() && row.bounds.1.is_finite())
        .map(|row| row.speed)
        .fold(0.0, f32::max);
}

/// The reactions something else changed or added since the last step,
/// and all of them to write.
type Reactions<'w, 's> = ParamSet<
    'w,
    's,
    (
        Query<'static, 'static, Entity, Changed<ObstacleReaction>>,
        Query<'static, 'static, &'static mut ObstacleReaction>,
    ),
>;

/// End of the fixed step: each [`ObstacleReaction`] gets what the bodies
/// pushed its obstacle with over the step (zero for an obstacle nothing
/// touched, or one left out of the step).
///
/// Only the reactions that change are visited: those the step's contacts
/// and ties pushed, those it left non-zero at its last run
/// ([`ObstacleSet::written`]) and those something else changed or added
/// since (set back to zero): not every reaction of the world each step.
pub(crate) fn write_obstacle_reactions(mut solver: ResMut<SolverState>, mut reactions: Reactions) {
    let set = &mut solver.obstacles;
    // To set back to zero unless pushed now: left non-zero by the last
    // step, or changed by something else since.
    let mut now = core::mem::take(&mut set.written);
    let mut stale: Vec<Entity> = reactions.p0().iter().collect();
    stale.extend(now.iter().map(|p| p.0));
    // What this step pushed, by entity (rows and pushes each sorted).
    now.clear();
    let rows = set.rows.iter().map(|row| row.entity).zip(&set.reactions);
    let rows = rows.filter(|(_, r)| r.0 != Vec3A::ZERO || r.1 != Vec3A::ZERO);
    now.extend(rows.map(|(entity, &(linear, angular))| (entity, linear, angular)));
    now.extend(set.pushes.iter().copied());
    // (Stable: a row's reaction before its entity's push.)
    now.sort_by_key(|p| p.0);
    now.dedup_by(|later, first| {
        let same = later.0 == first.0;
        if same {
            first.1 += later.1;
            first.2 += later.2;
        }
        same
    });
    stale.sort_unstable();
    stale.dedup();
    stale.retain(|e| now.binary_search_by_key(e, |p| p.0).is_err());
    let mut reactions = reactions.p1();
    for entity in stale {
        if let Ok(mut reaction) = reactions.get_mut(entity) {
            reaction.set_if_neq(ObstacleReaction::default());
        }
    }
    now.retain(|&(entity, mut linear, mut angular)| {
        let Ok(mut reaction) = reactions.get_mut(entity) else {
            return false;
        };
        // Bodies gone non-finite in the step (an unstable island, reported
        // on each of them) push nothing: their NaN must not reach what
        // reads the reaction (another engine's rigid body).
        if !(linear.is_finite() && angular.is_finite()) {
            (linear, angular) = (Vec3A::ZERO, Vec3A::ZERO);
        }
        let pushed = ObstacleReaction {
            impulse: linear.into(),
            angular_impulse: angular.into(),
        };
        // (Marked changed at every push, the same or not: see
        // `ObstacleReaction`.)
        let pushes = linear != Vec3A::ZERO || angular != Vec3A::ZERO;
        if pushes {
            *reaction = pushed;
        } else {
            reaction.set_if_neq(pushed);
        }
        pushes
    });
    set.written = now;
}

/// What [`place_ties`] reads of a tied body.
type TieItem = (Entity, &'static TiedTo, &'static BodyIndex, &'static Body);

/// Start of the fixed step, after the obstacles' layout: lays out the
/// ties of the stepped bodies ([`TiedTo`]), by slot: where each one's point
/// is and how it moves, and its target's mover. Reports a tie that cannot
/// hold (once), and asks to wake a sleeping tied body whose target moves
/// or gives way (it wakes at the next step).
pub(crate) fn place_ties(
    mut solver: ResMut<SolverState>,
    mut requests: ResMut<SolverRequests>,
    ties: Query<TieItem>,
    velocities: Query<&ObstacleVelocity>,
    poses: ObstaclePoses,
    mut reporter: Reporter,
) {
    let set = &mut solver.obstacles;
    set.ties.clear();
    set.tie_targets.clear();
    set.pushes.clear();
    if ties.is_empty() {
        set.tie_reported.clear();
        return;
    }
    let mut found = Vec::new();
    for (entity, tie, index, body) in &ties {
        // (Where the step places the target's obstacle, if it has one:
        // the ties' pushes and its contacts' reactions share a centre.)
        let placed = poses
            .pose(tie.target)
            .filter(|at| at.is_finite() && tie.anchor.is_finite() && body.inv_mass > 0.0);
        let Some(at) = placed else {
            if set.tie_reported.insert(entity) {
                reporter.warn(entity, PhysicsIssue::BadTie);
            }
            continue;
        };
        set.tie_reported.remove(&entity);
        let mover = set.mover_of.get(&tie.target).map(|&m| m as usize);
        let (origin, point) = (at.translation, at.transform_point(tie.anchor));
        let velocity = velocities
            .get(tie.target)
            .map_or(Vec3::ZERO, |v| v.linear + v.angular.cross(point - origin));
        if index.slot == u32::MAX {
            if mover.is_some() || velocity != Vec3::ZERO {
                requests.wake(
                    WakeTarget::Body(entity),
                    WakeCause::ObstacleMoved(tie.target),
                );
            }
            continue;
        }
        let arm = mover.map_or(Vec3A::ZERO, |m| Vec3A::from(point) - set.movers[m].center);
        let obstacle = set.entities.binary_search(&tie.target);
        let row = TieRow {
            arm,
            ..TieRow::new(
                index.slot,
                mover.map_or(u32::MAX, |m| m as u32),
                obstacle.map_or(u32::MAX, |o| o as u32),
                point.into(),
                velocity.into(),
            )
        };
        found.push((row, (tie.target, Vec3A::from(origin))));
    }
    set.tie_reported.retain(|&entity| ties.contains(entity));
    found.sort_unstable_by_key(|(row, _)| row.slot);
    set.ties.extend(found.iter().map(|(row, _)| *row));
    set.tie_targets
        .extend(found.iter().map(|(_, target)| *target));
    let targets = found.iter().map(|(_, (target, _))| *target);
    set.pushes
        .extend(targets.map(|t| (t, Vec3A::ZERO, Vec3A::ZERO)));
    set.pushes.sort_unstable_by_key(|p| p.0);
    set.pushes.dedup_by_key(|p| p.0);
}

#[cfg(test)]
mod tests {
    use super::*;
    use bevy::ecs::system::RunSystemOnce;

    /// A row of `entity` that nothing else is asked of.
    fn row(entity: Entity) -> ObstacleRow {
        let at = (Vec3A::ZERO, Quat::IDENTITY);
        ObstacleRow {
            entity,
            shape: Shape::Sphere { radius: 1.0 },
            start: at,
            end: at,
            linear: Vec3A::ZERO,
            angular: Vec3A::ZERO,
            material: Material {
                restitution: 0.0,
                friction: 0.5,
            },
            groups: [1, 1],
            bounds: (Vec3A::ZERO, Vec3A::ZERO),
            speed: 0.0,
            mover: u32::MAX,
            local: None,
            from: None,
            order: 0,
        }
    }

    /// The movers follow the obstacles' bodies step by step: the same
    /// bodies keep their movers' places with the new values, an obstacle
    /// given to another body, or left without a mass, is found so.
    #[test]
    fn the_movers_follow_the_obstacles_bodies() {
        let mut world = World::new();
        let [one, two] = [(); 2].map(|_| world.spawn_empty().id());
        let mut three = [(); 3].map(|_| world.spawn_empty().id());
        three.sort();
        let [a, b, c] = three;
        let mass = |body, inverse_mass| ObstacleMass {
            body,
            inverse_mass,
            inverse_inertia: Mat3::IDENTITY,
            center_of_mass: Vec3::ZERO,
        };
        let mut set = ObstacleSet::default();
        let mut run = |mut masses: Vec<(Entity, ObstacleMass)>| {
            set.rows = vec![row(c), row(a), row(b)];
            set.sort_rows(3, &mut masses);
            set.find_movers(&masses);
            let values: Vec<f32> = set.movers.iter().map(|m| m.inv_mass).collect();
            let movers: Vec<u32> = set.rows.iter().map(|r| r.mover).collect();
            (values, movers)
        };
        let none = u32::MAX;
        let both = vec![
            (a, mass(one, 1.0)),
            (b, mass(one, 1.0)),
            (c, mass(two, 2.0)),
        ];
        assert_eq!(run(both), (vec![1.0, 2.0], vec![0, 0, 1]));
        let heavier = vec![
            (a, mass(one, 3.0)),
            (b, mass(one, 3.0)),
            (c, mass(two, 4.0)),
        ];
        assert_eq!(run(heavier), (vec![3.0, 4.0], vec![0, 0, 1]));
        let moved = vec![
            (a, mass(one, 1.0)),
            (b, mass(two, 2.0)),
            (c, mass(two, 2.0)),
        ];
        assert_eq!(run(moved), (vec![1.0, 2.0], vec![0, 1, 1]));
        let lost = vec![(a, mass(one, 1.0)), (c, mass(two, 2.0))];
        assert_eq!(run(lost), (vec![1.0, 2.0], vec![0, none, 1]));
        let first = vec![(c, mass(one, 5.0)), (b, mass(two, 6.0))];
        assert_eq!(run(first), (vec![6.0, 5.0], vec![none, 0, 1]));
    }

    /// Composed as `Transform`s up a hierarchy of uniform scales, an
    /// obstacle's pose is what Bevy's matrices give (within rounding); a
    /// parent whose scale is not uniform, or a parent without a
    /// `Transform`, leaves it to `TransformHelper`.
    #[test]
    fn poses_composed_up_the_hierarchy_match_bevys() {
        let mut world = World::new();
        let top = world
            .spawn(Transform::from_xyz(3.0, -1.0, 2.0).with_scale(Vec3::splat(2.0)))
            .id();
        let middle = world
            .spawn((
                Transform::from_xyz(0.5, 1.0, 0.0).with_rotation(Quat::from_euler(
                    EulerRot::XYZ,
                    0.3,
                    -1.1,
                    0.7,
                )),
                ChildOf(top),
            ))
            .id();
        let leaf = world
            .spawn((
                Transform::from_xyz(0.2, 0.0, -0.4)
                    .with_rotation(Quat::from_rotation_y(0.9))
                    .with_scale(Vec3::new(1.0, 0.5, 3.0)),
                ChildOf(middle),
            ))
            .id();
        let squashed = world
            .spawn(Transform::from_scale(Vec3::new(1.0, 2.0, 1.0)))
            .id();
        let under_squashed = world
            .spawn((Transform::from_xyz(1.0, 0.0, 0.0), ChildOf(squashed)))
            .id();
        let bare = world.spawn_empty().id();
        let orphan = world.spawn((Transform::IDENTITY, ChildOf(bare))).id();
        let check = move |helper: TransformHelper, ancestors: Ancestors| {
            let pose = |e: Entity| pose_of(e, &ancestors);
            for e in [top, middle, leaf] {
                let found = pose(e).expect("uniform ancestors compose");
                let (scale, rotation, translation) = helper
                    .compute_global_transform(e)
                    .unwrap()
                    .to_scale_rotation_translation();
                assert!(found.translation.abs_diff_eq(translation, 1e-5), "{e}");
                assert!(found.scale.abs_diff_eq(scale, 1e-5), "{e}");
                assert!(found.rotation.angle_between(rotation) < 1e-3, "{e}");
            }
            assert_eq!(
                pose(squashed),
                Some(Transform::from_scale(Vec3::new(1.0, 2.0, 1.0)))
            );
            assert_eq!(pose(under_squashed), None);
            assert_eq!(pose(orphan), None);
        };
        world.run_system_once(check).unwrap();
        // The public parameter: the composed pose where there is one, else
        // Bevy's (a child of a squashed parent is found through it), and
        // none for a parent without a transform.
        let public = move |poses: ObstaclePoses, helper: TransformHelper| {
            assert_eq!(poses.pose(leaf), pose_of(leaf, &poses.ancestors));
            assert!(poses.pose(leaf).is_some());
            let bevys = helper.compute_global_transform(under_squashed).unwrap();
            let found = poses.pose(under_squashed).expect("Bevy's pose");
            assert!(found.translation.abs_diff_eq(bevys.translation(), 1e-6));
            assert!(found.translation.abs_diff_eq(Vec3::X, 1e-6));
            assert_eq!(poses.pose(orphan), None);
        };
        world.run_system_once(public).unwrap();
    }
}

//! Rods and contacts, solved on velocities by sequential impulses.
//!
//! After the kick and before the drift, each pass runs `iterations` rounds
//! over its rods and contacts, in a fixed order (so the result does not
//! depend on the thread count):
//!
//! - **Rod** between `a` and `b` of length `L`, along `n = (x_b − x_a)/|…|`:
//!   the relative velocity along `n` is driven to
//!   `(√(L² − h²·v_t²) − L)/h − β·C/h`, where `v_t` is the relative
//!   tangential velocity (the first term cancels the lengthening a turn of
//!   `h·v_t` causes), `C = |x_b − x_a| − L` the length error and `β` the
//!   position bias. The impulse is shared by inverse mass, so momentum is
//!   conserved.
//! - **Distance limit** `[min, max]` (`min < max`): free inside; at either
//!   bound it acts as a rod of that length that only pulls (at `max`) or
//!   only pushes (at `min`), and speculatively: the relative speed along
//!   `n` may close the distance to the bound within the pass and no more.
//! - **Angle limit** at a pivot `p` between arms `u = a − p`, `w = b − p`:
//!   the signed angle `θ = atan2((u × w)·k, u·w)` about the axis `k` has
//!   gradients `∂θ/∂b = (k × w⊥)/|w⊥|²`, `∂θ/∂a = −(k × u⊥)/|u⊥|²` and
//!   `∂θ/∂p = −(∂θ/∂a + ∂θ/∂b)` (the arms' parts across `k`); its rate
//!   `θ' = Σ J_i·v_i` is limited like a distance limit's, with the impulse
//!   shared by `Σ w_i·|J_i|²`. The gradients sum to zero, so momentum is
//!   conserved.
//! - **Contact** of a body of radius `r` with a half-space `n·x ≥ d`: with
//!   the gap `s = n·x − d − r` and the normal speed `v_n = n·v`, a contact
//!   exists when `s + h·v_n < 0` (the drift would cross the plane). The
//!   normal speed becomes at least `−s/h` (reach the plane, not cross it),
//!   `−e·v_n` when approaching faster than the bounce threshold
//!   (restitution `e`), and at least `−β·s/h` when already inside. Coulomb
//!   friction caps the tangential impulse at `μ` times the normal one, so
//!   sliding bodies stop and resting ones stay.
//!
//! After the rounds, one more round over the rods and contacts *relaxes*
//! them: each is solved without its position bias (a rod aims for the
//! turning term alone; a contact inside aims for 0 instead of `−β·s/h`),
//! and the difference goes into the position alone
//! (`x += h·(v_biased − v_relaxed)`, as Box2D's soft step does). Errors are
//! undone as before, but a body at rest keeps no speed from the correction
//! (so it can fall asleep), and the correction adds no kinetic energy.
//! - **Contact** of two round bodies `a` and `b` with radii summing to
//!   `R`: the same, along `n = (x_b − x_a)/|…|` with the gap
//!   `s = |x_b − x_a| − R` and the relative normal speed
//!   `v_n = n·(v_b − v_a)`. The impulse is shared by inverse mass, so
//!   momentum is conserved, and the bounce is at most the approach, so no
//!   energy is added. Their materials combine as `e = max(e_a, e_b)` and
//!   `μ = √(μ_a·μ_b)`; a body with a material meets a plane with the same
//!   rule. Pair contacts are found once per step ([`find_pair_contacts`],
//!   for the step's time) and turned to each pass's positions
//!   ([`aim_pairs`]); they keep their impulses from pass to pass, and are
//!   solved four at a time (see [`lanes`](super::lanes)).

use std::sync::{Mutex, MutexGuard, PoisonError};

use bevy::math::{Mat3A, Quat, Vec2, Vec3A};

#[cfg(test)]
use super::batches::OneThread;
use super::batches::{Batch, Each, SharedSlice, SharedVelocities, Spread};
use super::kept::Kept;
use super::lanes::{Group, Lanes, One, Visit, gather, pack, solve_groups};
use super::shapes::{Grid, Nearest, Shape, Triangles, nearest};

/// A rod (`min == max`) or a distance limit in the solver's arrays.
#[derive(Debug, Clone, Copy)]
pub struct RodRow {
    pub a: u32,
    pub b: u32,
    pub min: f32,
    pub max: f32,
}

#[cfg(test)]
impl RodRow {
    /// A rod of `length`.
    pub const fn rod(a: u32, b: u32, length: f32) -> Self {
        Self {
            a,
            b,
            min: length,
            max: length,
        }
    }
}

/// An angle limit in the solver's arrays: the signed angle at `p` from the
/// arm to `a` to the arm to `b` about the unit `axis` stays in
/// `[min, max]`.
#[derive(Debug, Clone, Copy)]
pub struct AngleRow {
    pub a: u32,
    pub p: u32,
    pub b: u32,
    pub min: f32,
    pub max: f32,
    pub axis: Vec3A,
}

/// What a surface is made of: restitution `e` in `[0, 1]` and friction
/// `μ ≥ 0`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Material {
    pub restitution: f32,
    pub friction: f32,
}

impl Material {
    /// Two materials in contact: the larger restitution and the geometric
    /// mean of the frictions.
    #[inline]
    pub fn combine(self, other: Material) -> Material {
        Material {
            restitution: self.restitution.max(other.restitution),
            friction: (self.friction * other.friction).sqrt(),
        }
    }
}

/// A body with a radius in the solver's arrays.
#[derive(Debug, Clone, Copy)]
pub struct RoundRow {
    pub slot: u32,
    pub radius: f32,
    /// Its own material, if it has one; else a plane's is used alone.
    pub material: Option<Material>,
    /// Its collision groups: memberships, filters.
    pub groups: [u32; 2],
}

/// Two round bodies near each other, as the broad phase found them for
/// this step.
#[derive(Debug, Clone, Copy)]
pub struct PairRow {
    pub a: u32,
    pub b: u32,
    /// The sum of their radii.
    pub radius: f32,
    /// Their materials, combined.
    pub material: Material,
    /// The direction from `a`'s grid cell to `b`'s
    /// ([`BroadPhase::class_of`](super::broad::BroadPhase::class_of)):
    /// each large batch of pairs is solved a class at a time.
    pub class: u8,
}

/// One contact of two bodies in one pass (see [`lanes`](super::lanes)).
pub type PairContact = One;

/// A pass's contacts between pairs, in the batches of the rows they were
/// found on (see [`batches`](super::batches)), and laid out in groups of
/// four for the rounds (see [`lanes`](super::lanes)).
#[derive(Debug, Default)]
pub struct PairContacts {
    /// As found, in order: their bodies and materials (the lanes hold
    /// each contact's normal, targets and impulses for the step). Found
    /// in parts ([`find_pair_contacts_in_parts`]), they stay in the parts:
    /// this list is then empty.
    pub contacts: Vec<PairContact>,
    pub batches: Vec<Batch>,
    pub lanes: Lanes,
}

/// A run of batches' pair contacts, found and laid out in groups of four
/// on one thread while other threads take other runs
/// ([`find_pair_contacts_in_parts`]); kept between steps for its buffers.
#[derive(Debug, Default)]
pub struct PairPart {
    found: PairContacts,
    /// Whether the batch after the run opens its stage, as far as the run
    /// tells (see [`find_in`]).
    opens: bool,
}

/// What the rounds solve of a pass's pair contacts, and how joined batches
/// may run on several threads at once.
pub struct PairBatches<'a> {
    pub found: &'a mut PairContacts,
    pub spread: &'a dyn Spread,
}

#[cfg(test)]
impl<'a> PairBatches<'a> {
    /// All of `found`, on this thread.
    pub fn here(found: &'a mut PairContacts) -> Self {
        Self {
            found,
            spread: &OneThread,
        }
    }
}

/// A half-space `normal · x ≥ offset`, with a unit normal.
#[derive(Debug, Clone, Copy)]
pub struct PlaneRow {
    pub normal: Vec3A,
    pub offset: f32,
    /// In `[0, 1]`.
    pub restitution: f32,
    /// Not negative.
    pub friction: f32,
}

/// One contact of one pass.
#[derive(Debug, Clone)]
pub struct Contact {
    slot: usize,
    /// Its entry in the warm impulses of planes (`usize::MAX` for an
    /// obstacle's).
    warm: usize,
    /// For an obstacle's contact: its round row, obstacle and part (the
    /// triangle of a mesh, else 0); else `u32::MAX` each.
    key: [u32; 3],
    /// For an obstacle's contact: the nearest point of its surface, where
    /// the body pushes it (see [`Contact::obstacle_push`]).
    point: Vec3A,
    /// For the contact of an obstacle that gives way (a [`Mover`]): the
    /// mover's index (`u32::MAX` for any other), the point's offset from
    /// its centre of mass, and the share of a normal speed change the body
    /// takes (the rest is the mover's).
    mover: u32,
    give: f32,
    arm: Vec3A,
    normal: Vec3A,
    /// The velocity of the surface it touches (zero for a plane): the
    /// friction drives the body's tangential velocity to the surface's.
    surface: Vec3A,
    /// The normal speed without the position bias, for the relaxing round.
    relaxed: f32,
    target: f32,
    friction: f32,
    normal_impulse: f32,
    friction_impulse: Vec3A,
}

impl Contact {
    /// For an obstacle's contact, what the body pushed the obstacle with
    /// in this pass, as the pass's rounds left it: the obstacle's index,
    /// the point of its surface and the impulse (N·s, the opposite of the
    /// momentum the contact gave the body). `None` for a plane's contact,
    /// or for a body that cannot move (`inv_mass` ≤ 0).
    #[inline]
    pub fn obstacle_push(&self, inv_mass: &[f32]) -> Option<(u32, Vec3A, Vec3A)> {
        let w = inv_mass[self.slot];
        if self.key[0] == u32::MAX || w <= 0.0 {
            return None;
        }
        let given = self.normal_impulse * self.normal + self.friction_impulse;
        Some((self.key[1], self.point, -given / w))
    }
}

/// The impulses a contact ended the last pass with, to start the next
/// pass of the same step from (warm starting: a pile's contacts carry its
/// weight from pass to pass instead of building it up again each pass).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Warm {
    pub normal: f32,
    pub friction: Vec3A,
}

impl Warm {
    /// Whether every bit is zero (the default's bits: `-0.0` is not cold).
    #[inline]
    fn is_cold(&self) -> bool {
        let [x, y, z] = self.friction.to_array();
        (self.normal.to_bits() | x.to_bits() | y.to_bits() | z.to_bits()) == 0
    }
}

/// How the rounds run.
#[derive(Debug, Clone, Copy)]
pub struct Rounds {
    pub h: f32,
    pub iterations: u32,
    /// The position bias `β`, in `[0, 1]`.
    pub beta: f32,
    pub bounce_threshold: f32,
}

/// The state the rounds read (`vel` is corrected in place).
pub struct Bodies<'a> {
    pub pos: &'a [Vec3A],
    pub vel: &'a mut [Vec3A],
    pub valid: &'a [bool],
    pub inv_mass: &'a [f32],
}

/// Finds the contacts of `rounds` with `planes` into `contacts`: bodies
/// whose drift would cross a plane, and (speculatively) bodies near one,
/// which the rods may push into it during the rounds. Fixed bodies have no
/// contacts. Each starts from its impulses in `warm` (entry
/// `round · planes.len() + plane`), which it takes: every entry read is
/// left at its default, so that [`solve`] has only to write the contacts'
/// (the entries of a body not read, invalid or fixed, are never read in
/// the step).
pub fn find_contacts(
    rounds: &[RoundRow],
    planes: &[PlaneRow],
    bodies: &Bodies,
    solve: &Rounds,
    warm: &mut [Warm],
    contacts: &mut Vec<Contact>,
) {
    contacts.clear();
    find_contacts_of(rounds, 0, planes, bodies, solve, warm, contacts);
}

/// What [`find_contacts`] does for the rows `first..` of the pass's
/// round rows (`rounds`, a run of them), appended to `contacts`, with
/// `warm` the entries of these rows alone (from row `first`'s): runs of
/// rows may be taken at once, each into its own list, and the lists laid
/// end to end in order give the contacts of one call.
pub fn find_contacts_of(
    rounds: &[RoundRow],
    first: usize,
    planes: &[PlaneRow],
    bodies: &Bodies,
    solve: &Rounds,
    warm: &mut [Warm],
    contacts: &mut Vec<Contact>,
) {
    let (pos, vel, h) = (bodies.pos, &*bodies.vel, solve.h);
    let n = planes.len();
    for (r, round) in (first..).zip(rounds) {
        let i = round.slot as usize;
        if !bodies.valid[i] || bodies.inv_mass[i] <= 0.0 {
            continue;
        }
        let (p, v) = (pos[i], vel[i]);
        // Beyond `far` from a plane the body misses it (its reach, the
        // radius plus `h·|v|`, is less: `|v|` is at most the sum of its
        // components' sizes, taken twice against rounding), which spares
        // most bodies of a pile the square root.
        let far = round.radius + 2.0 * h * v.abs().element_sum();
        // A plane's surface does not move: the body's reach over the pass
        // is the same for all planes (worked out once, where needed).
        let mut reach = None;
        for (k, plane) in planes.iter().enumerate() {
            let w = r * n + k;
            let entry = warm.get_mut(w - first * n);
            let gap = plane.normal.dot(p) - plane.offset - round.radius;
            // (A NaN gap or bound takes the full test.)
            let near = if gap >= far {
                None
            } else {
                Some(*reach.get_or_insert_with(|| round.radius + h * v.length()))
            };
            let at = Surface {
                normal: plane.normal,
                gap,
                velocity: Vec3A::ZERO,
                material: Material {
                    restitution: plane.restitution,
                    friction: plane.friction,
                },
            };
            let Some(closing) = near.and_then(|reach| closing(&at, v, reach, h)) else {
                // No contact: an entry a contact of the last pass left is
                // taken all the same.
                if let Some(entry) = entry.filter(|entry| !entry.is_cold()) {
                    *entry = Warm::default();
                }
                continue;
            };
            let held = entry.map(core::mem::take);
            let contact = contact_at(round, at, closing, solve, held.as_ref());
            contacts.push(Contact { warm: w, ..contact });
        }
    }
}

/// Where a round body meets a surface (a plane's, an obstacle's): the
/// outward normal, the gap, the surface's velocity there and its
/// material.
#[derive(Clone, Copy)]
struct Surface {
    normal: Vec3A,
    gap: f32,
    velocity: Vec3A,
    material: Material,
}

/// The contact of `round` (moving at `vel`) with a surface, on the
/// velocity relative to the surface, if it has one (see [`closing`]): the
/// surface's normal speed is added to what the contact aims for, and its
/// friction drives the tangential velocity to the surface's. It starts
/// from the impulses `last` (turned into its tangent plane); its entries
/// for the warm impulses are left unset.
#[inline]
fn surface_contact(
    round: &RoundRow,
    vel: Vec3A,
    at: Surface,
    solve: &Rounds,
    last: Option<&Warm>,
) -> Option<Contact> {
    let relative = vel - at.velocity;
    let reach = round.radius + solve.h * relative.length();
    let closing = closing(&at, relative, reach, solve.h)?;
    Some(contact_at(round, at, closing, solve, last))
}

/// How a body closes on a surface within a pass of `h`.
#[derive(Clone, Copy)]
struct Closing {
    /// The normal speed relative to the surface (negative towards it).
    approach: f32,
    /// Whether the drift crosses the surface within the pass.
    hits: bool,
}

/// Whether a body moving at `relative` to the surface `at` has a contact
/// with it: when its drift would cross the surface within the pass, or
/// (speculatively, limiting the approach to what closes the gap) when the
/// gap is within `reach`, its radius plus `h·|relative|` (which a caller
/// may work out once for several surfaces). `None` where it misses.
#[inline]
fn closing(at: &Surface, relative: Vec3A, reach: f32, h: f32) -> Option<Closing> {
    let approach = at.normal.dot(relative);
    let hits = at.gap + h * approach < 0.0;
    let misses = !hits && at.gap >= reach;
    (!misses).then_some(Closing { approach, hits })
}

/// The contact of `round` with the surface `at`, closing on it as
/// `closing` says (see [`surface_contact`]).
#[inline]
fn contact_at(
    round: &RoundRow,
    at: Surface,
    Closing { approach, hits }: Closing,
    solve: &Rounds,
    last: Option<&Warm>,
) -> Contact {
    let Surface {
        normal,
        gap,
        velocity,
        material,
    } = at;
    let material = round.material.map_or(material, |own| own.combine(material));
    let lift = normal.dot(velocity);
    let (normal_impulse, friction_impulse) = warmed(last, normal);
    Contact {
        slot: round.slot as usize,
        warm: usize::MAX,
        key: [u32::MAX; 3],
        point: Vec3A::ZERO,
        mover: u32::MAX,
        give: 1.0,
        arm: Vec3A::ZERO,
        normal,
        surface: velocity,
        target: lift + target(gap, approach, hits, material.restitution, solve, true),
        relaxed: lift + target(gap, approach, hits, material.restitution, solve, false),
        friction: material.friction,
        normal_impulse,
        friction_impulse,
    }
}

/// An obstacle placed for one pass (see [`shapes`](super::shapes)): its
/// shape in its own frame, where that frame is at the pass's start, and
/// how its surface moves.
#[derive(Debug, Clone, Copy)]
pub struct PlacedObstacle {
    pub shape: Shape,
    pub center: Vec3A,
    /// From its frame to the world, and back.
    pub rotation: Quat,
    pub to_local: Quat,
    /// The velocity of its frame's origin, and its angular velocity.
    pub linear: Vec3A,
    pub angular: Vec3A,
    pub material: Material,
    /// Memberships, filters.
    pub groups: [u32; 2],
    /// Its [`Mover`] (`u32::MAX` for an obstacle that does not give way).
    pub mover: u32,
}

impl PlacedObstacle {
    /// The velocity of the obstacle's surface at `point` (world).
    #[inline]
    fn velocity_at(&self, point: Vec3A) -> Vec3A {
        self.linear + self.angular.cross(point - self.center)
    }
}

/// An obstacle's body that gives way to the bodies within a step (an
/// obstacle with a mass): its inverse mass, its inverse inertia tensor
/// and centre of mass in the world, as at the step's start. Obstacles of
/// the same body share one.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Mover {
    pub inv_mass: f32,
    pub inv_inertia: Mat3A,
    pub center: Vec3A,
}

impl Mover {
    /// The mover takes `impulse` (N·s) at `arm` from its centre: its
    /// velocity changes by `J/M`, its spin by `I⁻¹(arm × J)`.
    #[inline]
    fn take(&self, taken: &mut Yield, arm: Vec3A, impulse: Vec3A) {
        taken.linear += self.inv_mass * impulse;
        taken.angular += self.inv_inertia * arm.cross(impulse);
    }

    /// The inverse mass a push along unit `direction` at `arm` from the
    /// centre meets: `1/m + (arm × d) · I⁻¹ (arm × d)`.
    #[inline]
    fn meets(&self, arm: Vec3A, direction: Vec3A) -> f32 {
        let turn = arm.cross(direction);
        self.inv_mass + turn.dot(self.inv_inertia * turn)
    }
}

/// How much a [`Mover`]'s velocity changed in this step so far: linear,
/// and angular about its centre.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Yield {
    pub linear: Vec3A,
    pub angular: Vec3A,
}

impl Yield {
    /// The change of velocity at `arm` from the centre.
    #[inline]
    pub fn at(&self, arm: Vec3A) -> Vec3A {
        self.linear + self.angular.cross(arm)
    }
}

/// What the world adds to a pass: the obstacles that give way (their
/// bodies, and how much each one's velocity changed in this step so far,
/// indexed by [`PlacedObstacle::mover`]), and the bodies' ties to points
/// of the world.
pub struct Movers<'a> {
    pub movers: &'a [Mover],
    pub yields: &'a mut [Yield],
    pub ties: &'a mut [TieRow],
}

/// A body held at a point of the world (a tie) for one step.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TieRow {
    pub slot: u32,
    /// The [`Mover`] of the point's body (`u32::MAX`: it does not give
    /// way).
    pub mover: u32,
    /// The obstacle the point's entity is itself (`u32::MAX`: none). The
    /// body touches neither it nor any obstacle of `mover`.
    pub obstacle: u32,
    /// Where the point is at the step's start and at the current pass's
    /// start, and its velocity over the step.
    pub anchor: Vec3A,
    pub at: Vec3A,
    pub velocity: Vec3A,
    /// The point's offset from its mover's centre of mass.
    pub arm: Vec3A,
    /// The velocity the tie gave the body in the current pass.
    pub given: Vec3A,
    /// With a mover, per axis (x, y, z), laid out at each pass's start
    /// ([`TieRow::lay_out`]): the share of a change of the body's velocity
    /// along the axis that the body takes (`w / (w + meets)`), and how the
    /// mover's spin changes per unit impulse along it (`I⁻¹(arm × axis)`).
    /// They hold over the pass (a substep system may change the body's
    /// mass between passes), so the rounds do not compute them again.
    pub shares: Vec3A,
    pub turns: [Vec3A; 3],
}

impl TieRow {
    /// A tie with nothing given yet and no mover's shares laid out.
    pub fn new(slot: u32, mover: u32, obstacle: u32, point: Vec3A, velocity: Vec3A) -> Self {
        Self {
            slot,
            mover,
            obstacle,
            anchor: point,
            at: point,
            velocity,
            arm: Vec3A::ZERO,
            given: Vec3A::ZERO,
            shares: Vec3A::ONE,
            turns: [Vec3A::ZERO; 3],
        }
    }

    /// Lays out [`Self::shares`] and [`Self::turns`] for its body of
    /// inverse mass `w`, tied to a point of `mover`.
    pub fn lay_out(&mut self, mover: &Mover, w: f32) {
        for (a, axis) in [Vec3A::X, Vec3A::Y, Vec3A::Z].into_iter().enumerate() {
            self.shares[a] = w / (w + mover.meets(self.arm, axis));
            self.turns[a] = mover.inv_inertia * self.arm.cross(axis);
        }
    }
}

/// One round of a tie: the body's velocity relative to the point's
/// (with what the point's mover gained so far) is set, axis by axis, to
/// close a share `beta` of the gap within the pass, shared with the
/// point's mover by their inverse masses.
fn solve_tie(
    tie: &mut TieRow,
    bodies: &mut Bodies,
    mover: Option<(&Mover, &mut Yield)>,
    h: f32,
    beta: f32,
) {
    let slot = tie.slot as usize;
    let w = bodies.inv_mass[slot];
    if !(bodies.valid[slot] && w > 0.0) {
        return;
    }
    let gap = bodies.pos[slot] - tie.at;
    let mut v = bodies.vel[slot];
    let mut mover = mover;
    for (a, axis) in [Vec3A::X, Vec3A::Y, Vec3A::Z].into_iter().enumerate() {
        let (sped, give) = match &mover {
            Some((_, taken)) => (taken.at(tie.arm), tie.shares[a]),
            None => (Vec3A::ZERO, 1.0),
        };
        let speed = axis.dot(v - tie.velocity - sped);
        let change = give * (-beta * axis.dot(gap) / h - speed);
        v[a] += change;
        tie.given[a] += change;
        if let Some((m, taken)) = &mut mover {
            // What the mover takes: `-change / w` along the axis.
            let impulse = -change / w;
            taken.linear[a] += m.inv_mass * impulse;
            taken.angular += impulse * tie.turns[a];
        }
    }
    bodies.vel[slot] = v;
}

#[cfg(test)]
impl Movers<'static> {
    /// No obstacle gives way, and no body is tied.
    pub fn none() -> Self {
        Self {
            movers: &[],
            yields: &mut [],
            ties: &mut [],
        }
    }
}

impl Movers<'_> {
    /// The mover of `contact` takes `impulse` (N·s, the opposite of what
    /// the body took) at the contact's arm.
    #[inline]
    fn take(&mut self, contact: &Contact, impulse: Vec3A) {
        let (mover, taken) = (
            &self.movers[contact.mover as usize],
            &mut self.yields[contact.mover as usize],
        );
        mover.take(taken, contact.arm, impulse);
    }

    /// One round of every tie (`beta`: the position bias).
    fn solve_ties(&mut self, bodies: &mut Bodies, h: f32, beta: f32) {
        for tie in self.ties.iter_mut() {
            let mover = self.movers.get(tie.mover as usize);
            let taken = self.yields.get_mut(tie.mover as usize);
            solve_tie(tie, bodies, mover.zip(taken), h, beta);
        }
    }
}

/// The obstacles of a pass: placed, the polygons' vertices, the meshes'
/// triangles, and the grid that finds those near a body.
#[derive(Clone, Copy)]
pub struct Obstacles<'a> {
    pub placed: &'a [PlacedObstacle],
    pub vertices: &'a [Vec2],
    pub meshes: &'a [Triangles],
    /// The fastest any point of a bounded obstacle's surface moves.
    pub speed: f32,
    pub grid: &'a Grid,
    /// The bodies of the obstacles that give way, and how much their
    /// velocities changed in this step so far.
    pub movers: &'a [Mover],
    pub yields: &'a [Yield],
    /// The step's ties, by slot: a tied body does not touch what it is
    /// tied to.
    pub ties: &'a [TieRow],
}

/// An obstacle contact's impulses at the end of a pass, for the next pass
/// of the step, keyed by its round row, obstacle and part (sorted so).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ObstacleWarm {
    pub key: [u32; 3],
    pub warm: Warm,
}

/// Whether bodies in groups `a` and `b` (memberships, filters) touch.
#[inline]
fn groups_touch(a: [u32; 2], b: [u32; 2]) -> bool {
    a[0] & b[1] != 0 && b[0] & a[1] != 0
}

/// Appends to `contacts` the contacts of `rounds` with `obstacles`, by
/// the rule of [`find_contacts`] (one function for both) at the nearest
/// point of each obstacle near the body, with the surface's velocity
/// there. Each starts from its impulses in `warm` (sorted by round row,
/// then obstacle).
pub fn find_obstacle_contacts(
    rounds: &[RoundRow],
    obstacles: Obstacles,
    bodies: &Bodies,
    solve: &Rounds,
    warm: &[ObstacleWarm],
    contacts: &mut Vec<Contact>,
) {
    if obstacles.placed.is_empty() {
        return;
    }
    let (pos, vel) = (bodies.pos, &*bodies.vel);
    for (r, round) in rounds.iter().enumerate() {
        let i = round.slot as usize;
        if !bodies.valid[i] || bodies.inv_mass[i] <= 0.0 {
            continue;
        }
        // A contact needs a gap below the radius and the pass's travel
        // (the body's and the surface's).
        let reach = 2.0 * round.radius + solve.h * (vel[i].length() + obstacles.speed);
        if !obstacles.grid.may_meet(pos[i], reach) {
            continue;
        }
        // The body's tie, looked up at its first obstacle.
        let mut tie: Option<Option<&TieRow>> = None;
        obstacles.grid.near(pos[i], reach, |o| {
            let obstacle = &obstacles.placed[o as usize];
            if !groups_touch(round.groups, obstacle.groups) {
                return;
            }
            let tie = *tie.get_or_insert_with(|| {
                let k = obstacles.ties.binary_search_by_key(&round.slot, |t| t.slot);
                k.ok().map(|k| &obstacles.ties[k])
            });
            if tie.is_some_and(|t| {
                t.obstacle == o || (t.mover != u32::MAX && t.mover == obstacle.mover)
            }) {
                return;
            }
            let local = obstacle.to_local * (pos[i] - obstacle.center);
            let mut meet = |part: u32, found: Nearest| {
                let normal = obstacle.rotation * found.normal;
                let point = pos[i] - found.distance * normal;
                let mover = obstacles.movers.get(obstacle.mover as usize);
                // A mover's arm (from its centre as at the step's start)
                // and how much its surface there sped up so far.
                let arm = mover.map_or(Vec3A::ZERO, |m| point - m.center);
                let sped = mover.map_or(Vec3A::ZERO, |_| {
                    obstacles.yields[obstacle.mover as usize].at(arm)
                });
                let at = Surface {
                    normal,
                    gap: found.distance - round.radius,
                    velocity: obstacle.velocity_at(point) + sped,
                    material: obstacle.material,
                };
                if !(at.gap.is_finite() && normal.is_finite() && at.velocity.is_finite()) {
                    return;
                }
                let key = [r as u32, o, part];
                let last = warm
                    .binary_search_by_key(&key, |w| w.key)
                    .ok()
                    .map(|k| &warm[k].warm);
                let Some(contact) = surface_contact(round, vel[i], at, solve, last) else {
                    return;
                };
                let contact = Contact {
                    key,
                    point,
                    ..contact
                };
                contacts.push(match mover {
                    None => contact,
                    // What the mover's surface gains from here on is read
                    // as the rounds go (`solve_moving_contact`).
                    Some(m) => {
                        let w = bodies.inv_mass[i];
                        let lift = normal.dot(sped);
                        Contact {
                            mover: obstacle.mover,
                            give: w / (w + m.meets(arm, normal)),
                            arm,
                            surface: contact.surface - sped,
                            target: contact.target - lift,
                            relaxed: contact.relaxed - lift,
                            ..contact
                        }
                    }
                });
            };
            match obstacle.shape {
                Shape::Mesh { mesh } => {
                    obstacles.meshes[mesh as usize].near_distinct(local, reach, meet)
                }
                ref shape => meet(0, nearest(shape, local, obstacles.vertices)),
            }
        });
    }
}

/// The impulses of the obstacle contacts among `contacts` (as the last
/// pass left them), into `warm`, sorted for [`find_obstacle_contacts`].
pub fn keep_obstacle_warm(contacts: &[Contact], warm: &mut Vec<ObstacleWarm>) {
    warm.clear();
    warm.extend(
        contacts
            .iter()
            .filter(|c| c.key[0] != u32::MAX)
            .map(|c| ObstacleWarm {
                key: c.key,
                warm: Warm {
                    normal: c.normal_impulse,
                    friction: c.friction_impulse,
                },
            }),
    );
    warm.sort_unstable_by_key(|w| w.key);
}

/// A contact's impulses from the last pass, its friction turned into the
/// plane across `normal` (which may have turned since).
#[inline]
fn warmed(warm: Option<&Warm>, normal: Vec3A) -> (f32, Vec3A) {
    warm.map_or((0.0, Vec3A::ZERO), |warm| {
        let friction = warm.friction - normal.dot(warm.friction) * normal;
        (warm.normal, friction)
    })
}

/// The normal speed a contact aims for. Without a bounce, the approach may
/// close the gap and no more (or, inside, a share `β` of the overlap is
/// undone, when `biased`; else it stops); with one, the bodies leave at the
/// bounce speed.
#[inline]
fn target(
    gap: f32,
    approach: f32,
    hits: bool,
    restitution: f32,
    solve: &Rounds,
    biased: bool,
) -> f32 {
    let h = solve.h;
    let bounce = if hits && approach < -solve.bounce_threshold {
        -restitution * approach
    } else {
        0.0
    };
    let reach = if gap >= 0.0 {
        -gap / h
    } else if biased {
        -solve.beta * gap / h
    } else {
        0.0
    };
    if bounce > 0.0 {
        bounce.max(reach)
    } else {
        reach
    }
}

/// What a step's pair contacts are found for: the rest of the step
/// (`span` seconds) in passes of `h`, each contact starting with the
/// share `share` of the forces its pair held over the last step
/// (`kept`; see [`kept`](super::kept)), as impulses over a pass.
#[derive(Debug, Clone, Copy)]
pub struct Ahead<'a> {
    pub span: f32,
    pub h: f32,
    pub kept: &'a Kept,
    pub share: f32,
}

#[cfg(test)]
impl Ahead<'static> {
    /// One pass of `h`, every contact starting with no impulse.
    pub fn cold(h: f32) -> Self {
        static EMPTY: Kept = Kept::EMPTY;
        Self {
            span: h,
            h,
            kept: &EMPTY,
            share: 0.0,
        }
    }
}

/// Finds the contacts of `pairs` into `found` for the rest of the step
/// (`ahead.span` seconds, from the start of this pass), as
/// [`find_contacts`] does for planes: pairs whose drift would close their
/// gap within it, and (speculatively) pairs near each other. Each starts
/// with the impulses a pass of the share `ahead.share` of its pair's kept
/// forces gives (none if it held none), and keeps its impulses from pass
/// to pass of the step; each pass turns them to its positions
/// ([`aim_pairs`]). The contacts keep the rows' `batches`:
/// `found.batches` lists the contacts found on each, and `found.lanes`
/// lays them out in groups of four for the rounds (all as one run with
/// `merge`, for one thread: see [`pack`]).
pub fn find_pair_contacts(
    pairs: &[PairRow],
    batches: &[Batch],
    bodies: &Bodies,
    ahead: Ahead,
    merge: bool,
    found: &mut PairContacts,
) {
    let PairContacts {
        contacts,
        batches: found_batches,
        lanes,
    } = found;
    find_in(pairs, batches, bodies, ahead, true, contacts, found_batches);
    pack(contacts, found_batches, bodies.inv_mass.len(), merge, lanes);
}

/// What [`find_pair_contacts`] does (without `merge`), with the batches
/// cut into runs that `each` may take at once on several threads: each
/// run's contacts are found and laid out in groups in a part of `parts`
/// (one part per run, `runs` of them, cut by rows), and then the parts'
/// groups laid end to end into `found.lanes` by `each` again. The groups,
/// the batches and their `joined` are those of one call, bit for bit;
/// `found.contacts` stays empty (the contacts stay in the parts).
pub fn find_pair_contacts_in_parts(
    pairs: &[PairRow],
    batches: &[Batch],
    bodies: &Bodies,
    ahead: Ahead,
    (runs, each): (usize, Each),
    parts: &mut Vec<Mutex<PairPart>>,
    found: &mut PairContacts,
) {
    let runs = runs.max(1);
    parts.resize_with(runs, Mutex::default);
    // Runs of whole batches with about as many rows each.
    let total = batches.last().map_or(0, |batch| batch.rows.end);
    let first = batches.first().map_or(0, |batch| batch.rows.start);
    let cut = |k: usize| match k {
        k if k == runs => batches.len(),
        k => batches.partition_point(|batch| batch.rows.start < first + (total - first) * k / runs),
    };
    let slots = bodies.inv_mass.len();
    fn lock(part: &Mutex<PairPart>) -> MutexGuard<'_, PairPart> {
        part.lock().unwrap_or_else(PoisonError::into_inner)
    }
    let shared = &*parts;
    each(runs, &|k| {
        let part = &mut *lock(&shared[k]);
        let PairContacts {
            contacts,
            batches: found_batches,
            lanes,
        } = &mut part.found;
        let run = &batches[cut(k)..cut(k + 1)];
        part.opens = find_in(pairs, run, bodies, ahead, false, contacts, found_batches);
        pack(contacts, found_batches, slots, false, lanes);
    });
    // Where each part's groups go, and its batches there.
    found.contacts.clear();
    found.batches.clear();
    let lanes = &mut found.lanes;
    lanes.batches.clear();
    let (mut opens, mut at, mut bound) = (true, 0, 0);
    for part in parts.iter_mut() {
        let part = part.get_mut().unwrap_or_else(PoisonError::into_inner);
        let (own, packed) = (&part.found.batches, &part.found.lanes.batches);
        debug_assert_eq!(own.len(), packed.len(), "one batch of groups per batch");
        for (k, (own, packed)) in own.iter().zip(packed).enumerate() {
            // A part's first batch opens its stage when one left out before
            // the part (or its first) did.
            let joined = own.joined && !(k == 0 && opens);
            let rows = at + packed.rows.start..at + packed.rows.end;
            let joined = joined && !lanes.batches.is_empty();
            lanes.batches.push(Batch { rows, joined });
        }
        opens = if own.is_empty() {
            opens || part.opens
        } else {
            part.opens
        };
        at += part.found.lanes.groups.len();
        bound = bound.max(part.found.lanes.bound());
    }
    // Each part's groups copied to their place, at once.
    let mut rest = lanes.make_room(at, bound);
    let places: Vec<Mutex<&mut [Group]>> = parts
        .iter_mut()
        .map(|part| {
            let part = part.get_mut().unwrap_or_else(PoisonError::into_inner);
            let (to, after) =
                core::mem::take(&mut rest).split_at_mut(part.found.lanes.groups.len());
            rest = after;
            Mutex::new(to)
        })
        .collect();
    let shared = &*parts;
    each(runs, &|k| {
        let mut to = places[k].lock().unwrap_or_else(PoisonError::into_inner);
        to.copy_from_slice(&lock(&shared[k]).found.lanes.groups);
    });
}

/// The pair contacts of `batches`' rows, into `contacts`, and the batches
/// that found any into `found_batches` (each a run of `contacts`): pairs
/// whose drift would close their gap within `ahead.span`, and
/// (speculatively) pairs near each other, with their kept impulses. A
/// batch that finds no contact is left out; the next one found then opens
/// its stage if the batch that opened it was left out: `opens` says
/// whether the first found does (a batch before `batches` was left out
/// that would have), and the result whether the batch after them would.
fn find_in(
    pairs: &[PairRow],
    batches: &[Batch],
    bodies: &Bodies,
    Ahead {
        span,
        h,
        kept,
        share,
    }: Ahead,
    mut opens: bool,
    contacts: &mut Vec<One>,
    found_batches: &mut Vec<Batch>,
) -> bool {
    let vel = &*bodies.vel;
    contacts.clear();
    found_batches.clear();
    // Held forces to impulses over a pass, the share carried.
    let warm = share * h;
    for batch in batches {
        opens |= !batch.joined;
        let start = contacts.len();
        for row in batch.rows.clone() {
            let pair = &pairs[row];
            let (a, b) = (pair.a as usize, pair.b as usize);
            let Some((w, d, distance)) = between(bodies, a, b) else {
                continue;
            };
            if !(d.is_finite() && distance.is_finite()) {
                continue;
            }
            let relative = vel[b] - vel[a];
            let gap = distance - pair.radius;
            if gap >= 0.5 * pair.radius + span * relative.length() {
                continue;
            }
            let held = if warm > 0.0 {
                kept.find(a as u32, b as u32)
            } else {
                None
            };
            let (normal, friction) = held.map_or((0.0, Vec3A::ZERO), |(normal, friction)| {
                (warm * normal, warm * friction)
            });
            contacts.push(One {
                a: a as u32,
                b: b as u32,
                wa: bodies.inv_mass[a],
                wb: bodies.inv_mass[b],
                radius: pair.radius,
                restitution: pair.material.restitution,
                friction: pair.material.friction,
                mass: 1.0 / w,
                normal_impulse: normal,
                friction_impulse: friction,
                ..One::default()
            });
        }
        if contacts.len() > start {
            found_batches.push(Batch {
                rows: start..contacts.len(),
                joined: !opens,
            });
            opens = false;
        }
    }
    opens
}

/// Turns the step's pair contacts (`groups`, any run of them) to this
/// pass's positions and velocities (see
/// [`Group::refresh`](super::lanes::Group::refresh)). A contact of a body
/// that is no longer valid (it went non-finite) is left out for the rest
/// of the step, so it spreads nothing to the other body (`check`: some
/// body may be invalid). Each group is aimed alone, so runs of them may be
/// aimed at once.
pub fn aim_pairs(groups: &mut [Group], bodies: &Bodies, solve: &Rounds, check: bool) {
    let (pos, vel, valid) = (bodies.pos, &*bodies.vel, bodies.valid);
    for group in groups {
        let (a, b) = group.ends();
        if check {
            let keep = core::array::from_fn(|i| valid[a[i] as usize] && valid[b[i] as usize]);
            group.drop_lanes(keep);
        }
        let state = [
            gather(|s| pos[s], a),
            gather(|s| pos[s], b),
            gather(|s| vel[s], a),
            gather(|s| vel[s], b),
        ];
        group.refresh(state, solve);
    }
}

/// A pass's rods (and distance limits) and angle limits.
#[derive(Clone, Copy)]
pub struct Joints<'a> {
    pub rods: &'a [RodRow],
    pub angles: &'a [AngleRow],
}

/// The warm impulses of a pass's contacts with planes (pair contacts keep
/// theirs in their lanes for the step).
pub struct WarmStart<'a> {
    pub planes: &'a mut [Warm],
}

/// Where the relaxing round leaves the bodies' velocities: those of the
/// pass group's `slots` before it, in `before` (written only when it runs,
/// see [`solve`]), to move each body it changed by `h·(before − after)`.
pub struct Relaxed<'a> {
    pub slots: core::ops::Range<usize>,
    pub before: &'a mut Vec<Vec3A>,
    /// Per rod, then per angle limit: the impulse a limit holds at its
    /// bound this pass (accumulated over the rounds, never pushing out).
    pub held: &'a mut Vec<f32>,
}

/// Applies the contacts' warm impulses, runs `solve.iterations` rounds over
/// `rods`, then `contacts` with planes, then `pairs` (batch after batch;
/// joined batches maybe at once on several threads, with the same bits), each
/// round, then the relaxing round over the contacts (see the
/// [module docs](self)), with the velocities from before it in `relaxed`;
/// keeps each plane contact's impulses in `warm` for the next pass (every
/// other entry read was left at its default by [`find_contacts`]; pair
/// contacts keep theirs in their lanes).
/// Returns whether the relaxing round ran (there was something to relax):
/// only then does `relaxed.before` hold this pass's velocities.
pub fn solve(
    Joints { rods, angles }: Joints,
    (contacts, movers): (&mut [Contact], &mut Movers),
    mut pairs: PairBatches,
    bodies: &mut Bodies,
    solve: &Rounds,
    warm: WarmStart,
    relaxed: Relaxed,
) -> bool {
    let held = &mut *relaxed.held;
    held.clear();
    held.resize(rods.len() + angles.len(), 0.0);
    for tie in movers.ties.iter_mut() {
        tie.given = Vec3A::ZERO;
    }
    let vel = &mut *bodies.vel;
    for contact in contacts.iter() {
        let given = contact.normal_impulse * contact.normal + contact.friction_impulse;
        vel[contact.slot] += given;
        if contact.mover != u32::MAX {
            movers.take(contact, -given / bodies.inv_mass[contact.slot]);
        }
    }
    solve_pairs(&mut pairs, Visit::WarmStart, bodies.vel);
    for _ in 0..solve.iterations {
        for (n, rod) in rods.iter().enumerate() {
            solve_rod(rod, &mut held[n], bodies, solve);
        }
        for (n, limit) in angles.iter().enumerate() {
            solve_angle(limit, &mut held[rods.len() + n], bodies, solve);
        }
        movers.solve_ties(bodies, solve.h, solve.beta);
        solve_contacts(contacts, bodies, movers);
        solve_pairs(&mut pairs, Visit::Round, bodies.vel);
    }
    let relaxing = relax(
        (rods, angles),
        contacts,
        (&mut pairs, movers),
        bodies,
        solve,
        relaxed,
    );
    // The other entries were taken (left at their default) by
    // `find_contacts`.
    for contact in contacts.iter() {
        if let Some(warm) = warm.planes.get_mut(contact.warm) {
            *warm = Warm {
                normal: contact.normal_impulse,
                friction: contact.friction_impulse,
            };
        }
    }
    relaxing
}

/// One visit (the warm start, or a round) of the pair contacts, batch after
/// batch of groups of four (see [`lanes`](super::lanes)), through
/// `pairs.spread`: joined batches
/// share no moving body, so running them at once gives the bits of running
/// them in turn.
fn solve_pairs(pairs: &mut PairBatches, visit: Visit, vel: &mut [Vec3A]) {
    let lanes = &mut pairs.found.lanes;
    // Every slot the groups hold is in `vel` (checked once here, not at
    // each access).
    assert!(lanes.bound() <= vel.len(), "contacts beyond the velocities");
    let Lanes {
        groups, batches, ..
    } = lanes;
    let (shared, items) = (SharedVelocities::new(vel), SharedSlice::new(groups));
    pairs.spread.spread(batches, &|run| {
        // SAFETY: `spread` hands out each batch once, and runs at once only
        // the batches of one stage, which share no moving body (`split`;
        // moving as of `list_pairs`, and a body's inverse mass never turns
        // from 0 to positive later in the step: `gather_written` runs
        // before, and a substep system's write to a fixed body is read at
        // the next step). A lane writes a body only where its inverse mass
        // (as found at the step's first pass) is positive; a body whose
        // inverse mass is 0 is read and never written. Every slot is below
        // `bound`, so in `vel` (asserted above).
        let groups = unsafe { items.run(run) };
        solve_groups(
            groups,
            visit,
            |slot| unsafe { shared.get(slot) },
            |slot, v| unsafe { shared.set(slot, v) },
        );
    });
}

/// What a rod or a pair of `a` and `b` reads first: their summed inverse
/// mass `w`, the vector from `a` to `b` and its length; `None` when either
/// cannot be stepped or neither moves (`w ≤ 0`).
#[inline(always)]
fn between(bodies: &Bodies, a: usize, b: usize) -> Option<(f32, Vec3A, f32)> {
    let w = bodies.inv_mass[a] + bodies.inv_mass[b];
    if !(bodies.valid[a] && bodies.valid[b]) || w <= 0.0 {
        return None;
    }
    let d = bodies.pos[b] - bodies.pos[a];
    Some((w, d, d.length()))
}

/// One rod's impulse.
#[inline]
fn solve_rod(rod: &RodRow, held: &mut f32, bodies: &mut Bodies, solve: &Rounds) {
    let (h, beta) = (solve.h, solve.beta);
    let (a, b) = (rod.a as usize, rod.b as usize);
    let Some((w, d, length)) = between(bodies, a, b) else {
        return;
    };
    let (vel, inv_mass) = (&mut *bodies.vel, bodies.inv_mass);
    if length <= 0.0 || !length.is_finite() {
        return;
    }
    let n = d / length;
    let relative = vel[b] - vel[a];
    let speed = n.dot(relative);
    if rod.min != rod.max {
        // A limit (a lower bound of 0 never acts).
        let min = if rod.min > 0.0 {
            rod.min
        } else {
            f32::NEG_INFINITY
        };
        let Some(impulse) = bound_impulse(length, speed, (min, rod.max), w, held, solve) else {
            return;
        };
        vel[a] -= inv_mass[a] * impulse * n;
        vel[b] += inv_mass[b] * impulse * n;
        return;
    }
    let error = length - rod.min;
    // Turning lengthens a rod by about h²·v_t²/(2L) per pass; aim the
    // normal speed to undo that exactly, and a share β of the error
    // already there.
    let turn2 = (h * (relative - speed * n)).length_squared();
    let turning = ((rod.min * rod.min - turn2).max(0.0).sqrt() - rod.min) / h;
    let impulse = (turning - beta * error / h - speed) / w;
    vel[a] -= inv_mass[a] * impulse * n;
    vel[b] += inv_mass[b] * impulse * n;
}

/// The impulse a limit on `value` (changing at `rate`, with effective
/// inverse mass `w`) applies this round, if any: only at a bound, only
/// towards the inside. Within the pass the value may reach the bound and
/// no more; past it, a share `β` of the error is undone. The impulse is
/// accumulated in `held` and never pushes outwards (positive at the lower
/// bound, negative at the upper); a limit that holds an impulse stays at
/// its bound until it lets go, so the relaxing round can take back what
/// the bias gave.
#[inline]
fn bound_impulse(
    value: f32,
    rate: f32,
    (min, max): (f32, f32),
    w: f32,
    held: &mut f32,
    solve: &Rounds,
) -> Option<f32> {
    let ahead = value + solve.h * rate;
    let (bound, up) = if ahead > max || *held < 0.0 {
        (max, false)
    } else if ahead < min || *held > 0.0 {
        (min, true)
    } else {
        return None;
    };
    let error = value - bound;
    let past = if up { error < 0.0 } else { error > 0.0 };
    let target = if past { -solve.beta * error } else { -error } / solve.h;
    let wanted = (target - rate) / w;
    // What was held at the other bound does not count here.
    let before = if up { held.max(0.0) } else { held.min(0.0) };
    let total = if up {
        (before + wanted).max(0.0)
    } else {
        (before + wanted).min(0.0)
    };
    *held = total;
    Some(total - before)
}

/// `atan2(y, x)` in plain `f32` arithmetic (no platform library), so an
/// angle limit gives the same bits on every machine: the arctangent of
/// `min(|x|, |y|) / max(|x|, |y|)` by Abramowitz and Stegun's polynomial
/// 4.4.49 (error below 2·10⁻⁸ on `[0, 1]`), then placed in its octant.
/// `atan2(0, 0)` is 0.
#[inline]
pub fn atan2(y: f32, x: f32) -> f32 {
    use core::f32::consts::{FRAC_PI_2, PI};
    let (ax, ay) = (x.abs(), y.abs());
    let (small, large) = if ax < ay { (ax, ay) } else { (ay, ax) };
    if large == 0.0 {
        return 0.0;
    }
    let t = small / large;
    let s = t * t;
    let mut r = t
        * (0.999_999_3
            + s * (-0.333_298_56
                + s * (0.199_465_36
                    + s * (-0.139_085_33
                        + s * (0.096_420_04
                            + s * (-0.055_909_886 + s * (0.021_861_23 - 0.004_054_058 * s)))))));
    if ay > ax {
        r = FRAC_PI_2 - r;
    }
    if x < 0.0 {
        r = PI - r;
    }
    if y < 0.0 { -r } else { r }
}

/// `theta`, or `theta ± 2π` when that lies nearer to `[min, max]`: a
/// limit that reaches ±π (a straight knee) is not crossed by wrapping
/// round.
#[inline]
pub fn nearest_turn(theta: f32, min: f32, max: f32) -> f32 {
    use core::f32::consts::TAU;
    if theta < min && theta + TAU - max < min - theta {
        theta + TAU
    } else if theta > max && min - (theta - TAU) < theta - max {
        theta - TAU
    } else {
        theta
    }
}

/// One angle limit's impulse.
#[inline]
fn solve_angle(limit: &AngleRow, held: &mut f32, bodies: &mut Bodies, solve: &Rounds) {
    let (pos, vel, inv_mass) = (bodies.pos, &mut *bodies.vel, bodies.inv_mass);
    let (a, p, b) = (limit.a as usize, limit.p as usize, limit.b as usize);
    if !(bodies.valid[a] && bodies.valid[p] && bodies.valid[b]) {
        return;
    }
    let k = limit.axis;
    let across = |v: Vec3A| v - k.dot(v) * k;
    let (u, w) = (across(pos[a] - pos[p]), across(pos[b] - pos[p]));
    let (uu, ww) = (u.length_squared(), w.length_squared());
    if uu <= 0.0 || ww <= 0.0 || !(uu.is_finite() && ww.is_finite()) {
        return;
    }
    let ja = -k.cross(u) / uu;
    let jb = k.cross(w) / ww;
    let jp = -(ja + jb);
    let mass = inv_mass[a] * ja.length_squared()
        + inv_mass[b] * jb.length_squared()
        + inv_mass[p] * jp.length_squared();
    if mass <= 0.0 || !mass.is_finite() {
        return;
    }
    let theta = nearest_turn(atan2(u.cross(w).dot(k), u.dot(w)), limit.min, limit.max);
    let rate = ja.dot(vel[a]) + jb.dot(vel[b]) + jp.dot(vel[p]);
    let Some(impulse) = bound_impulse(theta, rate, (limit.min, limit.max), mass, held, solve)
    else {
        return;
    };
    vel[a] += inv_mass[a] * impulse * ja;
    vel[b] += inv_mass[b] * impulse * jb;
    vel[p] += inv_mass[p] * impulse * jp;
}

/// One round of the plane and obstacle contacts, in order.
#[inline]
fn solve_contacts(contacts: &mut [Contact], bodies: &mut Bodies, movers: &mut Movers) {
    for contact in contacts.iter_mut() {
        if contact.mover == u32::MAX {
            solve_contact(contact, bodies.vel);
        } else {
            solve_moving_contact(contact, bodies, movers);
        }
    }
}

/// [`solve_contact`] against an obstacle that gives way: the surface moves
/// at its velocity plus what its mover gained so far, a speed change is
/// shared between the body and the mover by their inverse masses (the
/// mover's as met at the contact's arm), and the mover takes the opposite
/// of each impulse the body takes.
fn solve_moving_contact(contact: &mut Contact, bodies: &mut Bodies, movers: &mut Movers) {
    let w = bodies.inv_mass[contact.slot];
    let (n, arm) = (contact.normal, contact.arm);
    let mut v = bodies.vel[contact.slot];
    let sped = movers.yields[contact.mover as usize].at(arm);
    // Normal: accumulated, never pulling.
    let speed = n.dot(v - sped);
    let total = (contact.normal_impulse + contact.give * (contact.target - speed)).max(0.0);
    let normal = (total - contact.normal_impulse) * n;
    contact.normal_impulse = total;
    v += normal;
    movers.take(contact, -normal / w);
    // Friction: accumulated, within the Coulomb cone, towards the
    // surface's velocity; shared as the normal is, along the slip.
    let sped = movers.yields[contact.mover as usize].at(arm);
    let slip = v - contact.surface - sped;
    let tangential = slip - n.dot(slip) * n;
    let along = tangential.normalize_or_zero();
    let mover = &movers.movers[contact.mover as usize];
    let give = w / (w + mover.meets(arm, along));
    let total = (contact.friction_impulse - give * tangential)
        .clamp_length_max(contact.friction * contact.normal_impulse);
    let friction = total - contact.friction_impulse;
    contact.friction_impulse = total;
    v += friction;
    movers.take(contact, -friction / w);
    bodies.vel[contact.slot] = v;
}

/// One contact's normal and friction impulses, accumulated.
#[inline]
fn solve_contact(contact: &mut Contact, vel: &mut [Vec3A]) {
    let v = &mut vel[contact.slot];
    // Normal: accumulated, never pulling.
    let speed = contact.normal.dot(*v);
    let total = (contact.normal_impulse + contact.target - speed).max(0.0);
    *v += (total - contact.normal_impulse) * contact.normal;
    contact.normal_impulse = total;
    // Friction: accumulated, within the Coulomb cone, towards the
    // surface's velocity.
    let slip = *v - contact.surface;
    let tangential = slip - contact.normal.dot(slip) * contact.normal;
    let total = (contact.friction_impulse - tangential)
        .clamp_length_max(contact.friction * contact.normal_impulse);
    *v += total - contact.friction_impulse;
    contact.friction_impulse = total;
}

/// The relaxing round: rods and contacts are solved once more without
/// their position bias; the bodies they touch are listed with their
/// velocities from before.
fn relax(
    (rods, angles): (&[RodRow], &[AngleRow]),
    contacts: &mut [Contact],
    (pairs, movers): (&mut PairBatches, &mut Movers),
    bodies: &mut Bodies,
    solve: &Rounds,
    out: Relaxed,
) -> bool {
    if rods.is_empty()
        && angles.is_empty()
        && contacts.is_empty()
        && movers.ties.is_empty()
        && pairs.found.lanes.groups.is_empty()
    {
        return false;
    }
    // The group's velocities, copied whole: a pass of the group's bodies in
    // order costs less than listing the bodies of each contact (a pile's
    // contacts touch each body several times, in no order).
    out.before.clear();
    out.before.extend_from_slice(&bodies.vel[out.slots.clone()]);
    let unbiased = Rounds {
        beta: 0.0,
        ..*solve
    };
    for (n, rod) in rods.iter().enumerate() {
        solve_rod(rod, &mut out.held[n], bodies, &unbiased);
    }
    for (n, limit) in angles.iter().enumerate() {
        solve_angle(limit, &mut out.held[rods.len() + n], bodies, &unbiased);
    }
    movers.solve_ties(bodies, solve.h, 0.0);
    for contact in contacts.iter_mut() {
        contact.target = contact.relaxed;
    }
    solve_contacts(contacts, bodies, movers);
    solve_pairs(pairs, Visit::Relax, bodies.vel);
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    const ROUNDS: Rounds = Rounds {
        h: 0.01,
        iterations: 4,
        beta: 0.2,
        bounce_threshold: 0.5,
    };

    /// A rod between two free bodies conserves their momentum and leaves
    /// the relative speed along it that undoes the lengthening of the turn
    /// (`(√(L² − h²·v_t²) − L)/h`, the rod being at its length).
    #[test]
    fn a_rod_keeps_momentum_and_stops_stretching() {
        let pos = [Vec3A::ZERO, Vec3A::X];
        let mut vel = [Vec3A::new(-1.0, 0.5, 0.0), Vec3A::new(2.0, 0.0, 0.0)];
        let inv_mass = [1.0, 0.5];
        let momentum = |v: &[Vec3A]| v[0] / inv_mass[0] + v[1] / inv_mass[1];
        let before = momentum(&vel);
        let mut bodies = Bodies {
            pos: &pos,
            vel: &mut vel,
            valid: &[true, true],
            inv_mass: &inv_mass,
        };
        let rod = RodRow::rod(0, 1, 1.0);
        solve(
            Joints {
                rods: &[rod],
                angles: &[],
            },
            (&mut [], &mut Movers::none()),
            PairBatches::here(&mut PairContacts::default()),
            &mut bodies,
            &ROUNDS,
            cold(),
            relaxed(&mut Vec::new(), 2),
        );
        assert!((momentum(&vel) - before).length() < 1e-5);
        let turning = ((1.0f32 - (ROUNDS.h * 0.5).powi(2)).sqrt() - 1.0) / ROUNDS.h;
        assert!(((vel[1] - vel[0]).x - turning).abs() < 1e-4);
    }

    /// `n` rows as one batch, solved in order.
    fn one(n: usize) -> [Batch; 1] {
        [Batch {
            rows: 0..n,
            joined: false,
        }]
    }

    /// The relaxing round's output for bodies `0..n`.
    fn relaxed(before: &mut Vec<Vec3A>, n: usize) -> Relaxed<'_> {
        Relaxed {
            slots: 0..n,
            before,
            held: Box::leak(Box::default()),
        }
    }

    /// No warm impulses.
    fn cold() -> WarmStart<'static> {
        WarmStart { planes: &mut [] }
    }

    /// The pair contacts of `rows` for a step of one pass, aimed.
    fn find_and_aim(
        rows: &[PairRow],
        batches: &[Batch],
        bodies: &Bodies,
        found: &mut PairContacts,
    ) {
        find_pair_contacts(rows, batches, bodies, Ahead::cold(ROUNDS.h), false, found);
        aim_pairs(&mut found.lanes.groups, bodies, &ROUNDS, false);
    }

    /// Momentum `Σ v/w` of dynamic bodies.
    fn momentum(vel: &[Vec3A], inv_mass: &[f32]) -> Vec3A {
        vel.iter().zip(inv_mass).map(|(v, w)| *v / *w).sum()
    }

    fn energy(vel: &[Vec3A], inv_mass: &[f32]) -> f32 {
        vel.iter()
            .zip(inv_mass)
            .map(|(v, w)| 0.5 * v.length_squared() / w)
            .sum()
    }

    /// Two balls meeting head on, whatever the restitution and the masses:
    /// momentum kept, no energy added, and the separating speed `e` times
    /// the approach (`e = 1`: the elastic exchange).
    #[test]
    fn a_head_on_contact_keeps_momentum_and_adds_no_energy() {
        for restitution in [0.0, 0.3, 0.7, 1.0] {
            for inv_mass in [[1.0, 1.0], [1.0, 0.25], [0.1, 2.0]] {
                let pos = [Vec3A::ZERO, Vec3A::new(0.21, 0.0, 0.0)];
                let mut vel = [Vec3A::new(5.0, 0.0, 0.0), Vec3A::new(-3.0, 0.0, 0.0)];
                let (p0, e0) = (momentum(&vel, &inv_mass), energy(&vel, &inv_mass));
                let pair = PairRow {
                    a: 0,
                    b: 1,
                    radius: 0.2,
                    material: Material {
                        restitution,
                        friction: 0.5,
                    },
                    class: 0,
                };
                let mut bodies = Bodies {
                    pos: &pos,
                    vel: &mut vel,
                    valid: &[true, true],
                    inv_mass: &inv_mass,
                };
                let mut contacts = PairContacts::default();
                find_and_aim(&[pair], &one(1), &bodies, &mut contacts);
                assert_eq!(contacts.contacts.len(), 1);
                solve(
                    Joints {
                        rods: &[],
                        angles: &[],
                    },
                    (&mut [], &mut Movers::none()),
                    PairBatches::here(&mut contacts),
                    &mut bodies,
                    &ROUNDS,
                    cold(),
                    relaxed(&mut Vec::new(), 2),
                );
                let p1 = momentum(&vel, &inv_mass);
                assert!(
                    (p1 - p0).length() < 1e-4 * p0.length().max(1.0),
                    "{p0} → {p1}"
                );
                let e1 = energy(&vel, &inv_mass);
                assert!(e1 <= e0 * (1.0 + 1e-6), "energy {e0} → {e1}");
                // Without a bounce, the 1 cm gap closes in the pass and no
                // more.
                let expected = if restitution > 0.0 {
                    restitution * 8.0
                } else {
                    -0.01 / ROUNDS.h
                };
                let separating = vel[1].x - vel[0].x;
                assert!(
                    (separating - expected).abs() < 1e-3,
                    "e = {restitution}: {separating}"
                );
            }
        }
    }

    /// A slow ball resting on another stops at the surface: no bounce, no
    /// crossing, and friction holds a sideways push within `μ·λ`.
    #[test]
    fn a_slow_pair_contact_stops_at_touching() {
        let pos = [Vec3A::ZERO, Vec3A::new(0.0, 0.202, 0.0)];
        let mut vel = [Vec3A::ZERO, Vec3A::new(0.01, -0.45, 0.0)];
        let inv_mass = [0.0, 1.0];
        let pair = PairRow {
            a: 0,
            b: 1,
            radius: 0.2,
            material: Material {
                restitution: 1.0,
                friction: 1.0,
            },
            class: 0,
        };
        let mut bodies = Bodies {
            pos: &pos,
            vel: &mut vel,
            valid: &[true, true],
            inv_mass: &inv_mass,
        };
        let mut contacts = PairContacts::default();
        find_and_aim(&[pair], &one(1), &bodies, &mut contacts);
        solve(
            Joints {
                rods: &[],
                angles: &[],
            },
            (&mut [], &mut Movers::none()),
            PairBatches::here(&mut contacts),
            &mut bodies,
            &ROUNDS,
            cold(),
            relaxed(&mut Vec::new(), 2),
        );
        // Closes the 2 mm gap in one pass of 10 ms, and no more (below
        // the bounce threshold); the sideways slip stops.
        assert!((vel[1].y - (-0.2)).abs() < 1e-4, "{}", vel[1]);
        assert!(vel[1].x.abs() < 1e-6, "{}", vel[1]);
        assert_eq!(vel[0], Vec3A::ZERO);
    }

    /// The batches' stages: each a batch and the batches joined to it.
    fn stages(batches: &[Batch]) -> Vec<&[Batch]> {
        let mut out: Vec<&[Batch]> = Vec::new();
        let mut start = 0;
        for k in 1..=batches.len() {
            if k == batches.len() || !batches[k].joined {
                out.push(&batches[start..k]);
                start = k;
            }
        }
        out
    }

    /// Runs each stage's batches in turn, last first.
    struct Backwards;

    // SAFETY: one call at a time, each batch once.
    unsafe impl Spread for Backwards {
        fn spread(&self, batches: &[Batch], f: &(dyn Fn(core::ops::Range<usize>) + Sync)) {
            for stage in stages(batches) {
                for batch in stage.iter().rev() {
                    f(batch.rows.clone());
                }
            }
        }
    }

    /// Runs each stage's batches at once, each on a thread of its own.
    struct Threaded;

    // SAFETY: the batches of one stage at once, each once; stage after
    // stage.
    unsafe impl Spread for Threaded {
        fn spread(&self, batches: &[Batch], f: &(dyn Fn(core::ops::Range<usize>) + Sync)) {
            for stage in stages(batches) {
                std::thread::scope(|scope| {
                    for batch in stage {
                        let run = batch.rows.clone();
                        scope.spawn(move || f(run));
                    }
                });
            }
        }
    }

    /// The pairs of bodies near each other, cut into blocks (two stages
    /// and the pairs between), and a stage whose first batch finds no
    /// contact (its pairs far apart): the next one opens it instead.
    fn blocked_pairs(pos: &[Vec3A], inv_mass: &[f32]) -> (Vec<PairRow>, Vec<Batch>) {
        use crate::kernels::batches::{Blocks, in_turn, split};
        let n = pos.len();
        let mut rows = Vec::new();
        for a in 0..n {
            for b in a + 1..n {
                if pos[a].distance(pos[b]) < 0.25 && (inv_mass[a] > 0.0 || inv_mass[b] > 0.0) {
                    rows.push(PairRow {
                        a: a as u32,
                        b: b as u32,
                        radius: 0.2,
                        material: Material {
                            restitution: 0.3,
                            friction: 0.5,
                        },
                        class: 0,
                    });
                }
            }
        }
        let (unsplit, mut batches) = (core::mem::take(&mut rows), Vec::new());
        let mut blocks = Blocks::default();
        blocks.cover(n);
        split(
            &unsplit,
            |&row| row,
            |row| (row.a, row.b),
            |slot| inv_mass[slot as usize] > 0.0,
            200,
            &mut blocks,
            (&mut rows, &mut batches),
            &in_turn,
        );
        assert!(
            batches.iter().filter(|b| b.joined).count() >= 3,
            "{batches:?}"
        );
        // A stage whose first batch finds no contact (its pairs far
        // apart): the next one opens it instead.
        let last = batches.pop().unwrap();
        let at = last.rows.start;
        let far = (1..4).map(|i| PairRow {
            a: i,
            b: n as u32 - i,
            radius: 0.0,
            material: Material {
                restitution: 0.0,
                friction: 0.0,
            },
            class: 0,
        });
        rows.splice(at..at, far);
        batches.push(Batch {
            rows: at..at + 3,
            joined: false,
        });
        batches.push(Batch {
            rows: at + 3..last.rows.end + 3,
            joined: true,
        });
        (rows, batches)
    }

    /// A deterministic pseudo-random sequence in `[0, 1)`.
    fn rand(seed: &mut u64) -> f32 {
        *seed = seed
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        (*seed >> 40) as f32 / (1u64 << 24) as f32
    }

    /// A jumbled heap of balls (a few fixed) cut into blocks gives the same
    /// bits whether the blocks are solved in turn, last first, at once on
    /// threads of their own, or interleaved (all packed as one run, in
    /// levels): joined blocks share no moving body.
    #[test]
    fn batches_give_the_same_bits_however_they_run() {
        let mut seed = 11u64;
        let mut next = || rand(&mut seed);
        let n = 600;
        let pos: Vec<Vec3A> = (0..n)
            .map(|i| {
                let (row, col) = ((i / 30) as f32, (i % 30) as f32);
                Vec3A::new(col * 0.19 + 0.02 * next(), row * 0.19 + 0.02 * next(), 0.0)
            })
            .collect();
        let vel0: Vec<Vec3A> = (0..n)
            .map(|_| Vec3A::new(next() - 0.5, next() - 2.0, 0.0))
            .collect();
        let inv_mass: Vec<f32> = (0..n)
            .map(|i| if i % 37 == 0 { 0.0 } else { 0.5 + next() })
            .collect();
        let (rows, batches) = blocked_pairs(&pos, &inv_mass);
        // Found in one call (laid out as one run with `merge`), or in
        // `parts` runs of batches taken in reverse order.
        let run = |spread: &dyn Spread, merge: bool, parts: usize| {
            let mut vel = vel0.clone();
            let valid = vec![true; n];
            let mut bodies = Bodies {
                pos: &pos,
                vel: &mut vel,
                valid: &valid,
                inv_mass: &inv_mass,
            };
            let mut found = PairContacts::default();
            if parts == 0 {
                find_pair_contacts(
                    &rows,
                    &batches,
                    &bodies,
                    Ahead::cold(ROUNDS.h),
                    merge,
                    &mut found,
                );
                assert!(
                    found.contacts.len() > n,
                    "{} contacts",
                    found.contacts.len()
                );
            } else {
                let backwards = |n: usize, f: &(dyn Fn(usize) + Sync)| (0..n).rev().for_each(f);
                let mut kept = Vec::new();
                // Twice: the second time on the parts' kept buffers.
                for _ in 0..2 {
                    let runs = (parts, &backwards as Each);
                    let bodies = &bodies;
                    find_pair_contacts_in_parts(
                        &rows,
                        &batches,
                        bodies,
                        Ahead::cold(ROUNDS.h),
                        runs,
                        &mut kept,
                        &mut found,
                    );
                }
            }
            aim_pairs(&mut found.lanes.groups, &bodies, &ROUNDS, false);
            assert_eq!(found.lanes.batches.len() == 1, merge);
            let laid_out = found.lanes.batches.clone();
            let mut before = Vec::new();
            solve(
                Joints {
                    rods: &[],
                    angles: &[],
                },
                (&mut [], &mut Movers::none()),
                PairBatches {
                    found: &mut found,
                    spread,
                },
                &mut bodies,
                &ROUNDS,
                cold(),
                relaxed(&mut before, n),
            );
            let bits = |v: &Vec3A| v.to_array().map(f32::to_bits);
            (
                vel.iter().map(bits).collect::<Vec<_>>(),
                before.iter().map(bits).collect::<Vec<_>>(),
                laid_out,
            )
        };
        let alone = run(&OneThread, false, 0);
        assert_ne!(
            alone.0,
            vel0.iter()
                .map(|v| v.to_array().map(f32::to_bits))
                .collect::<Vec<_>>()
        );
        assert_eq!(run(&Backwards, false, 0), alone);
        assert_eq!(run(&Threaded, false, 0), alone);
        // Found in parts (more parts than batches: some find nothing, and
        // some cut between the batch that finds none and the next): the
        // same batches of groups, `joined` included, and the same bits.
        assert!(alone.2.len() > 3 && alone.2.len() < 40, "{:?}", alone.2);
        for parts in (1..=16).chain([40, 400, 1500]) {
            assert_eq!(run(&Threaded, false, parts), alone, "{parts} parts");
        }
        // All batches levelled as one run (for one thread): the same bits.
        let merged = run(&OneThread, true, 0);
        assert_eq!((&merged.0, &merged.1), (&alone.0, &alone.1));
    }

    /// The portable arctangent agrees with the platform's to 1e-6 rad all
    /// round the circle, and is odd in `y`.
    #[test]
    fn atan2_matches_the_library() {
        for i in 0..3600 {
            let a = i as f32 * core::f32::consts::TAU / 3600.0 - core::f32::consts::PI;
            for r in [1e-3f32, 0.7, 1.0, 250.0] {
                let (y, x) = (r * a.sin(), r * a.cos());
                assert!((atan2(y, x) - y.atan2(x)).abs() < 1e-6, "{y}, {x}");
                assert_eq!(atan2(-y, x), -atan2(y, x));
            }
        }
        assert_eq!(atan2(0.0, 0.0), 0.0);
    }

    /// Materials combine as the larger restitution and the geometric mean
    /// of the frictions.
    #[test]
    fn materials_combine() {
        let m = Material {
            restitution: 0.2,
            friction: 0.4,
        }
        .combine(Material {
            restitution: 0.8,
            friction: 0.9,
        });
        assert_eq!(m.restitution, 0.8);
        assert!((m.friction - 0.6).abs() < 1e-6);
    }

    /// A fixed body touching a plane gets no contact: its velocity is yours.
    #[test]
    fn fixed_bodies_have_no_contacts() {
        let pos = [Vec3A::ZERO];
        let vel = [Vec3A::new(0.0, -3.0, 0.0)];
        let bodies = Bodies {
            pos: &pos,
            vel: &mut vel.clone(),
            valid: &[true],
            inv_mass: &[0.0],
        };
        let plane = PlaneRow {
            normal: Vec3A::Y,
            offset: 0.0,
            restitution: 0.0,
            friction: 0.5,
        };
        let mut contacts = Vec::new();
        let round = RoundRow {
            slot: 0,
            radius: 0.1,
            material: None,
            groups: [u32::MAX; 2],
        };
        find_contacts(&[round], &[plane], &bodies, &ROUNDS, &mut [], &mut contacts);
        assert!(contacts.is_empty());
    }

    /// The plane contacts found, and the warm entries left, are those of
    /// testing every body against every plane with `surface_contact` and
    /// taking every entry read: the reach worked out once per body, and
    /// the cold entries of missed planes left alone, change nothing.
    #[test]
    fn plane_contacts_are_those_of_every_body_against_every_plane() {
        let mut seed = 11_u64;
        let mut next = || rand(&mut seed);
        let n = 600;
        let planes = [
            (Vec3A::Y, 0.0),
            (Vec3A::X, -1.0),
            (Vec3A::new(-0.6, 0.8, 0.0), -0.4),
        ]
        .map(|(normal, offset)| PlaneRow {
            normal,
            offset,
            restitution: 0.3,
            friction: 0.5,
        });
        let mut pos = Vec::new();
        let mut vel = Vec::new();
        for _ in 0..n {
            pos.push(Vec3A::new(3.0 * next() - 1.2, 1.5 * next() - 0.2, 0.0));
            // Most slow, some fast enough to reach a plane in a pass.
            let fast = if next() < 0.2 { 40.0 } else { 1.0 };
            let v = Vec3A::new(next() - 0.5, next() - 0.5, next() - 0.5);
            vel.push(fast * v);
        }
        let valid: Vec<bool> = (0..n).map(|i| i % 37 != 5).collect();
        let inv_mass: Vec<f32> = (0..n)
            .map(|i| if i % 29 == 3 { 0.0 } else { 1.0 })
            .collect();
        let rounds: Vec<RoundRow> = (0..n as u32)
            .map(|slot| RoundRow {
                slot,
                radius: 0.05 + 0.05 * next(),
                material: None,
                groups: [u32::MAX; 2],
            })
            .collect();
        // Entries left by an earlier pass: cold, held, and `-0.0`.
        let warm: Vec<Warm> = (0..n * planes.len())
            .map(|_| match (4.0 * next()) as u32 {
                0 => Warm {
                    normal: next(),
                    friction: Vec3A::new(next(), 0.0, next()),
                },
                1 => Warm {
                    normal: -0.0,
                    friction: Vec3A::ZERO,
                },
                _ => Warm::default(),
            })
            .collect();
        let bodies = Bodies {
            pos: &pos,
            vel: &mut vel.clone(),
            valid: &valid,
            inv_mass: &inv_mass,
        };
        let mut found = Vec::new();
        let mut left = warm.clone();
        find_contacts(&rounds, &planes, &bodies, &ROUNDS, &mut left, &mut found);
        // Every body (valid and moving) against every plane.
        let (mut expected, mut expected_left) = (Vec::new(), warm.clone());
        let mut missed_held = 0;
        for (r, round) in rounds.iter().enumerate() {
            let i = round.slot as usize;
            if !valid[i] || inv_mass[i] <= 0.0 {
                continue;
            }
            for (p, plane) in planes.iter().enumerate() {
                let at = Surface {
                    normal: plane.normal,
                    gap: plane.normal.dot(pos[i]) - plane.offset - round.radius,
                    velocity: Vec3A::ZERO,
                    material: Material {
                        restitution: plane.restitution,
                        friction: plane.friction,
                    },
                };
                let w = r * planes.len() + p;
                let held = core::mem::take(&mut expected_left[w]);
                match surface_contact(round, vel[i], at, &ROUNDS, Some(&held)) {
                    Some(contact) => expected.push(Contact { warm: w, ..contact }),
                    None => missed_held += usize::from(!held.is_cold()),
                }
            }
        }
        assert_eq!(format!("{found:?}"), format!("{expected:?}"));
        let bits = |w: &[Warm]| -> Vec<[u32; 4]> {
            w.iter()
                .map(|w| [w.normal, w.friction.x, w.friction.y, w.friction.z].map(f32::to_bits))
                .collect()
        };
        assert_eq!(bits(&left), bits(&expected_left));
        // The case holds contacts, and misses of entries left held.
        assert!(
            found.len() > 50 && found.len() < n,
            "{} contacts",
            found.len()
        );
        assert!(missed_held > 50, "{missed_held} held entries missed");
        // In two runs of rows, each with its rows' entries (as threads take
        // them): the same, laid end to end.
        let (mut runs, mut left_runs) = (Vec::new(), warm.clone());
        let cut = 250;
        let (first, second) = left_runs.split_at_mut(cut * planes.len());
        find_contacts_of(
            &rounds[..cut],
            0,
            &planes,
            &bodies,
            &ROUNDS,
            first,
            &mut runs,
        );
        find_contacts_of(
            &rounds[cut..],
            cut,
            &planes,
            &bodies,
            &ROUNDS,
            second,
            &mut runs,
        );
        assert_eq!(format!("{runs:?}"), format!("{expected:?}"));
        assert_eq!(bits(&left_runs), bits(&expected_left));
    }

    /// A body falling onto a plane stops at it, without bouncing below the
    /// threshold.
    #[test]
    fn a_slow_contact_stops_at_the_plane() {
        let pos = [Vec3A::new(0.0, 0.1, 0.0)];
        let mut vel = [Vec3A::new(0.0, -0.4, 0.0)];
        let plane = PlaneRow {
            normal: Vec3A::Y,
            offset: 0.0,
            restitution: 1.0,
            friction: 0.0,
        };
        let round = RoundRow {
            slot: 0,
            radius: 0.1,
            material: None,
            groups: [u32::MAX; 2],
        };
        let mut contacts = Vec::new();
        let mut bodies = Bodies {
            pos: &pos,
            vel: &mut vel,
            valid: &[true],
            inv_mass: &[1.0],
        };
        find_contacts(&[round], &[plane], &bodies, &ROUNDS, &mut [], &mut contacts);
        solve(
            Joints {
                rods: &[],
                angles: &[],
            },
            (&mut contacts, &mut Movers::none()),
            PairBatches::here(&mut PairContacts::default()),
            &mut bodies,
            &ROUNDS,
            cold(),
            relaxed(&mut Vec::new(), 1),
        );
        assert_eq!(vel[0].y, 0.0);
    }
}

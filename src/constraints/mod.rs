//! The constraint hook and the built-in constraints: rigid rods
//! ([`DistanceConstraint`]) and contacts of round bodies ([`Radius`]) with
//! planes ([`GroundPlane`]).
//!
//! Both are solved on velocities, in
//! [`PhysicsSystems::SolveConstraints`](crate::PhysicsSystems::SolveConstraints):
//! after the kick, before the drift. Each pass runs
//! [`ConstraintSettings::iterations`] rounds of sequential impulses over the
//! pass's rods and contacts, in a fixed order (so results do not depend on
//! the thread count):
//!
//! - **Rod** between `a` and `b` of length `L`, along `n = (x_b − x_a)/|…|`:
//!   the relative velocity along `n` is driven to
//!   `(√(L² − h²·v_t²) − L)/h − β·C/h`, where `v_t` is the relative
//!   tangential velocity (the first term cancels the lengthening a turn of
//!   `h·v_t` causes), `C = |x_b − x_a| − L` the length error and `β` the
//!   [`position_bias`](ConstraintSettings::position_bias). The impulse is
//!   shared by inverse mass, so momentum is conserved.
//! - **Contact** of a body of radius `r` with a half-space `n·x ≥ d`: with
//!   the gap `s = n·x − d − r` and the normal speed `v_n = n·v`, a contact
//!   exists when `s + h·v_n < 0` (the drift would cross the plane). The
//!   normal speed becomes at least `−s/h` (reach the plane, not cross it),
//!   `−e·v_n` when approaching faster than
//!   [`bounce_threshold`](ConstraintSettings::bounce_threshold) (restitution
//!   `e`), and at least `−β·s/h` when already inside. Coulomb friction caps
//!   the tangential impulse at `μ` times the normal one, so sliding bodies
//!   stop and resting ones stay.
//!
//! Rods join islands like springs (and wake them when added, changed or
//! removed); contacts do not join anything.
//!
//! # Your own constraints
//!
//! Add a system to `SolveConstraints` that changes the velocities of the
//! bodies [`SubstepBodies`](crate::SubstepBodies) yields; see the
//! `custom_constraint` example.
//!
//! # Example
//!
//! ```
//! use bevy::prelude::*;
//! use bevy_euler_physics::prelude::*;
//!
//! let mut app = App::new();
//! app.add_plugins((MinimalPlugins, EulerPhysicsPlugin));
//! let world = app.world_mut();
//! world.spawn(GroundPlane::horizontal(0.0));
//! let anchor = world.spawn(Body::fixed(Vec3::new(0.0, 3.0, 0.0))).id();
//! let bob = world
//!     .spawn((Body::new(1.0).with_position(Vec3::new(1.0, 3.0, 0.0)), Radius(0.1)))
//!     .id();
//! world.spawn(DistanceConstraint::new(anchor, bob, 1.0));
//! for _ in 0..100 {
//!     app.world_mut().run_schedule(FixedUpdate);
//! }
//! let bob = app.world().get::<Body>(bob).unwrap();
//! assert!((bob.position.distance(Vec3::new(0.0, 3.0, 0.0)) - 1.0).abs() < 0.01);
//! ```

use bevy::ecs::lifecycle::HookContext;
use bevy::ecs::world::DeferredWorld;
use bevy::prelude::*;

use crate::body::{Body, mark_solver_dirty};
use crate::islands::{WakeCause, WakeTarget};
use crate::schedule::PhysicsStep;
use crate::solver::{SolverState, Stepped};

/// A rigid rod: keeps bodies `a` and `b` at `length` from each other.
/// Its own entity, like a [`Spring`](crate::Spring).
///
/// ```
/// use bevy::prelude::*;
/// use bevy_euler_physics::prelude::*;
///
/// fn spawn_pendulum(mut commands: Commands) {
///     let pivot = commands.spawn(Body::fixed(Vec3::Y)).id();
///     let bob = commands.spawn(Body::new(1.0).with_position(Vec3::X)).id();
///     // As long as the bob is from the pivot now: √2.
///     commands.spawn(DistanceConstraint::new(pivot, bob, 2.0_f32.sqrt()));
/// }
/// # App::new().add_systems(Startup, spawn_pendulum);
/// ```
///
/// Like a spring, a rod is an immutable component: insert a new value to
/// change it (its hooks tell the step at once).
#[derive(Component, Reflect, Debug, Clone, Copy, PartialEq)]
#[reflect(Component, Debug, PartialEq, Clone)]
#[component(immutable, on_insert = wake_ends, on_discard = wake_ends)]
pub struct DistanceConstraint {
    /// One end.
    pub a: Entity,
    /// The other end.
    pub b: Entity,
    /// The distance kept, in metres.
    pub length: f32,
}

impl DistanceConstraint {
    /// A rod of `length` between `a` and `b`.
    ///
    /// ```
    /// # use bevy::prelude::*;
    /// # use bevy_euler_physics::prelude::*;
    /// let rod = DistanceConstraint::new(Entity::PLACEHOLDER, Entity::PLACEHOLDER, 0.5);
    /// assert_eq!(rod.length, 0.5);
    /// ```
    pub const fn new(a: Entity, b: Entity, length: f32) -> Self {
        Self { a, b, length }
    }
}

/// The radius of a round body, in metres: with it, the body touches
/// [`GroundPlane`]s. A negative or non-finite radius is reported once and the
/// body has no contacts.
///
/// ```
/// use bevy::prelude::*;
/// use bevy_euler_physics::prelude::*;
///
/// fn spawn_ball(mut commands: Commands) {
///     commands.spawn((Body::new(1.0).with_position(Vec3::Y * 2.0), Radius(0.25)));
/// }
/// # App::new().add_systems(Startup, spawn_ball);
/// ```
#[derive(Component, Reflect, Debug, Clone, Copy, PartialEq)]
#[reflect(Component, Debug, PartialEq, Clone)]
#[component(on_insert = wake_body, on_discard = wake_body)]
pub struct Radius(pub f32);

/// A plane with solid ground behind it: the half-space `normal · x < offset`
/// (the ground, a wall, a ramp) that bodies
/// with a [`Radius`] stay out of. Its own entity; as many as you like.
///
/// ```
/// use bevy::prelude::*;
/// use bevy_euler_physics::prelude::*;
///
/// fn spawn_room(mut commands: Commands) {
///     commands.spawn(GroundPlane::horizontal(0.0));
///     // A wall at x = 5, solid beyond it.
///     commands.spawn(GroundPlane::new(Vec3::NEG_X, -5.0).with_friction(0.1));
/// }
/// # App::new().add_systems(Startup, spawn_room);
/// ```
#[derive(Component, Reflect, Debug, Clone, Copy, PartialEq)]
#[reflect(Component, Debug, PartialEq, Clone)]
#[component(on_insert = wake_all, on_discard = wake_all)]
pub struct GroundPlane {
    /// The outward normal (normalised when used; a zero or non-finite
    /// normal disables the plane).
    pub normal: Vec3,
    /// Points with `normal · x ≥ offset` are outside.
    pub offset: f32,
    /// Restitution `e` in `[0, 1]`: the share of the approach speed a body
    /// bounces back with.
    pub restitution: f32,
    /// Coulomb friction coefficient `μ ≥ 0`.
    pub friction: f32,
}

impl GroundPlane {
    /// A half-space with the given outward normal and offset, restitution
    /// 0.2 and friction 0.6.
    ///
    /// ```
    /// # use bevy::prelude::*;
    /// # use bevy_euler_physics::prelude::*;
    /// let wall = GroundPlane::new(Vec3::X, -3.0);
    /// assert_eq!(wall.friction, 0.6);
    /// ```
    pub const fn new(normal: Vec3, offset: f32) -> Self {
        Self {
            normal,
            offset,
            restitution: 0.2,
            friction: 0.6,
        }
    }

    /// The ground `y ≥ height`.
    ///
    /// ```
    /// # use bevy::prelude::*;
    /// # use bevy_euler_physics::prelude::*;
    /// assert_eq!(GroundPlane::horizontal(1.0).normal, Vec3::Y);
    /// ```
    pub const fn horizontal(height: f32) -> Self {
        Self::new(Vec3::Y, height)
    }

    /// With restitution `e` (clamped to `[0, 1]` when used).
    ///
    /// ```
    /// # use bevy_euler_physics::prelude::*;
    /// assert_eq!(GroundPlane::horizontal(0.0).with_restitution(0.8).restitution, 0.8);
    /// ```
    pub const fn with_restitution(mut self, restitution: f32) -> Self {
        self.restitution = restitution;
        self
    }

    /// With friction coefficient `μ` (negative reads as 0).
    ///
    /// ```
    /// # use bevy_euler_physics::prelude::*;
    /// assert_eq!(GroundPlane::horizontal(0.0).with_friction(0.0).friction, 0.0);
    /// ```
    pub const fn with_friction(mut self, friction: f32) -> Self {
        self.friction = friction;
        self
    }
}

/// How the built-in constraints are solved.
///
/// ```
/// use bevy::prelude::*;
/// use bevy_euler_physics::prelude::*;
///
/// App::new()
///     .add_plugins((MinimalPlugins, EulerPhysicsPlugin))
///     // Stiffer ragdolls: more rounds per pass.
///     .insert_resource(ConstraintSettings { iterations: 8, ..default() });
/// ```
#[derive(Resource, Reflect, Debug, Clone, Copy, PartialEq)]
#[reflect(Resource, Default, Debug, PartialEq, Clone)]
pub struct ConstraintSettings {
    /// Rounds of sequential impulses per pass. Default: 4.
    pub iterations: u32,
    /// The share `β` of a position error corrected per pass (Baumgarte).
    /// Default: 0.2.
    pub position_bias: f32,
    /// Approach speed (m/s) below which contacts do not bounce, so resting
    /// bodies stay at rest. Default: 0.5.
    pub bounce_threshold: f32,
}

impl ConstraintSettings {
    /// `position_bias` as used: clamped to `[0, 1]`, and NaN or infinite
    /// read as the default 0.2.
    ///
    /// ```
    /// # use bevy_euler_physics::prelude::*;
    /// let s = ConstraintSettings { position_bias: f32::NAN, ..Default::default() };
    /// assert_eq!(s.bias(), 0.2);
    /// ```
    pub fn bias(&self) -> f32 {
        if self.position_bias.is_finite() {
            self.position_bias.clamp(0.0, 1.0)
        } else {
            0.2
        }
    }
}

impl Default for ConstraintSettings {
    fn default() -> Self {
        Self {
            iterations: 4,
            position_bias: 0.2,
            bounce_threshold: 0.5,
        }
    }
}

/// A rod in the solver's arrays.
#[derive(Debug, Clone, Copy)]
pub(crate) struct RodRow {
    pub a: u32,
    pub b: u32,
    pub length: f32,
}

/// A body with a radius in the solver's arrays.
#[derive(Debug, Clone, Copy)]
pub(crate) struct RoundRow {
    pub slot: u32,
    pub radius: f32,
}

/// One contact of one pass.
pub(crate) struct Contact {
    slot: usize,
    normal: Vec3A,
    target: f32,
    friction: f32,
    normal_impulse: f32,
    friction_impulse: Vec3A,
}

fn wake_ends(mut world: DeferredWorld, ctx: HookContext) {
    let Some(rod) = world.get::<DistanceConstraint>(ctx.entity).copied() else {
        return;
    };
    if let Some(mut solver) = world.get_resource_mut::<SolverState>() {
        for end in [rod.a, rod.b] {
            solver.request_wake(
                WakeTarget::Body(end),
                WakeCause::ConstraintChanged(ctx.entity),
            );
        }
    }
}

fn wake_body(mut world: DeferredWorld, ctx: HookContext) {
    if let Some(mut solver) = world.get_resource_mut::<SolverState>() {
        solver.request_wake(
            WakeTarget::Body(ctx.entity),
            WakeCause::ConstraintChanged(ctx.entity),
        );
    }
    mark_solver_dirty(world, ctx);
}

fn wake_all(mut world: DeferredWorld, ctx: HookContext) {
    if let Some(mut solver) = world.get_resource_mut::<SolverState>() {
        solver.request_wake(WakeTarget::All, WakeCause::ConstraintChanged(ctx.entity));
    }
}

/// [`PhysicsSystems::SolveConstraints`](crate::PhysicsSystems): the pass's
/// rods and contacts, by sequential impulses on the new velocities.
pub(crate) fn solve_constraints(
    mut solver: ResMut<SolverState>,
    step: Res<PhysicsStep>,
    settings: Res<ConstraintSettings>,
    mut bodies: Query<&mut Body, Stepped>,
) {
    let solver = &mut *solver;
    let Some(group) = solver.groups.get(step.group as usize) else {
        return;
    };
    if group.rods.is_empty() && group.rounds.is_empty() {
        return;
    }
    // The new velocities, after the kick.
    for &(entity, slot) in &group.constrained {
        if let Ok(body) = bodies.get(entity) {
            solver.vel[slot as usize] = body.velocity.into();
        }
    }
    solve_group(solver, step.group as usize, step.dt, &settings);
    let group = &solver.groups[step.group as usize];
    for &(entity, slot) in &group.constrained {
        let i = slot as usize;
        if solver.inv_mass[i] > 0.0
            && let Ok(mut body) = bodies.get_mut(entity)
            && body.velocity != Vec3::from(solver.vel[i])
        {
            body.velocity = solver.vel[i].into();
        }
    }
}

/// One pass of a group's rods and contacts on the solver's arrays: the
/// velocities in `solver.vel` (after the kick) are corrected in place.
pub(crate) fn solve_group(
    solver: &mut SolverState,
    group: usize,
    h: f32,
    settings: &ConstraintSettings,
) {
    let group = &solver.groups[group];
    if group.rods.is_empty() && group.rounds.is_empty() {
        return;
    }
    let beta = settings.bias();
    let (rods, rounds) = (
        &solver.rods[group.rods.clone()],
        &solver.rounds[group.rounds.clone()],
    );
    let (pos, vel, valid, inv_mass) = (
        &solver.pos,
        &mut solver.vel,
        &solver.valid,
        &solver.inv_mass,
    );
    let contacts = &mut solver.contacts;

    contacts.clear();
    for round in rounds {
        let i = round.slot as usize;
        if !valid[i] {
            continue;
        }
        for plane in &solver.planes {
            let normal = Vec3A::from(plane.normal.normalize_or_zero());
            if normal == Vec3A::ZERO || !plane.offset.is_finite() {
                continue;
            }
            let gap = normal.dot(pos[i]) - plane.offset - round.radius;
            let approach = normal.dot(vel[i]);
            let hits = gap + h * approach < 0.0;
            // Speculative: also bodies near the plane, which the rods may
            // push into it during the rounds below; such a contact only
            // limits the approach to what closes the gap.
            if !hits && gap >= round.radius + h * vel[i].length() {
                continue;
            }
            let restitution = plane.restitution.clamp(0.0, 1.0);
            let bounce = if hits && approach < -settings.bounce_threshold {
                -restitution * approach
            } else {
                0.0
            };
            let reach = if gap >= 0.0 {
                -gap / h
            } else {
                -beta * gap / h
            };
            contacts.push(Contact {
                slot: i,
                normal,
                // Without a bounce, the approach may close the gap and no
                // more; with one, the body leaves at the bounce speed.
                target: if bounce > 0.0 {
                    bounce.max(reach)
                } else {
                    reach
                },
                friction: plane.friction.max(0.0),
                normal_impulse: 0.0,
                friction_impulse: Vec3A::ZERO,
            });
        }
    }

    for _ in 0..settings.iterations {
        for rod in rods {
            let (a, b) = (rod.a as usize, rod.b as usize);
            let w = inv_mass[a] + inv_mass[b];
            if !(valid[a] && valid[b]) || w <= 0.0 {
                continue;
            }
            let d = pos[b] - pos[a];
            let length = d.length();
            if length <= 0.0 || !length.is_finite() {
                continue;
            }
            let n = d / length;
            let error = length - rod.length;
            let relative = vel[b] - vel[a];
            let speed = n.dot(relative);
            // Turning lengthens a rod by about h²·v_t²/(2L) per pass; aim the
            // normal speed to undo that exactly, and a share β of the error
            // already there.
            let turn2 = (h * (relative - speed * n)).length_squared();
            let turning = ((rod.length * rod.length - turn2).max(0.0).sqrt() - rod.length) / h;
            let impulse = (turning - beta * error / h - speed) / w;
            vel[a] -= inv_mass[a] * impulse * n;
            vel[b] += inv_mass[b] * impulse * n;
        }
        for contact in contacts.iter_mut() {
            let v = &mut vel[contact.slot];
            // Normal: accumulated, never pulling.
            let speed = contact.normal.dot(*v);
            let total = (contact.normal_impulse + contact.target - speed).max(0.0);
            *v += (total - contact.normal_impulse) * contact.normal;
            contact.normal_impulse = total;
            // Friction: accumulated, within the Coulomb cone.
            let tangential = *v - contact.normal.dot(*v) * contact.normal;
            let total = (contact.friction_impulse - tangential)
                .clamp_length_max(contact.friction * contact.normal_impulse);
            *v += total - contact.friction_impulse;
            contact.friction_impulse = total;
        }
    }
}

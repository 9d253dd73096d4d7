//! [`Body`], [`Damping`], and the two integration passes of semi-implicit
//! Euler.
//!
//! For a body of inverse mass `w` under force `F`, one pass of step `h` is
//!
//! ```text
//! v ← v + h·(g + w·F)        kick            (IntegrateVelocities)
//! v ← v / (1 + h·c)          Padé damping    (IntegrateVelocities)
//! x ← x + h·v                drift, with the NEW velocity (IntegratePositions)
//! ```
//!
//! Using the new velocity for the drift is what makes the method symplectic:
//! it keeps the energy of an oscillator bounded while `ω·h < 2`, where
//! explicit Euler (drift with the old velocity) gains energy every step.
//!
//! Damping `dv/dt = −c·v` has the exact solution `v·e^(−c·h)` over a step; the
//! Padé approximant `1 / (1 + c·h)` of `e^(−c·h)` is positive and below one
//! for every `h > 0`, so damping never flips a velocity's sign nor adds
//! energy, however stiff. Kicking before damping makes the fixed point of
//! `v ← (v + h·g) / (1 + h·c)` exactly `g / c`: the terminal velocity is
//! right for every `h`.

use bevy::ecs::lifecycle::HookContext;
use bevy::ecs::system::SystemChangeTick;
use bevy::ecs::world::DeferredWorld;
use bevy::prelude::*;

use crate::forces::{AccumulatedForce, ConstantForce, Gravity};
use crate::interpolation::{PositionHistory, TransformSyncDisabled};
use crate::islands::{Island, RestTime, WakeCause, WakeTarget};
use crate::schedule::{PhysicsSettings, PhysicsStep};
use crate::solver::{BodyIndex, SolverState, Stepped, for_each_maybe_par};
use bevy::ecs::query::QueryItem;

/// A point mass: the physics state of an entity.
///
/// `inv_mass == 0` makes a fixed body: forces, gravity and springs never move
/// it, but your code may (write `position` to drag it; a spring's damping
/// sees the `velocity` you give it). Positions live here, not in
/// [`Transform`]: the plugin writes `Transform::translation` from the body
/// every frame (see [`PhysicsSystems::Interpolate`](crate::PhysicsSystems)),
/// so write the body, not the transform. Writing `position` between fixed
/// steps is a teleport: the body is drawn there at once, with no streak.
///
/// A body gets a [`Transform`] at its position, an [`AccumulatedForce`] and a
/// [`PositionHistory`] when it is spawned.
///
/// Default: a 1 kg body at rest at the origin.
///
/// # Example
///
/// ```
/// use bevy::prelude::*;
/// use bevy_euler_physics::prelude::*;
///
/// fn setup(mut commands: Commands) {
///     let anchor = commands.spawn(Body::fixed(Vec3::new(0.0, 2.0, 0.0))).id();
///     let bob = commands
///         .spawn(Body::new(2.0).with_position(Vec3::new(0.5, 1.0, 0.0)))
///         .id();
///     commands.spawn(Spring::new(anchor, bob, 1.0, 200.0));
/// }
/// # App::new().add_systems(Startup, setup);
/// ```
///
/// # Invalid values
///
/// A body with a negative, zero or non-finite mass, or a non-finite position
/// or velocity, is reported once (a `warn!` log and a
/// [`PhysicsWarning`](crate::PhysicsWarning)), gets a
/// [`PhysicsError`](crate::PhysicsError), and is left out of the step until you fix it.
#[derive(Component, Reflect, Debug, Clone, Copy, PartialEq)]
#[reflect(Component, Default, Debug, PartialEq, Clone)]
#[require(
    Transform,
    AccumulatedForce,
    PositionHistory,
    BodyIndex,
    Island,
    RestTime
)]
#[component(on_insert = on_body_insert, on_remove = on_body_remove)]
pub struct Body {
    /// Position in world space, in metres.
    pub position: Vec3,
    /// Velocity in metres per second.
    pub velocity: Vec3,
    /// `1 / mass` in 1/kg; `0` for a fixed body.
    pub inv_mass: f32,
}

impl Default for Body {
    fn default() -> Self {
        Self::new(1.0)
    }
}

impl Body {
    /// A dynamic body of `mass` kilograms at rest at the origin.
    ///
    /// `mass` must be positive and finite; any other value is reported and
    /// the body left out of the step (use [`Body::fixed`] for an immovable
    /// body).
    ///
    /// ```
    /// # use bevy_euler_physics::prelude::*;
    /// let body = Body::new(4.0);
    /// assert_eq!(body.inv_mass, 0.25);
    /// assert_eq!(body.mass(), 4.0);
    /// ```
    pub fn new(mass: f32) -> Self {
        Self {
            position: Vec3::ZERO,
            velocity: Vec3::ZERO,
            inv_mass: 1.0 / mass,
        }
    }

    /// A fixed body at `position`: infinite mass, moved only by your code.
    ///
    /// ```
    /// # use bevy::prelude::*;
    /// # use bevy_euler_physics::prelude::*;
    /// let anchor = Body::fixed(Vec3::Y);
    /// assert!(anchor.is_fixed());
    /// ```
    pub const fn fixed(position: Vec3) -> Self {
        Self {
            position,
            velocity: Vec3::ZERO,
            inv_mass: 0.0,
        }
    }

    /// The same body at `position`.
    ///
    /// ```
    /// # use bevy::prelude::*;
    /// # use bevy_euler_physics::prelude::*;
    /// assert_eq!(Body::new(1.0).with_position(Vec3::X).position, Vec3::X);
    /// ```
    pub const fn with_position(mut self, position: Vec3) -> Self {
        self.position = position;
        self
    }

    /// The same body moving at `velocity`.
    ///
    /// ```
    /// # use bevy::prelude::*;
    /// # use bevy_euler_physics::prelude::*;
    /// assert_eq!(Body::new(1.0).with_velocity(Vec3::Y).velocity, Vec3::Y);
    /// ```
    pub const fn with_velocity(mut self, velocity: Vec3) -> Self {
        self.velocity = velocity;
        self
    }

    /// The mass in kilograms; infinite for a fixed body.
    ///
    /// ```
    /// # use bevy::prelude::*;
    /// # use bevy_euler_physics::prelude::*;
    /// assert_eq!(Body::fixed(Vec3::ZERO).mass(), f32::INFINITY);
    /// ```
    pub fn mass(&self) -> f32 {
        1.0 / self.inv_mass
    }

    /// Whether this body is fixed (`inv_mass == 0`).
    ///
    /// ```
    /// # use bevy_euler_physics::prelude::*;
    /// assert!(!Body::new(1.0).is_fixed());
    /// ```
    pub fn is_fixed(&self) -> bool {
        self.inv_mass == 0.0
    }

    /// Whether forces move this body: `inv_mass` is positive and finite.
    fn is_dynamic(&self) -> bool {
        self.inv_mass > 0.0 && self.inv_mass.is_finite()
    }

    /// Momentum `m·v` in kg·m/s (zero for a fixed body).
    ///
    /// ```
    /// # use bevy::prelude::*;
    /// # use bevy_euler_physics::prelude::*;
    /// assert_eq!(Body::new(2.0).with_velocity(Vec3::X).momentum(), Vec3::new(2.0, 0.0, 0.0));
    /// ```
    pub fn momentum(&self) -> Vec3 {
        if self.is_dynamic() {
            self.velocity / self.inv_mass
        } else {
            Vec3::ZERO
        }
    }

    /// Kinetic energy `½·m·|v|²` in joules (zero for a fixed body).
    ///
    /// ```
    /// # use bevy::prelude::*;
    /// # use bevy_euler_physics::prelude::*;
    /// assert_eq!(Body::new(2.0).with_velocity(Vec3::X * 3.0).kinetic_energy(), 9.0);
    /// ```
    pub fn kinetic_energy(&self) -> f32 {
        if self.is_dynamic() {
            0.5 * self.velocity.length_squared() / self.inv_mass
        } else {
            0.0
        }
    }
}

/// Linear damping `c`, in 1/s: the body loses velocity as `dv/dt = −c·v`,
/// integrated as `v ← v / (1 + h·c)` after the force kick (see the
/// [module docs](crate::body)). Stable for any step and any `c ≥ 0`; under
/// gravity alone the body reaches the terminal speed `|g| / c` exactly.
///
/// Default: 0 (no damping; a body without the component is undamped).
/// Negative or non-finite values are reported and the body left out of the
/// step until fixed.
///
/// # Example
///
/// ```
/// use bevy::prelude::*;
/// use bevy_euler_physics::prelude::*;
///
/// fn spawn_leaf(mut commands: Commands) {
///     // Falls at |g| / 4 ≈ 2.45 m/s at most.
///     commands.spawn((Body::new(0.01), Damping(4.0)));
/// }
/// # App::new().add_systems(Startup, spawn_leaf);
/// ```
#[derive(Component, Reflect, Debug, Clone, Copy, PartialEq, Default)]
#[reflect(Component, Default, Debug, PartialEq, Clone)]
pub struct Damping(pub f32);

impl Damping {
    /// Whether `c` is finite and not negative.
    pub(crate) fn is_valid(self) -> bool {
        self.0 >= 0.0 && self.0.is_finite()
    }
}

fn on_body_insert(mut world: DeferredWorld, ctx: HookContext) {
    let Some(body) = world.get::<Body>(ctx.entity).copied() else {
        return;
    };
    // A new or re-inserted body is drawn where it is, with no history.
    if let Some(mut history) = world.get_mut::<PositionHistory>(ctx.entity) {
        *history = PositionHistory::at(body.position);
    }
    if body.position.is_finite()
        && !world.entity(ctx.entity).contains::<TransformSyncDisabled>()
        && let Some(mut transform) = world.get_mut::<Transform>(ctx.entity)
    {
        transform.translation = body.position;
    }
    mark_solver_dirty(world, ctx);
}

/// Hook for every structural change that changes which bodies or springs
/// take part in the step.
pub(crate) fn mark_solver_dirty(mut world: DeferredWorld, _ctx: HookContext) {
    if let Some(mut solver) = world.get_resource_mut::<SolverState>() {
        solver.dirty = true;
    }
}

/// A body left: its island (if asleep) wakes, and may split.
fn on_body_remove(mut world: DeferredWorld, ctx: HookContext) {
    let island = world.get::<Island>(ctx.entity).copied();
    let fixed = world.get::<Body>(ctx.entity).is_some_and(Body::is_fixed);
    if let Some(mut solver) = world.get_resource_mut::<SolverState>() {
        solver.dirty = true;
        if fixed {
            solver.request_wake(
                WakeTarget::Anchor(ctx.entity),
                WakeCause::BodyRemoved(ctx.entity),
            );
        }
        if let Some(island) = island.filter(Island::is_some) {
            solver.request_wake(
                WakeTarget::Island(island.id()),
                WakeCause::BodyRemoved(ctx.entity),
            );
        }
    }
}

/// What the velocity integration reads and writes per body.
type KickData = (
    &'static mut Body,
    &'static BodyIndex,
    &'static mut AccumulatedForce,
    Option<&'static ConstantForce>,
    Option<&'static Damping>,
);
type KickItem<'w, 's> = QueryItem<'w, 's, KickData>;

/// What the position integration reads and writes per body.
type DriftData = (
    &'static mut Body,
    &'static BodyIndex,
    &'static mut PositionHistory,
);
type DriftItem<'w, 's> = QueryItem<'w, 's, DriftData>;

/// One body's kick and damping; see [`integrate_velocities`].
#[inline(always)]
fn kick(h: f32, g: Vec3, solver: &SolverState, item: KickItem) {
    let (mut body, index, mut accumulated, constant, damping) = item;
    let mut force = accumulated.0;
    if force != Vec3::ZERO {
        accumulated.0 = Vec3::ZERO;
    }
    if let Some(constant) = constant {
        force += constant.0;
    }
    if !body.is_dynamic() {
        return;
    }
    let Some(i) = solver.live_index(index) else {
        return;
    };
    // A body made dynamic since the rebuild has a fixed body's slot, and no
    // spring forces until the next.
    let springs = solver.force.get(i).copied().unwrap_or_default();
    let force = springs + Vec3A::from(force);
    let c = match damping {
        Some(damping) if damping.is_valid() => damping.0,
        Some(_) => {
            solver.request_report();
            0.0
        }
        None => 0.0,
    };
    body.velocity = kicked(body.velocity.into(), h, g.into(), force, body.inv_mass, c).into();
}

/// One body's kick in a pass of step `h`: `(v + h·(g + w·F)) / (1 + h·c)`,
/// with no division for `c == 0` (the same bits). Both the per-pass
/// systems and the dense passes ([`crate::dense`]) kick with this.
#[inline(always)]
pub(crate) fn kicked(v: Vec3A, h: f32, g: Vec3A, force: Vec3A, w: f32, c: f32) -> Vec3A {
    let v = v + h * (g + force * w);
    if c != 0.0 { v / (1.0 + h * c) } else { v }
}

/// One body's drift in a pass of step `h`: `x + h·v`, or `None` if that is
/// not finite (a non-finite velocity makes it so: 0·∞ is NaN). Both the
/// per-pass systems and the dense passes drift with this.
#[inline(always)]
pub(crate) fn drifted(x: Vec3A, h: f32, v: Vec3A) -> Option<Vec3A> {
    let position = x + h * v;
    position.is_finite().then_some(position)
}

/// [`PhysicsSystems::IntegrateVelocities`](crate::PhysicsSystems):
/// `v ← (v + h·(g + w·F)) / (1 + h·c)` for every dynamic body of the pass.
pub(crate) fn integrate_velocities(
    solver: Res<SolverState>,
    step: Res<PhysicsStep>,
    gravity: Res<Gravity>,
    settings: Res<PhysicsSettings>,
    mut bodies: Query<KickData, Stepped>,
) {
    let (h, g) = (step.dt, gravity.0);
    let solver = &*solver;
    let Some(group) = solver.groups.get(step.group as usize) else {
        return;
    };
    if group.iterate_all {
        let parallel = group.entities.len() >= settings.parallel_threshold;
        let this = step.group;
        for_each_maybe_par!(bodies, parallel, |item: KickItem| {
            if item.1.group == this {
                kick(h, g, solver, item);
            }
        });
    } else {
        let mut items = bodies.iter_many_mut(&group.entities);
        while let Some(item) = items.fetch_next() {
            kick(h, g, solver, item);
        }
    }
}

/// One body's drift, its history (in the first pass of the fixed step:
/// where the step started) and its slot's copy of the new state; false if
/// the new position is not finite (then it is not written).
#[inline(always)]
fn drift(
    h: f32,
    first: bool,
    (mut body, index, mut history): DriftItem,
    (pos, vel, valid): (&mut [Vec3A], &mut [Vec3A], &mut [bool]),
) -> bool {
    // Where the body starts the fixed step (after any teleport).
    let start = body.position;
    let mut ok = true;
    if body.is_dynamic() {
        match drifted(start.into(), h, body.velocity.into()) {
            Some(position) => body.position = position.into(),
            None => ok = false,
        }
    }
    if first {
        // As the dense scatter writes it.
        history.bypass_change_detection().previous = start;
    }
    let i = index.slot as usize;
    if i < pos.len() {
        pos[i] = body.position.into();
        vel[i] = body.velocity.into();
        if !ok {
            valid[i] = false;
        }
    }
    ok
}

/// [`PhysicsSystems::IntegratePositions`](crate::PhysicsSystems):
/// `x ← x + h·v` for every dynamic body of the pass, and the position
/// history for interpolation (where the fixed step started).
pub(crate) fn integrate_positions(
    mut solver: ResMut<SolverState>,
    step: Res<PhysicsStep>,
    mut bodies: Query<DriftData, Stepped>,
    ticks: SystemChangeTick,
) {
    let h = step.dt;
    let first = step.is_first();
    // Also copy the new state into the slots, so that the next gather needs
    // to copy only the bodies written after this pass. This pass stays on one
    // thread: it is a few multiply-adds per body, and the copy saves the
    // gather a full pass.
    let solver = &mut *solver;
    let this = step.group;
    let Some(group) = solver.groups.get(this as usize) else {
        return;
    };
    let mut all_valid = !solver.pass_has_invalid;
    let slots = (
        &mut solver.pos[..],
        &mut solver.vel[..],
        &mut solver.valid[..],
    );
    if group.iterate_all {
        let (pos, vel, valid) = slots;
        bodies.iter_mut().for_each(|item| {
            if item.1.group == this {
                all_valid &= drift(h, first, item, (&mut *pos, &mut *vel, &mut *valid));
            }
        });
    } else {
        let (pos, vel, valid) = slots;
        let mut items = bodies.iter_many_mut(&group.entities);
        while let Some(item) = items.fetch_next() {
            all_valid &= drift(h, first, item, (&mut *pos, &mut *vel, &mut *valid));
        }
    }
    if all_valid {
        solver.group_synced[this as usize] = Some(ticks.this_run());
    } else {
        solver.group_synced[this as usize] = None;
        solver.pass_has_invalid = true;
        solver.request_report();
    }
}

//! The mechanical energy of the scene, and its recent history.

use core::iter::Sum;
use core::ops::{Add, AddAssign};
use std::collections::VecDeque;

use bevy::math::DVec3;
use bevy::platform::time::Instant;
use bevy::prelude::*;

use super::DebugUiSettings;
use super::drag::DragPart;
use super::stats::StepClock;
use crate::body::Body;
use crate::diagnostics::PhysicsError;
use crate::forces::Gravity;
use crate::origin::PhysicsOrigin;
use crate::spring::Spring;

/// Mechanical energy, in joules, split by kind.
///
/// - kinetic: `½·m·|v|²` over dynamic bodies;
/// - spring: `½·k·(|x_b − x_a| − rest)²` over springs;
/// - gravity: `−m·g·x` over dynamic bodies (zero at the origin).
///
/// Fixed bodies have none (their mass is infinite and they do not fall).
/// Sums are taken in `f64`. Semi-implicit Euler does not conserve this
/// energy exactly: it keeps a nearby one, so an undamped scene's energy
/// wobbles by a share of about `ω·h` without drifting.
///
/// # Example
///
/// ```
/// use bevy::prelude::*;
/// use bevy_euler_physics::prelude::*;
///
/// // 2 kg at rest, 3 m up: m·g·y = 2 · 9.81 · 3 J of potential energy.
/// let body = Body::new(2.0).with_position(Vec3::new(0.0, 3.0, 0.0));
/// let e = Energy::of_body(&body, Gravity::default().0);
/// assert_eq!(e.kinetic, 0.0);
/// assert!((e.total() - 2.0 * 9.81 * 3.0).abs() < 1e-5);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Energy {
    /// `½·m·|v|²`, summed over dynamic bodies.
    pub kinetic: f64,
    /// `½·k·stretch²`, summed over springs.
    pub spring: f64,
    /// `−m·g·x`, summed over dynamic bodies.
    pub gravity: f64,
}

impl Energy {
    /// Kinetic plus spring plus gravitational energy.
    ///
    /// ```
    /// # use bevy_euler_physics::prelude::*;
    /// let e = Energy { kinetic: 1.0, spring: 2.0, gravity: -0.5 };
    /// assert_eq!(e.total(), 2.5);
    /// ```
    pub fn total(&self) -> f64 {
        self.kinetic + self.spring + self.gravity
    }

    /// A body's kinetic and gravitational energy under gravity `g` (an
    /// acceleration, as in [`Gravity`]). Zero for fixed bodies and bodies
    /// whose mass or state is not finite.
    ///
    /// ```
    /// # use bevy::prelude::*;
    /// # use bevy_euler_physics::prelude::*;
    /// let body = Body::new(4.0).with_velocity(Vec3::new(3.0, 0.0, 0.0));
    /// assert_eq!(Energy::of_body(&body, Vec3::ZERO).kinetic, 0.5 * 4.0 * 9.0);
    /// ```
    pub fn of_body(body: &Body, g: Vec3) -> Self {
        Self::of_body_at(body, g, DVec3::ZERO)
    }

    /// [`Energy::of_body`] with local zero at `origin` in the world
    /// ([`PhysicsOrigin::position`]): its height counts, so an origin
    /// shift leaves the energy as it was.
    ///
    /// ```
    /// # use bevy::math::DVec3;
    /// # use bevy::prelude::*;
    /// # use bevy_euler_physics::prelude::*;
    /// let body = Body::new(2.0).with_position(Vec3::new(0.0, -24.0, 0.0));
    /// let g = Vec3::new(0.0, -10.0, 0.0);
    /// let e = Energy::of_body_at(&body, g, DVec3::new(0.0, 1024.0, 0.0));
    /// assert_eq!(e.gravity, 2.0 * 10.0 * 1000.0);
    /// ```
    pub fn of_body_at(body: &Body, g: Vec3, origin: DVec3) -> Self {
        let finite = body.position.is_finite() && body.velocity.is_finite();
        if !(finite && body.inv_mass > 0.0 && body.inv_mass.is_finite()) {
            return Self::default();
        }
        let mass = 1.0 / f64::from(body.inv_mass);
        let v = body.velocity.as_dvec3();
        Self {
            kinetic: 0.5 * mass * v.length_squared(),
            spring: 0.0,
            gravity: -mass * g.as_dvec3().dot(origin + body.position.as_dvec3()),
        }
    }

    /// A spring's potential energy with its ends at `a` and `b`. Zero when
    /// it is not finite.
    ///
    /// ```
    /// # use bevy::prelude::*;
    /// # use bevy_euler_physics::prelude::*;
    /// # let (a, b) = (Entity::from_raw_u32(1).unwrap(), Entity::from_raw_u32(2).unwrap());
    /// // 100 N/m, 1 m long, stretched to 1.5 m: ½ · 100 · 0.5² = 12.5 J.
    /// let spring = Spring::new(a, b, 1.0, 100.0);
    /// let e = Energy::of_spring(&spring, Vec3::ZERO, Vec3::new(1.5, 0.0, 0.0));
    /// assert_eq!(e.spring, 12.5);
    /// ```
    pub fn of_spring(spring: &Spring, a: Vec3, b: Vec3) -> Self {
        let stretch = (b.as_dvec3() - a.as_dvec3()).length() - f64::from(spring.rest_length);
        let spring = 0.5 * f64::from(spring.stiffness) * stretch * stretch;
        Self {
            spring: if spring.is_finite() { spring } else { 0.0 },
            ..default()
        }
    }

    /// The energy of every body and spring in `world`, with its
    /// [`Gravity`] (the default when there is none), heights counted from
    /// the world's zero ([`PhysicsOrigin`]). A spring whose end is
    /// missing or has no [`Body`] counts nothing, and so do bodies and
    /// springs with a [`PhysicsError`] (they are out of the step). The debug
    /// plugin's mouse drag (its anchor and spring) is left out: it is a
    /// force from outside, whose work shows as a change of the scene's
    /// energy.
    ///
    /// ```
    /// # use bevy::prelude::*;
    /// # use bevy_euler_physics::prelude::*;
    /// let mut world = World::new();
    /// world.insert_resource(Gravity::ZERO);
    /// world.spawn(Body::new(2.0).with_velocity(Vec3::X));
    /// assert_eq!(Energy::of_world(&mut world).total(), 1.0);
    /// ```
    pub fn of_world(world: &mut World) -> Self {
        let g = world
            .get_resource::<Gravity>()
            .copied()
            .unwrap_or_default()
            .0;
        let origin = world
            .get_resource::<PhysicsOrigin>()
            .map_or(DVec3::ZERO, |origin| origin.position);
        let mut bodies = world.query_filtered::<&Body, Counted>();
        let mut springs = world.query_filtered::<&Spring, Counted>();
        let mut all = world.query_filtered::<&Body, Without<PhysicsError>>();
        let world: &World = world;
        let (bodies, springs, all) = (bodies.query(world), springs.query(world), all.query(world));
        let position = |entity| all.get(entity).ok().map(|b| b.position);
        sum(bodies.iter(), springs.iter(), position, (g, origin))
    }
}

/// What the energy counts: not the mouse drag, not what is out of the step.
type Counted = (Without<DragPart>, Without<PhysicsError>);

/// The energy of `bodies` and `springs`, where `position` finds a spring
/// end's position, under gravity `g` with local zero at `origin`.
fn sum<'a>(
    bodies: impl Iterator<Item = &'a Body>,
    springs: impl Iterator<Item = &'a Spring>,
    position: impl Fn(Entity) -> Option<Vec3>,
    (g, origin): (Vec3, DVec3),
) -> Energy {
    let mut energy: Energy = bodies.map(|body| Energy::of_body_at(body, g, origin)).sum();
    for spring in springs {
        if let (Some(a), Some(b)) = (position(spring.a), position(spring.b)) {
            energy += Energy::of_spring(spring, a, b);
        }
    }
    energy
}

impl Add for Energy {
    type Output = Self;

    fn add(self, rhs: Self) -> Self {
        Self {
            kinetic: self.kinetic + rhs.kinetic,
            spring: self.spring + rhs.spring,
            gravity: self.gravity + rhs.gravity,
        }
    }
}

impl AddAssign for Energy {
    fn add_assign(&mut self, rhs: Self) {
        *self = *self + rhs;
    }
}

impl Sum for Energy {
    fn sum<I: Iterator<Item = Self>>(iter: I) -> Self {
        iter.fold(Self::default(), Add::add)
    }
}

/// One sample of the energy plot.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct EnergySample {
    /// `Time<Fixed>::elapsed` after the step, in seconds.
    pub(crate) time: f64,
    pub(crate) energy: Energy,
}

/// The energy after each of the last fixed steps: a ring buffer of
/// [`DebugUiSettings::energy_history_seconds`].
#[derive(Resource, Debug, Default)]
pub(crate) struct EnergyHistory {
    pub(crate) samples: VecDeque<EnergySample>,
}

impl EnergyHistory {
    /// At most this many samples, whatever the fixed rate.
    const MAX_SAMPLES: usize = 20_000;

    pub(crate) fn push(&mut self, sample: EnergySample, seconds: f64) {
        // Time went back (a rollback, or a new clock): start over.
        if self
            .samples
            .back()
            .is_some_and(|last| last.time > sample.time)
        {
            self.samples.clear();
        }
        self.samples.push_back(sample);
        let oldest = sample.time - seconds.max(0.0);
        while self.samples.len() > Self::MAX_SAMPLES
            || self.samples.front().is_some_and(|s| s.time < oldest)
        {
            self.samples.pop_front();
        }
    }
}

/// After each fixed step: appends the scene's energy to the history. Only
/// reads the scene. Its own time is kept apart from the step's time.
#[allow(clippy::too_many_arguments)]
pub(crate) fn record_energy(
    settings: Res<DebugUiSettings>,
    time: Res<Time>,
    (gravity, origin): (Option<Res<Gravity>>, Option<Res<PhysicsOrigin>>),
    mut history: ResMut<EnergyHistory>,
    mut clock: ResMut<StepClock>,
    bodies: Query<&Body, Counted>,
    springs: Query<&Spring, Counted>,
    all: Query<&Body, Without<PhysicsError>>,
) {
    if !settings.energy_plot {
        if !history.samples.is_empty() {
            history.samples.clear();
        }
        return;
    }
    let start = Instant::now();
    let g = gravity.map(|g| g.0).unwrap_or(Gravity::default().0);
    let position = |entity| all.get(entity).ok().map(|b| b.position);
    let origin = origin.map_or(DVec3::ZERO, |origin| origin.position);
    let energy = sum(bodies.iter(), springs.iter(), position, (g, origin));
    history.push(
        EnergySample {
            time: time.elapsed_secs_f64(),
            energy,
        },
        f64::from(settings.energy_history_seconds),
    );
    clock.own_time += start.elapsed();
}

//! [`Spring`]; its maths is in the public [`spring`](crate::spring)
//! module's docs.

use bevy::prelude::*;

use bevy::ecs::lifecycle::HookContext;
use bevy::ecs::world::DeferredWorld;

use crate::data::requests::{WakeCause, WakeTarget, mark_dirty, request};
use crate::kernels::springs::spring_force;

/// A damped spring between two bodies, on an entity of its own.
///
/// Hooke's force `k·(length − rest_length)` along the spring, plus damping
/// `c` times the relative velocity along it; equal and opposite on both ends.
/// A spring of zero length has no direction and exerts no force.
///
/// Stability: semi-implicit Euler with step `h` keeps a spring stable while
/// `(ω·h)² + 2·γ·h < 4`, with `ω² = k·(w_a + w_b)` and `γ = c·(w_a + w_b)`
/// (`w` the inverse masses). A spring past that limit is reported once with
/// the substep count that would make it stable (see
/// [`PhysicsSettings::substeps`](crate::PhysicsSettings)).
///
/// # Example
///
/// ```
/// use bevy::prelude::*;
/// use bevy_euler_physics::prelude::*;
///
/// fn setup(mut commands: Commands) {
///     let anchor = commands.spawn(Body::fixed(Vec3::ZERO)).id();
///     let bob = commands.spawn(Body::new(1.0).with_position(Vec3::NEG_Y)).id();
///     // 1 m long, 200 N/m, 0.5 N·s/m of damping.
///     commands.spawn(Spring::new(anchor, bob, 1.0, 200.0).with_damping(0.5));
/// }
/// # App::new().add_systems(Startup, setup);
/// ```
///
/// # Changing a spring
///
/// `Spring` is an immutable component: to change one, insert a new value on
/// its entity. Its hooks then tell the step at once (waking the islands of
/// its old and new ends), so the step never scans every spring for edits.
///
/// ```
/// use bevy::prelude::*;
/// use bevy_euler_physics::prelude::*;
///
/// // Doubles the stiffness of every spring.
/// fn stiffen(mut commands: Commands, springs: Query<(Entity, &Spring)>) {
///     for (entity, spring) in &springs {
///         commands.entity(entity).insert(spring.with_stiffness(2.0 * spring.stiffness));
///     }
/// }
/// # App::new().add_systems(Update, stiffen);
/// ```
///
/// Its two ends are entity references that Bevy maps when the spring is
/// copied into another world (a scene loaded, an entity cloned), so a
/// copied rope joins the copies of its bodies.
///
/// # Invalid values
///
/// A spring whose end is missing, has no [`Body`](crate::Body), or is the
/// other end, or whose stiffness, damping or rest length is negative or not
/// finite, is reported once and left out of the step until fixed.
#[derive(Component, Reflect, Debug, Clone, Copy, PartialEq)]
#[reflect(Component, Debug, PartialEq, Clone)]
#[component(immutable, on_insert = wake_ends, on_discard = wake_ends)]
pub struct Spring {
    /// The first body.
    #[entities]
    pub a: Entity,
    /// The second body.
    #[entities]
    pub b: Entity,
    /// Length at rest, in metres. Default: set by [`Spring::new`].
    pub rest_length: f32,
    /// Stiffness `k`, in N/m.
    pub stiffness: f32,
    /// Damping `c` along the spring, in N·s/m. Default: 0.
    pub damping: f32,
}

impl Spring {
    /// An undamped spring from `a` to `b`.
    ///
    /// ```
    /// # use bevy::prelude::*;
    /// # use bevy_euler_physics::prelude::*;
    /// # let (a, b) = (Entity::from_raw_u32(1).unwrap(), Entity::from_raw_u32(2).unwrap());
    /// let spring = Spring::new(a, b, 0.5, 100.0);
    /// assert_eq!(spring.damping, 0.0);
    /// ```
    pub const fn new(a: Entity, b: Entity, rest_length: f32, stiffness: f32) -> Self {
        Self {
            a,
            b,
            rest_length,
            stiffness,
            damping: 0.0,
        }
    }

    /// The same spring with damping `c` (N·s/m) along its length.
    ///
    /// ```
    /// # use bevy::prelude::*;
    /// # use bevy_euler_physics::prelude::*;
    /// # let (a, b) = (Entity::from_raw_u32(1).unwrap(), Entity::from_raw_u32(2).unwrap());
    /// let spring = Spring::new(a, b, 0.5, 100.0).with_damping(2.0);
    /// assert_eq!(spring.damping, 2.0);
    /// ```
    pub const fn with_damping(mut self, damping: f32) -> Self {
        self.damping = damping;
        self
    }

    /// The same spring with stiffness `k` (N/m).
    ///
    /// ```
    /// # use bevy::prelude::*;
    /// # use bevy_euler_physics::prelude::*;
    /// # let (a, b) = (Entity::from_raw_u32(1).unwrap(), Entity::from_raw_u32(2).unwrap());
    /// let spring = Spring::new(a, b, 0.5, 100.0).with_stiffness(300.0);
    /// assert_eq!(spring.stiffness, 300.0);
    /// ```
    pub const fn with_stiffness(mut self, stiffness: f32) -> Self {
        self.stiffness = stiffness;
        self
    }

    /// The same spring with rest length `length` (m).
    ///
    /// ```
    /// # use bevy::prelude::*;
    /// # use bevy_euler_physics::prelude::*;
    /// # let (a, b) = (Entity::from_raw_u32(1).unwrap(), Entity::from_raw_u32(2).unwrap());
    /// let spring = Spring::new(a, b, 0.5, 100.0).with_rest_length(0.8);
    /// assert_eq!(spring.rest_length, 0.8);
    /// ```
    pub const fn with_rest_length(mut self, length: f32) -> Self {
        self.rest_length = length;
        self
    }

    /// A spring tuned by its natural frequency `hertz` and its damping
    /// ratio (0: undamped, 1: critically damped) instead of a stiffness
    /// and a damping: with a [`SpringFrequency`] that keeps them, so that
    /// the plugin sets `stiffness = m·(2π·f)²` and `damping = 2·ζ·m·(2π·f)`
    /// from the reduced mass `m = 1 / (1/m_a + 1/m_b)` of its two bodies (a
    /// fixed end counts as infinitely heavy) before the spring's first step,
    /// and again from the step after either mass changes. A spring on a
    /// body of 2 kg hanging from a fixed anchor, at 2 Hz, swings with a
    /// period of 0.5 s whatever the body's mass.
    ///
    /// ```
    /// use bevy::prelude::*;
    /// use bevy_euler_physics::prelude::*;
    ///
    /// fn setup(mut commands: Commands) {
    ///     let anchor = commands.spawn(Body::fixed(Vec3::ZERO)).id();
    ///     let bob = commands.spawn(Body::new(2.0).with_position(-Vec3::Y)).id();
    ///     // 2 Hz, a tenth of critical damping.
    ///     commands.spawn(Spring::from_frequency(anchor, bob, 1.0, 2.0, 0.1));
    /// }
    /// # App::new().add_systems(Startup, setup);
    /// ```
    pub const fn from_frequency(
        a: Entity,
        b: Entity,
        rest_length: f32,
        hertz: f32,
        damping_ratio: f32,
    ) -> (Self, SpringFrequency) {
        (
            Self::new(a, b, rest_length, 0.0),
            SpringFrequency {
                hertz,
                damping_ratio,
            },
        )
    }

    /// The force on `a` for ends at `xa`, `xb` moving at `va`, `vb`; `b`
    /// gets its negation. Zero when the ends coincide.
    ///
    /// ```
    /// # use bevy::prelude::*;
    /// # use bevy_euler_physics::prelude::*;
    /// # let (a, b) = (Entity::from_raw_u32(1).unwrap(), Entity::from_raw_u32(2).unwrap());
    /// let spring = Spring::new(a, b, 1.0, 10.0);
    /// // Stretched by 0.5 m: pulls `a` towards `b` with 5 N.
    /// let f = spring.force(Vec3::ZERO, Vec3::ZERO, Vec3::new(1.5, 0.0, 0.0), Vec3::ZERO);
    /// assert_eq!(f, Vec3::new(5.0, 0.0, 0.0));
    /// ```
    pub fn force(&self, xa: Vec3, va: Vec3, xb: Vec3, vb: Vec3) -> Vec3 {
        spring_force(
            (xb - xa).into(),
            (vb - va).into(),
            self.rest_length,
            self.stiffness,
            self.damping,
        )
        .into()
    }
}

/// Tunes the [`Spring`] of its entity by frequency and damping ratio (see
/// [`Spring::from_frequency`]): the plugin keeps the spring's `stiffness`
/// and `damping` at what they give for the masses of its two bodies, so
/// everything that reads the spring (its force, the stability estimate,
/// the debug panel's energy) sees the values in use.
///
/// A negative or non-finite frequency or ratio gives a stiffness or
/// damping that the spring's checks report.
///
/// ```
/// use bevy::prelude::*;
/// use bevy_euler_physics::prelude::*;
///
/// let tuning = SpringFrequency { hertz: 2.0, damping_ratio: 0.0 };
/// // For a reduced mass of 2 kg (1/m_a + 1/m_b = 0.5 per kg):
/// let (k, c) = tuning.resolve(0.5);
/// let omega = 2.0 * std::f32::consts::PI * 2.0;
/// assert!((k - 2.0 * omega * omega).abs() < 1e-3 && c == 0.0);
/// ```
#[derive(Component, Reflect, Debug, Clone, Copy, PartialEq)]
#[reflect(Component, Debug, PartialEq, Clone)]
#[component(on_insert = mark_dirty)]
pub struct SpringFrequency {
    /// The natural frequency `f`, in Hz.
    pub hertz: f32,
    /// The damping ratio `ζ`: 0 undamped, 1 critically damped.
    pub damping_ratio: f32,
}

impl SpringFrequency {
    /// The stiffness and damping for two bodies whose inverse masses add up
    /// to `inv_mass_sum` (0 when both are fixed, which gives none).
    ///
    /// ```
    /// # use bevy_euler_physics::prelude::*;
    /// let tuning = SpringFrequency { hertz: 1.0, damping_ratio: 1.0 };
    /// assert_eq!(tuning.resolve(0.0), (0.0, 0.0));
    /// ```
    pub fn resolve(&self, inv_mass_sum: f32) -> (f32, f32) {
        // (NaN is no mass either.)
        if inv_mass_sum.is_nan() || inv_mass_sum <= 0.0 {
            return (0.0, 0.0);
        }
        let mass = 1.0 / inv_mass_sum;
        let omega = core::f32::consts::TAU * self.hertz;
        (
            mass * omega * omega,
            2.0 * self.damping_ratio * mass * omega,
        )
    }
}

/// Hook: a spring was added, replaced or removed. Its ends' islands wake (if
/// asleep) and the index is rebuilt.
fn wake_ends(mut world: DeferredWorld, ctx: HookContext) {
    let Some(spring) = world.get::<Spring>(ctx.entity).copied() else {
        return;
    };
    request(&mut world, |requests| {
        for end in [spring.a, spring.b] {
            requests.wake(WakeTarget::Body(end), WakeCause::SpringChanged(ctx.entity));
        }
    });
}

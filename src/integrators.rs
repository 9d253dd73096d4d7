//! Explicit Euler, semi-implicit Euler, velocity Verlet and RK2 as plain
//! functions, and the exact motion they are measured against.
//!
//! Everything here is `f64` and free of ECS types: a [`State`] (position and
//! velocity in 2D), an acceleration closure `accel(position, velocity)`, and
//! one step of size `h`. The plugin itself steps bodies with semi-implicit
//! Euler; this module exists to compare it with its neighbours, in tests and
//! in the lab example.
//!
//! # The four methods
//!
//! - [`explicit_euler`] (first order, one force evaluation): advance the
//!   position with the *old* velocity and the velocity with the old
//!   acceleration. On an undamped oscillator of angular frequency ω it
//!   multiplies the energy by exactly `1 + ω²h²` every step, so it always
//!   gains energy, however small `h` is.
//! - [`semi_implicit_euler`] (first order, one force evaluation, symplectic):
//!   advance the velocity first, then the position with the *new* velocity.
//!   On the undamped oscillator it exactly conserves the nearby quadratic
//!   `½v² + ½ω²x² − ½ω²h·x·v`, so the energy stays bounded (it oscillates
//!   within a factor `(1 + ωh/2)/(1 − ωh/2)`) as long as `ω·h < 2`; beyond
//!   that it blows up.
//! - [`velocity_verlet`] (second order, two force evaluations, symplectic):
//!   a Taylor step for the position and the trapezoidal rule for the
//!   velocity. Its energy error is `O(h²)` and does not drift: on the
//!   undamped oscillator it exactly conserves `½v² + ½ω²(1 − ω²h²/4)x²`.
//! - [`rk2_midpoint`] (second order, two force evaluations, not symplectic):
//!   evaluate the slope at a half-step midpoint and take the full step with
//!   it. Accurate, but on the undamped oscillator it multiplies the energy by
//!   exactly `1 + (ωh)⁴/4` per step: a slow, steady drift upwards.
//!
//! [`Integrator`] names the four so that they can be chosen at run time (it
//! parses from `euler`, `explicit-euler`, `semi-implicit`, `verlet`, `rk2`).
//!
//! # The reference
//!
//! [`SpringSystem`] is a unit mass on a linear spring to the origin, with
//! linear drag and constant gravity: `a = −k·x − c·v + g`. For underdamped
//! drag its motion has a closed form, [`ExactMotion`], which the tests use to
//! measure each method's error and convergence order.
//!
//! ```rust
//! use bevy::math::DVec2;
//! use bevy_euler_physics::integrators::*;
//!
//! let system = SpringSystem::new(4.0, 0.0, DVec2::ZERO);
//! let start = State::new(DVec2::X, DVec2::ZERO);
//! let exact = ExactMotion::new(system, start, 0.0)?;
//!
//! // Step to t = 1 with each method and compare with the exact motion.
//! let h = 0.001;
//! for integrator in Integrator::ALL {
//!     let mut state = start;
//!     for _ in 0..1000 {
//!         state = integrator.step(state, h, &mut |x, v| system.acceleration(x, v));
//!     }
//!     let error = (state.position - exact.state_at(1.0).position).length();
//!     assert!(error < 0.01, "{integrator}: {error}");
//! }
//! # Ok::<(), ExactMotionError>(())
//! ```

use core::fmt;
use core::str::FromStr;

use bevy::math::DVec2;

/// A point's position and velocity.
///
/// ```rust
/// use bevy::math::DVec2;
/// use bevy_euler_physics::integrators::*;
///
/// let state = State::new(DVec2::new(1.0, 2.0), DVec2::Y);
/// assert_eq!(state.velocity, DVec2::new(0.0, 1.0));
/// assert_eq!(State::default().position, DVec2::ZERO);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct State {
    /// Position.
    pub position: DVec2,
    /// Velocity.
    pub velocity: DVec2,
}

impl State {
    /// A state from its position and velocity.
    ///
    /// ```rust
    /// use bevy::math::DVec2;
    /// use bevy_euler_physics::integrators::*;
    ///
    /// let state = State::new(DVec2::X, DVec2::ZERO);
    /// assert_eq!(state.position.x, 1.0);
    /// ```
    pub const fn new(position: DVec2, velocity: DVec2) -> Self {
        Self { position, velocity }
    }

    /// Whether every component of the position and velocity is finite.
    ///
    /// ```rust
    /// use bevy::math::DVec2;
    /// use bevy_euler_physics::integrators::*;
    ///
    /// assert!(State::default().is_finite());
    /// assert!(!State::new(DVec2::new(f64::NAN, 0.0), DVec2::ZERO).is_finite());
    /// ```
    pub fn is_finite(&self) -> bool {
        self.position.is_finite() && self.velocity.is_finite()
    }
}

/// One of the four integration methods of this module.
///
/// Parses (ASCII case-insensitively, surrounding whitespace ignored) from
/// `euler` or `explicit-euler`, `semi-implicit`, `verlet` and `rk2`, and
/// displays as its [`name`](Integrator::name).
///
/// ```rust
/// use bevy::math::DVec2;
/// use bevy_euler_physics::integrators::*;
///
/// let integrator: Integrator = "verlet".parse()?;
/// assert_eq!(integrator, Integrator::VelocityVerlet);
///
/// // Free fall is a constant acceleration: Verlet is exact for it.
/// let g = DVec2::new(0.0, -10.0);
/// let state = integrator.step(State::default(), 1.0, &mut |_, _| g);
/// assert_eq!(state.position, DVec2::new(0.0, -5.0));
/// assert_eq!(state.velocity, g);
/// # Ok::<(), ParseIntegratorError>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Integrator {
    /// [`explicit_euler`].
    ExplicitEuler,
    /// [`semi_implicit_euler`].
    SemiImplicitEuler,
    /// [`velocity_verlet`].
    VelocityVerlet,
    /// [`rk2_midpoint`].
    Rk2Midpoint,
}

impl Integrator {
    /// All four, in the order of the module documentation.
    ///
    /// ```rust
    /// use bevy_euler_physics::integrators::*;
    ///
    /// assert_eq!(Integrator::ALL.len(), 4);
    /// assert_eq!(Integrator::ALL[0], Integrator::ExplicitEuler);
    /// ```
    pub const ALL: [Integrator; 4] = [
        Integrator::ExplicitEuler,
        Integrator::SemiImplicitEuler,
        Integrator::VelocityVerlet,
        Integrator::Rk2Midpoint,
    ];

    /// A human-readable name: "explicit Euler", "semi-implicit Euler",
    /// "velocity Verlet" or "RK2 midpoint".
    ///
    /// ```rust
    /// use bevy_euler_physics::integrators::*;
    ///
    /// assert_eq!(Integrator::SemiImplicitEuler.name(), "semi-implicit Euler");
    /// assert_eq!(Integrator::Rk2Midpoint.to_string(), "RK2 midpoint");
    /// ```
    pub const fn name(self) -> &'static str {
        match self {
            Integrator::ExplicitEuler => "explicit Euler",
            Integrator::SemiImplicitEuler => "semi-implicit Euler",
            Integrator::VelocityVerlet => "velocity Verlet",
            Integrator::Rk2Midpoint => "RK2 midpoint",
        }
    }

    /// How many times one [`step`](Integrator::step) calls the acceleration:
    /// 1 for the Euler pair, 2 for Verlet and RK2.
    ///
    /// ```rust
    /// use bevy_euler_physics::integrators::*;
    ///
    /// assert_eq!(Integrator::ExplicitEuler.evaluations_per_step(), 1);
    /// assert_eq!(Integrator::VelocityVerlet.evaluations_per_step(), 2);
    /// ```
    pub const fn evaluations_per_step(self) -> usize {
        match self {
            Integrator::ExplicitEuler | Integrator::SemiImplicitEuler => 1,
            Integrator::VelocityVerlet | Integrator::Rk2Midpoint => 2,
        }
    }

    /// The order of accuracy: the global error at a fixed time shrinks like
    /// `hᵖ`. 1 for the Euler pair, 2 for Verlet and RK2.
    ///
    /// ```rust
    /// use bevy_euler_physics::integrators::*;
    ///
    /// assert_eq!(Integrator::SemiImplicitEuler.order(), 1);
    /// assert_eq!(Integrator::Rk2Midpoint.order(), 2);
    /// ```
    pub const fn order(self) -> u32 {
        match self {
            Integrator::ExplicitEuler | Integrator::SemiImplicitEuler => 1,
            Integrator::VelocityVerlet | Integrator::Rk2Midpoint => 2,
        }
    }

    /// One step of size `h` with this method; see the function of the same
    /// name for what it does.
    ///
    /// ```rust
    /// use bevy::math::DVec2;
    /// use bevy_euler_physics::integrators::*;
    ///
    /// let start = State::new(DVec2::ZERO, DVec2::X);
    /// for integrator in Integrator::ALL {
    ///     // No force: every method moves in a straight line.
    ///     let end = integrator.step(start, 0.5, &mut |_, _| DVec2::ZERO);
    ///     assert_eq!(end, State::new(DVec2::new(0.5, 0.0), DVec2::X));
    /// }
    /// ```
    pub fn step(
        self,
        state: State,
        h: f64,
        accel: &mut impl FnMut(DVec2, DVec2) -> DVec2,
    ) -> State {
        match self {
            Integrator::ExplicitEuler => explicit_euler(state, h, accel),
            Integrator::SemiImplicitEuler => semi_implicit_euler(state, h, accel),
            Integrator::VelocityVerlet => velocity_verlet(state, h, accel),
            Integrator::Rk2Midpoint => rk2_midpoint(state, h, accel),
        }
    }
}

impl fmt::Display for Integrator {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Integrator {
    type Err = ParseIntegratorError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let key = s.trim();
        let is = |name: &str| key.eq_ignore_ascii_case(name);
        if is("euler") || is("explicit-euler") {
            Ok(Integrator::ExplicitEuler)
        } else if is("semi-implicit") {
            Ok(Integrator::SemiImplicitEuler)
        } else if is("verlet") {
            Ok(Integrator::VelocityVerlet)
        } else if is("rk2") {
            Ok(Integrator::Rk2Midpoint)
        } else {
            Err(ParseIntegratorError {
                input: s.to_owned(),
            })
        }
    }
}

/// The text given to [`Integrator::from_str`] names no integrator.
///
/// ```rust
/// use bevy_euler_physics::integrators::*;
///
/// let error = "leapfrog".parse::<Integrator>().unwrap_err();
/// assert_eq!(error.input(), "leapfrog");
/// assert!(error.to_string().contains("semi-implicit"));
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParseIntegratorError {
    input: String,
}

impl ParseIntegratorError {
    /// The text that failed to parse.
    ///
    /// ```rust
    /// use bevy_euler_physics::integrators::*;
    ///
    /// let error = "".parse::<Integrator>().unwrap_err();
    /// assert_eq!(error.input(), "");
    /// ```
    pub fn input(&self) -> &str {
        &self.input
    }
}

impl fmt::Display for ParseIntegratorError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "unknown integrator {:?}: expected one of euler, explicit-euler, \
             semi-implicit, verlet, rk2",
            self.input
        )
    }
}

impl std::error::Error for ParseIntegratorError {}

/// Explicit (forward) Euler: `a = accel(x, v)`, `x' = x + h·v` with the
/// *old* velocity, `v' = v + h·a`. First order; calls `accel` once.
///
/// Not stable for any `h` on an undamped oscillator: the energy grows by the
/// factor `1 + ω²h²` every step.
///
/// ```rust
/// use bevy::math::DVec2;
/// use bevy_euler_physics::integrators::*;
///
/// let g = DVec2::new(0.0, -10.0);
/// let state = explicit_euler(State::default(), 1.0, &mut |_, _| g);
/// // The position moved with the old (zero) velocity.
/// assert_eq!(state.position, DVec2::ZERO);
/// assert_eq!(state.velocity, g);
/// ```
pub fn explicit_euler(
    state: State,
    h: f64,
    accel: &mut impl FnMut(DVec2, DVec2) -> DVec2,
) -> State {
    let State { position, velocity } = state;
    let a = accel(position, velocity);
    State {
        position: position + h * velocity,
        velocity: velocity + h * a,
    }
}

/// Semi-implicit (symplectic) Euler: `a = accel(x, v)`, `v' = v + h·a`, then
/// `x' = x + h·v'` with the *new* velocity. First order; calls `accel` once.
/// This is the method the plugin steps bodies with.
///
/// On an undamped oscillator the energy stays bounded while `ω·h < 2`.
///
/// ```rust
/// use bevy::math::DVec2;
/// use bevy_euler_physics::integrators::*;
///
/// let g = DVec2::new(0.0, -10.0);
/// let state = semi_implicit_euler(State::default(), 1.0, &mut |_, _| g);
/// // The position moved with the new velocity.
/// assert_eq!(state.position, g);
/// assert_eq!(state.velocity, g);
/// ```
pub fn semi_implicit_euler(
    state: State,
    h: f64,
    accel: &mut impl FnMut(DVec2, DVec2) -> DVec2,
) -> State {
    let State { position, velocity } = state;
    let a = accel(position, velocity);
    let velocity = velocity + h * a;
    State {
        position: position + h * velocity,
        velocity,
    }
}

/// Velocity Verlet: `a₀ = accel(x, v)`, `x' = x + h·v + h²/2·a₀`,
/// `a₁ = accel(x', v + h·a₀)`, `v' = v + h/2·(a₀ + a₁)`. Second order and,
/// for forces that depend on position only, symplectic. Calls `accel` twice.
///
/// The second evaluation needs a velocity at the end of the step, which is
/// not known yet; this function passes the explicit Euler predictor
/// `v + h·a₀`. Forces that do not depend on the velocity ignore it, and the
/// method is exactly the classic velocity Verlet. For velocity-dependent
/// forces (drag) the velocity update becomes Heun's trapezoidal rule, which
/// keeps the method second order (the predictor's `O(h²)` error enters `v'`
/// multiplied by `h/2`) but no longer exactly symplectic — as no explicit
/// method is for a dissipative force.
///
/// ```rust
/// use bevy::math::DVec2;
/// use bevy_euler_physics::integrators::*;
///
/// // Exact for a constant acceleration.
/// let g = DVec2::new(0.0, -10.0);
/// let state = velocity_verlet(State::new(DVec2::ZERO, DVec2::X), 2.0, &mut |_, _| g);
/// assert_eq!(state.position, DVec2::new(2.0, -20.0));
/// assert_eq!(state.velocity, DVec2::new(1.0, -20.0));
/// ```
pub fn velocity_verlet(
    state: State,
    h: f64,
    accel: &mut impl FnMut(DVec2, DVec2) -> DVec2,
) -> State {
    let State { position, velocity } = state;
    let a0 = accel(position, velocity);
    let position = position + h * velocity + (0.5 * h * h) * a0;
    let predicted_velocity = velocity + h * a0;
    let a1 = accel(position, predicted_velocity);
    State {
        position,
        velocity: velocity + (0.5 * h) * (a0 + a1),
    }
}

/// RK2, explicit midpoint: `a = accel(x, v)`; midpoint `xₘ = x + h/2·v`,
/// `vₘ = v + h/2·a`; `aₘ = accel(xₘ, vₘ)`; `x' = x + h·vₘ`, `v' = v + h·aₘ`.
/// Second order but not symplectic: on an undamped oscillator the energy
/// grows by the factor `1 + (ωh)⁴/4` every step. Calls `accel` twice.
///
/// ```rust
/// use bevy::math::DVec2;
/// use bevy_euler_physics::integrators::*;
///
/// // Exact for a constant acceleration.
/// let g = DVec2::new(0.0, -10.0);
/// let state = rk2_midpoint(State::new(DVec2::ZERO, DVec2::X), 2.0, &mut |_, _| g);
/// assert_eq!(state.position, DVec2::new(2.0, -20.0));
/// assert_eq!(state.velocity, DVec2::new(1.0, -20.0));
/// ```
pub fn rk2_midpoint(state: State, h: f64, accel: &mut impl FnMut(DVec2, DVec2) -> DVec2) -> State {
    let State { position, velocity } = state;
    let a = accel(position, velocity);
    let mid_position = position + (0.5 * h) * velocity;
    let mid_velocity = velocity + (0.5 * h) * a;
    let mid_accel = accel(mid_position, mid_velocity);
    State {
        position: position + h * mid_velocity,
        velocity: velocity + h * mid_accel,
    }
}

/// A unit mass on a linear spring to the origin, with linear drag and
/// constant gravity: `a = −k·x − c·v + g`.
///
/// With unit mass the angular frequency of the undamped spring is `ω = √k`.
///
/// ```rust
/// use bevy::math::DVec2;
/// use bevy_euler_physics::integrators::*;
///
/// let system = SpringSystem::new(4.0, 0.5, DVec2::new(0.0, -8.0));
/// // At rest at the rest point, nothing moves.
/// assert_eq!(system.acceleration(system.rest_point(), DVec2::ZERO), DVec2::ZERO);
/// ```
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SpringSystem {
    /// Spring stiffness `k` per unit mass (`ω² = k`). Must be positive.
    pub stiffness: f64,
    /// Linear drag coefficient `c` per unit mass. Must not be negative.
    pub drag: f64,
    /// Gravity `g`, a constant acceleration.
    pub gravity: DVec2,
}

impl SpringSystem {
    /// A system from its stiffness `k`, drag `c` and gravity `g`.
    ///
    /// ```rust
    /// use bevy::math::DVec2;
    /// use bevy_euler_physics::integrators::*;
    ///
    /// let system = SpringSystem::new(9.0, 0.0, DVec2::ZERO);
    /// assert_eq!(system.angular_frequency(), 3.0);
    /// ```
    pub const fn new(stiffness: f64, drag: f64, gravity: DVec2) -> Self {
        Self {
            stiffness,
            drag,
            gravity,
        }
    }

    /// The undamped angular frequency `ω = √k`.
    ///
    /// ```rust
    /// use bevy::math::DVec2;
    /// use bevy_euler_physics::integrators::*;
    ///
    /// assert_eq!(SpringSystem::new(16.0, 1.0, DVec2::ZERO).angular_frequency(), 4.0);
    /// ```
    pub fn angular_frequency(&self) -> f64 {
        self.stiffness.sqrt()
    }

    /// The acceleration `−k·x − c·v + g` at position `x` and velocity `v`.
    ///
    /// ```rust
    /// use bevy::math::DVec2;
    /// use bevy_euler_physics::integrators::*;
    ///
    /// let system = SpringSystem::new(2.0, 0.5, DVec2::new(0.0, -1.0));
    /// let a = system.acceleration(DVec2::new(1.0, 0.0), DVec2::new(0.0, 2.0));
    /// assert_eq!(a, DVec2::new(-2.0, -2.0));
    /// ```
    pub fn acceleration(&self, position: DVec2, velocity: DVec2) -> DVec2 {
        -self.stiffness * position - self.drag * velocity + self.gravity
    }

    /// Where the mass rests: the spring balances gravity at `g / k`, e.g.
    /// `(0, −g/k)` for gravity `(0, −g)`.
    ///
    /// ```rust
    /// use bevy::math::DVec2;
    /// use bevy_euler_physics::integrators::*;
    ///
    /// let system = SpringSystem::new(4.0, 0.0, DVec2::new(0.0, -10.0));
    /// assert_eq!(system.rest_point(), DVec2::new(0.0, -2.5));
    /// ```
    pub fn rest_point(&self) -> DVec2 {
        self.gravity / self.stiffness
    }

    /// The mechanical energy per unit mass: kinetic `½|v|²`, plus spring
    /// `½k|x|²`, plus gravitational `−g·x`.
    ///
    /// The zero is the mass at rest at the origin (the spring's anchor). The
    /// minimum, `−|g|²/(2k)`, is at rest at the [rest point](Self::rest_point).
    /// Constant without drag; with drag it falls at the rate `c|v|²`.
    ///
    /// ```rust
    /// use bevy::math::DVec2;
    /// use bevy_euler_physics::integrators::*;
    ///
    /// let system = SpringSystem::new(4.0, 0.0, DVec2::new(0.0, -10.0));
    /// assert_eq!(system.energy(&State::default()), 0.0);
    /// let rest = State::new(system.rest_point(), DVec2::ZERO);
    /// assert_eq!(system.energy(&rest), -100.0 / 8.0);
    /// ```
    pub fn energy(&self, state: &State) -> f64 {
        let State { position, velocity } = *state;
        0.5 * velocity.length_squared() + 0.5 * self.stiffness * position.length_squared()
            - self.gravity.dot(position)
    }
}

/// Why [`ExactMotion::new`] has no closed form for a system.
///
/// ```rust
/// use bevy_euler_physics::integrators::*;
///
/// let error = ExactMotionError::InvalidStiffness { stiffness: -1.0 };
/// assert!(error.to_string().contains("stiffness"));
/// ```
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum ExactMotionError {
    /// The stiffness is zero, negative or not finite.
    InvalidStiffness {
        /// The offending stiffness.
        stiffness: f64,
    },
    /// The drag is negative or not finite.
    InvalidDrag {
        /// The offending drag.
        drag: f64,
    },
    /// The drag is critical or heavier (`c² ≥ 4k`): the motion is not an
    /// underdamped oscillation, which is the only closed form provided.
    NotUnderdamped {
        /// The drag given.
        drag: f64,
        /// The critical drag `2√k`; the drag must be below it.
        critical_drag: f64,
    },
    /// Gravity is not finite.
    InvalidGravity {
        /// The offending gravity.
        gravity: DVec2,
    },
    /// The reference state or time is not finite.
    NonFiniteReference {
        /// The reference state given.
        state: State,
        /// The reference time given.
        time: f64,
    },
}

impl fmt::Display for ExactMotionError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ExactMotionError::InvalidStiffness { stiffness } => write!(
                f,
                "spring stiffness must be positive and finite, got {stiffness}"
            ),
            ExactMotionError::InvalidDrag { drag } => {
                write!(f, "drag must be non-negative and finite, got {drag}")
            }
            ExactMotionError::NotUnderdamped {
                drag,
                critical_drag,
            } => write!(
                f,
                "drag {drag} is at or above the critical drag {critical_drag}: \
                 only underdamped motion has an exact solution here"
            ),
            ExactMotionError::InvalidGravity { gravity } => {
                write!(f, "gravity must be finite, got {gravity}")
            }
            ExactMotionError::NonFiniteReference { state, time } => write!(
                f,
                "reference state must be finite, got position {}, velocity {} at time {time}",
                state.position, state.velocity
            ),
        }
    }
}

impl std::error::Error for ExactMotionError {}

/// The exact motion of an underdamped [`SpringSystem`] through a reference
/// state.
///
/// Each axis moves independently about the [rest point](SpringSystem::rest_point)
/// `x*`. With `γ = c/2`, `ω_d = √(k − γ²)`, `τ = t − t₀` and the offset
/// `u = x − x*`:
///
/// `u(τ) = e^{−γτ}(A cos ω_d τ + B sin ω_d τ)`, `A = u₀`, `B = (u₀' + γu₀)/ω_d`,
///
/// and the velocity is its derivative.
///
/// ```rust
/// use bevy::math::DVec2;
/// use bevy_euler_physics::integrators::*;
///
/// // Undamped, ω = 2: back where it started after one period π.
/// let system = SpringSystem::new(4.0, 0.0, DVec2::ZERO);
/// let start = State::new(DVec2::X, DVec2::ZERO);
/// let exact = ExactMotion::new(system, start, 0.0)?;
/// let later = exact.state_at(core::f64::consts::PI);
/// assert!((later.position - DVec2::X).length() < 1e-12);
/// # Ok::<(), ExactMotionError>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ExactMotion {
    system: SpringSystem,
    reference: State,
    t0: f64,
    /// `γ = c/2`.
    decay: f64,
    /// `ω_d = √(k − γ²)`.
    damped_frequency: f64,
    /// `A` per axis.
    cos_coefficient: DVec2,
    /// `B` per axis.
    sin_coefficient: DVec2,
}

impl ExactMotion {
    /// The motion of `system` that passes through `reference` at time `t0`.
    ///
    /// Fails if the stiffness is not positive and finite, the drag is
    /// negative, not finite, or at or above the critical drag `2√k`, gravity
    /// is not finite, or the reference state or time is not finite.
    ///
    /// ```rust
    /// use bevy::math::DVec2;
    /// use bevy_euler_physics::integrators::*;
    ///
    /// let start = State::new(DVec2::X, DVec2::ZERO);
    /// let underdamped = SpringSystem::new(4.0, 1.0, DVec2::ZERO);
    /// assert!(ExactMotion::new(underdamped, start, 0.0).is_ok());
    /// let critical = SpringSystem::new(4.0, 4.0, DVec2::ZERO);
    /// assert!(matches!(
    ///     ExactMotion::new(critical, start, 0.0),
    ///     Err(ExactMotionError::NotUnderdamped { .. })
    /// ));
    /// ```
    pub fn new(system: SpringSystem, reference: State, t0: f64) -> Result<Self, ExactMotionError> {
        let SpringSystem {
            stiffness,
            drag,
            gravity,
        } = system;
        if !(stiffness.is_finite() && stiffness > 0.0) {
            return Err(ExactMotionError::InvalidStiffness { stiffness });
        }
        if !(drag.is_finite() && drag >= 0.0) {
            return Err(ExactMotionError::InvalidDrag { drag });
        }
        let decay = 0.5 * drag;
        let damped_squared = stiffness - decay * decay;
        // `k − c²/4 > 0` is `c² < 4k`; also refuse a frequency so small that
        // `B` would overflow or lose all precision.
        let damped_frequency = damped_squared.sqrt();
        if !(damped_squared > 0.0 && damped_frequency > f64::EPSILON * stiffness.sqrt()) {
            return Err(ExactMotionError::NotUnderdamped {
                drag,
                critical_drag: 2.0 * stiffness.sqrt(),
            });
        }
        if !gravity.is_finite() {
            return Err(ExactMotionError::InvalidGravity { gravity });
        }
        if !(reference.is_finite() && t0.is_finite()) {
            return Err(ExactMotionError::NonFiniteReference {
                state: reference,
                time: t0,
            });
        }
        let offset = reference.position - system.rest_point();
        let cos_coefficient = offset;
        let sin_coefficient = (reference.velocity + decay * offset) / damped_frequency;
        Ok(Self {
            system,
            reference,
            t0,
            decay,
            damped_frequency,
            cos_coefficient,
            sin_coefficient,
        })
    }

    /// The system this motion follows.
    ///
    /// ```rust
    /// use bevy::math::DVec2;
    /// use bevy_euler_physics::integrators::*;
    ///
    /// let system = SpringSystem::new(1.0, 0.0, DVec2::ZERO);
    /// let exact = ExactMotion::new(system, State::default(), 0.0)?;
    /// assert_eq!(exact.system(), system);
    /// # Ok::<(), ExactMotionError>(())
    /// ```
    pub fn system(&self) -> SpringSystem {
        self.system
    }

    /// The reference state and the time it is reached.
    ///
    /// ```rust
    /// use bevy::math::DVec2;
    /// use bevy_euler_physics::integrators::*;
    ///
    /// let system = SpringSystem::new(1.0, 0.0, DVec2::ZERO);
    /// let start = State::new(DVec2::X, DVec2::Y);
    /// let exact = ExactMotion::new(system, start, 2.0)?;
    /// assert_eq!(exact.reference(), (start, 2.0));
    /// # Ok::<(), ExactMotionError>(())
    /// ```
    pub fn reference(&self) -> (State, f64) {
        (self.reference, self.t0)
    }

    /// The state at time `t` (before or after the reference time).
    ///
    /// A non-finite `t` gives a non-finite state.
    ///
    /// ```rust
    /// use bevy::math::DVec2;
    /// use bevy_euler_physics::integrators::*;
    ///
    /// // Released from the rest point, it stays there.
    /// let system = SpringSystem::new(4.0, 0.5, DVec2::new(0.0, -10.0));
    /// let rest = State::new(system.rest_point(), DVec2::ZERO);
    /// let exact = ExactMotion::new(system, rest, 0.0)?;
    /// assert_eq!(exact.state_at(3.0), rest);
    /// # Ok::<(), ExactMotionError>(())
    /// ```
    pub fn state_at(&self, t: f64) -> State {
        let tau = t - self.t0;
        let gamma = self.decay;
        let omega = self.damped_frequency;
        let envelope = (-gamma * tau).exp();
        let (sin, cos) = (omega * tau).sin_cos();
        let a = self.cos_coefficient;
        let b = self.sin_coefficient;
        let offset = envelope * (cos * a + sin * b);
        let velocity = envelope * (cos * (omega * b - gamma * a) - sin * (gamma * b + omega * a));
        State {
            position: self.system.rest_point() + offset,
            velocity,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use core::ops::RangeInclusive;

    use core::cell::Cell;

    fn undamped(stiffness: f64) -> SpringSystem {
        SpringSystem::new(stiffness, 0.0, DVec2::ZERO)
    }

    /// Steps `n` times with a fixed `h`, returning the final state.
    fn run(integrator: Integrator, system: SpringSystem, start: State, h: f64, n: usize) -> State {
        let mut state = start;
        for _ in 0..n {
            state = integrator.step(state, h, &mut |x, v| system.acceleration(x, v));
        }
        state
    }

    /// The distance in (position, velocity) space.
    fn distance(a: State, b: State) -> f64 {
        ((a.position - b.position).length_squared() + (a.velocity - b.velocity).length_squared())
            .sqrt()
    }

    // Both axes moving, out of phase, so that no error component vanishes
    // by symmetry.
    const START: State = State::new(DVec2::new(1.0, -0.5), DVec2::new(0.3, 0.8));

    #[test]
    fn explicit_euler_multiplies_energy_by_one_plus_omega_squared_h_squared() {
        // x' = x + hv, v' = v − hkx gives
        // ½|v'|² + ½k|x'|² = (1 + kh²)(½|v|² + ½k|x|²) exactly.
        for k in [1.0, 4.0, 25.0] {
            let system = undamped(k);
            for h in [0.001, 0.01, 0.1, 0.5] {
                let factor = 1.0 + k * h * h;
                let mut state = START;
                for _ in 0..20 {
                    let before = system.energy(&state);
                    state = explicit_euler(state, h, &mut |x, v| system.acceleration(x, v));
                    let after = system.energy(&state);
                    let relative = (after / before - factor).abs() / factor;
                    assert!(
                        relative < 1e-12,
                        "k={k} h={h}: {after}/{before} vs {factor}"
                    );
                }
            }
        }
    }

    #[test]
    fn semi_implicit_euler_bounded_below_omega_h_two() {
        // Semi-implicit Euler conserves Q = ½|v|² + ½ω²|x|² − ½ω²h x·v
        // exactly. In the scaled variables (ωx, v), Q/E lies in
        // [1 − ωh/2, 1 + ωh/2], so the energy E stays within the factor
        // (1 + ωh/2)/(1 − ωh/2) of itself over the whole run.
        let omega = 2.0;
        let system = undamped(omega * omega);
        for omega_h in [0.5, 1.0, 1.9] {
            let h = omega_h / omega;
            let modified =
                |s: &State| system.energy(s) - 0.5 * omega * omega * h * s.position.dot(s.velocity);
            let bound = (1.0 + omega_h / 2.0) / (1.0 - omega_h / 2.0);
            let q0 = modified(&START);
            let (mut min, mut max) = (f64::INFINITY, 0.0_f64);
            let mut state = START;
            for _ in 0..10_000 {
                state = semi_implicit_euler(state, h, &mut |x, v| system.acceleration(x, v));
                let e = system.energy(&state);
                min = min.min(e);
                max = max.max(e);
                assert!(((modified(&state) - q0) / q0).abs() < 1e-9, "ωh={omega_h}");
            }
            assert!(
                max / min <= bound * (1.0 + 1e-9),
                "ωh={omega_h}: {max}/{min} > {bound}"
            );
        }
    }

    #[test]
    fn semi_implicit_euler_diverges_above_omega_h_two() {
        // Beyond ωh = 2 the step matrix has a real eigenvalue below −1
        // (≈ −1.88 at ωh = 2.1): energy grows ≈ 3.5× per step.
        let omega = 2.0;
        let system = undamped(omega * omega);
        let h = 2.1 / omega;
        let e0 = system.energy(&START);
        let end = run(Integrator::SemiImplicitEuler, system, START, h, 100);
        assert!(end.is_finite());
        assert!(system.energy(&end) > 1e6 * e0);
    }

    /// The global error at `T` for steps h, h/2, h/4, against the exact
    /// motion of a damped spring with gravity.
    fn errors(integrator: Integrator, h: f64) -> [f64; 3] {
        let system = SpringSystem::new(4.0, 0.6, DVec2::new(0.0, -9.81));
        let exact = ExactMotion::new(system, START, 0.0).expect("underdamped");
        let total_time = 2.0;
        let mut out = [0.0; 3];
        for (i, error) in out.iter_mut().enumerate() {
            let divisions = 1 << i;
            let steps = (total_time / h).round() as usize * divisions;
            let step = h / divisions as f64;
            let end = run(integrator, system, START, step, steps);
            *error = distance(end, exact.state_at(total_time));
        }
        out
    }

    /// Halving `h` divides the error at a fixed time by `2^order`: the
    /// ratio of successive errors must lie in `expected`.
    fn assert_convergence(integrators: [Integrator; 2], h: f64, expected: RangeInclusive<f64>) {
        for integrator in integrators {
            let [e1, e2, e4] = errors(integrator, h);
            for ratio in [e1 / e2, e2 / e4] {
                assert!(expected.contains(&ratio), "{integrator}: {ratio}");
            }
        }
    }

    #[test]
    fn euler_pair_converges_at_first_order() {
        let pair = [Integrator::ExplicitEuler, Integrator::SemiImplicitEuler];
        assert_convergence(pair, 0.002, 1.7..=2.3);
    }

    #[test]
    fn verlet_and_rk2_converge_at_second_order() {
        let pair = [Integrator::VelocityVerlet, Integrator::Rk2Midpoint];
        assert_convergence(pair, 0.01, 3.4..=4.6);
    }

    #[test]
    fn force_evaluation_counts() {
        let system = SpringSystem::new(4.0, 0.3, DVec2::new(0.0, -9.81));
        for integrator in Integrator::ALL {
            let calls = Cell::new(0_usize);
            let mut accel = |x, v| {
                calls.set(calls.get() + 1);
                system.acceleration(x, v)
            };
            let mut state = START;
            for _ in 0..10 {
                state = integrator.step(state, 0.01, &mut accel);
            }
            let expected = match integrator {
                Integrator::ExplicitEuler | Integrator::SemiImplicitEuler => 1,
                Integrator::VelocityVerlet | Integrator::Rk2Midpoint => 2,
            };
            assert_eq!(calls.get(), 10 * expected, "{integrator}");
            assert_eq!(integrator.evaluations_per_step(), expected);
        }
    }

    #[test]
    fn rk2_energy_drifts_upwards_over_a_long_run() {
        // In the scaled variables (ωx, v) an RK2 step is the matrix
        // (1 − z²/2)·I + z·J with z = ωh, J a quarter turn: it scales the
        // energy by exactly (1 − z²/2)² + z² = 1 + z⁴/4 every step.
        let omega = 2.0;
        let z = 0.2;
        let (system, h, steps) = (undamped(omega * omega), z / omega, 100_000);
        let factor = 1.0 + z.powi(4) / 4.0;
        let mut state = START;
        let mut energy = system.energy(&state);
        let e0 = energy;
        for _ in 0..steps {
            state = rk2_midpoint(state, h, &mut |x, v| system.acceleration(x, v));
            let next = system.energy(&state);
            assert!(next > energy, "energy must grow every step");
            energy = next;
        }
        let expected = factor.powi(steps);
        assert!(energy / e0 > 1e10);
        assert!(((energy / e0) / expected - 1.0).abs() < 1e-8);
    }

    #[test]
    fn verlet_energy_bounded_without_trend_over_a_long_run() {
        // Velocity Verlet conserves Q = ½|v|² + ½ω²(1 − z²/4)|x|² exactly
        // (z = ωh): in the variables (ω√(1 − z²/4)·x, v) its step is a
        // rotation. Hence E/Q ∈ [1, 1/(1 − z²/4)]: bounded, no trend.
        let omega = 2.0;
        let z = 0.2;
        let (system, h) = (undamped(omega * omega), z / omega);
        let shrink = 1.0 - z * z / 4.0;
        let modified = |s: &State| {
            0.5 * s.velocity.length_squared()
                + 0.5 * omega * omega * shrink * s.position.length_squared()
        };
        let e0 = system.energy(&START);
        let q0 = modified(&START);
        let (mut min, mut max) = (f64::INFINITY, 0.0_f64);
        let mut state = START;
        for _ in 0..100_000 {
            state = velocity_verlet(state, h, &mut |x, v| system.acceleration(x, v));
            let e = system.energy(&state);
            min = min.min(e);
            max = max.max(e);
        }
        assert!(max / min <= (1.0 / shrink) * (1.0 + 1e-9), "{max}/{min}");
        assert!((max - e0).abs() / e0 <= z * z / 4.0 / shrink + 1e-9);
        assert!((min - e0).abs() / e0 <= z * z / 4.0 / shrink + 1e-9);
        // No trend: the conserved quantity is still where it started.
        assert!(((modified(&state) - q0) / q0).abs() < 1e-9);
    }

    #[test]
    fn exact_motion_matches_reference_and_satisfies_the_ode() {
        let system = SpringSystem::new(4.0, 0.6, DVec2::new(0.3, -9.81));
        let t0 = 0.7;
        let exact = ExactMotion::new(system, START, t0).expect("underdamped");
        let at_t0 = exact.state_at(t0);
        assert!(distance(at_t0, START) < 1e-14);
        let dt = 1e-5;
        for t in [-1.0, 0.0, 0.7, 1.3, 2.5, 6.0] {
            let s = exact.state_at(t);
            let (before, after) = (exact.state_at(t - dt), exact.state_at(t + dt));
            // Central differences have O(dt²) truncation and O(ε/dt)
            // round-off error: well under 1e-6 here.
            let dx = (after.position - before.position) / (2.0 * dt);
            let dv = (after.velocity - before.velocity) / (2.0 * dt);
            assert!((dx - s.velocity).length() < 1e-6, "t={t}");
            let a = system.acceleration(s.position, s.velocity);
            assert!((dv - a).length() < 1e-6, "t={t}: {dv} vs {a}");
        }
        // Damped: settles at the rest point.
        let late = exact.state_at(t0 + 100.0);
        assert!((late.position - system.rest_point()).length() < 1e-9);
        assert!(late.velocity.length() < 1e-9);
    }

    #[test]
    fn exact_motion_undamped_conserves_energy_and_has_period_two_pi_over_omega() {
        let system = SpringSystem::new(9.0, 0.0, DVec2::new(0.0, -9.81));
        let exact = ExactMotion::new(system, START, 0.0).expect("undamped");
        let e0 = system.energy(&START);
        for t in [0.1, 1.0, 10.0, 100.0] {
            let e = system.energy(&exact.state_at(t));
            assert!(((e - e0) / e0).abs() < 1e-12);
        }
        let period = 2.0 * core::f64::consts::PI / 3.0;
        assert!(distance(exact.state_at(period), START) < 1e-12);
    }

    #[test]
    fn exact_motion_rejects_bad_systems() {
        let g = DVec2::new(0.0, -9.81);
        let reject = |system: SpringSystem, state: State, t0: f64| {
            ExactMotion::new(system, state, t0).expect_err("should be rejected")
        };
        for k in [0.0, -1.0, f64::NAN, f64::INFINITY] {
            let error = reject(SpringSystem::new(k, 0.0, g), START, 0.0);
            assert!(
                matches!(error, ExactMotionError::InvalidStiffness { .. }),
                "{error}"
            );
        }
        for c in [-0.1, f64::NAN, f64::INFINITY] {
            let error = reject(SpringSystem::new(4.0, c, g), START, 0.0);
            assert!(
                matches!(error, ExactMotionError::InvalidDrag { .. }),
                "{error}"
            );
        }
        // k = 4: critical drag 2√k = 4.
        for c in [4.0, 4.5, 100.0] {
            let error = reject(SpringSystem::new(4.0, c, g), START, 0.0);
            assert_eq!(
                error,
                ExactMotionError::NotUnderdamped {
                    drag: c,
                    critical_drag: 4.0
                }
            );
        }
        assert!(ExactMotion::new(SpringSystem::new(4.0, 3.99, g), START, 0.0).is_ok());
        let error = reject(
            SpringSystem::new(4.0, 0.0, DVec2::new(f64::NAN, 0.0)),
            START,
            0.0,
        );
        assert!(
            matches!(error, ExactMotionError::InvalidGravity { .. }),
            "{error}"
        );
        let bad = State::new(DVec2::new(f64::INFINITY, 0.0), DVec2::ZERO);
        let error = reject(SpringSystem::new(4.0, 0.0, g), bad, 0.0);
        assert!(
            matches!(error, ExactMotionError::NonFiniteReference { .. }),
            "{error}"
        );
        let error = reject(SpringSystem::new(4.0, 0.0, g), START, f64::NAN);
        assert!(
            matches!(error, ExactMotionError::NonFiniteReference { .. }),
            "{error}"
        );
    }

    #[test]
    fn from_str_accepts_the_five_spellings_and_rejects_garbage() {
        let cases = [
            ("euler", Integrator::ExplicitEuler),
            ("explicit-euler", Integrator::ExplicitEuler),
            ("semi-implicit", Integrator::SemiImplicitEuler),
            ("verlet", Integrator::VelocityVerlet),
            ("rk2", Integrator::Rk2Midpoint),
            (" RK2 ", Integrator::Rk2Midpoint),
        ];
        for (text, expected) in cases {
            assert_eq!(text.parse::<Integrator>(), Ok(expected), "{text:?}");
        }
        for garbage in ["", "rk4", "semi implicit", "euler!", "verletx"] {
            let error = garbage.parse::<Integrator>().expect_err(garbage);
            assert_eq!(error.input(), garbage);
            assert!(error.to_string().contains("explicit-euler"));
        }
    }

    #[test]
    fn names_are_distinct_and_display_matches() {
        for (i, a) in Integrator::ALL.iter().enumerate() {
            assert_eq!(a.to_string(), a.name());
            for b in &Integrator::ALL[i + 1..] {
                assert_ne!(a.name(), b.name());
            }
        }
    }
}

//! The simulation, shared by the window and the headless runs: the settings,
//! one method's run against its exact motion ([`Lab`]), and the four side
//! by side ([`Race`]).

use bevy::math::DVec2;
use bevy_euler_physics::integrators::{ExactMotion, Integrator, SpringSystem, State};

/// Where every run starts.
pub const START: State = State::new(DVec2::new(3.0, 0.0), DVec2::new(0.0, 4.0));

/// What the lab is running: method, step and system.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Settings {
    pub method: Integrator,
    /// The step, in seconds of simulated time.
    pub dt: f64,
    /// `k`; 0 is a projectile (gravity alone).
    pub stiffness: f64,
    /// `c`.
    pub drag: f64,
    /// `G`: gravity is `(0, −G)`; 0 is off.
    pub gravity: f64,
}

impl Default for Settings {
    fn default() -> Self {
        Self {
            method: Integrator::SemiImplicitEuler,
            dt: 0.1,
            stiffness: 4.0,
            drag: 0.0,
            gravity: 0.0,
        }
    }
}

impl Settings {
    pub fn system(&self) -> SpringSystem {
        SpringSystem::new(self.stiffness, self.drag, DVec2::new(0.0, -self.gravity))
    }

    /// Whether there is no spring: a projectile under gravity alone.
    pub fn projectile(&self) -> bool {
        self.stiffness == 0.0
    }
}

/// The closed-form motion a run is measured against: the underdamped
/// spring's [`ExactMotion`], or, with stiffness 0 and no drag, the
/// projectile `x(t) = x₀ + v₀·τ + ½·g·τ²` (`τ = t − t₀`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Exact {
    Spring(ExactMotion),
    Projectile {
        reference: State,
        t0: f64,
        gravity: DVec2,
    },
}

impl Exact {
    /// The exact motion of `system` through `reference` at `t0`, or why
    /// there is none.
    pub fn new(system: SpringSystem, reference: State, t0: f64) -> Result<Self, String> {
        if system.stiffness != 0.0 {
            return ExactMotion::new(system, reference, t0)
                .map(Exact::Spring)
                .map_err(|e| e.to_string());
        }
        if system.drag != 0.0 {
            return Err(format!(
                "drag {} needs a spring: with stiffness 0 (a projectile) the drag must be 0",
                system.drag
            ));
        }
        if !system.gravity.is_finite() {
            return Err(format!("gravity must be finite, got {}", system.gravity));
        }
        if !reference.is_finite() || !t0.is_finite() {
            return Err("the reference state must be finite".to_owned());
        }
        Ok(Exact::Projectile {
            reference,
            t0,
            gravity: system.gravity,
        })
    }

    /// The state at time `t`.
    pub fn state_at(&self, t: f64) -> State {
        match *self {
            Exact::Spring(exact) => exact.state_at(t),
            Exact::Projectile {
                reference,
                t0,
                gravity,
            } => {
                let tau = t - t0;
                State::new(
                    reference.position + tau * reference.velocity + (0.5 * tau * tau) * gravity,
                    reference.velocity + tau * gravity,
                )
            }
        }
    }

    /// When the exact motion was measured.
    pub fn reference_time(&self) -> f64 {
        match self {
            Exact::Spring(exact) => exact.reference().1,
            Exact::Projectile { t0, .. } => *t0,
        }
    }
}

/// What the lab reports about the current state.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Readouts {
    pub time: f64,
    /// Kinetic + spring + gravitational energy.
    pub energy: f64,
    /// Energy minus the exact motion's energy at the same time, in percent
    /// of the energy when the exact motion was measured.
    pub drift_percent: f64,
    /// Distance from the exact position.
    pub error: f64,
    /// `|v|`.
    pub speed: f64,
}

/// One mass on one spring, stepped with [`Settings::method`] and measured
/// against [`Exact`].
#[derive(Debug, Clone)]
pub struct Lab {
    pub settings: Settings,
    pub state: State,
    /// The time when the settings last changed; the time now is this plus
    /// `steps · dt` (no round-off accumulates from adding `dt` up).
    pub time_base: f64,
    /// Steps since `time_base`.
    pub steps: u64,
    /// The exact motion through the state at the last (re)measure.
    pub exact: Exact,
    /// The energy at the last (re)measure: what the drift is relative to.
    pub reference_energy: f64,
}

impl Lab {
    /// The default start, stepped with `settings`; fails if the exact motion
    /// cannot follow them.
    pub fn new(settings: Settings) -> Result<Self, String> {
        let exact = Exact::new(settings.system(), START, 0.0)?;
        Ok(Self {
            settings,
            state: START,
            time_base: 0.0,
            steps: 0,
            exact,
            reference_energy: settings.system().energy(&START),
        })
    }

    pub fn time(&self) -> f64 {
        self.time_base + self.steps as f64 * self.settings.dt
    }

    /// One step of `dt`.
    pub fn step(&mut self) {
        let system = self.settings.system();
        self.state = self
            .settings
            .method
            .step(self.state, self.settings.dt, &mut |x, v| {
                system.acceleration(x, v)
            });
        self.steps += 1;
    }

    /// Switches to `settings` from the current state and time, measuring the
    /// exact motion afresh; if that fails, nothing changes.
    pub fn change(&mut self, settings: Settings) -> Result<(), String> {
        let time = self.time();
        let exact = Exact::new(settings.system(), self.state, time)?;
        self.settings = settings;
        self.time_base = time;
        self.steps = 0;
        self.exact = exact;
        self.reference_energy = settings.system().energy(&self.state);
        Ok(())
    }

    /// The state the exact motion is in now.
    pub fn exact_state(&self) -> State {
        self.exact.state_at(self.time())
    }

    /// Whether the state is no longer finite or has flown far away.
    pub fn blown_up(&self) -> bool {
        !self.state.is_finite() || self.state.position.length() > 1.0e4
    }

    pub fn readouts(&self) -> Readouts {
        let system = self.settings.system();
        let exact = self.exact_state();
        let energy = system.energy(&self.state);
        let exact_energy = system.energy(&exact);
        Readouts {
            time: self.time(),
            energy,
            // Not finite if the reference energy is zero: shown as "n/a".
            drift_percent: 100.0 * (energy - exact_energy) / self.reference_energy.abs(),
            error: (self.state.position - exact.position).length(),
            speed: self.state.velocity.length(),
        }
    }

    /// The same lab (state, time, exact motion) stepped with `method`.
    pub fn with_method(&self, method: Integrator) -> Self {
        let mut lab = self.clone();
        lab.settings.method = method;
        lab
    }
}

/// Where `method`'s run is in [`Race::labs`]: the order of
/// [`Integrator::ALL`].
pub const fn slot(method: Integrator) -> usize {
    match method {
        Integrator::ExplicitEuler => 0,
        Integrator::SemiImplicitEuler => 1,
        Integrator::VelocityVerlet => 2,
        Integrator::Rk2Midpoint => 3,
    }
}

/// How `--method` names `method`.
pub const fn cli_name(method: Integrator) -> &'static str {
    match method {
        Integrator::ExplicitEuler => "euler",
        Integrator::SemiImplicitEuler => "semi-implicit",
        Integrator::VelocityVerlet => "verlet",
        Integrator::Rk2Midpoint => "rk2",
    }
}

/// The four methods side by side: four [`Lab`]s with the same system, step,
/// start and exact motion, stepped together. One of them is *shown*: the
/// window draws it, and a settings change restarts all four from its state.
#[derive(Debug, Clone)]
pub struct Race {
    /// One run per method, in the order of [`Integrator::ALL`].
    pub labs: [Lab; 4],
    pub shown: Integrator,
}

impl Race {
    /// The four runs from the default start with `settings`, showing
    /// `settings.method`; fails if the exact motion cannot follow them.
    pub fn new(settings: Settings) -> Result<Self, String> {
        let lab = Lab::new(settings)?;
        Ok(Self::from_lab(&lab))
    }

    /// All four from `lab`'s state, time and exact motion, showing `lab`'s
    /// method.
    pub fn from_lab(lab: &Lab) -> Self {
        Self {
            labs: Integrator::ALL.map(|method| lab.with_method(method)),
            shown: lab.settings.method,
        }
    }

    pub fn lab(&self, method: Integrator) -> &Lab {
        &self.labs[slot(method)]
    }

    pub fn shown(&self) -> &Lab {
        self.lab(self.shown)
    }

    /// The shown run's settings (the others differ only in the method).
    pub fn settings(&self) -> Settings {
        Settings {
            method: self.shown,
            ..self.shown().settings
        }
    }

    /// The shown run's time (a run that blew up stopped earlier).
    pub fn time(&self) -> f64 {
        self.shown().time()
    }

    /// One step of `dt` for every run that has not blown up.
    pub fn step(&mut self) {
        for lab in &mut self.labs {
            if !lab.blown_up() {
                lab.step();
            }
        }
    }

    /// Switches to `settings`: measures the exact motion afresh from the
    /// shown run's state and time and restarts all four runs from there,
    /// then shows `settings.method`. If the exact motion cannot follow,
    /// nothing changes.
    pub fn change(&mut self, settings: Settings) -> Result<(), String> {
        let mut lab = self.shown().clone();
        lab.change(settings)?;
        *self = Self::from_lab(&lab);
        Ok(())
    }
}

//! The trace: one step of a method taken apart into the events it does, in
//! its order.
//!
//! - `force`: the pulls at a place, `a = accel(x, v)`;
//! - `accelerate`: the kick, `v ← v + τ·a`;
//! - `move`: the step along a velocity, `x ← x + τ·v`;
//! - `energy`: the lab's audit of the step's end against the exact motion.
//!
//! Explicit Euler traces force, move, accelerate, energy; semi-implicit
//! Euler force, accelerate, move, energy; velocity Verlet force, move,
//! force, accelerate, energy (it measures the force twice, and its two half
//! kicks are one velocity update in the code); RK2 midpoint force, move,
//! accelerate (to the midpoint), force (there), move, accelerate (the full
//! step from the start with the midpoint's velocity and force), energy.
//!
//! The step itself is the library's ([`Integrator::step`]): the force
//! events are its own calls of the acceleration, recorded as it makes them.
//! The move and accelerate events are worked out between them with the same
//! arithmetic as `src/integrators.rs`; [`Trace::matches`] says whether they
//! end where the library's step did (the tests hold them to it, bit for
//! bit). Each event names the line of `src/integrators.rs` that does it
//! (`crate::code`).

use bevy::math::DVec2;
use bevy_euler_physics::integrators::{Integrator, State};

use crate::state::Lab;

/// What an event does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Force,
    Accelerate,
    Move,
    Energy,
}

impl Kind {
    /// As `--trace` prints it.
    pub const fn name(self) -> &'static str {
        match self {
            Kind::Force => "force",
            Kind::Accelerate => "accelerate",
            Kind::Move => "move",
            Kind::Energy => "energy",
        }
    }
}

/// One event of a step, with the values it used and made.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Event {
    /// The acceleration `accel` measured at `position` with `velocity`.
    Force {
        position: DVec2,
        velocity: DVec2,
        accel: DVec2,
    },
    /// The velocity from `from` to `to` by `accel` over `tau` seconds.
    Accelerate {
        from: DVec2,
        to: DVec2,
        accel: DVec2,
        tau: f64,
    },
    /// The position from `from` to `to` along `velocity` over `tau` seconds
    /// (and `(τ²/2)·accel` more, for Verlet's Taylor step).
    Move {
        from: DVec2,
        to: DVec2,
        velocity: DVec2,
        tau: f64,
    },
    /// The step's end against the exact motion at the same time.
    Energy {
        state: State,
        exact: State,
        energy: f64,
        exact_energy: f64,
        drift_percent: f64,
        error: f64,
    },
}

impl Event {
    pub const fn kind(&self) -> Kind {
        match self {
            Event::Force { .. } => Kind::Force,
            Event::Accelerate { .. } => Kind::Accelerate,
            Event::Move { .. } => Kind::Move,
            Event::Energy { .. } => Kind::Energy,
        }
    }
}

/// One step of one method, as events.
#[derive(Debug, Clone, PartialEq)]
pub struct Trace {
    pub method: Integrator,
    /// The step's start.
    pub start: State,
    pub events: Vec<Event>,
    /// The library's step's end.
    pub end: State,
    /// Whether the events' last move and kick end at the library's end.
    pub matches: bool,
}

impl Trace {
    /// Where the mass is after events `0..=index`: the start with each move
    /// and kick so far applied.
    pub fn state_after(&self, index: usize) -> State {
        let mut state = self.start;
        for event in self.events.iter().take(index + 1) {
            match *event {
                Event::Move { to, .. } => state.position = to,
                Event::Accelerate { to, .. } => state.velocity = to,
                Event::Force { .. } | Event::Energy { .. } => {}
            }
        }
        state
    }
}

/// The step `lab` takes next, traced; `lab` is not changed.
pub fn trace_step(lab: &Lab) -> Trace {
    let method = lab.settings.method;
    let system = lab.settings.system();
    let h = lab.settings.dt;
    let start = lab.state;
    let mut forces = Vec::new();
    let end = method.step(start, h, &mut |position, velocity| {
        let accel = system.acceleration(position, velocity);
        forces.push((position, velocity, accel));
        accel
    });
    let mut events: Vec<Event> = Vec::new();
    let force = |events: &mut Vec<Event>, i: usize| -> DVec2 {
        let (position, velocity, accel) = forces[i];
        events.push(Event::Force {
            position,
            velocity,
            accel,
        });
        accel
    };
    let (x, v) = (start.position, start.velocity);
    let (position, velocity) = match method {
        Integrator::ExplicitEuler => {
            let a = force(&mut events, 0);
            let position = moved(&mut events, x, x + h * v, v, h);
            let velocity = kicked(&mut events, v, v + h * a, a, h);
            (position, velocity)
        }
        Integrator::SemiImplicitEuler => {
            let a = force(&mut events, 0);
            let velocity = kicked(&mut events, v, v + h * a, a, h);
            let position = moved(&mut events, x, x + h * velocity, velocity, h);
            (position, velocity)
        }
        Integrator::VelocityVerlet => {
            let a0 = force(&mut events, 0);
            let position = moved(&mut events, x, x + h * v + (0.5 * h * h) * a0, v, h);
            let a1 = force(&mut events, 1);
            let velocity = kicked(&mut events, v, v + (0.5 * h) * (a0 + a1), a0 + a1, 0.5 * h);
            (position, velocity)
        }
        Integrator::Rk2Midpoint => {
            let a = force(&mut events, 0);
            let _mid_position = moved(&mut events, x, x + (0.5 * h) * v, v, 0.5 * h);
            let mid_velocity = kicked(&mut events, v, v + (0.5 * h) * a, a, 0.5 * h);
            let mid_accel = force(&mut events, 1);
            let position = moved(&mut events, x, x + h * mid_velocity, mid_velocity, h);
            let velocity = kicked(&mut events, v, v + h * mid_accel, mid_accel, h);
            (position, velocity)
        }
    };
    let matches = position == end.position && velocity == end.velocity;
    let mut after = lab.clone();
    after.state = end;
    after.steps += 1;
    let readouts = after.readouts();
    events.push(Event::Energy {
        state: end,
        exact: after.exact_state(),
        energy: readouts.energy,
        exact_energy: lab.settings.system().energy(&after.exact_state()),
        drift_percent: readouts.drift_percent,
        error: readouts.error,
    });
    Trace {
        method,
        start,
        events,
        end,
        matches,
    }
}

fn moved(events: &mut Vec<Event>, from: DVec2, to: DVec2, velocity: DVec2, tau: f64) -> DVec2 {
    events.push(Event::Move {
        from,
        to,
        velocity,
        tau,
    });
    to
}

fn kicked(events: &mut Vec<Event>, from: DVec2, to: DVec2, accel: DVec2, tau: f64) -> DVec2 {
    events.push(Event::Accelerate {
        from,
        to,
        accel,
        tau,
    });
    to
}

/// What each event of `method` does, in plain English, in the order of
/// its trace (the narration beside the code).
pub fn narration(method: Integrator) -> &'static [&'static str] {
    match method {
        Integrator::ExplicitEuler => &[
            "Measure the pull where the mass is now: the spring, drag and gravity give a.",
            "Move along the OLD velocity: x + h·v. The kick has not happened yet.",
            "Kick the velocity with the force measured at the old place: v + h·a.",
            "Audit: energy against the exact motion. Each step multiplies it by 1 + ω²h²: \
             explicit Euler always gains.",
        ],
        Integrator::SemiImplicitEuler => &[
            "Measure the pull where the mass is now.",
            "Kick first: the velocity becomes v + h·a.",
            "Then move along the NEW velocity: x + h·v'. This order is what keeps the \
             orbit closed.",
            "Audit: the energy wobbles within (1 + ωh/2)/(1 − ωh/2) of the exact one while \
             ω·h < 2; it never drifts away.",
        ],
        Integrator::VelocityVerlet => &[
            "Measure the pull a₀ at the start.",
            "Move by a Taylor step: x + h·v + h²/2·a₀.",
            "Measure the pull again, a₁, at the NEW place (with the velocity predicted \
             by v + h·a₀, which only drag reads).",
            "Kick with the average of both pulls: v + h/2·(a₀ + a₁), the two half kicks \
             in one line.",
            "Audit: the error is O(h²) and the energy does not drift.",
        ],
        Integrator::Rk2Midpoint => &[
            "Measure the slope at the start: a.",
            "Trial move half a step to the midpoint: x + h/2·v.",
            "Trial kick half a step: the midpoint's velocity v + h/2·a.",
            "Measure the pull at the midpoint: aₘ.",
            "The real move: the whole step from the START with the midpoint's velocity.",
            "The real kick: the whole step from the start with the midpoint's pull.",
            "Audit: second order, but not symplectic: the energy creeps up by \
             1 + (ωh)⁴/4 a step.",
        ],
    }
}

//! Drawing bodies between fixed steps.
//!
//! The simulation advances in fixed steps; frames come when they come. Each
//! frame, [`InterpolationSystems::Interpolate`](crate::InterpolationSystems::Interpolate) sets
//! `Transform::translation` to `lerp(previous, current, α)` where `previous`
//! ([`PositionHistory`]) and `current` ([`Body::position`]) are the body's
//! positions at the start and end of the last fixed step and
//! `α = Time<Fixed>::overstep_fraction()` is how far the clock has run into
//! the next step. The picture therefore lags the simulation by up to one
//! step and moves smoothly whether a frame ran zero, one or several steps
//! ("Fix Your Timestep!", G. Fiedler). The accumulator, and the clamp on
//! long frames (`Time<Virtual>::max_delta`), are Bevy's.
//!
//! A body your code moved after the last step ended is drawn where it is
//! (a teleport, with no streak). The step's end is a change tick, so the
//! step writes 12 bytes of history per body and no position twice; see
//! [`DrawnPositions`].

use bevy::ecs::change_detection::Tick;
use bevy::ecs::system::{SystemChangeTick, SystemParam};
use bevy::prelude::*;

use crate::data::body::Body;
pub use crate::data::drawing::{PositionHistory, TransformSyncDisabled};
use crate::data::islands::Sleeping;
use crate::data::requests::{AnchorAsleep, BodyIndex};
use crate::data::settings::{PhysicsSettings, PhysicsStep};
use crate::solver::SolverState;
use crate::solver::par::for_each_maybe_par;

/// The bodies the plugin draws: awake, and not drawn by the user.
type Drawn = (
    Without<TransformSyncDisabled>,
    Without<Sleeping>,
    Without<AnchorAsleep>,
);

/// Where to draw bodies this frame: between the start and the end of the
/// last fixed step, at `Time<Fixed>::overstep_fraction()`; or, for a body
/// your code moved since that step ended (a teleport), where it is, with no
/// streak. [`InterpolationSystems::Interpolate`](crate::InterpolationSystems::Interpolate) draws
/// every body's `Transform` this way; use this to draw a body yourself.
///
/// It reads every body's [`Body`] and [`PositionHistory`], so a system
/// that also writes bodies needs a `ParamSet` of the two.
///
/// # Example
///
/// ```
/// use bevy::prelude::*;
/// use bevy_euler_physics::prelude::*;
///
/// #[derive(Component)]
/// struct Marker(Entity);
///
/// fn place_markers(drawn: DrawnPositions, mut markers: Query<(&Marker, &mut Transform)>) {
///     for (marker, mut transform) in &mut markers {
///         if let Some(position) = drawn.get(marker.0) {
///             transform.translation = position;
///         }
///     }
/// }
/// # App::new().add_systems(Update, place_markers);
/// ```
#[derive(SystemParam)]
pub struct DrawnPositions<'w, 's> {
    time: Res<'w, Time<Fixed>>,
    settings: Res<'w, PhysicsSettings>,
    step: Res<'w, PhysicsStep>,
    solver: Res<'w, SolverState>,
    bodies: Query<
        'w,
        's,
        (
            Ref<'static, Body>,
            &'static PositionHistory,
            &'static BodyIndex,
        ),
    >,
    ticks: SystemChangeTick,
}

impl DrawnPositions<'_, '_> {
    /// How far between the last two fixed positions bodies are drawn: the
    /// overstep fraction of `Time<Fixed>`, or 1 (the last position) when
    /// [`PhysicsSettings::interpolate`] is off.
    pub fn alpha(&self) -> f32 {
        alpha(&self.time, &self.settings)
    }

    /// Where to draw `entity`; `None` if it is not a body.
    pub fn get(&self, entity: Entity) -> Option<Vec3> {
        let (body, history, index) = self.bodies.get(entity).ok()?;
        let ended = (self.step.ended, self.ticks.this_run());
        Some(drawn(
            &self.solver,
            ended,
            (&body, history, index),
            self.alpha(),
        ))
    }
}

/// See [`DrawnPositions::alpha`].
fn alpha(time: &Time<Fixed>, settings: &PhysicsSettings) -> f32 {
    if settings.interpolate {
        time.overstep_fraction()
    } else {
        1.0
    }
}

/// Where to draw a body at `alpha`. A teleport is a body whose `Body`
/// changed after the last step ended (`ended`: that tick, and this
/// system's) to another position than the step left in its slot (a write of
/// the velocity alone is no teleport).
#[inline]
fn drawn(
    solver: &SolverState,
    (ended, now): (Tick, Tick),
    (body, history, index): (&Ref<Body>, &PositionHistory, &BodyIndex),
    alpha: f32,
) -> Vec3 {
    if body.last_changed().is_newer_than(ended, now)
        && solver
            .pos
            .get(index.slot as usize)
            .map(|&end| Vec3::from(end))
            != Some(body.position)
    {
        body.position
    } else {
        history.previous.lerp(body.position, alpha)
    }
}

/// [`InterpolationSystems::Interpolate`](crate::InterpolationSystems::Interpolate).
pub(crate) fn interpolate(
    time: Res<Time<Fixed>>,
    settings: Res<PhysicsSettings>,
    step: Res<PhysicsStep>,
    solver: Res<SolverState>,
    ticks: SystemChangeTick,
    mut bodies: Query<(Ref<Body>, &PositionHistory, &BodyIndex, &mut Transform), Drawn>,
) {
    let alpha = alpha(&time, &settings);
    let ended = (step.ended, ticks.this_run());
    let solver = &*solver;
    let parallel = solver.len() >= settings.parallel_threshold;
    for_each_maybe_par!(bodies, parallel, |(body, history, index, mut transform)| {
        let position = drawn(solver, ended, (&body, history, index), alpha);
        if position.is_finite() && transform.translation != position {
            transform.translation = position;
        }
    });
}

//! Drawing bodies between fixed steps.
//!
//! The simulation advances in fixed steps; frames come when they come. Each
//! frame, [`PhysicsSystems::Interpolate`](crate::PhysicsSystems) sets
//! `Transform::translation` to `lerp(previous, current, α)` where `previous`
//! and `current` are the body's positions at the start and end of the last
//! fixed step and `α = Time<Fixed>::overstep_fraction()` is how far the clock
//! has run into the next step. The picture therefore lags the simulation by
//! up to one step and moves smoothly whether a frame ran zero, one or
//! several steps ("Fix Your Timestep!", G. Fiedler). The accumulator, and
//! the clamp on long frames (`Time<Virtual>::max_delta`), are Bevy's.

use bevy::prelude::*;

use crate::islands::Sleeping;
use crate::solver::AnchorAsleep;

/// The bodies the plugin draws: awake, and not drawn by the user.
type Drawn = (
    Without<TransformSyncDisabled>,
    Without<Sleeping>,
    Without<AnchorAsleep>,
);

use crate::body::Body;
use crate::schedule::PhysicsSettings;
use crate::solver::SolverState;

/// Where a body was at the start and at the end of the last fixed step.
///
/// Every [`Body`] has one. Read it to draw a body yourself (see
/// [`TransformSyncDisabled`]).
///
/// # Example
///
/// ```
/// use bevy::prelude::*;
/// use bevy_euler_physics::prelude::*;
///
/// #[derive(Component)]
/// struct Marker(Vec3);
///
/// fn place_markers(time: Res<Time<Fixed>>, mut bodies: Query<(&Body, &PositionHistory, &mut Marker)>) {
///     let alpha = time.overstep_fraction();
///     for (body, history, mut marker) in &mut bodies {
///         marker.0 = history.drawn_position(body, alpha);
///     }
/// }
/// # App::new().add_systems(Update, place_markers);
/// ```
#[derive(Component, Reflect, Debug, Clone, Copy, PartialEq, Default)]
#[reflect(Component, Default, Debug, PartialEq, Clone)]
pub struct PositionHistory {
    pub(crate) previous: Vec3,
    pub(crate) current: Vec3,
}

impl PositionHistory {
    /// A history that has always been at `position`.
    pub(crate) fn at(position: Vec3) -> Self {
        Self {
            previous: position,
            current: position,
        }
    }

    /// The position at the start of the last fixed step.
    pub fn previous(&self) -> Vec3 {
        self.previous
    }

    /// The position at the end of the last fixed step.
    pub fn current(&self) -> Vec3 {
        self.current
    }

    /// Where to draw `body` at overstep fraction `alpha`: between the last
    /// two fixed positions, or at `body.position` if your code moved it
    /// since the last fixed step (a teleport: no streak).
    ///
    /// ```
    /// # use bevy::prelude::*;
    /// # use bevy_euler_physics::prelude::*;
    /// let body = Body::new(1.0);
    /// let history = PositionHistory::default();
    /// assert_eq!(history.drawn_position(&body, 0.5), Vec3::ZERO);
    /// let moved = body.with_position(Vec3::X);
    /// assert_eq!(history.drawn_position(&moved, 0.5), Vec3::X);
    /// ```
    pub fn drawn_position(&self, body: &Body, alpha: f32) -> Vec3 {
        if body.position == self.current {
            self.previous.lerp(self.current, alpha)
        } else {
            body.position
        }
    }
}

/// Keeps the plugin's hands off this entity's [`Transform`]: for bodies you
/// draw yourself (with [`PositionHistory::drawn_position`], say), or whose
/// transform belongs to something else.
///
/// # Example
///
/// ```
/// use bevy::prelude::*;
/// use bevy_euler_physics::prelude::*;
///
/// fn setup(mut commands: Commands) {
///     commands.spawn((Body::new(1.0), TransformSyncDisabled));
/// }
/// # App::new().add_systems(Startup, setup);
/// ```
#[derive(Component, Reflect, Debug, Clone, Copy, PartialEq, Eq, Default)]
#[reflect(Component, Default, Debug, PartialEq, Clone)]
pub struct TransformSyncDisabled;

/// [`PhysicsSystems::Interpolate`](crate::PhysicsSystems).
pub(crate) fn interpolate(
    time: Res<Time<Fixed>>,
    solver: Res<SolverState>,
    settings: Res<PhysicsSettings>,
    mut bodies: Query<(&Body, &PositionHistory, &mut Transform), Drawn>,
) {
    // Without interpolation, every body is drawn where the last step left it.
    let alpha = if settings.interpolate {
        time.overstep_fraction()
    } else {
        1.0
    };
    let parallel = solver.len() >= settings.parallel_threshold;
    crate::solver::for_each_maybe_par!(bodies, parallel, |(body, history, mut transform)| {
        let position = history.drawn_position(body, alpha);
        if position.is_finite() && transform.translation != position {
            transform.translation = position;
        }
    });
}

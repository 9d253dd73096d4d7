//! Drawing bodies between fixed steps.
//!
//! The simulation advances in fixed steps; frames come when they come. Each
//! frame, [`InterpolationSystems::Interpolate`] sets
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
//!
//! In an app with Bevy's `TransformPlugin`, a body with no parent and no
//! children also gets its `GlobalTransform` here (the bits Bevy's
//! propagation would give it), and its `Transform` is written without
//! being marked changed, so the propagation, which cost about 40 ns a body
//! with 100 000 moving bodies, skips it
//! ([`PhysicsSettings::write_global_transforms`]).

use bevy::ecs::change_detection::Tick;
use bevy::ecs::query::QueryFilter;
use bevy::ecs::system::{SystemChangeTick, SystemParam};
use bevy::prelude::*;
use bevy::transform::systems::StaticTransformOptimizations;

use crate::data::body::Body;
pub use crate::data::drawing::{PositionHistory, TransformSyncDisabled};
use crate::data::islands::Sleeping;
use crate::data::requests::{AnchorAsleep, BodyIndex};
use crate::data::settings::{InterpolationSystems, PhysicsSettings, PhysicsStep};
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
/// streak. [`InterpolationSystems::Interpolate`] draws
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
    frame: Frame<'w>,
    bodies: Query<'w, 's, (Entity, Drawing)>,
}

impl DrawnPositions<'_, '_> {
    /// How far between the last two fixed positions bodies are drawn: the
    /// overstep fraction of `Time<Fixed>`, or 1 (the last position) when
    /// [`PhysicsSettings::interpolate`] is off.
    pub fn alpha(&self) -> f32 {
        self.frame.alpha()
    }

    /// Where to draw `entity`; `None` if it is not a body.
    pub fn get(&self, entity: Entity) -> Option<Vec3> {
        let (_, body) = self.bodies.get(entity).ok()?;
        Some(self.of(body, self.alpha()))
    }

    /// Every body with where to draw it, walking the bodies' tables once
    /// instead of looking each up as [`get`](Self::get) does: for drawing
    /// many bodies yourself (instanced meshes, say). Sleeping bodies and
    /// those with [`TransformSyncDisabled`] are among them.
    ///
    /// # Example
    ///
    /// ```
    /// use bevy::prelude::*;
    /// use bevy_euler_physics::prelude::*;
    ///
    /// /// The centre of every body, as drawn this frame.
    /// #[derive(Resource, Default)]
    /// struct Centre(Vec3);
    ///
    /// fn find_centre(drawn: DrawnPositions, mut centre: ResMut<Centre>) {
    ///     let (sum, n) = drawn
    ///         .iter()
    ///         .fold((Vec3::ZERO, 0), |(sum, n), (_, at)| (sum + at, n + 1));
    ///     centre.0 = if n > 0 { sum / n as f32 } else { Vec3::ZERO };
    /// }
    /// # App::new().init_resource::<Centre>().add_systems(Update, find_centre);
    /// ```
    pub fn iter(&self) -> impl Iterator<Item = (Entity, Vec3)> + '_ {
        let alpha = self.alpha();
        self.bodies
            .iter()
            .map(move |(entity, body)| (entity, self.of(body, alpha)))
    }

    /// Where to draw a body this frame, given what a [`Drawing`] query
    /// reads of it (for the crate's own walks of the bodies, which then
    /// need not look each up).
    pub(crate) fn of(&self, (body, history, index): DrawingItem, alpha: f32) -> Vec3 {
        let ended = self.frame.ended();
        drawn(&self.frame.solver, ended, (&body, history, index), alpha)
    }
}

/// What a [`Drawing`] query yields for one body.
pub(crate) type DrawingItem<'a> = (Ref<'a, Body>, &'a PositionHistory, &'a BodyIndex);

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

/// Adds the drawing systems to `Update`, in
/// [`InterpolationSystems::Interpolate`]:
/// [`draw_roots`] and [`interpolate`] for the rest when
/// [`globals_written`], else [`interpolate`] for every body.
pub(crate) fn plugin(app: &mut App) {
    app.add_systems(
        Update,
        (
            interpolate::<()>.run_if(not(globals_written)),
            (draw_roots, interpolate::<InHierarchy>).run_if(globals_written),
        )
            .in_set(InterpolationSystems::Interpolate),
    );
}

/// What a drawing system reads of a body.
pub(crate) type Drawing = (
    Ref<'static, Body>,
    &'static PositionHistory,
    &'static BodyIndex,
);

/// The bodies with no parent and no children that [`draw_roots`] draws.
type Roots = (Drawn, Without<ChildOf>, Without<Children>);

/// What each drawing system reads besides the bodies.
#[derive(SystemParam)]
pub(crate) struct Frame<'w> {
    time: Res<'w, Time<Fixed>>,
    settings: Res<'w, PhysicsSettings>,
    step: Res<'w, PhysicsStep>,
    solver: Res<'w, SolverState>,
    ticks: SystemChangeTick,
}

impl Frame<'_> {
    /// See [`DrawnPositions::alpha`].
    fn alpha(&self) -> f32 {
        if self.settings.interpolate {
            self.time.overstep_fraction()
        } else {
            1.0
        }
    }

    /// The ticks [`drawn`] compares: when the last step ended, and now.
    fn ended(&self) -> (Tick, Tick) {
        (self.step.ended, self.ticks.this_run())
    }

    /// `α`, the ticks [`drawn`] compares, and whether to split the bodies
    /// over threads.
    fn parts(&self) -> (f32, (Tick, Tick), bool) {
        let parallel = self.solver.len() >= self.settings.parallel_threshold;
        (self.alpha(), self.ended(), parallel)
    }
}

/// Whether [`draw_roots`] draws the bodies outside any hierarchy: with
/// [`PhysicsSettings::write_global_transforms`] on, where Bevy's
/// `TransformPlugin` (which adds that resource) propagates transforms
/// (without it nothing reads `GlobalTransform`).
pub(crate) fn globals_written(
    settings: Res<PhysicsSettings>,
    propagation: Option<Res<StaticTransformOptimizations>>,
) -> bool {
    settings.write_global_transforms && propagation.is_some()
}

/// The bodies [`draw_roots`] leaves to [`interpolate`]: in a hierarchy,
/// or without a `GlobalTransform`.
pub(crate) type InHierarchy = Or<(With<ChildOf>, With<Children>, Without<GlobalTransform>)>;

/// [`InterpolationSystems::Interpolate`],
/// for the bodies `F` lets through: every drawn body, or (beside
/// [`draw_roots`]) those [`InHierarchy`]. A moved `Transform` is marked
/// changed, and Bevy's propagation writes its `GlobalTransform`.
pub(crate) fn interpolate<F: QueryFilter>(
    frame: Frame,
    mut bodies: Query<(Drawing, &mut Transform), (Drawn, F)>,
) {
    let (alpha, ended, parallel) = frame.parts();
    let solver = &*frame.solver;
    for_each_maybe_par!(bodies, parallel, |(
        (body, history, index),
        mut transform,
    )| {
        let position = drawn(solver, ended, (&body, history, index), alpha);
        if position.is_finite() && transform.translation != position {
            transform.translation = position;
        }
    });
}

/// [`InterpolationSystems::Interpolate`],
/// for the bodies with no parent and no children, when
/// [`globals_written`]: each moved body's `GlobalTransform` gets what
/// Bevy's propagation would write (its `Transform` as an affine map), and
/// its `Transform` is not marked changed, so that the propagation skips
/// it.
pub(crate) fn draw_roots(
    frame: Frame,
    mut bodies: Query<(Drawing, &mut Transform, &mut GlobalTransform), Roots>,
) {
    let (alpha, ended, parallel) = frame.parts();
    let solver = &*frame.solver;
    for_each_maybe_par!(bodies, parallel, |(
        (body, history, index),
        mut transform,
        mut global,
    )| {
        let position = drawn(solver, ended, (&body, history, index), alpha);
        if position.is_finite() && transform.translation != position {
            // Only the translation changed, unless your code changed the
            // `Transform` too, which marks it changed: the propagation
            // then writes all of it again after this. (Computing all of
            // it from the `Transform` here instead took this system from
            // about 1.2 to 2.2–3.0 ms a frame at 100 000 bodies.)
            transform.bypass_change_detection().translation = position;
            let mut affine = global.affine();
            affine.translation = position.into();
            *global = affine.into();
        }
    });
}

//! What touched a sleeping island since the last step, found at the start
//! of the step and turned into wake requests for the rebuild.

use bevy::ecs::system::SystemChangeTick;
use bevy::prelude::*;

use crate::data::body::{Body, Damping};
use crate::data::constraints::{GroundPlane, Radius};
use crate::data::forces::{ConstantForce, Gravity};
use crate::data::islands::Sleeping;
use crate::data::issues::PhysicsError;
use crate::data::requests::{AnchorAsleep, SolverRequests, WakeCause, WakeTarget};
use crate::solver::SolverState;

/// Start of the fixed step: marks the index dirty when a radius or a plane
/// changed in place, and finds what touched a sleeping island since the
/// last step — your writes to its bodies or forces, a moved anchor, a
/// changed radius, plane or gravity — and asks the rebuild to wake it.
/// (Springs and rods are immutable; their hooks report every change.)
///
/// The scans cost a sleeping body one tick comparison per step: its `Body`
/// (`ConstantForce` and `Damping` only on bodies that have one; sleeping
/// bodies have no `AccumulatedForce`, whose insertion wakes them through
/// its hook). A bad `Damping` on a sleeping body or anchor asks for the
/// end-of-step report that awake ones get from the gather.
#[allow(clippy::too_many_arguments)]
pub(crate) fn detect_wakes(
    solver: Res<SolverState>,
    mut requests: ResMut<SolverRequests>,
    gravity: Res<Gravity>,
    written: Query<(Entity, Ref<Body>, &Sleeping), Changed<Body>>,
    forced: Query<(Entity, Ref<ConstantForce>, &Sleeping), Changed<ConstantForce>>,
    anchors: Query<(Entity, Ref<Body>, &AnchorAsleep), Changed<Body>>,
    awake_fixed: Query<Ref<Body>, (Without<Sleeping>, Without<AnchorAsleep>)>,
    changed: ChangedConstraints,
    ticks: SystemChangeTick,
) {
    let any_sleeping = solver.any_sleeping || requests.resynced;
    // A damping your code changed on a sleeping body or anchor is checked
    // as an awake one's is (the gather reads only awake ones): at the end
    // of this step, without waking anything.
    if changed
        .sleepers_damping
        .iter()
        .any(|damping| !damping.is_valid())
    {
        solver.request_report();
    }
    for entity in &changed.radii {
        requests.wake(
            WakeTarget::Body(entity),
            WakeCause::ConstraintChanged(entity),
        );
    }
    // A plane put back by a restore is no edit.
    let quiet = requests.quiet_since.take();
    let edited = changed.planes.iter().find(|(_, plane)| {
        quiet.is_none_or(|since| plane.last_changed().is_newer_than(since, ticks.this_run()))
    });
    if let Some((entity, _)) = edited {
        requests.wake(WakeTarget::All, WakeCause::ConstraintChanged(entity));
    }
    if !any_sleeping {
        return;
    }
    let now = ticks.this_run();
    // (A `Sleeping` your code inserted is a request, not a sleeping island.)
    for (entity, body, sleeping) in &written {
        if !sleeping.is_request() && body.last_changed().is_newer_than(sleeping.since, now) {
            requests.wake(WakeTarget::Body(entity), WakeCause::BodyWritten(entity));
        }
    }
    for (entity, force, sleeping) in &forced {
        if !sleeping.is_request() && force.last_changed().is_newer_than(sleeping.since, now) {
            requests.wake(WakeTarget::Body(entity), WakeCause::ForceChanged(entity));
        }
    }
    // A fixed body holding both awake and sleeping islands has no
    // `AnchorAsleep`; its move wakes the sleeping ones too. (Looked up one
    // by one: a scan of `Changed<Body>` would read every awake body, which
    // the step itself writes.)
    let mut moved: Vec<Entity> = solver
        .holding_sleepers
        .iter()
        .copied()
        .filter(|&entity| {
            awake_fixed
                .get(entity)
                .is_ok_and(|body| body.inv_mass == 0.0 && body.is_changed())
        })
        .collect();
    // In entity order, as a query would give them, not the set's.
    moved.sort_unstable();
    for entity in moved {
        requests.wake(
            WakeTarget::Anchor(entity),
            WakeCause::FixedBodyMoved(entity),
        );
    }
    for (entity, body, anchor) in &anchors {
        if body.last_changed().is_newer_than(anchor.since, now) {
            requests.wake(
                WakeTarget::Anchor(entity),
                WakeCause::FixedBodyMoved(entity),
            );
        }
    }
    if gravity.is_changed() && !gravity.is_added() {
        requests.wake(WakeTarget::All, WakeCause::GravityChanged);
    }
}

/// A sleeping body or anchor, in the step, whose `Damping` changed.
type SleeperDampingChanged = (
    Changed<Damping>,
    Or<(With<Sleeping>, With<AnchorAsleep>)>,
    Without<PhysicsError>,
);

/// Radii and planes changed in place, and the dampings of sleeping bodies
/// and anchors. (Springs and rods are immutable: their hooks see every
/// change.)
#[derive(bevy::ecs::system::SystemParam)]
pub(crate) struct ChangedConstraints<'w, 's> {
    radii: Query<'w, 's, Entity, Changed<Radius>>,
    sleepers_damping: Query<'w, 's, &'static Damping, SleeperDampingChanged>,
    planes: Query<'w, 's, (Entity, Ref<'static, GroundPlane>), Changed<GroundPlane>>,
}

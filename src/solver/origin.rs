//! The floating origin's shift, the last stage of a fixed step: when the
//! [`FloatingOrigin`] strayed more than a cell from local zero, every local
//! position moves by the same whole number of cells, and the
//! [`PhysicsOrigin`] by its opposite.

use bevy::math::Vec3A;
use bevy::prelude::*;

use crate::data::body::Body;
use crate::data::constraints::GroundPlane;
use crate::data::drawing::PositionHistory;
use crate::data::obstacles::{Obstacle, ObstacleState};
use crate::data::origin::{FloatingOrigin, OriginShifted, PhysicsOrigin, ShiftWithOrigin};
use crate::kernels::origin::cell_shift;
use crate::solver::SolverState;

/// What [`float_origin`] reads of the entities with a [`FloatingOrigin`].
type Leaders = (Entity, Option<&'static Body>, Option<&'static Transform>);

/// End of the fixed step: shifts the origin when the [`FloatingOrigin`]
/// strayed more than a cell from local zero on an axis (see
/// [`cell_shift`]). Warns once about a cell that is not a power of two in
/// range, and about several floating origins.
pub(crate) fn float_origin(
    world: &mut World,
    leaders: &mut QueryState<Leaders, With<FloatingOrigin>>,
    mut warned_many: Local<bool>,
) {
    let Some(origin) = world.get_resource_ref::<PhysicsOrigin>() else {
        return;
    };
    let cell = origin.cell_size();
    if origin.is_added() || origin.is_changed() {
        warn_cell(&origin, cell);
    }
    // The leader: the lowest entity, so that the choice does not depend on
    // storage order.
    let mut leader = None::<(Entity, Vec3)>;
    let mut count = 0;
    for (entity, body, transform) in leaders.iter(world) {
        let Some(at) = body
            .map(|body| body.position)
            .or(transform.map(|t| t.translation))
        else {
            continue;
        };
        count += 1;
        if leader.is_none_or(|(first, _)| entity < first) {
            leader = Some((entity, at));
        }
    }
    if count > 1 && !*warned_many {
        warn!(
            "bevy_euler_physics: {count} entities have a FloatingOrigin; {} leads (the lowest entity)",
            leader.map_or(Entity::PLACEHOLDER, |(e, _)| e)
        );
    }
    *warned_many = count > 1;
    let Some((_, at)) = leader else {
        return;
    };
    let offset = cell_shift(at, cell);
    if offset != Vec3::ZERO {
        shift_origin(world, offset, Shift::Everything);
    }
}

/// Warns about a cell that is not used as given.
fn warn_cell(origin: &PhysicsOrigin, cell: f32) {
    if cell != origin.cell {
        warn!(
            "bevy_euler_physics: PhysicsOrigin::cell = {} is not a power of two in {}..={}; using {cell}",
            origin.cell,
            PhysicsOrigin::MIN_CELL,
            PhysicsOrigin::MAX_CELL
        );
    }
}

/// What a shift moves.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Shift {
    /// Bodies (their histories, transforms and slots), ground planes and
    /// the entities marked to move: a shift of the running scene.
    Everything,
    /// Ground planes and marked entities only: after a snapshot restore,
    /// which put the bodies back where they were in the saved origin's
    /// frame.
    Scenery,
}

/// Moves the origin by `offset` and every local position by `−offset`:
/// the solver's slots and the sleepers contacts know of, each [`Body`],
/// its [`PositionHistory`] and `Transform` (the first two without change
/// detection: a shift is no write of yours, and wakes nothing), each
/// [`GroundPlane`] (along its normal; without change detection either) and
/// the `Transform` of ground planes,
/// [`ShiftWithOrigin`] entities, a [`FloatingOrigin`] without a body and
/// obstacles at the root of their hierarchy (and where each obstacle was
/// left, [`ObstacleState`]).
/// Then sends [`OriginShifted`].
///
/// A whole number of cells, the offset moves every position near it
/// exactly (Sterbenz: `x − c` is exact for `c/2 ≤ x ≤ 2c`), so the bodies
/// around the floating origin keep every bit of their relative positions.
pub(crate) fn shift_origin(world: &mut World, offset: Vec3, what: Shift) {
    if what == Shift::Everything {
        let by = Vec3A::from(offset);
        let mut solver = world.resource_mut::<SolverState>();
        solver.layouts += 1;
        for pos in &mut solver.pos {
            *pos -= by;
        }
        for sleeper in &mut solver.touch.sleepers {
            sleeper.pos -= by;
        }
        let mut bodies = world.query::<(
            &mut Body,
            Option<&mut PositionHistory>,
            Option<&mut Transform>,
        )>();
        for (mut body, history, transform) in bodies.iter_mut(world) {
            body.bypass_change_detection().position -= offset;
            if let Some(mut history) = history {
                history.bypass_change_detection().previous -= offset;
            }
            if let Some(mut transform) = transform {
                transform.translation -= offset;
            }
        }
    }
    // Without change detection: a shift is no edit of the ground, which
    // would wake every island.
    let mut planes = world.query::<&mut GroundPlane>();
    for mut plane in planes.iter_mut(world) {
        if let Some(normal) = plane.unit_normal() {
            plane.bypass_change_detection().offset -= normal.dot(offset);
        }
    }
    let mut scenery = world.query_filtered::<&mut Transform, (
        Without<Body>,
        Or<(
            With<GroundPlane>,
            With<ShiftWithOrigin>,
            With<FloatingOrigin>,
        )>,
    )>();
    for mut transform in scenery.iter_mut(world) {
        transform.translation -= offset;
    }
    // Obstacles at the root of their hierarchy (a child moves with its
    // parent), and where each was left: the shift sweeps none of them.
    let mut obstacles = world.query_filtered::<&mut Transform, (
        With<Obstacle>,
        Without<ChildOf>,
        Without<Body>,
        Without<GroundPlane>,
        Without<ShiftWithOrigin>,
        Without<FloatingOrigin>,
    )>();
    for mut transform in obstacles.iter_mut(world) {
        transform.translation -= offset;
    }
    let mut states = world.query::<&mut ObstacleState>();
    for mut state in states.iter_mut(world) {
        state.bypass_change_detection().shift(offset);
    }
    let mut origin = world.resource_mut::<PhysicsOrigin>();
    origin.position += offset.as_dvec3();
    let message = OriginShifted {
        offset,
        origin: origin.position,
    };
    world.write_message(message);
}

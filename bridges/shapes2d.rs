//! A 2D collider's parry shape as obstacles in the XY plane (columns along
//! `Z`, which this plugin's 2D shapes are): the file of the avian2d
//! bridge, compiled against its parry2d (`crate::parry`).

use crate::parry::shape::{SharedShape, TypedShape};
use bevy::math::primitives::{Capsule2d, Circle, ConvexPolygon, HalfSpace, Rectangle};
use bevy::prelude::*;
use bevy_euler_physics::prelude::Obstacle;

/// Corners of the polygon an ellipse is met as.
const ELLIPSE_SIDES: u32 = 32;

/// How far below a height field's surface its columns reach, in metres.
const GROUND_DEPTH: f32 = 1.0;

pub use crate::kit::Unsupported;

/// The obstacles a collider's (unscaled) shape is met as, each with its
/// pose in the collider's frame (see the [crate docs](crate) for each
/// kind). The collider's scale comes from its entity's transform, which
/// the parts (its children) inherit.
pub fn parts_of(shape: &SharedShape) -> Result<Vec<(Transform, Obstacle)>, Unsupported> {
    let mut parts = Vec::new();
    add_parts(shape, Transform::IDENTITY, &mut parts)?;
    if parts.is_empty() {
        return Err(Unsupported::Empty);
    }
    Ok(parts)
}

/// A convex polygon of `corners` (in either turning order), or, where
/// they have no area, nothing.
fn polygon(corners: &[Vec2]) -> Option<Obstacle> {
    let area: f32 = (0..corners.len())
        .map(|i| corners[i].perp_dot(corners[(i + 1) % corners.len()]))
        .sum();
    let mut corners = corners.to_vec();
    if area < 0.0 {
        corners.reverse();
    }
    ConvexPolygon::new(corners).ok().map(Obstacle::from)
}

/// Adds the obstacles of `shape`, placed by `pose`, to `parts`.
fn add_parts(
    shape: &SharedShape,
    pose: Transform,
    parts: &mut Vec<(Transform, Obstacle)>,
) -> Result<(), Unsupported> {
    let mut add = |local: Transform, obstacle: Obstacle| parts.push((pose * local, obstacle));
    let at = Transform::IDENTITY;
    match shape.as_typed_shape() {
        TypedShape::Ball(ball) => add(at, Circle::new(ball.radius).into()),
        TypedShape::Cuboid(cuboid) => {
            add(at, Rectangle::from_size(2.0 * cuboid.half_extents).into());
        }
        TypedShape::RoundCuboid(round) => add(
            at,
            Rectangle::from_size(2.0 * (round.inner_shape.half_extents + round.border_radius))
                .into(),
        ),
        TypedShape::Capsule(capsule) => {
            let (a, b) = (capsule.segment.a, capsule.segment.b);
            let axis = b - a;
            let turn = Vec2::Y.angle_to(axis.try_normalize().unwrap_or(Vec2::Y));
            add(
                Transform::from_translation(((a + b) / 2.0).extend(0.0))
                    .with_rotation(Quat::from_rotation_z(turn)),
                Capsule2d::new(capsule.radius, axis.length()).into(),
            );
        }
        TypedShape::ConvexPolygon(hull) => add_polygon(&mut add, hull.points()),
        TypedShape::RoundConvexPolygon(round) => {
            add_polygon(&mut add, round.inner_shape.points());
        }
        TypedShape::Triangle(triangle) => add_polygon(&mut add, triangle.vertices()),
        TypedShape::RoundTriangle(round) => add_polygon(&mut add, round.inner_shape.vertices()),
        TypedShape::TriMesh(mesh) => {
            for triangle in mesh.triangles() {
                add_polygon(&mut add, triangle.vertices());
            }
        }
        TypedShape::HeightField(field) => {
            // Each segment of the ground as a column reaching below it.
            for segment in field.segments() {
                let (a, b) = (segment.a, segment.b);
                let low = a.y.min(b.y) - GROUND_DEPTH;
                add_polygon(&mut add, &[a, b, Vec2::new(b.x, low), Vec2::new(a.x, low)]);
            }
        }
        TypedShape::Voxels(voxels) => {
            let size = voxels.voxel_size();
            for voxel in voxels.voxels().filter(|v| !v.state.is_empty()) {
                add(
                    Transform::from_translation(voxel.center.extend(0.0)),
                    Rectangle::from_size(size).into(),
                );
            }
        }
        TypedShape::HalfSpace(half) => add(
            at,
            // parry's normal points out of the solid, Bevy's into it.
            HalfSpace::new((-half.normal).extend(0.0).extend(0.0)).into(),
        ),
        TypedShape::Compound(compound) => {
            for (part, shape) in compound.shapes() {
                let local = Transform::from_translation(part.translation.extend(0.0))
                    .with_rotation(Quat::from_rotation_z(part.rotation.angle()));
                add_parts(shape, pose * local, parts)?;
            }
        }
        TypedShape::Segment(_) => return Err(Unsupported::NoInside("segment")),
        TypedShape::Polyline(_) => return Err(Unsupported::NoInside("polyline")),
        TypedShape::Custom(custom) => {
            // avian's own 2D shapes: an ellipse (as a polygon of
            // `ELLIPSE_SIDES` corners on it) and a regular polygon.
            use crate::avian::collision::collider::{
                EllipseColliderShape, RegularPolygonColliderShape,
            };
            if let Some(ellipse) = custom.as_shape::<EllipseColliderShape>() {
                let half = ellipse.0.half_size;
                let corners: Vec<Vec2> = (0..ELLIPSE_SIDES)
                    .map(|i| {
                        let t = core::f32::consts::TAU * i as f32 / ELLIPSE_SIDES as f32;
                        Vec2::new(half.x * t.cos(), half.y * t.sin())
                    })
                    .collect();
                add_polygon(&mut add, &corners);
            } else if let Some(polygon) = custom.as_shape::<RegularPolygonColliderShape>() {
                let corners: Vec<Vec2> = polygon.0.vertices(0.0).into_iter().collect();
                add_polygon(&mut add, &corners);
            } else {
                return Err(Unsupported::Custom);
            }
        }
    }
    Ok(())
}

/// Adds the polygon of `corners`, unless it has no area.
fn add_polygon(add: &mut impl FnMut(Transform, Obstacle), corners: &[Vec2]) {
    if let Some(obstacle) = polygon(corners) {
        add(Transform::IDENTITY, obstacle);
    }
}

//! A collider's parry shape as obstacles: one file for the bridges whose
//! engines read their colliders with parry3d (avian3d and bevy_rapier3d),
//! included by each (`#[path]`) and compiled against that engine's parry
//! (`crate::parry`), whose shape API is the same in both versions.

use crate::parry::shape::{SharedShape, TypedShape};
use bevy::math::primitives::{Capsule3d, Cuboid, Cylinder, HalfSpace, Sphere};
use bevy::prelude::*;
use bevy_euler_physics::prelude::{Obstacle, TriangleMesh};

/// Sides of the triangle mesh a cone is met as.
const CONE_SIDES: u32 = 32;

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

/// A triangle mesh from parry's vertices and triangles.
fn mesh(vertices: &[Vec3], triangles: &[[u32; 3]]) -> TriangleMesh {
    TriangleMesh::new(vertices.to_vec(), triangles.to_vec())
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
        TypedShape::Ball(ball) => add(at, Sphere::new(ball.radius).into()),
        TypedShape::Cuboid(cuboid) => add(at, Cuboid::from_size(2.0 * cuboid.half_extents).into()),
        TypedShape::RoundCuboid(round) => add(
            at,
            Cuboid::from_size(2.0 * (round.inner_shape.half_extents + round.border_radius)).into(),
        ),
        TypedShape::Capsule(capsule) => {
            let (a, b) = (capsule.segment.a, capsule.segment.b);
            let axis = b - a;
            let length = axis.length();
            let turn = match axis.try_normalize() {
                Some(direction) => Quat::from_rotation_arc(Vec3::Y, direction),
                None => Quat::IDENTITY,
            };
            add(
                Transform::from_translation((a + b) / 2.0).with_rotation(turn),
                Capsule3d::new(capsule.radius, length).into(),
            );
        }
        TypedShape::Cylinder(cylinder) => add(
            at,
            Cylinder::new(cylinder.radius, 2.0 * cylinder.half_height).into(),
        ),
        TypedShape::RoundCylinder(round) => {
            let (inner, border) = (&round.inner_shape, round.border_radius);
            add(
                at,
                Cylinder::new(inner.radius + border, 2.0 * (inner.half_height + border)).into(),
            );
        }
        TypedShape::Cone(cone) => {
            let (vertices, triangles) = cone.to_trimesh(CONE_SIDES);
            add(at, mesh(&vertices, &triangles).one_sided().into());
        }
        TypedShape::RoundCone(round) => {
            let (vertices, triangles) = round.inner_shape.to_trimesh(CONE_SIDES);
            add(at, mesh(&vertices, &triangles).one_sided().into());
        }
        TypedShape::ConvexPolyhedron(hull) => {
            let (vertices, triangles) = hull.to_trimesh();
            add(at, mesh(&vertices, &triangles).one_sided().into());
        }
        TypedShape::RoundConvexPolyhedron(round) => {
            let (vertices, triangles) = round.inner_shape.to_trimesh();
            add(at, mesh(&vertices, &triangles).one_sided().into());
        }
        TypedShape::TriMesh(trimesh) => add(at, mesh(trimesh.vertices(), trimesh.indices()).into()),
        TypedShape::HeightField(field) => {
            let (vertices, triangles) = field.to_trimesh();
            add(at, mesh(&vertices, &triangles).into());
        }
        TypedShape::Voxels(voxels) => {
            let (vertices, triangles) = voxels.to_trimesh();
            add(at, mesh(&vertices, &triangles).one_sided().into());
        }
        TypedShape::HalfSpace(half) => add(
            at,
            // parry's normal points out of the solid, Bevy's into it.
            HalfSpace::new((-half.normal).extend(0.0)).into(),
        ),
        TypedShape::Compound(compound) => {
            for (part, shape) in compound.shapes() {
                let local =
                    Transform::from_translation(part.translation).with_rotation(part.rotation);
                add_parts(shape, pose * local, parts)?;
            }
        }
        TypedShape::Segment(_) => return Err(Unsupported::NoInside("segment")),
        TypedShape::Polyline(_) => return Err(Unsupported::NoInside("polyline")),
        TypedShape::Triangle(_) | TypedShape::RoundTriangle(_) => {
            return Err(Unsupported::NoInside("triangle"));
        }
        TypedShape::Custom(_) => return Err(Unsupported::Custom),
    }
    Ok(())
}

//! A soft mesh's step force (its pressure) and its drawing.

use bevy::mesh::{Mesh, Mesh2d, Mesh3d, VertexAttributeValues};
use bevy::prelude::*;
use bevy::transform::helper::TransformHelper;

use super::{PartOfSoftMesh, SoftMeshParts, SoftMeshPoint};
use crate::data::body::Body;
use crate::data::forces::AccumulatedForce;
use crate::data::islands::Sleeping;
use crate::data::requests::AnchorAsleep;
use crate::interpolation::{Drawing, DrawnPositions};
use crate::kernels::mesh::{self, NO_POINT};

/// Scratch space kept between runs.
#[derive(Default)]
pub(crate) struct Scratch {
    points: Vec<Vec3>,
    gradient: Vec<Vec3>,
    normals: Vec<Vec3>,
    vertex_positions: Vec<Vec3>,
    vertex_normals: Vec<Vec3>,
}

/// Start of the fixed step: each awake closed soft mesh with a pressure
/// pushes its bodies along the gradient of its volume,
/// `F_i = K·(V₀ − V)/|V₀| · ∂V/∂x_i` (the force of the energy
/// `K·(V − V₀)²/(2·|V₀|)`), read at the step's start.
pub(crate) fn press_soft_meshes(
    soft: Query<&SoftMeshParts>,
    bodies: Query<&Body>,
    mut forces: Query<&mut AccumulatedForce>,
    mut scratch: Local<Scratch>,
) {
    let Scratch {
        points, gradient, ..
    } = &mut *scratch;
    for parts in &soft {
        let Some((modulus, rest)) = parts.pressure else {
            continue;
        };
        // A sleeping body has no force to add to: the mesh rests.
        if !parts.bodies.iter().all(|&b| forces.contains(b)) {
            continue;
        }
        points.clear();
        points.extend(
            parts
                .bodies
                .iter()
                .filter_map(|&b| bodies.get(b).ok())
                .map(|b| b.position),
        );
        if points.len() != parts.bodies.len() {
            continue;
        }
        let centre = points[0];
        let volume = mesh::volume(points, &parts.triangles, centre);
        let pressure = modulus * (rest - volume) / rest.abs();
        if !pressure.is_finite() {
            continue;
        }
        gradient.clear();
        gradient.resize(points.len(), Vec3::ZERO);
        mesh::add_volume_gradient(points, &parts.triangles, centre, pressure, gradient);
        for (&b, &f) in parts.bodies.iter().zip(gradient.iter()) {
            if let Ok(mut force) = forces.get_mut(b) {
                force.0 += f;
            }
        }
    }
}

/// A soft mesh's body, for the drawing's walk: its mesh, its place in the
/// mesh's bodies, whether it rests (asleep, or an anchor of sleeping
/// islands only), and what its drawn position is made of.
type Points = (
    &'static PartOfSoftMesh,
    &'static SoftMeshPoint,
    Has<Sleeping>,
    Has<AnchorAsleep>,
    Drawing,
);

/// The soft meshes as drawn.
type Drawn = (
    Entity,
    &'static mut SoftMeshParts,
    Option<&'static Mesh3d>,
    Option<&'static Mesh2d>,
    Option<&'static GlobalTransform>,
);

/// `Update`, after the interpolation: each soft mesh's copy of its asset
/// gets its bodies' drawn positions in the entity's frame at every vertex,
/// smooth normals, and tangents when it has them.
///
/// The bodies are read in one walk of the soft meshes' bodies in storage
/// order (each knows its mesh and its place in it), not looked up one by
/// one: a lookup cost more than the rest of the drawing.
pub(crate) fn draw_soft_meshes(
    mut meshes: ResMut<Assets<Mesh>>,
    mut soft: Query<Drawn>,
    drawn: DrawnPositions,
    points: Query<Points>,
    transforms: TransformHelper,
    mut scratch: Local<Scratch>,
) {
    for (_, mut parts, ..) in &mut soft {
        let parts = &mut *parts;
        parts.drawn.clear();
        parts.drawn.resize(parts.bodies.len(), Vec3::NAN);
        parts.moving = false;
    }
    let alpha = drawn.alpha();
    let mut current: Option<(Entity, Mut<SoftMeshParts>)> = None;
    for (part, point, asleep, anchor, item) in &points {
        if current.as_ref().map(|(owner, _)| *owner) != Some(part.0) {
            current = soft
                .get_mut(part.0)
                .ok()
                .map(|(_, parts, ..)| (part.0, parts));
        }
        let Some((_, parts)) = &mut current else {
            continue;
        };
        if let Some(at) = parts.drawn.get_mut(point.0 as usize) {
            *at = drawn.of(item, alpha);
        }
        parts.moving |= moved(&item.0, asleep, anchor);
    }
    for (entity, mut parts, mesh_3d, mesh_2d, global) in &mut soft {
        let Some(handle) = mesh_3d.map(|m| &m.0).or(mesh_2d.map(|m| &m.0)) else {
            continue;
        };
        if parts.bodies.is_empty() || *handle != parts.copy {
            continue;
        }
        let frame = drawing_frame(&transforms, entity, global);
        let matrix = frame.to_matrix();
        if !parts.moving && parts.drawn_resting == Some(matrix) {
            continue;
        }
        let Some(mut mesh) = meshes.get_mut(&parts.copy) else {
            continue;
        };
        let inverse = frame.affine().inverse();
        let scratch = &mut *scratch;
        scratch.points.clear();
        scratch
            .points
            .extend(parts.drawn.iter().map(|&p| inverse.transform_point3(p)));
        mesh::smooth_normals(&scratch.points, &parts.triangles, &mut scratch.normals);
        write_mesh(&mut mesh, &parts, scratch);
        parts.drawn_resting = (!parts.moving).then_some(matrix);
    }
}

/// Whether a body drawn into a mesh may have moved since the last frame.
/// A pinned body (fixed) that an island does not hang from never sleeps:
/// it moved when its pin moved it (its `Body` changed). A dynamic body
/// rests while asleep, or while it anchors sleeping islands only.
#[inline]
pub(crate) fn moved(body: &Ref<Body>, asleep: bool, anchor: bool) -> bool {
    if body.is_fixed() {
        body.is_changed()
    } else {
        !(asleep || anchor)
    }
}

/// The frame `entity` is drawn in: its transform as it is now (its
/// `GlobalTransform` may be a frame old in `Update`), or its
/// `GlobalTransform`, or the identity.
pub(crate) fn drawing_frame(
    transforms: &TransformHelper,
    entity: Entity,
    global: Option<&GlobalTransform>,
) -> GlobalTransform {
    transforms
        .compute_global_transform(entity)
        .ok()
        .or(global.copied())
        .unwrap_or_default()
}

/// Writes the points and normals of `scratch` to every vertex drawn from
/// them, and tangents when the mesh has them.
fn write_mesh(mesh: &mut Mesh, parts: &SoftMeshParts, scratch: &mut Scratch) {
    let Scratch {
        points,
        normals,
        vertex_positions,
        vertex_normals,
        ..
    } = scratch;
    let normal_of = |b: u32| {
        if b == NO_POINT {
            Vec3::Y
        } else {
            normals[b as usize]
        }
    };
    if let Ok(Some(VertexAttributeValues::Float32x3(positions))) =
        mesh.try_attribute_mut_option(Mesh::ATTRIBUTE_POSITION)
    {
        for (vertex, &b) in positions.iter_mut().zip(&parts.body_of) {
            if let Some(p) = points.get(b as usize)
                && p.is_finite()
            {
                *vertex = p.to_array();
            }
        }
    }
    match mesh.try_attribute_mut_option(Mesh::ATTRIBUTE_NORMAL) {
        Ok(Some(VertexAttributeValues::Float32x3(out))) => {
            for (out, &b) in out.iter_mut().zip(&parts.body_of) {
                *out = normal_of(b).to_array();
            }
        }
        Ok(None) => {
            let values: Vec<[f32; 3]> = parts
                .body_of
                .iter()
                .map(|&b| normal_of(b).to_array())
                .collect();
            mesh.insert_attribute(Mesh::ATTRIBUTE_NORMAL, values);
        }
        _ => {}
    }
    // Tangents: from each vertex's position, normal and UV. The tangents
    // are taken out of their attribute while the rest of the mesh is
    // read, and put back; an attribute of another format is left alone.
    let mut tangents = match mesh.try_attribute_mut_option(Mesh::ATTRIBUTE_TANGENT) {
        Ok(Some(VertexAttributeValues::Float32x4(tangents))) => core::mem::take(tangents),
        _ => return,
    };
    if let (
        Ok(Some(VertexAttributeValues::Float32x3(positions))),
        Ok(Some(VertexAttributeValues::Float32x2(uvs))),
    ) = (
        mesh.try_attribute_option(Mesh::ATTRIBUTE_POSITION),
        mesh.try_attribute_option(Mesh::ATTRIBUTE_UV_0),
    ) {
        vertex_positions.clear();
        vertex_positions.extend(positions.iter().map(|&p| Vec3::from(p)));
        vertex_normals.clear();
        vertex_normals.extend(parts.body_of.iter().map(|&b| normal_of(b)));
        mesh::tangents(
            vertex_positions,
            vertex_normals,
            uvs,
            &parts.corners,
            &mut tangents,
        );
    }
    if let Ok(Some(VertexAttributeValues::Float32x4(out))) =
        mesh.try_attribute_mut_option(Mesh::ATTRIBUTE_TANGENT)
    {
        *out = tangents;
    }
}

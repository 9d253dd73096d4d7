//! A [`Rope`](crate::Rope) drawn as a mesh: a round tube in 3D, a flat
//! strip in 2D ([`RopeMesh`]).

use bevy::asset::RenderAssetUsages;
use bevy::ecs::lifecycle::HookContext;
use bevy::ecs::world::DeferredWorld;
use bevy::mesh::{Indices, Mesh, Mesh2d, Mesh3d, PrimitiveTopology, VertexAttributeValues};
use bevy::prelude::*;
use bevy::transform::helper::TransformHelper;

use crate::data::body::Body;
use crate::data::islands::Sleeping;
use crate::data::requests::AnchorAsleep;
use crate::interpolation::{Drawing, DrawnPositions};
use crate::kernels::mesh;
use crate::ropes::RopeParts;

use super::draw::{drawing_frame, moved};

/// Draws the [`Rope`](crate::Rope) on its entity as a mesh that follows
/// its bodies, as a [`SoftMesh`](super::SoftMesh) is drawn: the entity
/// gets a mesh asset of its own (a [`Mesh3d`] for a [`Tube`](Self::Tube),
/// a [`Mesh2d`] for a [`Strip`](Self::Strip)) and every frame, after the
/// interpolation, the shape is made around the bodies' drawn positions
/// (its sizes in metres, in the world) and written into the mesh in the
/// entity's own frame (its transform still applies when it is drawn),
/// with normals. A rope whose bodies all rest is not
/// rewritten. Give the entity a material (`MeshMaterial3d` or
/// `MeshMaterial2d`) and it is drawn.
///
/// The mesh's texture coordinates: `u` around the tube (across the strip)
/// from 0 to 1, `v` along the rope in units of the tube's circumference
/// (of the strip's width) as laid out when built, so a texture keeps its
/// aspect.
///
/// The entity's `Mesh3d` (or `Mesh2d`) is the rope's: one of yours there is
/// replaced. A changed `RopeMesh`, or a rope rebuilt with other bodies (a
/// new [`Rope`](crate::Rope)), makes the mesh again; a rope that could not
/// be spawned has none. A size that is zero, negative or not finite, or
/// fewer than 3 sides or more than [`MAX_SIDES`](Self::MAX_SIDES), is
/// replaced by the default with a warning.
///
/// # Example
///
/// ```
/// use bevy::prelude::*;
/// use bevy_euler_physics::prelude::*;
///
/// fn setup(mut commands: Commands) {
///     // A rope 2 cm thick, drawn as a tube of 8 sides (add a material to see it).
///     commands.spawn((
///         Rope::new(RopeEnd::Fixed(Vec3::new(0.0, 2.0, 0.0)), RopeEnd::Free(Vec3::new(1.0, 2.0, 0.0)))
///             .with_radius(0.01),
///         RopeMesh::tube(0.01),
///     ));
/// }
/// # let mut app = App::new();
/// # app.add_plugins((MinimalPlugins, AssetPlugin::default(), bevy::mesh::MeshPlugin, EulerPhysicsPlugin))
/// #     .add_systems(Startup, setup);
/// # app.update();
/// # app.update();
/// # assert_eq!(app.world_mut().query::<&Mesh3d>().iter(app.world()).count(), 1);
/// ```
#[derive(Component, Reflect, Debug, Clone, Copy, PartialEq)]
#[reflect(Component, Debug, PartialEq, Clone)]
#[component(on_remove = forget_mesh)]
pub enum RopeMesh {
    /// A round tube around the bodies, drawn as a [`Mesh3d`].
    Tube {
        /// Its radius in metres.
        radius: f32,
        /// Vertices around it, 3 to [`MAX_SIDES`](Self::MAX_SIDES).
        sides: u32,
    },
    /// A flat strip along the bodies in the XY plane, facing `+Z`, drawn
    /// as a [`Mesh2d`].
    Strip {
        /// Its width in metres.
        width: f32,
    },
}

impl RopeMesh {
    /// Sides of a [`tube`](Self::tube).
    pub const SIDES: u32 = 8;
    /// The most sides a tube may have.
    pub const MAX_SIDES: u32 = 256;

    /// A tube of `radius` metres with [`SIDES`](Self::SIDES) sides.
    ///
    /// ```
    /// # use bevy_euler_physics::prelude::*;
    /// assert_eq!(RopeMesh::tube(0.02), RopeMesh::Tube { radius: 0.02, sides: 8 });
    /// ```
    pub const fn tube(radius: f32) -> Self {
        Self::Tube {
            radius,
            sides: Self::SIDES,
        }
    }

    /// A strip `width` metres wide, for a 2D game.
    ///
    /// ```
    /// # use bevy_euler_physics::prelude::*;
    /// assert_eq!(RopeMesh::strip(0.1), RopeMesh::Strip { width: 0.1 });
    /// ```
    pub const fn strip(width: f32) -> Self {
        Self::Strip { width }
    }

    /// The settings as used: bad values replaced, each with a warning.
    fn sanitized(self, entity: Entity) -> Self {
        let size = |what: &str, value: f32| {
            if value > 0.0 && value.is_finite() {
                value
            } else {
                warn!("bevy_euler_physics: {entity}: RopeMesh's {what} is {value}; using 0.02 m");
                0.02
            }
        };
        match self {
            Self::Tube { radius, sides } => Self::Tube {
                radius: size("radius", radius),
                sides: if (3..=Self::MAX_SIDES).contains(&sides) {
                    sides
                } else {
                    warn!(
                        "bevy_euler_physics: {entity}: RopeMesh has {sides} sides; using {}",
                        Self::SIDES
                    );
                    Self::SIDES
                },
            },
            Self::Strip { width } => Self::Strip {
                width: size("width", width),
            },
        }
    }
}

/// Hook: a `RopeMesh` removed; the entity's mesh goes with it.
fn forget_mesh(mut world: DeferredWorld, ctx: HookContext) {
    world
        .commands()
        .entity(ctx.entity)
        .queue_silenced(|mut entity: EntityWorldMut| {
            let Some(drawn) = entity.take::<RopeMeshDrawn>() else {
                return;
            };
            if entity.get::<Mesh3d>().is_some_and(|m| m.0 == drawn.mesh) {
                entity.remove::<Mesh3d>();
            }
            if entity.get::<Mesh2d>().is_some_and(|m| m.0 == drawn.mesh) {
                entity.remove::<Mesh2d>();
            }
        });
}

/// A drawn rope's mesh and what drawing it keeps between frames.
#[derive(Component, Debug)]
pub(crate) struct RopeMeshDrawn {
    /// The settings as used.
    shape: RopeMesh,
    /// The mesh drawn into.
    mesh: Handle<Mesh>,
    /// The bodies it was laid out for.
    bodies: Vec<Entity>,
    /// The tube's first side, carried from frame to frame.
    side: Vec3,
    /// The frame the mesh was last drawn in, if every body rested.
    drawn_resting: Option<Mat4>,
}

/// A rope to lay a mesh out for: its shape, parts, mesh as drawn so far
/// and the meshes on its entity.
type LaidOut = (
    Entity,
    &'static RopeMesh,
    &'static RopeParts,
    Option<&'static RopeMeshDrawn>,
    Option<&'static Mesh3d>,
    Option<&'static Mesh2d>,
);

/// A rope whose mesh may need laying out again.
type Relaid = Or<(Changed<RopeMesh>, Changed<RopeParts>)>;

/// `PreUpdate`, with the soft meshes' build: a new or changed
/// [`RopeMesh`], or a rope with new bodies, gets its mesh made (vertices,
/// triangles and texture coordinates; the positions are written when it
/// is drawn).
pub(crate) fn lay_out_rope_meshes(
    mut commands: Commands,
    mut meshes: ResMut<Assets<Mesh>>,
    ropes: Query<LaidOut, Relaid>,
    bodies: Query<&Body>,
) {
    for (entity, shape, parts, drawn, mesh_3d, mesh_2d) in &ropes {
        let shape = shape.sanitized(entity);
        if drawn.is_some_and(|d| d.shape == shape && d.bodies == parts.bodies) {
            continue;
        }
        let earlier = drawn.map(|d| d.mesh.clone());
        let ours = |mesh: Option<Handle<Mesh>>| earlier.is_some() && mesh == earlier;
        if parts.bodies.len() < 2 {
            // No rope (it could not be spawned): nothing to draw, and the
            // mesh made for an earlier one goes.
            let mut e = commands.entity(entity);
            e.remove::<RopeMeshDrawn>();
            if ours(mesh_3d.map(|m| m.0.clone())) {
                e.remove::<Mesh3d>();
            }
            if ours(mesh_2d.map(|m| m.0.clone())) {
                e.remove::<Mesh2d>();
            }
            continue;
        }
        let points: Vec<Vec3> = parts
            .bodies
            .iter()
            .map(|&b| bodies.get(b).map_or(Vec3::NAN, |b| b.position))
            .collect();
        let handle = meshes.add(layout(shape, &points));
        let mut e = commands.entity(entity);
        // The other kind of mesh, made for an earlier shape, goes.
        match shape {
            RopeMesh::Tube { .. } => {
                e.insert(Mesh3d(handle.clone()));
                if ours(mesh_2d.map(|m| m.0.clone())) {
                    e.remove::<Mesh2d>();
                }
            }
            RopeMesh::Strip { .. } => {
                e.insert(Mesh2d(handle.clone()));
                if ours(mesh_3d.map(|m| m.0.clone())) {
                    e.remove::<Mesh3d>();
                }
            }
        }
        e.insert(RopeMeshDrawn {
            shape,
            mesh: handle,
            bodies: parts.bodies.clone(),
            side: drawn.map_or(Vec3::X, |d| d.side),
            drawn_resting: None,
        });
    }
}

/// A rope mesh's triangles and texture coordinates over `points` (its
/// bodies where built), with its vertices all at the first point.
fn layout(shape: RopeMesh, points: &[Vec3]) -> Mesh {
    let n = points.len();
    // The length along the rope at each point, over the texture's unit.
    let unit = match shape {
        RopeMesh::Tube { radius, .. } => core::f32::consts::TAU * radius,
        RopeMesh::Strip { width } => width,
    };
    let mut along = Vec::with_capacity(n);
    let mut length = 0.0;
    for (i, &p) in points.iter().enumerate() {
        if i > 0 {
            let step = p.distance(points[i - 1]);
            length += if step.is_finite() { step } else { 0.0 };
        }
        along.push(length / unit);
    }
    let ring = match shape {
        RopeMesh::Tube { sides, .. } => sides as usize + 1,
        RopeMesh::Strip { .. } => 2,
    };
    let mut uvs = Vec::with_capacity(n * ring);
    for &v in &along {
        for j in 0..ring {
            uvs.push([j as f32 / (ring - 1) as f32, v]);
        }
    }
    let mut indices = Vec::with_capacity(n.saturating_sub(1) * (ring - 1) * 6);
    for i in 1..n {
        let (a, b) = (((i - 1) * ring) as u32, (i * ring) as u32);
        for j in 0..ring as u32 - 1 {
            // Counter-clockwise seen from outside the tube (from +Z on the
            // strip, whose vertex 0 is on the left of the rope).
            match shape {
                RopeMesh::Tube { .. } => {
                    indices.extend([a + j, a + j + 1, b + j, a + j + 1, b + j + 1, b + j]);
                }
                RopeMesh::Strip { .. } => {
                    indices.extend([a + 1, b + 1, b, a + 1, b, a]);
                }
            }
        }
    }
    let at = points.first().copied().unwrap_or_default();
    let at = if at.is_finite() { at } else { Vec3::ZERO };
    let normal = match shape {
        RopeMesh::Tube { .. } => Vec3::X,
        RopeMesh::Strip { .. } => Vec3::Z,
    };
    Mesh::new(
        PrimitiveTopology::TriangleList,
        RenderAssetUsages::default(),
    )
    .with_inserted_attribute(Mesh::ATTRIBUTE_POSITION, vec![at.to_array(); uvs.len()])
    .with_inserted_attribute(Mesh::ATTRIBUTE_NORMAL, vec![normal.to_array(); uvs.len()])
    .with_inserted_attribute(Mesh::ATTRIBUTE_UV_0, uvs)
    .with_inserted_indices(Indices::U32(indices))
}

/// Scratch space kept between runs.
#[derive(Default)]
pub(crate) struct RopeScratch {
    points: Vec<Vec3>,
    directions: Vec<Vec3>,
    positions: Vec<[f32; 3]>,
    normals: Vec<[f32; 3]>,
}

/// `Update`, with the soft meshes' drawing: each rope mesh gets its
/// bodies' drawn positions, in the entity's frame, as rings (a tube) or
/// pairs (a strip) of vertices with their normals.
pub(crate) fn draw_rope_meshes(
    mut meshes: ResMut<Assets<Mesh>>,
    mut ropes: Query<(Entity, &mut RopeMeshDrawn, Option<&GlobalTransform>)>,
    drawn: DrawnPositions,
    bodies: Query<(Drawing, Has<Sleeping>, Has<AnchorAsleep>)>,
    transforms: TransformHelper,
    mut scratch: Local<RopeScratch>,
) {
    let RopeScratch {
        points,
        directions,
        positions,
        normals,
    } = &mut *scratch;
    let alpha = drawn.alpha();
    for (entity, mut state, global) in &mut ropes {
        // Each body looked up once: where it is drawn, and whether it
        // moved (a missing body is drawn nowhere and does not move).
        let mut moving = false;
        points.clear();
        points.extend(state.bodies.iter().map(|&b| match bodies.get(b) {
            Ok((item, asleep, anchor)) => {
                moving |= moved(&item.0, asleep, anchor);
                drawn.of(item, alpha)
            }
            Err(_) => Vec3::NAN,
        }));
        let frame = drawing_frame(&transforms, entity, global);
        let matrix = frame.to_matrix();
        if !moving && state.drawn_resting == Some(matrix) {
            continue;
        }
        // A missing body (despawned by the game) is drawn at its
        // neighbour's place (the first found ones at the first body
        // found), so the mesh does not stretch to NaN.
        let Some(first) = points.iter().copied().find(|p| p.is_finite()) else {
            continue;
        };
        let mut last = first;
        for p in points.iter_mut() {
            if p.is_finite() {
                last = *p;
            } else {
                *p = last;
            }
        }
        match state.shape {
            RopeMesh::Tube { radius, sides } => {
                state.side = mesh::tube_rings(
                    points,
                    radius,
                    sides as usize,
                    state.side,
                    directions,
                    positions,
                    normals,
                );
            }
            RopeMesh::Strip { width } => {
                mesh::strip_sides(points, width, directions, positions, normals);
            }
        }
        // Made in the world, in metres; written in the entity's frame
        // (normals by the inverse transpose of the frame's inverse: the
        // frame's own transpose).
        let inverse = frame.affine().inverse();
        let transpose = frame.affine().matrix3.transpose();
        for (p, n) in positions.iter_mut().zip(normals.iter_mut()) {
            *p = inverse.transform_point3(Vec3::from(*p)).to_array();
            *n = (transpose * Vec3A::from(*n)).normalize_or_zero().to_array();
        }
        if positions.iter().flatten().any(|c| !c.is_finite()) {
            continue;
        }
        let Some(mut mesh) = meshes.get_mut(&state.mesh) else {
            continue;
        };
        for (attribute, values) in [
            (Mesh::ATTRIBUTE_POSITION, &*positions),
            (Mesh::ATTRIBUTE_NORMAL, &*normals),
        ] {
            match mesh.try_attribute_mut_option(attribute) {
                Ok(Some(VertexAttributeValues::Float32x3(out))) if out.len() == values.len() => {
                    out.copy_from_slice(values);
                }
                _ => mesh.insert_attribute(attribute, values.to_vec()),
            }
        }
        state.drawn_resting = (!moving).then_some(matrix);
    }
}

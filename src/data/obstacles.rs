//! Shapes of the game's world that round bodies touch: [`Obstacle`],
//! [`ObstacleVelocity`], [`ObstacleState`].

use bevy::math::primitives::{
    Capsule2d, Capsule3d, Circle, ConvexPolygon, Cuboid, Cylinder, HalfSpace, Rectangle, Sphere,
};
use bevy::prelude::*;

use crate::data::issues::ObstacleProblem;
use crate::kernels::shapes::{Shape, Triangles};

/// A shape of the game's world that bodies with a [`Radius`](crate::Radius)
/// touch and cannot pass: a wall, a ramp, a platform, a character's limb,
/// a level's floors, a terrain. Placed by the entity's transform (its
/// `Transform` and those of its parents: translation, rotation and scale).
///
/// - 3D: [`Sphere`], [`Cuboid`], [`Capsule3d`] and [`Cylinder`] (both
///   along their local `Y`), [`HalfSpace`] (solid where it contains
///   points: `normal · p + d > 0`, the normal pointing into the solid).
/// - 2D, in the local `XY` plane, as prisms endless along local `Z`:
///   [`Circle`], [`Rectangle`], [`Capsule2d`], [`ConvexPolygon`].
/// - Level geometry: a [`TriangleMesh`] (also from a Bevy `Mesh`) and a
///   [`HeightField`], laid out once in a grid of their triangles.
///
/// A scale applies where the shape stays of its kind: per axis for a
/// cuboid, rectangle, polygon, mesh or height field, `Y` apart from `XZ`
/// for a cylinder (`X` and `Z` equal), uniform for the rest. Any other
/// scale, a size that is zero, negative or not finite, a polygon of fewer
/// than three corners or one that is not convex, a mesh with non-finite
/// vertices, indices out of range or no triangle with an area, a height
/// field with non-finite heights or not `rows × columns` of them, a
/// non-finite transform, or an obstacle that is also a
/// [`Body`](crate::Body) is reported once
/// ([`PhysicsIssue::Obstacle`](crate::PhysicsIssue::Obstacle)) and the
/// shape is left out until it is fixed.
///
/// Its surface is the entity's [`ContactMaterial`](crate::ContactMaterial)
/// (combined with a body's own as for two bodies; the default without
/// one), and its [`CollisionGroups`](crate::CollisionGroups) filter which
/// bodies touch it. Contacts are found each pass within the speculative
/// margin, so a fast body does not tunnel through a thin shape.
///
/// An obstacle that moves pushes bodies with its own velocity, taken from
/// its motion between fixed steps (or from [`ObstacleVelocity`]): friction
/// carries a body resting on a moving platform along. Move it in
/// `FixedUpdate` (or animate it) and its motion is swept through the step;
/// [`ObstacleState::teleport`] moves it without pushing anything. Its pose
/// is read at the start of each fixed step from its `Transform` and its
/// parents' (not from `GlobalTransform`, which Bevy propagates only after
/// the fixed steps of a frame).
///
/// ```
/// use bevy::prelude::*;
/// use bevy_euler_physics::prelude::*;
///
/// fn spawn_level(mut commands: Commands) {
///     // A ramp: a box turned by 20°, a little slippery.
///     commands.spawn((
///         Obstacle::from(Cuboid::new(4.0, 0.2, 2.0)),
///         Transform::from_rotation(Quat::from_rotation_z(20f32.to_radians())),
///         ContactMaterial::new(0.0, 0.3),
///     ));
///     // The ground: solid below y = 0.
///     commands.spawn(Obstacle::from(HalfSpace::new(Vec3::NEG_Y.extend(0.0))));
///     // A ball to roll down it.
///     commands.spawn((Body::new(1.0).with_position(Vec3::new(-1.0, 2.0, 0.0)), Radius(0.1)));
/// }
/// # App::new().add_systems(Startup, spawn_level);
/// ```
#[derive(Component, Reflect, Debug, Clone, PartialEq)]
#[reflect(Component, Debug, PartialEq, Clone)]
#[require(Transform, ObstacleState)]
pub enum Obstacle {
    /// A ball.
    Sphere(Sphere),
    /// A box.
    Cuboid(Cuboid),
    /// A capsule along local `Y`.
    Capsule(Capsule3d),
    /// A cylinder along local `Y`.
    Cylinder(Cylinder),
    /// A half-space, solid along its normal.
    HalfSpace(HalfSpace),
    /// A 2D circle (an endless round column along `Z`).
    Circle(Circle),
    /// A 2D rectangle (an endless square column along `Z`).
    Rectangle(Rectangle),
    /// A 2D capsule along local `Y`.
    Capsule2d(Capsule2d),
    /// A 2D convex polygon.
    ConvexPolygon(ConvexPolygon),
    /// Triangles: a level's floors, ramps and walls.
    TriangleMesh(TriangleMesh),
    /// A height field: a terrain.
    HeightField(HeightField),
}

macro_rules! obstacle_from {
    ($($kind:ident => $variant:ident),*) => {$(
        impl From<$kind> for Obstacle {
            fn from(shape: $kind) -> Self {
                Self::$variant(shape)
            }
        }
    )*};
}

obstacle_from!(
    Sphere => Sphere, Cuboid => Cuboid, Capsule3d => Capsule, Cylinder => Cylinder,
    HalfSpace => HalfSpace, Circle => Circle, Rectangle => Rectangle,
    Capsule2d => Capsule2d, ConvexPolygon => ConvexPolygon, TriangleMesh => TriangleMesh,
    HeightField => HeightField
);

/// Triangles of a level (a floor, ramps, stairs, walls), as an
/// [`Obstacle`]: vertices in its own frame and the triangles among them.
/// Two-sided by default (bodies stay off both faces, at their radius);
/// [`one_sided`](Self::one_sided) keeps them in front of each triangle
/// (counter-clockwise seen from the front), pushing out to the front what
/// came behind (a closed mesh's outside, a terrain's top). Any scale
/// applies. The triangles are laid out once in a grid (again when the
/// obstacle or its scale changes), so each body looks up the few near it.
///
/// ```
/// use bevy::prelude::*;
/// use bevy_euler_physics::prelude::*;
///
/// // A ramp of two triangles, rising along +X.
/// let ramp = TriangleMesh::new(
///     vec![Vec3::new(0.0, 0.0, -1.0), Vec3::new(0.0, 0.0, 1.0), Vec3::new(3.0, 1.0, 1.0), Vec3::new(3.0, 1.0, -1.0)],
///     vec![[0, 1, 2], [0, 2, 3]],
/// );
/// let mut world = World::new();
/// world.spawn(Obstacle::from(ramp.one_sided()));
/// ```
#[derive(Reflect, Debug, Clone, PartialEq, Default)]
#[reflect(Debug, PartialEq, Clone, Default)]
pub struct TriangleMesh {
    /// The vertices, in the obstacle's frame.
    pub vertices: Vec<Vec3>,
    /// The triangles: three indices into `vertices` each.
    pub triangles: Vec<[u32; 3]>,
    /// Whether bodies are kept in front of the triangles alone.
    pub one_sided: bool,
}

impl TriangleMesh {
    /// Two-sided triangles of `vertices`.
    ///
    /// ```
    /// # use bevy::prelude::*;
    /// # use bevy_euler_physics::prelude::*;
    /// let one = TriangleMesh::new(vec![Vec3::ZERO, Vec3::X, Vec3::Z], vec![[0, 2, 1]]);
    /// assert!(!one.one_sided);
    /// ```
    pub fn new(vertices: Vec<Vec3>, triangles: Vec<[u32; 3]>) -> Self {
        Self {
            vertices,
            triangles,
            one_sided: false,
        }
    }

    /// The same triangles, keeping bodies in front of them alone.
    ///
    /// ```
    /// # use bevy::prelude::*;
    /// # use bevy_euler_physics::prelude::*;
    /// assert!(TriangleMesh::default().one_sided().one_sided);
    /// ```
    pub fn one_sided(self) -> Self {
        Self {
            one_sided: true,
            ..self
        }
    }

    /// The triangles of a Bevy `Mesh` (a triangle list with
    /// `Mesh::ATTRIBUTE_POSITION`, indexed or not), two-sided (feature
    /// `soft-mesh`, which brings Bevy's mesh crate).
    ///
    /// ```
    /// use bevy::prelude::*;
    /// use bevy_euler_physics::prelude::*;
    ///
    /// let floor = TriangleMesh::from_mesh(&Plane3d::default().mesh().size(4.0, 4.0).build()).unwrap();
    /// assert_eq!(floor.triangles.len(), 2);
    /// ```
    #[cfg(feature = "soft-mesh")]
    pub fn from_mesh(mesh: &bevy::mesh::Mesh) -> Result<Self, crate::data::issues::MeshProblem> {
        let (vertices, indices) = mesh_triangles(mesh)?;
        let triangles = indices
            .chunks_exact(3)
            .map(|t| [t[0], t[1], t[2]])
            .collect();
        Ok(Self::new(vertices, triangles))
    }
}

/// The positions and triangle indices of a Bevy `Mesh` (a triangle list;
/// all vertices in order when it has no indices), or why it has none.
#[cfg(feature = "soft-mesh")]
pub(crate) fn mesh_triangles(
    mesh: &bevy::mesh::Mesh,
) -> Result<(Vec<Vec3>, Vec<u32>), crate::data::issues::MeshProblem> {
    use crate::data::issues::MeshProblem;
    use bevy::mesh::{Mesh, PrimitiveTopology, VertexAttributeValues};
    if mesh.primitive_topology() != PrimitiveTopology::TriangleList {
        return Err(MeshProblem::NotTriangles);
    }
    let Ok(Some(VertexAttributeValues::Float32x3(local))) =
        mesh.try_attribute_option(Mesh::ATTRIBUTE_POSITION)
    else {
        return Err(MeshProblem::NoPositions);
    };
    let local: Vec<Vec3> = local.iter().map(|&p| Vec3::from(p)).collect();
    let indices: Vec<u32> = match mesh.try_indices_option() {
        Ok(Some(indices)) => indices.iter().map(|i| i as u32).collect(),
        Ok(None) => (0..local.len() as u32).collect(),
        Err(_) => return Err(MeshProblem::NoPositions),
    };
    Ok((local, indices))
}

/// A height field (a terrain), as an [`Obstacle`]: `heights` in rows of
/// `columns`, row by row along `+Z`, each row along `+X`, spread evenly
/// over `size` (X by Z) centred on the obstacle's origin, up along `+Y`.
/// One-sided: a body that came below is pushed back up. At least 2 × 2
/// heights, all finite.
///
/// ```
/// use bevy::prelude::*;
/// use bevy_euler_physics::prelude::*;
///
/// // A hill: 33 × 33 heights over 16 m × 16 m.
/// let n = 33;
/// let heights = (0..n * n)
///     .map(|i| {
///         let (x, z) = ((i % n) as f32 / 16.0 - 1.0, (i / n) as f32 / 16.0 - 1.0);
///         2.0 * (-(x * x + z * z) * 3.0).exp()
///     })
///     .collect();
/// let mut world = World::new();
/// world.spawn(Obstacle::from(HeightField::new(heights, n as u32, Vec2::splat(16.0))));
/// ```
#[derive(Reflect, Debug, Clone, PartialEq, Default)]
#[reflect(Debug, PartialEq, Clone, Default)]
pub struct HeightField {
    /// Row by row.
    pub heights: Vec<f32>,
    /// Heights in a row.
    pub columns: u32,
    /// The extent along X and Z.
    pub size: Vec2,
}

impl HeightField {
    /// `heights` in rows of `columns`, over `size`.
    ///
    /// ```
    /// # use bevy::prelude::*;
    /// # use bevy_euler_physics::prelude::*;
    /// let flat = HeightField::new(vec![0.0; 4], 2, Vec2::ONE);
    /// assert_eq!(flat.columns, 2);
    /// ```
    pub fn new(heights: Vec<f32>, columns: u32, size: Vec2) -> Self {
        Self {
            heights,
            columns,
            size,
        }
    }

    /// Its triangles as a one-sided [`TriangleMesh`] in its own frame (two
    /// per cell of the grid, counter-clockwise from above): what the
    /// obstacle is made of, and a mesh to draw it with. Or what is wrong.
    ///
    /// ```
    /// # use bevy::prelude::*;
    /// # use bevy_euler_physics::prelude::*;
    /// let field = HeightField::new(vec![0.0, 0.0, 0.0, 1.0, 1.0, 1.0], 3, Vec2::new(2.0, 1.0));
    /// let mesh = field.triangle_mesh().unwrap();
    /// assert_eq!((mesh.vertices.len(), mesh.triangles.len()), (6, 4));
    /// assert_eq!(mesh.vertices[5], Vec3::new(1.0, 1.0, 0.5));
    /// ```
    pub fn triangle_mesh(&self) -> Result<TriangleMesh, ObstacleProblem> {
        let (n, columns) = (self.heights.len(), self.columns as usize);
        let rows = n.checked_div(columns).unwrap_or(0);
        let size_ok = self.size.is_finite() && self.size.min_element() > 0.0;
        if columns < 2 || rows < 2 || rows * columns != n || !size_ok {
            return Err(ObstacleProblem::HeightFieldSamples {
                heights: n as u32,
                columns: self.columns,
            });
        }
        let step = self.size / Vec2::new((columns - 1) as f32, (rows - 1) as f32);
        let origin = -0.5 * self.size;
        let vertices = self
            .heights
            .iter()
            .enumerate()
            .map(|(i, &h)| {
                let at = origin + step * Vec2::new((i % columns) as f32, (i / columns) as f32);
                Vec3::new(at.x, h, at.y)
            })
            .collect();
        let mut triangles = Vec::with_capacity(2 * (rows - 1) * (columns - 1));
        for r in 0..rows - 1 {
            for c in 0..columns - 1 {
                let i = (r * columns + c) as u32;
                let (right, down) = (i + 1, i + columns as u32);
                triangles.push([i, down, right]);
                triangles.push([right, down, down + 1]);
            }
        }
        Ok(TriangleMesh {
            vertices,
            triangles,
            one_sided: true,
        })
    }
}

/// The triangles of `mesh` scaled, checked, in the kernel's form (grid
/// cells at least `min_cell` wide).
fn triangles_of(
    mesh: &TriangleMesh,
    scale: Vec3,
    min_cell: f32,
) -> Result<Triangles, ObstacleProblem> {
    let bad = mesh.vertices.iter().filter(|v| !v.is_finite()).count();
    if bad > 0 {
        return Err(ObstacleProblem::NonFiniteVertices { count: bad as u32 });
    }
    let count = mesh.vertices.len() as u32;
    if let Some(&index) = mesh.triangles.iter().flatten().find(|&&i| i >= count) {
        return Err(ObstacleProblem::IndexOutOfRange {
            index,
            vertices: count,
        });
    }
    let vertices = mesh.vertices.iter().map(|&v| (v * scale).into()).collect();
    let triangles = Triangles::new(vertices, &mesh.triangles, mesh.one_sided, min_cell);
    if triangles.triangles.is_empty() {
        return Err(ObstacleProblem::EmptyMesh);
    }
    Ok(triangles)
}

/// Whether `a` and `b` are equal within a relative `1e-4`.
fn same(a: f32, b: f32) -> bool {
    (a - b).abs() <= 1e-4 * a.abs().max(b.abs())
}

impl Obstacle {
    /// The shape in its own frame with `scale` applied (the polygons'
    /// corners appended to `vertices`, counter-clockwise), or what is
    /// wrong with it.
    ///
    /// ```
    /// # use bevy::prelude::*;
    /// # use bevy_euler_physics::prelude::*;
    /// # use bevy_euler_physics::diagnostics::ObstacleProblem;
    /// let ball = Obstacle::from(Sphere::new(1.0));
    /// assert!(ball.check(Vec3::splat(2.0)).is_ok());
    /// assert_eq!(
    ///     ball.check(Vec3::new(1.0, 2.0, 1.0)),
    ///     Err(ObstacleProblem::NonUniformScale { scale: Vec3::new(1.0, 2.0, 1.0) })
    /// );
    /// assert_eq!(Obstacle::from(Sphere::new(-1.0)).check(Vec3::ONE), Err(ObstacleProblem::InvalidSize));
    /// ```
    pub fn check(&self, scale: Vec3) -> Result<(), ObstacleProblem> {
        match self.triangles(scale, 0.0) {
            Some(triangles) => triangles.map(|_| ()),
            None => self.shape(scale, &mut Vec::new()).map(|_| ()),
        }
    }

    /// A triangle mesh's or height field's triangles in its own frame,
    /// scaled, or what is wrong; `None` for the other shapes.
    /// Their grid's cells are at least `min_cell` wide.
    pub(crate) fn triangles(
        &self,
        scale: Vec3,
        min_cell: f32,
    ) -> Option<Result<Triangles, ObstacleProblem>> {
        let checked = |scale: Vec3| {
            if scale.is_finite() && scale.min_element() > 0.0 {
                Ok(scale)
            } else {
                Err(ObstacleProblem::InvalidSize)
            }
        };
        match self {
            Self::TriangleMesh(mesh) => {
                Some(checked(scale).and_then(|s| triangles_of(mesh, s, min_cell)))
            }
            Self::HeightField(field) => Some(checked(scale).and_then(|s| {
                field
                    .triangle_mesh()
                    .and_then(|mesh| triangles_of(&mesh, s, min_cell))
            })),
            _ => None,
        }
    }

    pub(crate) fn shape(
        &self,
        scale: Vec3,
        vertices: &mut Vec<Vec2>,
    ) -> Result<Shape, ObstacleProblem> {
        let uniform = |s: Vec3| {
            if same(s.x, s.y) && same(s.y, s.z) {
                Ok(s.x)
            } else {
                Err(ObstacleProblem::NonUniformScale { scale: s })
            }
        };
        let flat = |s: Vec3| {
            if same(s.x, s.y) {
                Ok(s.x)
            } else {
                Err(ObstacleProblem::NonUniformScale { scale: s })
            }
        };
        let size = |x: f32| {
            if x > 0.0 && x.is_finite() {
                Ok(x)
            } else {
                Err(ObstacleProblem::InvalidSize)
            }
        };
        let length = |x: f32| {
            if x >= 0.0 && x.is_finite() {
                Ok(x)
            } else {
                Err(ObstacleProblem::InvalidSize)
            }
        };
        if !(scale.is_finite() && scale.min_element() > 0.0) {
            return Err(ObstacleProblem::InvalidSize);
        }
        Ok(match self {
            Self::Sphere(s) => Shape::Sphere {
                radius: size(s.radius * uniform(scale)?)?,
            },
            Self::Cuboid(c) => {
                let half = c.half_size * scale;
                for x in half.to_array() {
                    size(x)?;
                }
                Shape::Cuboid { half: half.into() }
            }
            Self::Capsule(c) => {
                let s = uniform(scale)?;
                Shape::Capsule {
                    radius: size(c.radius * s)?,
                    half_length: length(c.half_length * s)?,
                }
            }
            Self::Cylinder(c) => {
                if !same(scale.x, scale.z) {
                    return Err(ObstacleProblem::NonUniformScale { scale });
                }
                Shape::Cylinder {
                    radius: size(c.radius * scale.x)?,
                    half_height: size(c.half_height * scale.y)?,
                }
            }
            Self::HalfSpace(h) => {
                let normal = (Vec3::from(h.normal()) / scale).normalize_or_zero();
                if !(normal.length_squared() > 0.0 && h.d().is_finite()) {
                    return Err(ObstacleProblem::InvalidSize);
                }
                // The plane's point nearest the origin, scaled, stays on it.
                let on = Vec3::from(h.normal()) * -h.d() * scale;
                Shape::HalfSpace {
                    normal: normal.into(),
                    d: -normal.dot(on),
                }
            }
            Self::Circle(c) => Shape::Circle {
                radius: size(c.radius * flat(scale)?)?,
            },
            Self::Rectangle(r) => {
                let half = r.half_size * scale.truncate();
                size(half.x)?;
                size(half.y)?;
                Shape::Rectangle { half }
            }
            Self::Capsule2d(c) => {
                let s = flat(scale)?;
                Shape::Capsule2d {
                    radius: size(c.radius * s)?,
                    half_length: length(c.half_length * s)?,
                }
            }
            Self::ConvexPolygon(p) => polygon(p.vertices(), scale.truncate(), vertices)?,
            // Its triangles are the step's (`triangles`), found by index.
            Self::TriangleMesh(_) | Self::HeightField(_) => Shape::Mesh { mesh: u32::MAX },
        })
    }
}

/// A convex polygon's corners, scaled, appended counter-clockwise (on an
/// error, some may have been appended).
fn polygon(
    corners: &[Vec2],
    scale: Vec2,
    vertices: &mut Vec<Vec2>,
) -> Result<Shape, ObstacleProblem> {
    let n = corners.len();
    if n < 3 {
        return Err(ObstacleProblem::NotAPolygon);
    }
    let start = vertices.len();
    vertices.extend(corners.iter().map(|&c| c * scale));
    let scaled = &mut vertices[start..];
    if !scaled.iter().all(|c| c.is_finite()) {
        return Err(ObstacleProblem::InvalidSize);
    }
    let turn = |i: usize| {
        let (a, b, c) = (scaled[i], scaled[(i + 1) % n], scaled[(i + 2) % n]);
        (b - a).perp_dot(c - b)
    };
    let area: f32 = (0..n)
        .map(|i| scaled[i].perp_dot(scaled[(i + 1) % n]))
        .sum();
    // Convex: every corner turns the way the whole polygon does.
    if area == 0.0 || (0..n).any(|i| turn(i) * area < 0.0) {
        return Err(ObstacleProblem::NotAPolygon);
    }
    if area < 0.0 {
        scaled.reverse();
    }
    Ok(Shape::Polygon {
        start: start as u32,
        end: vertices.len() as u32,
    })
}

/// The velocity an [`Obstacle`]'s surface moves at, given by your code
/// instead of taken from its motion between steps: the linear velocity
/// of its frame's origin and its angular velocity (radians per second
/// about the axis). A conveyor belt is an obstacle that stays in place
/// with a velocity along its surface.
///
/// ```
/// use bevy::prelude::*;
/// use bevy_euler_physics::prelude::*;
///
/// fn spawn_belt(mut commands: Commands) {
///     commands.spawn((
///         Obstacle::from(Cuboid::new(6.0, 0.2, 1.0)),
///         ObstacleVelocity::linear(Vec3::X * 0.5),
///     ));
/// }
/// # App::new().add_systems(Startup, spawn_belt);
/// ```
#[derive(Component, Reflect, Debug, Clone, Copy, PartialEq, Default)]
#[reflect(Component, Debug, PartialEq, Clone, Default)]
pub struct ObstacleVelocity {
    /// Metres per second.
    pub linear: Vec3,
    /// Radians per second about the axis, through the frame's origin.
    pub angular: Vec3,
}

impl ObstacleVelocity {
    /// A surface moving at `linear`, not turning.
    ///
    /// ```
    /// # use bevy::prelude::*;
    /// # use bevy_euler_physics::prelude::*;
    /// assert_eq!(ObstacleVelocity::linear(Vec3::X).angular, Vec3::ZERO);
    /// ```
    pub const fn linear(linear: Vec3) -> Self {
        Self {
            linear,
            angular: Vec3::ZERO,
        }
    }
}

/// What the bodies pushed an [`Obstacle`] with over the last fixed step,
/// written by the plugin at the step's end on each obstacle that has this
/// component (add it to those you want to know about; the rest cost
/// nothing).
///
/// Its reaction is the opposite of the momentum its contacts gave the
/// bodies, summed over the step's passes (the momentum the bodies and the
/// obstacle exchanged is conserved exactly), and its moment about the
/// obstacle's position at the step's end. To let bodies push a movable
/// object (a crate a net catches, a door a ball swings), give the obstacle
/// an [`ObstacleMass`] (it then gives way within the step as a free body
/// would) and apply the reaction to the object after the step, as an
/// impulse: the next step sees it move. Without a mass an obstacle is as
/// heavy as the world within the step, and an object lighter than the
/// bodies that hit it would take too much. The avian bridge of this
/// repository does both for avian's rigid bodies.
///
/// A step that pushed the obstacle marks its reaction changed, even with
/// the same value as at the last step (each step's push is a new one), and
/// one that set it back to zero does too; a step that left it at zero
/// does not. So `Changed<ObstacleReaction>` finds every reaction to apply
/// after a step without visiting the rest.
///
/// A sleeping body pushes nothing: a pile asleep on an obstacle leaves its
/// reaction at zero until the obstacle moves (which wakes it) or the pile
/// wakes. Keep such bodies awake ([`SleepingDisabled`](crate::SleepingDisabled))
/// where their weight must be felt at every step.
///
/// ```
/// use bevy::prelude::*;
/// use bevy_euler_physics::prelude::*;
///
/// let mut app = App::new();
/// app.add_plugins((MinimalPlugins, TransformPlugin, EulerPhysicsPlugin));
/// let world = app.world_mut();
/// // A tray, and a 2 kg ball resting on it.
/// let tray = world
///     .spawn((Obstacle::from(Cuboid::new(2.0, 0.2, 2.0)), ObstacleReaction::default()))
///     .id();
/// world.spawn((
///     Body::new(2.0).with_position(Vec3::new(0.0, 0.2, 0.0)),
///     Radius(0.1),
///     SleepingDisabled,
/// ));
/// for _ in 0..120 {
///     app.world_mut().run_schedule(FixedUpdate);
/// }
/// // At rest, the ball presses on the tray with its weight times the step.
/// let h = app.world().resource::<Time<Fixed>>().timestep().as_secs_f32();
/// let push = app.world().get::<ObstacleReaction>(tray).unwrap().impulse;
/// assert!((push.y + 2.0 * 9.81 * h).abs() < 0.01 * 2.0 * 9.81 * h, "{push}");
/// ```
#[derive(Component, Reflect, Debug, Clone, Copy, PartialEq, Default)]
#[reflect(Component, Debug, PartialEq, Clone, Default)]
pub struct ObstacleReaction {
    /// The impulse (N·s) the bodies gave the obstacle over the last step.
    pub impulse: Vec3,
    /// Its moment (N·m·s) about the obstacle's position at the step's end
    /// (its global translation): `Σ (contact point − position) × impulse`.
    pub angular_impulse: Vec3,
}

/// The mass of the body an [`Obstacle`] belongs to, so that it gives way
/// to the bodies it meets within a step: a contact shares each change of
/// speed between the body and the obstacle's body by their inverse masses
/// (the obstacle's turning included), and the obstacle's body speeds up
/// as the step goes, through all its contacts in turn (its change shows
/// in [`ObstacleReaction`], for your code or a bridge to apply). Without
/// it an obstacle is as heavy as the world.
///
/// The values are in the world frame, as at the step's start: write them
/// each step for a body that turns. Obstacles naming the same `body` (the
/// parts of one rigid body) share one motion. The obstacle's pose still
/// follows its `Transform` (the step sweeps it from where the last step
/// left it): what it gained shows at the next step, once applied. A
/// negative or non-finite value is reported once
/// ([`ObstacleProblem::InvalidMass`](crate::diagnostics::ObstacleProblem::InvalidMass))
/// and the obstacle does not give way.
///
/// ```
/// use bevy::prelude::*;
/// use bevy_euler_physics::prelude::*;
///
/// let mut app = App::new();
/// app.add_plugins((MinimalPlugins, TransformPlugin, EulerPhysicsPlugin))
///     .insert_resource(Gravity(Vec3::ZERO));
/// let world = app.world_mut();
/// // A 1 kg box, and a 1 kg ball at 2 m/s just touching it: in one step
/// // they share the hit, and leave at 1 m/s each.
/// let crate_ = world.spawn_empty().id();
/// world.entity_mut(crate_).insert((
///     Obstacle::from(Cuboid::new(0.5, 0.5, 0.5)),
///     Transform::from_xyz(1.0, 0.0, 0.0),
///     ObstacleMass::new(crate_, 1.0, Mat3::from_diagonal(Vec3::splat(24.0)), Vec3::X),
///     ContactMaterial::new(0.0, 0.0),
///     ObstacleReaction::default(),
/// ));
/// let ball = Body::new(1.0).with_position(Vec3::new(0.65, 0.0, 0.0)).with_velocity(Vec3::X * 2.0);
/// let ball = world.spawn((ball, Radius(0.1))).id();
/// app.world_mut().run_schedule(FixedUpdate);
/// let v = app.world().get::<Body>(ball).unwrap().velocity;
/// // What the box got, for the game to apply to it (1 N·s: 1 m/s).
/// let pushed = app.world().get::<ObstacleReaction>(crate_).unwrap().impulse;
/// assert!((v.x - 1.0).abs() < 1e-4 && (pushed.x - 1.0).abs() < 1e-4, "{v} {pushed}");
/// ```
#[derive(Component, Reflect, Debug, Clone, Copy, PartialEq)]
#[reflect(Component, Debug, PartialEq, Clone)]
pub struct ObstacleMass {
    /// The body whose motion this is (obstacles naming the same one move
    /// together).
    pub body: Entity,
    /// `1 / mass` (1/kg); 0 does not give way.
    pub inverse_mass: f32,
    /// The inverse of its inertia tensor about its centre of mass, in the
    /// world frame (1/(kg·m²)); zero does not turn.
    pub inverse_inertia: Mat3,
    /// Its centre of mass, in the world.
    pub center_of_mass: Vec3,
}

impl ObstacleMass {
    /// The body `body` of mass `mass` (kg; not positive or not finite:
    /// reported, and the obstacle does not give way), with the inverse
    /// inertia tensor `inverse_inertia` (world frame) about
    /// `center_of_mass` (world).
    ///
    /// ```
    /// # use bevy::prelude::*;
    /// # use bevy_euler_physics::prelude::*;
    /// let m = ObstacleMass::new(Entity::PLACEHOLDER, 4.0, Mat3::ZERO, Vec3::ZERO);
    /// assert_eq!(m.inverse_mass, 0.25);
    /// ```
    pub fn new(body: Entity, mass: f32, inverse_inertia: Mat3, center_of_mass: Vec3) -> Self {
        Self {
            body,
            inverse_mass: if mass > 0.0 { mass.recip() } else { f32::NAN },
            inverse_inertia,
            center_of_mass,
        }
    }

    /// Whether every value is finite and the inverse mass not negative.
    pub(crate) fn is_valid(&self) -> bool {
        self.inverse_mass >= 0.0
            && self.inverse_mass.is_finite()
            && self.inverse_inertia.is_finite()
            && self.center_of_mass.is_finite()
    }
}

/// Holds a body at a point of another entity (a ball joint): a rope's
/// end tied to a crate, a chain hung from a moving platform. The point is
/// `anchor` in the target's frame (its `Transform` and its parents', read
/// at the step's start); it moves at the target's [`ObstacleVelocity`]
/// if the target has one (else the body follows the point's moves through
/// the position bias alone). Where a body's [`ObstacleMass`] names the
/// target (`body: target`), the target gives way: each round shares the
/// tie's pull between the body and the target by their inverse masses, as
/// a contact does, and the target's [`ObstacleReaction`] (if it has one)
/// adds what the tie pulled it with, so that a rope lifts a crate and the
/// crate pulls the rope. A sleeping body on a target that moves or gives
/// way is woken (at the next step). An island of
/// [`ImplicitSprings`](crate::ImplicitSprings) feels a target that gives
/// way only through the tie, after its implicit solve, which does not
/// see the target's mass: a rope of implicit springs tied to a heavy
/// rigid body stretches far more than its springs say (tie explicit
/// springs, with [`AutoSubsteps`](crate::AutoSubsteps) where they are
/// stiff, as a [`Rope`](crate::Rope) with a
/// [`RopeEnd::Tied`](crate::RopeEnd::Tied) end does by default).
///
/// The body does not touch what it is tied to, as jointed rigid bodies do
/// not: neither the target's own [`Obstacle`] nor any obstacle whose
/// [`ObstacleMass`] names the target (a rigid body's colliders). A rope's
/// end tied to a crate's face is held there by the tie alone, not pushed
/// out by the face at every step. Its other bodies touch the crate.
///
/// A target that is gone or has no finite transform, an anchor that is
/// not finite, or a fixed body is reported once
/// ([`PhysicsIssue::BadTie`](crate::PhysicsIssue::BadTie)) and the body
/// is not held.
///
/// ```
/// use bevy::prelude::*;
/// use bevy_euler_physics::prelude::*;
///
/// let mut app = App::new();
/// app.add_plugins((MinimalPlugins, TransformPlugin, EulerPhysicsPlugin));
/// let world = app.world_mut();
/// // A hook 2 m up, and a ball hanging from it by a tie.
/// let hook = world.spawn(Transform::from_xyz(0.0, 2.0, 0.0)).id();
/// let ball = world
///     .spawn((Body::new(1.0).with_position(Vec3::new(0.0, 2.0, 0.0)), TiedTo::new(hook, Vec3::ZERO)))
///     .id();
/// for _ in 0..60 {
///     app.world_mut().run_schedule(FixedUpdate);
/// }
/// let p = app.world().get::<Body>(ball).unwrap().position;
/// assert!((p - Vec3::new(0.0, 2.0, 0.0)).length() < 1e-3, "{p}");
/// ```
#[derive(Component, Reflect, Debug, Clone, Copy, PartialEq)]
#[reflect(Component, Debug, PartialEq, Clone)]
pub struct TiedTo {
    /// The entity whose point holds the body.
    pub target: Entity,
    /// The point, in the target's frame.
    pub anchor: Vec3,
}

impl TiedTo {
    /// Holds the body at `anchor` (in `target`'s frame).
    ///
    /// ```
    /// # use bevy::prelude::*;
    /// # use bevy_euler_physics::prelude::*;
    /// let tie = TiedTo::new(Entity::PLACEHOLDER, Vec3::Y);
    /// assert_eq!(tie.anchor, Vec3::Y);
    /// ```
    pub const fn new(target: Entity, anchor: Vec3) -> Self {
        Self { target, anchor }
    }
}

/// What the plugin keeps of an [`Obstacle`] between fixed steps (added
/// with it): where the last step left it, from which the next step sweeps
/// it to where it is now, and the problem last reported about it.
///
/// ```
/// use bevy::prelude::*;
/// use bevy_euler_physics::prelude::*;
///
/// // A door put back in its frame at once: it pushes nothing on the way.
/// fn reset_door(mut doors: Query<(&mut Transform, &mut ObstacleState), With<Obstacle>>) {
///     for (mut transform, mut state) in &mut doors {
///         transform.rotation = Quat::IDENTITY;
///         state.teleport();
///     }
/// }
/// # App::new().add_systems(FixedUpdate, reset_door.in_set(PhysicsSystems::Prepare));
/// ```
#[derive(Component, Reflect, Debug, Clone, Copy, PartialEq, Default)]
#[reflect(Component, Debug, PartialEq, Clone, Default)]
pub struct ObstacleState {
    /// Where the last step left it: translation and rotation (none before
    /// its first step).
    pub(crate) previous: Option<(Vec3, Quat)>,
    /// Whether the next step places it at once, without sweeping it.
    pub(crate) teleport: bool,
    /// The problem last reported, until it is fixed.
    pub(crate) reported: Option<ObstacleProblem>,
}

impl ObstacleState {
    /// Makes the next step place the obstacle where it is without moving
    /// it there: it pushes nothing on its way, and its surface is at rest
    /// for that step (unless an [`ObstacleVelocity`] says otherwise).
    ///
    /// ```
    /// # use bevy_euler_physics::prelude::*;
    /// let mut state = ObstacleState::default();
    /// state.teleport();
    /// assert!(state.teleports());
    /// ```
    pub fn teleport(&mut self) {
        self.teleport = true;
    }

    /// Whether the next step places the obstacle without sweeping it.
    ///
    /// ```
    /// # use bevy_euler_physics::prelude::*;
    /// assert!(!ObstacleState::default().teleports());
    /// ```
    pub fn teleports(&self) -> bool {
        self.teleport
    }

    /// Where the last step left the obstacle (translation, rotation).
    ///
    /// ```
    /// # use bevy_euler_physics::prelude::*;
    /// assert_eq!(ObstacleState::default().previous(), None);
    /// ```
    pub fn previous(&self) -> Option<(Vec3, Quat)> {
        self.previous
    }

    /// Moves where it was left by `−offset` (an origin shift).
    pub(crate) fn shift(&mut self, offset: Vec3) {
        if let Some((c, _)) = &mut self.previous {
            *c -= offset;
        }
    }
}

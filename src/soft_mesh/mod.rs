//! The game's own meshes made soft (feature `soft-mesh`): a [`SoftMesh`] on
//! an entity with a `Mesh3d` (or `Mesh2d`) turns its mesh into bodies and
//! springs, pinned where you say, and draws the mesh from them every frame.
//!
//! # What is built
//!
//! When the mesh asset is ready (and again when it changes, or when the
//! entity gets another mesh or a new `SoftMesh`):
//!
//! - **Bodies.** One per distinct vertex position: vertices the mesh
//!   repeats at UV seams and hard edges (within
//!   [`SoftMesh::weld_tolerance`] of the mesh's size) are welded into one
//!   body, placed in the world through the entity's transform. Each
//!   body's mass is its share of the surface (a third of each triangle it
//!   is a corner of), of the total mass or at the surface density given
//!   ([`SoftMass`]).
//! - **Springs.** One along each triangle edge (stretch), and one across
//!   each edge between two triangles, between the two vertices opposite it
//!   (bending).
//! - **Pressure.** For a closed mesh, an optional bulk modulus
//!   ([`SoftMesh::pressure`]): a force of each step that pushes the
//!   surface out (or in) in proportion to how far the enclosed volume is
//!   from its volume when built — a balloon, a jelly. It is explicit (read
//!   at the step's start): the mode it drives, the whole surface breathing
//!   in and out, has `ω² = (K/V₀)·Σ|∂V/∂x_i|²/m_i` (about `K·A²/(V₀·M)`
//!   for a surface of area `A` and mass `M`), which must keep `ω·h < 2`;
//!   a mesh past it is reported when built
//!   ([`MeshProblem::StiffPressure`](crate::diagnostics::MeshProblem::StiffPressure)).
//! - **Pins.** Vertices chosen by index, by a test on their position in the
//!   mesh's own frame, or by their colour ([`PinSelect`]) become fixed
//!   bodies that follow the entity's transform, or another entity's
//!   ([`PinnedTo`](crate::PinnedTo)).
//!
//! # Stiffness that does not depend on the resolution
//!
//! The stretch is set by a frequency `f` ([`SoftMesh::stretch_hertz`]):
//! the mesh's material gets the sheet modulus `E = 16·M·f²` (N/m), which
//! is the modulus at which a square of the mesh's area `A` and mass `M`,
//! hanging from one edge, stretches and springs back at `f` (the surface's
//! wave speed is `√(E·A/M)`, its lowest mode `f = √(E·A/M)/(4·√A)`). Each
//! edge spring of rest length `L` on triangles of area `A_e` gets
//! `k = E·A_e/L²`, each bending spring [`SoftMesh::bend`] times that
//! over its two triangles. On a regular mesh these give the same modulus
//! whatever the triangles' size, so a 16×16 and a 128×128 cloth of the
//! same size, mass and `f` sag alike (`tests/soft_mesh.rs` checks it).
//! The springs' damping is in proportion to their stiffness, `c = α·k`,
//! with `α` such that the mode at `f` has [`SoftMesh::damping_ratio`].
//!
//! The mesh's fastest mode is bounded from its stiffest body (Gershgorin):
//! where it is past the explicit step's limit at the fixed timestep
//! (`ω·h/2 > 0.9`), the mesh's bodies get
//! [`ImplicitSprings`](crate::ImplicitSprings), stable at one pass
//! ([`SoftMesh::implicit`] chooses yourself).
//!
//! # Drawing
//!
//! In `Update`, after the interpolation, the entity's mesh (its own copy:
//! two entities made soft from one asset move apart) gets each body's
//! drawn position ([`DrawnPositions`](crate::DrawnPositions)) in the
//! entity's frame (its transform still applies when it is drawn) at every
//! vertex welded into it, smooth normals recomputed from them (one normal
//! a body, so seams do not show), and tangents when the mesh has them
//! (from its UVs). Bevy recomputes the entity's bounding box from the
//! changed asset, so frustum culling follows the mesh. A mesh whose moving
//! bodies all sleep (and whose pinned bodies did not move), on an entity
//! that did not move, is not rewritten. The entity's transform is read as
//! it is when [`SoftMeshSystems::Draw`] runs: move a soft mesh's entity in
//! `Update` before that set (or in the fixed step), or the mesh is drawn
//! a frame's motion off.
//!
//! # Ropes drawn
//!
//! A [`RopeMesh`] beside a [`Rope`](crate::Rope) draws the rope the same
//! way: a tube (or, in 2D, a strip) made every frame around its bodies'
//! drawn positions, written into a mesh of its own in the entity's frame,
//! left alone while the rope rests.
//!
//! # Bad input
//!
//! Problems with the mesh or the settings are reported once per build on
//! the entity ([`PhysicsIssue::SoftMesh`](crate::PhysicsIssue::SoftMesh),
//! a [`PhysicsWarning`](crate::PhysicsWarning)), and the bad part left out:
//! vertices that are not finite and their triangles, degenerate
//! triangles, pins out of range. A mesh with nothing to build (no
//! positions, not a triangle list, empty, a mass that is not positive, an
//! asset that failed to load) keeps its mesh as it is, with no bodies. A
//! pin's target that goes away leaves the pinned body fixed where it was.
//!
//! # Despawning, snapshots and rollback
//!
//! The bodies and springs are entities related to the mesh's
//! ([`PartOfSoftMesh`]): despawning the entity despawns them; removing the
//! `SoftMesh` despawns them and gives the entity its asset back. They are
//! ordinary bodies and springs, so [`PhysicsSnapshot`](crate::PhysicsSnapshot)
//! covers them. Under GGRS, the rollback plugin gives the parts of a mesh
//! whose entity has `Rollback` the marker too, and builds meshes before
//! the session's frame; build them before the session starts (a mesh
//! asset that is ready when the entity is spawned is built in the next
//! `PreUpdate`): a rollback to a frame before a build would despawn its
//! parts.

mod build;
mod draw;
mod rope;

use core::fmt;

use bevy::asset::Handle;
use bevy::ecs::lifecycle::HookContext;
use bevy::ecs::world::DeferredWorld;
use bevy::mesh::{Mesh, Mesh2d, Mesh3d};
use bevy::prelude::*;

use crate::data::constraints::CollisionGroups;

pub(crate) use build::build_soft_meshes;
pub(crate) use draw::{draw_soft_meshes, press_soft_meshes};
pub use rope::RopeMesh;
pub(crate) use rope::{draw_rope_meshes, lay_out_rope_meshes};

/// The soft meshes' systems: [`Build`](Self::Build) in `PreUpdate` makes
/// bodies and springs of the mesh assets that are ready,
/// [`Draw`](Self::Draw) in `Update` (after
/// [`InterpolationSystems::Interpolate`](crate::InterpolationSystems::Interpolate))
/// writes them back into the meshes.
///
/// ```
/// use bevy::prelude::*;
/// use bevy_euler_physics::soft_mesh::SoftMeshSystems;
///
/// fn after_drawing() {}
/// App::new().add_systems(Update, after_drawing.after(SoftMeshSystems::Draw));
/// ```
#[derive(SystemSet, Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SoftMeshSystems {
    /// Bodies and springs from mesh assets.
    Build,
    /// Bodies back into the meshes.
    Draw,
}

/// How much a [`SoftMesh`] weighs.
#[derive(Reflect, Debug, Clone, Copy, PartialEq)]
#[reflect(Debug, PartialEq, Clone)]
pub enum SoftMass {
    /// The whole mesh's mass, in kg.
    Total(f32),
    /// The mass of a square metre of its surface (as placed in the world),
    /// in kg/m².
    PerSquareMetre(f32),
}

/// A test on a vertex's position in the mesh's own frame, for
/// [`PinSelect::Where`]: any function (or closure that captures nothing)
/// from `Vec3` to `bool`.
///
/// ```
/// # use bevy::prelude::*;
/// # use bevy_euler_physics::soft_mesh::PinTest;
/// let top = PinTest(|p| p.y > 0.99);
/// assert!((top.0)(Vec3::Y) && !(top.0)(Vec3::ZERO));
/// ```
#[derive(Reflect, Clone, Copy)]
#[reflect(opaque)]
#[reflect(Clone, Debug)]
pub struct PinTest(pub fn(Vec3) -> bool);

impl fmt::Debug for PinTest {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("PinTest(..)")
    }
}

/// Which vertices a pin holds.
#[derive(Reflect, Debug, Clone, Copy)]
#[reflect(Debug, Clone)]
pub enum PinSelect {
    /// The vertex of this index (and the vertices welded with it).
    Index(u32),
    /// Every vertex whose position in the mesh's frame passes the test.
    Where(PinTest),
    /// Every vertex whose colour (`Mesh::ATTRIBUTE_COLOR`, as painted in the
    /// mesh) is within `tolerance` of `colour` in each channel (alpha
    /// included).
    Colour {
        /// The colour that pins.
        colour: LinearRgba,
        /// The largest difference in a channel that still matches.
        tolerance: f32,
    },
}

/// What a pinned vertex follows.
#[derive(Reflect, Debug, Clone, Copy, PartialEq, Eq, Default)]
#[reflect(Debug, PartialEq, Clone, Default)]
pub enum PinFrame {
    /// The mesh's own entity: the vertex stays where it is in the mesh's
    /// frame, moving with the entity's `Transform`.
    #[default]
    Own,
    /// Another entity (a bone, a hand, a pole): the vertex keeps its place
    /// in that entity's frame as it was when the mesh was built.
    Entity(Entity),
}

/// A pin of a [`SoftMesh`]: which vertices, held where.
#[derive(Reflect, Debug, Clone, Copy)]
#[reflect(Debug, Clone)]
pub struct VertexPin {
    /// The vertices pinned.
    pub select: PinSelect,
    /// What they follow.
    pub frame: PinFrame,
}

/// Makes this entity's `Mesh3d` (or `Mesh2d`) soft: bodies at its vertices,
/// springs along and across its triangles, drawn back into the mesh every
/// frame. See the [module docs](crate::soft_mesh) for what is built.
///
/// The component is immutable: insert a new `SoftMesh` to change the
/// settings (the mesh is built anew). A mesh is built once its asset is
/// ready and its entity's transform can be inverted (not at a scale of
/// zero).
///
/// Defaults: 1 kg in all, a stretching frequency of 8 Hz at a tenth of
/// critical damping, bending springs at a tenth of the stretch, no
/// pressure, no pins, vertices welded within 10⁻⁴ of the mesh's size, no
/// radius for contacts, no drag, and implicit springs where the stiffness
/// needs them.
///
/// # Example
///
/// ```
/// use bevy::prelude::*;
/// use bevy_euler_physics::prelude::*;
///
/// fn setup(mut commands: Commands, mut meshes: ResMut<Assets<Mesh>>) {
///     // A 2 m × 1 m flag of 32 × 16 quads, in the XY plane, pinned along
///     // its left edge (in its own frame: it moves with its Transform).
///     let flag = meshes.add(Plane3d::new(Vec3::Z, Vec2::new(1.0, 0.5)).mesh().subdivisions(15));
///     commands.spawn((
///         Mesh3d(flag),
///         Transform::from_xyz(0.0, 2.0, 0.0),
///         SoftMesh::default()
///             .with_mass(SoftMass::Total(0.5))
///             .pin(PinSelect::Where(PinTest(|p| p.x < -0.99))),
///     ));
/// }
///
/// let mut app = App::new();
/// app.add_plugins((
///     MinimalPlugins,
///     AssetPlugin::default(),
///     bevy::mesh::MeshPlugin,
///     TransformPlugin,
///     EulerPhysicsPlugin,
/// ))
/// .add_systems(Startup, setup);
/// app.update();
/// let parts = app.world_mut().query::<&SoftMeshParts>().single(app.world()).unwrap();
/// // 16 quads a side (15 subdivisions): 17 × 17 vertices.
/// assert_eq!(parts.bodies.len(), 17 * 17);
/// ```
#[derive(Component, Reflect, Debug, Clone)]
#[reflect(Component, Debug, Clone)]
#[component(immutable, on_discard = take_apart)]
pub struct SoftMesh {
    /// The mass.
    pub mass: SoftMass,
    /// The frequency, in Hz, at which a square of the mesh's area and mass
    /// hanging from one edge would stretch and spring back; sets the
    /// stiffness whatever the resolution. Positive.
    pub stretch_hertz: f32,
    /// The damping ratio of that mode (0 undamped, 1 critical).
    pub damping_ratio: f32,
    /// The bending springs' stiffness as a share of the stretch's, over
    /// the same area (0 for none).
    pub bend: f32,
    /// For a closed mesh, the bulk modulus in pascals that keeps its
    /// volume: a volume `V` against the built `V₀` pushes the surface out
    /// with the pressure `p = K·(V₀ − V)/|V₀|`. `None`: no pressure.
    pub pressure: Option<f32>,
    /// The pins, in order (a vertex two pins hold takes the first's frame).
    pub pins: Vec<VertexPin>,
    /// Vertices closer than this share of the mesh's bounding-box
    /// diagonal are welded into one body.
    pub weld_tolerance: f32,
    /// A radius for contacts, on every body of the mesh.
    pub radius: Option<f32>,
    /// The collision groups of every body of the mesh (with a radius):
    /// a cloth that touches a ball but not itself.
    pub groups: Option<CollisionGroups>,
    /// Air drag: a [`Damping`](crate::Damping) of this rate (1/s) on every
    /// body, which settles swinging that the springs' damping does not
    /// see (0 for none).
    pub drag: f32,
    /// `Some(true)`: implicit springs; `Some(false)`: explicit (add
    /// [`AutoSubsteps`](crate::AutoSubsteps) to the bodies, or they may be
    /// unstable); `None`: chosen from the stiffness.
    pub implicit: Option<bool>,
}

impl Default for SoftMesh {
    fn default() -> Self {
        Self {
            mass: SoftMass::Total(1.0),
            stretch_hertz: 8.0,
            damping_ratio: 0.1,
            bend: 0.1,
            pressure: None,
            pins: Vec::new(),
            weld_tolerance: 1e-4,
            radius: None,
            groups: None,
            drag: 0.0,
            implicit: None,
        }
    }
}

impl SoftMesh {
    /// With this mass.
    ///
    /// ```
    /// # use bevy_euler_physics::prelude::*;
    /// let cloth = SoftMesh::default().with_mass(SoftMass::PerSquareMetre(0.2));
    /// assert_eq!(cloth.mass, SoftMass::PerSquareMetre(0.2));
    /// ```
    pub fn with_mass(mut self, mass: SoftMass) -> Self {
        self.mass = mass;
        self
    }

    /// With its stretching mode at `hertz`, damped by `ratio`.
    ///
    /// ```
    /// # use bevy_euler_physics::prelude::*;
    /// let cloth = SoftMesh::default().with_stretch(12.0, 0.3);
    /// assert_eq!((cloth.stretch_hertz, cloth.damping_ratio), (12.0, 0.3));
    /// ```
    pub fn with_stretch(mut self, hertz: f32, ratio: f32) -> Self {
        self.stretch_hertz = hertz;
        self.damping_ratio = ratio;
        self
    }

    /// With bending springs at `share` of the stretch's stiffness.
    ///
    /// ```
    /// # use bevy_euler_physics::prelude::*;
    /// assert_eq!(SoftMesh::default().with_bend(0.5).bend, 0.5);
    /// ```
    pub fn with_bend(mut self, share: f32) -> Self {
        self.bend = share;
        self
    }

    /// With a pressure of bulk modulus `pascals` (a closed mesh only).
    ///
    /// ```
    /// # use bevy_euler_physics::prelude::*;
    /// assert_eq!(SoftMesh::default().with_pressure(5000.0).pressure, Some(5000.0));
    /// ```
    pub fn with_pressure(mut self, pascals: f32) -> Self {
        self.pressure = Some(pascals);
        self
    }

    /// With the vertices `select` picks pinned in the mesh's own frame.
    ///
    /// ```
    /// # use bevy_euler_physics::prelude::*;
    /// let flag = SoftMesh::default().pin(PinSelect::Index(0)).pin(PinSelect::Index(16));
    /// assert_eq!(flag.pins.len(), 2);
    /// ```
    pub fn pin(mut self, select: PinSelect) -> Self {
        self.pins.push(VertexPin {
            select,
            frame: PinFrame::Own,
        });
        self
    }

    /// With the vertices `select` picks pinned to `target`'s frame.
    ///
    /// ```
    /// # use bevy::prelude::*;
    /// # use bevy_euler_physics::prelude::*;
    /// # let hand = Entity::PLACEHOLDER;
    /// let cape = SoftMesh::default().pin_to(PinSelect::Index(3), hand);
    /// assert_eq!(cape.pins[0].frame, PinFrame::Entity(hand));
    /// ```
    pub fn pin_to(mut self, select: PinSelect, target: Entity) -> Self {
        self.pins.push(VertexPin {
            select,
            frame: PinFrame::Entity(target),
        });
        self
    }

    /// With round bodies of `radius` metres, for contacts.
    ///
    /// ```
    /// # use bevy_euler_physics::prelude::*;
    /// assert_eq!(SoftMesh::default().with_radius(0.02).radius, Some(0.02));
    /// ```
    pub fn with_radius(mut self, radius: f32) -> Self {
        self.radius = Some(radius);
        self
    }

    /// With every body in these collision groups.
    ///
    /// ```
    /// # use bevy_euler_physics::prelude::*;
    /// // In group 1, touching group 2 only (not itself).
    /// let cloth = SoftMesh::default().with_radius(0.01).with_groups(CollisionGroups::new(1, 2));
    /// assert_eq!(cloth.groups, Some(CollisionGroups::new(1, 2)));
    /// ```
    pub fn with_groups(mut self, groups: CollisionGroups) -> Self {
        self.groups = Some(groups);
        self
    }

    /// With air drag at `rate` per second on every body.
    ///
    /// ```
    /// # use bevy_euler_physics::prelude::*;
    /// assert_eq!(SoftMesh::default().with_drag(0.5).drag, 0.5);
    /// ```
    pub fn with_drag(mut self, rate: f32) -> Self {
        self.drag = rate;
        self
    }

    /// With implicit springs (`true`) or explicit ones (`false`), instead
    /// of the choice from the stiffness.
    ///
    /// ```
    /// # use bevy_euler_physics::prelude::*;
    /// assert_eq!(SoftMesh::default().implicit(false).implicit, Some(false));
    /// ```
    pub fn implicit(mut self, implicit: bool) -> Self {
        self.implicit = Some(implicit);
        self
    }

    /// The sheet modulus `E = 16·M·f²` in N/m of a mesh of mass `mass` (see
    /// the [module docs](crate::soft_mesh)).
    ///
    /// ```
    /// # use bevy_euler_physics::prelude::*;
    /// assert_eq!(SoftMesh::default().with_stretch(2.0, 0.1).sheet_modulus(0.5), 32.0);
    /// ```
    pub fn sheet_modulus(&self, mass: f32) -> f32 {
        16.0 * mass * self.stretch_hertz * self.stretch_hertz
    }
}

/// The bodies and springs a [`SoftMesh`] built, on its entity, and which
/// vertex draws which body.
#[derive(Component, Debug, Clone)]
pub struct SoftMeshParts {
    /// One body per welded vertex that is a corner of a triangle.
    pub bodies: Vec<Entity>,
    /// The stretching springs (one per edge), then the bending springs.
    pub springs: Vec<Entity>,
    /// How many of `springs` stretch (the first ones).
    pub edge_springs: usize,
    /// The asset the mesh was built from.
    pub(crate) source: Handle<Mesh>,
    /// The entity's own copy, drawn into.
    pub(crate) copy: Handle<Mesh>,
    /// Per mesh vertex, its body's place in `bodies`, or `NO_POINT`.
    pub(crate) body_of: Vec<u32>,
    /// The triangles over `bodies`.
    pub(crate) triangles: Vec<[u32; 3]>,
    /// The mesh vertices of each triangle (for tangents).
    pub(crate) corners: Vec<[u32; 3]>,
    /// The bulk modulus and the volume when built, for a pressure.
    pub(crate) pressure: Option<(f32, f32)>,
    /// The frame the mesh was last drawn in, if every moving body slept.
    pub(crate) drawn_resting: Option<Mat4>,
    /// This frame's drawn position of each body (`NaN`: not found).
    pub(crate) drawn: Vec<Vec3>,
    /// Whether a body of the mesh is awake this frame.
    pub(crate) moving: bool,
    /// The hash of the source's content as built.
    pub(crate) fingerprint: u64,
}

/// A soft mesh's body: its place in [`SoftMeshParts::bodies`].
#[derive(Component, Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct SoftMeshPoint(pub(crate) u32);

impl SoftMeshParts {
    /// The body mesh vertex `vertex` is drawn from, if it has one.
    ///
    /// ```
    /// # use bevy::prelude::*;
    /// # use bevy_euler_physics::prelude::*;
    /// fn first_corner(meshes: Query<&SoftMeshParts>) {
    ///     for parts in &meshes {
    ///         let _body: Option<Entity> = parts.body_of(0);
    ///     }
    /// }
    /// # App::new().add_systems(Update, first_corner);
    /// ```
    pub fn body_of(&self, vertex: usize) -> Option<Entity> {
        let i = *self.body_of.get(vertex)?;
        self.bodies.get(i as usize).copied()
    }
}

/// Marks a body or spring the soft mesh `0` built.
#[derive(Component, Debug, Clone, Copy, PartialEq, Eq)]
#[relationship(relationship_target = SoftMeshSpawned)]
pub struct PartOfSoftMesh(pub Entity);

/// The entities a soft mesh built, despawned with it.
#[derive(Component, Debug, Default, PartialEq, Eq)]
#[relationship_target(relationship = PartOfSoftMesh, linked_spawn)]
pub struct SoftMeshSpawned(Vec<Entity>);

/// Hook: a `SoftMesh` replaced or removed. Its parts are despawned and the
/// entity drawn from its asset again; a new `SoftMesh` builds anew.
fn take_apart(mut world: DeferredWorld, ctx: HookContext) {
    world
        .commands()
        .entity(ctx.entity)
        .queue_silenced(|mut entity: EntityWorldMut| {
            entity.despawn_related::<SoftMeshSpawned>();
            let Some(parts) = entity.take::<SoftMeshParts>() else {
                return;
            };
            if let Some(mut mesh) = entity.get_mut::<Mesh3d>()
                && mesh.0 == parts.copy
            {
                mesh.0 = parts.source.clone();
            }
            if let Some(mut mesh) = entity.get_mut::<Mesh2d>()
                && mesh.0 == parts.copy
            {
                mesh.0 = parts.source;
            }
        });
}

//! The issue types: [`PhysicsIssue`], [`PhysicsError`], [`PhysicsWarning`].
//! What is checked and when is in the public
//! [`diagnostics`](crate::diagnostics) module's docs.

use core::fmt;

use bevy::ecs::lifecycle::HookContext;
use bevy::ecs::world::DeferredWorld;
use bevy::prelude::*;

use crate::data::requests::{BodyIndex, Island, mark_dirty};
use crate::data::settings::PhysicsSettings;

/// What is wrong with a body or a spring.
///
/// Its `Display` is the sentence the plugin logs.
///
/// ```
/// use bevy_euler_physics::PhysicsIssue;
/// let issue = PhysicsIssue::InvalidMass { inv_mass: -1.0 };
/// assert!(issue.to_string().contains("negative"));
/// ```
#[derive(Reflect, Debug, Clone, Copy, PartialEq)]
#[reflect(Debug, PartialEq, Clone)]
pub enum PhysicsIssue {
    /// `Body::inv_mass` is negative, infinite (a zero mass) or NaN.
    InvalidMass {
        /// The offending `inv_mass`.
        inv_mass: f32,
    },
    /// The body's position or velocity is not finite, or so large that the
    /// next step overflows. Recorded as it was found; the body stays out of
    /// the step until its state is written anew.
    NonFinite {
        /// The position when found.
        position: Vec3,
        /// The velocity when found.
        velocity: Vec3,
    },
    /// [`Damping`](crate::Damping) is negative or not finite.
    InvalidDamping {
        /// The offending damping.
        damping: f32,
    },
    /// A spring or constraint end, or the body a
    /// [`FollowsBody`](crate::FollowsBody) follows, names an entity that
    /// does not exist (never did, or was despawned).
    MissingEndpoint {
        /// The missing end.
        endpoint: Entity,
    },
    /// A spring or constraint end, or the body a
    /// [`FollowsBody`](crate::FollowsBody) follows, names an entity without
    /// a [`Body`](crate::Body).
    EndpointWithoutBody {
        /// The end without a body.
        endpoint: Entity,
    },
    /// A spring or constraint joins a body to itself.
    SelfSpring,
    /// A distance constraint's length is negative or not finite.
    InvalidLength {
        /// The offending length.
        length: f32,
    },
    /// A body's [`Radius`](crate::Radius) is negative, not finite or above
    /// [`Radius::MAX`](crate::Radius::MAX); the body has no contacts until
    /// it is fixed.
    InvalidRadius {
        /// The offending radius.
        radius: f32,
    },
    /// A spring's stiffness is negative or not finite.
    InvalidStiffness {
        /// The offending stiffness.
        stiffness: f32,
    },
    /// A spring's damping is negative or not finite.
    InvalidSpringDamping {
        /// The offending damping.
        damping: f32,
    },
    /// A spring's rest length is negative or not finite.
    InvalidRestLength {
        /// The offending rest length.
        rest_length: f32,
    },
    /// The island of this spring (its stiffest) is past the stability limit
    /// of semi-implicit Euler at its pass step: a warning only, the island
    /// stays in the step (and will gain energy). See
    /// [`Island::load`](crate::Island::load).
    Unstable {
        /// `ω·h` of the island's fastest mode (a bound) for the pass step
        /// `h`.
        omega_h: f32,
        /// `γ·h` (a bound) for the pass step `h`.
        gamma_h: f32,
        /// The total substep count that would make the island stable.
        substeps_needed: u32,
    },
    /// A body's [`Substeps`](crate::Substeps) is 0 or above
    /// [`PhysicsSettings::MAX_SUBSTEPS`]; the count used is clamped.
    InvalidSubsteps {
        /// The count given.
        substeps: u32,
        /// The count used.
        used: u32,
    },
    /// A body's [`SleepThreshold`](crate::SleepThreshold) is negative or
    /// not finite; it is read as 0 (the body never counts as resting).
    InvalidSleepThreshold {
        /// The threshold given.
        threshold: f32,
    },
    /// A [`DistanceLimit`](crate::DistanceLimit) or
    /// [`AngleLimit`](crate::AngleLimit) has bounds that are NaN, out of
    /// range or with `min > max`.
    InvalidLimit {
        /// The lower bound given.
        min: f32,
        /// The upper bound given.
        max: f32,
    },
    /// An [`AngleLimit`](crate::AngleLimit)'s axis is zero or not finite.
    InvalidAxis {
        /// The axis given.
        axis: Vec3,
    },
    /// The implicit solve of this body's island (see
    /// [`ImplicitSprings`](crate::ImplicitSprings)) did not reach the
    /// tolerance within [`ImplicitSettings::max_iterations`](crate::ImplicitSettings::max_iterations):
    /// the last iterate is used. A warning only.
    ImplicitNotConverged {
        /// The iterations run.
        iterations: u32,
        /// The relative residual reached.
        residual: f32,
    },
    /// The implicit solve of this body's island met a non-finite value or
    /// a system it cannot solve: for this pass, its springs acted on
    /// nothing (gravity, your forces and damping still did).
    ImplicitFailed,
    /// A [`PinnedTo`](crate::PinnedTo)'s target does not exist, has no
    /// `Transform` (it or a parent), or its transform puts the pin at a
    /// non-finite position: the pinned body stays fixed where it was, at
    /// rest, until the target is valid. A warning only.
    PinTargetInvalid {
        /// The target named.
        target: Entity,
    },
    /// A [`PinnedTo`](crate::PinnedTo) is on a dynamic body: pins move
    /// fixed bodies ([`Body::fixed`](crate::Body::fixed)) only, and this one
    /// does nothing until the body is fixed. A warning only.
    PinnedDynamicBody,
    /// A [`SoftMesh`](crate::soft_mesh::SoftMesh)'s mesh or settings have
    /// a problem: the part named is left out (or, where nothing can be
    /// built, the mesh stays as it is, with no bodies). Reported once per
    /// build of the mesh, on its entity. A warning only.
    SoftMesh {
        /// What is wrong.
        problem: MeshProblem,
    },
    /// An [`Obstacle`](crate::Obstacle) cannot be placed: it is left out
    /// until it is fixed. Reported once per problem, on its entity. A
    /// warning only.
    Obstacle {
        /// What is wrong.
        problem: ObstacleProblem,
    },
    /// A [`TiedTo`](crate::TiedTo) cannot hold its body: its target is
    /// gone or has no finite transform, its anchor is not finite, or the
    /// body is fixed. The body is not held until it is fixed. Reported
    /// once, on the body. A warning only.
    BadTie,
    /// The energy of this body's island grew while nothing pushed it: the
    /// step is heating it (see [`Island::load`](crate::Island::load) for
    /// what the stability bound does not see). Said once, and again only
    /// after the island was changed, pushed or edited and heats up anew. A
    /// warning only.
    EnergyGrowth {
        /// Joules gained over the lowest energy seen since the island was
        /// last changed, pushed or edited (its step-corrected mechanical
        /// energy: kinetic, springs' and gravity's).
        gained: f32,
        /// The most kinetic energy it had over that time, in joules.
        kinetic: f32,
    },
}

impl PhysicsIssue {
    /// Whether this issue is about a body's own values (its mass, state or
    /// damping), which a [`PhysicsError`] holds only while the entity has
    /// that `Body`; the others are about joins and per-body settings.
    pub(crate) fn is_about_a_body(&self) -> bool {
        matches!(
            self,
            Self::InvalidMass { .. } | Self::NonFinite { .. } | Self::InvalidDamping { .. }
        )
    }
}

impl fmt::Display for PhysicsIssue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Self::InvalidMass { inv_mass } => {
                let what = if inv_mass < 0.0 {
                    "a negative mass"
                } else if inv_mass.is_infinite() {
                    "a zero mass"
                } else {
                    "a non-finite mass"
                };
                write!(
                    f,
                    "body has {what} (inv_mass = {inv_mass}); use a positive mass, or Body::fixed for an immovable body"
                )
            }
            Self::NonFinite { position, velocity } => write!(
                f,
                "body state is not finite (position = {position}, velocity = {velocity}); write a finite position and velocity to bring it back"
            ),
            Self::InvalidDamping { damping } => write!(
                f,
                "body has Damping({damping}); damping must be finite and not negative"
            ),
            Self::MissingEndpoint { endpoint } => {
                write!(
                    f,
                    "end {endpoint} does not exist (never spawned, or despawned)"
                )
            }
            Self::EndpointWithoutBody { endpoint } => {
                write!(f, "end {endpoint} has no Body component")
            }
            Self::SelfSpring => write!(f, "joins a body to itself"),
            Self::InvalidLength { length } => write!(
                f,
                "distance constraint length is {length}; it must be finite and not negative"
            ),
            Self::InvalidRadius { radius } => write!(
                f,
                "body has Radius({radius}); it must be in 0..={} m, so the body has no contacts",
                crate::data::settings::MAX_RADIUS
            ),
            Self::InvalidStiffness { stiffness } => write!(
                f,
                "spring stiffness is {stiffness}; it must be finite and not negative"
            ),
            Self::InvalidSpringDamping { damping } => write!(
                f,
                "spring damping is {damping}; it must be finite and not negative"
            ),
            Self::InvalidRestLength { rest_length } => write!(
                f,
                "spring rest length is {rest_length}; it must be finite and not negative"
            ),
            Self::Unstable {
                omega_h,
                gamma_h,
                substeps_needed,
            } => write!(
                f,
                "stiffest spring of an island past the stability limit of semi-implicit Euler: its fastest mode has (ω·h)² + 2·γ·h = {:.2} ≥ 4 (ω·h = {omega_h:.3}, γ·h = {gamma_h:.3}) and will gain energy; Substeps({substeps_needed}) (or AutoSubsteps) on a body of the island would make it stable",
                omega_h * omega_h + 2.0 * gamma_h
            ),
            Self::InvalidSubsteps { substeps, used } => write!(
                f,
                "body has Substeps({substeps}); the count must be in 1..={}, using {used}",
                PhysicsSettings::MAX_SUBSTEPS
            ),
            Self::InvalidSleepThreshold { threshold } => write!(
                f,
                "body has SleepThreshold({threshold}); it must be finite and not negative, using 0 (never rests)"
            ),
            Self::InvalidLimit { min, max } => write!(
                f,
                "limit bounds are [{min}, {max}]; they must be ordered, not NaN, a distance's lower bound finite and not negative, an angle's within [-pi, pi]"
            ),
            Self::InvalidAxis { axis } => {
                write!(
                    f,
                    "angle limit axis is {axis}; it must be finite and not zero"
                )
            }
            Self::ImplicitNotConverged {
                iterations,
                residual,
            } => write!(
                f,
                "the implicit solve of its island stopped at {iterations} iterations with a relative residual of {residual:e}; raise ImplicitSettings::max_iterations or the tolerance"
            ),
            Self::EnergyGrowth { gained, kinetic } => write!(
                f,
                "the island's energy grew by {gained:.3e} J with nothing pushing it (its kinetic energy peaked at {kinetic:.3e} J): the step adds energy. Typical cause: undamped springs whose ends pass through each other within one step; Damping, spring damping, Substeps or ImplicitSprings stop it"
            ),
            Self::PinTargetInvalid { target } => write!(
                f,
                "pin target {target} does not exist, has no Transform, or gives a non-finite position; the body stays where it is"
            ),
            Self::PinnedDynamicBody => write!(
                f,
                "PinnedTo is on a dynamic body; pins move fixed bodies (Body::fixed) only, so this one does nothing"
            ),
            Self::ImplicitFailed => write!(
                f,
                "the implicit solve of its island met a non-finite value or an unsolvable system; its springs were left out of the pass"
            ),
            Self::SoftMesh { problem } => write!(f, "SoftMesh: {problem}"),
            Self::Obstacle {
                problem: ObstacleProblem::InvalidMass,
            } => write!(f, "Obstacle: {}", ObstacleProblem::InvalidMass),
            Self::Obstacle { problem } => write!(f, "Obstacle: {problem}; left out until fixed"),
            Self::BadTie => write!(
                f,
                "TiedTo: the target is gone or has no finite transform, the anchor is not finite, or the body is fixed; the body is not held"
            ),
        }
    }
}

/// What is wrong with an [`Obstacle`](crate::Obstacle)
/// ([`PhysicsIssue::Obstacle`]).
///
/// ```
/// use bevy_euler_physics::diagnostics::ObstacleProblem;
/// assert!(ObstacleProblem::InvalidSize.to_string().contains("size"));
/// ```
#[derive(Reflect, Debug, Clone, Copy, PartialEq)]
#[reflect(Debug, PartialEq, Clone)]
pub enum ObstacleProblem {
    /// A size (a radius, a half size, a length, the scale) is zero,
    /// negative or not finite.
    InvalidSize,
    /// The scale would change the shape's kind (a sphere made an
    /// ellipsoid).
    NonUniformScale {
        /// The scale found.
        scale: Vec3,
    },
    /// A convex polygon has fewer than three corners, no area, or is not
    /// convex.
    NotAPolygon,
    /// Its transform (or a parent's) is not finite.
    NonFinitePose,
    /// The entity is also a [`Body`](crate::Body): a body has a
    /// [`Radius`](crate::Radius), not an obstacle shape.
    IsABody,
    /// A triangle mesh or height field has no triangle with an area.
    EmptyMesh,
    /// Vertices of a triangle mesh, or heights of a height field, are not
    /// finite.
    NonFiniteVertices {
        /// How many.
        count: u32,
    },
    /// A triangle names a vertex the mesh does not have.
    IndexOutOfRange {
        /// The index.
        index: u32,
        /// How many vertices there are.
        vertices: u32,
    },
    /// A height field's heights are not `rows × columns` (at least 2 × 2),
    /// or its size is not positive.
    HeightFieldSamples {
        /// How many heights there are.
        heights: u32,
        /// The columns given.
        columns: u32,
    },
    /// Its [`ObstacleMass`](crate::ObstacleMass) has a negative or
    /// non-finite value: the obstacle stays, and does not give way.
    InvalidMass,
}

impl fmt::Display for ObstacleProblem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Self::InvalidSize => write!(
                f,
                "a size (radius, half size, length or scale) is zero, negative or not finite"
            ),
            Self::NonUniformScale { scale } => write!(
                f,
                "the scale {scale} would change the shape's kind; scale a sphere, capsule or circle uniformly, a cylinder equally in X and Z"
            ),
            Self::NotAPolygon => write!(
                f,
                "the polygon has fewer than three corners, no area, or is not convex"
            ),
            Self::NonFinitePose => write!(f, "its transform (or a parent's) is not finite"),
            Self::IsABody => write!(
                f,
                "the entity is also a Body; give a body a Radius, and put the obstacle on an entity of its own"
            ),
            Self::EmptyMesh => write!(f, "the mesh has no triangle with an area"),
            Self::NonFiniteVertices { count } => {
                write!(f, "{count} vertices (or heights) are not finite")
            }
            Self::IndexOutOfRange { index, vertices } => write!(
                f,
                "a triangle names vertex {index}, and the mesh has {vertices}"
            ),
            Self::HeightFieldSamples { heights, columns } => write!(
                f,
                "{heights} heights in {columns} columns: a height field needs rows × columns of them, at least 2 × 2, and a positive size"
            ),
            Self::InvalidMass => write!(
                f,
                "its ObstacleMass has a negative or non-finite value; it does not give way"
            ),
        }
    }
}

/// What is wrong with a [`SoftMesh`](crate::soft_mesh::SoftMesh)'s mesh or
/// settings ([`PhysicsIssue::SoftMesh`]).
///
/// ```
/// use bevy_euler_physics::diagnostics::MeshProblem;
/// let problem = MeshProblem::PinOutOfRange { index: 9, vertices: 4 };
/// assert!(problem.to_string().contains("9"));
/// ```
#[derive(Reflect, Debug, Clone, Copy, PartialEq)]
#[reflect(Debug, PartialEq, Clone)]
pub enum MeshProblem {
    /// The mesh asset failed to load.
    LoadFailed,
    /// The mesh has no `Mesh::ATTRIBUTE_POSITION` of three floats a
    /// vertex (or its data is in the render world only).
    NoPositions,
    /// The mesh's topology is not a triangle list.
    NotTriangles,
    /// The mesh has no triangle with an area (no vertices, no indices, or
    /// all of them degenerate).
    Empty,
    /// Vertices whose position is not finite were left out, with the
    /// triangles they are corners of.
    NonFiniteVertices {
        /// How many.
        count: u32,
    },
    /// Triangles with a repeated corner or no area were left out.
    DegenerateTriangles {
        /// How many.
        count: u32,
    },
    /// Edges shared by three triangles or more: they keep their stretch
    /// springs but get no bending spring, and the mesh no pressure.
    NonManifoldEdges {
        /// How many.
        count: u32,
    },
    /// A pin names a vertex the mesh does not have; the pin is left out.
    PinOutOfRange {
        /// The index given.
        index: u32,
        /// The mesh's vertex count.
        vertices: u32,
    },
    /// A pin by colour on a mesh without `Mesh::ATTRIBUTE_COLOR`; the pin
    /// is left out.
    NoColours,
    /// The mass (total, or per square metre) is zero, negative or not
    /// finite; the mesh gets no bodies.
    InvalidMass {
        /// The mass given.
        mass: f32,
    },
    /// A stiffness or damping setting is negative or not finite; the
    /// default is used.
    InvalidSetting {
        /// The value given.
        value: f32,
    },
    /// A pressure was asked of a mesh that is not closed (an edge on one
    /// triangle, or on three) or that encloses no volume; the mesh gets no
    /// pressure.
    NotClosed,
    /// The pressure is too stiff for the step: it acts as a force of the
    /// step (explicitly), and the mode it drives (the whole surface
    /// breathing, `ω² = (K/|V₀|)·Σ|∂V/∂x_i|²/m_i`) has `ω·h` above 2, the
    /// limit of the semi-implicit step, at the fixed timestep: the mesh
    /// will gain energy. A warning only: lower the bulk modulus, give the
    /// mesh more mass, or step at a higher rate.
    StiffPressure {
        /// `ω·h` of the pressure's fastest mode (a bound).
        omega_h: f32,
    },
}

impl fmt::Display for MeshProblem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Self::LoadFailed => write!(f, "the mesh asset failed to load; no bodies"),
            Self::NoPositions => write!(
                f,
                "the mesh has no Float32x3 positions in the main world; no bodies"
            ),
            Self::NotTriangles => write!(
                f,
                "the mesh's topology is not PrimitiveTopology::TriangleList; no bodies"
            ),
            Self::Empty => write!(f, "the mesh has no triangle with an area; no bodies"),
            Self::NonFiniteVertices { count } => write!(
                f,
                "{count} vertices have a non-finite position; left out with their triangles"
            ),
            Self::DegenerateTriangles { count } => write!(
                f,
                "{count} triangles have a repeated corner or no area; left out"
            ),
            Self::NonManifoldEdges { count } => write!(
                f,
                "{count} edges are shared by three triangles or more; they get no bending spring"
            ),
            Self::PinOutOfRange { index, vertices } => write!(
                f,
                "a pin names vertex {index} of a mesh of {vertices} vertices; pin left out"
            ),
            Self::NoColours => write!(
                f,
                "a pin by colour on a mesh without vertex colours; pin left out"
            ),
            Self::InvalidMass { mass } => write!(
                f,
                "mass is {mass}; it must be positive and finite, so the mesh gets no bodies"
            ),
            Self::InvalidSetting { value } => write!(
                f,
                "a stiffness or damping setting is {value}; it must be finite and not negative, using the default"
            ),
            Self::NotClosed => write!(
                f,
                "pressure asked of a mesh that is not closed or encloses no volume; no pressure"
            ),
            Self::StiffPressure { omega_h } => write!(
                f,
                "the pressure's mode (the surface breathing) has ω·h = {omega_h:.2} > 2 at the fixed timestep and will gain energy; lower the bulk modulus, give the mesh more mass, or step at a higher rate"
            ),
        }
    }
}

/// Marks a body or spring that is left out of the step, and why. Added by the
/// plugin when it reports the problem; removed by the plugin once the values
/// are valid again. Query `Added<PhysicsError>` to react.
///
/// # Example
///
/// ```
/// use bevy::prelude::*;
/// use bevy_euler_physics::prelude::*;
///
/// fn show_errors(errors: Query<(Entity, &PhysicsError), Added<PhysicsError>>) {
///     for (entity, error) in &errors {
///         info!("{entity} left the simulation: {}", error.0);
///     }
/// }
/// # App::new().add_systems(Update, show_errors);
/// ```
#[derive(Component, Reflect, Debug, Clone, Copy, PartialEq)]
#[reflect(Component, Debug, PartialEq, Clone)]
#[component(on_insert = leave_the_step, on_remove = mark_dirty)]
pub struct PhysicsError(pub PhysicsIssue);

/// Hook: a body or join left the step. A body's island and slot are
/// forgotten at once, so nothing reads them stale before the rebuild.
fn leave_the_step(mut world: DeferredWorld, ctx: HookContext) {
    if let Some(mut island) = world.get_mut::<Island>(ctx.entity) {
        *island = Island::NONE;
    }
    if let Some(mut index) = world.get_mut::<BodyIndex>(ctx.entity) {
        *index = BodyIndex::NONE;
    }
    mark_dirty(world, ctx);
}

/// Sent once for each problem the plugin reports (alongside a `warn!` log).
///
/// # Example
///
/// ```
/// use bevy::prelude::*;
/// use bevy_euler_physics::prelude::*;
///
/// fn log_warnings(mut warnings: MessageReader<PhysicsWarning>) {
///     for w in warnings.read() {
///         println!("{}: {}", w.entity, w.issue);
///     }
/// }
/// # App::new().add_systems(Update, log_warnings);
/// ```
#[derive(Message, Reflect, Debug, Clone, Copy, PartialEq)]
#[reflect(Debug, PartialEq, Clone)]
pub struct PhysicsWarning {
    /// The body or spring entity.
    pub entity: Entity,
    /// What is wrong.
    pub issue: PhysicsIssue,
}

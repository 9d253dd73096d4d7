//! Where local coordinates sit in the world: [`PhysicsOrigin`],
//! [`FloatingOrigin`], [`ShiftWithOrigin`] and [`OriginShifted`]. How a
//! shift runs is in the public [`origin`](crate::origin) module's docs.

use bevy::math::DVec3;
use bevy::prelude::*;

use crate::kernels::origin::power_of_two_at_most;

/// Where local zero sits in the world, and the cell the origin moves by.
///
/// Every position the plugin holds ([`Body::position`](crate::Body),
/// [`GroundPlane`](crate::GroundPlane), `Transform`) is *local*, an `f32`
/// offset from `position`; the world position of a body is
/// `position + body.position`, in `f64` ([`PhysicsOrigin::world`]).
/// With a [`FloatingOrigin`] in the scene, the plugin moves `position` by
/// whole cells to keep that entity near local zero, where `f32` is precise.
///
/// # Example
///
/// ```
/// use bevy::math::DVec3;
/// use bevy::prelude::*;
/// use bevy_euler_physics::prelude::*;
///
/// // A level built a thousand kilometres out: give its bodies local
/// // positions around a nearby origin.
/// let origin = PhysicsOrigin::new(DVec3::new(1.0e6, 0.0, 0.0));
/// let start = DVec3::new(1.0e6 + 3.25, 2.0, 0.0);
/// let body = Body::new(1.0).with_position(origin.local(start));
/// assert_eq!(body.position, Vec3::new(3.25, 2.0, 0.0));
/// assert_eq!(origin.world(body.position), start);
///
/// App::new()
///     .add_plugins((MinimalPlugins, EulerPhysicsPlugin))
///     .insert_resource(origin);
/// ```
#[derive(Resource, Reflect, Debug, Clone, Copy, PartialEq)]
#[reflect(Resource, Debug, PartialEq, Clone, Default)]
pub struct PhysicsOrigin {
    /// Where local zero is, in world coordinates.
    pub position: DVec3,
    /// The cell, in metres: a shift moves the origin by whole cells, when
    /// the [`FloatingOrigin`] strays more than a cell from local zero on an
    /// axis. A power of two, so that every shift is exact; other values
    /// are read as the largest power of two below them, within
    /// [`PhysicsOrigin::MIN_CELL`]`..=`[`PhysicsOrigin::MAX_CELL`], with a
    /// warning ([`PhysicsOrigin::cell_size`]).
    pub cell: f32,
}

impl Default for PhysicsOrigin {
    fn default() -> Self {
        Self::new(DVec3::ZERO)
    }
}

impl PhysicsOrigin {
    /// The default cell: 512 m. Local positions around the floating origin
    /// then stay within about 512 m of zero (plus a step's travel), where
    /// `f32` resolves 61 µm.
    pub const DEFAULT_CELL: f32 = 512.0;
    /// The smallest cell used: 1/256 m.
    pub const MIN_CELL: f32 = 1.0 / 256.0;
    /// The largest cell used: 2²⁴ m (beyond it, whole cells are no longer
    /// exact in `f32`).
    pub const MAX_CELL: f32 = 16_777_216.0;

    /// Local zero at `position`, with the default cell.
    ///
    /// ```
    /// # use bevy::math::DVec3;
    /// # use bevy_euler_physics::prelude::*;
    /// assert_eq!(PhysicsOrigin::new(DVec3::X).cell, 512.0);
    /// ```
    pub const fn new(position: DVec3) -> Self {
        Self {
            position,
            cell: Self::DEFAULT_CELL,
        }
    }

    /// With another cell size (a power of two; see [`PhysicsOrigin::cell`]).
    ///
    /// ```
    /// # use bevy::math::DVec3;
    /// # use bevy_euler_physics::prelude::*;
    /// assert_eq!(PhysicsOrigin::default().with_cell(256.0).cell, 256.0);
    /// ```
    pub const fn with_cell(mut self, cell: f32) -> Self {
        self.cell = cell;
        self
    }

    /// The cell used: [`PhysicsOrigin::cell`] if it is a power of two in
    /// range, else the largest power of two below it, clamped to the range
    /// (the default cell for a value that is not finite and positive).
    ///
    /// ```
    /// # use bevy_euler_physics::prelude::*;
    /// assert_eq!(PhysicsOrigin::default().with_cell(2048.0).cell_size(), 2048.0);
    /// assert_eq!(PhysicsOrigin::default().with_cell(1000.0).cell_size(), 512.0);
    /// assert_eq!(PhysicsOrigin::default().with_cell(-1.0).cell_size(), 512.0);
    /// ```
    pub fn cell_size(&self) -> f32 {
        power_of_two_at_most(
            self.cell,
            Self::MIN_CELL,
            Self::MAX_CELL,
            Self::DEFAULT_CELL,
        )
    }

    /// The world position of a local one: `position + local`, in `f64`.
    ///
    /// ```
    /// # use bevy::math::DVec3;
    /// # use bevy::prelude::*;
    /// # use bevy_euler_physics::prelude::*;
    /// let origin = PhysicsOrigin::new(DVec3::new(0.0, 5120.0, 0.0));
    /// assert_eq!(origin.world(Vec3::new(0.0, -0.5, 0.0)).y, 5119.5);
    /// ```
    pub fn world(&self, local: Vec3) -> DVec3 {
        self.position + local.as_dvec3()
    }

    /// The local position of a world one: `world − position`, rounded to
    /// `f32`.
    ///
    /// ```
    /// # use bevy::math::DVec3;
    /// # use bevy::prelude::*;
    /// # use bevy_euler_physics::prelude::*;
    /// let origin = PhysicsOrigin::new(DVec3::new(1.0e9, 0.0, 0.0));
    /// assert_eq!(origin.local(DVec3::new(1.0e9 + 0.25, 0.0, 0.0)).x, 0.25);
    /// ```
    pub fn local(&self, world: DVec3) -> Vec3 {
        (world - self.position).as_vec3()
    }
}

/// Keeps this entity near local zero: when it strays more than a
/// [cell](PhysicsOrigin::cell) from it on an axis, the plugin shifts the
/// [`PhysicsOrigin`] by whole cells at the end of the fixed step. It reads
/// the entity's [`Body`](crate::Body) position, or its `Transform` if it
/// has no body (a camera); put it on one entity (with several, the one
/// with the lowest `Entity` leads, with a warning).
///
/// ```
/// use bevy::prelude::*;
/// use bevy_euler_physics::prelude::*;
///
/// fn spawn_ship(mut commands: Commands) {
///     commands.spawn((
///         Body::new(1000.0).with_velocity(Vec3::new(8000.0, 0.0, 0.0)),
///         FloatingOrigin,
///     ));
/// }
/// # App::new().add_systems(Startup, spawn_ship);
/// ```
#[derive(Component, Reflect, Debug, Default, Clone, Copy, PartialEq, Eq)]
#[reflect(Component, Debug, Default, PartialEq, Clone)]
pub struct FloatingOrigin;

/// Moves this entity's `Transform` with every origin shift, as the plugin
/// moves bodies and ground planes: for what is not physics but lives in
/// local coordinates (the level's meshes, markers, a camera that does not
/// follow a body). Put it on root entities: children move with their
/// parent.
///
/// ```
/// use bevy::prelude::*;
/// use bevy_euler_physics::prelude::*;
///
/// fn spawn_beacon(mut commands: Commands) {
///     commands.spawn((Transform::from_xyz(40.0, 0.0, 0.0), ShiftWithOrigin));
/// }
/// # App::new().add_systems(Startup, spawn_beacon);
/// ```
#[derive(Component, Reflect, Debug, Default, Clone, Copy, PartialEq, Eq)]
#[reflect(Component, Debug, Default, PartialEq, Clone)]
pub struct ShiftWithOrigin;

/// Sent when the origin moved: every local position the plugin holds was
/// moved by `−offset`, so the world stayed where it was. Move what the
/// plugin does not know of (without [`ShiftWithOrigin`]) by the same.
///
/// ```
/// use bevy::prelude::*;
/// use bevy_euler_physics::prelude::*;
///
/// #[derive(Component)]
/// struct Trail(Vec<Vec3>);
///
/// fn shift_trails(mut shifted: MessageReader<OriginShifted>, mut trails: Query<&mut Trail>) {
///     for shift in shifted.read() {
///         for mut trail in &mut trails {
///             for point in &mut trail.0 {
///                 *point -= shift.offset;
///             }
///         }
///     }
/// }
/// # App::new().add_systems(Update, shift_trails);
/// ```
#[derive(Message, Reflect, Debug, Clone, Copy, PartialEq)]
#[reflect(Debug, PartialEq, Clone)]
pub struct OriginShifted {
    /// How far the origin moved, a whole number of cells on each axis;
    /// local positions moved by its opposite.
    pub offset: Vec3,
    /// The origin after the shift.
    pub origin: DVec3,
}

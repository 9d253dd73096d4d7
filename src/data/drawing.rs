//! Where bodies are drawn from: [`PositionHistory`] and
//! [`TransformSyncDisabled`]. The drawing itself is in
//! [`interpolation`](crate::interpolation).

use bevy::prelude::*;

/// Where a body was at the start of the last fixed step; it ended at the
/// body's [`Body::position`](crate::Body::position).
///
/// Every [`Body`](crate::Body) has one. To draw a body yourself (see
/// [`TransformSyncDisabled`]), read where with [`DrawnPositions`](crate::DrawnPositions).
///
/// # Example
///
/// ```
/// use bevy::prelude::*;
/// use bevy_euler_physics::prelude::*;
///
/// // How far each body moved in the last fixed step.
/// fn last_moves(bodies: Query<(&Body, &PositionHistory)>) {
///     for (body, history) in &bodies {
///         let moved = body.position - history.previous();
///         debug_assert!(moved.is_finite());
///     }
/// }
/// # App::new().add_systems(Update, last_moves);
/// ```
#[derive(Component, Reflect, Debug, Clone, Copy, PartialEq, Default)]
#[reflect(Component, Default, Debug, PartialEq, Clone)]
pub struct PositionHistory {
    pub(crate) previous: Vec3,
}

impl PositionHistory {
    /// A history that has always been at `position`.
    pub(crate) fn at(position: Vec3) -> Self {
        Self { previous: position }
    }

    /// The position at the start of the last fixed step.
    pub fn previous(&self) -> Vec3 {
        self.previous
    }
}

/// Keeps the plugin's hands off this entity's [`Transform`]: for bodies you
/// draw yourself (with [`DrawnPositions`](crate::DrawnPositions), say), or whose
/// transform belongs to something else.
///
/// # Example
///
/// ```
/// use bevy::prelude::*;
/// use bevy_euler_physics::prelude::*;
///
/// fn setup(mut commands: Commands) {
///     commands.spawn((Body::new(1.0), TransformSyncDisabled));
/// }
/// # App::new().add_systems(Startup, setup);
/// ```
#[derive(Component, Reflect, Debug, Clone, Copy, PartialEq, Eq, Default)]
#[reflect(Component, Default, Debug, PartialEq, Clone)]
pub struct TransformSyncDisabled;

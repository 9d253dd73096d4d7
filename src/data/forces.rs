//! Gravity and the forces users apply to bodies.

use bevy::prelude::*;

use bevy::ecs::lifecycle::HookContext;
use bevy::ecs::world::DeferredWorld;

use crate::data::requests::{Island, WakeCause, WakeTarget, request};

/// The gravitational acceleration applied to every dynamic body, in m/s².
///
/// Default: `(0, -9.81, 0)`. It is an acceleration, not a force: every body
/// falls alike, whatever its mass.
///
/// # Example
///
/// ```
/// use bevy::prelude::*;
/// use bevy_euler_physics::prelude::*;
///
/// App::new()
///     .add_plugins((MinimalPlugins, EulerPhysicsPlugin))
///     // Moon gravity.
///     .insert_resource(Gravity(Vec3::new(0.0, -1.62, 0.0)));
/// ```
#[derive(Resource, Reflect, Debug, Clone, Copy, PartialEq)]
#[reflect(Resource, Default, Debug, PartialEq, Clone)]
pub struct Gravity(pub Vec3);

impl Default for Gravity {
    fn default() -> Self {
        Self(Vec3::new(0.0, -9.81, 0.0))
    }
}

impl Gravity {
    /// No gravity.
    pub const ZERO: Self = Self(Vec3::ZERO);
}

/// A force, in newtons, applied to a body in every pass until it is changed
/// or removed: thrust, wind on a sail, a magnet.
///
/// Default: zero.
///
/// # Example
///
/// ```
/// use bevy::prelude::*;
/// use bevy_euler_physics::prelude::*;
///
/// fn spawn_balloon(mut commands: Commands) {
///     // A 0.1 kg balloon with 1.5 N of lift rises against gravity.
///     commands.spawn((Body::new(0.1), ConstantForce(Vec3::new(0.0, 1.5, 0.0))));
/// }
/// # App::new().add_systems(Startup, spawn_balloon);
/// ```
#[derive(Component, Reflect, Debug, Clone, Copy, PartialEq, Default)]
#[reflect(Component, Default, Debug, PartialEq, Clone)]
#[component(on_insert = wake_on_force, on_discard = wake_on_force)]
pub struct ConstantForce(pub Vec3);

/// The force, in newtons, that systems in
/// [`SubstepSystems::AccumulateForces`](crate::SubstepSystems::AccumulateForces)
/// add to a body during the current pass. The velocity integration consumes
/// it and sets it back to zero, so add to it in every pass. Add to the
/// bodies of the current pass only — through
/// [`SubstepBodies`](crate::SubstepBodies) — or islands with other substep
/// counts collect it more than once.
///
/// Written before the fixed step (a system in `FixedUpdate`, in
/// [`PhysicsSystems::Prepare`](crate::PhysicsSystems::Prepare), or in
/// `Update`), it acts for the whole fixed step, in every pass (its impulse
/// is `F·h` whatever the substep count), and is then set back to zero.
///
/// Every awake [`Body`](crate::Body) has one; a [`Sleeping`](crate::Sleeping)
/// body has none, so systems that push every body skip sleeping ones.
/// Inserting one on a sleeping body wakes its island. Default: zero.
///
/// # Example
///
/// ```
/// use bevy::prelude::*;
/// use bevy_euler_physics::prelude::*;
///
/// // Pull every body towards the origin with 3 N per metre.
/// fn pull_to_origin(mut bodies: SubstepBodies<(&Body, &mut AccumulatedForce)>) {
///     for (body, mut force) in bodies.iter_mut() {
///         force.0 -= 3.0 * body.position;
///     }
/// }
///
/// App::new()
///     .add_plugins((MinimalPlugins, EulerPhysicsPlugin))
///     .add_systems(PhysicsSubstep, pull_to_origin.in_set(SubstepSystems::AccumulateForces));
/// ```
#[derive(Component, Reflect, Debug, Clone, Copy, PartialEq, Default)]
#[reflect(Component, Default, Debug, PartialEq, Clone)]
#[component(on_insert = wake_on_force)]
pub struct AccumulatedForce(pub Vec3);

/// Hook: a force component was added, replaced or removed. A sleeping
/// body's island wakes (a body in the step sees the force at once).
fn wake_on_force(mut world: DeferredWorld, ctx: HookContext) {
    if !world
        .get::<Island>(ctx.entity)
        .is_some_and(Island::is_asleep)
    {
        return;
    }
    request(&mut world, |requests| {
        requests.wake(
            WakeTarget::Body(ctx.entity),
            WakeCause::ForceChanged(ctx.entity),
        );
    });
}

//! Bad input: what is checked, how it is reported, and how it recovers.
//!
//! Nothing the user writes makes the step panic or spreads NaN. A body or
//! spring with invalid values is reported once — a `warn!` log and a
//! [`PhysicsWarning`] message, both naming the entity — and gets a
//! [`PhysicsError`] component that keeps it out of the step. The plugin
//! checks the entities that carry one at the start of every fixed step and
//! removes the component once the values are valid again.

use core::fmt;

use bevy::ecs::entity::Entities;
use bevy::ecs::lifecycle::HookContext;
use bevy::ecs::system::SystemParam;
use bevy::ecs::world::DeferredWorld;
use bevy::prelude::*;

use crate::body::{Body, Damping, mark_solver_dirty};
use crate::constraints::DistanceConstraint;
use crate::islands::Island;
use crate::islands::SleepSettings;
use crate::schedule::{PhysicsSettings, PhysicsStep};
use crate::solver::{BodyIndex, SolverState};
use crate::spring::Spring;

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
    /// [`Damping`] is negative or not finite.
    InvalidDamping {
        /// The offending damping.
        damping: f32,
    },
    /// A spring or constraint end names an entity that does not exist (never
    /// did, or was despawned).
    MissingEndpoint {
        /// The missing end.
        endpoint: Entity,
    },
    /// A spring or constraint end names an entity without a [`Body`].
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
    /// A body's [`Radius`](crate::Radius) is negative or not finite; the
    /// body has no contacts until it is fixed.
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
                "body has Radius({radius}); it must be finite and not negative, so the body has no contacts"
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
#[component(on_insert = leave_the_step, on_remove = mark_solver_dirty)]
pub struct PhysicsError(pub PhysicsIssue);

/// Hook: a body or join left the step. A body's island and slot are
/// forgotten at once, so nothing reads them stale before the rebuild.
fn leave_the_step(mut world: DeferredWorld, ctx: HookContext) {
    if let Some(mut island) = world.get_mut::<Island>(ctx.entity) {
        *island = Island::NONE;
    }
    if let Some(mut index) = world.get_mut::<BodyIndex>(ctx.entity) {
        *index = BodyIndex::default();
    }
    mark_solver_dirty(world, ctx);
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

/// Logs, sends and (for rejections) marks problems.
#[derive(SystemParam)]
pub(crate) struct Reporter<'w, 's> {
    commands: Commands<'w, 's>,
    warnings: MessageWriter<'w, PhysicsWarning>,
}

impl<'w, 's> Reporter<'w, 's> {
    /// The commands this reporter queues on.
    pub fn commands(&mut self) -> &mut Commands<'w, 's> {
        &mut self.commands
    }

    /// Reports `issue` without taking `entity` out of the step.
    pub fn warn(&mut self, entity: Entity, issue: PhysicsIssue) {
        warn!("bevy_euler_physics: {entity}: {issue}");
        self.warnings.write(PhysicsWarning { entity, issue });
    }

    /// Reports `issue` and leaves `entity` out of the step until it is fixed.
    pub fn reject(&mut self, entity: Entity, issue: PhysicsIssue) {
        warn!("bevy_euler_physics: {entity}: {issue}; left out of the simulation until fixed");
        self.warnings.write(PhysicsWarning { entity, issue });
        self.commands.entity(entity).try_insert(PhysicsError(issue));
    }
}

/// Checks a body's values; `dt` is the pass step used for the overflow test.
pub(crate) fn validate_body(
    body: &Body,
    damping: Option<&Damping>,
    dt: f32,
) -> Result<(), PhysicsIssue> {
    if !(body.inv_mass >= 0.0 && body.inv_mass.is_finite()) {
        return Err(PhysicsIssue::InvalidMass {
            inv_mass: body.inv_mass,
        });
    }
    let next = body.position + dt * body.velocity;
    if !(body.position.is_finite() && body.velocity.is_finite() && next.is_finite()) {
        return Err(PhysicsIssue::NonFinite {
            position: body.position,
            velocity: body.velocity,
        });
    }
    match damping {
        Some(&d) if !d.is_valid() => Err(PhysicsIssue::InvalidDamping { damping: d.0 }),
        _ => Ok(()),
    }
}

/// Checks the two ends of a join: they exist, have a [`Body`] (valid or
/// not) and differ.
pub(crate) fn validate_ends(
    a: Entity,
    b: Entity,
    bodies: &Query<(), With<Body>>,
    entities: &Entities,
) -> Result<(), PhysicsIssue> {
    let endpoint = |e: Entity| {
        if bodies.contains(e) {
            Ok(())
        } else if entities.contains_spawned(e) {
            Err(PhysicsIssue::EndpointWithoutBody { endpoint: e })
        } else {
            Err(PhysicsIssue::MissingEndpoint { endpoint: e })
        }
    };
    if a == b {
        return Err(PhysicsIssue::SelfSpring);
    }
    endpoint(a)?;
    endpoint(b)
}

/// Checks a spring: its ends (see [`validate_ends`]), and its parameters are
/// finite and not negative.
pub(crate) fn validate_spring(
    spring: &Spring,
    bodies: &Query<(), With<Body>>,
    entities: &Entities,
) -> Result<(), PhysicsIssue> {
    let valid = |x: f32| x >= 0.0 && x.is_finite();
    validate_ends(spring.a, spring.b, bodies, entities)?;
    if !valid(spring.stiffness) {
        return Err(PhysicsIssue::InvalidStiffness {
            stiffness: spring.stiffness,
        });
    }
    if !valid(spring.damping) {
        return Err(PhysicsIssue::InvalidSpringDamping {
            damping: spring.damping,
        });
    }
    if !valid(spring.rest_length) {
        return Err(PhysicsIssue::InvalidRestLength {
            rest_length: spring.rest_length,
        });
    }
    Ok(())
}

fn same_bits(a: Vec3, b: Vec3) -> bool {
    a.to_array().map(f32::to_bits) == b.to_array().map(f32::to_bits)
}

/// Start of the fixed step: takes the
/// [`PhysicsError`] off entities whose values are valid again.
pub(crate) fn readmit_fixed(
    mut commands: Commands,
    step: Res<PhysicsStep>,
    bodies: Query<(Entity, &Body, Option<&Damping>, &PhysicsError)>,
    springs: Query<(Entity, &Spring, &PhysicsError)>,
    rods: Query<(Entity, &DistanceConstraint, &PhysicsError)>,
    has_body: Query<(), With<Body>>,
    entities: &Entities,
) {
    for (entity, body, damping, error) in &bodies {
        let unchanged = match error.0 {
            PhysicsIssue::NonFinite { position, velocity } => {
                same_bits(position, body.position) && same_bits(velocity, body.velocity)
            }
            _ => false,
        };
        if !unchanged && validate_body(body, damping, step.dt).is_ok() {
            info!("bevy_euler_physics: {entity}: body is valid again and rejoins the simulation");
            commands.entity(entity).remove::<PhysicsError>();
        }
    }
    for (entity, spring, _) in &springs {
        if validate_spring(spring, &has_body, entities).is_ok() {
            info!("bevy_euler_physics: {entity}: spring is valid again and rejoins the simulation");
            commands.entity(entity).remove::<PhysicsError>();
        }
    }
    for (entity, rod, _) in &rods {
        if validate_ends(rod.a, rod.b, &has_body, entities).is_ok()
            && rod.length >= 0.0
            && rod.length.is_finite()
        {
            info!(
                "bevy_euler_physics: {entity}: distance constraint is valid again and rejoins the simulation"
            );
            commands.entity(entity).remove::<PhysicsError>();
        }
    }
}

/// Start of the fixed step: warns once about a
/// substep count out of range.
pub(crate) fn check_settings(settings: Res<PhysicsSettings>, sleep: Res<SleepSettings>) {
    if settings.is_changed() {
        if settings.passes() != settings.substeps {
            warn!(
                "bevy_euler_physics: PhysicsSettings::substeps = {} is out of range 1..={}; using {}",
                settings.substeps,
                PhysicsSettings::MAX_SUBSTEPS,
                settings.passes()
            );
        }
        if settings.auto_cap() != settings.max_auto_substeps {
            warn!(
                "bevy_euler_physics: PhysicsSettings::max_auto_substeps = {} is out of range 1..={}; using {}",
                settings.max_auto_substeps,
                PhysicsSettings::MAX_SUBSTEPS,
                settings.auto_cap()
            );
        }
        if settings.target_load() != settings.stability_target {
            warn!(
                "bevy_euler_physics: PhysicsSettings::stability_target = {} is out of range (0, 1]; using {}",
                settings.stability_target,
                settings.target_load()
            );
        }
    }
    if sleep.is_changed() {
        if sleep.threshold() != sleep.speed_threshold {
            warn!(
                "bevy_euler_physics: SleepSettings::speed_threshold = {} must be finite and not negative; using 0 (nothing rests)",
                sleep.speed_threshold
            );
        }
        if sleep.sleep_time() != sleep.time_to_sleep {
            warn!(
                "bevy_euler_physics: SleepSettings::time_to_sleep = {} must be finite and not negative; using 0",
                sleep.time_to_sleep
            );
        }
    }
}

/// End of the fixed step: when a pass met invalid
/// state, finds the bodies responsible and takes them out of the step.
pub(crate) fn report_invalid_bodies(
    mut solver: ResMut<SolverState>,
    step: Res<PhysicsStep>,
    bodies: Query<(Entity, &Body, Option<&Damping>), Without<PhysicsError>>,
    mut reporter: Reporter,
) {
    if !solver.take_report_request() {
        return;
    }
    for (entity, body, damping) in &bodies {
        if let Err(issue) = validate_body(body, damping, step.dt) {
            reporter.reject(entity, issue);
        }
    }
}

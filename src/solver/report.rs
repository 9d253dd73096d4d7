//! Reporting bad input: the checks of bodies, joins and settings, the
//! systems that leave bad values out of the step and re-admit them once
//! fixed, and the one place that logs and sends a [`PhysicsWarning`].

use bevy::ecs::entity::{Entities, EntityHashSet};
use bevy::ecs::system::SystemParam;
use bevy::prelude::*;

use crate::data::body::{Body, Damping};
use crate::data::constraints::{AngleLimit, DistanceConstraint, DistanceLimit};
use crate::data::islands::SleepSettings;
use crate::data::issues::{PhysicsError, PhysicsIssue, PhysicsWarning};
use crate::data::joins::Spring;
use crate::data::settings::{PhysicsSettings, PhysicsStep};
use crate::kernels::implicit::Solved;
use crate::kernels::stability::SpringStability;
use crate::solver::SolverState;

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
        } else {
            Err(missing_body(e, entities))
        }
    };
    if a == b {
        return Err(PhysicsIssue::SelfSpring);
    }
    endpoint(a)?;
    endpoint(b)
}

/// What is wrong with naming `endpoint` as a body when it has none: it has
/// no `Body`, or it does not exist.
pub(crate) fn missing_body(endpoint: Entity, entities: &Entities) -> PhysicsIssue {
    if entities.contains_spawned(endpoint) {
        PhysicsIssue::EndpointWithoutBody { endpoint }
    } else {
        PhysicsIssue::MissingEndpoint { endpoint }
    }
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

/// Checks a distance limit: its ends and its bounds.
pub(crate) fn validate_limit(
    limit: &DistanceLimit,
    bodies: &Query<(), With<Body>>,
    entities: &Entities,
) -> Result<(), PhysicsIssue> {
    validate_ends(limit.a, limit.b, bodies, entities)?;
    limit.check()
}

/// Checks an angle limit: each of its three pairs of bodies (see
/// [`validate_ends`]), its bounds and its axis.
pub(crate) fn validate_angle(
    limit: &AngleLimit,
    bodies: &Query<(), With<Body>>,
    entities: &Entities,
) -> Result<(), PhysicsIssue> {
    for (x, y) in limit.pairs() {
        validate_ends(x, y, bodies, entities)?;
    }
    limit.check()
}

/// Checks a rod's length: finite and not negative.
pub(crate) fn validate_rod(rod: &DistanceConstraint) -> Result<(), PhysicsIssue> {
    if rod.length >= 0.0 && rod.length.is_finite() {
        Ok(())
    } else {
        Err(PhysicsIssue::InvalidLength { length: rod.length })
    }
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
        if validate_ends(rod.a, rod.b, &has_body, entities)
            .and_then(|()| validate_rod(rod))
            .is_ok()
        {
            info!(
                "bevy_euler_physics: {entity}: distance constraint is valid again and rejoins the simulation"
            );
            commands.entity(entity).remove::<PhysicsError>();
        }
    }
}

/// Start of the fixed step, after [`readmit_fixed`]: takes the
/// [`PhysicsError`] off distance and angle limits whose bounds and bodies
/// are valid again.
pub(crate) fn readmit_limits(
    mut commands: Commands,
    limits: Query<(Entity, &DistanceLimit, &PhysicsError)>,
    angles: Query<(Entity, &AngleLimit, &PhysicsError)>,
    has_body: Query<(), With<Body>>,
    entities: &Entities,
) {
    let valid_limits = limits.iter().filter_map(|(entity, limit, _)| {
        validate_limit(limit, &has_body, entities)
            .is_ok()
            .then_some(entity)
    });
    let valid_angles = angles.iter().filter_map(|(entity, limit, _)| {
        validate_angle(limit, &has_body, entities)
            .is_ok()
            .then_some(entity)
    });
    for entity in valid_limits.chain(valid_angles) {
        info!("bevy_euler_physics: {entity}: limit is valid again and rejoins the simulation");
        commands.entity(entity).remove::<PhysicsError>();
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

/// End of the fixed step: reports each implicit island whose solve did not
/// converge or failed in this step, once until it solves again (named by
/// its entity of lowest index, [`Group::island_name`](crate::solver::Group::island_name)).
pub(crate) fn report_implicit(mut solver: ResMut<SolverState>, mut reporter: Reporter) {
    if solver.implicit_trouble.is_empty() && solver.implicit_reported.is_empty() {
        return;
    }
    let solver = &mut *solver;
    let mut now = EntityHashSet::default();
    for (slot, solved) in solver.implicit_trouble.drain(..) {
        let Some(group) = solver
            .groups
            .iter()
            .find(|group| group.slots.contains(&(slot as usize)))
        else {
            continue;
        };
        let Some(entity) = group.island_name(slot as usize) else {
            continue;
        };
        if now.insert(entity) && !solver.implicit_reported.contains(&entity) {
            let issue = match solved {
                Solved::Capped(iterations, residual) => PhysicsIssue::ImplicitNotConverged {
                    iterations,
                    residual,
                },
                _ => PhysicsIssue::ImplicitFailed,
            };
            reporter.warn(entity, issue);
        }
    }
    solver.implicit_reported = now;
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

/// The warning for a spring whose island is past the stability limit, for a
/// step of `h` split into passes of `pass_h`.
pub(crate) fn unstable(stability: &SpringStability, pass_h: f32, h: f32) -> PhysicsIssue {
    PhysicsIssue::Unstable {
        omega_h: stability.omega_h(pass_h),
        gamma_h: stability.gamma * pass_h,
        substeps_needed: stability.substeps_needed(h),
    }
}

/// Gravity as the passes use it: a non-finite `Gravity` would poison every
/// body, so it is reported once and the step runs as without gravity until
/// it is finite again.
pub(crate) fn checked_gravity(gravity: Vec3, solver: &mut SolverState) -> Vec3A {
    if gravity.is_finite() {
        solver.gravity_reported = false;
        return gravity.into();
    }
    if !core::mem::replace(&mut solver.gravity_reported, true) {
        warn!(
            "bevy_euler_physics: Gravity is {gravity}, which is not finite; stepping without gravity until it is"
        );
    }
    Vec3A::ZERO
}

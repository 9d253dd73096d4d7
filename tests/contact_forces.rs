//! The forces touching round bodies hold from one step to the next
//! (`ContactForces`, the warm start across steps): a resting column holds
//! the weight above each contact (statics), the warm start keeps a column
//! from sinking into itself, a rebuild in the middle of a run leaves its
//! bits alone, and a body gone bad adds nothing to the forces.

mod common;

use bevy::prelude::*;
use bevy_euler_physics::prelude::*;
use common::*;

const G: f32 = 9.81;

fn no_sleep(app: &mut App) {
    app.insert_resource(SleepSettings {
        enabled: false,
        ..default()
    });
}

/// A column of balls of radius `r` and the given masses, the first on the
/// ground, each resting on the one below (touching, not overlapping).
fn column(app: &mut App, r: f32, masses: &[f32]) -> Vec<Entity> {
    spawn(app, GroundPlane::horizontal(0.0));
    masses
        .iter()
        .enumerate()
        .map(|(k, &m)| {
            let y = r + 2.0 * r * k as f32;
            spawn(
                app,
                (
                    Body::new(m).with_position(Vec3::new(0.0, y, 0.0)),
                    Radius(r),
                    ContactMaterial::new(0.0, 0.5),
                ),
            )
        })
        .collect()
}

/// The normal force of each neighbouring pair of `balls` (a column, from
/// the bottom), averaged over the next `steps` steps (a column at rest
/// still breathes a little from step to step; on average each contact
/// carries the weight above it).
fn mean_forces(app: &mut App, balls: &[Entity], steps: usize) -> Vec<f32> {
    let mut sums = vec![0.0; balls.len() - 1];
    for _ in 0..steps {
        step(app, 1);
        let forces = app.world().resource::<ContactForces>();
        for (k, sum) in sums.iter_mut().enumerate() {
            let pair = forces
                .between(balls[k], balls[k + 1])
                .expect("the pair pushes");
            *sum += pair.normal / steps as f32;
        }
    }
    sums
}

/// The deepest overlap between neighbours of `balls` (a column), as a
/// share of the sum of their radii.
fn deepest_overlap(app: &App, balls: &[Entity], r: f32) -> f32 {
    balls
        .windows(2)
        .map(|pair| {
            let d = body(app, pair[1])
                .position
                .distance(body(app, pair[0]).position);
            (2.0 * r - d) / (2.0 * r)
        })
        .fold(0.0, f32::max)
}

/// A resting column of four balls of different masses: each contact
/// pushes up with the weight of the balls above it, `g·Σm` (statics, on
/// average over a second), with no friction, whatever the pass count. A
/// pair is found either way round, and seen from the body named second.
#[test]
fn a_resting_column_holds_the_weight_above_each_contact() {
    let masses = [2.0, 1.5, 1.0, 0.5];
    for contact_substeps in [4, 8] {
        let mut app = app();
        no_sleep(&mut app);
        app.insert_resource(ConstraintSettings {
            contact_substeps,
            ..default()
        });
        let balls = column(&mut app, 0.25, &masses);
        step(&mut app, 120);
        let forces = app.world().resource::<ContactForces>();
        assert_eq!(
            forces.len(),
            masses.len() - 1,
            "one force per touching pair"
        );
        for k in 0..masses.len() - 1 {
            let (lower, upper) = (balls[k], balls[k + 1]);
            let pair = forces.between(lower, upper).expect("the pair pushes");
            assert_eq!((pair.a, pair.b), (lower, upper));
            assert!(pair.friction.length() < 1e-3, "{}", pair.friction);
            // Seen from the lower ball: the same push, on the other body.
            let seen = forces.between(upper, lower).unwrap();
            assert_eq!((seen.a, seen.b, seen.normal), (upper, lower, pair.normal));
        }
        let mean = mean_forces(&mut app, &balls, 64);
        for (k, force) in mean.into_iter().enumerate() {
            let expected = G * masses[k + 1..].iter().sum::<f32>();
            assert!(
                (force - expected).abs() < 0.01 * expected,
                "{contact_substeps} passes, contact {k}: {force} N, the weight above is {expected} N"
            );
        }
    }
}

/// A column of 30 balls, cold (each step's contacts start from nothing)
/// and warm (from half the forces the last step held), over its second
/// second: the warm column sinks clearly less into itself (by at least a
/// quarter; about half, as measured when this was written), and trembles
/// no more (its mean kinetic energy is no larger).
#[test]
fn the_warm_start_keeps_a_column_from_sinking_into_itself() {
    let settle = |warm_start: f32| {
        let mut app = app();
        no_sleep(&mut app);
        app.insert_resource(ConstraintSettings {
            warm_start,
            ..default()
        });
        let balls = column(&mut app, 0.05, &[1.0; 30]);
        step(&mut app, 64);
        let (mut overlap, mut energy) = (0.0, 0.0);
        for _ in 0..64 {
            step(&mut app, 1);
            overlap += deepest_overlap(&app, &balls, 0.05) / 64.0;
            let kinetic: f32 = balls.iter().map(|&e| body(&app, e).kinetic_energy()).sum();
            energy += kinetic / 64.0;
        }
        // Listed whatever the share.
        assert_eq!(
            app.world().resource::<ContactForces>().len(),
            balls.len() - 1
        );
        (overlap, energy)
    };
    let ((cold, cold_energy), (warm, warm_energy)) = (settle(0.0), settle(0.5));
    assert!(
        warm < 0.75 * cold,
        "mean deepest overlap warm {warm}, cold {cold} (shares of 2r)"
    );
    assert!(
        warm_energy <= cold_energy,
        "mean kinetic energy warm {warm_energy} J, cold {cold_energy} J"
    );
}

/// A pile of balls settling, and the same pile with an unrelated body
/// spawned far away at step 40, which rebuilds the solver's index: every
/// pile body's slot changes (the new body takes one before them), so the
/// forces are found again by entity. The pile's bits are those of the run
/// without the rebuild, step after step.
#[test]
fn a_rebuild_mid_run_leaves_the_bits_alone() {
    let run = |spawn_far: bool| {
        let mut app = app();
        no_sleep(&mut app);
        spawn(&mut app, GroundPlane::horizontal(0.0));
        let mut balls = Vec::new();
        for i in 0..60 {
            let (row, col) = (i / 10, i % 10);
            let x = col as f32 * 0.101 + if row % 2 == 1 { 0.05 } else { 0.0 };
            let at = Vec3::new(x, 0.05 + 0.09 * row as f32, 0.0);
            balls.push(spawn(
                &mut app,
                (
                    Body::new(1.0).with_position(at),
                    Radius(0.05),
                    ContactMaterial::new(0.1, 0.5),
                ),
            ));
        }
        let mut hashes = Vec::new();
        for n in 0..100 {
            if spawn_far && n == 40 {
                spawn(
                    &mut app,
                    Body::new(1.0).with_position(Vec3::new(500.0, 9.0, 0.0)),
                );
            }
            step(&mut app, 1);
            let bits: Vec<[u32; 6]> = balls
                .iter()
                .map(|&e| {
                    let b = body(&app, e);
                    let (p, v) = (b.position.to_array(), b.velocity.to_array());
                    [p[0], p[1], p[2], v[0], v[1], v[2]].map(f32::to_bits)
                })
                .collect();
            hashes.push(bits);
        }
        let held = app.world().resource::<ContactForces>().len();
        (hashes, held)
    };
    let (plain, held) = run(false);
    assert!(held > 50, "the pile touches itself: {held} pairs push");
    let (rebuilt, _) = run(true);
    for (n, (a, b)) in plain.iter().zip(&rebuilt).enumerate() {
        assert!(a == b, "step {n}: the rebuild changed the pile's bits");
    }
}

/// A ball of a resting column made non-finite: it is left out, the forces
/// listed stay finite and leave it out, and the pairs below it still push
/// with the weight above them (3, 2 and 1 balls, on average).
#[test]
fn a_body_gone_bad_adds_nothing_to_the_forces() {
    let mut app = app();
    no_sleep(&mut app);
    let balls = column(&mut app, 0.1, &[1.0; 5]);
    step(&mut app, 60);
    body_mut(&mut app, balls[4]).velocity = Vec3::NAN;
    step(&mut app, 60);
    let forces = app.world().resource::<ContactForces>();
    assert_eq!(forces.len(), 3);
    for pair in forces.iter() {
        assert!(
            pair.normal.is_finite() && pair.friction.is_finite(),
            "{pair:?}"
        );
        assert!(pair.a != balls[4] && pair.b != balls[4], "{pair:?}");
    }
    let mean = mean_forces(&mut app, &balls[..4], 64);
    for (k, force) in mean.into_iter().enumerate() {
        let expected = G * (3 - k) as f32;
        assert!(
            (force - expected).abs() < 0.01 * expected,
            "contact {k}: {force} N"
        );
    }
}

//! Properties over random networks of springs and rods (proptest): momentum
//! kept without external forces, energy not growing under damping while
//! the islands are stable, the same bits whether the passes split over the
//! task pool or not, a snapshot restore repeating the same bits, and no NaN
//! whatever is edited between steps.
//!
//! Each property runs 24 cases by default (`PROPTEST_CASES` sets another
//! count); `cargo test --release --test properties -- --ignored` runs each
//! for 1 000 cases.

mod common;

use bevy::prelude::*;
use bevy_euler_physics::prelude::*;
use common::*;
use proptest::prelude::*;

/// A random network: bodies in a box, springs and rods between random
/// pairs, rest lengths near the current distances.
#[derive(Debug, Clone)]
struct Network {
    /// Position, mass (0 for a fixed body), velocity.
    bodies: Vec<(Vec3, f32, Vec3)>,
    /// Ends, stiffness, damping, rest length as a fraction of the distance.
    springs: Vec<(usize, usize, f32, f32, f32)>,
    /// Ends.
    rods: Vec<(usize, usize)>,
}

fn vec3(range: f32) -> impl Strategy<Value = Vec3> {
    (-range..range, -range..range, -range..range).prop_map(|(x, y, z)| Vec3::new(x, y, z))
}

/// `fixed`: whether some bodies may be fixed. `rods`: whether to add rods.
fn network(fixed: bool, rods: bool) -> impl Strategy<Value = Network> {
    (2usize..10).prop_flat_map(move |n| {
        let body = (
            vec3(2.0),
            0.5f32..3.0,
            if fixed { 0.0f64..1.0 } else { 1.0f64..1.0001 },
            vec3(1.0),
        )
            .prop_map(|(x, m, p, v)| (x, if p < 0.2 { 0.0 } else { m }, v));
        let spring = (0..n, 0..n, 5.0f32..150.0, 0.0f32..1.0, 0.8f32..1.2);
        let rod = (0..n, 0..n);
        (
            proptest::collection::vec(body, n),
            proptest::collection::vec(spring, 1..2 * n),
            proptest::collection::vec(rod, 0..if rods { n } else { 1 }),
        )
            .prop_map(move |(bodies, springs, rods_found)| Network {
                bodies,
                springs: springs.into_iter().filter(|s| s.0 != s.1).collect(),
                rods: if rods {
                    rods_found.into_iter().filter(|r| r.0 != r.1).collect()
                } else {
                    Vec::new()
                },
            })
    })
}

/// Spawns the network; its bodies, in order.
fn spawn_network(app: &mut App, net: &Network) -> Vec<Entity> {
    let bodies: Vec<Entity> = net
        .bodies
        .iter()
        .map(|&(x, m, v)| {
            let body = if m > 0.0 {
                Body::new(m).with_position(x).with_velocity(v)
            } else {
                Body::fixed(x)
            };
            spawn(app, body)
        })
        .collect();
    for &(a, b, k, c, fraction) in &net.springs {
        let rest = net.bodies[a].0.distance(net.bodies[b].0) * fraction;
        spawn(
            app,
            Spring::new(bodies[a], bodies[b], rest, k).with_damping(c),
        );
    }
    for &(a, b) in &net.rods {
        let length = net.bodies[a].0.distance(net.bodies[b].0);
        spawn(app, DistanceConstraint::new(bodies[a], bodies[b], length));
    }
    bodies
}

/// A headless app without gravity or sleeping.
fn quiet_app(parallel_threshold: usize) -> App {
    let mut app = app();
    set_gravity(&mut app, Vec3::ZERO);
    app.insert_resource(SleepSettings {
        enabled: false,
        ..default()
    })
    .insert_resource(PhysicsSettings {
        parallel_threshold,
        ..default()
    });
    app
}

fn momentum(app: &App, bodies: &[Entity]) -> Vec3 {
    bodies
        .iter()
        .map(|&e| {
            let b = body(app, e);
            b.velocity / b.inv_mass
        })
        .sum()
}

/// Kinetic energy plus the springs' potential energy.
fn energy(app: &App, bodies: &[Entity], net: &Network) -> f32 {
    let kinetic: f32 = bodies
        .iter()
        .map(|&e| body(app, e))
        .filter(|b| b.inv_mass > 0.0)
        .map(|b| 0.5 * b.velocity.length_squared() / b.inv_mass)
        .sum();
    let potential: f32 = net
        .springs
        .iter()
        .map(|&(a, b, k, _, fraction)| {
            let rest = net.bodies[a].0.distance(net.bodies[b].0) * fraction;
            let stretch = body(app, bodies[a])
                .position
                .distance(body(app, bodies[b]).position)
                - rest;
            0.5 * k * stretch * stretch
        })
        .sum();
    kinetic + potential
}

/// Every body's state, as bits.
fn bits(app: &App, bodies: &[Entity]) -> Vec<[u32; 6]> {
    bodies
        .iter()
        .map(|&e| {
            let b = body(app, e);
            let (x, v) = (b.position.to_array(), b.velocity.to_array());
            [x[0], x[1], x[2], v[0], v[1], v[2]].map(f32::to_bits)
        })
        .collect()
}

/// Whether every island of the scene is within the stability limit.
fn stable(app: &mut App) -> bool {
    let world = app.world_mut();
    let mut islands = world.query::<&Island>();
    islands.iter(world).all(|island| island.load() < 0.5)
}

/// Cases per property for the long run (0: `PROPTEST_CASES`, or 24).
static LONG_CASES: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);

/// Cases per property.
fn cases() -> u32 {
    match LONG_CASES.load(std::sync::atomic::Ordering::Relaxed) {
        0 => std::env::var("PROPTEST_CASES")
            .ok()
            .and_then(|c| c.parse().ok())
            .unwrap_or(24),
        long => long,
    }
}

/// Every property for 1 000 cases.
#[test]
#[ignore = "the long run: every property for 1 000 cases, in release"]
fn every_property_for_a_thousand_cases() {
    LONG_CASES.store(1000, std::sync::atomic::Ordering::Relaxed);
    momentum_is_kept_without_external_forces();
    energy_does_not_grow_under_damping();
    split_and_serial_passes_give_the_same_bits();
    a_restored_snapshot_repeats_the_same_bits();
    no_nan_whatever_the_edits();
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: cases(),
        ..ProptestConfig::default()
    })]

    /// Springs and rods between free bodies exert equal and opposite
    /// forces and impulses: the total momentum stays what it was.
    #[test]
    fn momentum_is_kept_without_external_forces(net in network(false, true)) {
        let mut app = quiet_app(usize::MAX);
        let bodies = spawn_network(&mut app, &net);
        step(&mut app, 1);
        prop_assume!(stable(&mut app));
        let start = momentum(&app, &bodies);
        step(&mut app, 200);
        let end = momentum(&app, &bodies);
        let scale: f32 = bodies
            .iter()
            .map(|&e| {
                let b = body(&app, e);
                b.velocity.length() / b.inv_mass
            })
            .sum::<f32>()
            + 1.0;
        prop_assert!(
            (end - start).length() < 1e-3 * scale,
            "momentum {start} -> {end} (scale {scale})"
        );
    }

    /// With damped springs and body damping, on stable islands, the energy
    /// late in the run stays below its peak early in the run.
    #[test]
    fn energy_does_not_grow_under_damping(net in network(true, false), drag in 0.05f32..1.0) {
        let mut app = quiet_app(usize::MAX);
        let bodies = spawn_network(&mut app, &net);
        for &e in &bodies {
            app.world_mut().entity_mut(e).insert(Damping(drag));
        }
        step(&mut app, 1);
        prop_assume!(stable(&mut app));
        let mut early: f32 = 0.0;
        for _ in 0..100 {
            step(&mut app, 1);
            early = early.max(energy(&app, &bodies, &net));
        }
        step(&mut app, 600);
        let mut late: f32 = 0.0;
        for _ in 0..100 {
            step(&mut app, 1);
            late = late.max(energy(&app, &bodies, &net));
        }
        prop_assert!(late <= early * 1.0001 + 1e-6, "energy {early} early, {late} late");
    }

    /// The same bits whether large groups split over the task pool
    /// (threshold 1) or not.
    #[test]
    fn split_and_serial_passes_give_the_same_bits(net in network(true, true)) {
        let run = |threshold: usize| {
            let mut app = quiet_app(threshold);
            set_gravity(&mut app, Vec3::new(0.0, -9.81, 0.0));
            let bodies = spawn_network(&mut app, &net);
            step(&mut app, 120);
            bits(&app, &bodies)
        };
        prop_assert_eq!(run(usize::MAX), run(1));
    }

    /// Restoring a snapshot and stepping on repeats the bits of stepping on
    /// from when it was saved.
    #[test]
    fn a_restored_snapshot_repeats_the_same_bits(net in network(true, true), at in 1usize..40) {
        let mut app = quiet_app(usize::MAX);
        set_gravity(&mut app, Vec3::new(0.0, -9.81, 0.0));
        let bodies = spawn_network(&mut app, &net);
        step(&mut app, at);
        let saved = PhysicsSnapshot::save(app.world_mut());
        step(&mut app, 60);
        let first = bits(&app, &bodies);
        saved.restore(app.world_mut());
        step(&mut app, 60);
        prop_assert_eq!(first, bits(&app, &bodies));
    }

    /// Whatever is written between steps (non-finite or huge velocities,
    /// negative masses, despawned bodies, springs to missing entities),
    /// no body left in the step turns non-finite.
    #[test]
    fn no_nan_whatever_the_edits(
        net in network(true, true),
        edits in proptest::collection::vec((0usize..10, 0u8..6, 1usize..20), 1..8),
    ) {
        let mut app = quiet_app(usize::MAX);
        set_gravity(&mut app, Vec3::new(0.0, -9.81, 0.0));
        let bodies = spawn_network(&mut app, &net);
        for (which, edit, steps) in edits {
            let e = bodies[which % bodies.len()];
            if app.world().get_entity(e).is_ok() {
                let mut entity = app.world_mut().entity_mut(e);
                match edit {
                    0 => entity.get_mut::<Body>().unwrap().velocity = Vec3::NAN,
                    1 => entity.get_mut::<Body>().unwrap().velocity = Vec3::splat(1e30),
                    2 => entity.get_mut::<Body>().unwrap().inv_mass = -1.0,
                    3 => entity.despawn(),
                    4 => {
                        let gone = app.world_mut().spawn_empty().id();
                        app.world_mut().despawn(gone);
                        app.world_mut().spawn(Spring::new(e, gone, 1.0, 10.0));
                    }
                    _ => entity.get_mut::<Body>().unwrap().position = Vec3::INFINITY,
                }
            }
            step(&mut app, steps);
            let world = app.world_mut();
            let mut stepped = world.query_filtered::<&Body, Without<PhysicsError>>();
            for b in stepped.iter(world) {
                prop_assert!(
                    b.position.is_finite() && b.velocity.is_finite(),
                    "a body in the step is not finite: {b:?}"
                );
            }
        }
    }
}

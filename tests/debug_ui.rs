//! The debug plugin's public helpers: the energy it plots, checked against
//! closed forms, and the picking it does.

mod common;

use bevy::prelude::*;
use bevy_euler_physics::prelude::*;
use common::{H, app, spawn, step};

const G: f64 = 9.81;

fn close(actual: f64, expected: f64, tol: f64, what: &str) {
    assert!(
        (actual - expected).abs() <= tol,
        "{what}: got {actual}, expected {expected} (tolerance {tol})"
    );
}

#[test]
fn a_body_at_rest_has_potential_energy_m_g_height() {
    let g = Gravity::default().0;
    let up = Energy::of_body(&Body::new(2.0).with_position(Vec3::new(5.0, 3.0, 1.0)), g);
    assert_eq!(up.kinetic, 0.0);
    assert_eq!(up.spring, 0.0);
    close(up.gravity, 2.0 * G * 3.0, 1e-5, "2 kg, 3 m up");
    let down = Energy::of_body(&Body::new(2.0).with_position(Vec3::new(0.0, -2.0, 0.0)), g);
    close(down.total(), -2.0 * G * 2.0, 1e-5, "2 kg, 2 m down");
    // Gravity along −x: the body further along −x has less energy.
    let sideways = Vec3::new(-9.81, 0.0, 0.0);
    let left = Energy::of_body(
        &Body::new(1.0).with_position(Vec3::new(-1.0, 7.0, 0.0)),
        sideways,
    );
    close(left.gravity, -G, 1e-5, "1 kg, 1 m along gravity");
    // Fixed bodies have no energy.
    let fixed = Energy::of_body(&Body::fixed(Vec3::new(0.0, 10.0, 0.0)), g);
    assert_eq!(fixed, Energy::default());
}

#[test]
fn a_moving_body_has_kinetic_energy_half_m_v_squared() {
    let body = Body::new(3.0).with_velocity(Vec3::new(1.0, -2.0, 2.0));
    let e = Energy::of_body(&body, Vec3::ZERO);
    // The mass is 1 / inv_mass, and inv_mass = 1/3 is rounded to f32.
    close(e.kinetic, 0.5 * 3.0 * 9.0, 1e-5, "½·3·|(1,−2,2)|²");
    assert_eq!(e.gravity, 0.0);
    assert_eq!(e.total(), e.kinetic);
}

#[test]
fn a_stretched_or_compressed_spring_has_half_k_d_squared() {
    let (a, b) = (Entity::PLACEHOLDER, Entity::PLACEHOLDER);
    let spring = Spring::new(a, b, 2.0, 80.0).with_damping(5.0);
    let stretched = Energy::of_spring(&spring, Vec3::ZERO, Vec3::new(0.0, 2.5, 0.0));
    close(
        stretched.spring,
        0.5 * 80.0 * 0.25,
        1e-9,
        "stretched by 0.5 m",
    );
    let compressed = Energy::of_spring(&spring, Vec3::ONE, Vec3::ONE + Vec3::new(1.2, 0.0, 1.6));
    close(
        compressed.spring,
        0.5 * 80.0 * 0.0,
        1e-9,
        "at rest (|d| = 2)",
    );
    let compressed = Energy::of_spring(&spring, Vec3::ZERO, Vec3::new(0.0, 0.0, 1.5));
    close(
        compressed.spring,
        0.5 * 80.0 * 0.25,
        1e-9,
        "compressed by 0.5 m",
    );
    assert_eq!(compressed.kinetic + compressed.gravity, 0.0);
}

#[test]
fn the_world_energy_sums_bodies_and_springs() {
    let mut app = app();
    app.insert_resource(Gravity(Vec3::new(0.0, -10.0, 0.0)));
    let anchor = spawn(&mut app, Body::fixed(Vec3::new(0.0, 4.0, 0.0)));
    let bob = spawn(
        &mut app,
        Body::new(0.5)
            .with_position(Vec3::new(0.0, 1.0, 0.0))
            .with_velocity(Vec3::new(2.0, 0.0, 0.0)),
    );
    spawn(&mut app, Spring::new(anchor, bob, 2.0, 30.0));
    // A spring to nowhere counts nothing.
    let gone = spawn(&mut app, Body::new(1.0));
    app.world_mut().despawn(gone);
    spawn(&mut app, Spring::new(anchor, gone, 1.0, 1000.0));
    let e = Energy::of_world(app.world_mut());
    close(e.kinetic, 0.5 * 0.5 * 4.0, 1e-9, "kinetic");
    close(
        e.spring,
        0.5 * 30.0 * 1.0,
        1e-9,
        "spring: 3 m long, 2 m at rest",
    );
    close(e.gravity, 0.5 * 10.0 * 1.0, 1e-6, "gravity: 0.5 kg, 1 m up");
    close(e.total(), 1.0 + 15.0 + 5.0, 1e-6, "total");
}

/// Semi-implicit Euler from rest: `v_n = n·h·g`,
/// `x_n = x_0 + h²·g·n(n+1)/2`, so `E_n − E_0 = −m·|g|²·h²·n/2` exactly: the
/// falling body lags the exact parabola by `h·g·t/2`.
#[test]
fn free_fall_loses_energy_exactly_as_semi_implicit_euler_predicts() {
    let mut app = app();
    let m = 2.0;
    let body = spawn(
        &mut app,
        Body::new(m as f32).with_position(Vec3::new(0.0, 10.0, 0.0)),
    );
    let e0 = Energy::of_world(app.world_mut());
    close(e0.total(), m * G * 10.0, 1e-4, "E₀ = m·g·y");
    let h = f64::from(H);
    for n in 1..=128 {
        step(&mut app, 1);
        let e = Energy::of_world(app.world_mut());
        let expected = e0.total() - m * G * G * h * h * f64::from(n) / 2.0;
        // f32 state: rounding costs up to a few mJ over 128 steps; the
        // predicted loss is 3 J.
        close(e.total(), expected, 1e-2, &format!("E after {n} steps"));
    }
    // It did fall: 128 steps of 1/64 s is 2 s, about 19.6 m.
    let y = app.world().get::<Body>(body).unwrap().position.y;
    assert!(y < -9.0, "{y}");
}

/// An undamped spring: semi-implicit Euler keeps a nearby energy, so the
/// true energy wobbles by a share of about `ω·h` and does not drift.
#[test]
fn an_undamped_oscillator_keeps_its_energy_within_a_bounded_wobble() {
    let mut app = app();
    app.insert_resource(Gravity::ZERO);
    let (k, m) = (100.0_f32, 1.0_f32);
    let anchor = spawn(&mut app, Body::fixed(Vec3::ZERO));
    let bob = spawn(
        &mut app,
        Body::new(m).with_position(Vec3::new(1.5, 0.0, 0.0)),
    );
    spawn(&mut app, Spring::new(anchor, bob, 1.0, k));
    let e0 = Energy::of_world(app.world_mut()).total();
    close(e0, 0.5 * 100.0 * 0.25, 1e-6, "E₀");
    let omega_h = f64::from((k / m).sqrt() * H);
    let mut energies = Vec::new();
    for _ in 0..2000 {
        step(&mut app, 1);
        energies.push(Energy::of_world(app.world_mut()).total());
    }
    let worst = energies
        .iter()
        .map(|e| (e - e0).abs() / e0)
        .fold(0.0, f64::max);
    assert!(worst <= omega_h, "wobble {worst} > ω·h = {omega_h}");
    assert!(worst > 1e-4, "the wobble is there: {worst}");
    let mean = |s: &[f64]| s.iter().sum::<f64>() / s.len() as f64;
    let (first, last) = (mean(&energies[..200]), mean(&energies[1800..]));
    close(last, first, 1e-2 * e0, "no drift over 2000 steps");
}

fn along_z(x: f32, y: f32) -> Ray3d {
    Ray3d::new(Vec3::new(x, y, 10.0), Dir3::NEG_Z)
}

#[test]
fn picking_takes_the_nearest_body_within_reach() {
    let ids: Vec<Entity> = (1..=4).map(|i| Entity::from_raw_u32(i).unwrap()).collect();
    let bodies = [
        (ids[0], Vec3::new(0.0, 0.0, 0.0), 0.05),
        (ids[1], Vec3::new(0.3, 0.0, 0.0), 0.05),
        (ids[2], Vec3::new(0.0, 2.0, -3.0), 1.0),
        (ids[3], Vec3::new(5.0, 5.0, 0.0), f32::NAN),
    ];
    // Both first bodies within 0.2 m; the second is nearer.
    assert_eq!(pick_body(along_z(0.2, 0.0), 0.2, bodies), Some(ids[1]));
    assert_eq!(pick_body(along_z(0.1, 0.0), 0.2, bodies), Some(ids[0]));
    // Nothing within reach.
    assert_eq!(pick_body(along_z(0.6, 0.0), 0.2, bodies), None);
    assert_eq!(pick_body(along_z(0.0, 0.21), 0.2, bodies), None);
    // A big body is picked anywhere inside its radius, at any depth.
    assert_eq!(pick_body(along_z(0.9, 2.0), 0.2, bodies), Some(ids[2]));
    assert_eq!(pick_body(along_z(1.1, 2.0), 0.2, bodies), None);
    // A non-finite radius falls back to the pick radius.
    assert_eq!(pick_body(along_z(5.1, 5.0), 0.2, bodies), Some(ids[3]));
    // Bodies behind the ray's origin are not picked.
    let behind = Ray3d::new(Vec3::new(0.0, 0.0, -1.0), Dir3::NEG_Z);
    assert_eq!(pick_body(behind, 0.2, bodies), None);
    // An oblique ray: the distance is to the line, not in the xy plane.
    let oblique = Ray3d::new(
        Vec3::new(-1.0, 0.0, 1.0),
        Dir3::new(Vec3::new(1.0, 0.0, -1.0)).unwrap(),
    );
    assert_eq!(pick_body(oblique, 0.1, bodies), Some(ids[0]));
    assert_eq!(pick_body(along_z(0.0, 0.0), 0.2, []), None);
}

#[test]
fn what_is_out_of_the_step_counts_no_energy() {
    let mut app = app();
    app.insert_resource(Gravity::ZERO);
    let a = spawn(&mut app, Body::fixed(Vec3::ZERO));
    let b = spawn(&mut app, Body::fixed(Vec3::new(2.0, 0.0, 0.0)));
    // Valid: ½·10·1² = 5 J.
    spawn(&mut app, Spring::new(a, b, 1.0, 10.0));
    // A negative stiffness is reported and left out of the step.
    let bad = spawn(&mut app, Spring::new(a, b, 1.0, -4.0));
    close(
        Energy::of_world(app.world_mut()).spring,
        5.0 - 2.0,
        1e-9,
        "before the check",
    );
    step(&mut app, 1);
    assert!(common::has_error(&app, bad));
    close(
        Energy::of_world(app.world_mut()).spring,
        5.0,
        1e-9,
        "after it",
    );
}

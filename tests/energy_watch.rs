//! The energy watch: an undamped rope that heats itself (its links pass
//! through each other within one step, which the stability bound does not
//! see) is reported once; stable, damped and pushed islands are not.

mod common;

use bevy::prelude::*;
use bevy_euler_physics::prelude::*;
use common::*;

const MASS: f32 = 0.5;
const K: f32 = 200.0;
const REST: f32 = 0.3;
const LINKS: usize = 8;

/// Eight bodies of 0.5 kg on springs of 200 N/m and rest length 0.3 under a
/// fixed anchor (`Island::load` 0.31 at 64 Hz), straight at rest length,
/// `angle` from the vertical, at rest. Returns the anchor then the bodies.
fn rope(app: &mut App, angle: f32, extra: impl Bundle + Clone) -> Vec<Entity> {
    rope_of(app, angle, K, extra)
}

/// [`rope`] with springs of stiffness `k`.
fn rope_of(app: &mut App, angle: f32, k: f32, extra: impl Bundle + Clone) -> Vec<Entity> {
    let dir = Vec3::new(angle.sin(), -angle.cos(), 0.0);
    let mut chain = vec![spawn(app, Body::fixed(Vec3::ZERO))];
    for i in 1..=LINKS {
        let e = spawn(
            app,
            (
                Body::new(MASS).with_position(dir * REST * i as f32),
                extra.clone(),
            ),
        );
        spawn(app, Spring::new(chain[i - 1], e, REST, k));
        chain.push(e);
    }
    chain
}

/// The rope's mechanical energy: kinetic, springs', gravity's.
fn energy(app: &App, chain: &[Entity]) -> f64 {
    let mut e = 0.0;
    for pair in chain.windows(2) {
        let (a, b) = (body(app, pair[0]), body(app, pair[1]));
        let stretch = f64::from(a.position.distance(b.position) - REST);
        e += 0.5 * f64::from(K) * stretch * stretch;
        e += 0.5 * f64::from(MASS) * f64::from(b.velocity.length_squared());
        e += f64::from(MASS) * 9.81 * f64::from(b.position.y);
    }
    e
}

fn growth(app: &App) -> Vec<(Entity, PhysicsIssue)> {
    warnings(app)
        .iter()
        .filter(|w| matches!(w.issue, PhysicsIssue::EnergyGrowth { .. }))
        .map(|w| (w.entity, w.issue))
        .collect()
}

/// Released level, the undamped rope whips, its links pass through each
/// other and it heats up: reported once, on one of its bodies, within
/// 12 000 steps, when its energy has really grown (by more than 1 J over
/// its start); its load says stable all along.
#[test]
fn a_heating_undamped_rope_is_reported_once() {
    let mut app = app();
    let chain = rope(&mut app, core::f32::consts::FRAC_PI_2, ());
    step(&mut app, 1);
    let start = energy(&app, &chain);
    let load = app.world().get::<Island>(chain[1]).unwrap().load();
    assert!(load < 0.35, "load {load}: stable by the bound");
    let mut steps = 1;
    while growth(&app).is_empty() && steps < 12_000 {
        step(&mut app, 16);
        steps += 16;
    }
    let reported = growth(&app);
    assert_eq!(reported.len(), 1, "once, within 12 000 steps: {reported:?}");
    assert!(chain[1..].contains(&reported[0].0), "{reported:?}");
    let now = energy(&app, &chain);
    eprintln!("reported after {steps} steps: {start:.3} J → {now:.3} J; {reported:?}");
    assert!(
        now > start + 1.0,
        "reported at step {steps} with {now} J against {start} J at the start"
    );
    step(&mut app, 2000);
    assert_eq!(growth(&app).len(), 1, "said once");
}

/// The same rope with a little damping on every body, the undamped rope
/// released 20° from the vertical (its links never pass through each
/// other), and one undamped body on a spring: 20 000 steps each, nothing
/// reported.
#[test]
fn stable_and_damped_islands_are_not_reported() {
    let mut damped = app();
    rope(&mut damped, core::f32::consts::FRAC_PI_2, Damping(0.05));
    let mut swinging = app();
    rope(&mut swinging, 20f32.to_radians(), ());
    let mut bob = app();
    let anchor = spawn(&mut bob, Body::fixed(Vec3::ZERO));
    let mass = spawn(
        &mut bob,
        Body::new(1.0).with_position(Vec3::new(0.5, -0.2, 0.0)),
    );
    spawn(&mut bob, Spring::new(anchor, mass, 0.3, 500.0));
    for app in [&mut damped, &mut swinging, &mut bob] {
        step(app, 20_000);
        assert!(growth(app).is_empty(), "{:?}", growth(app));
    }
}

/// Near the stability limit, where semi-implicit Euler's energy swings
/// most: the rope stiffened to a load of about 0.9 (the automatic
/// substeps' target) and lightly damped, released level, for 20 000
/// steps; and, with no gravity and no sleep, a small undamped vibration
/// (1 mm) of three bodies 100 m from the origin, where `f32` positions are
/// coarse: neither is reported.
#[test]
fn islands_near_the_limit_or_far_out_are_not_reported() {
    let mut stiff = app();
    let k = K * (0.9f32 / 0.3125).powi(2);
    let chain = rope_of(&mut stiff, core::f32::consts::FRAC_PI_2, k, Damping(0.05));
    step(&mut stiff, 1);
    let load = stiff.world().get::<Island>(chain[1]).unwrap().load();
    assert!((0.8..1.0).contains(&load), "load {load}");
    step(&mut stiff, 20_000);
    assert!(growth(&stiff).is_empty(), "{:?}", growth(&stiff));

    let mut far = app();
    set_gravity(&mut far, Vec3::ZERO);
    let at = Vec3::new(100.0, 0.0, 0.0);
    let mut prev = spawn(&mut far, Body::fixed(at));
    for i in 1..=3 {
        let e = spawn(
            &mut far,
            (
                Body::new(MASS).with_position(at + Vec3::new(REST * i as f32 + 0.001, 0.0, 0.0)),
                SleepingDisabled,
            ),
        );
        spawn(&mut far, Spring::new(prev, e, REST, K));
        prev = e;
    }
    step(&mut far, 20_000);
    assert!(growth(&far).is_empty(), "{:?}", growth(&far));
}

/// An undamped rope pumped by your force along its bottom body's velocity
/// gains energy that the step did not make: not reported.
#[test]
fn pushed_islands_are_not_reported() {
    let mut app = app();
    let chain = rope(&mut app, 0.3, ());
    let bottom = chain[LINKS];
    let start = energy(&app, &chain);
    for _ in 0..4000 {
        let v = body(&app, bottom).velocity;
        app.world_mut()
            .get_mut::<AccumulatedForce>(bottom)
            .unwrap()
            .0 += v.normalize_or_zero() * 2.0;
        step(&mut app, 1);
    }
    assert!(energy(&app, &chain) > start + 10.0, "pumped");
    assert!(growth(&app).is_empty(), "{:?}", growth(&app));
}

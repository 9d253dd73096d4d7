//! The integration against closed forms and invariants.

mod common;

use bevy::prelude::*;
use bevy_euler_physics::prelude::*;
use common::*;

/// Free fall under semi-implicit Euler: `v_n = v_0 + n·h·g` and
/// `x_n = x_0 + n·h·v_0 + h²·g·n(n+1)/2` (the drift uses the kicked
/// velocity, hence n+1).
#[test]
fn free_fall_matches_the_semi_implicit_closed_form() {
    let mut app = app();
    let g = Vec3::new(0.5, -9.81, 0.25);
    set_gravity(&mut app, g);
    let x0 = Vec3::new(1.0, 20.0, -2.0);
    let v0 = Vec3::new(3.0, 4.0, -1.0);
    let e = spawn(&mut app, Body::new(2.0).with_position(x0).with_velocity(v0));
    let h = f64::from(H);
    for n in 1..=256u32 {
        step(&mut app, 1);
        let nf = f64::from(n);
        let x =
            x0.as_dvec3() + nf * h * v0.as_dvec3() + h * h * g.as_dvec3() * nf * (nf + 1.0) / 2.0;
        let v = v0.as_dvec3() + nf * h * g.as_dvec3();
        let b = body(&app, e);
        // f32 rounding accumulates at most about one ulp of the largest
        // magnitude per operation per step.
        let scale = x.abs().max_element().max(v.abs().max_element()) as f32;
        let tol = 4.0 * n as f32 * f32::EPSILON * scale;
        assert_close(
            b.position,
            x.as_vec3(),
            tol,
            &format!("position after {n} steps"),
        );
        assert_close(
            b.velocity,
            v.as_vec3(),
            tol,
            &format!("velocity after {n} steps"),
        );
    }
}

#[test]
fn fixed_bodies_never_move() {
    let mut app = app();
    let anchor = spawn(&mut app, Body::fixed(Vec3::new(0.0, 5.0, 0.0)));
    let bob = spawn(
        &mut app,
        Body::new(1.0).with_position(Vec3::new(1.0, 3.0, 0.0)),
    );
    spawn(&mut app, Spring::new(anchor, bob, 1.0, 50.0));
    step(&mut app, 200);
    assert_eq!(body(&app, anchor).position, Vec3::new(0.0, 5.0, 0.0));
    assert_ne!(body(&app, bob).position, Vec3::new(1.0, 3.0, 0.0));
}

/// Without forces, Padé damping gives `v_n = v_0 / (1 + h·c)^n`.
#[test]
fn pade_damping_decays_geometrically() {
    let mut app = app();
    set_gravity(&mut app, Vec3::ZERO);
    // The body slows below the sleep threshold long before step 200; this
    // test is about the integrator, so it must stay awake.
    app.insert_resource(SleepSettings {
        enabled: false,
        ..default()
    });
    let v0 = Vec3::new(3.0, -2.0, 1.0);
    let c = 5.0;
    let e = spawn(&mut app, (Body::new(1.0).with_velocity(v0), Damping(c)));
    let factor = 1.0 / (1.0 + f64::from(H) * f64::from(c));
    for n in 1..=200i32 {
        step(&mut app, 1);
        let expected = v0.as_dvec3() * factor.powi(n);
        let tol = 4.0 * n as f32 * f32::EPSILON * v0.abs().max_element();
        assert_close(
            body(&app, e).velocity,
            expected.as_vec3(),
            tol,
            &format!("step {n}"),
        );
    }
}

/// With `h·c = 10` the damping factor is 1/11: the velocity shrinks every step
/// and never changes sign (explicit damping `v·(1 − h·c)` would flip and grow).
#[test]
fn stiff_pade_damping_never_flips_the_velocity() {
    let mut app = app();
    set_gravity(&mut app, Vec3::ZERO);
    let c = 10.0 / H;
    let e = spawn(
        &mut app,
        (
            Body::new(1.0).with_velocity(Vec3::new(7.0, -3.0, 0.0)),
            Damping(c),
        ),
    );
    let mut last = body(&app, e).velocity;
    for _ in 0..30 {
        step(&mut app, 1);
        let v = body(&app, e).velocity;
        assert!(
            v.x > 0.0 && v.y < 0.0,
            "velocity flipped sign or vanished: {v}"
        );
        assert!(v.x < last.x && v.y > last.y, "velocity grew: {last} -> {v}");
        let tol = f32::EPSILON * last.abs().max_element();
        assert_close(v, last / 11.0, tol, "factor 1/11");
        last = v;
    }
}

/// Kick, then damp: the fixed point of `v ← (v + h·g) / (1 + h·c)` is exactly
/// `g / c`, for any `h·c`, here 0.1 and 10.
#[test]
fn damped_fall_converges_to_the_terminal_velocity() {
    for hc in [0.1f32, 10.0] {
        let mut app = app();
        let g = Vec3::new(0.0, -9.81, 0.0);
        set_gravity(&mut app, g);
        let c = hc / H;
        let e = spawn(&mut app, (Body::new(3.0), Damping(c)));
        step(&mut app, 2000);
        let v = body(&app, e).velocity;
        assert_close(
            v,
            g / c,
            8.0 * f32::EPSILON * (g / c).length(),
            &format!("h·c = {hc}"),
        );
    }
}

fn spring_energy(app: &App, anchor: Entity, bob: Entity, k: f32, rest: f32) -> f64 {
    let a = body(app, anchor);
    let b = body(app, bob);
    let stretch = f64::from((b.position - a.position).length() - rest);
    f64::from(b.kinetic_energy()) + 0.5 * f64::from(k) * stretch * stretch
}

/// Semi-implicit Euler is symplectic: at ω·h = 0.1 the energy of a mass on a
/// spring oscillates by about ω·h/2 = 5 % and does not drift, over 10⁵ steps.
#[test]
fn spring_oscillator_energy_stays_bounded_for_1e5_steps() {
    let mut app = app();
    set_gravity(&mut app, Vec3::ZERO);
    let omega = 0.1 / H;
    let mass = 2.0;
    let k = omega * omega * mass;
    let rest = 1.0;
    let anchor = spawn(&mut app, Body::fixed(Vec3::ZERO));
    // Stretched by 0.5 m, with a sideways velocity so it also swings.
    let bob = spawn(
        &mut app,
        Body::new(mass)
            .with_position(Vec3::new(1.5, 0.0, 0.0))
            .with_velocity(Vec3::new(0.0, 1.0, 0.0)),
    );
    spawn(&mut app, Spring::new(anchor, bob, rest, k));
    let e0 = spring_energy(&app, anchor, bob, k, rest);
    let (mut lo, mut hi) = (e0, e0);
    for _ in 0..100_000 {
        step(&mut app, 1);
        let e = spring_energy(&app, anchor, bob, k, rest);
        lo = lo.min(e);
        hi = hi.max(e);
    }
    assert!(
        lo >= 0.94 * e0 && hi <= 1.06 * e0,
        "energy left ±6 %: start {e0}, range [{lo}, {hi}]"
    );
    // And it really oscillated: not a body that never moved.
    assert!(
        hi > lo * 1.001,
        "energy range [{lo}, {hi}] suspiciously flat"
    );
}

/// Equal and opposite spring forces: two free bodies on a damped spring keep
/// their total momentum, while the damping takes energy out.
#[test]
fn two_free_bodies_on_a_damped_spring_keep_their_momentum() {
    let mut app = app();
    set_gravity(&mut app, Vec3::ZERO);
    let a = spawn(
        &mut app,
        Body::new(1.0).with_velocity(Vec3::new(2.0, 1.0, 0.0)),
    );
    let b = spawn(
        &mut app,
        Body::new(3.0)
            .with_position(Vec3::new(1.5, 0.2, 0.1))
            .with_velocity(Vec3::new(-1.0, 0.5, 0.3)),
    );
    spawn(&mut app, Spring::new(a, b, 1.0, 80.0).with_damping(2.0));
    let energy = |app: &App| {
        let (ba, bb) = (body(app, a), body(app, b));
        let stretch = (bb.position - ba.position).length() - 1.0;
        ba.kinetic_energy() + bb.kinetic_energy() + 0.5 * 80.0 * stretch * stretch
    };
    let p0 = body(&app, a).momentum() + body(&app, b).momentum();
    let e0 = energy(&app);
    for n in 1..=2000 {
        step(&mut app, 1);
        let p = body(&app, a).momentum() + body(&app, b).momentum();
        let tol = 16.0 * n as f32 * f32::EPSILON * 4.0;
        assert_close(p, p0, tol, &format!("momentum after {n} steps"));
    }
    // The damping did work: the oscillation along the spring died out, and
    // only the energy of the centre of mass and of the spin stays.
    let e = energy(&app);
    assert!(e < 0.9 * e0, "energy {e0} -> {e}: the damping did nothing");
}

#[derive(Resource, Default)]
struct Seen(Vec<(Vec3, Vec3)>);

fn record(bodies: Query<&Body>, mut seen: ResMut<Seen>) {
    for body in &bodies {
        seen.0.push((body.position, body.velocity));
    }
}

/// The constraint hook runs between the two integrations: it sees the
/// kicked velocity and the position from before the drift.
#[test]
fn solve_constraints_sees_new_velocities_and_old_positions() {
    let mut app = app();
    let g = Vec3::new(0.0, -9.81, 0.0);
    set_gravity(&mut app, g);
    app.init_resource::<Seen>().add_systems(
        PhysicsSubstep,
        record.in_set(SubstepSystems::SolveConstraints),
    );
    let x0 = Vec3::new(0.0, 10.0, 0.0);
    let v0 = Vec3::new(1.0, 0.0, 0.0);
    spawn(&mut app, Body::new(1.0).with_position(x0).with_velocity(v0));
    step(&mut app, 3);
    let seen = &app.world().resource::<Seen>().0;
    assert_eq!(seen.len(), 3);
    let (mut x, mut v) = (x0, v0);
    for (n, &(hook_x, hook_v)) in seen.iter().enumerate() {
        v += H * g;
        assert_eq!(hook_x, x, "step {n}: the hook must see the old position");
        assert_eq!(hook_v, v, "step {n}: the hook must see the new velocity");
        x += H * v;
    }
}

fn stop_everything(mut bodies: Query<&mut Body>) {
    for mut body in &mut bodies {
        body.velocity = Vec3::ZERO;
    }
}

/// What the hook writes to the velocity is what the drift uses.
#[test]
fn velocities_written_in_the_hook_drive_the_drift() {
    let mut app = app();
    app.add_systems(
        PhysicsSubstep,
        stop_everything.in_set(SubstepSystems::SolveConstraints),
    );
    let x0 = Vec3::new(0.0, 10.0, 0.0);
    let e = spawn(
        &mut app,
        Body::new(1.0).with_position(x0).with_velocity(Vec3::X),
    );
    step(&mut app, 10);
    assert_eq!(body(&app, e).position, x0);
}

fn push_x(mut forces: Query<&mut AccumulatedForce>) {
    for mut f in &mut forces {
        f.0.x += 4.0;
    }
}

/// User forces, persistent and per-pass, act as `F·inv_mass`.
#[test]
fn user_forces_accelerate_by_f_over_m() {
    let mut app = app();
    set_gravity(&mut app, Vec3::ZERO);
    app.add_systems(
        PhysicsSubstep,
        push_x.in_set(SubstepSystems::AccumulateForces),
    );
    let e = spawn(
        &mut app,
        (Body::new(2.0), ConstantForce(Vec3::new(0.0, 6.0, 0.0))),
    );
    let n = 64;
    step(&mut app, n);
    // a = (4, 6, 0) / 2 kg; exactly representable, so exact.
    let expected = Vec3::new(2.0, 3.0, 0.0) * H * n as f32;
    assert_close(body(&app, e).velocity, expected, 1e-5, "velocity");
    assert_eq!(
        app.world().get::<AccumulatedForce>(e).unwrap().0,
        Vec3::ZERO
    );
}

/// Two substeps of h/2 are two steps of h/2.
#[test]
fn global_substeps_equal_smaller_steps() {
    let scene = |app: &mut App| {
        let anchor = spawn(app, Body::fixed(Vec3::ZERO));
        let a = spawn(app, Body::new(1.0).with_position(Vec3::new(0.3, -0.5, 0.0)));
        let b = spawn(app, Body::new(2.0).with_position(Vec3::new(0.6, -1.0, 0.0)));
        spawn(app, Spring::new(anchor, a, 0.5, 300.0).with_damping(0.5));
        spawn(app, Spring::new(a, b, 0.5, 300.0).with_damping(0.5));
        (a, b)
    };
    let mut sub = app();
    sub.insert_resource(PhysicsSettings {
        substeps: 2,
        ..default()
    });
    let (a1, b1) = scene(&mut sub);
    let mut plain = app_with_timestep(H / 2.0);
    let (a2, b2) = scene(&mut plain);
    step(&mut sub, 100);
    step(&mut plain, 200);
    assert_eq!(body(&sub, a1), body(&plain, a2));
    assert_eq!(body(&sub, b1), body(&plain, b2));
}

/// A body written between steps is what the springs see in the next step
/// (the solver must not keep a stale copy).
#[test]
fn springs_see_positions_written_between_steps() {
    let mut app = app();
    set_gravity(&mut app, Vec3::ZERO);
    let (k, rest, mass) = (50.0, 1.0, 2.0);
    let anchor = spawn(&mut app, Body::fixed(Vec3::ZERO));
    let bob = spawn(
        &mut app,
        Body::new(mass).with_position(Vec3::new(1.2, 0.0, 0.0)),
    );
    spawn(&mut app, Spring::new(anchor, bob, rest, k));
    step(&mut app, 5);
    for (x, at) in [(2.0f32, Vec3::X), (0.5, Vec3::Y), (3.0, Vec3::NEG_X)] {
        {
            let mut b = body_mut(&mut app, bob);
            b.position = at * x;
            b.velocity = Vec3::ZERO;
        }
        step(&mut app, 1);
        // One kick from rest: v = h·F/m with F = −k·(x − rest) along `at`.
        let expected = at * (-k * (x - rest) / mass * H);
        assert_close(
            body(&app, bob).velocity,
            expected,
            1e-5,
            &format!("after a write to {}", at * x),
        );
    }
    // And the anchor, moved by the user, pulls from its new place.
    body_mut(&mut app, anchor).position = Vec3::new(0.0, 10.0, 0.0);
    {
        let mut b = body_mut(&mut app, bob);
        b.position = Vec3::new(0.0, 8.0, 0.0);
        b.velocity = Vec3::ZERO;
    }
    step(&mut app, 1);
    let expected = Vec3::Y * (k * (2.0 - rest) / mass * H);
    assert_close(
        body(&app, bob).velocity,
        expected,
        1e-5,
        "after moving the anchor",
    );
}

/// A body spawned with a `Transform` and no position of its own starts at
/// the transform; a position given on the body wins, and the transform
/// follows it.
#[test]
fn a_transform_at_spawn_places_a_body_without_a_position() {
    let mut app = app();
    set_gravity(&mut app, Vec3::ZERO);
    let at = Vec3::new(3.0, 4.0, 0.0);
    let placed = spawn(&mut app, (Body::new(1.0), Transform::from_translation(at)));
    let own = Vec3::new(1.0, 1.0, 0.0);
    let given = spawn(
        &mut app,
        (
            Body::new(1.0).with_position(own),
            Transform::from_translation(at),
        ),
    );
    step(&mut app, 3);
    assert_eq!(body(&app, placed).position, at);
    assert_eq!(translation(&app, placed), at);
    assert_eq!(body(&app, given).position, own);
    assert_eq!(translation(&app, given), own);
}

fn push_before_the_step(mut forces: Query<&mut AccumulatedForce>) {
    for mut force in &mut forces {
        force.0.x += 2.0;
    }
}

fn push_in_each_pass(mut bodies: SubstepBodies<&mut AccumulatedForce>) {
    for mut force in bodies.iter_mut() {
        force.0.x += 2.0;
    }
}

/// 2 N on 1 kg for one second gives 2 m/s at 1, 2, 4 or 8 substeps, both
/// for a force written before each fixed step (which acts for the whole
/// step) and for one added in each pass (which acts for that pass).
#[test]
fn a_force_gives_the_same_impulse_at_any_substep_count() {
    for substeps in [1, 2, 4, 8] {
        for in_pass in [false, true] {
            let mut app = app();
            set_gravity(&mut app, Vec3::ZERO);
            if in_pass {
                app.add_systems(
                    PhysicsSubstep,
                    push_in_each_pass.in_set(SubstepSystems::AccumulateForces),
                );
            } else {
                app.add_systems(
                    FixedUpdate,
                    push_before_the_step.in_set(PhysicsSystems::Prepare),
                );
            }
            let e = spawn(&mut app, (Body::new(1.0), Substeps(substeps)));
            // One second of fixed steps of H.
            step(&mut app, (1.0 / H) as usize);
            let v = body(&app, e).velocity;
            assert!(
                (v.x - 2.0).abs() < 1e-5 && v.y == 0.0,
                "Substeps({substeps}), in each pass: {in_pass}: {v}"
            );
        }
    }
}

#[derive(Resource, Default)]
struct Passes(u32);

fn count_passes(mut passes: ResMut<Passes>) {
    passes.0 += 1;
}

/// A system added to `PhysicsSubstep` after the app has been stepping runs
/// from the next step on, once per pass.
#[test]
fn a_substep_system_added_later_runs_from_the_next_step() {
    let mut app = app();
    app.init_resource::<Passes>();
    spawn(&mut app, (Body::new(1.0), Substeps(3)));
    step(&mut app, 5);
    app.add_systems(
        PhysicsSubstep,
        count_passes.in_set(SubstepSystems::IntegrateVelocities),
    );
    step(&mut app, 4);
    assert_eq!(app.world().resource::<Passes>().0, 4 * 3);
}

/// The period of `y(t)` from its upward crossings of its mean, over the
/// samples `ys` taken every `h`.
fn period(ys: &[f32], h: f32) -> f32 {
    let mean = ys.iter().sum::<f32>() / ys.len() as f32;
    let crossings: Vec<f32> = ys
        .windows(2)
        .enumerate()
        .filter(|(_, w)| w[0] < mean && w[1] >= mean)
        .map(|(i, w)| (i as f32 + (mean - w[0]) / (w[1] - w[0])) * h)
        .collect();
    assert!(crossings.len() >= 3, "too few crossings: {crossings:?}");
    (crossings[crossings.len() - 1] - crossings[0]) / (crossings.len() - 1) as f32
}

/// A spring tuned at 2 Hz on a 2 kg body hanging from a fixed anchor
/// swings with a period of 0.5 s within 1 %, and still does after the body
/// becomes 8 kg (its stiffness follows the mass).
#[test]
fn a_spring_tuned_by_frequency_keeps_its_period_whatever_the_mass() {
    let mut app = app();
    set_gravity(&mut app, Vec3::ZERO);
    let anchor = spawn(&mut app, Body::fixed(Vec3::ZERO));
    let bob = spawn(
        &mut app,
        Body::new(2.0).with_position(Vec3::new(0.0, -1.1, 0.0)),
    );
    let spring = spawn(&mut app, Spring::from_frequency(anchor, bob, 1.0, 2.0, 0.0));
    let swing = |app: &mut App| {
        let ys: Vec<f32> = (0..320)
            .map(|_| {
                step(app, 1);
                body(app, bob).position.y
            })
            .collect();
        period(&ys, H)
    };
    let first = swing(&mut app);
    assert!((first - 0.5).abs() < 0.005, "period {first} at 2 kg");
    let k = app.world().get::<Spring>(spring).unwrap().stiffness;
    let omega = 2.0 * std::f32::consts::PI * 2.0;
    assert!((k - 2.0 * omega * omega).abs() < 1e-3 * k, "k = {k}");
    body_mut(&mut app, bob).inv_mass = 1.0 / 8.0;
    step(&mut app, 2);
    let second = swing(&mut app);
    assert!((second - 0.5).abs() < 0.005, "period {second} at 8 kg");
    let k = app.world().get::<Spring>(spring).unwrap().stiffness;
    assert!((k - 8.0 * omega * omega).abs() < 1e-3 * k, "k = {k}");
}

/// Stiffness of the pull to the origin of [`pull_home`], per kilogram.
const HOME: f32 = 40.0;
/// The share of its velocity [`drag_in_hook`] leaves a body each pass.
const KEEP: f32 = 0.999;

fn pull_home(mut bodies: SubstepBodies<(&Body, &mut AccumulatedForce)>) {
    for (body, mut force) in bodies.iter_mut() {
        force.0 -= HOME * body.position / body.inv_mass;
    }
}

fn drag_in_hook(mut bodies: SubstepBodies<&mut Body>) {
    for mut body in bodies.iter_mut() {
        body.velocity *= KEEP;
    }
}

/// The positions of `probe` (spawned with `Substeps(4)` at `start`) over
/// 120 steps of a scene with systems of yours in two sets of
/// `PhysicsSubstep`, beside `crowd` bodies at one pass a step.
fn probe_path(start: Vec3, crowd: usize) -> (Vec<Vec3>, Option<Entity>, App) {
    let mut app = app();
    set_gravity(&mut app, Vec3::ZERO);
    app.add_systems(
        PhysicsSubstep,
        (
            pull_home.in_set(SubstepSystems::AccumulateForces),
            drag_in_hook.in_set(SubstepSystems::SolveConstraints),
        ),
    );
    let probe = spawn(&mut app, (Body::new(2.0).with_position(start), Substeps(4)));
    let others: Vec<Entity> = (0..crowd)
        .map(|i| spawn(&mut app, Body::new(1.0).with_position(Vec3::X * i as f32)))
        .collect();
    let path = (0..120)
        .map(|_| {
            step(&mut app, 1);
            body(&app, probe).position
        })
        .collect();
    (path, others.last().copied(), app)
}

/// Systems of yours in `PhysicsSubstep` see and move the pass's bodies
/// the same whether their group holds most of the bodies (its copies walk
/// the tables' columns) or few of them (its copies look up its
/// entities): a body pulled home by a force added in each pass and slowed
/// in the constraint hook follows the same path, bit for bit, alone and
/// beside forty bodies at another pass count; and that path is the
/// semi-implicit recurrence of those forces (`v ← KEEP·(v + h·f/m)`, then
/// `x ← x + h·v`, with `h` a quarter step). The crowd's last body, pulled
/// the same way, follows the same recurrence at one pass.
#[test]
fn substep_systems_move_a_body_alike_in_a_large_group_and_a_small_one() {
    let start = Vec3::new(0.5, -0.25, 0.125);
    let (alone, _, _) = probe_path(start, 0);
    let (crowded, last, app) = probe_path(start, 40);
    let first_apart = alone.iter().zip(&crowded).position(|(a, c)| a != c);
    assert_eq!(
        first_apart.map(|n| (n, alone[n], crowded[n])),
        None,
        "the probe's path alone and beside 40 bodies: first step apart"
    );
    let recurrence = |x0: f64, passes: usize, steps: usize| {
        let h = f64::from(H) / passes as f64;
        let (mut x, mut v) = (x0, 0.0f64);
        let mut path = Vec::new();
        for _ in 0..steps {
            for _ in 0..passes {
                v = f64::from(KEEP) * (v - h * f64::from(HOME) * x);
                x += h * v;
            }
            path.push(x);
        }
        path
    };
    for axis in 0..3 {
        let expected = recurrence(f64::from(start[axis]), 4, 120);
        for (n, (got, want)) in alone.iter().zip(&expected).enumerate() {
            assert!(
                (f64::from(got[axis]) - want).abs() < 1e-5,
                "step {n}, axis {axis}: {} against {want}",
                got[axis]
            );
        }
    }
    // Sanity: the pull really moved it (a quarter of a period is 15 steps).
    assert!(alone[14].length() < 0.5 * start.length(), "{:?}", alone[14]);
    let last = last.expect("a crowd of 40");
    let x = body(&app, last).position.x;
    let expected = recurrence(39.0, 1, 120)[119];
    assert!(
        (f64::from(x) - expected).abs() < 1e-4 * 39.0,
        "the crowd's last body: {x} against {expected}"
    );
    assert_eq!(
        app.world().get::<AccumulatedForce>(last).unwrap().0,
        Vec3::ZERO,
        "the force added in the pass was taken"
    );
}

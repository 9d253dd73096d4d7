//! Implicit springs: stable at one pass where explicit steps blow up, the
//! static stretch of a hanging rope, the period of a soft spring, islands
//! that do not disturb each other, and bad input contained.

mod common;

use bevy::prelude::*;
use bevy_euler_physics::prelude::*;
use common::*;

/// The solves each physical test runs with: the default (directly for a
/// pair or a rope), and conjugate gradients preconditioned by multigrid
/// and by Jacobi.
fn solvers() -> [ImplicitSettings; 3] {
    [
        ImplicitSettings::default(),
        ImplicitSettings {
            solver: ImplicitSolver::ConjugateGradients,
            ..default()
        },
        ImplicitSettings {
            solver: ImplicitSolver::ConjugateGradients,
            preconditioner: ImplicitPreconditioner::Jacobi,
            ..default()
        },
    ]
}

/// The kinetic and spring energy of a pair `a`–`b` joined by `spring`.
fn pair_energy(app: &App, a: Entity, b: Entity, k: f32, rest: f32) -> f64 {
    let (ba, bb) = (body(app, a), body(app, b));
    let kinetic =
        |body: &Body| 0.5 * f64::from(body.velocity.length_squared()) / f64::from(body.inv_mass);
    let stretch = f64::from(ba.position.distance(bb.position) - rest);
    kinetic(&ba) + kinetic(&bb) + 0.5 * f64::from(k) * stretch * stretch
}

/// A very stiff pair (k = 1e6 on 1 kg each, ω·h ≈ 22 at 64 Hz) stretched
/// and thrown, at one pass: its energy never rises above the start over
/// 6 000 steps, its momentum stays what it was, and it ends near its rest
/// length. The same pair stepped explicitly blows up within 20 steps.
#[test]
fn a_very_stiff_pair_is_stable_at_one_pass() {
    for solver in solvers() {
        stiff_pair(solver);
    }
}

fn stiff_pair(solver: ImplicitSettings) {
    let run = |implicit: bool, steps: usize| {
        let mut app = app();
        app.insert_resource(solver);
        set_gravity(&mut app, Vec3::ZERO);
        let a = spawn(
            &mut app,
            Body::new(1.0).with_velocity(Vec3::new(0.0, 1.0, 0.0)),
        );
        let b = spawn(
            &mut app,
            Body::new(1.0)
                .with_position(Vec3::new(1.05, 0.0, 0.0))
                .with_velocity(Vec3::new(0.5, -1.0, 0.2)),
        );
        if implicit {
            app.world_mut().entity_mut(a).insert(ImplicitSprings);
        }
        spawn(&mut app, Spring::new(a, b, 1.0, 1e6));
        let start = pair_energy(&app, a, b, 1e6, 1.0);
        let mut most = start;
        let momentum = body(&app, a).velocity + body(&app, b).velocity;
        for _ in 0..steps {
            step(&mut app, 1);
            most = most.max(pair_energy(&app, a, b, 1e6, 1.0));
            let now = body(&app, a).velocity + body(&app, b).velocity;
            if implicit {
                assert_close(now, momentum, 1e-3, "momentum");
            }
        }
        let length = body(&app, a).position.distance(body(&app, b).position);
        (start, most, length, all_bodies_finite(&mut app))
    };
    let (start, most, length, finite) = run(true, 6000);
    assert!(finite);
    assert!(
        most <= start * (1.0 + 1e-6),
        "{solver:?}: energy rose from {start} to {most}"
    );
    assert!((length - 1.0).abs() < 1e-3, "{solver:?}: length {length}");
    let (start, most, _, _) = run(false, 20);
    assert!(
        most > 100.0 * start,
        "the explicit pair is unstable: {start} → {most}"
    );
}

/// A rope of 50 bodies of 0.1 kg on 1e5 N/m springs (ω·h ≈ 31 at one
/// pass), hanging from a fixed anchor, after 15 s: at rest, and spring i
/// stretched by the weight below it, `(51 − i)·m·g/k`, within 1 % (or,
/// for the lowest springs, whose stretch of 10 to 60 µm is read from
/// positions 5 m down, within the two `f32` steps of those positions);
/// and each body as far below its unstretched place as the springs above
/// it stretch in all, within 1 %. Solved directly (a rope's default) and by
/// conjugate gradients (with each preconditioner).
#[test]
fn a_stiff_rope_hangs_at_its_static_stretch() {
    for solver in solvers() {
        hangs_at_static_stretch(solver);
    }
}

fn hangs_at_static_stretch(solver: ImplicitSettings) {
    let mut app = app();
    app.insert_resource(solver);
    let (m, k, rest, n) = (0.1f32, 1e5f32, 0.1f32, 50);
    let g = 9.81f32;
    app.insert_resource(Gravity(Vec3::new(0.0, -g, 0.0)));
    let anchor = spawn(&mut app, Body::fixed(Vec3::ZERO));
    let mut chain = vec![anchor];
    for i in 1..=n {
        let e = spawn(
            &mut app,
            (
                Body::new(m).with_position(Vec3::new(0.0, -rest * i as f32, 0.0)),
                ImplicitSprings,
                Damping(0.5),
            ),
        );
        spawn(
            &mut app,
            Spring::new(chain[i - 1], e, rest, k).with_damping(2.0),
        );
        chain.push(e);
    }
    step(&mut app, (15.0 / H) as usize);
    assert!(all_bodies_finite(&mut app));
    assert!(warnings(&app).is_empty(), "{:?}", warnings(&app));
    let mut sag = 0.0f32;
    for i in 1..=n {
        let here = body(&app, chain[i]);
        let v = here.velocity.length();
        assert!(v < 1e-3, "{solver:?}: body {i} moves at {v} m/s");
        let length = body(&app, chain[i - 1]).position.distance(here.position);
        let expected = (n + 1 - i) as f32 * m * g / k;
        let stretch = length - rest;
        // Two steps of f32 at this depth.
        let resolution = 2.0 * (here.position.y.abs() * f32::EPSILON);
        assert!(
            (stretch - expected).abs() <= (0.01 * expected).max(resolution),
            "{solver:?}: spring {i}: stretch {stretch}, expected {expected}"
        );
        sag += expected;
        let below = -rest * i as f32 - here.position.y;
        assert!(
            (below - sag).abs() <= 0.01 * sag,
            "{solver:?}: body {i}: {below} m below its unstretched place, expected {sag}"
        );
    }
}

/// A soft implicit oscillator (ω·h = 0.1) keeps its period: the times of
/// its downward zero crossings over 20 periods are `2π/ω` apart within 1 %.
#[test]
fn a_soft_oscillator_keeps_its_period() {
    let mut app = app();
    set_gravity(&mut app, Vec3::ZERO);
    let omega = 0.1 / H;
    let (m, rest) = (1.0f32, 1.0f32);
    let k = m * omega * omega;
    let anchor = spawn(&mut app, Body::fixed(Vec3::ZERO));
    let bob = spawn(
        &mut app,
        (
            Body::new(m).with_position(Vec3::new(rest + 0.1, 0.0, 0.0)),
            ImplicitSprings,
            // Backward Euler damps it (about 0.5 % per step here): it
            // would fall asleep before 20 periods.
            SleepingDisabled,
        ),
    );
    spawn(&mut app, Spring::new(anchor, bob, rest, k));
    let period = core::f32::consts::TAU / omega;
    let steps = (20.0 * period / H) as usize;
    let mut crossings = Vec::new();
    let mut last = body(&app, bob).position.x - rest;
    for n in 1..=steps {
        step(&mut app, 1);
        let now = body(&app, bob).position.x - rest;
        if last > 0.0 && now <= 0.0 {
            // Linear interpolation between the two steps.
            crossings.push((n as f32 - 1.0 + last / (last - now)) * H);
        }
        last = now;
    }
    assert!(crossings.len() >= 19, "{} crossings", crossings.len());
    let measured = (crossings.last().unwrap() - crossings[0]) / (crossings.len() - 1) as f32;
    assert!(
        (measured - period).abs() <= 0.01 * period,
        "period {measured} s against 2π/ω = {period} s"
    );
}

/// A rope: `n` bodies under a fixed anchor at `x`, springs of `k`.
fn rope(app: &mut App, x: f32, n: usize, k: f32, implicit: bool) -> Vec<Entity> {
    let mut chain = vec![spawn(app, Body::fixed(Vec3::new(x, 0.0, 0.0)))];
    for i in 1..=n {
        let mut e = app
            .world_mut()
            .spawn(Body::new(0.2).with_position(Vec3::new(
                x + 0.1 * i as f32,
                -0.05 * i as f32,
                0.0,
            )));
        if implicit {
            e.insert(ImplicitSprings);
        }
        let e = e.id();
        spawn(app, Spring::new(chain[i - 1], e, 0.1, k).with_damping(0.5));
        chain.push(e);
    }
    chain
}

/// An explicit rope beside an implicit one steps to the same bits as the
/// explicit rope alone.
#[test]
fn an_explicit_island_beside_an_implicit_one_is_unchanged() {
    let mut alone = app();
    let mut beside = app();
    let a = rope(&mut alone, 0.0, 12, 800.0, false);
    let b = rope(&mut beside, 0.0, 12, 800.0, false);
    rope(&mut beside, 5.0, 12, 5e4, true);
    for _ in 0..300 {
        step(&mut alone, 1);
        step(&mut beside, 1);
        for (&ea, &eb) in a.iter().zip(&b) {
            assert_eq!(body(&alone, ea), body(&beside, eb));
        }
    }
}

/// What [`bad_scene`] spawns that the tests read.
struct Bad {
    good: Vec<Entity>,
    chain: Vec<Entity>,
    bad: Entity,
}

/// Coincident bodies on a spring, a spring between two fixed bodies, a
/// rope, and a body with a NaN velocity, all implicit.
fn bad_scene(app: &mut App) -> Bad {
    let f1 = spawn(app, Body::fixed(Vec3::ZERO));
    let f2 = spawn(app, Body::fixed(Vec3::X));
    spawn(app, Spring::new(f1, f2, 0.5, 1e6));
    let c1 = spawn(
        app,
        (Body::new(1.0).with_position(Vec3::Y), ImplicitSprings),
    );
    let c2 = spawn(
        app,
        (Body::new(1.0).with_position(Vec3::Y), ImplicitSprings),
    );
    spawn(app, Spring::new(c1, c2, 0.5, 1e5));
    let chain = rope(app, 3.0, 20, 1e5, true);
    let holder = spawn(app, Body::fixed(Vec3::new(-3.0, 0.0, 0.0)));
    let bad = spawn(
        app,
        (
            Body::new(1.0)
                .with_position(Vec3::new(-3.0, -0.1, 0.0))
                .with_velocity(Vec3::new(f32::NAN, 0.0, 0.0)),
            ImplicitSprings,
        ),
    );
    spawn(app, Spring::new(holder, bad, 0.1, 1e5));
    let good = [c1, c2].into_iter().chain(chain.iter().copied()).collect();
    Bad { good, chain, bad }
}

/// The good bodies of [`bad_scene`] are finite, and the NaN body is left
/// out of the step.
fn contained(app: &App, good: &[Entity], bad: Entity) {
    for &e in good {
        let b = body(app, e);
        assert!(
            b.position.is_finite() && b.velocity.is_finite(),
            "{e}: {b:?}"
        );
    }
    assert!(has_error(app, bad), "the NaN body is left out");
}

/// Bad input in an implicit island, and conjugate gradients capped at one
/// iteration (with either preconditioner): nothing panics, no NaN reaches
/// the good bodies, and the capped island is reported once.
#[test]
fn bad_input_in_an_implicit_island_is_contained() {
    for preconditioner in [
        ImplicitPreconditioner::Multigrid,
        ImplicitPreconditioner::Jacobi,
    ] {
        capped_with_bad_input(preconditioner);
    }
}

fn capped_with_bad_input(preconditioner: ImplicitPreconditioner) {
    let mut app = app();
    let Bad { good, chain, bad } = bad_scene(&mut app);
    app.insert_resource(ImplicitSettings {
        max_iterations: 1,
        tolerance: 1e-9,
        solver: ImplicitSolver::ConjugateGradients,
        preconditioner,
    });
    step(&mut app, 200);
    contained(&app, &good, bad);
    let capped: Vec<Entity> = warnings(&app)
        .iter()
        .filter(|w| matches!(w.issue, PhysicsIssue::ImplicitNotConverged { .. }))
        .map(|w| w.entity)
        .collect();
    assert_eq!(
        capped,
        [chain[1]],
        "{preconditioner:?}: the capped rope, once: {:?}",
        warnings(&app)
    );
    let again = warnings(&app).len();
    step(&mut app, 100);
    assert_eq!(warnings(&app).len(), again, "reported once");
}

/// The same bad input solved directly (the default for these islands),
/// and a rope body made fixed in the middle of the run (the step after
/// the change still has it in the rope's factor, with an inverse mass of
/// 0): nothing panics, no NaN reaches the good bodies, and nothing but the
/// NaN body's island is reported as unsolved.
#[test]
fn bad_input_solved_directly_is_contained() {
    let mut app = app();
    let Bad { good, chain, bad } = bad_scene(&mut app);
    step(&mut app, 100);
    let pinned = chain[10];
    let mut body_mut = app.world_mut().get_mut::<Body>(pinned).unwrap();
    body_mut.inv_mass = 0.0;
    body_mut.velocity = Vec3::ZERO;
    step(&mut app, 100);
    contained(&app, &good, bad);
    let unsolved: Vec<_> = warnings(&app)
        .iter()
        .filter(|w| {
            w.entity != bad
                && matches!(
                    w.issue,
                    PhysicsIssue::ImplicitNotConverged { .. } | PhysicsIssue::ImplicitFailed
                )
        })
        .collect();
    assert!(unsolved.is_empty(), "{unsolved:?}");
}

/// A rope body made fixed between steps is an anchor in the step that
/// follows (before the next layout): solved directly or by conjugate
/// gradients (to a tight tolerance), the rope's velocities after that step
/// agree, so neither solve lets the pinned body's neighbours swing free.
#[test]
fn a_body_made_fixed_mid_run_is_an_anchor_for_both_solvers() {
    let run = |solver: ImplicitSolver| {
        let mut app = app();
        app.insert_resource(ImplicitSettings {
            solver,
            max_iterations: 5000,
            tolerance: 1e-7,
            ..default()
        });
        let chain = rope(&mut app, 0.0, 20, 1e4, true);
        step(&mut app, 60);
        let mut pinned = body_mut(&mut app, chain[10]);
        pinned.inv_mass = 0.0;
        pinned.velocity = Vec3::ZERO;
        step(&mut app, 1);
        chain
            .iter()
            .map(|&e| body(&app, e).velocity)
            .collect::<Vec<_>>()
    };
    let (direct, iterative) = (
        run(ImplicitSolver::Direct),
        run(ImplicitSolver::ConjugateGradients),
    );
    for (i, (a, b)) in direct.iter().zip(&iterative).enumerate() {
        let scale = a.length().max(b.length()).max(0.1);
        assert!(
            (*a - *b).length() <= 1e-3 * scale,
            "body {i}: {a} directly, {b} by conjugate gradients"
        );
    }
}

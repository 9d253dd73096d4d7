//! Islands: substeps per island, the pass API for user systems, stability
//! bounds and automatic substeps.

mod common;

use std::time::Duration;

use bevy::prelude::*;
use bevy_euler_physics::prelude::*;
use common::*;

/// A rope of `n` bodies of mass `m` hanging from a fixed anchor at `origin`,
/// along +x, with springs of stiffness `k`, rest length `rest` and damping
/// `c`; body `i` starts at `origin + (i+1)·rest·x + offset(i)`. Returns
/// (anchor, bodies).
fn rope(
    app: &mut App,
    origin: Vec3,
    n: usize,
    (m, k, c, rest): (f32, f32, f32, f32),
    offset: impl Fn(usize) -> Vec3,
    extra: impl Fn(&mut EntityWorldMut),
) -> (Entity, Vec<Entity>) {
    let world = app.world_mut();
    let anchor = world.spawn(Body::fixed(origin)).id();
    let mut prev = anchor;
    let mut bodies = Vec::new();
    for i in 0..n {
        let x = origin + Vec3::X * rest * (i + 1) as f32 + offset(i);
        let mut e = world.spawn(Body::new(m).with_position(x));
        extra(&mut e);
        let e = e.id();
        world.spawn(Spring::new(prev, e, rest, k).with_damping(c));
        bodies.push(e);
        prev = e;
    }
    (anchor, bodies)
}

/// A lively rope: bent, damped a little, under gravity.
fn lively(app: &mut App, origin: Vec3, extra: impl Fn(&mut EntityWorldMut)) -> Vec<Entity> {
    rope(
        app,
        origin,
        6,
        (0.3, 400.0, 0.5, 0.25),
        |i| Vec3::new(0.0, 0.05 * (i as f32).sin(), 0.0),
        extra,
    )
    .1
}

fn states(app: &App, bodies: &[Entity]) -> Vec<[u32; 6]> {
    bodies
        .iter()
        .map(|&e| {
            let b = body(app, e);
            let [x, y, z] = b.position.to_array().map(f32::to_bits);
            let [u, v, w] = b.velocity.to_array().map(f32::to_bits);
            [x, y, z, u, v, w]
        })
        .collect()
}

fn island(app: &App, e: Entity) -> Island {
    *app.world().get::<Island>(e).expect("body has an Island")
}

fn no_sleep(app: &mut App) {
    app.insert_resource(SleepSettings {
        enabled: false,
        ..default()
    });
}

/// An island with `Substeps(4)`, stepped n times, is bit-identical to the
/// same island without substeps under a fixed timestep of h/4 stepped 4n
/// times; an island beside it without substeps is bit-identical to itself
/// alone.
#[test]
fn substeps_per_island_equal_a_finer_timestep_bit_for_bit() {
    let n = 64;
    let mut mixed = app();
    no_sleep(&mut mixed);
    let fine_in_mixed = lively(&mut mixed, Vec3::ZERO, |e| {
        e.insert(Substeps(4));
    });
    let coarse_in_mixed = lively(&mut mixed, Vec3::new(0.0, 5.0, 0.0), |_| {});
    step(&mut mixed, n);
    assert!(
        fine_in_mixed
            .iter()
            .all(|&e| island(&mixed, e).substeps() == 4)
    );
    assert!(
        coarse_in_mixed
            .iter()
            .all(|&e| island(&mixed, e).substeps() == 1)
    );

    let mut fine = app_with_timestep(H / 4.0);
    no_sleep(&mut fine);
    let fine_alone = lively(&mut fine, Vec3::ZERO, |_| {});
    step(&mut fine, 4 * n);

    let mut coarse = app();
    no_sleep(&mut coarse);
    let coarse_alone = lively(&mut coarse, Vec3::new(0.0, 5.0, 0.0), |_| {});
    step(&mut coarse, n);

    assert_eq!(states(&mixed, &fine_in_mixed), states(&fine, &fine_alone));
    assert_eq!(
        states(&mixed, &coarse_in_mixed),
        states(&coarse, &coarse_alone)
    );
    // And the substeps did something: the fine island differs from the same
    // rope stepped coarsely.
    assert_ne!(
        states(&mixed, &fine_in_mixed),
        states(&coarse, &coarse_alone)
    );
}

/// Joined islands take the larger count; splitting them gives each its own;
/// two ropes hanging from one anchor are two islands.
#[test]
fn joins_take_the_larger_count_and_anchors_join_nothing() {
    let mut app = app();
    no_sleep(&mut app);
    let anchor = spawn(&mut app, Body::fixed(Vec3::ZERO));
    let a = spawn(
        &mut app,
        (Body::new(1.0).with_position(Vec3::X), Substeps(2)),
    );
    let b = spawn(
        &mut app,
        (Body::new(1.0).with_position(-Vec3::X), Substeps(8)),
    );
    let c = spawn(&mut app, Body::new(1.0).with_position(Vec3::Y));
    spawn(&mut app, Spring::new(anchor, a, 1.0, 10.0));
    spawn(&mut app, Spring::new(anchor, b, 1.0, 10.0));
    step(&mut app, 1);
    assert_ne!(island(&app, a).id(), island(&app, b).id());
    assert!(!island(&app, anchor).is_some());
    assert_eq!(island(&app, a).substeps(), 2);
    assert_eq!(island(&app, b).substeps(), 8);
    assert_eq!(island(&app, c).substeps(), 1);

    let join = spawn(&mut app, Spring::new(a, b, 2.0, 10.0));
    step(&mut app, 1);
    assert_eq!(island(&app, a).id(), island(&app, b).id());
    assert_eq!(island(&app, a).substeps(), 8);
    assert_eq!(island(&app, b).substeps(), 8);

    app.world_mut().despawn(join);
    step(&mut app, 1);
    assert_ne!(island(&app, a).id(), island(&app, b).id());
    assert_eq!(island(&app, a).substeps(), 2);

    // Changing the count at run time takes effect from the next step.
    app.world_mut().get_mut::<Substeps>(a).unwrap().0 = 3;
    step(&mut app, 1);
    assert_eq!(island(&app, a).substeps(), 3);
    app.world_mut().entity_mut(a).remove::<Substeps>();
    app.insert_resource(PhysicsSettings {
        substeps: 5,
        ..default()
    });
    step(&mut app, 1);
    assert_eq!(island(&app, a).substeps(), 5);
    assert_eq!(island(&app, c).substeps(), 5);
    assert_eq!(island(&app, b).substeps(), 8);
}

#[derive(Resource, Default)]
struct Visits(Vec<(Entity, f32, u32, u32)>);

fn visit(bodies: SubstepBodies<Entity>, mut visits: ResMut<Visits>) {
    let step = *bodies.step();
    for e in bodies.iter() {
        visits.0.push((e, bodies.dt(), step.pass, step.passes));
    }
}

/// A user system sees each island's bodies once per pass of that island,
/// with that island's step size; never a fixed or a sleeping body.
#[test]
fn substep_bodies_yield_each_island_once_per_pass() {
    let mut app = app();
    app.init_resource::<Visits>().add_systems(
        PhysicsSubstep,
        visit.in_set(SubstepSystems::AccumulateForces),
    );
    let anchor = spawn(&mut app, Body::fixed(Vec3::ZERO));
    let fine = spawn(
        &mut app,
        (Body::new(1.0).with_position(Vec3::X), Substeps(4)),
    );
    let coarse = spawn(&mut app, Body::new(1.0).with_position(-Vec3::X));
    let asleep = spawn(&mut app, Body::new(1.0).with_position(Vec3::Y));
    spawn(&mut app, Spring::new(anchor, fine, 1.0, 10.0));
    spawn(&mut app, Spring::new(anchor, coarse, 1.0, 10.0));
    app.world_mut().commands().entity(asleep).sleep_island();
    step(&mut app, 2);
    app.world_mut().resource_mut::<Visits>().0.clear();
    step(&mut app, 1);
    let visits = &app.world().resource::<Visits>().0;
    let of = |e: Entity| visits.iter().filter(|v| v.0 == e).collect::<Vec<_>>();
    let fine_visits = of(fine);
    assert_eq!(fine_visits.len(), 4);
    for (pass, v) in fine_visits.iter().enumerate() {
        assert_eq!((v.1, v.2, v.3), (H / 4.0, pass as u32, 4));
    }
    assert_eq!(of(coarse).len(), 1);
    assert_eq!((of(coarse)[0].1, of(coarse)[0].3), (H, 1));
    assert!(of(anchor).is_empty());
    assert!(of(asleep).is_empty());
    assert!(app.world().get::<Sleeping>(asleep).is_some());
}

/// Kinetic plus spring energy of a rope (no gravity).
fn rope_energy(app: &App, anchor: Entity, bodies: &[Entity], k: f32, rest: f32) -> f64 {
    let mut energy = 0.0;
    let mut prev = body(app, anchor).position;
    for &e in bodies {
        let b = body(app, e);
        energy += f64::from(b.kinetic_energy());
        let stretch = f64::from(b.position.distance(prev) - rest);
        energy += 0.5 * f64::from(k) * stretch * stretch;
        prev = b.position;
    }
    energy
}

/// A rope whose springs have ω·h = 3 as a pair (ω² = k·(1/m + 1/m)), with
/// its highest mode excited.
const CHAIN: usize = 20;
const M: f32 = 1.0;
const REST: f32 = 0.5;
fn stiff_k() -> f32 {
    // ω² = 2k/m = (3/h)².
    (3.0 / H).powi(2) * M / 2.0
}

fn stiff_rope(app: &mut App, extra: impl Fn(&mut EntityWorldMut)) -> (Entity, Vec<Entity>) {
    set_gravity(app, Vec3::ZERO);
    no_sleep(app);
    rope(
        app,
        Vec3::ZERO,
        CHAIN,
        (M, stiff_k(), 0.0, REST),
        |i| Vec3::X * if i % 2 == 0 { 0.01 } else { -0.01 },
        extra,
    )
}

/// At ω·h = 3 per pair, the chain's fastest mode (≈ 2·√(k/m) = 4.2/h) is
/// past the limit ω·h < 2 even with 2 substeps: the plugin warns once, and
/// the rope gains energy without bound.
#[test]
fn stiff_rope_without_enough_substeps_blows_up_and_is_reported() {
    for substeps in [1, 2] {
        let mut app = app();
        let (anchor, bodies) = stiff_rope(&mut app, |e| {
            e.insert(Substeps(substeps));
        });
        // A stable pendulum beside it stays finite whatever happens.
        let witness_anchor = spawn(&mut app, Body::fixed(Vec3::new(0.0, 10.0, 0.0)));
        let witness = spawn(
            &mut app,
            Body::new(1.0).with_position(Vec3::new(1.0, 10.0, 0.0)),
        );
        spawn(&mut app, Spring::new(witness_anchor, witness, 0.5, 10.0));
        step(&mut app, 1);
        let e0 = rope_energy(&app, anchor, &bodies, stiff_k(), REST);
        let unstable: Vec<_> = warnings(&app)
            .iter()
            .filter(|w| matches!(w.issue, PhysicsIssue::Unstable { .. }))
            .collect();
        assert_eq!(unstable.len(), 1, "one warning for the rope: {unstable:?}");
        let first = unstable[0].entity;
        let PhysicsIssue::Unstable {
            omega_h,
            substeps_needed,
            ..
        } = unstable[0].issue
        else {
            unreachable!()
        };
        // The fastest mode's bound 2·√(2k/m)·h' = 4.24 / substeps.
        assert!((omega_h - 3.0 * 2f32.sqrt() / substeps as f32).abs() < 1e-3);
        assert_eq!(substeps_needed, 3);
        assert!(island(&app, bodies[0]).load() >= 1.0);
        step(&mut app, 400);
        let blew_up = bodies.iter().any(|&e| has_error(&app, e))
            || rope_energy(&app, anchor, &bodies, stiff_k(), REST) > 1e3 * e0;
        assert!(blew_up, "{substeps} substeps must not hold the rope");
        assert!(body(&app, witness).position.is_finite());
        // Still one warning per island, not one per step: the rope's once.
        // Once the blow-up has frozen some of its bodies, what stays finite
        // may hang as a new island, unstable in its turn and warned once.
        let named: Vec<Entity> = warnings(&app)
            .iter()
            .filter(|w| matches!(w.issue, PhysicsIssue::Unstable { .. }))
            .map(|w| w.entity)
            .collect();
        assert_eq!(named[0], first, "{named:?}");
        assert_eq!(named.iter().filter(|&&e| e == first).count(), 1);
        // No more warnings than pieces the rope can break into.
        assert!(named.len() <= bodies.len(), "{named:?}");
        let mut distinct = named.clone();
        distinct.sort();
        distinct.dedup();
        assert_eq!(
            distinct.len(),
            named.len(),
            "an island warned twice: {named:?}"
        );
    }
}

/// With automatic substeps the same rope picks 3 passes — the smallest count
/// that keeps the fastest mode under 90 % of the limit, and 2 is shown
/// unstable above — and stays bounded for 10⁵ steps.
#[test]
fn automatic_substeps_hold_the_stiff_rope_for_1e5_steps() {
    let mut app = app();
    let (anchor, bodies) = stiff_rope(&mut app, |e| {
        e.insert(AutoSubsteps);
    });
    step(&mut app, 1);
    let chosen = island(&app, bodies[0]);
    assert_eq!(chosen.substeps(), 3);
    assert!(chosen.load() <= 0.9, "load {}", chosen.load());
    assert!(bodies.iter().all(|&e| island(&app, e).substeps() == 3));
    assert!(
        !warnings(&app)
            .iter()
            .any(|w| matches!(w.issue, PhysicsIssue::Unstable { .. }))
    );
    let e0 = rope_energy(&app, anchor, &bodies, stiff_k(), REST);
    let mut max_ratio = 0.0f64;
    for _ in 0..1000 {
        step(&mut app, 100);
        let e = rope_energy(&app, anchor, &bodies, stiff_k(), REST);
        max_ratio = max_ratio.max(e / e0);
    }
    assert!(all_bodies_finite(&mut app));
    assert!(max_ratio < 2.0, "energy grew to {max_ratio} × the start");
}

/// The global switch makes automatic substeps the default; an explicit
/// count in the island is a floor.
#[test]
fn global_automatic_substeps_and_explicit_floors() {
    let mut app = app();
    app.insert_resource(PhysicsSettings {
        auto_substeps: true,
        ..default()
    });
    let (_, stiff) = stiff_rope(&mut app, |_| {});
    let (_, floored) = rope(
        &mut app,
        Vec3::new(0.0, 20.0, 0.0),
        3,
        (1.0, 10.0, 0.0, 1.0),
        |_| Vec3::ZERO,
        |e| {
            e.insert(Substeps(6));
        },
    );
    let (_, soft) = rope(
        &mut app,
        Vec3::new(0.0, -20.0, 0.0),
        3,
        (1.0, 10.0, 0.0, 1.0),
        |_| Vec3::ZERO,
        |_| {},
    );
    step(&mut app, 1);
    assert_eq!(island(&app, stiff[0]).substeps(), 3);
    assert_eq!(island(&app, floored[0]).substeps(), 6);
    assert_eq!(island(&app, soft[0]).substeps(), 1);
}

/// `Substeps(0)` and absurd counts: one warning each, a clamped count.
#[test]
fn bad_substep_counts_are_clamped_with_one_warning() {
    let mut app = app();
    let zero = spawn(&mut app, (Body::new(1.0), Substeps(0)));
    let huge = spawn(
        &mut app,
        (
            Body::new(1.0).with_position(Vec3::X * 5.0),
            Substeps(1_000_000),
        ),
    );
    step(&mut app, 3);
    assert_eq!(island(&app, zero).substeps(), 1);
    assert_eq!(island(&app, huge).substeps(), PhysicsSettings::MAX_SUBSTEPS);
    assert_eq!(
        warnings_for(&app, zero),
        vec![PhysicsIssue::InvalidSubsteps {
            substeps: 0,
            used: 1
        }]
    );
    assert_eq!(
        warnings_for(&app, huge),
        vec![PhysicsIssue::InvalidSubsteps {
            substeps: 1_000_000,
            used: PhysicsSettings::MAX_SUBSTEPS
        }]
    );
    assert!(all_bodies_finite(&mut app));
}

/// Interpolation stays between fixed-step states under substeps: the drawn
/// position lies between the states at the start and the end of the fixed
/// step, not at an intermediate pass.
#[test]
fn interpolation_stays_between_fixed_step_states() {
    let mut app = app();
    no_sleep(&mut app);
    app.insert_resource(bevy::time::TimeUpdateStrategy::ManualDuration(
        Duration::from_secs_f64(1.5 * f64::from(H)),
    ));
    let e = spawn(
        &mut app,
        (
            Body::new(1.0).with_velocity(Vec3::new(1.0, 0.0, 0.0)),
            Substeps(4),
        ),
    );
    set_gravity(&mut app, Vec3::ZERO);
    for frame in 0..6 {
        step(&mut app, 1);
        let current = body(&app, e).position;
        let history = *app.world().get::<PositionHistory>(e).unwrap();
        // 4 passes of h/4 at 1 m/s: exact in binary.
        assert_eq!(history.previous(), current - Vec3::X * H, "frame {frame}");
        let alpha = app.world().resource::<Time<Fixed>>().overstep_fraction();
        assert_close(
            translation(&app, e),
            history.previous().lerp(current, alpha),
            1e-6,
            &format!("drawn position, frame {frame}"),
        );
    }
}

/// Two bad settings on one body: each is reported once; fixed and broken
/// again, it is reported again.
#[test]
fn each_bad_setting_is_reported_once_while_it_lasts() {
    let mut app = app();
    let e = spawn(
        &mut app,
        (Body::new(1.0), Substeps(0), SleepThreshold(-1.0)),
    );
    step(&mut app, 3);
    let kinds = |app: &App| {
        warnings_for(app, e)
            .iter()
            .map(|issue| match issue {
                PhysicsIssue::InvalidSubsteps { .. } => "substeps",
                PhysicsIssue::InvalidSleepThreshold { .. } => "threshold",
                _ => "other",
            })
            .collect::<Vec<_>>()
    };
    assert_eq!(kinds(&app), ["substeps", "threshold"]);
    app.world_mut().get_mut::<Substeps>(e).unwrap().0 = 2;
    step(&mut app, 2);
    assert_eq!(kinds(&app).len(), 2);
    app.world_mut().get_mut::<Substeps>(e).unwrap().0 = 0;
    step(&mut app, 2);
    assert_eq!(kinds(&app), ["substeps", "threshold", "substeps"]);
}

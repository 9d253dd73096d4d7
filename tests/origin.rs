//! Large worlds: the floating origin keeps world positions, keeps relative
//! positions exact, draws without jumps, keeps resting bodies at rest,
//! and leaves nothing behind that a scene built at the new origin lacks.

mod common;

use std::time::Duration;

use bevy::math::DVec3;
use bevy::prelude::*;
use bevy::time::TimeUpdateStrategy;
use bevy_euler_physics::prelude::*;
use common::*;

/// Every [`OriginShifted`] sent so far, and how many islands woke.
#[derive(Resource, Default)]
struct Shifts(Vec<OriginShifted>, usize);

fn collect_shifts(
    mut shifted: MessageReader<OriginShifted>,
    mut woke: MessageReader<IslandWoke>,
    mut all: ResMut<Shifts>,
) {
    all.0.extend(shifted.read().copied());
    all.1 += woke.read().count();
}

fn origin_app() -> App {
    let mut app = app();
    app.init_resource::<Shifts>()
        .add_systems(Last, collect_shifts);
    app
}

fn wakes(app: &App) -> usize {
    app.world().resource::<Shifts>().1
}

fn origin(app: &App) -> PhysicsOrigin {
    *app.world().resource::<PhysicsOrigin>()
}

fn shifts(app: &App) -> usize {
    app.world().resource::<Shifts>().0.len()
}

fn world_position(app: &App, entity: Entity) -> DVec3 {
    origin(app).world(body(app, entity).position)
}

/// A 10 × 10 net of springs at `base` (stretched, thrown sideways and
/// falling), with the floating origin on one corner (or nowhere); its
/// bodies.
fn net(app: &mut App, base: Vec3, floating: bool) -> Vec<Entity> {
    let mut bodies = Vec::new();
    for i in 0..10 {
        for j in 0..10 {
            let at = base + Vec3::new(0.5 * i as f32, 0.0, 0.5 * j as f32);
            let throw = Vec3::new(3.7, 1.3, -2.9) + 0.01 * Vec3::new(j as f32, 0.0, i as f32);
            let mut e = app.world_mut().spawn((
                Body::new(1.0).with_position(at).with_velocity(throw),
                Damping(0.1),
            ));
            if floating && i == 0 && j == 0 {
                e.insert(FloatingOrigin);
            }
            bodies.push(e.id());
        }
    }
    for i in 0..10 {
        for j in 0..10 {
            let e = bodies[i * 10 + j];
            if i + 1 < 10 {
                spawn(app, Spring::new(e, bodies[(i + 1) * 10 + j], 0.45, 200.0));
            }
            if j + 1 < 10 {
                spawn(app, Spring::new(e, bodies[i * 10 + j + 1], 0.45, 200.0));
            }
        }
    }
    bodies
}

/// A hundred bodies with springs and a floating origin 5 km out: after the
/// shift (at the end of the first step) every world position and velocity
/// is what the same net without a floating origin has, bit for bit (the
/// shift is exact), and the marked body sits near local zero.
#[test]
fn a_shift_keeps_every_world_position() {
    let far = Vec3::new(5000.0, 20.0, -5000.0);
    let mut floating = origin_app();
    let mut fixed = origin_app();
    let a = net(&mut floating, far, true);
    let b = net(&mut fixed, far, false);
    step(&mut floating, 1);
    step(&mut fixed, 1);
    assert_eq!(shifts(&floating), 1);
    assert_eq!(shifts(&fixed), 0);
    let moved = floating.world().resource::<Shifts>().0[0];
    assert_eq!(moved.offset, Vec3::new(5120.0, 0.0, -5120.0));
    assert_eq!(moved.origin, origin(&floating).position);
    for (&ea, &eb) in a.iter().zip(&b) {
        assert_eq!(world_position(&floating, ea), world_position(&fixed, eb));
        assert_eq!(body(&floating, ea).velocity, body(&fixed, eb).velocity);
        // Drawn where it was: the transform moved with the body.
        let drawn = origin(&floating).world(translation(&floating, ea));
        assert_eq!(drawn, origin(&fixed).world(translation(&fixed, eb)));
    }
    let lead = body(&floating, a[0]).position;
    let half = origin(&floating).cell / 2.0;
    assert!(
        lead.x.abs() <= half && lead.z.abs() <= half,
        "the marked body is near local zero: {lead}"
    );
}

/// A spring of two 1 kg bodies (1 m, k = 100) flying at 10 km/s for 100 s,
/// a thousand kilometres: with the floating origin its length stays within
/// 0.1 mm of 1 m; without, the run is printed beside it.
#[test]
fn a_spring_flying_a_thousand_kilometres_keeps_its_length() {
    // 10 km/s, in a direction whose steps are not round numbers.
    let v = Vec3::new(6000.0, 8000.0, 0.0).normalize() * 9999.7;
    let fly = |floating: bool| {
        let mut app = origin_app();
        set_gravity(&mut app, Vec3::ZERO);
        let a = spawn(&mut app, Body::new(1.0).with_velocity(v));
        let b = spawn(
            &mut app,
            Body::new(1.0)
                .with_position(Vec3::new(0.6, 0.8, 0.0))
                .with_velocity(v),
        );
        if floating {
            app.world_mut().entity_mut(a).insert(FloatingOrigin);
        }
        spawn(&mut app, Spring::new(a, b, 1.0, 100.0));
        let mut worst = 0.0f64;
        for _ in 0..(100.0 / H) as usize {
            step(&mut app, 1);
            let length = (world_position(&app, b) - world_position(&app, a)).length();
            worst = worst.max((length - 1.0).abs());
        }
        (worst, world_position(&app, a), shifts(&app))
    };
    let (with, at, shifted) = fly(true);
    let (without, far, _) = fly(false);
    println!(
        "1 000 km: length error {with:.2e} m with the floating origin ({shifted} shifts), {without:.2e} m without"
    );
    assert!(
        (at - v.as_dvec3() * 100.0).length() < 1.0,
        "it flew 1 000 km: {at}"
    );
    assert!((far - at).length() < 100.0, "{far} against {at}");
    assert!(shifted > 900, "{shifted} shifts");
    assert!(with <= 1e-4, "length error {with} m");
}

/// A body flying at 2 km/s, drawn at 2.5 frames per fixed step: its drawn
/// world position (origin + `Transform`) moves forward by 0.4 of a step's
/// travel every frame, across every shift.
#[test]
fn the_drawn_body_never_jumps_at_a_shift() {
    let mut app = origin_app();
    set_gravity(&mut app, Vec3::ZERO);
    let v = 2000.0;
    let e = spawn(
        &mut app,
        (
            Body::new(1.0).with_velocity(Vec3::new(v, 0.0, 0.0)),
            FloatingOrigin,
        ),
    );
    let frame = Duration::from_secs_f64(f64::from(H) * 0.4);
    app.insert_resource(TimeUpdateStrategy::ManualDuration(frame));
    let drawn = |app: &App| origin(app).world(translation(app, e)).x;
    app.update();
    let mut last = drawn(&app);
    let travel = f64::from(v * H);
    for frame in 0..500 {
        app.update();
        let now = drawn(&app);
        let moved = now - last;
        assert!(
            (0.0..=0.5 * travel).contains(&moved),
            "frame {frame}: the drawn body moved {moved} m (a step is {travel} m)"
        );
        last = now;
    }
    assert!(shifts(&app) >= 5, "{} shifts", shifts(&app));
}

/// A ball resting on a ground plane 5 km up: the shift moves both by the
/// same 5 120 m, and the ball stays where it lay, at rest, and falls
/// asleep.
#[test]
fn a_ball_resting_on_high_ground_stays_at_rest() {
    let mut app = origin_app();
    let ground = spawn(&mut app, GroundPlane::horizontal(5000.0));
    let ball = spawn(
        &mut app,
        (
            Body::new(1.0).with_position(Vec3::new(0.0, 5000.5, 0.0)),
            Radius(0.5),
            FloatingOrigin,
        ),
    );
    let mut asleep = None;
    for n in 0..400 {
        step(&mut app, 1);
        let y = world_position(&app, ball).y;
        let speed = body(&app, ball).velocity.length();
        assert!((y - 5000.5).abs() < 0.01, "step {n}: the ball is at {y}");
        assert!(speed < 0.2, "step {n}: the ball moves at {speed} m/s");
        if asleep.is_none() && app.world().get::<Sleeping>(ball).is_some() {
            asleep = Some(n);
        }
    }
    assert_eq!(shifts(&app), 1);
    let plane = *app.world().get::<GroundPlane>(ground).unwrap();
    assert_eq!(plane.offset, 5000.0 - 5120.0);
    assert!(asleep.is_some(), "the ball fell asleep");
}

/// A rope of ten bodies hanging from a fixed anchor; the step at which it
/// is all asleep, or `None` within `seconds`.
fn rope_sleeps_after(at: Vec3, floating: bool, seconds: f32) -> Option<usize> {
    let mut app = origin_app();
    let anchor = spawn(&mut app, Body::fixed(at));
    if floating {
        app.world_mut().entity_mut(anchor).insert(FloatingOrigin);
    }
    let mut prev = anchor;
    let mut rope = Vec::new();
    // Laid out level, so that it swings down and across.
    for i in 1..=10 {
        let e = spawn(
            &mut app,
            (
                Body::new(0.2).with_position(at + Vec3::new(0.25 * i as f32, 0.0, 0.1)),
                Damping(0.5),
            ),
        );
        spawn(
            &mut app,
            Spring::new(prev, e, 0.25, 400.0).with_damping(0.5),
        );
        rope.push(e);
        prev = e;
    }
    (1..=(seconds / H) as usize).find(|_| {
        step(&mut app, 1);
        rope.iter()
            .all(|&e| app.world().get::<Sleeping>(e).is_some())
    })
}

/// A rope built 1 000 km out on every axis (in local `f32`, as a game that
/// has not set the origin would) with a floating origin on its anchor falls asleep as
/// the same rope at the origin does.
#[test]
fn a_rope_far_out_falls_asleep_as_at_the_origin() {
    let out = Vec3::splat(1.0e6);
    let home = rope_sleeps_after(Vec3::ZERO, false, 30.0);
    let far = rope_sleeps_after(out, true, 30.0);
    let lost = rope_sleeps_after(out, false, 30.0);
    println!(
        "asleep after: at the origin {home:?} steps, 1 000 km out {far:?} with the floating origin, {lost:?} without"
    );
    let (home, far) = (
        home.expect("asleep at the origin"),
        far.expect("asleep far out"),
    );
    assert!(
        far <= home + (2.0 / H) as usize,
        "{far} steps far out against {home} at the origin"
    );
}

/// The state a scene is rebuilt from: per body, its entity's position in
/// spawn order, position, velocity and whether it may carry the origin.
#[derive(Clone, Copy)]
struct Spawned {
    body: Body,
    radius: Option<f32>,
    leads: bool,
}

/// Balls falling onto a plane, a chain of springs hanging off one of them.
fn pile(app: &mut App, bodies: &[Spawned], plane: f32) -> Vec<Entity> {
    spawn(app, GroundPlane::horizontal(plane).with_restitution(0.3));
    let entities: Vec<Entity> = bodies
        .iter()
        .map(|s| {
            let mut e = app.world_mut().spawn(s.body);
            if let Some(r) = s.radius {
                e.insert(Radius(r));
            }
            if s.leads {
                e.insert(FloatingOrigin);
            }
            e.id()
        })
        .collect();
    for pair in entities[4..8].windows(2) {
        spawn(app, Spring::new(pair[0], pair[1], 0.3, 300.0));
    }
    entities
}

/// A scene shifted and stepped gives the same bits as the same scene built
/// at the new origin: the shift leaves nothing behind in the solver.
#[test]
fn a_shifted_scene_steps_as_one_built_at_the_new_origin() {
    let mut start: Vec<Spawned> = (0..8)
        .map(|i| Spawned {
            body: Body::new(1.0)
                .with_position(Vec3::new(58.0 + 0.75 * i as f32, 3.0 + 0.5 * i as f32, 0.0))
                .with_velocity(Vec3::new(8.0, -1.0, 0.0)),
            radius: (i < 6).then_some(0.3),
            leads: false,
        })
        .collect();
    // The lead flies past on its own, through cell after cell of 64 m.
    start.push(Spawned {
        body: Body::new(1.0)
            .with_position(Vec3::new(63.9, 10.0, 0.0))
            .with_velocity(Vec3::new(40.0, 0.0, 0.0)),
        radius: None,
        leads: true,
    });
    let cell = PhysicsOrigin::default().with_cell(64.0);
    let mut shifted = origin_app();
    shifted.insert_resource(cell);
    let a = pile(&mut shifted, &start, 0.0);
    step(&mut shifted, 1);
    assert_eq!(shifts(&shifted), 1, "the lead passed x = 64");
    // The same scene, built from the shifted state at the new origin.
    let now: Vec<Spawned> = start
        .iter()
        .zip(&a)
        .map(|(s, &e)| Spawned {
            body: body(&shifted, e),
            ..*s
        })
        .collect();
    let mut built = origin_app();
    built.insert_resource(origin(&shifted));
    let plane = shifted
        .world_mut()
        .query::<&GroundPlane>()
        .single(shifted.world())
        .unwrap()
        .offset;
    let b = pile(&mut built, &now, plane);
    for n in 0..300 {
        step(&mut shifted, 1);
        step(&mut built, 1);
        for (&ea, &eb) in a.iter().zip(&b) {
            assert_eq!(body(&shifted, ea), body(&built, eb), "step {n}");
            assert_eq!(
                shifted.world().get::<Sleeping>(ea).is_some(),
                built.world().get::<Sleeping>(eb).is_some()
            );
        }
        assert_eq!(origin(&shifted), origin(&built));
    }
    assert!(shifts(&shifted) >= 2, "it shifted again on the way");
}

/// A snapshot saved before shifts and restored after them puts the origin
/// and the ground back, and the run repeats bit for bit.
#[test]
fn a_snapshot_restore_puts_the_origin_back() {
    let mut app = origin_app();
    let ground = spawn(&mut app, GroundPlane::new(Vec3::new(0.0, 1.0, 1.0), -3.0));
    let marker = spawn(
        &mut app,
        (Transform::from_xyz(1.0, 2.0, 3.0), ShiftWithOrigin),
    );
    let probe = spawn(
        &mut app,
        (
            Body::new(1.0)
                .with_position(Vec3::new(0.0, 10.0, 0.0))
                .with_velocity(Vec3::new(600.0, 0.0, 300.0)),
            FloatingOrigin,
        ),
    );
    let ball = spawn(
        &mut app,
        (
            Body::new(1.0).with_position(Vec3::new(0.0, -2.0, 0.0)),
            Radius(0.5),
        ),
    );
    step(&mut app, 10);
    let saved = PhysicsSnapshot::save(app.world_mut());
    let saved_plane = *app.world().get::<GroundPlane>(ground).unwrap();
    let saved_marker = translation(&app, marker);
    let woke = wakes(&app);
    step(&mut app, 300);
    let later = (body(&app, probe), body(&app, ball), origin(&app));
    let woke = wakes(&app) - woke;
    let shifted = shifts(&app);
    assert!(shifted >= 2, "{shifted} shifts");
    saved.restore(app.world_mut());
    assert_eq!(Some(origin(&app).position), saved.origin());
    assert_eq!(
        *app.world().get::<GroundPlane>(ground).unwrap(),
        saved_plane
    );
    assert_eq!(translation(&app, marker), saved_marker);
    let before = wakes(&app);
    step(&mut app, 300);
    assert_eq!((body(&app, probe), body(&app, ball), origin(&app)), later);
    assert_eq!(wakes(&app) - before, woke, "the same islands woke");
}

/// A shift moves sleeping bodies, ground planes and marked entities by the
/// same offset, wakes nothing, and announces itself.
#[test]
fn a_shift_moves_sleepers_and_marked_entities_and_wakes_nothing() {
    let mut app = origin_app();
    app.insert_resource(PhysicsOrigin::default().with_cell(256.0));
    spawn(&mut app, GroundPlane::horizontal(0.0));
    let ball = spawn(
        &mut app,
        (
            Body::new(1.0).with_position(Vec3::new(0.0, 0.5, 0.0)),
            Radius(0.5),
        ),
    );
    let marker = spawn(
        &mut app,
        (Transform::from_xyz(7.0, 0.0, 0.0), ShiftWithOrigin),
    );
    let mut n = 0;
    while app.world().get::<Sleeping>(ball).is_none() {
        step(&mut app, 1);
        n += 1;
        assert!(n < 600, "the ball falls asleep");
    }
    let resting = body(&app, ball);
    let woke = wakes(&app);
    // A probe leaves to the left, high above the ground.
    let probe = spawn(
        &mut app,
        (
            Body::new(1.0)
                .with_position(Vec3::new(-50.0, 100.0, 0.0))
                .with_velocity(Vec3::new(-100.0, 0.0, 0.0)),
            FloatingOrigin,
        ),
    );
    let mut steps = 0;
    while shifts(&app) == 0 {
        step(&mut app, 1);
        steps += 1;
        assert!(steps < 64 * 5, "the probe passes x = -256");
    }
    let shift = app.world().resource::<Shifts>().0[0];
    assert_eq!(shift.offset, Vec3::new(-256.0, 0.0, 0.0));
    assert_eq!(origin(&app).position, DVec3::new(-256.0, 0.0, 0.0));
    assert!(app.world().get::<Sleeping>(ball).is_some(), "still asleep");
    let moved = body(&app, ball);
    assert_eq!(moved.position, resting.position - shift.offset);
    assert_eq!(moved.velocity, resting.velocity);
    assert_eq!(translation(&app, ball), moved.position);
    assert_eq!(translation(&app, marker), Vec3::new(7.0 + 256.0, 0.0, 0.0));
    assert!(body(&app, probe).position.x.abs() <= 256.0);
    step(&mut app, 60);
    assert!(app.world().get::<Sleeping>(ball).is_some(), "it sleeps on");
    assert_eq!(body(&app, ball), moved);
    assert_eq!(wakes(&app), woke, "nothing woke");
}

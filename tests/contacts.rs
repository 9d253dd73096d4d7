//! Contacts between round bodies: head-on collisions keep momentum and add
//! no energy, piles settle without sinking into each other and sleep, a
//! ball dropped on a sleeping pile wakes it, ropes drape over balls, joined
//! neighbours and filtered groups do not touch.

mod common;

use bevy::prelude::*;
use bevy_euler_physics::prelude::*;
use common::*;

fn no_gravity(app: &mut App) {
    app.insert_resource(Gravity(Vec3::ZERO));
}

fn no_sleep(app: &mut App) {
    app.insert_resource(SleepSettings {
        enabled: false,
        ..default()
    });
}

/// Two balls meet head on, for several restitutions and mass ratios: the
/// momentum after equals the momentum before (to rounding), the kinetic
/// energy never grows, and the separating speed is `e` times the approach
/// speed (Newton's law of restitution), which for `e = 1` and equal masses
/// is the exchange of velocities.
#[test]
fn a_head_on_contact_keeps_momentum_and_adds_no_energy() {
    for e in [0.0, 0.5, 1.0] {
        for (ma, mb) in [(1.0, 1.0), (1.0, 3.0), (5.0, 0.5)] {
            let mut app = app();
            no_gravity(&mut app);
            no_sleep(&mut app);
            let material = ContactMaterial::new(e, 0.0);
            let a = spawn(
                &mut app,
                (
                    Body::new(ma)
                        .with_position(Vec3::new(-1.0, 0.0, 0.0))
                        .with_velocity(Vec3::new(2.0, 0.0, 0.0)),
                    Radius(0.1),
                    material,
                ),
            );
            let b = spawn(
                &mut app,
                (
                    Body::new(mb)
                        .with_position(Vec3::new(1.0, 0.0, 0.0))
                        .with_velocity(Vec3::new(-1.0, 0.0, 0.0)),
                    Radius(0.1),
                    material,
                ),
            );
            let momentum = |app: &App| body(app, a).momentum() + body(app, b).momentum();
            let energy = |app: &App| body(app, a).kinetic_energy() + body(app, b).kinetic_energy();
            let (p0, e0) = (momentum(&app), energy(&app));
            let mut max_energy = e0;
            for _ in 0..120 {
                step(&mut app, 1);
                max_energy = max_energy.max(energy(&app));
                let gap = body(&app, b).position.x - body(&app, a).position.x;
                assert!(
                    gap > 0.2 * 0.9,
                    "e = {e}: the balls passed into each other ({gap})"
                );
            }
            let p1 = momentum(&app);
            assert!(
                (p1 - p0).length() < 1e-4,
                "e = {e}, masses {ma}/{mb}: {p0} → {p1}"
            );
            assert!(
                max_energy <= e0 * (1.0 + 1e-5),
                "energy {e0} → {max_energy}"
            );
            let (va, vb) = (body(&app, a).velocity.x, body(&app, b).velocity.x);
            assert!(
                ((vb - va) - e * 3.0).abs() < 1e-3,
                "e = {e}, masses {ma}/{mb}: separating at {} (approach 3)",
                vb - va
            );
        }
    }
}

/// A box: the ground and two walls, `half_width` from the middle.
fn spawn_box(app: &mut App, half_width: f32) {
    spawn(app, GroundPlane::horizontal(0.0));
    spawn(app, GroundPlane::new(Vec3::X, -half_width));
    spawn(app, GroundPlane::new(Vec3::NEG_X, -half_width));
}

/// `n` balls of radius `r` in columns above the ground of a box, each a
/// little off the column so they do not stack in a tower.
fn spawn_balls(app: &mut App, n: usize, r: f32, columns: usize, base: f32) -> Vec<Entity> {
    let spacing = 2.2 * r;
    (0..n)
        .map(|i| {
            let (row, col) = (i / columns, i % columns);
            let jitter = ((i * 7919) % 13) as f32 / 13.0 - 0.5;
            let x = (col as f32 - (columns as f32 - 1.0) / 2.0) * spacing + 0.1 * r * jitter;
            let y = base + row as f32 * spacing;
            spawn(
                app,
                (
                    Body::new(1.0).with_position(Vec3::new(x, y, 0.0)),
                    Radius(r),
                ),
            )
        })
        .collect()
}

/// The deepest overlap of two balls, as a share of the radius.
fn deepest_overlap(app: &App, balls: &[Entity], r: f32) -> f32 {
    let pos: Vec<Vec3> = balls.iter().map(|&e| body(app, e).position).collect();
    let mut deepest = 0.0f32;
    for i in 0..pos.len() {
        for j in i + 1..pos.len() {
            deepest = deepest.max((2.0 * r - pos[i].distance(pos[j])) / r);
        }
    }
    deepest
}

fn all_asleep(app: &App, bodies: &[Entity]) -> bool {
    bodies
        .iter()
        .all(|&e| app.world().get::<Sleeping>(e).is_some())
}

/// Steps until every body in `bodies` sleeps; the number of steps.
fn step_until_asleep(app: &mut App, bodies: &[Entity], most: usize) -> usize {
    for n in 0..most {
        if all_asleep(app, bodies) {
            return n;
        }
        step(app, 1);
    }
    panic!("not all asleep after {most} steps");
}

/// Three hundred balls poured into a box (twenty a row, fifteen rows)
/// settle with the default settings: no two overlap by more than a tenth
/// of a radius, none is inside the ground or a wall, and the pile falls
/// asleep. Then a ball dropped on the sleeping pile wakes it
/// (`WakeCause::Touched`) and comes to rest on top of it.
#[test]
fn a_pile_settles_sleeps_and_wakes_when_hit() {
    let (r, half_width) = (0.05, 1.1);
    let mut app = app();
    spawn_box(&mut app, half_width);
    let balls = spawn_balls(&mut app, 300, r, 20, 0.2);
    let steps = step_until_asleep(&mut app, &balls, 3000);
    let deepest = deepest_overlap(&app, &balls, r);
    assert!(deepest < 0.1, "two balls overlap by {deepest} radii");
    let mut top = 0.0f32;
    for &e in &balls {
        let p = body(&app, e).position;
        assert!(p.y > 0.9 * r, "a ball sank into the ground: {p}");
        assert!(
            p.x.abs() < half_width - 0.9 * r,
            "a ball went through a wall: {p}"
        );
        top = top.max(p.y);
    }
    println!("asleep after {steps} steps, deepest overlap {deepest}, top {top}");
    // Dropped from 0.5 m above the top of the pile.
    let dropped = spawn(
        &mut app,
        (
            Body::new(1.0).with_position(Vec3::new(0.013, top + 0.5, 0.0)),
            Radius(r),
        ),
    );
    app.world_mut()
        .resource_mut::<Messages<IslandWoke>>()
        .clear();
    let mut woke_by_touch = false;
    for _ in 0..200 {
        step(&mut app, 1);
        let woke = app.world().resource::<Messages<IslandWoke>>();
        woke_by_touch |= woke
            .iter_current_update_messages()
            .any(|m| m.cause == WakeCause::Touched(dropped) && m.bodies.len() > 1);
    }
    assert!(
        woke_by_touch,
        "the pile did not wake when the ball touched it"
    );
    let mut all = balls.clone();
    all.push(dropped);
    step_until_asleep(&mut app, &all, 3000);
    // The woken pile slumps a little further; the ball stays on its top
    // layer (at most a ball's width below its highest ball).
    let top = balls
        .iter()
        .map(|&e| body(&app, e).position.y)
        .fold(0.0f32, f32::max);
    let p = body(&app, dropped).position;
    assert!(
        p.y > top - 2.0 * r,
        "the dropped ball sank into the pile: {p} (top {top})"
    );
    let deepest = deepest_overlap(&app, &all, r);
    assert!(
        deepest < 0.1,
        "after the drop two balls overlap by {deepest} radii"
    );
}

/// A rope of springs hanging from two fixed ends drapes over a fixed ball
/// below its middle: no body of the rope enters the ball (by more than a
/// tenth of its radius), and the rope rests on it rather than hanging
/// through it.
#[test]
fn a_rope_drapes_over_a_fixed_ball() {
    let mut app = app();
    no_sleep(&mut app);
    let ball_r = 0.5;
    let centre = Vec3::new(0.0, 1.0, 0.0);
    let ball = spawn(&mut app, (Body::fixed(centre), Radius(ball_r)));
    let (n, rest, r) = (41, 0.05, 0.02);
    let mut prev = spawn(&mut app, Body::fixed(Vec3::new(-1.0, 1.6, 0.0)));
    let mut rope = Vec::new();
    for i in 1..=n {
        let x = -1.0 + 2.0 * i as f32 / (n + 1) as f32;
        let e = spawn(
            &mut app,
            (
                Body::new(0.05).with_position(Vec3::new(x, 1.6, 0.0)),
                Radius(r),
                Damping(0.5),
                AutoSubsteps,
            ),
        );
        spawn(
            &mut app,
            Spring::new(prev, e, rest, 400.0).with_damping(0.5),
        );
        rope.push(e);
        prev = e;
    }
    let end = spawn(&mut app, Body::fixed(Vec3::new(1.0, 1.6, 0.0)));
    spawn(
        &mut app,
        Spring::new(prev, end, rest, 400.0).with_damping(0.5),
    );
    let mut deepest = 0.0f32;
    for _ in 0..600 {
        step(&mut app, 1);
        for &e in &rope {
            let d = body(&app, e).position.distance(centre);
            deepest = deepest.max((ball_r + r - d) / r);
        }
    }
    assert!(
        deepest < 0.1,
        "the rope entered the ball by {deepest} radii"
    );
    // The middle of the rope rests on top of the ball.
    let middle = body(&app, rope[n / 2]).position;
    assert!(
        (middle.y - (centre.y + ball_r + r)).abs() < 0.1 * r + 0.01,
        "the middle hangs at {middle}"
    );
    assert!(app.world().get::<Body>(ball).unwrap().velocity == Vec3::ZERO);
}

/// A rope whose neighbours' radii overlap (radius 0.55 of the rest length)
/// hangs exactly as the same rope without radii: springs alone hold it, to
/// the bit.
#[test]
fn joined_neighbours_do_not_touch() {
    let run = |radius: bool| {
        let mut app = app();
        no_sleep(&mut app);
        // Four passes either way (stiff springs), whether or not bodies
        // two apart come within reach.
        app.insert_resource(PhysicsSettings {
            substeps: 4,
            ..default()
        });
        let rest = 0.1;
        let mut prev = spawn(&mut app, Body::fixed(Vec3::ZERO));
        let mut rope = Vec::new();
        for i in 1..=20 {
            // Hanging almost straight down: it swings without folding,
            // so bodies two apart never come within two radii.
            let mut e = app
                .world_mut()
                .spawn(Body::new(0.05).with_position(Vec3::new(
                    0.01 * i as f32,
                    -0.1 * i as f32,
                    0.0,
                )));
            if radius {
                e.insert(Radius(0.55 * rest));
            }
            let e = e.id();
            spawn(
                &mut app,
                Spring::new(prev, e, rest, 1000.0).with_damping(0.2),
            );
            rope.push(e);
            prev = e;
        }
        step(&mut app, 300);
        rope.iter()
            .map(|&e| body(&app, e).position.to_array().map(f32::to_bits))
            .collect::<Vec<_>>()
    };
    assert_eq!(run(true), run(false));
}

/// Balls in groups that leave each other out pass through each other;
/// the same balls in default groups collide.
#[test]
fn collision_groups_filter_pairs() {
    let run = |a_groups: CollisionGroups, b_groups: CollisionGroups| {
        let mut app = app();
        no_gravity(&mut app);
        no_sleep(&mut app);
        let a = spawn(
            &mut app,
            (
                Body::new(1.0)
                    .with_position(Vec3::new(-1.0, 0.0, 0.0))
                    .with_velocity(Vec3::X),
                Radius(0.1),
                a_groups,
            ),
        );
        let b = spawn(
            &mut app,
            (
                Body::new(1.0).with_position(Vec3::new(1.0, 0.0, 0.0)),
                Radius(0.1),
                b_groups,
            ),
        );
        step(&mut app, 200);
        (body(&app, a).position.x, body(&app, b).position.x)
    };
    // Two groups: 1 touches only 1, 2 touches only 2.
    let (a, b) = run(CollisionGroups::new(1, 1), CollisionGroups::new(2, 2));
    assert!(a > 1.5 && b == 1.0, "filtered balls collided: {a}, {b}");
    let (a, b) = run(CollisionGroups::ALL, CollisionGroups::default());
    assert!(
        b > 1.0 && b - a > 0.19,
        "default balls passed through: {a}, {b}"
    );
}

/// Touching bodies share an island: two balls resting against each other
/// on the ground are one island (one id, one sleep), and fall asleep
/// together.
#[test]
fn touching_bodies_share_an_island() {
    let mut app = app();
    spawn(&mut app, GroundPlane::horizontal(0.0));
    let a = spawn(
        &mut app,
        (
            Body::new(1.0).with_position(Vec3::new(0.0, 0.1, 0.0)),
            Radius(0.1),
        ),
    );
    let b = spawn(
        &mut app,
        (
            Body::new(1.0).with_position(Vec3::new(0.2, 0.1, 0.0)),
            Radius(0.1),
        ),
    );
    let far = spawn(
        &mut app,
        (
            Body::new(1.0).with_position(Vec3::new(3.0, 0.1, 0.0)),
            Radius(0.1),
        ),
    );
    step(&mut app, 2);
    let island = |e| *app.world().get::<Island>(e).unwrap();
    assert_eq!(island(a).id(), island(b).id());
    assert_ne!(island(a).id(), island(far).id());
    step_until_asleep(&mut app, &[a, b, far], 1000);
}

/// Bodies within reach share an island only while they are: of three
/// balls in a row, the last flies off while the first two rest against
/// each other. They start as one island; the island still touches itself
/// when the ball has gone, so only the check that its bodies hold together
/// finds that it fell apart. The same on one thread and with the pairs
/// joined over the pool's threads (`parallel_threshold` 0).
#[test]
fn an_island_of_contacts_falls_apart_when_they_part() {
    for threshold in [usize::MAX, 0] {
        let mut app = app();
        no_gravity(&mut app);
        no_sleep(&mut app);
        app.world_mut()
            .resource_mut::<PhysicsSettings>()
            .parallel_threshold = threshold;
        let ball = |x: f32, speed: f32| {
            (
                Body::new(1.0)
                    .with_position(Vec3::new(x, 0.0, 0.0))
                    .with_velocity(Vec3::new(speed, 0.0, 0.0)),
                Radius(0.1),
            )
        };
        let a = spawn(&mut app, ball(-0.2, 0.0));
        let b = spawn(&mut app, ball(0.0, 0.0));
        let c = spawn(&mut app, ball(0.2, 1.0));
        step(&mut app, 1);
        let island = |app: &App, e| app.world().get::<Island>(e).unwrap().id();
        assert_eq!(island(&app, a), island(&app, c), "threshold {threshold}");
        step(&mut app, 30);
        let gap = body(&app, c).position.x - body(&app, b).position.x;
        assert!(gap > 0.5, "threshold {threshold}: the ball is {gap} away");
        assert_eq!(island(&app, a), island(&app, b), "threshold {threshold}");
        assert_ne!(island(&app, b), island(&app, c), "threshold {threshold}");
    }
}

/// A fast ball does not pass through a thin wall of balls within one step:
/// at 60 m/s with balls of radius 0.05 it moves 0.94 m a step, but the
/// speculative margin finds the wall before it.
#[test]
fn a_fast_ball_does_not_tunnel() {
    let mut app = app();
    no_gravity(&mut app);
    no_sleep(&mut app);
    let wall = spawn(
        &mut app,
        (Body::fixed(Vec3::new(1.0, 0.0, 0.0)), Radius(0.05)),
    );
    let bullet = spawn(
        &mut app,
        (
            Body::new(0.1)
                .with_position(Vec3::new(-0.5, 0.0, 0.0))
                .with_velocity(Vec3::new(60.0, 0.0, 0.0)),
            Radius(0.05),
        ),
    );
    step(&mut app, 20);
    let x = body(&app, bullet).position.x;
    assert!(x < 1.0 - 0.09, "the ball passed through the wall: x = {x}");
    let _ = wall;
}

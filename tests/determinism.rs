//! Bit-identical reruns, whatever the thread count: ropes (explicit,
//! substepped and implicit), a pile of balls, and an implicit cloth.
//!
//! The task pools are global to a process, so each thread count runs in a
//! child process: this binary runs itself with `--ignored --exact
//! determinism_child` and reads back a hash of the final state.

mod common;

use bevy::prelude::*;
use bevy::time::TimeUpdateStrategy;
use bevy_euler_physics::prelude::*;

/// Ropes of springs with a sideways nudge, some damping, a constant force
/// and per-pass user forces: every stage of the step does work. Ropes differ
/// in substeps (global 2, `Substeps(3)`, automatic) or step their springs
/// implicitly; every fourth is put to sleep during the run and one of
/// those woken again. Returns each rope's first body.
fn scene(app: &mut App, ropes: usize, links: usize) -> Vec<Entity> {
    let world = app.world_mut();
    let mut firsts = Vec::new();
    for r in 0..ropes {
        let x = r as f32 * 0.5;
        let mut prev = world.spawn(Body::fixed(Vec3::new(x, 0.0, 0.0))).id();
        for s in 1..=links {
            let nudge = if s % 2 == 0 { 0.02 } else { -0.013 };
            let mut e = world.spawn(Body::new(1.0 + (s % 3) as f32).with_position(Vec3::new(
                x + nudge * s as f32,
                -0.1 * s as f32,
                0.001 * r as f32,
            )));
            if s % 5 == 0 {
                e.insert(Damping(0.3));
            }
            if s == links {
                e.insert(ConstantForce(Vec3::new(1.0, 0.0, 0.5)));
            }
            match (r % 4, s) {
                (1, 1) => {
                    e.insert(Substeps(3));
                }
                (2, 1) => {
                    e.insert(AutoSubsteps);
                }
                (3, 1) => {
                    e.insert(ImplicitSprings);
                }
                _ => {}
            }
            let e = e.id();
            if s == 1 {
                firsts.push(e);
            }
            world.spawn(Spring::new(prev, e, 0.1, 1000.0).with_damping(1.0));
            prev = e;
        }
    }
    firsts
}

/// Marks the bodies of [`cloth`].
#[derive(Component)]
struct ClothPart;

/// A cloth of 12×12 bodies with implicit springs (structural, shear and
/// bend) hanging from two corners beside the ropes: an island solved by
/// conjugate gradients with the multigrid preconditioner.
fn cloth(app: &mut App) {
    let world = app.world_mut();
    let (side, spacing) = (12, 0.1);
    let mut bodies = Vec::new();
    for i in 0..side {
        for j in 0..side {
            let at = Vec3::new(-10.0 + spacing * j as f32, 0.0, spacing * i as f32);
            let body = if i == 0 && (j == 0 || j == side - 1) {
                Body::fixed(at)
            } else {
                Body::new(0.01).with_position(at)
            };
            let mut e = world.spawn((body, ClothPart));
            if (i, j) == (1, 1) {
                e.insert(ImplicitSprings);
            }
            bodies.push(e.id());
        }
    }
    let mut join = |a: (usize, usize), b: (usize, usize), k: f32| {
        let rest = spacing * ((a.0.abs_diff(b.0).pow(2) + a.1.abs_diff(b.1).pow(2)) as f32).sqrt();
        let (ea, eb) = (bodies[a.0 * side + a.1], bodies[b.0 * side + b.1]);
        world.spawn(Spring::new(ea, eb, rest, k).with_damping(0.02));
    };
    for i in 0..side {
        for j in 0..side {
            if j + 1 < side {
                join((i, j), (i, j + 1), 2000.0);
            }
            if i + 1 < side {
                join((i, j), (i + 1, j), 2000.0);
            }
            if i + 1 < side && j + 1 < side {
                join((i, j), (i + 1, j + 1), 1000.0);
                join((i, j + 1), (i + 1, j), 1000.0);
            }
            if j + 2 < side {
                join((i, j), (i, j + 2), 200.0);
            }
            if i + 2 < side {
                join((i, j), (i + 2, j), 200.0);
            }
        }
    }
}

/// A pile: 2 000 balls poured into a box beside the ropes, touching each
/// other, the ground and the walls; its islands merge as balls meet.
fn pile(app: &mut App) {
    let world = app.world_mut();
    let (r, columns) = (0.05, 40);
    world.spawn(GroundPlane::horizontal(-8.0));
    world.spawn(GroundPlane::new(Vec3::X, 20.0 - 2.3));
    world.spawn(GroundPlane::new(Vec3::NEG_X, -(20.0 + 2.3)));
    for i in 0..2000 {
        let (row, col) = (i / columns, i % columns);
        let jitter = ((i * 7919) % 13) as f32 / 13.0 - 0.5;
        let x = 20.0 + (col as f32 - (columns as f32 - 1.0) / 2.0) * 2.2 * r + 0.01 * jitter;
        let y = -7.8 + row as f32 * 2.2 * r;
        world.spawn((
            Body::new(1.0).with_position(Vec3::new(x, y, 0.0)),
            Radius(r),
        ));
    }
}

fn swirl(mut bodies: SubstepBodies<(&Body, &mut AccumulatedForce)>) {
    for (body, mut force) in bodies.iter_mut() {
        force.0 += Vec3::new(-body.position.y, body.position.x, 0.0) * 0.1;
    }
}

/// The same push, once per fixed step, before it: with no system in
/// `PhysicsSubstep` the passes run on the solver's arrays alone.
fn swirl_before_step(mut bodies: Query<(&Body, &mut AccumulatedForce)>) {
    for (body, mut force) in &mut bodies {
        force.0 += Vec3::new(-body.position.y, body.position.x, 0.0) * 0.1;
    }
}

fn hash_state(app: &mut App) -> u64 {
    common::hash_bodies(app)
}

/// `scheduled`: the user force runs in `PhysicsSubstep` (every pass goes
/// through the schedule); otherwise before the step (dense passes).
fn run(parallel_threshold: usize, scheduled: bool) -> u64 {
    let mut app = App::new();
    app.add_plugins((MinimalPlugins, EulerPhysicsPlugin))
        .insert_resource(TimeUpdateStrategy::FixedTimesteps(2))
        .insert_resource(PhysicsSettings {
            substeps: 2,
            parallel_threshold,
            ..default()
        });
    if scheduled {
        app.add_systems(
            PhysicsSubstep,
            swirl.in_set(SubstepSystems::AccumulateForces),
        );
    } else {
        app.add_systems(
            FixedUpdate,
            swirl_before_step.in_set(PhysicsSystems::Prepare),
        );
    }
    let firsts = scene(&mut app, 20, 60);
    pile(&mut app);
    cloth(&mut app);
    for frame in 0..150 {
        if frame == 40 {
            for &e in firsts.iter().skip(3).step_by(4) {
                app.world_mut().commands().entity(e).sleep_island();
            }
        }
        if frame == 100 {
            app.world_mut().get_mut::<Body>(firsts[3]).unwrap().velocity = Vec3::X;
        }
        app.update();
    }
    let world = app.world_mut();
    let asleep = world
        .query_filtered::<&Sleeping, (Without<Radius>, Without<ClothPart>)>()
        .iter(world)
        .count();
    // Ropes 7, 11, 15, 19 asleep (rope 3 was woken): 4 × 60 bodies.
    assert_eq!(asleep, 4 * 60);
    // The pile (50 rows, still settling) landed and holds together: few
    // islands, none through the ground.
    let world = app.world_mut();
    let mut islands: Vec<u32> = Vec::new();
    let mut balls = world.query_filtered::<(&Body, &Island), With<Radius>>();
    for (body, island) in balls.iter(world) {
        assert!(
            body.position.y > -8.0 + 0.5 * 0.05,
            "a ball sank: {}",
            body.position
        );
        islands.push(island.id());
    }
    islands.sort_unstable();
    islands.dedup();
    assert!(islands.len() < 100, "{} islands in the pile", islands.len());
    let h = hash_state(&mut app);
    // Nothing blew up, or the comparison would be vacuous.
    let world = app.world_mut();
    assert!(
        world
            .query::<&Body>()
            .iter(world)
            .all(|b| b.position.is_finite())
    );
    assert!(world.query::<&PhysicsError>().iter(world).next().is_none());
    h
}

#[test]
fn same_scene_twice_is_bit_identical() {
    for scheduled in [true, false] {
        assert_eq!(run(usize::MAX, scheduled), run(usize::MAX, scheduled));
        assert_eq!(run(1, scheduled), run(1, scheduled));
    }
}

/// Run in a child process: the hash for `EULER_THREADS` compute threads and
/// `EULER_PARALLEL_THRESHOLD`.
#[test]
#[ignore = "run by one_and_two_threads_agree in a child process"]
fn determinism_child() {
    let threshold = common::child_pool();
    let scheduled = std::env::var("EULER_SCHEDULED").unwrap() == "1";
    println!("STATE_HASH={:016x}", run(threshold, scheduled));
}

fn child_hash(threads: usize, threshold: usize, scheduled: bool) -> String {
    let scheduled = if scheduled { "1" } else { "0" };
    common::child_hash(
        "determinism_child",
        threads,
        threshold,
        &[("EULER_SCHEDULED", scheduled)],
    )
}

/// One compute thread on the sequential path, one and two threads on the
/// parallel path (threshold 1: every pass is split), all give the same bits;
/// both with a user system in `PhysicsSubstep` and with dense passes.
#[test]
fn one_and_two_threads_agree() {
    for scheduled in [true, false] {
        let serial = child_hash(1, usize::MAX, scheduled);
        let what = if scheduled { "scheduled" } else { "dense" };
        assert_eq!(
            serial,
            child_hash(1, 1, scheduled),
            "{what}: 1 thread, parallel path"
        );
        assert_eq!(
            serial,
            child_hash(2, 1, scheduled),
            "{what}: 2 threads, parallel path"
        );
        assert_eq!(
            serial,
            child_hash(2, usize::MAX, scheduled),
            "{what}: 2 threads, sequential path"
        );
    }
}

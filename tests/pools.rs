//! Entities reused from pools: a `Body` removed and, later, a new `Body`
//! inserted on the same entity (or on a despawned entity's reused index)
//! is a new body. Nothing the plugin put on the entity for the old body
//! (sleep, rest time, forces, history, island, slot, error markers, reports
//! already given) changes it: it moves as the same `Body` does on a fresh
//! entity with the same components of yours, bit for bit, in an island of
//! its own, drawn from where it is.

mod common;

use bevy::prelude::*;
use bevy_euler_physics::prelude::*;
use common::*;

/// The new body every test inserts: 1 kg moving at 2 m/s in the x-y
/// plane at depth `z` (the twin it is compared with moves 100 m behind it,
/// out of reach of its contacts; nothing moves either along z).
fn fresh_body(z: f32) -> Body {
    Body::new(1.0)
        .with_position(Vec3::new(0.0, 5.0, z))
        .with_velocity(Vec3::new(2.0, 0.5, 0.0))
}

/// Where the twin moves: 100 m behind the reused entity.
const TWIN_Z: f32 = -100.0;

/// Position, velocity and drawn translation, as bits, and the depth, which
/// must not change.
fn bits(app: &App, e: Entity) -> ([u32; 7], f32) {
    let b = body(app, e);
    let t = translation(app, e);
    let mut out = [0; 7];
    let values = [b.position.x, b.position.y]
        .into_iter()
        .chain(b.velocity.to_array())
        .chain([t.x, t.y]);
    for (o, v) in out.iter_mut().zip(values) {
        *o = v.to_bits();
    }
    assert_eq!(t.z, b.position.z, "{e}: drawn at its depth");
    (out, b.position.z)
}

fn asleep(app: &App, e: Entity) -> bool {
    app.world().get::<Sleeping>(e).is_some()
}

/// The kinds of issue reported for `e` from the `from`th warning on.
fn issues_since(app: &App, e: Entity, from: usize) -> Vec<core::mem::Discriminant<PhysicsIssue>> {
    warnings(app)[from..]
        .iter()
        .filter(|w| w.entity == e)
        .map(|w| core::mem::discriminant(&w.issue))
        .collect()
}

/// Asserts that `e`, whose `Body` was removed, carries nothing of the
/// plugin's that could change a `Body` inserted later: no marker, and each
/// per-body state either gone or at its default.
#[track_caller]
fn assert_left_clean(app: &App, e: Entity, case: &str) {
    let world = app.world();
    assert!(world.get::<Body>(e).is_none(), "{case}: Body removed");
    assert!(world.get::<Sleeping>(e).is_none(), "{case}: Sleeping left");
    assert!(
        world.get::<PhysicsError>(e).is_none(),
        "{case}: PhysicsError left"
    );
    let clean = |ok: bool, what: &str| assert!(ok, "{case}: {what} left with a state");
    clean(
        world.get::<RestTime>(e).is_none_or(|r| r.seconds() == 0.0),
        "RestTime",
    );
    clean(
        world
            .get::<AccumulatedForce>(e)
            .is_none_or(|f| f.0 == Vec3::ZERO),
        "AccumulatedForce",
    );
    clean(
        world.get::<Island>(e).is_none_or(|i| *i == Island::NONE),
        "Island",
    );
    clean(
        world
            .get::<PositionHistory>(e)
            .is_none_or(|h| *h == PositionHistory::default()),
        "PositionHistory",
    );
}

/// Inserts [`fresh_body`] on `reused` and on a new twin entity holding
/// `yours`, in the same frame; then, for `steps` steps, both move alike to
/// the bit, sleep alike, are reported alike and are drawn alike, each in an
/// island of its own.
#[track_caller]
fn assert_new_body(app: &mut App, reused: Entity, yours: impl Bundle, steps: usize, case: &str) {
    let from = warnings(app).len();
    app.world_mut().entity_mut(reused).insert(fresh_body(0.0));
    let twin = spawn(app, (fresh_body(TWIN_Z), yours));
    // Drawn where it is, with no history, before any step.
    assert_eq!(translation(app, reused), fresh_body(0.0).position, "{case}");
    assert_eq!(
        app.world()
            .get::<PositionHistory>(reused)
            .unwrap()
            .previous(),
        fresh_body(0.0).position,
        "{case}: no history"
    );
    for n in 1..=steps {
        step(app, 1);
        let ((moved, z), (twin_moved, twin_z)) = (bits(app, reused), bits(app, twin));
        assert_eq!(
            moved, twin_moved,
            "{case}: step {n}: the reused entity moves as a fresh one"
        );
        assert_eq!((z, twin_z), (0.0, TWIN_Z), "{case}: step {n}");
        assert_eq!(asleep(app, reused), asleep(app, twin), "{case}: step {n}");
        assert_eq!(
            app.world().get::<RestTime>(reused),
            app.world().get::<RestTime>(twin),
            "{case}: step {n}: rest time"
        );
        let island = *app.world().get::<Island>(reused).unwrap();
        let twin_island = *app.world().get::<Island>(twin).unwrap();
        assert_eq!(
            (island.is_some(), island.substeps()),
            (twin_island.is_some(), twin_island.substeps()),
            "{case}: step {n}"
        );
        if island.is_some() {
            let world = app.world_mut();
            let mut islands = world.query::<(Entity, &Island)>();
            let shared: Vec<Entity> = islands
                .iter(world)
                .filter(|&(e, i)| e != reused && i.is_some() && i.id() == island.id())
                .map(|(e, _)| e)
                .collect();
            assert!(
                shared.is_empty(),
                "{case}: an island of its own, shared with {shared:?}"
            );
        }
    }
    assert_eq!(
        issues_since(app, reused, from),
        issues_since(app, twin, from),
        "{case}: the same reports as a fresh entity"
    );
    if !has_error(app, twin) {
        assert!(
            (body(app, reused).position - fresh_body(0.0).position).length() > 0.1,
            "{case}: it moved"
        );
    }
}

/// The case the issue names: an isolated body put to sleep, its `Body`
/// removed, and a few steps later a new `Body` at 2 m/s inserted on the
/// same entity. It moves as semi-implicit Euler says from where it was put
/// (`v_n = v_0 + n·h·g`, `x_n = x_0 + h·Σ v_i`), and is drawn there.
#[test]
fn a_body_inserted_where_a_sleeping_one_was_removed_moves_as_given() {
    let mut app = app();
    let e = spawn(
        &mut app,
        Body::new(1.0).with_position(Vec3::new(0.0, 1.0, 0.0)),
    );
    app.world_mut().entity_mut(e).insert(Sleeping::default());
    step(&mut app, 2);
    assert!(asleep(&app, e), "the body sleeps");
    app.world_mut().entity_mut(e).remove::<Body>();
    assert_left_clean(&app, e, "slept");
    step(&mut app, 3);
    let given = fresh_body(0.0);
    app.world_mut().entity_mut(e).insert(given);
    let g = app.world().resource::<Gravity>().0;
    let (mut x, mut v) = (given.position, given.velocity);
    let mut x_before = x;
    for n in 1..=10 {
        step(&mut app, 1);
        v += H * g;
        x += H * v;
        let now = body(&app, e);
        assert!(!asleep(&app, e), "step {n}: the new body is awake");
        assert_close(now.velocity, v, 1e-5, "velocity");
        assert_close(now.position, x, 1e-5, "position");
        // Drawn between the step's start and end, at the overstep.
        let alpha = app.world().resource::<Time<Fixed>>().overstep_fraction();
        assert_close(
            translation(&app, e),
            x.lerp(x_before, 1.0 - alpha),
            1e-5,
            "drawn",
        );
        x_before = x;
    }
}

/// One way an entity's old body may have left things on it.
struct Case {
    name: &'static str,
    /// Builds the old body (and what it needs around it); returns it.
    old: fn(&mut App) -> Entity,
}

fn cases() -> Vec<Case> {
    vec![
        Case {
            name: "asleep, alone",
            old: |app| {
                let e = spawn(app, Body::new(1.0));
                app.world_mut().entity_mut(e).insert(Sleeping::default());
                step(app, 2);
                assert!(asleep(app, e));
                e
            },
        },
        Case {
            name: "asleep in an island of three (its springs despawned)",
            old: |app| {
                let a = spawn(app, Body::new(1.0).with_position(Vec3::new(20.0, 0.0, 0.0)));
                let e = spawn(app, Body::new(1.0).with_position(Vec3::new(21.0, 0.0, 0.0)));
                let c = spawn(app, Body::new(1.0).with_position(Vec3::new(22.0, 0.0, 0.0)));
                let s1 = spawn(app, Spring::new(a, e, 1.0, 10.0));
                let s2 = spawn(app, Spring::new(e, c, 1.0, 10.0));
                app.world_mut().entity_mut(a).insert(Sleeping::default());
                step(app, 2);
                assert!(asleep(app, e) && asleep(app, c));
                app.world_mut().despawn(s1);
                app.world_mut().despawn(s2);
                e
            },
        },
        Case {
            name: "resting, part of the way to sleep",
            old: |app| {
                app.insert_resource(Gravity(Vec3::ZERO));
                let e = spawn(app, Body::new(1.0).with_position(Vec3::new(30.0, 0.0, 0.0)));
                step(app, 20);
                assert!(app.world().get::<RestTime>(e).unwrap().seconds() > 0.2);
                e
            },
        },
        Case {
            name: "a force written and not yet taken",
            old: |app| {
                let e = spawn(app, Body::new(1.0).with_position(Vec3::new(40.0, 0.0, 0.0)));
                step(app, 2);
                app.world_mut().get_mut::<AccumulatedForce>(e).unwrap().0 =
                    Vec3::new(0.0, 500.0, 0.0);
                e
            },
        },
        Case {
            name: "drawn far away",
            old: |app| {
                let e = spawn(
                    app,
                    Body::new(1.0)
                        .with_position(Vec3::new(-50.0, 0.0, 0.0))
                        .with_velocity(Vec3::new(-30.0, 0.0, 0.0)),
                );
                step(app, 3);
                e
            },
        },
        Case {
            name: "left out for a NaN velocity",
            old: |app| {
                let e = spawn(app, Body::new(1.0).with_velocity(Vec3::NAN));
                step(app, 2);
                assert!(has_error(app, e));
                e
            },
        },
        Case {
            name: "left out for a negative mass",
            old: |app| {
                let e = spawn(app, Body::new(-1.0));
                step(app, 2);
                assert!(has_error(app, e));
                e
            },
        },
        Case {
            name: "a fixed anchor of a sleeping island (its spring despawned)",
            old: |app| {
                let e = spawn(app, Body::fixed(Vec3::new(60.0, 0.0, 0.0)));
                let bob = spawn(
                    app,
                    Body::new(1.0).with_position(Vec3::new(60.0, -1.0, 0.0)),
                );
                let spring = spawn(app, Spring::new(e, bob, 1.0, 10.0));
                app.world_mut().entity_mut(bob).insert(Sleeping::default());
                step(app, 2);
                assert!(asleep(app, bob));
                app.world_mut().despawn(spring);
                e
            },
        },
        Case {
            name: "in contact, asleep on a ground plane",
            old: |app| {
                spawn(app, GroundPlane::new(Vec3::Y, -10.0));
                let e = spawn(
                    app,
                    (
                        Body::new(1.0).with_position(Vec3::new(70.0, -9.5, 0.0)),
                        Radius(0.5),
                    ),
                );
                app.world_mut().entity_mut(e).insert(Sleeping::default());
                step(app, 2);
                assert!(asleep(app, e));
                e
            },
        },
    ]
}

/// Each way an old body leaves things on its entity, with the `Body`
/// removed alone: the entity is left clean, and a `Body` inserted a few
/// steps later is a new body.
#[test]
fn a_removed_body_leaves_nothing_that_changes_the_next() {
    for case in cases() {
        let mut app = app();
        let e = (case.old)(&mut app);
        app.world_mut().entity_mut(e).remove::<Body>();
        assert_left_clean(&app, e, case.name);
        step(&mut app, 3);
        assert_left_clean(&app, e, case.name);
        let radius = app.world().get::<Radius>(e).copied();
        match radius {
            Some(radius) => assert_new_body(&mut app, e, radius, 30, case.name),
            None => assert_new_body(&mut app, e, (), 30, case.name),
        }
    }
}

/// The same when the old body is despawned and Bevy hands its index to a
/// new entity (a new generation): the new entity is a new body.
#[test]
fn a_despawned_bodys_index_reused_is_a_new_body() {
    for case in cases() {
        let mut app = app();
        let e = (case.old)(&mut app);
        app.world_mut().despawn(e);
        step(&mut app, 1);
        // Bevy keeps up to 128 freed indices aside before it hands them
        // out again: free more, then spawn until one has the body's index.
        let fillers: Vec<Entity> = (0..200)
            .map(|_| app.world_mut().spawn_empty().id())
            .collect();
        for filler in fillers {
            app.world_mut().despawn(filler);
        }
        let reused = (0..10_000)
            .map(|_| app.world_mut().spawn_empty().id())
            .find(|spawned| spawned.index() == e.index())
            .unwrap_or_else(|| panic!("{}: the index is never reused", case.name));
        assert_ne!(reused, e);
        assert_new_body(&mut app, reused, (), 30, case.name);
    }
}

/// Components of yours stay yours: a `Body` inserted later moves with the
/// `Damping`, `ConstantForce`, `Radius`, substeps and sleep settings the
/// entity still holds, as a fresh entity with them does, and bad values
/// among them are reported again for the new body.
#[test]
fn components_of_yours_apply_to_the_next_body_as_to_a_fresh_one() {
    fn check<B: Bundle + Clone>(name: &str, yours: B) {
        for slept in [false, true] {
            let mut app = app();
            let e = spawn(
                &mut app,
                (
                    Body::new(1.0).with_position(Vec3::new(0.0, -20.0, 0.0)),
                    yours.clone(),
                ),
            );
            step(&mut app, 3);
            if slept {
                app.world_mut().entity_mut(e).insert(Sleeping::default());
                step(&mut app, 2);
            }
            app.world_mut().entity_mut(e).remove::<Body>();
            assert_left_clean(&app, e, name);
            step(&mut app, 2);
            assert_new_body(&mut app, e, yours.clone(), 30, name);
        }
    }
    check("Damping", Damping(3.0));
    check("a negative Damping", Damping(-1.0));
    check("ConstantForce", ConstantForce(Vec3::new(0.0, 20.0, 0.0)));
    check("Radius", Radius(0.25));
    check("a negative Radius", Radius(-0.25));
    check("Substeps", Substeps(3));
    check("zero Substeps", Substeps(0));
    check("AutoSubsteps", AutoSubsteps);
    check("ImplicitSprings", ImplicitSprings);
    check("SleepThreshold", SleepThreshold(5.0));
    check("a NaN SleepThreshold", SleepThreshold(f32::NAN));
    check("SleepingDisabled", SleepingDisabled);
    check(
        "ContactMaterial",
        (Radius(0.25), ContactMaterial::default()),
    );
    check(
        "CollisionGroups",
        (Radius(0.25), CollisionGroups::default()),
    );
}

/// The plugin's components and the body's own, removed one at a time in
/// many orders, a step between each: nothing panics, and a `Body` inserted
/// after the last is a new body.
#[test]
fn components_removed_one_by_one_in_any_order() {
    fn remove<C: Component>(entity: &mut EntityWorldMut) {
        entity.remove::<C>();
    }
    type Remove = fn(&mut EntityWorldMut);
    let removals: [(&str, Remove); 8] = [
        ("Body", remove::<Body>),
        ("Sleeping", remove::<Sleeping>),
        ("RestTime", remove::<RestTime>),
        ("AccumulatedForce", remove::<AccumulatedForce>),
        ("PositionHistory", remove::<PositionHistory>),
        ("Island", remove::<Island>),
        ("PhysicsError", remove::<PhysicsError>),
        ("Damping", remove::<Damping>),
    ];
    let mut dice = Dice(40);
    for round in 0..24 {
        let mut app = app();
        // A sleeping pair, one of them the entity to empty; in some rounds
        // it carries an error marker as well.
        let e = spawn(&mut app, (Body::new(1.0), Damping(0.5)));
        let other = spawn(&mut app, Body::new(1.0).with_position(Vec3::X));
        let spring = spawn(&mut app, Spring::new(e, other, 1.0, 10.0));
        app.world_mut().entity_mut(e).insert(Sleeping::default());
        step(&mut app, 2);
        assert!(asleep(&app, e));
        app.world_mut().despawn(spring);
        if round % 3 == 0 {
            app.world_mut().entity_mut(e).insert(Damping(-1.0));
            step(&mut app, 2);
        }
        let mut order: Vec<usize> = (0..removals.len()).collect();
        for i in (1..order.len()).rev() {
            order.swap(i, dice.below(i + 1));
        }
        let names: Vec<&str> = order.iter().map(|&i| removals[i].0).collect();
        for &i in &order {
            (removals[i].1)(&mut app.world_mut().entity_mut(e));
            step(&mut app, 1);
        }
        let case = format!("round {round}, removed {names:?}");
        assert_left_clean(&app, e, &case);
        assert_new_body(&mut app, e, (), 20, &case);
        assert!(all_bodies_finite(&mut app), "{case}");
    }
}

/// A long churn among sleeping islands, as a game with a pool edits it:
/// bodies removed and put back with a speed, bodies written. A body given
/// a speed is never held asleep: the step after, it has moved by about
/// that speed.
#[test]
fn a_churn_among_sleeping_islands_never_freezes_a_body_given_a_speed() {
    let mut app = app();
    app.insert_resource(SleepSettings {
        time_to_sleep: 0.1,
        ..default()
    });
    app.insert_resource(Gravity(Vec3::ZERO));
    let mut bodies = Vec::new();
    for i in 0..24 {
        let x = (i / 3) as f32 * 10.0 + (i % 3) as f32;
        bodies.push(spawn(
            &mut app,
            (
                Body::new(1.0).with_position(Vec3::new(x, 0.0, 0.0)),
                Damping(8.0),
            ),
        ));
        if i % 3 != 0 {
            spawn(&mut app, Spring::new(bodies[i - 1], bodies[i], 1.0, 20.0));
        }
    }
    let mut dice = Dice(7);
    let mut removed = Vec::new();
    let mut given = 0;
    for frame in 0..600 {
        let mut pushed = Vec::new();
        if dice.chance(20) {
            let e = bodies[dice.below(bodies.len())];
            if let Some(now) = app.world().get::<Body>(e).copied() {
                if dice.chance(50) {
                    app.world_mut().entity_mut(e).remove::<Body>();
                    assert_left_clean(&app, e, &format!("frame {frame}"));
                    removed.push((e, now.position));
                } else {
                    let v = Vec3::new(0.0, 1.0, 0.0);
                    body_mut(&mut app, e).velocity = v;
                    pushed.push((e, now.position, v));
                }
            }
        }
        if !removed.is_empty() && dice.chance(15) {
            let (e, at) = removed.swap_remove(dice.below(removed.len()));
            let v = Vec3::new(0.0, -1.0, 0.0);
            app.world_mut()
                .entity_mut(e)
                .insert(Body::new(1.0).with_position(at).with_velocity(v));
            pushed.push((e, at, v));
        }
        step(&mut app, 1);
        for (e, from, v) in pushed {
            given += 1;
            let moved = body(&app, e).position - from;
            assert!(
                !asleep(&app, e) && moved.dot(v) > 0.5 * H * v.length_squared(),
                "frame {frame}: {e} was given {v} and moved {moved} (asleep: {})",
                asleep(&app, e)
            );
        }
    }
    assert!(given > 50, "the churn gave speeds {given} times");
    let asleep_count = bodies.iter().filter(|&&e| asleep(&app, e)).count();
    assert!(asleep_count > 0, "islands slept during the churn");
}

/// `Body` and `Sleeping` removed in one bundle, and a `Body` removed and
/// inserted again within one command queue: the same rules hold.
#[test]
fn bundles_and_command_queues_follow_the_same_rules() {
    let mut app = app();
    let e = spawn(&mut app, Body::new(1.0));
    app.world_mut().entity_mut(e).insert(Sleeping::default());
    step(&mut app, 2);
    assert!(asleep(&app, e));
    app.world_mut().entity_mut(e).remove::<(Body, Sleeping)>();
    assert_left_clean(&app, e, "bundle");
    assert!(
        app.world().get::<AccumulatedForce>(e).is_none(),
        "no force given back to an entity without a body"
    );
    // Removed and inserted again by one system's commands.
    let f = spawn(
        &mut app,
        Body::new(1.0).with_position(Vec3::new(0.0, 0.0, 50.0)),
    );
    app.world_mut().entity_mut(f).insert(Sleeping::default());
    step(&mut app, 2);
    assert!(asleep(&app, f));
    let mut commands = app.world_mut().commands();
    commands.entity(f).remove::<Body>();
    commands.entity(f).insert(fresh_body(0.0));
    app.world_mut().flush();
    assert!(!asleep(&app, f), "the new body is not asleep");
    step(&mut app, 1);
    assert!(
        (body(&app, f).position - fresh_body(0.0).position).length() > 0.01,
        "and it moves"
    );
}

//! Sleeping per island: when islands fall asleep, that they stay frozen bit
//! for bit, and that each wake cause wakes exactly the right islands.

mod common;

use bevy::prelude::*;
use bevy_euler_physics::prelude::*;
use common::*;

/// Every [`IslandWoke`] and [`IslandSlept`] so far.
#[derive(Resource, Default)]
struct Events {
    woke: Vec<IslandWoke>,
    slept: Vec<IslandSlept>,
}

fn collect(
    mut woke: MessageReader<IslandWoke>,
    mut slept: MessageReader<IslandSlept>,
    mut events: ResMut<Events>,
) {
    events.woke.extend(woke.read().cloned());
    events.slept.extend(slept.read().cloned());
}

fn sleepy_app() -> App {
    let mut app = app();
    app.init_resource::<Events>().add_systems(Last, collect);
    app
}

fn asleep(app: &App, e: Entity) -> bool {
    app.world().get::<Sleeping>(e).is_some()
}

/// A damped mass on a spring under an anchor: `k = 40`, `m = 1`,
/// `Damping(2)`, pulled `amplitude` below its rest point.
struct Pendulum {
    anchor: Entity,
    bob: Entity,
    spring: Entity,
}

const K: f32 = 40.0;
const C: f32 = 2.0;
const REST: f32 = 1.0;

fn pendulum(app: &mut App, x: f32, amplitude: f32, extra: impl Bundle) -> Pendulum {
    let g = app.world().resource::<Gravity>().0.y;
    let anchor = spawn(app, Body::fixed(Vec3::new(x, 0.0, 0.0)));
    // Rest point: REST below the anchor, plus the sag m·g/k.
    let rest_y = -REST + g / K;
    let bob = spawn(
        app,
        (
            Body::new(1.0).with_position(Vec3::new(x, rest_y - amplitude, 0.0)),
            Damping(C),
            extra,
        ),
    );
    let spring = spawn(app, Spring::new(anchor, bob, REST, K));
    Pendulum {
        anchor,
        bob,
        spring,
    }
}

fn state_bits(app: &App, e: Entity) -> [u32; 9] {
    let b = body(app, e);
    let t = translation(app, e);
    let mut out = [0; 9];
    for (o, v) in out.iter_mut().zip(
        b.position
            .to_array()
            .into_iter()
            .chain(b.velocity.to_array())
            .chain(t.to_array()),
    ) {
        *o = v.to_bits();
    }
    out
}

/// The bob's speed envelope is `A·ω·e^(−c·t/2)` (ω = √(k/m)); it stays
/// below the threshold 0.05 m/s from about `t₁ = (2/c)·ln(A·ω/0.05)`, and
/// the island sleeps 0.5 s later. Its oscillation means the last fast
/// moment is within one period `T` of `t₁`.
#[test]
fn a_damped_pendulum_comes_to_rest_and_sleeps_in_the_expected_time() {
    let mut app = sleepy_app();
    let amplitude = 0.5;
    let p = pendulum(&mut app, 0.0, amplitude, ());
    let omega = (K / 1.0f32).sqrt();
    let t1 = 2.0 / C * (amplitude * omega / 0.05).ln();
    let period = std::f32::consts::TAU / omega;
    let mut slept_at = None;
    for n in 1..=1000 {
        step(&mut app, 1);
        if asleep(&app, p.bob) {
            slept_at = Some(n as f32 * H);
            break;
        }
    }
    let t = slept_at.expect("the pendulum fell asleep within 1000 steps");
    let expected = t1 + 0.5;
    assert!(
        (expected - period..=expected + period).contains(&t),
        "slept at {t} s, expected {expected} ± {period} s"
    );
    assert!(body(&app, p.bob).velocity.length() < 0.05);
    let events = &app.world().resource::<Events>();
    assert_eq!(events.slept.len(), 1);
    assert_eq!(events.slept[0].bodies, vec![p.bob]);
    // The fixed anchor joins no island and never sleeps.
    assert!(!asleep(&app, p.anchor));
}

/// Asleep, nothing changes: body, velocity and drawn transform stay the same
/// bit for bit, while an awake island beside it moves.
#[test]
fn sleeping_state_is_frozen_bit_for_bit() {
    let mut app = sleepy_app();
    let p = pendulum(&mut app, 0.0, 0.5, ());
    let awake = pendulum(&mut app, 5.0, 0.5, SleepingDisabled);
    step(&mut app, 600);
    assert!(asleep(&app, p.bob));
    let frozen = state_bits(&app, p.bob);
    let moving = body(&app, awake.bob);
    for _ in 0..300 {
        step(&mut app, 1);
        assert_eq!(state_bits(&app, p.bob), frozen);
    }
    assert_ne!(body(&app, awake.bob).position, moving.position);
    // Drawn where it is.
    assert_eq!(translation(&app, p.bob), body(&app, p.bob).position);
}

/// A `SleepingDisabled` island never sleeps while its twin beside it does;
/// removing the marker lets it sleep.
#[test]
fn sleeping_disabled_keeps_an_island_awake() {
    let mut app = sleepy_app();
    let twin = pendulum(&mut app, 0.0, 0.5, ());
    let kept = pendulum(&mut app, 3.0, 0.5, SleepingDisabled);
    step(&mut app, 1000);
    assert!(asleep(&app, twin.bob));
    assert!(!asleep(&app, kept.bob));
    app.world_mut()
        .entity_mut(kept.bob)
        .remove::<SleepingDisabled>();
    // Resting already: asleep after the time to sleep (0.5 s = 32 steps).
    step(&mut app, 34);
    assert!(asleep(&app, kept.bob));
}

/// Three sleeping pendulums (two share an anchor) and one awake free body;
/// `touch` does something to the scene; exactly the islands `expected` must
/// wake, each announced with `cause`.
fn wakes(
    touch: impl FnOnce(&mut App, &[Pendulum]),
    expected: &[usize],
    cause: impl Fn(&[Pendulum]) -> WakeCause,
) {
    wakes_with(touch, expected, |ps, c| c == cause(ps));
}

fn wakes_with(
    touch: impl FnOnce(&mut App, &[Pendulum]),
    expected: &[usize],
    cause: impl Fn(&[Pendulum], WakeCause) -> bool,
) {
    let mut app = sleepy_app();
    let mut ps = vec![
        pendulum(&mut app, 0.0, 0.0, ()),
        pendulum(&mut app, 3.0, 0.0, ()),
    ];
    // A third hangs from the second's anchor.
    let bob = spawn(
        &mut app,
        (
            Body::new(1.0).with_position(Vec3::new(4.0, -1.0, 0.0)),
            Damping(C),
        ),
    );
    let spring = spawn(&mut app, Spring::new(ps[1].anchor, bob, REST, K));
    ps.push(Pendulum {
        anchor: ps[1].anchor,
        bob,
        spring,
    });
    for p in &ps {
        app.world_mut().commands().entity(p.bob).sleep_island();
    }
    step(&mut app, 2);
    assert!(ps.iter().all(|p| asleep(&app, p.bob)), "all asleep first");
    let before: Vec<_> = ps.iter().map(|p| state_bits(&app, p.bob)).collect();
    app.world_mut().resource_mut::<Events>().woke.clear();

    touch(&mut app, &ps);
    step(&mut app, 1);

    for (i, p) in ps.iter().enumerate() {
        if !app.world().entities().contains(p.bob) {
            continue;
        }
        let should = expected.contains(&i);
        assert_eq!(!asleep(&app, p.bob), should, "island {i} awake");
        if !should {
            assert_eq!(state_bits(&app, p.bob), before[i], "island {i} untouched");
        }
    }
    let woke = &app.world().resource::<Events>().woke;
    // One message per island that woke (a merge makes one island of two);
    // together they name exactly the woken pendulums (and any awake body
    // they merged with).
    let mut named: Vec<Entity> = woke
        .iter()
        .flat_map(|w| w.bodies.clone())
        .filter(|&e| ps.iter().any(|p| p.bob == e))
        .collect();
    named.sort();
    let mut want: Vec<Entity> = expected.iter().map(|&i| ps[i].bob).collect();
    want.sort();
    assert_eq!(named, want, "{woke:?}");
    assert!(woke.iter().all(|w| cause(&ps, w.cause)), "{woke:?}");
}

#[test]
fn writing_a_position_or_velocity_wakes_its_island() {
    wakes(
        |app, ps| body_mut(app, ps[0].bob).position.x += 0.1,
        &[0],
        |ps| WakeCause::BodyWritten(ps[0].bob),
    );
    wakes(
        |app, ps| body_mut(app, ps[2].bob).velocity = Vec3::X,
        &[2],
        |ps| WakeCause::BodyWritten(ps[2].bob),
    );
}

#[test]
fn forces_wake_their_island() {
    wakes(
        |app, ps| {
            app.world_mut()
                .entity_mut(ps[1].bob)
                .insert(ConstantForce(Vec3::X));
        },
        &[1],
        |ps| WakeCause::ForceChanged(ps[1].bob),
    );
    wakes(
        |app, ps| {
            app.world_mut()
                .entity_mut(ps[0].bob)
                .insert(AccumulatedForce(Vec3::Y));
        },
        &[0],
        |ps| WakeCause::ForceChanged(ps[0].bob),
    );
}

/// Changing a `ConstantForce` in place wakes its island; one that is left
/// alone does not.
#[test]
fn changing_a_constant_force_in_place_wakes_its_island() {
    let mut app = sleepy_app();
    let pushed = pendulum(&mut app, 0.0, 0.0, ConstantForce(Vec3::ZERO));
    let still = pendulum(&mut app, 3.0, 0.0, ConstantForce(Vec3::ZERO));
    for p in [&pushed, &still] {
        app.world_mut().commands().entity(p.bob).sleep_island();
    }
    step(&mut app, 5);
    assert!(asleep(&app, pushed.bob) && asleep(&app, still.bob));
    app.world_mut()
        .get_mut::<ConstantForce>(pushed.bob)
        .unwrap()
        .0 = Vec3::X;
    step(&mut app, 1);
    assert!(!asleep(&app, pushed.bob));
    assert!(asleep(&app, still.bob));
    let woke = &app.world().resource::<Events>().woke;
    assert_eq!(woke.len(), 1);
    assert_eq!(woke[0].cause, WakeCause::ForceChanged(pushed.bob));
}

/// Systems that push every body's accumulated force skip sleeping bodies
/// (they have none) and do not wake them; the bodies get it back on waking.
#[test]
fn sleeping_bodies_have_no_accumulated_force_until_they_wake() {
    let mut app = sleepy_app();
    let p = pendulum(&mut app, 0.0, 0.0, ());
    app.world_mut().commands().entity(p.bob).sleep_island();
    step(&mut app, 2);
    assert!(asleep(&app, p.bob));
    assert!(app.world().get::<AccumulatedForce>(p.bob).is_none());
    app.world_mut().commands().entity(p.bob).wake_island();
    step(&mut app, 1);
    assert!(!asleep(&app, p.bob));
    assert_eq!(
        app.world().get::<AccumulatedForce>(p.bob),
        Some(&AccumulatedForce(Vec3::ZERO))
    );
}

#[test]
fn springs_added_changed_or_removed_wake_their_islands() {
    wakes(
        |app, ps| {
            let spring = *app.world().get::<Spring>(ps[0].spring).unwrap();
            app.world_mut()
                .entity_mut(ps[0].spring)
                .insert(spring.with_stiffness(2.0 * spring.stiffness));
        },
        &[0],
        |ps| WakeCause::SpringChanged(ps[0].spring),
    );
    wakes(
        |app, ps| {
            app.world_mut().despawn(ps[2].spring);
        },
        &[2],
        |ps| WakeCause::SpringChanged(ps[2].spring),
    );
}

/// Re-pointing a spring wakes the island it left as well as the one it
/// joins.
#[test]
fn re_pointing_a_spring_wakes_the_island_it_left() {
    wakes(
        |app, ps| {
            // Island 0's spring now holds island 2's bob instead.
            let spring = *app.world().get::<Spring>(ps[0].spring).unwrap();
            app.world_mut().entity_mut(ps[0].spring).insert(Spring {
                b: ps[2].bob,
                ..spring
            });
        },
        &[0, 2],
        |ps| WakeCause::SpringChanged(ps[0].spring),
    );
}

/// A new join between two sleeping islands wakes both and merges them
/// (one message for the merged island).
#[test]
fn a_new_join_wakes_and_merges_both_islands() {
    wakes_with(
        |app, ps| {
            spawn(app, Spring::new(ps[0].bob, ps[2].bob, 4.0, 1.0));
        },
        &[0, 2],
        |_, c| matches!(c, WakeCause::SpringChanged(_)),
    );
}

/// A join between a sleeping and an awake island wakes the sleeping one.
#[test]
fn joining_an_awake_island_wakes_the_sleeping_one() {
    wakes_with(
        |app, ps| {
            let free = spawn(app, Body::new(1.0).with_position(Vec3::new(-5.0, 0.0, 0.0)));
            spawn(app, Spring::new(free, ps[0].bob, 4.0, 1.0));
        },
        &[0],
        |_, c| matches!(c, WakeCause::SpringChanged(_)),
    );
}

#[test]
fn moving_an_anchor_wakes_the_islands_hanging_from_it() {
    wakes(
        |app, ps| body_mut(app, ps[1].anchor).position.y += 0.5,
        &[1, 2],
        |ps| WakeCause::FixedBodyMoved(ps[1].anchor),
    );
}

#[test]
fn despawning_an_anchor_wakes_the_islands_hanging_from_it() {
    wakes(
        |app, ps| {
            app.world_mut().despawn(ps[0].anchor);
        },
        &[0],
        |ps| WakeCause::BodyRemoved(ps[0].anchor),
    );
}

#[test]
fn changing_gravity_wakes_every_island() {
    wakes(
        |app, _| set_gravity(app, Vec3::new(0.0, -3.0, 0.0)),
        &[0, 1, 2],
        |_| WakeCause::GravityChanged,
    );
}

#[test]
fn sleeping_disabled_and_commands_wake() {
    wakes(
        |app, ps| {
            app.world_mut()
                .entity_mut(ps[2].bob)
                .insert(SleepingDisabled);
        },
        &[2],
        |ps| WakeCause::SleepingDisabled(ps[2].bob),
    );
    wakes(
        |app, ps| {
            app.world_mut().commands().entity(ps[0].bob).wake_island();
        },
        &[0],
        |ps| WakeCause::Command(ps[0].bob),
    );
}

/// Despawning a body of a sleeping island wakes the rest of it, which splits.
#[test]
fn despawning_a_body_wakes_and_splits_its_island() {
    let mut app = sleepy_app();
    set_gravity(&mut app, Vec3::ZERO);
    let anchor = spawn(&mut app, Body::fixed(Vec3::ZERO));
    let chain: Vec<Entity> = (1..=3)
        .map(|i| spawn(&mut app, Body::new(1.0).with_position(Vec3::X * i as f32)))
        .collect();
    spawn(&mut app, Spring::new(anchor, chain[0], 1.0, 10.0));
    spawn(&mut app, Spring::new(chain[0], chain[1], 1.0, 10.0));
    spawn(&mut app, Spring::new(chain[1], chain[2], 1.0, 10.0));
    step(&mut app, 40);
    assert!(chain.iter().all(|&e| asleep(&app, e)));
    app.world_mut().despawn(chain[1]);
    step(&mut app, 1);
    assert!(!asleep(&app, chain[0]) && !asleep(&app, chain[2]));
    // The two halves are two islands now, each announced.
    let woke = &app.world().resource::<Events>().woke;
    assert_eq!(woke.len(), 2, "{woke:?}");
    assert!(
        woke.iter()
            .all(|w| w.cause == WakeCause::BodyRemoved(chain[1]))
    );
    let id = |e| app.world().get::<Island>(e).unwrap().id();
    assert_ne!(id(chain[0]), id(chain[2]));
    assert!(all_bodies_finite(&mut app));
}

/// A sleep command puts an island to sleep at once however fast it moves,
/// except one with `SleepingDisabled`.
#[test]
fn sleep_command_and_its_exception() {
    let mut app = sleepy_app();
    let fast = spawn(&mut app, Body::new(1.0).with_velocity(Vec3::X * 10.0));
    let kept = spawn(
        &mut app,
        (
            Body::new(1.0).with_velocity(Vec3::X * 10.0),
            SleepingDisabled,
        ),
    );
    app.world_mut().commands().entity(fast).sleep_island();
    app.world_mut().commands().entity(kept).sleep_island();
    step(&mut app, 1);
    assert!(asleep(&app, fast));
    assert!(!asleep(&app, kept));
    let frozen = state_bits(&app, fast);
    step(&mut app, 10);
    assert_eq!(state_bits(&app, fast), frozen);
}

/// Bad sleep settings: clamped, one warning, no panic.
#[test]
fn bad_thresholds_are_read_as_zero() {
    let mut app = sleepy_app();
    app.insert_resource(SleepSettings {
        speed_threshold: -1.0,
        time_to_sleep: f32::NAN,
        ..default()
    });
    set_gravity(&mut app, Vec3::ZERO);
    let resting = spawn(&mut app, Body::new(1.0));
    let odd = spawn(
        &mut app,
        (
            Body::new(1.0).with_position(Vec3::X * 3.0),
            SleepThreshold(f32::NAN),
        ),
    );
    step(&mut app, 50);
    // A zero threshold: nothing counts as resting, nothing sleeps.
    assert!(!asleep(&app, resting));
    assert!(!asleep(&app, odd));
    assert_eq!(warnings_for(&app, odd).len(), 1);
    assert!(matches!(
        warnings_for(&app, odd)[0],
        PhysicsIssue::InvalidSleepThreshold { .. }
    ));
    // A good per-body threshold with time_to_sleep read as 0 sleeps at once.
    app.world_mut().entity_mut(odd).insert(SleepThreshold(0.1));
    step(&mut app, 2);
    assert!(asleep(&app, odd));
    assert!(!asleep(&app, resting));
}

/// A fixed anchor that holds a sleeping rope, made dynamic: the rope wakes
/// and the former anchor moves with it (it is no longer left out of the
/// step as a resting anchor).
#[test]
fn an_anchor_made_dynamic_wakes_its_rope_and_moves() {
    let mut app = sleepy_app();
    let p = pendulum(&mut app, 0.0, 0.0, ());
    app.world_mut().commands().entity(p.bob).sleep_island();
    step(&mut app, 3);
    assert!(asleep(&app, p.bob));
    body_mut(&mut app, p.anchor).inv_mass = 1.0;
    step(&mut app, 10);
    assert!(!asleep(&app, p.bob));
    assert!(!asleep(&app, p.anchor));
    // Two free bodies on a spring fall together.
    assert!(body(&app, p.anchor).position.y < 0.0);
    assert!(body(&app, p.anchor).velocity.y < 0.0);
}

/// One anchor holding an awake rope and a sleeping one: moving it wakes
/// the sleeping one too.
#[test]
fn an_anchor_holding_awake_and_sleeping_islands_wakes_the_sleeping_one() {
    let mut app = sleepy_app();
    let p = pendulum(&mut app, 0.0, 0.0, ());
    let awake = spawn(
        &mut app,
        (
            Body::new(1.0).with_position(Vec3::new(0.5, -1.0, 0.0)),
            SleepingDisabled,
        ),
    );
    spawn(&mut app, Spring::new(p.anchor, awake, REST, K));
    app.world_mut().commands().entity(p.bob).sleep_island();
    step(&mut app, 3);
    assert!(asleep(&app, p.bob) && !asleep(&app, awake));
    app.world_mut().resource_mut::<Events>().woke.clear();
    body_mut(&mut app, p.anchor).position.x += 0.3;
    step(&mut app, 1);
    assert!(!asleep(&app, p.bob));
    let woke = &app.world().resource::<Events>().woke;
    assert_eq!(woke.len(), 1);
    assert_eq!(woke[0].cause, WakeCause::FixedBodyMoved(p.anchor));
}

/// A sleeping rope saved, its anchor despawned, the snapshot restored: the
/// report names the body that lost its anchor, and the rope wakes (with
/// `BodyRemoved`) and falls instead of sleeping in mid-air.
#[test]
fn a_restored_island_whose_anchor_is_gone_wakes_and_falls() {
    let mut app = sleepy_app();
    let anchor = spawn(&mut app, Body::fixed(Vec3::ZERO));
    let top = spawn(&mut app, Body::new(1.0).with_position(-Vec3::Y));
    let bottom = spawn(&mut app, Body::new(1.0).with_position(-2.0 * Vec3::Y));
    spawn(&mut app, Spring::new(anchor, top, 1.0, 100.0));
    spawn(&mut app, Spring::new(top, bottom, 1.0, 100.0));
    step(&mut app, 1);
    app.world_mut().commands().entity(top).sleep_island();
    step(&mut app, 2);
    assert!(asleep(&app, top) && asleep(&app, bottom));
    let saved = PhysicsSnapshot::save(app.world_mut());
    app.world_mut().despawn(anchor);
    step(&mut app, 5);
    let report = saved.restore(app.world_mut());
    assert_eq!(report.missing, 1);
    assert_eq!(report.lost_anchors, vec![(top, anchor)]);
    app.world_mut().resource_mut::<Events>().woke.clear();
    step(&mut app, 30);
    assert!(!asleep(&app, top) && !asleep(&app, bottom));
    let woke = &app.world().resource::<Events>().woke;
    assert!(
        woke.iter()
            .any(|w| w.cause == WakeCause::BodyRemoved(anchor) && w.bodies.contains(&top)),
        "{woke:?}"
    );
    assert!(
        body(&app, top).position.y < -1.1,
        "the rope falls: {}",
        body(&app, top).position
    );
}

/// Two bodies at rest on a spring, without gravity: an island that rests
/// and falls asleep after `time_to_sleep`.
fn resting_pair(app: &mut App) -> (Entity, Entity) {
    set_gravity(app, Vec3::ZERO);
    let a = spawn(app, Body::new(1.0));
    let b = spawn(app, Body::new(1.0).with_position(Vec3::X));
    spawn(app, Spring::new(a, b, 1.0, 50.0));
    (a, b)
}

/// Steps until `e` sleeps; the number of steps it took.
fn steps_until_asleep(app: &mut App, e: Entity, most: usize) -> usize {
    (1..=most)
        .find(|_| {
            step(app, 1);
            asleep(app, e)
        })
        .unwrap_or_else(|| panic!("{e} did not fall asleep in {most} steps"))
}

/// The frame an island falls asleep, its bodies' `RestTime` already reads
/// 0 (as the docs say of a sleeping island), and only then.
#[test]
fn rest_time_is_zero_from_the_frame_an_island_sleeps() {
    let mut app = sleepy_app();
    let (a, b) = resting_pair(&mut app);
    let time_to_sleep = app.world().resource::<SleepSettings>().time_to_sleep;
    let mut last = 0.0;
    for _ in 0..(2.0 * time_to_sleep / H) as usize {
        step(&mut app, 1);
        let rest = app.world().get::<RestTime>(a).unwrap().seconds();
        if asleep(&app, a) {
            assert_eq!(rest, 0.0, "asleep: RestTime is 0");
            assert_eq!(app.world().get::<RestTime>(b).unwrap().seconds(), 0.0);
            assert!(
                last > 0.0 && last < time_to_sleep,
                "it rested before: {last}"
            );
            return;
        }
        last = rest;
    }
    panic!("the pair never fell asleep");
}

/// Your code removing `Sleeping` from one body wakes the whole island, as
/// `wake_island` does (`WakeCause::Command`), and the island then rests
/// for the whole `time_to_sleep` again before it sleeps: no `IslandSlept`
/// in the same step.
#[test]
fn removing_sleeping_from_a_body_wakes_its_island_for_a_full_rest() {
    let mut app = sleepy_app();
    let (a, b) = resting_pair(&mut app);
    let time_to_sleep = app.world().resource::<SleepSettings>().time_to_sleep;
    let first = steps_until_asleep(&mut app, a, 10_000);
    assert!(asleep(&app, b));
    app.world_mut().entity_mut(b).remove::<Sleeping>();
    {
        let mut events = app.world_mut().resource_mut::<Events>();
        events.woke.clear();
        events.slept.clear();
    }
    step(&mut app, 1);
    assert!(
        !asleep(&app, a) && !asleep(&app, b),
        "the whole island wakes"
    );
    let events = app.world().resource::<Events>();
    assert_eq!(events.woke.len(), 1, "{:?}", events.woke);
    assert_eq!(events.woke[0].cause, WakeCause::Command(b));
    assert!(events.slept.is_empty(), "no sleep in the same step");
    let again = steps_until_asleep(&mut app, a, 10_000);
    assert!(
        (again as f32 + 1.0) * H >= time_to_sleep,
        "rested {again} steps again (first sleep after {first})"
    );
}

/// Two bodies on a spring drifting at 1 m/s, too fast to rest: an island
/// that sleeps only when asked.
fn moving_pair(app: &mut App, extra: impl Bundle) -> (Entity, Entity) {
    set_gravity(app, Vec3::ZERO);
    let a = spawn(app, (Body::new(1.0).with_velocity(Vec3::Y), extra));
    let b = spawn(
        app,
        Body::new(1.0).with_position(Vec3::X).with_velocity(Vec3::Y),
    );
    spawn(app, Spring::new(a, b, 1.0, 50.0));
    step(app, 2);
    (a, b)
}

fn clear_events(app: &mut App) {
    let mut events = app.world_mut().resource_mut::<Events>();
    events.woke.clear();
    events.slept.clear();
}

/// Your code inserting `Sleeping` on one body of an awake island asks the
/// island to sleep, as `sleep_island` does: the next step puts the whole
/// island to sleep with one `IslandSlept` and no `IslandWoke`, and it then
/// stays frozen.
#[test]
fn inserting_sleeping_puts_the_whole_island_to_sleep() {
    let mut app = sleepy_app();
    let (a, b) = moving_pair(&mut app, ());
    clear_events(&mut app);
    app.world_mut().entity_mut(b).insert(Sleeping::default());
    // A request not yet carried out is saved as awake.
    let saved = PhysicsSnapshot::save(app.world_mut());
    assert!(saved.bodies().iter().all(|state| !state.sleeping));
    step(&mut app, 1);
    assert!(
        asleep(&app, a) && asleep(&app, b),
        "the whole island sleeps"
    );
    let events = app.world().resource::<Events>();
    assert!(events.woke.is_empty(), "{:?}", events.woke);
    assert_eq!(events.slept.len(), 1, "{:?}", events.slept);
    let mut slept = events.slept[0].bodies.clone();
    slept.sort();
    let mut pair = vec![a, b];
    pair.sort();
    assert_eq!(slept, pair);
    for e in [a, b] {
        assert!(app.world().get::<AccumulatedForce>(e).is_none());
        assert_eq!(app.world().get::<RestTime>(e).unwrap().seconds(), 0.0);
    }
    let frozen = [state_bits(&app, a), state_bits(&app, b)];
    step(&mut app, 30);
    assert_eq!([state_bits(&app, a), state_bits(&app, b)], frozen);
    let events = app.world().resource::<Events>();
    assert!(events.woke.is_empty() && events.slept.len() == 1);
    // It wakes as any island does.
    body_mut(&mut app, a).velocity = Vec3::X;
    step(&mut app, 1);
    assert!(!asleep(&app, a) && !asleep(&app, b));
    assert_eq!(
        app.world().resource::<Events>().woke[0].cause,
        WakeCause::BodyWritten(a)
    );
    // Restored to the moment of the request, it moves on awake.
    saved.restore(app.world_mut());
    let y = body(&app, b).position.y;
    step(&mut app, 2);
    assert!(!asleep(&app, a) && !asleep(&app, b));
    assert!(body(&app, b).position.y > y, "it moves on");
}

/// A rope spawned with `Sleeping` on its bodies sleeps from its first step
/// where it was put, in mid-air under gravity.
#[test]
fn a_rope_spawned_asleep_sleeps_where_it_was_put() {
    let mut app = sleepy_app();
    let anchor = spawn(&mut app, Body::fixed(Vec3::ZERO));
    let mut prev = anchor;
    let mut rope = Vec::new();
    for i in 1..=5 {
        let link = spawn(
            &mut app,
            (
                Body::new(1.0).with_position(Vec3::X * i as f32),
                Sleeping::default(),
            ),
        );
        spawn(&mut app, Spring::new(prev, link, 1.0, 100.0));
        rope.push(link);
        prev = link;
    }
    step(&mut app, 20);
    for (i, &link) in rope.iter().enumerate() {
        assert!(asleep(&app, link));
        assert_eq!(body(&app, link).position, Vec3::X * (i + 1) as f32);
    }
    let events = app.world().resource::<Events>();
    assert!(events.woke.is_empty(), "{:?}", events.woke);
    assert_eq!(events.slept.len(), 1, "{:?}", events.slept);
}

/// `SleepingDisabled` refuses the request: the marker is taken off, the
/// island keeps moving, and no message says it slept or woke.
#[test]
fn sleeping_disabled_refuses_an_inserted_sleeping() {
    let mut app = sleepy_app();
    let (a, b) = moving_pair(&mut app, SleepingDisabled);
    clear_events(&mut app);
    app.world_mut().entity_mut(b).insert(Sleeping::default());
    let before = body(&app, b).position;
    step(&mut app, 2);
    assert!(!asleep(&app, a) && !asleep(&app, b));
    assert!(body(&app, b).position.y > before.y, "it kept moving");
    let events = app.world().resource::<Events>();
    assert!(events.woke.is_empty() && events.slept.is_empty());
}

/// A marker removed again before the step asks nothing.
#[test]
fn a_sleeping_removed_before_the_step_asks_nothing() {
    let mut app = sleepy_app();
    let (a, b) = moving_pair(&mut app, ());
    clear_events(&mut app);
    app.world_mut().entity_mut(b).insert(Sleeping::default());
    app.world_mut().entity_mut(b).remove::<Sleeping>();
    step(&mut app, 2);
    assert!(!asleep(&app, a) && !asleep(&app, b));
    let events = app.world().resource::<Events>();
    assert!(events.woke.is_empty() && events.slept.is_empty());
}

/// Inserted on a body that already sleeps, it changes nothing; inserted on
/// a fixed body, it is taken off.
#[test]
fn sleeping_inserted_on_a_sleeper_or_a_fixed_body() {
    let mut app = sleepy_app();
    let (a, b) = moving_pair(&mut app, ());
    let fixed = spawn(&mut app, Body::fixed(Vec3::Z));
    app.world_mut().commands().entity(a).sleep_island();
    step(&mut app, 1);
    assert!(asleep(&app, a) && asleep(&app, b));
    clear_events(&mut app);
    let frozen = state_bits(&app, b);
    app.world_mut().entity_mut(b).insert(Sleeping::default());
    app.world_mut()
        .entity_mut(fixed)
        .insert(Sleeping::default());
    step(&mut app, 10);
    assert!(asleep(&app, a) && asleep(&app, b));
    assert_eq!(state_bits(&app, b), frozen);
    assert!(!asleep(&app, fixed));
    let events = app.world().resource::<Events>();
    assert!(events.woke.is_empty() && events.slept.is_empty());
    // A write made before the marker still wakes the island.
    body_mut(&mut app, b).velocity = Vec3::X;
    app.world_mut().entity_mut(b).insert(Sleeping::default());
    step(&mut app, 1);
    assert!(!asleep(&app, a) && !asleep(&app, b));
    let woke = &app.world().resource::<Events>().woke;
    assert_eq!(woke.len(), 1, "{woke:?}");
    assert_eq!(woke[0].cause, WakeCause::BodyWritten(b));
}

/// The same with a cord (a `DistanceLimit`) to the anchor: the report names
/// the body that hung from it.
#[test]
fn a_restore_names_a_body_whose_limit_lost_its_anchor() {
    let mut app = sleepy_app();
    let anchor = spawn(&mut app, Body::fixed(Vec3::ZERO));
    let bob = spawn(&mut app, Body::new(1.0).with_position(-Vec3::Y));
    spawn(&mut app, DistanceLimit::new(anchor, bob, 0.0, 1.0));
    step(&mut app, 1);
    app.world_mut().commands().entity(bob).sleep_island();
    step(&mut app, 2);
    assert!(asleep(&app, bob));
    let saved = PhysicsSnapshot::save(app.world_mut());
    app.world_mut().despawn(anchor);
    step(&mut app, 2);
    let report = saved.restore(app.world_mut());
    assert_eq!(report.lost_anchors, vec![(bob, anchor)]);
}

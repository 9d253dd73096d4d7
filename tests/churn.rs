//! One step path: a scene churned every frame (spawns, despawns, `Body`
//! removed and re-inserted, bodies made fixed and dynamic, forces, damping,
//! springs and rods added and removed) steps to the same bits whether or not
//! systems of yours sit in every set of `PhysicsSubstep`; and two faults
//! that churn once exposed.

mod common;

use bevy::prelude::*;
use bevy_euler_physics::prelude::*;
use common::{Dice, H, app, body, spawn, step};

/// Edits the scene before each step: every kind of edit the step must
/// follow, chosen by the dice.
fn churn(
    mut commands: Commands,
    mut dice: ResMut<Dice>,
    mut bodies: Query<(Entity, &mut Body)>,
    bare: Query<Entity, (Without<Body>, With<Island>)>,
    springs: Query<Entity, With<Spring>>,
    mut forces: Query<&mut AccumulatedForce>,
) {
    let mut all: Vec<Entity> = bodies.iter().map(|(e, _)| e).collect();
    all.sort();
    let pick =
        |dice: &mut Dice, all: &[Entity]| (!all.is_empty()).then(|| all[dice.below(all.len())]);
    for _ in 0..3 {
        let Some(e) = pick(&mut dice, &all) else {
            break;
        };
        match dice.below(12) {
            0 => {
                let x = dice.below(40) as f32 * 0.1 - 2.0;
                let new = commands
                    .spawn((
                        Body::new(0.5).with_position(Vec3::new(x, 1.0, 0.0)),
                        Radius(0.05),
                    ))
                    .id();
                commands.spawn(Spring::new(e, new, 0.3, 300.0).with_damping(0.2));
            }
            1 => commands.entity(e).try_despawn(),
            2 => {
                commands.entity(e).try_remove::<Body>();
            }
            3 => {
                if let Ok((_, mut body)) = bodies.get_mut(e) {
                    body.inv_mass = if body.inv_mass == 0.0 { 1.0 } else { 0.0 };
                    body.velocity += Vec3::new(0.3, -0.2, 0.0);
                }
            }
            4 => {
                commands
                    .entity(e)
                    .try_insert(ConstantForce(Vec3::new(3.0, 1.0, 0.0)));
            }
            5 => {
                commands.entity(e).try_remove::<ConstantForce>();
            }
            6 => {
                commands
                    .entity(e)
                    .try_insert(Damping(dice.below(5) as f32 * 0.4));
            }
            7 => {
                if let Some(&spring) = springs.iter().collect::<Vec<_>>().get(dice.below(8)) {
                    commands.entity(spring).try_despawn();
                }
            }
            8 => {
                if let Some(other) = pick(&mut dice, &all)
                    && other != e
                {
                    commands.spawn(DistanceConstraint::new(e, other, 0.5));
                }
            }
            9 => {
                if let Ok(mut force) = forces.get_mut(e) {
                    force.0 += Vec3::new(-4.0, 6.0, 1.0);
                }
            }
            10 => {
                if let Ok((_, mut body)) = bodies.get_mut(e) {
                    body.position.x += 0.05;
                }
            }
            _ => {
                commands
                    .entity(e)
                    .try_insert(Substeps(1 + dice.below(3) as u32));
            }
        }
    }
    // An entity that lost its `Body` gets one again, now and then.
    if dice.chance(30) {
        let mut bare: Vec<Entity> = bare.iter().collect();
        bare.sort();
        if let Some(&e) = bare.first() {
            commands
                .entity(e)
                .try_insert(Body::new(2.0).with_position(Vec3::new(0.5, 0.5, 0.0)));
        }
    }
}

/// Does nothing, but sits in a substep set.
fn watch(_bodies: SubstepBodies<&Body>) {}

/// Ropes of round bodies on a ground plane, and the churn before each step;
/// `watched` puts a system that does nothing in each `PhysicsSubstep` set.
fn churned(watched: bool) -> App {
    churned_ropes(watched, true)
}

/// [`churned`], with round bodies when `round` (else springs alone, whose
/// groups take the fused sweep when nothing of yours is in
/// `PhysicsSubstep`, split over threads from the first body).
fn churned_ropes(watched: bool, round: bool) -> App {
    let mut app = app();
    app.insert_resource(Dice(7))
        .add_systems(FixedUpdate, churn.in_set(PhysicsSystems::Prepare));
    if watched {
        for set in SubstepSystems::ALL {
            app.add_systems(PhysicsSubstep, watch.in_set(set));
        }
    } else if !round {
        app.world_mut()
            .resource_mut::<PhysicsSettings>()
            .parallel_threshold = 1;
    }
    if round {
        spawn(&mut app, GroundPlane::horizontal(-2.0));
    }
    for r in 0..6 {
        let x = r as f32 * 0.6 - 1.5;
        let mut prev = spawn(&mut app, Body::fixed(Vec3::new(x, 0.0, 0.0)));
        for s in 1..=12 {
            let body =
                Body::new(1.0).with_position(Vec3::new(x + 0.05 * s as f32, -0.15 * s as f32, 0.0));
            let next = if round {
                spawn(&mut app, (body, Radius(0.04)))
            } else {
                spawn(&mut app, body)
            };
            if r == 2 {
                app.world_mut().entity_mut(next).insert(AutoSubsteps);
            }
            spawn(
                &mut app,
                Spring::new(prev, next, 0.15, 2000.0).with_damping(0.5),
            );
            prev = next;
        }
    }
    app
}

/// Every entity with a `Body`: its position, velocity and drawn history as
/// bits, and whether it sleeps.
fn state(app: &mut App) -> Vec<(Entity, [u32; 10], bool)> {
    let world = app.world_mut();
    let mut all: Vec<_> = world
        .query::<(Entity, &Body, &PositionHistory, Has<Sleeping>)>()
        .iter(world)
        .map(|(e, b, h, asleep)| {
            let v = [b.position, b.velocity, h.previous()].map(|v| v.to_array());
            let bits = [v[0], v[1], v[2]].concat();
            let mut out = [0u32; 10];
            for (o, x) in out.iter_mut().zip(bits.iter().chain([&b.inv_mass])) {
                *o = x.to_bits();
            }
            (e, out, asleep)
        })
        .collect();
    all.sort_by_key(|(e, ..)| *e);
    all
}

/// The churn: thousands of frames, every body's bits compared each
/// frame between a run with a system of yours in every substep set and a
/// run without.
#[test]
fn churn_gives_the_same_bits_with_and_without_substep_systems() {
    same_bits(churned(false), churned(true));
}

/// The same for ropes of springs alone: without systems of yours their
/// passes run fused, island run by island run (each body's forces, then its
/// kick and drift) and split over threads; with them, stage by stage on one
/// thread.
#[test]
fn fused_passes_give_the_same_bits_as_stage_by_stage() {
    same_bits(churned_ropes(false, false), churned_ropes(true, false));
}

/// `ropes` ropes of 100 bodies of mass 1, 0.1 apart below fixed bodies 0.5
/// apart, joined by springs (k 800, c 0.2); rope `r` nudged
/// `0.01 · (r % kinds)` sideways so that they swing apart.
fn hang_ropes(app: &mut App, ropes: usize, kinds: usize) {
    for r in 0..ropes {
        let x = r as f32 * 0.5;
        let mut prev = spawn(app, Body::fixed(Vec3::new(x, 0.0, 0.0)));
        for s in 1..=100 {
            let at = Vec3::new(x + 0.01 * (r % kinds) as f32, -0.1 * s as f32, 0.0);
            let next = spawn(app, Body::new(1.0).with_position(at));
            spawn(app, Spring::new(prev, next, 0.1, 800.0).with_damping(0.2));
            prev = next;
        }
    }
}

/// Enough ropes of springs alone that a part holds several runs of the
/// sweep (2 048 bodies): 60 ropes of 100 bodies, split over threads from
/// the first body without systems of yours, stage by stage with them; the
/// same bits for 300 frames.
#[test]
fn fused_passes_over_several_runs_give_the_same_bits() {
    let ropes = |watched: bool| {
        let mut app = app();
        if watched {
            for set in SubstepSystems::ALL {
                app.add_systems(PhysicsSubstep, watch.in_set(set));
            }
        } else {
            app.world_mut()
                .resource_mut::<PhysicsSettings>()
                .parallel_threshold = 1;
        }
        hang_ropes(&mut app, 60, 7);
        app
    };
    swing_in_step(ropes(false), ropes(true), 300, 6060);
}

/// Steps both apps of ropes `frames` frames, asserts the same bits for
/// every body each frame, and that the `bodies` bodies swing.
fn swing_in_step(mut a: App, mut b: App, frames: usize, bodies: usize) {
    for frame in 0..frames {
        a.update();
        b.update();
        assert!(
            state(&mut a) == state(&mut b),
            "frame {frame}: the runs differ"
        );
    }
    let end = state(&mut a);
    assert_eq!(end.len(), bodies);
    assert!(
        end.iter()
            .any(|(_, bits, _)| f32::from_bits(bits[3]) != 0.0),
        "the ropes swing"
    );
}

/// The scatter splits a table of more than 16 384 bodies over the step's
/// threads (the compute pool's and the calling one): 200 ropes of 100
/// give the same bits, body by body and frame by frame, as the same scene
/// stepped on one thread.
#[test]
fn a_scatter_split_over_threads_gives_the_same_bits() {
    let ropes = |threshold: usize| {
        let mut app = app();
        app.world_mut()
            .resource_mut::<PhysicsSettings>()
            .parallel_threshold = threshold;
        hang_ropes(&mut app, 200, 5);
        app
    };
    swing_in_step(ropes(1), ropes(usize::MAX), 40, 20_200);
}

/// A component of yours, stored in a sparse set, that disables entities.
#[derive(Component)]
#[component(storage = "SparseSet")]
struct Off;

/// Bodies disabled by a sparse-set component share their table with the
/// bodies that step: the scatter writes only the stepped ones, and the
/// disabled keep their state bit for bit; so do the copies around systems
/// of yours in `PhysicsSubstep`, which walk the same table.
#[test]
fn disabled_bodies_in_a_shared_table_keep_their_state() {
    for watched in [false, true] {
        disabled_bodies_keep_their_state(watched);
    }
}

fn disabled_bodies_keep_their_state(watched: bool) {
    let mut app = app();
    app.world_mut().register_disabling_component::<Off>();
    if watched {
        for set in SubstepSystems::ALL {
            app.add_systems(PhysicsSubstep, watch.in_set(set));
        }
    }
    let ropes: Vec<Vec<Entity>> = (0..2)
        .map(|r| {
            let x = r as f32 * 0.5;
            let mut prev = spawn(&mut app, Body::fixed(Vec3::new(x, 0.0, 0.0)));
            let mut bodies = Vec::new();
            for s in 1..=10 {
                let at = Vec3::new(x + 0.02, -0.1 * s as f32, 0.0);
                let next = spawn(&mut app, Body::new(1.0).with_position(at));
                spawn(&mut app, Spring::new(prev, next, 0.1, 300.0));
                bodies.push(next);
                prev = next;
            }
            bodies
        })
        .collect();
    step(&mut app, 5);
    // The first rope, then a body spawned so that the solver rebuilds: the
    // first rope's stale slots are then the other rope's, so a write to a
    // disabled row would show.
    disable_and_rebuild(&mut app, &ropes[0]);
    let (off, on) = (state_bits(&app, &ropes[0]), state_bits(&app, &ropes[1]));
    step(&mut app, 20);
    assert_eq!(
        state_bits(&app, &ropes[0]),
        off,
        "a disabled body was written (systems in PhysicsSubstep: {watched})"
    );
    assert_ne!(state_bits(&app, &ropes[1]), on, "the other rope steps");
}

/// Pushes every body of the pass up by 3 N, in each pass.
fn lift(mut bodies: SubstepBodies<&mut AccumulatedForce>) {
    for mut force in bodies.iter_mut() {
        force.0.y += 3.0;
    }
}

/// When [`after_enabling_again`] enables the disabled set again.
#[derive(Clone, Copy, PartialEq)]
enum Enable {
    Never,
    /// From your code between two steps.
    BetweenSteps,
    /// From a system of yours in the pass of a step (its commands apply at
    /// the end of the pass, before the step writes the bodies back).
    InPass,
}

/// The bodies [`enable_in_pass`] enables in the next pass.
#[derive(Resource, Default)]
struct EnableInPass(Vec<Entity>);

fn enable_in_pass(mut to_enable: ResMut<EnableInPass>, mut commands: Commands) {
    for e in to_enable.0.drain(..) {
        commands.entity(e).remove::<Off>();
    }
}

/// Two sets of ten free bodies lifted by a system of yours in each pass;
/// the first disabled, the solver rebuilt without it, and enabled again
/// `when`; both sets' bits just before the step in which it was enabled
/// again (or would have been), and seven steps later.
fn after_enabling_again(when: Enable, passes: u32) -> [[Vec<[u32; 6]>; 2]; 2] {
    let mut app = app();
    // Every body at `passes` passes, in one pass group.
    app.world_mut().resource_mut::<PhysicsSettings>().substeps = passes;
    app.world_mut().register_disabling_component::<Off>();
    app.init_resource::<EnableInPass>().add_systems(
        PhysicsSubstep,
        (
            lift.in_set(SubstepSystems::AccumulateForces),
            enable_in_pass.in_set(SubstepSystems::IntegratePositions),
        ),
    );
    let sets: Vec<Vec<Entity>> = (0..2)
        .map(|set| {
            (0..10)
                .map(|i| {
                    let at = Vec3::new(set as f32, i as f32 * 0.1, 0.0);
                    spawn(&mut app, Body::new(1.0).with_position(at))
                })
                .collect()
        })
        .collect();
    step(&mut app, 2);
    disable_and_rebuild(&mut app, &sets[0]);
    step(&mut app, 2);
    match when {
        Enable::Never => {}
        Enable::BetweenSteps => {
            for &e in &sets[0] {
                app.world_mut().entity_mut(e).remove::<Off>();
            }
        }
        Enable::InPass => app.world_mut().resource_mut::<EnableInPass>().0 = sets[0].clone(),
    }
    let then = [state_bits(&app, &sets[0]), state_bits(&app, &sets[1])];
    step(&mut app, 7);
    [
        then,
        [state_bits(&app, &sets[0]), state_bits(&app, &sets[1])],
    ]
}

/// A body enabled again after a rebuild that did not see it: that rebuild
/// cleared its `BodyIndex` (whose slot another body holds now) and its
/// `Island`, and the rebuild at the start of the next step gives it a slot
/// of its own. Nothing of it reaches the other body's slot (neither the
/// force a system of yours adds to it nor, back, the other body's state),
/// and it moves on from where it was held: the semi-implicit recurrence of
/// gravity and the 3 N lift, over seven steps, or six when it was enabled
/// within a step's pass (that step leaves it where it was, and its later
/// passes do not see it: at two passes, a lift added to it there would
/// be taken in the next step).
#[test]
fn a_body_enabled_again_adds_nothing_to_the_slot_it_held() {
    for (when, passes) in [
        (Enable::BetweenSteps, 1),
        (Enable::InPass, 1),
        (Enable::InPass, 2),
    ] {
        let [_, [_, control]] = after_enabling_again(Enable::Never, passes);
        let case = match when {
            Enable::InPass => format!("in a pass ({passes} a step)"),
            _ => format!("between steps ({passes} passes a step)"),
        };
        let [[held, _], [enabled, others]] = after_enabling_again(when, passes);
        assert_eq!(
            others, control,
            "the other set, beside a set enabled again {case}"
        );
        let steps = if when == Enable::InPass { 6 } else { 7 };
        for (n, (now, then)) in enabled.iter().zip(&held).enumerate() {
            let bits = |b: &[u32; 6], i: usize| f64::from(f32::from_bits(b[i]));
            let (y, v) = lifted(bits(then, 1), bits(then, 4), steps, passes);
            for (axis, want) in [(0, 0.0), (1, y), (2, 0.0), (3, 0.0), (4, v), (5, 0.0)] {
                let got = bits(now, axis);
                assert!(
                    (got - want).abs() < 1e-5,
                    "body {n} of the set enabled again {case}, component {axis}: \
                     {got} against {want}"
                );
            }
            assert_ne!(
                now[1], then[1],
                "body {n} of the set enabled again {case} moves"
            );
        }
    }
}

/// Height and vertical speed after `steps` steps of `passes` passes from
/// `y` and `v`, under gravity and the 3 N lift on 1 kg (in f64).
fn lifted(y: f64, v: f64, steps: usize, passes: u32) -> (f64, f64) {
    recurrence(y, v, 3.0, steps, passes)
}

/// Height and vertical speed after `steps` steps of `passes` passes from
/// `y` and `v`, under gravity and an upward `lift` on 1 kg: the
/// semi-implicit recurrence, in f64.
fn recurrence(mut y: f64, mut v: f64, lift: f64, steps: usize, passes: u32) -> (f64, f64) {
    let a = f64::from(Gravity::default().0.y) + lift;
    let h = f64::from(H) / f64::from(passes);
    for _ in 0..steps * passes as usize {
        v += h * a;
        y += h * v;
    }
    (y, v)
}

/// A body spawned disabled, which no layout has held, steps once it is
/// enabled: the rebuild that did not see it lists it, and the next step
/// rebuilds when it is back. It falls as the recurrence says from where it
/// was spawned.
#[test]
fn a_body_spawned_disabled_steps_once_enabled() {
    let mut app = app();
    app.world_mut().register_disabling_component::<Off>();
    app.add_systems(
        PhysicsSubstep,
        lift.in_set(SubstepSystems::AccumulateForces),
    );
    let free = spawn(&mut app, Body::new(1.0));
    let at = Vec3::new(2.0, 1.0, 0.0);
    let off = spawn(&mut app, (Body::new(1.0).with_position(at), Off));
    step(&mut app, 3);
    assert_eq!(body(&app, off).position, at, "a disabled body stays");
    app.world_mut().entity_mut(off).remove::<Off>();
    step(&mut app, 5);
    let (y, v) = lifted(1.0, 0.0, 5, 1);
    let now = body(&app, off);
    assert!(
        (f64::from(now.position.y) - y).abs() < 1e-5
            && (f64::from(now.velocity.y) - v).abs() < 1e-5,
        "the body enabled: {now:?}, against y = {y}, v = {v}"
    );
    assert_eq!(now.position.x, 2.0);
    let (y, _) = lifted(0.0, 0.0, 8, 1);
    assert!((f64::from(body(&app, free).position.y) - y).abs() < 1e-5);
}

/// Disables `bodies` with [`Off`] and spawns a body, so that the solver
/// rebuilds at the next step without them.
fn disable_and_rebuild(app: &mut App, bodies: &[Entity]) {
    for &e in bodies {
        app.world_mut().entity_mut(e).insert(Off);
    }
    spawn(app, Body::new(1.0).with_position(Vec3::new(5.0, 0.0, 0.0)));
}

/// The bits of the positions and velocities of `bodies`.
fn state_bits(app: &App, bodies: &[Entity]) -> Vec<[u32; 6]> {
    bodies
        .iter()
        .map(|&e| {
            let b = body(app, e);
            let v = [b.position.to_array(), b.velocity.to_array()].concat();
            core::array::from_fn(|i| v[i].to_bits())
        })
        .collect()
}

/// In a table shared with a disabled body, the gather still finds what
/// your code wrote to a stepped body before the step (a new velocity, a
/// pushing force, each acting from that step: `v = v₀ + h·(g + F/m)`),
/// and takes neither the disabled body's force nor its state.
#[test]
fn writes_to_bodies_in_a_shared_table_are_gathered() {
    let mut app = app();
    app.world_mut().register_disabling_component::<Off>();
    let free = spawn(
        &mut app,
        Body::new(2.0).with_position(Vec3::new(1.0, 2.0, 0.0)),
    );
    let off = spawn(
        &mut app,
        Body::new(1.0).with_position(Vec3::new(-1.0, 0.0, 0.0)),
    );
    step(&mut app, 3);
    app.world_mut().entity_mut(off).insert(Off);
    step(&mut app, 2);
    let held = body(&app, off);
    let g = app.world().resource::<Gravity>().0;
    let (v0, push) = (Vec3::new(3.0, -1.0, 0.5), Vec3::new(4.0, 0.0, -2.0));
    app.world_mut().get_mut::<Body>(free).unwrap().velocity = v0;
    app.world_mut().get_mut::<AccumulatedForce>(free).unwrap().0 = push;
    app.world_mut().get_mut::<AccumulatedForce>(off).unwrap().0 = push;
    step(&mut app, 1);
    let expected = v0 + H * (g + push * 0.5);
    let v = body(&app, free).velocity;
    assert!((v - expected).length() < 1e-5, "{v} against {expected}");
    assert_eq!(
        app.world().get::<AccumulatedForce>(free).unwrap().0,
        Vec3::ZERO,
        "the stepped body's force is taken"
    );
    // One step later the push is spent: gravity alone.
    step(&mut app, 1);
    let next = v + H * g;
    let v = body(&app, free).velocity;
    assert!((v - next).length() < 1e-5, "{v} against {next}");
    assert_eq!(
        app.world().get::<AccumulatedForce>(off).unwrap().0,
        push,
        "the disabled body's force waits for it"
    );
    assert_eq!(body(&app, off), held, "the disabled body keeps its state");
}

/// Steps both apps 3 000 frames and compares every body's bits each frame.
fn same_bits(mut plain: App, mut watched: App) {
    let mut most = 0;
    for frame in 0..3000 {
        plain.update();
        watched.update();
        let (a, b) = (state(&mut plain), state(&mut watched));
        most = most.max(a.len());
        if a != b {
            let first = a.iter().zip(&b).find(|(x, y)| x != y);
            panic!(
                "frame {frame}: the runs differ ({} and {} bodies); first: {first:?}",
                a.len(),
                b.len()
            );
        }
    }
    // The churn did churn: bodies came and went, and nothing went
    // non-finite.
    let end = state(&mut plain);
    assert!(most > 72, "bodies at most {most}");
    assert!(
        end.iter()
            .all(|(_, bits, _)| bits.iter().all(|&b| f32::from_bits(b).is_finite()))
    );
}

/// A body whose entity lost its `Body` took its slot's constant force and
/// damping with it: the body laid out in that slot falls freely.
#[test]
fn a_removed_body_leaves_nothing_acting_on_another_slot() {
    let mut app = app();
    let gone = spawn(
        &mut app,
        (
            Body::new(1.0),
            ConstantForce(Vec3::new(500.0, 0.0, 0.0)),
            Damping(30.0),
        ),
    );
    let falling = spawn(&mut app, Body::new(1.0).with_position(Vec3::X));
    step(&mut app, 1);
    app.world_mut().entity_mut(gone).remove::<Body>();
    let before = app.world().get::<Body>(falling).unwrap().velocity;
    step(&mut app, 10);
    let after = app.world().get::<Body>(falling).unwrap().velocity;
    // Semi-implicit Euler under gravity alone: exactly g·h more per step.
    let expected = before.y - 9.81 * H * 10.0;
    assert!(
        (after.y - expected).abs() < 1e-4,
        "{after} (expected y {expected})"
    );
    assert_eq!(after.x, 0.0, "another body's constant force acted on it");
}

/// A round body resting on the ground, made fixed with a velocity written
/// to it, keeps that velocity (a fixed body's velocity is yours: springs
/// read it for their damping) and stays where it is.
#[test]
fn a_body_made_fixed_on_the_ground_keeps_the_velocity_written_to_it() {
    let mut app = app();
    spawn(&mut app, GroundPlane::horizontal(0.0));
    let ball = spawn(
        &mut app,
        (
            Body::new(1.0).with_position(Vec3::new(0.0, 0.1, 0.0)),
            Radius(0.1),
        ),
    );
    step(&mut app, 30);
    let at = app.world().get::<Body>(ball).unwrap().position;
    {
        let mut body = app.world_mut().get_mut::<Body>(ball).unwrap();
        body.inv_mass = 0.0;
        body.velocity = Vec3::new(0.0, -1.0, 0.5);
    }
    step(&mut app, 3);
    let body = *app.world().get::<Body>(ball).unwrap();
    assert_eq!(body.velocity, Vec3::new(0.0, -1.0, 0.5));
    assert_eq!(body.position, at);
}

/// The body [`clone_in_pass`] clones in the next pass, and the clone.
#[derive(Resource, Default)]
struct CloneInPass {
    original: Option<Entity>,
    clone: Option<Entity>,
}

/// Clones the body named in [`CloneInPass`] and sends the clone up at
/// 10 m/s at once, from a system of yours in the step's pass.
fn clone_in_pass(world: &mut World) {
    let Some(original) = world.resource_mut::<CloneInPass>().original.take() else {
        return;
    };
    let clone = world.entity_mut(original).clone_and_spawn();
    world.get_mut::<Body>(clone).unwrap().velocity = Vec3::new(0.0, 10.0, 0.0);
    world.resource_mut::<CloneInPass>().clone = Some(clone);
}

/// Ten free bodies; the fifth cloned (or not) within the third step, by a
/// system of yours in its pass that sends the clone up at once. The ten
/// bodies' bits after eight steps, and the clone's state.
fn after_cloning(clone: bool) -> (Vec<[u32; 6]>, Option<Body>) {
    let mut app = app();
    app.init_resource::<CloneInPass>().add_systems(
        PhysicsSubstep,
        clone_in_pass.in_set(SubstepSystems::AccumulateForces),
    );
    let bodies: Vec<Entity> = (0..10)
        .map(|i| spawn(&mut app, Body::new(1.0).with_position(Vec3::X * i as f32)))
        .collect();
    step(&mut app, 2);
    if clone {
        app.world_mut().resource_mut::<CloneInPass>().original = Some(bodies[4]);
    }
    step(&mut app, 6);
    let clone = app.world().resource::<CloneInPass>().clone;
    (state_bits(&app, &bodies), clone.map(|e| body(&app, e)))
}

/// A body cloned within a step is a body of its own: the clone's
/// `BodyIndex` (a copy of the original's slot) is cleared as its `Body` is
/// added, so nothing of the clone reaches the original's slot (neither the
/// velocity written to it, through the copies around your systems, nor,
/// back, the original's state through the scatter). Every original keeps
/// the bits it has without the clone, and the clone falls from the next
/// step on as the semi-implicit recurrence says, from where the original
/// was when the step began and the velocity written to it.
#[test]
fn a_body_cloned_within_a_step_is_a_body_of_its_own() {
    let (without, _) = after_cloning(false);
    let (with, clone) = after_cloning(true);
    assert_eq!(with, without, "the originals keep their bits");
    let clone = clone.expect("the system cloned the body");
    // The original, at rest at y = 0, falls for two steps; the clone
    // starts there in step 3 with the velocity written to it, which that
    // step leaves as it is, and falls in steps 4 to 8.
    let (y, _) = recurrence(0.0, 0.0, 0.0, 2, 1);
    let (y, v) = recurrence(y, 10.0, 0.0, 5, 1);
    assert!(
        (f64::from(clone.position.y) - y).abs() < 1e-4
            && (f64::from(clone.velocity.y) - v).abs() < 1e-4,
        "the clone: {clone:?}, against y = {y}, v = {v}"
    );
    assert_eq!(clone.position.x, 4.0);
}

//! A churn soak: a scene of ropes in which 1 % of the bodies are despawned,
//! spawned or edited (velocity kicks, made fixed or dynamic, constant
//! forces, springs to new bodies, now and then a NaN velocity) before
//! every step. Nothing panics, no NaN reaches a body that was not given
//! one, the body count holds, and the process's resident memory stays
//! flat once the scene is warm.
//!
//! `cargo test --test churn_soak` runs 10 000 bodies for 1 000 steps;
//! `cargo test --release --test churn_soak -- --ignored --nocapture` runs
//! 100 000 bodies for 10 000 steps and prints the resident memory.

mod common;

use bevy::prelude::*;
use bevy_euler_physics::prelude::*;
use common::{Dice, app, spawn, step};

/// The process's resident memory, in KiB (`VmRSS`), where `/proc` has it.
fn resident_kib() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    status
        .lines()
        .find_map(|line| line.strip_prefix("VmRSS:"))?
        .trim()
        .trim_end_matches("kB")
        .trim()
        .parse()
        .ok()
}

/// What the soak keeps of its scene: the dynamic bodies, the springs at
/// each body (despawned with it, as a game would), the bodies given a NaN.
#[derive(Default)]
struct Scene {
    live: Vec<Entity>,
    springs: bevy::platform::collections::HashMap<Entity, Vec<Entity>>,
    poisoned: bevy::platform::collections::HashSet<Entity>,
}

impl Scene {
    fn join(&mut self, world: &mut World, a: Entity, b: Entity) {
        let spring = world
            .spawn(Spring::new(a, b, 0.1, 400.0).with_damping(0.5))
            .id();
        for end in [a, b] {
            self.springs.entry(end).or_default().push(spring);
        }
    }
}

/// One edit of the churn, on the world between steps.
fn churn_one(world: &mut World, dice: &mut Dice, scene: &mut Scene) {
    if scene.live.is_empty() {
        return;
    }
    let at = dice.below(scene.live.len());
    let e = scene.live[at];
    match dice.below(9) {
        // Despawn a body and its springs ...
        0..=2 => {
            scene.live.swap_remove(at);
            world.despawn(e);
            for spring in scene.springs.remove(&e).unwrap_or_default() {
                if let Ok(spring) = world.get_entity_mut(spring) {
                    spring.despawn();
                }
            }
        }
        // ... and spawn one hanging from another by a spring.
        3..=5 => {
            let Some(from) = world.get::<Body>(e).map(|b| b.position) else {
                return;
            };
            let new = world
                .spawn(Body::new(0.2).with_position(from + Vec3::new(0.05, -0.1, 0.0)))
                .id();
            scene.join(world, e, new);
            scene.live.push(new);
        }
        6 => {
            if let Some(mut body) = world.get_mut::<Body>(e) {
                body.velocity += Vec3::new(0.5, 0.2, 0.0);
            }
        }
        7 => {
            if let Some(mut body) = world.get_mut::<Body>(e) {
                body.inv_mass = if body.inv_mass == 0.0 { 5.0 } else { 0.0 };
            }
        }
        _ => {
            if dice.below(20) == 0 {
                if let Some(mut body) = world.get_mut::<Body>(e) {
                    body.velocity = Vec3::NAN;
                    scene.poisoned.insert(e);
                }
            } else {
                world
                    .entity_mut(e)
                    .insert(ConstantForce(Vec3::new(0.3, 0.0, 0.1)));
            }
        }
    }
}

/// Runs the soak; returns the resident memory (KiB) a quarter of the way
/// in and at the end.
fn soak(bodies: usize, steps: usize) -> (Option<u64>, Option<u64>) {
    let mut app = app();
    let links = 10;
    let mut scene = Scene::default();
    for r in 0..bodies / links {
        let x = (r % 200) as f32 * 0.6;
        let z = (r / 200) as f32 * 0.6;
        let mut prev = spawn(&mut app, Body::fixed(Vec3::new(x, 0.0, z)));
        for s in 1..links {
            let e = spawn(
                &mut app,
                Body::new(0.2).with_position(Vec3::new(x + 0.02 * s as f32, -0.1 * s as f32, z)),
            );
            scene.join(app.world_mut(), prev, e);
            scene.live.push(e);
            prev = e;
        }
    }
    let start = scene.live.len();
    let mut dice = Dice(7);
    let per_step = (bodies / 100).max(1);
    let mut warm = None;
    for n in 0..steps {
        for _ in 0..per_step {
            churn_one(app.world_mut(), &mut dice, &mut scene);
        }
        step(&mut app, 1);
        if n == steps / 4 {
            warm = resident_kib();
        }
    }
    let end = resident_kib();
    let world = app.world_mut();
    let mut count = 0;
    let mut query = world.query::<(Entity, &Body, Has<PhysicsError>)>();
    for (e, body, error) in query.iter(world) {
        count += 1;
        if !scene.poisoned.contains(&e) {
            assert!(
                body.position.is_finite() && body.velocity.is_finite(),
                "{e} was never given a NaN: {body:?} (error: {error})"
            );
        }
    }
    // Despawns and spawns come at the same rate.
    assert!(
        count > start / 2 && count < start * 2 + bodies / links,
        "{count} bodies from {start}"
    );
    eprintln!(
        "churn soak: {bodies} bodies, {steps} steps, {per_step} edits a step; resident {:?} KiB a quarter in, {:?} KiB at the end; {count} bodies at the end",
        warm, end
    );
    (warm, end)
}

/// Resident memory at the end within 10 % (and 32 MiB) of what it was a
/// quarter of the way in.
fn assert_flat((warm, end): (Option<u64>, Option<u64>)) {
    if let (Some(warm), Some(end)) = (warm, end) {
        assert!(
            end <= warm + warm / 10 + 32 * 1024,
            "resident memory grew from {warm} KiB to {end} KiB"
        );
    }
}

#[test]
fn ten_thousand_bodies_churned_for_a_thousand_steps() {
    assert_flat(soak(10_000, 1_000));
}

#[test]
#[ignore = "100 000 bodies for 10 000 steps: run in release by hand"]
fn a_hundred_thousand_bodies_churned_for_ten_thousand_steps() {
    assert_flat(soak(100_000, 10_000));
}

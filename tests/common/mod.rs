//! Shared helpers: a headless app on a manual clock.
#![allow(dead_code)]

use std::time::Duration;

use bevy::prelude::*;
use bevy::time::TimeUpdateStrategy;
use bevy_euler_physics::prelude::*;

/// The fixed timestep every test uses unless it says otherwise: 1/64 s,
/// exact in binary.
pub const H: f32 = 1.0 / 64.0;

/// A headless app with the plugin, stepping exactly one fixed step per
/// `update()`. The first (zero-length) frame has already run.
pub fn app() -> App {
    app_with_timestep(H)
}

pub fn app_with_timestep(h: f32) -> App {
    let mut app = App::new();
    app.add_plugins((MinimalPlugins, EulerPhysicsPlugin))
        .insert_resource(Time::<Fixed>::from_duration(Duration::from_secs_f32(h)))
        .insert_resource(TimeUpdateStrategy::FixedTimesteps(1))
        .init_resource::<Warnings>()
        .add_systems(Last, collect_warnings);
    app.update();
    app
}

/// [`app`] with Bevy's assets, meshes and transform propagation, for soft
/// meshes. No file watching. The first frame has run.
pub fn mesh_app() -> App {
    let mut app = App::new();
    app.add_plugins((
        MinimalPlugins,
        AssetPlugin {
            watch_for_changes_override: Some(false),
            ..default()
        },
        bevy::mesh::MeshPlugin,
        TransformPlugin,
        EulerPhysicsPlugin,
    ))
    .insert_resource(Time::<Fixed>::from_duration(Duration::from_secs_f32(H)))
    .insert_resource(TimeUpdateStrategy::FixedTimesteps(1))
    .init_resource::<Warnings>()
    .add_systems(Last, collect_warnings);
    app.update();
    app
}

/// Every change of a mesh asset, in order.
#[derive(Resource, Default)]
pub struct MeshChanges(pub Vec<AssetId<Mesh>>);

/// Counts the changes of each mesh asset from now on ([`mesh_changes`]).
pub fn count_mesh_changes(app: &mut App) {
    fn count(mut events: MessageReader<AssetEvent<Mesh>>, mut changes: ResMut<MeshChanges>) {
        for event in events.read() {
            if let AssetEvent::Modified { id } = *event {
                changes.0.push(id);
            }
        }
    }
    app.init_resource::<MeshChanges>().add_systems(Last, count);
}

/// How many times the mesh `id` was changed since [`count_mesh_changes`].
pub fn mesh_changes(app: &App, id: AssetId<Mesh>) -> usize {
    let changes = &app.world().resource::<MeshChanges>().0;
    changes.iter().filter(|&&c| c == id).count()
}

/// Runs `n` fixed steps, one frame each.
pub fn step(app: &mut App, n: usize) {
    for _ in 0..n {
        app.update();
    }
}

/// Every [`PhysicsWarning`] sent so far.
#[derive(Resource, Default)]
pub struct Warnings(pub Vec<PhysicsWarning>);

fn collect_warnings(mut reader: MessageReader<PhysicsWarning>, mut all: ResMut<Warnings>) {
    all.0.extend(reader.read().copied());
}

pub fn warnings(app: &App) -> &[PhysicsWarning] {
    &app.world().resource::<Warnings>().0
}

pub fn warnings_for(app: &App, entity: Entity) -> Vec<PhysicsIssue> {
    warnings(app)
        .iter()
        .filter(|w| w.entity == entity)
        .map(|w| w.issue)
        .collect()
}

/// How many entities have a `C`.
pub fn count<C: Component>(app: &mut App) -> usize {
    let world = app.world_mut();
    world.query::<&C>().iter(world).count()
}

pub fn spawn(app: &mut App, bundle: impl Bundle) -> Entity {
    app.world_mut().spawn(bundle).id()
}

pub fn body(app: &App, entity: Entity) -> Body {
    *app.world().get::<Body>(entity).expect("entity has a Body")
}

pub fn body_mut(app: &mut App, entity: Entity) -> Mut<'_, Body> {
    app.world_mut()
        .get_mut::<Body>(entity)
        .expect("entity has a Body")
}

pub fn translation(app: &App, entity: Entity) -> Vec3 {
    app.world()
        .get::<Transform>(entity)
        .expect("entity has a Transform")
        .translation
}

pub fn has_error(app: &App, entity: Entity) -> bool {
    app.world().get::<PhysicsError>(entity).is_some()
}

pub fn set_gravity(app: &mut App, g: Vec3) {
    app.insert_resource(Gravity(g));
}

/// Every body in the world is finite.
pub fn all_bodies_finite(app: &mut App) -> bool {
    let world = app.world_mut();
    let mut q = world.query::<&Body>();
    q.iter(world)
        .all(|b| b.position.is_finite() && b.velocity.is_finite())
}

/// Asserts `|actual − expected| ≤ tol` component-wise.
#[track_caller]
pub fn assert_close(actual: Vec3, expected: Vec3, tol: f32, what: &str) {
    let err = (actual - expected).abs().max_element();
    assert!(
        err <= tol,
        "{what}: got {actual}, expected {expected} (error {err:e} > {tol:e})"
    );
}

/// Every `.rs` file below `dir` (the crate's sources, for the tests that
/// read them).
pub fn sources(dir: &std::path::Path, out: &mut Vec<std::path::PathBuf>) {
    for entry in std::fs::read_dir(dir).expect("src/ is readable") {
        let path = entry.expect("a directory entry").path();
        if path.is_dir() {
            sources(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// A small deterministic generator (64-bit LCG), so that runs make the
/// same random edits.
#[derive(Resource)]
pub struct Dice(pub u64);

impl Dice {
    pub fn next(&mut self) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        self.0 >> 33
    }

    /// A number in `0..n`.
    pub fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }

    /// True `percent` times in a hundred.
    pub fn chance(&mut self, percent: u64) -> bool {
        self.next() % 100 < percent
    }
}

/// In a child process of [`child_hash`]: sets up the compute pool with
/// `EULER_THREADS` threads (before any app's `TaskPoolPlugin` does) and
/// returns `EULER_PARALLEL_THRESHOLD`.
pub fn child_pool() -> usize {
    let threads: usize = std::env::var("EULER_THREADS").unwrap().parse().unwrap();
    let pool = bevy::tasks::ComputeTaskPool::get_or_init(|| {
        bevy::tasks::TaskPoolBuilder::new()
            .num_threads(threads)
            .build()
    });
    assert_eq!(pool.thread_num(), threads);
    std::env::var("EULER_PARALLEL_THRESHOLD")
        .unwrap()
        .parse()
        .unwrap()
}

/// Runs the ignored test `name` of this test binary in a child process with
/// `threads` compute threads, `threshold` as the parallel threshold and
/// `env` set, and returns the hash it printed after `STATE_HASH=`.
pub fn child_hash(name: &str, threads: usize, threshold: usize, env: &[(&str, &str)]) -> String {
    let out = std::process::Command::new(std::env::current_exe().unwrap())
        .args([
            name,
            "--exact",
            "--ignored",
            "--nocapture",
            "--test-threads=1",
        ])
        .env("EULER_THREADS", threads.to_string())
        .env("EULER_PARALLEL_THRESHOLD", threshold.to_string())
        .envs(env.iter().copied())
        .output()
        .expect("run the child test");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "child failed:\n{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    stdout
        .lines()
        .find_map(|l| l.split_once("STATE_HASH=").map(|(_, hash)| hash.to_owned()))
        .unwrap_or_else(|| panic!("no hash in child output:\n{stdout}"))
}

/// A hash of every body's entity, position and velocity bits, in entity
/// order: equal for runs that reached the same state.
pub fn hash_bodies(app: &mut App) -> u64 {
    use std::hash::{DefaultHasher, Hash, Hasher};
    let world = app.world_mut();
    let mut all: Vec<(Entity, Body)> = world
        .query::<(Entity, &Body)>()
        .iter(world)
        .map(|(e, b)| (e, *b))
        .collect();
    all.sort_by_key(|(e, _)| *e);
    let mut hasher = DefaultHasher::new();
    for (e, b) in all {
        e.hash(&mut hasher);
        for x in b
            .position
            .to_array()
            .into_iter()
            .chain(b.velocity.to_array())
        {
            x.to_bits().hash(&mut hasher);
        }
    }
    hasher.finish()
}

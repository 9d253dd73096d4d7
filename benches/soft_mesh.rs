//! Soft meshes: drawing a cloth into its mesh against a plain loop that
//! writes the same into `Vec`s, and the cost of a build per vertex at two
//! sizes.
//!
//! `cargo bench --bench soft_mesh` prints, as medians over interleaved
//! rounds on one thread:
//!
//! - the plugin's drawing of a 64×64 cloth (`Update`, on the
//!   single-threaded executor: the interpolation and
//!   `SoftMeshSystems::Draw`, which write each vertex's drawn position in
//!   the entity's frame and its smooth normal into the entity's mesh)
//!   over a plain loop doing the same from arrays of the bodies' last two
//!   positions into `Vec`s of positions and normals;
//! - the build of a 128×128 cloth per vertex over that of a 32×32 cloth
//!   (the weld, the topology, the bodies and springs spawned, the copy of
//!   the asset), each timed from the asset to the spawned parts.
//!
//! `cargo test --benches` runs it once, small.

mod common;

use std::hint::black_box;
use std::time::Instant;

use bevy::app::FixedMain;
use bevy::mesh::{Indices, Mesh, MeshPlugin};
use bevy::prelude::*;
use bevy_euler_physics::prelude::*;
use common::{median, time};

/// The plugin on one thread with Bevy's assets and meshes, and a square
/// cloth of `n × n` vertices (not yet built).
fn cloth_app(n: u32) -> (App, Entity) {
    let mut app = App::new();
    let mut pools = TaskPoolPlugin::default();
    pools.task_pool_options.compute.min_threads = 1;
    pools.task_pool_options.compute.max_threads = 1;
    app.add_plugins((
        MinimalPlugins.set(pools),
        AssetPlugin {
            watch_for_changes_override: Some(false),
            ..default()
        },
        MeshPlugin,
        TransformPlugin,
        EulerPhysicsPlugin,
    ));
    let mesh = Plane3d::new(Vec3::Y, Vec2::splat(1.0))
        .mesh()
        .subdivisions(n - 2)
        .build();
    let mesh = app.world_mut().resource_mut::<Assets<Mesh>>().add(mesh);
    let cloth = app
        .world_mut()
        .spawn((
            Mesh3d(mesh),
            Transform::from_xyz(0.0, 1.0, 0.0),
            SoftMesh::default().pin(PinSelect::Index(0)),
        ))
        .id();
    (app, cloth)
}

/// The reference: the drawing as a plain loop, from arrays of each body's
/// last two positions, into `Vec`s.
struct Plain {
    previous: Vec<Vec3>,
    current: Vec<Vec3>,
    /// Per vertex, its body.
    body_of: Vec<u32>,
    /// The triangles, over bodies.
    triangles: Vec<[u32; 3]>,
    inverse: bevy::math::Affine3A,
    local: Vec<Vec3>,
    normals: Vec<Vec3>,
    out_positions: Vec<[f32; 3]>,
    out_normals: Vec<[f32; 3]>,
}

impl Plain {
    /// The same cloth as the app's, read from it once it stepped.
    fn from_app(app: &mut App, cloth: Entity) -> Self {
        let world = app.world_mut();
        let parts = world.get::<SoftMeshParts>(cloth).unwrap().clone();
        let handle = world.get::<Mesh3d>(cloth).unwrap().0.clone();
        let mesh = world.resource::<Assets<Mesh>>().get(&handle).unwrap();
        let Some(Indices::U32(indices)) = mesh.indices() else {
            panic!("u32 indices");
        };
        let vertices = mesh.count_vertices();
        let body_index = |v: usize| {
            let body = parts.body_of(v).unwrap();
            parts.bodies.iter().position(|&b| b == body).unwrap() as u32
        };
        let body_of: Vec<u32> = (0..vertices).map(body_index).collect();
        let triangles = indices
            .chunks_exact(3)
            .map(|t| [t[0], t[1], t[2]].map(|v| body_of[v as usize]))
            .collect();
        let current: Vec<Vec3> = parts
            .bodies
            .iter()
            .map(|&b| world.get::<Body>(b).unwrap().position)
            .collect();
        let previous = parts
            .bodies
            .iter()
            .map(|&b| world.get::<PositionHistory>(b).unwrap().previous())
            .collect();
        let inverse = world
            .get::<GlobalTransform>(cloth)
            .unwrap()
            .affine()
            .inverse();
        Plain {
            previous,
            local: vec![Vec3::ZERO; current.len()],
            normals: vec![Vec3::ZERO; current.len()],
            current,
            body_of,
            triangles,
            inverse,
            out_positions: vec![[0.0; 3]; vertices],
            out_normals: vec![[0.0; 3]; vertices],
        }
    }

    fn draw(&mut self, alpha: f32) {
        for ((local, &a), &b) in self.local.iter_mut().zip(&self.previous).zip(&self.current) {
            *local = self.inverse.transform_point3(a.lerp(b, alpha));
        }
        self.normals.fill(Vec3::ZERO);
        for &[i, j, k] in &self.triangles {
            let [a, b, c] = [i, j, k].map(|p| self.local[p as usize]);
            let n = (b - a).cross(c - a);
            for p in [i, j, k] {
                self.normals[p as usize] += n;
            }
        }
        for n in &mut self.normals {
            *n = n.normalize_or(Vec3::Y);
        }
        for (v, &b) in self.body_of.iter().enumerate() {
            self.out_positions[v] = self.local[b as usize].to_array();
            self.out_normals[v] = self.normals[b as usize].to_array();
        }
    }
}

/// The drawing of an `n × n` cloth: plugin over plain loop.
fn drawing(smoke: bool) {
    let n = if smoke { 8 } else { 64 };
    let (mut app, cloth) = cloth_app(n);
    // `Update` holds the interpolation and the drawing alone here: run on
    // one thread without the multi-threaded executor's wake-ups, so that
    // the ratio is the drawing's.
    app.edit_schedule(Update, |schedule| {
        schedule.set_executor(bevy::ecs::schedule::SingleThreadedExecutor::new());
    });
    app.update();
    for _ in 0..3 {
        app.world_mut().run_schedule(FixedMain);
    }
    let mut plain = Plain::from_app(&mut app, cloth);
    let (rounds, runs) = if smoke { (1, 1) } else { (15, 50) };
    let mut ratios = Vec::new();
    let mut per_frame = Vec::new();
    for _ in 0..rounds {
        let p = time(runs, || app.world_mut().run_schedule(Update));
        let q = time(runs, || {
            plain.draw(0.5);
            black_box(&plain.out_positions);
            black_box(&plain.out_normals);
        });
        ratios.push(p / q);
        per_frame.push(p / runs as f64 * 1e3);
    }
    let (r, r0, r1) = median(ratios);
    let (ms, _, _) = median(per_frame);
    println!(
        "soft_mesh/draw {n}x{n}: median of {rounds} interleaved rounds of {runs} frames, one thread: \
         plugin (Update: interpolation and SoftMeshSystems::Draw) {ms:.3} ms a frame, \
         {r:.2}× ({r0:.2}–{r1:.2}) the plain loop writing the same positions and normals into Vecs"
    );
}

/// Seconds per vertex to build an `n × n` cloth, the median of `rounds`.
fn build_per_vertex(n: u32, rounds: usize) -> Vec<f64> {
    (0..rounds)
        .map(|_| {
            let (mut app, _) = cloth_app(n);
            let start = Instant::now();
            app.world_mut().run_schedule(PreUpdate);
            let seconds = start.elapsed().as_secs_f64();
            let world = app.world_mut();
            let built = world.query::<&SoftMeshParts>().single(world).unwrap();
            assert_eq!(built.bodies.len(), (n * n) as usize);
            seconds / f64::from(n * n)
        })
        .collect()
}

/// The build per vertex of a large cloth over a small one.
fn building(smoke: bool) {
    let (small, large) = if smoke { (4, 8) } else { (32, 128) };
    let rounds = if smoke { 1 } else { 9 };
    let mut ratios = Vec::new();
    let (mut at_small, mut at_large) = (Vec::new(), Vec::new());
    for _ in 0..rounds {
        let s = median(build_per_vertex(small, 3)).0;
        let l = median(build_per_vertex(large, 1)).0;
        ratios.push(l / s);
        at_small.push(s);
        at_large.push(l);
    }
    let (r, r0, r1) = median(ratios);
    println!(
        "soft_mesh/build: median of {rounds} interleaved rounds: {:.2} µs a vertex at {small}x{small}, \
         {:.2} µs at {large}x{large}: {r:.2}× ({r0:.2}–{r1:.2}) per vertex",
        median(at_small).0 * 1e6,
        median(at_large).0 * 1e6,
    );
}

fn main() {
    let smoke = !std::env::args().any(|a| a == "--bench");
    drawing(smoke);
    building(smoke);
}

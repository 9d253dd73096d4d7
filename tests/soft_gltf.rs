//! Soft meshes from glTF files through Bevy's loader: a cube of 24
//! vertices welds to 8 bodies, and a file changed on disk (the file
//! watcher's hot reload) rebuilds the soft mesh from the new content.

mod common;

#[allow(dead_code)]
#[path = "../examples/make_flag.rs"]
mod make_flag;

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use bevy::gltf::GltfPlugin;
use bevy::mesh::{Mesh, VertexAttributeValues};
use bevy::prelude::*;
use bevy::time::TimeUpdateStrategy;
use bevy_euler_physics::prelude::*;
use common::H;

/// A folder of its own for `test`'s files, emptied.
fn folder(test: &str) -> PathBuf {
    let dir =
        std::env::temp_dir().join(format!("bevy_euler_physics_{test}_{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("a temporary folder");
    dir
}

/// Bevy's cube (24 vertices: four per face, with the face's normal) of
/// side `size`, as a glTF file.
fn cube_gltf(size: f32) -> String {
    let mesh = Cuboid::from_length(size).mesh().build();
    let floats = |id| match mesh.attribute(id) {
        Some(VertexAttributeValues::Float32x3(v)) => v.iter().flatten().copied().collect(),
        _ => panic!("the cube has {id:?}"),
    };
    let indices: Vec<u32> = mesh.indices().unwrap().iter().map(|i| i as u32).collect();
    make_flag::gltf(
        "cube",
        "tests/soft_gltf.rs",
        &[
            ("POSITION", 3, floats(Mesh::ATTRIBUTE_POSITION)),
            ("NORMAL", 3, floats(Mesh::ATTRIBUTE_NORMAL)),
        ],
        &indices,
    )
}

/// A headless app with the asset server on `dir`, the glTF loader and the
/// plugin, watching `dir` for changes if `watch`.
fn gltf_app(dir: &Path, watch: bool) -> App {
    let mut app = App::new();
    app.add_plugins((
        MinimalPlugins,
        AssetPlugin {
            file_path: dir.to_string_lossy().into_owned(),
            watch_for_changes_override: Some(watch),
            ..default()
        },
        bevy::mesh::MeshPlugin,
        bevy::image::ImagePlugin::default(),
        GltfPlugin::default(),
        TransformPlugin,
        EulerPhysicsPlugin,
    ))
    .insert_resource(Time::<Fixed>::from_duration(Duration::from_secs_f32(H)))
    .insert_resource(TimeUpdateStrategy::FixedTimesteps(1))
    // The loader makes a scene of the file's nodes too.
    .init_asset::<bevy::world_serialization::WorldAsset>();
    app.finish();
    app.cleanup();
    app.update();
    app
}

/// Runs frames until `done` holds, for at most `seconds` of wall time.
fn until(app: &mut App, seconds: f32, what: &str, mut done: impl FnMut(&mut App) -> bool) {
    let start = Instant::now();
    while !done(app) {
        assert!(
            start.elapsed().as_secs_f32() < seconds,
            "waited {seconds} s for {what}"
        );
        app.update();
        std::thread::sleep(Duration::from_millis(5));
    }
}

/// The cube's mesh loaded from `cube.gltf` and made soft on an entity,
/// once built.
fn soft_cube(app: &mut App) -> (Handle<Mesh>, Entity) {
    let handle: Handle<Mesh> = app
        .world()
        .resource::<AssetServer>()
        .load("cube.gltf#Mesh0/Primitive0");
    let cube = app
        .world_mut()
        .spawn((Mesh3d(handle.clone()), SoftMesh::default()))
        .id();
    until(app, 20.0, "the cube to load and be built", |app| {
        parts(app, cube).is_some()
    });
    (handle, cube)
}

fn parts(app: &App, entity: Entity) -> Option<SoftMeshParts> {
    app.world().get::<SoftMeshParts>(entity).cloned()
}

/// The largest distance between two of `bodies`.
fn span(app: &App, bodies: &[Entity]) -> f32 {
    let at: Vec<Vec3> = bodies
        .iter()
        .map(|&b| app.world().get::<Body>(b).unwrap().position)
        .collect();
    at.iter()
        .flat_map(|a| at.iter().map(move |b| a.distance(*b)))
        .fold(0.0, f32::max)
}

/// A cube loaded from a glTF file, 24 vertices in four per face, welds to
/// its 8 corners: 8 bodies, 12 edges plus 6 face diagonals, 3 vertices
/// drawn from each body.
#[test]
fn a_gltf_cube_of_24_vertices_welds_to_8_bodies() {
    let dir = folder("gltf_cube");
    std::fs::write(dir.join("cube.gltf"), cube_gltf(1.0)).unwrap();
    let mut app = gltf_app(&dir, false);
    let (handle, cube) = soft_cube(&mut app);
    let source = app.world().resource::<Assets<Mesh>>().get(&handle).unwrap();
    assert_eq!(source.count_vertices(), 24);
    let parts = parts(&app, cube).unwrap();
    assert_eq!(parts.bodies.len(), 8);
    assert_eq!(parts.edge_springs, 12 + 6);
    for &body in &parts.bodies {
        let drawn = (0..24).filter(|&v| parts.body_of(v) == Some(body)).count();
        assert_eq!(drawn, 3, "vertices drawn from {body}");
    }
    assert!((span(&app, &parts.bodies) - 3f32.sqrt()).abs() < 1e-4);
    let _ = std::fs::remove_dir_all(dir);
}

/// With Bevy's file watcher on, writing a bigger cube over the file
/// rebuilds the soft mesh: new bodies, as far apart as the new cube's
/// corners.
#[test]
fn a_gltf_file_changed_on_disk_rebuilds_the_soft_mesh() {
    let dir = folder("gltf_reload");
    let file = dir.join("cube.gltf");
    std::fs::write(&file, cube_gltf(1.0)).unwrap();
    let mut app = gltf_app(&dir, true);
    // Still in the air: the cube falls, its size stays.
    let (_, cube) = soft_cube(&mut app);
    let first = parts(&app, cube).unwrap().bodies;
    assert!(
        (span(&app, &first) - 3f32.sqrt()).abs() < 1e-3,
        "{}",
        span(&app, &first)
    );
    // The watcher may miss a write in the first moments after it starts.
    std::thread::sleep(Duration::from_millis(500));
    std::fs::write(&file, cube_gltf(2.0)).unwrap();
    until(
        &mut app,
        30.0,
        "the changed file to rebuild the cube",
        |app| parts(app, cube).is_some_and(|p| p.bodies != first),
    );
    let second = parts(&app, cube).unwrap().bodies;
    assert_eq!(second.len(), 8);
    assert!(
        (span(&app, &second) - 2.0 * 3f32.sqrt()).abs() < 1e-2,
        "{}",
        span(&app, &second)
    );
    // The old bodies are gone.
    assert!(first.iter().all(|&b| app.world().get_entity(b).is_err()));
    let _ = std::fs::remove_dir_all(dir);
}

//! Ropes drawn as meshes (`RopeMesh`): a tube's rings and a strip's pairs
//! of vertices against the interpolated bodies, a tube that does not
//! twist, a resting rope not rewritten, a rebuilt rope and a changed shape
//! made again, removal and despawn.

mod common;

use std::time::Duration;

use bevy::ecs::system::SystemState;
use bevy::mesh::{Mesh, VertexAttributeValues};
use bevy::prelude::*;
use bevy::time::TimeUpdateStrategy;
use bevy_euler_physics::prelude::*;
use common::*;

fn attribute(mesh: &Mesh, id: bevy::mesh::MeshVertexAttribute) -> Vec<Vec3> {
    match mesh.attribute(id) {
        Some(VertexAttributeValues::Float32x3(v)) => v.iter().map(|&p| Vec3::from(p)).collect(),
        _ => panic!("the mesh has {}", id.name),
    }
}

fn uvs(mesh: &Mesh) -> Vec<[f32; 2]> {
    match mesh.attribute(Mesh::ATTRIBUTE_UV_0) {
        Some(VertexAttributeValues::Float32x2(v)) => v.clone(),
        _ => panic!("the mesh has UVs"),
    }
}

fn mesh_of(app: &App, handle: &Handle<Mesh>) -> Mesh {
    app.world()
        .resource::<Assets<Mesh>>()
        .get(handle)
        .expect("the rope's mesh exists")
        .clone()
}

/// Each body's drawn position, and the fraction the bodies are drawn at.
fn drawn(app: &mut App, bodies: &[Entity]) -> (Vec<Vec3>, f32) {
    let mut state = SystemState::<DrawnPositions>::new(app.world_mut());
    let drawn = state.get(app.world()).unwrap();
    let points = bodies.iter().map(|&b| drawn.get(b).unwrap()).collect();
    (points, drawn.alpha())
}

/// A mesh's positions and normals, from `frame`'s coordinates into the
/// world's.
fn in_world(mesh: &Mesh, frame: Transform) -> (Vec<Vec3>, Vec<Vec3>) {
    let frame = GlobalTransform::from(frame).affine();
    let normal_matrix = frame.matrix3.inverse().transpose();
    let positions = attribute(mesh, Mesh::ATTRIBUTE_POSITION)
        .into_iter()
        .map(|p| frame.transform_point3(p))
        .collect();
    let normals = attribute(mesh, Mesh::ATTRIBUTE_NORMAL)
        .into_iter()
        .map(|n| Vec3::from(normal_matrix * Vec3A::from(n)).normalize())
        .collect();
    (positions, normals)
}

/// The direction of the polyline at each point: the normalised sum of the
/// unit vectors of its segments on either side.
fn directions(points: &[Vec3]) -> Vec<Vec3> {
    (0..points.len())
        .map(|i| {
            let before = if i > 0 {
                (points[i] - points[i - 1]).normalize()
            } else {
                Vec3::ZERO
            };
            let after = points
                .get(i + 1)
                .map_or(Vec3::ZERO, |&q| (q - points[i]).normalize());
            (before + after).normalize()
        })
        .collect()
}

/// A rope of `links` links, 1 m long, laid level at 2 m from a fixed end
/// to a free one.
fn level_rope(links: u32) -> Rope {
    Rope::new(
        RopeEnd::Fixed(Vec3::new(0.0, 2.0, 0.0)),
        RopeEnd::Free(Vec3::new(1.0, 2.0, 0.0)),
    )
    .with_segments(links)
}

fn rope_parts(app: &App, rope: Entity) -> RopeParts {
    app.world().get::<RopeParts>(rope).unwrap().clone()
}

/// A tube drawn with frames of one and a half steps, on a moved, turned
/// and scaled entity: each body has a ring of `sides + 1` vertices (the
/// last on the first) centred, in the world, on its drawn position, at the
/// radius in metres, square to the rope,
/// with outward normals; from ring to ring the tube turns no more than
/// the rope does (it does not twist); `v` grows with the length laid out.
#[test]
fn a_tube_is_drawn_around_the_interpolated_bodies() {
    let mut app = mesh_app();
    app.insert_resource(TimeUpdateStrategy::ManualDuration(Duration::from_secs_f32(
        1.5 * H,
    )));
    let (radius, sides) = (0.05, 6usize);
    let frame = Transform::from_xyz(0.5, -1.0, 2.0)
        .with_rotation(Quat::from_rotation_y(0.7))
        .with_scale(Vec3::splat(2.0));
    let rope = spawn(
        &mut app,
        (
            Rope::new(
                RopeEnd::Fixed(Vec3::new(0.0, 2.0, 0.0)),
                RopeEnd::Free(Vec3::new(1.5, 2.0, 0.5)),
            )
            .with_segments(12),
            RopeMesh::Tube {
                radius,
                sides: sides as u32,
            },
            frame,
        ),
    );
    app.update();
    let bodies = rope_parts(&app, rope).bodies;
    let handle = app.world().get::<Mesh3d>(rope).expect("a Mesh3d").0.clone();
    let ring = sides + 1;
    let mesh = mesh_of(&app, &handle);
    assert_eq!(mesh.count_vertices(), bodies.len() * ring);
    // Laid out straight: 12 links of 1/12 of the length, in units of the
    // tube's circumference.
    let link = Vec3::new(1.5, 0.0, 0.5).length() / 12.0;
    let uv = uvs(&mesh);
    for i in 1..bodies.len() {
        let dv = uv[i * ring][1] - uv[(i - 1) * ring][1];
        let want = link / (core::f32::consts::TAU * radius);
        assert!(
            (dv - want).abs() < 1e-4,
            "v from ring {i}: {dv} against {want}"
        );
    }
    let mut alphas = Vec::new();
    for _ in 0..24 {
        app.update();
        let (points, alpha) = drawn(&mut app, &bodies);
        alphas.push(alpha);
        let (positions, normals) = in_world(&mesh_of(&app, &handle), frame);
        let along = directions(&points);
        let mut side_before: Option<Vec3> = None;
        for (i, (&centre, &direction)) in points.iter().zip(&along).enumerate() {
            let rim = &positions[i * ring..(i + 1) * ring];
            let mean = rim[..sides].iter().sum::<Vec3>() / sides as f32;
            assert!(
                (mean - centre).length() < 2e-5,
                "ring {i} centred at {mean}, body drawn at {centre}"
            );
            assert_eq!(rim[0], rim[sides], "ring {i}'s seam");
            for (j, &v) in rim.iter().enumerate() {
                let out = v - centre;
                assert!(
                    (out.length() - radius).abs() < 2e-5,
                    "ring {i} vertex {j}: {}",
                    out.length()
                );
                assert!(
                    out.dot(direction).abs() < 2e-5,
                    "ring {i} square to the rope"
                );
                let normal = normals[i * ring + j];
                assert!(
                    (normal - out / radius).length() < 1e-4,
                    "ring {i} normal {j}"
                );
            }
            // Parallel transport: the side turns by the angle between the
            // directions, no more.
            let side = (rim[0] - centre).normalize();
            if let Some(before) = side_before {
                let turn = along[i - 1].angle_between(direction);
                let twist = before.angle_between(side);
                assert!(
                    twist <= turn + 1e-3,
                    "ring {i} turned by {twist} where the rope turns by {turn}"
                );
            }
            side_before = Some(side);
        }
    }
    assert!(alphas.iter().any(|&a| a > 0.1 && a < 0.9), "{alphas:?}");
}

/// A strip in a 2D scene: per body a pair of vertices, to the left and the
/// right of the rope seen from `+Z`, half the width from the drawn
/// position, with `+Z` normals.
#[test]
fn a_strip_is_drawn_along_the_interpolated_bodies() {
    let mut app = mesh_app();
    app.insert_resource(TimeUpdateStrategy::ManualDuration(Duration::from_secs_f32(
        1.5 * H,
    )));
    let width = 0.1;
    let rope = spawn(
        &mut app,
        (
            Rope::new(
                RopeEnd::Fixed(Vec3::new(0.0, 2.0, 0.0)),
                RopeEnd::Free(Vec3::new(1.0, 1.0, 0.0)),
            )
            .with_segments(10),
            RopeMesh::strip(width),
        ),
    );
    app.update();
    let bodies = rope_parts(&app, rope).bodies;
    let handle = app.world().get::<Mesh2d>(rope).expect("a Mesh2d").0.clone();
    assert!(app.world().get::<Mesh3d>(rope).is_none());
    for _ in 0..24 {
        app.update();
        let (points, _) = drawn(&mut app, &bodies);
        let mesh = mesh_of(&app, &handle);
        let (positions, normals) = (
            attribute(&mesh, Mesh::ATTRIBUTE_POSITION),
            attribute(&mesh, Mesh::ATTRIBUTE_NORMAL),
        );
        assert_eq!(positions.len(), 2 * bodies.len());
        for (i, (&centre, &direction)) in points.iter().zip(&directions(&points)).enumerate() {
            let (left, right) = (positions[2 * i], positions[2 * i + 1]);
            assert!(((left + right) / 2.0 - centre).length() < 1e-5, "pair {i}");
            assert!(((left - right).length() - width).abs() < 1e-5, "pair {i}");
            assert!((left - right).dot(direction).abs() < 1e-5, "pair {i}");
            assert!(direction.cross(left - centre).z > 0.0, "pair {i}: left");
            assert_eq!((left.z, right.z), (centre.z, centre.z));
            assert_eq!((normals[2 * i], normals[2 * i + 1]), (Vec3::Z, Vec3::Z));
        }
    }
}

/// A rope whose bodies all sleep is not rewritten; a push wakes it and it
/// is drawn every frame again.
#[test]
fn a_resting_rope_is_not_rewritten() {
    let mut app = mesh_app();
    count_mesh_changes(&mut app);
    let rope = spawn(
        &mut app,
        (
            Rope::new(
                RopeEnd::Fixed(Vec3::new(0.0, 2.0, 0.0)),
                RopeEnd::Fixed(Vec3::new(1.0, 2.0, 0.0)),
            )
            .with_length(1.2)
            .with_segments(8)
            .with_stretch(4.0, 1.0),
            RopeMesh::tube(0.02),
        ),
    );
    app.update();
    let bodies = rope_parts(&app, rope).bodies;
    for &b in &bodies {
        app.world_mut().entity_mut(b).insert(Damping(3.0));
    }
    let id = app.world().get::<Mesh3d>(rope).unwrap().0.id();
    let middle = bodies[4];
    let mut asleep = false;
    for _ in 0..64 * 20 {
        app.update();
        if app.world().get::<Sleeping>(middle).is_some() {
            asleep = true;
            break;
        }
    }
    assert!(asleep, "the rope fell asleep");
    app.update();
    let before = mesh_changes(&app, id);
    assert!(before > 0);
    step(&mut app, 30);
    assert_eq!(mesh_changes(&app, id), before, "rewritten while resting");
    body_mut(&mut app, middle).velocity = Vec3::Z;
    step(&mut app, 5);
    assert_eq!(mesh_changes(&app, id), before + 5);
}

/// A new `Rope` (another link count) and a new `RopeMesh` make the mesh
/// again; removing the `RopeMesh` takes the mesh away, and despawning a
/// drawn rope leaves no mesh asset behind.
#[test]
fn a_rebuilt_rope_and_a_new_shape_make_the_mesh_again() {
    let mut app = mesh_app();
    let meshes_before = app.world().resource::<Assets<Mesh>>().len();
    let rope = spawn(
        &mut app,
        (
            level_rope(6),
            RopeMesh::Tube {
                radius: 0.02,
                sides: 5,
            },
        ),
    );
    app.update();
    let vertices = |app: &App, handle: &Handle<Mesh>| mesh_of(app, handle).count_vertices();
    let first = app.world().get::<Mesh3d>(rope).unwrap().0.clone();
    assert_eq!(vertices(&app, &first), 7 * 6);
    app.world_mut().entity_mut(rope).insert(level_rope(3));
    app.update();
    let second = app.world().get::<Mesh3d>(rope).unwrap().0.clone();
    assert_eq!(vertices(&app, &second), 4 * 6);
    // A strip instead: a Mesh2d, and the tube's Mesh3d goes.
    app.world_mut()
        .entity_mut(rope)
        .insert(RopeMesh::strip(0.05));
    app.update();
    assert!(app.world().get::<Mesh3d>(rope).is_none());
    let strip = app.world().get::<Mesh2d>(rope).unwrap().0.clone();
    assert_eq!(vertices(&app, &strip), 4 * 2);
    drop((first, second, strip));
    app.world_mut().entity_mut(rope).remove::<RopeMesh>();
    app.update();
    assert!(app.world().get::<Mesh2d>(rope).is_none());
    app.update();
    assert_eq!(
        app.world().resource::<Assets<Mesh>>().len(),
        meshes_before,
        "the rope's meshes are freed"
    );
    // Drawn again, then despawned.
    app.world_mut()
        .entity_mut(rope)
        .insert(RopeMesh::tube(0.02));
    app.update();
    assert!(app.world().get::<Mesh3d>(rope).is_some());
    app.world_mut().entity_mut(rope).despawn();
    step(&mut app, 2);
    assert_eq!(app.world().resource::<Assets<Mesh>>().len(), meshes_before);
    assert_eq!(count::<Body>(&mut app), 0);
}

/// Bad sizes and too few sides are replaced by the defaults (a warning
/// says so): the tube is drawn at 2 cm with 8 sides, and nothing panics.
#[test]
fn bad_settings_are_replaced() {
    let mut app = mesh_app();
    let rope = spawn(
        &mut app,
        (
            level_rope(4),
            RopeMesh::Tube {
                radius: f32::NAN,
                sides: 2,
            },
        ),
    );
    step(&mut app, 3);
    let handle = app.world().get::<Mesh3d>(rope).unwrap().0.clone();
    let bodies = rope_parts(&app, rope).bodies;
    let (points, _) = drawn(&mut app, &bodies);
    let positions = attribute(&mesh_of(&app, &handle), Mesh::ATTRIBUTE_POSITION);
    assert_eq!(positions.len(), 5 * 9);
    assert!(((positions[9] - points[1]).length() - 0.02).abs() < 1e-5);
    let strip = spawn(
        &mut app,
        (
            Rope::new(RopeEnd::Fixed(Vec3::ZERO), RopeEnd::Free(Vec3::X)).with_segments(2),
            RopeMesh::strip(-1.0),
        ),
    );
    step(&mut app, 2);
    let handle = app.world().get::<Mesh2d>(strip).unwrap().0.clone();
    let positions = attribute(&mesh_of(&app, &handle), Mesh::ATTRIBUTE_POSITION);
    assert!(((positions[0] - positions[1]).length() - 0.02).abs() < 1e-5);
    // Too many sides: the default.
    let many = spawn(
        &mut app,
        (
            Rope::new(
                RopeEnd::Fixed(Vec3::Y),
                RopeEnd::Free(Vec3::new(1.0, 1.0, 0.0)),
            )
            .with_segments(2),
            RopeMesh::Tube {
                radius: 0.05,
                sides: u32::MAX,
            },
        ),
    );
    step(&mut app, 2);
    let handle = app.world().get::<Mesh3d>(many).unwrap().0.clone();
    assert_eq!(mesh_of(&app, &handle).count_vertices(), 3 * 9);
    // A rope that could not be spawned (its ends coincide) has no mesh.
    let none = spawn(
        &mut app,
        (
            Rope::new(RopeEnd::Fixed(Vec3::Z), RopeEnd::Free(Vec3::Z)),
            RopeMesh::tube(0.02),
        ),
    );
    step(&mut app, 2);
    assert!(rope_parts(&app, none).bodies.is_empty());
    assert!(app.world().get::<Mesh3d>(none).is_none());
    // The rope's first body despawned by the game: the rest is still
    // drawn, the missing body at its neighbour's place.
    let first = bodies[0];
    app.world_mut().entity_mut(first).despawn();
    step(&mut app, 3);
    let (points, _) = drawn(&mut app, &bodies[1..]);
    let handle = app.world().get::<Mesh3d>(rope).unwrap().0.clone();
    let positions = attribute(&mesh_of(&app, &handle), Mesh::ATTRIBUTE_POSITION);
    assert!(positions.iter().all(|p| p.is_finite()));
    let centre = |ring: usize| positions[ring * 9..ring * 9 + 8].iter().sum::<Vec3>() / 8.0;
    assert!((centre(0) - points[0]).length() < 1e-4, "{}", centre(0));
    assert!((centre(2) - points[1]).length() < 1e-4);
    assert!(all_bodies_finite(&mut app));
}

/// A tube's bounding box follows the rope (Bevy recomputes it from the
/// changed mesh), so culling does not hide a rope that fell: laid out
/// straight, then swinging down, its box reaches down to the lowest body, less
/// the radius.
#[test]
fn the_bounding_box_follows_the_rope() {
    let mut app = mesh_app();
    app.add_plugins(bevy::camera::visibility::VisibilityPlugin);
    let radius = 0.02;
    let rope = spawn(&mut app, (level_rope(8), RopeMesh::tube(radius)));
    step(&mut app, 3);
    let aabb = |app: &App| {
        *app.world()
            .get::<bevy::camera::primitives::Aabb>(rope)
            .expect("the rope has a bounding box")
    };
    let straight = aabb(&app);
    assert!(straight.half_extents.y < 0.1, "{straight:?}");
    step(&mut app, 120);
    let hanging = aabb(&app);
    let lowest = rope_parts(&app, rope)
        .bodies
        .iter()
        .map(|&b| body(&app, b).position.y)
        .fold(f32::INFINITY, f32::min);
    assert!(lowest < 1.5, "the rope fell: {lowest}");
    let bottom = hanging.center.y - hanging.half_extents.y;
    assert!(
        (bottom - (lowest - radius)).abs() < 0.05,
        "box bottom {bottom} against the lowest body {lowest}"
    );
}

//! The game's meshes made soft (`SoftMesh`): welding, springs and masses
//! from the topology, the drawn mesh against the interpolated bodies, a
//! sag that does not depend on the resolution, a pressure that keeps a
//! volume, despawn and rebuild, and bad input.

mod common;

use std::time::Duration;

use bevy::asset::RenderAssetUsages;
use bevy::mesh::{Indices, Mesh, PrimitiveTopology, VertexAttributeValues};
use bevy::prelude::*;
use bevy::time::TimeUpdateStrategy;
use bevy_euler_physics::diagnostics::MeshProblem;
use bevy_euler_physics::prelude::*;
use common::*;

fn add_mesh(app: &mut App, mesh: Mesh) -> Handle<Mesh> {
    app.world_mut().resource_mut::<Assets<Mesh>>().add(mesh)
}

fn parts(app: &App, entity: Entity) -> SoftMeshParts {
    app.world()
        .get::<SoftMeshParts>(entity)
        .expect("the soft mesh was built")
        .clone()
}

/// A square of side 1 m in the XZ plane (facing +Y), `n` vertices a side.
fn square(n: u32) -> Mesh {
    Plane3d::new(Vec3::Y, Vec2::splat(0.5))
        .mesh()
        .subdivisions(n - 2)
        .build()
}

/// The mesh's positions.
fn positions(mesh: &Mesh) -> Vec<Vec3> {
    match mesh.attribute(Mesh::ATTRIBUTE_POSITION) {
        Some(VertexAttributeValues::Float32x3(p)) => p.iter().map(|&p| Vec3::from(p)).collect(),
        other => panic!("positions: {other:?}"),
    }
}

fn drawn_mesh(app: &App, entity: Entity) -> Mesh {
    let handle = &app.world().get::<Mesh3d>(entity).unwrap().0;
    app.world()
        .resource::<Assets<Mesh>>()
        .get(handle)
        .unwrap()
        .clone()
}

fn total_mass(app: &App, parts: &SoftMeshParts) -> f32 {
    parts.bodies.iter().map(|&b| body(app, b).mass()).sum()
}

/// Bevy's cuboid repeats each corner on its three faces (24 vertices, a
/// normal and UV each), as a cube exported to glTF does: welded, 8
/// bodies, the 18 edges of its 12 triangles, and a bend across each.
#[test]
fn a_cube_of_24_vertices_welds_to_8_bodies() {
    let mut app = mesh_app();
    let cube = Cuboid::new(1.0, 1.0, 1.0).mesh().build();
    assert_eq!(cube.count_vertices(), 24);
    let handle = add_mesh(&mut app, cube);
    let e = spawn(
        &mut app,
        (
            Mesh3d(handle),
            SoftMesh::default().with_mass(SoftMass::Total(3.0)),
        ),
    );
    app.update();
    let parts = parts(&app, e);
    assert_eq!(parts.bodies.len(), 8);
    assert_eq!(parts.edge_springs, 18);
    // A bend across each of the 18 edges (the cube is closed), less those
    // whose opposite corners are joined already or repeat: at least the
    // 6 across the faces' diagonals, between the faces' other corners.
    let bends = parts.springs.len() - parts.edge_springs;
    assert!((6..=18).contains(&bends), "{bends}");
    assert!((total_mass(&app, &parts) - 3.0).abs() < 1e-5);
    // Every vertex maps to a body, the 24 onto 8, three to each.
    let mut per_body = vec![0; 8];
    for v in 0..24 {
        let b = parts.body_of(v).unwrap();
        per_body[parts.bodies.iter().position(|&x| x == b).unwrap()] += 1;
    }
    assert_eq!(per_body, vec![3; 8]);
    assert!(
        warnings_for(&app, e).is_empty(),
        "{:?}",
        warnings_for(&app, e)
    );
}

/// A plane of `n × n` vertices: `2·m·(m+1)` sides and `m²` diagonals
/// (`m = n − 1` quads a side), a bend across every edge not on the
/// border, and masses that sum to the total (or to the density times the
/// area).
#[test]
fn a_subdivided_plane_has_the_springs_of_its_topology() {
    for n in [4u32, 9] {
        let mut app = mesh_app();
        let handle = add_mesh(&mut app, square(n));
        let total = spawn(&mut app, (Mesh3d(handle.clone()), SoftMesh::default()));
        let dense = spawn(
            &mut app,
            (
                Mesh3d(handle),
                Transform::from_scale(Vec3::splat(2.0)),
                SoftMesh::default().with_mass(SoftMass::PerSquareMetre(0.3)),
            ),
        );
        app.update();
        let m = n as usize - 1;
        let edges = 2 * m * (m + 1) + m * m;
        for e in [total, dense] {
            let parts = parts(&app, e);
            assert_eq!(parts.bodies.len(), (n * n) as usize);
            assert_eq!(parts.edge_springs, edges);
            assert_eq!(parts.springs.len() - parts.edge_springs, edges - 4 * m);
        }
        assert!((total_mass(&app, &parts(&app, total)) - 1.0).abs() < 1e-5);
        // 4 m² at 0.3 kg/m².
        assert!((total_mass(&app, &parts(&app, dense)) - 1.2).abs() < 1e-5);
    }
}

/// The mesh drawn each frame holds, at every vertex (each duplicate of a
/// welded one included), its body's drawn position in the entity's frame,
/// bit for bit; its normals are those recomputed from the drawn positions;
/// two entities made soft from one asset have their own copies.
#[test]
fn the_drawn_mesh_is_the_interpolated_bodies() {
    let mut app = mesh_app();
    // Frames of one and a half steps: the bodies are drawn between steps.
    app.insert_resource(TimeUpdateStrategy::ManualDuration(Duration::from_secs_f32(
        1.5 * H,
    )));
    let handle = add_mesh(&mut app, Sphere::new(0.5).mesh().uv(12, 8));
    let frame = Transform::from_xyz(1.0, 2.0, 3.0)
        .with_rotation(Quat::from_rotation_z(0.4))
        .with_scale(Vec3::new(1.0, 2.0, 1.5));
    let soft = SoftMesh::default().with_pressure(500.0);
    let a = spawn(&mut app, (Mesh3d(handle.clone()), frame, soft.clone()));
    let b = spawn(
        &mut app,
        (
            Mesh3d(handle.clone()),
            Transform::from_xyz(5.0, 0.0, 0.0),
            soft,
        ),
    );
    let mut alphas = Vec::new();
    for _ in 0..20 {
        app.update();
        let parts = parts(&app, a);
        let drawn = drawn_mesh(&app, a);
        let global = app.world().get::<GlobalTransform>(a).copied().unwrap();
        let inverse = GlobalTransform::from(frame).affine().inverse();
        assert_eq!(global.affine(), GlobalTransform::from(frame).affine());
        let mut state = bevy::ecs::system::SystemState::<DrawnPositions>::new(app.world_mut());
        let positions_now = positions(&drawn);
        let drawn_positions = state.get(app.world()).unwrap();
        alphas.push(drawn_positions.alpha());
        for (v, p) in positions_now.iter().enumerate() {
            let body = parts.body_of(v).unwrap();
            let want = inverse.transform_point3(drawn_positions.get(body).unwrap());
            assert_eq!(p.to_array(), want.to_array(), "vertex {v}");
        }
        // Normals from the drawn positions: each body's triangles' area
        // normals summed over every duplicate's triangles, normalised.
        let Some(Indices::U32(indices)) = drawn.indices().cloned() else {
            panic!("u32 indices");
        };
        let mut sums: Vec<Vec3> = vec![Vec3::ZERO; parts.bodies.len()];
        let index_of = |v: usize| {
            let body = parts.body_of(v).unwrap();
            parts.bodies.iter().position(|&x| x == body).unwrap()
        };
        for t in indices.chunks_exact(3) {
            let [i, j, k] = [t[0], t[1], t[2]].map(|v| v as usize);
            let n =
                (positions_now[j] - positions_now[i]).cross(positions_now[k] - positions_now[i]);
            let bodies = [index_of(i), index_of(j), index_of(k)];
            if bodies[0] == bodies[1] || bodies[1] == bodies[2] || bodies[0] == bodies[2] {
                continue;
            }
            for b in bodies {
                sums[b] += n;
            }
        }
        let Some(VertexAttributeValues::Float32x3(normals)) =
            drawn.attribute(Mesh::ATTRIBUTE_NORMAL)
        else {
            panic!("normals");
        };
        for (v, n) in normals.iter().enumerate() {
            let want = sums[index_of(v)].normalize();
            assert!(
                (Vec3::from(*n) - want).length() < 1e-5,
                "vertex {v}: {n:?} against {want}"
            );
        }
    }
    // Frames fell between steps, or the check would not see interpolation.
    assert!(alphas.iter().any(|&a| a > 0.1 && a < 0.9), "{alphas:?}");
    let (copy_a, copy_b) = (
        app.world().get::<Mesh3d>(a).unwrap().0.id(),
        app.world().get::<Mesh3d>(b).unwrap().0.id(),
    );
    assert!(copy_a != copy_b && copy_a != handle.id() && copy_b != handle.id());
    // The asset itself is as it was.
    let source = app
        .world()
        .resource::<Assets<Mesh>>()
        .get(&handle)
        .unwrap()
        .clone();
    assert_eq!(
        positions(&source),
        positions(&Sphere::new(0.5).mesh().uv(12, 8))
    );
}

/// The height of the centre of mass of a square cloth hung by two
/// adjacent corners, below them, once it has settled.
fn hanging_sag(n: u32) -> f32 {
    let mut app = mesh_app();
    let handle = add_mesh(&mut app, square(n));
    let cloth = spawn(
        &mut app,
        (
            Mesh3d(handle),
            Transform::from_xyz(0.0, 2.0, 0.0),
            SoftMesh::default()
                .with_mass(SoftMass::Total(0.5))
                .with_stretch(6.0, 0.5)
                // Air drag, so that the swing settles.
                .with_drag(3.0)
                .pin(PinSelect::Where(PinTest(|p| {
                    p.z < -0.49 && p.x.abs() > 0.49
                }))),
        ),
    );
    app.update();
    let parts = parts(&app, cloth);
    step(&mut app, 64 * 6);
    let (mut weighted, mut mass) = (0.0, 0.0);
    for &b in &parts.bodies {
        let body = body(&app, b);
        if !body.is_fixed() {
            weighted += body.mass() * body.position.y;
            mass += body.mass();
        }
        assert!(body.position.is_finite());
    }
    assert!(
        warnings_for(&app, cloth).is_empty(),
        "{:?}",
        warnings_for(&app, cloth)
    );
    2.0 - weighted / mass
}

/// The same cloth at 16², 32² and 64² vertices sags alike (within 5 %).
#[test]
fn a_hanging_cloth_sags_alike_at_every_resolution() {
    let sags: Vec<f32> = [16, 32, 64].into_iter().map(hanging_sag).collect();
    eprintln!("SAGS {sags:?}");
    // It hangs down: about half its side below the corners.
    assert!(sags[0] > 0.3 && sags[0] < 0.7, "{sags:?}");
    for s in &sags[1..] {
        assert!((s / sags[0] - 1.0).abs() < 0.05, "{sags:?}");
    }
}

/// The volume of the bodies' closed surface, from the mesh's triangles.
fn enclosed_volume(app: &App, entity: Entity, mesh: &Mesh) -> f32 {
    let parts = parts(app, entity);
    let indices: Vec<usize> = mesh.indices().unwrap().iter().collect();
    let at = |v: usize| body(app, parts.body_of(v).unwrap()).position;
    indices
        .chunks_exact(3)
        .map(|t| at(t[0]).dot(at(t[1]).cross(at(t[2]))))
        .sum::<f32>()
        / 6.0
}

/// A closed sphere with a pressure, dropped on the ground, rests there
/// keeping its volume within 5 %; without a pressure it does not.
#[test]
fn a_pressed_sphere_keeps_its_volume_on_the_ground() {
    let mut volumes = Vec::new();
    // (ω·h of the breathing mode: 1.86 at 1500 Pa, within the limit.)
    for pressure in [Some(1500.0), None] {
        let mut app = mesh_app();
        spawn(&mut app, GroundPlane::horizontal(0.0));
        let sphere = Sphere::new(0.25).mesh().ico(3).unwrap();
        let handle = add_mesh(&mut app, sphere.clone());
        let mut soft = SoftMesh::default()
            .with_mass(SoftMass::Total(1.0))
            .with_stretch(2.0, 0.5)
            .with_bend(0.0)
            .with_radius(0.02);
        soft.pressure = pressure;
        let e = spawn(
            &mut app,
            (Mesh3d(handle), Transform::from_xyz(0.0, 0.5, 0.0), soft),
        );
        app.update();
        assert!(
            warnings_for(&app, e).is_empty(),
            "{:?}",
            warnings_for(&app, e)
        );
        let rest = enclosed_volume(&app, e, &sphere);
        step(&mut app, 64 * 4);
        let now = enclosed_volume(&app, e, &sphere);
        let lowest = parts(&app, e)
            .bodies
            .iter()
            .map(|&b| body(&app, b).position.y)
            .fold(f32::INFINITY, f32::min);
        // On the ground, not through it.
        assert!(lowest > 0.0 && lowest < 0.05, "lowest body at {lowest}");
        assert!(all_bodies_finite(&mut app));
        volumes.push(now / rest);
    }
    eprintln!("VOLUMES {volumes:?}");
    assert!((volumes[0] - 1.0).abs() < 0.05, "{volumes:?}");
    assert!(volumes[1] < 0.9, "{volumes:?}");
}

/// Despawning the entity despawns its bodies and springs; taking the
/// `SoftMesh` off despawns them and draws the asset again; a changed asset
/// rebuilds the mesh.
#[test]
fn despawn_removal_and_a_changed_asset() {
    let mut app = mesh_app();
    let handle = add_mesh(&mut app, square(5));
    let a = spawn(&mut app, (Mesh3d(handle.clone()), SoftMesh::default()));
    let b = spawn(&mut app, (Mesh3d(handle.clone()), SoftMesh::default()));
    app.update();
    assert_eq!(count::<Body>(&mut app), 50);
    assert_eq!(count::<Spring>(&mut app), 2 * parts(&app, a).springs.len());
    app.world_mut().despawn(a);
    step(&mut app, 2);
    assert_eq!(count::<Body>(&mut app), 25);
    app.world_mut().entity_mut(b).remove::<SoftMesh>();
    step(&mut app, 2);
    assert_eq!(count::<Body>(&mut app), 0);
    assert_eq!(count::<Spring>(&mut app), 0);
    assert_eq!(app.world().get::<Mesh3d>(b).unwrap().0, handle);
    assert!(app.world().get::<SoftMeshParts>(b).is_none());
    // Soft again, then the asset changes: rebuilt from the new one.
    app.world_mut().entity_mut(b).insert(SoftMesh::default());
    app.update();
    assert_eq!(parts(&app, b).bodies.len(), 25);
    *app.world_mut()
        .resource_mut::<Assets<Mesh>>()
        .get_mut(&handle)
        .unwrap() = square(7);
    step(&mut app, 2);
    assert_eq!(parts(&app, b).bodies.len(), 49);
    assert_eq!(count::<Body>(&mut app), 49);
    // A new `SoftMesh` replaces the parts.
    app.world_mut()
        .entity_mut(b)
        .insert(SoftMesh::default().pin(PinSelect::Index(0)));
    step(&mut app, 2);
    assert_eq!(count::<Body>(&mut app), 49);
    let parts = parts(&app, b);
    assert!(body(&app, parts.body_of(0).unwrap()).is_fixed());
    assert!(warnings(&app).is_empty(), "{:?}", warnings(&app));
}

/// A triangle list mesh from positions and indices.
fn raw_mesh(positions: Vec<[f32; 3]>, indices: Vec<u32>) -> Mesh {
    Mesh::new(
        PrimitiveTopology::TriangleList,
        RenderAssetUsages::default(),
    )
    .with_inserted_attribute(Mesh::ATTRIBUTE_POSITION, positions)
    .with_inserted_indices(Indices::U32(indices))
}

/// Each bad input is reported once, naming the entity and the problem,
/// without a panic; the bad part is left out, and a good mesh beside the
/// bad ones steps as it does alone, bit for bit.
#[test]
fn bad_meshes_are_reported_once_and_affect_nothing_else() {
    let quad = || {
        vec![
            [0.0, 0.0, 0.0],
            [1.0, 0.0, 0.0],
            [1.0, 0.0, 1.0],
            [0.0, 0.0, 1.0],
        ]
    };
    let quad_indices = || vec![0, 3, 2, 0, 2, 1];
    let mut nan = quad();
    nan.push([f32::NAN, 0.0, 0.0]);
    let mut three = quad();
    three.push([0.5, 1.0, 0.5]);
    type Case = (&'static str, Mesh, SoftMesh, Option<MeshProblem>, usize);
    let cases: Vec<Case> = vec![
        (
            "no positions",
            Mesh::new(
                PrimitiveTopology::TriangleList,
                RenderAssetUsages::default(),
            ),
            SoftMesh::default(),
            Some(MeshProblem::NoPositions),
            0,
        ),
        (
            "lines",
            Mesh::new(PrimitiveTopology::LineList, RenderAssetUsages::default())
                .with_inserted_attribute(Mesh::ATTRIBUTE_POSITION, quad()),
            SoftMesh::default(),
            Some(MeshProblem::NotTriangles),
            0,
        ),
        (
            "empty",
            raw_mesh(vec![], vec![]),
            SoftMesh::default(),
            Some(MeshProblem::Empty),
            0,
        ),
        (
            "degenerate",
            raw_mesh(quad(), [quad_indices(), vec![0, 0, 1, 0, 1, 1]].concat()),
            SoftMesh::default(),
            Some(MeshProblem::DegenerateTriangles { count: 2 }),
            4,
        ),
        (
            "NaN vertex",
            raw_mesh(nan, [quad_indices(), vec![0, 4, 1]].concat()),
            SoftMesh::default(),
            Some(MeshProblem::NonFiniteVertices { count: 1 }),
            4,
        ),
        (
            "edge on three triangles",
            raw_mesh(three, [quad_indices(), vec![0, 2, 4]].concat()),
            SoftMesh::default(),
            Some(MeshProblem::NonManifoldEdges { count: 1 }),
            5,
        ),
        (
            "pin out of range",
            raw_mesh(quad(), quad_indices()),
            SoftMesh::default().pin(PinSelect::Index(4)),
            Some(MeshProblem::PinOutOfRange {
                index: 4,
                vertices: 4,
            }),
            4,
        ),
        (
            "pin by colour without colours",
            raw_mesh(quad(), quad_indices()),
            SoftMesh::default().pin(PinSelect::Colour {
                colour: LinearRgba::RED,
                tolerance: 0.1,
            }),
            Some(MeshProblem::NoColours),
            4,
        ),
        (
            "zero mass",
            raw_mesh(quad(), quad_indices()),
            SoftMesh::default().with_mass(SoftMass::Total(0.0)),
            Some(MeshProblem::InvalidMass { mass: 0.0 }),
            0,
        ),
        (
            "negative density",
            raw_mesh(quad(), quad_indices()),
            SoftMesh::default().with_mass(SoftMass::PerSquareMetre(-1.0)),
            Some(MeshProblem::InvalidMass { mass: -1.0 }),
            0,
        ),
        (
            "pressure on an open mesh",
            raw_mesh(quad(), quad_indices()),
            SoftMesh::default().with_pressure(100.0),
            Some(MeshProblem::NotClosed),
            4,
        ),
        (
            "a pressure too stiff for the step on a coarse mesh",
            Cuboid::new(0.6, 0.6, 0.6).mesh().build(),
            SoftMesh::default().with_pressure(4000.0),
            Some(MeshProblem::StiffPressure { omega_h: 1.0 }),
            8,
        ),
        (
            "pressure on a closed mesh that encloses no volume",
            raw_mesh(
                vec![[0.0, 0.0, 0.0], [1.0, 0.0, 0.0], [0.0, 0.0, 1.0]],
                vec![0, 1, 2, 0, 2, 1],
            ),
            SoftMesh::default().with_pressure(100.0),
            Some(MeshProblem::NotClosed),
            3,
        ),
        (
            "a weld tolerance far below the positions' precision",
            raw_mesh(quad(), quad_indices()),
            SoftMesh {
                weld_tolerance: 1e-30,
                ..default()
            },
            None,
            4,
        ),
        (
            "NaN stiffness",
            raw_mesh(quad(), quad_indices()),
            SoftMesh::default().with_stretch(f32::NAN, 0.1),
            Some(MeshProblem::InvalidSetting { value: f32::NAN }),
            4,
        ),
    ];
    let good = |app: &mut App| {
        let handle = add_mesh(app, square(6));
        spawn(
            app,
            (
                Mesh3d(handle),
                SoftMesh::default()
                    .pin(PinSelect::Index(0))
                    .pin(PinSelect::Index(5)),
            ),
        )
    };
    let run_good = |app: &mut App, good: Entity| {
        step(app, 40);
        let parts = parts(app, good);
        parts
            .bodies
            .iter()
            .map(|&b| body(app, b))
            .collect::<Vec<_>>()
    };
    let mut alone = mesh_app();
    let e = good(&mut alone);
    let alone = run_good(&mut alone, e);
    for (what, mesh, soft, problem, bodies) in cases {
        let mut app = mesh_app();
        let e = good(&mut app);
        let handle = add_mesh(&mut app, mesh);
        let bad = spawn(&mut app, (Mesh3d(handle), soft));
        assert_eq!(
            run_good(&mut app, e),
            alone,
            "{what}: the good mesh changed"
        );
        let said = warnings_for(&app, bad);
        let want = problem.map(|problem| PhysicsIssue::SoftMesh { problem });
        let matches = |issue: &PhysicsIssue| match (issue, &want) {
            // NaN is not equal to itself.
            (
                PhysicsIssue::SoftMesh {
                    problem: MeshProblem::InvalidSetting { value },
                },
                Some(PhysicsIssue::SoftMesh {
                    problem: MeshProblem::InvalidSetting { .. },
                }),
            ) => value.is_nan(),
            (
                PhysicsIssue::SoftMesh {
                    problem: MeshProblem::StiffPressure { omega_h },
                },
                Some(PhysicsIssue::SoftMesh {
                    problem: MeshProblem::StiffPressure { .. },
                }),
            ) => *omega_h > 1.0,
            (issue, Some(want)) => issue == want,
            _ => false,
        };
        if want.is_none() {
            assert!(said.is_empty(), "{what}: {said:?}");
        } else {
            assert_eq!(said.len(), 1, "{what}: {said:?}");
            assert!(matches(&said[0]), "{what}: {said:?}");
        }
        let built = app
            .world()
            .get::<SoftMeshParts>(bad)
            .map_or(0, |p| p.bodies.len());
        assert_eq!(built, bodies, "{what}");
        assert!(all_bodies_finite(&mut app), "{what}");
    }
}

/// An asset that fails to load is reported once, and the entity keeps it.
#[test]
fn a_mesh_that_fails_to_load_is_reported_once() {
    let mut app = mesh_app();
    let handle: Handle<Mesh> = app
        .world()
        .resource::<AssetServer>()
        .load("no_such_mesh.nothing");
    let e = spawn(&mut app, (Mesh3d(handle.clone()), SoftMesh::default()));
    for _ in 0..50 {
        app.update();
        std::thread::sleep(Duration::from_millis(2));
    }
    let said = warnings_for(&app, e);
    assert_eq!(
        said,
        vec![PhysicsIssue::SoftMesh {
            problem: MeshProblem::LoadFailed
        }]
    );
    assert_eq!(app.world().get::<Mesh3d>(e).unwrap().0, handle);
    assert_eq!(count::<Body>(&mut app), 0);
}

/// A pin's target that is despawned leaves the pinned body fixed where it
/// was; pins by colour hold the vertices painted that colour, in the
/// target's frame.
#[test]
fn pins_by_colour_to_an_entity_and_a_target_despawned() {
    let mut app = mesh_app();
    let n = 5;
    let mut mesh = square(n);
    // Paint the first row red.
    let colours: Vec<[f32; 4]> = positions(&mesh)
        .iter()
        .map(|p| {
            if p.z < -0.49 {
                [1.0, 0.0, 0.0, 1.0]
            } else {
                [1.0; 4]
            }
        })
        .collect();
    mesh.insert_attribute(Mesh::ATTRIBUTE_COLOR, colours);
    let handle = add_mesh(&mut app, mesh);
    let pole = spawn(&mut app, Transform::from_xyz(0.0, 1.0, 0.0));
    let red = PinSelect::Colour {
        colour: LinearRgba::RED,
        tolerance: 0.01,
    };
    let e = spawn(
        &mut app,
        (
            Mesh3d(handle),
            Transform::from_xyz(0.0, 1.0, 0.0),
            SoftMesh::default().pin_to(red, pole),
        ),
    );
    app.update();
    let parts = parts(&app, e);
    let fixed: Vec<Entity> = parts
        .bodies
        .iter()
        .copied()
        .filter(|&b| body(&app, b).is_fixed())
        .collect();
    assert_eq!(fixed.len(), n as usize);
    let start: Vec<Vec3> = fixed.iter().map(|&b| body(&app, b).position).collect();
    assert!(
        start.iter().all(|p| (p.z + 0.5).abs() < 1e-6 && p.y == 1.0),
        "{start:?}"
    );
    // The pole moves: the pinned row with it.
    app.world_mut()
        .get_mut::<Transform>(pole)
        .unwrap()
        .translation
        .x = 0.5;
    step(&mut app, 2);
    let before: Vec<Vec3> = fixed.iter().map(|&b| body(&app, b).position).collect();
    for (now, start) in before.iter().zip(&start) {
        assert!(
            (*now - (*start + 0.5 * Vec3::X)).length() < 1e-5,
            "{now} from {start}"
        );
    }
    app.world_mut().despawn(pole);
    step(&mut app, 10);
    let after: Vec<Vec3> = fixed.iter().map(|&b| body(&app, b).position).collect();
    assert_eq!(before, after);
    assert!(fixed.iter().all(|&b| body(&app, b).velocity == Vec3::ZERO));
    assert!(all_bodies_finite(&mut app));
}

/// How many times the mesh `entity` draws was changed so far.
fn changes_of(app: &App, entity: Entity) -> usize {
    mesh_changes(app, app.world().get::<Mesh3d>(entity).unwrap().0.id())
}

/// A mesh whose bodies all sleep is not rewritten; moving its entity
/// rewrites it, and so does a wake.
#[test]
fn a_resting_mesh_is_not_rewritten() {
    let mut app = mesh_app();
    count_mesh_changes(&mut app);
    let handle = add_mesh(&mut app, square(5));
    let e = spawn(
        &mut app,
        (
            Mesh3d(handle),
            SoftMesh::default()
                .with_stretch(4.0, 1.0)
                .with_drag(2.0)
                .pin(PinSelect::Where(PinTest(|p| p.z < -0.49))),
        ),
    );
    app.update();
    let parts = parts(&app, e);
    let modified = |app: &App| changes_of(app, e);
    let mut slept_at = None;
    for frame in 0..64 * 20 {
        app.update();
        if app.world().get::<Sleeping>(parts.bodies[5]).is_some() {
            slept_at = Some(frame);
            break;
        }
    }
    assert!(slept_at.is_some(), "the cloth fell asleep");
    app.update();
    let before = modified(&app);
    step(&mut app, 30);
    assert_eq!(modified(&app), before, "rewritten while resting");
    // The entity moves (and its pins with it): drawn again.
    app.world_mut()
        .get_mut::<Transform>(e)
        .unwrap()
        .translation
        .x = 1.0;
    app.update();
    assert!(modified(&app) > before);
    let back = modified(&app);
    // Asleep again, and not rewritten again.
    step(&mut app, 64 * 20);
    assert!(app.world().get::<Sleeping>(parts.bodies[5]).is_some());
    let before = modified(&app);
    assert!(before > back);
    step(&mut app, 30);
    assert_eq!(modified(&app), before, "rewritten while resting");
    // A push wakes the cloth: drawn every frame again.
    body_mut(&mut app, parts.bodies[20]).velocity = Vec3::Y;
    let before = modified(&app);
    step(&mut app, 5);
    assert_eq!(modified(&app), before + 5);
}

/// The entity's bounding box follows its mesh (Bevy recomputes it from
/// the changed asset), so culling does not hide a cloth that fell.
#[test]
fn the_bounding_box_follows_the_mesh() {
    let mut app = mesh_app();
    app.add_plugins(bevy::camera::visibility::VisibilityPlugin);
    let handle = add_mesh(&mut app, square(6));
    let e = spawn(
        &mut app,
        (
            Mesh3d(handle),
            SoftMesh::default().pin(PinSelect::Where(PinTest(|p| p.z < -0.49))),
        ),
    );
    step(&mut app, 2);
    let flat = *app
        .world()
        .get::<bevy::camera::primitives::Aabb>(e)
        .unwrap();
    assert!(flat.half_extents.y < 0.05, "{flat:?}");
    step(&mut app, 120);
    let hanging = *app
        .world()
        .get::<bevy::camera::primitives::Aabb>(e)
        .unwrap();
    let lowest = parts(&app, e)
        .bodies
        .iter()
        .map(|&b| body(&app, b).position.y)
        .fold(f32::INFINITY, f32::min);
    assert!(lowest < -0.5, "the cloth hangs: {lowest}");
    let bottom = hanging.center.y - hanging.half_extents.y;
    assert!(
        (bottom - lowest).abs() < 0.05,
        "box bottom {bottom} against the lowest body {lowest}"
    );
}

/// A `Mesh2d` is made soft too: a strip hung from one end in the XY plane
/// stays in it.
#[test]
fn a_2d_mesh_is_made_soft() {
    let mut app = mesh_app();
    let strip = Rectangle::new(1.0, 0.2).mesh().build();
    let handle = add_mesh(&mut app, strip);
    let e = spawn(
        &mut app,
        (
            Mesh2d(handle.clone()),
            SoftMesh::default().pin(PinSelect::Where(PinTest(|p| p.x < -0.49))),
        ),
    );
    step(&mut app, 64);
    let parts = parts(&app, e);
    assert_eq!(parts.bodies.len(), 4);
    let copy = app.world().get::<Mesh2d>(e).unwrap().0.clone();
    assert_ne!(copy, handle);
    let mesh = app
        .world()
        .resource::<Assets<Mesh>>()
        .get(&copy)
        .unwrap()
        .clone();
    let drawn = positions(&mesh);
    assert!(drawn.iter().all(|p| p.z == 0.0));
    assert!(
        drawn.iter().any(|p| p.y < -0.2),
        "the free end fell: {drawn:?}"
    );
}

/// The hash of a scene of soft meshes (an implicit cloth on pins, a pressed
/// ball on the ground) after 120 steps.
fn soft_scene_hash(parallel_threshold: usize) -> u64 {
    let mut app = mesh_app();
    app.insert_resource(PhysicsSettings {
        parallel_threshold,
        ..default()
    });
    spawn(&mut app, GroundPlane::horizontal(0.0));
    let cloth = add_mesh(&mut app, square(40));
    spawn(
        &mut app,
        (
            Mesh3d(cloth),
            Transform::from_xyz(0.0, 1.5, 0.0),
            SoftMesh::default()
                .with_radius(0.01)
                .pin(PinSelect::Index(0))
                .pin(PinSelect::Index(39)),
        ),
    );
    let ball = add_mesh(&mut app, Sphere::new(0.3).mesh().ico(3).unwrap());
    spawn(
        &mut app,
        (
            Mesh3d(ball),
            Transform::from_xyz(0.2, 0.5, 0.1),
            SoftMesh::default().with_pressure(2000.0).with_radius(0.02),
        ),
    );
    step(&mut app, 120);
    assert!(count::<Body>(&mut app) > 1600);
    assert!(all_bodies_finite(&mut app));
    hash_bodies(&mut app)
}

/// Run in a child process: the hash with `EULER_THREADS` compute threads.
#[test]
#[ignore = "run by soft_meshes_step_alike_on_one_and_two_threads in a child process"]
fn soft_mesh_child() {
    let threshold = child_pool();
    println!("STATE_HASH={:016x}", soft_scene_hash(threshold));
}

fn child_hash(threads: usize, threshold: usize) -> String {
    common::child_hash("soft_mesh_child", threads, threshold, &[])
}

/// The same bits with one compute thread and two (the passes split from
/// the first body), and twice in a row.
#[test]
fn soft_meshes_step_alike_on_one_and_two_threads() {
    let serial = child_hash(1, usize::MAX);
    assert_eq!(serial, child_hash(1, usize::MAX), "a rerun");
    assert_eq!(serial, child_hash(1, 1), "1 thread, parallel path");
    assert_eq!(serial, child_hash(2, 1), "2 threads, parallel path");
}

/// The bodies of a soft mesh, once built.
fn bodies_of(app: &App, entity: Entity) -> Vec<Entity> {
    parts(app, entity).bodies
}

/// A change of the asset that the build already saw (made before it), or
/// one that leaves what it is built from as it was (tangents generated),
/// builds nothing again; a change of its positions does.
#[test]
fn only_a_change_of_the_content_rebuilds() {
    let mut app = mesh_app();
    let handle = add_mesh(&mut app, square(5));
    // Changed before the build: its event arrives after it.
    app.world_mut()
        .resource_mut::<Assets<Mesh>>()
        .get_mut(&handle)
        .unwrap();
    let e = spawn(&mut app, (Mesh3d(handle.clone()), SoftMesh::default()));
    app.update();
    let first = bodies_of(&app, e);
    step(&mut app, 3);
    assert_eq!(bodies_of(&app, e), first);
    // Tangents generated: positions, indices and colours as they were.
    app.world_mut()
        .resource_mut::<Assets<Mesh>>()
        .get_mut(&handle)
        .unwrap()
        .generate_tangents()
        .unwrap();
    step(&mut app, 3);
    assert_eq!(bodies_of(&app, e), first);
    // Positions moved: built anew.
    if let Some(VertexAttributeValues::Float32x3(p)) = app
        .world_mut()
        .resource_mut::<Assets<Mesh>>()
        .get_mut(&handle)
        .unwrap()
        .attribute_mut(Mesh::ATTRIBUTE_POSITION)
    {
        p[0][1] += 0.1;
    }
    step(&mut app, 3);
    assert_ne!(bodies_of(&app, e), first);
    assert_eq!(count::<Body>(&mut app), 25);
    assert!(warnings(&app).is_empty(), "{:?}", warnings(&app));
}

/// An entity at a scale of zero (popping in) is built once its transform
/// can be inverted.
#[test]
fn a_mesh_at_zero_scale_is_built_when_it_grows() {
    let mut app = mesh_app();
    let handle = add_mesh(&mut app, square(4));
    let e = spawn(
        &mut app,
        (
            Mesh3d(handle),
            Transform::from_scale(Vec3::ZERO),
            SoftMesh::default(),
        ),
    );
    step(&mut app, 3);
    assert!(app.world().get::<SoftMeshParts>(e).is_none());
    app.world_mut().get_mut::<Transform>(e).unwrap().scale = Vec3::ONE;
    app.update();
    assert_eq!(parts(&app, e).bodies.len(), 16);
    assert!(warnings(&app).is_empty(), "{:?}", warnings(&app));
}

/// A mesh pinned everywhere (its bodies fixed, never asleep) is drawn
/// once, and again only when a pin moves it.
#[test]
fn a_mesh_of_still_pins_is_not_rewritten() {
    let mut app = mesh_app();
    count_mesh_changes(&mut app);
    let handle = add_mesh(&mut app, square(4));
    let e = spawn(
        &mut app,
        (
            Mesh3d(handle),
            SoftMesh::default().pin(PinSelect::Where(PinTest(|_| true))),
        ),
    );
    step(&mut app, 3);
    let modified = |app: &App| changes_of(app, e);
    let before = modified(&app);
    step(&mut app, 5);
    assert_eq!(modified(&app), before, "rewritten while still");
    app.world_mut()
        .get_mut::<Transform>(e)
        .unwrap()
        .translation
        .x = 1.0;
    step(&mut app, 2);
    assert!(modified(&app) > before, "a moved pin redraws it");
}

/// A mesh with tangents gets them drawn: on a hanging, folding cloth,
/// each vertex's tangent is a unit vector square to its normal, pointing
/// as the tangents Bevy generates (MikkTSpace) from the drawn positions,
/// normals and UVs do, with the same handedness.
#[test]
fn tangents_follow_the_drawn_surface() {
    let mut app = mesh_app();
    let mut mesh = square(9);
    mesh.generate_tangents().unwrap();
    let handle = add_mesh(&mut app, mesh);
    let e = spawn(
        &mut app,
        (
            Mesh3d(handle),
            Transform::from_rotation(Quat::from_rotation_x(1.2)),
            SoftMesh::default()
                .with_stretch(6.0, 0.5)
                .pin(PinSelect::Where(PinTest(|p| p.x < -0.49 && p.z < -0.49))),
        ),
    );
    step(&mut app, 40);
    let drawn = drawn_mesh(&app, e);
    let normals = match drawn.attribute(Mesh::ATTRIBUTE_NORMAL) {
        Some(VertexAttributeValues::Float32x3(n)) => n.clone(),
        other => panic!("normals: {other:?}"),
    };
    let tangents = |mesh: &Mesh| match mesh.attribute(Mesh::ATTRIBUTE_TANGENT) {
        Some(VertexAttributeValues::Float32x4(t)) => t.clone(),
        other => panic!("tangents: {other:?}"),
    };
    let ours = tangents(&drawn);
    let mut theirs = drawn.clone();
    theirs.generate_tangents().unwrap();
    let theirs = tangents(&theirs);
    // The cloth folded: the tangents are not those it was built with.
    let flat = positions(&drawn).iter().all(|p| p.y.abs() < 1e-3);
    assert!(!flat);
    for (v, ((t, m), n)) in ours.iter().zip(&theirs).zip(&normals).enumerate() {
        let (t3, m3, n3) = (Vec3::from_slice(t), Vec3::from_slice(m), Vec3::from(*n));
        assert!((t3.length() - 1.0).abs() < 1e-4, "vertex {v}: {t:?}");
        assert!(t3.dot(n3).abs() < 1e-4, "vertex {v}: {t:?} against {n:?}");
        assert!(
            t3.dot(m3) > 0.99,
            "vertex {v}: {t:?} against MikkTSpace's {m:?}"
        );
        assert_eq!(t[3], m[3], "vertex {v}'s handedness");
    }
}

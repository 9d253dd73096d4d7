//! Models as data: the bundled RON files load through the asset server and
//! spawn what they describe; the ragdoll comes to rest on the ground and
//! sleeps, and a heap of ten holds in any order they were spawned in;
//! broken files are refused with their line; edited files reload.

mod common;

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use bevy::asset::{AssetPlugin, LoadState};
use bevy::prelude::*;
use bevy::time::TimeUpdateStrategy;
use bevy_euler_physics::prelude::*;
use common::H;

/// A headless app that loads assets from `folder`, one fixed step per frame.
fn app(folder: &Path, watch: bool) -> App {
    let mut app = App::new();
    app.add_plugins((
        MinimalPlugins,
        AssetPlugin {
            file_path: folder.to_string_lossy().into_owned(),
            watch_for_changes_override: Some(watch),
            ..default()
        },
        EulerPhysicsPlugin,
        PhysicsModelPlugin,
    ))
    .insert_resource(Time::<Fixed>::from_duration(Duration::from_secs_f32(H)))
    .insert_resource(TimeUpdateStrategy::FixedTimesteps(1));
    app.update();
    app
}

fn bundled() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("assets")
}

/// A fresh folder for one test's asset files.
fn scratch(name: &str) -> PathBuf {
    let folder = std::env::temp_dir().join(format!("euler-model-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&folder);
    std::fs::create_dir_all(folder.join("models")).unwrap();
    folder
}

/// Frames until `done` holds, with a short sleep each (asset IO runs on other
/// threads); panics after `limit`.
fn until(app: &mut App, limit: Duration, what: &str, mut done: impl FnMut(&mut App) -> bool) {
    let start = Instant::now();
    loop {
        app.update();
        if done(app) {
            return;
        }
        assert!(start.elapsed() < limit, "waited {limit:?} for {what}");
        std::thread::sleep(Duration::from_millis(5));
    }
}

fn place(app: &mut App, path: &str, offset: Vec3) -> (Handle<PhysicsModel>, Entity) {
    let handle: Handle<PhysicsModel> = app.world().resource::<AssetServer>().load(path.to_string());
    let instance = app
        .world_mut()
        .spawn(PhysicsModelInstance::new(handle.clone(), offset))
        .id();
    (handle, instance)
}

fn parts(app: &App, instance: Entity) -> Option<ModelParts> {
    app.world().get::<ModelParts>(instance).cloned()
}

/// Whether the instance has spawned its parts; panics with the loader's
/// error if its model failed to load.
fn spawned(app: &App, instance: Entity) -> bool {
    let handle = &app
        .world()
        .get::<PhysicsModelInstance>(instance)
        .unwrap()
        .model;
    if let LoadState::Failed(e) = app.world().resource::<AssetServer>().load_state(handle) {
        panic!("the model failed to load: {e}");
    }
    parts(app, instance).is_some()
}

fn source(path: &str) -> PhysicsModel {
    let text = std::fs::read_to_string(bundled().join(path)).unwrap();
    PhysicsModel::from_ron(&text).unwrap()
}

/// The bundled ragdoll spawns one body per body in its file, named and
/// placed at the offset, with radii and damping, and one spring or rod per
/// join, each as long as its ends are apart in the file.
#[test]
fn the_ragdoll_file_spawns_what_it_describes() {
    let mut app = app(&bundled(), false);
    let offset = Vec3::new(2.0, 1.0, 0.0);
    let (_, instance) = place(&mut app, "models/ragdoll.model.ron", offset);
    until(&mut app, Duration::from_secs(10), "the ragdoll", |app| {
        spawned(app, instance)
    });
    let model = source("models/ragdoll.model.ron");
    let parts = parts(&app, instance).unwrap();
    assert_eq!(parts.bodies().count(), model.bodies.len());
    let limits = model.distance_limits.len() + model.angle_limits.len();
    assert_eq!(
        parts.joins().len(),
        model.springs.len() + model.rods.len() + limits
    );
    assert!(model.rods.len() >= 10 && !model.springs.is_empty());
    assert!(model.angle_limits.len() >= 9);
    let world = app.world();
    for spec in &model.bodies {
        let entity = parts.body(&spec.name).unwrap();
        assert_eq!(world.get::<Name>(entity).unwrap().as_str(), spec.name);
        let body = world.get::<Body>(entity).unwrap();
        // One step has run since the spawn at most: within a step's fall.
        assert!(
            body.position.distance(offset + spec.position) < 0.01,
            "{} at {}",
            spec.name,
            body.position
        );
        assert_eq!(body.mass(), spec.mass);
        assert_eq!(world.get::<Radius>(entity).map(|r| r.0), spec.radius);
        assert_eq!(world.get::<Damping>(entity).map(|d| d.0), spec.damping);
        assert_eq!(
            world.get::<ContactMaterial>(entity).map(|m| m.friction),
            spec.friction
        );
    }
    // Each angle limit over the bodies it names, in radians, and the pose
    // in the file inside it.
    for (spec, &join) in model
        .angle_limits
        .iter()
        .zip(&parts.joins()[parts.joins().len() - limits..])
    {
        let limit = world.get::<AngleLimit>(join).unwrap();
        assert_eq!(limit.pivot, parts.body(&spec.pivot).unwrap());
        assert_eq!(limit.max, spec.max_degrees.to_radians());
        let at = |name: &str| model.body(name).unwrap().position;
        let theta = AngleLimit::angle(at(&spec.a), at(&spec.pivot), at(&spec.b), Vec3::Z);
        assert_eq!(limit.excess(theta), 0.0, "{} at {theta}", spec.pivot);
    }
    for &join in &parts.joins()[..parts.joins().len() - limits] {
        let (a, b, length) = if let Some(s) = world.get::<Spring>(join) {
            (s.a, s.b, s.rest_length)
        } else {
            let r = world.get::<DistanceConstraint>(join).unwrap();
            (r.a, r.b, r.length)
        };
        let name = |e: Entity| world.get::<Name>(e).unwrap().as_str().to_string();
        let apart = model
            .body(&name(a))
            .unwrap()
            .position
            .distance(model.body(&name(b)).unwrap().position);
        assert!((length - apart).abs() < 1e-6, "{} – {}", name(a), name(b));
    }
}

/// Dropped from 1 m onto the ground, the bundled ragdoll ends resting on it:
/// no body below the ground by more than a centimetre, every rod within 2 %
/// of its length, and the whole ragdoll asleep within 20 s.
#[test]
fn the_ragdoll_comes_to_rest_on_the_ground_and_sleeps() {
    let mut app = app(&bundled(), false);
    app.world_mut()
        .spawn(GroundPlane::horizontal(0.0).with_friction(0.8));
    let (_, instance) = place(
        &mut app,
        "models/ragdoll.model.ron",
        Vec3::new(0.0, 1.0, 0.0),
    );
    until(&mut app, Duration::from_secs(10), "the ragdoll", |app| {
        spawned(app, instance)
    });
    let parts = parts(&app, instance).unwrap();
    let bodies: Vec<Entity> = parts.bodies().map(|(_, e)| e).collect();
    // Auto substeps keep the stiff neck stable.
    for &e in &bodies {
        app.world_mut().entity_mut(e).insert(AutoSubsteps);
    }
    let mut slept_after = None;
    for n in 1..=(20.0 / H) as usize {
        app.update();
        let world = app.world();
        for &e in &bodies {
            let body = world.get::<Body>(e).unwrap();
            let radius = world.get::<Radius>(e).map_or(0.0, |r| r.0);
            assert!(
                body.position.y - radius > -0.01,
                "step {n}: {} sank to {}",
                world.get::<Name>(e).unwrap(),
                body.position.y
            );
        }
        if bodies.iter().all(|&e| world.get::<Sleeping>(e).is_some()) {
            slept_after = Some(n as f32 * H);
            break;
        }
    }
    let world = app.world();
    for &join in parts.joins() {
        if let Some(rod) = world.get::<DistanceConstraint>(join) {
            let d = world
                .get::<Body>(rod.a)
                .unwrap()
                .position
                .distance(world.get::<Body>(rod.b).unwrap().position);
            assert!(
                (d - rod.length).abs() <= 0.02 * rod.length,
                "a rod of {} is {d} long",
                rod.length
            );
        }
    }
    let slept_after = slept_after.expect("the ragdoll is asleep within 20 s");
    assert!(slept_after > 0.5, "asleep after {slept_after} s");
}

/// A file with a syntax error fails to load with an error naming its line;
/// nothing is spawned and nothing panics.
#[test]
fn a_broken_file_is_refused_with_its_line() {
    let folder = scratch("broken");
    std::fs::write(
        folder.join("models/broken.model.ron"),
        "(\n    bodies: [\n        (name: \"a\")\n        (name: \"b\"),\n    ],\n)\n",
    )
    .unwrap();
    let mut app = app(&folder, false);
    let (handle, instance) = place(&mut app, "models/broken.model.ron", Vec3::ZERO);
    let mut error = String::new();
    until(
        &mut app,
        Duration::from_secs(10),
        "the load to fail",
        |app| match app.world().resource::<AssetServer>().load_state(&handle) {
            LoadState::Failed(e) => {
                error = e.to_string();
                true
            }
            _ => false,
        },
    );
    assert!(error.contains("line 4"), "{error}");
    assert!(parts(&app, instance).is_none());
    let mut bodies = app.world_mut().query::<&Body>();
    assert_eq!(bodies.iter(app.world()).count(), 0);
    let _ = std::fs::remove_dir_all(folder);
}

/// Despawning an instance despawns its bodies and joins.
#[test]
fn despawning_an_instance_despawns_its_parts() {
    let mut app = app(&bundled(), false);
    let (_, instance) = place(&mut app, "models/rope.model.ron", Vec3::ZERO);
    let (_, other) = place(&mut app, "models/rope.model.ron", Vec3::X);
    until(&mut app, Duration::from_secs(10), "the ropes", |app| {
        spawned(app, instance) && spawned(app, other)
    });
    let model = source("models/rope.model.ron");
    let mut bodies = app.world_mut().query::<&Body>();
    assert_eq!(bodies.iter(app.world()).count(), 2 * model.bodies.len());
    app.world_mut().despawn(instance);
    common::step(&mut app, 2);
    let mut bodies = app.world_mut().query::<&Body>();
    assert_eq!(bodies.iter(app.world()).count(), model.bodies.len());
    let mut springs = app.world_mut().query::<&Spring>();
    assert_eq!(springs.iter(app.world()).count(), model.springs.len());
}

/// Editing the file of a running app respawns the model from it; a broken
/// edit is refused and the model stays as it was.
#[cfg(feature = "hot-reload")]
#[test]
fn editing_the_file_reloads_the_model() {
    let folder = scratch("reload");
    let file = folder.join("models/pendulum.model.ron");
    let one = "(\n  bodies: [(name: \"pivot\", fixed: true), (name: \"bob\", position: (1.0, 0.0))],\n  springs: [(a: \"pivot\", b: \"bob\", stiffness: 50.0)],\n)\n";
    std::fs::write(&file, one).unwrap();
    let mut app = app(&folder, true);
    let (_, instance) = place(&mut app, "models/pendulum.model.ron", Vec3::ZERO);
    until(&mut app, Duration::from_secs(10), "the first load", |app| {
        spawned(app, instance)
    });
    assert_eq!(parts(&app, instance).unwrap().bodies().count(), 2);

    // A second bob, and a heavier first one.
    let two = "(\n  bodies: [(name: \"pivot\", fixed: true), (name: \"bob\", position: (1.0, 0.0), mass: 3.0), (name: \"bob2\", position: (2.0, 0.0))],\n  springs: [(a: \"pivot\", b: \"bob\", stiffness: 50.0), (a: \"bob\", b: \"bob2\", stiffness: 50.0)],\n)\n";
    std::fs::write(&file, two).unwrap();
    until(&mut app, Duration::from_secs(20), "the reload", |app| {
        parts(app, instance).is_some_and(|p| p.bodies().count() == 3)
    });
    let reloaded = parts(&app, instance).unwrap();
    let bob = reloaded.body("bob").unwrap();
    assert_eq!(app.world().get::<Body>(bob).unwrap().mass(), 3.0);
    let mut bodies = app.world_mut().query::<&Body>();
    assert_eq!(
        bodies.iter(app.world()).count(),
        3,
        "the old parts are gone"
    );

    // A broken edit: an unknown body on line 3. The model stays.
    let broken = "(\n  bodies: [(name: \"pivot\", fixed: true)],\n  springs: [(a: \"pivot\", b: \"ghost\", stiffness: 50.0)],\n)\n";
    std::fs::write(&file, broken).unwrap();
    let start = Instant::now();
    while start.elapsed() < Duration::from_secs(3) {
        app.update();
        std::thread::sleep(Duration::from_millis(5));
    }
    assert_eq!(parts(&app, instance).unwrap(), reloaded);
    let _ = std::fs::remove_dir_all(folder);
}

/// A typo in a body's name in the bundled ragdoll is refused with the line
/// and column of the typo, and says which name is unknown.
#[test]
fn a_typo_in_the_ragdoll_names_its_line_and_column() {
    let text = std::fs::read_to_string(bundled().join("models/ragdoll.model.ron")).unwrap();
    let typo = text.replacen("(a: \"head\"", "(a: \"hed\"", 1);
    assert_ne!(typo, text);
    let (line, at) = typo
        .lines()
        .enumerate()
        .find_map(|(i, l)| l.find("\"hed\"").map(|c| (i + 1, c + 1)))
        .unwrap();
    let error = PhysicsModel::from_ron(&typo).unwrap_err();
    assert_eq!((error.line, error.column), (line, at), "{error}");
    assert!(error.message.contains("\"hed\""), "{error}");
    eprintln!("{error}");
}

/// Gives every spawned model's bodies `AutoSubsteps`.
fn auto_substeps(
    mut commands: Commands,
    mut spawned: MessageReader<ModelSpawned>,
    parts: Query<&ModelParts>,
) {
    for message in spawned.read() {
        if let Ok(parts) = parts.get(message.instance) {
            for (_, body) in parts.bodies() {
                commands.entity(body).insert(AutoSubsteps);
            }
        }
    }
}

#[derive(Resource, Default)]
struct Unstable(usize);

fn count_unstable(mut warnings: MessageReader<PhysicsWarning>, mut count: ResMut<Unstable>) {
    count.0 += warnings
        .read()
        .filter(|w| matches!(w.issue, PhysicsIssue::Unstable { .. }))
        .count();
}

/// A system in `PreUpdate` after `ModelSystems::Spawn` has its settings in
/// force from the first step of a stiff model: no stability warning, and
/// the rope runs several passes. The same system in `Update` runs after
/// that first step, which then warns.
#[test]
fn settings_applied_after_model_spawn_hold_from_the_first_step() {
    let folder = scratch("stiff");
    std::fs::write(
        folder.join("models/stiff.model.ron"),
        r#"(
            bodies: [
                (name: "anchor", position: (0.0, 0.0), fixed: true),
                (name: "a", position: (0.0, -0.1), mass: 0.2),
                (name: "b", position: (0.0, -0.2), mass: 0.2),
            ],
            springs: [
                (a: "anchor", b: "a", stiffness: 20000.0, length: 0.1),
                (a: "a", b: "b", stiffness: 20000.0, length: 0.1),
            ],
        )"#,
    )
    .unwrap();
    for early in [true, false] {
        let mut app = app(&folder, false);
        app.init_resource::<Unstable>()
            .add_systems(Last, count_unstable);
        if early {
            app.add_systems(PreUpdate, auto_substeps.after(ModelSystems::Spawn));
        } else {
            app.add_systems(Update, auto_substeps);
        }
        let (_, instance) = place(&mut app, "models/stiff.model.ron", Vec3::ZERO);
        until(&mut app, Duration::from_secs(10), "the model", |app| {
            spawned(app, instance)
        });
        for _ in 0..10 {
            app.update();
        }
        let unstable = app.world().resource::<Unstable>().0;
        let body = parts(&app, instance).unwrap().body("b").unwrap();
        let passes = app.world().get::<Island>(body).unwrap().substeps();
        assert!(passes > 1, "AutoSubsteps took effect: {passes}");
        if early {
            assert_eq!(unstable, 0, "no warning from the first step");
        } else {
            assert!(unstable > 0, "the first step ran without AutoSubsteps");
        }
    }
    let _ = std::fs::remove_dir_all(folder);
}

/// A spring tuned by frequency in a model file spawns with its
/// `SpringFrequency`, and its stiffness follows the reduced mass of its
/// ends from the first step.
#[test]
fn a_model_spring_tuned_by_frequency_gets_its_stiffness_from_the_masses() {
    let folder = scratch("frequency");
    std::fs::write(
        folder.join("models/tuned.model.ron"),
        r#"(
            bodies: [
                (name: "anchor", position: (0.0, 0.0), fixed: true),
                (name: "bob", position: (0.0, -1.0), mass: 2.0),
            ],
            springs: [(a: "anchor", b: "bob", frequency: 2.0, damping_ratio: 0.1)],
        )"#,
    )
    .unwrap();
    let mut app = app(&folder, false);
    let (_, instance) = place(&mut app, "models/tuned.model.ron", Vec3::ZERO);
    until(&mut app, Duration::from_secs(10), "the model", |app| {
        spawned(app, instance)
    });
    app.update();
    let join = parts(&app, instance).unwrap().joins()[0];
    let spring = *app.world().get::<Spring>(join).unwrap();
    let tuning = *app.world().get::<SpringFrequency>(join).unwrap();
    assert_eq!((tuning.hertz, tuning.damping_ratio), (2.0, 0.1));
    let omega = 2.0 * std::f32::consts::PI * 2.0;
    assert!((spring.stiffness - 2.0 * omega * omega).abs() < 1e-3 * spring.stiffness);
    assert!((spring.damping - 2.0 * 0.1 * 2.0 * omega).abs() < 1e-4 * spring.damping);
    let _ = std::fs::remove_dir_all(folder);
}

/// The orders the heap tests spawn their ragdolls in (`order(k, n)` is the
/// number of the `k`-th spawned of `n`, a permutation for any `n` prime to
/// 3 and 7): each gives the ragdolls' parts other entities, so the broad
/// phase lists their pairs in another order, and the contact solver, which
/// visits pairs in that order, makes another heap.
const ORDERS: [fn(usize, usize) -> usize; 6] = [
    |k, _| k,
    |k, n| n - 1 - k,
    |k, n| (k + 3) % n,
    |k, n| 3 * k % n,
    |k, n| (7 * k + 2) % n,
    |k, n| (9 * k + 5) % n,
];

/// `count` bundled ragdolls over a ground at `y = −3` (friction 0.8),
/// placed and spun as `examples/ragdoll.rs` drops them (five to a row, the
/// rows 2 m apart; the spin given after their parts' first step), each body
/// with `AutoSubsteps`, spawned in `order` (one of [`ORDERS`]); the app and
/// every ragdoll body.
fn drop_heap(order: fn(usize, usize) -> usize, count: usize) -> (App, Vec<Entity>) {
    // As in `examples/ragdoll.rs`: the `n`-th ragdoll's place and spin.
    let place_of = |n: usize| {
        let x = -1.6 + 0.8 * (n % 5) as f32 + 0.3 * (n / 5 % 3) as f32;
        Vec3::new(x, 0.2 + 2.0 * (n / 5) as f32 + 0.3 * (n % 2) as f32, 0.0)
    };
    let spin_of = |n: usize| [1.5, -2.5, 0.8, -1.2, 2.0][n % 5];
    let mut app = app(&bundled(), false);
    app.world_mut()
        .spawn(GroundPlane::horizontal(-3.0).with_friction(0.8));
    let handle: Handle<PhysicsModel> = app
        .world()
        .resource::<AssetServer>()
        .load("models/ragdoll.model.ron");
    let numbers: std::collections::BTreeSet<usize> = (0..count).map(|k| order(k, count)).collect();
    assert!(
        numbers.len() == count && numbers.iter().all(|&n| n < count),
        "the order is not a permutation of {count} ragdolls"
    );
    let instances: Vec<(usize, Entity)> = (0..count)
        .map(|k| {
            let n = order(k, count);
            let instance = PhysicsModelInstance::new(handle.clone(), place_of(n));
            (n, app.world_mut().spawn(instance).id())
        })
        .collect();
    until(&mut app, Duration::from_secs(10), "the ragdolls", |app| {
        instances.iter().all(|&(_, e)| spawned(app, e))
    });
    let mut bodies = Vec::new();
    for &(n, instance) in &instances {
        let own: Vec<Entity> = parts(&app, instance)
            .unwrap()
            .bodies()
            .map(|(_, e)| e)
            .collect();
        let world = app.world_mut();
        let mass: f32 = own
            .iter()
            .map(|&e| world.get::<Body>(e).unwrap().mass())
            .sum();
        let centre = own.iter().fold(Vec3::ZERO, |sum, &e| {
            let body = world.get::<Body>(e).unwrap();
            sum + body.position * body.mass()
        }) / mass;
        for &e in &own {
            let mut entity = world.entity_mut(e);
            let mut body = entity.get_mut::<Body>().unwrap();
            let r = body.position - centre;
            body.velocity += Vec3::new(-r.y, r.x, 0.0) * spin_of(n);
            entity.insert(AutoSubsteps);
        }
        bodies.extend(own);
    }
    (app, bodies)
}

/// A heap of ten ragdolls ([`drop_heap`]) holds together whatever order the
/// ragdolls were spawned in ([`ORDERS`]): after 21 s (the screenshot test's
/// 1 260 frames), no two bodies that are not joined overlap by more than
/// 0.1 radii of the smaller and no limited angle is more than 0.05 rad past
/// its limits, the screenshot test's bounds, in each order. (The screenshot
/// test sees one order; a change to the contact solver's order of work
/// passes here only if the heap holds in all six.)
#[test]
fn a_ragdoll_heap_holds_whatever_order_its_ragdolls_were_spawned_in() {
    heaps_hold(10, 21.0);
}

/// Drops `count` ragdolls ([`drop_heap`]) in each of [`ORDERS`], steps each
/// heap for `seconds`, and asserts the screenshot test's bounds on it: no
/// two bodies that are not joined overlap by more than 0.1 radii of the
/// smaller, no limited angle is more than 0.05 rad past its limits.
fn heaps_hold(count: usize, seconds: f32) {
    for (o, order) in ORDERS.into_iter().enumerate() {
        let (mut app, bodies) = drop_heap(order, count);
        for _ in 0..(seconds / H) as usize {
            app.update();
        }
        let (overlap, excess) = heap(&mut app, &bodies);
        eprintln!("order {o}: overlap {overlap} radii, excess {excess} rad");
        assert!(
            overlap <= 0.1,
            "order {o}: two bodies overlap by {overlap} radii"
        );
        assert!(
            excess <= 0.05,
            "order {o}: an angle is {excess} rad past its limits"
        );
    }
}

/// A heap of ten ragdolls ([`drop_heap`]) falls asleep within two minutes
/// whatever order the ragdolls were spawned in ([`ORDERS`]). (Until the rest
/// test measured how far a body moved over the step, in two of these orders
/// a hand that a contact held against its arm kept a velocity of about the
/// sleep threshold that it did not move with, and the heap was awake after
/// 300 s.)
#[test]
fn a_ragdoll_heap_falls_asleep_whatever_order_its_ragdolls_were_spawned_in() {
    for (o, order) in ORDERS.into_iter().enumerate() {
        let (mut app, bodies) = drop_heap(order, 10);
        let asleep = (1..=(120.0 / H) as usize).any(|_| {
            app.update();
            let world = app.world();
            bodies.iter().all(|&e| world.get::<Sleeping>(e).is_some())
        });
        assert!(asleep, "order {o}: the heap is awake after 120 s");
    }
}

/// As `examples/ragdoll.rs` reports its heap: the deepest overlap of two of
/// `bodies` not joined directly (in radii of the smaller), and the largest
/// excess of a limited angle past its limits (radians).
fn heap(app: &mut App, bodies: &[Entity]) -> (f32, f32) {
    let world = app.world_mut();
    let mut joined = std::collections::HashSet::new();
    let mut joins = world.query::<AnyOf<(&Spring, &DistanceConstraint, &AngleLimit)>>();
    for (spring, rod, angle) in joins.iter(world) {
        let ends = match (spring, rod, angle) {
            (Some(s), ..) => vec![(s.a, s.b)],
            (_, Some(r), _) => vec![(r.a, r.b)],
            (.., Some(l)) => l.pairs().to_vec(),
            _ => vec![],
        };
        joined.extend(ends.into_iter().map(|(a, b)| (a.min(b), a.max(b))));
    }
    let ball = |e: Entity| {
        (
            world.get::<Body>(e).unwrap().position,
            world.get::<Radius>(e).unwrap().0,
        )
    };
    let mut overlap = 0.0f32;
    for (i, &a) in bodies.iter().enumerate() {
        for &b in &bodies[i + 1..] {
            if !joined.contains(&(a.min(b), a.max(b))) {
                let ((pa, ra), (pb, rb)) = (ball(a), ball(b));
                overlap = overlap.max((ra + rb - pa.distance(pb)) / ra.min(rb));
            }
        }
    }
    let mut limits = world.query::<&AngleLimit>();
    let excess = limits.iter(world).fold(0.0f32, |most, limit| {
        let at = |e: Entity| world.get::<Body>(e).unwrap().position;
        let theta = AngleLimit::angle(at(limit.a), at(limit.pivot), at(limit.b), limit.axis);
        most.max(limit.excess(theta))
    });
    (overlap, excess)
}

/// A heap of forty ragdolls, dropped as [`drop_heap`] drops ten (eight rows
/// 2 m apart, the top one about 17 m above the ground), holds within the ten-ragdoll heap's bounds after
/// 40 s, whatever order they were spawned in. **A known limit, so
/// ignored:** in no order does it: the deepest overlaps measured 0.10 to
/// 0.30 radii and the angle excesses 0.06 to 1.04 rad, and no order was
/// asleep (README, known limits). Its batch of pairs holds about 800 pairs,
/// fewer than the contact solver orders by class.
#[test]
#[ignore = "known limit: a heap of forty ragdolls does not settle within the bounds (README)"]
fn a_heap_of_forty_ragdolls_holds_whatever_order_its_ragdolls_were_spawned_in() {
    heaps_hold(40, 40.0);
}

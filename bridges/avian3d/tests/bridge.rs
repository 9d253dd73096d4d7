//! The avian bridge: a ball rests on each collider kind at its radius;
//! collision layers filter; a head-on hit keeps the two engines' summed
//! momentum; reruns give the same bits; bad input is reported once.

use std::time::Duration;

use avian3d::prelude::{
    AngularDamping, AngularVelocity, Collider, CollisionLayers, ComputedMass,
    Gravity as AvianGravity, LinearDamping, LinearVelocity, Mass, PhysicsPlugins, Position,
    RigidBody,
};
use bevy::prelude::*;
use bevy::time::TimeUpdateStrategy;
use bevy_euler_physics::prelude::*;
use bevy_euler_physics_avian3d::{AvianBridgePlugin, ColliderPart};

const H: f32 = 1.0 / 64.0;
const R: f32 = 0.1;

/// A headless app with both engines and the bridge, one fixed step per
/// update. The first frame has run.
fn app() -> App {
    let mut app = App::new();
    app.add_plugins((
        MinimalPlugins,
        TransformPlugin,
        AssetPlugin::default(),
        bevy::mesh::MeshPlugin,
        PhysicsPlugins::default(),
        EulerPhysicsPlugin,
        AvianBridgePlugin,
    ))
    .insert_resource(Time::<Fixed>::from_duration(Duration::from_secs_f32(H)))
    .insert_resource(TimeUpdateStrategy::FixedTimesteps(1))
    .insert_resource(SleepSettings {
        enabled: false,
        ..default()
    });
    // (avian sets some of its resources up as the app is finished.)
    app.finish();
    app.cleanup();
    app.update();
    app
}

fn step(app: &mut App, n: usize) {
    for _ in 0..n {
        app.update();
    }
}

fn body(app: &App, entity: Entity) -> Body {
    *app.world().get::<Body>(entity).unwrap()
}

/// Each collider kind, placed so that its top is level at `y = 0.5`
/// right above the origin.
fn kinds() -> Vec<(&'static str, Collider, Transform)> {
    let at = Transform::IDENTITY;
    let corners: Vec<Vec3> = (0..8)
        .map(|i: i32| IVec3::new(i & 1, (i >> 1) & 1, (i >> 2) & 1).as_vec3() - 0.5)
        .collect();
    let quad = (
        vec![
            Vec3::new(-1.0, 0.5, -1.0),
            Vec3::new(1.0, 0.5, -1.0),
            Vec3::new(1.0, 0.5, 1.0),
            Vec3::new(-1.0, 0.5, 1.0),
        ],
        vec![[0, 2, 1], [0, 3, 2]],
    );
    vec![
        ("sphere", Collider::sphere(0.5), at),
        ("cuboid", Collider::cuboid(1.0, 1.0, 1.0), at),
        (
            "cuboid turned about Y",
            Collider::cuboid(1.0, 1.0, 1.0),
            Transform::from_rotation(Quat::from_rotation_y(0.6)),
        ),
        (
            "round cuboid",
            Collider::round_cuboid(0.8, 0.8, 0.8, 0.1),
            at,
        ),
        ("capsule", Collider::capsule(0.3, 0.4), at),
        (
            "capsule along X",
            Collider::capsule_endpoints(0.3, Vec3::new(-0.5, 0.2, 0.0), Vec3::new(0.5, 0.2, 0.0)),
            at,
        ),
        ("cylinder", Collider::cylinder(0.5, 1.0), at),
        ("cone", Collider::cone(0.5, 1.0), at),
        (
            "convex hull",
            Collider::convex_hull(corners).expect("a hull of a cube's corners"),
            at,
        ),
        ("trimesh", Collider::trimesh(quad.0, quad.1), at),
        (
            "height field",
            Collider::heightfield(vec![vec![1.0; 5]; 5], Vec3::new(4.0, 0.5, 4.0)),
            at,
        ),
        (
            "voxels",
            Collider::voxels(
                Vec3::splat(0.5),
                &[
                    IVec3::new(-1, 0, -1),
                    IVec3::new(0, 0, -1),
                    IVec3::new(-1, 0, 0),
                    IVec3::new(0, 0, 0),
                ],
            ),
            at,
        ),
        (
            "half-space",
            Collider::half_space(Vec3::Y),
            Transform::from_xyz(0.0, 0.5, 0.0),
        ),
        (
            "compound",
            Collider::compound(vec![
                (
                    Vec3::new(0.0, 0.25, 0.0),
                    Quat::IDENTITY,
                    Collider::cuboid(1.0, 0.5, 1.0),
                ),
                (
                    Vec3::new(2.0, 0.0, 0.0),
                    Quat::IDENTITY,
                    Collider::sphere(0.3),
                ),
            ]),
            at,
        ),
        (
            "scaled sphere",
            Collider::sphere(0.25),
            Transform::from_scale(Vec3::splat(2.0)),
        ),
    ]
}

/// A ball dropped on each kind of avian collider, a static rigid body,
/// comes to rest on its top at its radius (within 2 % of it).
#[test]
fn a_ball_rests_on_each_collider_kind_at_its_radius() {
    let mut wrong = Vec::new();
    for (name, collider, transform) in kinds() {
        let mut app = app();
        app.world_mut()
            .spawn((RigidBody::Static, collider, transform));
        let ball = app
            .world_mut()
            .spawn((
                Body::new(1.0).with_position(Vec3::new(0.0, 1.0, 0.0)),
                Radius(R),
            ))
            .id();
        step(&mut app, 240);
        let p = body(&app, ball).position;
        let parts = app
            .world_mut()
            .query::<&ColliderPart>()
            .iter(app.world())
            .count();
        if (p.y - (0.5 + R)).abs() > 0.02 * R || p.xz().length() > 0.02 * R {
            wrong.push(format!("{name}: rests at {p} ({parts} parts)"));
        }
    }
    assert!(wrong.is_empty(), "{wrong:#?}");
}

/// A ball in layers a collider does not touch falls through it; in one it
/// touches, it rests on it.
#[test]
fn collision_layers_filter_the_colliders() {
    let rest = |layers: CollisionLayers| {
        let mut app = app();
        app.world_mut()
            .spawn((RigidBody::Static, Collider::cuboid(2.0, 1.0, 2.0), layers));
        let ball = app
            .world_mut()
            .spawn((
                Body::new(1.0).with_position(Vec3::new(0.0, 1.0, 0.0)),
                Radius(R),
                CollisionGroups::new(0b01, 0b10),
            ))
            .id();
        step(&mut app, 120);
        body(&app, ball).position.y
    };
    let touching = rest(CollisionLayers::new(0b10, 0b01));
    assert!((touching - (0.5 + R)).abs() < 0.02 * R, "{touching}");
    // Its memberships are not in the ball's filters.
    assert!(rest(CollisionLayers::new(0b01, 0b01)) < -1.0);
    // The ball's memberships are not in its filters.
    assert!(rest(CollisionLayers::new(0b10, 0b10)) < -1.0);
}

/// No gravity: one of this plugin's balls (2 kg at 3 m/s) hits an avian
/// ball (1 kg at rest) head on, slightly off its axis. The sum of both
/// momenta is kept within 1 %, and both leave at the common speed of an
/// inelastic hit.
#[test]
fn a_head_on_hit_keeps_the_summed_momentum() {
    let (ours, theirs, spin) = hit(2.0, 1.0);
    let before = Vec3::new(6.0, 0.0, 0.0);
    let after = 2.0 * ours + 1.0 * theirs;
    assert!(
        (after - before).length() < 0.01 * before.length(),
        "{before} before, {after} after (ours {ours}, theirs {theirs})"
    );
    // No bounce (avian's restitution 0): both leave at the common speed
    // 2·3/(2 + 1) = 2 m/s.
    assert!(
        (ours.x - 2.0).abs() < 0.02 && (theirs.x - 2.0).abs() < 0.02,
        "ours {ours}, theirs {theirs}"
    );
    // The hit lies in the XY plane: friction turns their ball about Z
    // alone.
    assert!(spin.xy().length() < 1e-4 * spin.length(), "{spin}");
    // The same bits again.
    let again = hit(2.0, 1.0);
    let bits = |v: Vec3| v.to_array().map(f32::to_bits);
    assert_eq!(bits(again.0), bits(ours));
    assert_eq!(bits(again.1), bits(theirs));
}

/// The hit gains no energy, whichever is heavier (10 kg against 1 kg, and
/// 1 kg against 2 kg): the rigid body gives way within the step as a body
/// would, so the hit leaves less kinetic energy (translation) than it
/// found, and keeps the momentum.
#[test]
fn a_hit_gains_no_energy() {
    for (ours, theirs) in [(1.0, 10.0), (2.0, 1.0)] {
        let (v, w, _) = hit(ours, theirs);
        let before = 0.5 * ours * 9.0;
        let after = 0.5 * ours * v.length_squared() + 0.5 * theirs * w.length_squared();
        assert!(
            after <= before,
            "{ours} kg on {theirs} kg: {after} J after {before} J"
        );
        let momentum = ours * v + theirs * w;
        let expected = Vec3::new(3.0 * ours, 0.0, 0.0);
        assert!(
            (momentum - expected).length() < 0.01 * expected.length(),
            "{momentum}"
        );
    }
}

/// One of this plugin's balls (`ours` kg at 3 m/s along X) hits an avian
/// ball (`theirs` kg, radius 0.2, at rest 1 m ahead, 2 cm above the
/// line), without gravity: 60 steps later, our ball's velocity, and
/// theirs with its spin.
fn hit(ours: f32, theirs: f32) -> (Vec3, Vec3, Vec3) {
    let run = || {
        let mut app = app();
        app.insert_resource(Gravity(Vec3::ZERO))
            .insert_resource(AvianGravity(Vec3::ZERO));
        let theirs = app
            .world_mut()
            .spawn((
                RigidBody::Dynamic,
                Collider::sphere(0.2),
                Mass(theirs),
                Transform::from_xyz(1.0, 0.02, 0.0),
            ))
            .id();
        let ours = app
            .world_mut()
            .spawn((
                Body::new(ours).with_velocity(Vec3::new(3.0, 0.0, 0.0)),
                Radius(R),
            ))
            .id();
        step(&mut app, 60);
        let world = app.world();
        let v = world.get::<LinearVelocity>(theirs).unwrap().0;
        let w = world.get::<AngularVelocity>(theirs).unwrap().0;
        (body(&app, ours).velocity, v, w)
    };
    run()
}

/// A rope of ten springs hangs from a fixed body, its last body tied to
/// the top of a 2 kg avian box: at rest, the box hangs at the rope's
/// length plus its stretch, each spring stretched by the weight below it
/// (the box's and the rope's bodies'), within 2 % of that hanging length.
/// The rope holds the box up, and the box pulls the rope down.
#[test]
fn a_rope_holds_a_box_at_its_length_plus_its_stretch() {
    let mut app = app();
    let (n, rest, k, m, big) = (10, 0.1, 400.0, 0.2, 2.0);
    let top = Vec3::new(0.0, 3.0, 0.0);
    let world = app.world_mut();
    let mut above = world.spawn(Body::fixed(top)).id();
    let mut bodies = Vec::new();
    for i in 1..=n {
        let at = top - Vec3::Y * rest * i as f32;
        let body = world
            .spawn((Body::new(m).with_position(at), Damping(2.0)))
            .id();
        world.spawn(Spring::new(above, body, rest, k));
        bodies.push(body);
        above = body;
    }
    let hook = top - Vec3::Y * rest * n as f32;
    let crate_ = world
        .spawn((
            RigidBody::Dynamic,
            Collider::cuboid(0.5, 0.5, 0.5),
            Mass(big),
            LinearDamping(2.0),
            AngularDamping(2.0),
            Transform::from_translation(hook - Vec3::Y * 0.25),
        ))
        .id();
    world
        .entity_mut(above)
        .insert(TiedTo::new(crate_, Vec3::Y * 0.25));
    step(&mut app, 900);
    let y = |app: &App| app.world().get::<Position>(crate_).unwrap().0.y;
    let before = y(&app);
    step(&mut app, 60);
    assert!(
        (y(&app) - before).abs() < 1e-4,
        "at rest: {before}, then {}",
        y(&app)
    );
    let g = 9.81;
    // (avian adds its collider's mass to `Mass`.)
    let big = app.world().get::<ComputedMass>(crate_).unwrap().value();
    assert!(big >= 2.0, "{big}");
    // Spring i (from the top) carries the box and the n − i + 1 bodies
    // below it.
    let stretch: f32 = (1..=n)
        .map(|i| g * (big + m * (n - i + 1) as f32) / k)
        .sum();
    let expected = top.y - rest * n as f32 - stretch - 0.25;
    let y = y(&app);
    let hanging = rest * n as f32 + stretch;
    assert!(
        (y - expected).abs() < 0.02 * hanging,
        "the box hangs at {y}, expected {expected} (stretch {stretch})"
    );
    // What the rope's stretch says it carries, against the box's weight
    // and its own: within 5 % of the stretch.
    assert!(
        (y - expected).abs() < 0.05 * stretch,
        "{y} against {expected}"
    );
    // The rope's end is at the box's top.
    let end = body(&app, above).position;
    assert!(
        (end.y - (y + 0.25)).abs() < 0.01 * hanging,
        "{end} above {y}"
    );
}

/// A net of 11 × 11 round bodies joined by springs, its border fixed,
/// catches an avian crate dropped from half a metre: the crate sinks into
/// it, is held there at rest, and no body of the net goes through it.
#[test]
fn a_net_holds_a_dropped_crate() {
    let mut app = app();
    let (n, spacing, r) = (11, 0.1, 0.04);
    let world = app.world_mut();
    let mut grid = Vec::new();
    for i in 0..n {
        for j in 0..n {
            let at = Vec3::new(i as f32 - 5.0, 0.0, j as f32 - 5.0) * spacing;
            let border = i == 0 || j == 0 || i == n - 1 || j == n - 1;
            let body = if border {
                Body::fixed(at)
            } else {
                Body::new(0.1).with_position(at)
            };
            grid.push(world.spawn((body, Radius(r), Damping(2.0))).id());
        }
    }
    for i in 0..n {
        for j in 0..n {
            let here = grid[i * n + j];
            if i + 1 < n {
                world.spawn(Spring::new(here, grid[(i + 1) * n + j], spacing, 100.0));
            }
            if j + 1 < n {
                world.spawn(Spring::new(here, grid[i * n + j + 1], spacing, 100.0));
            }
        }
    }
    let crate_ = world
        .spawn((
            RigidBody::Dynamic,
            Collider::cuboid(0.4, 0.4, 0.4),
            Mass(1.0),
            Transform::from_xyz(0.0, 0.7, 0.0),
        ))
        .id();
    let y = |app: &App| app.world().get::<Position>(crate_).unwrap().0.y;
    let mut lowest = f32::MAX;
    for _ in 0..600 {
        step(&mut app, 1);
        lowest = lowest.min(y(&app));
    }
    let before = y(&app);
    step(&mut app, 60);
    assert!(
        (y(&app) - before).abs() < 1e-3,
        "at rest: {before}, then {}",
        y(&app)
    );
    // Held in the net: its bottom (0.2 below its centre) above the fixed
    // border's plane less a sag, and above every body of the net.
    assert!(lowest > -0.6, "it fell to {lowest}");
    let bottom = before - 0.2;
    for &body in &grid {
        let p = app.world().get::<Body>(body).unwrap().position;
        if p.x.abs() < 0.15 && p.z.abs() < 0.15 {
            assert!(
                p.y < bottom - 0.5 * r,
                "a net body at {p}, the crate's bottom at {bottom}"
            );
        }
    }
    assert!(before < 0.2 - 0.1, "it sank into the net: {before}");
}

/// The order within a fixed step: this plugin's step `n` meets a collider
/// where avian's step `n − 1` left it (a kinematic box moving at 1 m/s),
/// and avian's step `n` starts from the impulse this plugin's step `n`
/// gave its rigid body (a dynamic ball hit in step `n` leaves at once).
#[test]
fn the_step_order_is_this_plugins_then_avians() {
    let mut app = app();
    app.insert_resource(Gravity(Vec3::ZERO))
        .insert_resource(AvianGravity(Vec3::ZERO));
    let mover = app
        .world_mut()
        .spawn((
            RigidBody::Kinematic,
            Collider::cuboid(0.5, 0.5, 0.5),
            LinearVelocity(Vec3::X),
            Transform::from_xyz(0.0, 5.0, 0.0),
        ))
        .id();
    let position = |app: &App, e: Entity| app.world().get::<Position>(e).unwrap().0;
    step(&mut app, 2);
    for _ in 0..5 {
        let before = position(&app, mover);
        step(&mut app, 1);
        let mut parts = app.world_mut().query::<(&ColliderPart, &ObstacleState)>();
        let (_, state) = parts.single(app.world()).unwrap();
        // Where this step placed it: where avian's last step had left it.
        assert_eq!(state.previous().unwrap().0, before);
        assert!(position(&app, mover).x > before.x);
    }
    // A ball hit in this step moves off in avian's step of the same frame.
    let ball = app
        .world_mut()
        .spawn((
            RigidBody::Dynamic,
            Collider::sphere(0.2),
            Mass(1.0),
            Transform::from_xyz(1.0, 0.0, 0.0),
        ))
        .id();
    step(&mut app, 2);
    app.world_mut().spawn((
        Body::new(1.0)
            .with_position(Vec3::new(1.0 - 0.2 - R, 0.0, 0.0))
            .with_velocity(Vec3::X * 2.0),
        Radius(R),
    ));
    step(&mut app, 1);
    let mut parts = app
        .world_mut()
        .query::<(&ColliderPart, &ObstacleReaction)>();
    let got: Vec3 = parts
        .iter(app.world())
        .filter(|(part, _)| part.collider == ball)
        .map(|(_, reaction)| reaction.impulse)
        .sum();
    let v = app.world().get::<LinearVelocity>(ball).unwrap().0;
    assert!(got.x > 0.5, "{got}");
    assert!((v - got / 1.0).length() < 1e-4, "{v} after {got}");
}

/// An entity that is both a Body and an avian collider gets no part (and
/// is warned about once); a collider removed takes its parts with it; an
/// unsupported shape has none.
#[test]
fn bad_input_is_left_out() {
    let mut app = app();
    let both = app
        .world_mut()
        .spawn((Body::new(1.0), RigidBody::Dynamic, Collider::sphere(0.2)))
        .id();
    let segment = app
        .world_mut()
        .spawn((RigidBody::Static, Collider::segment(Vec3::ZERO, Vec3::X)))
        .id();
    let floor = app
        .world_mut()
        .spawn((RigidBody::Static, Collider::cuboid(2.0, 1.0, 2.0)))
        .id();
    step(&mut app, 2);
    let parts = |app: &mut App| {
        let mut parts: Vec<Entity> = app
            .world_mut()
            .query::<&ColliderPart>()
            .iter(app.world())
            .map(|p| p.collider)
            .collect();
        parts.sort();
        parts
    };
    assert_eq!(parts(&mut app), vec![floor]);
    app.world_mut().entity_mut(floor).remove::<Collider>();
    step(&mut app, 2);
    assert_eq!(parts(&mut app), vec![]);
    assert!(app.world().get_entity(both).is_ok() && app.world().get_entity(segment).is_ok());
}

/// A dynamic 2 kg box of 0.5 m, 5 m up, with `more`, after its first
/// steps.
fn dynamic_crate(app: &mut App, more: impl Bundle) -> Entity {
    let crate_ = app
        .world_mut()
        .spawn((
            RigidBody::Dynamic,
            Collider::cuboid(0.5, 0.5, 0.5),
            Mass(2.0),
            Transform::from_xyz(0.0, 5.0, 0.0),
            more,
        ))
        .id();
    step(app, 3);
    crate_
}

/// A dynamic box's part carries its mass and velocity; made static, the
/// box and its part lose them (a moving box again gets them back), and a
/// kinematic box's part moves with it without a mass.
#[test]
fn a_parts_mass_and_velocity_follow_its_bodys_kind() {
    let mut app = app();
    let crate_ = dynamic_crate(&mut app, LinearVelocity(Vec3::X));
    let part = |app: &mut App| {
        let mut parts = app.world_mut().query::<(Entity, &ColliderPart)>();
        let found: Vec<Entity> = parts.iter(app.world()).map(|(e, _)| e).collect();
        assert_eq!(found.len(), 1);
        found[0]
    };
    let part = part(&mut app);
    let has = |app: &App, e: Entity| {
        (
            app.world().get::<ObstacleMass>(e).copied(),
            app.world().get::<ObstacleVelocity>(e).copied(),
        )
    };
    let (mass, velocity) = has(&app, part);
    assert!(mass.is_some_and(|m| (m.inverse_mass - 0.5).abs() < 1e-6 && m.body == crate_));
    assert!(
        velocity.is_some_and(|v| (v.linear.x - 1.0).abs() < 1e-3),
        "{velocity:?}"
    );
    app.world_mut().entity_mut(crate_).insert(RigidBody::Static);
    step(&mut app, 2);
    assert_eq!(has(&app, part), (None, None));
    assert!(app.world().get::<ObstacleVelocity>(crate_).is_none());
    app.world_mut()
        .entity_mut(crate_)
        .insert((RigidBody::Kinematic, LinearVelocity(Vec3::Z)));
    step(&mut app, 2);
    let (mass, velocity) = has(&app, part);
    assert_eq!(mass, None);
    assert!(
        velocity.is_some_and(|v| (v.linear - Vec3::Z).length() < 1e-5),
        "{velocity:?}"
    );
}

/// A collider of one part at its own origin carries that part itself
/// (its `ColliderPart` names itself); a compound's parts are children of
/// it. Its shape changed from one to the other and back, or the collider
/// made a sensor, leaves no part behind, and the rigid body keeps what its
/// ties need.
#[test]
fn a_one_part_collider_carries_its_part_and_a_compound_has_children() {
    let mut app = app();
    let crate_ = dynamic_crate(&mut app, ());
    // Each part's entity, and whose part it is.
    let parts = |app: &mut App| {
        let mut parts = app.world_mut().query::<(Entity, &ColliderPart)>();
        let mut found: Vec<(Entity, Entity)> = parts
            .iter(app.world())
            .map(|(e, p)| (e, p.collider))
            .collect();
        found.sort();
        found
    };
    let carried = |app: &App| app.world().get::<Obstacle>(crate_).is_some();
    assert_eq!(parts(&mut app), vec![(crate_, crate_)]);
    assert!(carried(&app));
    let mass = app.world().get::<ObstacleMass>(crate_).copied();
    assert!(mass.is_some_and(|m| (m.inverse_mass - 0.5).abs() < 1e-6 && m.body == crate_));
    // A compound: two children, each weighed, and nothing on the crate.
    let two = Collider::compound(vec![
        (
            Vec3::X * 0.5,
            Quat::IDENTITY,
            Collider::cuboid(0.5, 0.5, 0.5),
        ),
        (Vec3::NEG_X * 0.5, Quat::IDENTITY, Collider::sphere(0.25)),
    ]);
    app.world_mut().entity_mut(crate_).insert(two);
    step(&mut app, 2);
    let found = parts(&mut app);
    assert_eq!(found.len(), 2, "{found:?}");
    assert!(found.iter().all(|&(e, of)| e != crate_ && of == crate_));
    assert!(!carried(&app));
    assert!(app.world().get::<ObstacleMass>(crate_).is_none());
    for (part, _) in &found {
        let mass = app.world().get::<ObstacleMass>(*part).copied();
        assert!(mass.is_some_and(|m| m.body == crate_), "{mass:?}");
        assert_eq!(
            app.world().get::<ChildOf>(*part).map(ChildOf::parent),
            Some(crate_)
        );
    }
    // One part again: the children gone, the crate carries it.
    app.world_mut()
        .entity_mut(crate_)
        .insert(Collider::sphere(0.5));
    step(&mut app, 2);
    assert_eq!(parts(&mut app), vec![(crate_, crate_)]);
    assert!(
        found
            .iter()
            .all(|(e, _)| app.world().get_entity(*e).is_err())
    );
    assert!(carried(&app));
    // A sensor: no part anywhere, and the crate is still a dynamic body
    // with its reaction (for its ties) and its velocity.
    app.world_mut()
        .entity_mut(crate_)
        .insert(avian3d::prelude::Sensor);
    step(&mut app, 2);
    assert_eq!(parts(&mut app), vec![]);
    assert!(!carried(&app));
    assert!(app.world().get::<ObstacleMass>(crate_).is_none());
    assert!(app.world().get::<ObstacleReaction>(crate_).is_some());
    assert!(app.world().get::<ObstacleVelocity>(crate_).is_some());
    // A collider of its own under a moving body carries its one part
    // with the body's velocity; made a sensor, it keeps none of it.
    let cart = app
        .world_mut()
        .spawn((
            RigidBody::Kinematic,
            LinearVelocity(Vec3::X),
            Transform::from_xyz(5.0, 0.0, 0.0),
        ))
        .id();
    let wheel = app
        .world_mut()
        .spawn((
            Collider::sphere(0.3),
            Transform::from_xyz(0.0, 1.0, 0.0),
            ChildOf(cart),
        ))
        .id();
    step(&mut app, 3);
    assert!(app.world().get::<Obstacle>(wheel).is_some());
    let moving = app.world().get::<ObstacleVelocity>(wheel).copied();
    assert!(
        moving.is_some_and(|v| (v.linear - Vec3::X).length() < 1e-5),
        "{moving:?}"
    );
    app.world_mut()
        .entity_mut(wheel)
        .insert(avian3d::prelude::Sensor);
    step(&mut app, 2);
    assert!(app.world().get::<Obstacle>(wheel).is_none());
    assert!(app.world().get::<ObstacleVelocity>(wheel).is_none());
}

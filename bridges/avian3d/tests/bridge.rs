//! The avian bridge: a ball rests on each collider kind at its radius;
//! collision layers filter; a head-on hit keeps the two engines' summed
//! momentum; reruns give the same bits; bad input is reported once.

use std::time::Duration;

use avian3d::prelude::{
    AngularVelocity, Collider, CollisionLayers, Gravity as AvianGravity, LinearVelocity, Mass,
    PhysicsPlugins, RigidBody,
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

//! The avian2d bridge: a ball rests on each collider kind at its radius;
//! collision layers filter; a head-on hit keeps the two engines' summed
//! momentum, the same bits on a rerun; a rope holds a box at its length
//! plus its stretch; a rope bridge holds a dropped crate; bad input is
//! left out.

use std::time::Duration;

use avian2d::prelude::{
    AngularDamping, AngularVelocity, Collider, CollisionLayers, ComputedMass,
    Gravity as AvianGravity, LinearDamping, LinearVelocity, Mass, PhysicsPlugins, Position,
    RigidBody,
};
use bevy::prelude::*;
use bevy::time::TimeUpdateStrategy;
use bevy_euler_physics::prelude::*;
use bevy_euler_physics_avian2d::{AvianBridgePlugin, ColliderPart};

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

/// Each 2D collider kind, placed so that its top is level at `y = 0.5`
/// right above the origin.
fn kinds() -> Vec<(&'static str, Collider, Transform)> {
    let at = Transform::IDENTITY;
    let square = vec![
        Vec2::new(-0.5, -0.5),
        Vec2::new(0.5, -0.5),
        Vec2::new(0.5, 0.5),
        Vec2::new(-0.5, 0.5),
    ];
    vec![
        ("circle", Collider::circle(0.5), at),
        ("rectangle", Collider::rectangle(1.0, 1.0), at),
        (
            "rectangle turned half a right angle",
            Collider::rectangle(1.0, 1.0),
            Transform::from_xyz(0.0, 0.5 - 0.5 * std::f32::consts::SQRT_2, 0.0)
                .with_rotation(Quat::from_rotation_z(std::f32::consts::FRAC_PI_4)),
        ),
        (
            "round rectangle",
            Collider::round_rectangle(0.8, 0.8, 0.1),
            at,
        ),
        ("capsule", Collider::capsule(0.3, 0.4), at),
        (
            "capsule along X",
            Collider::capsule_endpoints(0.3, Vec2::new(-0.5, 0.2), Vec2::new(0.5, 0.2)),
            at,
        ),
        (
            "convex hull",
            Collider::convex_hull(square.clone()).expect("a hull of a square's corners"),
            at,
        ),
        (
            "triangle",
            Collider::triangle(
                Vec2::new(-1.0, -0.5),
                Vec2::new(1.0, -0.5),
                Vec2::new(0.0, 0.5),
            ),
            at,
        ),
        (
            "trimesh",
            Collider::trimesh(square, vec![[0, 1, 2], [0, 2, 3]]),
            at,
        ),
        (
            "height field",
            Collider::heightfield(vec![1.0; 5], Vec2::new(4.0, 0.5)),
            at,
        ),
        (
            "voxels",
            Collider::voxels(Vec2::splat(0.5), &[IVec2::new(-1, 0), IVec2::new(0, 0)]),
            at,
        ),
        (
            "half-space",
            Collider::half_space(Vec2::Y),
            Transform::from_xyz(0.0, 0.5, 0.0),
        ),
        (
            "compound",
            Collider::compound(vec![
                (Vec2::new(0.0, 0.25), 0.0, Collider::rectangle(1.0, 0.5)),
                (Vec2::new(2.0, 0.0), 0.0, Collider::circle(0.3)),
            ]),
            at,
        ),
        ("ellipse", Collider::ellipse(1.0, 0.5), at),
        (
            "regular polygon (a square on its side)",
            Collider::regular_polygon(0.5, 4),
            Transform::from_xyz(0.0, 0.5 - 0.5 * std::f32::consts::FRAC_1_SQRT_2, 0.0)
                .with_rotation(Quat::from_rotation_z(std::f32::consts::FRAC_PI_4)),
        ),
        (
            "scaled circle",
            Collider::circle(0.25),
            Transform::from_scale(Vec3::splat(2.0)),
        ),
    ]
}

/// A ball dropped on each kind of avian2d collider, a static rigid body,
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
        if (p.y - (0.5 + R)).abs() > 0.02 * R || p.x.abs() > 0.02 * R || p.z != 0.0 {
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
            .spawn((RigidBody::Static, Collider::rectangle(2.0, 1.0), layers));
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
    assert!(rest(CollisionLayers::new(0b01, 0b01)) < -1.0);
    assert!(rest(CollisionLayers::new(0b10, 0b10)) < -1.0);
}

/// No gravity: one of this plugin's balls (2 kg at 3 m/s) hits an avian2d
/// ball (1 kg at rest) head on, 2 cm off its axis. The sum of both momenta
/// is kept within 1 %, both leave at the common speed of an inelastic hit,
/// their ball turns about Z alone, and a rerun gives the same bits.
#[test]
fn a_head_on_hit_keeps_the_summed_momentum() {
    let run = || {
        let mut app = app();
        app.insert_resource(Gravity(Vec3::ZERO))
            .insert_resource(AvianGravity(Vec2::ZERO));
        let theirs = app
            .world_mut()
            .spawn((
                RigidBody::Dynamic,
                Collider::circle(0.2),
                Mass(1.0),
                Transform::from_xyz(1.0, 0.02, 0.0),
            ))
            .id();
        let ours = app
            .world_mut()
            .spawn((
                Body::new(2.0).with_velocity(Vec3::new(3.0, 0.0, 0.0)),
                Radius(R),
            ))
            .id();
        step(&mut app, 60);
        let world = app.world();
        let v = world.get::<LinearVelocity>(theirs).unwrap().0;
        let w = world.get::<AngularVelocity>(theirs).unwrap().0;
        (body(&app, ours).velocity, v, w)
    };
    let (ours, theirs, _) = run();
    let before = Vec3::new(6.0, 0.0, 0.0);
    let after = 2.0 * ours + theirs.extend(0.0);
    assert!(
        (after - before).length() < 0.01 * before.length(),
        "{before} before, {after} after (ours {ours}, theirs {theirs})"
    );
    assert!(
        (ours.x - 2.0).abs() < 0.02 && (theirs.x - 2.0).abs() < 0.02,
        "ours {ours}, theirs {theirs}"
    );
    assert_eq!(ours.z, 0.0);
    let again = run();
    assert_eq!(
        again.0.to_array().map(f32::to_bits),
        ours.to_array().map(f32::to_bits)
    );
    assert_eq!(
        again.1.to_array().map(f32::to_bits),
        theirs.to_array().map(f32::to_bits)
    );
}

/// A rope of ten springs hangs from a fixed body, its last body tied to
/// the top of a 2 kg avian2d box: at rest, the box hangs at the rope's
/// length plus its stretch (within 2 % of that hanging length).
#[test]
fn a_rope_holds_a_box_at_its_length_plus_its_stretch() {
    let mut app = app();
    let (n, rest, k, m, big) = (10, 0.1, 400.0, 0.2, 2.0);
    let top = Vec3::new(0.0, 3.0, 0.0);
    let world = app.world_mut();
    let mut above = world.spawn(Body::fixed(top)).id();
    for i in 1..=n {
        let at = top - Vec3::Y * rest * i as f32;
        let body = world
            .spawn((Body::new(m).with_position(at), Damping(2.0)))
            .id();
        world.spawn(Spring::new(above, body, rest, k));
        above = body;
    }
    let hook = top - Vec3::Y * rest * n as f32;
    let crate_ = world
        .spawn((
            RigidBody::Dynamic,
            Collider::rectangle(0.5, 0.5),
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
    let big = app.world().get::<ComputedMass>(crate_).unwrap().value();
    assert!(big >= 2.0, "{big}");
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
    assert!(
        (y - expected).abs() < 0.05 * stretch,
        "{y} against {expected}"
    );
}

/// A rope bridge of 21 round bodies joined by springs, fixed at both ends,
/// catches an avian2d crate dropped from 0.7 m: it sags, holds the
/// crate at rest, and no body of the bridge under the crate is above its
/// bottom.
#[test]
fn a_rope_bridge_holds_a_dropped_crate() {
    let mut app = app();
    let (n, spacing, r) = (21, 0.1, 0.04);
    let world = app.world_mut();
    let mut chain = Vec::new();
    for i in 0..n {
        let at = Vec3::new((i as f32 - 10.0) * spacing, 0.0, 0.0);
        let body = if i == 0 || i == n - 1 {
            Body::fixed(at)
        } else {
            Body::new(0.1).with_position(at)
        };
        chain.push(world.spawn((body, Radius(r), Damping(2.0))).id());
    }
    for pair in chain.windows(2) {
        world.spawn(Spring::new(pair[0], pair[1], spacing, 400.0));
    }
    let crate_ = world
        .spawn((
            RigidBody::Dynamic,
            Collider::rectangle(0.4, 0.4),
            Mass(1.0),
            Transform::from_xyz(0.0, 0.7, 0.0),
        ))
        .id();
    let y = |app: &App| app.world().get::<Position>(crate_).unwrap().0.y;
    let mut lowest = f32::MAX;
    // (The bridge is soft, sagging about a metre, and its bounce takes a
    // dozen seconds to die out.)
    for _ in 0..1200 {
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
    // Through the bridge it would fall on and on.
    assert!(lowest > -1.5, "it fell to {lowest}");
    let bottom = before - 0.2;
    for &body in &chain {
        let p = app.world().get::<Body>(body).unwrap().position;
        if p.x.abs() < 0.15 {
            assert!(
                p.y < bottom - 0.5 * r,
                "a bridge body at {p}, the crate's bottom at {bottom}"
            );
        }
    }
    assert!(before < 0.2 - 0.05, "it sank into the bridge: {before}");
}

/// An entity that is both a Body and an avian2d collider gets no part; a
/// segment has none; a collider removed takes its parts with it.
#[test]
fn bad_input_is_left_out() {
    let mut app = app();
    let both = app
        .world_mut()
        .spawn((Body::new(1.0), RigidBody::Dynamic, Collider::circle(0.2)))
        .id();
    let segment = app
        .world_mut()
        .spawn((RigidBody::Static, Collider::segment(Vec2::ZERO, Vec2::X)))
        .id();
    let floor = app
        .world_mut()
        .spawn((RigidBody::Static, Collider::rectangle(2.0, 1.0)))
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

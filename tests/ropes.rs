//! Ropes in one call (`Rope`): parts and masses, a stretch under the
//! rope's own weight that does not depend on the resolution (against the
//! continuous rod's closed form), ends pinned to entities or tied to
//! bodies of yours, despawn and rebuild, bad settings.

mod common;

use bevy::prelude::*;
use bevy_euler_physics::prelude::*;
use common::*;

fn parts(app: &App, rope: Entity) -> RopeParts {
    app.world()
        .get::<RopeParts>(rope)
        .expect("the rope has its parts")
        .clone()
}

/// A rope of `n` links from a fixed point to a free end: `n + 1` bodies
/// and `n` springs, in order; the masses are `μ·L/n` inside and half that
/// at the free end.
#[test]
fn a_rope_has_its_bodies_springs_and_masses() {
    let mut app = app();
    let (mu, length, n) = (0.5, 2.0, 10);
    let rope = spawn(
        &mut app,
        Rope::new(
            RopeEnd::Fixed(Vec3::ZERO),
            RopeEnd::Free(Vec3::new(length, 0.0, 0.0)),
        )
        .with_segments(n)
        .with_mass_per_metre(mu),
    );
    app.update();
    let p = parts(&app, rope);
    assert_eq!(
        (p.bodies.len(), p.springs.len()),
        (n as usize + 1, n as usize)
    );
    assert!(body(&app, p.bodies[0]).is_fixed());
    let mass: f32 = p.bodies[1..].iter().map(|&e| body(&app, e).mass()).sum();
    let link = length / n as f32;
    assert_close(
        Vec3::splat(mass),
        Vec3::splat(mu * link * (n as f32 - 0.5)),
        1e-5,
        "mass",
    );
    for (i, &s) in p.springs.iter().enumerate() {
        let spring = app.world().get::<Spring>(s).unwrap();
        assert_eq!((spring.a, spring.b), (p.bodies[i], p.bodies[i + 1]));
        assert_close(
            Vec3::splat(spring.rest_length),
            Vec3::splat(link),
            1e-6,
            "rest",
        );
    }
}

/// The stretch of a rope of length `L` hanging from one end, at `n` links:
/// where its free end settles below `L`.
fn hanging_stretch(n: u32) -> f32 {
    let mut app = app();
    let length = 2.0;
    let rope = spawn(
        &mut app,
        Rope::new(
            RopeEnd::Fixed(Vec3::ZERO),
            RopeEnd::Free(Vec3::new(0.0, -length, 0.0)),
        )
        .with_segments(n)
        .with_mass_per_metre(0.5)
        .with_stretch(2.0, 1.0),
    );
    step(&mut app, 900);
    let end = *parts(&app, rope).bodies.last().unwrap();
    let v = body(&app, end).velocity;
    assert!(v.length() < 1e-3, "{n} links: settled: {v}");
    -body(&app, end).position.y - length
}

/// The same settings give the same rope at 8, 16 and 32 links: hanging
/// from one end it stretches by the continuous rod's `μ·g·L²/(2·EA)`, with
/// `EA = μ·(4·L·f)²` (within 1 %).
#[test]
fn a_hanging_rope_stretches_alike_at_every_resolution() {
    let (mu, length, f, g) = (0.5f32, 2.0f32, 2.0f32, 9.81f32);
    let ea = mu * (4.0 * length * f).powi(2);
    let expected = mu * g * length * length / (2.0 * ea);
    for n in [8, 16, 32] {
        let stretch = hanging_stretch(n);
        assert!(
            (stretch - expected).abs() <= 0.01 * expected,
            "{n} links: stretched {stretch} m, the rod {expected} m"
        );
    }
}

/// An end pinned to an entity follows it; an end that is a body of yours
/// is that body, joined by the last spring, and stays when the rope is
/// despawned, while every part the rope spawned goes.
#[test]
fn ends_pinned_or_tied_and_despawn() {
    let mut app = app();
    let hand = spawn(&mut app, Transform::from_xyz(0.0, 3.0, 0.0));
    let weight = spawn(
        &mut app,
        Body::new(2.0).with_position(Vec3::new(0.0, 1.0, 0.0)),
    );
    let rope = spawn(
        &mut app,
        Rope::new(
            RopeEnd::Pinned(hand, Vec3::new(0.0, -0.1, 0.0)),
            RopeEnd::Body(weight),
        )
        .with_segments(6),
    );
    step(&mut app, 5);
    let p = parts(&app, rope);
    assert_eq!(p.bodies.len(), 7);
    assert_eq!(*p.bodies.last().unwrap(), weight);
    assert_eq!(
        app.world().get::<PinnedTo>(p.bodies[0]).unwrap().target,
        hand
    );
    app.world_mut()
        .get_mut::<Transform>(hand)
        .unwrap()
        .translation
        .x = 0.5;
    step(&mut app, 1);
    assert_eq!(body(&app, p.bodies[0]).position, Vec3::new(0.5, 2.9, 0.0));
    app.world_mut().despawn(rope);
    app.update();
    assert_eq!(count::<Spring>(&mut app), 0, "no spring left");
    assert_eq!(count::<Body>(&mut app), 1, "only the weight is left");
    assert!(app.world().get::<Body>(weight).is_some());
    step(&mut app, 5);
    assert!(all_bodies_finite(&mut app));
}

/// A new `Rope` on the same entity replaces the old parts.
#[test]
fn a_new_rope_replaces_the_old_parts() {
    let mut app = app();
    let rope = spawn(
        &mut app,
        Rope::new(RopeEnd::Fixed(Vec3::ZERO), RopeEnd::Free(Vec3::X)).with_segments(4),
    );
    step(&mut app, 3);
    let old = parts(&app, rope);
    app.world_mut()
        .entity_mut(rope)
        .insert(Rope::new(RopeEnd::Fixed(Vec3::ZERO), RopeEnd::Free(Vec3::X)).with_segments(9));
    step(&mut app, 1);
    let new = parts(&app, rope);
    assert_eq!(new.springs.len(), 9);
    assert!(
        old.bodies
            .iter()
            .all(|&e| app.world().get_entity(e).is_err())
    );
    assert_eq!(count::<Spring>(&mut app), 9);
}

/// Springs implicit where the explicit step could not hold them, unless
/// chosen; an explicit rope with `AutoSubsteps` is stable.
#[test]
fn implicit_springs_where_the_stiffness_needs_them() {
    let mut app = app();
    let stiff = spawn(
        &mut app,
        Rope::new(RopeEnd::Fixed(Vec3::ZERO), RopeEnd::Free(Vec3::X)).with_stretch(8.0, 0.1),
    );
    let soft = spawn(
        &mut app,
        Rope::new(
            RopeEnd::Fixed(Vec3::Z),
            RopeEnd::Free(Vec3::new(1.0, 0.0, 1.0)),
        )
        .with_segments(4)
        .with_stretch(0.5, 0.1),
    );
    let chosen = spawn(
        &mut app,
        Rope::new(
            RopeEnd::Fixed(Vec3::Y),
            RopeEnd::Free(Vec3::new(1.0, 1.0, 0.0)),
        )
        .implicit(false),
    );
    app.update();
    let implicit = |app: &App, rope: Entity| {
        parts(app, rope).bodies[1..]
            .iter()
            .all(|&e| app.world().get::<ImplicitSprings>(e).is_some())
    };
    assert!(implicit(&app, stiff), "4·n·f·h = 8: implicit");
    assert!(!implicit(&app, soft), "4·n·f·h = 0.125: explicit");
    assert!(!implicit(&app, chosen), "chosen explicit");
}

/// Bad settings are replaced (with a warning) and a rope whose end is
/// missing spawns nothing; nothing panics and no NaN appears.
#[test]
fn bad_rope_settings_are_replaced_or_refused() {
    let mut app = app();
    let odd = spawn(
        &mut app,
        Rope::new(RopeEnd::Fixed(Vec3::ZERO), RopeEnd::Free(Vec3::X))
            .with_segments(0)
            .with_mass_per_metre(f32::NAN)
            .with_stretch(-1.0, f32::INFINITY)
            .with_length(-2.0),
    );
    let gone = app.world_mut().spawn_empty().id();
    app.world_mut().despawn(gone);
    let dangling = spawn(
        &mut app,
        Rope::new(RopeEnd::Body(gone), RopeEnd::Free(Vec3::X)),
    );
    let nowhere = spawn(
        &mut app,
        Rope::new(RopeEnd::Fixed(Vec3::NAN), RopeEnd::Free(Vec3::X)),
    );
    step(&mut app, 30);
    let p = parts(&app, odd);
    assert_eq!(p.springs.len(), 1, "one link");
    assert_close(
        Vec3::splat(body(&app, p.bodies[1]).mass()),
        Vec3::splat(0.5 * 0.2),
        1e-6,
        "the default mass per metre, half at the free end",
    );
    assert!(parts(&app, dangling).bodies.is_empty());
    assert!(parts(&app, nowhere).bodies.is_empty());
    assert!(all_bodies_finite(&mut app));
    assert!(warnings(&app).is_empty(), "{:?}", warnings(&app));
}

/// Links of a length: as many as make the rope's length closest.
#[test]
fn links_of_a_given_length() {
    let mut app = app();
    for (length, link, want) in [(2.0, 0.25, 8), (1.0, 0.3, 3), (0.1, 1.0, 1)] {
        let rope = spawn(
            &mut app,
            Rope::new(
                RopeEnd::Fixed(Vec3::ZERO),
                RopeEnd::Free(Vec3::new(length, 0.0, 0.0)),
            )
            .with_segment_length(link),
        );
        app.update();
        let parts = parts(&app, rope);
        assert_eq!(parts.springs.len(), want, "{length} m in links of {link} m");
        assert_eq!(parts.bodies.len(), want + 1);
    }
    assert!(warnings(&app).is_empty());
}

/// A drag on every body: a rope free at both ends falls at the terminal
/// speed `g/c` of the Padé damping `v ← (v + h·g)/(1 + h·c)`; a negative
/// drag is replaced by none.
#[test]
fn a_dragged_rope_falls_at_its_terminal_speed() {
    let mut app = app();
    let c = 2.0;
    let rope = spawn(
        &mut app,
        Rope::new(RopeEnd::Free(Vec3::ZERO), RopeEnd::Free(Vec3::X))
            .with_segments(3)
            .with_drag(c),
    );
    let undragged = spawn(
        &mut app,
        Rope::new(
            RopeEnd::Free(Vec3::Z),
            RopeEnd::Free(Vec3::new(1.0, 0.0, 1.0)),
        )
        .with_segments(3)
        .with_drag(-1.0),
    );
    app.update();
    let p = parts(&app, rope);
    for &b in &p.bodies {
        assert_eq!(app.world().get::<Damping>(b).map(|d| d.0), Some(c));
    }
    for &b in &parts(&app, undragged).bodies {
        assert!(app.world().get::<Damping>(b).is_none());
    }
    // Ten time constants.
    step(&mut app, (10.0 / c / H) as usize);
    let terminal = 9.81 / c;
    for &b in &p.bodies {
        let v = body(&app, b).velocity;
        assert!(
            (v.y + terminal).abs() < 1e-3 * terminal && v.x.abs() < 1e-4,
            "{v} against {terminal}"
        );
    }
}

/// An end tied to an entity (`RopeEnd::Tied`) is a free body of the rope
/// with a `TiedTo`: held at the entity's point, it hangs there with the
/// rope below it.
#[test]
fn an_end_tied_to_an_entity_is_held_at_its_point() {
    let mut app = app();
    let hook = spawn(&mut app, Transform::from_xyz(1.0, 3.0, 0.0));
    let rope = spawn(
        &mut app,
        Rope::new(
            RopeEnd::Tied(hook, Vec3::new(0.0, -0.2, 0.0)),
            RopeEnd::Free(Vec3::new(2.0, 3.0, 0.0)),
        )
        .with_segments(8),
    );
    step(&mut app, 240);
    let p = parts(&app, rope);
    let top = p.bodies[0];
    assert_eq!(app.world().get::<TiedTo>(top).unwrap().target, hook);
    assert!(body(&app, top).inv_mass > 0.0, "a free body");
    let at = body(&app, top).position;
    assert!((at - Vec3::new(1.0, 2.8, 0.0)).length() < 5e-3, "{at}");
    let bottom = body(&app, *p.bodies.last().unwrap()).position;
    assert!(bottom.y < at.y - 0.2, "the rope hangs below: {bottom}");
}

/// A rope tied (`RopeEnd::Tied`) to a 3 kg box that gives way (an
/// obstacle with an `ObstacleMass`, which the game moves by gravity and
/// by what the rope pulled it with, as the avian bridge does) hangs as a
/// rope ending in a 3 kg body does: the same stretch within 10 %.
#[test]
fn a_rope_tied_to_a_mass_hangs_as_one_ending_in_a_body() {
    const G: f32 = 9.81;
    let hang = |tied: bool| {
        let mut app = app();
        let at = Vec3::new(0.0, 2.0, 0.0);
        let weight = if tied {
            let b = app.world_mut().spawn_empty().id();
            app.world_mut().entity_mut(b).insert((
                Obstacle::from(Cuboid::new(0.6, 0.6, 0.6)),
                Transform::from_translation(at - Vec3::Y * 0.3),
                ObstacleMass::new(b, 3.0, Mat3::IDENTITY, at - Vec3::Y * 0.3),
                ObstacleReaction::default(),
                CollisionGroups::NONE,
            ));
            b
        } else {
            spawn(&mut app, Body::new(3.0).with_position(at))
        };
        let end = if tied {
            RopeEnd::Tied(weight, Vec3::new(0.0, 0.3, 0.0))
        } else {
            RopeEnd::Body(weight)
        };
        let top = Vec3::new(0.0, 4.0, 0.0);
        let rope = Rope::new(RopeEnd::Fixed(top), end).with_segments(20);
        spawn(&mut app, rope);
        let (mut v, mut ends) = (0.0f32, Vec::new());
        for i in 0..400 {
            step(&mut app, 1);
            if tied {
                // The game's side: gravity and the rope's pull move it.
                let pull = app.world().get::<ObstacleReaction>(weight).unwrap().impulse;
                v += pull.y / 3.0 - G * H;
                let world = app.world_mut();
                let mut t = world.get_mut::<Transform>(weight).unwrap();
                t.translation.y += v * H;
                let y = t.translation.y;
                world
                    .get_mut::<ObstacleMass>(weight)
                    .unwrap()
                    .center_of_mass
                    .y = y;
                let next = ObstacleVelocity::linear(Vec3::Y * (v - G * H));
                world.entity_mut(weight).insert(next);
            }
            if i >= 300 {
                let y = match tied {
                    true => app.world().get::<Transform>(weight).unwrap().translation.y + 0.3,
                    false => body(&app, weight).position.y,
                };
                ends.push(top.y - y);
            }
        }
        ends.iter().sum::<f32>() / ends.len() as f32
    };
    let (body_end, tied) = (hang(false), hang(true));
    let stretch = body_end - 2.0;
    assert!(stretch > 0.01, "{body_end}");
    assert!(
        (tied - body_end).abs() < 0.1 * stretch,
        "tied {tied}, a body's end {body_end}"
    );
}

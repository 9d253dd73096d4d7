//! A rocket towing a rope a thousand kilometres, with a floating origin.
//!
//! `cargo run --release --example rocket`
//!
//! A rocket flies through empty space towing a rope of ten rods and a pod,
//! thrusting at 1 g so that the rope trails, and weaving so that it
//! swings. It starts at the world's zero at 100 km/s and passes 1 000 km
//! after ten seconds. The rocket
//! carries a [`FloatingOrigin`]: whenever it is more than a cell (512 m)
//! from local zero, the plugin moves the [`PhysicsOrigin`] by whole cells
//! and every body, history and transform by the opposite, exactly, so the
//! simulation always runs near local zero, where `f32` resolves tens of
//! micrometres.
//!
//! Press F (or start with `-- --no-floating-origin`) to switch the floating
//! origin off: the origin then stays where it
//! is, local coordinates grow with the flight, and far out the rope jitters
//! and its rods lose their length (an `f32` resolves 6 cm at 1 000 km).
//! Switch it back on and the next step brings everything back near zero.
//! The readout (top right) shows the world position, the origin, the
//! rocket's local position, the worst rod length error now and over the
//! flight, and how many shifts ran. The grid is drawn every metre at
//! whole world metres.
//!
//! Keys: F toggles the floating origin, 1–4 set the speed (100 m/s,
//! 1 km/s, 10 km/s, 100 km/s), R starts over, F1 hides the physics panel.

mod support;

use bevy::math::DVec3;
use bevy::prelude::*;
use bevy_euler_physics::prelude::*;
use support::parts::example_app;

/// Pixels per metre.
const SCALE: f32 = 60.0;
/// Rods in the tow rope, and their length.
const LINKS: usize = 10;
const LINK: f32 = 0.4;
/// The rocket's mass; the rope's bodies weigh 0.2 kg, the pod 0.5 kg.
const ROCKET_MASS: f32 = 4.0;
const TOTAL_MASS: f32 = ROCKET_MASS + 0.2 * (LINKS - 1) as f32 + 0.5;
/// The thrust's acceleration of the whole contraption: 1 g.
const THRUST: f32 = 9.81;

/// The rocket, which the camera follows.
#[derive(Component)]
struct Rocket;

/// A body of the flight (despawned by R).
#[derive(Component)]
struct Flight;

/// A rod of the tow rope.
#[derive(Component)]
struct Link;

#[derive(Resource)]
struct Cruise {
    /// The speed to start at, or set by a key.
    speed: f32,
    /// A speed set by a key, for the next step.
    set: Option<f32>,
    floating: bool,
    /// Worst rod length error since the start, in metres.
    worst: f32,
    shifts: u32,
    /// Seconds since the start (fixed time).
    time: f32,
}

impl Default for Cruise {
    fn default() -> Self {
        Self {
            speed: 100_000.0,
            set: None,
            floating: !std::env::args().any(|arg| arg == "--no-floating-origin"),
            worst: 0.0,
            shifts: 0,
            time: 0.0,
        }
    }
}

#[derive(Component)]
struct Readout;

#[derive(Resource)]
struct Looks {
    link: Handle<Mesh>,
    link_material: Handle<ColorMaterial>,
}

fn main() {
    example_app("rocket")
        .insert_resource(Gravity(Vec3::ZERO))
        .init_resource::<Cruise>()
        .add_systems(Startup, (setup, launch).chain())
        .add_systems(FixedUpdate, steer.in_set(PhysicsSystems::Prepare))
        .add_systems(FixedUpdate, measure.in_set(PhysicsSystems::Finish))
        .add_systems(
            Update,
            (
                controls,
                (follow, draw, readout)
                    .chain()
                    .after(InterpolationSystems::Interpolate),
            ),
        )
        .run();
}

fn setup(
    mut commands: Commands,
    mut meshes: ResMut<Assets<Mesh>>,
    mut materials: ResMut<Assets<ColorMaterial>>,
) {
    commands.spawn(support::camera(SCALE, Vec2::ZERO));
    commands.insert_resource(Looks {
        link: meshes.add(Circle::new(0.07)),
        link_material: materials.add(Color::srgb(0.95, 0.8, 0.3)),
    });
    commands.spawn((Readout, support::readout(Color::srgb(0.9, 0.92, 0.95))));
}

/// The rocket at the world's zero, the rope and the pod trailing behind.
fn launch(
    mut commands: Commands,
    looks: Res<Looks>,
    cruise: Res<Cruise>,
    mut meshes: ResMut<Assets<Mesh>>,
    mut materials: ResMut<Assets<ColorMaterial>>,
) {
    commands.insert_resource(PhysicsOrigin::default());
    let velocity = Vec3::new(cruise.speed, 0.0, 0.0);
    let mut rocket = commands.spawn((
        Body::new(ROCKET_MASS).with_velocity(velocity),
        // A whipped chain of rods holds its lengths to millimetres with 8
        // passes of h/8 (its island takes the largest count of its bodies).
        Substeps(8),
        Rocket,
        Flight,
        Mesh2d(meshes.add(Triangle2d::new(
            Vec2::new(0.5, 0.0),
            Vec2::new(-0.4, 0.22),
            Vec2::new(-0.4, -0.22),
        ))),
        MeshMaterial2d(materials.add(Color::srgb(0.85, 0.88, 0.95))),
    ));
    if cruise.floating {
        rocket.insert(FloatingOrigin);
    }
    let mut prev = rocket.id();
    for i in 1..=LINKS {
        let pod = i == LINKS;
        let at = Vec3::new(-LINK * i as f32, 0.0, 0.0);
        let mut body = commands.spawn((
            Body::new(if pod { 0.5 } else { 0.2 })
                .with_position(at)
                .with_velocity(velocity),
            Flight,
        ));
        if pod {
            body.insert((
                Mesh2d(meshes.add(Rectangle::new(0.3, 0.3))),
                MeshMaterial2d(materials.add(Color::srgb(0.35, 0.7, 0.95))),
            ));
        } else {
            body.insert((
                Mesh2d(looks.link.clone()),
                MeshMaterial2d(looks.link_material.clone()),
            ));
        }
        let next = body.id();
        commands.spawn((DistanceConstraint::new(prev, next, LINK), Link, Flight));
        prev = next;
    }
}

/// Thrusts at 1 g for the whole contraption, so that the rope trails, and
/// weaves sideways, so that it swings; after a speed key, changes every
/// body's speed along x by the same amount.
fn steer(
    time: Res<Time<Fixed>>,
    mut cruise: ResMut<Cruise>,
    mut rocket: Query<(&mut Body, &mut AccumulatedForce), With<Rocket>>,
    mut rope: Query<&mut Body, (With<Flight>, Without<Rocket>)>,
) {
    cruise.time += time.delta_secs();
    let Ok((mut body, mut force)) = rocket.single_mut() else {
        return;
    };
    if let Some(speed) = cruise.set.take() {
        let change = speed - body.velocity.x;
        body.velocity.x += change;
        for mut part in &mut rope {
            part.velocity.x += change;
        }
    }
    let weave =
        15.0 * ROCKET_MASS * (2.0 * cruise.time).sin() - 2.0 * ROCKET_MASS * body.velocity.y;
    force.0 += Vec3::new(THRUST * TOTAL_MASS, weave, 0.0);
}

/// After each step: the worst rod length error, and the shifts.
fn measure(
    mut cruise: ResMut<Cruise>,
    mut shifted: MessageReader<OriginShifted>,
    links: Query<&DistanceConstraint, With<Link>>,
    bodies: Query<&Body>,
) {
    cruise.shifts += shifted.read().count() as u32;
    let now = rope_error(&links, &bodies);
    cruise.worst = cruise.worst.max(now);
}

/// The largest `| |x_b − x_a| − length |` over the rope's rods.
fn rope_error(links: &Query<&DistanceConstraint, With<Link>>, bodies: &Query<&Body>) -> f32 {
    links
        .iter()
        .filter_map(|rod| {
            let (a, b) = (bodies.get(rod.a).ok()?, bodies.get(rod.b).ok()?);
            Some((a.position.distance(b.position) - rod.length).abs())
        })
        .fold(0.0, f32::max)
}

fn controls(
    keys: Res<ButtonInput<KeyCode>>,
    mut commands: Commands,
    mut cruise: ResMut<Cruise>,
    flight: Query<Entity, With<Flight>>,
    rocket: Query<Entity, With<Rocket>>,
) {
    if keys.just_pressed(KeyCode::KeyF) {
        cruise.floating = !cruise.floating;
        if let Ok(rocket) = rocket.single() {
            if cruise.floating {
                commands.entity(rocket).insert(FloatingOrigin);
            } else {
                commands.entity(rocket).remove::<FloatingOrigin>();
            }
        }
    }
    for (key, speed) in [
        (KeyCode::Digit1, 100.0),
        (KeyCode::Digit2, 1_000.0),
        (KeyCode::Digit3, 10_000.0),
        (KeyCode::Digit4, 100_000.0),
    ] {
        if keys.just_pressed(key) {
            cruise.speed = speed;
            cruise.set = Some(speed);
        }
    }
    if keys.just_pressed(KeyCode::KeyR) {
        for entity in &flight {
            commands.entity(entity).despawn();
        }
        *cruise = Cruise {
            speed: cruise.speed,
            floating: cruise.floating,
            ..default()
        };
        commands.run_system_cached(launch);
    }
}

/// The camera on the rocket as drawn.
fn follow(
    rocket: Query<&Transform, (With<Rocket>, Without<Camera>)>,
    mut camera: Query<&mut Transform, With<Camera>>,
) {
    if let (Ok(rocket), Ok(mut camera)) = (rocket.single(), camera.single_mut()) {
        camera.translation.x = rocket.translation.x;
        camera.translation.y = rocket.translation.y;
    }
}

/// The rods, and a grid every metre at whole world metres around the
/// camera.
fn draw(
    mut gizmos: Gizmos,
    origin: Res<PhysicsOrigin>,
    camera: Query<&Transform, With<Camera>>,
    links: Query<&DistanceConstraint, With<Link>>,
    drawn: DrawnPositions,
) {
    if let Ok(camera) = camera.single() {
        let centre = origin.world(camera.translation);
        let grid = Color::srgba(0.5, 0.55, 0.65, 0.18);
        for k in -12..=12 {
            let x = origin
                .local(DVec3::new(centre.x.floor() + f64::from(k), centre.y, 0.0))
                .x;
            let y = origin
                .local(DVec3::new(centre.x, centre.y.floor() + f64::from(k), 0.0))
                .y;
            let (top, bottom) = (camera.translation.y + 7.0, camera.translation.y - 7.0);
            let (left, right) = (camera.translation.x - 12.0, camera.translation.x + 12.0);
            gizmos.line_2d(Vec2::new(x, bottom), Vec2::new(x, top), grid);
            gizmos.line_2d(Vec2::new(left, y), Vec2::new(right, y), grid);
        }
    }
    for rod in &links {
        if let (Some(a), Some(b)) = (drawn.get(rod.a), drawn.get(rod.b)) {
            gizmos.line_2d(a.truncate(), b.truncate(), Color::srgb(0.8, 0.75, 0.5));
        }
    }
}

fn readout(
    cruise: Res<Cruise>,
    origin: Res<PhysicsOrigin>,
    rocket: Query<&Body, With<Rocket>>,
    links: Query<&DistanceConstraint, With<Link>>,
    bodies: Query<&Body>,
    mut text: Query<&mut Text, With<Readout>>,
) {
    let (Ok(rocket), Ok(mut text)) = (rocket.single(), text.single_mut()) else {
        return;
    };
    let world = origin.world(rocket.position);
    let now = rope_error(&links, &bodies);
    **text = format!(
        "floating origin: {} (F)\n\
         speed: {:.0} m/s (1-4)\n\
         world x: {:.3} km\n\
         origin x: {:.3} km\n\
         local x: {:.3} m\n\
         rod length error: {:.3} mm now, {:.3} mm worst\n\
         shifts: {}",
        if cruise.floating { "on" } else { "off" },
        rocket.velocity.x,
        world.x / 1000.0,
        origin.position.x / 1000.0,
        rocket.position.x,
        now * 1000.0,
        cruise.worst * 1000.0,
        cruise.shifts,
    );
    if support::capturing() {
        info!(
            "FLIGHT t {:.3} world {:.1} origin {:.1} local {:.3} error {:e} worst {:e} shifts {}",
            cruise.time,
            world.x,
            origin.position.x,
            rocket.position.x,
            now,
            cruise.worst,
            cruise.shifts
        );
    }
}

//! A character of primitive shapes walks a circle in a soft cape.
//!
//! `cargo run --release --example cape`
//!
//! The character is a torso, a head, two arms and two legs, each a Bevy
//! primitive drawn by a mesh and made an [`Obstacle`] of the same shape. An
//! [`AnimationClip`] built in code walks it around a circle, turning it as
//! it goes and swinging its legs and arms. The cape is a mesh made soft by
//! a [`SoftMesh`]: its top row is pinned to the torso
//! ([`SoftMesh::pin_to`]), and its bodies, with a radius, slide over the
//! torso, legs and arms as they move.
//!
//! **The clip in the fixed step.** Bevy plays animations once a frame, in
//! `PostUpdate`. The physics reads the character at each fixed step, and a
//! frame may run none, one or several steps: played the usual way, the
//! limbs would jump a whole frame's motion at one step and stand still at
//! the next. So the clip is paused, and sampled at the fixed clock: before
//! each step (in [`PhysicsSystems::Prepare`]) the player is sought to the
//! step's time and Bevy's own `animate_targets` poses the limbs. Then, in
//! `Update`, it is sought to the time the bodies are drawn at (between the
//! last two steps, as [`Time<Fixed>::overstep_fraction`] says), so that
//! `PostUpdate` draws the character where the cape is drawn.
//!
//! Keys: space stops and starts the walk, R builds the cape again, F1 hides
//! the physics panel. Mouse: drag any body (left button).

mod support;

use std::f32::consts::{PI, TAU};

use bevy::animation::{AnimatedBy, AnimationTargetId, animate_targets, animated_field};
use bevy::core_pipeline::tonemapping::Tonemapping;
use bevy::math::curve::{FunctionCurve, Interval};
use bevy::prelude::*;
use bevy::transform::helper::TransformHelper;
use bevy_euler_physics::prelude::*;
use support::parts::example_app;

/// One walk around the circle, in seconds.
const LAP: f32 = 8.0;
/// The circle's radius.
const CIRCLE: f32 = 1.6;
/// One stride (left and right), in seconds; a lap holds a whole number.
const STRIDE: f32 = 1.0;
/// How far the legs and arms swing to either side, in radians.
const LEG_SWING: f32 = 0.5;
const ARM_SWING: f32 = 0.4;

/// The hips and shoulders, in the character's frame (its feet at the
/// origin, facing −Z).
const HIP: Vec3 = Vec3::new(0.11, 0.88, 0.0);
const SHOULDER: Vec3 = Vec3::new(0.25, 1.45, 0.0);

/// The cape: `COLUMNS × ROWS` vertices, its top row (pinned) at `CAPE_TOP`
/// on an arc around the back, `ROW` apart down.
const COLUMNS: u32 = 15;
const ROWS: u32 = 22;
const CAPE_TOP: f32 = 1.5;
const ROW: f32 = 0.04;
/// The radius of the cape's bodies, for contacts.
const CAPE_RADIUS: f32 = 0.02;

/// The walk: the clip's node in the player's graph, the walk's own clock
/// (stopped with the walk), and the character's entities.
#[derive(Resource)]
struct Walk {
    node: AnimationNodeIndex,
    time: f32,
    walking: bool,
    walker: Entity,
    torso: Entity,
    cape: Entity,
}

#[derive(Component)]
struct Readout;

/// What the cape met, over the whole run (for the screenshot test's log).
#[derive(Resource, Default)]
struct Watch {
    /// Steps watched.
    steps: u32,
    /// Body-steps with a cape body's centre inside a limb.
    through: u32,
    /// The nearest a cape body's centre came to a limb's surface, as a
    /// share of its radius.
    nearest: f32,
    /// The most cape bodies touching a limb in one step.
    touching: usize,
    /// How far the character walked and turned (in degrees), seen from
    /// above, and where it stood and faced after the last step.
    travelled: f32,
    turned: f32,
    last: Option<(Vec2, Vec2)>,
    /// The least and most the character turned in one step (in degrees),
    /// from the third step on (Bevy readies the animation graph in the
    /// first frame's `PostUpdate`, so the first step poses nothing).
    step_turn: (f32, f32),
}

fn main() {
    example_app("cape")
        .insert_resource(ClearColor(Color::srgb(0.62, 0.66, 0.74)))
        .insert_resource(Watch {
            nearest: f32::INFINITY,
            step_turn: (f32::INFINITY, 0.0),
            ..default()
        })
        .add_systems(Startup, setup)
        .add_systems(
            FixedUpdate,
            (
                (pose_for_step, animate_targets)
                    .chain()
                    .in_set(PhysicsSystems::Prepare),
                watch.in_set(PhysicsSystems::Finish),
            ),
        )
        .add_systems(Update, (pose_for_drawing, controls, readout))
        .run();
}

/// Where the walk puts the character at time `t` (the clip's root curves).
fn walker_at(t: f32) -> Transform {
    let around = TAU * t / LAP;
    // A little bob, twice a stride.
    let bob = 0.025 * (1.0 - (2.0 * TAU * t / STRIDE).cos());
    // Facing along the circle (clockwise seen from above: a right turn):
    // −Z turned
    // onto (−sin, 0, cos).
    Transform::from_xyz(CIRCLE * around.cos(), bob, CIRCLE * around.sin())
        .with_rotation(Quat::from_rotation_y(PI - around))
}

/// A limb's swing at time `t`: `amplitude` forwards and back, once a stride.
fn swing(t: f32, amplitude: f32) -> Quat {
    Quat::from_rotation_x(amplitude * (TAU * t / STRIDE).sin())
}

/// The walk as an animation clip: the root goes round the circle and turns;
/// the hips and shoulders swing, left against right, arms against legs.
fn walk_clip(walker: AnimationTargetId, joints: [AnimationTargetId; 4]) -> AnimationClip {
    let lap = Interval::new(0.0, LAP).unwrap();
    let mut clip = AnimationClip::default();
    clip.add_curve_to_target(
        walker,
        AnimatableCurve::new(
            animated_field!(Transform::translation),
            FunctionCurve::new(lap, |t| walker_at(t).translation),
        ),
    );
    clip.add_curve_to_target(
        walker,
        AnimatableCurve::new(
            animated_field!(Transform::rotation),
            FunctionCurve::new(lap, |t| walker_at(t).rotation),
        ),
    );
    let [left_hip, right_hip, left_shoulder, right_shoulder] = joints;
    for (target, amplitude) in [
        (left_hip, LEG_SWING),
        (right_hip, -LEG_SWING),
        (left_shoulder, -ARM_SWING),
        (right_shoulder, ARM_SWING),
    ] {
        clip.add_curve_to_target(
            target,
            AnimatableCurve::new(
                animated_field!(Transform::rotation),
                FunctionCurve::new(lap, move |t| swing(t, amplitude)),
            ),
        );
    }
    clip
}

/// The cape, in the character's frame: a sheet hung from an arc around the
/// back of the shoulders, falling straight down.
fn cape_mesh() -> Mesh {
    let mut positions = Vec::new();
    for row in 0..ROWS {
        for column in 0..COLUMNS {
            let a = 1.1 * (2.0 * column as f32 / (COLUMNS - 1) as f32 - 1.0);
            positions.push([0.27 * a.sin(), CAPE_TOP - ROW * row as f32, 0.22 * a.cos()]);
        }
    }
    let mut indices = Vec::new();
    for row in 0..ROWS - 1 {
        for column in 0..COLUMNS - 1 {
            let at = row * COLUMNS + column;
            indices.extend([
                at,
                at + COLUMNS,
                at + 1,
                at + 1,
                at + COLUMNS,
                at + COLUMNS + 1,
            ]);
        }
    }
    support::triangle_mesh(positions, indices)
}

/// The cape's cloth: its top row pinned to the torso; its bodies touch the
/// character's shapes but not each other.
fn soft_cape(torso: Entity) -> SoftMesh {
    SoftMesh::default()
        .with_mass(SoftMass::PerSquareMetre(0.4))
        .with_stretch(6.0, 0.2)
        .with_bend(0.05)
        .with_drag(0.4)
        .with_radius(CAPE_RADIUS)
        .with_groups(CollisionGroups::new(2, !2))
        .pin_to(
            PinSelect::Where(PinTest(|p| p.y > CAPE_TOP - 0.5 * ROW)),
            torso,
        )
}

fn setup(
    mut commands: Commands,
    mut meshes: ResMut<Assets<Mesh>>,
    mut materials: ResMut<Assets<StandardMaterial>>,
    mut clips: ResMut<Assets<AnimationClip>>,
    mut graphs: ResMut<Assets<AnimationGraph>>,
) {
    // The camera follows the character (see `pose_for_drawing`).
    commands.spawn((Camera3d::default(), Tonemapping::None, Transform::default()));
    support::daylight(&mut commands, 600.0);
    commands.spawn((
        Mesh3d(meshes.add(Plane3d::default().mesh().size(14.0, 14.0))),
        MeshMaterial3d(materials.add(Color::srgb(0.42, 0.5, 0.38))),
    ));
    // The path, drawn on the ground.
    commands.spawn((
        Mesh3d(meshes.add(Annulus::new(CIRCLE - 0.25, CIRCLE + 0.25))),
        MeshMaterial3d(materials.add(Color::srgb(0.6, 0.55, 0.42))),
        Transform::from_xyz(0.0, 0.002, 0.0).with_rotation(Quat::from_rotation_x(-PI / 2.0)),
    ));

    let skin = materials.add(Color::srgb(0.85, 0.7, 0.55));
    let cloth = materials.add(Color::srgb(0.25, 0.3, 0.45));
    // A part of the character: a primitive drawn and touched alike.
    let mut part = |shape: Obstacle, mesh: Mesh, material: &Handle<StandardMaterial>, at: Vec3| {
        (
            shape,
            Mesh3d(meshes.add(mesh)),
            MeshMaterial3d(material.clone()),
            Transform::from_translation(at),
        )
    };
    let torso_shape = Capsule3d::new(0.17, 0.44);
    let leg_shape = Capsule3d::new(0.085, 0.62);
    let arm_shape = Capsule3d::new(0.055, 0.45);
    let head_shape = Sphere::new(0.12);
    let torso_part = part(
        torso_shape.into(),
        torso_shape.into(),
        &cloth,
        Vec3::Y * 1.2,
    );
    let head_part = part(head_shape.into(), head_shape.into(), &skin, Vec3::Y * 1.72);

    // The character: the walker (the clip's root) and its parts; the
    // hips and shoulders are joints the clip swings, each holding a limb.
    let name = Name::new("walker");
    let walker_id = AnimationTargetId::from_name(&name);
    let walker = commands
        .spawn((name, walker_id, walker_at(0.0), Visibility::default()))
        .id();
    let torso = commands.spawn((torso_part, ChildOf(walker))).id();
    commands.spawn((head_part, ChildOf(walker)));
    let mut joints = Vec::new();
    // Each joint: its name, where it is on the walker, its limb, and how
    // far below the joint the limb's centre hangs.
    for (name, at, limb, below) in [
        ("left hip", HIP * Vec3::new(-1.0, 1.0, 1.0), leg_shape, 0.43),
        ("right hip", HIP, leg_shape, 0.43),
        (
            "left shoulder",
            SHOULDER * Vec3::new(-1.0, 1.0, 1.0),
            arm_shape,
            0.28,
        ),
        ("right shoulder", SHOULDER, arm_shape, 0.28),
    ] {
        let name = Name::new(name);
        let id = AnimationTargetId::from_name(&name);
        let material = if limb == arm_shape { &skin } else { &cloth };
        let joint = commands
            .spawn((
                name,
                id,
                AnimatedBy(walker),
                Transform::from_translation(at),
                Visibility::default(),
                ChildOf(walker),
            ))
            .id();
        commands.spawn((
            part(limb.into(), limb.into(), material, Vec3::Y * -below),
            ChildOf(joint),
        ));
        joints.push(id);
    }

    let (graph, node) =
        AnimationGraph::from_clip(clips.add(walk_clip(walker_id, joints.try_into().unwrap())));
    let mut player = AnimationPlayer::default();
    player.play(node).pause();
    commands.entity(walker).insert((
        AnimatedBy(walker),
        player,
        AnimationGraphHandle(graphs.add(graph)),
    ));

    // The cape, placed as the character stands at the start; it is built
    // where it hangs then, and its top row follows the torso from there.
    let cape = commands
        .spawn((
            Mesh3d(meshes.add(cape_mesh())),
            MeshMaterial3d(materials.add(StandardMaterial {
                base_color: Color::srgb(0.75, 0.08, 0.1),
                double_sided: true,
                cull_mode: None,
                perceptual_roughness: 0.8,
                ..default()
            })),
            walker_at(0.0),
            soft_cape(torso),
        ))
        .id();
    commands.spawn((Readout, support::readout(Color::srgb(0.05, 0.05, 0.1))));
    commands.insert_resource(Walk {
        node,
        time: 0.0,
        walking: true,
        walker,
        torso,
        cape,
    });
}

/// Before each step: the walk's clock on by one step, and the player sought
/// to it (`animate_targets`, next, poses the character there).
fn pose_for_step(
    time: Res<Time<Fixed>>,
    mut walk: ResMut<Walk>,
    mut players: Query<&mut AnimationPlayer>,
) {
    if walk.walking {
        walk.time += time.delta_secs();
    }
    seek(&mut players, &walk, walk.time);
}

/// Each frame: the player sought to the time the bodies are drawn at, one
/// step behind the clock and `overstep_fraction` of a step on; the camera
/// behind the character's right shoulder.
fn pose_for_drawing(
    time: Res<Time<Fixed>>,
    walk: Res<Walk>,
    mut players: Query<&mut AnimationPlayer>,
    mut cameras: Query<&mut Transform, With<Camera3d>>,
) {
    let behind = if walk.walking {
        (1.0 - time.overstep_fraction()) * time.timestep().as_secs_f32()
    } else {
        0.0
    };
    let t = (walk.time - behind).max(0.0);
    seek(&mut players, &walk, t);
    let walker = walker_at(t);
    let feet = walker.translation.with_y(0.0);
    for mut camera in &mut cameras {
        *camera = Transform::from_translation(feet + walker.rotation * Vec3::new(1.7, 1.8, 2.6))
            .looking_at(feet + Vec3::Y * 0.9, Vec3::Y);
    }
}

fn seek(players: &mut Query<&mut AnimationPlayer>, walk: &Walk, t: f32) {
    if let Ok(mut player) = players.get_mut(walk.walker)
        && let Some(clip) = player.animation_mut(walk.node)
    {
        clip.set_seek_time(t.rem_euclid(LAP));
    }
}

fn controls(keys: Res<ButtonInput<KeyCode>>, mut walk: ResMut<Walk>, mut commands: Commands) {
    if keys.just_pressed(KeyCode::Space) {
        walk.walking = !walk.walking;
    }
    if keys.just_pressed(KeyCode::KeyR) {
        commands.entity(walk.cape).insert(soft_cape(walk.torso));
    }
}

/// The distance from `p` to the surface of a sphere or capsule obstacle
/// placed at `at` (negative inside); `None` for other shapes.
fn distance(shape: &Obstacle, at: &GlobalTransform, p: Vec3) -> Option<f32> {
    let local = at.affine().inverse().transform_point3(p);
    match shape {
        Obstacle::Sphere(sphere) => Some(local.length() - sphere.radius),
        Obstacle::Capsule(capsule) => {
            let axis = Vec3::Y * local.y.clamp(-capsule.half_length, capsule.half_length);
            Some(local.distance(axis) - capsule.radius)
        }
        _ => None,
    }
}

/// After each step: how near the cape's free bodies are to the
/// character's shapes, and how far the character walked and turned.
fn watch(
    walk: Res<Walk>,
    mut watch: ResMut<Watch>,
    cape: Query<&Body, With<PartOfSoftMesh>>,
    shapes: Query<(Entity, &Obstacle)>,
    transforms: TransformHelper,
) {
    let placed: Vec<(&Obstacle, GlobalTransform)> = shapes
        .iter()
        .filter_map(|(entity, shape)| {
            Some((shape, transforms.compute_global_transform(entity).ok()?))
        })
        .collect();
    let mut touching = 0;
    for body in cape.iter().filter(|b| !b.is_fixed()) {
        let nearest = placed
            .iter()
            .filter_map(|(shape, at)| distance(shape, at, body.position))
            .fold(f32::INFINITY, f32::min);
        watch.nearest = watch.nearest.min(nearest / CAPE_RADIUS);
        watch.through += u32::from(nearest < 0.0);
        touching += usize::from(nearest < 1.5 * CAPE_RADIUS);
    }
    watch.touching = watch.touching.max(touching);
    watch.steps += 1;
    // Along the ground: the distance and the turn seen from above.
    if let Ok(walker) = transforms.compute_global_transform(walk.walker) {
        let (at, facing) = (walker.translation().xz(), walker.forward().xz());
        if let Some((was_at, was_facing)) = watch.last {
            watch.travelled += at.distance(was_at);
            let turn = was_facing
                .perp_dot(facing)
                .atan2(was_facing.dot(facing))
                .to_degrees()
                .abs();
            watch.turned += turn;
            if watch.steps > 2 {
                let (least, most) = watch.step_turn;
                watch.step_turn = (least.min(turn), most.max(turn));
            }
        }
        watch.last = Some((at, facing));
    }
}

fn readout(
    walk: Res<Walk>,
    watch: Res<Watch>,
    capes: Query<&SoftMeshParts>,
    bodies: Query<&Body>,
    mut text: Query<&mut Text, With<Readout>>,
    mut frame: Local<u32>,
) {
    let (Ok(mut text), Ok(parts)) = (text.single_mut(), capes.get(walk.cape)) else {
        return;
    };
    let cape: Vec<&Body> = bodies.iter_many(&parts.bodies).collect();
    let pinned = cape.iter().filter(|b| b.is_fixed()).count();
    **text = format!(
        "cape: {} bodies, {pinned} pinned to the torso\n\
         walking: {} (space), R: a new cape",
        cape.len(),
        if walk.walking { "yes" } else { "no" },
    );
    *frame += 1;
    if support::capturing() && (*frame).is_multiple_of(60) {
        let finite = cape.iter().all(|b| b.position.is_finite());
        let lowest = cape
            .iter()
            .map(|b| b.position.y)
            .fold(f32::INFINITY, f32::min);
        info!(
            "CAPE t {:.3} bodies {} pinned {pinned} finite {} lowest {lowest} steps {} through {} nearest {} touching {} travelled {} turned {} step_turn_least {} step_turn_most {}",
            walk.time,
            cape.len(),
            u8::from(finite),
            watch.steps,
            watch.through,
            watch.nearest,
            watch.touching,
            watch.travelled,
            watch.turned,
            watch.step_turn.0,
            watch.step_turn.1,
        );
    }
}

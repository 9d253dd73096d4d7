//! Ten ragdolls falling into a heap on the ground, coming to rest and
//! falling asleep.
//!
//! `cargo run --release --example ragdoll`
//!
//! Each ragdoll is `assets/models/ragdoll.model.ron`: a point mass per joint,
//! bones as rigid rods, a torso braced by its diagonals, a head on stiff
//! springs, angle limits at the knees, elbows, hips, shoulders and neck.
//! Bodies have radii: they touch the ground (restitution and friction) and
//! each other, limbs of one ragdoll included where no join holds them, so
//! ragdolls pile up instead of falling through each other; resting
//! ragdolls fall asleep and are drawn dimmer. Each is drawn as a figure
//! (see `FIGURE`): head and joints as circles, arms, legs and torso as
//! thick strokes. Edit the model file while the example runs and every
//! ragdoll is rebuilt from it; a broken file is reported (with its line)
//! and the old ragdolls stay.
//!
//! Mouse: drag any body (left button). Keys: R drops another ragdoll, Space
//! throws every ragdoll up, I toggles interpolation, P pauses, N steps,
//! F1 hides the physics panel. The "Ragdolls" window has each ragdoll's
//! sleep and substep settings.

mod support;

use bevy::prelude::*;
use bevy_egui::input::egui_wants_any_keyboard_input;
use bevy_egui::{EguiContexts, EguiPrimaryContextPass, egui};
use bevy_euler_physics::prelude::*;
use support::parts::{
    Materials, Part, apply_island_settings, example_app, show_sleep, substeps_choice,
};

/// Pixels per metre: the physics works in metres.
const SCALE: f32 = 100.0;
/// The ground's height.
const GROUND: f32 = -3.0;
/// How many ragdolls the scene starts with.
const START: usize = 10;
/// Ragdoll colours, in turn.
const COLORS: [Color; 5] = [
    Color::srgb(0.95, 0.55, 0.35),
    Color::srgb(0.45, 0.8, 0.95),
    Color::srgb(0.55, 0.9, 0.45),
    Color::srgb(0.95, 0.8, 0.3),
    Color::srgb(0.8, 0.55, 0.95),
];

/// The model every ragdoll is made from.
#[derive(Resource)]
struct RagdollModel(Handle<PhysicsModel>);

/// A ragdoll: the [`PhysicsModelInstance`] entity, with its settings.
#[derive(Component)]
struct Ragdoll {
    number: usize,
    color: Color,
    /// Spin given at spawn (rad/s), so that ragdolls land differently.
    spin: f32,
    may_sleep: bool,
    /// `None`: automatic.
    substeps: Option<u32>,
    /// The settings changed and must be applied to the bodies.
    dirty: bool,
}

/// The shared circle mesh and each ragdoll's materials.
#[derive(Resource)]
struct Looks {
    circle: Handle<Mesh>,
}

fn main() {
    example_app("ragdoll")
        .init_gizmo_group::<Limbs>()
        .add_systems(Startup, (setup, limb_width))
        .add_systems(
            // Before the frame's fixed steps: a ragdoll takes its settings from
            // its first step.
            PreUpdate,
            (dress_parts, apply_settings)
                .chain()
                .after(ModelSystems::Spawn),
        )
        .add_systems(
            Update,
            (
                controls.run_if(not(egui_wants_any_keyboard_input)),
                (show_sleep, draw_bones).after(InterpolationSystems::Interpolate),
            ),
        )
        .add_systems(EguiPrimaryContextPass, panel)
        .add_systems(Last, report_heap.run_if(support::capturing))
        .run();
}

fn setup(
    mut commands: Commands,
    assets: Res<AssetServer>,
    mut meshes: ResMut<Assets<Mesh>>,
    mut materials: ResMut<Assets<ColorMaterial>>,
) {
    commands.spawn(support::camera(SCALE, Vec2::ZERO));
    // The ground: solid below y = GROUND, drawn as a slab.
    commands.spawn(GroundPlane::horizontal(GROUND).with_friction(0.8));
    commands.spawn((
        Mesh2d(meshes.add(Rectangle::new(14.0, 1.0))),
        MeshMaterial2d(materials.add(Color::srgb(0.25, 0.27, 0.32))),
        Transform::from_xyz(0.0, GROUND - 0.5, -1.0),
    ));
    commands.insert_resource(Looks {
        circle: meshes.add(Circle::new(1.0)),
    });
    let model = assets.load("models/ragdoll.model.ron");
    for i in 0..START {
        spawn_ragdoll(&mut commands, &mut materials, &model, i);
    }
    commands.insert_resource(RagdollModel(model));
}

/// The `number`-th ragdoll, dropped from above the ground at a place and
/// spin of its own (the same every run).
fn spawn_ragdoll(
    commands: &mut Commands,
    materials: &mut Assets<ColorMaterial>,
    model: &Handle<PhysicsModel>,
    number: usize,
) {
    // Five across, two metres apart in height: they land on each other.
    let x = -1.6 + 0.8 * (number % 5) as f32 + 0.3 * (number / 5 % 3) as f32;
    let height = 0.2 + 2.0 * (number / 5) as f32 + 0.3 * (number % 2) as f32;
    let color = COLORS[number % COLORS.len()];
    let spin = [1.5, -2.5, 0.8, -1.2, 2.0][number % 5];
    commands.spawn((
        PhysicsModelInstance::new(model.clone(), Vec3::new(x, height, 0.0)),
        Ragdoll {
            number: number + 1,
            color,
            spin,
            may_sleep: true,
            substeps: None,
            dirty: true,
        },
        Materials::new(materials, color, 0.35),
    ));
}

/// Gives the bodies of a (re)spawned ragdoll their circles, its spin and
/// its settings.
fn dress_parts(
    mut commands: Commands,
    mut spawned: MessageReader<ModelSpawned>,
    mut ragdolls: Query<(&ModelParts, &mut Ragdoll, &Materials)>,
    mut bodies: Query<(&mut Body, Option<&Radius>)>,
    looks: Res<Looks>,
) {
    for message in spawned.read() {
        let Ok((parts, mut ragdoll, looks_of)) = ragdolls.get_mut(message.instance) else {
            continue;
        };
        // The centre of mass, to spin about.
        let (mut weighted, mut mass) = (Vec3::ZERO, 0.0);
        for (_, entity) in parts.bodies() {
            if let Ok((body, _)) = bodies.get(entity)
                && !body.is_fixed()
            {
                weighted += body.position * body.mass();
                mass += body.mass();
            }
        }
        let centre = weighted / mass.max(f32::EPSILON);
        for (_, entity) in parts.bodies() {
            let Ok((mut body, radius)) = bodies.get_mut(entity) else {
                continue;
            };
            let r = body.position - centre;
            body.velocity += Vec3::new(-r.y, r.x, 0.0) * ragdoll.spin;
            let size = radius.map_or(0.05, |r| r.0);
            commands.entity(entity).insert((
                Part(message.instance),
                Transform::from_translation(body.position).with_scale(Vec3::splat(size)),
                Mesh2d(looks.circle.clone()),
                MeshMaterial2d(looks_of.awake.clone()),
            ));
        }
        ragdoll.dirty = true;
    }
}

/// Applies each ragdoll's sleep and substep settings to its bodies.
fn apply_settings(mut commands: Commands, mut ragdolls: Query<(&ModelParts, &mut Ragdoll)>) {
    for (parts, mut ragdoll) in &mut ragdolls {
        if !ragdoll.dirty {
            continue;
        }
        ragdoll.dirty = false;
        apply_island_settings(
            &mut commands,
            parts.bodies().map(|(_, e)| e),
            ragdoll.may_sleep,
            ragdoll.substeps,
        );
    }
}

/// The figure each ragdoll is drawn as: chains of the bundled model's
/// bodies, by name, drawn as limbs as thick as the joints are round (arms
/// across the shoulders, legs across the hips, the torso's sides and its
/// two diagonals, which fill it), plus a neck from between the shoulders to
/// the head instead of the neck's two springs.
const FIGURE: [&[&str]; 5] = [
    &[
        "l_hand",
        "l_elbow",
        "l_shoulder",
        "r_shoulder",
        "r_elbow",
        "r_hand",
    ],
    &["l_foot", "l_knee", "l_hip", "r_hip", "r_knee", "r_foot"],
    &["l_shoulder", "l_hip"],
    &["r_shoulder", "r_hip"],
    &["l_shoulder", "r_hip", "r_shoulder", "l_hip"],
];

/// Thick, round-jointed lines for the figures.
#[derive(Default, Reflect, GizmoConfigGroup)]
struct Limbs;

/// Sets the limbs' width: a tenth of a metre, the joints' diameter.
fn limb_width(mut store: ResMut<GizmoConfigStore>) {
    let (config, _) = store.config_mut::<Limbs>();
    config.line.width = 0.1 * SCALE;
    config.line.joints = GizmoLineJoint::Round(6);
}

/// Each ragdoll as a figure ([`FIGURE`]) between the drawn positions of its
/// bodies, in its colour (darker asleep). A model edited so that a name of
/// the figure is missing is drawn as lines along its joins instead.
fn draw_bones(
    ragdolls: Query<(&ModelParts, &Ragdoll)>,
    springs: Query<&Spring>,
    rods: Query<&DistanceConstraint>,
    transforms: Query<(&Transform, Has<Sleeping>)>,
    mut limbs: Gizmos<Limbs>,
    mut gizmos: Gizmos,
) {
    for (parts, ragdoll) in &ragdolls {
        let at = |name: &str| {
            let (transform, asleep) = transforms.get(parts.body(name)?).ok()?;
            Some((transform.translation.truncate(), asleep))
        };
        let color = |asleep: bool| {
            if asleep {
                ragdoll.color.darker(0.35)
            } else {
                ragdoll.color
            }
        };
        let figure: Option<Vec<Vec<(Vec2, bool)>>> = FIGURE
            .iter()
            .map(|chain| chain.iter().map(|name| at(name)).collect())
            .collect();
        let neck = at("l_shoulder").zip(at("r_shoulder")).zip(at("head"));
        if let (Some(figure), Some((((left, _), (right, _)), (head, asleep)))) = (figure, neck) {
            for chain in figure {
                let asleep = chain.iter().any(|&(_, asleep)| asleep);
                limbs.linestrip_2d(chain.iter().map(|&(p, _)| p), color(asleep));
            }
            limbs.line_2d((left + right) / 2.0, head, color(asleep));
            continue;
        }
        for &join in parts.joins() {
            let ends = springs
                .get(join)
                .map(|s| (s.a, s.b))
                .or_else(|_| rods.get(join).map(|r| (r.a, r.b)));
            let Ok((a, b)) = ends else { continue };
            if let (Ok((a, _)), Ok((b, asleep))) = (transforms.get(a), transforms.get(b)) {
                gizmos.line_2d(
                    a.translation.truncate(),
                    b.translation.truncate(),
                    color(asleep),
                );
            }
        }
    }
}

fn controls(
    mut commands: Commands,
    keys: Res<ButtonInput<KeyCode>>,
    mut materials: ResMut<Assets<ColorMaterial>>,
    model: Res<RagdollModel>,
    ragdolls: Query<&Ragdoll>,
    mut bodies: Query<&mut Body, With<Part>>,
) {
    if keys.just_pressed(KeyCode::KeyR) {
        let next = ragdolls.iter().map(|r| r.number).max().unwrap_or(0);
        spawn_ragdoll(&mut commands, &mut materials, &model.0, next);
    }
    if keys.just_pressed(KeyCode::Space) {
        for mut body in &mut bodies {
            if !body.is_fixed() {
                body.velocity += Vec3::new(0.0, 6.0, 0.0);
            }
        }
    }
}

/// For the screenshot test, once a second: how the heap holds. The deepest
/// overlap of two bodies that touch (in radii of the smaller; bodies joined
/// directly do not touch), the largest excess of a limited angle past its
/// limits (radians), and how many bodies sleep.
fn report_heap(
    mut frame: Local<u32>,
    bodies: Query<(Entity, &Body, &Radius, Has<Sleeping>, &Name)>,
    limits: Query<&AngleLimit>,
    positions: Query<&Body>,
    joins: Query<AnyOf<(&Spring, &DistanceConstraint, &AngleLimit)>>,
) {
    *frame += 1;
    if !(*frame).is_multiple_of(60) {
        return;
    }
    // Bodies joined directly do not touch (a head on its neck springs may
    // sink into a shoulder): only the others count.
    let mut joined = std::collections::HashSet::new();
    for (spring, rod, angle) in &joins {
        let ends = match (spring, rod, angle) {
            (Some(s), ..) => vec![(s.a, s.b)],
            (_, Some(r), _) => vec![(r.a, r.b)],
            (.., Some(l)) => l.pairs().to_vec(),
            _ => vec![],
        };
        for (a, b) in ends {
            joined.insert((a.min(b), a.max(b)));
        }
    }
    let all: Vec<_> = bodies.iter().collect();
    let mut overlap = 0.0f32;
    let mut deepest = String::new();
    for (i, (ea, a, ra, _, na)) in all.iter().enumerate() {
        for (eb, b, rb, _, nb) in &all[i + 1..] {
            if joined.contains(&((*ea).min(*eb), (*ea).max(*eb))) {
                continue;
            }
            let depth = (ra.0 + rb.0 - a.position.distance(b.position)) / ra.0.min(rb.0);
            if depth > overlap {
                overlap = depth;
                deepest = format!("{na}-{nb}");
            }
        }
    }
    let excess = limits
        .iter()
        .filter_map(|limit| {
            let [a, p, b] = positions.get_many([limit.a, limit.pivot, limit.b]).ok()?;
            let theta = AngleLimit::angle(a.position, p.position, b.position, limit.axis);
            let name = bodies
                .get(limit.pivot)
                .map(|(.., name)| name.to_string())
                .ok()?;
            Some((limit.excess(theta), name))
        })
        .fold((0.0f32, String::new()), |most, next| {
            if next.0 > most.0 { next } else { most }
        });
    let (excess, worst) = excess;
    let asleep = all.iter().filter(|(.., asleep, _)| *asleep).count();
    info!(
        "HEAP frame {} overlap {overlap} excess {excess} asleep {asleep} of {} deepest {deepest} worst {worst}",
        *frame,
        all.len()
    );
}

/// Each ragdoll's sleep and substep settings.
fn panel(
    mut contexts: EguiContexts,
    mut ragdolls: Query<(Entity, &mut Ragdoll, Option<&ModelParts>)>,
    asleep: Query<(), With<Sleeping>>,
    islands: Query<&Island>,
) -> Result {
    let ctx = contexts.ctx_mut()?;
    egui::Window::new("Ragdolls")
        .anchor(egui::Align2::RIGHT_TOP, egui::vec2(-10.0, 10.0))
        .resizable(false)
        .show(ctx, |ui| {
            ui.label("R drops another one; Space throws them up.");
            let mut list: Vec<_> = ragdolls.iter_mut().collect();
            list.sort_by_key(|(_, r, _)| r.number);
            egui::Grid::new("ragdolls").num_columns(4).show(ui, |ui| {
                for (entity, mut ragdoll, parts) in list {
                    let first = parts.and_then(|p| p.bodies().next().map(|(_, e)| e));
                    let state = match first {
                        None => "loading".to_string(),
                        Some(e) if asleep.contains(e) => "asleep".to_string(),
                        Some(e) => {
                            let passes = islands.get(e).map_or(1, |i| i.substeps());
                            format!(
                                "awake, {passes} pass{}",
                                if passes == 1 { "" } else { "es" }
                            )
                        }
                    };
                    let [r, g, b, _] = ragdoll.color.to_srgba().to_u8_array();
                    ui.colored_label(
                        egui::Color32::from_rgb(r, g, b),
                        format!("#{}", ragdoll.number),
                    );
                    ui.label(state);
                    let mut may_sleep = ragdoll.may_sleep;
                    if ui.checkbox(&mut may_sleep, "may sleep").changed() {
                        ragdoll.may_sleep = may_sleep;
                        ragdoll.dirty = true;
                    }
                    let mut substeps = ragdoll.substeps;
                    substeps_choice(ui, ("substeps", entity), &mut substeps);
                    if substeps != ragdoll.substeps {
                        ragdoll.substeps = substeps;
                        ragdoll.dirty = true;
                    }
                    ui.end_row();
                }
            });
        });
    Ok(())
}

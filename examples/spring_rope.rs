//! Ropes of springs hanging from fixed anchors and swinging.
//!
//! `cargo run --release --example spring_rope`
//!
//! Five ropes, soft to stiff, each one [`Rope`] (a fixed anchor, 20 links
//! of 12 cm and a heavier bob of yours at the end), drawn by the plugin as
//! a strip ([`RopeMesh`]), each its own island. The physics steps at 64 Hz.
//! With automatic substeps (the default here) each rope runs the fewest
//! passes that keep it stable (a chain of masses `m` and springs `k` is
//! stable while `2·√(k/m)·h' < 2`): the soft ropes 1 pass per step, the
//! stiffest several. Ropes that come to rest fall asleep (drawn dimmer)
//! and wake when touched. The links have radii: ropes that swing into each
//! other touch, and three fixed balls stand in the ropes' way for them to
//! drape over. Every frame draws the bodies between their last two fixed
//! positions, so the motion is smooth at any frame rate; press I to see it
//! without.
//!
//! The "Ropes" window sets each rope's stretching frequency and damping
//! ratio (the stiffness and damping of its links follow, in place:
//! [`Rope::link_coefficients`]), its substeps and whether it may sleep.
//!
//! Mouse: drag any body (left button). Keys: Space kicks every rope
//! sideways, G flips gravity, I toggles interpolation, P pauses, N steps,
//! F1 hides the physics panel.
//!
//! Stress mode: `cargo run --release --example spring_rope -- --ropes 1000
//! --segments 100` hangs that many ropes of that many bodies (the bodies
//! and springs of `benches/step.rs`: 1 kg, 0.1 m apart, 1000 N/m; here at
//! 64 Hz, in rows, each released at its own angle; sleeping off),
//! each drawn as one line strip (one gizmo call per rope, not per body).
//! The physics panel shows the step's cost; Space kicks, G flips gravity.
//! Add `--split N` to time N frames (after 120 to settle) part by part:
//! the fixed loop, the interpolation, drawing the ropes, Bevy's transform
//! propagation and render extraction; it prints the mean of each per
//! frame and exits.

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
/// Where the anchors hang.
const TOP: f32 = 2.2;
/// Links of a rope, each `LINK` metres and `LINK_MASS` kg.
const LINKS: u32 = 20;
const LINK: f32 = 0.12;
const LINK_MASS: f32 = 0.2;
/// The bob at a rope's end: kg and metres.
const BOB: (f32, f32) = (1.0, 0.1);
/// Each rope: where its anchor is, its stretching frequency (Hz: its
/// links' stiffness goes from 500 to 10 000 N/m) and its colour.
const ROPES: [(f32, f32, Color); 5] = [
    (-1.4, 0.625, Color::srgb(0.95, 0.55, 0.35)),
    (0.1, 0.79, Color::srgb(0.95, 0.8, 0.3)),
    (1.6, 1.25, Color::srgb(0.45, 0.85, 0.45)),
    (3.1, 1.98, Color::srgb(0.35, 0.7, 0.95)),
    (4.6, 2.8, Color::srgb(0.7, 0.5, 0.95)),
];

/// A rope's settings from the window.
#[derive(Component)]
struct RopeSettings {
    number: usize,
    color: Color,
    hertz: f32,
    ratio: f32,
    /// `None`: automatic.
    substeps: Option<u32>,
    may_sleep: bool,
    /// The settings changed and must be applied to the springs and bodies.
    dirty: bool,
}

fn main() {
    if let Some(stress) = stress::Stress::from_args() {
        return stress::run(stress);
    }
    example_app("spring rope")
        .add_systems(Startup, setup)
        // Before the frame's fixed steps: a rope takes its settings from
        // its first step.
        .add_systems(PreUpdate, apply_settings)
        .add_systems(
            Update,
            (
                controls.run_if(not(egui_wants_any_keyboard_input)),
                (show_sleep, show_rope_sleep).after(InterpolationSystems::Interpolate),
            ),
        )
        .add_systems(EguiPrimaryContextPass, panel)
        .run();
}

/// The rope as built: its settings with the window's frequency and ratio.
fn make_rope(anchor: Vec3, bob: Entity, hertz: f32, ratio: f32) -> Rope {
    Rope::new(RopeEnd::Fixed(anchor), RopeEnd::Body(bob))
        .with_segments(LINKS)
        .with_mass_per_metre(LINK_MASS / LINK)
        .with_stretch(hertz, ratio)
        .with_radius(0.05)
        .with_drag(0.05)
        // Explicit springs, with the substeps the window sets.
        .implicit(false)
}

fn setup(
    mut commands: Commands,
    mut meshes: ResMut<Assets<Mesh>>,
    mut materials: ResMut<Assets<ColorMaterial>>,
) {
    commands.spawn(support::camera(SCALE, Vec2::new(0.0, -0.9)));
    // Fixed balls in the way of three ropes as they swing back.
    let ball_material = materials.add(Color::srgb(0.55, 0.57, 0.62));
    for x in [ROPES[0].0, ROPES[2].0, ROPES[4].0] {
        let (centre, radius) = (Vec3::new(x + 0.6, TOP - 1.7, 0.0), 0.25);
        commands.spawn((
            Body::fixed(centre),
            Radius(radius),
            Mesh2d(meshes.add(Circle::new(radius))),
            MeshMaterial2d(ball_material.clone()),
            Transform::from_translation(centre),
        ));
    }
    let anchor_mesh = meshes.add(Rectangle::new(0.3, 0.08));
    let anchor_material = materials.add(Color::srgb(0.8, 0.8, 0.85));
    let bob_mesh = meshes.add(Circle::new(BOB.1));
    // Swung out by 30° to one side, so that each rope swings.
    let out = Vec3::new(0.5, -(0.75f32.sqrt()), 0.0) * (LINKS as f32 * LINK);
    for (i, (x, hertz, color)) in ROPES.into_iter().enumerate() {
        let anchor = Vec3::new(x, TOP, 0.0);
        let looks = Materials::new(&mut materials, color, 0.3);
        commands.spawn((
            Mesh2d(anchor_mesh.clone()),
            MeshMaterial2d(anchor_material.clone()),
            Transform::from_translation(anchor + Vec3::Z * 0.1),
        ));
        let settings = RopeSettings {
            number: i + 1,
            color,
            hertz,
            ratio: 0.005,
            substeps: None,
            may_sleep: true,
            dirty: true,
        };
        let rope = commands.spawn_empty().id();
        let bob = commands
            .spawn((
                Body::new(BOB.0).with_position(anchor + out),
                Radius(BOB.1),
                Damping(0.05),
                Part(rope),
                Mesh2d(bob_mesh.clone()),
                MeshMaterial2d(looks.awake.clone()),
            ))
            .id();
        commands.entity(rope).insert((
            make_rope(anchor, bob, settings.hertz, settings.ratio),
            RopeMesh::strip(0.08),
            MeshMaterial2d(looks.awake.clone()),
            looks,
            settings,
        ));
    }
}

/// Applies each rope's settings to its springs (in place) and bodies.
fn apply_settings(
    mut commands: Commands,
    mut ropes: Query<(&Rope, &RopeParts, &mut RopeSettings)>,
    springs: Query<&Spring>,
) {
    for (rope, parts, mut settings) in &mut ropes {
        if !settings.dirty || parts.springs.is_empty() {
            continue;
        }
        settings.dirty = false;
        let tuned = rope.with_stretch(settings.hertz, settings.ratio);
        let Some((k, c)) = tuned.link_coefficients(LINKS as f32 * LINK, parts.springs.len()) else {
            continue;
        };
        for &join in &parts.springs {
            if let Ok(spring) = springs.get(join) {
                // Springs are immutable: a new value replaces the old.
                commands
                    .entity(join)
                    .insert(spring.with_stiffness(k).with_damping(c));
            }
        }
        apply_island_settings(
            &mut commands,
            parts.bodies.iter().copied(),
            settings.may_sleep,
            settings.substeps,
        );
    }
}

/// A rope's strip dimmer while its first link sleeps.
fn show_rope_sleep(
    mut ropes: Query<(&RopeParts, &Materials, &mut MeshMaterial2d<ColorMaterial>)>,
    asleep: Query<(), With<Sleeping>>,
) {
    for (parts, looks, mut material) in &mut ropes {
        let wanted = match parts.bodies.get(1) {
            Some(&link) if asleep.contains(link) => &looks.asleep,
            _ => &looks.awake,
        };
        if material.0 != *wanted {
            material.0 = wanted.clone();
        }
    }
}

/// Space kicks every dynamic body sideways; G flips gravity.
fn controls(
    keys: Res<ButtonInput<KeyCode>>,
    mut bodies: Query<&mut Body>,
    mut gravity: ResMut<Gravity>,
) {
    if keys.just_pressed(KeyCode::Space) {
        for mut body in &mut bodies {
            if !body.is_fixed() {
                body.velocity += Vec3::new(3.0, 1.0, 0.0);
            }
        }
    }
    if keys.just_pressed(KeyCode::KeyG) {
        gravity.0 = -gravity.0;
    }
}

/// Each rope's settings, passes per step, stability load and sleep state.
fn panel(
    mut contexts: EguiContexts,
    mut ropes: Query<(&mut RopeSettings, &RopeParts)>,
    islands: Query<(&Island, Has<Sleeping>)>,
) -> Result {
    let ctx = contexts.ctx_mut()?;
    egui::Window::new("Ropes")
        .anchor(egui::Align2::RIGHT_BOTTOM, egui::vec2(-10.0, -10.0))
        .resizable(false)
        .show(ctx, |ui| {
            ui.label("Space kicks the ropes, G flips gravity.");
            let mut list: Vec<_> = ropes.iter_mut().collect();
            list.sort_by_key(|(r, _)| r.number);
            egui::Grid::new("ropes")
                .num_columns(5)
                .striped(true)
                .show(ui, |ui| {
                    ui.label("");
                    ui.label("stretch Hz");
                    ui.label("damping ratio");
                    ui.label("substeps");
                    ui.label("state");
                    ui.end_row();
                    for (mut rope, parts) in list {
                        let [r, g, b, _] = rope.color.to_srgba().to_u8_array();
                        ui.colored_label(
                            egui::Color32::from_rgb(r, g, b),
                            format!("rope {}", rope.number),
                        );
                        let mut hertz = rope.hertz;
                        ui.add(
                            egui::Slider::new(&mut hertz, 0.2..=10.0)
                                .logarithmic(true)
                                .max_decimals(2),
                        );
                        let mut ratio = rope.ratio;
                        ui.add(egui::Slider::new(&mut ratio, 0.0..=0.1).max_decimals(3));
                        let mut substeps = rope.substeps;
                        substeps_choice(ui, ("substeps", rope.number), &mut substeps);
                        let mut may_sleep = rope.may_sleep;
                        ui.horizontal(|ui| {
                            ui.checkbox(&mut may_sleep, "may sleep");
                            // The island of the first link after the anchor.
                            let link = parts.bodies.get(1).copied();
                            if let Some(Ok((island, asleep))) = link.map(|e| islands.get(e)) {
                                let text = format!(
                                    "{} pass{}, load {:.2}{}",
                                    island.substeps(),
                                    if island.substeps() == 1 { "" } else { "es" },
                                    island.load(),
                                    if asleep { ", asleep" } else { "" }
                                );
                                if island.load() > 1.0 {
                                    ui.colored_label(egui::Color32::from_rgb(255, 90, 80), text);
                                } else {
                                    ui.label(text);
                                }
                            }
                        });
                        if (hertz, ratio, substeps, may_sleep)
                            != (rope.hertz, rope.ratio, rope.substeps, rope.may_sleep)
                        {
                            rope.hertz = hertz;
                            rope.ratio = ratio;
                            rope.substeps = substeps;
                            rope.may_sleep = may_sleep;
                            rope.dirty = true;
                        }
                        ui.end_row();
                    }
                });
        });
    Ok(())
}

/// `--ropes N --segments S`: many plain ropes, drawn in batches.
mod stress {
    use bevy::prelude::*;
    use bevy_egui::input::egui_wants_any_keyboard_input;
    use bevy_euler_physics::prelude::*;

    use super::support;
    use super::support::parts::example_app;

    /// Spring stiffness, damping and rest length, and body mass, as in
    /// `benches/step.rs`.
    const K: f32 = 1000.0;
    const C: f32 = 1.0;
    const REST: f32 = 0.1;
    const MASS: f32 = 1.0;
    /// Metres between anchors.
    const SPACING: f32 = 0.5;

    /// The stress scene's size.
    #[derive(Resource, Clone, Copy, Debug)]
    pub struct Stress {
        ropes: usize,
        segments: usize,
    }

    impl Stress {
        /// `Some` when `--ropes` or `--segments` is given (the other
        /// defaults to 100); a value that is not a positive number is
        /// refused with a message.
        pub fn from_args() -> Option<Self> {
            let args: Vec<String> = std::env::args().collect();
            let value = |name: &str| {
                let at = args.iter().position(|a| a == name)?;
                let parsed = args.get(at + 1).and_then(|v| v.parse::<usize>().ok());
                match parsed {
                    Some(n) if n > 0 => Some(n),
                    _ => {
                        eprintln!("{name} wants a positive whole number; using 100");
                        Some(100)
                    }
                }
            };
            let (ropes, segments) = (value("--ropes"), value("--segments"));
            (ropes.is_some() || segments.is_some()).then(|| Stress {
                ropes: ropes.unwrap_or(100),
                segments: segments.unwrap_or(100),
            })
        }
    }

    /// A rope's bodies, anchor first, for drawing it as one strip.
    #[derive(Component)]
    struct StressRope(Vec<Entity>);

    pub fn run(stress: Stress) {
        let mut app = example_app("spring rope (stress)");
        if let Some(frames) = split::frames_from_args() {
            split::add(&mut app, frames);
        }
        app.insert_resource(stress)
            .insert_resource(SleepSettings {
                enabled: false,
                ..default()
            })
            .insert_resource(DebugUiSettings {
                draw_springs: false,
                draw_bodies: false,
                // Summing 100 000 springs' energy every step would cost
                // more than the step; the panel can turn it on.
                energy_plot: false,
                ..default()
            })
            .add_systems(Startup, setup)
            .add_systems(
                Update,
                (
                    super::controls.run_if(not(egui_wants_any_keyboard_input)),
                    draw.after(InterpolationSystems::Interpolate)
                        .in_set(split::Drawing),
                ),
            )
            .run();
    }

    /// The ropes in rows, anchors `SPACING` apart, each released straight
    /// at its own angle to the vertical (up to 0.6 rad) so they swing.
    fn setup(mut commands: Commands, stress: Res<Stress>) {
        let Stress { ropes, segments } = *stress;
        // Hanging at rest, a rope stretches by the weight below each
        // spring; released unstretched, it bounces to about twice that.
        let n = segments as f32;
        let stretch = n * (n + 1.0) * MASS * 9.81 / (2.0 * K);
        let row_height = 1.1 * (n * REST + 2.0 * stretch);
        // Rows so that the block has about the window's shape (16:9).
        let columns = ((16.0 / 9.0) * ropes as f32 * row_height / SPACING)
            .sqrt()
            .ceil()
            .clamp(1.0, ropes as f32) as usize;
        let rows = ropes.div_ceil(columns);
        let (width, height) = (columns as f32 * SPACING, rows as f32 * row_height);
        let fit = (1180.0 / width).min(660.0 / height);
        commands.spawn(support::camera(fit, Vec2::new(width / 2.0, -height / 2.0)));
        for r in 0..ropes {
            let top = Vec3::new(
                (r % columns) as f32 * SPACING,
                -((r / columns) as f32) * row_height,
                0.0,
            );
            let angle = 0.6 * (r as f32 * 0.05).sin();
            let down = Vec3::new(angle.sin(), -angle.cos(), 0.0);
            let mut bodies = vec![commands.spawn(Body::fixed(top)).id()];
            for s in 1..=segments {
                let position = top + down * (REST * s as f32);
                let body = commands.spawn(Body::new(MASS).with_position(position)).id();
                let above = bodies[s - 1];
                commands.spawn(Spring::new(above, body, REST, K).with_damping(C));
                bodies.push(body);
            }
            commands.spawn(StressRope(bodies));
        }
    }

    /// Each rope as one line strip through its bodies' drawn positions.
    fn draw(ropes: Query<&StressRope>, transforms: Query<&Transform>, mut gizmos: Gizmos) {
        for rope in &ropes {
            let points = rope
                .0
                .iter()
                .filter_map(|&e| transforms.get(e).ok())
                .map(|t| t.translation.truncate());
            gizmos.linestrip_2d(points, Color::srgb(0.45, 0.75, 0.95));
        }
    }

    /// `--split N`: where the frames of the stress scene go.
    pub mod split {
        use std::sync::Arc;
        use std::sync::atomic::{AtomicU64, Ordering};
        use std::time::Duration;

        use bevy::app::{RunFixedMainLoop, RunFixedMainLoopSystems};
        use bevy::ecs::schedule::SystemSet;
        use bevy::platform::time::Instant;
        use bevy::prelude::*;
        use bevy::render::RenderApp;
        use bevy::transform::TransformSystems;
        use bevy_euler_physics::prelude::*;

        use crate::support::part_times::{PartEnd, PartTimes, time_part};

        /// Frames run before the timing starts.
        const SETTLE: u32 = 120;

        /// The set of the ropes' drawing system.
        #[derive(SystemSet, Debug, Clone, PartialEq, Eq, Hash)]
        pub struct Drawing;

        /// The frame count after `--split`, if given.
        pub fn frames_from_args() -> Option<u32> {
            let args: Vec<String> = std::env::args().collect();
            let at = args.iter().position(|a| a == "--split")?;
            match args.get(at + 1).and_then(|v| v.parse::<u32>().ok()) {
                Some(n) if n > 0 => Some(n),
                _ => {
                    eprintln!("--split wants a positive frame count; using 600");
                    Some(600)
                }
            }
        }

        /// The parts timed, in the order they run (and of their indices in
        /// [`PartTimes`]).
        const PARTS: [&str; 4] = [
            "fixed loop",
            "interpolation",
            "drawing the ropes",
            "transform propagation",
        ];

        /// The timed frames and fixed steps.
        #[derive(Resource)]
        struct Split {
            frames: u32,
            seen: u32,
            /// When the timed frames began.
            began: Option<Instant>,
            /// Fixed steps run since the timing started.
            steps: u32,
            /// Nanoseconds in render extraction, written by the render
            /// app's extract function on the main thread.
            extract: Arc<AtomicU64>,
        }

        /// Times `frames` frames after [`SETTLE`], then prints and exits.
        pub fn add(app: &mut App, frames: u32) {
            let extract = Arc::new(AtomicU64::new(0));
            // The render app's own extraction (its `ExtractSchedule`),
            // without the wait for the render thread around it.
            let render = app.sub_app_mut(RenderApp);
            if let Some(mut inner) = render.take_extract() {
                let spent = extract.clone();
                render.set_extract(move |main, world| {
                    let start = Instant::now();
                    inner(main, world);
                    let nanos = start.elapsed().as_nanos() as u64;
                    spent.fetch_add(nanos, Ordering::Relaxed);
                });
            }
            app.insert_resource(Split {
                frames,
                seen: 0,
                began: None,
                steps: 0,
                extract,
            })
            .add_systems(First, count)
            .add_systems(FixedFirst, |mut split: ResMut<Split>| split.steps += 1);
            let interpolate = InterpolationSystems::Interpolate;
            time_part(
                app,
                RunFixedMainLoop,
                RunFixedMainLoopSystems::FixedMainLoop,
                None,
            );
            // The ropes' drawing starts after the interpolation's part
            // has ended, or the executor may run it inside that part.
            let interpolation = time_part(app, Update, interpolate, None);
            time_part(app, Update, Drawing, Some(PartEnd(interpolation).intern()));
            time_part(app, PostUpdate, TransformSystems::Propagate, None);
        }

        /// Starts the timing after [`SETTLE`] frames; after the timed
        /// frames, prints each part per frame and exits.
        fn count(
            mut split: ResMut<Split>,
            mut times: ResMut<PartTimes>,
            mut exit: MessageWriter<AppExit>,
        ) {
            split.seen += 1;
            if split.seen == SETTLE {
                split.began = Some(Instant::now());
                times.reset();
                split.steps = 0;
                split.extract.store(0, Ordering::Relaxed);
            }
            if split.seen != SETTLE + split.frames {
                return;
            }
            let Some(began) = split.began else {
                return;
            };
            let per_frame = |d: Duration| d.as_secs_f64() * 1e3 / f64::from(split.frames);
            let frame = per_frame(began.elapsed());
            let extract = per_frame(Duration::from_nanos(split.extract.load(Ordering::Relaxed)));
            let steps = f64::from(split.steps) / f64::from(split.frames);
            let mut line = format!(
                "split: {} frames, {frame:.2} ms a frame, {steps:.2} fixed steps a frame:",
                split.frames
            );
            let mut parts = 0.0;
            for (name, &spent) in PARTS.iter().zip(&times.spent) {
                let ms = per_frame(spent);
                parts += ms;
                line += &format!(" {name} {ms:.2} ms,");
            }
            line += &format!(
                " render extraction {extract:.2} ms, the rest {:.2} ms",
                frame - parts - extract
            );
            println!("{line}");
            exit.write(AppExit::Success);
        }
    }
}

//! Shared by the examples built from model files (`spring_rope`,
//! `ragdoll`): which instance a body belongs to, the instance's awake and
//! asleep looks, and its per-island settings.
#![allow(dead_code)]

use bevy::prelude::*;
use bevy_egui::egui;
use bevy_euler_physics::prelude::*;

/// The app both model examples start from: a 1280×720 window titled
/// `title`, the physics, model and debug plugins and the capture mode, on a
/// dark background. The examples draw bodies themselves, so the debug
/// panel's own gizmos (springs by strain, bodies by sleep, velocities)
/// start off, a click away.
pub fn example_app(title: &str) -> App {
    let mut app = App::new();
    app.add_plugins((
        DefaultPlugins.set(WindowPlugin {
            primary_window: Some(Window {
                title: format!("bevy_euler_physics: {title}"),
                resolution: (1280, 720).into(),
                ..default()
            }),
            ..default()
        }),
        EulerPhysicsPlugin,
        PhysicsModelPlugin,
        EulerPhysicsDebugPlugin,
        super::CapturePlugin,
    ))
    .insert_resource(DebugUiSettings {
        draw_springs: false,
        draw_bodies: false,
        ..default()
    })
    .insert_resource(ClearColor(Color::srgb(0.08, 0.09, 0.12)));
    app
}

/// A body of a model instance: which instance.
#[derive(Component)]
pub struct Part(pub Entity);

/// An instance's materials: awake, and a darker one while asleep.
#[derive(Component)]
pub struct Materials {
    pub awake: Handle<ColorMaterial>,
    pub asleep: Handle<ColorMaterial>,
}

impl Materials {
    /// `color` awake, `color.darker(dim)` asleep.
    pub fn new(materials: &mut Assets<ColorMaterial>, color: Color, dim: f32) -> Self {
        Self {
            awake: materials.add(color),
            asleep: materials.add(color.darker(dim)),
        }
    }
}

/// Parts of sleeping islands in their instance's asleep material.
pub fn show_sleep(
    mut parts: Query<(&Part, Has<Sleeping>, &mut MeshMaterial2d<ColorMaterial>)>,
    instances: Query<&Materials>,
) {
    for (part, asleep, mut material) in &mut parts {
        let Ok(materials) = instances.get(part.0) else {
            continue;
        };
        let wanted = if asleep {
            &materials.asleep
        } else {
            &materials.awake
        };
        if material.0 != *wanted {
            material.0 = wanted.clone();
        }
    }
}

/// Whether bodies (an instance's, a rope's) may sleep, and their substeps (`None`:
/// automatic).
pub fn apply_island_settings(
    commands: &mut Commands,
    bodies: impl IntoIterator<Item = Entity>,
    may_sleep: bool,
    substeps: Option<u32>,
) {
    for entity in bodies {
        let mut body = commands.entity(entity);
        if may_sleep {
            body.remove::<SleepingDisabled>();
        } else {
            body.insert(SleepingDisabled);
        }
        match substeps {
            None => {
                body.remove::<Substeps>().insert(AutoSubsteps);
            }
            Some(n) => {
                body.remove::<AutoSubsteps>().insert(Substeps(n));
            }
        }
    }
}

/// A substep choice as the panels show it.
fn substeps_text(substeps: Option<u32>) -> String {
    match substeps {
        None => "auto".into(),
        Some(n) => n.to_string(),
    }
}

/// A drop-down of `substeps`: automatic, or 1 to 16 passes a step.
pub fn substeps_choice(
    ui: &mut egui::Ui,
    id: impl std::hash::Hash + std::fmt::Debug,
    substeps: &mut Option<u32>,
) {
    egui::ComboBox::from_id_salt(id)
        .selected_text(substeps_text(*substeps))
        .width(64.0)
        .show_ui(ui, |ui| {
            for choice in [None, Some(1), Some(2), Some(4), Some(8), Some(16)] {
                ui.selectable_value(substeps, choice, substeps_text(choice));
            }
        });
}

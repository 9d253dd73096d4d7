//! The "Physics" egui window.
//!
//! Every widget edits a copy; a component or resource is written only when
//! the copy differs, so showing the panel never marks anything changed
//! (which would wake sleeping islands or rebuild the solver's index).

use bevy::ecs::system::SystemParam;
use bevy::prelude::*;
use bevy_egui::{EguiContexts, egui};
use egui_plot::{Corner, Legend, Line, Plot, PlotPoints};

use super::drag::{DragPart, DragState};
use super::energy::EnergyHistory;
use super::stats::{self, DebugStats, StepRequest};
use super::{DebugUiSettings, Selection};
use crate::PhysicsSettings;
use crate::body::{Body, Damping};
use crate::islands::{AutoSubsteps, Island, IslandCommands, Sleeping, SleepingDisabled, Substeps};
use crate::spring::Spring;

const UNSTABLE: egui::Color32 = egui::Color32::from_rgb(255, 90, 80);
const PANEL_WIDTH: f32 = 330.0;
const ENERGY_COLORS: [egui::Color32; 4] = [
    egui::Color32::from_rgb(235, 235, 235),
    egui::Color32::from_rgb(240, 170, 70),
    egui::Color32::from_rgb(120, 200, 120),
    egui::Color32::from_rgb(120, 160, 245),
];

/// The time controls: virtual time, the physics settings, step requests.
#[derive(SystemParam)]
pub(crate) struct Controls<'w> {
    virtual_time: ResMut<'w, Time<Virtual>>,
    fixed_time: Res<'w, Time<Fixed>>,
    physics: ResMut<'w, PhysicsSettings>,
    request: ResMut<'w, StepRequest>,
}

type InspectData = (
    Entity,
    &'static mut Body,
    Option<&'static Name>,
    Option<&'static mut Damping>,
    Option<&'static Substeps>,
    Has<AutoSubsteps>,
    Has<SleepingDisabled>,
    Has<Sleeping>,
    &'static Island,
);

/// The picked body, the body list, and what the inspector edits.
#[derive(SystemParam)]
pub(crate) struct Inspector<'w, 's> {
    selection: ResMut<'w, Selection>,
    drag: Res<'w, DragState>,
    bodies: Query<'w, 's, InspectData, Without<DragPart>>,
    springs: Query<'w, 's, (Entity, &'static Spring), Without<DragPart>>,
    commands: Commands<'w, 's>,
    /// The mass a body had before it was made fixed in the inspector.
    last_mass: Local<'s, Option<(Entity, f32)>>,
    /// The body list, sorted, reused between frames.
    list: Local<'s, Vec<Entity>>,
}

impl Inspector<'_, '_> {
    fn label(&self, entity: Entity) -> String {
        match self.bodies.get(entity) {
            Ok((_, _, Some(name), ..)) => format!("{name} ({entity})"),
            _ => entity.to_string(),
        }
    }
}

/// Draws the window (in [`bevy_egui::EguiPrimaryContextPass`]).
pub(crate) fn panel(
    mut contexts: EguiContexts,
    mut settings: ResMut<DebugUiSettings>,
    (stats, history): (Res<DebugStats>, Res<EnergyHistory>),
    mut controls: Controls,
    mut inspector: Inspector,
) -> Result {
    if !settings.show_panel {
        return Ok(());
    }
    let ctx = contexts.ctx_mut()?;
    let mut edited = *settings;
    let mut open = true;
    let max_height = (ctx.viewport_rect().height() - 60.0).max(120.0);
    egui::Window::new("Physics")
        .anchor(egui::Align2::LEFT_TOP, [8.0, 8.0])
        .collapsible(true)
        // As tall as its contents, up to the window's height (then the
        // inner scroll area scrolls).
        .auto_sized()
        .open(&mut open)
        .show(ctx, |ui| {
            ui.set_width(PANEL_WIDTH);
            egui::ScrollArea::vertical()
                .id_salt("physics_panel")
                .max_height(max_height)
                .show(ui, |ui| {
                    controls_row(ui, &mut controls);
                    ui.separator();
                    egui::CollapsingHeader::new("Step")
                        .default_open(true)
                        .show(ui, |ui| readouts(ui, &stats, &controls, &mut inspector));
                    egui::CollapsingHeader::new("Energy")
                        .default_open(true)
                        .show(ui, |ui| energy(ui, &mut edited, &history));
                    egui::CollapsingHeader::new("Draw and mouse")
                        .default_open(false)
                        .show(ui, |ui| draw_options(ui, &mut edited));
                    egui::CollapsingHeader::new("Bodies")
                        .default_open(false)
                        .show(ui, |ui| body_list(ui, &mut inspector));
                    egui::CollapsingHeader::new("Inspector")
                        .default_open(true)
                        .show(ui, |ui| inspect(ui, &mut inspector));
                });
        });
    edited.show_panel &= open;
    settings.set_if_neq(edited);
    Ok(())
}

/// Four decimals, or powers of ten for large values.
fn joules(value: f64) -> String {
    if value.abs() < 1e6 {
        format!("{value:.4}")
    } else {
        format!("{value:.3e}")
    }
}

fn mono(text: impl Into<String>) -> egui::RichText {
    egui::RichText::new(text).monospace()
}

fn controls_row(ui: &mut egui::Ui, controls: &mut Controls) {
    let paused = controls.virtual_time.is_paused();
    ui.horizontal(|ui| {
        let label = if paused { "Resume (P)" } else { "Pause (P)" };
        if ui.button(label).clicked() {
            stats::toggle_pause(&mut controls.virtual_time);
        }
        let step = ui
            .add_enabled(paused, egui::Button::new("Step (N)"))
            .on_hover_text("One fixed step while paused");
        if step.clicked() {
            stats::request_step(&mut controls.request, &controls.virtual_time);
        }
        let mut interpolate = controls.physics.interpolate;
        ui.checkbox(&mut interpolate, "Interpolate (I)");
        if interpolate != controls.physics.interpolate {
            controls.physics.interpolate = interpolate;
        }
    });
    let mut speed = controls.virtual_time.relative_speed();
    let slider = egui::Slider::new(&mut speed, 0.1..=2.0)
        .logarithmic(true)
        .clamping(egui::SliderClamping::Edits)
        .text("time scale");
    if ui.add(slider).changed() && speed != controls.virtual_time.relative_speed() {
        controls.virtual_time.set_relative_speed(speed);
    }
}

fn readouts(ui: &mut egui::Ui, stats: &DebugStats, controls: &Controls, inspector: &mut Inspector) {
    let timestep = controls.fixed_time.timestep().as_secs_f64();
    let physics = &controls.physics;
    egui::Grid::new("physics_readouts")
        .num_columns(2)
        .striped(true)
        .show(ui, |ui| {
            ui.label("fixed rate");
            ui.label(mono(format!(
                "{:.1} Hz (h = {:.2} ms)",
                1.0 / timestep,
                1e3 * timestep
            )));
            ui.end_row();
            ui.label("substeps");
            let mut text = if physics.auto_substeps {
                format!("auto (≥ {})", physics.passes())
            } else {
                physics.passes().to_string()
            };
            if stats.auto_bodies > 0 {
                text += &format!("; {} bodies auto", stats.auto_bodies);
            }
            ui.label(mono(text));
            ui.end_row();
            ui.label("steps this frame");
            ui.label(mono(stats.steps_this_frame.to_string()));
            ui.end_row();
            ui.label("physics");
            ui.label(mono(format!(
                "{:.3} ms; {:.3} ms/step",
                1e3 * stats.physics_time.as_secs_f64(),
                1e3 * stats.mean_step_seconds
            )))
            .on_hover_text(
                "Wall time of the plugin's step (PhysicsSystems::Step) this frame; its mean per step",
            );
            ui.end_row();
            ui.label("fixed loop");
            ui.label(mono(format!(
                "{:.3} ms; energy plot {:.3} ms",
                1e3 * stats.step_time.as_secs_f64(),
                1e3 * stats.energy_time.as_secs_f64()
            )))
            .on_hover_text(
                "Wall time of this frame's whole fixed loop (the physics, Bevy's fixed schedules and your fixed systems), without the panel's energy sampling; and that sampling",
            );
            ui.end_row();
            ui.label("bodies");
            ui.label(mono(format!(
                "{} awake, {} asleep, {} fixed",
                stats.awake, stats.asleep, stats.fixed
            )));
            ui.end_row();
            ui.label("islands");
            ui.label(mono(stats.islands.to_string()));
            ui.end_row();
            ui.label("worst margin");
            match stats.worst {
                Some(worst) => {
                    let text = mono(format!(
                        "{:.2}: island {}, {} passes",
                        worst.margin, worst.island, worst.substeps
                    ));
                    let text = if worst.margin < 0.0 {
                        text.color(UNSTABLE)
                    } else {
                        text
                    };
                    ui.horizontal(|ui| {
                        ui.label(text).on_hover_text(
                            "1 − load of the island's fastest mode: below 0 it is unstable",
                        );
                        let pick = ui
                            .small_button("pick")
                            .on_hover_text(inspector.label(worst.entity));
                        if pick.clicked() {
                            inspector
                                .selection
                                .set_if_neq(Selection(Some(worst.entity)));
                        }
                    });
                }
                None => {
                    ui.label(mono("no islands"));
                }
            }
            ui.end_row();
        });
}

fn energy(ui: &mut egui::Ui, settings: &mut DebugUiSettings, history: &EnergyHistory) {
    ui.checkbox(&mut settings.energy_plot, "record after each fixed step");
    let Some(last) = history.samples.back() else {
        return;
    };
    let e = last.energy;
    ui.label(mono(format!(
        "total {} J = kinetic {} + spring {} + gravity {}",
        joules(e.total()),
        joules(e.kinetic),
        joules(e.spring),
        joules(e.gravity)
    )));
    let names = ["total", "kinetic", "spring", "gravity"];
    let mut lines: [Vec<[f64; 2]>; 4] = Default::default();
    for sample in &history.samples {
        let e = sample.energy;
        for (line, value) in lines
            .iter_mut()
            .zip([e.total(), e.kinetic, e.spring, e.gravity])
        {
            line.push([sample.time, value]);
        }
    }
    Plot::new("physics_energy")
        .height(140.0)
        .legend(
            Legend::default()
                .position(Corner::LeftTop)
                .background_alpha(0.6)
                .text_style(egui::TextStyle::Small),
        )
        .x_axis_label("time (s)")
        .y_axis_label("J")
        .allow_scroll(false)
        .allow_zoom(false)
        .allow_drag(false)
        .show(ui, |plot| {
            for ((line, name), color) in lines.into_iter().zip(names).zip(ENERGY_COLORS) {
                let width = if name == "total" { 2.0 } else { 1.2 };
                plot.line(
                    Line::new(name, PlotPoints::from(line))
                        .color(color)
                        .width(width),
                );
            }
        });
}

fn draw_options(ui: &mut egui::Ui, settings: &mut DebugUiSettings) {
    ui.checkbox(
        &mut settings.draw_springs,
        "springs (blue compressed, red stretched)",
    );
    ui.checkbox(
        &mut settings.draw_bodies,
        "bodies (green awake, blue asleep, grey fixed)",
    );
    ui.checkbox(&mut settings.draw_velocities, "velocity arrows");
    ui.add(
        egui::Slider::new(&mut settings.velocity_arrow_seconds, 0.01..=1.0)
            .logarithmic(true)
            .clamping(egui::SliderClamping::Edits)
            .text("arrow length (s)"),
    );
    ui.checkbox(&mut settings.mouse_picking, "click picks a body");
    ui.add_enabled(
        settings.mouse_picking,
        egui::Checkbox::new(&mut settings.mouse_drag, "left-drag pulls a body"),
    );
}

fn body_list(ui: &mut egui::Ui, inspector: &mut Inspector) {
    let mut list = std::mem::take(&mut *inspector.list);
    list.clear();
    list.extend(inspector.bodies.iter().map(|(entity, ..)| entity));
    list.sort_unstable();
    ui.label(format!("{} bodies", list.len()));
    let row_height = ui.spacing().interact_size.y;
    egui::ScrollArea::vertical()
        .id_salt("physics_bodies")
        .max_height(160.0)
        .auto_shrink([false, true])
        .show_rows(ui, row_height, list.len(), |ui, rows| {
            for &entity in &list[rows] {
                let picked = inspector.selection.0 == Some(entity);
                if ui
                    .selectable_label(picked, inspector.label(entity))
                    .clicked()
                {
                    inspector.selection.set_if_neq(Selection(Some(entity)));
                }
            }
        });
    *inspector.list = list;
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum SubstepMode {
    Default,
    Count,
    Auto,
}

/// Draws the picked body: its name, its state, its editable rows, and the
/// springs attached to it.
fn inspect(ui: &mut egui::Ui, inspector: &mut Inspector) {
    let Some(entity) = inspector.selection.0 else {
        ui.label("Click a body, or pick one in the list.");
        return;
    };
    let label = inspector.label(entity);
    let dragged = inspector.drag.active.is_some_and(|d| d.body == entity);
    let Inspector {
        selection,
        bodies,
        springs,
        commands,
        last_mass,
        ..
    } = inspector;
    let Ok((_, mut body, _, damping, substeps, auto, no_sleep, sleeping, island)) =
        bodies.get_mut(entity)
    else {
        ui.label(format!("{entity} has no body any more."));
        selection.set_if_neq(Selection(None));
        return;
    };
    ui.horizontal(|ui| {
        ui.strong(label);
        if ui.small_button("unpick").clicked() {
            selection.set_if_neq(Selection(None));
        }
    });
    ui.label(mono(status(&body, sleeping, dragged, island)));
    let mut woke = false;

    // Body: edited as a copy, written back only when it differs.
    let before = *body;
    let mut edit = before;
    egui::Grid::new("physics_body")
        .num_columns(2)
        .show(ui, |ui| {
            fixed_row(ui, &mut edit, entity, last_mass);
            mass_row(ui, &mut edit);
            ui.label("position (m)");
            vec3_edit(ui, &mut edit.position, 0.01);
            ui.end_row();
            ui.label("velocity (m/s)");
            ui.add_enabled_ui(!edit.is_fixed(), |ui| {
                vec3_edit(ui, &mut edit.velocity, 0.01)
            });
            ui.end_row();
            woke |= damping_row(ui, commands, entity, damping);
            woke |= substeps_row(ui, commands, entity, substeps, auto);
            woke |= sleep_row(ui, commands, entity, no_sleep);
        });
    if !same_body(&edit, &before) {
        // A real write: the plugin sees it as the user's (a teleport, and a
        // wake when asleep).
        *body = edit;
    }
    if woke {
        commands.entity(entity).wake_island();
    }
    spring_rows(ui, commands, springs, entity);
}

/// The body's state, and its island's when it has one.
fn status(body: &Body, sleeping: bool, dragged: bool, island: &Island) -> String {
    let state = if body.is_fixed() {
        "fixed".to_string()
    } else if sleeping {
        "asleep".to_string()
    } else if dragged {
        "awake, dragged".to_string()
    } else {
        "awake".to_string()
    };
    if island.is_some() {
        format!(
            "{state}; island {}, {} passes, margin {:.2}",
            island.id(),
            island.substeps(),
            island.margin()
        )
    } else {
        state
    }
}

/// Draws the "fixed" row. Fixing a body remembers its mass, so that
/// unfixing it gives that mass back rather than 1 kg.
fn fixed_row(
    ui: &mut egui::Ui,
    edit: &mut Body,
    entity: Entity,
    last_mass: &mut Option<(Entity, f32)>,
) {
    ui.label("fixed");
    let was_fixed = edit.is_fixed();
    let mut fixed = was_fixed;
    ui.checkbox(&mut fixed, "");
    if fixed != was_fixed {
        if fixed {
            let mass = edit.mass();
            *last_mass = mass.is_finite().then_some((entity, mass));
            edit.inv_mass = 0.0;
            edit.velocity = Vec3::ZERO;
        } else {
            let mass = match *last_mass {
                Some((e, mass)) if e == entity => mass,
                _ => 1.0,
            };
            edit.inv_mass = 1.0 / mass;
        }
    }
    ui.end_row();
}

/// Draws the mass row: ∞ for a fixed body, else a field that keeps the
/// mass positive.
fn mass_row(ui: &mut egui::Ui, edit: &mut Body) {
    ui.label("mass (kg)");
    if edit.is_fixed() {
        ui.label("∞");
    } else {
        let mut mass = edit.mass();
        let speed = 0.01 * mass.abs().max(0.01);
        let response = number(ui, &mut mass, f64::from(speed), 1e-4..=1e6);
        if response.changed() && mass > 0.0 {
            edit.inv_mass = 1.0 / mass;
        }
    }
    ui.end_row();
}

/// Draws the damping row: a box that adds or removes [`Damping`], and its
/// rate. Returns whether the island needs waking.
fn damping_row(
    ui: &mut egui::Ui,
    commands: &mut Commands,
    entity: Entity,
    damping: Option<Mut<Damping>>,
) -> bool {
    let mut woke = false;
    ui.label("damping (1/s)");
    ui.horizontal(|ui| {
        let mut has = damping.is_some();
        ui.checkbox(&mut has, "");
        match damping {
            Some(mut damping) => {
                if !has {
                    commands.entity(entity).remove::<Damping>();
                    woke = true;
                } else {
                    let mut c = damping.0;
                    number(ui, &mut c, 0.01, 0.0..=1e4);
                    if c.to_bits() != damping.0.to_bits() {
                        damping.0 = c;
                        woke = true;
                    }
                }
            }
            None if has => {
                commands.entity(entity).insert(Damping(0.5));
                woke = true;
            }
            None => {}
        }
    });
    ui.end_row();
    woke
}

/// Draws the substeps row: the plugin's default, a fixed count, or auto.
/// Returns whether the island needs waking.
fn substeps_row(
    ui: &mut egui::Ui,
    commands: &mut Commands,
    entity: Entity,
    substeps: Option<&Substeps>,
    auto: bool,
) -> bool {
    let mut woke = false;
    ui.label("substeps");
    ui.horizontal(|ui| {
        let mode = if auto {
            SubstepMode::Auto
        } else if substeps.is_some() {
            SubstepMode::Count
        } else {
            SubstepMode::Default
        };
        let mut new_mode = mode;
        ui.radio_value(&mut new_mode, SubstepMode::Default, "default");
        ui.radio_value(&mut new_mode, SubstepMode::Count, "count");
        ui.radio_value(&mut new_mode, SubstepMode::Auto, "auto");
        let count = substeps.map_or(2, |s| s.0);
        let mut new_count = count;
        if new_mode == SubstepMode::Count {
            ui.add(
                egui::DragValue::new(&mut new_count)
                    .range(1..=PhysicsSettings::MAX_SUBSTEPS)
                    .clamp_existing_to_range(false),
            );
        }
        if new_mode != mode || new_count != count {
            let mut e = commands.entity(entity);
            match new_mode {
                SubstepMode::Default => {
                    e.remove::<(Substeps, AutoSubsteps)>();
                }
                SubstepMode::Count => {
                    e.remove::<AutoSubsteps>().insert(Substeps(new_count));
                }
                SubstepMode::Auto => {
                    e.remove::<Substeps>().insert(AutoSubsteps);
                }
            }
            woke = true;
        }
    });
    ui.end_row();
    woke
}

/// Draws the "never sleeps" row, which adds or removes
/// [`SleepingDisabled`]. Returns whether the island needs waking.
fn sleep_row(ui: &mut egui::Ui, commands: &mut Commands, entity: Entity, no_sleep: bool) -> bool {
    ui.label("never sleeps");
    let mut never = no_sleep;
    ui.checkbox(&mut never, "")
        .on_hover_text("SleepingDisabled: keeps the island awake");
    let woke = never != no_sleep;
    if woke {
        if never {
            commands.entity(entity).insert(SleepingDisabled);
        } else {
            commands.entity(entity).remove::<SleepingDisabled>();
        }
    }
    ui.end_row();
    woke
}

/// Draws the springs with this body at one end, under a heading shown only
/// when there is one.
fn spring_rows(
    ui: &mut egui::Ui,
    commands: &mut Commands,
    springs: &Query<(Entity, &Spring), Without<DragPart>>,
    entity: Entity,
) {
    let mut any = false;
    for (spring_entity, spring) in springs.iter() {
        if spring.a != entity && spring.b != entity {
            continue;
        }
        if !any {
            ui.separator();
            ui.label("springs");
            any = true;
        }
        let other = if spring.a == entity {
            spring.b
        } else {
            spring.a
        };
        let mut edit = *spring;
        ui.push_id(spring_entity, |ui| {
            ui.label(mono(format!("{spring_entity} to {other}")));
            spring_fields(ui, &mut edit);
        });
        if !same_spring(&edit, spring) {
            // Springs are immutable: the new value replaces the old.
            commands.entity(spring_entity).insert(edit);
        }
    }
}

/// Draws one spring's stiffness, damping and rest length on one line.
fn spring_fields(ui: &mut egui::Ui, edit: &mut Spring) {
    let k_speed = f64::from(0.01 * edit.stiffness.abs().max(1.0));
    ui.horizontal(|ui| {
        for (name, value, speed, hover) in [
            ("k", &mut edit.stiffness, k_speed, "stiffness (N/m)"),
            ("c", &mut edit.damping, 0.01, "damping (N·s/m)"),
            ("rest", &mut edit.rest_length, 0.005, "rest length (m)"),
        ] {
            ui.label(name);
            number(ui, value, speed, 0.0..=f64::from(f32::MAX)).on_hover_text(hover);
        }
    });
}

/// A number field dragged at `speed` and kept in `range` when edited; a
/// value already outside the range is shown as it is, not clamped.
fn number(
    ui: &mut egui::Ui,
    value: &mut f32,
    speed: f64,
    range: std::ops::RangeInclusive<f64>,
) -> egui::Response {
    ui.add(
        egui::DragValue::new(value)
            .speed(speed)
            .range(range)
            .clamp_existing_to_range(false),
    )
}

fn vec3_edit(ui: &mut egui::Ui, value: &mut Vec3, speed: f64) {
    ui.horizontal(|ui| {
        for (axis, name) in [&mut value.x, &mut value.y, &mut value.z]
            .into_iter()
            .zip(["x", "y", "z"])
        {
            ui.add(
                egui::DragValue::new(axis)
                    .speed(speed)
                    .prefix(format!("{name} ")),
            );
        }
    });
}

fn bits(v: Vec3) -> [u32; 3] {
    v.to_array().map(f32::to_bits)
}

/// Bit for bit, so that a NaN left as it was is no edit.
fn same_body(a: &Body, b: &Body) -> bool {
    bits(a.position) == bits(b.position)
        && bits(a.velocity) == bits(b.velocity)
        && a.inv_mass.to_bits() == b.inv_mass.to_bits()
}

/// Bit for bit, so that a NaN left as it was is no edit.
fn same_spring(a: &Spring, b: &Spring) -> bool {
    (a.a, a.b) == (b.a, b.b)
        && a.rest_length.to_bits() == b.rest_length.to_bits()
        && a.stiffness.to_bits() == b.stiffness.to_bits()
        && a.damping.to_bits() == b.damping.to_bits()
}

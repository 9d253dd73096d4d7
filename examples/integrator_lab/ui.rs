//! The panels: settings, timeline, readouts and drift plot on the left;
//! the code and trace on the right (`crate::code`); the tour's window
//! (`crate::tour`). The camera is fitted to the stage between them.

use bevy::prelude::*;
use bevy::window::PrimaryWindow;
use bevy_egui::{EguiContexts, egui};
use bevy_euler_physics::integrators::Integrator;

use crate::code::code_panel;
use crate::plot::drift_plot;
use crate::stage::fit_camera;
use crate::state::Settings;
use crate::tour;
use crate::view::{GRAVITY, LabView};

/// The left panel's width in logical pixels.
const PANEL_WIDTH: f32 = 400.0;
/// The code panel's width in logical pixels.
const CODE_WIDTH: f32 = 440.0;

/// Each method's colour in the plot and the table, in the order of
/// [`Integrator::ALL`].
pub const METHOD_COLORS: [egui::Color32; 4] = [
    egui::Color32::from_rgb(235, 95, 85),
    egui::Color32::from_rgb(240, 200, 70),
    egui::Color32::from_rgb(100, 205, 125),
    egui::Color32::from_rgb(120, 160, 245),
];
pub const REFUSAL_COLOR: egui::Color32 = egui::Color32::from_rgb(255, 90, 80);

/// What the panel's text fields hold.
#[derive(Debug, Clone, PartialEq)]
pub struct Fields {
    pub dt: String,
    pub stiffness: String,
    pub drag: String,
}

impl Fields {
    pub fn new(settings: &Settings) -> Self {
        Self {
            dt: number_text(settings.dt),
            stiffness: number_text(settings.stiffness),
            drag: number_text(settings.drag),
        }
    }

    /// `current` with the fields' dt, stiffness and drag, if they are
    /// numbers (whether they are valid settings is for [`LabView::change`]).
    pub fn settings(&self, current: Settings) -> Result<Settings, String> {
        Ok(Settings {
            dt: field_value("dt", &self.dt, current.dt)?,
            stiffness: field_value("stiffness", &self.stiffness, current.stiffness)?,
            drag: field_value("drag", &self.drag, current.drag)?,
            ..current
        })
    }
}

/// `value` with up to 6 decimals, without trailing zeros.
pub fn number_text(value: f64) -> String {
    let text = format!("{value:.6}");
    text.trim_end_matches('0').trim_end_matches('.').to_owned()
}

/// A field's value: the current one if the text is still what the panel
/// wrote for it (so that Apply does not round it), else the text parsed.
fn field_value(name: &str, text: &str, current: f64) -> Result<f64, String> {
    if text.trim() == number_text(current) {
        return Ok(current);
    }
    match text.trim().parse::<f64>() {
        Ok(value) if value.is_finite() => Ok(value),
        _ => Err(format!("{name}: {:?} is not a number", text.trim())),
    }
}

/// The panels, and the camera fitted to the stage between them.
pub fn panel(
    mut contexts: EguiContexts,
    mut view: ResMut<LabView>,
    window: Single<&Window, With<PrimaryWindow>>,
    camera: Single<(&mut Transform, &mut Projection), With<Camera2d>>,
) -> Result {
    let ctx = contexts.ctx_mut()?;
    let mut root = egui::Ui::new(
        ctx.clone(),
        "integrator_lab".into(),
        egui::UiBuilder::new()
            .layer_id(egui::LayerId::background())
            .max_rect(ctx.viewport_rect()),
    );
    let view = &mut *view;
    let left = egui::Panel::left("lab_panel")
        .exact_size(PANEL_WIDTH)
        .resizable(false)
        .show(&mut root, |ui| panel_contents(ui, view))
        .response
        .rect
        .width();
    let right = if view.code.visible {
        let shown = egui::Panel::right("code_panel")
            .exact_size(CODE_WIDTH)
            .resizable(false)
            .show(&mut root, |ui| {
                code_panel(ui, view.trace.as_ref(), view.event, &mut view.code)
            });
        if let Some(event) = shown.inner {
            view.paused = true;
            view.event = event;
        }
        shown.response.rect.width()
    } else {
        0.0
    };
    tour::tour_window(ctx, view);
    let (mut transform, mut projection) = camera.into_inner();
    fit_camera(left, right, &window, &mut transform, &mut projection);
    Ok(())
}

/// A drift in percent, short: "n/a" if not finite.
pub fn percent_text(drift: f64) -> String {
    if !drift.is_finite() {
        "n/a".to_owned()
    } else if drift.abs() >= 1.0e4 {
        format!("{drift:+.3e} %")
    } else {
        format!("{drift:+.3} %")
    }
}

/// A length or speed, short.
fn amount_text(value: f64, unit: &str) -> String {
    if value.abs() >= 1.0e4 {
        format!("{value:.3e} {unit}")
    } else {
        format!("{value:.5} {unit}")
    }
}

fn mono(text: impl Into<String>) -> egui::RichText {
    egui::RichText::new(text).monospace()
}

fn panel_contents(ui: &mut egui::Ui, view: &mut LabView) {
    ui.add_space(4.0);
    ui.heading("Integrator lab");
    ui.label("A unit mass on a spring, a = −k·x − c·v + g, four methods side by side.");
    ui.separator();

    // Method: which run is drawn and read out.
    let settings = view.race.settings();
    ui.label("Method (drawn and read out):");
    egui::Grid::new("methods").num_columns(2).show(ui, |ui| {
        for (i, method) in Integrator::ALL.into_iter().enumerate() {
            let text = egui::RichText::new(format!("{}  {}", i + 1, method.name()))
                .color(METHOD_COLORS[i]);
            if ui.radio(settings.method == method, text).clicked() {
                view.change(Settings { method, ..settings });
            }
            if i % 2 == 1 {
                ui.end_row();
            }
        }
    });
    let method = settings.method;
    ui.label(format!(
        "order {}, {} force evaluation{} per step",
        method.order(),
        method.evaluations_per_step(),
        if method.evaluations_per_step() == 1 {
            ""
        } else {
            "s"
        }
    ));
    ui.separator();

    // Settings: text fields applied together.
    let mut apply = false;
    egui::Grid::new("settings").num_columns(3).show(ui, |ui| {
        let rows = [
            ("dt (s)", &mut view.fields.dt, "0.001 … 2".to_owned()),
            (
                "stiffness k",
                &mut view.fields.stiffness,
                "0 (projectile), 0.01 … 1000".to_owned(),
            ),
            (
                "drag c",
                &mut view.fields.drag,
                format!(
                    "0 ≤ c < 2√k = {}",
                    number_text(2.0 * settings.stiffness.sqrt())
                ),
            ),
        ];
        for (label, text, hint) in rows {
            ui.label(label);
            let response = ui.add(egui::TextEdit::singleline(text).desired_width(90.0));
            if response.lost_focus() && ui.input(|i| i.key_pressed(egui::Key::Enter)) {
                apply = true;
            }
            ui.weak(hint);
            ui.end_row();
        }
    });
    ui.horizontal(|ui| {
        let edited = view.fields != Fields::new(&settings);
        if ui
            .add_enabled(edited, egui::Button::new("Apply"))
            .on_hover_text("Apply dt, stiffness and drag (Enter in a field does too)")
            .clicked()
        {
            apply = true;
        }
        if ui
            .add_enabled(edited, egui::Button::new("Revert"))
            .on_hover_text("Put the current settings back in the fields")
            .clicked()
        {
            view.fields = Fields::new(&settings);
            view.refusal = None;
        }
        let mut gravity = settings.gravity > 0.0;
        if ui.checkbox(&mut gravity, "gravity (0, −9.81)").changed() {
            view.change(Settings {
                gravity: if gravity { GRAVITY } else { 0.0 },
                ..settings
            });
        }
    });
    if apply {
        view.apply_fields();
    }
    if let Some(refusal) = &view.refusal {
        ui.colored_label(REFUSAL_COLOR, refusal.as_str());
    }
    ui.horizontal(|ui| {
        let play = if view.paused { "Play" } else { "Pause" };
        if ui.button(play).on_hover_text("Space").clicked() {
            view.toggle_pause();
        }
        if ui
            .button("Reset")
            .on_hover_text("R: the default start and settings")
            .clicked()
        {
            view.reset(Settings::default());
        }
        if ui
            .button("Restart")
            .on_hover_text("Shift+R: the default start, these settings")
            .clicked()
        {
            let settings = view.race.settings();
            view.reset(settings);
        }
        if ui
            .button(if view.tour.is_some() {
                "Next stop"
            } else {
                "Tour"
            })
            .on_hover_text("G: a guided tour (Shift+G back, Esc ends it)")
            .clicked()
        {
            let stop = view.tour.map_or(0, |stop| stop + 1);
            tour::go_to(view, Some(stop));
        }
    });
    timeline_row(ui, view);
    ui.separator();

    // Readouts of the shown run.
    let lab = view.race.shown();
    let r = lab.readouts();
    egui::Grid::new("readouts").num_columns(4).show(ui, |ui| {
        ui.label("time");
        ui.label(mono(format!("{:.2} s", r.time)));
        ui.label("energy");
        ui.label(mono(if r.energy.abs() >= 1.0e4 {
            format!("{:.3e} J", r.energy)
        } else {
            format!("{:.4} J", r.energy)
        }));
        ui.end_row();
        ui.label("drift");
        ui.label(mono(percent_text(r.drift_percent)));
        ui.label("error");
        ui.label(mono(amount_text(r.error, "m")));
        ui.end_row();
        ui.label("speed");
        ui.label(mono(amount_text(r.speed, "m/s")));
        ui.label("ω·dt");
        ui.label(mono(format!(
            "{:.3}",
            settings.system().angular_frequency() * settings.dt
        )));
        ui.end_row();
    });
    if lab.blown_up() {
        ui.colored_label(
            REFUSAL_COLOR,
            format!(
                "the {} run blew up at t = {:.2} s: choose another method, or Reset",
                view.race.shown,
                lab.time()
            ),
        );
    } else if view.paused {
        ui.label("paused");
    }
    ui.separator();

    // The four runs.
    egui::Grid::new("runs")
        .num_columns(3)
        .striped(true)
        .show(ui, |ui| {
            ui.label("run");
            ui.label("drift");
            ui.label("error");
            ui.end_row();
            for (i, lab) in view.race.labs.iter().enumerate() {
                let mut name =
                    egui::RichText::new(lab.settings.method.name()).color(METHOD_COLORS[i]);
                if lab.settings.method == view.race.shown {
                    name = name.strong();
                }
                ui.label(name);
                if lab.blown_up() {
                    ui.label(format!("blew up at {:.2} s", lab.time()));
                    ui.label("");
                } else {
                    let r = lab.readouts();
                    ui.label(mono(percent_text(r.drift_percent)));
                    ui.label(mono(amount_text(r.error, "m")));
                }
                ui.end_row();
            }
        });
    ui.separator();

    egui::CollapsingHeader::new("What the view shows; keys").show(ui, |ui| {
        ui.label(
            "Filled: the chosen run; hollow circle and dashes: its exact position and path; \
             grey: the ghost of where the recorded run ends. Arrows: cyan velocity, orange \
             spring, red drag, green gravity, white total force, magenta the trace event \
             (a move, a kick, the error).",
        );
        ui.label(
            "Keys (not while typing in a field): Space play/pause, ←/→ step back/on, \
             Home/End start/end of the run, ,/. event back/on, E play event by event, \
             R reset, Shift+R restart, F fullscreen, G tour (Shift+G back, Esc ends), \
             1–4 method, Up/Down dt ×2/÷2, K/Shift+K stiffness ×/÷1.25, P projectile, \
             D drag, W gravity, C code panel, H comments, N narration.",
        );
    });

    ui.horizontal(|ui| {
        ui.strong("Drift, % of the energy at the last measure");
        ui.checkbox(&mut view.log_scale, "log scale");
    });
    let height = ui.available_height().max(160.0);
    drift_plot(
        ui,
        &view.history,
        view.shown(),
        view.log_scale,
        view.race.time(),
        height,
    );
}

/// Where the view is in the recorded run, and the buttons that move it.
fn timeline_row(ui: &mut egui::Ui, view: &mut LabView) {
    ui.horizontal(|ui| {
        let (cursor, end) = (view.timeline.cursor(), view.timeline.end());
        if ui
            .button("⏮")
            .on_hover_text("Home: the run's start")
            .clicked()
        {
            view.paused = true;
            view.seek(0);
            view.event = usize::MAX;
        }
        if ui.button("◀").on_hover_text("←: a step back").clicked() {
            view.paused = true;
            view.seek(cursor.saturating_sub(1));
            view.event = usize::MAX;
        }
        if ui.button("▶").on_hover_text("→: a step on").clicked() {
            view.paused = true;
            view.step_forward();
            view.event = usize::MAX;
        }
        if ui.button("⏭").on_hover_text("End: the run's end").clicked() {
            view.paused = true;
            view.seek(end);
            view.event = usize::MAX;
        }
        // After a whole step: the step complete.
        view.event = view.event.min(view.last_event());
        ui.label(mono(format!("frame {} / {}", view.timeline.cursor(), end)));
        ui.checkbox(&mut view.play_events, "events (E)")
            .on_hover_text("Play the trace event by event");
        ui.checkbox(&mut view.code.visible, "code (C)");
    });
}

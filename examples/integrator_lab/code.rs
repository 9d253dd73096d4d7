//! The code panel: the source of the chosen method, read from
//! `src/integrators.rs` as compiled into the lab (not a copy), the line of
//! the current trace event highlighted, with its narration beside it.

use bevy_egui::egui;
use bevy_euler_physics::integrators::Integrator;

use crate::trace::{Event, Kind, Trace, narration};

/// The library's integrators, as this build of the lab was compiled with.
pub const SOURCE: &str = include_str!("../../src/integrators.rs");

/// The function in `src/integrators.rs` that steps with `method`.
pub const fn function_name(method: Integrator) -> &'static str {
    match method {
        Integrator::ExplicitEuler => "explicit_euler",
        Integrator::SemiImplicitEuler => "semi_implicit_euler",
        Integrator::VelocityVerlet => "velocity_verlet",
        Integrator::Rk2Midpoint => "rk2_midpoint",
    }
}

/// For each event of `method`'s trace, in order, what the lines that do it
/// contain (none for the energy audit, which the lab does, not the method).
fn needles(method: Integrator) -> &'static [&'static [&'static str]] {
    match method {
        Integrator::ExplicitEuler => &[
            &["let a = accel(position, velocity);"],
            &["position: position + h * velocity,"],
            &["velocity: velocity + h * a,"],
            &[],
        ],
        Integrator::SemiImplicitEuler => &[
            &["let a = accel(position, velocity);"],
            &["let velocity = velocity + h * a;"],
            &["position: position + h * velocity,"],
            &[],
        ],
        Integrator::VelocityVerlet => &[
            &["let a0 = accel(position, velocity);"],
            &["let position = position + h * velocity"],
            &["let predicted_velocity = ", "let a1 = accel("],
            &["velocity: velocity + (0.5 * h) * (a0 + a1),"],
            &[],
        ],
        Integrator::Rk2Midpoint => &[
            &["let a = accel(position, velocity);"],
            &["let mid_position = "],
            &["let mid_velocity = "],
            &["let mid_accel = accel("],
            &["position: position + h * mid_velocity,"],
            &["velocity: velocity + h * mid_accel,"],
            &[],
        ],
    }
}

/// One line of the listing.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SourceLine {
    /// 1-based, in `src/integrators.rs`.
    pub number: usize,
    pub text: &'static str,
    pub comment: bool,
}

/// `method`'s function: its doc comment's prose (up to its example) and its
/// code, from the signature to the closing brace.
pub fn listing(method: Integrator) -> Vec<SourceLine> {
    let lines: Vec<&'static str> = SOURCE.lines().collect();
    let signature = format!("pub fn {}(", function_name(method));
    let Some(start) = lines.iter().position(|l| l.starts_with(&signature)) else {
        return Vec::new();
    };
    let mut doc = start;
    while doc > 0 && lines[doc - 1].starts_with("///") {
        doc -= 1;
    }
    let mut prose: Vec<usize> = (doc..start)
        .take_while(|&i| !lines[i].starts_with("/// ```"))
        .collect();
    while prose.last().is_some_and(|&i| lines[i].trim() == "///") {
        prose.pop();
    }
    let end = (start..lines.len())
        .find(|&i| lines[i] == "}")
        .unwrap_or(lines.len() - 1);
    prose
        .into_iter()
        .chain(start..=end)
        .map(|i| SourceLine {
            number: i + 1,
            text: lines[i],
            comment: lines[i].trim_start().starts_with("//"),
        })
        .collect()
}

/// The lines (1-based in `src/integrators.rs`) that do event `index` of
/// `method`'s trace; empty for the energy audit.
pub fn event_lines(method: Integrator, index: usize) -> Vec<usize> {
    let code: Vec<SourceLine> = listing(method)
        .into_iter()
        .filter(|line| !line.comment)
        .collect();
    needles(method)
        .get(index)
        .map(|needles| {
            needles
                .iter()
                .filter_map(|needle| code.iter().find(|l| l.text.contains(needle)))
                .map(|line| line.number)
                .collect()
        })
        .unwrap_or_default()
}

/// What the code panel shows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CodeOptions {
    pub visible: bool,
    pub comments: bool,
    pub narration: bool,
}

impl Default for CodeOptions {
    fn default() -> Self {
        Self {
            visible: true,
            comments: true,
            narration: true,
        }
    }
}

pub const HIGHLIGHT: egui::Color32 = egui::Color32::from_rgb(110, 80, 20);
const NARRATION: egui::Color32 = egui::Color32::from_rgb(250, 225, 150);
const CODE_SIZE: f32 = 10.5;

/// A vector, short.
pub fn vec_text(v: bevy::math::DVec2) -> String {
    format!("({:.3}, {:.3})", v.x, v.y)
}

/// One line of the trace list.
pub fn event_text(event: &Event) -> String {
    match *event {
        Event::Force {
            position, accel, ..
        } => format!("at {} a = {}", vec_text(position), vec_text(accel)),
        Event::Accelerate { from, to, tau, .. } => {
            format!("v {} → {} (τ {tau:.3})", vec_text(from), vec_text(to))
        }
        Event::Move { from, to, tau, .. } => {
            format!("x {} → {} (τ {tau:.3})", vec_text(from), vec_text(to))
        }
        Event::Energy {
            energy,
            drift_percent,
            error,
            ..
        } => format!("E {energy:.4} J, drift {drift_percent:+.3} %, error {error:.4} m"),
    }
}

/// The trace list (click an event to show it) and the code of its method,
/// with the current event's lines highlighted. Returns the event clicked.
pub fn code_panel(
    ui: &mut egui::Ui,
    trace: Option<&Trace>,
    event: usize,
    options: &mut CodeOptions,
) -> Option<usize> {
    let mut clicked = None;
    ui.horizontal(|ui| {
        ui.checkbox(&mut options.comments, "comments (H)");
        ui.checkbox(&mut options.narration, "narration (N)");
        if ui.button("hide (C)").clicked() {
            options.visible = false;
        }
    });
    ui.separator();
    let Some(trace) = trace else {
        ui.label("No step into this moment yet (a start, or a settings change): step on with →.");
        return None;
    };
    let method = trace.method;
    ui.strong(format!("Trace of one {} step", method.name()));
    for (i, item) in trace.events.iter().enumerate() {
        let text = egui::RichText::new(format!(
            "{} {:<10} {}",
            i + 1,
            item.kind().name(),
            event_text(item)
        ))
        .monospace()
        .size(CODE_SIZE);
        if ui.selectable_label(i == event, text).clicked() {
            clicked = Some(i);
        }
    }
    if !trace.matches {
        ui.colored_label(
            egui::Color32::RED,
            "the trace does not end where the library's step did",
        );
    }
    ui.separator();
    ui.strong(format!("src/integrators.rs: {}", function_name(method)));
    let lines = event_lines(method, event);
    let current = trace.events.get(event).map(Event::kind);
    let narrations = narration(method);
    egui::ScrollArea::vertical()
        .auto_shrink([false, false])
        .show(ui, |ui| {
            ui.spacing_mut().item_spacing.y = 1.0;
            let listing = listing(method);
            for (n, line) in listing.iter().enumerate() {
                if line.comment && !options.comments {
                    continue;
                }
                let lit = lines.contains(&line.number);
                let mut text = egui::RichText::new(format!("{:>3} {}", line.number, line.text))
                    .monospace()
                    .size(CODE_SIZE);
                if line.comment {
                    text = text.color(egui::Color32::from_gray(130));
                }
                if lit {
                    text = text.background_color(HIGHLIGHT).color(egui::Color32::WHITE);
                }
                ui.add(egui::Label::new(text).wrap());
                let last_lit = lit && !listing[n + 1..].iter().any(|l| lines.contains(&l.number));
                let closing = line.text == "}" && current == Some(Kind::Energy);
                if options.narration
                    && (last_lit || closing)
                    && let Some(words) = narrations.get(event)
                {
                    ui.label(
                        egui::RichText::new(format!("    » {words}"))
                            .italics()
                            .color(NARRATION),
                    );
                }
            }
        });
    clicked
}

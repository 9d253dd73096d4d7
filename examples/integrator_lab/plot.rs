//! The drift of the four runs: sampled as the run goes ([`DriftHistory`])
//! and plotted on a symmetric log scale ([`drift_plot`]).

use std::collections::VecDeque;

use bevy_egui::egui;
use bevy_euler_physics::integrators::Integrator;
use egui_plot::{
    Corner, GridInput, GridMark, HoverPosition, Legend, Line, LineStyle, Plot, PlotPoints, VLine,
};

use crate::state::{Race, Settings};
use crate::ui::{METHOD_COLORS, number_text, percent_text};

/// At most this many drift samples per method.
pub const HISTORY_POINTS: usize = 1500;
/// At most this many settings-change marks on the plot.
const MAX_CHANGE_MARKS: usize = 100;
/// The longest time between two samples, when `dt` is shorter.
const SAMPLE_SECONDS: f64 = 0.05;

/// The simulated time between two drift samples with `settings`: `dt` or
/// [`SAMPLE_SECONDS`], whichever is longer, but no more than 1/40 of a
/// period so that the energy's oscillation (twice a period) stays resolved.
pub fn sample_interval(settings: &Settings) -> f64 {
    let period = std::f64::consts::TAU / settings.system().angular_frequency();
    settings.dt.max(SAMPLE_SECONDS.min(period / 40.0))
}

/// One point of a drift line.
#[derive(Debug, Clone, Copy, PartialEq)]
struct DriftSample {
    time: f64,
    /// In percent.
    drift: f64,
    /// The first sample after a settings change: the line breaks before it
    /// (the drift restarts from 0 against the new exact motion).
    after_change: bool,
}

/// The recent drift of the four runs of a [`Race`], for the plot.
#[derive(Debug, Clone, Default)]
pub struct DriftHistory {
    /// Per method, in the order of [`Integrator::ALL`], oldest first, at
    /// most [`HISTORY_POINTS`].
    lines: [VecDeque<DriftSample>; 4],
    /// When the settings changed (the exact motion was measured afresh).
    changes: VecDeque<f64>,
    /// When the last sample was taken.
    last_sample: Option<f64>,
    /// Per method: whether its next sample is the first after a change.
    changed: [bool; 4],
}

impl DriftHistory {
    pub fn clear(&mut self) {
        *self = Self::default();
    }

    /// Samples the runs that have not blown up, if a sample is due.
    pub fn record(&mut self, race: &Race) {
        let time = race.time();
        let interval = sample_interval(&race.settings());
        // A step short of the interval (round-off) still counts as due.
        if self
            .last_sample
            .is_some_and(|last| time - last < interval * (1.0 - 1.0e-9))
        {
            return;
        }
        self.last_sample = Some(time);
        for ((line, changed), lab) in self.lines.iter_mut().zip(&mut self.changed).zip(&race.labs) {
            if lab.blown_up() {
                continue;
            }
            let drift = lab.readouts().drift_percent;
            if !drift.is_finite() {
                continue;
            }
            line.push_back(DriftSample {
                time: lab.time(),
                drift,
                after_change: std::mem::take(changed),
            });
            if line.len() > HISTORY_POINTS {
                line.pop_front();
            }
        }
        // Marks older than every line's first point mark nothing any more.
        let oldest = self
            .lines
            .iter()
            .filter_map(|line| line.front().map(|sample| sample.time))
            .fold(f64::INFINITY, f64::min);
        while self.changes.front().is_some_and(|&t| t < oldest) {
            self.changes.pop_front();
        }
    }

    /// Marks a settings change at the race's time and samples the fresh
    /// start (drift 0).
    pub fn mark_change(&mut self, race: &Race) {
        self.changes.push_back(race.time());
        if self.changes.len() > MAX_CHANGE_MARKS {
            self.changes.pop_front();
        }
        self.last_sample = None;
        self.changed = [true; 4];
        self.record(race);
    }

    /// Forgets what was sampled after `time` (the run goes on from there
    /// on another branch).
    pub fn truncate_after(&mut self, time: f64) {
        for line in &mut self.lines {
            while line.back().is_some_and(|s| s.time > time) {
                line.pop_back();
            }
        }
        while self.changes.back().is_some_and(|&t| t > time) {
            self.changes.pop_back();
        }
        self.last_sample = Some(time);
    }
}

/// The symmetric log scale of the plot is linear within ±this drift (%).
const SYMLOG_LINEAR: f64 = 0.01;
const CHANGE_MARK_COLOR: egui::Color32 = egui::Color32::from_gray(150);
const CURSOR_COLOR: egui::Color32 = egui::Color32::from_rgb(230, 230, 240);

/// The symmetric log scale: `d / t` within ±`t`, `±(1 + log₁₀(|d| / t))`
/// beyond, with `t` = [`SYMLOG_LINEAR`]; so the integers are ±t, ±10t, ….
fn symlog(drift: f64) -> f64 {
    let x = drift / SYMLOG_LINEAR;
    if x.abs() <= 1.0 {
        x
    } else {
        x.signum() * (1.0 + x.abs().log10())
    }
}

/// The inverse of [`symlog`].
fn symlog_inverse(y: f64) -> f64 {
    if y.abs() <= 1.0 {
        y * SYMLOG_LINEAR
    } else {
        y.signum() * SYMLOG_LINEAR * 10f64.powf(y.abs() - 1.0)
    }
}

/// Grid lines for the symmetric log scale: at 0, ±t, ±10t, …, or the usual
/// decimal grid when zoomed far in. Every 2nd, 4th, 8th … line counts as
/// coarser, so that egui_plot labels (and thickens) as many as fit.
fn symlog_grid(input: GridInput) -> Vec<GridMark> {
    let (low, high) = input.bounds;
    // Zoomed in (or absurdly far out): the usual grid.
    if !(3.0..=1.0e6).contains(&(high - low)) {
        return egui_plot::log_grid_spacer(10)(input);
    }
    // Far zoomed out, only every `finest`-th line (at most 512 of them).
    let finest = ((high - low) / 512.0).max(1.0).log2().ceil().exp2() as i64;
    let coarsest = finest << 10;
    let first = (low / finest as f64).ceil() as i64;
    let last = (high / finest as f64).floor() as i64;
    (first..=last)
        .map(|k| {
            let i = k * finest;
            // The largest power of two that divides i (0: the coarsest).
            let step = if i == 0 {
                coarsest
            } else {
                (1_i64 << i.trailing_zeros()).min(coarsest)
            };
            GridMark {
                value: i as f64,
                step_size: step as f64,
            }
        })
        .collect()
}

/// A drift in percent as a plot label: short, no trailing zeros.
fn percent_label(drift: f64) -> String {
    let magnitude = drift.abs();
    if magnitude == 0.0 {
        "0 %".to_owned()
    } else if magnitude >= 1.0e5 {
        format!("{drift:.0e} %")
    } else if magnitude >= 1.0 {
        format!("{} %", number_text((drift * 100.0).round() / 100.0))
    } else {
        format!("{} %", number_text(drift))
    }
}

pub fn drift_plot(
    ui: &mut egui::Ui,
    history: &DriftHistory,
    shown: Integrator,
    log_scale: bool,
    now: f64,
    height: f32,
) {
    let to_plot = move |drift: f64| if log_scale { symlog(drift) } else { drift };
    let from_plot = move |y: f64| {
        if log_scale { symlog_inverse(y) } else { y }
    };
    let mut plot = Plot::new("drift")
        .height(height)
        // Bottom right: the drift of the first seconds is plotted at the
        // left, and the growing ones go up to the right.
        .legend(
            Legend::default()
                .position(Corner::RightBottom)
                .follow_insertion_order(true)
                .background_alpha(0.6)
                .text_style(egui::TextStyle::Small),
        )
        .x_axis_label("time (s)")
        .allow_scroll(false)
        .label_formatter(move |position| {
            let (name, point) = match position {
                HoverPosition::NearDataPoint {
                    plot_name,
                    position,
                    ..
                } => (*plot_name, position),
                HoverPosition::Elsewhere { position } => ("", position),
            };
            let prefix = if name.is_empty() {
                String::new()
            } else {
                format!("{name}\n")
            };
            Some(format!(
                "{prefix}t = {:.2} s\ndrift = {}",
                point.x,
                percent_text(from_plot(point.y))
            ))
        });
    if log_scale {
        plot = plot
            .y_grid_spacer(symlog_grid)
            .y_axis_formatter(|mark, _| percent_label(symlog_inverse(mark.value)));
    } else {
        plot = plot.y_axis_formatter(|mark, _| percent_label(mark.value));
    }
    plot.show(ui, |plot_ui| {
        plot_ui.vline(VLine::new("", now).color(CURSOR_COLOR).width(1.0));
        for &time in &history.changes {
            plot_ui.vline(
                VLine::new("settings changed", time)
                    .color(CHANGE_MARK_COLOR)
                    .style(LineStyle::dashed_dense()),
            );
        }
        for (i, (line, method)) in history.lines.iter().zip(Integrator::ALL).enumerate() {
            // One piece per stretch between settings changes; the pieces
            // share the method's name, so the legend lists it once.
            let mut pieces: Vec<Vec<[f64; 2]>> = Vec::new();
            for sample in line {
                if sample.after_change || pieces.is_empty() {
                    pieces.push(Vec::new());
                }
                if let Some(piece) = pieces.last_mut() {
                    piece.push([sample.time, to_plot(sample.drift)]);
                }
            }
            let width = if method == shown { 2.5 } else { 1.2 };
            for piece in pieces {
                plot_ui.line(
                    Line::new(method.name(), PlotPoints::from(piece))
                        .color(METHOD_COLORS[i])
                        .width(width),
                );
            }
        }
    });
}

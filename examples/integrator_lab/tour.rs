//! The guided tour (G): a few narrated stops, each of which sets the lab up
//! from the default start and says what to look at.

use bevy_egui::egui;
use bevy_euler_physics::integrators::Integrator;

use crate::state::Settings;
use crate::view::{GRAVITY, LabView};

/// One stop of the tour.
pub struct Stop {
    pub title: &'static str,
    pub text: &'static str,
    pub settings: Settings,
    /// Whether the stop plays the trace event by event.
    pub play_events: bool,
}

const fn settings(method: Integrator, dt: f64, stiffness: f64, gravity: f64) -> Settings {
    Settings {
        method,
        dt,
        stiffness,
        drag: 0.0,
        gravity,
    }
}

pub const STOPS: [Stop; 6] = [
    Stop {
        title: "One step, event by event",
        text: "Explicit Euler takes a step in four events: it measures the force where \
               the mass is, moves along the OLD velocity, then kicks the velocity with the \
               old force, and the lab audits the energy. Watch the highlighted line in the \
               code panel and the magenta arrow on the stage; press , and . to step through \
               the events yourself.",
        settings: settings(Integrator::ExplicitEuler, 0.1, 4.0, 0.0),
        play_events: true,
    },
    Stop {
        title: "Explicit Euler spirals out",
        text: "Each explicit Euler step multiplies the energy by exactly 1 + ω²h², here \
               1 + 4·0.01 = 1.04: the orbit spirals outwards and its drift climbs without \
               end (red line on the plot). Halving dt (Down) slows the spiral but never \
               stops it.",
        settings: settings(Integrator::ExplicitEuler, 0.1, 4.0, 0.0),
        play_events: false,
    },
    Stop {
        title: "Semi-implicit Euler keeps its orbit",
        text: "Swap two lines (kick first, then move with the NEW velocity) and the method \
               becomes symplectic: it conserves a quadratic close to the energy, so the \
               energy only wobbles, within (1 + ωh/2)/(1 − ωh/2) of the start, and the orbit \
               stays closed however long it runs. This is how the plugin steps bodies.",
        settings: settings(Integrator::SemiImplicitEuler, 0.1, 4.0, 0.0),
        play_events: false,
    },
    Stop {
        title: "Velocity Verlet is second order",
        text: "Verlet measures the force twice a step and kicks with their average. Its \
               error is O(h²): halve dt (Down) and the error falls by 4, where the Euler \
               pair's falls by 2 (compare the error column). Its energy does not drift.",
        settings: settings(Integrator::VelocityVerlet, 0.1, 4.0, 0.0),
        play_events: false,
    },
    Stop {
        title: "The stability limit ω·h = 2",
        text: "With k = 4 (ω = 2) and dt = 1.05, ω·h = 2.1: past 2 the step has an \
               eigenvalue below −1 and semi-implicit Euler blows up, multiplying its energy \
               about 3.5-fold a step. Press Down to halve dt (ω·h = 1.05) and it is bounded \
               again. A stiff spring needs a small step.",
        settings: settings(Integrator::SemiImplicitEuler, 1.05, 4.0, 0.0),
        play_events: false,
    },
    Stop {
        title: "A projectile",
        text: "Stiffness 0: gravity alone, y = y₀ + v₀·t − g·t²/2. Verlet and RK2 are exact \
               for a constant force; explicit Euler ends g·h·t/2 above the parabola and \
               semi-implicit Euler g·h·t/2 below it (1–4 switch methods; the error readout \
               grows linearly in t).",
        settings: settings(Integrator::SemiImplicitEuler, 0.1, 0.0, GRAVITY),
        play_events: false,
    },
];

/// Goes to stop `stop` of the tour (set up from the default start, playing),
/// or ends the tour (`None`, or past the last stop).
pub fn go_to(view: &mut LabView, stop: Option<usize>) {
    view.tour = stop.filter(|&i| i < STOPS.len());
    if let Some(i) = view.tour {
        let stop = &STOPS[i];
        view.reset(stop.settings);
        view.play_events = stop.play_events;
        view.paused = false;
        view.accumulator = 0.0;
    }
}

/// The tour's window at the top of the stage, while the tour runs.
pub fn tour_window(ctx: &egui::Context, view: &mut LabView) {
    let Some(i) = view.tour else {
        return;
    };
    let stop = &STOPS[i];
    let mut go = None;
    egui::Window::new(format!("Tour {}/{}: {}", i + 1, STOPS.len(), stop.title))
        .id(egui::Id::new("tour"))
        .anchor(egui::Align2::CENTER_TOP, [0.0, 8.0])
        .collapsible(false)
        .resizable(false)
        .default_width(380.0)
        .show(ctx, |ui| {
            ui.label(stop.text);
            ui.horizontal(|ui| {
                if ui.add_enabled(i > 0, egui::Button::new("Back")).clicked() {
                    go = Some(Some(i - 1));
                }
                let next = if i + 1 < STOPS.len() {
                    "Next (G)"
                } else {
                    "Finish"
                };
                if ui.button(next).clicked() {
                    go = Some(Some(i + 1));
                }
                if ui.button("End (Esc)").clicked() {
                    go = Some(None);
                }
            });
        });
    if let Some(stop) = go {
        go_to(view, stop);
    }
}

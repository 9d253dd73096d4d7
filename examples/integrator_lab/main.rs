//! Integrator lab: one mass on one spring (or none: a projectile), stepped
//! by four methods side by side, one of them drawn against its exact
//! motion, its step traced event by event beside the real source of the
//! method, the drift of all four plotted, the whole run recorded to step
//! back and forth through.
//!
//! `cargo run --release --example integrator_lab` (needs the `debug-ui`
//! feature, on by default)
//!
//! A unit mass on a linear spring to an anchor at the origin, with optional
//! linear drag and gravity (`a = −k·x − c·v + g`; world units are metres).
//! The lab steps it with each of the four methods of
//! `bevy_euler_physics::integrators` (explicit Euler, semi-implicit Euler,
//! velocity Verlet, RK2 midpoint) at a fixed step `dt`, all four together
//! from the same state with the same settings, and measures them against the
//! closed-form motion through that state (`ExactMotion`; with stiffness 0,
//! the projectile `y = y₀ + v₀·t − g·t²/2`). It does not use the physics
//! plugin: it steps its own `State`s, `dt` of simulated time per step,
//! played at real time, or one trace event at a time.
//!
//! What you see between the panels: the run of the method chosen, as the
//! anchor (a cross), the spring (a line to the particle), the particle
//! (filled) and where the exact motion is now (hollow circle), the exact
//! path of the last few seconds (dashed) and the particle's own path
//! (solid); when the view is back in the recorded run, the ghost of where
//! the run ends (grey) and its path from here. Arrows show the velocity
//! (cyan) and, on one common scale so that they add up, the spring force
//! (orange), drag (red), gravity (green) and their sum (white); the current
//! trace event's arrow is magenta (a move, a kick, the error).
//!
//! # The trace and the code (`trace`, `code`)
//!
//! Each step is taken apart into the events the method does, in its order:
//! `force` (the pulls at a place), `accelerate` (the kick), `move` (the step
//! along a velocity), `energy` (the audit against the exact motion).
//! Explicit Euler: force, move, accelerate, energy; semi-implicit: force,
//! accelerate, move, energy; Verlet: force, move, force, accelerate, energy;
//! RK2: force, move, accelerate (to the midpoint), force, move, accelerate,
//! energy. The right panel lists the events of the step into the moment
//! shown (click one to show it) and the source of the method's function,
//! read from `src/integrators.rs` as compiled in (`include_str!`), the
//! event's lines highlighted, with a narration beside them; comments and
//! narration can be hidden, and the panel too.
//!
//! # The timeline (`timeline`)
//!
//! Every step is recorded (the last 100 000). ←/→ step back and on (on past
//! the end takes a new step), Home/End go to the run's start and end, `,`
//! and `.` go an event back and on. Play replays the record, then goes on.
//! A settings change back in the record starts the run afresh from there.
//!
//! # The panel (`ui`, `plot`)
//!
//! - **Method**: which of the four runs the view draws and the readouts
//!   describe.
//! - **dt**, **stiffness**, **drag**: type values and press Apply (or Enter
//!   in a field). Invalid values (not a number, `dt` outside [0.001, 2] s,
//!   stiffness neither 0 nor in [0.01, 1000], drag at or above the critical
//!   drag `2√k`, any drag with stiffness 0) are refused: the old settings
//!   stay, the panel says why in red. **Gravity** `(0, −9.81)` is a
//!   checkbox.
//! - **Play/Pause**, **Reset** (the default start and settings),
//!   **Restart** (the default start, the current settings), **Tour**; the
//!   timeline's buttons, "events" (play event by event) and "code".
//! - Readouts of the chosen run: time, energy, drift (energy minus the exact
//!   motion's energy, in percent of the energy when the exact motion was
//!   last measured), error (distance from the exact position), speed, `ω·dt`;
//!   then the drift and error of all four runs; then the drift of all four
//!   against time, on a symmetric log scale (linear within ±0.01 %).
//!
//! Changing `dt`, stiffness, drag or gravity measures the exact motion
//! afresh from the current state and time of the chosen run and restarts
//! all four from there, marked on the plot by a dashed line. A run that
//! blows up (not finite, or more than 10 km away) stops; if it is the chosen
//! run the lab pauses.
//!
//! # Keys
//!
//! Ignored while a text field of the panel has the keyboard: `Space` play /
//! pause; `←`/`→` a step back / on; `Home`/`End` the run's start / end;
//! `,`/`.` an event back / on; `E` play event by event; `R` reset,
//! `Shift+R` restart; `F` fullscreen; `G` the guided tour (next stop;
//! `Shift+G` back, `Esc` ends it); `1`–`4` method; `Up`/`Down` dt ×2 / ÷2;
//! `K`/`Shift+K` stiffness ×1.25 / ÷1.25; `P` projectile (stiffness 0,
//! gravity on) and back; `D` drag 0 → 0.2 → 0.5 → 1.0 → 0; `W` gravity;
//! `C` code panel; `H` comments; `N` narration.
//!
//! Default start: position (3, 0), velocity (0, 4), stiffness 4, `dt` 0.1,
//! no drag, no gravity, semi-implicit Euler.
//!
//! # Headless (`cli`)
//!
//! ```text
//! integrator_lab --headless [--method M] [--dt D] [--stiffness K] [--drag C]
//!                [--gravity G] --steps N [--back B] [--trace]
//! integrator_lab --headless --compare [...] --steps N [--back B]
//! ```
//!
//! runs `N` steps from the default start and prints five lines: `time:`,
//! `energy:`, `drift:` (percent), `error:`, `speed:`; with `--compare` one
//! line per method (`METHOD time=… energy=… drift=… error=… speed=…`).
//! `--back B` then steps back `B` steps over the recorded run: it prints
//! exactly what `--steps N−B` prints. `--trace` first prints one line per
//! event of every step: `trace step=S event=E line=L` (the lines of
//! `src/integrators.rs` that do it, `-` for the audit) and the values.
//! Bad arguments print the usage to stderr and exit with code 2. The window
//! takes `--method M` and `--trace` (start playing event by event).

#[path = "../support/mod.rs"]
mod support;

mod cli;
mod code;
mod plot;
mod stage;
mod state;
mod timeline;
mod tour;
mod trace;
mod ui;
mod view;

use bevy::prelude::*;
use bevy_egui::input::egui_wants_any_keyboard_input;
use bevy_egui::{EguiPlugin, EguiPrimaryContextPass};
use bevy_euler_physics::integrators::Integrator;

use cli::{Command, USAGE};
use state::{Race, Settings};
use view::LabView;

fn fail(message: &str) -> ! {
    eprintln!("integrator_lab: {message}\n\n{USAGE}");
    std::process::exit(2);
}

fn main() {
    // Headless first: no Bevy app is built for it.
    let args: Vec<String> = std::env::args().skip(1).collect();
    match cli::parse_args(&args) {
        Ok(Command::Window { method, trace }) => run_window(method, trace),
        Ok(Command::Help) => println!("{USAGE}"),
        Ok(Command::Headless(run)) => {
            if let Err(e) = cli::print_run(&run) {
                fail(&e);
            }
        }
        Err(message) => fail(&message),
    }
}

fn run_window(method: Option<Integrator>, trace: bool) {
    let settings = Settings {
        method: method.unwrap_or(Settings::default().method),
        ..Settings::default()
    };
    let race = match Race::new(settings) {
        Ok(race) => race,
        Err(e) => fail(&e),
    };
    App::new()
        .add_plugins(DefaultPlugins.set(WindowPlugin {
            primary_window: Some(Window {
                title: "bevy_euler_physics: integrator lab".into(),
                resolution: (1280, 720).into(),
                ..default()
            }),
            ..default()
        }))
        .add_plugins((EguiPlugin::default(), support::CapturePlugin))
        .insert_resource(ClearColor(Color::srgb(0.08, 0.09, 0.12)))
        .insert_resource(LabView::new(race, trace))
        .add_systems(Startup, setup)
        .add_systems(
            Update,
            (
                view::controls.run_if(not(egui_wants_any_keyboard_input)),
                view::advance,
                stage::draw,
            )
                .chain(),
        )
        .add_systems(EguiPrimaryContextPass, ui::panel)
        .run();
}

fn setup(mut commands: Commands) {
    // The scale and offset are set each frame by `ui::panel`, which knows
    // the window's size and the panels' widths.
    commands.spawn(support::camera(1.0, Vec2::ZERO));
}

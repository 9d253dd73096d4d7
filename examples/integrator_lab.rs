//! Integrator lab: one mass on one spring, stepped by four methods side by
//! side, one of them drawn against its exact motion, the drift of all four
//! plotted in an egui panel.
//!
//! `cargo run --release --example integrator_lab` (needs the `debug-ui`
//! feature, on by default)
//!
//! A unit mass on a linear spring to an anchor at the origin, with optional
//! linear drag and gravity (`a = −k·x − c·v + g`; world units are metres). The
//! lab steps it with each of the four methods of
//! `bevy_euler_physics::integrators` (explicit Euler, semi-implicit Euler,
//! velocity Verlet, RK2 midpoint) at a fixed step `dt`, all four together
//! from the same state with the same settings, and measures them against the
//! closed-form motion through that state (`ExactMotion`). It does not use
//! the physics plugin: it steps its own `State`s, `dt` of simulated time per
//! step, played at real time.
//!
//! What you see, right of the panel: the run of the method chosen in the
//! panel, as the anchor (a cross), the spring (a line to the particle), the
//! particle (filled) and where the exact motion is now (hollow circle), the
//! exact path of the last few seconds (dashed) and the particle's own path
//! (solid). Arrows show the velocity (cyan) and, on one common scale so that
//! they add up, the spring force (orange), drag (red), gravity (green) and
//! their sum (white).
//!
//! # The panel
//!
//! - **Method**: which of the four runs the view draws and the readouts
//!   describe. Choosing another one re-measures nothing: the four runs go on
//!   side by side, and the view shows the chosen one's state (and path).
//! - **dt**, **stiffness**, **drag**: type values and press Apply (or Enter
//!   in a field). Invalid values (not a number, `dt` outside
//!   [0.001, 2] s, stiffness outside [0.01, 1000], drag at or above the
//!   critical drag `2√k`) are refused: the old settings stay, the panel says
//!   why in red, and the typed text stays for you to correct. **Gravity**
//!   `(0, −9.81)` is a checkbox.
//! - **Play/Pause**, **Step** (one `dt`, while paused), **Reset** (the
//!   default start and settings), **Restart** (the default start, the
//!   current settings).
//! - Readouts of the chosen run: time, energy (kinetic + spring + gravity),
//!   drift (energy minus the exact motion's energy, in percent of the energy
//!   when the exact motion was last measured), error (distance from the
//!   exact position), speed, and `ω·dt`; then the drift and error of all
//!   four runs.
//! - The drift plot: the drift of each run against time, one line per
//!   method (the chosen one thicker), with a legend (click an entry to hide
//!   its line). Drag to pan, scroll with Ctrl to zoom, double-click to
//!   follow the data again. The y axis is a symmetric log scale by default
//!   (linear within ±0.01 %, logarithmic beyond), so that explicit Euler's
//!   thousands of percent and Verlet's fraction of a percent fit on one
//!   plot; untick "log scale" for a linear axis.
//!
//! Changing `dt`, stiffness, drag or gravity mid-run measures the exact
//! motion afresh from the current state and time of the *chosen* run, and
//! restarts all four runs from that one state: they stay comparable (same
//! state, settings and exact motion since the change), and every drift is
//! then relative to the energy at that moment, so the readouts stay
//! meaningful. The plot keeps its history and marks each change with a
//! dashed vertical line, where the lines break; Reset and Restart clear it.
//! It holds the last `HISTORY_POINTS` (1500) samples per method, one every
//! 0.05 s of simulated time (every period/40 for a spring stiffer than
//! k = π², but never more often than every `dt`), so memory stays flat
//! however long the lab runs.
//!
//! A run that blows up (its state is no longer finite or is more than 10 km
//! away) stops where it is: its line ends and the panel says when it blew
//! up. If it is the chosen run the lab pauses: choose another method and
//! press Play to go on with the others, or Reset.
//!
//! Try: explicit Euler spirals outwards (its energy grows by `1 + ω²h²` per
//! step); semi-implicit Euler and Verlet stay on a closed orbit, their drift
//! oscillating about zero; RK2's drift creeps steadily upwards; doubling
//! `dt` doubles the Euler error and quadruples the Verlet/RK2 error; with
//! semi-implicit Euler, `ω·dt ≥ 2` blows up.
//!
//! # Keys
//!
//! Shortcuts, ignored while a text field of the panel has the keyboard:
//!
//! - `1`–`4`: explicit Euler, semi-implicit Euler, velocity Verlet, RK2
//!   midpoint
//! - `Up` / `Down`: double / halve `dt`
//! - `Right` / `Left`: stiffness ×1.25 / ÷1.25
//! - `D`: drag 0 → 0.2 → 0.5 → 1.0 → 0
//! - `G`: gravity on / off
//! - `Space`: play / pause; `S`: one step (while paused)
//! - `R`: reset to the default start (all settings too); `Shift+R`: restart
//!   the motion from the default start, keeping the settings
//!
//! Default start: position (3, 0), velocity (0, 4), stiffness 4, `dt` 0.1,
//! no drag, no gravity, semi-implicit Euler.
//!
//! # Headless
//!
//! ```text
//! integrator_lab --headless [--method euler|semi-implicit|verlet|rk2] [--dt D]
//!                [--stiffness K] [--drag C] [--gravity G] --steps N
//! integrator_lab --headless --compare [--dt D] [--stiffness K] [--drag C]
//!                [--gravity G] --steps N
//! ```
//!
//! runs `N` steps from the default start (the options not given keep their
//! default; gravity `G` means `(0, −G)`) and prints five lines, one value
//! each: `time:`, `energy:`, `drift:` (percent), `error:`, `speed:`. With
//! `--compare` it runs the four methods side by side as the window does and
//! prints one line per method: its name as `--method` takes it, then
//! `time=`, `energy=`, `drift=`, `error=` and `speed=` (a run that blew up
//! stopped at the time it shows). Bad or missing arguments print the usage
//! to stderr and exit with code 2. No window is opened and no Bevy app is
//! built.

mod support;

use std::collections::VecDeque;

use bevy::math::DVec2;
use bevy::prelude::*;
use bevy::window::PrimaryWindow;
use bevy_egui::input::egui_wants_any_keyboard_input;
use bevy_egui::{EguiContexts, EguiPlugin, EguiPrimaryContextPass, egui};
use bevy_euler_physics::integrators::{
    ExactMotion, ExactMotionError, Integrator, SpringSystem, State,
};
use egui_plot::{
    Corner, GridInput, GridMark, HoverPosition, Legend, Line, LineStyle, Plot, PlotPoints, VLine,
};

// ---------------------------------------------------------------------------
// The simulation, shared by both modes.
// ---------------------------------------------------------------------------

/// Where every run starts.
const START: State = State::new(DVec2::new(3.0, 0.0), DVec2::new(0.0, 4.0));

/// What the lab is running: method, step and system.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Settings {
    method: Integrator,
    /// The step, in seconds of simulated time.
    dt: f64,
    /// `k`.
    stiffness: f64,
    /// `c`.
    drag: f64,
    /// `G`: gravity is `(0, −G)`; 0 is off.
    gravity: f64,
}

impl Default for Settings {
    fn default() -> Self {
        Self {
            method: Integrator::SemiImplicitEuler,
            dt: 0.1,
            stiffness: 4.0,
            drag: 0.0,
            gravity: 0.0,
        }
    }
}

impl Settings {
    fn system(&self) -> SpringSystem {
        SpringSystem::new(self.stiffness, self.drag, DVec2::new(0.0, -self.gravity))
    }
}

/// What the lab reports about the current state.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Readouts {
    time: f64,
    /// Kinetic + spring + gravitational energy.
    energy: f64,
    /// Energy minus the exact motion's energy at the same time, in percent
    /// of the energy when the exact motion was measured.
    drift_percent: f64,
    /// Distance from the exact position.
    error: f64,
    /// `|v|`.
    speed: f64,
}

/// One mass on one spring, stepped with [`Settings::method`] and measured
/// against [`ExactMotion`].
#[derive(Debug, Clone)]
struct Lab {
    settings: Settings,
    state: State,
    /// The time when the settings last changed; the time now is this plus
    /// `steps · dt` (no round-off accumulates from adding `dt` up).
    time_base: f64,
    /// Steps since `time_base`.
    steps: u64,
    /// The exact motion through the state at the last (re)measure.
    exact: ExactMotion,
    /// The energy at the last (re)measure: what the drift is relative to.
    reference_energy: f64,
}

impl Lab {
    /// The default start, stepped with `settings`; fails if the exact motion
    /// cannot follow them.
    fn new(settings: Settings) -> Result<Self, ExactMotionError> {
        let exact = ExactMotion::new(settings.system(), START, 0.0)?;
        Ok(Self {
            settings,
            state: START,
            time_base: 0.0,
            steps: 0,
            exact,
            reference_energy: settings.system().energy(&START),
        })
    }

    fn time(&self) -> f64 {
        self.time_base + self.steps as f64 * self.settings.dt
    }

    /// One step of `dt`.
    fn step(&mut self) {
        let system = self.settings.system();
        self.state = self
            .settings
            .method
            .step(self.state, self.settings.dt, &mut |x, v| {
                system.acceleration(x, v)
            });
        self.steps += 1;
    }

    /// Switches to `settings` from the current state and time, measuring the
    /// exact motion afresh; if that fails, nothing changes.
    fn change(&mut self, settings: Settings) -> Result<(), ExactMotionError> {
        let time = self.time();
        let exact = ExactMotion::new(settings.system(), self.state, time)?;
        self.settings = settings;
        self.time_base = time;
        self.steps = 0;
        self.exact = exact;
        self.reference_energy = settings.system().energy(&self.state);
        Ok(())
    }

    /// The state the exact motion is in now.
    fn exact_state(&self) -> State {
        self.exact.state_at(self.time())
    }

    /// When the exact motion was last measured.
    fn reference_time(&self) -> f64 {
        self.exact.reference().1
    }

    /// Whether the state is no longer finite or has flown far away.
    fn blown_up(&self) -> bool {
        !self.state.is_finite() || self.state.position.length() > 1.0e4
    }

    fn readouts(&self) -> Readouts {
        let system = self.settings.system();
        let exact = self.exact_state();
        let energy = system.energy(&self.state);
        let exact_energy = system.energy(&exact);
        Readouts {
            time: self.time(),
            energy,
            // Not finite if the reference energy is zero: shown as "n/a".
            drift_percent: 100.0 * (energy - exact_energy) / self.reference_energy.abs(),
            error: (self.state.position - exact.position).length(),
            speed: self.state.velocity.length(),
        }
    }
}

impl Lab {
    /// The same lab (state, time, exact motion) stepped with `method`.
    fn with_method(&self, method: Integrator) -> Self {
        let mut lab = self.clone();
        lab.settings.method = method;
        lab
    }
}

/// Where `method`'s run is in [`Race::labs`]: the order of
/// [`Integrator::ALL`].
const fn slot(method: Integrator) -> usize {
    match method {
        Integrator::ExplicitEuler => 0,
        Integrator::SemiImplicitEuler => 1,
        Integrator::VelocityVerlet => 2,
        Integrator::Rk2Midpoint => 3,
    }
}

/// How `--method` names `method`.
const fn cli_name(method: Integrator) -> &'static str {
    match method {
        Integrator::ExplicitEuler => "euler",
        Integrator::SemiImplicitEuler => "semi-implicit",
        Integrator::VelocityVerlet => "verlet",
        Integrator::Rk2Midpoint => "rk2",
    }
}

/// The four methods side by side: four [`Lab`]s with the same system, step,
/// start and exact motion, stepped together. One of them is *shown*: the
/// window draws it, and a settings change restarts all four from its state.
#[derive(Debug, Clone)]
struct Race {
    /// One run per method, in the order of [`Integrator::ALL`].
    labs: [Lab; 4],
    shown: Integrator,
}

impl Race {
    /// The four runs from the default start with `settings`, showing
    /// `settings.method`; fails if the exact motion cannot follow them.
    fn new(settings: Settings) -> Result<Self, ExactMotionError> {
        let lab = Lab::new(settings)?;
        Ok(Self::from_lab(&lab))
    }

    /// All four from `lab`'s state, time and exact motion, showing `lab`'s
    /// method.
    fn from_lab(lab: &Lab) -> Self {
        Self {
            labs: Integrator::ALL.map(|method| lab.with_method(method)),
            shown: lab.settings.method,
        }
    }

    fn lab(&self, method: Integrator) -> &Lab {
        &self.labs[slot(method)]
    }

    fn shown(&self) -> &Lab {
        self.lab(self.shown)
    }

    /// The shown run's settings (the others differ only in the method).
    fn settings(&self) -> Settings {
        self.shown().settings
    }

    /// The shown run's time (a run that blew up stopped earlier).
    fn time(&self) -> f64 {
        self.shown().time()
    }

    /// One step of `dt` for every run that has not blown up.
    fn step(&mut self) {
        for lab in &mut self.labs {
            if !lab.blown_up() {
                lab.step();
            }
        }
    }

    /// Switches to `settings`: measures the exact motion afresh from the
    /// shown run's state and time and restarts all four runs from there,
    /// then shows `settings.method`. If the exact motion cannot follow,
    /// nothing changes.
    fn change(&mut self, settings: Settings) -> Result<(), ExactMotionError> {
        let mut lab = self.shown().clone();
        lab.change(settings)?;
        *self = Self::from_lab(&lab);
        Ok(())
    }
}

/// Runs `steps` steps of all four methods side by side; the readouts in the
/// order of [`Integrator::ALL`].
fn run_compare(settings: Settings, steps: u64) -> Result<[Readouts; 4], ExactMotionError> {
    let mut race = Race::new(settings)?;
    for _ in 0..steps {
        race.step();
    }
    Ok(race.labs.each_ref().map(Lab::readouts))
}

/// At most this many drift samples per method.
const HISTORY_POINTS: usize = 1500;
/// At most this many settings-change marks on the plot.
const MAX_CHANGE_MARKS: usize = 100;
/// The longest time between two samples, when `dt` is shorter.
const SAMPLE_SECONDS: f64 = 0.05;

/// The simulated time between two drift samples with `settings`: `dt` or
/// [`SAMPLE_SECONDS`], whichever is longer, but no more than 1/40 of a
/// period so that the energy's oscillation (twice a period) stays resolved.
fn sample_interval(settings: &Settings) -> f64 {
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
struct DriftHistory {
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
    fn clear(&mut self) {
        *self = Self::default();
    }

    /// Samples the runs that have not blown up, if a sample is due.
    fn record(&mut self, race: &Race) {
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
    fn mark_change(&mut self, race: &Race) {
        self.changes.push_back(race.time());
        if self.changes.len() > MAX_CHANGE_MARKS {
            self.changes.pop_front();
        }
        self.last_sample = None;
        self.changed = [true; 4];
        self.record(race);
    }
}

// ---------------------------------------------------------------------------
// Command line.
// ---------------------------------------------------------------------------

const USAGE: &str = "\
usage: integrator_lab                 open the window
       integrator_lab --headless [--method METHOD] [--dt D] [--stiffness K]
                      [--drag C] [--gravity G] --steps N
       integrator_lab --headless --compare [--dt D] [--stiffness K]
                      [--drag C] [--gravity G] --steps N

Headless: run N steps from position (3, 0), velocity (0, 4) and print
time, energy, drift (%), error and speed, one per line. With --compare,
run all four methods side by side and print one line per method:
METHOD time=T energy=E drift=D error=X speed=S.

  --method METHOD  euler (explicit-euler), semi-implicit, verlet or rk2
                   (default semi-implicit)
  --dt D           step in seconds, > 0 (default 0.1)
  --stiffness K    spring stiffness, > 0 (default 4)
  --drag C         linear drag, >= 0 and below the critical drag 2*sqrt(K)
                   (default 0)
  --gravity G      gravity (0, -G) (default 0)
  --steps N        number of steps (required)
  --compare        all four methods side by side (not with --method)
  --help           show this message";

/// What the command line asks for.
#[derive(Debug)]
enum Command {
    Window,
    Headless { settings: Settings, steps: u64 },
    Compare { settings: Settings, steps: u64 },
    Help,
}

fn parse_number(flag: &str, text: &str) -> Result<f64, String> {
    match text.trim().parse::<f64>() {
        Ok(value) if value.is_finite() => Ok(value),
        _ => Err(format!("{flag} needs a finite number, got {text:?}")),
    }
}

fn parse_args(args: &[String]) -> Result<Command, String> {
    if args.is_empty() {
        return Ok(Command::Window);
    }
    if args.iter().any(|a| a == "--help" || a == "-h") {
        return Ok(Command::Help);
    }
    if !args.iter().any(|a| a == "--headless") {
        return Err("options are for --headless runs; run without any to open the window".into());
    }
    let mut settings = Settings::default();
    let mut steps = None;
    let mut compare = false;
    let mut seen: Vec<&str> = Vec::new();
    let mut rest = args.iter();
    while let Some(flag) = rest.next() {
        let flag = flag.as_str();
        if flag == "--headless" {
            continue;
        }
        if flag == "--compare" {
            if compare {
                return Err("--compare given twice".into());
            }
            compare = true;
            continue;
        }
        if !matches!(
            flag,
            "--method" | "--dt" | "--stiffness" | "--drag" | "--gravity" | "--steps"
        ) {
            return Err(format!("unknown argument {flag:?}"));
        }
        if seen.contains(&flag) {
            return Err(format!("{flag} given twice"));
        }
        seen.push(flag);
        let Some(value) = rest.next() else {
            return Err(format!("{flag} needs a value"));
        };
        match flag {
            "--method" => {
                settings.method = value.parse().map_err(|e| format!("--method: {e}"))?;
            }
            "--dt" => {
                settings.dt = parse_number(flag, value)?;
                if settings.dt <= 0.0 {
                    return Err(format!("--dt must be positive, got {value}"));
                }
            }
            "--stiffness" => {
                settings.stiffness = parse_number(flag, value)?;
                if settings.stiffness <= 0.0 {
                    return Err(format!("--stiffness must be positive, got {value}"));
                }
            }
            "--drag" => {
                settings.drag = parse_number(flag, value)?;
                if settings.drag < 0.0 {
                    return Err(format!("--drag must not be negative, got {value}"));
                }
            }
            "--gravity" => settings.gravity = parse_number(flag, value)?,
            _ => {
                let count = value
                    .trim()
                    .parse::<u64>()
                    .map_err(|_| format!("--steps needs a whole number, got {value:?}"))?;
                steps = Some(count);
            }
        }
    }
    let steps = steps.ok_or("--steps is required")?;
    if compare && seen.contains(&"--method") {
        return Err("--compare runs all four methods: drop --method".into());
    }
    // The same check the lab makes: e.g. drag too heavy for the stiffness.
    ExactMotion::new(settings.system(), START, 0.0).map_err(|e| e.to_string())?;
    if compare {
        Ok(Command::Compare { settings, steps })
    } else {
        Ok(Command::Headless { settings, steps })
    }
}

fn run_headless(settings: Settings, steps: u64) -> Result<Readouts, ExactMotionError> {
    let mut lab = Lab::new(settings)?;
    for _ in 0..steps {
        lab.step();
    }
    Ok(lab.readouts())
}

fn fail(message: &str) -> ! {
    eprintln!("integrator_lab: {message}\n\n{USAGE}");
    std::process::exit(2);
}

fn main() {
    // Headless first: no Bevy app is built for it.
    let args: Vec<String> = std::env::args().skip(1).collect();
    match parse_args(&args) {
        Ok(Command::Window) => run_window(),
        Ok(Command::Help) => println!("{USAGE}"),
        Ok(Command::Headless { settings, steps }) => match run_headless(settings, steps) {
            Ok(r) => {
                println!("time: {}", r.time);
                println!("energy: {}", r.energy);
                println!("drift: {}", r.drift_percent);
                println!("error: {}", r.error);
                println!("speed: {}", r.speed);
            }
            Err(e) => fail(&e.to_string()),
        },
        Ok(Command::Compare { settings, steps }) => match run_compare(settings, steps) {
            Ok(readouts) => {
                for (method, r) in Integrator::ALL.into_iter().zip(readouts) {
                    println!(
                        "{} time={} energy={} drift={} error={} speed={}",
                        cli_name(method),
                        r.time,
                        r.energy,
                        r.drift_percent,
                        r.error,
                        r.speed
                    );
                }
            }
            Err(e) => fail(&e.to_string()),
        },
        Err(message) => fail(&message),
    }
}

// ---------------------------------------------------------------------------
// The window.
// ---------------------------------------------------------------------------

/// The gravity the checkbox and `G` switch on.
const GRAVITY: f64 = 9.81;
/// What `D` cycles through.
const DRAG_STEPS: [f64; 4] = [0.0, 0.2, 0.5, 1.0];
/// The window's limits on `dt` (0.1 halved 6 times … doubled 4 times).
const DT_RANGE: (f64, f64) = (1.0e-3, 2.0);
/// The window's limits on the stiffness.
const STIFFNESS_RANGE: (f64, f64) = (0.01, 1000.0);
/// At most this many steps per frame (beyond it the lab plays slower than
/// real time rather than freeze).
const MAX_STEPS_PER_FRAME: u32 = 2000;
/// How much of its own path each run leaves behind, in simulated seconds
/// and in points.
const TRAIL_SECONDS: f64 = 20.0;
const TRAIL_POINTS: usize = 4000;
/// How much of the exact path is drawn, and the time each dash spans.
const EXACT_PATH_SECONDS: f64 = 3.0;
const DASH_SECONDS: f64 = 0.05;
/// Arrow scales: metres of arrow per m/s, and per newton (unit mass).
const VELOCITY_SCALE: f32 = 0.5;
const FORCE_SCALE: f32 = 0.15;
/// The panel's width in logical pixels.
const PANEL_WIDTH: f32 = 420.0;
/// The square of the world the view keeps visible right of the panel,
/// centred on the anchor, in metres.
const SCENE_SIZE: f32 = 17.0;
/// The symmetric log scale of the plot is linear within ±this drift (%).
const SYMLOG_LINEAR: f64 = 0.01;

const ANCHOR_COLOR: Color = Color::srgb(0.85, 0.85, 0.9);
const SPRING_COLOR: Color = Color::srgb(0.55, 0.55, 0.6);
const PARTICLE_COLOR: Color = Color::srgb(0.98, 0.85, 0.3);
const TRAIL_COLOR: Color = Color::srgb(0.75, 0.62, 0.25);
const EXACT_COLOR: Color = Color::srgb(0.6, 0.8, 1.0);
const VELOCITY_COLOR: Color = Color::srgb(0.3, 0.9, 0.95);
const SPRING_FORCE_COLOR: Color = Color::srgb(1.0, 0.55, 0.2);
const DRAG_COLOR: Color = Color::srgb(0.95, 0.3, 0.3);
const GRAVITY_COLOR: Color = Color::srgb(0.4, 0.85, 0.4);
const SUM_COLOR: Color = Color::srgb(1.0, 1.0, 1.0);

/// Each method's colour in the plot and the table, in the order of
/// [`Integrator::ALL`].
const METHOD_COLORS: [egui::Color32; 4] = [
    egui::Color32::from_rgb(235, 95, 85),
    egui::Color32::from_rgb(240, 200, 70),
    egui::Color32::from_rgb(100, 205, 125),
    egui::Color32::from_rgb(120, 160, 245),
];
const REFUSAL_COLOR: egui::Color32 = egui::Color32::from_rgb(255, 90, 80);
const CHANGE_MARK_COLOR: egui::Color32 = egui::Color32::from_gray(150);

/// What the panel's text fields hold.
#[derive(Debug, Clone, PartialEq)]
struct Fields {
    dt: String,
    stiffness: String,
    drag: String,
}

impl Fields {
    fn new(settings: &Settings) -> Self {
        Self {
            dt: number_text(settings.dt),
            stiffness: number_text(settings.stiffness),
            drag: number_text(settings.drag),
        }
    }

    /// `current` with the fields' dt, stiffness and drag, if they are
    /// numbers (whether they are valid settings is for [`LabView::change`]).
    fn settings(&self, current: Settings) -> Result<Settings, String> {
        Ok(Settings {
            dt: field_value("dt", &self.dt, current.dt)?,
            stiffness: field_value("stiffness", &self.stiffness, current.stiffness)?,
            drag: field_value("drag", &self.drag, current.drag)?,
            ..current
        })
    }
}

/// `value` with up to 6 decimals, without trailing zeros.
fn number_text(value: f64) -> String {
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

/// The lab as the window runs it.
#[derive(Resource)]
struct LabView {
    race: Race,
    paused: bool,
    /// Real time not yet stepped.
    accumulator: f64,
    /// Each run's recent positions, with their times, in the order of
    /// [`Integrator::ALL`].
    trails: [VecDeque<(f64, Vec2)>; 4],
    history: DriftHistory,
    /// Why the last change was refused; cleared by the next accepted one.
    refusal: Option<String>,
    fields: Fields,
    /// Whether the plot's y axis is a symmetric log scale.
    log_scale: bool,
}

impl LabView {
    fn new(race: Race) -> Self {
        let mut view = Self {
            fields: Fields::new(&race.settings()),
            race,
            paused: false,
            accumulator: 0.0,
            trails: Default::default(),
            history: DriftHistory::default(),
            refusal: None,
            log_scale: true,
        };
        view.restart_records();
        view
    }

    /// Starts the trails and the plot afresh from the current state.
    fn restart_records(&mut self) {
        for (trail, lab) in self.trails.iter_mut().zip(&self.race.labs) {
            trail.clear();
            trail.push_back((lab.time(), lab.state.position.as_vec2()));
        }
        self.history.clear();
        self.history.record(&self.race);
    }

    fn step(&mut self) {
        self.race.step();
        for (trail, lab) in self.trails.iter_mut().zip(&self.race.labs) {
            if lab.blown_up() {
                continue;
            }
            let now = lab.time();
            trail.push_back((now, lab.state.position.as_vec2()));
            while trail.len() > TRAIL_POINTS
                || trail.front().is_some_and(|(t, _)| *t < now - TRAIL_SECONDS)
            {
                trail.pop_front();
            }
        }
        self.history.record(&self.race);
    }

    /// Tries `settings`; keeps the old ones and says why if refused. A new
    /// method alone only changes which run is shown.
    fn change(&mut self, settings: Settings) {
        let current = self.race.settings();
        if settings == current {
            return;
        }
        let same_system = Settings {
            method: current.method,
            ..settings
        } == current;
        if same_system {
            self.race.shown = settings.method;
            self.refusal = None;
            return;
        }
        let refusal = if !(DT_RANGE.0..=DT_RANGE.1).contains(&settings.dt) {
            Some(format!(
                "dt {} is outside [{}, {}]",
                settings.dt, DT_RANGE.0, DT_RANGE.1
            ))
        } else if !(STIFFNESS_RANGE.0..=STIFFNESS_RANGE.1).contains(&settings.stiffness) {
            Some(format!(
                "stiffness {} is outside [{}, {}]",
                number_text(settings.stiffness),
                STIFFNESS_RANGE.0,
                STIFFNESS_RANGE.1
            ))
        } else if self.race.shown().blown_up() {
            Some(format!(
                "the {} run blew up: choose another method, or Reset or Restart",
                self.race.shown
            ))
        } else {
            self.race.change(settings).err().map(|e| e.to_string())
        };
        if let Some(reason) = refusal {
            self.refusal = Some(format!("refused: {reason}"));
            return;
        }
        self.refusal = None;
        self.fields = Fields::new(&settings);
        // The shown run goes on; the others restart from its state.
        for (trail, lab) in self.trails.iter_mut().zip(&self.race.labs) {
            if lab.settings.method != settings.method {
                trail.clear();
                trail.push_back((lab.time(), lab.state.position.as_vec2()));
            }
        }
        self.history.mark_change(&self.race);
    }

    /// Applies the text fields (the rest of the settings as they are).
    fn apply_fields(&mut self) {
        match self.fields.settings(self.race.settings()) {
            Ok(settings) => self.change(settings),
            Err(reason) => self.refusal = Some(format!("refused: {reason}")),
        }
    }

    /// Back to the default start at time 0 with `settings`.
    fn reset(&mut self, settings: Settings) {
        match Race::new(settings) {
            Ok(race) => {
                self.race = race;
                self.accumulator = 0.0;
                self.refusal = None;
                self.fields = Fields::new(&settings);
                self.restart_records();
            }
            Err(e) => self.refusal = Some(format!("refused: {e}")),
        }
    }

    fn toggle_pause(&mut self) {
        self.paused = !self.paused;
        self.accumulator = 0.0;
    }

    /// One step, if paused and the shown run has not blown up.
    fn single_step(&mut self) {
        if self.paused && !self.race.shown().blown_up() {
            self.step();
        }
    }
}

fn run_window() {
    let race = match Race::new(Settings::default()) {
        Ok(race) => race,
        Err(e) => fail(&e.to_string()),
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
        .insert_resource(LabView::new(race))
        .add_systems(Startup, setup)
        .add_systems(
            Update,
            (
                controls.run_if(not(egui_wants_any_keyboard_input)),
                advance,
                draw,
            )
                .chain(),
        )
        .add_systems(EguiPrimaryContextPass, panel)
        .run();
}

fn setup(mut commands: Commands) {
    // The scale and offset are set each frame by `panel`, which knows the
    // window's size and the panel's width.
    commands.spawn(support::camera(1.0, Vec2::ZERO));
}

fn controls(keys: Res<ButtonInput<KeyCode>>, mut view: ResMut<LabView>) {
    let current = view.race.settings();
    let mut wanted = current;
    let method_keys = [
        (KeyCode::Digit1, KeyCode::Numpad1),
        (KeyCode::Digit2, KeyCode::Numpad2),
        (KeyCode::Digit3, KeyCode::Numpad3),
        (KeyCode::Digit4, KeyCode::Numpad4),
    ];
    for ((digit, numpad), method) in method_keys.into_iter().zip(Integrator::ALL) {
        if keys.any_just_pressed([digit, numpad]) {
            wanted.method = method;
        }
    }
    if keys.just_pressed(KeyCode::ArrowUp) {
        wanted.dt = current.dt * 2.0;
    }
    if keys.just_pressed(KeyCode::ArrowDown) {
        wanted.dt = current.dt / 2.0;
    }
    if keys.just_pressed(KeyCode::ArrowRight) {
        wanted.stiffness = current.stiffness * 1.25;
    }
    if keys.just_pressed(KeyCode::ArrowLeft) {
        wanted.stiffness = current.stiffness / 1.25;
    }
    if keys.just_pressed(KeyCode::KeyD) {
        wanted.drag = DRAG_STEPS
            .into_iter()
            .find(|&drag| drag > current.drag + 1.0e-9)
            .unwrap_or(0.0);
    }
    if keys.just_pressed(KeyCode::KeyG) {
        wanted.gravity = if current.gravity > 0.0 { 0.0 } else { GRAVITY };
    }
    if wanted != current {
        view.change(wanted);
    }

    if keys.just_pressed(KeyCode::Space) {
        view.toggle_pause();
    }
    if keys.just_pressed(KeyCode::KeyS) {
        view.single_step();
    }
    if keys.just_pressed(KeyCode::KeyR) {
        let settings = if keys.any_pressed([KeyCode::ShiftLeft, KeyCode::ShiftRight]) {
            view.race.settings()
        } else {
            Settings::default()
        };
        view.reset(settings);
    }
}

/// Steps `dt` of simulated time for every `dt` of real time.
fn advance(time: Res<Time>, mut view: ResMut<LabView>) {
    if view.paused || view.race.shown().blown_up() {
        view.accumulator = 0.0;
        return;
    }
    view.accumulator += time.delta_secs_f64();
    let dt = view.race.settings().dt;
    let mut steps = 0;
    while view.accumulator >= dt {
        if steps == MAX_STEPS_PER_FRAME {
            view.accumulator = 0.0;
            break;
        }
        view.accumulator -= dt;
        view.step();
        steps += 1;
        if view.race.shown().blown_up() {
            view.paused = true;
            break;
        }
    }
}

fn draw(view: Res<LabView>, mut gizmos: Gizmos) {
    let lab = view.race.shown();

    gizmos.cross_2d(Vec2::ZERO, 0.3, ANCHOR_COLOR);
    gizmos.linestrip_2d(
        view.trails[slot(view.race.shown)].iter().map(|(_, p)| *p),
        TRAIL_COLOR,
    );

    // The exact path over the last few seconds (since the last measure),
    // sampled on a grid fixed in time so the dashes do not crawl; every
    // other segment is drawn.
    let now = lab.time();
    let from = (now - EXACT_PATH_SECONDS).max(lab.reference_time());
    let first = (from / DASH_SECONDS).ceil() as i64;
    let last = (now / DASH_SECONDS).floor() as i64;
    let mut previous: Option<(i64, Vec2)> = None;
    for i in first..=last {
        let point = lab
            .exact
            .state_at(i as f64 * DASH_SECONDS)
            .position
            .as_vec2();
        if let Some((j, start)) = previous
            && j.rem_euclid(2) == 0
        {
            gizmos.line_2d(start, point, EXACT_COLOR);
        }
        previous = Some((i, point));
    }

    let exact = lab.exact_state().position.as_vec2();
    gizmos.circle_2d(exact, 0.22, EXACT_COLOR);

    if !lab.state.is_finite() {
        return;
    }
    let position = lab.state.position.as_vec2();
    gizmos.line_2d(Vec2::ZERO, position, SPRING_COLOR);
    // Filled-looking: concentric rings.
    for ring in 1..=8 {
        gizmos.circle_2d(position, 0.022 * ring as f32, PARTICLE_COLOR);
    }

    let system = lab.settings.system();
    let velocity = lab.state.velocity;
    let spring = -system.stiffness * lab.state.position;
    let drag = -system.drag * velocity;
    let gravity = system.gravity;
    // The sum first, so that a force equal to it (the spring alone, without
    // drag or gravity) is drawn over it in its own colour.
    let arrows = [
        ((spring + drag + gravity).as_vec2() * FORCE_SCALE, SUM_COLOR),
        (spring.as_vec2() * FORCE_SCALE, SPRING_FORCE_COLOR),
        (drag.as_vec2() * FORCE_SCALE, DRAG_COLOR),
        (gravity.as_vec2() * FORCE_SCALE, GRAVITY_COLOR),
        (velocity.as_vec2() * VELOCITY_SCALE, VELOCITY_COLOR),
    ];
    for (arrow, color) in arrows {
        let length = arrow.length();
        if length > 1.0e-3 {
            gizmos
                .arrow_2d(position, position + arrow, color)
                .with_tip_length((0.3 * length).min(0.25));
        }
    }
}

/// The panel on the left, and the camera fitted to the rest of the window.
fn panel(
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
    let width = egui::Panel::left("lab_panel")
        .exact_size(PANEL_WIDTH)
        .resizable(false)
        .show(&mut root, |ui| panel_contents(ui, &mut view))
        .response
        .rect
        .width();
    let (mut transform, mut projection) = camera.into_inner();
    fit_camera(width, &window, &mut transform, &mut projection);
    Ok(())
}

/// Keeps a [`SCENE_SIZE`] square around the anchor visible and centred
/// right of a panel `panel_width` wide.
fn fit_camera(
    panel_width: f32,
    window: &Window,
    transform: &mut Transform,
    projection: &mut Projection,
) {
    let free_width = (window.width() - panel_width).max(1.0);
    let scale = (SCENE_SIZE / free_width).max(SCENE_SIZE / window.height().max(1.0));
    if let Projection::Orthographic(orthographic) = projection
        && orthographic.scale != scale
    {
        orthographic.scale = scale;
    }
    let x = -0.5 * panel_width * scale;
    if transform.translation.x != x {
        transform.translation.x = x;
    }
}

/// A drift in percent, short: "n/a" if not finite.
fn percent_text(drift: f64) -> String {
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
                "0.01 … 1000".to_owned(),
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
            .add_enabled(view.paused, egui::Button::new("Step"))
            .on_hover_text("S: one dt, while paused")
            .clicked()
        {
            view.single_step();
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
    });
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
            "Filled: the chosen run; hollow circle and dashes: its exact position and path. \
             Arrows: cyan velocity, orange spring, red drag, green gravity, white total force.",
        );
        ui.label(
            "Keys (not while typing in a field): 1–4 method, Up/Down dt ×2 / ÷2, \
             Right/Left stiffness ×1.25 / ÷1.25, D drag, G gravity, Space play/pause, \
             S step, R reset, Shift+R restart.",
        );
    });

    ui.horizontal(|ui| {
        ui.strong("Drift, % of the energy at the last measure");
        ui.checkbox(&mut view.log_scale, "log scale");
    });
    let height = ui.available_height().max(160.0);
    drift_plot(ui, view, height);
}

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

fn drift_plot(ui: &mut egui::Ui, view: &LabView, height: f32) {
    let log_scale = view.log_scale;
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
        for &time in &view.history.changes {
            plot_ui.vline(
                VLine::new("settings changed", time)
                    .color(CHANGE_MARK_COLOR)
                    .style(LineStyle::dashed_dense()),
            );
        }
        for (i, (line, method)) in view.history.lines.iter().zip(Integrator::ALL).enumerate() {
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
            let width = if method == view.race.shown { 2.5 } else { 1.2 };
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

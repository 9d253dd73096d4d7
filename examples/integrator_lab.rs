//! Integrator lab: one mass on one spring, stepped by the method you choose
//! and drawn against its exact motion.
//!
//! `cargo run --release --example integrator_lab`
//!
//! A unit mass on a linear spring to an anchor at the origin, with optional
//! linear drag and gravity (`a = −k·x − c·v + g`; world units are metres). The
//! lab steps it with one of the four methods of
//! `bevy_euler_physics::integrators` (explicit Euler, semi-implicit Euler,
//! velocity Verlet, RK2 midpoint) at a fixed step `dt`, and measures it
//! against the closed-form motion through the same state (`ExactMotion`).
//! It does not use the physics plugin: it steps the lab's own `State`, `dt`
//! of simulated time per step, played at real time.
//!
//! What you see: the anchor (a cross), the spring (a line to the particle),
//! the particle (filled) and where the exact motion is now (hollow circle),
//! the exact path of the last few seconds (dashed) and the particle's own
//! path (solid). Arrows show the velocity (cyan) and, on one common scale so
//! that they add up, the spring force (orange), drag (red), gravity (green)
//! and their sum (white). The text shows the settings and the readouts:
//! time, energy (kinetic + spring + gravity), drift (energy minus the exact
//! motion's energy, in percent of the energy when the exact motion was last
//! measured), error (distance from the exact position) and speed.
//!
//! Try: explicit Euler spirals outwards (its energy grows by `1 + ω²h²` per
//! step); semi-implicit Euler and Verlet stay on a closed orbit; doubling
//! `dt` doubles the Euler error and quadruples the Verlet/RK2 error; with
//! semi-implicit Euler, `ω·dt ≥ 2` blows up.
//!
//! # Keys
//!
//! - `1`–`4`: explicit Euler, semi-implicit Euler, velocity Verlet, RK2
//!   midpoint
//! - `Up` / `Down`: double / halve `dt`
//! - `Right` / `Left`: stiffness ×1.25 / ÷1.25
//! - `D`: drag 0 → 0.2 → 0.5 → 1.0 → 0
//! - `G`: gravity (0, −9.81) on / off
//! - `Space`: play / pause; `S`: one step (while paused)
//! - `R`: reset to the default start (all settings too); `Shift+R`: restart
//!   the motion from the default start, keeping the settings
//!
//! Changing a setting mid-run measures the exact motion afresh from the
//! current state and time, so the readouts stay meaningful. A setting the
//! exact motion cannot follow (drag at or above the critical drag `2√k`) is
//! refused: the old settings stay and the text says why.
//!
//! Default start: position (3, 0), velocity (0, 4), stiffness 4, `dt` 0.1,
//! no drag, no gravity, semi-implicit Euler.
//!
//! # Headless
//!
//! ```text
//! integrator_lab --headless [--method euler|semi-implicit|verlet|rk2] [--dt D]
//!                [--stiffness K] [--drag C] [--gravity G] --steps N
//! ```
//!
//! runs `N` steps from the default start (the options not given keep their
//! default; gravity `G` means `(0, −G)`) and prints five lines, one value
//! each: `time:`, `energy:`, `drift:` (percent), `error:`, `speed:`. Bad or
//! missing arguments print the usage to stderr and exit with code 2. No
//! window is opened and no Bevy app is built.
//!
//! Planned, not in this version: an egui panel plotting the drift of all
//! four methods side by side.

use std::collections::VecDeque;
use std::fmt::Write as _;

use bevy::camera::ScalingMode;
use bevy::math::DVec2;
use bevy::prelude::*;
use bevy_euler_physics::integrators::{
    ExactMotion, ExactMotionError, Integrator, SpringSystem, State,
};

// ---------------------------------------------------------------------------
// The simulation, shared by both modes.
// ---------------------------------------------------------------------------

/// Where every run starts.
const START: State = State::new(DVec2::new(3.0, 0.0), DVec2::new(0.0, 4.0));
/// The gravity `G` toggles in the window.
const GRAVITY: f64 = 9.81;
/// What `D` cycles through.
const DRAG_STEPS: [f64; 4] = [0.0, 0.2, 0.5, 1.0];
/// The window's limits on `dt` (0.1 halved 6 times … doubled 4 times).
const DT_RANGE: (f64, f64) = (1.0e-3, 2.0);
/// The window's limits on the stiffness.
const STIFFNESS_RANGE: (f64, f64) = (0.01, 1000.0);

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

// ---------------------------------------------------------------------------
// Command line.
// ---------------------------------------------------------------------------

const USAGE: &str = "\
usage: integrator_lab                 open the window
       integrator_lab --headless [--method METHOD] [--dt D] [--stiffness K]
                      [--drag C] [--gravity G] --steps N

Headless: run N steps from position (3, 0), velocity (0, 4) and print
time, energy, drift (%), error and speed, one per line.

  --method METHOD  euler (explicit-euler), semi-implicit, verlet or rk2
                   (default semi-implicit)
  --dt D           step in seconds, > 0 (default 0.1)
  --stiffness K    spring stiffness, > 0 (default 4)
  --drag C         linear drag, >= 0 and below the critical drag 2*sqrt(K)
                   (default 0)
  --gravity G      gravity (0, -G) (default 0)
  --steps N        number of steps (required)
  --help           show this message";

/// What the command line asks for.
#[derive(Debug)]
enum Command {
    Window,
    Headless { settings: Settings, steps: u64 },
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
    let mut seen: Vec<&str> = Vec::new();
    let mut rest = args.iter();
    while let Some(flag) = rest.next() {
        let flag = flag.as_str();
        if flag == "--headless" {
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
    // The same check the lab makes: e.g. drag too heavy for the stiffness.
    ExactMotion::new(settings.system(), START, 0.0).map_err(|e| e.to_string())?;
    Ok(Command::Headless { settings, steps })
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
        Err(message) => fail(&message),
    }
}

// ---------------------------------------------------------------------------
// The window.
// ---------------------------------------------------------------------------

/// How long a refusal stays on screen, in seconds.
const MESSAGE_SECONDS: f64 = 4.0;
/// At most this many steps per frame (beyond it the lab plays slower than
/// real time rather than freeze).
const MAX_STEPS_PER_FRAME: u32 = 2000;
/// How much of its own path the particle leaves behind, in simulated seconds
/// and in points.
const TRAIL_SECONDS: f64 = 20.0;
const TRAIL_POINTS: usize = 4000;
/// How much of the exact path is drawn, and the time each dash spans.
const EXACT_PATH_SECONDS: f64 = 3.0;
const DASH_SECONDS: f64 = 0.05;
/// Arrow scales: metres of arrow per m/s, and per newton (unit mass).
const VELOCITY_SCALE: f32 = 0.5;
const FORCE_SCALE: f32 = 0.15;

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

/// The lab as the window runs it.
#[derive(Resource)]
struct LabView {
    lab: Lab,
    paused: bool,
    /// Real time not yet stepped.
    accumulator: f64,
    /// Recent positions, with their times.
    trail: VecDeque<(f64, Vec2)>,
    /// A message and the (app) time until which it shows.
    message: Option<(String, f64)>,
}

impl LabView {
    fn new(lab: Lab) -> Self {
        let mut view = Self {
            lab,
            paused: false,
            accumulator: 0.0,
            trail: VecDeque::new(),
            message: None,
        };
        view.restart_trail();
        view
    }

    fn restart_trail(&mut self) {
        self.trail.clear();
        self.trail
            .push_back((self.lab.time(), self.lab.state.position.as_vec2()));
    }

    fn step(&mut self) {
        self.lab.step();
        let now = self.lab.time();
        self.trail
            .push_back((now, self.lab.state.position.as_vec2()));
        while self.trail.len() > TRAIL_POINTS
            || self
                .trail
                .front()
                .is_some_and(|(t, _)| *t < now - TRAIL_SECONDS)
        {
            self.trail.pop_front();
        }
    }

    fn say(&mut self, text: String, now: f64, seconds: f64) {
        self.message = Some((text, now + seconds));
    }

    /// Tries `settings`; keeps the old ones and says why if refused.
    fn change(&mut self, settings: Settings, now: f64) {
        let refusal = if !(DT_RANGE.0..=DT_RANGE.1).contains(&settings.dt) {
            Some(format!(
                "dt {} is outside [{}, {}]",
                settings.dt, DT_RANGE.0, DT_RANGE.1
            ))
        } else if !(STIFFNESS_RANGE.0..=STIFFNESS_RANGE.1).contains(&settings.stiffness) {
            Some(format!(
                "stiffness {:.3} is outside [{}, {}]",
                settings.stiffness, STIFFNESS_RANGE.0, STIFFNESS_RANGE.1
            ))
        } else {
            self.lab.change(settings).err().map(|e| e.to_string())
        };
        if let Some(reason) = refusal {
            self.say(format!("refused: {reason}"), now, MESSAGE_SECONDS);
        } else {
            self.message = None;
        }
    }

    /// Back to the default start at time 0 with `settings`.
    fn reset(&mut self, settings: Settings, now: f64) {
        match Lab::new(settings) {
            Ok(lab) => {
                self.lab = lab;
                self.accumulator = 0.0;
                self.message = None;
                self.restart_trail();
            }
            Err(e) => self.say(format!("refused: {e}"), now, MESSAGE_SECONDS),
        }
    }
}

#[derive(Component)]
struct ReadoutText;

fn run_window() {
    let lab = match Lab::new(Settings::default()) {
        Ok(lab) => lab,
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
        .insert_resource(ClearColor(Color::srgb(0.08, 0.09, 0.12)))
        .insert_resource(LabView::new(lab))
        .add_systems(Startup, setup)
        .add_systems(Update, (controls, advance, draw, show_text).chain())
        .run();
}

fn setup(mut commands: Commands) {
    commands.spawn((
        Camera2d,
        // 17 m from bottom to top: about ±8 m around the anchor.
        Projection::Orthographic(OrthographicProjection {
            scaling_mode: ScalingMode::FixedVertical {
                viewport_height: 17.0,
            },
            ..OrthographicProjection::default_2d()
        }),
    ));
    commands.spawn((
        ReadoutText,
        Text::default(),
        TextFont {
            font_size: FontSize::Px(16.0),
            ..default()
        },
        Node {
            position_type: PositionType::Absolute,
            left: Val::Px(12.0),
            top: Val::Px(10.0),
            ..default()
        },
    ));
}

fn controls(keys: Res<ButtonInput<KeyCode>>, time: Res<Time>, mut view: ResMut<LabView>) {
    let now = time.elapsed_secs_f64();
    if view.message.as_ref().is_some_and(|(_, until)| now > *until) {
        view.message = None;
    }
    let current = view.lab.settings;
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
        view.change(wanted, now);
    }

    if keys.just_pressed(KeyCode::Space) {
        view.paused = !view.paused;
        view.accumulator = 0.0;
    }
    if keys.just_pressed(KeyCode::KeyS) && view.paused && !view.lab.blown_up() {
        view.step();
    }
    if keys.just_pressed(KeyCode::KeyR) {
        let settings = if keys.any_pressed([KeyCode::ShiftLeft, KeyCode::ShiftRight]) {
            view.lab.settings
        } else {
            Settings::default()
        };
        view.reset(settings, now);
    }
}

/// Steps `dt` of simulated time for every `dt` of real time.
fn advance(time: Res<Time>, mut view: ResMut<LabView>) {
    if view.paused || view.lab.blown_up() {
        view.accumulator = 0.0;
        return;
    }
    view.accumulator += time.delta_secs_f64();
    let mut steps = 0;
    while view.accumulator >= view.lab.settings.dt {
        if steps == MAX_STEPS_PER_FRAME {
            view.accumulator = 0.0;
            break;
        }
        view.accumulator -= view.lab.settings.dt;
        view.step();
        steps += 1;
        if view.lab.blown_up() {
            view.paused = true;
            break;
        }
    }
}

fn draw(view: Res<LabView>, mut gizmos: Gizmos) {
    let lab = &view.lab;

    gizmos.cross_2d(Vec2::ZERO, 0.3, ANCHOR_COLOR);
    gizmos.linestrip_2d(view.trail.iter().map(|(_, p)| *p), TRAIL_COLOR);

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

fn show_text(view: Res<LabView>, mut texts: Query<&mut Text, With<ReadoutText>>) {
    let lab = &view.lab;
    let s = lab.settings;
    let r = lab.readouts();
    let omega_h = s.stiffness.sqrt() * s.dt;
    let mut out = String::new();
    let _ = writeln!(
        out,
        "{} (order {}, {} force evaluation{} per step)",
        s.method,
        s.method.order(),
        s.method.evaluations_per_step(),
        if s.method.evaluations_per_step() == 1 {
            ""
        } else {
            "s"
        }
    );
    let _ = writeln!(
        out,
        "dt {} s   stiffness {:.3}   drag {}   gravity {}   (omega*dt = {:.3})",
        s.dt,
        s.stiffness,
        s.drag,
        if s.gravity > 0.0 { "on" } else { "off" },
        omega_h
    );
    let drift = if r.drift_percent.is_finite() {
        format!("{:+.3} %", r.drift_percent)
    } else {
        "n/a".to_owned()
    };
    let _ = writeln!(
        out,
        "time {:.2} s   energy {:.4}   drift {}   error {:.5}   speed {:.3}{}",
        r.time,
        r.energy,
        drift,
        r.error,
        r.speed,
        if view.paused { "   [paused]" } else { "" }
    );
    if lab.blown_up() {
        let _ = writeln!(out, "the motion blew up: press R to reset");
    }
    if let Some((message, _)) = &view.message {
        let _ = writeln!(out, "{message}");
    }
    let _ = writeln!(out);
    let _ = writeln!(
        out,
        "1 explicit Euler   2 semi-implicit Euler   3 velocity Verlet   4 RK2 midpoint"
    );
    let _ = writeln!(
        out,
        "Up/Down dt *2 / /2   Right/Left stiffness *1.25 / /1.25   D drag   G gravity"
    );
    let _ = writeln!(
        out,
        "Space play/pause   S step   R reset all   Shift+R restart, keep settings"
    );
    let _ = write!(
        out,
        "arrows: cyan velocity, orange spring, red drag, green gravity, white total force\n\
         dashed: exact path; hollow circle: exact position"
    );
    for mut text in &mut texts {
        if text.0 != out {
            text.0.clone_from(&out);
        }
    }
}

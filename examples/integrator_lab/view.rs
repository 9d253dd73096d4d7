//! The lab as the window runs it ([`LabView`]): the race at the timeline's
//! cursor, play and pause, the trace event shown, and the keys.

use bevy::prelude::*;
use bevy::window::{MonitorSelection, PrimaryWindow, WindowMode};
use bevy_euler_physics::integrators::Integrator;

use crate::code::CodeOptions;
use crate::plot::DriftHistory;
use crate::state::{Race, Settings};
use crate::timeline::Timeline;
use crate::tour;
use crate::trace::{Trace, trace_step};
use crate::ui::{Fields, number_text};

/// The gravity the checkbox, `W` and `P` switch on.
pub const GRAVITY: f64 = 9.81;
/// What `D` cycles through.
const DRAG_STEPS: [f64; 4] = [0.0, 0.2, 0.5, 1.0];
/// The window's limits on `dt` (0.1 halved 6 times … doubled 4 times).
pub const DT_RANGE: (f64, f64) = (1.0e-3, 2.0);
/// The window's limits on the stiffness (besides 0, the projectile).
pub const STIFFNESS_RANGE: (f64, f64) = (0.01, 1000.0);
/// At most this many steps per frame (beyond it the lab plays slower than
/// real time rather than freeze).
const MAX_STEPS_PER_FRAME: u32 = 2000;
/// How long each event of the trace shows when it plays event by event.
pub const EVENT_SECONDS: f64 = 0.45;

/// The lab as the window runs it.
#[derive(Resource)]
pub struct LabView {
    /// The race at the timeline's cursor.
    pub race: Race,
    pub timeline: Timeline,
    pub paused: bool,
    /// Real time not yet played.
    pub accumulator: f64,
    pub history: DriftHistory,
    /// Why the last change was refused; cleared by the next accepted one.
    pub refusal: Option<String>,
    pub fields: Fields,
    /// Whether the plot's y axis is a symmetric log scale.
    pub log_scale: bool,
    /// Whether playing goes event by event through the trace, rather than
    /// `dt` of simulated time per `dt` of real time.
    pub play_events: bool,
    /// The step into the cursor's frame, traced (none at a start).
    pub trace: Option<Trace>,
    /// The event of [`Self::trace`] shown.
    pub event: usize,
    pub code: CodeOptions,
    /// The guided tour's stop, while it runs.
    pub tour: Option<usize>,
}

impl LabView {
    pub fn new(race: Race, play_events: bool) -> Self {
        let mut view = Self {
            fields: Fields::new(&race.settings()),
            timeline: Timeline::new(&race),
            race,
            paused: false,
            accumulator: 0.0,
            history: DriftHistory::default(),
            refusal: None,
            log_scale: true,
            play_events,
            trace: None,
            event: 0,
            code: CodeOptions::default(),
            tour: None,
        };
        view.history.record(&view.race);
        view
    }

    pub fn shown(&self) -> Integrator {
        self.race.shown
    }

    /// The last event of the trace (the step complete).
    pub fn last_event(&self) -> usize {
        self.trace
            .as_ref()
            .map_or(0, |trace| trace.events.len() - 1)
    }

    /// Traces the step into the cursor's frame again (after the cursor or
    /// the shown method moved), keeping the event in range.
    pub fn refresh_trace(&mut self) {
        let cursor = self.timeline.cursor();
        let shown = self.shown();
        self.trace = self.timeline.stepped_into(cursor, shown).then(|| {
            let before = self.timeline.race_at(cursor - 1, shown);
            trace_step(before.shown())
        });
        self.event = self.event.min(self.last_event());
    }

    /// One step on: along the record, or a new step at its end. False if
    /// the shown run has blown up at the end.
    pub fn step_forward(&mut self) -> bool {
        if !self.timeline.at_end() {
            self.seek(self.timeline.cursor() + 1);
            return true;
        }
        if self.race.shown().blown_up() {
            return false;
        }
        self.race.step();
        self.timeline.push(&self.race);
        self.history.record(&self.race);
        self.refresh_trace();
        true
    }

    /// Moves to frame `index` of the record.
    pub fn seek(&mut self, index: usize) {
        self.timeline.seek(index);
        self.race = self.timeline.race_at(self.timeline.cursor(), self.shown());
        self.refresh_trace();
    }

    /// The next event, or the first of the next step.
    pub fn next_event(&mut self) -> bool {
        if self.trace.is_some() && self.event < self.last_event() {
            self.event += 1;
            return true;
        }
        let moved = self.step_forward();
        if moved {
            self.event = 0;
        }
        moved
    }

    /// The event before, or the last of the step before.
    pub fn previous_event(&mut self) {
        if self.trace.is_some() && self.event > 0 {
            self.event -= 1;
        } else if self.timeline.cursor() > 0 {
            self.seek(self.timeline.cursor() - 1);
            self.event = self.last_event();
        }
    }

    /// Tries `settings`; keeps the old ones and says why if refused. A new
    /// method alone only changes which run is shown.
    pub fn change(&mut self, settings: Settings) {
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
            self.refresh_trace();
            return;
        }
        let refusal = if !(DT_RANGE.0..=DT_RANGE.1).contains(&settings.dt) {
            Some(format!(
                "dt {} is outside [{}, {}]",
                settings.dt, DT_RANGE.0, DT_RANGE.1
            ))
        } else if settings.stiffness != 0.0
            && !(STIFFNESS_RANGE.0..=STIFFNESS_RANGE.1).contains(&settings.stiffness)
        {
            Some(format!(
                "stiffness {} is neither 0 (a projectile) nor in [{}, {}]",
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
            self.race.change(settings).err()
        };
        if let Some(reason) = refusal {
            self.refusal = Some(format!("refused: {reason}"));
            return;
        }
        self.refusal = None;
        self.fields = Fields::new(&settings);
        // The run goes on from here; what the record held after the cursor
        // is gone.
        self.history.truncate_after(self.race.time());
        self.timeline.branch(&self.race);
        self.history.mark_change(&self.race);
        self.refresh_trace();
    }

    /// Applies the text fields (the rest of the settings as they are).
    pub fn apply_fields(&mut self) {
        match self.fields.settings(self.race.settings()) {
            Ok(settings) => self.change(settings),
            Err(reason) => self.refusal = Some(format!("refused: {reason}")),
        }
    }

    /// Back to the default start at time 0 with `settings`.
    pub fn reset(&mut self, settings: Settings) {
        match Race::new(settings) {
            Ok(race) => {
                self.timeline = Timeline::new(&race);
                self.race = race;
                self.accumulator = 0.0;
                self.refusal = None;
                self.fields = Fields::new(&settings);
                self.history.clear();
                self.history.record(&self.race);
                self.refresh_trace();
            }
            Err(e) => self.refusal = Some(format!("refused: {e}")),
        }
    }

    pub fn toggle_pause(&mut self) {
        self.paused = !self.paused;
        self.accumulator = 0.0;
    }
}

/// Whether either Shift key is held.
fn shift(keys: &ButtonInput<KeyCode>) -> bool {
    keys.any_pressed([KeyCode::ShiftLeft, KeyCode::ShiftRight])
}

/// The settings keys: 1–4 method, Up/Down dt, K stiffness, D drag, W
/// gravity, P projectile.
fn settings_keys(keys: &ButtonInput<KeyCode>, view: &mut LabView) {
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
    if keys.just_pressed(KeyCode::KeyK) {
        wanted.stiffness = if shift(keys) {
            current.stiffness / 1.25
        } else {
            current.stiffness * 1.25
        };
    }
    if keys.just_pressed(KeyCode::KeyD) {
        wanted.drag = DRAG_STEPS
            .into_iter()
            .find(|&drag| drag > current.drag + 1.0e-9)
            .unwrap_or(0.0);
    }
    if keys.just_pressed(KeyCode::KeyW) {
        wanted.gravity = if current.gravity > 0.0 { 0.0 } else { GRAVITY };
    }
    if keys.just_pressed(KeyCode::KeyP) {
        let spring = Settings::default().stiffness;
        (wanted.stiffness, wanted.drag, wanted.gravity) = if current.projectile() {
            (spring, current.drag, current.gravity)
        } else {
            (0.0, 0.0, GRAVITY)
        };
    }
    if wanted != current {
        view.change(wanted);
    }
}

pub fn controls(
    keys: Res<ButtonInput<KeyCode>>,
    mut view: ResMut<LabView>,
    mut window: Single<&mut Window, With<PrimaryWindow>>,
) {
    let view = &mut *view;
    settings_keys(&keys, view);
    if keys.just_pressed(KeyCode::Space) {
        view.toggle_pause();
    }
    let timeline_keys = [
        KeyCode::ArrowLeft,
        KeyCode::ArrowRight,
        KeyCode::Home,
        KeyCode::End,
        KeyCode::Comma,
        KeyCode::Period,
    ];
    if keys.any_just_pressed(timeline_keys) {
        view.paused = true;
    }
    if keys.just_pressed(KeyCode::ArrowLeft) {
        view.seek(view.timeline.cursor().saturating_sub(1));
        view.event = view.last_event();
    }
    if keys.just_pressed(KeyCode::ArrowRight) {
        view.step_forward();
        view.event = view.last_event();
    }
    if keys.just_pressed(KeyCode::Home) {
        view.seek(0);
        view.event = view.last_event();
    }
    if keys.just_pressed(KeyCode::End) {
        view.seek(view.timeline.end());
        view.event = view.last_event();
    }
    if keys.just_pressed(KeyCode::Comma) {
        view.previous_event();
    }
    if keys.just_pressed(KeyCode::Period) {
        view.next_event();
    }
    if keys.just_pressed(KeyCode::KeyE) {
        view.play_events = !view.play_events;
        view.accumulator = 0.0;
    }
    if keys.just_pressed(KeyCode::KeyR) {
        let settings = if shift(&keys) {
            view.race.settings()
        } else {
            Settings::default()
        };
        view.reset(settings);
    }
    if keys.just_pressed(KeyCode::KeyF) {
        window.mode = match window.mode {
            WindowMode::Windowed => WindowMode::BorderlessFullscreen(MonitorSelection::Current),
            _ => WindowMode::Windowed,
        };
    }
    if keys.just_pressed(KeyCode::KeyG) {
        let stop = match (view.tour, shift(&keys)) {
            (None, _) => Some(0),
            (Some(stop), false) => Some(stop + 1),
            (Some(stop), true) => Some(stop.saturating_sub(1)),
        };
        tour::go_to(view, stop);
    }
    if keys.just_pressed(KeyCode::Escape) {
        tour::go_to(view, None);
    }
    if keys.just_pressed(KeyCode::KeyC) {
        view.code.visible = !view.code.visible;
    }
    if keys.just_pressed(KeyCode::KeyH) {
        view.code.comments = !view.code.comments;
    }
    if keys.just_pressed(KeyCode::KeyN) {
        view.code.narration = !view.code.narration;
    }
}

/// Plays: `dt` of simulated time for every `dt` of real time, or one trace
/// event every [`EVENT_SECONDS`]; along the record first, then new steps.
pub fn advance(time: Res<Time>, mut view: ResMut<LabView>) {
    let view = &mut *view;
    if view.paused {
        view.accumulator = 0.0;
        return;
    }
    view.accumulator += time.delta_secs_f64();
    if view.play_events {
        while view.accumulator >= EVENT_SECONDS {
            view.accumulator -= EVENT_SECONDS;
            if !view.next_event() {
                view.paused = true;
                break;
            }
        }
        return;
    }
    let dt = view.race.settings().dt;
    let mut steps = 0;
    while view.accumulator >= dt {
        if steps == MAX_STEPS_PER_FRAME {
            view.accumulator = 0.0;
            break;
        }
        view.accumulator -= dt;
        if !view.step_forward() {
            view.paused = true;
            break;
        }
        steps += 1;
        if view.timeline.at_end() && view.race.shown().blown_up() {
            view.paused = true;
            break;
        }
    }
    view.event = view.last_event();
}

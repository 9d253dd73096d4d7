//! The recorded run: every step's state of the four runs, so that the
//! window can step back and forth (←/→, Home/End) and the headless `--back`
//! can read an earlier step exactly as the run had it.
//!
//! A frame keeps only what a step changes (each run's state and step
//! count); the rest (settings, exact motion, the time of the last change)
//! is shared by every frame since the last settings change, as the race
//! that change made.

use std::collections::VecDeque;
use std::sync::Arc;

use bevy::math::Vec2;
use bevy_euler_physics::integrators::{Integrator, State};

use crate::state::{Race, slot};

/// At most this many frames are kept (the oldest go first): about 17 MB.
pub const MAX_FRAMES: usize = 100_000;

/// One step's end (or a run's start) of the four runs.
#[derive(Debug, Clone)]
struct Frame {
    states: [State; 4],
    steps: [u64; 4],
    /// The race as the last settings change (or the start) left it.
    base: Arc<Race>,
}

impl Frame {
    fn of(race: &Race, base: &Arc<Race>) -> Self {
        Self {
            states: race.labs.each_ref().map(|lab| lab.state),
            steps: race.labs.each_ref().map(|lab| lab.steps),
            base: Arc::clone(base),
        }
    }
}

/// The frames of a run and where the view is in them.
#[derive(Debug, Clone)]
pub struct Timeline {
    frames: VecDeque<Frame>,
    cursor: usize,
}

impl Timeline {
    /// A run that starts at `race`.
    pub fn new(race: &Race) -> Self {
        let base = Arc::new(race.clone());
        Self {
            frames: VecDeque::from([Frame::of(race, &base)]),
            cursor: 0,
        }
    }

    /// Which frame is current, from 0 (the oldest kept).
    pub fn cursor(&self) -> usize {
        self.cursor
    }

    /// The last frame's index.
    pub fn end(&self) -> usize {
        self.frames.len() - 1
    }

    pub fn at_end(&self) -> bool {
        self.cursor == self.end()
    }

    /// The race at frame `index`, showing `shown`.
    pub fn race_at(&self, index: usize, shown: Integrator) -> Race {
        let frame = &self.frames[index];
        let mut race = (*frame.base).clone();
        for ((lab, state), steps) in race.labs.iter_mut().zip(frame.states).zip(frame.steps) {
            lab.state = state;
            lab.steps = steps;
        }
        race.shown = shown;
        race
    }

    /// Whether frame `index` follows frame `index − 1` by a step of
    /// `method`'s run (not a settings change, nor a run that had blown up).
    pub fn stepped_into(&self, index: usize, method: Integrator) -> bool {
        index > 0 && index < self.frames.len() && {
            let (before, after) = (&self.frames[index - 1], &self.frames[index]);
            Arc::ptr_eq(&before.base, &after.base)
                && after.steps[slot(method)] == before.steps[slot(method)] + 1
        }
    }

    /// Moves to frame `index` (clamped to the run).
    pub fn seek(&mut self, index: usize) {
        self.cursor = index.min(self.end());
    }

    /// Appends `race` as the step after the last frame and moves to it.
    pub fn push(&mut self, race: &Race) {
        let base = Arc::clone(&self.frames[self.end()].base);
        self.frames.push_back(Frame::of(race, &base));
        if self.frames.len() > MAX_FRAMES {
            self.frames.pop_front();
        }
        self.cursor = self.end();
    }

    /// Drops the frames after the cursor, then appends `race` (just changed
    /// from the cursor's race) as the start of a new stretch, and moves to
    /// it.
    pub fn branch(&mut self, race: &Race) {
        self.frames.truncate(self.cursor + 1);
        let base = Arc::new(race.clone());
        self.frames.push_back(Frame::of(race, &base));
        if self.frames.len() > MAX_FRAMES {
            self.frames.pop_front();
        }
        self.cursor = self.end();
    }

    /// `method`'s path up to frame `index`, newest first, as (time,
    /// position): at most `points` points and `seconds` of simulated time,
    /// back through settings changes that restarted the runs from its own
    /// state.
    pub fn path(
        &self,
        index: usize,
        method: Integrator,
        seconds: f64,
        points: usize,
    ) -> Vec<(f64, Vec2)> {
        let i = slot(method);
        let mut path = Vec::new();
        let mut later: Option<&Frame> = None;
        for frame in self.frames.range(..=index.min(self.end())).rev() {
            if let Some(later) = later
                && !Arc::ptr_eq(&later.base, &frame.base)
                && later.base.shown != method
            {
                break;
            }
            let lab = &frame.base.labs[i];
            let time = lab.time_base + frame.steps[i] as f64 * lab.settings.dt;
            if path
                .first()
                .is_some_and(|&(now, _): &(f64, Vec2)| time < now - seconds)
                || path.len() == points
            {
                break;
            }
            path.push((time, frame.states[i].position.as_vec2()));
            later = Some(frame);
        }
        path
    }
}

//! The panel's readouts, the step clock, and the time controls.

use core::time::Duration;

use bevy::platform::collections::HashSet;
use bevy::platform::time::Instant;
use bevy::prelude::*;

use super::DebugUiSettings;
use super::drag::DragPart;
use crate::PhysicsSettings;
use crate::body::Body;
use crate::islands::{AutoSubsteps, Island, Sleeping};
use crate::step::StepTimer;

/// What the panel shows, gathered once per frame after the fixed steps.
#[derive(Resource, Debug, Clone, Default, PartialEq)]
pub(crate) struct DebugStats {
    /// Physics steps run this frame (a rollback's resimulated ones
    /// included).
    pub(crate) steps_this_frame: u32,
    /// Wall time of this frame's fixed loop: every `FixedMain` run (Bevy's
    /// fixed schedules, your fixed systems and the physics), less the
    /// panel's energy sampling.
    pub(crate) step_time: Duration,
    /// Wall time of the plugin's own step ([`PhysicsSystems::Step`]) this
    /// frame.
    ///
    /// [`PhysicsSystems::Step`]: crate::PhysicsSystems::Step
    pub(crate) physics_time: Duration,
    /// `physics_time` per step, smoothed over about a second of frames with
    /// steps, in seconds.
    pub(crate) mean_step_seconds: f64,
    /// Wall time of the panel's energy sampling this frame.
    pub(crate) energy_time: Duration,
    /// Dynamic bodies awake.
    pub(crate) awake: usize,
    /// Dynamic bodies asleep.
    pub(crate) asleep: usize,
    /// Fixed bodies.
    pub(crate) fixed: usize,
    /// Islands of the last step: distinct [`Island::id`] among dynamic
    /// bodies.
    pub(crate) islands: usize,
    /// Bodies with [`AutoSubsteps`].
    pub(crate) auto_bodies: usize,
    /// The smallest [`Island::margin`], with a body of that island and the
    /// island's id.
    pub(crate) worst: Option<WorstIsland>,
}

/// The island with the smallest stability margin.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct WorstIsland {
    pub(crate) margin: f32,
    pub(crate) entity: Entity,
    pub(crate) island: u32,
    pub(crate) substeps: u32,
}

/// Times the frame's fixed steps.
#[derive(Resource, Debug, Default)]
pub(crate) struct StepClock {
    start: Option<Instant>,
    /// Time spent by the panel's own systems inside the fixed loop.
    pub(crate) own_time: Duration,
}

/// Fixed steps asked for while paused (the Step button, N or `.`): one runs
/// per frame.
#[derive(Resource, Debug, Default, Clone, Copy, PartialEq, Eq)]
pub(crate) struct StepRequest {
    pub(crate) pending: u32,
}

/// Before the fixed loop: runs a requested single step, and starts the
/// clock.
///
/// While `Time<Virtual>` is paused its delta is zero, so the fixed loop runs
/// no step; adding exactly one timestep to `Time<Fixed>`'s overstep makes
/// it run exactly one, and leaves the overstep (and so the interpolation)
/// where it was. Requests made while running are dropped.
pub(crate) fn begin_fixed_loop(
    mut clock: ResMut<StepClock>,
    mut request: ResMut<StepRequest>,
    virtual_time: Res<Time<Virtual>>,
    mut fixed: ResMut<Time<Fixed>>,
) {
    if request.pending > 0 {
        if virtual_time.is_paused() {
            request.pending -= 1;
            let timestep = fixed.timestep();
            fixed.accumulate_overstep(timestep);
        } else {
            request.pending = 0;
        }
    }
    clock.start = Some(Instant::now());
    clock.own_time = Duration::ZERO;
}

/// After the fixed loop: how many steps ran, and how long they took.
pub(crate) fn end_fixed_loop(
    mut clock: ResMut<StepClock>,
    mut stats: ResMut<DebugStats>,
    mut timer: ResMut<StepTimer>,
) {
    // The physics' own time this frame, wherever its steps ran (the fixed
    // loop, or a rollback schedule earlier in the frame).
    let physics = core::mem::take(&mut *timer);
    let elapsed = clock
        .start
        .take()
        .map(|start| start.elapsed().saturating_sub(clock.own_time))
        .unwrap_or_default();
    stats.steps_this_frame = physics.steps;
    stats.step_time = elapsed;
    stats.physics_time = physics.elapsed;
    stats.energy_time = clock.own_time;
    if physics.steps > 0 {
        let per_step = physics.elapsed.as_secs_f64() / f64::from(physics.steps);
        stats.mean_step_seconds = if stats.mean_step_seconds > 0.0 {
            stats.mean_step_seconds + 0.05 * (per_step - stats.mean_step_seconds)
        } else {
            per_step
        };
    }
}

type StatsData = (
    Entity,
    &'static Body,
    &'static Island,
    Has<Sleeping>,
    Has<AutoSubsteps>,
);

/// Counts bodies and islands, and finds the least stable island. Only while
/// the panel is shown.
pub(crate) fn update_stats(
    settings: Res<DebugUiSettings>,
    mut stats: ResMut<DebugStats>,
    bodies: Query<StatsData, Without<DragPart>>,
    mut ids: Local<HashSet<u32>>,
) {
    if !settings.show_panel {
        return;
    }
    let (mut awake, mut asleep, mut fixed, mut auto_bodies) = (0, 0, 0, 0);
    let mut worst: Option<WorstIsland> = None;
    ids.clear();
    for (entity, body, island, sleeping, auto) in &bodies {
        auto_bodies += usize::from(auto);
        if body.is_fixed() {
            fixed += 1;
            continue;
        }
        if sleeping {
            asleep += 1;
        } else {
            awake += 1;
        }
        if !island.is_some() {
            continue;
        }
        ids.insert(island.id());
        let margin = island.margin();
        // Ties go to the lowest entity, so the readout does not flicker.
        let better =
            worst.is_none_or(|w| margin < w.margin || (margin == w.margin && entity < w.entity));
        if better {
            worst = Some(WorstIsland {
                margin,
                entity,
                island: island.id(),
                substeps: island.substeps(),
            });
        }
    }
    let new = DebugStats {
        awake,
        asleep,
        fixed,
        auto_bodies,
        islands: ids.len(),
        worst,
        ..stats.clone()
    };
    stats.set_if_neq(new);
}

/// Pauses or resumes virtual time.
pub(crate) fn toggle_pause(time: &mut Time<Virtual>) {
    if time.is_paused() {
        time.unpause();
    } else {
        time.pause();
    }
}

/// Asks for one fixed step; only honoured while paused.
pub(crate) fn request_step(request: &mut StepRequest, time: &Time<Virtual>) {
    if time.is_paused() {
        request.pending += 1;
    }
}

/// The keys: F1 panel, P pause, N or `.` step, I interpolation.
pub(crate) fn keyboard(
    keys: Res<ButtonInput<KeyCode>>,
    mut settings: ResMut<DebugUiSettings>,
    mut time: ResMut<Time<Virtual>>,
    mut request: ResMut<StepRequest>,
    mut physics: ResMut<PhysicsSettings>,
) {
    if keys.just_pressed(KeyCode::F1) {
        settings.show_panel = !settings.show_panel;
    }
    if keys.just_pressed(KeyCode::KeyP) {
        toggle_pause(&mut time);
    }
    if keys.any_just_pressed([KeyCode::KeyN, KeyCode::Period, KeyCode::NumpadDecimal]) {
        request_step(&mut request, &time);
    }
    if keys.just_pressed(KeyCode::KeyI) {
        physics.interpolate = !physics.interpolate;
    }
}

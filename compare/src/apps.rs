//! What every engine's app shares: `MinimalPlugins` on a compute pool of one
//! thread, `FixedMain`'s schedules on Bevy's single-threaded executor, a
//! clock that hands each `FixedMain` run one fixed step of `H`, and the
//! same warm-up.

use std::time::Duration;

use bevy::app::FixedMain;
use bevy::math::Vec2;
use bevy::prelude::*;
use bevy::time::TimeUpdateStrategy;

pub use crate::scene::{H, single_threaded_fixed_main};

/// `MinimalPlugins` with one compute thread, the fixed step `H`, and frames
/// that advance no time (so `App::update` never runs a fixed step: every
/// step is a `FixedMain` run of ours).
pub fn minimal_app() -> App {
    let mut app = App::new();
    let mut pools = TaskPoolPlugin::default();
    pools.task_pool_options.compute.min_threads = 1;
    pools.task_pool_options.compute.max_threads = 1;
    app.add_plugins(MinimalPlugins.set(pools))
        .insert_resource(Time::<Fixed>::from_duration(Duration::from_secs_f32(H)))
        .insert_resource(TimeUpdateStrategy::ManualDuration(Duration::ZERO));
    app
}

/// Sets the generic `Time` to a clock whose last step was `H`, as Bevy's
/// fixed loop does before each `FixedMain` run. Running `FixedMain`
/// directly skips that loop, and avian reads its step from this clock
/// (rapier with `TimestepMode::Fixed` and the plugin read their own
/// settings; it is set for all the same way). Nothing changes it until the
/// next `App::update`.
pub fn fixed_clock(app: &mut App) {
    let mut clock = Time::<()>::default();
    clock.advance_by(Duration::from_secs_f32(H));
    *app.world_mut().resource_mut::<Time>() = clock;
}

/// One fixed step: a `FixedMain` run, as the repository's `benches/step.rs`
/// times it.
pub fn step(app: &mut App) {
    app.world_mut().run_schedule(FixedMain);
}

/// Finishes building `app` (whose scene is spawned) and warms it as
/// `benches/step.rs` does: an update (startup), one step, another update
/// (where the plugin chooses its fixed schedules' executors); then sets the
/// fixed clock. Leaves it one step in.
pub fn warm(app: &mut App) {
    app.finish();
    app.cleanup();
    app.update();
    fixed_clock(app);
    step(app);
    app.update();
    fixed_clock(app);
}

/// The steps `warm` takes.
pub const WARM_STEPS: usize = 1;

/// The body that the checks follow (the lowest body of the first rope) and
/// where it started.
#[derive(Resource, Clone, Copy)]
pub struct Probe {
    pub body: Entity,
    pub start: Vec2,
}

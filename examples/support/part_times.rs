//! Where a frame's time goes: the wall time of system sets, each measured
//! by two exclusive systems placed just before and just after it. Shared
//! by `spring_rope --split` and `benches/frames.rs`.
//!
//! ```ignore
//! let interpolation = time_part(&mut app, Update, InterpolationSystems::Interpolate, None);
//! // … run frames …
//! let spent = app.world().resource::<PartTimes>().spent[interpolation];
//! ```

use std::time::Duration;

use bevy::ecs::intern::Interned;
use bevy::ecs::schedule::{ScheduleLabel, SystemSet};
use bevy::platform::time::Instant;
use bevy::prelude::*;

/// The time spent in each part timed by [`time_part`], by the index it
/// returned.
#[derive(Resource, Default)]
pub struct PartTimes {
    /// When each part's current run began.
    started: Vec<Option<Instant>>,
    /// Wall time in each part since the app began or since
    /// [`PartTimes::reset`].
    pub spent: Vec<Duration>,
}

impl PartTimes {
    /// Starts the count again from zero.
    pub fn reset(&mut self) {
        self.spent.fill(Duration::ZERO);
        self.started.fill(None);
    }
}

/// The system that ends the part of this index, for a part that must not
/// start before it (`start_after` in [`time_part`]).
#[derive(SystemSet, Debug, Clone, PartialEq, Eq, Hash)]
pub struct PartEnd(pub usize);

/// Times `set` in `schedule` as a new part of [`PartTimes`], whose index it
/// returns: the time from a system ordered before `set` (and after
/// `start_after`, if given, for a part that must not take in the set
/// before it) to one ordered after it (in [`PartEnd`] of that index).
///
/// Both are exclusive systems, so the part's time also takes in any system
/// of the schedule that Bevy's executor runs while the part runs or that
/// it starts before the one that ends the part: order such systems after
/// the part's [`PartEnd`] to keep them out of it.
pub fn time_part(
    app: &mut App,
    schedule: impl ScheduleLabel + Clone,
    set: impl SystemSet + Clone,
    start_after: Option<Interned<dyn SystemSet>>,
) -> usize {
    let mut times = app.world_mut().get_resource_or_init::<PartTimes>();
    let part = times.spent.len();
    times.spent.push(Duration::ZERO);
    times.started.push(None);
    let start = move |world: &mut World| {
        world.resource_mut::<PartTimes>().started[part] = Some(Instant::now());
    };
    let stop = move |world: &mut World| {
        let mut times = world.resource_mut::<PartTimes>();
        if let Some(started) = times.started[part].take() {
            times.spent[part] += started.elapsed();
        }
    };
    let start = match start_after {
        Some(after) => start.before(set.clone()).after(after),
        None => start.before(set.clone()),
    };
    app.add_systems(schedule.clone(), start)
        .add_systems(schedule, stop.after(set).in_set(PartEnd(part)));
    part
}

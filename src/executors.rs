//! Bevy's fixed schedules on the executor that costs least for what they
//! hold ([`PhysicsSettings::lean_fixed_schedules`]).
//!
//! Bevy's multi-threaded executor hands every system that is not exclusive
//! to a thread of the compute pool, and waking that thread and parking it
//! again costs tens of microseconds per schedule run. In an app of
//! `MinimalPlugins` and this plugin, `FixedPostUpdate` holds one such
//! system of Bevy's (`signal_message_update_system`), and that wake was
//! nearly all of a fixed step's cost for a small scene: 55–70 µs against
//! 4–7 µs on the single-threaded executor (`benches/fixed_cost.rs`).
//!
//! A schedule with at most one system that is not exclusive has nothing to
//! run in parallel (exclusive systems never run beside another system), so
//! the single-threaded executor runs it in the same order at no loss. Before
//! each fixed loop, [`lean_fixed_schedules`] looks at the five fixed
//! schedules `FixedMain` runs (Bevy already runs `FixedMain` itself on the
//! single-threaded executor) and puts each on the single-threaded executor
//! while it holds at most one such system, and back on Bevy's default one
//! when it holds more. It looks again only when a schedule's system count
//! changed.
//!
//! Bevy cannot say which executor a schedule runs on, so the plugin cannot
//! see one your code set: while the setting is on, it replaces the executor
//! of a fixed schedule with at most one such system, and only leaves alone
//! a schedule it never switched.

use bevy::app::{RunFixedMainLoop, RunFixedMainLoopSystems};
use bevy::ecs::error::{BevyError, ErrorContext};
use bevy::ecs::schedule::{
    FixedBitSet, InternedScheduleLabel, ScheduleLabel, SingleThreadedExecutor, SystemExecutor,
    SystemSchedule, default_executor,
};
use bevy::prelude::*;

use crate::data::settings::PhysicsSettings;

/// The fixed schedules, in the order `FixedMain` runs them.
fn fixed_labels() -> [InternedScheduleLabel; 5] {
    [
        FixedFirst.intern(),
        FixedPreUpdate.intern(),
        FixedUpdate.intern(),
        FixedPostUpdate.intern(),
        FixedLast.intern(),
    ]
}

/// Bevy's default executor for a new schedule (multi-threaded where Bevy
/// can run threads), as a value `Schedule::set_executor` takes.
struct BevyDefault(Box<dyn SystemExecutor>);

impl BevyDefault {
    fn new() -> Self {
        BevyDefault(default_executor())
    }
}

impl SystemExecutor for BevyDefault {
    fn init(&mut self, schedule: &SystemSchedule) {
        self.0.init(schedule);
    }

    fn run(
        &mut self,
        schedule: &mut SystemSchedule,
        world: &mut World,
        skip_systems: Option<&FixedBitSet>,
        error_handler: fn(BevyError, ErrorContext),
    ) {
        self.0.run(schedule, world, skip_systems, error_handler);
    }

    fn set_apply_final_deferred(&mut self, value: bool) {
        self.0.set_apply_final_deferred(value);
    }
}

/// What [`lean_fixed_schedules`] last saw and chose, per fixed schedule.
/// It switches a schedule back to Bevy's default executor only if it put
/// it on the single-threaded one.
#[derive(Resource, Default)]
pub(crate) struct FixedExecutors {
    /// The system count it decided on, and whether it chose the
    /// single-threaded executor; `None` before it first decided.
    seen: [Option<(usize, bool)>; 5],
}

/// Whether a schedule whose systems are `exclusive` (one flag per system)
/// should run on the single-threaded executor: at most one system that
/// could run on another thread.
pub(crate) fn single_threaded(exclusive: impl IntoIterator<Item = bool>) -> bool {
    exclusive.into_iter().filter(|&e| !e).count() <= 1
}

/// Adds [`lean_fixed_schedules`] before the fixed loop.
pub(crate) fn plugin(app: &mut App) {
    app.add_systems(
        RunFixedMainLoop,
        lean_fixed_schedules.in_set(RunFixedMainLoopSystems::BeforeFixedMainLoop),
    );
}

/// Before the fixed loop: each fixed schedule on the executor its systems
/// need (see the module docs). A schedule not built yet (it has not run
/// since systems were added) is looked at the next frame. With
/// [`PhysicsSettings::lean_fixed_schedules`] off, the schedules it put on
/// the single-threaded executor go back to Bevy's default, once, and it
/// touches nothing more.
pub(crate) fn lean_fixed_schedules(world: &mut World) {
    let lean = world
        .get_resource::<PhysicsSettings>()
        .is_none_or(|settings| settings.lean_fixed_schedules);
    world.resource_scope(|world, mut schedules: Mut<Schedules>| {
        let mut state = world.get_resource_or_init::<FixedExecutors>();
        for (label, seen) in fixed_labels().into_iter().zip(&mut state.seen) {
            let Some(schedule) = schedules.get_mut(label) else {
                continue;
            };
            if !lean {
                if seen.take().is_some_and(|(_, single)| single) {
                    schedule.set_executor(BevyDefault::new());
                }
                continue;
            }
            let count = schedule.systems_len();
            if seen.is_some_and(|(len, _)| len == count) {
                continue;
            }
            let Ok(systems) = schedule.systems() else {
                continue;
            };
            let single = single_threaded(systems.map(|(_, system)| system.is_exclusive()));
            let was = seen.is_some_and(|(_, was)| was);
            // (An executor it did not choose, it leaves.)
            if single && !was {
                schedule.set_executor(SingleThreadedExecutor::new());
            } else if !single && was {
                schedule.set_executor(BevyDefault::new());
            }
            *seen = Some((count, single));
        }
    });
}

#[cfg(test)]
mod tests {
    use super::single_threaded;

    #[test]
    fn one_system_off_the_main_thread_runs_single_threaded() {
        assert!(single_threaded([]));
        assert!(single_threaded([false]));
        assert!(single_threaded([true, false, true]));
        assert!(!single_threaded([false, false]));
        assert!(!single_threaded([true, false, false]));
    }
}

//! Sleeping: islands that rested long enough fall asleep at the end of a
//! step; how a body is put to sleep or rested as an anchor.

use bevy::ecs::change_detection::Tick;
use bevy::ecs::system::SystemChangeTick;
use bevy::prelude::*;

use crate::data::body::Body;
use crate::data::drawing::{PositionHistory, TransformSyncDisabled};
use crate::data::forces::AccumulatedForce;
use crate::data::islands::{IslandSlept, RestTime, SleepSettings, Sleeping, asleep_at};
use crate::data::requests::{AnchorAsleep, Island};
use crate::solver::SolverState;

/// Rests a fixed body that only sleeping islands hang from.
pub(crate) fn rest_anchor(commands: &mut Commands, entity: Entity, since: Tick) {
    commands
        .entity(entity)
        .queue_silenced(move |mut e: EntityWorldMut| {
            settle(&mut e);
            e.insert(AnchorAsleep { since });
        });
}

/// Draws a body at its position, with no history to interpolate.
fn settle(e: &mut EntityWorldMut) {
    let Some(position) = e.get::<Body>().map(|b| b.position) else {
        return;
    };
    if let Some(mut history) = e.get_mut::<PositionHistory>() {
        *history = PositionHistory::at(position);
    }
    if position.is_finite()
        && !e.contains::<TransformSyncDisabled>()
        && let Some(mut transform) = e.get_mut::<Transform>()
    {
        transform.translation = position;
    }
}

/// Puts a body to sleep where it is: drawn at its position, no history.
pub(crate) fn fall_asleep(commands: &mut Commands, entity: Entity, since: Tick) {
    commands
        .entity(entity)
        .queue_silenced(move |mut e: EntityWorldMut| {
            settle(&mut e);
            // Writes to a sleeping body's accumulated force could only be
            // found by scanning every sleeping body every step; without the
            // component there are none to find.
            e.remove::<AccumulatedForce>();
            if let Some(mut island) = e.get_mut::<Island>() {
                // Asleep from now, for the hooks that ask (until the next
                // rebuild writes the whole island state).
                island.group = u32::MAX;
            }
            e.insert(Sleeping {
                since: asleep_at(since),
            });
        });
}

/// End of the fixed step: advances each awake island's resting time and puts
/// the islands that rested long enough to sleep.
pub(crate) fn update_sleep(
    mut solver: ResMut<SolverState>,
    sleep: Res<SleepSettings>,
    mut commands: Commands,
    mut slept: MessageWriter<IslandSlept>,
    mut rest: Query<&mut RestTime>,
    ticks: SystemChangeTick,
) {
    if !sleep.enabled {
        return;
    }
    let solver = &mut *solver;
    let (h, time_to_sleep, now) = (solver.timestep, sleep.sleep_time(), ticks.this_run());
    let (pos, vel, valid) = (&solver.pos, &solver.vel, &solver.valid);
    let (speed2, groups) = (&solver.sleep_speed2, &solver.groups);
    for island in &mut solver.islands {
        if island.sleeping || island.slots.is_empty() {
            continue;
        }
        // A body rests when its velocity is below its threshold, or when
        // it moved slower than that over the step: a body that a contact
        // holds against a rod or a limit may keep a velocity it does not
        // move with. (Where its group has nothing for the constraints
        // stage, it moved with its velocity.)
        let g = groups.partition_point(|group| group.slots.end <= island.slots.start);
        let start = groups
            .get(g)
            .filter(|group| !group.start.is_empty())
            .map(|group| (&group.start[..], group.slots.start));
        let speed2_of = |s: usize| {
            let own = vel[s].length_squared();
            start.map_or(own, |(start, first)| {
                own.min(((pos[s] - start[s - first]) / h).length_squared())
            })
        };
        let resting = island
            .slots
            .clone()
            .all(|s| valid[s] && speed2_of(s) < speed2[s]);
        // An island kept awake keeps no time (nor writes it every step);
        // nor does one that falls asleep now (a sleeping island's time is
        // 0, and it starts from 0 when it wakes).
        let rested = island.timer + h;
        let falls_asleep = resting && island.can_sleep && rested >= time_to_sleep;
        let timer = if resting && island.can_sleep && !falls_asleep {
            rested
        } else {
            0.0
        };
        if timer != island.timer {
            island.timer = timer;
            // On the bodies too, where snapshots and rollback find it.
            for &entity in &solver.island_members[island.members.clone()] {
                if let Ok(mut rest) = rest.get_mut(entity) {
                    rest.0 = timer;
                }
            }
        }
        if falls_asleep {
            island.sleeping = true;
            island.since = now;
            solver.any_sleeping = true;
            let bodies = solver.island_members[island.members.clone()].to_vec();
            for &entity in &bodies {
                fall_asleep(&mut commands, entity, now);
            }
            slept.write(IslandSlept { bodies });
        }
    }
}

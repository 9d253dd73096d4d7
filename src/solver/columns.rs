//! The tables a query matches, read and written as whole columns by the
//! exclusive systems at the two ends of a step: the scans for what your
//! code wrote ([`gather`](super::gather)) and the
//! [`scatter`](super::scatter); and by the copies around systems of yours
//! in `PhysicsSubstep` ([`substep`](super::substep)), for a group that
//! holds more than a tenth of the slots.
//!
//! Bevy's query visits its items one by one, testing each change tick
//! through its filter; a scan of 100 000 bodies for the few your code
//! wrote cost about 1 ns a body that way, twice a step. Here a column's
//! change ticks are tested 64 at a time without a branch
//! ([`for_each_changed`]), and only the runs that hold a change are
//! visited.

use core::cell::UnsafeCell;

use bevy::ecs::change_detection::{MAX_CHANGE_AGE, Tick};
use bevy::ecs::component::{ComponentId, StorageType};
use bevy::ecs::query::{QueryData, QueryFilter};
use bevy::ecs::storage::Table;
use bevy::prelude::*;

use crate::data::body::Body;
use crate::data::drawing::PositionHistory;
use crate::data::requests::BodyIndex;

/// Which rows of a table a query matches.
pub(crate) enum Matched {
    /// All of them.
    All,
    /// Only these (an archetype that shares the table, differing by a
    /// component stored in sparse sets, say one of yours that disables
    /// entities, is not matched).
    Rows(Vec<usize>),
}

impl Matched {
    /// Calls `f` with each matched row of a table of `len` rows, in order.
    pub(crate) fn for_each(self, len: usize, f: impl FnMut(usize)) {
        match self {
            Matched::All => (0..len).for_each(f),
            Matched::Rows(rows) => rows.into_iter().for_each(f),
        }
    }
}

/// The tables `query` matches (its archetypes updated), each with the
/// rows it matches.
pub(crate) fn matched_tables<'w, D: QueryData, F: QueryFilter>(
    query: &'w QueryState<D, F>,
    world: &'w World,
) -> impl Iterator<Item = (&'w Table, Matched)> + 'w {
    let (tables, archetypes) = (&world.storages().tables, world.archetypes());
    query.matched_tables().map(move |id| {
        let table = &tables[id];
        let in_table = || {
            query
                .matched_archetypes()
                .map(|archetype| &archetypes[archetype])
                .filter(move |archetype| archetype.table_id() == id)
        };
        let matched: usize = in_table().map(|archetype| archetype.len() as usize).sum();
        let rows = if matched == table.entity_count() as usize {
            Matched::All
        } else {
            Matched::Rows(
                in_table()
                    .flat_map(|archetype| archetype.entities())
                    .map(|entity| entity.table_row().index())
                    .collect(),
            )
        };
        (table, rows)
    })
}

/// The id of component `T`, which the plugin registers and Bevy stores in
/// tables (its default), as these helpers need.
pub(crate) fn table_component<T: Component>(world: &World) -> ComponentId {
    let id = world
        .component_id::<T>()
        .expect("the plugin registers the components it reads by column");
    debug_assert!(
        world
            .components()
            .get_info(id)
            .is_some_and(|info| info.storage_type() == StorageType::Table)
    );
    id
}

/// A table's columns of a body's state, as slices of one length: `Body`
/// with its changed ticks, `BodyIndex` and `PositionHistory`, which the
/// scatter and the copies around systems of yours write.
pub(crate) struct BodyRows<'a> {
    pub body: &'a mut [Body],
    pub changed: &'a mut [Tick],
    pub index: &'a [BodyIndex],
    pub history: &'a mut [PositionHistory],
}

impl<'a> BodyRows<'a> {
    pub(crate) fn len(&self) -> usize {
        self.body.len()
    }

    /// Cuts the rows into runs of at most `n`.
    pub(crate) fn chunks(self, n: usize) -> impl Iterator<Item = BodyRows<'a>> {
        self.body
            .chunks_mut(n)
            .zip(self.changed.chunks_mut(n))
            .zip(self.index.chunks(n))
            .zip(self.history.chunks_mut(n))
            .map(|(((body, changed), index), history)| BodyRows {
                body,
                changed,
                index,
                history,
            })
    }
}

/// The component ids of [`BodyRows`]' columns.
#[derive(Clone, Copy)]
pub(crate) struct BodyColumns {
    body: ComponentId,
    index: ComponentId,
    history: ComponentId,
}

impl BodyColumns {
    pub(crate) fn of(world: &World) -> Self {
        Self {
            body: table_component::<Body>(world),
            index: table_component::<BodyIndex>(world),
            history: table_component::<PositionHistory>(world),
        }
    }

    /// The table's `Body` and `BodyIndex` columns, to read, or `None` if it
    /// lacks one.
    ///
    /// # Safety
    ///
    /// Nothing may write these columns while the slices live.
    pub(crate) unsafe fn read(self, table: &Table) -> Option<(&[Body], &[BodyIndex])> {
        // SAFETY: each column holds the type of its component id, and the
        // caller promises no write.
        unsafe {
            Some((
                column::<Body>(table, self.body)?,
                column::<BodyIndex>(table, self.index)?,
            ))
        }
    }

    /// The table's columns of a body's state, all its rows, or `None` if
    /// it lacks one.
    ///
    /// # Safety
    ///
    /// Nothing else may read or write these columns (or `Body`'s changed
    /// ticks) while the slices live.
    pub(crate) unsafe fn rows(self, table: &Table) -> Option<BodyRows<'_>> {
        // SAFETY: each column holds the type of its component id, and the
        // caller promises the only access.
        unsafe {
            Some(BodyRows {
                body: write_cells(table.get_data_slice_for::<Body>(self.body)?),
                changed: write_cells(table.get_changed_ticks_slice_for(self.body)?),
                index: column::<BodyIndex>(table, self.index)?,
                history: write_cells(table.get_data_slice_for::<PositionHistory>(self.history)?),
            })
        }
    }
}

/// `cells` as a slice.
///
/// # Safety
///
/// Nothing may write these cells while the slice lives.
pub(crate) unsafe fn read_cells<T>(cells: &[UnsafeCell<T>]) -> &[T] {
    // SAFETY: `UnsafeCell<T>` has the layout of `T`, and the caller
    // promises no write.
    unsafe { core::slice::from_raw_parts(UnsafeCell::raw_get(cells.as_ptr()), cells.len()) }
}

/// `cells` as a mutable slice.
///
/// # Safety
///
/// Nothing else may read or write these cells while the slice lives.
#[allow(clippy::mut_from_ref)]
pub(crate) unsafe fn write_cells<T>(cells: &[UnsafeCell<T>]) -> &mut [T] {
    // SAFETY: `UnsafeCell<T>` has the layout of `T`, and the caller
    // promises the only access.
    unsafe { core::slice::from_raw_parts_mut(UnsafeCell::raw_get(cells.as_ptr()), cells.len()) }
}

/// Column `id` of `table`, of component `T`, or `None` if it lacks it.
///
/// # Safety
///
/// `id` is `T`'s, and nothing may write the column while the slice lives.
pub(crate) unsafe fn column<T>(table: &Table, id: ComponentId) -> Option<&[T]> {
    // SAFETY: as the caller promises.
    unsafe {
        table
            .get_data_slice_for::<T>(id)
            .map(|cells| read_cells(cells))
    }
}

/// How [`for_each_changed`] tells a changed tick: as Bevy's `Changed`
/// filter does in a system that last ran at `since` and runs at `now`.
#[derive(Clone, Copy)]
pub(crate) struct ChangedSince {
    now: u32,
    /// How many ticks back from `now` `since` is, clamped as Bevy clamps
    /// it: a tick fewer ticks back changed after `since`.
    window: u32,
}

impl ChangedSince {
    pub(crate) fn new(since: Tick, now: Tick) -> Self {
        Self {
            now: now.get(),
            window: now.get().wrapping_sub(since.get()).min(MAX_CHANGE_AGE),
        }
    }

    /// Whether `tick` is newer than `since`: the same answer as
    /// `tick.is_newer_than(since, now)`, which clamps both ages to
    /// `MAX_CHANGE_AGE`, for `window` is at most that.
    #[inline(always)]
    pub(crate) fn test(self, tick: Tick) -> bool {
        self.now.wrapping_sub(tick.get()) < self.window
    }
}

/// Calls `f` with the index of each tick in `ticks` that `changed` finds
/// newer, in order. Runs of 64 ticks are tested without a branch first,
/// so a column where little changed costs a fraction of a nanosecond a
/// row.
pub(crate) fn for_each_changed(ticks: &[Tick], changed: ChangedSince, mut f: impl FnMut(usize)) {
    const RUN: usize = 64;
    for (run, chunk) in ticks.chunks(RUN).enumerate() {
        let any = chunk
            .iter()
            .fold(0u32, |any, &tick| any | u32::from(changed.test(tick)));
        if any == 0 {
            continue;
        }
        for (i, &tick) in chunk.iter().enumerate() {
            if changed.test(tick) {
                f(run * RUN + i);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The scan finds exactly the ticks Bevy's own test finds newer, in
    /// order, across the wrap of the tick counter, ages past
    /// `MAX_CHANGE_AGE`, and runs with no change, one, or many.
    #[test]
    fn the_scan_agrees_with_bevys_test() {
        let cases = [
            (1_000u32, 5_000u32),
            (u32::MAX - 100, 200),
            (10, u32::MAX - 10),
            (0, 0),
            (7, 8),
        ];
        for (since, now) in cases {
            let (since, now) = (Tick::new(since), Tick::new(now));
            // Ticks around `since` and `now`, and far back.
            let mut ticks = Vec::new();
            for i in 0..300u32 {
                let offset = i.wrapping_mul(2_654_435_761) % 4_000;
                let tick = match i % 5 {
                    0 => since.get().wrapping_add(offset % 3).wrapping_sub(1),
                    1 => now.get().wrapping_sub(offset),
                    2 => now
                        .get()
                        .wrapping_sub(MAX_CHANGE_AGE)
                        .wrapping_add(offset % 3),
                    // Long runs of old ticks: whole runs of 64 unchanged.
                    _ => since.get().wrapping_sub(1 + offset),
                };
                ticks.push(Tick::new(tick));
            }
            ticks.extend(core::iter::repeat_n(since, 200));
            let expected: Vec<usize> = (0..ticks.len())
                .filter(|&i| ticks[i].is_newer_than(since, now))
                .collect();
            let mut found = Vec::new();
            for_each_changed(&ticks, ChangedSince::new(since, now), |i| found.push(i));
            assert_eq!(found, expected, "since {since:?}, now {now:?}");
        }
    }
}

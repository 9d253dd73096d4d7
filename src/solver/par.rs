//! Running a loop over the bodies on one thread or on all compute threads.

/// Runs `$f` on every item of `$query`, on the compute task pool when
/// `$parallel` holds. `$f` must not depend on the order of the items.
///
/// In parallel the bodies go in batches of 4 096, taken by whichever
/// thread is free, rather than Bevy's one batch per thread: a thread the
/// system has not yet woken holds up nothing. (Used by the scatter and the
/// interpolation; the scatter of 100 000 bodies on a pool of two threads
/// took 287–291 µs a step against 321–340 µs with one batch per thread.)
macro_rules! for_each_maybe_par {
    ($query:expr, $parallel:expr, $f:expr) => {
        if $parallel && bevy::tasks::ComputeTaskPool::try_get().is_some() {
            $query
                .par_iter_mut()
                .batching_strategy(bevy::ecs::batching::BatchingStrategy::fixed(4096))
                .for_each($f)
        } else {
            $query.iter_mut().for_each($f)
        }
    };
}
pub(crate) use for_each_maybe_par;

//! Running a scan of the bodies on one thread or on all compute threads.

/// Runs `$f` on every item of `$query`, on the compute task pool when
/// `$parallel` holds. `$f` must not depend on the order of the items.
macro_rules! for_each_maybe_par {
    ($query:expr, $parallel:expr, $f:expr) => {
        if $parallel && bevy::tasks::ComputeTaskPool::try_get().is_some() {
            $query.par_iter_mut().for_each($f)
        } else {
            $query.iter_mut().for_each($f)
        }
    };
}
pub(crate) use for_each_maybe_par;

/// Runs `$find` on each item of `$query` and `$apply` on what it returns:
/// with `$parallel`, the finds run on all compute threads into `$found`
/// (a `Parallel<Vec<_>>`), and the applies after them on this thread.
macro_rules! scan {
    ($query:expr, $parallel:expr, $found:expr, $find:expr, $apply:expr) => {
        if $parallel {
            $query.par_iter_mut().for_each(|item| {
                if let Some(found) = $find(item) {
                    $found.borrow_local_mut().push(found);
                }
            });
            $found.drain().for_each(&mut $apply);
        } else {
            $query.iter_mut().filter_map($find).for_each(&mut $apply);
        }
    };
}
pub(crate) use scan;

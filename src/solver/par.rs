//! Running a loop over the bodies on one thread or on all compute threads,
//! and how many parts a split of the step's work makes.

use core::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use core::time::Duration;
use std::sync::{Mutex, PoisonError};

use bevy::platform::time::Instant;
use bevy::tasks::{ComputeTaskPool, TaskPool, futures_lite};

/// The compute task pool and how many threads share a split of the
/// step's work on it (how many tasks [`for_each_part`] starts): one per
/// thread of the pool, and at least two, since the thread that calls
/// [`TaskPool::scope`] runs the scope's tasks too while it waits. `None`
/// without a pool, with a pool of no threads, or on the web (where every
/// task runs on the calling thread anyway). Bevy's default pools give a
/// two-core machine one compute thread: that thread and the calling one
/// then share the work. (Not one more task than the pool has threads: on
/// a pool of two on two cores, three tasks of a pass made the third wait
/// for a core, 1.34–1.38× faster than one thread against 1.60–1.66× with
/// two, for a plain loop of the ropes scene cut in that many parts.)
pub(crate) fn split_pool() -> Option<(&'static TaskPool, usize)> {
    // Bevy's pool on the web runs every task on the calling thread.
    if cfg!(target_arch = "wasm32") {
        return None;
    }
    let pool = ComputeTaskPool::try_get().filter(|pool| pool.thread_num() > 0)?;
    Some((pool, pool.thread_num().max(2)))
}

/// How many jobs the step cuts work into for each of [`split_pool`]'s
/// threads: more than one, so that a thread that starts late (a parked
/// pool thread took 31–44 µs to wake on a two-core VM) finds fewer left,
/// and the others take its share.
pub(crate) const JOBS_PER_THREAD: usize = 4;

/// Runs `f` on each job, over `pool`'s `threads` (see [`split_pool`]) when
/// given, else on this thread in order; true if `f` returned true for any.
///
/// Over the pool, `threads` tasks take the jobs in order, each the next
/// one not yet taken, until none is left: which thread runs a job depends
/// on timing, so `f` must give the same result on any thread (each job
/// writes only its own data). A task that finds none left waits, spinning,
/// for the jobs still running, so that the scope ends as the last job
/// does rather than when a parked thread wakes; the pool's threads are
/// then kept awake for the next split of the step (see [`keep_awake`]).
///
/// `f` must not use the task pool itself (a scope, a parallel query): a
/// task waiting for the last jobs could then run on the same thread above
/// the job it waits for.
pub(crate) fn for_each_part<J: Send>(
    pool: Option<(&TaskPool, usize)>,
    jobs: impl IntoIterator<Item = J>,
    f: impl Fn(J) -> bool + Sync,
) -> bool {
    let Some((pool, threads)) = pool else {
        return jobs.into_iter().fold(false, |any, job| f(job) | any);
    };
    let jobs: Vec<Mutex<Option<J>>> = jobs.into_iter().map(|job| Mutex::new(Some(job))).collect();
    let (next, done) = (AtomicUsize::new(0), AtomicUsize::new(0));
    let work = || {
        let mut any = false;
        while let Some(job) = jobs.get(next.fetch_add(1, Ordering::Relaxed)) {
            // Counted done even if `f` panics (the scope passes it on).
            let _done = Done(&done);
            // Each index is handed out once, so the lock is never contended.
            let job = job.lock().unwrap_or_else(PoisonError::into_inner).take();
            any |= job.is_some_and(&f);
        }
        // Every job is taken: wait for those still running.
        wait_for(&done, jobs.len());
        any
    };
    let work = &work;
    SPLITS.fetch_add(1, Ordering::Relaxed);
    let any = pool
        .scope(|scope| {
            for _ in 0..threads.min(jobs.len()) {
                scope.spawn(async move { work() });
            }
            // The tasks that kept threads awake for these jobs end (a
            // thread takes the jobs first: such a task yields to them).
            let_sleep();
        })
        .into_iter()
        .any(|any| any);
    keep_awake(pool, threads, KEEP_AWAKE);
    any
}

/// Runs `f` on each of `0..n` over `pool` with [`for_each_part`]: the
/// kernels' [`Each`](crate::kernels::batches::Each) on the step's threads.
pub(crate) fn each_over(pool: Option<(&TaskPool, usize)>, n: usize, f: &(dyn Fn(usize) + Sync)) {
    for_each_part(pool, 0..n, |k| {
        f(k);
        false
    });
}

/// The length of each of the even runs that `len` items are cut into for
/// [`for_each_part`] over `pool`: [`JOBS_PER_THREAD`] runs a thread, or
/// one run without a pool (at least 1, for `chunks`).
pub(crate) fn run_size(pool: Option<(&TaskPool, usize)>, len: usize) -> usize {
    let runs = pool.map_or(1, |(_, threads)| threads * JOBS_PER_THREAD);
    len.div_ceil(runs).max(1)
}

/// How many times [`for_each_part`] has split work over the pool in this
/// process (see [`splits`]).
static SPLITS: AtomicU64 = AtomicU64::new(0);

/// The count of [`for_each_part`]'s splits over the pool so far. Two
/// readings around a step differ when the step split (or another app in
/// the process did meanwhile, which only keeps the pool's threads awake
/// once too often).
pub(crate) fn splits() -> u64 {
    SPLITS.load(Ordering::Relaxed)
}

/// Waits, spinning and then yielding its thread, until `done` counts at
/// least `count` jobs: for the other threads' jobs of a split, which take
/// microseconds, so that the wait ends as they do rather than when a
/// parked thread wakes.
pub(crate) fn wait_for(done: &AtomicUsize, count: usize) {
    let mut spins = 0u32;
    while done.load(Ordering::Acquire) < count {
        spins += 1;
        if spins < 1 << 12 {
            core::hint::spin_loop();
        } else {
            std::thread::yield_now();
        }
    }
}

/// Counts a job done when dropped, even by a panic.
pub(crate) struct Done<'a>(pub &'a AtomicUsize);

impl Drop for Done<'_> {
    fn drop(&mut self) {
        self.0.fetch_add(1, Ordering::Release);
    }
}

/// How long the step keeps the pool's threads awake for its next split
/// over them: after [`for_each_part`]'s jobs, past the scatter of 100 000
/// bodies (about 300 µs) to the energy watch; at the start of a step,
/// past the gather to the passes.
pub(crate) const KEEP_AWAKE: Duration = Duration::from_micros(500);

/// Changes when a split starts and when a step ends: the tasks of
/// [`keep_awake`] then end, so that at most one set of them waits.
static AWAKE: AtomicU64 = AtomicU64::new(0);

/// Keeps `threads - 1` of `pool`'s threads (the calling thread is the
/// other) from parking for at most `for_at_most` or until the next split
/// or the end of the step ([`let_sleep`]), so that the step's next split
/// over the pool starts at once instead of after a thread's wake. Each is
/// a task that yields to its executor until then: a thread that has it
/// runs the tasks queued before it, and it ends when the next split has
/// spawned its jobs, so it delays a scope by a few polls at most. It
/// spends that thread's idle time.
pub(crate) fn keep_awake(pool: &TaskPool, threads: usize, for_at_most: Duration) {
    let generation = AWAKE.load(Ordering::Relaxed);
    let until = Instant::now() + for_at_most;
    for _ in 1..threads {
        pool.spawn(async move {
            while AWAKE.load(Ordering::Relaxed) == generation && Instant::now() < until {
                futures_lite::future::yield_now().await;
            }
        })
        .detach();
    }
}

/// Ends the tasks of [`keep_awake`]: a split starts, or the step is over.
pub(crate) fn let_sleep() {
    AWAKE.fetch_add(1, Ordering::Relaxed);
}

/// Runs `$f` on every item of `$query`, on the compute task pool when
/// `$parallel` holds and the pool has more than one thread (with one,
/// Bevy's parallel query runs its items one by one on the calling thread,
/// slower than a plain loop: the scatter of 100 000 bodies took 529–540 µs
/// that way against 375–387 µs). `$f` must not depend on the order of
/// the items. Used by the interpolation.
///
/// In parallel the bodies go in batches of 4 096, taken by whichever
/// thread is free, rather than Bevy's one batch per thread: a thread the
/// system has not yet woken holds up nothing. (When the scatter used it,
/// the scatter of 100 000 bodies on a pool of two threads took 287–291 µs
/// a step against 321–340 µs with one batch per thread.)
macro_rules! for_each_maybe_par {
    ($query:expr, $parallel:expr, $f:expr) => {
        if $parallel
            && bevy::tasks::ComputeTaskPool::try_get().is_some_and(|pool| pool.thread_num() > 1)
        {
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

#[cfg(test)]
mod tests {
    use super::*;
    use bevy::tasks::TaskPoolBuilder;

    /// Every job runs once, whichever thread takes it, with more jobs than
    /// threads and fewer; the result is whether any returned true.
    #[test]
    fn each_job_runs_once_on_any_pool() {
        for threads in [1, 2, 3] {
            let pool = TaskPoolBuilder::new().num_threads(threads).build();
            for jobs in [1, 2, 7, 64] {
                let mut runs = vec![0u32; jobs];
                let marked = jobs / 2;
                let any = for_each_part(
                    Some((&pool, threads.max(2))),
                    runs.iter_mut().enumerate(),
                    |(i, count)| {
                        *count += 1;
                        i == marked
                    },
                );
                assert!(
                    any,
                    "{threads} threads, {jobs} jobs: job {marked} returned true"
                );
                assert!(runs.iter().all(|&n| n == 1), "{threads} threads: {runs:?}");
                let none = for_each_part(Some((&pool, threads.max(2))), 0..jobs, |_| false);
                assert!(!none);
            }
        }
        // On this thread, in order.
        let order = Mutex::new(Vec::new());
        for_each_part(None, 0..5, |i| {
            order.lock().unwrap().push(i);
            false
        });
        assert_eq!(order.into_inner().unwrap(), [0, 1, 2, 3, 4]);
    }

    /// A job that panics still counts as done: the other jobs run, the
    /// tasks waiting for it stop waiting, and the split passes the panic
    /// on to its caller instead of hanging.
    #[test]
    fn a_panicking_job_ends_the_split_with_its_panic() {
        for threads in [1, 2] {
            let pool = TaskPoolBuilder::new().num_threads(threads).build();
            let ran = AtomicUsize::new(0);
            let split = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                for_each_part(Some((&pool, threads.max(2))), 0..16, |i| {
                    ran.fetch_add(1, Ordering::Relaxed);
                    assert_ne!(i, 5, "job 5 fails");
                    false
                })
            }));
            assert!(split.is_err(), "{threads} threads: the panic is passed on");
            assert_eq!(ran.load(Ordering::Relaxed), 16, "{threads} threads");
            // The pool still works.
            assert!(for_each_part(Some((&pool, threads.max(2))), 0..4, |i| i == 3));
        }
    }

    /// A task that keeps a thread awake holds up no scope, even on the
    /// calling thread, which runs the pool's tasks while it waits: a scope
    /// started right after a minute's `keep_awake` ends with its own tasks.
    #[test]
    fn keeping_threads_awake_holds_up_nothing() {
        let pool = TaskPoolBuilder::new().num_threads(1).build();
        let start = Instant::now();
        keep_awake(&pool, 4, Duration::from_secs(60));
        let sums = pool.scope(|scope| {
            for i in 0..8u64 {
                scope.spawn(async move { (0..1000 * i).sum::<u64>() });
            }
        });
        assert_eq!(sums.len(), 8);
        let_sleep();
        assert!(
            start.elapsed() < Duration::from_secs(30),
            "the scope waited for the tasks that keep threads awake: {:?}",
            start.elapsed()
        );
    }

    /// A thread kept awake runs a scope's task at once: two tasks of a
    /// scope that each wait for the other to start (so that neither ends
    /// unless one runs on the calling thread and the other on the pool's,
    /// which is busy with `keep_awake`'s task) both see the other, where a
    /// task that kept its thread without yielding would leave each waiting
    /// out its ten seconds.
    #[test]
    fn a_thread_kept_awake_takes_a_scopes_task() {
        let pool = TaskPoolBuilder::new().num_threads(1).build();
        keep_awake(&pool, 2, Duration::from_secs(60));
        // Let the pool's thread start the task that keeps it awake.
        std::thread::sleep(Duration::from_millis(50));
        let started = AtomicUsize::new(0);
        let started = &started;
        let met = pool.scope(|scope| {
            for _ in 0..2 {
                scope.spawn(async move {
                    started.fetch_add(1, Ordering::AcqRel);
                    let deadline = Instant::now() + Duration::from_secs(10);
                    while started.load(Ordering::Acquire) < 2 {
                        if Instant::now() > deadline {
                            return false;
                        }
                        core::hint::spin_loop();
                    }
                    true
                });
            }
        });
        let_sleep();
        assert_eq!(met, [true, true], "each task saw the other start");
    }
}

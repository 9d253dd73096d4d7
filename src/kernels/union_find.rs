//! Union-find, for islands: one thread may join sets, or several at once.

use core::sync::atomic::{AtomicU32, Ordering};

/// Union-find with path halving, lock-free: several threads may join sets
/// at once. A root is linked under the smaller of the two roots by a
/// compare-and-swap, so every parent is smaller than its child and the root
/// of each set is its smallest element, whatever the order of the joins
/// (once every join is done): the sets and their roots are those of one
/// thread joining in any order.
#[derive(Debug, Default)]
pub struct UnionFind {
    parent: Vec<AtomicU32>,
}

impl UnionFind {
    /// `n` singletons.
    pub fn new(n: usize) -> Self {
        let mut sets = Self::default();
        sets.reset(n);
        sets
    }

    /// `n` singletons again, keeping the buffer.
    pub fn reset(&mut self, n: usize) {
        self.parent.clear();
        self.parent.extend((0..n as u32).map(AtomicU32::new));
    }

    /// The root of `i`'s set (at this moment: another thread's join may
    /// link it under a smaller root later).
    pub fn find(&self, mut i: u32) -> u32 {
        // A parent only ever moves towards its root (a root is linked once,
        // and halving skips to an ancestor), so a stale read still names an
        // ancestor, and a plain store of one is never wrong.
        loop {
            let parent = self.parent[i as usize].load(Ordering::Relaxed);
            if parent == i {
                return i;
            }
            let grand = self.parent[parent as usize].load(Ordering::Relaxed);
            if grand != parent {
                self.parent[i as usize].store(grand, Ordering::Relaxed);
            }
            i = grand;
        }
    }

    /// Joins the sets of `a` and `b`; false if they were one already.
    pub fn union(&self, mut a: u32, mut b: u32) -> bool {
        loop {
            (a, b) = (self.find(a), self.find(b));
            if a == b {
                return false;
            }
            let (low, high) = if a < b { (a, b) } else { (b, a) };
            let linked = self.parent[high as usize].compare_exchange(
                high,
                low,
                Ordering::Relaxed,
                Ordering::Relaxed,
            );
            if linked.is_ok() {
                return true;
            }
            // `high` was linked meanwhile: try again from the new roots.
        }
    }
}

#[cfg(test)]
mod tests {
    use super::UnionFind;

    /// Joined elements share a root; others do not.
    #[test]
    fn joins_are_transitive_and_nothing_more() {
        let sets = UnionFind::new(6);
        assert!(sets.union(0, 1));
        assert!(sets.union(2, 1));
        assert!(!sets.union(0, 2), "already one set");
        assert!(sets.union(4, 5));
        assert_eq!(sets.find(0), sets.find(2));
        assert_eq!(sets.find(4), sets.find(5));
        assert_ne!(sets.find(0), sets.find(4));
        assert_ne!(sets.find(3), sets.find(0));
    }

    /// Random joins, made by 1, 2 and 4 threads at once: each element's
    /// root is the smallest element of its set, as labels spread along the
    /// joins until nothing changes find it.
    #[test]
    fn every_root_is_its_sets_smallest_whatever_the_threads() {
        let n = 2_000u32;
        let mut seed = 7u64;
        let mut next = || {
            seed = seed
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            ((seed >> 33) % u64::from(n)) as u32
        };
        let joins: Vec<(u32, u32)> = (0..1_500).map(|_| (next(), next())).collect();
        // Each element's smallest reachable element, by relaxing the joins.
        let mut smallest: Vec<u32> = (0..n).collect();
        let mut changed = true;
        while changed {
            changed = false;
            for &(a, b) in &joins {
                let m = smallest[a as usize].min(smallest[b as usize]);
                for e in [a, b] {
                    if smallest[e as usize] != m {
                        smallest[e as usize] = m;
                        changed = true;
                    }
                }
            }
        }
        assert!(smallest.iter().enumerate().any(|(i, &s)| s != i as u32));
        let mut sets = UnionFind::default();
        for threads in [1, 2, 4] {
            sets.reset(n as usize);
            std::thread::scope(|scope| {
                for t in 0..threads {
                    let (sets, joins) = (&sets, &joins);
                    scope.spawn(move || {
                        for &(a, b) in joins.iter().skip(t).step_by(threads) {
                            sets.union(a, b);
                        }
                    });
                }
            });
            for i in 0..n {
                assert_eq!(sets.find(i), smallest[i as usize], "{i}, {threads} threads");
            }
        }
    }
}

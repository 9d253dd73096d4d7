//! Union-find, for islands: [`UnionFind`] on one thread, and
//! [`SharedUnionFind`] for threads that join sets at once.

use core::sync::atomic::{AtomicU32, Ordering};

/// Union-find with path halving and union by size.
#[derive(Debug, Default)]
pub struct UnionFind {
    parent: Vec<u32>,
    size: Vec<u32>,
}

impl UnionFind {
    /// `n` singletons.
    pub fn new(n: usize) -> Self {
        Self {
            parent: (0..n as u32).collect(),
            size: vec![1; n],
        }
    }

    /// The root of `i`'s set.
    pub fn find(&mut self, mut i: u32) -> u32 {
        while self.parent[i as usize] != i {
            let grand = self.parent[self.parent[i as usize] as usize];
            self.parent[i as usize] = grand;
            i = grand;
        }
        i
    }

    /// Joins the sets of `a` and `b`; false if they were one already.
    pub fn union(&mut self, a: u32, b: u32) -> bool {
        let (mut a, mut b) = (self.find(a), self.find(b));
        if a == b {
            return false;
        }
        if self.size[a as usize] < self.size[b as usize] {
            core::mem::swap(&mut a, &mut b);
        }
        self.parent[b as usize] = a;
        self.size[a as usize] += self.size[b as usize];
        true
    }
}

/// Union-find that several threads may join at once, lock-free: each
/// root is linked under a smaller root by a compare-and-swap, and paths
/// are halved as they are walked. Which element ends up the root of a set
/// depends on the order of the joins, so the threads' timing; which
/// elements share a set does not. Read it for that alone (two elements
/// share a set when their roots are equal, once every join is done).
#[derive(Debug, Default)]
pub struct SharedUnionFind {
    parent: Vec<AtomicU32>,
}

impl SharedUnionFind {
    /// `n` singletons, keeping the buffer.
    pub fn reset(&mut self, n: usize) {
        self.parent.clear();
        self.parent.extend((0..n as u32).map(AtomicU32::new));
    }

    /// The root of `i`'s set (at this moment: another thread's join may
    /// link it under another root later).
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

    /// Joins the sets of `a` and `b`.
    pub fn union(&self, mut a: u32, mut b: u32) {
        loop {
            (a, b) = (self.find(a), self.find(b));
            if a == b {
                return;
            }
            // The larger root goes under the smaller, so no cycle forms.
            let (low, high) = if a < b { (a, b) } else { (b, a) };
            let linked = self.parent[high as usize].compare_exchange(
                high,
                low,
                Ordering::Relaxed,
                Ordering::Relaxed,
            );
            if linked.is_ok() {
                return;
            }
            // `high` was linked meanwhile: try again from the new roots.
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{SharedUnionFind, UnionFind};

    /// Joined elements share a root; others do not.
    #[test]
    fn joins_are_transitive_and_nothing_more() {
        let mut sets = UnionFind::new(6);
        sets.union(0, 1);
        sets.union(2, 1);
        sets.union(4, 5);
        assert_eq!(sets.find(0), sets.find(2));
        assert_eq!(sets.find(4), sets.find(5));
        assert_ne!(sets.find(0), sets.find(4));
        assert_ne!(sets.find(3), sets.find(0));
    }

    /// The shared sets agree with the one-thread sets on random joins,
    /// joined in turn and from two threads at once.
    #[test]
    fn shared_sets_are_the_sets_of_one_thread() {
        let n = 2_000u32;
        let mut seed = 7u64;
        let mut next = || {
            seed = seed
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            ((seed >> 33) % u64::from(n)) as u32
        };
        let joins: Vec<(u32, u32)> = (0..1_500).map(|_| (next(), next())).collect();
        let mut one = UnionFind::new(n as usize);
        for &(a, b) in &joins {
            one.union(a, b);
        }
        let mut shared = SharedUnionFind::default();
        for threads in [1, 2, 4] {
            shared.reset(n as usize);
            std::thread::scope(|scope| {
                for t in 0..threads {
                    let (shared, joins) = (&shared, &joins);
                    scope.spawn(move || {
                        for &(a, b) in joins.iter().skip(t).step_by(threads) {
                            shared.union(a, b);
                        }
                    });
                }
            });
            for i in 0..n {
                for j in [0, i / 2, n - 1 - i] {
                    assert_eq!(
                        one.find(i) == one.find(j),
                        shared.find(i) == shared.find(j),
                        "{i} and {j} with {threads} threads"
                    );
                }
            }
        }
    }
}

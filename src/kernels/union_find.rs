//! Union-find, for islands.

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

    /// `n` singletons again, keeping the buffers.
    pub fn reset(&mut self, n: usize) {
        self.parent.clear();
        self.parent.extend(0..n as u32);
        self.size.clear();
        self.size.resize(n, 1);
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

#[cfg(test)]
mod tests {
    use super::UnionFind;

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
}

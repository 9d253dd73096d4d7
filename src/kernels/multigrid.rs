//! An aggregation multigrid preconditioner for the conjugate gradients of
//! implicit islands ([`implicit`](crate::kernels::implicit)).
//!
//! An island's matrix is a spring system: `A = M + Σ Bₑ·(eₐ − e_b)(eₐ − e_b)ᵀ`,
//! a mass per unknown and a 3×3 block per spring. Jacobi's preconditioner
//! leaves its conditioning as it is, so conjugate gradients need more
//! iterations the larger and stiffer the island: a 64×64 cloth of stiff
//! springs took 130 to the cap of 200 per pass. This preconditioner
//! couples the unknowns.
//!
//! Once per layout, [`Hierarchy::build`] groups the island's bodies into
//! aggregates of about four, each body with the one it is most stiffly
//! joined to, twice (pairwise matching; a body whose neighbours are all
//! taken joins the stiffest one's group), and again on the aggregates,
//! until the system is small enough to factor within the direct solver's
//! budget ([`ldlt`](crate::kernels::ldlt)). The operator of a coarse level is the
//! Galerkin product `Pᵀ·A·P` of the piecewise-constant prolongation `P`:
//! the same kind of spring system, whose masses are the aggregates' sums
//! and whose springs are the sums of the springs between two aggregates
//! (a spring inside an aggregate vanishes from it). Each pass
//! ([`Numeric::setup`]) sums the island's blocks down the levels, inverts
//! each level's diagonal blocks and factors the coarsest.
//!
//! Each application ([`Numeric::apply`]) is one V-cycle: on each level a
//! damped block-Jacobi sweep, the residual restricted to the next level,
//! then on the way up the correction prolonged and a second sweep. The
//! sweeps are the same before and after, and the coarsest solve is exact,
//! so the cycle is a symmetric positive definite operator, as conjugate
//! gradients need: with `D` the block diagonal, `xᵀAx ≤ 2·xᵀDx` for any
//! spring system, so a sweep damped by `ω < 1` is convergent. Everything
//! runs in a fixed order, so the bits depend on the input alone.

use bevy::math::{Mat3A, Vec3A};

use crate::kernels::ldlt::{Symbolic, analyse, invert_positive, spring_edges};

/// The damping of each block-Jacobi sweep.
const OMEGA: f32 = 0.7;

/// A level's coarsening, found once per layout: which aggregate of the
/// next level each of its unknowns joins, and which of the next level's
/// springs each of its springs adds to.
#[derive(Debug, Clone)]
struct Coarsening {
    /// Per unknown of this level, its aggregate (an unknown of the next).
    aggregate: Vec<u32>,
    /// The next level's unknowns.
    n: usize,
    /// Per spring of this level, the next level's spring it adds to, or
    /// `u32::MAX` for one inside an aggregate (or between fixed ends).
    spring: Vec<u32>,
    /// Per spring of the next level, its ends (`n` for a fixed end).
    ends: Vec<[u32; 2]>,
}

/// The levels of an island's preconditioner, found once per layout.
#[derive(Debug, Clone)]
pub struct Hierarchy {
    /// The unknowns of the island itself.
    n: usize,
    levels: Vec<Coarsening>,
    /// The factor's structure of the coarsest level.
    coarsest: Symbolic,
}

impl Hierarchy {
    /// The levels for a spring system of `n` unknowns whose springs join
    /// `ends` (`n` for a fixed end) with stiffness `weight`: aggregates
    /// formed along the stiffest springs, until the coarsest level factors
    /// within `budget` block updates per unknown and spring. `None` when there is nothing to
    /// coarsen (no spring joins two unknowns), where Jacobi's
    /// preconditioner is as good, and when the coarsening stalls (a level
    /// less than a fifth smaller than the last) on a level that does not
    /// factor within the budget.
    pub fn build(n: usize, ends: &[[u32; 2]], weight: &[f32], budget: usize) -> Option<Hierarchy> {
        let mut levels: Vec<Coarsening> = Vec::new();
        let (mut size, mut ends, mut weight) = (n, ends.to_vec(), weight.to_vec());
        let mut stalled = false;
        loop {
            if !levels.is_empty() {
                let edges = spring_edges(size, &ends);
                if let Some(coarsest) = analyse(size, &edges, budget * (size + ends.len())) {
                    return Some(Hierarchy {
                        n,
                        levels,
                        coarsest,
                    });
                }
                // The last coarsening barely shrank, and what is left does
                // not factor within the budget: Jacobi's preconditioner.
                if stalled {
                    return None;
                }
            }
            // Two rounds of pairs: aggregates of about four.
            let (first, first_n) = pair(size, &ends, &weight);
            let (_, first_ends, first_weight) = contract(size, &first, first_n, &ends, &weight);
            let (second, coarse_n) = pair(first_n, &first_ends, &first_weight);
            if coarse_n == size {
                return None;
            }
            let aggregate: Vec<u32> = first.iter().map(|&a| second[a as usize]).collect();
            let (spring, coarse_ends, coarse_weight) =
                contract(size, &aggregate, coarse_n, &ends, &weight);
            levels.push(Coarsening {
                aggregate,
                n: coarse_n,
                spring,
                ends: coarse_ends.clone(),
            });
            stalled = coarse_n * 5 > size * 4;
            (size, ends, weight) = (coarse_n, coarse_ends, coarse_weight);
        }
    }

    /// The number of levels, the island's own included.
    #[cfg(test)]
    pub fn depth(&self) -> usize {
        self.levels.len() + 1
    }
}

/// Pairs each unknown (in order) with its stiffest unpaired neighbour (the
/// first on a tie): per unknown its group's index, and the number of
/// groups. An unknown whose neighbours are all taken joins its stiffest
/// neighbour's group, so that such unknowns (the leaves of a tree, say) do
/// not stall the coarsening; one with no neighbour is a group of its own.
fn pair(n: usize, ends: &[[u32; 2]], weight: &[f32]) -> (Vec<u32>, usize) {
    let joined = |a: u32, b: u32| a != b && (a as usize) < n && (b as usize) < n;
    // Each unknown's neighbours with the weights joining them, as ranges
    // of one array.
    let mut start = vec![0usize; n + 1];
    for &[a, b] in ends.iter().filter(|&&[a, b]| joined(a, b)) {
        start[a as usize + 1] += 1;
        start[b as usize + 1] += 1;
    }
    for i in 0..n {
        start[i + 1] += start[i];
    }
    let mut fill = start.clone();
    let mut neighbours = vec![(0u32, 0f32); start[n]];
    for (&[a, b], &w) in ends.iter().zip(weight) {
        if joined(a, b) {
            for (from, to) in [(a, b), (b, a)] {
                neighbours[fill[from as usize]] = (to, w);
                fill[from as usize] += 1;
            }
        }
    }
    // Repeats merged, their weights summed in order (the sort is stable).
    let mut merged: Vec<(u32, f32)> = Vec::with_capacity(neighbours.len());
    let mut merged_start = vec![0usize; n + 1];
    for i in 0..n {
        let list = &mut neighbours[start[i]..start[i + 1]];
        list.sort_by_key(|&(j, _)| j);
        for &(j, w) in list.iter() {
            let own = merged.len() > merged_start[i];
            match merged.last_mut() {
                Some((last, sum)) if own && *last == j => *sum += w,
                _ => merged.push((j, w)),
            }
        }
        merged_start[i + 1] = merged.len();
    }
    const NONE: u32 = u32::MAX;
    let stiffest = |list: &[(u32, f32)], free: &dyn Fn(u32) -> bool| {
        list.iter()
            .filter(|&&(j, _)| free(j))
            .fold(None, |best: Option<(u32, f32)>, &(j, w)| {
                if best.is_none_or(|(_, b)| w > b) {
                    Some((j, w))
                } else {
                    best
                }
            })
            .map(|(j, _)| j as usize)
    };
    let mut group = vec![NONE; n];
    let mut groups = 0u32;
    for i in 0..n {
        if group[i] != NONE {
            continue;
        }
        let list = &merged[merged_start[i]..merged_start[i + 1]];
        let unpaired = stiffest(list, &|j| group[j as usize] == NONE);
        match (unpaired, stiffest(list, &|_| true)) {
            (Some(j), _) => {
                group[i] = groups;
                group[j] = groups;
                groups += 1;
            }
            (None, Some(j)) => group[i] = group[j],
            (None, None) => {
                group[i] = groups;
                groups += 1;
            }
        }
    }
    (group, groups as usize)
}

/// The springs of the level whose unknowns join `aggregate` (`n` of them
/// from `size`): per spring its coarse spring (or `u32::MAX`), and the
/// coarse springs' ends and summed weights, numbered in order of first
/// appearance.
fn contract(
    size: usize,
    aggregate: &[u32],
    n: usize,
    ends: &[[u32; 2]],
    weight: &[f32],
) -> (Vec<u32>, Vec<[u32; 2]>, Vec<f32>) {
    let fixed = n as u32;
    let coarse = |i: u32| {
        if i as usize >= size {
            fixed
        } else {
            aggregate[i as usize]
        }
    };
    let mut found = std::collections::HashMap::new();
    let (mut spring, mut coarse_ends, mut coarse_weight) = (Vec::new(), Vec::new(), Vec::new());
    for (&[a, b], &w) in ends.iter().zip(weight) {
        let (a, b) = (coarse(a), coarse(b));
        if a == b {
            spring.push(u32::MAX);
            continue;
        }
        let key = (a.min(b), a.max(b));
        let index = *found.entry(key).or_insert_with(|| {
            coarse_ends.push([key.0, key.1]);
            coarse_weight.push(0.0);
            coarse_ends.len() as u32 - 1
        });
        coarse_weight[index as usize] += w;
        spring.push(index);
    }
    (spring, coarse_ends, coarse_weight)
}

/// One level's numbers in a pass: its masses and spring blocks, the
/// inverses of its diagonal blocks, and the V-cycle's vectors (each with
/// one entry more, the fixed unknown `n`, which stays zero).
#[derive(Debug, Default)]
struct Level {
    mass: Vec<f32>,
    blocks: Vec<Mat3A>,
    inverse: Vec<Mat3A>,
    x: Vec<Vec3A>,
    r: Vec<Vec3A>,
    t: Vec<Vec3A>,
}

/// A hierarchy's numbers in a pass: reusable buffers.
#[derive(Debug, Default)]
pub struct Numeric {
    levels: Vec<Level>,
    factor: Vec<Mat3A>,
    column: Vec<Mat3A>,
    y: Vec<Vec3A>,
    solution: Vec<Vec3A>,
}

/// A spring system: per unknown its mass, per spring its block and ends.
pub type System<'a> = (&'a [f32], &'a [Mat3A], &'a [[u32; 2]]);

impl Numeric {
    /// Sums the island's system `fine` (as [`Hierarchy::build`] saw its
    /// ends) down the levels and factors the coarsest; false if a block
    /// cannot be inverted (the preconditioner is then not usable).
    pub fn setup(&mut self, hierarchy: &Hierarchy, (mass, blocks, ends): System) -> bool {
        let depth = hierarchy.levels.len() + 1;
        self.levels.resize_with(depth, Default::default);
        let Some((first, rest)) = self.levels.split_first_mut() else {
            return false;
        };
        if !diagonal_inverses((mass, blocks, ends), &mut first.inverse) {
            return false;
        }
        let n = hierarchy.n;
        for v in [&mut first.x, &mut first.r, &mut first.t] {
            v.clear();
            v.resize(n + 1, Vec3A::ZERO);
        }
        let mut fine: (&[f32], &[Mat3A]) = (mass, blocks);
        for (coarsening, level) in hierarchy.levels.iter().zip(rest.iter_mut()) {
            level.mass.clear();
            level.mass.resize(coarsening.n, 0.0);
            for (&m, &a) in fine.0.iter().zip(&coarsening.aggregate) {
                level.mass[a as usize] += m;
            }
            level.blocks.clear();
            level.blocks.resize(coarsening.ends.len(), Mat3A::ZERO);
            for (&block, &s) in fine.1.iter().zip(&coarsening.spring) {
                if s != u32::MAX {
                    level.blocks[s as usize] += block;
                }
            }
            let system = (&level.mass[..], &level.blocks[..], &coarsening.ends[..]);
            if !diagonal_inverses(system, &mut level.inverse) {
                return false;
            }
            for v in [&mut level.x, &mut level.r, &mut level.t] {
                v.clear();
                v.resize(coarsening.n + 1, Vec3A::ZERO);
            }
            fine = (&level.mass, &level.blocks);
        }
        // The coarsest level's matrix, into its factor's blocks.
        let last = hierarchy.levels.last().expect("a hierarchy has a level");
        let symbolic = &hierarchy.coarsest;
        self.factor.clear();
        self.factor.resize(symbolic.blocks(), Mat3A::ZERO);
        for (i, &m) in fine.0.iter().enumerate() {
            self.factor[symbolic.diagonal(i as u32)] =
                Mat3A::from_diagonal(bevy::math::Vec3::splat(m));
        }
        let coarse_n = last.n;
        for (e, (&[a, b], &block)) in last.ends.iter().zip(fine.1).enumerate() {
            for i in [a, b] {
                if (i as usize) < coarse_n {
                    self.factor[symbolic.diagonal(i)] += block;
                }
            }
            if let Some(entry) = symbolic.edge(e)
                && (a as usize) < coarse_n
                && (b as usize) < coarse_n
            {
                self.factor[entry] -= block;
            }
        }
        self.solution.clear();
        self.solution.resize(coarse_n, Vec3A::ZERO);
        symbolic.factor(&mut self.factor, &mut self.column)
    }

    /// `z = B·r`, one V-cycle from zero on the residual `r` of the island's
    /// system `fine` (the one given to [`setup`](Self::setup)).
    pub fn apply(&mut self, hierarchy: &Hierarchy, fine: System, r: &[Vec3A], z: &mut [Vec3A]) {
        let n = hierarchy.n;
        let depth = hierarchy.levels.len();
        self.levels[0].r[..n].copy_from_slice(r);
        // Down: a sweep from zero, and the residual restricted.
        for (l, coarsening) in hierarchy.levels.iter().enumerate() {
            let Sweep {
                system,
                inverse,
                x,
                r,
                t,
                below,
            } = sweep(&mut self.levels, hierarchy, fine, l);
            for i in 0..inverse.len() {
                x[i] = OMEGA * (inverse[i] * r[i]);
            }
            residual(system, x, r, t);
            let next = &mut below.r;
            next.fill(Vec3A::ZERO);
            for (&a, &t) in coarsening.aggregate.iter().zip(t.iter()) {
                next[a as usize] += t;
            }
        }
        // The coarsest level, exactly.
        let coarse_n = hierarchy.levels[depth - 1].n;
        let level = &mut self.levels[depth];
        let symbolic = &hierarchy.coarsest;
        symbolic.solve(
            &self.factor,
            &level.r[..coarse_n],
            &mut self.solution,
            &mut self.y,
        );
        level.x[..coarse_n].copy_from_slice(&self.solution);
        // Up: the correction prolonged, and a second sweep.
        for (l, coarsening) in hierarchy.levels.iter().enumerate().rev() {
            let Sweep {
                system,
                inverse,
                x,
                r,
                t,
                below,
            } = sweep(&mut self.levels, hierarchy, fine, l);
            let coarse = &below.x;
            for (x, &a) in x.iter_mut().zip(&coarsening.aggregate) {
                *x += coarse[a as usize];
            }
            residual(system, x, r, t);
            for i in 0..inverse.len() {
                x[i] += OMEGA * (inverse[i] * t[i]);
            }
        }
        z.copy_from_slice(&self.levels[0].x[..n]);
    }
}

/// Level `l` of a V-cycle, as its sweeps use it.
struct Sweep<'a> {
    /// The island's own system for the first level, else the level's
    /// masses and blocks with the ends its coarsening found.
    system: System<'a>,
    inverse: &'a [Mat3A],
    x: &'a mut [Vec3A],
    r: &'a [Vec3A],
    t: &'a mut [Vec3A],
    /// The level below.
    below: &'a mut Level,
}

fn sweep<'a>(
    levels: &'a mut [Level],
    hierarchy: &'a Hierarchy,
    fine: System<'a>,
    l: usize,
) -> Sweep<'a> {
    let (here, below) = levels.split_at_mut(l + 1);
    let Level {
        mass,
        blocks,
        inverse,
        x,
        r,
        t,
    } = &mut here[l];
    let system = match l {
        0 => fine,
        _ => (&mass[..], &blocks[..], &hierarchy.levels[l - 1].ends[..]),
    };
    Sweep {
        system,
        inverse,
        x,
        r,
        t,
        below: &mut below[0],
    }
}

/// `t = r − A·x` for the system `(mass, blocks, ends)`; `x` and `t` have
/// one entry more than the unknowns (the fixed unknown, `x[n] = 0`).
fn residual((mass, blocks, ends): System, x: &[Vec3A], r: &[Vec3A], t: &mut [Vec3A]) {
    let n = mass.len();
    for i in 0..n {
        t[i] = r[i] - x[i] * mass[i];
    }
    for (&[a, b], block) in ends.iter().zip(blocks) {
        let (a, b) = (a as usize, b as usize);
        let f = *block * (x[a] - x[b]);
        t[a] -= f;
        t[b] += f;
    }
    t[n] = Vec3A::ZERO;
}

/// The inverses of the system's diagonal blocks (mass plus the blocks of
/// its springs) into `inverse`; false if one is not positive definite.
fn diagonal_inverses((mass, blocks, ends): System, inverse: &mut Vec<Mat3A>) -> bool {
    let n = mass.len();
    inverse.clear();
    inverse.extend(
        mass.iter()
            .map(|&m| Mat3A::from_diagonal(bevy::math::Vec3::splat(m))),
    );
    inverse.push(Mat3A::ZERO);
    for (&[a, b], &block) in ends.iter().zip(blocks) {
        inverse[a as usize] += block;
        inverse[b as usize] += block;
    }
    inverse.truncate(n);
    for d in inverse.iter_mut() {
        match invert_positive(*d) {
            Some(i) => *d = i,
            None => return false,
        }
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The direct solver's budget for the coarsest level.
    const BUDGET: usize = 8;

    /// A square grid of `side × side` unknowns, row by row, joined to
    /// their neighbours along rows, columns and diagonals (stiffness 2 and
    /// 1), its first unknown also to a fixed end.
    fn grid(side: usize) -> (usize, Vec<[u32; 2]>, Vec<f32>) {
        let n = side * side;
        let at = |i: usize, j: usize| (i * side + j) as u32;
        let (mut ends, mut weight) = (vec![[0, n as u32]], vec![2.0]);
        for i in 0..side {
            for j in 0..side {
                let mut join = |b: u32, w: f32| {
                    ends.push([at(i, j), b]);
                    weight.push(w);
                };
                if j + 1 < side {
                    join(at(i, j + 1), 2.0);
                }
                if i + 1 < side {
                    join(at(i + 1, j), 2.0);
                }
                if i + 1 < side && j + 1 < side {
                    join(at(i + 1, j + 1), 1.0);
                }
            }
        }
        (n, ends, weight)
    }

    /// A reproducible sequence in `[-1, 1)`.
    fn noise(seed: &mut u32) -> f32 {
        *seed = seed.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
        (*seed >> 8) as f32 / (1u32 << 23) as f32 - 1.0
    }

    /// Every unknown joins one aggregate of at most four, the levels
    /// shrink, and the coarsest is small.
    #[test]
    fn aggregates_cover_every_unknown_in_fours() {
        let (n, ends, weight) = grid(32);
        let hierarchy = Hierarchy::build(n, &ends, &weight, BUDGET).expect("a grid coarsens");
        assert!(hierarchy.depth() >= 3, "{}", hierarchy.depth());
        let mut size = n;
        for level in &hierarchy.levels {
            assert_eq!(level.aggregate.len(), size);
            let mut members = vec![0; level.n];
            for &a in &level.aggregate {
                members[a as usize] += 1;
            }
            assert!(members.iter().all(|&m| (1..=4).contains(&m)), "{members:?}");
            assert!(level.n * 3 <= size, "{} from {size}", level.n);
            size = level.n;
        }
        assert!(size <= 64, "the coarsest has {size} unknowns");
        // Nothing to join: nothing to coarsen.
        assert!(Hierarchy::build(4, &[[0, 4]], &[1.0], BUDGET).is_none());
    }

    /// A comb (a chain of 50 with three weaker leaves on each, the leaves
    /// numbered last) coarsens at the same pace: the leaves, whose
    /// neighbours are taken by the time their turn comes, join their
    /// neighbour's group instead of staying alone.
    #[test]
    fn leaves_join_their_neighbours_group() {
        let spine = 50;
        let n = spine * 4;
        let (mut ends, mut weight) = (vec![[0, n as u32]], vec![2.0]);
        for i in 0..spine as u32 - 1 {
            ends.push([i, i + 1]);
            weight.push(2.0);
        }
        for leaf in spine as u32..n as u32 {
            ends.push([(leaf - spine as u32) / 3, leaf]);
            weight.push(1.0);
        }
        let hierarchy = Hierarchy::build(n, &ends, &weight, BUDGET).expect("a comb coarsens");
        let first = &hierarchy.levels[0];
        assert!(first.n <= spine / 4 + 1, "{} aggregates from {n}", first.n);
        for leaf in spine..n {
            let stem = (leaf - spine) / 3;
            assert_eq!(first.aggregate[leaf], first.aggregate[stem], "leaf {leaf}");
        }
    }

    /// The V-cycle is a symmetric positive definite operator, as
    /// conjugate gradients need: `⟨B·r, s⟩ = ⟨r, B·s⟩` to rounding, and
    /// `⟨B·r, r⟩ > 0`, on random positive semi-definite spring blocks.
    #[test]
    fn the_v_cycle_is_symmetric_and_positive() {
        let (n, ends, weight) = grid(20);
        let hierarchy = Hierarchy::build(n, &ends, &weight, BUDGET).expect("a grid coarsens");
        let mut seed = 7;
        let mass: Vec<f32> = (0..n).map(|_| 1e-3 * (1.5 + noise(&mut seed))).collect();
        let blocks: Vec<Mat3A> = weight
            .iter()
            .map(|&w| {
                let d = Vec3A::new(noise(&mut seed), noise(&mut seed), 1.0).normalize();
                let outer = Mat3A::from_cols(d * d.x, d * d.y, d * d.z);
                outer * (0.5 * w) + Mat3A::IDENTITY * (0.05 * w * (1.0 + noise(&mut seed)))
            })
            .collect();
        let system = (&mass[..], &blocks[..], &ends[..]);
        let mut numeric = Numeric::default();
        assert!(numeric.setup(&hierarchy, system));
        let vector = |seed: &mut u32| -> Vec<Vec3A> {
            (0..n)
                .map(|_| Vec3A::new(noise(seed), noise(seed), noise(seed)))
                .collect()
        };
        let dot = |a: &[Vec3A], b: &[Vec3A]| a.iter().zip(b).map(|(a, b)| a.dot(*b)).sum::<f32>();
        let norm = |a: &[Vec3A]| dot(a, a).sqrt();
        for _ in 0..5 {
            let (r, s) = (vector(&mut seed), vector(&mut seed));
            let (mut br, mut bs) = (vec![Vec3A::ZERO; n], vec![Vec3A::ZERO; n]);
            numeric.apply(&hierarchy, system, &r, &mut br);
            numeric.apply(&hierarchy, system, &s, &mut bs);
            let (left, right) = (dot(&br, &s), dot(&r, &bs));
            let scale = norm(&br) * norm(&s);
            assert!(
                (left - right).abs() <= 1e-4 * scale,
                "{left} against {right}"
            );
            assert!(dot(&br, &r) > 0.0);
        }
    }
}

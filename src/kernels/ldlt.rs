//! A sparse block `LDLᵀ` factorisation of a symmetric positive definite
//! matrix of 3×3 blocks: the direct solver of implicit islands.
//!
//! [`analyse`] orders the unknowns by minimum degree (ties to the lower
//! index) and finds the structure of the factor, fill included, once per
//! island layout; [`Symbolic::factor_solve`] (or [`Symbolic::factor`] and
//! [`Symbolic::solve`]) then runs on the numbers every pass. A chain or a
//! tree is ordered from its leaves in and has no fill, so its factor costs
//! one block inverse and two or three block products per unknown: a rope
//! is solved exactly in time linear in its
//! length, where conjugate gradients need a number of iterations that
//! grows with its length and stiffness. Everything runs in a fixed order,
//! so the bits depend on the input alone.

use core::cmp::Reverse;
use std::collections::BinaryHeap;

use bevy::math::{Mat3A, Vec3A};

/// The ordering and the structure of a factor.
///
/// Blocks of the matrix and of its factor live in one array (see
/// [`Symbolic::blocks`]): the diagonal block of the unknown eliminated
/// `p`-th at `p`, then each entry below the diagonal, column by column.
#[derive(Debug, Clone, Default)]
pub struct Symbolic {
    /// The unknown eliminated `p`-th, and each unknown's place in that
    /// order; whether that order is the unknowns' own (a chain numbered
    /// from one end: nothing to permute).
    order: Vec<u32>,
    position: Vec<u32>,
    in_order: bool,
    /// Each column's one entry (if any) is in the next column's row: a
    /// chain, whose factor and solve run as tight loops.
    chain: bool,
    /// Column `p` of the factor: its entries `start[p]..start[p + 1]`.
    start: Vec<u32>,
    /// Per entry, its row (an elimination position after its column's).
    rows: Vec<u32>,
    /// Per column, for each pair of its entries `(a, b)` with `b ≤ a`
    /// (in order), the block that `L_a·D·L_bᵀ` is taken from.
    updates: Vec<u32>,
    /// Per edge given to [`analyse`], the block its value goes to (or
    /// `u32::MAX` for an edge from an unknown to itself).
    edges: Vec<u32>,
}

/// Springs between unknowns as edges for [`analyse`]: each spring's ends
/// (`n`, one past the last unknown, for a fixed end); a spring to a fixed
/// end couples its other end to itself.
pub fn spring_edges(n: usize, ends: &[[u32; 2]]) -> Vec<(u32, u32)> {
    ends.iter()
        .map(|&[a, b]| match (a as usize == n, b as usize == n) {
            (false, false) => (a, b),
            (true, false) => (b, b),
            (false, true) => (a, a),
            (true, true) => (0, 0),
        })
        .collect()
}

/// Orders `n` unknowns coupled by `edges` (pairs of unknowns, repeats
/// allowed) and finds the factor's structure; `None` when the factor would
/// need more than `budget` block updates (the work of a factorisation
/// beyond its own entries).
pub fn analyse(n: usize, edges: &[(u32, u32)], budget: usize) -> Option<Symbolic> {
    let mut adjacent: Vec<Vec<u32>> = vec![Vec::new(); n];
    for &(a, b) in edges {
        if a != b {
            adjacent[a as usize].push(b);
            adjacent[b as usize].push(a);
        }
    }
    for list in &mut adjacent {
        list.sort_unstable();
        list.dedup();
    }
    // Minimum degree: eliminate the unknown with the fewest neighbours
    // left, then join those neighbours to each other (the fill). Ties go
    // to the unknown updated last (so a chain is eliminated from one end
    // to the other, in one run), then to the lower index.
    let mut heap: BinaryHeap<Reverse<(usize, i64, u32)>> = adjacent
        .iter()
        .enumerate()
        .map(|(i, list)| Reverse((list.len(), i as i64, i as u32)))
        .collect();
    let mut eliminated = vec![false; n];
    let mut order = Vec::with_capacity(n);
    let mut columns: Vec<Vec<u32>> = Vec::with_capacity(n);
    let (mut work, mut updated) = (0usize, 0i64);
    while let Some(Reverse((degree, _, v))) = heap.pop() {
        let v = v as usize;
        if eliminated[v] || degree != adjacent[v].len() {
            continue;
        }
        eliminated[v] = true;
        order.push(v as u32);
        let clique = core::mem::take(&mut adjacent[v]);
        work += clique.len() * (clique.len() + 1) / 2;
        if work > budget {
            return None;
        }
        for &u in &clique {
            let list = &mut adjacent[u as usize];
            let merged = merge_without(list, &clique, [u, v as u32]);
            *list = merged;
            updated -= 1;
            heap.push(Reverse((list.len(), updated, u)));
        }
        columns.push(clique);
    }
    let mut position = vec![0u32; n];
    for (p, &v) in order.iter().enumerate() {
        position[v as usize] = p as u32;
    }
    let in_order = order.iter().enumerate().all(|(p, &v)| p == v as usize);
    let mut symbolic = Symbolic {
        order,
        position,
        in_order,
        start: Vec::with_capacity(n + 1),
        ..Symbolic::default()
    };
    for column in &mut columns {
        symbolic.start.push(symbolic.rows.len() as u32);
        let first = symbolic.rows.len();
        symbolic
            .rows
            .extend(column.iter().map(|&u| symbolic.position[u as usize]));
        symbolic.rows[first..].sort_unstable();
    }
    symbolic.start.push(symbolic.rows.len() as u32);
    symbolic.chain = (0..n).all(|p| {
        let column = symbolic.column(p);
        column.len() == usize::from(p + 1 < n) && column.start == p
    }) && symbolic
        .rows
        .iter()
        .enumerate()
        .all(|(e, &row)| row as usize == e + 1);
    symbolic.updates.reserve(work);
    for p in 0..n {
        let column = symbolic.column(p);
        for a in column.clone() {
            for b in column.start..=a {
                let (ra, rb) = (symbolic.rows[a], symbolic.rows[b]);
                let target = if a == b { ra } else { symbolic.entry(ra, rb) };
                symbolic.updates.push(target);
            }
        }
    }
    symbolic.edges = edges
        .iter()
        .map(|&(a, b)| {
            if a == b {
                return u32::MAX;
            }
            let (pa, pb) = (symbolic.position[a as usize], symbolic.position[b as usize]);
            symbolic.entry(pa.max(pb), pa.min(pb))
        })
        .collect();
    Some(symbolic)
}

/// `list ∪ clique`, sorted, without the two unknowns `skip`.
fn merge_without(list: &[u32], clique: &[u32], skip: [u32; 2]) -> Vec<u32> {
    let mut merged = Vec::with_capacity(list.len() + clique.len());
    let (mut i, mut j) = (0, 0);
    while i < list.len() || j < clique.len() {
        let next = match (list.get(i), clique.get(j)) {
            (Some(&a), Some(&b)) if a == b => {
                i += 1;
                j += 1;
                a
            }
            (Some(&a), Some(&b)) if a < b => {
                i += 1;
                a
            }
            (Some(&a), None) => {
                i += 1;
                a
            }
            (_, Some(&b)) => {
                j += 1;
                b
            }
            (None, None) => unreachable!(),
        };
        if !skip.contains(&next) {
            merged.push(next);
        }
    }
    merged
}

impl Symbolic {
    /// The number of blocks of the matrix and of its factor: one per
    /// unknown, then one per entry below the diagonal.
    pub fn blocks(&self) -> usize {
        self.order.len() + self.rows.len()
    }

    /// The block of the diagonal of unknown `i`.
    pub fn diagonal(&self, i: u32) -> usize {
        self.position[i as usize] as usize
    }

    /// The block an edge given to [`analyse`] adds its value to (its
    /// index in the edge list), or `None` for an edge from an unknown to
    /// itself.
    pub fn edge(&self, edge: usize) -> Option<usize> {
        let block = self.edges[edge];
        (block != u32::MAX).then_some(block as usize)
    }

    /// The work of a factorisation: block updates, then blocks.
    #[cfg(test)]
    pub fn cost(&self) -> (usize, usize) {
        (self.updates.len(), self.blocks())
    }

    fn column(&self, p: usize) -> core::ops::Range<usize> {
        self.start[p] as usize..self.start[p + 1] as usize
    }

    /// The block of entry (`row`, `col`), `row > col`, which must exist.
    fn entry(&self, row: u32, col: u32) -> u32 {
        let range = self.column(col as usize);
        let at = self.rows[range.clone()]
            .binary_search(&row)
            .expect("the fill holds every entry an update writes");
        (self.order.len() + range.start + at) as u32
    }

    /// Factors the matrix whose blocks `blocks` holds (symmetric: the
    /// entries below the diagonal only) in place: the diagonal blocks
    /// become `D⁻¹`, the entries `L`. `column` is scratch. False if a
    /// pivot is not positive definite or not finite (the matrix is then
    /// not usable).
    pub fn factor(&self, blocks: &mut [Mat3A], column: &mut Vec<Mat3A>) -> bool {
        if self.chain {
            return factor_chain(blocks, self.order.len());
        }
        let n = self.order.len();
        let mut update = self.updates.iter();
        for p in 0..n {
            let Some(inverse) = invert_positive(blocks[p]) else {
                return false;
            };
            blocks[p] = inverse;
            let entries = self.column(p);
            column.clear();
            column.extend_from_slice(&blocks[n + entries.start..n + entries.end]);
            for l in &mut blocks[n + entries.start..n + entries.end] {
                *l *= inverse;
            }
            for a in 0..entries.len() {
                let l = blocks[n + entries.start + a];
                for m in &column[..=a] {
                    let target = *update.next().expect("one update per pair") as usize;
                    blocks[target] -= l * m.transpose();
                }
            }
        }
        true
    }

    /// Factors the matrix in `blocks` (as [`factor`](Self::factor)) and
    /// solves it for the right-hand side `b` into `x` (as
    /// [`solve`](Self::solve)), with the same bits; `column` and `y` are
    /// scratch. A chain does both in two sweeps: the forward substitution
    /// rides along the factorisation, whose pivots depend each on the last,
    /// and the diagonal along the back substitution. False if the
    /// factorisation refuses (then `x` holds no solution).
    pub fn factor_solve(
        &self,
        blocks: &mut [Mat3A],
        b: &[Vec3A],
        x: &mut [Vec3A],
        (column, y): (&mut Vec<Mat3A>, &mut Vec<Vec3A>),
    ) -> bool {
        if self.chain {
            return self.in_elimination_order(b, x, y, |y| factor_solve_chain(blocks, y));
        }
        if !self.factor(blocks, column) {
            return false;
        }
        self.solve(blocks, b, x, y);
        true
    }

    /// Solves with a factor from [`factor`](Self::factor): `x` for the
    /// right-hand side `b` (both by unknown); `y` is scratch.
    pub fn solve(&self, blocks: &[Mat3A], b: &[Vec3A], x: &mut [Vec3A], y: &mut Vec<Vec3A>) {
        self.in_elimination_order(b, x, y, |y| {
            self.substitute(blocks, y);
            true
        });
    }

    /// Runs `solve` on `b` laid out in elimination order (in `x` itself
    /// when that is the unknowns' own order, else in the scratch `y`) and
    /// puts the result back in `x` by unknown; what `solve` returns.
    fn in_elimination_order(
        &self,
        b: &[Vec3A],
        x: &mut [Vec3A],
        y: &mut Vec<Vec3A>,
        solve: impl FnOnce(&mut [Vec3A]) -> bool,
    ) -> bool {
        if self.in_order {
            x.copy_from_slice(b);
            return solve(x);
        }
        y.clear();
        y.extend(self.order.iter().map(|&v| b[v as usize]));
        if !solve(y) {
            return false;
        }
        for (p, &v) in self.order.iter().enumerate() {
            x[v as usize] = y[p];
        }
        true
    }

    /// `y ← (L·D·Lᵀ)⁻¹·y`, in elimination order.
    fn substitute(&self, blocks: &[Mat3A], y: &mut [Vec3A]) {
        let n = self.order.len();
        if self.chain {
            let (inverses, lower) = blocks.split_at(n);
            return substitute_chain(inverses, lower, y);
        }
        for p in 0..n {
            let yp = y[p];
            for e in self.column(p) {
                y[self.rows[e] as usize] -= blocks[n + e] * yp;
            }
        }
        for p in 0..n {
            y[p] = blocks[p] * y[p];
        }
        for p in (0..n).rev() {
            let mut sum = y[p];
            for e in self.column(p) {
                sum -= transposed_times(blocks[n + e], y[self.rows[e] as usize]);
            }
            y[p] = sum;
        }
    }
}

/// [`Symbolic::factor`] for a chain: entry `p` (at `n + p`) is the
/// coupling of unknowns `p + 1` and `p`.
fn factor_chain(blocks: &mut [Mat3A], n: usize) -> bool {
    let (pivots, lower) = blocks.split_at_mut(n);
    (0..n).all(|p| chain_pivot(pivots, lower, p).is_some())
}

/// Pivot `p` of a chain's factorisation: inverts it and, unless it is the
/// last, turns its coupling `A` into `L = A·D⁻¹` and takes `L·A` from the
/// next pivot. Returns `L` (`None` for the last pivot), or `None` if the
/// pivot is not positive definite.
#[inline(always)]
fn chain_pivot(pivots: &mut [Mat3A], lower: &mut [Mat3A], p: usize) -> Option<Option<Mat3A>> {
    let (adjugate, scale) = inverse_parts(pivots[p])?;
    let inverse = adjugate * scale;
    pivots[p] = inverse;
    let (Some(coupling), Some(next)) = (lower.get_mut(p), pivots.get_mut(p + 1)) else {
        return Some(None);
    };
    // A chain takes no fill: its couplings are the matrix's own,
    // symmetric, so `L·Aᵀ = L·A = A·adj·A·s`. Each pivot waits for the
    // last; in this form the next one waits for two block products and
    // not for the division in `s` as well.
    let a = *coupling;
    let l = a * inverse;
    // `adj` holds the pivot's size squared: the product can leave `f32`
    // where `L·A` does not (a coupling of 1e10 on a pivot of 1e10 makes
    // 1e40); then it is taken as `L·A`.
    let update = a * (adjugate * a);
    *next -= if update.is_finite() {
        update * scale
    } else {
        l * a
    };
    *coupling = l;
    Some(Some(l))
}

/// [`Symbolic::factor_solve`] for a chain, on `y` in elimination order:
/// [`factor_chain`] with the forward substitution of [`substitute_chain`]
/// in the same sweep, then its diagonal and back substitution in one
/// sweep; the same arithmetic, so the same bits.
fn factor_solve_chain(blocks: &mut [Mat3A], y: &mut [Vec3A]) -> bool {
    let n = y.len();
    let (pivots, lower) = blocks.split_at_mut(n);
    for p in 0..n {
        match chain_pivot(pivots, lower, p) {
            None => return false,
            Some(Some(l)) => {
                let yp = y[p];
                y[p + 1] -= l * yp;
            }
            Some(None) => {}
        }
    }
    let last = n.saturating_sub(1);
    if let (Some(inverse), Some(y)) = (pivots.get(last), y.get_mut(last)) {
        *y = *inverse * *y;
    }
    for p in (0..last).rev() {
        let (l, next) = (lower[p], y[p + 1]);
        y[p] = pivots[p] * y[p] - transposed_times(l, next);
    }
    true
}

/// `lᵀ·v`, as a product with the transposed block (which does not wait
/// for `v`) rather than three dot products.
#[inline(always)]
fn transposed_times(l: Mat3A, v: Vec3A) -> Vec3A {
    l.transpose() * v
}

/// [`Symbolic::substitute`] for a chain.
fn substitute_chain(inverses: &[Mat3A], lower: &[Mat3A], y: &mut [Vec3A]) {
    for (p, l) in lower.iter().enumerate() {
        let yp = y[p];
        y[p + 1] -= *l * yp;
    }
    for (y, inverse) in y.iter_mut().zip(inverses) {
        *y = *inverse * *y;
    }
    for (p, l) in lower.iter().enumerate().rev() {
        y[p] -= transposed_times(*l, y[p + 1]);
    }
}

/// The inverse of a symmetric block whose leading minors are all positive
/// and whose determinant is finite; `None` otherwise.
#[inline]
pub fn invert_positive(m: Mat3A) -> Option<Mat3A> {
    inverse_parts(m).map(|(adjugate, scale)| adjugate * scale)
}

/// [`invert_positive`] as a block and a factor: the adjugate and
/// `1 / det`, or (for a determinant that overflows or underflows) the
/// inverse and 1.
#[inline(always)]
fn inverse_parts(m: Mat3A) -> Option<(Mat3A, f32)> {
    // Most blocks invert as they are: the pivots of a chain depend each on
    // the last, so a scaling (a division) on every one would lengthen the
    // whole factorisation.
    let (x, y, z) = (m.x_axis, m.y_axis, m.z_axis);
    let (cx, cy, cz) = (y.cross(z), z.cross(x), x.cross(y));
    let det = x.dot(cx);
    let minor = x.x * y.y - x.y * y.x;
    // The determinant kept within 2^±60 (a block's size within about
    // 2^±20), so that neither the adjugate, nor its products with
    // couplings of the same order, nor `1 / det` leave the normal range.
    if x.x > 0.0
        && minor > 0.0
        && (DET_MIN..=DET_MAX).contains(&det)
        && (cx.is_finite() & cy.is_finite() & cz.is_finite())
    {
        return Some((Mat3A::from_cols(cx, cy, cz), det.recip()));
    }
    invert_scaled(m).map(|inverse| (inverse, 1.0))
}

/// The determinants [`inverse_parts`] inverts without scaling: 2^−60 and
/// 2^60.
const DET_MIN: f32 = 1.0 / (1u64 << 60) as f32;
const DET_MAX: f32 = (1u64 << 60) as f32;

/// [`invert_positive`] for a block whose determinant overflows or
/// underflows (or that is not positive definite, which this finds again).
#[cold]
fn invert_scaled(m: Mat3A) -> Option<Mat3A> {
    // Scaled by its trace first, so that the determinant neither overflows
    // nor underflows for blocks of any size.
    let trace = m.x_axis.x + m.y_axis.y + m.z_axis.z;
    if !(trace > 0.0 && trace.is_finite()) {
        return None;
    }
    let scale = 3.0 / trace;
    let (x, y, z) = (m.x_axis * scale, m.y_axis * scale, m.z_axis * scale);
    // The cofactors: the rows of the adjugate, and for a symmetric block
    // (as every pivot is, up to rounding) its columns too.
    let (cx, cy, cz) = (y.cross(z), z.cross(x), x.cross(y));
    let det = x.dot(cx);
    let minor = x.x * y.y - x.y * y.x;
    if !(x.x > 0.0 && minor > 0.0 && det > 0.0 && det.is_finite()) {
        return None;
    }
    // A cofactor that overflows shows as a non-finite solution, which the
    // caller refuses.
    Some(Mat3A::from_cols(cx, cy, cz) * (scale / det))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A symmetric positive definite block, different per `seed`.
    fn spd(seed: f32) -> Mat3A {
        let a = Mat3A::from_cols(
            Vec3A::new(1.0 + seed, 0.3, -0.2),
            Vec3A::new(0.1 * seed, 2.0, 0.4),
            Vec3A::new(-0.5, 0.2, 1.5 + 0.1 * seed),
        );
        a * a.transpose() + Mat3A::IDENTITY * 4.0
    }

    /// A small symmetric coupling block.
    fn coupling(seed: f32) -> Mat3A {
        let u = Vec3A::new(1.0, seed, 0.5).normalize();
        -Mat3A::from_cols(u * u.x, u * u.y, u * u.z)
    }

    /// Multiplies the matrix given as diagonal blocks and edge blocks.
    fn multiply(diag: &[Mat3A], edges: &[(u32, u32)], off: &[Mat3A], x: &[Vec3A]) -> Vec<Vec3A> {
        let mut out: Vec<Vec3A> = diag.iter().zip(x).map(|(d, x)| *d * *x).collect();
        for (&(a, b), m) in edges.iter().zip(off) {
            if a != b {
                out[a as usize] += *m * x[b as usize];
                out[b as usize] += *m * x[a as usize];
            }
        }
        out
    }

    /// Factors and solves, returning the solution, or `None` if the
    /// factorisation refused.
    fn solve(
        n: usize,
        diag: &[Mat3A],
        edges: &[(u32, u32)],
        off: &[Mat3A],
        b: &[Vec3A],
    ) -> Option<Vec<Vec3A>> {
        let symbolic = analyse(n, edges, usize::MAX).unwrap();
        let mut blocks = vec![Mat3A::ZERO; symbolic.blocks()];
        for (i, d) in diag.iter().enumerate() {
            blocks[symbolic.diagonal(i as u32)] += *d;
        }
        for (e, m) in off.iter().enumerate() {
            if let Some(block) = symbolic.edge(e) {
                blocks[block] += *m;
            }
        }
        let mut factored = blocks.clone();
        let mut x = vec![Vec3A::ZERO; n];
        let solved =
            symbolic.factor_solve(&mut blocks, b, &mut x, (&mut Vec::new(), &mut Vec::new()));
        // The factorisation and the solve apart give the same bits.
        let factors = symbolic.factor(&mut factored, &mut Vec::new());
        assert_eq!(solved, factors);
        if !solved {
            return None;
        }
        let mut apart = vec![Vec3A::ZERO; n];
        symbolic.solve(&factored, b, &mut apart, &mut Vec::new());
        assert_eq!(x, apart, "fused and apart");
        assert_eq!(blocks, factored);
        Some(x)
    }

    /// Checks `A·x = b` to a relative tolerance.
    fn check(diag: &[Mat3A], edges: &[(u32, u32)], off: &[Mat3A], b: &[Vec3A], x: &[Vec3A]) {
        let ax = multiply(diag, edges, off, x);
        let scale: f64 = b
            .iter()
            .map(|b| b.as_dvec3().length_squared())
            .sum::<f64>()
            .sqrt();
        let error: f64 = ax
            .iter()
            .zip(b)
            .map(|(a, b)| (a.as_dvec3() - b.as_dvec3()).length_squared())
            .sum::<f64>()
            .sqrt();
        assert!(error <= 1e-5 * scale, "residual {error} against {scale}");
    }

    /// A chain numbered out of order, one in order (the chain's own
    /// loops), a tree, a grid with diagonals (fill) and repeated edges:
    /// `A·x = b` in every case.
    #[test]
    fn solves_chains_trees_and_grids() {
        let chain: Vec<(u32, u32)> = (0..19)
            .map(|i| ((i * 7) % 20, ((i + 1) * 7) % 20))
            .collect();
        let tree: Vec<(u32, u32)> = (1..31).map(|i| (i, (i - 1) / 2)).collect();
        let mut grid = Vec::new();
        let side = 8u32;
        for y in 0..side {
            for x in 0..side {
                let i = y * side + x;
                if x + 1 < side {
                    grid.push((i, i + 1));
                }
                if y + 1 < side {
                    grid.push((i, i + side));
                    grid.push((i, i + side));
                }
                if x + 1 < side && y + 1 < side {
                    grid.push((i, i + side + 1));
                }
            }
        }
        let in_order: Vec<(u32, u32)> = (0..29).map(|i| (i, i + 1)).collect();
        let cases = [
            (20, chain),
            (30, in_order),
            (31, tree),
            ((side * side) as usize, grid),
        ];
        for (n, edges) in cases {
            let diag: Vec<Mat3A> = (0..n).map(|i| spd(i as f32 * 0.37)).collect();
            let off: Vec<Mat3A> = (0..edges.len())
                .map(|e| coupling(e as f32 * 0.11))
                .collect();
            let b: Vec<Vec3A> = (0..n)
                .map(|i| Vec3A::new(i as f32, 1.0 - i as f32 * 0.5, (i % 3) as f32))
                .collect();
            let x = solve(n, &diag, &edges, &off, &b).expect("positive definite");
            check(&diag, &edges, &off, &b, &x);
        }
    }

    /// A chain and a tree take no fill: one update per entry below the
    /// diagonal, plus one per unknown's diagonal.
    #[test]
    fn chains_and_trees_take_no_fill() {
        let chain: Vec<(u32, u32)> = (0..99).map(|i| (i, i + 1)).collect();
        let symbolic = analyse(100, &chain, usize::MAX).unwrap();
        assert_eq!(symbolic.cost(), (99, 100 + 99));
        assert!(symbolic.chain, "numbered from one end, a chain");
        let shuffled: Vec<(u32, u32)> = (0..19)
            .map(|i| ((i * 7) % 20, ((i + 1) * 7) % 20))
            .collect();
        let symbolic = analyse(20, &shuffled, usize::MAX).unwrap();
        assert!(
            symbolic.chain,
            "numbered in any order, eliminated in one run"
        );
        let tree: Vec<(u32, u32)> = (1..63).map(|i| (i, (i - 1) / 2)).collect();
        let symbolic = analyse(63, &tree, usize::MAX).unwrap();
        assert_eq!(symbolic.cost(), (62, 63 + 62));
        assert!(analyse(100, &chain, 50).is_none(), "over the budget");
    }

    /// Blocks from 1e-20 to 1e20 (a determinant that would overflow or
    /// underflow in `f32` at either end) solve like blocks of 1.
    #[test]
    fn solves_blocks_of_any_scale() {
        let tree: Vec<(u32, u32)> = (1..15).map(|i| (i, (i - 1) / 2)).collect();
        let chain: Vec<(u32, u32)> = (0..14).map(|i| (i, i + 1)).collect();
        for edges in [tree, chain] {
            // The middle ones are inverted without scaling, and their
            // products with the couplings leave `f32` at 1e10 or underflow
            // at 1e-12 unless taken in another order.
            for scale in [1e-20f32, 1e-12, 1e-6, 1.0, 1e6, 1e10, 1e20] {
                let diag: Vec<Mat3A> = (0..15).map(|i| spd(i as f32 * 0.3) * scale).collect();
                let off: Vec<Mat3A> = (0..14).map(|e| coupling(e as f32) * scale).collect();
                let b: Vec<Vec3A> = (0..15).map(|i| Vec3A::splat(i as f32) * scale).collect();
                let x = solve(15, &diag, &edges, &off, &b).expect("positive definite");
                check(&diag, &edges, &off, &b, &x);
            }
        }
    }

    /// An indefinite or non-finite pivot refuses; a singular matrix too,
    /// on a chain and on a grid that fills in.
    #[test]
    fn refuses_what_is_not_positive_definite() {
        let grid = [(0, 1), (1, 3), (3, 2), (2, 0), (0, 3)];
        let b = [Vec3A::ONE; 4];
        let diag = [Mat3A::IDENTITY; 4];
        let strong = [Mat3A::IDENTITY * 3.0; 5];
        assert!(
            solve(4, &diag, &grid, &strong, &b).is_none(),
            "indefinite grid"
        );
        let edges = [(0, 1)];
        let b = [Vec3A::ONE; 2];
        let off = [Mat3A::IDENTITY * 5.0];
        let diag = [Mat3A::IDENTITY, Mat3A::IDENTITY];
        assert!(solve(2, &diag, &edges, &off, &b).is_none(), "indefinite");
        let diag = [Mat3A::IDENTITY * f32::NAN, Mat3A::IDENTITY];
        assert!(solve(2, &diag, &edges, &[Mat3A::ZERO], &b).is_none());
        let diag = [Mat3A::IDENTITY, Mat3A::ZERO];
        assert!(solve(2, &diag, &edges, &[Mat3A::ZERO], &b).is_none());
    }
}

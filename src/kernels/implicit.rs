//! Springs stepped by linearised backward Euler (Baraff & Witkin, "Large
//! steps in cloth simulation", 1998), one island at a time.
//!
//! For the island's dynamic bodies, with `f` every force at the start of
//! the pass (springs, gravity, your forces), the velocity change `Δv`
//! solves
//!
//! ```text
//! (M − h·∂f/∂v − h²·∂f/∂x) Δv = h·(f + h·∂f/∂x·v)
//! ```
//!
//! Each spring of stiffness `k`, damping `c`, rest length `L`, length `l`
//! and direction `n` contributes the blocks `C = c·n·nᵀ` (to `−∂f/∂v`)
//! and `K = k·(n·nᵀ + max(0, 1 − L/l)·(I − n·nᵀ))` (to `−∂f/∂x`): the
//! full stiffness along the spring, and the geometric term across it,
//! dropped while the spring is compressed so that the matrix stays
//! positive definite. The system is solved directly, by a sparse block
//! `LDLᵀ` factorisation ([`ldlt`](crate::kernels::ldlt)) whose structure
//! is found once per layout, when that factor is cheap (chains, trees,
//! small meshes), and otherwise by conjugate gradients, matrix-free, over
//! the island's rows in row order and its bodies in slot order
//! ([`Method`]), preconditioned by aggregation multigrid
//! ([`multigrid`](crate::kernels::multigrid)) or by Jacobi. Both run in a fixed order, so
//! the result does not depend on threads. Fixed bodies are boundary
//! conditions (their `Δv` is zero; their velocities enter `∂f/∂x·v`).

use bevy::math::{Mat3A, Vec3A};

use crate::kernels::ldlt::{Symbolic, analyse, spring_edges};
use crate::kernels::multigrid::{Hierarchy, Numeric};
use crate::kernels::springs::SpringRow;

/// How an island's system is solved.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Method {
    /// Factored directly when its factor is cheap (a chain, a tree, a
    /// small mesh: see [`DIRECT_BUDGET`]), by conjugate gradients
    /// otherwise.
    #[default]
    Auto,
    /// Always factored directly (sparse `LDLᵀ`), however much fill.
    Direct,
    /// Always by conjugate gradients.
    ConjugateGradients,
}

/// Under [`Method::Auto`], an island is factored directly while its
/// factorisation needs at most this many block updates per body and
/// spring (a chain or a tree needs fewer than one; a cloth with shear and
/// bend springs 12 at 8×8 bodies, 217 at 40×40: its fill grows with its
/// side).
pub const DIRECT_BUDGET: usize = 8;

/// How the solves run.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Cg {
    /// Conjugate gradients: at most this many iterations.
    pub max_iterations: u32,
    /// Conjugate gradients stop when the residual is this small against
    /// the right-hand side's.
    pub tolerance: f32,
    /// Direct, iterative, or chosen per island.
    pub method: Method,
    /// Conjugate gradients precondition with aggregation multigrid
    /// ([`multigrid`](crate::kernels::multigrid)) rather than Jacobi.
    pub multigrid: bool,
}

/// How a solve ended.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Solved {
    /// Solved by factoring the matrix (exact up to rounding).
    Factored,
    /// Conjugate gradients within the tolerance, after this many
    /// iterations.
    Converged(u32),
    /// Not within the tolerance after the cap: the last iterate is used
    /// (from `Δv = 0`, each iterate is the A-orthogonal projection of the
    /// solution on a growing space, so it never carries more energy than
    /// the solution). The iterations run and the relative residual
    /// reached.
    Capped(u32, f32),
    /// Not solvable as given (a non-finite value, or a direction of zero
    /// or negative curvature): `Δv` is what the forces other than the
    /// springs give, and the springs act on nothing in this pass.
    Failed,
}

impl Solved {
    /// Whether the solve reached its answer (factored, or converged).
    pub fn is_ok(&self) -> bool {
        matches!(self, Solved::Factored | Solved::Converged(_))
    }
}

/// How one island is solved, found once per layout: the structure of its
/// factor, or conjugate gradients (with the levels of their multigrid
/// preconditioner, if any).
#[derive(Debug, Clone)]
pub enum Plan {
    Direct(Symbolic),
    ConjugateGradients(Option<Box<Hierarchy>>),
}

/// The plan for `island` under `cg`'s method and preconditioner: its
/// springs between two of its dynamic bodies couple their unknowns.
pub fn plan(island: &Island, cg: Cg) -> Plan {
    let ends: Vec<[u32; 2]> = island
        .rows
        .iter()
        .map(|row| row_ends(island, (island.local(row.a), island.local(row.b))))
        .collect();
    let iterative = || {
        Plan::ConjugateGradients(
            cg.multigrid
                .then(|| hierarchy(island, &ends))
                .flatten()
                .map(Box::new),
        )
    };
    let budget = match cg.method {
        Method::ConjugateGradients => return iterative(),
        Method::Direct => usize::MAX,
        Method::Auto => DIRECT_BUDGET * (island.n + island.rows.len()),
    };
    analyse(island.n, &spring_edges(island.n, &ends), budget).map_or_else(iterative, Plan::Direct)
}

/// The multigrid levels of an island whose rows join `ends` (as
/// conjugate gradients number them, see [`row_ends`]), with its springs'
/// stiffness as the strength of their coupling.
fn hierarchy(island: &Island, ends: &[[u32; 2]]) -> Option<Hierarchy> {
    let weight: Vec<f32> = island.rows.iter().map(|row| row.k.max(0.0)).collect();
    Hierarchy::build(island.n, ends, &weight, DIRECT_BUDGET)
}

/// A row's ends as unknowns of conjugate gradients: a fixed end is the
/// extra unknown `n`, whose vectors stay zero.
#[inline]
fn row_ends(island: &Island, (a, b): (Option<usize>, Option<usize>)) -> [u32; 2] {
    [a, b].map(|i| i.unwrap_or(island.n) as u32)
}

/// Reusable buffers of a solve, per island.
#[derive(Debug, Default)]
pub struct Scratch {
    /// Per dynamic slot of the island, its mass (0 for a slot made fixed
    /// since the layout).
    mass: Vec<f32>,
    blocks: Vec<Mat3A>,
    /// Per row, its ends' unknowns (`n` for a fixed end), for conjugate
    /// gradients.
    ends: Vec<[u32; 2]>,
    /// The masses of the matrix conjugate gradients solve, and of its
    /// Jacobi diagonal: a slot made fixed since the layout as a unit mass.
    unit_mass: Vec<f32>,
    dv: Vec<Vec3A>,
    r: Vec<Vec3A>,
    z: Vec<Vec3A>,
    p: Vec<Vec3A>,
    q: Vec<Vec3A>,
    diag: Vec<Vec3A>,
    factor: Vec<Mat3A>,
    column: Vec<Mat3A>,
    multigrid: Numeric,
}

/// One island: its dynamic slots `base..base + n` and its springs.
pub struct Island<'a> {
    pub base: usize,
    pub n: usize,
    pub rows: &'a [SpringRow],
}

impl Island<'_> {
    /// The island's index of `slot`, if it is one of its dynamic slots.
    #[inline]
    fn local(&self, slot: u32) -> Option<usize> {
        (slot as usize)
            .checked_sub(self.base)
            .filter(|&i| i < self.n)
    }
}

/// What a solve reads, for all slots.
pub struct State<'a> {
    pub pos: &'a [Vec3A],
    pub vel: &'a [Vec3A],
    pub inv_mass: &'a [f32],
    /// Per slot, whether it can be stepped, when some slot of the step
    /// cannot (a spring to such a slot then acts on nothing, as in
    /// [`add_spring_forces`](crate::kernels::springs::add_spring_forces)).
    pub valid: Option<&'a [bool]>,
    /// The other forces of the pass (your forces and constant forces),
    /// when any body of the step has one.
    pub extra: Option<(&'a [Vec3A], &'a [Vec3A])>,
    pub g: Vec3A,
    pub h: f32,
}

impl State<'_> {
    /// The forces on slot `s` other than springs and gravity.
    #[inline]
    pub fn extra(&self, s: usize) -> Vec3A {
        self.extra
            .map_or(Vec3A::ZERO, |(pending, constant)| pending[s] + constant[s])
    }
}

/// A spring's part of the system, with its ends `d` apart and moving at
/// `dv` relative to each other: its block `h·C + h²·K` of the matrix, and
/// its part of the right-hand side on its first end, `h·f + h²·K·dv` (the
/// second end takes the opposite); both zero for a spring of zero (or
/// non-finite) length, which has no direction.
#[inline]
fn spring_terms(d: Vec3A, dv: Vec3A, row: &SpringRow, h: f32) -> (Mat3A, Vec3A) {
    let length = d.length();
    if !(length.is_finite() && length > 0.0) {
        return (Mat3A::ZERO, Vec3A::ZERO);
    }
    let n = d / length;
    // K = k·(n·nᵀ + g·(I − n·nᵀ)) = k·g·I + k·(1 − g)·n·nᵀ, with g the
    // geometric factor.
    let geometric = (1.0 - row.rest / length).max(0.0);
    let (isotropic, along) = (row.k * geometric, row.k * (1.0 - geometric));
    let stretch = row.k * (length - row.rest) + row.c * dv.dot(n);
    let scale = h * row.c + h * h * along;
    let outer = Mat3A::from_cols(n * (n.x * scale), n * (n.y * scale), n * (n.z * scale));
    let kdv = isotropic * dv + n * (along * dv.dot(n));
    (
        outer + Mat3A::from_diagonal(bevy::math::Vec3::splat(h * h * isotropic)),
        h * stretch * n + (h * h) * kdv,
    )
}

/// Solves the island's velocity change and writes into `springs`, per
/// dynamic slot of the island, the force `F` with
/// `v + h·(g + w·(F + extra)) = v + Δv`: the spring force the kick then
/// takes (see [`Scratch::dv`] for `Δv` itself). The springs' own forces
/// at the start of the pass are computed here, with their blocks.
pub fn solve_island(
    island: &Island,
    state: &State,
    (cg, plan): (Cg, &Plan),
    scratch: &mut Scratch,
    springs: &mut [Vec3A],
) -> Solved {
    let (direct_plan, levels) = match plan {
        Plan::Direct(symbolic) => (Some(symbolic), None),
        Plan::ConjugateGradients(levels) => (None, levels.as_deref()),
    };
    scratch.mass.clear();
    scratch.mass.extend((0..island.n).map(|i| {
        let w = state.inv_mass[island.base + i];
        if w > 0.0 { 1.0 / w } else { 0.0 }
    }));
    let solved = match direct_plan {
        Some(symbolic) => direct(island, state, symbolic, scratch),
        None => {
            let Scratch {
                mass,
                unit_mass,
                blocks,
                ends,
                r,
                diag,
                multigrid,
                ..
            } = &mut *scratch;
            blocks.clear();
            ends.clear();
            // A body made fixed since the layout: a unit row, as in `direct`.
            unit_mass.clear();
            unit_mass.extend(mass.iter().map(|&m| if m > 0.0 { m } else { 1.0 }));
            diag.clear();
            diag.extend(unit_mass.iter().map(|&m| Vec3A::splat(m)));
            let finite = assemble(island, state, (mass, r), |_, (a, b), block| {
                blocks.push(block);
                // A fixed end (and one made fixed since the layout) is
                // unknown `n`, whose `p` is always zero.
                let [a, b] = [a, b].map(|i| i.filter(|&i| mass[i] > 0.0));
                ends.push(row_ends(island, (a, b)));
                let d = Vec3A::new(block.x_axis.x, block.y_axis.y, block.z_axis.z);
                for i in [a, b].into_iter().flatten() {
                    diag[i] += d;
                }
            });
            for (r, &m) in r.iter_mut().zip(mass.iter()) {
                if m <= 0.0 {
                    *r = Vec3A::ZERO;
                }
            }
            // Normal and positive, so that the preconditioner's
            // reciprocals are finite.
            let normal = |d: &Vec3A| d.is_finite() && d.min_element() >= f32::MIN_POSITIVE;
            if finite && diag.iter().all(normal) {
                // The levels were found for the layout's fixed bodies: a
                // body made fixed since takes Jacobi's preconditioner.
                let levels = levels.filter(|_| mass.iter().all(|&m| m > 0.0));
                let system = (&unit_mass[..], &blocks[..], &ends[..]);
                let levels = levels.filter(|levels| multigrid.setup(levels, system));
                conjugate_gradients(cg, levels, scratch)
            } else {
                Solved::Failed
            }
        }
    };
    if solved == Solved::Failed {
        fail(island, state, &mut scratch.dv);
    }
    effective_forces(island, state, (&scratch.mass, &scratch.dv), springs);
    solved
}

/// The right-hand side `h·f − h²·K·v` into `r` (with `f` every force at
/// the start of the pass: the springs', computed here, gravity and the
/// others), and each row's block `h·C + h²·K` to `block(row, (a, b),
/// block)` with its ends' places in the island (`None` for a fixed end);
/// false if the right-hand side is not finite.
fn assemble(
    island: &Island,
    state: &State,
    (mass, r): (&[f32], &mut Vec<Vec3A>),
    mut block: impl FnMut(usize, (Option<usize>, Option<usize>), Mat3A),
) -> bool {
    let (base, h) = (island.base, state.h);
    r.clear();
    r.extend(
        mass.iter()
            .enumerate()
            .map(|(i, &m)| h * (state.extra(base + i) + m * state.g)),
    );
    for (e, row) in island.rows.iter().enumerate() {
        let (a, b) = (row.a as usize, row.b as usize);
        let ends = (island.local(row.a), island.local(row.b));
        if state.valid.is_some_and(|valid| !(valid[a] && valid[b])) {
            block(e, ends, Mat3A::ZERO);
            continue;
        }
        let (d, dvel) = (state.pos[b] - state.pos[a], state.vel[b] - state.vel[a]);
        let (terms, on_a) = spring_terms(d, dvel, row, h);
        block(e, ends, terms);
        if let Some(i) = ends.0 {
            r[i] += on_a;
        }
        if let Some(j) = ends.1 {
            r[j] -= on_a;
        }
    }
    dot(r, r).is_finite()
}

/// Assembles the matrix into the factor's blocks, factors it and solves:
/// a body made fixed since the layout (inverse mass 0) keeps its velocity
/// and couples to nothing.
fn direct(island: &Island, state: &State, symbolic: &Symbolic, scratch: &mut Scratch) -> Solved {
    let (base, n) = (island.base, island.n);
    let Scratch {
        mass,
        dv,
        r,
        z,
        factor,
        column,
        ..
    } = scratch;
    factor.clear();
    factor.resize(symbolic.blocks(), Mat3A::ZERO);
    let mut fixed_since = false;
    for (i, &m) in mass.iter().enumerate() {
        fixed_since |= m <= 0.0;
        factor[symbolic.diagonal(i as u32)] = if m > 0.0 {
            Mat3A::from_diagonal(bevy::math::Vec3::splat(m))
        } else {
            Mat3A::IDENTITY
        };
    }
    let dynamic = |i: Option<usize>| i.filter(|&i| state.inv_mass[base + i] > 0.0);
    let finite = assemble(island, state, (mass, r), |e, (a, b), block| {
        let (a, b) = if fixed_since {
            (dynamic(a), dynamic(b))
        } else {
            (a, b)
        };
        for i in [a, b].into_iter().flatten() {
            factor[symbolic.diagonal(i as u32)] += block;
        }
        if let (Some(_), Some(_), Some(entry)) = (a, b, symbolic.edge(e)) {
            factor[entry] -= block;
        }
    });
    if !finite {
        return Solved::Failed;
    }
    if fixed_since {
        for (i, r) in r.iter_mut().enumerate() {
            if state.inv_mass[base + i] <= 0.0 {
                *r = Vec3A::ZERO;
            }
        }
    }
    dv.clear();
    dv.resize(n, Vec3A::ZERO);
    if !symbolic.factor_solve(factor, r, dv, (column, z)) {
        return Solved::Failed;
    }
    if dv.iter().all(|dv| dv.is_finite()) {
        Solved::Factored
    } else {
        Solved::Failed
    }
}

/// Conjugate gradients from `Δv = 0`, preconditioned by a multigrid
/// V-cycle on `levels` (set up for this solve), else (or from the
/// iteration where a V-cycle gives no positive `r·z`) by Jacobi.
///
/// The vectors `p` and `q` carry one unknown more than the island, `n`,
/// where a fixed end of a row points: `p[n]` stays zero, so each row's
/// product reads and writes both ends without a test (the ends are found
/// once per solve, not once per iteration). The preconditioner and the
/// masses are products, not divisions.
fn conjugate_gradients(cg: Cg, levels: Option<&Hierarchy>, scratch: &mut Scratch) -> Solved {
    let Scratch {
        unit_mass,
        blocks,
        ends,
        dv,
        r,
        z,
        p,
        q,
        diag,
        multigrid,
        ..
    } = scratch;
    let n = unit_mass.len();
    for v in [&mut *dv, &mut *z] {
        v.clear();
        v.resize(n, Vec3A::ZERO);
    }
    for v in [&mut *p, &mut *q] {
        v.clear();
        v.resize(n + 1, Vec3A::ZERO);
    }
    let rhs = dot(r, r).sqrt();
    if rhs == 0.0 {
        return Solved::Converged(0);
    }
    // Jacobi's preconditioner as a product.
    for d in diag.iter_mut() {
        *d = d.recip();
    }
    // `z = B·r`, and `r·z`. A V-cycle that gives no positive `r·z`
    // (rounding in a badly conditioned coarsest factor) hands over to
    // Jacobi for the rest of the solve: then also true, for the directions
    // to restart from this residual.
    let mut levels = levels;
    let mut precondition = |r: &[Vec3A], z: &mut [Vec3A]| {
        let restart = levels.is_some();
        if let Some(hierarchy) = levels {
            multigrid.apply(hierarchy, (unit_mass, blocks, ends), r, z);
            let rz = dot(r, z);
            if rz.is_finite() && rz > 0.0 {
                return (rz, false);
            }
            levels = None;
        }
        for i in 0..n {
            z[i] = r[i] * diag[i];
        }
        (dot(r, z), restart)
    };
    let (mut rz, _) = precondition(r, z);
    p[..n].copy_from_slice(z);
    for iteration in 0..cg.max_iterations {
        multiply((unit_mass, blocks, ends), p, q);
        let pq = dot(&p[..n], &q[..n]);
        if !(pq.is_finite() && pq > 0.0) {
            return Solved::Failed;
        }
        let alpha = rz / pq;
        for i in 0..n {
            dv[i] += alpha * p[i];
            r[i] -= alpha * q[i];
        }
        let residual = dot(r, r).sqrt();
        if !residual.is_finite() {
            return Solved::Failed;
        }
        if residual <= cg.tolerance * rhs {
            return Solved::Converged(iteration + 1);
        }
        let (rz_next, restart) = precondition(r, z);
        let beta = if restart { 0.0 } else { rz_next / rz };
        rz = rz_next;
        for i in 0..n {
            p[i] = z[i] + beta * p[i];
        }
    }
    Solved::Capped(cg.max_iterations, dot(r, r).sqrt() / rhs)
}

/// `q = A·p`: the masses, then each row's block on the difference of its
/// ends (unknown `n`, a fixed end, has `p[n] = 0`; what lands in `q[n]` is
/// never read).
fn multiply((mass, blocks, ends): (&[f32], &[Mat3A], &[[u32; 2]]), p: &[Vec3A], q: &mut [Vec3A]) {
    let n = mass.len();
    for i in 0..n {
        q[i] = p[i] * mass[i];
    }
    for (&[a, b], block) in ends.iter().zip(blocks) {
        let (a, b) = (a as usize, b as usize);
        let f = *block * (p[a] - p[b]);
        q[a] += f;
        q[b] -= f;
    }
}

/// `Σ aᵢ·bᵢ`, in order.
fn dot(a: &[Vec3A], b: &[Vec3A]) -> f32 {
    a.iter().zip(b).map(|(a, b)| a.dot(*b)).sum()
}

/// The fallback: gravity and the forces other than springs, as an
/// explicit kick would give them, with the springs out of this pass.
fn fail(island: &Island, state: &State, dv: &mut Vec<Vec3A>) {
    dv.clear();
    dv.extend((0..island.n).map(|i| {
        let s = island.base + i;
        let change = state.h * (state.g + state.inv_mass[s] * state.extra(s));
        if change.is_finite() {
            change
        } else {
            Vec3A::ZERO
        }
    }));
}

/// The spring forces that give the velocity changes `dv` in the kick,
/// `v + h·(g + w·(F + extra))`: `F = (Δv/h − g)/w − extra`, per dynamic
/// slot of the island (zero for a slot made fixed since the layout, which
/// the kick leaves alone).
fn effective_forces(
    island: &Island,
    state: &State,
    (mass, dv): (&[f32], &[Vec3A]),
    springs: &mut [Vec3A],
) {
    let per_h = state.h.recip();
    for (i, (f, (&m, dv))) in springs.iter_mut().zip(mass.iter().zip(dv)).enumerate() {
        *f = if m > 0.0 {
            m * (*dv * per_h - state.g) - state.extra(island.base + i)
        } else {
            Vec3A::ZERO
        };
    }
}

#[cfg(test)]
impl Scratch {
    /// The velocity change of the last solve, per dynamic slot of the
    /// island.
    pub fn dv(&self) -> &[Vec3A] {
        &self.dv
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const CG: Cg = Cg {
        max_iterations: 100,
        tolerance: 1e-6,
        method: Method::ConjugateGradients,
        multigrid: false,
    };

    /// Solves an island of `inv_mass.len()` slots whose fixed slots (inverse
    /// mass 0) come last, with gravity `g`, by `cg`'s method (and checks
    /// that the other methods, conjugate gradients with either
    /// preconditioner and the direct solve, give the same velocity changes
    /// when they solve).
    fn solve(
        rows: &[SpringRow],
        pos: &[Vec3A],
        vel: &[Vec3A],
        inv_mass: &[f32],
        (g, h): (Vec3A, f32),
        cg: Cg,
    ) -> (Solved, Vec<Vec3A>) {
        let run = |method: Method, multigrid: bool| {
            let n = inv_mass.iter().filter(|&&w| w > 0.0).count();
            let mut springs = vec![Vec3A::ZERO; pos.len()];
            let state = State {
                pos,
                vel,
                inv_mass,
                valid: None,
                extra: None,
                g,
                h,
            };
            let island = Island { base: 0, n, rows };
            let mut scratch = Scratch::default();
            let cg = Cg {
                method,
                multigrid,
                ..cg
            };
            let plan = plan(&island, cg);
            let solved = solve_island(
                &island,
                &state,
                (cg, &plan),
                &mut scratch,
                &mut springs[..n],
            );
            (solved, scratch.dv().to_vec())
        };
        let (solved, dv) = run(cg.method, cg.multigrid);
        for (method, multigrid) in [
            (Method::Direct, false),
            (Method::ConjugateGradients, false),
            (Method::ConjugateGradients, true),
        ] {
            let (also, dv_also) = run(method, multigrid);
            if solved.is_ok() && also.is_ok() {
                for (a, b) in dv.iter().zip(&dv_also) {
                    let scale = a.length().max(b.length()).max(1e-3);
                    assert!((*a - *b).length() <= 1e-3 * scale, "{a} against {b}");
                }
            }
        }
        (solved, dv)
    }

    /// One body on a spring to a fixed anchor, along x: the 1D backward
    /// Euler step `(m + h·c + h²·k)·Δv = h·(f − h·k·v)` in closed form.
    #[test]
    fn one_spring_matches_the_scalar_backward_euler_step() {
        let (m, k, c, h, rest) = (2.0f32, 400.0, 3.0, 0.1, 1.0);
        let (x, v) = (1.3f32, 0.7f32);
        let rows = [SpringRow {
            a: 1,
            b: 0,
            rest,
            k,
            c,
        }];
        let pos = [Vec3A::new(x, 0.0, 0.0), Vec3A::ZERO];
        let vel = [Vec3A::new(v, 0.0, 0.0), Vec3A::ZERO];
        let (solved, dv) = solve(&rows, &pos, &vel, &[1.0 / m, 0.0], (Vec3A::ZERO, h), CG);
        assert!(matches!(solved, Solved::Converged(_)), "{solved:?}");
        let f = -k * (x - rest) - c * v;
        let expected = h * (f - h * k * v) / (m + h * c + h * h * k);
        assert!(
            (dv[0].x - expected).abs() < 1e-5 * expected.abs(),
            "{} against {expected}",
            dv[0].x
        );
        assert_eq!((dv[0].y, dv[0].z), (0.0, 0.0));
    }

    /// A chain hanging at its static stretch (each spring carrying the
    /// weight below it) is a fixed point: `Δv = 0` with gravity.
    #[test]
    fn a_chain_at_its_static_stretch_does_not_move() {
        let (m, k, rest, g) = (0.1f32, 1e5, 0.1, 9.81);
        let n = 10;
        let mut pos = Vec::new();
        let mut y = 0.0;
        // Slots 0..n dynamic (top first), slot n the anchor at 0.
        for i in 0..n {
            let below = (n - i) as f32 * m * g;
            y -= rest + below / k;
            pos.push(Vec3A::new(0.0, y, 0.0));
        }
        pos.push(Vec3A::ZERO);
        let mut rows = vec![SpringRow {
            a: n as u32,
            b: 0,
            rest,
            k,
            c: 0.0,
        }];
        for i in 1..n {
            rows.push(SpringRow {
                a: (i - 1) as u32,
                b: i as u32,
                rest,
                k,
                c: 0.0,
            });
        }
        let mut inv_mass = vec![1.0 / m; n];
        inv_mass.push(0.0);
        let vel = vec![Vec3A::ZERO; n + 1];
        let (solved, dv) = solve(
            &rows,
            &pos,
            &vel,
            &inv_mass,
            (Vec3A::new(0.0, -g, 0.0), 1.0 / 64.0),
            CG,
        );
        assert!(!matches!(solved, Solved::Failed));
        for dv in dv {
            assert!(dv.length() < 1e-3, "{dv}");
        }
    }

    /// A stiff cloth of `side × side` bodies (structural, shear and bend
    /// springs, the stiffness of the cloth example at 40×40), hanging from its two
    /// top corners, stretched 5 % and rippled across: its rows, positions
    /// and inverse masses, the corners last.
    fn cloth(side: usize) -> (Vec<SpringRow>, Vec<Vec3A>, Vec<f32>) {
        let spacing = 2.0 / (side - 1) as f32;
        let corner = |i: usize, j: usize| i == 0 && (j == 0 || j == side - 1);
        let mut slot = vec![0u32; side * side];
        let mut next = 0;
        for pinned in [false, true] {
            for i in 0..side {
                for j in 0..side {
                    if corner(i, j) == pinned {
                        slot[i * side + j] = next;
                        next += 1;
                    }
                }
            }
        }
        let (mut pos, mut inv_mass) = (vec![Vec3A::ZERO; side * side], vec![0.0; side * side]);
        for i in 0..side {
            for j in 0..side {
                let s = slot[i * side + j] as usize;
                let ripple = 0.05 * spacing * ((i * 7 + j * 3) % 5) as f32;
                pos[s] =
                    Vec3A::new(j as f32, -(i as f32), 0.0) * spacing * 1.05 + Vec3A::Z * ripple;
                inv_mass[s] = if corner(i, j) {
                    0.0
                } else {
                    (side * side) as f32 / 2.5
                };
            }
        }
        let mut rows = Vec::new();
        for i in 0..side {
            for j in 0..side {
                let mut join = |(di, dj): (usize, usize), k: f32| {
                    let (a, b) = (i * side + j, (i + di) * side + j + dj);
                    let rest = spacing * ((di * di + dj * dj) as f32).sqrt();
                    rows.push(SpringRow {
                        a: slot[a],
                        b: slot[b],
                        rest,
                        k,
                        c: 0.02,
                    });
                };
                if j + 1 < side {
                    join((0, 1), 2000.0);
                }
                if i + 1 < side {
                    join((1, 0), 2000.0);
                }
                if i + 1 < side && j + 1 < side {
                    join((1, 1), 1000.0);
                }
                if j + 2 < side {
                    join((0, 2), 200.0);
                }
                if i + 2 < side {
                    join((2, 0), 200.0);
                }
            }
        }
        (rows, pos, inv_mass)
    }

    /// Conjugate gradients on a stiff cloth converge with either
    /// preconditioner to the direct solve's answer (`solve` compares
    /// them), and multigrid needs at most a quarter of Jacobi's
    /// iterations.
    #[test]
    fn multigrid_cuts_a_cloths_iterations() {
        let (rows, pos, inv_mass) = cloth(24);
        let vel = vec![Vec3A::ZERO; pos.len()];
        let cg = Cg {
            max_iterations: 2000,
            tolerance: 1e-5,
            ..CG
        };
        let step = (Vec3A::new(0.0, -9.81, 0.0), 1.0 / 64.0);
        let mut iterations = [0; 2];
        for (multigrid, count) in [false, true].into_iter().zip(&mut iterations) {
            let cg = Cg { multigrid, ..cg };
            let (solved, dv) = solve(&rows, &pos, &vel, &inv_mass, step, cg);
            let Solved::Converged(used) = solved else {
                panic!("{solved:?} with multigrid {multigrid}");
            };
            assert!(dv.iter().all(|dv| dv.is_finite()));
            *count = used;
        }
        let [jacobi, multigrid] = iterations;
        assert!(multigrid * 4 <= jacobi, "{multigrid} against {jacobi}");
    }

    /// Coincident ends (no direction) and a spring between two fixed
    /// bodies give finite changes and no failure.
    #[test]
    fn coincident_ends_and_fixed_pairs_are_finite() {
        let rows = [
            SpringRow {
                a: 0,
                b: 1,
                rest: 1.0,
                k: 1e6,
                c: 1.0,
            },
            SpringRow {
                a: 2,
                b: 3,
                rest: 1.0,
                k: 1e6,
                c: 1.0,
            },
        ];
        let pos = [Vec3A::ZERO, Vec3A::ZERO, Vec3A::X, Vec3A::Y];
        let vel = [Vec3A::ZERO; 4];
        let g = Vec3A::new(0.0, -10.0, 0.0);
        let (solved, dv) = solve(&rows, &pos, &vel, &[1.0, 1.0, 0.0, 0.0], (g, 0.1), CG);
        assert!(matches!(solved, Solved::Converged(_)), "{solved:?}");
        for dv in dv {
            assert!(dv.is_finite());
            assert!((dv - g * 0.1).length() < 1e-6, "gravity alone: {dv}");
        }
    }

    /// A non-finite velocity fails the solve, which then gives what
    /// gravity alone gives (a non-finite position only takes its springs
    /// out); a cap of one iteration on a stiff chain is reported as capped
    /// with its residual.
    #[test]
    fn bad_input_fails_and_a_low_cap_is_reported() {
        let rows = [SpringRow {
            a: 0,
            b: 1,
            rest: 1.0,
            k: 1e4,
            c: 0.0,
        }];
        let g = Vec3A::new(0.0, -10.0, 0.0);
        let pos = [Vec3A::ZERO, Vec3A::new(1.5, 0.0, 0.0)];
        let vel = [Vec3A::new(f32::NAN, 0.0, 0.0), Vec3A::ZERO];
        let (solved, dv) = solve(&rows, &pos, &vel, &[1.0, 0.0], (g, 0.1), CG);
        assert_eq!(solved, Solved::Failed);
        assert_eq!(dv[0], g * 0.1);
        let pos = [Vec3A::NAN, Vec3A::X];
        let (solved, dv) = solve(&rows, &pos, &[Vec3A::ZERO; 2], &[1.0, 0.0], (g, 0.1), CG);
        assert!(matches!(solved, Solved::Converged(_)), "{solved:?}");
        assert_eq!(dv[0], g * 0.1);
        let pos = [
            Vec3A::ZERO,
            Vec3A::new(0.5, 0.2, 0.0),
            Vec3A::new(1.5, 0.0, 0.3),
        ];
        let rows = [
            SpringRow {
                a: 0,
                b: 1,
                rest: 1.0,
                k: 1e4,
                c: 0.0,
            },
            SpringRow {
                a: 1,
                b: 2,
                rest: 1.0,
                k: 1e4,
                c: 0.0,
            },
        ];
        let capped = Cg {
            max_iterations: 1,
            tolerance: 1e-9,
            method: Method::ConjugateGradients,
            multigrid: false,
        };
        let (solved, dv) = solve(
            &rows,
            &pos,
            &[Vec3A::ZERO; 3],
            &[1.0, 1.0, 1.0],
            (g, 0.1),
            capped,
        );
        assert!(
            matches!(solved, Solved::Capped(1, r) if r > 1e-9 && r < 1.0),
            "{solved:?}"
        );
        assert!(dv.iter().all(|dv| dv.is_finite()));
    }
}

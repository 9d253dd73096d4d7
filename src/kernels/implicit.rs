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
//! positive definite. The system is solved by conjugate gradients with a
//! Jacobi preconditioner, matrix-free, over the island's rows in row order
//! and its bodies in slot order, so the result does not depend on threads.
//! Fixed bodies are boundary conditions (their `Δv` is zero; their
//! velocities enter `∂f/∂x·v`).

use bevy::math::{Mat3A, Vec3A};

use crate::kernels::springs::SpringRow;

/// How the conjugate gradients stop.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Cg {
    /// At most this many iterations.
    pub max_iterations: u32,
    /// Stop when the preconditioned residual is this small against the
    /// right-hand side's.
    pub tolerance: f32,
}

/// How a solve ended.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Solved {
    /// Within the tolerance, after this many iterations.
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

/// Reusable buffers of a solve, per island.
#[derive(Debug, Default)]
pub struct Scratch {
    blocks: Vec<Mat3A>,
    dv: Vec<Vec3A>,
    r: Vec<Vec3A>,
    z: Vec<Vec3A>,
    p: Vec<Vec3A>,
    q: Vec<Vec3A>,
    diag: Vec<Vec3A>,
}

/// One island: its dynamic slots `base..base + n` and its springs.
pub struct Island<'a> {
    pub base: usize,
    pub n: usize,
    pub rows: &'a [SpringRow],
}

/// What a solve reads, for all slots.
pub struct State<'a> {
    pub pos: &'a [Vec3A],
    pub vel: &'a [Vec3A],
    pub inv_mass: &'a [f32],
    /// The spring forces at the start of the pass.
    pub springs: &'a [Vec3A],
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

/// The stiffness and damping blocks of a spring with its ends `d` apart,
/// scaled into one block `h·C + h²·K` of the system matrix; zero for a
/// spring of zero (or non-finite) length.
#[inline]
pub fn spring_block(d: Vec3A, row: &SpringRow, h: f32) -> (Mat3A, Mat3A) {
    let length = d.length();
    if !(length.is_finite() && length > 0.0) {
        return (Mat3A::ZERO, Mat3A::ZERO);
    }
    let n = d / length;
    let along = Mat3A::from_cols(n * n.x, n * n.y, n * n.z);
    let across = Mat3A::IDENTITY - along;
    let geometric = (1.0 - row.rest / length).max(0.0);
    let k = along * row.k + across * (row.k * geometric);
    (along * (h * row.c) + k * (h * h), k)
}

/// Solves the island's velocity change into `dv` (one per dynamic slot of
/// the island).
pub fn solve_island(island: &Island, state: &State, cg: Cg, scratch: &mut Scratch) -> Solved {
    let (base, n) = (island.base, island.n);
    let h = state.h;
    let local = |slot: u32| (slot as usize).checked_sub(base).filter(|&i| i < n);
    let Scratch {
        blocks,
        dv,
        r,
        z,
        p,
        q,
        diag,
    } = scratch;
    for v in [&mut *dv, &mut *r, &mut *z, &mut *p, &mut *q, &mut *diag] {
        v.clear();
        v.resize(n, Vec3A::ZERO);
    }
    blocks.clear();
    // The right-hand side h·f − h²·K·v, the diagonal of the matrix, and
    // each row's block h·C + h²·K.
    for i in 0..n {
        let s = base + i;
        let w = state.inv_mass[s];
        let m = if w > 0.0 { 1.0 / w } else { 0.0 };
        r[i] = h * (state.springs[s] + state.extra(s) + m * state.g);
        diag[i] = Vec3A::splat(m);
    }
    for row in island.rows {
        let (a, b) = (row.a as usize, row.b as usize);
        let (block, k) = spring_block(state.pos[b] - state.pos[a], row, h);
        blocks.push(block);
        // On `a`: −K·(v_a − v_b); on `b`, the opposite.
        let kv = (k * (state.vel[a] - state.vel[b])) * (h * h);
        let d = Vec3A::new(block.x_axis.x, block.y_axis.y, block.z_axis.z);
        if let Some(i) = local(row.a) {
            r[i] -= kv;
            diag[i] += d;
        }
        if let Some(j) = local(row.b) {
            r[j] += kv;
            diag[j] += d;
        }
    }
    let rhs = dot(r, r).sqrt();
    if !rhs.is_finite()
        || diag
            .iter()
            .any(|d| !(d.is_finite() && d.min_element() > 0.0))
    {
        return fail(island, state, dv);
    }
    if rhs == 0.0 {
        return Solved::Converged(0);
    }
    for i in 0..n {
        z[i] = r[i] / diag[i];
    }
    p.copy_from_slice(z);
    let mut rz = dot(r, z);
    for iteration in 0..cg.max_iterations {
        multiply(island, blocks, state.inv_mass, p, q);
        let pq = dot(p, q);
        if !(pq.is_finite() && pq > 0.0) {
            return fail(island, state, dv);
        }
        let alpha = rz / pq;
        for i in 0..n {
            dv[i] += alpha * p[i];
            r[i] -= alpha * q[i];
        }
        let residual = dot(r, r).sqrt();
        if !residual.is_finite() {
            return fail(island, state, dv);
        }
        if residual <= cg.tolerance * rhs {
            return Solved::Converged(iteration + 1);
        }
        for i in 0..n {
            z[i] = r[i] / diag[i];
        }
        let rz_next = dot(r, z);
        let beta = rz_next / rz;
        rz = rz_next;
        for i in 0..n {
            p[i] = z[i] + beta * p[i];
        }
    }
    Solved::Capped(cg.max_iterations, dot(r, r).sqrt() / rhs)
}

/// `q = A·p`: the masses, then each row's block on the difference of its
/// ends (a fixed end's `p` is zero).
fn multiply(island: &Island, blocks: &[Mat3A], inv_mass: &[f32], p: &[Vec3A], q: &mut [Vec3A]) {
    let (base, n) = (island.base, island.n);
    for i in 0..n {
        let w = inv_mass[base + i];
        q[i] = if w > 0.0 { p[i] / w } else { Vec3A::ZERO };
    }
    let local = |slot: u32| (slot as usize).checked_sub(base).filter(|&i| i < n);
    for (row, block) in island.rows.iter().zip(blocks) {
        let (a, b) = (local(row.a), local(row.b));
        let pa = a.map_or(Vec3A::ZERO, |i| p[i]);
        let pb = b.map_or(Vec3A::ZERO, |j| p[j]);
        let f = *block * (pa - pb);
        if let Some(i) = a {
            q[i] += f;
        }
        if let Some(j) = b {
            q[j] -= f;
        }
    }
}

/// `Σ aᵢ·bᵢ`, in order.
fn dot(a: &[Vec3A], b: &[Vec3A]) -> f32 {
    a.iter().zip(b).map(|(a, b)| a.dot(*b)).sum()
}

/// The fallback: gravity and the forces other than springs, as an
/// explicit kick would give them, with the springs out of this pass.
fn fail(island: &Island, state: &State, dv: &mut [Vec3A]) -> Solved {
    for (i, dv) in dv.iter_mut().enumerate() {
        let s = island.base + i;
        let change = state.h * (state.g + state.inv_mass[s] * state.extra(s));
        *dv = if change.is_finite() {
            change
        } else {
            Vec3A::ZERO
        };
    }
    Solved::Failed
}

impl Scratch {
    /// The velocity change of the last solve, per dynamic slot of the
    /// island.
    pub fn dv(&self) -> &[Vec3A] {
        &self.dv
    }

    /// Turns the last solve's velocity changes into the spring forces that
    /// give them in the kick, `v + h·(g + w·(F + extra))`: `F = (Δv/h − g)/w
    /// − extra`, per dynamic slot of the island (a slot made fixed since the
    /// rebuild keeps its spring force). Returns them, in place of `dv`.
    pub fn effective_forces(&mut self, island: &Island, state: &State) -> &[Vec3A] {
        for (i, f) in self.dv.iter_mut().enumerate() {
            let s = island.base + i;
            let w = state.inv_mass[s];
            *f = if w > 0.0 {
                (*f / state.h - state.g) / w - state.extra(s)
            } else {
                state.springs[s]
            };
        }
        &self.dv
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kernels::springs::add_spring_forces;

    const CG: Cg = Cg {
        max_iterations: 100,
        tolerance: 1e-6,
    };

    /// Solves an island of `inv_mass.len()` slots whose fixed slots (inverse
    /// mass 0) come last, with gravity `g`.
    fn solve(
        rows: &[SpringRow],
        pos: &[Vec3A],
        vel: &[Vec3A],
        inv_mass: &[f32],
        (g, h): (Vec3A, f32),
        cg: Cg,
    ) -> (Solved, Vec<Vec3A>) {
        let n = inv_mass.iter().filter(|&&w| w > 0.0).count();
        let mut springs = vec![Vec3A::ZERO; pos.len()];
        let valid = vec![true; pos.len()];
        add_spring_forces(rows, (pos, vel, &valid), false, 0, &mut springs);
        let state = State {
            pos,
            vel,
            inv_mass,
            springs: &springs,
            extra: None,
            g,
            h,
        };
        let island = Island { base: 0, n, rows };
        let mut scratch = Scratch::default();
        let solved = solve_island(&island, &state, cg, &mut scratch);
        (solved, scratch.dv().to_vec())
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

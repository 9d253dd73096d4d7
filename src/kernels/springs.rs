//! Spring forces on the solver's arrays.
//!
//! A spring from `a` to `b` with direction `n = (x_b − x_a) / |x_b − x_a|`
//! pulls `a` with `f = (k·(|x_b − x_a| − rest) + c·((v_b − v_a)·n)) · n`
//! and pushes `b` with `−f`. Each body's forces are summed in row order, so
//! the sums do not depend on how the rows were split over threads (in parts
//! of whole islands).

use bevy::math::Vec3A;

use super::chain::{add_chain_forces, chain_of};

/// The force on the first end of a spring whose second end is at `d` and
/// moves at `dv` relative to it.
///
/// With `l = |d|` and `n = d / l`, that force is
/// `(k·(l − rest) + c·(dv·n))·n = d · (k·(l − rest) + c·(d·dv)/l) / l`.
/// It is evaluated in the second form: one reciprocal `1/l` instead of a
/// vector division and a dot product that waits for it, so `d·d` and
/// `d·dv` are computed side by side. (The rope of `benches/step.rs` steps
/// its springs about a fifth faster this way.)
#[inline]
pub fn spring_force(d: Vec3A, dv: Vec3A, rest: f32, k: f32, c: f32) -> Vec3A {
    let length = d.dot(d).sqrt();
    let along = d.dot(dv);
    // Zero (or NaN) length: no direction, no force.
    if length.is_nan() || length <= 0.0 {
        return Vec3A::ZERO;
    }
    let inverse = 1.0 / length;
    d * ((k * (length - rest) + c * along * inverse) * inverse)
}

/// A valid spring in the solver's dense form.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SpringRow {
    pub a: u32,
    pub b: u32,
    pub rest: f32,
    pub k: f32,
    pub c: f32,
}

/// Where a pass reads the state of the bodies a spring's ends name, by
/// slot: all slots at once ([`States`]), or a part's own slots beside the
/// fixed ones ([`PartEnds`]).
pub trait Ends {
    /// The position and velocity in `slot`.
    fn state(&self, slot: usize) -> (Vec3A, Vec3A);
    /// Whether `slot` can be stepped.
    fn valid(&self, slot: usize) -> bool;
    /// The positions and velocities of the five slots from `slot`, if
    /// they lie side by side in one array.
    fn chain(&self, slot: usize) -> Option<(&[Vec3A; 5], &[Vec3A; 5])>;
}

/// The positions, velocities and validity of a run of slots, of one
/// length, so that one test of a slot serves all three reads (the spring
/// loop reads two ends a row; the second test of each read was about 4 %
/// of the kernel's instructions on a rope, by callgrind).
#[derive(Clone, Copy)]
pub struct States<'a> {
    pos: &'a [Vec3A],
    vel: &'a [Vec3A],
    valid: &'a [bool],
}

impl<'a> States<'a> {
    /// The three arrays of a run of slots.
    ///
    /// # Panics
    ///
    /// If they differ in length.
    pub fn new(pos: &'a [Vec3A], vel: &'a [Vec3A], valid: &'a [bool]) -> Self {
        assert!(
            vel.len() == pos.len() && valid.len() == pos.len(),
            "slot arrays of different lengths: {} positions, {} velocities, {} flags",
            pos.len(),
            vel.len(),
            valid.len()
        );
        Self { pos, vel, valid }
    }
}

impl Ends for States<'_> {
    #[inline(always)]
    fn state(&self, slot: usize) -> (Vec3A, Vec3A) {
        let position = self.pos[slot];
        // SAFETY: `vel` has the length of `pos` (checked in `new`; the
        // fields are private), which `slot` was just tested against.
        (position, unsafe { *self.vel.get_unchecked(slot) })
    }

    #[inline(always)]
    fn valid(&self, slot: usize) -> bool {
        self.valid[slot]
    }

    #[inline(always)]
    fn chain(&self, slot: usize) -> Option<(&[Vec3A; 5], &[Vec3A; 5])> {
        let x = self.pos.get(slot..)?.first_chunk()?;
        let v = self.vel.get(slot..)?.first_chunk()?;
        Some((x, v))
    }
}

/// A part's own slots (from `base`) and the fixed slots (from `fixed`),
/// which are all a part of whole islands reads: islands share no spring,
/// so every other end is fixed. Another thread may meanwhile write the
/// slots between them.
#[derive(Clone, Copy)]
pub struct PartEnds<'a> {
    pub base: usize,
    pub own: States<'a>,
    pub fixed: usize,
    pub fixed_state: States<'a>,
}

impl Ends for PartEnds<'_> {
    #[inline(always)]
    fn state(&self, slot: usize) -> (Vec3A, Vec3A) {
        if slot >= self.fixed {
            self.fixed_state.state(slot - self.fixed)
        } else {
            self.own.state(slot - self.base)
        }
    }

    #[inline(always)]
    fn valid(&self, slot: usize) -> bool {
        if slot >= self.fixed {
            self.fixed_state.valid(slot - self.fixed)
        } else {
            self.own.valid(slot - self.base)
        }
    }

    #[inline(always)]
    fn chain(&self, slot: usize) -> Option<(&[Vec3A; 5], &[Vec3A; 5])> {
        // Fixed slots have no forces to sum; a chain is of a part's own.
        if slot >= self.fixed {
            return None;
        }
        self.own.chain(slot.wrapping_sub(self.base))
    }
}

/// The forces of `rows`, summed per body in row order into `force`, which
/// holds the slots from `base` on (the dynamic bodies of the rows'
/// islands; a fixed end's slot lies past it, and nothing reads a fixed
/// body's force). With `check`, a spring with an invalid end exerts
/// nothing.
///
/// Always inlined: left to the compiler, changes elsewhere in the crate
/// have made it a call of its own from the passes' sweep, which then ran
/// the ropes of `benches/step.rs` at 1.33–1.36× the plain loop at 1000×100
/// instead of 1.04–1.06× (see `docs/performance.md`).
#[inline(always)]
pub fn add_spring_forces(
    rows: &[SpringRow],
    ends: impl Ends,
    check: bool,
    base: usize,
    force: &mut [Vec3A],
) {
    force.fill(Vec3A::ZERO);
    // The test of `check` chosen once, outside the loop.
    if check {
        sum_forces::<true>(rows, ends, base, force);
    } else {
        sum_forces::<false>(rows, ends, base, force);
    }
}

/// [`add_spring_forces`]'s loop, into zeroed forces. Without `CHECK`, four
/// rows that form a chain of the bodies whose forces are summed here go
/// through [`add_chain_forces`] at once (the same bits: see
/// [`chain`](super::chain)).
#[inline(always)]
fn sum_forces<const CHECK: bool>(
    rows: &[SpringRow],
    ends: impl Ends,
    base: usize,
    force: &mut [Vec3A],
) {
    let mut rest = rows;
    while let Some((row, tail)) = rest.split_first() {
        if !CHECK
            && let Some(block) = rest.first_chunk::<4>()
            && let Some((first, order)) = chain_of(block)
        {
            let sums = force
                .get_mut(first.wrapping_sub(base)..)
                .and_then(|sums| sums.first_chunk_mut());
            if let (Some(sums), Some((x, v))) = (sums, ends.chain(first)) {
                add_chain_forces(block, order, x, v, sums);
                rest = &rest[4..];
                continue;
            }
        }
        let (a, b) = (row.a as usize, row.b as usize);
        let f = if CHECK && !(ends.valid(a) && ends.valid(b)) {
            Vec3A::ZERO
        } else {
            let ((xa, va), (xb, vb)) = (ends.state(a), ends.state(b));
            spring_force(xb - xa, vb - va, row.rest, row.k, row.c)
        };
        if let Some(on_a) = force.get_mut(a.wrapping_sub(base)) {
            *on_a += f;
        }
        if let Some(on_b) = force.get_mut(b.wrapping_sub(base)) {
            *on_b -= f;
        }
        rest = tail;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Hooke's law along the spring and damping of the relative velocity
    /// along it, against `(k·(l − rest) + c·(dv·n))·n` worked by hand for a
    /// 3-4-5 triangle.
    #[test]
    fn force_is_hooke_plus_damping_along_the_spring() {
        let d = Vec3A::new(3.0, 4.0, 0.0);
        let n = Vec3A::new(0.6, 0.8, 0.0);
        // Stretched by 1 (length 5, rest 4), closing at 2 along n, with a
        // sideways velocity that damping must ignore.
        let dv = -2.0 * n + Vec3A::new(-0.8, 0.6, 0.0) * 7.0;
        let f = spring_force(d, dv, 4.0, 10.0, 0.5);
        let expected = n * (10.0 * 1.0 + 0.5 * -2.0);
        assert!((f - expected).length() < 1e-5, "{f} against {expected}");
        // At rest length and not moving along it: no force.
        let none = spring_force(d, Vec3A::new(-0.8, 0.6, 0.0), 5.0, 10.0, 0.5);
        assert!(none.length() < 1e-5, "{none}");
    }

    /// No direction, no force: zero length, or a NaN end.
    #[test]
    fn zero_or_nan_length_gives_no_force() {
        assert_eq!(
            spring_force(Vec3A::ZERO, Vec3A::X, 1.0, 10.0, 1.0),
            Vec3A::ZERO
        );
        let nan = Vec3A::new(f32::NAN, 0.0, 0.0);
        assert_eq!(spring_force(nan, Vec3A::X, 1.0, 10.0, 1.0), Vec3A::ZERO);
    }

    /// Forces sum per body in row order, equal and opposite on the two
    /// ends (momentum), with nothing written for a fixed end past `base`'s
    /// slots, and nothing from a spring with an invalid end under `check`.
    #[test]
    fn rows_sum_equal_and_opposite_forces() {
        let pos = [
            Vec3A::ZERO,
            Vec3A::new(0.0, -1.5, 0.0),
            Vec3A::new(0.0, 1.0, 0.0),
        ];
        let vel = [Vec3A::ZERO, Vec3A::new(0.1, 0.2, 0.0), Vec3A::ZERO];
        let rows = [
            SpringRow {
                a: 0,
                b: 1,
                rest: 1.0,
                k: 100.0,
                c: 1.0,
            },
            // Slot 2 is fixed: past the two dynamic slots.
            SpringRow {
                a: 2,
                b: 0,
                rest: 1.0,
                k: 50.0,
                c: 0.0,
            },
        ];
        let mut force = [Vec3A::ONE; 2];
        add_spring_forces(
            &rows,
            States::new(&pos, &vel, &[true; 3]),
            false,
            0,
            &mut force,
        );
        let first = spring_force(pos[1] - pos[0], vel[1] - vel[0], 1.0, 100.0, 1.0);
        assert_eq!(force[1], -first);
        let second = spring_force(pos[0] - pos[2], vel[0] - vel[2], 1.0, 50.0, 0.0);
        assert_eq!(force[0], first - second);
        assert!(first.length() > 1.0, "the stretched spring pulls: {first}");
        let mut checked = [Vec3A::ONE; 2];
        add_spring_forces(
            &rows,
            States::new(&pos, &vel, &[true, false, true]),
            true,
            0,
            &mut checked,
        );
        assert_eq!(checked, [Vec3A::ZERO; 2]);
    }

    /// Arrays of slots of different lengths are refused when the view is
    /// made, since its reads test a slot against the positions alone.
    #[test]
    #[should_panic(expected = "slot arrays of different lengths")]
    fn states_of_different_lengths_are_refused() {
        let pos = [Vec3A::ZERO; 3];
        States::new(&pos, &pos[..2], &[true; 3]);
    }

    /// A part's view (its own slots, then the fixed ones) gives the same
    /// bits as the whole arrays: slots 2 and 3 form the part, 4 is fixed.
    #[test]
    fn a_parts_view_reads_the_same_ends() {
        let pos: Vec<Vec3A> = (0..5)
            .map(|i| Vec3A::new(i as f32 * 0.3, -(i as f32), 0.1))
            .collect();
        let vel: Vec<Vec3A> = (0..5)
            .map(|i| Vec3A::new(0.2, i as f32 * 0.1, 0.0))
            .collect();
        let valid = [true; 5];
        let rows = [
            SpringRow {
                a: 4,
                b: 2,
                rest: 0.5,
                k: 80.0,
                c: 0.3,
            },
            SpringRow {
                a: 2,
                b: 3,
                rest: 0.5,
                k: 80.0,
                c: 0.3,
            },
        ];
        let mut whole = [Vec3A::ZERO; 2];
        add_spring_forces(&rows, States::new(&pos, &vel, &valid), true, 2, &mut whole);
        let view = PartEnds {
            base: 2,
            own: States::new(&pos[2..4], &vel[2..4], &valid[2..4]),
            fixed: 4,
            fixed_state: States::new(&pos[4..], &vel[4..], &valid[4..]),
        };
        let mut part = [Vec3A::ZERO; 2];
        add_spring_forces(&rows, view, true, 2, &mut part);
        assert_eq!(whole, part);
        assert!(whole[0].length() > 1.0 && whole[1].length() > 1.0);
    }
}

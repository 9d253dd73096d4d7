//! Spring forces on the solver's arrays.
//!
//! A spring from `a` to `b` with direction `n = (x_b − x_a) / |x_b − x_a|`
//! pulls `a` with `f = (k·(|x_b − x_a| − rest) + c·((v_b − v_a)·n)) · n`
//! and pushes `b` with `−f`. Each body's forces are summed in row order, so
//! the sums do not depend on how the rows were split over threads (whole
//! islands per thread).

use bevy::math::Vec3A;

/// The force on the first end of a spring whose second end is at `d` and
/// moves at `dv` relative to it.
#[inline]
pub fn spring_force(d: Vec3A, dv: Vec3A, rest: f32, k: f32, c: f32) -> Vec3A {
    let length = d.length();
    // Zero (or NaN) length: no direction, no force.
    if length.is_nan() || length <= 0.0 {
        return Vec3A::ZERO;
    }
    let n = d / length;
    n * (k * (length - rest) + c * dv.dot(n))
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

/// The forces of `rows`, summed per body in row order into `force`, which
/// holds the slots from `base` on (the dynamic bodies of the rows'
/// islands; a fixed end's slot lies past it, and nothing reads a fixed
/// body's force). With `check`, a spring with an invalid end exerts
/// nothing.
pub fn add_spring_forces(
    rows: &[SpringRow],
    (pos, vel, valid): (&[Vec3A], &[Vec3A], &[bool]),
    check: bool,
    base: usize,
    force: &mut [Vec3A],
) {
    force.fill(Vec3A::ZERO);
    for row in rows {
        let (a, b) = (row.a as usize, row.b as usize);
        let f = if check && !(valid[a] && valid[b]) {
            Vec3A::ZERO
        } else {
            spring_force(pos[b] - pos[a], vel[b] - vel[a], row.rest, row.k, row.c)
        };
        if let Some(on_a) = force.get_mut(a.wrapping_sub(base)) {
            *on_a += f;
        }
        if let Some(on_b) = force.get_mut(b.wrapping_sub(base)) {
            *on_b -= f;
        }
    }
}

//! The floating origin's arithmetic: which whole cells to shift by, and
//! cell sizes as powers of two.

use bevy::math::Vec3;

/// The shift that brings `local` back near zero: on each axis where
/// `|local| > cell`, the nearest whole number of cells to it (so the axis
/// ends within half a cell of zero); 0 on the others. `cell` must be a
/// power of two, which makes `local / cell`, the rounding and the product
/// exact: the shift is a whole number of cells, exactly.
///
/// Non-finite axes are not shifted.
#[inline]
pub fn cell_shift(local: Vec3, cell: f32) -> Vec3 {
    let axis = |x: f32| {
        if x.is_finite() && x.abs() > cell {
            (x / cell).round() * cell
        } else {
            0.0
        }
    };
    Vec3::new(axis(local.x), axis(local.y), axis(local.z))
}

/// The largest power of two not above `size`, clamped to
/// `[min, max]` (both powers of two); `fallback` when `size` is not finite
/// and positive. Read from the bits, so no platform maths is involved.
pub fn power_of_two_at_most(size: f32, min: f32, max: f32, fallback: f32) -> f32 {
    if !(size.is_finite() && size > 0.0) {
        return fallback;
    }
    // Keep the sign and the exponent, drop the significand (a subnormal
    // size is below any sensible `min`, which the clamp restores).
    let floor = f32::from_bits(size.to_bits() & 0xFF80_0000);
    floor.clamp(min, max)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shifts_whole_cells_past_one_cell_only() {
        let cell = 1024.0;
        assert_eq!(
            cell_shift(Vec3::new(1000.0, -1024.0, 0.5), cell),
            Vec3::ZERO
        );
        let s = cell_shift(Vec3::new(1025.0, -3000.0, 5120.5), cell);
        assert_eq!(s, Vec3::new(1024.0, -3072.0, 5120.0));
        // What is left is within half a cell, and exact.
        let left = Vec3::new(1025.0, -3000.0, 5120.5) - s;
        assert_eq!(left, Vec3::new(1.0, 72.0, 0.5));
        assert!(left.abs().max_element() <= cell / 2.0);
    }

    #[test]
    fn huge_and_non_finite_axes() {
        let s = cell_shift(Vec3::new(1e30, f32::NAN, f32::INFINITY), 2048.0);
        assert_eq!(s.x, 1e30, "1e30 is a whole number of cells already");
        assert_eq!((s.y, s.z), (0.0, 0.0));
    }

    #[test]
    fn powers_of_two() {
        let p = |s| power_of_two_at_most(s, 1.0 / 256.0, 16_777_216.0, 1024.0);
        assert_eq!(p(1024.0), 1024.0);
        assert_eq!(p(1000.0), 512.0);
        assert_eq!(p(2047.9), 1024.0);
        assert_eq!(p(0.3), 0.25);
        assert_eq!(p(1e-9), 1.0 / 256.0);
        assert_eq!(p(1e30), 16_777_216.0);
        assert_eq!(p(-4.0), 1024.0);
        assert_eq!(p(f32::NAN), 1024.0);
        assert_eq!(p(f32::INFINITY), 1024.0);
    }
}

//! Spring forces along a chain, four springs at a time.
//!
//! Four rows that join five slots `s, s+1, …, s+4` one after the other,
//! listed down the slots or up them (a rope's springs are laid out in the
//! order of their entities, which may be either), are computed side by
//! side: one spring per lane of a `Vec4`. Each spring's `d·d` and `d·dv`
//! are glam's `dot`, as in [`spring_force`](super::springs::spring_force),
//! and each lane then runs that function's other operations in the same
//! order, so it gives the same bits (IEEE addition, multiplication,
//! division and square root round the same way whatever the width they
//! run at), and each body's forces
//! are summed in row order, as the row-by-row loop sums them. Which rows
//! take this path therefore changes no bit of a step; that is what lets a
//! step split over threads give the same bits whatever the split.
//!
//! One spring alone is a chain of dependent operations (the square root
//! waits for the dot product, the reciprocal for the root); four in the
//! lanes of one register share those waits. (On the ropes of
//! `benches/profile.rs` at 100×100 the spring kernel went from 1.03 M to
//! 0.72 M instructions a step, by callgrind.)

use bevy::math::{Vec3A, Vec4, Vec4Swizzles};

use super::springs::SpringRow;

/// The order of a chain's rows along its slots.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Order {
    /// Row `m` joins slots `s + m` and `s + m + 1`.
    Down,
    /// Row `m` joins slots `s + 3 − m` and `s + 4 − m`.
    Up,
}

/// The first slot `s` and the order of four rows that join the five slots
/// from `s` one after the other (each row from a slot to the next), or
/// `None` if they do not.
#[inline(always)]
pub fn chain_of(rows: &[SpringRow; 4]) -> Option<(usize, Order)> {
    // Each row from a slot to the next, and each row's first slot one
    // past (down) or one before (up) the previous row's.
    let links = rows.iter().all(|row| row.b == row.a.wrapping_add(1));
    let step = |m: usize| rows[m].a.wrapping_sub(rows[m - 1].a);
    let (first, second, third) = (step(1), step(2), step(3));
    if !links || first != second || first != third {
        return None;
    }
    match first {
        1 => Some((rows[0].a as usize, Order::Down)),
        u32::MAX => Some((rows[3].a as usize, Order::Up)),
        _ => None,
    }
}

/// The forces of four rows that form a chain in `order` ([`chain_of`])
/// over five slots with positions `x` and velocities `v`, added into
/// those slots' `force` in row order. With `fⱼ` the force of the spring
/// from slot `j` to `j + 1`, pulling slot `j`: down the slots, slot `j`
/// (1 to 3) gets `−fⱼ₋₁` then `+fⱼ`; up them, `+fⱼ` then `−fⱼ₋₁`.
#[inline(always)]
pub fn add_chain_forces(
    rows: &[SpringRow; 4],
    order: Order,
    x: &[Vec3A; 5],
    v: &[Vec3A; 5],
    force: &mut [Vec3A; 5],
) {
    // Spring j joins slots j and j + 1.
    let row = |j: usize| match order {
        Order::Down => &rows[j],
        Order::Up => &rows[3 - j],
    };
    let d: [Vec3A; 4] = core::array::from_fn(|j| x[j + 1] - x[j]);
    let dv: [Vec3A; 4] = core::array::from_fn(|j| v[j + 1] - v[j]);
    // Each spring's `d·d` and `d·dv` by glam's `dot`, as `spring_force`
    // takes them, the four results then side by side. (Taking each axis of
    // the four `d` into a lane instead let the compiler, in some builds,
    // store them and load them back at unaligned offsets: a stall that
    // cost a third of the step.)
    let squared = side_by_side(|j| d[j].dot(d[j]));
    let along = side_by_side(|j| d[j].dot(dv[j]));
    let (r0, r1, r2, r3) = (row(0), row(1), row(2), row(3));
    let rest = Vec4::new(r0.rest, r1.rest, r2.rest, r3.rest);
    let k = Vec4::new(r0.k, r1.k, r2.k, r3.k);
    let c = Vec4::new(r0.c, r1.c, r2.c, r3.c);
    // As `spring_force`: l = √(d·d), along = d·dv, then
    // d · (k·(l − rest) + c·along/l) / l, with one reciprocal.
    let length = squared.sqrt();
    let inverse = Vec4::ONE / length;
    let scale = (k * (length - rest) + c * along * inverse) * inverse;
    // Each lane broadcast in its register: taking the lanes out as an
    // array let the compiler, in some builds, store the vector and load
    // it back at unaligned offsets, a stall that cost a third of the step.
    let scale = [scale.xxxx(), scale.yyyy(), scale.zzzz(), scale.wwww()].map(Vec3A::from_vec4);
    // No direction (zero or NaN length): no force, as `spring_force`.
    let live = length.cmpgt(Vec4::ZERO).bitmask();
    let f: [Vec3A; 4] = core::array::from_fn(|j| {
        if live & (1 << j) != 0 {
            d[j] * scale[j]
        } else {
            Vec3A::ZERO
        }
    });
    match order {
        Order::Down => {
            force[0] += f[0];
            for j in 1..4 {
                force[j] = force[j] - f[j - 1] + f[j];
            }
            force[4] -= f[3];
        }
        Order::Up => {
            force[4] -= f[3];
            for j in (1..4).rev() {
                force[j] = force[j] + f[j] - f[j - 1];
            }
            force[0] += f[0];
        }
    }
}

/// The four values of `of(0)` to `of(3)` in the lanes of a `Vec4`.
#[inline(always)]
fn side_by_side(of: impl Fn(usize) -> f32) -> Vec4 {
    Vec4::new(of(0), of(1), of(2), of(3))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kernels::springs::spring_force;

    /// A small deterministic generator, so the test needs no crate.
    fn noise(seed: &mut u32) -> f32 {
        *seed ^= *seed << 13;
        *seed ^= *seed >> 17;
        *seed ^= *seed << 5;
        (*seed >> 8) as f32 / (1u32 << 24) as f32 - 0.5
    }

    /// The row-by-row sums of `spring_force`, as `add_spring_forces` takes
    /// them.
    fn row_by_row(rows: &[SpringRow; 4], x: &[Vec3A; 5], v: &[Vec3A; 5], force: &mut [Vec3A; 5]) {
        for row in rows {
            let (a, b) = (row.a as usize, row.b as usize);
            let f = spring_force(x[b] - x[a], v[b] - v[a], row.rest, row.k, row.c);
            force[a] += f;
            force[b] -= f;
        }
    }

    /// The four lanes give the bits of the row-by-row loop, for random
    /// chains with forces already summed into the slots, and with ends
    /// that coincide (zero length) or are not numbers.
    #[test]
    fn four_lanes_give_the_bits_of_one_row_at_a_time() {
        let mut seed = 0x2545_f491;
        for case in 0..2000 {
            let mut x: [Vec3A; 5] = core::array::from_fn(|_| {
                Vec3A::new(noise(&mut seed), noise(&mut seed), noise(&mut seed)) * 3.0
            });
            let v: [Vec3A; 5] = core::array::from_fn(|_| {
                Vec3A::new(noise(&mut seed), noise(&mut seed), noise(&mut seed)) * 8.0
            });
            match case % 5 {
                1 => x[2] = x[1],
                2 => x[3].y = f32::NAN,
                3 => x[0] = Vec3A::splat(f32::INFINITY),
                _ => {}
            }
            let mut rows: [SpringRow; 4] = core::array::from_fn(|m| SpringRow {
                a: m as u32,
                b: m as u32 + 1,
                rest: 0.5 + noise(&mut seed),
                k: 100.0 * (1.0 + noise(&mut seed)),
                c: 2.0 * (0.5 + noise(&mut seed)),
            });
            let order = if case % 2 == 0 {
                Order::Down
            } else {
                Order::Up
            };
            if order == Order::Up {
                rows.reverse();
            }
            assert_eq!(chain_of(&rows), Some((0, order)));
            let start: [Vec3A; 5] = core::array::from_fn(|_| Vec3A::splat(noise(&mut seed)));
            let (mut lanes, mut rowwise) = (start, start);
            add_chain_forces(&rows, order, &x, &v, &mut lanes);
            row_by_row(&rows, &x, &v, &mut rowwise);
            // The same bits, where a number; a NaN where the other has one
            // (which NaN an operation returns may depend on the order of
            // its operands, which the compiler is free to swap).
            let bits = |f: &[Vec3A; 5]| {
                f.map(|f| {
                    f.to_array()
                        .map(|c| if c.is_nan() { u32::MAX } else { c.to_bits() })
                })
            };
            assert_eq!(bits(&lanes), bits(&rowwise), "case {case}");
        }
    }

    /// Each spring of a still chain stretched by 0.5: the two ends are
    /// pulled in, and the bodies between are pulled both ways alike.
    #[test]
    fn a_stretched_chain_pulls_its_ends_in() {
        let x: [Vec3A; 5] = core::array::from_fn(|i| Vec3A::new(0.0, -1.5 * i as f32, 0.0));
        let v = [Vec3A::ZERO; 5];
        let rows: [SpringRow; 4] = core::array::from_fn(|m| SpringRow {
            a: m as u32,
            b: m as u32 + 1,
            rest: 1.0,
            k: 10.0,
            c: 0.5,
        });
        let mut force = [Vec3A::ZERO; 5];
        add_chain_forces(&rows, Order::Down, &x, &v, &mut force);
        assert_eq!(force[0], Vec3A::new(0.0, -5.0, 0.0));
        assert_eq!(force[4], Vec3A::new(0.0, 5.0, 0.0));
        assert_eq!(&force[1..4], &[Vec3A::ZERO; 3]);
    }

    /// Rows out of order, turned around, or skipping a slot are not a
    /// chain; rows down or up the slots are, from the lowest slot.
    #[test]
    fn only_rows_in_order_along_the_slots_are_a_chain() {
        let row = |a, b| SpringRow {
            a,
            b,
            rest: 1.0,
            k: 1.0,
            c: 0.0,
        };
        let down = [row(7, 8), row(8, 9), row(9, 10), row(10, 11)];
        assert_eq!(chain_of(&down), Some((7, Order::Down)));
        let mut up = down;
        up.reverse();
        assert_eq!(chain_of(&up), Some((7, Order::Up)));
        for not in [
            [row(7, 8), row(9, 10), row(8, 9), row(10, 11)],
            [row(8, 7), row(9, 8), row(10, 9), row(11, 10)],
            [row(7, 8), row(8, 9), row(9, 11), row(11, 12)],
            [row(7, 8), row(8, 9), row(9, 10), row(10, 12)],
            [row(10, 11), row(9, 10), row(8, 9), row(6, 7)],
            [
                row(0, 1),
                row(u32::MAX, 0),
                row(u32::MAX - 1, u32::MAX),
                row(0, 1),
            ],
        ] {
            assert_eq!(chain_of(&not), None, "{:?}", not.map(|r| (r.a, r.b)));
        }
    }
}

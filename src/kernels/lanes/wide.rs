//! Two groups of one level at once: eight lanes to one of AVX's 256-bit
//! registers, where the processor has AVX (found at run time).
//!
//! Two groups of one level share no moving body ([`pack`](super::pack)),
//! so solving them at once gives the bits of solving them in turn. Each
//! lane here does what a lane of a [`Group`] does, operation for
//! operation and in the same order (Rust never fuses a multiply and an
//! add), so a step's bits do not depend on whether the processor has AVX
//! (`two_at_once_give_the_bits_of_one_after_the_other`).
//!
//! Written with the processor's 256-bit instructions: each operation below
//! is one instruction on eight lanes, the same IEEE operation a lane of
//! SSE's does (`max` and `>` included, NaN and all).

use core::arch::x86_64::{
    __m256, _CMP_GT_OQ, _mm256_add_ps, _mm256_blendv_ps, _mm256_castps256_ps128, _mm256_cmp_ps,
    _mm256_div_ps, _mm256_extractf128_ps, _mm256_max_ps, _mm256_movemask_ps, _mm256_mul_ps,
    _mm256_set_m128, _mm256_setzero_ps, _mm256_sqrt_ps, _mm256_sub_ps,
};

use bevy::math::{Vec3A, Vec4};

use super::{Group, Visit, gather, scatter, visit_one};

/// A value per lane of two groups.
type W = __m256;

/// Whether [`in_pairs`] may run on this processor (the answer is cached
/// by the standard library).
#[inline]
pub fn available() -> bool {
    std::arch::is_x86_feature_detected!("avx")
}

/// [`solve_groups`](super::solve_groups): each group of the level of the
/// one before it visited with that one, at once.
///
/// # Safety
/// The processor has AVX ([`available`]).
#[target_feature(enable = "avx")]
pub unsafe fn in_pairs(
    groups: &mut [Group],
    visit: Visit,
    get: impl Fn(usize) -> Vec3A,
    mut set: impl FnMut(usize, Vec3A),
) {
    let mut i = 0;
    while i < groups.len() {
        if groups.get(i + 1).is_some_and(|next| next.beside) {
            let (first, second) = groups[i..].split_at_mut(1);
            visit_two([&mut first[0], &mut second[0]], visit, &get, &mut set);
            i += 2;
        } else {
            visit_one(&mut groups[i], visit, &get, &mut set);
            i += 1;
        }
    }
}

/// One visit of two groups that share no moving body.
#[target_feature(enable = "avx")]
#[inline]
fn visit_two(
    [g, h]: [&mut Group; 2],
    visit: Visit,
    get: &impl Fn(usize) -> Vec3A,
    set: &mut impl FnMut(usize, Vec3A),
) {
    // Neither group writes a body the other reads (they share no moving
    // body), so both may be read before either is written.
    let va = join3(gather(get, g.a), gather(get, h.a));
    let vb = join3(gather(get, g.b), gather(get, h.b));
    let (va, vb) = match visit {
        Visit::WarmStart => warm_start([g, h], va, vb),
        Visit::Round => {
            let target = join(g.target, h.target);
            solve_to([g, h], target, va, vb)
        }
        Visit::Relax => {
            let target = join(g.relaxed, h.relaxed);
            solve_to([g, h], target, va, vb)
        }
    };
    let ((ga, ha), (gb, hb)) = (split3(va), split3(vb));
    scatter(&mut *set, g.a, g.writes[0], ga);
    scatter(&mut *set, g.b, g.writes[1], gb);
    scatter(&mut *set, h.a, h.writes[0], ha);
    scatter(&mut *set, h.b, h.writes[1], hb);
}

/// [`Group::warm_start`] of two groups.
#[target_feature(enable = "avx")]
#[inline]
fn warm_start([g, h]: [&mut Group; 2], va: [W; 3], vb: [W; 3]) -> ([W; 3], [W; 3]) {
    let impulse = join(g.normal_impulse, h.normal_impulse);
    let n = join3(g.normal, h.normal);
    let f = join3(g.friction_impulse, h.friction_impulse);
    let push = add3(scale(impulse, n), f);
    let (wa, wb) = (join(g.wa, h.wa), join(g.wb, h.wb));
    (sub3(va, scale(wa, push)), add3(vb, scale(wb, push)))
}

/// What [`Group::solve`] and [`Group::relax`] do, for two groups: one
/// round aiming at the normal speeds `target`.
#[target_feature(enable = "avx")]
#[inline]
fn solve_to([g, h]: [&mut Group; 2], target: W, va: [W; 3], vb: [W; 3]) -> ([W; 3], [W; 3]) {
    let n = join3(g.normal, h.normal);
    let (wa, wb) = (join(g.wa, h.wa), join(g.wb, h.wb));
    let mass = join(g.mass, h.mass);
    let held = join(g.normal_impulse, h.normal_impulse);
    // Normal: accumulated, never pulling.
    let speed = dot(n, sub3(vb, va));
    let wanted = _mm256_add_ps(held, _mm256_mul_ps(_mm256_sub_ps(target, speed), mass));
    let total = _mm256_max_ps(wanted, _mm256_setzero_ps());
    let change = _mm256_sub_ps(total, held);
    let push = scale(change, n);
    let (va, vb) = (sub3(va, scale(wa, push)), add3(vb, scale(wb, push)));
    (g.normal_impulse, h.normal_impulse) = split(total);
    // Friction: accumulated, within the Coulomb cone.
    let friction = join3(g.friction_impulse, h.friction_impulse);
    let relative = sub3(vb, va);
    let along = dot(n, relative);
    let tangential = sub3(relative, scale(along, n));
    let wanted = sub3(friction, scale(mass, tangential));
    let limit = _mm256_mul_ps(join(g.friction, h.friction), total);
    let length2 = dot(wanted, wanted);
    let over = _mm256_cmp_ps::<_CMP_GT_OQ>(length2, _mm256_mul_ps(limit, limit));
    let total = if _mm256_movemask_ps(over) != 0 {
        let shrink = _mm256_div_ps(limit, _mm256_sqrt_ps(length2));
        let within = |w: W| _mm256_blendv_ps(w, _mm256_mul_ps(w, shrink), over);
        [within(wanted[0]), within(wanted[1]), within(wanted[2])]
    } else {
        wanted
    };
    let push = sub3(total, friction);
    (g.friction_impulse, h.friction_impulse) = split3(total);
    (sub3(va, scale(wa, push)), add3(vb, scale(wb, push)))
}

/// The lanes of `p`, then those of `q`.
#[target_feature(enable = "avx")]
#[inline]
fn join(p: Vec4, q: Vec4) -> W {
    _mm256_set_m128(q.into(), p.into())
}

#[target_feature(enable = "avx")]
#[inline]
fn join3(p: [Vec4; 3], q: [Vec4; 3]) -> [W; 3] {
    [join(p[0], q[0]), join(p[1], q[1]), join(p[2], q[2])]
}

/// The first four lanes, and the last four.
#[target_feature(enable = "avx")]
#[inline]
fn split(x: W) -> (Vec4, Vec4) {
    (
        _mm256_castps256_ps128(x).into(),
        _mm256_extractf128_ps::<1>(x).into(),
    )
}

#[target_feature(enable = "avx")]
#[inline]
fn split3(x: [W; 3]) -> ([Vec4; 3], [Vec4; 3]) {
    let [(p0, q0), (p1, q1), (p2, q2)] = [split(x[0]), split(x[1]), split(x[2])];
    ([p0, p1, p2], [q0, q1, q2])
}

/// `p₀q₀ + p₁q₁ + p₂q₂`, summed in that order.
#[target_feature(enable = "avx")]
#[inline]
fn dot(p: [W; 3], q: [W; 3]) -> W {
    let xy = _mm256_add_ps(_mm256_mul_ps(p[0], q[0]), _mm256_mul_ps(p[1], q[1]));
    _mm256_add_ps(xy, _mm256_mul_ps(p[2], q[2]))
}

#[target_feature(enable = "avx")]
#[inline]
fn add3(p: [W; 3], q: [W; 3]) -> [W; 3] {
    [
        _mm256_add_ps(p[0], q[0]),
        _mm256_add_ps(p[1], q[1]),
        _mm256_add_ps(p[2], q[2]),
    ]
}

#[target_feature(enable = "avx")]
#[inline]
fn sub3(p: [W; 3], q: [W; 3]) -> [W; 3] {
    [
        _mm256_sub_ps(p[0], q[0]),
        _mm256_sub_ps(p[1], q[1]),
        _mm256_sub_ps(p[2], q[2]),
    ]
}

/// `s` times each axis.
#[target_feature(enable = "avx")]
#[inline]
fn scale(s: W, p: [W; 3]) -> [W; 3] {
    [
        _mm256_mul_ps(s, p[0]),
        _mm256_mul_ps(s, p[1]),
        _mm256_mul_ps(s, p[2]),
    ]
}

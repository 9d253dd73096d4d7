//! The two halves of a semi-implicit Euler pass, on one body and on the
//! slots of a part of a pass.
//!
//! For a body of inverse mass `w` under force `F`, one pass of step `h` is
//!
//! ```text
//! v ← (v + h·(g + w·F)) / (1 + h·c)     kick, then Padé damping
//! x ← x + h·v                           drift, with the NEW velocity
//! ```

use bevy::math::Vec3A;

/// One body's kick in a pass of step `h`: `(v + h·(g + w·F)) / (1 + h·c)`,
/// with no division for `c == 0` (the same bits).
#[inline(always)]
pub fn kicked(v: Vec3A, h: f32, g: Vec3A, force: Vec3A, w: f32, c: f32) -> Vec3A {
    let v = v + h * (g + force * w);
    if c != 0.0 { v / (1.0 + h * c) } else { v }
}

/// One body's drift in a pass of step `h`: `x + h·v`, or `None` if that is
/// not finite (a non-finite velocity makes it so: 0·∞ is NaN).
#[inline(always)]
pub fn drifted(x: Vec3A, h: f32, v: Vec3A) -> Option<Vec3A> {
    let position = x + h * v;
    position.is_finite().then_some(position)
}

/// The slots of some of a group's islands, `base..base + pos.len()`, which
/// one part of a pass kicks and moves.
pub struct Part<'a> {
    /// The first slot.
    pub base: usize,
    pub pos: &'a mut [Vec3A],
    pub vel: &'a mut [Vec3A],
    /// Whether each slot can be stepped; cleared when it diverges.
    pub valid: &'a mut [bool],
    /// Set when a slot's state turned non-finite in this step.
    pub diverged: &'a mut [bool],
    /// The spring forces of this pass.
    pub force: &'a [Vec3A],
}

/// What a kick reads besides the part's own slots, for all slots.
pub struct Kick<'a> {
    pub h: f32,
    pub g: Vec3A,
    /// Also move each body (no rods or contacts between kick and drift).
    pub drift: bool,
    /// Forces taken from the components for this pass, constant forces and
    /// damping, when any body of the step has one.
    pub extras: Option<(&'a [Vec3A], &'a [Vec3A], &'a [f32])>,
    pub inv_mass: &'a [f32],
}

impl Kick<'_> {
    /// The kick (then, with `drift`, the drift) of each valid dynamic slot
    /// of `part`; true if a position turned non-finite.
    pub fn run(&self, part: &mut Part) -> bool {
        let range = part.base..part.base + part.pos.len();
        let inv_mass = &self.inv_mass[range.clone()];
        match self.extras {
            None => self.run_with(part, inv_mass, |_, springs| springs + Vec3A::ZERO, |_| 0.0),
            Some((pending, constant, damping)) => {
                let (pending, constant, damping) = (
                    &pending[range.clone()],
                    &constant[range.clone()],
                    &damping[range],
                );
                self.run_with(
                    part,
                    inv_mass,
                    |j, springs| springs + (pending[j] + constant[j]),
                    |j| damping[j],
                )
            }
        }
    }

    /// The kick (and drift) with each body's total force from `force(j,
    /// springs)` and its damping from `damping(j)`.
    #[inline(always)]
    fn run_with(
        &self,
        part: &mut Part,
        inv_mass: &[f32],
        force: impl Fn(usize, Vec3A) -> Vec3A,
        damping: impl Fn(usize) -> f32,
    ) -> bool {
        let (h, g) = (self.h, self.g);
        let mut diverged = false;
        let bodies = part
            .pos
            .iter_mut()
            .zip(part.vel.iter_mut())
            .zip(part.valid.iter_mut().zip(part.diverged.iter_mut()))
            .zip(part.force.iter().zip(inv_mass));
        for (j, (((x, v), (valid, bad)), (&springs, &w))) in bodies.enumerate() {
            // A body made fixed since the rebuild stays put until the next.
            if !*valid || w <= 0.0 {
                continue;
            }
            let velocity = kicked(*v, h, g, force(j, springs), w, damping(j));
            *v = velocity;
            if self.drift {
                diverged |= drift(h, x, velocity, valid, bad);
            }
        }
        diverged
    }
}

/// `x ← x + h·v`; true (and the slot marked) if the new position is not
/// finite, which is then not written.
#[inline(always)]
fn drift(h: f32, x: &mut Vec3A, v: Vec3A, valid: &mut bool, diverged: &mut bool) -> bool {
    match drifted(*x, h, v) {
        Some(position) => {
            *x = position;
            false
        }
        None => {
            *valid = false;
            *diverged = true;
            true
        }
    }
}

/// The drift alone (after the rods and contacts) of each valid dynamic slot
/// of `part`; true if a position turned non-finite.
pub fn drift_all(h: f32, inv_mass: &[f32], part: &mut Part) -> bool {
    let mut any = false;
    let inv_mass = &inv_mass[part.base..part.base + part.pos.len()];
    let bodies = part
        .pos
        .iter_mut()
        .zip(part.vel.iter())
        .zip(part.valid.iter_mut().zip(part.diverged.iter_mut()))
        .zip(inv_mass);
    for (((x, &v), (valid, bad)), &w) in bodies {
        if *valid && w > 0.0 {
            any |= drift(h, x, v, valid, bad);
        }
    }
    any
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Padé damping under gravity alone settles at exactly `g / c`, for a
    /// step far past any explicit limit.
    #[test]
    fn terminal_velocity_is_g_over_c_for_any_step() {
        let g = Vec3A::new(0.0, -10.0, 0.0);
        for h in [0.001, 0.1, 10.0] {
            let mut v = Vec3A::ZERO;
            for _ in 0..20_000 {
                v = kicked(v, h, g, Vec3A::ZERO, 1.0, 4.0);
            }
            assert!((v.y + 2.5).abs() < 1e-4, "h = {h}: {v}");
        }
    }

    /// A unit oscillator stepped kick-then-drift keeps its energy within
    /// `O(ω·h)` of the start for 10 000 steps at ω·h = 0.5.
    #[test]
    fn kick_then_drift_keeps_an_oscillators_energy_bounded() {
        let (h, k) = (0.5, 1.0);
        let (mut x, mut v) = (Vec3A::X, Vec3A::ZERO);
        for _ in 0..10_000 {
            v = kicked(v, h, Vec3A::ZERO, -k * x, 1.0, 0.0);
            x = drifted(x, h, v).unwrap();
            let energy = 0.5 * v.length_squared() + 0.5 * k * x.length_squared();
            assert!((energy - 0.5).abs() < 0.5 * h, "energy {energy}");
        }
    }

    /// A part skips fixed and invalid slots and marks one whose drift is
    /// not finite, leaving its position as it was.
    #[test]
    fn a_part_steps_valid_dynamic_slots_and_marks_divergence() {
        let mut pos = [Vec3A::ZERO, Vec3A::ONE, Vec3A::ZERO];
        let mut vel = [Vec3A::X, Vec3A::X, Vec3A::splat(f32::MAX)];
        let mut valid = [true, true, true];
        let mut diverged = [false; 3];
        let force = [Vec3A::ZERO; 3];
        let inv_mass = [1.0, 0.0, 1.0];
        let kick = Kick {
            h: 4.0,
            g: Vec3A::ZERO,
            drift: true,
            extras: None,
            inv_mass: &inv_mass,
        };
        let mut part = Part {
            base: 0,
            pos: &mut pos,
            vel: &mut vel,
            valid: &mut valid,
            diverged: &mut diverged,
            force: &force,
        };
        assert!(kick.run(&mut part));
        assert_eq!(pos[0], Vec3A::new(4.0, 0.0, 0.0));
        assert_eq!(pos[1], Vec3A::ONE, "a fixed slot does not move");
        assert_eq!(pos[2], Vec3A::ZERO, "a diverged position is not written");
        assert_eq!(
            (valid, diverged),
            ([true, true, false], [false, false, true])
        );
    }
}

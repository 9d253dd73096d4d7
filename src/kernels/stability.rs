//! The stability limit of semi-implicit Euler for a damped spring.
//!
//! Two bodies of inverse masses `w_a`, `w_b` on a spring of stiffness `k`
//! and damping `c` move relative to each other like one body of inverse mass
//! `w = w_a + w_b`: `ẍ = −ω²·x − γ·ẋ` with `ω² = k·w` and `γ = c·w`. One step
//! of semi-implicit Euler maps `(x, v)` by a matrix with trace
//! `2 − γh − ω²h²` and determinant `1 − γh`; both eigenvalues stay inside the
//! unit circle (Jury's criterion) while
//!
//! ```text
//! (ω·h)² + 2·γ·h < 4      and      γ·h < 2.
//! ```
//!
//! Splitting the step into `k` substeps divides `h` by `k`.

/// The stability of one spring: its `ω²` and `γ` for the reduced mass of its
/// two ends.
///
/// # Example
///
/// ```
/// use bevy_euler_physics::SpringStability;
///
/// // 1000 N/m between two 1 kg bodies: ω² = 2000, ω ≈ 44.7 rad/s.
/// let s = SpringStability::new(1000.0, 0.0, 2.0);
/// assert!(s.is_stable(1.0 / 60.0)); // ω·h ≈ 0.75
/// assert!(!s.is_stable(0.1)); // ω·h ≈ 4.5
/// assert_eq!(s.substeps_needed(0.1), 3);
/// ```
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SpringStability {
    /// `ω² = k·(w_a + w_b)`, in 1/s².
    pub omega_squared: f32,
    /// `γ = c·(w_a + w_b)`, in 1/s.
    pub gamma: f32,
}

impl SpringStability {
    /// The stability data of a spring of stiffness `k` and damping `c`
    /// between two bodies whose inverse masses add up to `inv_mass_sum`.
    pub fn new(k: f32, c: f32, inv_mass_sum: f32) -> Self {
        Self {
            omega_squared: k * inv_mass_sum,
            gamma: c * inv_mass_sum,
        }
    }

    /// `(ω·h)² + 2·γ·h`: the spring is stable at step `h` while this stays
    /// below 4 (and `γ·h < 2`).
    pub fn criterion(&self, h: f32) -> f32 {
        self.omega_squared * h * h + 2.0 * self.gamma * h
    }

    /// Whether semi-implicit Euler with step `h` keeps the spring stable.
    pub fn is_stable(&self, h: f32) -> bool {
        self.criterion(h) < 4.0 && self.gamma * h < 2.0
    }

    /// The smallest number of substeps `k ≥ 1` for which step `h / k` is
    /// stable; `u32::MAX` if none is (non-finite parameters).
    pub fn substeps_needed(&self, h: f32) -> u32 {
        if !(self.omega_squared.is_finite() && self.gamma.is_finite()) {
            return u32::MAX;
        }
        // Start from the closed form of the largest stable step, then fix
        // rounding by checking the neighbours.
        let w2 = f64::from(self.omega_squared);
        let g = f64::from(self.gamma);
        let max_step = if w2 > 0.0 {
            (-g + (g * g + 4.0 * w2).sqrt()) / w2
        } else if g > 0.0 {
            2.0 / g
        } else {
            return 1;
        };
        let mut k = ((f64::from(h) / max_step).floor() as u32).max(1);
        while k > 1 && self.is_stable(h / (k - 1) as f32) {
            k -= 1;
        }
        while !self.is_stable(h / k as f32) {
            k = k.saturating_add(1);
            if k == u32::MAX {
                break;
            }
        }
        k
    }

    /// How much of the stability limit a step `h` uses:
    /// `max(√((ω·h)² + 2·γ·h) / 2, γ·h / 2)`. The step is stable while it
    /// is below 1.
    ///
    /// ```
    /// use bevy_euler_physics::SpringStability;
    /// // ω = 10 rad/s, no damping: ω·h = 1 is half the limit ω·h = 2.
    /// let s = SpringStability::new(100.0, 0.0, 1.0);
    /// assert!((s.load(0.1) - 0.5).abs() < 1e-6);
    /// ```
    pub fn load(&self, h: f32) -> f32 {
        (0.5 * self.criterion(h).max(0.0).sqrt()).max(0.5 * self.gamma * h)
    }

    /// The smallest substep count `n` in `1..=cap` with
    /// `load(h / n) <= target`, or `cap` when none is.
    ///
    /// ```
    /// use bevy_euler_physics::SpringStability;
    /// // ω·h = 6: three times the limit. At 90 % of the limit: 4 substeps.
    /// let s = SpringStability::new(36.0, 0.0, 1.0);
    /// assert_eq!(s.substeps_for_load(1.0, 0.9, 64), 4);
    /// ```
    pub fn substeps_for_load(&self, h: f32, target: f32, cap: u32) -> u32 {
        let cap = cap.max(1);
        if !(self.omega_squared.is_finite() && self.gamma.is_finite()) {
            return cap;
        }
        // The load is at most ω·h/2 + γ·h/2 and at least ω·h/2; start from
        // the closed form for ω alone, then walk to the exact answer.
        let guess = (f64::from(self.omega_squared).sqrt() * f64::from(h)
            / (2.0 * f64::from(target.max(f32::MIN_POSITIVE))))
        .floor()
        .clamp(1.0, f64::from(cap)) as u32;
        let fits = |n: u32| self.load(h / n as f32) <= target;
        let mut n = guess;
        while n > 1 && fits(n - 1) {
            n -= 1;
        }
        while n < cap && !fits(n) {
            n += 1;
        }
        n
    }

    /// `ω·h`.
    pub fn omega_h(&self, h: f32) -> f32 {
        self.omega_squared.sqrt() * h
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn undamped_limit_is_omega_h_two() {
        // ω = 10 rad/s: stable below h = 0.2, unstable above.
        let s = SpringStability::new(100.0, 0.0, 1.0);
        assert!(s.is_stable(0.199));
        assert!(!s.is_stable(0.201));
    }

    #[test]
    fn damping_lowers_the_limit() {
        let undamped = SpringStability::new(100.0, 0.0, 1.0);
        let damped = SpringStability::new(100.0, 5.0, 1.0);
        assert!(undamped.is_stable(0.19));
        assert!(!damped.is_stable(0.19));
    }

    #[test]
    fn substeps_needed_is_the_smallest_stable_count() {
        for &(k, c, h) in &[
            (1000.0, 0.0, 0.1),
            (1.0e5, 3.0, 1.0 / 60.0),
            (50.0, 50.0, 0.5),
        ] {
            let s = SpringStability::new(k, c, 2.0);
            let n = s.substeps_needed(h);
            assert!(s.is_stable(h / n as f32), "{n} substeps must be stable");
            if n > 1 {
                assert!(
                    !s.is_stable(h / (n - 1) as f32),
                    "{} substeps must not be",
                    n - 1
                );
            }
        }
    }

    #[test]
    fn load_is_one_on_the_limit() {
        let undamped = SpringStability::new(100.0, 0.0, 1.0);
        assert!((undamped.load(0.2) - 1.0).abs() < 1e-6);
        // Damping alone: γ·h = 2 is the limit.
        let damping_only = SpringStability::new(0.0, 10.0, 1.0);
        assert!((damping_only.load(0.2) - 1.0).abs() < 1e-6);
        // Stable exactly when the load is below one.
        for h in [0.05, 0.1, 0.15, 0.19, 0.21, 0.3] {
            let s = SpringStability::new(100.0, 3.0, 1.0);
            assert_eq!(s.is_stable(h), s.load(h) < 1.0, "h = {h}");
        }
    }

    #[test]
    fn substeps_for_load_is_the_smallest_count_within_target() {
        for &(k, c, h, target) in &[
            (1000.0, 0.0, 0.1, 0.9),
            (1.0e5, 3.0, 1.0 / 60.0, 0.5),
            (50.0, 50.0, 0.5, 0.9),
            (18.0, 0.0, 1.0, 0.9),
        ] {
            let s = SpringStability::new(k, c, 1.0);
            let n = s.substeps_for_load(h, target, 256);
            assert!(s.load(h / n as f32) <= target, "{n} substeps must fit");
            if n > 1 {
                assert!(s.load(h / (n - 1) as f32) > target, "{} must not", n - 1);
            }
        }
        // The cap wins.
        assert_eq!(
            SpringStability::new(1.0e9, 0.0, 1.0).substeps_for_load(1.0, 0.9, 8),
            8
        );
    }

    #[test]
    fn fixed_pairs_and_zero_stiffness_need_one_step() {
        assert_eq!(
            SpringStability::new(1.0e9, 1.0e9, 0.0).substeps_needed(1.0),
            1
        );
        assert_eq!(SpringStability::new(0.0, 0.0, 1.0).substeps_needed(1.0), 1);
    }
}

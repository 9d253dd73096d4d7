//! The `integrator_lab` example's headless mode, run as a program and held
//! to the theory of the four methods on the spring `a = −k·x` (unit mass).
//!
//! The example needs the `debug-ui` feature, so these tests only exist with
//! it; `cargo test` builds the examples before it runs the tests.

#[cfg(feature = "debug-ui")]
mod lab;

#[cfg(feature = "debug-ui")]
mod headless {
    use super::lab::run;

    /// The default start: position (3, 0), velocity (0, 4), stiffness 4.
    const K: f64 = 4.0;
    /// ω = √k.
    const OMEGA: f64 = 2.0;
    /// E₀ = ½|v₀|² + ½k|x₀|² = ½·16 + ½·4·9.
    const E0: f64 = 26.0;

    /// The five readouts of a successful headless run.
    #[derive(Debug)]
    struct Readouts {
        time: f64,
        energy: f64,
        drift: f64,
        error: f64,
        speed: f64,
    }

    /// Runs `steps` steps of `dt` with stiffness 4, no drag and no gravity.
    fn headless(method: &str, dt: f64, steps: u64) -> Readouts {
        headless_with(method, dt, steps, 0.0, 0.0)
    }

    fn headless_with(method: &str, dt: f64, steps: u64, drag: f64, gravity: f64) -> Readouts {
        let [dt, steps, stiffness, drag, gravity] = [
            dt.to_string(),
            steps.to_string(),
            K.to_string(),
            drag.to_string(),
            gravity.to_string(),
        ];
        let args = [
            "--headless",
            "--method",
            method,
            "--dt",
            &dt,
            "--stiffness",
            &stiffness,
            "--drag",
            &drag,
            "--gravity",
            &gravity,
            "--steps",
            &steps,
        ];
        let output = run(&args);
        let stdout = String::from_utf8_lossy(&output.stdout);
        assert!(
            output.status.success(),
            "{args:?} failed: {}\n{stdout}",
            String::from_utf8_lossy(&output.stderr)
        );
        let lines: Vec<&str> = stdout.lines().collect();
        let labels = ["time", "energy", "drift", "error", "speed"];
        assert_eq!(lines.len(), labels.len(), "{args:?}: {stdout}");
        let mut values = [0.0; 5];
        for ((line, label), value) in lines.iter().zip(labels).zip(&mut values) {
            let text = line
                .strip_prefix(label)
                .and_then(|rest| rest.strip_prefix(": "))
                .unwrap_or_else(|| panic!("{args:?}: expected `{label}: …`, got {line:?}"));
            *value = text
                .parse()
                .unwrap_or_else(|e| panic!("{args:?}: {label} {text:?}: {e}"));
        }
        let [time, energy, drift, error, speed] = values;
        Readouts {
            time,
            energy,
            drift,
            error,
            speed,
        }
    }

    #[test]
    fn zero_steps_is_the_start() {
        let r = headless("verlet", 0.1, 0);
        assert_eq!(r.time, 0.0);
        assert!((r.energy - E0).abs() < 1e-12, "{r:?}");
        assert!(r.drift.abs() < 1e-12, "{r:?}");
        assert!(r.error < 1e-12, "{r:?}");
        assert!((r.speed - 4.0).abs() < 1e-12, "{r:?}");
    }

    #[test]
    fn semi_implicit_euler_stays_near_the_exact_orbit() {
        // 628 steps of 0.01 s: t = 6.28 ≈ 2π, two periods of 2π/ω = π.
        let (h, steps) = (0.01, 628);
        let r = headless("semi-implicit", h, steps);
        assert!((r.time - steps as f64 * h).abs() < 1e-9, "{r:?}");
        // It conserves a quadratic within a factor 1 ± ωh/2 of the energy:
        // the energy stays within about ωh/2 = 1 % of E₀, and the exact
        // energy is E₀, so |drift| ≤ about 1 %.
        let bound = 100.0 * OMEGA * h / 2.0;
        assert!(r.drift.abs() < 2.0 * bound, "{r:?}");
        assert!((r.energy - E0).abs() / E0 < 2.0 * bound / 100.0, "{r:?}");
        // First order, bounded error: of order ωh·|x| = 0.06 at most.
        assert!(r.error < 0.1, "{r:?}");
        // Speed² ≤ 2·energy (the spring's energy is never negative).
        assert!(r.speed * r.speed <= 2.0 * r.energy + 1e-9, "{r:?}");
    }

    #[test]
    fn explicit_euler_multiplies_energy_by_one_plus_omega_squared_h_squared() {
        // x' = x + hv, v' = v − hkx gives ½|v'|² + ½k|x'|² = (1 + kh²)·E.
        let h = 0.01;
        let factor = 1.0 + OMEGA * OMEGA * h * h;
        for steps in [1, 100, 628] {
            let r = headless("euler", h, steps);
            let expected = E0 * factor.powi(steps as i32);
            assert!(
                ((r.energy - expected) / expected).abs() < 1e-6,
                "{steps} steps: {r:?}, expected energy {expected}"
            );
            // The exact motion keeps E₀, so the drift is all the growth.
            let drift = 100.0 * (expected - E0) / E0;
            assert!((r.drift - drift).abs() < 1e-6 * 100.0, "{r:?} vs {drift}");
            assert!((r.time - steps as f64 * h).abs() < 1e-9, "{r:?}");
        }
    }

    /// The error at t = 2 s with steps of 0.02 s over that with 0.01 s.
    fn halving_ratio(method: &str, drag: f64, gravity: f64) -> f64 {
        let coarse = headless_with(method, 0.02, 100, drag, gravity);
        let fine = headless_with(method, 0.01, 200, drag, gravity);
        assert!((coarse.time - 2.0).abs() < 1e-9 && (fine.time - 2.0).abs() < 1e-9);
        assert!(fine.error > 0.0, "{fine:?}");
        coarse.error / fine.error
    }

    #[test]
    fn halving_dt_halves_first_order_and_quarters_second_order_errors() {
        // Global error ∝ hᵖ: halving h divides it by 2ᵖ.
        // Undamped, and damped with gravity (the exact motion then decays
        // towards the rest point (0, −g/k)).
        for (drag, gravity) in [(0.0, 0.0), (0.5, 9.81)] {
            for method in ["euler", "semi-implicit"] {
                let ratio = halving_ratio(method, drag, gravity);
                assert!(
                    (1.6..=2.5).contains(&ratio),
                    "{method} c={drag} g={gravity}: {ratio}"
                );
            }
            for method in ["verlet", "rk2"] {
                let ratio = halving_ratio(method, drag, gravity);
                assert!(
                    (3.0..=5.0).contains(&ratio),
                    "{method} c={drag} g={gravity}: {ratio}"
                );
            }
        }
    }

    fn assert_refused(args: &[&str]) {
        let output = run(args);
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(!output.status.success(), "{args:?} should fail");
        assert_eq!(output.status.code(), Some(2), "{args:?}: {stderr}");
        assert!(
            stderr.to_lowercase().contains("usage"),
            "{args:?}: no usage on stderr: {stderr}"
        );
        assert!(output.stdout.is_empty(), "{args:?}: printed readouts");
    }

    #[test]
    fn bad_arguments_print_usage_and_fail() {
        let ok = [
            "--headless",
            "--method",
            "verlet",
            "--dt",
            "0.1",
            "--steps",
            "10",
        ];
        // The good arguments alone run.
        assert!(run(&ok).status.success());
        let bad: [&[&str]; 12] = [
            &["--headless", "--dt", "-1", "--steps", "10"],
            &["--headless", "--dt", "0", "--steps", "10"],
            &["--headless", "--method", "nope", "--steps", "10"],
            &["--headless", "--method", "verlet", "--dt", "0.1"],
            &[
                "--headless",
                "--stiffness",
                "4",
                "--drag",
                "10",
                "--steps",
                "10",
            ],
            &["--headless", "--drag", "-0.5", "--steps", "10"],
            &["--headless", "--stiffness", "0", "--steps", "10"],
            &["--headless", "--dt", "abc", "--steps", "10"],
            &["--headless", "--steps", "1.5"],
            &["--headless", "--steps", "10", "--frobnicate"],
            &["--headless", "--steps"],
            &["--steps", "10"],
        ];
        for args in bad {
            assert_refused(args);
        }
    }
}

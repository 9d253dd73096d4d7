//! The `integrator_lab` example's `--headless --compare` mode: the four
//! methods stepped side by side, as the window's drift plot runs them.
//!
//! The example needs the `debug-ui` feature, so these tests only exist with
//! it; `cargo test` builds the examples before it runs the tests.

#[cfg(feature = "debug-ui")]
mod lab;

#[cfg(feature = "debug-ui")]
mod compare {
    use super::lab::run;

    /// `--method` names, in the order `--compare` prints them.
    const METHODS: [&str; 4] = ["euler", "semi-implicit", "verlet", "rk2"];

    fn stdout_of(args: &[&str]) -> String {
        let output = run(args);
        let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
        assert!(
            output.status.success(),
            "{args:?} failed: {}\n{stdout}",
            String::from_utf8_lossy(&output.stderr)
        );
        stdout
    }

    /// time, energy, drift, error, speed.
    type Values = [f64; 5];

    /// `--compare`'s four lines, by method.
    fn compare(options: &[&str]) -> Vec<(String, Values)> {
        let args: Vec<&str> = ["--headless", "--compare"]
            .iter()
            .chain(options)
            .copied()
            .collect();
        let stdout = stdout_of(&args);
        let rows: Vec<(String, Values)> = stdout
            .lines()
            .map(|line| {
                let mut words = line.split_whitespace();
                let name = words.next().expect("a method name").to_owned();
                let mut values = [0.0; 5];
                for (label, value) in ["time", "energy", "drift", "error", "speed"]
                    .into_iter()
                    .zip(&mut values)
                {
                    let word = words
                        .next()
                        .unwrap_or_else(|| panic!("{line:?}: no {label}"));
                    let text = word
                        .strip_prefix(label)
                        .and_then(|rest| rest.strip_prefix('='))
                        .unwrap_or_else(|| panic!("{line:?}: expected {label}=…, got {word:?}"));
                    *value = text
                        .parse()
                        .unwrap_or_else(|e| panic!("{line:?}: {label} {text:?}: {e}"));
                }
                assert!(words.next().is_none(), "{line:?}: more than expected");
                (name, values)
            })
            .collect();
        let names: Vec<&str> = rows.iter().map(|(name, _)| name.as_str()).collect();
        assert_eq!(names, METHODS, "{stdout}");
        rows
    }

    /// The single-method readouts, as `--headless --method` prints them.
    fn single(method: &str, options: &[&str]) -> Values {
        let args: Vec<&str> = ["--headless", "--method", method]
            .iter()
            .chain(options)
            .copied()
            .collect();
        let stdout = stdout_of(&args);
        let mut values = [0.0; 5];
        for (line, value) in stdout.lines().zip(&mut values) {
            let (_, text) = line.split_once(": ").expect("`label: value`");
            *value = text.parse().expect("a number");
        }
        values
    }

    #[test]
    fn side_by_side_runs_are_the_single_runs() {
        for options in [
            &["--dt", "0.05", "--steps", "100"][..],
            &[
                "--dt",
                "0.02",
                "--drag",
                "0.5",
                "--gravity",
                "9.81",
                "--steps",
                "150",
            ][..],
        ] {
            for (name, values) in compare(options) {
                // Same arithmetic in the same order: bit for bit.
                assert_eq!(values, single(&name, options), "{name} {options:?}");
            }
        }
    }

    #[test]
    fn a_run_that_blows_up_stops_and_the_others_go_on() {
        // ω·dt = 2·0.25 = 0.5: explicit Euler multiplies the energy by
        // 1 + 0.25 a step and passes 10 km after about 70 steps; RK2's
        // 1 + 0.5⁴/4 a step leaves it within 40 m after 300, and the
        // symplectic pair stays bounded.
        let rows = compare(&["--dt", "0.25", "--steps", "300"]);
        let full = 300.0 * 0.25;
        let (_, euler) = &rows[0];
        assert!(euler[0] < full / 2.0, "explicit Euler ran on: {euler:?}");
        for (name, values) in &rows[1..] {
            assert!((values[0] - full).abs() < 1e-9, "{name}: {values:?}");
            assert!(values.iter().all(|v| v.is_finite()), "{name}: {values:?}");
        }
    }

    #[test]
    fn bad_compare_arguments_print_usage_and_fail() {
        for args in [
            &[
                "--headless",
                "--compare",
                "--method",
                "verlet",
                "--steps",
                "10",
            ][..],
            &["--headless", "--compare", "--compare", "--steps", "10"][..],
            &["--headless", "--compare"][..],
            &["--compare", "--steps", "10"][..],
            &["--headless", "--compare", "--drag", "4", "--steps", "10"][..],
        ] {
            let output = run(args);
            let stderr = String::from_utf8_lossy(&output.stderr);
            assert_eq!(output.status.code(), Some(2), "{args:?}: {stderr}");
            assert!(
                stderr.to_lowercase().contains("usage"),
                "{args:?}: {stderr}"
            );
            assert!(output.stdout.is_empty(), "{args:?}: printed readouts");
        }
    }
}

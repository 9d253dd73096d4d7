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
        let bad: [&[&str]; 19] = [
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
            &["--headless", "--stiffness", "-1", "--steps", "10"],
            &["--headless", "--dt", "abc", "--steps", "10"],
            &["--headless", "--steps", "1.5"],
            &["--headless", "--steps", "10", "--frobnicate"],
            &["--headless", "--steps"],
            &["--steps", "10"],
            // Stiffness 0 is a projectile: drag needs a spring.
            &[
                "--headless",
                "--stiffness",
                "0",
                "--drag",
                "0.5",
                "--steps",
                "10",
            ],
            // Back before the start.
            &["--headless", "--steps", "10", "--back", "11"],
            &["--headless", "--steps", "10", "--back", "-1"],
            &["--headless", "--steps", "10", "--back"],
            // The trace follows one method.
            &["--headless", "--compare", "--trace", "--steps", "10"],
            // The window takes only --method and --trace.
            &["--trace", "--dt", "0.1"],
            &["--method", "nope"],
        ];
        for args in bad {
            assert_refused(args);
        }
    }
}

/// `--trace`: each step as the events its method does, in its order, each
/// naming the lines of `src/integrators.rs` that do it; `--back`; and the
/// projectile (stiffness 0) against its closed form.
#[cfg(feature = "debug-ui")]
mod trace {
    use super::lab::run;
    use std::collections::HashMap;

    /// One `trace` line.
    #[derive(Debug)]
    struct Event {
        step: u64,
        kind: String,
        /// 1-based lines of `src/integrators.rs`; empty for `-`.
        lines: Vec<usize>,
        values: HashMap<String, String>,
    }

    impl Event {
        fn text(&self, key: &str) -> &str {
            self.values
                .get(key)
                .unwrap_or_else(|| panic!("{self:?}: no {key}"))
        }

        fn vector(&self, key: &str) -> [f64; 2] {
            let text = self.text(key);
            let (x, y) = text.split_once(',').expect("x,y");
            [x.parse().expect("x"), y.parse().expect("y")]
        }

        fn number(&self, key: &str) -> f64 {
            self.text(key).parse().expect("a number")
        }
    }

    /// The `--headless --trace` run of `args`: its events, and the five
    /// readout lines after them.
    fn traced(args: &[&str]) -> (Vec<Event>, Vec<String>) {
        let args: Vec<&str> = ["--headless", "--trace"]
            .iter()
            .chain(args)
            .copied()
            .collect();
        let output = run(&args);
        let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
        assert!(
            output.status.success(),
            "{args:?}: {}",
            String::from_utf8_lossy(&output.stderr)
        );
        let mut events = Vec::new();
        let mut readouts = Vec::new();
        for line in stdout.lines() {
            let Some(rest) = line.strip_prefix("trace ") else {
                readouts.push(line.to_owned());
                continue;
            };
            assert!(readouts.is_empty(), "a trace line after the readouts");
            let values: HashMap<String, String> = rest
                .split_whitespace()
                .map(|word| {
                    let (key, value) = word.split_once('=').expect("key=value");
                    (key.to_owned(), value.to_owned())
                })
                .collect();
            let lines = match values["line"].as_str() {
                "-" => Vec::new(),
                list => list
                    .split(',')
                    .map(|n| n.parse().expect("a line"))
                    .collect(),
            };
            events.push(Event {
                step: values["step"].parse().expect("a step"),
                kind: values["event"].clone(),
                lines,
                values,
            });
        }
        assert_eq!(readouts.len(), 5, "{stdout}");
        (events, readouts)
    }

    /// The events of each step, by step.
    fn steps(events: &[Event]) -> Vec<Vec<&Event>> {
        let mut steps: Vec<Vec<&Event>> = Vec::new();
        for event in events {
            if steps.len() < event.step as usize {
                steps.push(Vec::new());
            }
            assert_eq!(steps.len(), event.step as usize, "steps out of order");
            steps.last_mut().unwrap().push(event);
        }
        steps
    }

    const ORDERS: [(&str, &str, &[&str]); 4] = [
        (
            "euler",
            "explicit_euler",
            &["force", "move", "accelerate", "energy"],
        ),
        (
            "semi-implicit",
            "semi_implicit_euler",
            &["force", "accelerate", "move", "energy"],
        ),
        (
            "verlet",
            "velocity_verlet",
            &["force", "move", "force", "accelerate", "energy"],
        ),
        (
            "rk2",
            "rk2_midpoint",
            &[
                "force",
                "move",
                "accelerate",
                "force",
                "move",
                "accelerate",
                "energy",
            ],
        ),
    ];

    /// Drag and gravity on, so that no velocity or force term vanishes.
    const SYSTEM: [&str; 8] = [
        "--stiffness",
        "4",
        "--drag",
        "0.5",
        "--gravity",
        "9.81",
        "--dt",
        "0.1",
    ];

    fn args<'a>(method: &'a str, steps: &'a str) -> Vec<&'a str> {
        let mut args = vec!["--method", method, "--steps", steps];
        args.extend(SYSTEM);
        args
    }

    #[test]
    fn each_method_traces_its_events_in_its_order() {
        for (method, _, order) in ORDERS {
            let (events, _) = traced(&args(method, "5"));
            let steps = steps(&events);
            assert_eq!(steps.len(), 5, "{method}");
            for step in steps {
                let kinds: Vec<&str> = step.iter().map(|e| e.kind.as_str()).collect();
                assert_eq!(kinds, order, "{method}");
            }
        }
    }

    #[test]
    fn each_event_names_its_line_in_the_method_source() {
        let source = std::fs::read_to_string(
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src/integrators.rs"),
        )
        .unwrap();
        let lines: Vec<&str> = source.lines().collect();
        for (method, function, _) in ORDERS {
            // The function's body in the file, as 1-based line numbers.
            let signature = format!("pub fn {function}(");
            let start = lines
                .iter()
                .position(|l| l.starts_with(&signature))
                .unwrap()
                + 1;
            let end = start + lines[start..].iter().position(|l| *l == "}").unwrap() + 1;
            let (events, _) = traced(&args(method, "1"));
            for event in &events {
                if event.kind == "energy" {
                    assert!(event.lines.is_empty(), "{method}: {event:?}");
                    continue;
                }
                assert!(!event.lines.is_empty(), "{method}: {event:?}");
                for &number in &event.lines {
                    assert!(
                        (start..=end).contains(&number),
                        "{method}: line {number} outside {function} ({start}..={end})"
                    );
                }
                // The last line named does the event: its left side is
                // what the event changes.
                let text = lines[*event.lines.last().unwrap() - 1].trim();
                let target = text.split([':', '=']).next().unwrap();
                match event.kind.as_str() {
                    "force" => assert!(text.contains("accel("), "{method}: {text}"),
                    "move" => assert!(target.contains("position"), "{method}: {text}"),
                    "accelerate" => assert!(target.contains("velocity"), "{method}: {text}"),
                    other => panic!("{method}: unknown event {other}"),
                }
            }
        }
    }

    fn near(a: [f64; 2], b: [f64; 2], what: &str) {
        let scale = 1.0 + b[0].abs().max(b[1].abs());
        assert!(
            (a[0] - b[0]).abs() < 1e-12 * scale && (a[1] - b[1]).abs() < 1e-12 * scale,
            "{what}: {a:?} vs {b:?}"
        );
    }

    /// `a = −k·x − c·v + g` with k 4, c 0.5, g (0, −9.81).
    fn accel(x: [f64; 2], v: [f64; 2]) -> [f64; 2] {
        [-4.0 * x[0] - 0.5 * v[0], -4.0 * x[1] - 0.5 * v[1] - 9.81]
    }

    #[test]
    fn the_events_carry_the_method_from_one_state_to_the_next() {
        for (method, _, _) in ORDERS {
            let (events, readouts) = traced(&args(method, "20"));
            let mut state = (String::from("3,0"), String::from("0,4"));
            for step in steps(&events) {
                let energy = step.last().unwrap();
                // Each step starts where the one before ended, bit for bit.
                let first = step[0];
                assert_eq!(
                    (first.text("x"), first.text("v")),
                    (state.0.as_str(), state.1.as_str()),
                    "{method}"
                );
                let (x0, v0) = (first.vector("x"), first.vector("v"));
                for event in &step {
                    match event.kind.as_str() {
                        "force" => near(
                            event.vector("a"),
                            accel(event.vector("x"), event.vector("v")),
                            "a",
                        ),
                        "move" => {
                            let (from, to, v, tau) = (
                                event.vector("from"),
                                event.vector("to"),
                                event.vector("v"),
                                event.number("tau"),
                            );
                            // Verlet's Taylor step adds τ²/2·a₀ on top.
                            let extra = if method == "verlet" {
                                let a0 = step[0].vector("a");
                                [0.5 * tau * tau * a0[0], 0.5 * tau * tau * a0[1]]
                            } else {
                                [0.0, 0.0]
                            };
                            let expected = [
                                from[0] + tau * v[0] + extra[0],
                                from[1] + tau * v[1] + extra[1],
                            ];
                            near(to, expected, "move");
                        }
                        "accelerate" => {
                            let (from, to, a, tau) = (
                                event.vector("from"),
                                event.vector("to"),
                                event.vector("a"),
                                event.number("tau"),
                            );
                            near(to, [from[0] + tau * a[0], from[1] + tau * a[1]], "kick");
                        }
                        _ => {}
                    }
                }
                // What each method moves with and measures where.
                let kicks: Vec<&&super::trace::Event> =
                    step.iter().filter(|e| e.kind == "accelerate").collect();
                let moves: Vec<&&super::trace::Event> =
                    step.iter().filter(|e| e.kind == "move").collect();
                let forces: Vec<&&super::trace::Event> =
                    step.iter().filter(|e| e.kind == "force").collect();
                match method {
                    // The old velocity.
                    "euler" => assert_eq!(moves[0].text("v"), first.text("v")),
                    // The new velocity.
                    "semi-implicit" => assert_eq!(moves[0].text("v"), kicks[0].text("to")),
                    "verlet" => {
                        // The second force at the new place; the kick with
                        // both forces, over h/2.
                        assert_eq!(forces[1].text("x"), moves[0].text("to"));
                        let sum = [
                            forces[0].vector("a")[0] + forces[1].vector("a")[0],
                            forces[0].vector("a")[1] + forces[1].vector("a")[1],
                        ];
                        near(kicks[0].vector("a"), sum, "verlet kick");
                        assert_eq!(kicks[0].number("tau"), 0.05);
                    }
                    _ => {
                        // The second force at the midpoint; the real move
                        // from the start with the midpoint's velocity.
                        assert_eq!(forces[1].text("x"), moves[0].text("to"));
                        assert_eq!(forces[1].text("v"), kicks[0].text("to"));
                        assert_eq!(moves[1].text("v"), kicks[0].text("to"));
                        near(moves[1].vector("from"), x0, "rk2 move");
                        near(kicks[1].vector("from"), v0, "rk2 kick");
                    }
                }
                // The last move and kick end where the step ended.
                assert_eq!(moves.last().unwrap().text("to"), energy.text("x"));
                assert_eq!(kicks.last().unwrap().text("to"), energy.text("v"));
                state = (energy.text("x").to_owned(), energy.text("v").to_owned());
            }
            // The readouts are those of the last step's end.
            let speed: f64 = readouts[4]
                .strip_prefix("speed: ")
                .unwrap()
                .parse()
                .unwrap();
            let v = events.last().unwrap().vector("v");
            let expected = v[0].hypot(v[1]);
            assert!(
                (speed - expected).abs() < 1e-12 * expected,
                "{method}: {speed}"
            );
        }
    }

    fn stdout(args: &[&str]) -> String {
        let output = run(args);
        assert!(output.status.success(), "{args:?}");
        String::from_utf8(output.stdout).unwrap()
    }

    #[test]
    fn back_n_after_m_steps_reads_as_m_minus_n_steps() {
        let systems: [&[&str]; 2] = [
            &["--dt", "0.05"],
            &["--dt", "0.02", "--drag", "0.5", "--gravity", "9.81"],
        ];
        for system in systems {
            for (m, n) in [(10, 0), (10, 1), (100, 37), (100, 100)] {
                let (m, n, rest) = (m.to_string(), n.to_string(), (m - n).to_string());
                for mode in [
                    &["--method", "euler"][..],
                    &["--method", "verlet"],
                    &["--method", "rk2"],
                    &["--compare"],
                ] {
                    let mut back = vec!["--headless", "--steps", &m, "--back", &n];
                    back.extend(mode);
                    back.extend(system);
                    let mut plain = vec!["--headless", "--steps", &rest];
                    plain.extend(mode);
                    plain.extend(system);
                    assert_eq!(stdout(&back), stdout(&plain), "{back:?}");
                }
            }
        }
        // Back past the step where explicit Euler blew up (about step 70 at
        // dt 0.25): it reads as the run before it blew up.
        let back = stdout(&[
            "--headless",
            "--compare",
            "--dt",
            "0.25",
            "--steps",
            "300",
            "--back",
            "260",
        ]);
        let plain = stdout(&["--headless", "--compare", "--dt", "0.25", "--steps", "40"]);
        assert_eq!(back, plain);
        assert!(back.starts_with("euler time=10 "), "{back}");
    }

    /// Constant gravity, stiffness 0: `y = y₀ + v₀·t − g·t²/2` from
    /// (3, 0) at (0, 4). Verlet and RK2 are exact for a constant force;
    /// explicit Euler moves with the old velocity, so after n steps it is
    /// `g·h²·n/2 = g·h·t/2` above the parabola, and semi-implicit Euler,
    /// moving with the new one, as far below it.
    #[test]
    fn a_projectile_follows_its_parabola_within_each_method_error() {
        let (g, h, n) = (9.81, 0.02, 150);
        for (method, sign) in [
            ("euler", 1.0),
            ("semi-implicit", -1.0),
            ("verlet", 0.0),
            ("rk2", 0.0),
        ] {
            let (events, readouts) = traced(&[
                "--method",
                method,
                "--stiffness",
                "0",
                "--gravity",
                "9.81",
                "--dt",
                "0.02",
                "--steps",
                "150",
            ]);
            let ends: Vec<&Event> = events.iter().filter(|e| e.kind == "energy").collect();
            assert_eq!(ends.len(), n, "{method}");
            for (i, end) in ends.iter().enumerate() {
                let t = (i + 1) as f64 * h;
                let [x, y] = end.vector("x");
                let [vx, vy] = end.vector("v");
                let parabola = 4.0 * t - 0.5 * g * t * t;
                let offset = sign * 0.5 * g * h * t;
                let tolerance = 1e-12 * (1.0 + parabola.abs()) * (i + 1) as f64;
                assert_eq!((x, vx), (3.0, 0.0), "{method} at {t}");
                assert!(
                    (y - (parabola + offset)).abs() < tolerance,
                    "{method} at t = {t}: y = {y}, parabola {parabola}, expected offset {offset}"
                );
                assert!((vy - (4.0 - g * t)).abs() < tolerance, "{method}: vy {vy}");
                // The lab's own exact motion is the same parabola.
                let [_, exact_y] = end.vector("exact_x");
                assert!((exact_y - parabola).abs() < 1e-12 * (1.0 + parabola.abs()));
            }
            // The error readout is that offset at the end, t = 3 s.
            let t = n as f64 * h;
            let error: f64 = readouts[3]
                .strip_prefix("error: ")
                .unwrap()
                .parse()
                .unwrap();
            let expected = sign.abs() * 0.5 * g * h * t;
            assert!(
                (error - expected).abs() < 1e-9,
                "{method}: error {error}, expected {expected}"
            );
        }
    }
}

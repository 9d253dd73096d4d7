//! The model loader under mutated and truncated files: seeded mutations
//! of the bundled RON files (cut short, bytes changed, ranges deleted or
//! repeated, lines swapped, numbers made extreme) never panic; a file
//! refused says where and why; a file accepted spawns and steps without a
//! panic or a NaN. `cargo test --test model_fuzz` runs 3 000 mutants;
//! `-- --ignored` runs 60 000.

use std::panic::{AssertUnwindSafe, catch_unwind};

use bevy::prelude::*;
use bevy_euler_physics::prelude::*;

/// A small deterministic generator (xorshift64*), so every run tries the
/// same files.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
}

/// Replacements for a number: extreme, negative, not a number at all.
const NUMBERS: &[&str] = &[
    "0",
    "-1",
    "1e40",
    "-1e40",
    "1e-45",
    "inf",
    "NaN",
    "0.0",
    "99999999999",
];
/// Characters that RON gives meaning to, and some it does not.
const CHARS: &[char] = &[
    '(', ')', '[', ']', ',', ':', '"', '.', '-', 'e', '0', '9', ' ', '\n', 'x', 'é', '\u{0}',
];

/// The nearest char boundary of `text` at or before `at`.
fn boundary(text: &str, mut at: usize) -> usize {
    at = at.min(text.len());
    while !text.is_char_boundary(at) {
        at -= 1;
    }
    at
}

/// One mutation of `text`.
fn mutate(text: &str, rng: &mut Rng) -> String {
    let len = text.len();
    let a = boundary(text, rng.below(len + 1));
    let b = boundary(text, (a + rng.below(40)).min(len));
    match rng.below(7) {
        // Cut short.
        0 => text[..a].to_string(),
        // A range deleted.
        1 => format!("{}{}", &text[..a], &text[b..]),
        // A range repeated.
        2 => format!("{}{}{}", &text[..b], &text[a..b], &text[b..]),
        // One character replaced.
        3 => {
            let c = CHARS[rng.below(CHARS.len())];
            let next = boundary(text, a + 1).max(a);
            let next = if next == a && a < len {
                a + text[a..].chars().next().map_or(0, char::len_utf8)
            } else {
                next
            };
            format!("{}{c}{}", &text[..a], &text[next..])
        }
        // Two lines swapped.
        4 => {
            let mut lines: Vec<&str> = text.lines().collect();
            let n = lines.len();
            lines.swap(rng.below(n), rng.below(n));
            lines.join("\n")
        }
        // A number made extreme.
        5 => {
            let starts: Vec<usize> =
                text.char_indices()
                    .filter(|&(i, c)| {
                        c.is_ascii_digit()
                            && text[..i].chars().next_back().is_none_or(|p| {
                                !(p.is_ascii_alphanumeric() || p == '.' || p == '-')
                            })
                    })
                    .map(|(i, _)| i)
                    .collect();
            if starts.is_empty() {
                return text.to_string();
            }
            let s = starts[rng.below(starts.len())];
            let e = text[s..]
                .find(|c: char| !(c.is_ascii_digit() || c == '.' || c == 'e' || c == '-'))
                .map_or(len, |i| s + i);
            format!(
                "{}{}{}",
                &text[..s],
                NUMBERS[rng.below(NUMBERS.len())],
                &text[e..]
            )
        }
        // Several of the above.
        _ => {
            let once = mutate(text, rng);
            mutate(&once, rng)
        }
    }
}

/// Spawns `model` in an app with the plugin and steps it; true if every
/// body is finite after.
fn spawn_and_step(model: &PhysicsModel) -> bool {
    let mut app = App::new();
    app.add_plugins((MinimalPlugins, EulerPhysicsPlugin));
    {
        let world = app.world_mut();
        let mut commands = world.commands();
        model.spawn(&mut commands, Vec3::new(1.0, 2.0, 0.0));
    }
    app.world_mut().flush();
    for _ in 0..5 {
        app.world_mut().run_schedule(FixedUpdate);
    }
    let world = app.world_mut();
    let mut bodies = world.query_filtered::<&Body, Without<PhysicsError>>();
    bodies
        .iter(world)
        .all(|b| b.position.is_finite() && b.velocity.is_finite())
}

/// Runs `count` mutants of each bundled file; returns (accepted, refused).
fn fuzz(count: usize, seed: u64) -> (usize, usize) {
    let folder = concat!(env!("CARGO_MANIFEST_DIR"), "/assets/models");
    let mut rng = Rng(seed);
    let (mut accepted, mut refused) = (0, 0);
    for file in ["rope.model.ron", "ragdoll.model.ron"] {
        let text = std::fs::read_to_string(format!("{folder}/{file}")).unwrap();
        PhysicsModel::from_ron(&text).expect("the bundled file loads");
        let lines = text.lines().count() + 1;
        for n in 0..count {
            let mutant = mutate(&text, &mut rng);
            let loaded = catch_unwind(AssertUnwindSafe(|| PhysicsModel::from_ron(&mutant)))
                .unwrap_or_else(|_| panic!("{file} mutant {n} panicked the loader:\n{mutant}"));
            match loaded {
                Ok(model) => {
                    accepted += 1;
                    let finite = catch_unwind(AssertUnwindSafe(|| spawn_and_step(&model)))
                        .unwrap_or_else(|_| {
                            panic!("{file} mutant {n} panicked once spawned:\n{mutant}")
                        });
                    assert!(finite, "{file} mutant {n} stepped to NaN:\n{mutant}");
                }
                Err(error) => {
                    refused += 1;
                    assert!(!error.message.is_empty(), "{file} mutant {n}: no message");
                    assert!(
                        error.line <= lines.max(mutant.lines().count() + 1),
                        "{file} mutant {n}: line {} of {lines}",
                        error.line
                    );
                    assert!(!error.to_string().is_empty());
                }
            }
        }
    }
    (accepted, refused)
}

#[test]
fn three_thousand_mutated_model_files_never_panic() {
    let (accepted, refused) = fuzz(1500, 0x9e37_79b9_7f4a_7c15);
    println!("{accepted} mutants accepted, {refused} refused");
    assert!(refused > 1000, "most mutants are refused: {refused}");
    assert!(accepted > 10, "some mutants still load: {accepted}");
}

#[test]
#[ignore = "long: 60 000 mutants"]
fn sixty_thousand_mutated_model_files_never_panic() {
    let (accepted, refused) = fuzz(30_000, 0x5851_f42d_4c95_7f2d);
    println!("{accepted} mutants accepted, {refused} refused");
}

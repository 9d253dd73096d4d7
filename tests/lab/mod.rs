//! Running the `integrator_lab` example's binary from the tests that hold
//! its headless modes to the theory.
#![allow(dead_code)]

use std::path::PathBuf;
use std::process::{Command, Output};

/// `target/<profile>/examples/integrator_lab`, next to the `deps` folder
/// this test runs from.
pub fn lab_binary() -> PathBuf {
    let exe = std::env::current_exe().expect("the test executable's path");
    let profile = exe
        .parent()
        .and_then(|deps| deps.parent())
        .expect("the test runs from target/<profile>/deps");
    let binary = profile
        .join("examples")
        .join(format!("integrator_lab{}", std::env::consts::EXE_SUFFIX));
    let rebuild = "build it with `cargo build --example integrator_lab` (plain \
                   `cargo test` builds it; `cargo test --test integrator_lab_cli` does not)";
    let built = std::fs::metadata(&binary)
        .and_then(|m| m.modified())
        .unwrap_or_else(|_| panic!("{} is missing: {rebuild}", binary.display()));
    // Cargo rebuilds when a source is newer than its output; so do we,
    // rather than test an old build.
    for source in [
        concat!(env!("CARGO_MANIFEST_DIR"), "/examples/integrator_lab.rs"),
        concat!(env!("CARGO_MANIFEST_DIR"), "/src/integrators.rs"),
    ] {
        if let Ok(changed) = std::fs::metadata(source).and_then(|m| m.modified()) {
            assert!(
                changed <= built,
                "{} is older than {source}: {rebuild}",
                binary.display()
            );
        }
    }
    binary
}

pub fn run(args: &[&str]) -> Output {
    Command::new(lab_binary())
        .args(args)
        .output()
        .expect("the example runs")
}

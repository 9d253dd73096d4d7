//! Running the examples' binaries from the tests that drive their headless
//! modes.
#![allow(dead_code)]

use std::path::PathBuf;
use std::process::{Command, Output};

/// `target/<profile>/examples/<name>`, next to the `deps` folder this test
/// runs from; it must be newer than each of `sources` (paths from the
/// crate's root), or the test would run an old build.
pub fn example_binary(name: &str, sources: &[&str]) -> PathBuf {
    let exe = std::env::current_exe().expect("the test executable's path");
    let profile = exe
        .parent()
        .and_then(|deps| deps.parent())
        .expect("the test runs from target/<profile>/deps");
    let binary = profile
        .join("examples")
        .join(format!("{name}{}", std::env::consts::EXE_SUFFIX));
    let rebuild = format!(
        "build it with `cargo build --example {name}` (plain `cargo test` builds it; \
         `cargo test --test <one test>` does not)"
    );
    let built = std::fs::metadata(&binary)
        .and_then(|m| m.modified())
        .unwrap_or_else(|_| panic!("{} is missing: {rebuild}", binary.display()));
    for source in sources {
        let source = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(source);
        if let Ok(changed) = std::fs::metadata(&source).and_then(|m| m.modified()) {
            assert!(
                changed <= built,
                "{} is older than {}: {rebuild}",
                binary.display(),
                source.display()
            );
        }
    }
    binary
}

/// The `integrator_lab` binary.
pub fn lab_binary() -> PathBuf {
    example_binary(
        "integrator_lab",
        &["examples/integrator_lab.rs", "src/integrators.rs"],
    )
}

pub fn run(args: &[&str]) -> Output {
    Command::new(lab_binary())
        .args(args)
        .output()
        .expect("the example runs")
}

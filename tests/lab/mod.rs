//! Running the examples' binaries from the tests that drive their headless
//! modes.
#![allow(dead_code)]

use std::path::PathBuf;
use std::process::{Command, Output};

// The library's sources, listed as the tests that read them do.
#[path = "../common/mod.rs"]
mod common;

/// `target/<profile>/examples/<name>`, next to the `deps` folder this test
/// runs from; it must be newer than each of `sources` (paths from the
/// crate's root) and than every source file of the library's `src/`, or
/// the test would run an old build.
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
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut library = Vec::new();
    common::sources(&root.join("src"), &mut library);
    let sources = sources.iter().map(|source| root.join(source));
    for source in sources.chain(library) {
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

/// The sources of the `integrator_lab` example: its modules and the
/// integrators it steps with (and shows the source of).
pub fn lab_sources() -> Vec<String> {
    let folder = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/integrator_lab");
    let mut sources: Vec<String> = std::fs::read_dir(&folder)
        .unwrap_or_else(|e| panic!("{}: {e}", folder.display()))
        .map(|entry| {
            let name = entry.expect("a directory entry").file_name();
            format!("examples/integrator_lab/{}", name.to_string_lossy())
        })
        .collect();
    sources.push("src/integrators.rs".to_owned());
    sources
}

/// The `integrator_lab` binary.
pub fn lab_binary() -> PathBuf {
    let sources = lab_sources();
    let sources: Vec<&str> = sources.iter().map(String::as_str).collect();
    example_binary("integrator_lab", &sources)
}

pub fn run(args: &[&str]) -> Output {
    Command::new(lab_binary())
        .args(args)
        .output()
        .expect("the example runs")
}

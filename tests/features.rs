//! A game that depends on the crate with its default features gets the
//! physics alone: `cargo tree` of the crate's normal dependencies (what a
//! dependent builds) names no rendering, windowing, GPU, egui, networking,
//! file-watching or model-file crate, and no Bevy feature beyond the ones
//! the physics needs.

use std::process::Command;

/// `cargo tree` over the crate's normal dependencies, with `args`; one
/// line per package or feature, or `None` (with a message) when cargo
/// cannot answer offline.
fn tree(args: &[&str]) -> Option<String> {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let output = Command::new(cargo)
        .args(["tree", "--offline", "--edges", "normal", "--prefix", "none"])
        .args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .expect("cargo runs");
    if !output.status.success() {
        let error = String::from_utf8_lossy(&output.stderr);
        assert!(
            std::env::var_os("CI").is_none(),
            "cargo tree failed: {error}"
        );
        eprintln!("skipped: cargo tree failed offline: {error}");
        return None;
    }
    Some(String::from_utf8(output.stdout).expect("cargo tree prints UTF-8"))
}

/// The crates a game must not get from the default features.
const HEAVY: &[&str] = &[
    "bevy_render",
    "bevy_winit",
    "winit",
    "wgpu",
    "bevy_sprite_render",
    "bevy_gizmos_render",
    "bevy_ui_render",
    "bevy_egui",
    "egui",
    "egui_plot",
    "bevy_ggrs",
    "ggrs",
    "notify",
    "wayland-client",
    "x11-dl",
    "x11rb",
    "ron",
    "bevy_asset",
];

#[test]
fn the_default_features_pull_only_the_physics() {
    let Some(packages) = tree(&[]) else {
        return;
    };
    let heavy: Vec<&str> = packages
        .lines()
        .filter_map(|line| line.split_whitespace().next())
        .filter(|name| HEAVY.contains(name))
        .collect();
    assert!(
        heavy.is_empty(),
        "the default features pull {heavy:?}:\n{packages}"
    );
    assert!(packages.lines().any(|line| line.starts_with("bevy_ecs ")));
}

#[test]
fn the_default_features_switch_on_no_bevy_rendering() {
    let Some(features) = tree(&["--edges", "features", "--invert", "bevy"]) else {
        return;
    };
    for feature in [
        "default_app",
        "bevy_winit",
        "2d_bevy_render",
        "bevy_ui",
        "file_watcher",
        "bevy_asset",
        "x11",
        "wayland",
    ] {
        assert!(
            !features.contains(&format!("bevy feature \"{feature}\"")),
            "the default features switch on Bevy's {feature:?}:\n{features}"
        );
    }
}

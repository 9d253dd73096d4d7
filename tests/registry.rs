//! Every public type of the crate that derives `Reflect` is registered by
//! the plugin that owns it, so scenes, inspectors and the scene round trip
//! (`tests/scenes.rs`) see it. Read from the sources, so a new type that
//! is not registered fails here.

mod common;

use std::fs;
use std::path::Path;

use bevy::prelude::*;
use bevy_euler_physics::prelude::*;
use common::sources;

/// The names of the `pub struct` and `pub enum` items that derive
/// `Reflect` in `dir`.
fn reflected(dir: &Path) -> Vec<String> {
    let mut files = Vec::new();
    sources(dir, &mut files);
    let mut names = Vec::new();
    for file in files {
        let text = fs::read_to_string(&file).unwrap();
        let mut deriving = false;
        for line in text.lines().map(str::trim) {
            if line.starts_with("#[derive(") {
                deriving = line.contains("Reflect");
            } else if deriving && !line.starts_with("#[") {
                let item = line
                    .strip_prefix("pub struct ")
                    .or_else(|| line.strip_prefix("pub enum "));
                if let Some(item) = item {
                    let name: String = item
                        .chars()
                        .take_while(|c| c.is_alphanumeric() || *c == '_')
                        .collect();
                    names.push(name);
                }
                deriving = false;
            }
        }
    }
    names.sort();
    names
}

#[test]
fn every_public_reflected_type_is_registered() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    // The debug UI's types are the debug plugin's, which needs a window.
    let names: Vec<String> = reflected(&src)
        .into_iter()
        .filter(|name| name != "DebugUiSettings")
        .collect();
    assert!(names.len() >= 30, "found only {names:?}");
    let mut app = App::new();
    // An empty registry: what the plugins register, not what Bevy's
    // automatic registration (when a game has it on) would find.
    app.insert_resource(AppTypeRegistry::default())
        .add_plugins((MinimalPlugins, EulerPhysicsPlugin));
    let registry = app.world().resource::<AppTypeRegistry>().read();
    let missing: Vec<&String> = names
        .iter()
        .filter(|name| registry.get_with_short_type_path(name).is_none())
        .collect();
    assert!(missing.is_empty(), "not registered: {missing:?}");
}

//! `assets/flag.gltf`, the `flag` example's mesh, and `assets/level.gltf`,
//! the `level` example's, are what their generators
//! (`examples/make_flag.rs`, `examples/make_level.rs`) write: regenerate
//! them with `cargo run --example make_flag` (or `make_level`) after
//! changing a generator.

// (`make_level` includes `make_flag`, whose glTF writer it uses.)
#[allow(dead_code)]
#[path = "../examples/make_level.rs"]
mod make_level;

use make_level::make_flag;

#[test]
fn the_committed_flag_is_what_the_generator_writes() {
    let committed =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/assets/flag.gltf"))
            .expect("assets/flag.gltf is committed");
    assert!(
        committed == make_flag::flag_gltf(),
        "assets/flag.gltf differs from what examples/make_flag.rs writes: run `cargo run --example make_flag`"
    );
}

#[test]
fn the_committed_level_is_what_the_generator_writes() {
    let committed =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/assets/level.gltf"))
            .expect("assets/level.gltf is committed");
    assert!(
        committed == make_level::level_gltf(),
        "assets/level.gltf differs from what examples/make_level.rs writes: run `cargo run --example make_level`"
    );
}

//! `assets/flag.gltf`, the `flag` example's mesh, is what its generator
//! (`examples/make_flag.rs`) writes: regenerate it with
//! `cargo run --example make_flag` after changing the generator.

#[allow(dead_code)]
#[path = "../examples/make_flag.rs"]
mod make_flag;

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

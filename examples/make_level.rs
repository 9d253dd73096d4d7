//! Writes `assets/level.gltf`, the level of the `level` example.
//!
//! `cargo run --example make_level`
//!
//! One mesh of flat-shaded triangles (each with its own three vertices and
//! face normal): a floor 12 m × 8 m at `y = 0`, a ramp rising 1.2 m over
//! 3 m, five stairs of 0.2 m, and a wall along the back. `tests/flag_asset.rs`
//! checks that the committed file is what this program writes.

#[allow(dead_code)]
#[path = "make_flag.rs"]
pub mod make_flag;

/// A quad `a b c d`, counter-clockwise seen from its front.
type Quad = [[f32; 3]; 4];

/// The level's quads.
pub fn level_quads() -> Vec<Quad> {
    let mut quads = vec![
        // The floor.
        [
            [-6.0, 0.0, -4.0],
            [-6.0, 0.0, 4.0],
            [6.0, 0.0, 4.0],
            [6.0, 0.0, -4.0],
        ],
        // The ramp, up along +X from x = -5 to -2, over z in [-3, -1].
        [
            [-5.0, 0.0, -3.0],
            [-5.0, 0.0, -1.0],
            [-2.0, 1.2, -1.0],
            [-2.0, 1.2, -3.0],
        ],
        // The ramp's end, down to the floor.
        [
            [-2.0, 1.2, -3.0],
            [-2.0, 1.2, -1.0],
            [-2.0, 0.0, -1.0],
            [-2.0, 0.0, -3.0],
        ],
        // The back wall, facing +Z.
        [
            [-6.0, 0.0, -4.0],
            [6.0, 0.0, -4.0],
            [6.0, 1.5, -4.0],
            [-6.0, 1.5, -4.0],
        ],
    ];
    // Five stairs up along +X from x = 0.5, over z in [-3, -1]: each a
    // riser (facing -X) and a tread.
    for step in 0..5 {
        let (x, y) = (0.5 + step as f32 * 0.4, step as f32 * 0.2);
        quads.push([
            [x, y, -3.0],
            [x, y, -1.0],
            [x, y + 0.2, -1.0],
            [x, y + 0.2, -3.0],
        ]);
        quads.push([
            [x, y + 0.2, -3.0],
            [x, y + 0.2, -1.0],
            [x + 0.4, y + 0.2, -1.0],
            [x + 0.4, y + 0.2, -3.0],
        ]);
    }
    quads
}

/// The glTF file, as text.
pub fn level_gltf() -> String {
    let mut positions = Vec::new();
    let mut normals = Vec::new();
    for quad in level_quads() {
        let [a, b, c, d] = quad.map(bevy_math_vec);
        for [p, q, r] in [[a, b, c], [a, c, d]] {
            let n = (q - p).cross(r - p).normalize();
            for v in [p, q, r] {
                positions.extend(v.to_array());
                normals.extend(n.to_array());
            }
        }
    }
    let indices: Vec<u32> = (0..(positions.len() / 3) as u32).collect();
    let attributes = [("POSITION", 3, positions), ("NORMAL", 3, normals)];
    make_flag::gltf("level", "examples/make_level.rs", &attributes, &indices)
}

fn bevy_math_vec(p: [f32; 3]) -> bevy::math::Vec3 {
    bevy::math::Vec3::from(p)
}

#[allow(dead_code)]
fn main() {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/assets/level.gltf");
    std::fs::write(path, level_gltf()).expect("write assets/level.gltf");
    println!("wrote {path}");
}

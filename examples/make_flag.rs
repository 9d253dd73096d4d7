//! Writes `assets/flag.gltf`, the mesh of the `flag` example.
//!
//! `cargo run --example make_flag`
//!
//! A flag 1.5 m wide and 1 m tall in the XY plane, facing +Z, its left edge
//! on the Y axis: 30 × 20 quads, two triangles each, with normals, tangents,
//! UVs and vertex colours. It is cut into two UV islands down the middle
//! (as a texture artist lays out a flag's two halves): the vertices along
//! the cut are in the file twice, with the same position and two UVs, so
//! a soft mesh welds them. The left column is painted red (`COLOR_0`): the
//! example pins the vertices painted red to its pole.
//!
//! `tests/flag_asset.rs` checks that the committed file is what this
//! program writes.

use std::fmt::Write as _;

/// Quads along and across the flag, and its size in metres.
pub const QUADS_X: u32 = 30;
pub const QUADS_Y: u32 = 20;
pub const WIDTH: f32 = 1.5;
pub const HEIGHT: f32 = 1.0;
/// The column of quads the UV cut runs before.
pub const CUT: u32 = QUADS_X / 2;

/// One vertex of the file.
struct Vertex {
    position: [f32; 3],
    uv: [f32; 2],
    colour: [f32; 4],
}

/// The vertices of one UV island (columns `from..=to`), row by row, with
/// its UVs spread over `u_from..u_to`.
fn island(from: u32, to: u32, u_from: f32, u_to: f32) -> Vec<Vertex> {
    let mut out = Vec::new();
    for j in 0..=QUADS_Y {
        for i in from..=to {
            let x = WIDTH * i as f32 / QUADS_X as f32;
            let y = HEIGHT * j as f32 / QUADS_Y as f32;
            let t = (i - from) as f32 / (to - from) as f32;
            let red = i == 0;
            out.push(Vertex {
                position: [x, y, 0.0],
                uv: [
                    u_from + t * (u_to - u_from),
                    1.0 - j as f32 / QUADS_Y as f32,
                ],
                colour: if red {
                    [1.0, 0.0, 0.0, 1.0]
                } else {
                    [1.0, 1.0, 1.0, 1.0]
                },
            });
        }
    }
    out
}

/// The triangles of an island of `columns` quads a row, its first vertex
/// at `base`, wound counter-clockwise seen from +Z.
fn island_triangles(base: u32, columns: u32, out: &mut Vec<u32>) {
    let row = columns + 1;
    for j in 0..QUADS_Y {
        for i in 0..columns {
            let a = base + j * row + i;
            let (b, c, d) = (a + 1, a + row + 1, a + row);
            out.extend([a, b, c, a, c, d]);
        }
    }
}

/// Standard base64 (with padding) of `bytes`.
fn base64(bytes: &[u8]) -> String {
    const TABLE: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for chunk in bytes.chunks(3) {
        let n = chunk
            .iter()
            .enumerate()
            .fold(0u32, |n, (k, &b)| n | u32::from(b) << (16 - 8 * k));
        for k in 0..4 {
            if k <= chunk.len() {
                out.push(TABLE[(n >> (18 - 6 * k) & 63) as usize] as char);
            } else {
                out.push('=');
            }
        }
    }
    out
}

/// The glTF file, as text.
pub fn flag_gltf() -> String {
    let mut vertices = island(0, CUT, 0.0, 0.48);
    let right = vertices.len() as u32;
    vertices.extend(island(CUT, QUADS_X, 0.52, 1.0));
    let mut indices = Vec::new();
    island_triangles(0, CUT, &mut indices);
    island_triangles(right, QUADS_X - CUT, &mut indices);
    let n = vertices.len();
    let attributes = [
        (
            "POSITION",
            3,
            vertices.iter().flat_map(|v| v.position).collect(),
        ),
        ("NORMAL", 3, (0..n).flat_map(|_| [0.0, 0.0, 1.0]).collect()),
        (
            "TANGENT",
            4,
            (0..n).flat_map(|_| [1.0, 0.0, 0.0, 1.0]).collect(),
        ),
        (
            "TEXCOORD_0",
            2,
            vertices.iter().flat_map(|v| v.uv).collect(),
        ),
        (
            "COLOR_0",
            4,
            vertices.iter().flat_map(|v| v.colour).collect(),
        ),
    ];
    gltf("flag", "examples/make_flag.rs", &attributes, &indices)
}

/// A glTF file (text, its buffer embedded) of one mesh named `name` on one
/// node: its vertex attributes (glTF name, floats per vertex, the floats;
/// `POSITION` first) and its triangles.
pub fn gltf(
    name: &str,
    generator: &str,
    attributes: &[(&str, usize, Vec<f32>)],
    indices: &[u32],
) -> String {
    let n = attributes[0].2.len() / 3;
    // The buffer: each attribute in turn, then the indices.
    let mut bytes: Vec<u8> = Vec::new();
    let mut views = Vec::new();
    for (_, _, floats) in attributes {
        let start = bytes.len();
        for f in floats {
            bytes.extend(f.to_le_bytes());
        }
        views.push((start, bytes.len() - start));
    }
    let start = bytes.len();
    for i in indices {
        bytes.extend(i.to_le_bytes());
    }
    views.push((start, bytes.len() - start));
    let mut json = String::new();
    let _ = writeln!(
        json,
        "{{\n  \"asset\": {{\"version\": \"2.0\", \"generator\": \"{generator}\"}},"
    );
    json.push_str("  \"scene\": 0,\n  \"scenes\": [{\"nodes\": [0]}],\n");
    let _ = writeln!(
        json,
        "  \"nodes\": [{{\"mesh\": 0, \"name\": \"{name}\"}}],"
    );
    let names: Vec<String> = attributes
        .iter()
        .enumerate()
        .map(|(k, (attribute, ..))| format!("\"{attribute}\": {k}"))
        .collect();
    let _ = writeln!(
        json,
        "  \"meshes\": [{{\"name\": \"{name}\", \"primitives\": [{{\"attributes\": {{{}}}, \"indices\": {}, \"mode\": 4}}]}}],",
        names.join(", "),
        attributes.len()
    );
    let _ = writeln!(
        json,
        "  \"buffers\": [{{\"byteLength\": {}, \"uri\": \"data:application/octet-stream;base64,{}\"}}],",
        bytes.len(),
        base64(&bytes)
    );
    json.push_str("  \"bufferViews\": [\n");
    for (k, (offset, length)) in views.iter().enumerate() {
        let target = if k == attributes.len() { 34963 } else { 34962 };
        let comma = if k + 1 < views.len() { "," } else { "" };
        let _ = writeln!(
            json,
            "    {{\"buffer\": 0, \"byteOffset\": {offset}, \"byteLength\": {length}, \"target\": {target}}}{comma}"
        );
    }
    json.push_str("  ],\n  \"accessors\": [\n");
    // glTF asks for the positions' bounds.
    let positions = &attributes[0].2;
    let bound = |pick: fn(f32, f32) -> f32| {
        let mut b = [positions[0], positions[1], positions[2]];
        for p in positions.chunks_exact(3) {
            for (b, &c) in b.iter_mut().zip(p) {
                *b = pick(*b, c);
            }
        }
        format!("[{:?}, {:?}, {:?}]", b[0], b[1], b[2])
    };
    let _ = writeln!(
        json,
        "    {{\"bufferView\": 0, \"componentType\": 5126, \"count\": {n}, \"type\": \"VEC3\", \"min\": {}, \"max\": {}}},",
        bound(f32::min),
        bound(f32::max)
    );
    for (view, (_, width, _)) in attributes.iter().enumerate().skip(1) {
        let kind = match width {
            2 => "VEC2",
            3 => "VEC3",
            _ => "VEC4",
        };
        let _ = writeln!(
            json,
            "    {{\"bufferView\": {view}, \"componentType\": 5126, \"count\": {n}, \"type\": \"{kind}\"}},"
        );
    }
    let _ = writeln!(
        json,
        "    {{\"bufferView\": {}, \"componentType\": 5125, \"count\": {}, \"type\": \"SCALAR\"}}",
        attributes.len(),
        indices.len()
    );
    json.push_str("  ]\n}\n");
    json
}

#[allow(dead_code)]
fn main() {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/assets/flag.gltf");
    std::fs::write(path, flag_gltf()).expect("write assets/flag.gltf");
    println!("wrote {path}");
}

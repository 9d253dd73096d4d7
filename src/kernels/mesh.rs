//! Triangle meshes as bodies and springs: welding the vertices a mesh
//! duplicates (at UV seams, hard edges), the edges and bends of its
//! triangles, the area each point carries, the enclosed volume and its
//! gradient, and smooth normals.
//!
//! Everything here is a function of its inputs in their order, so the same
//! mesh gives the same points, springs and masses every time.

use bevy::math::Vec3;
use bevy::platform::collections::HashMap;

/// No point: a vertex left out (not finite).
pub const NO_POINT: u32 = u32::MAX;

/// The vertices of a mesh welded into points.
#[derive(Debug, Clone, PartialEq)]
pub struct Welded {
    /// For each vertex, its point, or [`NO_POINT`] for a vertex that is not
    /// finite.
    pub point_of: Vec<u32>,
    /// Each point's position: that of its first vertex.
    pub points: Vec<Vec3>,
    /// The vertices left out for a position that is not finite.
    pub non_finite: usize,
}

/// Welds vertices within `tolerance` of an earlier point into it: a vertex
/// joins the lowest-numbered point within `tolerance` (inclusive), or
/// starts a new one. A `tolerance` of zero (or less, or not finite) welds
/// equal positions only.
pub fn weld(positions: &[Vec3], tolerance: f32) -> Welded {
    let tolerance = if tolerance.is_finite() && tolerance > 0.0 {
        tolerance
    } else {
        0.0
    };
    let cell_of = |p: Vec3| -> [i64; 3] {
        if tolerance == 0.0 {
            [p.x, p.y, p.z].map(|c| i64::from((c + 0.0).to_bits()))
        } else {
            [p.x, p.y, p.z].map(|c| (c / tolerance).floor() as i64)
        }
    };
    let reach: &[i64] = if tolerance == 0.0 { &[0] } else { &[-1, 0, 1] };
    let mut cells: HashMap<[i64; 3], Vec<u32>> = HashMap::default();
    let mut welded = Welded {
        point_of: Vec::with_capacity(positions.len()),
        points: Vec::new(),
        non_finite: 0,
    };
    for &p in positions {
        if !p.is_finite() {
            welded.point_of.push(NO_POINT);
            welded.non_finite += 1;
            continue;
        }
        let cell = cell_of(p);
        let mut found = NO_POINT;
        for &dx in reach {
            for &dy in reach {
                for &dz in reach {
                    let near = [
                        cell[0].saturating_add(dx),
                        cell[1].saturating_add(dy),
                        cell[2].saturating_add(dz),
                    ];
                    let Some(list) = cells.get(&near) else {
                        continue;
                    };
                    for &q in list {
                        let close = if tolerance == 0.0 {
                            welded.points[q as usize] == p
                        } else {
                            welded.points[q as usize].distance(p) <= tolerance
                        };
                        if close && q < found {
                            found = q;
                        }
                    }
                }
            }
        }
        if found == NO_POINT {
            found = welded.points.len() as u32;
            welded.points.push(p);
            cells.entry(cell).or_default().push(found);
        }
        welded.point_of.push(found);
    }
    welded
}

/// A spring of the mesh: two points, and the area of the triangles it
/// spans (an edge's one or two triangles, a bend's two).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct MeshSpring {
    /// The lower point.
    pub a: u32,
    /// The higher point.
    pub b: u32,
    /// The area of the triangles on it.
    pub area: f32,
}

/// The springs and triangles of a welded triangle list.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Topology {
    /// The triangles kept, as points, in the mesh's winding.
    pub triangles: Vec<[u32; 3]>,
    /// For each kept triangle, the mesh vertices it was made of.
    pub corners: Vec<[u32; 3]>,
    /// One per distinct edge, ordered by `(a, b)`.
    pub edges: Vec<MeshSpring>,
    /// One per edge between exactly two triangles, between the two points
    /// opposite it, unless they are one point or already an edge; ordered
    /// by `(a, b)`, without repeats.
    pub bends: Vec<MeshSpring>,
    /// Each point's share of the triangles' area: a third of each triangle
    /// it is a corner of.
    pub point_area: Vec<f32>,
    /// Triangles left out: a corner repeated or out of range, or no area
    /// (not those left out with a vertex that is not finite).
    pub degenerate: usize,
    /// Edges on three triangles or more (they get no bend).
    pub non_manifold: usize,
    /// Whether every edge is on exactly two triangles (a closed surface).
    pub closed: bool,
}

/// The area of the triangle `a, b, c`.
#[inline]
pub fn triangle_area(a: Vec3, b: Vec3, c: Vec3) -> f32 {
    0.5 * (b - a).cross(c - a).length()
}

/// The topology of the triangle list `indices` (three mesh vertices a
/// triangle) over the welded points. A triangle whose area is at most
/// `min_area` is degenerate.
pub fn topology(welded: &Welded, indices: &[u32], min_area: f32) -> Topology {
    let points = &welded.points;
    let mut out = Topology {
        point_area: vec![0.0; points.len()],
        ..Topology::default()
    };
    for corners in indices.chunks_exact(3) {
        let corners = [corners[0], corners[1], corners[2]];
        let Some(tri) = corners
            .iter()
            .map(|&v| welded.point_of.get(v as usize).copied())
            .collect::<Option<Vec<u32>>>()
        else {
            // A corner out of range.
            out.degenerate += 1;
            continue;
        };
        let tri = [tri[0], tri[1], tri[2]];
        if tri.contains(&NO_POINT) {
            // Left out with its vertex that is not finite (counted there).
            continue;
        }
        let repeated = tri[0] == tri[1] || tri[1] == tri[2] || tri[0] == tri[2];
        if repeated {
            out.degenerate += 1;
            continue;
        }
        let [a, b, c] = tri.map(|p| points[p as usize]);
        let area = triangle_area(a, b, c);
        // (A NaN area is degenerate too.)
        if area.partial_cmp(&min_area) != Some(core::cmp::Ordering::Greater) {
            out.degenerate += 1;
            continue;
        }
        for p in tri {
            out.point_area[p as usize] += area / 3.0;
        }
        out.triangles.push(tri);
        out.corners.push(corners);
    }
    // Each side of each triangle with the triangle's area and its third
    // point, ordered by edge (then triangle) to group the edges.
    let mut sides: Vec<(u32, u32, f32, u32)> = Vec::with_capacity(3 * out.triangles.len());
    for &[p, q, r] in &out.triangles {
        let area = triangle_area(points[p as usize], points[q as usize], points[r as usize]);
        for (a, b, opposite) in [(p, q, r), (q, r, p), (r, p, q)] {
            sides.push((a.min(b), a.max(b), area, opposite));
        }
    }
    sides.sort_by_key(|&(a, b, _, _)| (a, b));
    let mut bends = Vec::new();
    out.closed = !sides.is_empty();
    for group in sides.chunk_by(|x, y| (x.0, x.1) == (y.0, y.1)) {
        let (a, b) = (group[0].0, group[0].1);
        let area = group.iter().map(|side| side.2).sum();
        out.edges.push(MeshSpring { a, b, area });
        match group.len() {
            2 => {
                let (c, d) = (group[0].3, group[1].3);
                if c != d {
                    bends.push(MeshSpring {
                        a: c.min(d),
                        b: c.max(d),
                        area,
                    });
                }
            }
            1 => out.closed = false,
            _ => {
                out.non_manifold += 1;
                out.closed = false;
            }
        }
    }
    bends.sort_by_key(|s| (s.a, s.b));
    bends.dedup_by_key(|s| (s.a, s.b));
    let is_edge = |s: &MeshSpring| {
        out.edges
            .binary_search_by_key(&(s.a, s.b), |e| (e.a, e.b))
            .is_ok()
    };
    bends.retain(|s| !is_edge(s));
    out.bends = bends;
    out
}

/// The volume the triangles enclose (positive when they wind
/// counter-clockwise seen from outside), measured about `centre` (a point
/// near the mesh keeps the sum precise).
pub fn volume(points: &[Vec3], triangles: &[[u32; 3]], centre: Vec3) -> f32 {
    triangles
        .iter()
        .map(|&[a, b, c]| {
            let [a, b, c] = [a, b, c].map(|p| points[p as usize] - centre);
            a.dot(b.cross(c))
        })
        .sum::<f32>()
        / 6.0
}

/// Adds to `out` (one per point) the gradient of [`volume`] over the
/// points, times `scale`: each triangle `a, b, c` adds `scale·(b × c)/6` to
/// `a` (and the same in turn to `b` and `c`), about `centre`.
pub fn add_volume_gradient(
    points: &[Vec3],
    triangles: &[[u32; 3]],
    centre: Vec3,
    scale: f32,
    out: &mut [Vec3],
) {
    let scale = scale / 6.0;
    for &[i, j, k] in triangles {
        let [a, b, c] = [i, j, k].map(|p| points[p as usize] - centre);
        out[i as usize] += scale * b.cross(c);
        out[j as usize] += scale * c.cross(a);
        out[k as usize] += scale * a.cross(b);
    }
}

/// Smooth normals: each point's normal is the normalised sum of its
/// triangles' area-weighted normals (counter-clockwise winding faces the
/// normal); a point whose sum is zero gets `+Y`.
pub fn smooth_normals(points: &[Vec3], triangles: &[[u32; 3]], out: &mut Vec<Vec3>) {
    out.clear();
    out.resize(points.len(), Vec3::ZERO);
    for &[i, j, k] in triangles {
        let [a, b, c] = [i, j, k].map(|p| points[p as usize]);
        let n = (b - a).cross(c - a);
        out[i as usize] += n;
        out[j as usize] += n;
        out[k as usize] += n;
    }
    for n in out.iter_mut() {
        *n = n.normalize_or(Vec3::Y);
    }
}

/// Tangents from UVs (Lengyel's method): for each vertex, the direction
/// in which `u` grows over its triangles (`corners`, as mesh vertices),
/// made orthogonal to its normal, with in `w` the handedness glTF and
/// Bevy use (what `Mesh::generate_tangents` writes): the bitangent
/// `cross(normal, tangent)·w` points where `v` decreases (up a texture,
/// whose `v` runs down). A vertex whose triangles give no direction keeps
/// its entry of `out`.
pub fn tangents(
    positions: &[Vec3],
    normals: &[Vec3],
    uvs: &[[f32; 2]],
    corners: &[[u32; 3]],
    out: &mut [[f32; 4]],
) {
    let n = out
        .len()
        .min(positions.len())
        .min(normals.len())
        .min(uvs.len());
    let mut along_u = vec![Vec3::ZERO; n];
    let mut along_v = vec![Vec3::ZERO; n];
    for &[i, j, k] in corners {
        let [i, j, k] = [i, j, k].map(|v| v as usize);
        if i >= n || j >= n || k >= n {
            continue;
        }
        let (e1, e2) = (positions[j] - positions[i], positions[k] - positions[i]);
        let (du1, dv1) = (uvs[j][0] - uvs[i][0], uvs[j][1] - uvs[i][1]);
        let (du2, dv2) = (uvs[k][0] - uvs[i][0], uvs[k][1] - uvs[i][1]);
        let det = du1 * dv2 - du2 * dv1;
        if det == 0.0 || !det.is_finite() {
            continue;
        }
        let u = (e1 * dv2 - e2 * dv1) / det;
        let v = (e2 * du1 - e1 * du2) / det;
        for c in [i, j, k] {
            along_u[c] += u;
            along_v[c] += v;
        }
    }
    for c in 0..n {
        let normal = normals[c];
        let t = (along_u[c] - normal * normal.dot(along_u[c])).normalize_or_zero();
        if t == Vec3::ZERO {
            continue;
        }
        let w = if normal.cross(t).dot(along_v[c]) > 0.0 {
            -1.0
        } else {
            1.0
        };
        out[c] = [t.x, t.y, t.z, w];
    }
}

/// The direction of a polyline at each of its points: along the sum of the
/// unit vectors of the segments on either side (one side at the ends). A
/// point where that sum is zero (a segment of no length, or a fold back on
/// itself) takes the direction before it, the first such point `+Y`.
pub fn polyline_directions(points: &[Vec3], out: &mut Vec<Vec3>) {
    out.clear();
    let last = points.len().saturating_sub(1);
    let mut previous = Vec3::Y;
    for i in 0..points.len() {
        let before = if i > 0 {
            (points[i] - points[i - 1]).normalize_or_zero()
        } else {
            Vec3::ZERO
        };
        let after = if i < last {
            (points[i + 1] - points[i]).normalize_or_zero()
        } else {
            Vec3::ZERO
        };
        let direction = (before + after).normalize_or(previous);
        out.push(direction);
        previous = direction;
    }
}

/// A tube of `radius` around the polyline `points`: for each point a ring
/// of `sides + 1` vertices (the last repeats the first, for a texture's
/// seam), written to `positions` and `normals` ring after ring.
///
/// The rings are perpendicular to the polyline's directions
/// ([`polyline_directions`]), and turned along it by parallel transport:
/// each ring's first vertex lies along `start` (made perpendicular to the
/// first direction) at the first point, and along the same side, carried
/// by the least rotation from one direction to the next, at the others,
/// so the tube does not twist where the line does not. Returns the first
/// ring's side as used, to pass as `start` on the next frame (the tube
/// then keeps its twist from frame to frame).
pub fn tube_rings(
    points: &[Vec3],
    radius: f32,
    sides: usize,
    start: Vec3,
    directions: &mut Vec<Vec3>,
    positions: &mut Vec<[f32; 3]>,
    normals: &mut Vec<[f32; 3]>,
) -> Vec3 {
    polyline_directions(points, directions);
    positions.clear();
    normals.clear();
    let Some(&first) = directions.first() else {
        return start;
    };
    let side_of = |direction: Vec3, guess: Vec3| {
        (guess - direction * direction.dot(guess))
            .try_normalize()
            .unwrap_or_else(|| direction.any_orthonormal_vector())
    };
    let first_side = side_of(first, start);
    let mut side = first_side;
    let mut before = first;
    let turn = core::f32::consts::TAU / sides.max(1) as f32;
    for (&p, &direction) in points.iter().zip(directions.iter()) {
        side = side_of(
            direction,
            bevy::math::Quat::from_rotation_arc(before, direction) * side,
        );
        before = direction;
        let up = direction.cross(side);
        for j in 0..=sides {
            // The seam's vertex is the first one again, bit for bit.
            let (sin, cos) = ((j % sides.max(1)) as f32 * turn).sin_cos();
            let out = side * cos + up * sin;
            positions.push((p + out * radius).to_array());
            normals.push(out.to_array());
        }
    }
    first_side
}

/// A flat strip `width` wide along the polyline `points` in the plane
/// `z = const` of each point: for each point two vertices, to its left and
/// right of the polyline's direction seen from `+Z`, with normals `+Z`.
/// Where the direction is along `Z` (no side in the plane), the side
/// before it is kept.
pub fn strip_sides(
    points: &[Vec3],
    width: f32,
    directions: &mut Vec<Vec3>,
    positions: &mut Vec<[f32; 3]>,
    normals: &mut Vec<[f32; 3]>,
) {
    polyline_directions(points, directions);
    positions.clear();
    normals.clear();
    let mut side = Vec3::X;
    for (&p, &direction) in points.iter().zip(directions.iter()) {
        side = Vec3::new(-direction.y, direction.x, 0.0).normalize_or(side);
        let half = side * (0.5 * width);
        positions.extend([(p + half).to_array(), (p - half).to_array()]);
        normals.extend([Vec3::Z.to_array(); 2]);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A grid of `n × n` quads on the unit square, two triangles each,
    /// with each quad's four vertices its own (every inner vertex is
    /// repeated, as at UV seams).
    fn split_grid(n: u32) -> (Vec<Vec3>, Vec<u32>) {
        let mut positions = Vec::new();
        let mut indices = Vec::new();
        let at = |i: u32, j: u32| Vec3::new(i as f32 / n as f32, j as f32 / n as f32, 0.0);
        for i in 0..n {
            for j in 0..n {
                let base = positions.len() as u32;
                positions.extend([at(i, j), at(i + 1, j), at(i + 1, j + 1), at(i, j + 1)]);
                indices.extend([base, base + 1, base + 2, base, base + 2, base + 3]);
            }
        }
        (positions, indices)
    }

    #[test]
    fn a_split_grid_welds_to_its_points_and_counts_its_springs() {
        let n = 5;
        let (positions, indices) = split_grid(n);
        let welded = weld(&positions, 1e-5);
        assert_eq!(welded.points.len() as u32, (n + 1) * (n + 1));
        let topo = topology(&welded, &indices, 0.0);
        assert_eq!(topo.triangles.len() as u32, 2 * n * n);
        // Edges: n(n+1) horizontal, as many vertical, n² diagonals.
        assert_eq!(topo.edges.len() as u32, 2 * n * (n + 1) + n * n);
        // Every interior edge (all but the 4n on the boundary) has a bend.
        let interior = topo.edges.len() as u32 - 4 * n;
        assert_eq!(topo.bends.len() as u32, interior);
        assert!(!topo.closed);
        let area: f32 = topo.point_area.iter().sum();
        assert!((area - 1.0).abs() < 1e-5, "{area}");
    }

    #[test]
    fn welding_respects_the_tolerance() {
        let p = [
            Vec3::ZERO,
            Vec3::new(0.009, 0.0, 0.0),
            Vec3::new(0.011, 0.0, 0.0),
        ];
        let welded = weld(&p, 0.01);
        assert_eq!(welded.point_of, vec![0, 0, 1]);
        let exact = weld(&p, 0.0);
        assert_eq!(exact.point_of, vec![0, 1, 2]);
        let nan = weld(&[Vec3::NAN, Vec3::ONE, Vec3::ONE], 0.0);
        assert_eq!(nan.point_of, vec![NO_POINT, 0, 0]);
        assert_eq!(nan.non_finite, 1);
    }

    /// An octahedron, wound counter-clockwise seen from outside.
    fn octahedron() -> (Vec<Vec3>, Vec<u32>) {
        let p = vec![Vec3::X, -Vec3::X, Vec3::Y, -Vec3::Y, Vec3::Z, -Vec3::Z];
        let i = vec![
            0, 2, 4, 2, 1, 4, 1, 3, 4, 3, 0, 4, 2, 0, 5, 1, 2, 5, 3, 1, 5, 0, 3, 5,
        ];
        (p, i)
    }

    #[test]
    fn a_closed_mesh_has_its_volume_and_gradient() {
        let (p, i) = octahedron();
        let welded = weld(&p, 0.0);
        let topo = topology(&welded, &i, 0.0);
        assert!(topo.closed);
        assert_eq!(topo.edges.len(), 12);
        // Opposite vertices across each edge: the three axis pairs, each
        // across four edges.
        assert_eq!(topo.bends.len(), 3);
        let v = volume(&welded.points, &topo.triangles, Vec3::new(0.3, -0.2, 0.1));
        assert!((v - 4.0 / 3.0).abs() < 1e-5, "{v}");
        // The gradient against a finite difference.
        let mut grad = vec![Vec3::ZERO; 6];
        add_volume_gradient(&welded.points, &topo.triangles, Vec3::ZERO, 1.0, &mut grad);
        let e = 1e-3;
        let mut moved = welded.points.clone();
        moved[0].x += e;
        let dv = (volume(&moved, &topo.triangles, Vec3::ZERO) - v) / e;
        assert!((dv - grad[0].x).abs() < 1e-2, "{dv} {}", grad[0].x);
        // Normals point outwards.
        let mut normals = Vec::new();
        smooth_normals(&welded.points, &topo.triangles, &mut normals);
        for (n, p) in normals.iter().zip(&welded.points) {
            assert!(n.dot(*p) > 0.99, "{n} at {p}");
        }
    }

    #[test]
    fn tangents_follow_the_uvs() {
        // A quad in the XY plane with u along +X and v along +Y, then the
        // same quad turned a quarter about Z: the tangent turns with it.
        // `cross(normal, tangent)` is +Y, where v grows: `w` is −1, so
        // that the bitangent points where v decreases.
        let corners = [[0, 1, 2], [0, 2, 3]];
        let uvs = [[0.0, 0.0], [1.0, 0.0], [1.0, 1.0], [0.0, 1.0]];
        let quad = [Vec3::ZERO, Vec3::X, Vec3::new(1.0, 1.0, 0.0), Vec3::Y];
        let normals = [Vec3::Z; 4];
        let mut out = [[0.0; 4]; 4];
        tangents(&quad, &normals, &uvs, &corners, &mut out);
        assert!(out.iter().all(|t| *t == [1.0, 0.0, 0.0, -1.0]), "{out:?}");
        let turned = quad.map(|p| Vec3::new(-p.y, p.x, 0.0));
        tangents(&turned, &normals, &uvs, &corners, &mut out);
        for t in out {
            assert!(
                (Vec3::new(t[0], t[1], t[2]) - Vec3::Y).length() < 1e-6,
                "{t:?}"
            );
            assert_eq!(t[3], -1.0);
        }
        // With v along −Y on the same side (a mirrored UV map), the
        // handedness flips.
        let mirrored = quad.map(|p| Vec3::new(p.x, -p.y, 0.0));
        tangents(&mirrored, &normals, &uvs, &corners, &mut out);
        assert!(out.iter().all(|t| t[3] == 1.0), "{out:?}");
    }

    #[test]
    fn bad_triangles_are_left_out_and_counted() {
        let p = vec![
            Vec3::ZERO,
            Vec3::X,
            Vec3::Y,
            Vec3::NAN,
            2.0 * Vec3::X,
            Vec3::Z,
        ];
        // A good one, a repeated corner, a NaN corner (left out, not
        // counted), a collinear one, an index out of range.
        let i = vec![0, 1, 2, 0, 0, 1, 0, 3, 2, 0, 1, 4, 0, 1, 99];
        let welded = weld(&p, 0.0);
        let topo = topology(&welded, &i, 1e-9);
        assert_eq!(topo.triangles, vec![[0, 1, 2]]);
        assert_eq!(topo.degenerate, 3);
        // Three triangles on one edge.
        let i = vec![0, 1, 2, 1, 0, 5, 0, 1, 4];
        let p = vec![
            Vec3::ZERO,
            Vec3::X,
            Vec3::Y,
            Vec3::NAN,
            Vec3::new(0.5, -1.0, 0.0),
            Vec3::Z,
        ];
        let topo = topology(&weld(&p, 0.0), &i, 1e-9);
        assert_eq!(topo.non_manifold, 1);
        assert_eq!(topo.edges.len(), 7);
    }
}

//! Shapes of the world that bodies touch (obstacles): the signed distance
//! from a point to a shape's surface with the outward normal there, the
//! bounds of a placed shape, and a grid that finds the obstacles near a
//! point.
//!
//! A shape is given in its own frame, sizes already scaled. The 3D shapes
//! are Bevy's primitives of the same names (a capsule and a cylinder along
//! `Y`; a half-space solid where `normal · p + d > 0`, as Bevy's
//! `HalfSpace` contains points). The 2D shapes lie in the `XY` plane and
//! are prisms along `Z`, endless: a 2D game's bodies at any `z` meet them.

use bevy::math::{Quat, Vec2, Vec3A};

/// A shape in its own frame.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Shape {
    Sphere {
        radius: f32,
    },
    Cuboid {
        half: Vec3A,
    },
    Capsule {
        radius: f32,
        half_length: f32,
    },
    Cylinder {
        radius: f32,
        half_height: f32,
    },
    HalfSpace {
        normal: Vec3A,
        d: f32,
    },
    Circle {
        radius: f32,
    },
    Rectangle {
        half: Vec2,
    },
    Capsule2d {
        radius: f32,
        half_length: f32,
    },
    /// A convex polygon: `vertices[start..end]`, counter-clockwise.
    Polygon {
        start: u32,
        end: u32,
    },
    /// A triangle mesh (or a height field made one): the step's
    /// `Triangles` number `mesh`, met one triangle at a time
    /// ([`Triangles::near`]), not by [`nearest`].
    Mesh {
        mesh: u32,
    },
}

/// The nearest point of a shape's surface to a point, seen from the
/// point: its signed distance (negative inside) and the outward unit
/// normal there.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Nearest {
    pub distance: f32,
    pub normal: Vec3A,
}

/// The unit vector along `v`, or `fallback` for a zero vector.
#[inline]
fn unit_or(v: Vec3A, fallback: Vec3A) -> Vec3A {
    v.try_normalize().unwrap_or(fallback)
}

/// Distance and normal from `p` to a round shape around the nearest point
/// `core` of its core (a point or a segment) of radius `radius`.
#[inline]
fn around(p: Vec3A, core: Vec3A, radius: f32) -> Nearest {
    let d = p - core;
    let length = d.length();
    Nearest {
        distance: length - radius,
        normal: unit_or(d, Vec3A::Y),
    }
}

/// A box's signed distance and normal (`half` per axis; a 2D rectangle
/// has an endless `Z`).
#[inline]
fn boxed(p: Vec3A, half: Vec3A) -> Nearest {
    let q = p.abs() - half;
    let sign = Vec3A::select(p.cmplt(Vec3A::ZERO), Vec3A::NEG_ONE, Vec3A::ONE);
    if q.max_element() > 0.0 {
        let out = q.max(Vec3A::ZERO) * sign;
        return Nearest {
            distance: out.length(),
            normal: unit_or(out, Vec3A::Y),
        };
    }
    // Inside: out through the nearest face.
    let axis = if q.x >= q.y && q.x >= q.z {
        Vec3A::X
    } else if q.y >= q.z {
        Vec3A::Y
    } else {
        Vec3A::Z
    };
    Nearest {
        distance: q.max_element(),
        normal: axis * sign,
    }
}

/// A convex polygon's signed distance and normal in the `XY` plane
/// (counter-clockwise vertices, at least three).
fn polygon(p: Vec2, vertices: &[Vec2]) -> Nearest {
    let n = vertices.len();
    let mut deepest = (f32::NEG_INFINITY, Vec2::Y);
    let mut nearest = (f32::INFINITY, Vec2::Y);
    for i in 0..n {
        let (a, b) = (vertices[i], vertices[(i + 1) % n]);
        let edge = b - a;
        let outward = Vec2::new(edge.y, -edge.x).normalize_or(Vec2::Y);
        let side = outward.dot(p - a);
        if side > deepest.0 {
            deepest = (side, outward);
        }
        let t = ((p - a).dot(edge) / edge.length_squared().max(f32::MIN_POSITIVE)).clamp(0.0, 1.0);
        let to = p - (a + t * edge);
        let length = to.length();
        if length < nearest.0 {
            nearest = (length, to.normalize_or(outward));
        }
    }
    let (distance, normal) = if deepest.0 <= 0.0 { deepest } else { nearest };
    Nearest {
        distance,
        normal: normal.extend(0.0).into(),
    }
}

/// The signed distance and outward normal from `p` (in the shape's frame)
/// to `shape`; `vertices` holds the polygons' vertices.
pub fn nearest(shape: &Shape, p: Vec3A, vertices: &[Vec2]) -> Nearest {
    let flat = Vec3A::new(p.x, p.y, 0.0);
    match *shape {
        Shape::Sphere { radius } => around(p, Vec3A::ZERO, radius),
        Shape::Cuboid { half } => boxed(p, half),
        Shape::Capsule {
            radius,
            half_length,
        } => around(
            p,
            Vec3A::new(0.0, p.y.clamp(-half_length, half_length), 0.0),
            radius,
        ),
        Shape::Cylinder {
            radius,
            half_height,
        } => {
            let radial = Vec3A::new(p.x, 0.0, p.z);
            let out = unit_or(radial, Vec3A::X);
            let side = (radial.length() - radius, p.y.abs() - half_height);
            let up = if p.y < 0.0 { Vec3A::NEG_Y } else { Vec3A::Y };
            if side.0 > 0.0 || side.1 > 0.0 {
                let v = side.0.max(0.0) * out + side.1.max(0.0) * up;
                Nearest {
                    distance: v.length(),
                    normal: unit_or(v, up),
                }
            } else if side.0 > side.1 {
                Nearest {
                    distance: side.0,
                    normal: out,
                }
            } else {
                Nearest {
                    distance: side.1,
                    normal: up,
                }
            }
        }
        Shape::HalfSpace { normal, d } => Nearest {
            distance: -(normal.dot(p) + d),
            normal: -normal,
        },
        Shape::Circle { radius } => around(flat, Vec3A::ZERO, radius),
        Shape::Rectangle { half } => boxed(flat, half.extend(f32::INFINITY).into()),
        Shape::Capsule2d {
            radius,
            half_length,
        } => around(
            flat,
            Vec3A::new(0.0, p.y.clamp(-half_length, half_length), 0.0),
            radius,
        ),
        Shape::Polygon { start, end } => {
            polygon(Vec2::new(p.x, p.y), &vertices[start as usize..end as usize])
        }
        // Met triangle by triangle (`Triangles::near`), not as a whole.
        Shape::Mesh { .. } => Nearest {
            distance: f32::INFINITY,
            normal: Vec3A::Y,
        },
    }
}

/// The bounds of `shape` in its own frame: `None` for a half-space (it
/// has none); a 2D shape's `Z` is endless.
pub fn local_bounds(shape: &Shape, vertices: &[Vec2]) -> Option<(Vec3A, Vec3A)> {
    let endless = f32::INFINITY;
    let half = match *shape {
        Shape::Sphere { radius } => Vec3A::splat(radius),
        Shape::Cuboid { half } => half,
        Shape::Capsule {
            radius,
            half_length,
        } => Vec3A::new(radius, radius + half_length, radius),
        Shape::Cylinder {
            radius,
            half_height,
        } => Vec3A::new(radius, half_height, radius),
        // (A mesh's bounds are its `Triangles::bounds`.)
        Shape::HalfSpace { .. } | Shape::Mesh { .. } => return None,
        Shape::Circle { radius } => Vec3A::new(radius, radius, endless),
        Shape::Rectangle { half } => half.extend(endless).into(),
        Shape::Capsule2d {
            radius,
            half_length,
        } => Vec3A::new(radius, radius + half_length, endless),
        Shape::Polygon { start, end } => {
            let corners = &vertices[start as usize..end as usize];
            let (min, max) = corners
                .iter()
                .fold((Vec2::INFINITY, Vec2::NEG_INFINITY), |(min, max), &v| {
                    (min.min(v), max.max(v))
                });
            return Some((min.extend(-endless).into(), max.extend(endless).into()));
        }
    };
    Some((-half, half))
}

/// The world bounds of local bounds `(min, max)` placed at `center`,
/// turned by `rotation` (an endless side stays endless along the axes it
/// reaches).
pub fn placed_bounds((min, max): (Vec3A, Vec3A), center: Vec3A, rotation: Quat) -> (Vec3A, Vec3A) {
    let mid = 0.5 * (min + max);
    let half = 0.5 * (max - min);
    let half = Vec3A::select(half.cmpeq(Vec3A::INFINITY), Vec3A::INFINITY, half);
    let mid = Vec3A::select(half.cmpeq(Vec3A::INFINITY), Vec3A::ZERO, mid);
    let m = bevy::math::Mat3A::from_quat(rotation);
    let abs = [m.x_axis.abs(), m.y_axis.abs(), m.z_axis.abs()];
    // |R|·half, with 0·∞ read as 0.
    let reach = |i: usize| {
        if half[i] == f32::INFINITY {
            Vec3A::select(
                abs[i].cmpgt(Vec3A::splat(1e-6)),
                Vec3A::INFINITY,
                Vec3A::ZERO,
            )
        } else {
            abs[i] * half[i]
        }
    };
    let extent = reach(0) + reach(1) + reach(2);
    let centre = center + m * mid;
    (centre - extent, centre + extent)
}

/// The point of triangle `a b c` nearest to `p` (by the regions of its
/// corners and edges, as in Ericson's *Real-Time Collision Detection*,
/// 5.1.5).
pub fn closest_on_triangle(p: Vec3A, a: Vec3A, b: Vec3A, c: Vec3A) -> Vec3A {
    let (ab, ac, ap) = (b - a, c - a, p - a);
    let (d1, d2) = (ab.dot(ap), ac.dot(ap));
    if d1 <= 0.0 && d2 <= 0.0 {
        return a;
    }
    let bp = p - b;
    let (d3, d4) = (ab.dot(bp), ac.dot(bp));
    if d3 >= 0.0 && d4 <= d3 {
        return b;
    }
    let vc = d1 * d4 - d3 * d2;
    if vc <= 0.0 && d1 >= 0.0 && d3 <= 0.0 {
        return a + d1 / (d1 - d3) * ab;
    }
    let cp = p - c;
    let (d5, d6) = (ab.dot(cp), ac.dot(cp));
    if d6 >= 0.0 && d5 <= d6 {
        return c;
    }
    let vb = d5 * d2 - d1 * d6;
    if vb <= 0.0 && d2 >= 0.0 && d6 <= 0.0 {
        return a + d2 / (d2 - d6) * ac;
    }
    let va = d3 * d6 - d5 * d4;
    if va <= 0.0 && d4 - d3 >= 0.0 && d5 - d6 >= 0.0 {
        return b + (d4 - d3) / ((d4 - d3) + (d5 - d6)) * (c - b);
    }
    let denom = 1.0 / (va + vb + vc);
    a + ab * (vb * denom) + ac * (vc * denom)
}

/// The triangles of a mesh obstacle in its own frame, with a grid that
/// finds those near a point.
#[derive(Debug, Clone, Default)]
pub struct Triangles {
    pub vertices: Vec<Vec3A>,
    /// Counter-clockwise seen from the front.
    pub triangles: Vec<[u32; 3]>,
    /// Each triangle's unit normal, to its front.
    pub normals: Vec<Vec3A>,
    /// Whether bodies are kept in front alone (a closed mesh's outside, a
    /// terrain's top); else they stay off both faces.
    pub one_sided: bool,
    /// The bounds of its vertices.
    pub bounds: (Vec3A, Vec3A),
    grid: Grid,
}

impl Triangles {
    /// The triangles of `vertices` (all finite) listed by `triangles`
    /// (indices in range), leaving out those with no area, laid out in a
    /// grid of cells at least `min_cell` wide (about the distances looked
    /// up: a lookup's cube spans a few cells).
    pub fn new(
        vertices: Vec<Vec3A>,
        triangles: &[[u32; 3]],
        one_sided: bool,
        min_cell: f32,
    ) -> Self {
        let mut kept = Vec::with_capacity(triangles.len());
        let mut normals = Vec::with_capacity(triangles.len());
        for &[a, b, c] in triangles {
            let (pa, pb, pc) = (
                vertices[a as usize],
                vertices[b as usize],
                vertices[c as usize],
            );
            if let Some(normal) = (pb - pa).cross(pc - pa).try_normalize() {
                kept.push([a, b, c]);
                normals.push(normal);
            }
        }
        let bounds = vertices
            .iter()
            .fold((Vec3A::INFINITY, Vec3A::NEG_INFINITY), |(lo, hi), &v| {
                (lo.min(v), hi.max(v))
            });
        let v = &vertices;
        let cells: Vec<(Vec3A, Vec3A)> = kept
            .iter()
            .map(|&[a, b, c]| {
                let (pa, pb, pc) = (v[a as usize], v[b as usize], v[c as usize]);
                (pa.min(pb).min(pc), pa.max(pb).max(pc))
            })
            .collect();
        let mut grid = Grid::default();
        grid.build(&cells, min_cell, 0.0);
        Self {
            vertices,
            triangles: kept,
            normals,
            one_sided,
            bounds,
            grid,
        }
    }

    /// Calls `visit` with the triangles within `reach` of `p` that hold
    /// `p` off in a way the nearer ones do not, nearest first (of the 8
    /// nearest), with the distance and normal from `p` to each (as
    /// [`near`](Self::near) gives them). A triangle is left out when its
    /// nearest point is not in front of a nearer one's plane: on a flat
    /// or convex stretch a body meets the one nearest triangle (not its
    /// neighbours' edges too), in a corner (a stair's tread and riser)
    /// both faces.
    pub fn near_distinct(&self, p: Vec3A, reach: f32, mut visit: impl FnMut(u32, Nearest)) {
        const KEEP: usize = 8;
        // Most bodies of a scene are nowhere near the mesh.
        let r = Vec3A::splat(reach);
        if (p + r).cmplt(self.bounds.0).any() || (p - r).cmpgt(self.bounds.1).any() {
            return;
        }
        let mut best = [(
            0u32,
            Nearest {
                distance: f32::INFINITY,
                normal: Vec3A::Y,
            },
        ); KEEP];
        let mut count = 0;
        self.near(p, reach, |t, found| {
            // Insertion into the nearest `KEEP`, by distance, then triangle.
            let at = best[..count].partition_point(|b| b.1.distance <= found.distance);
            if at < KEEP {
                best.copy_within(at..KEEP - 1, at + 1);
                best[at] = (t, found);
                count = (count + 1).min(KEEP);
            }
        });
        let mut kept: [Nearest; KEEP] = [best[0].1; KEEP];
        let mut held = 0;
        for &(t, found) in &best[..count] {
            // Its nearest point `p − d_j·n_j` against a kept one's plane
            // through `p − d_i·n_i`: `n_i·(q_j − q_i) = d_i − d_j·(n_i·n_j)`.
            let covered = kept[..held]
                .iter()
                .any(|k| k.distance - found.distance * k.normal.dot(found.normal) <= 1e-4 * reach);
            if !covered {
                kept[held] = found;
                held += 1;
                visit(t, found);
            }
        }
    }

    /// Calls `visit` with each triangle within `reach` of `p` and the
    /// distance and normal from `p` to it: behind a one-sided
    /// mesh's triangle the distance is negative and the normal its face's;
    /// else the distance is to the triangle, along the line from its
    /// nearest point to `p`.
    #[inline]
    pub fn near(&self, p: Vec3A, reach: f32, mut visit: impl FnMut(u32, Nearest)) {
        let v = &self.vertices;
        self.grid.near(p, reach, |t| {
            let [a, b, c] = self.triangles[t as usize];
            let face = self.normals[t as usize];
            let pa = v[a as usize];
            // Farther from its plane than `reach`: farther from it.
            let height = face.dot(p - pa);
            if height.abs() > reach {
                return;
            }
            let (pb, pc) = (v[b as usize], v[c as usize]);
            let to = p - closest_on_triangle(p, pa, pb, pc);
            let length = to.length();
            if length > reach {
                return;
            }
            let front = height >= 0.0;
            let found = if self.one_sided && !front {
                Nearest {
                    distance: -length,
                    normal: face,
                }
            } else {
                let side = if front { face } else { -face };
                Nearest {
                    distance: length,
                    normal: if length > 0.0 { to / length } else { side },
                }
            };
            visit(t, found);
        });
    }
}

/// The largest count of grid cells one obstacle may fill; a larger one
/// (or an endless one) is checked against every body instead.
pub const MAX_CELLS: u64 = 512;

/// The largest count of cells one lookup visits; a wider lookup visits
/// every obstacle instead.
pub const MAX_LOOKUP_CELLS: u64 = 512;

/// A uniform grid of bounds (obstacles', or a mesh's triangles'): which
/// may be within a distance of a point. Built once, each bound widened by
/// `widen`; a lookup within that distance visits the point's cell alone,
/// a farther one the cells around it. The cells are hashed into buckets
/// laid out by a counting sort: no map, no comparison sort.
#[derive(Debug, Default, Clone)]
pub struct Grid {
    cell: f32,
    widen: f32,
    /// (cell key, item), by bucket; within a bucket in item order.
    entries: Vec<(u64, u32)>,
    /// Bucket `b`'s run of `entries` is `starts[b]..starts[b + 1]` (a
    /// power of two of buckets, and one more start).
    starts: Vec<u32>,
    /// The entries as laid out item by item, before the counting sort.
    scratch: Vec<(u64, u32)>,
    /// The cells the entries fill, lowest and highest on each axis.
    span: ([i32; 3], [i32; 3]),
    /// The world box of the gridded items' widened bounds: a lookup whose
    /// cube misses it finds none of them without working out cells.
    extent: (Vec3A, Vec3A),
    /// Per item, the lowest cell its bounds reach (`[i32::MIN; 3]` for an
    /// item checked everywhere).
    first: Vec<[i32; 3]>,
    /// Items too large or endless for the grid, in order, with their
    /// bounds: a lookup visits those its reach meets.
    everywhere: Vec<(u32, (Vec3A, Vec3A))>,
    /// What the grid was last built for (bounds, `min_cell`, `widen`):
    /// built again only when that changes.
    built_for: (Vec<(Vec3A, Vec3A)>, f32, f32),
}

/// The bucket of cell `key` among `2^bits` (a multiplicative hash).
#[inline]
fn bucket(key: u64, bits: u32) -> usize {
    if bits == 0 {
        return 0;
    }
    (key.wrapping_mul(0x9e37_79b9_7f4a_7c15) >> (64 - bits)) as usize
}

#[inline]
fn cell_key(c: [i32; 3]) -> u64 {
    // 21 bits per axis; cells far out wrap onto others, which only adds
    // candidates.
    let k = |v: i32| (v as u32 as u64) & 0x1f_ffff;
    k(c[0]) | (k(c[1]) << 21) | (k(c[2]) << 42)
}

impl Grid {
    /// Lays out `bounds` (one per item, min and max), each widened by
    /// `widen`, in cells of about their mean size, at least `min_cell`.
    /// Nothing to do when all three are what the grid was last built for
    /// (obstacles at rest keep their grid).
    pub fn build(&mut self, bounds: &[(Vec3A, Vec3A)], min_cell: f32, widen: f32) {
        let same = |a: f32, b: f32| a.to_bits() == b.to_bits();
        let (last, last_min, last_widen) = &self.built_for;
        if same(*last_min, min_cell) && same(*last_widen, widen) && last[..] == *bounds {
            return;
        }
        self.built_for.0.clear();
        self.built_for.0.extend_from_slice(bounds);
        // (NaN never equals itself: bounds with NaN are built each time.)
        self.built_for.1 = min_cell;
        self.built_for.2 = widen;
        self.widen = widen.max(0.0);
        let w = Vec3A::splat(self.widen);
        self.entries.clear();
        self.starts.clear();
        self.scratch.clear();
        self.everywhere.clear();
        self.first.clear();
        self.span = ([i32::MAX; 3], [i32::MIN; 3]);
        self.extent = (Vec3A::INFINITY, Vec3A::NEG_INFINITY);
        let (mut sum, mut finite) = (0.0f32, 0usize);
        for (min, max) in bounds {
            let extent = (*max - *min).max_element() + 2.0 * self.widen;
            if extent.is_finite() {
                sum += extent;
                finite += 1;
            }
        }
        let mean = sum / finite.max(1) as f32;
        let cell = mean.max(min_cell);
        self.cell = if cell > 0.0 && cell.is_finite() {
            cell
        } else {
            1.0
        };
        for (o, &(min, max)) in bounds.iter().enumerate() {
            let (wide_min, wide_max) = (min - w, max + w);
            let (lo, hi) = (self.cell_of(wide_min), self.cell_of(wide_max));
            let count = (0..3).fold(1u64, |n, i| n * (hi[i] - lo[i] + 1).max(1) as u64);
            if !(wide_min.is_finite() && wide_max.is_finite()) || count > MAX_CELLS {
                self.everywhere.push((o as u32, (min, max)));
                self.first.push([i32::MIN; 3]);
                continue;
            }
            self.first.push(lo);
            self.extent = (self.extent.0.min(wide_min), self.extent.1.max(wide_max));
            for k in 0..3 {
                self.span.0[k] = self.span.0[k].min(lo[k]);
                self.span.1[k] = self.span.1[k].max(hi[k]);
            }
            for x in lo[0]..=hi[0] {
                for y in lo[1]..=hi[1] {
                    for z in lo[2]..=hi[2] {
                        self.scratch.push((cell_key([x, y, z]), o as u32));
                    }
                }
            }
        }
        if self.scratch.is_empty() {
            return;
        }
        // Counting sort by bucket, stable: each bucket's entries stay in
        // item order.
        let buckets = (2 * self.scratch.len()).next_power_of_two();
        self.starts.resize(buckets + 1, 0);
        let bits = buckets.trailing_zeros();
        for &(key, _) in &self.scratch {
            self.starts[bucket(key, bits) + 1] += 1;
        }
        for b in 0..buckets {
            self.starts[b + 1] += self.starts[b];
        }
        self.entries.resize(self.scratch.len(), (0, 0));
        for &(key, o) in &self.scratch {
            let at = &mut self.starts[bucket(key, bits)];
            self.entries[*at as usize] = (key, o);
            *at += 1;
        }
        // Each start moved to its bucket's end: shift them back.
        self.starts.copy_within(..buckets, 1);
        self.starts[0] = 0;
    }

    #[inline]
    fn cell_of(&self, p: Vec3A) -> [i32; 3] {
        let c = (p / self.cell)
            .floor()
            .clamp(Vec3A::splat(-1e6), Vec3A::splat(1e6));
        [c.x as i32, c.y as i32, c.z as i32]
    }

    /// Calls `visit` with each item whose bounds' cells meet the cube of
    /// half side `reach` around `p` (each once, in a fixed order), then
    /// each item checked everywhere. None of the first where the cube
    /// misses the box that holds all their (widened) bounds: an item
    /// within `reach` of `p` is always visited.
    #[inline]
    pub fn near(&self, p: Vec3A, reach: f32, mut visit: impl FnMut(u32)) {
        let r = Vec3A::splat((reach - self.widen).max(0.0));
        if self.may_meet_gridded(p, r) {
            let bits = (self.starts.len() - 1).trailing_zeros();
            let (lo, hi) = (self.cell_of(p - r), self.cell_of(p + r));
            // Only the cells that hold entries.
            let lo: [i32; 3] = core::array::from_fn(|k| lo[k].max(self.span.0[k]));
            let hi: [i32; 3] = core::array::from_fn(|k| hi[k].min(self.span.1[k]));
            let cells = (0..3).fold(1u64, |n, i| n * (hi[i] - lo[i] + 1).max(0) as u64);
            if cells == 0 {
                // Nothing gridded is near.
            } else if cells > MAX_LOOKUP_CELLS || !reach.is_finite() {
                for (o, first) in self.first.iter().enumerate() {
                    if first[0] != i32::MIN {
                        visit(o as u32);
                    }
                }
            } else {
                for x in lo[0]..=hi[0] {
                    for y in lo[1]..=hi[1] {
                        for z in lo[2]..=hi[2] {
                            let key = cell_key([x, y, z]);
                            let b = bucket(key, bits);
                            let run = self.starts[b] as usize..self.starts[b + 1] as usize;
                            for &(k, o) in &self.entries[run] {
                                if k != key {
                                    continue;
                                }
                                // Once: in the first cell the item and
                                // the cube share.
                                let f = self.first[o as usize];
                                if [f[0].max(lo[0]), f[1].max(lo[1]), f[2].max(lo[2])] == [x, y, z]
                                {
                                    visit(o);
                                }
                            }
                        }
                    }
                }
            }
        }
        for &(o, bounds) in &self.everywhere {
            if within(p, Vec3A::splat(reach), bounds) {
                visit(o);
            }
        }
    }

    /// Whether [`near`](Self::near) at `p` within `reach` may visit any
    /// item: false where it surely visits none (a cheap test, to skip the
    /// lookup and what it would set up).
    #[inline]
    pub fn may_meet(&self, p: Vec3A, reach: f32) -> bool {
        let r = Vec3A::splat((reach - self.widen).max(0.0));
        let reach = Vec3A::splat(reach);
        self.may_meet_gridded(p, r)
            || self
                .everywhere
                .iter()
                .any(|&(_, bounds)| within(p, reach, bounds))
    }

    /// Whether the cube of half side `r` around `p` meets the box of all
    /// the gridded items' widened bounds: one that misses it is not near
    /// any of them, and no cells need working out.
    #[inline]
    fn may_meet_gridded(&self, p: Vec3A, r: Vec3A) -> bool {
        let misses = (p + r).cmplt(self.extent.0).any() || (p - r).cmpgt(self.extent.1).any();
        !(self.entries.is_empty() || misses)
    }
}

/// Whether the cube of half side `r` around `p` meets `bounds` (endless
/// or NaN bounds always do).
#[inline]
fn within(p: Vec3A, r: Vec3A, (min, max): (Vec3A, Vec3A)) -> bool {
    !((p + r).cmplt(min).any() || (p - r).cmpgt(max).any())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The items `grid` visits at `p` within `reach`, in order.
    fn visited(grid: &Grid, p: Vec3A, reach: f32) -> Vec<u32> {
        let mut all = Vec::new();
        grid.near(p, reach, |o| all.push(o));
        all
    }

    fn close(a: f32, b: f32) -> bool {
        (a - b).abs() < 1e-5
    }

    #[test]
    fn distances_of_each_shape_kind() {
        let square = [
            Vec2::new(-1.0, -1.0),
            Vec2::new(1.0, -1.0),
            Vec2::new(1.0, 1.0),
            Vec2::new(-1.0, 1.0),
        ];
        let cases: [(Shape, Vec3A, f32, Vec3A); 12] = [
            (
                Shape::Sphere { radius: 1.0 },
                Vec3A::new(0.0, 3.0, 0.0),
                2.0,
                Vec3A::Y,
            ),
            (
                Shape::Cuboid {
                    half: Vec3A::new(1.0, 2.0, 3.0),
                },
                Vec3A::new(0.0, 0.0, -5.0),
                2.0,
                Vec3A::NEG_Z,
            ),
            (
                Shape::Cuboid {
                    half: Vec3A::new(1.0, 2.0, 3.0),
                },
                Vec3A::new(0.5, 0.0, 0.0),
                -0.5,
                Vec3A::X,
            ),
            (
                Shape::Cuboid { half: Vec3A::ONE },
                Vec3A::new(4.0, 5.0, 0.0),
                5.0,
                Vec3A::new(0.6, 0.8, 0.0),
            ),
            (
                Shape::Capsule {
                    radius: 0.5,
                    half_length: 1.0,
                },
                Vec3A::new(0.0, 3.0, 0.0),
                1.5,
                Vec3A::Y,
            ),
            (
                Shape::Capsule {
                    radius: 0.5,
                    half_length: 1.0,
                },
                Vec3A::new(2.0, 0.7, 0.0),
                1.5,
                Vec3A::X,
            ),
            (
                Shape::Cylinder {
                    radius: 1.0,
                    half_height: 1.0,
                },
                Vec3A::new(0.0, 0.0, 3.0),
                2.0,
                Vec3A::Z,
            ),
            (
                Shape::Cylinder {
                    radius: 1.0,
                    half_height: 1.0,
                },
                Vec3A::new(0.2, 0.9, 0.0),
                -0.1,
                Vec3A::Y,
            ),
            (
                Shape::HalfSpace {
                    normal: Vec3A::NEG_Y,
                    d: 0.0,
                },
                Vec3A::new(7.0, 2.0, 1.0),
                2.0,
                Vec3A::Y,
            ),
            (
                Shape::Circle { radius: 1.0 },
                Vec3A::new(3.0, 0.0, 50.0),
                2.0,
                Vec3A::X,
            ),
            (
                Shape::Rectangle {
                    half: Vec2::new(1.0, 0.5),
                },
                Vec3A::new(0.0, -2.5, -9.0),
                2.0,
                Vec3A::NEG_Y,
            ),
            (
                Shape::Polygon { start: 0, end: 4 },
                Vec3A::new(3.0, 3.0, 2.0),
                8.0f32.sqrt(),
                Vec3A::new(0.70710677, 0.70710677, 0.0),
            ),
        ];
        for (shape, p, distance, normal) in cases {
            let found = nearest(&shape, p, &square);
            assert!(
                close(found.distance, distance),
                "{shape:?} at {p}: {found:?}"
            );
            assert!(
                (found.normal - normal).length() < 1e-5,
                "{shape:?} at {p}: {found:?}"
            );
        }
        let inside = nearest(
            &Shape::Polygon { start: 0, end: 4 },
            Vec3A::new(0.0, 0.8, 0.0),
            &square,
        );
        assert!(close(inside.distance, -0.2) && (inside.normal - Vec3A::Y).length() < 1e-6);
        let capsule = nearest(
            &Shape::Capsule2d {
                radius: 0.5,
                half_length: 1.0,
            },
            Vec3A::new(0.0, -2.0, 4.0),
            &square,
        );
        assert!(close(capsule.distance, 0.5) && (capsule.normal - Vec3A::NEG_Y).length() < 1e-6);
    }

    /// The distance is a distance: moving along the normal by `δ` changes
    /// it by `δ`, outside each shape.
    #[test]
    fn the_normal_is_the_gradient_of_the_distance() {
        let square = [
            Vec2::new(-1.0, -1.0),
            Vec2::new(1.0, -1.0),
            Vec2::new(0.0, 1.0),
        ];
        let shapes = [
            Shape::Sphere { radius: 0.7 },
            Shape::Cuboid {
                half: Vec3A::new(0.3, 0.6, 0.9),
            },
            Shape::Capsule {
                radius: 0.3,
                half_length: 0.8,
            },
            Shape::Cylinder {
                radius: 0.5,
                half_height: 0.4,
            },
            Shape::Capsule2d {
                radius: 0.3,
                half_length: 0.8,
            },
            Shape::Polygon { start: 0, end: 3 },
        ];
        for shape in shapes {
            for k in 0..200 {
                let a = k as f32 * 0.37;
                let p = Vec3A::new(a.cos() * 2.0, (a * 1.7).sin() * 2.0, (a * 0.3).cos() * 1.5);
                let here = nearest(&shape, p, &square);
                let there = nearest(&shape, p + 1e-2 * here.normal, &square);
                assert!(
                    (there.distance - here.distance - 1e-2).abs() < 1e-4,
                    "{shape:?} at {p}"
                );
            }
        }
    }

    #[test]
    fn placed_bounds_hold_the_turned_shape() {
        let bounds = local_bounds(
            &Shape::Cuboid {
                half: Vec3A::new(1.0, 0.1, 0.1),
            },
            &[],
        )
        .unwrap();
        let turn = Quat::from_rotation_z(core::f32::consts::FRAC_PI_2);
        let (min, max) = placed_bounds(bounds, Vec3A::new(5.0, 0.0, 0.0), turn);
        assert!((min - Vec3A::new(4.9, -1.0, -0.1)).length() < 1e-5, "{min}");
        assert!((max - Vec3A::new(5.1, 1.0, 0.1)).length() < 1e-5, "{max}");
        // A 2D circle turned about Z stays endless along Z alone (its
        // square's bounds, turned).
        let circle = local_bounds(&Shape::Circle { radius: 1.0 }, &[]).unwrap();
        let (min, max) = placed_bounds(circle, Vec3A::ZERO, Quat::from_rotation_z(0.3));
        let side = 0.3f32.cos() + 0.3f32.sin();
        assert!(
            (min.x + side).abs() < 1e-5 && (max.y - side).abs() < 1e-5,
            "{min} {max}"
        );
        assert!(
            max.z == f32::INFINITY && min.z == f32::NEG_INFINITY,
            "{min} {max}"
        );
    }

    /// The nearest point of a triangle is nearer than every point of a
    /// fine sampling of it, and lies on it.
    #[test]
    fn the_nearest_point_of_a_triangle_is_nearest() {
        let (a, b, c) = (
            Vec3A::ZERO,
            Vec3A::new(2.0, 0.0, 0.0),
            Vec3A::new(0.5, 1.5, 0.3),
        );
        for k in 0..300 {
            let t = k as f32 * 0.61;
            let p = Vec3A::new(
                t.cos() * 3.0 + 0.7,
                (t * 1.3).sin() * 3.0,
                (t * 0.7).cos() * 2.0,
            );
            let q = closest_on_triangle(p, a, b, c);
            let mut best = f32::INFINITY;
            for i in 0..=40 {
                for j in 0..=(40 - i) {
                    let s = a + (i as f32 / 40.0) * (b - a) + (j as f32 / 40.0) * (c - a);
                    best = best.min(p.distance(s));
                }
            }
            assert!(
                p.distance(q) <= best + 1e-5,
                "{p}: {} > {best}",
                p.distance(q)
            );
            assert!(p.distance(q) > best - 0.08, "{p}: off the triangle");
        }
    }

    /// A one-sided triangle keeps points in front; a two-sided one keeps
    /// them off either face.
    #[test]
    fn triangles_near_a_point_by_side() {
        let vertices = vec![Vec3A::ZERO, Vec3A::X, Vec3A::new(0.0, 0.0, -1.0)];
        for one_sided in [false, true] {
            let mesh = Triangles::new(vertices.clone(), &[[0, 1, 2]], one_sided, 0.0);
            assert_eq!(mesh.normals, [Vec3A::Y]);
            let seen = |p: Vec3A| {
                let mut all = Vec::new();
                mesh.near(p, 0.5, |t, found| all.push((t, found)));
                all
            };
            let above = seen(Vec3A::new(0.2, 0.3, -0.2));
            let close = |a: Vec3A, b: Vec3A| (a - b).length() < 1e-6;
            assert!((above[0].1.distance - 0.3).abs() < 1e-6 && close(above[0].1.normal, Vec3A::Y));
            let below = seen(Vec3A::new(0.2, -0.3, -0.2))[0].1;
            if one_sided {
                assert!((below.distance + 0.3).abs() < 1e-6 && close(below.normal, Vec3A::Y));
            } else {
                assert!((below.distance - 0.3).abs() < 1e-6 && close(below.normal, Vec3A::NEG_Y));
            }
            assert!(
                seen(Vec3A::new(0.2, 0.8, -0.2)).is_empty(),
                "beyond its reach"
            );
        }
    }

    /// Over a flat floor of many triangles a point meets the one below it;
    /// in a stair's corner, the tread and the riser.
    #[test]
    fn distinct_triangles_are_the_faces_that_hold_a_point_off() {
        // A floor of 8 × 8 squares, 0.1 wide, and a riser at x = 0.4.
        let mut vertices = Vec::new();
        let mut triangles = Vec::new();
        for i in 0..9u32 {
            for j in 0..9u32 {
                vertices.push(Vec3A::new(i as f32 * 0.1, 0.0, j as f32 * 0.1));
            }
        }
        for i in 0..8u32 {
            for j in 0..8u32 {
                let a = i * 9 + j;
                triangles.push([a, a + 1, a + 9]);
                triangles.push([a + 1, a + 10, a + 9]);
            }
        }
        let floor = Triangles::new(vertices.clone(), &triangles, false, 0.0);
        let met = |mesh: &Triangles, p: Vec3A| {
            let mut all = Vec::new();
            mesh.near_distinct(p, 0.25, |_, found| all.push(found));
            all
        };
        let below = met(&floor, Vec3A::new(0.33, 0.1, 0.27));
        assert_eq!(below.len(), 1, "{below:?}");
        assert!(
            (below[0].distance - 0.1).abs() < 1e-6 && (below[0].normal - Vec3A::Y).length() < 1e-5
        );
        let base = vertices.len() as u32;
        vertices.extend([
            Vec3A::new(0.4, 0.0, 0.0),
            Vec3A::new(0.4, 0.0, 0.8),
            Vec3A::new(0.4, 0.5, 0.8),
            Vec3A::new(0.4, 0.5, 0.0),
        ]);
        triangles.extend([[base, base + 1, base + 2], [base, base + 2, base + 3]]);
        let stair = Triangles::new(vertices, &triangles, false, 0.0);
        let corner = met(&stair, Vec3A::new(0.33, 0.1, 0.27));
        assert_eq!(corner.len(), 2, "{corner:?}");
        assert!(
            (corner[0].distance - 0.07).abs() < 1e-5
                && (corner[0].normal - Vec3A::NEG_X).length() < 1e-5
        );
        assert!((corner[1].normal - Vec3A::Y).length() < 1e-5);
    }

    #[test]
    fn the_grid_finds_each_obstacle_near_its_bounds_only() {
        let bounds = [
            (Vec3A::ZERO, Vec3A::ONE),
            (Vec3A::splat(10.0), Vec3A::splat(11.0)),
            (Vec3A::splat(f32::NEG_INFINITY), Vec3A::splat(f32::INFINITY)),
        ];
        let mut grid = Grid::default();
        grid.build(&bounds, 0.0, 0.0);
        let found = |p: Vec3A, reach: f32| visited(&grid, p, reach);
        assert_eq!(found(Vec3A::splat(0.5), 0.0), [0, 2]);
        assert_eq!(found(Vec3A::splat(10.5), 0.0), [1, 2]);
        assert_eq!(found(Vec3A::splat(5.5), 0.0), [2]);
        // Within reach of a cell of each, each once; a reach over too
        // many cells visits every item.
        assert_eq!(found(Vec3A::new(1.2, 0.5, 0.5), 0.5), [0, 2]);
        assert_eq!(found(Vec3A::splat(5.5), 3.0), [2]);
        assert_eq!(found(Vec3A::splat(5.5), 5.0), [0, 1, 2]);
        assert_eq!(found(Vec3A::splat(5.5), 100.0), [0, 1, 2]);
        // Widened: a lookup within the widening visits the point's cell,
        // which holds what is that near.
        grid.build(&bounds[..2], 0.0, 0.5);
        let near = |p: Vec3A, reach: f32| visited(&grid, p, reach);
        assert_eq!(near(Vec3A::new(1.3, 0.5, 0.5), 0.4), [0]);
        assert_eq!(
            near(Vec3A::new(1.8, 0.5, 0.5), 0.4),
            [0],
            "its cell holds the widened bounds"
        );
        assert!(near(Vec3A::splat(5.5), 0.4).is_empty());
        assert_eq!(near(Vec3A::splat(5.5), 5.0), [0, 1]);
    }

    #[test]
    fn the_grid_is_built_again_when_its_input_changes() {
        let near = |grid: &Grid, p: Vec3A| visited(grid, p, 0.1);
        let at = |x: f32| [(Vec3A::new(x, 0.0, 0.0), Vec3A::new(x + 1.0, 1.0, 1.0))];
        let mut grid = Grid::default();
        grid.build(&at(0.0), 0.0, 0.0);
        grid.build(&at(0.0), 0.0, 0.0);
        assert_eq!(near(&grid, Vec3A::splat(0.5)), [0]);
        // Moved: found where it is now only.
        grid.build(&at(10.0), 0.0, 0.0);
        assert!(near(&grid, Vec3A::splat(0.5)).is_empty());
        assert_eq!(near(&grid, Vec3A::new(10.5, 0.5, 0.5)), [0]);
        // The same bounds with another widening or cell: built again.
        grid.build(&at(10.0), 0.0, 3.0);
        assert_eq!(near(&grid, Vec3A::new(12.0, 0.5, 0.5)), [0]);
        grid.build(&at(10.0), 50.0, 3.0);
        assert_eq!(grid.cell, 50.0);
        // One more item: built again.
        let two = [at(10.0)[0], at(20.0)[0]];
        grid.build(&two, 50.0, 3.0);
        assert_eq!(near(&grid, Vec3A::new(20.5, 0.5, 0.5)), [0, 1]);
        grid.build(&two[..1], 50.0, 3.0);
        assert_eq!(near(&grid, Vec3A::new(10.5, 0.5, 0.5)), [0]);
        assert!(near(&grid, Vec3A::new(20.5, 0.5, 0.5)).is_empty());
    }

    #[test]
    fn a_lookup_outside_every_bound_visits_none_of_them() {
        // Two items in one large cell: a lookup in that cell but beyond
        // both bounds (widened) visits neither; one within reach of the
        // first, widened or not, visits it.
        let bounds = [
            (Vec3A::ZERO, Vec3A::ONE),
            (Vec3A::new(2.0, 0.0, 0.0), Vec3A::new(3.0, 1.0, 1.0)),
        ];
        let mut grid = Grid::default();
        grid.build(&bounds, 100.0, 0.5);
        let near = |p: Vec3A, reach: f32| visited(&grid, p, reach);
        assert!(near(Vec3A::new(1.5, 5.0, 0.5), 1.0).is_empty());
        assert!(near(Vec3A::new(-4.0, 0.5, 0.5), 1.0).is_empty());
        assert_eq!(near(Vec3A::new(-0.9, 0.5, 0.5), 1.0), [0]);
        assert_eq!(near(Vec3A::new(-0.3, 0.5, 0.5), 0.4), [0]);
        assert_eq!(near(Vec3A::new(1.5, 0.5, 0.5), 0.6), [0, 1]);
        // `may_meet` is false exactly where nothing is visited here.
        let lookups = [
            (Vec3A::new(1.5, 5.0, 0.5), 1.0),
            (Vec3A::new(-4.0, 0.5, 0.5), 1.0),
            (Vec3A::new(-0.9, 0.5, 0.5), 1.0),
            (Vec3A::new(-0.3, 0.5, 0.5), 0.4),
            (Vec3A::new(1.5, 0.5, 0.5), 0.6),
        ];
        for (p, reach) in lookups {
            assert_eq!(grid.may_meet(p, reach), !near(p, reach).is_empty(), "{p}");
        }
        // An item kept apart (endless) is met wherever its bounds reach.
        let floor = (
            Vec3A::new(f32::NEG_INFINITY, -1.0, f32::NEG_INFINITY),
            Vec3A::new(f32::INFINITY, 0.0, f32::INFINITY),
        );
        grid.build(&[bounds[0], floor], 100.0, 0.5);
        assert!(grid.may_meet(Vec3A::new(50.0, 0.5, 0.0), 1.0));
        assert!(!grid.may_meet(Vec3A::new(50.0, 2.0, 0.0), 1.0));
        assert!(grid.may_meet(Vec3A::new(0.5, 2.0, 0.5), 1.0));
    }
}

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
        Shape::HalfSpace { .. } => return None,
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

/// The largest count of grid cells one obstacle may fill; a larger one
/// (or an endless one) is checked against every body instead.
pub const MAX_CELLS: u64 = 512;

/// A uniform grid of obstacles' bounds: which obstacles may be near a
/// point. Built once per step; each lookup costs a binary search.
#[derive(Debug, Default, Clone)]
pub struct Grid {
    cell: f32,
    /// (cell key, obstacle), sorted.
    entries: Vec<(u64, u32)>,
    /// Obstacles too large or endless for the grid, in order.
    everywhere: Vec<u32>,
}

#[inline]
fn cell_key(c: [i32; 3]) -> u64 {
    // 21 bits per axis; cells far out wrap onto others, which only adds
    // candidates.
    let k = |v: i32| (v as u32 as u64) & 0x1f_ffff;
    k(c[0]) | (k(c[1]) << 21) | (k(c[2]) << 42)
}

impl Grid {
    /// Lays out `bounds` (one per obstacle, world min and max) in cells of
    /// about their mean size.
    pub fn build(&mut self, bounds: &[(Vec3A, Vec3A)]) {
        self.entries.clear();
        self.everywhere.clear();
        let finite: Vec<f32> = bounds
            .iter()
            .map(|(min, max)| (*max - *min).max_element())
            .filter(|e| e.is_finite())
            .collect();
        let mean = finite.iter().sum::<f32>() / finite.len().max(1) as f32;
        self.cell = if mean > 0.0 && mean.is_finite() {
            mean
        } else {
            1.0
        };
        let to_cell = |v: f32| (v / self.cell).floor().clamp(-1e6, 1e6) as i32;
        for (o, (min, max)) in bounds.iter().enumerate() {
            let lo = [to_cell(min.x), to_cell(min.y), to_cell(min.z)];
            let hi = [to_cell(max.x), to_cell(max.y), to_cell(max.z)];
            let count = (0..3).fold(1u64, |n, i| n * (hi[i] - lo[i] + 1).max(1) as u64);
            if !(min.is_finite() && max.is_finite()) || count > MAX_CELLS {
                self.everywhere.push(o as u32);
                continue;
            }
            for x in lo[0]..=hi[0] {
                for y in lo[1]..=hi[1] {
                    for z in lo[2]..=hi[2] {
                        self.entries.push((cell_key([x, y, z]), o as u32));
                    }
                }
            }
        }
        self.entries.sort_unstable();
        self.entries.dedup();
    }

    /// Calls `visit` with each obstacle whose cell holds `p`, then each
    /// obstacle checked everywhere (each once, in a fixed order).
    #[inline]
    pub fn near(&self, p: Vec3A, mut visit: impl FnMut(u32)) {
        if !self.entries.is_empty() {
            let c = (p / self.cell).floor();
            let key = cell_key([c.x as i32, c.y as i32, c.z as i32]);
            let from = self.entries.partition_point(|e| e.0 < key);
            for &(k, o) in &self.entries[from..] {
                if k != key {
                    break;
                }
                visit(o);
            }
        }
        for &o in &self.everywhere {
            visit(o);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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

    #[test]
    fn the_grid_finds_each_obstacle_near_its_bounds_only() {
        let bounds = [
            (Vec3A::ZERO, Vec3A::ONE),
            (Vec3A::splat(10.0), Vec3A::splat(11.0)),
            (Vec3A::splat(f32::NEG_INFINITY), Vec3A::splat(f32::INFINITY)),
        ];
        let mut grid = Grid::default();
        grid.build(&bounds);
        let found = |p: Vec3A| {
            let mut all = Vec::new();
            grid.near(p, |o| all.push(o));
            all
        };
        assert_eq!(found(Vec3A::splat(0.5)), [0, 2]);
        assert_eq!(found(Vec3A::splat(10.5)), [1, 2]);
        assert_eq!(found(Vec3A::splat(5.5)), [2]);
    }
}

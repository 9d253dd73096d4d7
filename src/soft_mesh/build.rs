//! Building a soft mesh: from the mesh asset to bodies and springs.

use bevy::asset::AssetEvent;
use bevy::mesh::{Mesh, Mesh2d, Mesh3d, VertexAttributeValues};
use bevy::platform::collections::HashSet;
use bevy::prelude::*;
use bevy::transform::helper::TransformHelper;

use super::{
    PartOfSoftMesh, PinFrame, PinSelect, SoftMass, SoftMesh, SoftMeshParts, SoftMeshPoint,
};
use crate::data::body::{Body, Damping};
use crate::data::constraints::Radius;
use crate::data::drawing::TransformSyncDisabled;
use crate::data::islands::ImplicitSprings;
use crate::data::issues::{MeshProblem, PhysicsIssue};
use crate::data::joins::Spring;
use crate::data::obstacles::mesh_triangles;
use crate::kernels::mesh::{self, NO_POINT, Topology, Welded};
use crate::pins::PinnedTo;
use crate::solver::report::Reporter;

/// The soft meshes, with what they draw and what they built.
type Soft = (
    Entity,
    &'static SoftMesh,
    Option<&'static Mesh3d>,
    Option<&'static Mesh2d>,
    Option<&'static SoftMeshParts>,
);

/// `PreUpdate`: builds each soft mesh whose asset is ready and that has no
/// parts yet, or whose entity was given another mesh, or whose asset
/// changed (a hot reload).
pub(crate) fn build_soft_meshes(
    mut meshes: ResMut<Assets<Mesh>>,
    mut events: MessageReader<AssetEvent<Mesh>>,
    server: Option<Res<AssetServer>>,
    soft: Query<Soft>,
    transforms: TransformHelper,
    time: Res<Time<Fixed>>,
    mut reporter: Reporter,
) {
    let changed: HashSet<AssetId<Mesh>> = events
        .read()
        .filter_map(|event| match *event {
            AssetEvent::Modified { id } | AssetEvent::LoadedWithDependencies { id } => Some(id),
            _ => None,
        })
        .collect();
    let h = time.timestep().as_secs_f32();
    for (entity, settings, mesh_3d, mesh_2d, parts) in &soft {
        let Some(handle) = mesh_3d.map(|m| &m.0).or(mesh_2d.map(|m| &m.0)) else {
            continue;
        };
        let source = match parts {
            Some(parts) if *handle == parts.copy => {
                // Rebuilt when the asset's content changed: not for an
                // event about a change the build already saw (one made
                // before it, or the second event of a reload).
                let same = |mesh: &Mesh| fingerprint(mesh) == parts.fingerprint;
                if !changed.contains(&parts.source.id())
                    || meshes.get(&parts.source).is_none_or(same)
                {
                    continue;
                }
                parts.source.clone()
            }
            _ => handle.clone(),
        };
        let Some(mesh) = meshes.get(&source).cloned() else {
            let failed = server
                .as_ref()
                .is_some_and(|server| server.load_state(&source).is_failed());
            if failed {
                reporter.warn(entity, problem(MeshProblem::LoadFailed));
                let mut commands = reporter.commands().entity(entity);
                commands.despawn_related::<super::SoftMeshSpawned>();
                draw_from(&mut commands, mesh_3d.is_some(), &source);
                commands.insert(SoftMeshParts::empty(source));
            }
            continue;
        };
        if parts.is_some() {
            // The old parts go before the new ones are spawned.
            reporter
                .commands()
                .entity(entity)
                .despawn_related::<super::SoftMeshSpawned>();
        }
        let frame = transforms
            .compute_global_transform(entity)
            .unwrap_or_default();
        if !frame.affine().matrix3.determinant().is_normal() {
            // A transform that cannot be inverted (a scale of zero, say):
            // built once it can.
            continue;
        }
        let built = Build {
            entity,
            settings,
            frame,
            h,
            transforms: &transforms,
        }
        .run(&mesh, &mut reporter);
        let mut parts = match built {
            Ok(parts) => parts,
            Err(issue) => {
                reporter.warn(entity, problem(issue));
                let mut commands = reporter.commands().entity(entity);
                draw_from(&mut commands, mesh_3d.is_some(), &source);
                commands.insert(SoftMeshParts::empty(source));
                continue;
            }
        };
        parts.fingerprint = fingerprint(&mesh);
        parts.copy = meshes.add(mesh);
        parts.source = source;
        let mut commands = reporter.commands().entity(entity);
        draw_from(&mut commands, mesh_3d.is_some(), &parts.copy);
        commands.insert(parts);
    }
}

/// Gives the entity `mesh` to draw, as a `Mesh3d` or a `Mesh2d`.
fn draw_from(commands: &mut EntityCommands, three_d: bool, mesh: &Handle<Mesh>) {
    if three_d {
        commands.insert(Mesh3d(mesh.clone()));
    } else {
        commands.insert(Mesh2d(mesh.clone()));
    }
}

/// A soft mesh's problem as an issue.
fn problem(problem: MeshProblem) -> PhysicsIssue {
    PhysicsIssue::SoftMesh { problem }
}

impl SoftMeshParts {
    /// No parts: a mesh that could not be built from `source`.
    fn empty(source: Handle<Mesh>) -> Self {
        Self {
            bodies: Vec::new(),
            springs: Vec::new(),
            edge_springs: 0,
            copy: source.clone(),
            source,
            body_of: Vec::new(),
            triangles: Vec::new(),
            corners: Vec::new(),
            pressure: None,
            drawn_resting: None,
            drawn: Vec::new(),
            moving: false,
            fingerprint: 0,
        }
    }
}

/// A hash of what a soft mesh is built from: the topology, positions,
/// indices and colours.
fn fingerprint(mesh: &Mesh) -> u64 {
    use core::hash::{Hash, Hasher};
    let mut hasher = std::hash::DefaultHasher::new();
    mesh.primitive_topology().hash(&mut hasher);
    for attribute in [Mesh::ATTRIBUTE_POSITION, Mesh::ATTRIBUTE_COLOR] {
        if let Ok(Some(values)) = mesh.try_attribute_option(attribute) {
            values.get_bytes().hash(&mut hasher);
        }
    }
    if let Ok(Some(indices)) = mesh.try_indices_option() {
        indices.iter().for_each(|i| i.hash(&mut hasher));
    }
    hasher.finish()
}

/// One build of one soft mesh.
struct Build<'a, 'w, 's> {
    entity: Entity,
    settings: &'a SoftMesh,
    /// The entity's transform now.
    frame: GlobalTransform,
    /// The fixed timestep.
    h: f32,
    transforms: &'a TransformHelper<'w, 's>,
}

/// The settings as used, bad ones replaced by the defaults.
struct Material {
    mass: f32,
    hertz: f32,
    ratio: f32,
    bend: f32,
    pressure: Option<f32>,
    drag: f32,
}

impl Build<'_, '_, '_> {
    /// Spawns the parts (the copy of the asset is the caller's), or says
    /// why there are none.
    fn run(&self, mesh: &Mesh, reporter: &mut Reporter) -> Result<SoftMeshParts, MeshProblem> {
        let (local, indices) = mesh_triangles(mesh)?;
        let world: Vec<Vec3> = local
            .iter()
            .map(|&p| self.frame.transform_point(p))
            .collect();
        let (low, high) = world
            .iter()
            .filter(|p| p.is_finite())
            .fold((Vec3::INFINITY, Vec3::NEG_INFINITY), |(lo, hi), &p| {
                (lo.min(p), hi.max(p))
            });
        let size = if low.x <= high.x {
            low.distance(high)
        } else {
            0.0
        };
        // (A tolerance below the positions' own precision welds nothing more.)
        let tolerance = self.settings.weld_tolerance.max(0.0) * size;
        let welded = mesh::weld(&world, tolerance.max(4.0 * f32::EPSILON * size));
        let topology = mesh::topology(&welded, &indices, 1e-12 * size * size);
        if topology.triangles.is_empty() {
            return Err(MeshProblem::Empty);
        }
        let material = self.material(reporter)?;
        let count = |n: usize| n.min(u32::MAX as usize) as u32;
        if welded.non_finite > 0 {
            let count = count(welded.non_finite);
            reporter.warn(
                self.entity,
                problem(MeshProblem::NonFiniteVertices { count }),
            );
        }
        if topology.degenerate > 0 {
            let count = count(topology.degenerate);
            reporter.warn(
                self.entity,
                problem(MeshProblem::DegenerateTriangles { count }),
            );
        }
        if topology.non_manifold > 0 {
            let count = count(topology.non_manifold);
            reporter.warn(
                self.entity,
                problem(MeshProblem::NonManifoldEdges { count }),
            );
        }
        let pins = self.pins(mesh, &local, &welded, reporter);
        Ok(self.spawn(&welded, &topology, &material, &pins, reporter))
    }

    /// The settings, each bad one reported and replaced.
    fn material(&self, reporter: &mut Reporter) -> Result<Material, MeshProblem> {
        let s = self.settings;
        let (SoftMass::Total(mass) | SoftMass::PerSquareMetre(mass)) = s.mass;
        if !(mass > 0.0 && mass.is_finite()) {
            return Err(MeshProblem::InvalidMass { mass });
        }
        let defaults = SoftMesh::default();
        let mut fix = |value: f32, ok: bool, default: f32| {
            if ok {
                value
            } else {
                let issue = problem(MeshProblem::InvalidSetting { value });
                reporter.warn(self.entity, issue);
                default
            }
        };
        let valid = |x: f32| x >= 0.0 && x.is_finite();
        let hertz = fix(
            s.stretch_hertz,
            valid(s.stretch_hertz) && s.stretch_hertz > 0.0,
            defaults.stretch_hertz,
        );
        let ratio = fix(
            s.damping_ratio,
            valid(s.damping_ratio),
            defaults.damping_ratio,
        );
        let bend = fix(s.bend, valid(s.bend), defaults.bend);
        let pressure = s.pressure.map(|k| fix(k, valid(k), 0.0));
        let drag = fix(s.drag, valid(s.drag), 0.0);
        Ok(Material {
            mass,
            hertz,
            ratio,
            bend,
            pressure,
            drag,
        })
    }

    /// For each point, the frame of the first pin that holds it.
    fn pins(
        &self,
        mesh: &Mesh,
        local: &[Vec3],
        welded: &Welded,
        reporter: &mut Reporter,
    ) -> Vec<Option<PinFrame>> {
        let mut pinned = vec![None; welded.points.len()];
        let colours = vertex_colours(mesh);
        for pin in &self.settings.pins {
            let mut hold = |vertex: usize| {
                let point = welded.point_of[vertex];
                if point != NO_POINT && pinned[point as usize].is_none() {
                    pinned[point as usize] = Some(pin.frame);
                }
            };
            match pin.select {
                PinSelect::Index(index) if (index as usize) < local.len() => hold(index as usize),
                PinSelect::Index(index) => {
                    let vertices = local.len().min(u32::MAX as usize) as u32;
                    let issue = MeshProblem::PinOutOfRange { index, vertices };
                    reporter.warn(self.entity, problem(issue));
                }
                PinSelect::Where(test) => {
                    (0..local.len())
                        .filter(|&v| (test.0)(local[v]))
                        .for_each(hold);
                }
                PinSelect::Colour { colour, tolerance } => {
                    let Some(colours) = &colours else {
                        reporter.warn(self.entity, problem(MeshProblem::NoColours));
                        continue;
                    };
                    let want = colour.to_vec4();
                    (0..colours.len().min(local.len()))
                        .filter(|&v| (colours[v] - want).abs().max_element() <= tolerance)
                        .for_each(hold);
                }
            }
        }
        pinned
    }

    /// Spawns the bodies and springs.
    fn spawn(
        &self,
        welded: &Welded,
        topology: &Topology,
        material: &Material,
        pins: &[Option<PinFrame>],
        reporter: &mut Reporter,
    ) -> SoftMeshParts {
        let points = &welded.points;
        let area: f32 = topology.point_area.iter().sum();
        let total = match self.settings.mass {
            SoftMass::Total(_) => material.mass,
            SoftMass::PerSquareMetre(_) => material.mass * area,
        };
        let modulus = 16.0 * total * material.hertz * material.hertz;
        let alpha = material.ratio / (core::f32::consts::PI * material.hertz);
        // A body per point that is a corner of a kept triangle.
        let mut body_of_point = vec![NO_POINT; points.len()];
        let mut n = 0;
        for (p, &a) in topology.point_area.iter().enumerate() {
            if a > 0.0 {
                body_of_point[p] = n;
                n += 1;
            }
        }
        let mass_of = |p: usize| total * topology.point_area[p] / area;
        let springs = spring_list(points, topology, modulus, material.bend);
        // The stiffest body's load bounds the fastest mode: ω² ≤ 2·Σk/m.
        let mut load = vec![0.0f32; points.len()];
        for &(a, b, _, k) in &springs {
            load[a as usize] += k;
            load[b as usize] += k;
        }
        let omega_sq = (0..points.len())
            .filter(|&p| pins[p].is_none() && topology.point_area[p] > 0.0)
            .map(|p| 2.0 * load[p] / mass_of(p))
            .fold(0.0f32, f32::max);
        let implicit = self
            .settings
            .implicit
            .unwrap_or(omega_sq.sqrt() * self.h / 2.0 > 0.9);
        let inverse = self.frame.affine().inverse();
        let mut bodies = Vec::with_capacity(n as usize);
        for p in (0..points.len()).filter(|&p| body_of_point[p] != NO_POINT) {
            let at = points[p];
            let body = match pins[p] {
                Some(_) => Body::fixed(at),
                None => Body::new(mass_of(p)).with_position(at),
            };
            let mut e = reporter.commands().spawn((
                body,
                TransformSyncDisabled,
                PartOfSoftMesh(self.entity),
                SoftMeshPoint(bodies.len() as u32),
            ));
            match pins[p] {
                Some(PinFrame::Own) => {
                    e.insert(PinnedTo::new(self.entity).with_offset(inverse.transform_point3(at)));
                }
                Some(PinFrame::Entity(target)) => {
                    // A target without a transform yet (its pin reports
                    // it) is taken as the world's frame: the body stays
                    // where it is built until the target has one.
                    let offset = self
                        .transforms
                        .compute_global_transform(target)
                        .map_or(at, |t| t.affine().inverse().transform_point3(at));
                    e.insert(PinnedTo::new(target).with_offset(offset));
                }
                None => {}
            }
            if let Some(r) = self.settings.radius {
                e.insert(Radius(r));
            }
            if let Some(groups) = self.settings.groups {
                e.insert(groups);
            }
            if material.drag > 0.0 {
                e.insert(Damping(material.drag));
            }
            if implicit {
                e.insert(ImplicitSprings);
            }
            bodies.push(e.id());
        }
        let springs: Vec<Entity> = springs
            .iter()
            .map(|&(a, b, rest, k)| {
                let [a, b] = [a, b].map(|p| bodies[body_of_point[p as usize] as usize]);
                let spring = Spring::new(a, b, rest, k).with_damping(alpha * k);
                reporter
                    .commands()
                    .spawn((spring, PartOfSoftMesh(self.entity)))
                    .id()
            })
            .collect();
        let triangles: Vec<[u32; 3]> = topology
            .triangles
            .iter()
            .map(|t| t.map(|p| body_of_point[p as usize]))
            .collect();
        let at: Vec<Vec3> = (0..points.len())
            .filter(|&p| body_of_point[p] != NO_POINT)
            .map(|p| points[p])
            .collect();
        let inverse_masses: Vec<f32> = (0..points.len())
            .filter(|&p| body_of_point[p] != NO_POINT)
            .map(|p| {
                if pins[p].is_some() {
                    0.0
                } else {
                    1.0 / mass_of(p)
                }
            })
            .collect();
        let pressure = self.pressure(
            material.pressure,
            topology.closed,
            (&at, &inverse_masses, &triangles),
            reporter,
        );
        SoftMeshParts {
            bodies,
            edge_springs: topology.edges.len(),
            springs,
            source: Handle::default(),
            copy: Handle::default(),
            body_of: welded
                .point_of
                .iter()
                .map(|&p| {
                    if p == NO_POINT {
                        NO_POINT
                    } else {
                        body_of_point[p as usize]
                    }
                })
                .collect(),
            triangles,
            corners: topology.corners.clone(),
            pressure,
            drawn_resting: None,
            drawn: Vec::new(),
            moving: false,
            fingerprint: 0,
        }
    }
}

impl Build<'_, '_, '_> {
    /// The bulk modulus and the volume as built of a pressure asked of a
    /// closed mesh, over its bodies (`at`, their inverse masses, 0 for a
    /// pinned one, and the triangles); a pressure on an open mesh, or too
    /// stiff for the step, is reported.
    fn pressure(
        &self,
        modulus: Option<f32>,
        closed: bool,
        (at, inverse_masses, triangles): (&[Vec3], &[f32], &[[u32; 3]]),
        reporter: &mut Reporter,
    ) -> Option<(f32, f32)> {
        let k = modulus.filter(|&k| k > 0.0)?;
        if !closed {
            reporter.warn(self.entity, problem(MeshProblem::NotClosed));
            return None;
        }
        let volume = mesh::volume(at, triangles, at[0]);
        if volume == 0.0 || !volume.is_finite() {
            reporter.warn(self.entity, problem(MeshProblem::NotClosed));
            return None;
        }
        // The pressure's stiffness is `(K/|V₀|)·g·gᵀ` (`g` the gradient of
        // the volume): one mode, the breathing of the whole surface, of
        // `ω² = (K/|V₀|)·Σ|g_i|²/m_i`.
        let mut gradient = vec![Vec3::ZERO; at.len()];
        mesh::add_volume_gradient(at, triangles, at[0], 1.0, &mut gradient);
        let load: f32 = gradient
            .iter()
            .zip(inverse_masses)
            .map(|(g, w)| g.length_squared() * w)
            .sum();
        let omega_h = (k / volume.abs() * load).sqrt() * self.h;
        if omega_h > 2.0 {
            let issue = MeshProblem::StiffPressure { omega_h };
            reporter.warn(self.entity, problem(issue));
        }
        Some((k, volume))
    }
}

/// The springs of a mesh of sheet modulus `modulus` (N/m): each edge of
/// rest length `L` on triangles of area `A` gets `k = modulus·A/L²`, each
/// bend `bend` times that; as `(a, b, rest length, stiffness)` over points.
fn spring_list(
    points: &[Vec3],
    topology: &Topology,
    modulus: f32,
    bend: f32,
) -> Vec<(u32, u32, f32, f32)> {
    let edges = topology.edges.iter().map(|e| (e, modulus));
    let bends = topology.bends.iter().map(|e| (e, bend * modulus));
    edges
        .chain(bends.filter(|&(_, k)| k > 0.0))
        .map(|(e, modulus)| {
            let rest = points[e.a as usize].distance(points[e.b as usize]);
            (e.a, e.b, rest, modulus * e.area / (rest * rest))
        })
        .collect()
}

/// The mesh's vertex colours as linear RGBA, if it has them.
fn vertex_colours(mesh: &Mesh) -> Option<Vec<Vec4>> {
    let values = mesh.try_attribute_option(Mesh::ATTRIBUTE_COLOR).ok()??;
    Some(match values {
        VertexAttributeValues::Float32x4(c) => c.iter().map(|&c| Vec4::from(c)).collect(),
        VertexAttributeValues::Float32x3(c) => {
            c.iter().map(|&c| Vec3::from(c).extend(1.0)).collect()
        }
        VertexAttributeValues::Unorm8x4(c) => c
            .iter()
            .map(|c| Vec4::from(c.map(|x| f32::from(x) / 255.0)))
            .collect(),
        VertexAttributeValues::Unorm16x4(c) => c
            .iter()
            .map(|c| Vec4::from(c.map(|x| f32::from(x) / 65535.0)))
            .collect(),
        _ => return None,
    })
}

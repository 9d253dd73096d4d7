//! Ropes in one call: a [`Rope`] on an entity spawns the rope's bodies and
//! springs between two ends (points, fixed points, bodies of yours, or
//! your entities, followed through a [`PinnedTo`]).
//!
//! # Stiffness that does not depend on the resolution
//!
//! A rope is set by its mass per metre `μ` and the frequency `f` of its
//! lowest stretching mode (a rope of length `L` hanging from one end, free
//! at the other, stretches and springs back at `f`; for a continuous rod
//! `f = √(EA/μ) / (4·L)`). From them, `EA = μ·(4·L·f)²`, and each of the
//! `n` links of rest length `L/n` gets the stiffness `k = n·EA/L`, each
//! body the mass `μ·L/n` (half of it at a free end). So the same settings
//! give the same rope at any `n`: hanging from one end, it stretches under
//! its own weight by `μ·g·L²/(2·EA)` at every `n` (the lumped chain's
//! stretch is exactly the continuous rod's), which `tests/ropes.rs` checks.
//!
//! The links' fastest mode is about `ω = 8·n·f`: past the explicit step's
//! limit (`ω·h/2` above 0.9 at the fixed timestep when the rope is
//! spawned) the rope's bodies get [`ImplicitSprings`], stable at one pass
//! ([`Rope::implicit`] chooses yourself).

use bevy::ecs::lifecycle::HookContext;
use bevy::ecs::system::SystemState;
use bevy::ecs::world::DeferredWorld;
use bevy::prelude::*;
use bevy::transform::helper::TransformHelper;

use crate::data::body::{Body, Damping};
use crate::data::constraints::Radius;
use crate::data::islands::ImplicitSprings;
use crate::data::joins::Spring;
use crate::pins::PinnedTo;

/// Where a rope ends.
#[derive(Reflect, Debug, Clone, Copy, PartialEq)]
#[reflect(Debug, PartialEq, Clone)]
pub enum RopeEnd {
    /// A free end at this point: a body of the rope like the others.
    Free(Vec3),
    /// A fixed body at this point.
    Fixed(Vec3),
    /// This body of yours is the end: the rope's last spring ties to it.
    Body(Entity),
    /// A fixed body pinned to this entity at this offset in its frame (a
    /// [`PinnedTo`]): a hand, a bone, a pole.
    Pinned(Entity, Vec3),
    /// A free body tied to this entity at this offset in its frame (a
    /// [`TiedTo`](crate::TiedTo)): a crate the rope lifts and that pulls
    /// the rope back, where the entity gives way (an
    /// [`ObstacleMass`](crate::ObstacleMass) names it, as the avian bridge
    /// does for avian's rigid bodies). Unless [`Rope::implicit`] says
    /// otherwise, such a rope's springs are explicit, with
    /// [`AutoSubsteps`](crate::AutoSubsteps) where they are stiff: an
    /// implicit solve would not see the target's mass. An explicit rope's
    /// links are damped at most critically (`√(2·k·m)`), and where they
    /// would still need more substeps than
    /// [`PhysicsSettings::max_auto_substeps`](crate::PhysicsSettings::max_auto_substeps),
    /// the rope is spawned softer (a lower
    /// [`stretch_hertz`](Rope::stretch_hertz)), with a warning. The end
    /// body does not touch the entity it is tied to (nor that rigid body's
    /// other colliders); the rope's other bodies do.
    Tied(Entity, Vec3),
}

/// A rope between two ends: spawned with it, the rope's bodies and springs
/// ([`RopeParts`]), which are despawned with it. Inserting a new `Rope`
/// replaces them.
///
/// Defaults: 16 links, 0.2 kg per metre, a stretching frequency of 8 Hz, a
/// tenth of critical damping, the rest length of the straight line between
/// the ends, no radius, and implicit springs when the explicit step could
/// not hold them (see the [module docs](crate::ropes)).
///
/// # Example
///
/// ```
/// use bevy::prelude::*;
/// use bevy_euler_physics::prelude::*;
///
/// fn setup(mut commands: Commands) {
///     let hand = commands.spawn(Transform::from_xyz(0.0, 2.0, 0.0)).id();
///     // 24 links from the hand to a free end 1.5 m to the side, 3 cm thick.
///     commands.spawn(
///         Rope::new(RopeEnd::Pinned(hand, Vec3::ZERO), RopeEnd::Free(Vec3::new(1.5, 2.0, 0.0)))
///             .with_segments(24)
///             .with_radius(0.03),
///     );
/// }
/// # App::new().add_plugins((MinimalPlugins, EulerPhysicsPlugin)).add_systems(Startup, setup).update();
/// ```
#[derive(Component, Reflect, Debug, Clone, Copy, PartialEq)]
#[reflect(Component, Debug, PartialEq, Clone)]
#[component(immutable, on_insert = build_rope)]
pub struct Rope {
    /// The first end.
    pub from: RopeEnd,
    /// The last end.
    pub to: RopeEnd,
    /// Links (springs); the rope has one body more, less the ends that
    /// are bodies of yours. At least 1. Unused when
    /// [`segment_length`](Self::segment_length) is set.
    pub segments: u32,
    /// The rest length of a link, in metres: the rope gets as many links
    /// as make its length at this length the closest (at least 1).
    /// `None`: [`segments`](Self::segments) links.
    pub segment_length: Option<f32>,
    /// Mass per metre of rest length, in kg/m; positive and finite.
    pub mass_per_metre: f32,
    /// The frequency of the rope's lowest stretching mode, in Hz; sets its
    /// stiffness whatever `segments` is.
    pub stretch_hertz: f32,
    /// The damping ratio of that mode: 0 undamped, 1 critical. The
    /// springs' damping is in proportion to their stiffness, so faster
    /// modes (a link's own ringing) are damped more.
    pub damping_ratio: f32,
    /// Rest length in metres; `None`: the distance between the ends. A
    /// longer rope is laid sagging below the straight line.
    pub length: Option<f32>,
    /// A radius for contacts, on every body of the rope.
    pub radius: Option<f32>,
    /// A drag rate in 1/s (a [`Damping`]) on every body the rope spawns
    /// (not on an end that is a body of yours): the air's resistance,
    /// which calms a swinging rope. 0: none.
    pub drag: f32,
    /// `Some(true)`: implicit springs; `Some(false)`: explicit (add
    /// [`AutoSubsteps`](crate::AutoSubsteps) to the bodies, or they may be
    /// unstable); `None`: chosen from the stiffness.
    pub implicit: Option<bool>,
}

impl Rope {
    /// A rope from `from` to `to` with the default settings.
    ///
    /// ```
    /// # use bevy::prelude::*;
    /// # use bevy_euler_physics::prelude::*;
    /// let rope = Rope::new(RopeEnd::Fixed(Vec3::ZERO), RopeEnd::Free(Vec3::X));
    /// assert_eq!(rope.segments, 16);
    /// ```
    pub const fn new(from: RopeEnd, to: RopeEnd) -> Self {
        Self {
            from,
            to,
            segments: 16,
            segment_length: None,
            mass_per_metre: 0.2,
            stretch_hertz: 8.0,
            damping_ratio: 0.1,
            length: None,
            radius: None,
            drag: 0.0,
            implicit: None,
        }
    }

    /// With `segments` links.
    ///
    /// ```
    /// # use bevy::prelude::*;
    /// # use bevy_euler_physics::prelude::*;
    /// let rope = Rope::new(RopeEnd::Fixed(Vec3::ZERO), RopeEnd::Free(Vec3::X)).with_segments(8);
    /// assert_eq!(rope.segments, 8);
    /// ```
    pub const fn with_segments(mut self, segments: u32) -> Self {
        self.segments = segments;
        self
    }

    /// With links of about `metres` each (as many as make the rope's
    /// length closest), instead of a count.
    ///
    /// ```
    /// # use bevy::prelude::*;
    /// # use bevy_euler_physics::prelude::*;
    /// let rope = Rope::new(RopeEnd::Fixed(Vec3::ZERO), RopeEnd::Free(Vec3::X)).with_segment_length(0.05);
    /// assert_eq!(rope.segment_length, Some(0.05));
    /// ```
    pub const fn with_segment_length(mut self, metres: f32) -> Self {
        self.segment_length = Some(metres);
        self
    }

    /// With `kg` per metre.
    ///
    /// ```
    /// # use bevy::prelude::*;
    /// # use bevy_euler_physics::prelude::*;
    /// let rope = Rope::new(RopeEnd::Fixed(Vec3::ZERO), RopeEnd::Free(Vec3::X)).with_mass_per_metre(1.5);
    /// assert_eq!(rope.mass_per_metre, 1.5);
    /// ```
    pub const fn with_mass_per_metre(mut self, kg: f32) -> Self {
        self.mass_per_metre = kg;
        self
    }

    /// With its lowest stretching mode at `hertz`, damped by `ratio`.
    ///
    /// ```
    /// # use bevy::prelude::*;
    /// # use bevy_euler_physics::prelude::*;
    /// let rope = Rope::new(RopeEnd::Fixed(Vec3::ZERO), RopeEnd::Free(Vec3::X)).with_stretch(3.0, 0.5);
    /// assert_eq!((rope.stretch_hertz, rope.damping_ratio), (3.0, 0.5));
    /// ```
    pub const fn with_stretch(mut self, hertz: f32, ratio: f32) -> Self {
        self.stretch_hertz = hertz;
        self.damping_ratio = ratio;
        self
    }

    /// With a rest length of `metres`.
    ///
    /// ```
    /// # use bevy::prelude::*;
    /// # use bevy_euler_physics::prelude::*;
    /// let rope = Rope::new(RopeEnd::Fixed(Vec3::ZERO), RopeEnd::Fixed(Vec3::X)).with_length(1.4);
    /// assert_eq!(rope.length, Some(1.4));
    /// ```
    pub const fn with_length(mut self, metres: f32) -> Self {
        self.length = Some(metres);
        self
    }

    /// With round bodies of `radius` metres.
    ///
    /// ```
    /// # use bevy::prelude::*;
    /// # use bevy_euler_physics::prelude::*;
    /// let rope = Rope::new(RopeEnd::Fixed(Vec3::ZERO), RopeEnd::Free(Vec3::X)).with_radius(0.02);
    /// assert_eq!(rope.radius, Some(0.02));
    /// ```
    pub const fn with_radius(mut self, radius: f32) -> Self {
        self.radius = Some(radius);
        self
    }

    /// With a drag of `rate` per second on its bodies.
    ///
    /// ```
    /// # use bevy::prelude::*;
    /// # use bevy_euler_physics::prelude::*;
    /// let rope = Rope::new(RopeEnd::Fixed(Vec3::ZERO), RopeEnd::Free(Vec3::X)).with_drag(0.2);
    /// assert_eq!(rope.drag, 0.2);
    /// ```
    pub const fn with_drag(mut self, rate: f32) -> Self {
        self.drag = rate;
        self
    }

    /// With implicit springs (`true`) or explicit ones (`false`), instead
    /// of the choice from the stiffness.
    ///
    /// ```
    /// # use bevy::prelude::*;
    /// # use bevy_euler_physics::prelude::*;
    /// let rope = Rope::new(RopeEnd::Fixed(Vec3::ZERO), RopeEnd::Free(Vec3::X)).implicit(false);
    /// assert_eq!(rope.implicit, Some(false));
    /// ```
    pub const fn implicit(mut self, implicit: bool) -> Self {
        self.implicit = Some(implicit);
        self
    }

    /// The stiffness `EA` in newtons of a rope of rest length `length`:
    /// `μ·(4·L·f)²`.
    ///
    /// ```
    /// # use bevy::prelude::*;
    /// # use bevy_euler_physics::prelude::*;
    /// let rope = Rope::new(RopeEnd::Fixed(Vec3::ZERO), RopeEnd::Free(Vec3::X))
    ///     .with_mass_per_metre(0.5)
    ///     .with_stretch(2.0, 0.1);
    /// assert_eq!(rope.axial_stiffness(1.0), 0.5 * 64.0);
    /// ```
    pub fn axial_stiffness(&self, length: f32) -> f32 {
        let wave = 4.0 * length * self.stretch_hertz;
        self.mass_per_metre * wave * wave
    }

    /// The stiffness (N/m) and damping (N·s/m) of each of `links` links of
    /// a rope of rest length `length`: `k = links·EA/L`, and `c = α·k`
    /// with `α` the one that gives the lowest stretching mode its
    /// [`damping_ratio`](Self::damping_ratio) (faster modes get more).
    /// For retuning a rope's springs in place (a new `Rope` would respawn
    /// it). `None` when they would not be finite and positive: a length
    /// or link count that is not positive, or a mass per metre or
    /// frequency that is not positive and finite (or a damping ratio
    /// that is negative or not finite).
    ///
    /// ```
    /// # use bevy::prelude::*;
    /// # use bevy_euler_physics::prelude::*;
    /// let rope = Rope::new(RopeEnd::Fixed(Vec3::ZERO), RopeEnd::Free(Vec3::X))
    ///     .with_mass_per_metre(0.5)
    ///     .with_stretch(2.0, 0.1);
    /// let (k, c) = rope.link_coefficients(1.0, 4).unwrap();
    /// assert_eq!(k, 4.0 * rope.axial_stiffness(1.0));
    /// assert!((c - 0.1 / (std::f32::consts::PI * 2.0) * k).abs() < 1e-4);
    /// assert_eq!(rope.link_coefficients(0.0, 4), None);
    /// ```
    pub fn link_coefficients(&self, length: f32, links: usize) -> Option<(f32, f32)> {
        let k = links as f32 * self.axial_stiffness(length) / length;
        // Damping in proportion to the stiffness, `c = α·k`, which damps a
        // mode of angular frequency `ω` by the ratio `α·ω/2`: `α` gives
        // the lowest stretching mode (`2π·f`) the ratio asked for.
        let c = self.damping_ratio / (core::f32::consts::PI * self.stretch_hertz) * k;
        (k > 0.0 && k.is_finite() && c >= 0.0 && c.is_finite()).then_some((k, c))
    }
}

/// The stiffness and damping of an explicit rope's `n` links (each of
/// mass `mass`, the free ends half that): [`Rope::link_coefficients`],
/// with the damping capped at the links' own critical damping
/// (`√(2·k·m)`: the fastest modes are damped as much as they can be,
/// without the explicit step needing a substep for each of their
/// overdamped decays), and, where the links would still need more than
/// `cap` substeps at step `h` to keep their load at `target`
/// ([`AutoSubsteps`](crate::AutoSubsteps)' limit and aim), the rope made
/// softer (its stretching frequency lowered until they fit), with a
/// warning that says so.
fn explicit_links(
    rope: &Rope,
    (length, n, mass): (f32, usize, f32),
    (h, cap, target): (f32, u32, f32),
    id: Entity,
) -> (f32, f32) {
    let links = |rope: &Rope| {
        let (k, c) = rope.link_coefficients(length, n)?;
        Some((k, c.min((2.0 * k * mass).sqrt())))
    };
    // The stiffest link: one to a free end's half-mass body.
    let needed = |(k, c): (f32, f32)| {
        let link = crate::SpringStability::new(k, c, 3.0 / mass);
        let mut substeps = link.substeps_needed(h);
        while substeps <= cap && link.load(h / substeps as f32) > target {
            substeps += 1;
        }
        substeps
    };
    let mut soft = *rope;
    let Some(mut found) = links(&soft) else {
        return (0.0, 0.0);
    };
    while needed(found) > cap {
        soft.stretch_hertz *= 0.8;
        match links(&soft) {
            Some(softer) => found = softer,
            None => break,
        }
    }
    if soft.stretch_hertz < rope.stretch_hertz {
        warn!(
            "bevy_euler_physics: {id}: the Rope's {n} explicit links at {} Hz would need more \
             than {cap} substeps a step (`PhysicsSettings::max_auto_substeps`); it is spawned \
             at {:.2} Hz (softer). Fewer segments, a lower `stretch_hertz`, more substeps or \
             implicit springs keep it as asked",
            rope.stretch_hertz, soft.stretch_hertz
        );
    }
    found
}

/// The bodies (from the first end to the last, the ends that are bodies of
/// yours included) and springs of a [`Rope`], on the rope's entity.
/// Despawning the rope despawns its parts (not the bodies of yours).
#[derive(Component, Debug, Clone, Default, PartialEq)]
pub struct RopeParts {
    /// Every body along the rope, in order.
    pub bodies: Vec<Entity>,
    /// The springs, `springs[i]` between `bodies[i]` and `bodies[i + 1]`.
    pub springs: Vec<Entity>,
}

/// Marks a body or spring the rope `0` spawned.
#[derive(Component, Debug, Clone, Copy, PartialEq, Eq)]
#[relationship(relationship_target = RopeSpawned)]
pub struct PartOfRope(pub Entity);

/// The entities a rope spawned, despawned with it.
#[derive(Component, Debug, Default, PartialEq, Eq)]
#[relationship_target(relationship = PartOfRope, linked_spawn)]
pub struct RopeSpawned(Vec<Entity>);

/// Hook: a rope inserted; its parts are (re)built by a command.
fn build_rope(mut world: DeferredWorld, ctx: HookContext) {
    world
        .commands()
        .entity(ctx.entity)
        .queue_silenced(|mut rope: EntityWorldMut| {
            let Some(settings) = rope.get::<Rope>().copied() else {
                return;
            };
            let id = rope.id();
            rope.despawn_related::<RopeSpawned>();
            let parts = rope.world_scope(|world| spawn_parts(world, id, settings));
            rope.insert(parts);
        });
}

/// Where an end is now, if it exists and is finite.
fn end_at(world: &mut World, end: RopeEnd) -> Option<Vec3> {
    let at = match end {
        RopeEnd::Free(p) | RopeEnd::Fixed(p) => p,
        RopeEnd::Body(e) => world.get::<Body>(e)?.position,
        RopeEnd::Pinned(e, offset) | RopeEnd::Tied(e, offset) => {
            let mut transforms = SystemState::<TransformHelper>::new(world);
            let transforms = transforms.get(world).ok()?;
            let global = transforms.compute_global_transform(e).ok()?;
            global.transform_point(offset)
        }
    };
    at.is_finite().then_some(at)
}

/// The settings as used: bad values replaced, each with a warning.
fn sanitized(rope_entity: Entity, mut rope: Rope) -> Rope {
    let fix = |what: &str, value: f32, ok: bool, default: f32| {
        if ok {
            value
        } else {
            warn!("bevy_euler_physics: {rope_entity}: Rope::{what} is {value}; using {default}");
            default
        }
    };
    let defaults = Rope::new(rope.from, rope.to);
    rope.mass_per_metre = fix(
        "mass_per_metre",
        rope.mass_per_metre,
        rope.mass_per_metre > 0.0 && rope.mass_per_metre.is_finite(),
        defaults.mass_per_metre,
    );
    rope.stretch_hertz = fix(
        "stretch_hertz",
        rope.stretch_hertz,
        rope.stretch_hertz > 0.0 && rope.stretch_hertz.is_finite(),
        defaults.stretch_hertz,
    );
    rope.damping_ratio = fix(
        "damping_ratio",
        rope.damping_ratio,
        rope.damping_ratio >= 0.0 && rope.damping_ratio.is_finite(),
        defaults.damping_ratio,
    );
    rope.drag = fix(
        "drag",
        rope.drag,
        rope.drag >= 0.0 && rope.drag.is_finite(),
        defaults.drag,
    );
    if rope.segments == 0 {
        warn!("bevy_euler_physics: {rope_entity}: Rope::segments is 0; using 1");
        rope.segments = 1;
    }
    rope
}

/// Spawns the parts of `rope` for the rope entity `id`.
fn spawn_parts(world: &mut World, id: Entity, rope: Rope) -> RopeParts {
    let rope = sanitized(id, rope);
    let (Some(a), Some(b)) = (end_at(world, rope.from), end_at(world, rope.to)) else {
        warn!(
            "bevy_euler_physics: {id}: a Rope end is a missing body or entity, or not finite; no rope spawned"
        );
        return RopeParts::default();
    };
    let straight = a.distance(b);
    let length = match rope.length {
        Some(l) if l > 0.0 && l.is_finite() => l,
        Some(l) => {
            warn!(
                "bevy_euler_physics: {id}: Rope::length is {l}; using the distance between the ends"
            );
            straight
        }
        None => straight,
    };
    if length <= 0.0 {
        warn!(
            "bevy_euler_physics: {id}: the Rope's ends coincide and it has no length; no rope spawned"
        );
        return RopeParts::default();
    }
    let n = match rope.segment_length {
        Some(l) if l > 0.0 && l.is_finite() => (length / l).round().clamp(1.0, 1e6) as usize,
        Some(l) => {
            warn!(
                "bevy_euler_physics: {id}: Rope::segment_length is {l}; using {} segments",
                rope.segments
            );
            rope.segments as usize
        }
        None => rope.segments as usize,
    };
    let link = length / n as f32;
    let mass = rope.mass_per_metre * link;
    // The settings are sanitized and the length positive: finite.
    let Some((k, c)) = rope.link_coefficients(length, n) else {
        warn!("bevy_euler_physics: {id}: the Rope's links would not be finite; no rope spawned");
        return RopeParts::default();
    };
    let h = world
        .get_resource::<Time<Fixed>>()
        .map_or(1.0 / 64.0, |t| t.timestep().as_secs_f32());
    // A rope tied to an entity that may give way is explicit: an implicit
    // solve would not see the target's mass, which the tie shares after
    // it (the rope would stretch far more than its springs say). Stiff,
    // it takes the substeps it needs.
    let tied = matches!(rope.from, RopeEnd::Tied(..)) || matches!(rope.to, RopeEnd::Tied(..));
    let stiff = 4.0 * n as f32 * rope.stretch_hertz * h > 0.9;
    let implicit = rope.implicit.unwrap_or(stiff && !tied);
    let substeps = rope.implicit.is_none() && stiff && tied;
    let (k, c) = if implicit {
        (k, c)
    } else {
        let settings = world.get_resource::<crate::PhysicsSettings>();
        let (cap, target) = settings.map_or((64, 0.9), |s| (s.auto_cap(), s.target_load()));
        explicit_links(&rope, (length, n, mass), (h, cap, target), id)
    };
    // Laid along the straight line, sagging below it (a parabola of the
    // rope's length) when the rope is longer.
    let sag = (3.0 * straight * (length - straight).max(0.0) / 8.0).sqrt();
    let place = |t: f32| a.lerp(b, t) - Vec3::Y * (4.0 * sag * t * (1.0 - t));
    let mut bodies = Vec::with_capacity(n + 1);
    for i in 0..=n {
        let end = match i {
            0 => Some(rope.from),
            _ if i == n => Some(rope.to),
            _ => None,
        };
        let at = place(i as f32 / n as f32);
        let body = match end {
            // A body of yours, as it is.
            Some(RopeEnd::Body(e)) => {
                bodies.push(e);
                continue;
            }
            Some(RopeEnd::Fixed(_) | RopeEnd::Pinned(..)) => Body::fixed(at),
            Some(RopeEnd::Free(_) | RopeEnd::Tied(..)) => Body::new(0.5 * mass).with_position(at),
            None => Body::new(mass).with_position(at),
        };
        let mut e = world.spawn((body, PartOfRope(id)));
        match end {
            Some(RopeEnd::Pinned(target, offset)) => {
                e.insert(PinnedTo::new(target).with_offset(offset));
            }
            Some(RopeEnd::Tied(target, offset)) => {
                e.insert(crate::TiedTo::new(target, offset));
            }
            _ => {}
        }
        if let Some(r) = rope.radius {
            e.insert(Radius(r));
        }
        if rope.drag > 0.0 {
            e.insert(Damping(rope.drag));
        }
        if implicit {
            e.insert(ImplicitSprings);
        }
        if substeps {
            e.insert(crate::AutoSubsteps);
        }
        let body = e.id();
        bodies.push(body);
    }
    let springs = bodies
        .windows(2)
        .map(|pair| {
            world
                .spawn((
                    Spring::new(pair[0], pair[1], link, k).with_damping(c),
                    PartOfRope(id),
                ))
                .id()
        })
        .collect();
    RopeParts { bodies, springs }
}

//! Models as data: bodies, springs and rods written in a RON file under
//! `assets/`, loaded through Bevy's asset server (feature `model-assets`).
//!
//! A model file lists named bodies and the joins between them:
//!
//! ```ron
//! (
//!     bodies: [
//!         // Positions are (x, y) or (x, y, z), in metres, relative to
//!         // where the model is placed.
//!         (name: "pivot", position: (0.0, 2.0), fixed: true),
//!         (name: "bob", position: (0.5, 1.0), mass: 2.0, radius: 0.1, damping: 0.05),
//!     ],
//!     springs: [
//!         // The rest length defaults to the distance in the file.
//!         (a: "pivot", b: "bob", stiffness: 400.0, damping: 2.0),
//!     ],
//!     rods: [],
//! )
//! ```
//!
//! Body fields: `name` (required, unique), `position` (default origin),
//! `velocity`, `mass` (default 1 kg; must be positive and finite),
//! `fixed`, `radius` (contacts with [`GroundPlane`](crate::GroundPlane)s
//! and other round bodies), `damping` ([`Damping`]), and `restitution` and
//! `friction` (a [`ContactMaterial`], the default's value for the one left
//! out). Spring fields: `a`, `b`, `stiffness` and
//! `damping`, or `frequency` (Hz) and `damping_ratio` instead (see
//! [`Spring::from_frequency`](crate::Spring::from_frequency)), and `length`. Rod fields ([`DistanceConstraint`]): `a`, `b`,
//! `length`. Distance limit fields ([`DistanceLimit`], list
//! `distance_limits`): `a`, `b`, `min`, `max` (metres; `max` may be left
//! out for a strut). Angle limit fields ([`AngleLimit`], list
//! `angle_limits`): `a`, `pivot`, `b`, `min_degrees`, `max_degrees`.
//! Every list may be left out.
//!
//! [`PhysicsModelPlugin`] registers the asset and its loader (extension
//! `.model.ron`, or any file loaded as a `PhysicsModel`). Spawn a
//! [`PhysicsModelInstance`] to place a model in the world: its bodies and
//! joins appear once the file is loaded, and are replaced whenever the asset
//! changes, so editing the file of a running game (with Bevy's
//! `file_watcher` feature, on in this crate's `hot-reload` feature) reloads
//! the model in place. A file that does not parse, or names a body that is
//! not there, is refused with an error that names the line; a model already
//! loaded stays as it was.

use std::fmt;

use bevy::asset::io::Reader;
use bevy::asset::{AssetLoader, LoadContext};
use bevy::ecs::lifecycle::HookContext;
use bevy::ecs::world::DeferredWorld;
use bevy::platform::collections::{HashMap, HashSet};
use bevy::prelude::*;
use serde::de::{self, SeqAccess, Visitor};
use serde::{Deserialize, Deserializer};

use crate::body::{Body, Damping};
use crate::constraints::{AngleLimit, ContactMaterial, DistanceConstraint, DistanceLimit, Radius};
use crate::spring::Spring;

/// Registers [`PhysicsModel`] assets, their RON loader and the system that
/// spawns [`PhysicsModelInstance`]s. Add it after Bevy's `AssetPlugin` (part
/// of `DefaultPlugins`).
///
/// ```no_run
/// use bevy::prelude::*;
/// use bevy_euler_physics::prelude::*;
/// use bevy_euler_physics::model::PhysicsModelPlugin;
///
/// fn place(mut commands: Commands, assets: Res<AssetServer>) {
///     let model = assets.load("models/ragdoll.model.ron");
///     commands.spawn(PhysicsModelInstance::new(model, Vec3::new(0.0, 3.0, 0.0)));
/// }
///
/// App::new()
///     .add_plugins((DefaultPlugins, EulerPhysicsPlugin, PhysicsModelPlugin))
///     .add_systems(Startup, place)
///     .run();
/// ```
#[derive(Debug, Clone, Copy, Default)]
pub struct PhysicsModelPlugin;

impl Plugin for PhysicsModelPlugin {
    fn build(&self, app: &mut App) {
        app.init_asset::<PhysicsModel>()
            .register_asset_loader(PhysicsModelLoader)
            .add_message::<ModelSpawned>()
            .add_systems(PreUpdate, spawn_instances.in_set(ModelSystems::Spawn));
    }
}

/// The sets of [`PhysicsModelPlugin`].
///
/// Instances are spawned in `PreUpdate`, before the frame's fixed steps. A
/// system that adjusts what a model spawned (its settings, substeps, looks)
/// and runs in `PreUpdate` after [`ModelSystems::Spawn`] has its changes in
/// force from the first step the new bodies take part in.
///
/// ```
/// use bevy::prelude::*;
/// use bevy_euler_physics::prelude::*;
///
/// // Every spawned model's bodies pick their own substep count.
/// fn auto_substeps(
///     mut commands: Commands,
///     mut spawned: MessageReader<ModelSpawned>,
///     parts: Query<&ModelParts>,
/// ) {
///     for message in spawned.read() {
///         if let Ok(parts) = parts.get(message.instance) {
///             for (_, body) in parts.bodies() {
///                 commands.entity(body).insert(AutoSubsteps);
///             }
///         }
///     }
/// }
///
/// # let mut app = App::new();
/// app.add_systems(PreUpdate, auto_substeps.after(ModelSystems::Spawn));
/// ```
#[derive(SystemSet, Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ModelSystems {
    /// Spawning instances whose model loaded or changed, and sending
    /// [`ModelSpawned`].
    Spawn,
}

/// A model: named bodies and the springs and rods between them. Load it from
/// a RON file (see the [module docs](self)) or build it in code.
///
/// ```
/// use bevy_euler_physics::model::PhysicsModel;
///
/// let model = PhysicsModel::from_ron(r#"(
///     bodies: [
///         (name: "a", position: (0.0, 0.0), fixed: true),
///         (name: "b", position: (0.0, -1.0), mass: 2.0),
///     ],
///     springs: [(a: "a", b: "b", stiffness: 100.0)],
/// )"#).unwrap();
/// assert_eq!(model.bodies.len(), 2);
/// assert_eq!(model.spring_length(&model.springs[0]), 1.0);
/// ```
#[derive(Asset, TypePath, Debug, Clone, PartialEq, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PhysicsModel {
    /// The bodies, each with a unique name.
    #[serde(default)]
    pub bodies: Vec<ModelBody>,
    /// Springs between named bodies.
    #[serde(default)]
    pub springs: Vec<ModelSpring>,
    /// Rigid rods ([`DistanceConstraint`]s) between named bodies.
    #[serde(default)]
    pub rods: Vec<ModelRod>,
    /// [`DistanceLimit`]s between named bodies.
    #[serde(default)]
    pub distance_limits: Vec<ModelDistanceLimit>,
    /// [`AngleLimit`]s over named bodies.
    #[serde(default)]
    pub angle_limits: Vec<ModelAngleLimit>,
}

/// A [`DistanceLimit`] of a [`PhysicsModel`], between the bodies named `a`
/// and `b`, in metres.
///
/// ```
/// use bevy_euler_physics::model::PhysicsModel;
///
/// let model = PhysicsModel::from_ron(r#"(
///     bodies: [(name: "a"), (name: "b", position: (1.0, 0.0))],
///     distance_limits: [(a: "a", b: "b", min: 0.5, max: 2.0)],
/// )"#).unwrap();
/// assert_eq!(model.distance_limits[0].max, 2.0);
/// ```
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ModelDistanceLimit {
    /// One end's name.
    pub a: String,
    /// The other end's name.
    pub b: String,
    /// The shortest distance allowed. Default 0.
    #[serde(default)]
    pub min: f32,
    /// The longest distance allowed. Default: none (a strut).
    #[serde(default = "infinity")]
    pub max: f32,
}

/// An [`AngleLimit`] of a [`PhysicsModel`]: the angle at the body named
/// `pivot` from the arm to `a` to the arm to `b`, about `Vec3::Z`, in
/// degrees (the file is for people; the component takes radians).
///
/// ```
/// use bevy_euler_physics::model::PhysicsModel;
///
/// let model = PhysicsModel::from_ron(r#"(
///     bodies: [(name: "hip", position: (0.0, 1.0)), (name: "knee", position: (0.0, 0.5)), (name: "foot")],
///     angle_limits: [(a: "hip", pivot: "knee", b: "foot", min_degrees: 40.0, max_degrees: 180.0)],
/// )"#).unwrap();
/// assert_eq!(model.angle_limits[0].max_degrees, 180.0);
/// ```
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ModelAngleLimit {
    /// The end of the first arm.
    pub a: String,
    /// The body the angle is measured at.
    pub pivot: String,
    /// The end of the second arm.
    pub b: String,
    /// The smallest angle allowed, in degrees, in `[−180, 180]`.
    pub min_degrees: f32,
    /// The largest angle allowed, in degrees, in `[min_degrees, 180]`.
    pub max_degrees: f32,
}

impl ModelAngleLimit {
    /// The limit as a component, over the spawned bodies.
    fn limit(&self, a: Entity, pivot: Entity, b: Entity) -> AngleLimit {
        AngleLimit::new(
            a,
            pivot,
            b,
            self.min_degrees.to_radians(),
            self.max_degrees.to_radians(),
        )
    }
}

fn infinity() -> f32 {
    f32::INFINITY
}

/// One body of a [`PhysicsModel`].
///
/// ```
/// use bevy::prelude::*;
/// use bevy_euler_physics::model::ModelBody;
///
/// let head = ModelBody::new("head", Vec3::new(0.0, 1.7, 0.0)).with_mass(4.0);
/// assert_eq!(head.mass, 4.0);
/// assert!(!head.fixed);
/// ```
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ModelBody {
    /// Unique within the model; spawned as the body's [`Name`].
    pub name: String,
    /// Relative to where the model is placed.
    #[serde(default, deserialize_with = "point")]
    pub position: Vec3,
    /// The starting velocity.
    #[serde(default, deserialize_with = "point")]
    pub velocity: Vec3,
    /// In kilograms; ignored for fixed bodies. Default 1.
    #[serde(default = "one")]
    pub mass: f32,
    /// A fixed body (an anchor).
    #[serde(default)]
    pub fixed: bool,
    /// Spawned as [`Radius`]: the body touches ground planes.
    #[serde(default)]
    pub radius: Option<f32>,
    /// Spawned as [`Damping`].
    #[serde(default)]
    pub damping: Option<f32>,
    /// With `friction`, spawned as a [`ContactMaterial`] (the default's
    /// value for the one left out).
    #[serde(default)]
    pub restitution: Option<f32>,
    /// See `restitution`.
    #[serde(default)]
    pub friction: Option<f32>,
}

impl ModelBody {
    /// A dynamic body of 1 kg at `position`.
    ///
    /// ```
    /// # use bevy::prelude::*;
    /// # use bevy_euler_physics::model::ModelBody;
    /// assert_eq!(ModelBody::new("a", Vec3::Y).position, Vec3::Y);
    /// ```
    pub fn new(name: impl Into<String>, position: Vec3) -> Self {
        Self {
            name: name.into(),
            position,
            velocity: Vec3::ZERO,
            mass: 1.0,
            fixed: false,
            radius: None,
            damping: None,
            restitution: None,
            friction: None,
        }
    }

    /// With `mass` kilograms.
    ///
    /// ```
    /// # use bevy::prelude::*;
    /// # use bevy_euler_physics::model::ModelBody;
    /// assert_eq!(ModelBody::new("a", Vec3::ZERO).with_mass(3.0).mass, 3.0);
    /// ```
    pub fn with_mass(mut self, mass: f32) -> Self {
        self.mass = mass;
        self
    }

    /// The body as spawned at `offset`.
    fn body(&self, offset: Vec3) -> Body {
        if self.fixed {
            Body::fixed(offset + self.position)
        } else {
            Body::new(self.mass)
                .with_position(offset + self.position)
                .with_velocity(self.velocity)
        }
    }
}

/// A spring of a [`PhysicsModel`], between the bodies named `a` and `b`.
///
/// ```
/// use bevy_euler_physics::model::ModelSpring;
///
/// let bone = ModelSpring::new("torso", "head", 5000.0);
/// assert_eq!(bone.length, None); // the distance in the model
/// ```
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ModelSpring {
    /// One end's name.
    pub a: String,
    /// The other end's name.
    pub b: String,
    /// In N/m. A spring has a stiffness or a `frequency`, not both.
    #[serde(default)]
    pub stiffness: Option<f32>,
    /// In N·s/m, with a stiffness. Default 0.
    #[serde(default)]
    pub damping: f32,
    /// The natural frequency in Hz, instead of a stiffness: see
    /// [`Spring::from_frequency`](crate::Spring::from_frequency).
    #[serde(default)]
    pub frequency: Option<f32>,
    /// The damping ratio, with a `frequency` (0 undamped, 1 critical).
    /// Default 0.
    #[serde(default)]
    pub damping_ratio: f32,
    /// The rest length; by default the distance between the ends as placed
    /// in the model.
    #[serde(default)]
    pub length: Option<f32>,
}

impl ModelSpring {
    /// An undamped spring of `stiffness` between `a` and `b`.
    ///
    /// ```
    /// # use bevy_euler_physics::model::ModelSpring;
    /// assert_eq!(ModelSpring::new("a", "b", 10.0).damping, 0.0);
    /// ```
    pub fn new(a: impl Into<String>, b: impl Into<String>, stiffness: f32) -> Self {
        Self {
            a: a.into(),
            b: b.into(),
            stiffness: Some(stiffness),
            damping: 0.0,
            frequency: None,
            damping_ratio: 0.0,
            length: None,
        }
    }

    /// A spring between `a` and `b` tuned by frequency (Hz) and damping
    /// ratio.
    ///
    /// ```
    /// # use bevy_euler_physics::model::ModelSpring;
    /// let spring = ModelSpring::from_frequency("a", "b", 2.0, 0.1);
    /// assert_eq!((spring.stiffness, spring.frequency), (None, Some(2.0)));
    /// ```
    pub fn from_frequency(
        a: impl Into<String>,
        b: impl Into<String>,
        hertz: f32,
        damping_ratio: f32,
    ) -> Self {
        Self {
            stiffness: None,
            frequency: Some(hertz),
            damping_ratio,
            ..Self::new(a, b, 0.0)
        }
    }

    /// The spring's tuning: `Ok((true, frequency, ratio))` or `Ok((false,
    /// stiffness, damping))`, or what is wrong with it.
    fn tuning(&self) -> Result<(bool, f32, f32), &'static str> {
        match (self.stiffness, self.frequency) {
            (Some(_), Some(_)) => Err("has both a stiffness and a frequency; give one"),
            (None, None) => Err("has neither a stiffness nor a frequency"),
            (Some(_), None) if self.damping_ratio != 0.0 => Err(
                "has a damping_ratio, which goes with a frequency; give a damping with a stiffness",
            ),
            (None, Some(_)) if self.damping != 0.0 => Err(
                "has a damping, which goes with a stiffness; give a damping_ratio with a frequency",
            ),
            (Some(k), None) => Ok((false, k, self.damping)),
            (None, Some(f)) => Ok((true, f, self.damping_ratio)),
        }
    }
}

/// A rigid rod of a [`PhysicsModel`], between the bodies named `a` and `b`.
///
/// ```
/// use bevy_euler_physics::model::ModelRod;
///
/// let rod = ModelRod::new("hip", "knee");
/// assert_eq!(rod.length, None); // the distance in the model
/// ```
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ModelRod {
    /// One end's name.
    pub a: String,
    /// The other end's name.
    pub b: String,
    /// The length kept; by default the distance between the ends as placed
    /// in the model.
    #[serde(default)]
    pub length: Option<f32>,
}

impl ModelRod {
    /// A rod between `a` and `b`, as long as they are apart in the model.
    ///
    /// ```
    /// # use bevy_euler_physics::model::ModelRod;
    /// assert_eq!(ModelRod::new("a", "b").b, "b");
    /// ```
    pub fn new(a: impl Into<String>, b: impl Into<String>) -> Self {
        Self {
            a: a.into(),
            b: b.into(),
            length: None,
        }
    }
}

fn one() -> f32 {
    1.0
}

/// `(x, y)` or `(x, y, z)` as a `Vec3`.
fn point<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Vec3, D::Error> {
    struct PointVisitor;
    impl<'de> Visitor<'de> for PointVisitor {
        type Value = Vec3;
        fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
            f.write_str("a point (x, y) or (x, y, z)")
        }
        fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Vec3, A::Error> {
            let x = seq
                .next_element::<f32>()?
                .ok_or_else(|| de::Error::invalid_length(0, &self))?;
            let y = seq
                .next_element::<f32>()?
                .ok_or_else(|| de::Error::invalid_length(1, &self))?;
            let z = seq.next_element::<f32>()?.unwrap_or(0.0);
            if seq.next_element::<f32>()?.is_some() {
                return Err(de::Error::invalid_length(4, &self));
            }
            Ok(Vec3::new(x, y, z))
        }
    }
    deserializer.deserialize_tuple(3, PointVisitor)
}

/// Why a model file was refused: where, and what is wrong.
///
/// ```
/// use bevy_euler_physics::model::PhysicsModel;
///
/// let error = PhysicsModel::from_ron("(\n  bodies: [\n    (name: \"a\", mass: -1.0),\n  ],\n)")
///     .unwrap_err();
/// assert_eq!(error.line, 3);
/// assert!(error.to_string().starts_with("line 3"));
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PhysicsModelError {
    /// The line (from 1) the problem was found on; 0 if unknown (a file
    /// that is not UTF-8, say).
    pub line: usize,
    /// The column (from 1); 0 if unknown.
    pub column: usize,
    /// What is wrong.
    pub message: String,
}

impl fmt::Display for PhysicsModelError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.line == 0 {
            write!(f, "{}", self.message)
        } else {
            write!(
                f,
                "line {}, column {}: {}",
                self.line, self.column, self.message
            )
        }
    }
}

impl std::error::Error for PhysicsModelError {}

impl PhysicsModel {
    /// Parses and checks a model written in RON.
    ///
    /// # Errors
    ///
    /// A [`PhysicsModelError`] naming the line of the first problem: RON
    /// that does not parse, an unknown field, a duplicate or empty body
    /// name, a mass that is not positive and finite, a negative or
    /// non-finite radius, damping, stiffness or length, a join to a body
    /// that is not in the model, or a join from a body to itself.
    ///
    /// ```
    /// use bevy_euler_physics::model::PhysicsModel;
    ///
    /// let source = "(\n  bodies: [(name: \"a\")],\n  springs: [(a: \"a\", b: \"nope\", stiffness: 1.0)],\n)";
    /// let error = PhysicsModel::from_ron(source).unwrap_err();
    /// assert_eq!(error.line, 3);
    /// assert!(error.message.contains("\"nope\""));
    /// ```
    pub fn from_ron(source: &str) -> Result<Self, PhysicsModelError> {
        // `radius: 0.1` rather than `radius: Some(0.1)`.
        let options = ron::Options::default()
            .with_default_extension(ron::extensions::Extensions::IMPLICIT_SOME);
        let model: PhysicsModel = options.from_str(source).map_err(|e| PhysicsModelError {
            line: e.span.start.line,
            column: e.span.start.col,
            message: e.code.to_string(),
        })?;
        model.check(source)?;
        Ok(model)
    }

    /// The checks of [`from_ron`](Self::from_ron), with `source` to find the
    /// lines in.
    fn check(&self, source: &str) -> Result<(), PhysicsModelError> {
        let here = |needle: &str, nth: usize, message: String| {
            let (line, column) = locate(source, needle, nth);
            PhysicsModelError {
                line,
                column,
                message,
            }
        };
        let mut names = HashSet::new();
        for (i, body) in self.bodies.iter().enumerate() {
            let quoted = format!("{:?}", body.name);
            let at = |message: String| here("name:", i, message);
            if body.name.is_empty() {
                return Err(at(format!("body {} has an empty name", i + 1)));
            }
            if !names.insert(body.name.as_str()) {
                return Err(here(
                    &quoted,
                    1,
                    format!("two bodies are named {quoted}; names must be unique"),
                ));
            }
            let mass_ok = body.mass > 0.0 && body.mass.is_finite();
            if !body.fixed && !mass_ok {
                return Err(at(format!(
                    "body {quoted} has mass {}; a mass must be positive and finite (or make the body `fixed: true`)",
                    body.mass
                )));
            }
            if !(body.position.is_finite() && body.velocity.is_finite()) {
                return Err(at(format!(
                    "body {quoted} has a non-finite position or velocity"
                )));
            }
            let values = [
                ("radius", body.radius),
                ("damping", body.damping),
                ("restitution", body.restitution),
                ("friction", body.friction),
            ];
            for (what, value) in values {
                if let Some(value) = value
                    && !(value >= 0.0 && value.is_finite())
                {
                    return Err(at(format!(
                        "body {quoted} has {what} {value}; it must be zero or positive, and finite"
                    )));
                }
            }
        }
        let joins = self
            .springs
            .iter()
            .map(|s| ("spring", &s.a, &s.b, s.length, Some(s.tuning())))
            .chain(
                self.rods
                    .iter()
                    .map(|r| ("rod", &r.a, &r.b, r.length, None)),
            );
        let mut counts: HashMap<&str, usize> = HashMap::default();
        for (kind, a, b, length, spring) in joins {
            let nth = counts.entry(kind).or_default();
            let list = if kind == "spring" { "springs" } else { "rods" };
            let (list_line, _) = locate(source, &format!("{list}:"), 0);
            // The join's line: its `n`-th `a:` after the list's key.
            let start = line_start(source, list_line);
            let at = |message: String| {
                let (line, column) = locate(&source[start..], "a:", *nth);
                let line = if line == 0 {
                    list_line
                } else {
                    line + list_line - 1
                };
                PhysicsModelError {
                    line,
                    column,
                    message,
                }
            };
            for end in [a, b] {
                if !names.contains(end.as_str()) {
                    // The unknown name appears nowhere else in the file.
                    let quoted = format!("{end:?}");
                    let (line, column) = locate(source, &quoted, 0);
                    let error = PhysicsModelError {
                        line,
                        column,
                        message: format!("a {kind} names body {quoted}, which is not in the model"),
                    };
                    return Err(if line == 0 { at(error.message) } else { error });
                }
            }
            if a == b {
                return Err(at(format!("a {kind} joins body {a:?} to itself")));
            }
            if let Some(length) = length
                && !(length >= 0.0 && length.is_finite())
            {
                return Err(at(format!(
                    "the {kind} {a:?}–{b:?} has length {length}; it must be zero or positive, and finite"
                )));
            }
            match spring {
                Some(Err(wrong)) => return Err(at(format!("the spring {a:?}–{b:?} {wrong}"))),
                Some(Ok((by_frequency, value, damping)))
                    if !(value >= 0.0
                        && value.is_finite()
                        && damping >= 0.0
                        && damping.is_finite()) =>
                {
                    let (what, how) = if by_frequency {
                        ("frequency", "damping ratio")
                    } else {
                        ("stiffness", "damping")
                    };
                    return Err(at(format!(
                        "the spring {a:?}–{b:?} has {what} {value} and {how} {damping}; both must be zero or positive, and finite"
                    )));
                }
                _ => {}
            }
            *nth += 1;
        }
        self.check_limits(source, &names)
    }

    /// The limits' checks: known, distinct bodies and bounds a limit
    /// accepts.
    fn check_limits(&self, source: &str, names: &HashSet<&str>) -> Result<(), PhysicsModelError> {
        let e = Entity::PLACEHOLDER;
        let distance = self.distance_limits.iter().map(|l| {
            let bounds = DistanceLimit::new(e, e, l.min, l.max).check();
            ("distance_limits", vec![&l.a, &l.b], bounds)
        });
        let angle = self.angle_limits.iter().map(|l| {
            let bounds = l.limit(e, e, e).check();
            ("angle_limits", vec![&l.a, &l.pivot, &l.b], bounds)
        });
        let mut counts: HashMap<&str, usize> = HashMap::default();
        for (list, ends, bounds) in distance.chain(angle) {
            let nth = counts.entry(list).or_default();
            let (list_line, _) = locate(source, &format!("{list}:"), 0);
            let start = line_start(source, list_line);
            let (line, column) = locate(&source[start..], "a:", *nth);
            let at = |message: String| PhysicsModelError {
                line: if line == 0 {
                    list_line
                } else {
                    line + list_line - 1
                },
                column,
                message,
            };
            for end in &ends {
                if !names.contains(end.as_str()) {
                    return Err(at(format!(
                        "a limit names body {end:?}, which is not in the model"
                    )));
                }
            }
            for (i, end) in ends.iter().enumerate() {
                if ends[i + 1..].contains(end) {
                    return Err(at(format!("a limit names body {end:?} twice")));
                }
            }
            if let Err(issue) = bounds {
                return Err(at(format!("a limit of {list}: {issue}")));
            }
            *nth += 1;
        }
        Ok(())
    }

    /// The body named `name`.
    ///
    /// ```
    /// # use bevy::prelude::*;
    /// # use bevy_euler_physics::model::{ModelBody, PhysicsModel};
    /// let model = PhysicsModel { bodies: vec![ModelBody::new("a", Vec3::X)], ..Default::default() };
    /// assert_eq!(model.body("a").unwrap().position, Vec3::X);
    /// assert!(model.body("b").is_none());
    /// ```
    pub fn body(&self, name: &str) -> Option<&ModelBody> {
        self.bodies.iter().find(|b| b.name == name)
    }

    /// The rest length of `spring`: its own, or the distance between its
    /// ends in the model (0 if an end is missing).
    ///
    /// ```
    /// # use bevy::prelude::*;
    /// # use bevy_euler_physics::model::{ModelBody, ModelSpring, PhysicsModel};
    /// let model = PhysicsModel {
    ///     bodies: vec![ModelBody::new("a", Vec3::ZERO), ModelBody::new("b", Vec3::new(3.0, 4.0, 0.0))],
    ///     ..Default::default()
    /// };
    /// assert_eq!(model.spring_length(&ModelSpring::new("a", "b", 1.0)), 5.0);
    /// ```
    pub fn spring_length(&self, spring: &ModelSpring) -> f32 {
        spring
            .length
            .unwrap_or_else(|| self.distance(&spring.a, &spring.b))
    }

    /// The length of `rod`: its own, or the distance between its ends in the
    /// model (0 if an end is missing).
    ///
    /// ```
    /// # use bevy::prelude::*;
    /// # use bevy_euler_physics::model::{ModelBody, ModelRod, PhysicsModel};
    /// let model = PhysicsModel {
    ///     bodies: vec![ModelBody::new("a", Vec3::ZERO), ModelBody::new("b", Vec3::Y)],
    ///     ..Default::default()
    /// };
    /// assert_eq!(model.rod_length(&ModelRod::new("a", "b")), 1.0);
    /// ```
    pub fn rod_length(&self, rod: &ModelRod) -> f32 {
        rod.length.unwrap_or_else(|| self.distance(&rod.a, &rod.b))
    }

    fn distance(&self, a: &str, b: &str) -> f32 {
        match (self.body(a), self.body(b)) {
            (Some(a), Some(b)) => a.position.distance(b.position),
            _ => 0.0,
        }
    }

    /// Spawns the model with its origin at `offset`: one entity per body
    /// (with [`Body`], [`Name`], and [`Radius`] and [`Damping`] where
    /// given), one per spring and one per rod. Joins to a missing body are
    /// left out (a model from [`from_ron`](Self::from_ron) has none).
    ///
    /// ```
    /// use bevy::prelude::*;
    /// use bevy_euler_physics::model::{ModelBody, ModelSpring, PhysicsModel};
    ///
    /// let model = PhysicsModel {
    ///     bodies: vec![ModelBody::new("a", Vec3::ZERO), ModelBody::new("b", Vec3::X)],
    ///     springs: vec![ModelSpring::new("a", "b", 50.0)],
    ///     ..Default::default()
    /// };
    /// let mut world = World::new();
    /// let parts = model.spawn(&mut world.commands(), Vec3::Y);
    /// world.flush();
    /// let b = parts.body("b").unwrap();
    /// assert_eq!(world.get::<bevy_euler_physics::Body>(b).unwrap().position, Vec3::new(1.0, 1.0, 0.0));
    /// assert_eq!(parts.joins().len(), 1);
    /// ```
    pub fn spawn(&self, commands: &mut Commands, offset: Vec3) -> ModelParts {
        let bodies: Vec<(String, Entity)> = self
            .bodies
            .iter()
            .map(|spec| {
                let mut body = commands.spawn((spec.body(offset), Name::new(spec.name.clone())));
                if let Some(radius) = spec.radius {
                    body.insert(Radius(radius));
                }
                if let Some(damping) = spec.damping {
                    body.insert(Damping(damping));
                }
                if spec.restitution.is_some() || spec.friction.is_some() {
                    let default = ContactMaterial::default();
                    body.insert(ContactMaterial::new(
                        spec.restitution.unwrap_or(default.restitution),
                        spec.friction.unwrap_or(default.friction),
                    ));
                }
                (spec.name.clone(), body.id())
            })
            .collect();
        let find = |name: &str| bodies.iter().find(|(n, _)| n == name).map(|(_, e)| *e);
        let mut joins = Vec::with_capacity(self.springs.len() + self.rods.len());
        for spring in &self.springs {
            if let (Some(a), Some(b)) = (find(&spring.a), find(&spring.b)) {
                let length = self.spring_length(spring);
                let name = Name::new(format!("{}–{}", spring.a, spring.b));
                // Checked when the model loaded.
                let mut join = match spring.tuning() {
                    Ok((true, hertz, ratio)) => {
                        commands.spawn(Spring::from_frequency(a, b, length, hertz, ratio))
                    }
                    Ok((false, stiffness, damping)) => {
                        commands.spawn(Spring::new(a, b, length, stiffness).with_damping(damping))
                    }
                    Err(_) => continue,
                };
                joins.push(join.insert(name).id());
            }
        }
        for rod in &self.rods {
            if let (Some(a), Some(b)) = (find(&rod.a), find(&rod.b)) {
                joins.push(
                    commands
                        .spawn((
                            DistanceConstraint::new(a, b, self.rod_length(rod)),
                            Name::new(format!("{}–{}", rod.a, rod.b)),
                        ))
                        .id(),
                );
            }
        }
        for limit in &self.distance_limits {
            if let (Some(a), Some(b)) = (find(&limit.a), find(&limit.b)) {
                let name = Name::new(format!("{}–{} limit", limit.a, limit.b));
                let spawned =
                    commands.spawn((DistanceLimit::new(a, b, limit.min, limit.max), name));
                joins.push(spawned.id());
            }
        }
        for limit in &self.angle_limits {
            if let (Some(a), Some(pivot), Some(b)) =
                (find(&limit.a), find(&limit.pivot), find(&limit.b))
            {
                let name = Name::new(format!("{} angle", limit.pivot));
                joins.push(commands.spawn((limit.limit(a, pivot, b), name)).id());
            }
        }
        ModelParts { bodies, joins }
    }
}

/// The line and column (from 1) of the `nth` (from 0) occurrence of
/// `needle` in `source`; (0, 0) if there is none.
fn locate(source: &str, needle: &str, nth: usize) -> (usize, usize) {
    match source.match_indices(needle).nth(nth) {
        Some((at, _)) => {
            let before = &source[..at];
            let line = before.matches('\n').count() + 1;
            let column = at - before.rfind('\n').map_or(0, |n| n + 1) + 1;
            (line, column)
        }
        None => (0, 0),
    }
}

/// The byte offset where `line` (from 1) starts; 0 for line 0 or 1.
fn line_start(source: &str, line: usize) -> usize {
    if line <= 1 {
        return 0;
    }
    source
        .match_indices('\n')
        .nth(line - 2)
        .map_or(source.len(), |(at, _)| at + 1)
}

/// Loads `.model.ron` files (or any file loaded as a [`PhysicsModel`]).
/// Added by [`PhysicsModelPlugin`].
///
/// ```
/// use bevy::asset::AssetLoader;
/// use bevy_euler_physics::model::PhysicsModelLoader;
/// assert_eq!(PhysicsModelLoader.extensions(), ["model.ron"]);
/// ```
#[derive(Debug, Clone, Copy, Default, TypePath)]
pub struct PhysicsModelLoader;

impl AssetLoader for PhysicsModelLoader {
    type Asset = PhysicsModel;
    type Settings = ();
    type Error = PhysicsModelError;

    async fn load(
        &self,
        reader: &mut dyn Reader,
        _settings: &(),
        _load_context: &mut LoadContext<'_>,
    ) -> Result<PhysicsModel, PhysicsModelError> {
        let mut bytes = Vec::new();
        reader
            .read_to_end(&mut bytes)
            .await
            .map_err(|e| PhysicsModelError {
                line: 0,
                column: 0,
                message: format!("could not read the file: {e}"),
            })?;
        let source = std::str::from_utf8(&bytes).map_err(|e| PhysicsModelError {
            line: 0,
            column: 0,
            message: format!("the file is not UTF-8: {e}"),
        })?;
        PhysicsModel::from_ron(source)
    }

    fn extensions(&self) -> &[&str] {
        &["model.ron"]
    }
}

/// Places a [`PhysicsModel`] in the world, with its origin at `offset`.
///
/// Once the model is loaded, [`PhysicsModelPlugin`] spawns its bodies and
/// joins, records them in [`ModelParts`] on this entity and writes a
/// [`ModelSpawned`] message. When the asset changes (a hot reload, or
/// `Assets::get_mut`), the parts are despawned and spawned anew from the
/// file's positions. Despawning this entity (or removing its
/// [`ModelParts`]) despawns the parts.
///
/// ```
/// use bevy::prelude::*;
/// use bevy_euler_physics::prelude::*;
///
/// fn place_two(mut commands: Commands, assets: Res<AssetServer>) {
///     let rope: Handle<PhysicsModel> = assets.load("models/rope.model.ron");
///     commands.spawn(PhysicsModelInstance::new(rope.clone(), Vec3::new(-2.0, 0.0, 0.0)));
///     commands.spawn(PhysicsModelInstance::new(rope, Vec3::new(2.0, 0.0, 0.0)));
/// }
/// # App::new().add_systems(Startup, place_two);
/// ```
#[derive(Component, Debug, Clone)]
pub struct PhysicsModelInstance {
    /// The model.
    pub model: Handle<PhysicsModel>,
    /// Where the model's origin goes.
    pub offset: Vec3,
}

impl PhysicsModelInstance {
    /// `model` placed at `offset`.
    ///
    /// ```
    /// # use bevy::prelude::*;
    /// # use bevy_euler_physics::prelude::*;
    /// let instance = PhysicsModelInstance::new(Handle::default(), Vec3::X);
    /// assert_eq!(instance.offset, Vec3::X);
    /// ```
    pub fn new(model: Handle<PhysicsModel>, offset: Vec3) -> Self {
        Self { model, offset }
    }
}

/// The entities spawned from a model: its bodies by name, and its joins.
/// On a [`PhysicsModelInstance`], removing or replacing it despawns them.
///
/// ```
/// use bevy::prelude::*;
/// use bevy_euler_physics::prelude::*;
///
/// // Find the head of every ragdoll.
/// fn heads(instances: Query<&ModelParts>) {
///     for parts in &instances {
///         if let Some(head) = parts.body("head") {
///             info!("head: {head}");
///         }
///     }
/// }
/// # App::new().add_systems(Update, heads);
/// ```
#[derive(Component, Debug, Clone, Default, PartialEq)]
#[component(on_discard = despawn_parts)]
pub struct ModelParts {
    bodies: Vec<(String, Entity)>,
    joins: Vec<Entity>,
}

impl ModelParts {
    /// The body spawned for the model's body `name`.
    ///
    /// ```
    /// # use bevy_euler_physics::prelude::*;
    /// assert_eq!(ModelParts::default().body("head"), None);
    /// ```
    pub fn body(&self, name: &str) -> Option<Entity> {
        self.bodies.iter().find(|(n, _)| n == name).map(|(_, e)| *e)
    }

    /// Every body, with its name, in the model's order.
    ///
    /// ```
    /// # use bevy_euler_physics::prelude::*;
    /// assert_eq!(ModelParts::default().bodies().count(), 0);
    /// ```
    pub fn bodies(&self) -> impl Iterator<Item = (&str, Entity)> {
        self.bodies.iter().map(|(n, e)| (n.as_str(), *e))
    }

    /// The springs, then the rods, then the distance and angle limits, in
    /// the model's order.
    ///
    /// ```
    /// # use bevy_euler_physics::prelude::*;
    /// assert!(ModelParts::default().joins().is_empty());
    /// ```
    pub fn joins(&self) -> &[Entity] {
        &self.joins
    }
}

/// Despawns the parts when [`ModelParts`] is removed or replaced.
fn despawn_parts(mut world: DeferredWorld, ctx: HookContext) {
    let Some(parts) = world.get::<ModelParts>(ctx.entity) else {
        return;
    };
    let entities: Vec<Entity> = parts
        .joins
        .iter()
        .copied()
        .chain(parts.bodies.iter().map(|(_, e)| *e))
        .collect();
    let mut commands = world.commands();
    for entity in entities {
        if let Ok(mut e) = commands.get_entity(entity) {
            e.try_despawn();
        }
    }
}

/// Written when a [`PhysicsModelInstance`] has (re)spawned its parts; they
/// are in its [`ModelParts`] from the next system on.
///
/// ```
/// use bevy::prelude::*;
/// use bevy_euler_physics::prelude::*;
///
/// fn on_spawned(mut spawned: MessageReader<ModelSpawned>, parts: Query<&ModelParts>) {
///     for message in spawned.read() {
///         if let Ok(parts) = parts.get(message.instance) {
///             info!("{} bodies", parts.bodies().count());
///         }
///     }
/// }
/// # App::new().add_systems(Update, on_spawned);
/// ```
#[derive(Message, Debug, Clone, Copy, PartialEq, Eq)]
pub struct ModelSpawned {
    /// The [`PhysicsModelInstance`] entity.
    pub instance: Entity,
}

/// Spawns instances whose model is loaded and has no parts yet, and
/// respawns those whose model changed.
fn spawn_instances(
    mut commands: Commands,
    mut events: MessageReader<AssetEvent<PhysicsModel>>,
    models: Res<Assets<PhysicsModel>>,
    instances: Query<(Entity, &PhysicsModelInstance, Has<ModelParts>)>,
    mut spawned: MessageWriter<ModelSpawned>,
) {
    let changed: HashSet<AssetId<PhysicsModel>> = events
        .read()
        .filter_map(|event| match event {
            AssetEvent::Modified { id } => Some(*id),
            _ => None,
        })
        .collect();
    for (entity, instance, has_parts) in &instances {
        if has_parts && !changed.contains(&instance.model.id()) {
            continue;
        }
        let Some(model) = models.get(&instance.model) else {
            continue;
        };
        let parts = model.spawn(&mut commands, instance.offset);
        // Replacing the parts despawns the old ones.
        commands.entity(entity).insert(parts);
        spawned.write(ModelSpawned { instance: entity });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn points_take_two_or_three_numbers() {
        let model = PhysicsModel::from_ron(
            "(bodies: [(name: \"a\", position: (1.0, 2.0)), (name: \"b\", position: (1.0, 2.0, 3.0), velocity: (0.0, -1.0))])",
        )
        .unwrap();
        assert_eq!(model.bodies[0].position, Vec3::new(1.0, 2.0, 0.0));
        assert_eq!(model.bodies[1].position, Vec3::new(1.0, 2.0, 3.0));
        assert_eq!(model.bodies[1].velocity, Vec3::new(0.0, -1.0, 0.0));
        let error =
            PhysicsModel::from_ron("(bodies: [(name: \"a\", position: (1.0, 2.0, 3.0, 4.0))])")
                .unwrap_err();
        assert!(error.message.contains("(x, y)"), "{error}");
    }

    #[test]
    fn defaults() {
        let model = PhysicsModel::from_ron("(bodies: [(name: \"a\")])").unwrap();
        assert_eq!(model.bodies[0], ModelBody::new("a", Vec3::ZERO));
        assert!(model.springs.is_empty() && model.rods.is_empty());
    }

    #[test]
    fn syntax_errors_name_the_line() {
        // A missing comma between two bodies, on line 4.
        let source =
            "(\n    bodies: [\n        (name: \"a\", mass: 1.0)\n        (name: \"b\"),\n    ],\n)";
        let error = PhysicsModel::from_ron(source).unwrap_err();
        assert_eq!(error.line, 4, "{error}");
        // An unknown field, on line 3.
        let source = "(\n  bodies: [\n    (name: \"a\", weight: 1.0),\n  ],\n)";
        let error = PhysicsModel::from_ron(source).unwrap_err();
        assert_eq!(error.line, 3, "{error}");
        assert!(error.message.contains("weight"), "{error}");
    }

    #[test]
    fn semantic_errors_name_the_line() {
        let source =
            "(\n  bodies: [\n    (name: \"a\"),\n    (name: \"b\"),\n    (name: \"a\"),\n  ],\n)";
        let error = PhysicsModel::from_ron(source).unwrap_err();
        assert_eq!(error.line, 5, "{error}");
        assert!(error.message.contains("unique"), "{error}");

        let source =
            "(\n  bodies: [\n    (name: \"a\"),\n    (name: \"b\", radius: -0.1),\n  ],\n)";
        let error = PhysicsModel::from_ron(source).unwrap_err();
        assert_eq!(error.line, 4, "{error}");
        assert!(error.message.contains("radius"), "{error}");

        let source = "(\n  bodies: [(name: \"a\"), (name: \"b\")],\n  springs: [\n    (a: \"a\", b: \"b\", stiffness: 1.0),\n    (a: \"b\", b: \"b\", stiffness: 1.0),\n  ],\n)";
        let error = PhysicsModel::from_ron(source).unwrap_err();
        assert_eq!(error.line, 5, "{error}");
        assert!(error.message.contains("itself"), "{error}");

        let source = "(\n  bodies: [(name: \"a\"), (name: \"b\")],\n  rods: [\n    (a: \"a\", b: \"b\", length: -1.0),\n  ],\n)";
        let error = PhysicsModel::from_ron(source).unwrap_err();
        assert_eq!(error.line, 4, "{error}");
        assert!(error.message.contains("length"), "{error}");
    }

    /// A spring gives a stiffness or a frequency, each with its own
    /// damping: anything else is refused on the spring's line.
    #[test]
    fn a_spring_is_tuned_by_stiffness_or_by_frequency() {
        let spring = |fields: &str| {
            format!(
                "(\n  bodies: [(name: \"a\"), (name: \"b\")],\n  springs: [\n    (a: \"a\", b: \"b\"{fields}),\n  ],\n)"
            )
        };
        let model =
            PhysicsModel::from_ron(&spring(", frequency: 2.0, damping_ratio: 0.5")).unwrap();
        assert_eq!(
            model.springs[0],
            ModelSpring {
                length: None,
                ..ModelSpring::from_frequency("a", "b", 2.0, 0.5)
            }
        );
        for (fields, expected) in [
            (", stiffness: 1.0, frequency: 2.0", "both"),
            ("", "neither"),
            (", frequency: 2.0, damping: 1.0", "damping_ratio"),
            (", stiffness: 1.0, damping_ratio: 0.1", "damping_ratio"),
            (", frequency: -2.0", "frequency -2"),
        ] {
            let error = PhysicsModel::from_ron(&spring(fields)).unwrap_err();
            assert_eq!(error.line, 4, "{fields}: {error}");
            assert!(error.message.contains(expected), "{fields}: {error}");
        }
    }

    #[test]
    fn default_lengths_are_the_distances_in_the_file() {
        let model = PhysicsModel::from_ron(
            "(bodies: [(name: \"a\"), (name: \"b\", position: (3.0, 4.0))], springs: [(a: \"a\", b: \"b\", stiffness: 1.0), (a: \"a\", b: \"b\", stiffness: 1.0, length: 2.0)], rods: [(a: \"b\", b: \"a\")])",
        )
        .unwrap();
        assert_eq!(model.spring_length(&model.springs[0]), 5.0);
        assert_eq!(model.spring_length(&model.springs[1]), 2.0);
        assert_eq!(model.rod_length(&model.rods[0]), 5.0);
    }
}

//! [`ContactForces`]: what each touching pair of round bodies pushed with
//! over the last fixed step, which the next step starts from.

use std::sync::Arc;

use bevy::ecs::entity::{EntityMapper, MapEntities};
use bevy::math::Vec3A;
use bevy::prelude::*;

use crate::kernels::hash::WordHash;
use crate::kernels::kept::HeldPair;

/// The forces between touching round bodies ([`Radius`](crate::Radius))
/// over the last fixed step: each pair's normal force and its friction,
/// the mean over the step's passes (the impulses they gave over the
/// step's length), for the pairs still touching at its end. A resting
/// column's contacts each hold the weight above them.
///
/// Each step's pair contacts start from a share
/// ([`ConstraintSettings::warm_start`](crate::ConstraintSettings::warm_start))
/// of the forces their pairs held over the step before (the *warm start*,
/// as in Box2D): a resting pile begins each step already holding most of
/// its weight, instead of finding it again in the step's rounds. So this
/// resource is part of the physics
/// state. [`PhysicsSnapshot`](crate::PhysicsSnapshot) saves and restores
/// it, and [`EulerPhysicsRollbackPlugin`](crate::rollback) rolls it back;
/// a rollback of your own must save and load it with the bodies, or the
/// step after a load starts cold and its bits differ.
///
/// Pairs of a sleeping island are not listed: they wake cold.
///
/// ```
/// use bevy::prelude::*;
/// use bevy_euler_physics::prelude::*;
///
/// let mut app = App::new();
/// app.add_plugins((MinimalPlugins, EulerPhysicsPlugin));
/// app.world_mut().spawn(GroundPlane::new(Vec3::Y, 0.0));
/// // Two balls of 1 kg, one on the other, resting on the ground (kept
/// // awake: a sleeping island's pairs are not listed).
/// let ball = |y: f32| {
///     let body = Body::new(1.0).with_position(Vec3::new(0.0, y, 0.0));
///     (body, Radius(0.5), SleepingDisabled)
/// };
/// let lower = app.world_mut().spawn(ball(0.5)).id();
/// let upper = app.world_mut().spawn(ball(1.5)).id();
/// for _ in 0..120 {
///     app.world_mut().run_schedule(FixedUpdate);
/// }
/// // The lower ball holds the upper one's weight, about m·g.
/// let forces = app.world().resource::<ContactForces>();
/// let pair = forces.between(lower, upper).expect("they touch");
/// assert!((pair.normal - 9.81).abs() < 0.5, "{}", pair.normal);
/// ```
#[derive(Resource, Debug, Clone, Default, PartialEq)]
pub struct ContactForces {
    /// The pairs, by slot, as the step left them.
    pub(crate) pairs: Vec<HeldPair>,
    /// Each slot's entity in the layout the pairs were written in (the
    /// solver's own table of that layout, which tells the next step
    /// whether the slots are still its own; see
    /// [`recall_forces`](crate::solver::held::recall_forces)).
    pub(crate) slots: Arc<Vec<Entity>>,
}

/// The forces between two touching round bodies; see [`ContactForces`].
///
/// ```
/// use bevy::prelude::*;
/// use bevy_euler_physics::prelude::*;
///
/// let a = Entity::from_raw_u32(1).unwrap();
/// let b = Entity::from_raw_u32(2).unwrap();
/// let pair = PairForce { a, b, normal: 3.0, friction: Vec3::X };
/// // The same pair with `a` as the body acted on: the friction on `a`.
/// let on_a = pair.seen_from(a);
/// assert_eq!((on_a.b, on_a.friction), (a, -Vec3::X));
/// ```
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PairForce {
    /// One body of the pair.
    pub a: Entity,
    /// The other body, which `normal` and `friction` act on.
    pub b: Entity,
    /// The force pushing `b` away from `a` along the line of their
    /// centres, in newtons (never negative).
    pub normal: f32,
    /// The friction force on `b`, across that line, in newtons (`a` feels
    /// its opposite).
    pub friction: Vec3,
}

impl PairForce {
    /// The same forces with `of` as `b` (the bodies swapped when `of` is
    /// `a`, the friction then turned round).
    ///
    /// ```
    /// # use bevy::prelude::*;
    /// # use bevy_euler_physics::prelude::*;
    /// let (a, b) = (Entity::from_raw_u32(1).unwrap(), Entity::from_raw_u32(2).unwrap());
    /// let pair = PairForce { a, b, normal: 1.0, friction: Vec3::Y };
    /// assert_eq!(pair.seen_from(a).b, a);
    /// assert_eq!(pair.seen_from(b), pair);
    /// ```
    pub fn seen_from(self, of: Entity) -> Self {
        if of == self.a {
            Self {
                a: self.b,
                b: self.a,
                normal: self.normal,
                friction: -self.friction,
            }
        } else {
            self
        }
    }
}

impl ContactForces {
    /// Every pair that pushed over the last step and still touched at its
    /// end, in the order the step solved them.
    ///
    /// ```
    /// # use bevy_euler_physics::prelude::*;
    /// assert_eq!(ContactForces::default().iter().count(), 0);
    /// ```
    pub fn iter(&self) -> impl Iterator<Item = PairForce> + '_ {
        self.pairs.iter().filter_map(|pair| {
            Some(PairForce {
                a: *self.slots.get(pair.a as usize)?,
                b: *self.slots.get(pair.b as usize)?,
                normal: pair.normal,
                friction: Vec3::from(pair.friction),
            })
        })
    }

    /// How many pairs pushed.
    ///
    /// ```
    /// # use bevy_euler_physics::prelude::*;
    /// assert_eq!(ContactForces::default().len(), 0);
    /// ```
    pub fn len(&self) -> usize {
        self.pairs.len()
    }

    /// Whether no pair pushed.
    ///
    /// ```
    /// # use bevy_euler_physics::prelude::*;
    /// assert!(ContactForces::default().is_empty());
    /// ```
    pub fn is_empty(&self) -> bool {
        self.pairs.is_empty()
    }

    /// The forces between `a` and `b`, seen from `b` (the friction on
    /// `b`), if they pushed; a walk over every pair.
    ///
    /// ```
    /// # use bevy::prelude::*;
    /// # use bevy_euler_physics::prelude::*;
    /// let (a, b) = (Entity::from_raw_u32(1).unwrap(), Entity::from_raw_u32(2).unwrap());
    /// assert_eq!(ContactForces::default().between(a, b), None);
    /// ```
    pub fn between(&self, a: Entity, b: Entity) -> Option<PairForce> {
        self.iter()
            .find(|pair| (pair.a, pair.b) == (a, b) || (pair.a, pair.b) == (b, a))
            .map(|pair| pair.seen_from(b))
    }

    /// A checksum of the pairs and their forces' bits that does not depend
    /// on their order or on which body of a pair comes first (see
    /// [`physics_checksum`](crate::physics_checksum)).
    pub(crate) fn checksum(&self) -> u64 {
        self.iter()
            .map(|pair| {
                let pair = pair.seen_from(pair.a.max(pair.b));
                let mut hash = WordHash::default();
                hash.write(pair.a.to_bits());
                hash.write(pair.b.to_bits());
                for x in [
                    pair.normal,
                    pair.friction.x,
                    pair.friction.y,
                    pair.friction.z,
                ] {
                    hash.write(u64::from(x.to_bits()));
                }
                hash.finish()
            })
            .fold(0, u64::wrapping_add)
    }

    /// The held pairs in slots, as the layout `slots` numbers them (pairs
    /// of bodies without a slot there are left out), into `into`.
    pub(crate) fn in_slots(
        &self,
        slot_of: impl Fn(Entity) -> Option<u32>,
        into: &mut Vec<HeldPair>,
    ) {
        into.clear();
        into.extend(self.iter().filter_map(|pair| {
            Some(HeldPair {
                a: slot_of(pair.a)?,
                b: slot_of(pair.b)?,
                normal: pair.normal,
                friction: Vec3A::from(pair.friction),
            })
        }));
    }
}

impl MapEntities for ContactForces {
    fn map_entities<E: EntityMapper>(&mut self, mapper: &mut E) {
        for entity in Arc::make_mut(&mut self.slots) {
            *entity = mapper.get_mapped(*entity);
        }
    }
}

//! Springs tuned by frequency: their stiffness and damping follow the
//! masses of their ends.

use bevy::prelude::*;

use crate::data::body::Body;
use crate::data::joins::{Spring, SpringFrequency};
use crate::data::requests::SolverRequests;

/// Start of the fixed step, before the rebuild: sets each frequency-tuned
/// spring's stiffness and damping from the masses of its ends, when the
/// index is about to be rebuilt (a mass changed, a body or join came or
/// went) or a [`SpringFrequency`] changed. A spring is written only when a
/// value changes (compared bit for bit, so that a NaN from a bad frequency
/// is written once and reported, not written every step).
pub(crate) fn resolve_frequencies(
    mut commands: Commands,
    requests: Res<SolverRequests>,
    changed: Query<(), Changed<SpringFrequency>>,
    springs: Query<(Entity, &Spring, &SpringFrequency)>,
    bodies: Query<&Body>,
) {
    if !requests.dirty && changed.is_empty() {
        return;
    }
    // A missing end, or one whose mass is not valid, counts as fixed (its
    // own check reports it).
    let inv_mass = |entity: Entity| {
        bodies
            .get(entity)
            .map_or(0.0, |body| body.inv_mass.max(0.0))
    };
    for (entity, spring, frequency) in &springs {
        let (stiffness, damping) = frequency.resolve(inv_mass(spring.a) + inv_mass(spring.b));
        if stiffness.to_bits() != spring.stiffness.to_bits()
            || damping.to_bits() != spring.damping.to_bits()
        {
            commands.entity(entity).insert(Spring {
                stiffness,
                damping,
                ..*spring
            });
        }
    }
}

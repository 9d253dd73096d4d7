//! Springs, bodies and velocities drawn with gizmos, where the bodies are
//! drawn (between their last two fixed positions).

use bevy::prelude::*;

use super::drag::{DragPart, Pointer, shown_radius};
use super::{DebugUiSettings, Selection};
use crate::constraints::Radius;
use crate::interpolation::{Drawing, DrawnPositions};
use crate::islands::Sleeping;
use crate::spring::Spring;

const AWAKE: Color = Color::srgb(0.35, 0.85, 0.45);
const ASLEEP: Color = Color::srgb(0.35, 0.5, 0.95);
const FIXED: Color = Color::srgb(0.55, 0.55, 0.55);
const PICKED: Color = Color::srgb(1.0, 0.85, 0.2);
const VELOCITY: Color = Color::srgb(1.0, 0.6, 0.2);
const DRAG: Color = Color::srgb(1.0, 0.85, 0.2);

/// A spring's strain `(|d| − rest) / rest`; for a spring of zero rest
/// length, infinite when stretched at all.
pub(crate) fn strain(length: f32, rest: f32) -> f32 {
    if rest > 1e-6 {
        (length - rest) / rest
    } else if length > 1e-6 {
        f32::INFINITY
    } else {
        0.0
    }
}

/// White at rest, towards red when stretched and towards blue when
/// compressed, saturating at `full` strain.
pub(crate) fn strain_color(strain: f32, full: f32) -> Color {
    let t = if strain.is_nan() || full.is_nan() || full <= 0.0 {
        0.0
    } else {
        (strain / full).clamp(-1.0, 1.0)
    };
    if t >= 0.0 {
        Color::srgb(1.0, 1.0 - 0.8 * t, 1.0 - 0.8 * t)
    } else {
        let t = -t;
        Color::srgb(1.0 - 0.8 * t, 1.0 - 0.55 * t, 1.0)
    }
}

/// What the gizmos read of a body: where it is drawn comes from its
/// [`Drawing`] through [`DrawnPositions::of`], not a lookup per body.
type Drawn = (
    Entity,
    Drawing,
    Option<&'static Radius>,
    Has<Sleeping>,
    Has<DragPart>,
);

/// Which bodies [`draw_gizmos`] draws something for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum BodiesDrawn {
    /// Every body: a circle or a velocity arrow each.
    All,
    /// Only the selected body's ring.
    Selected(Entity),
    /// None.
    None,
}

/// Which bodies to draw: all of them only when each gets a circle or an
/// arrow, else the selected one alone, so that a scene of 100 000 bodies
/// with both off is not walked every frame for one ring (looking each up
/// cost 2.5–3.0 ms a frame in `spring_rope`'s stress scene).
pub(crate) fn bodies_drawn(settings: &DebugUiSettings, selected: Option<Entity>) -> BodiesDrawn {
    if settings.draw_bodies || settings.draw_velocities {
        BodiesDrawn::All
    } else {
        selected.map_or(BodiesDrawn::None, BodiesDrawn::Selected)
    }
}

#[allow(clippy::too_many_arguments)]
pub(crate) fn draw_gizmos(
    settings: Res<DebugUiSettings>,
    positions: DrawnPositions,
    pointer: Res<Pointer>,
    selection: Res<Selection>,
    bodies: Query<Drawn>,
    springs: Query<(&Spring, Has<DragPart>)>,
    mut gizmos: Gizmos,
) {
    let px = pointer.world_per_px;
    if settings.draw_springs {
        for (spring, drag) in &springs {
            let (Some(a), Some(b)) = (positions.get(spring.a), positions.get(spring.b)) else {
                continue;
            };
            if !(a.is_finite() && b.is_finite()) {
                continue;
            }
            let color = if drag {
                DRAG
            } else {
                strain_color(
                    strain(a.distance(b), spring.rest_length),
                    settings.full_strain,
                )
            };
            gizmos.line(a, b, color);
        }
    }
    let (all, selected) = match bodies_drawn(&settings, selection.0) {
        BodiesDrawn::All => (Some(bodies.iter()), None),
        BodiesDrawn::Selected(entity) => (None, bodies.get(entity).ok()),
        BodiesDrawn::None => (None, None),
    };
    let alpha = positions.alpha();
    for (entity, drawing, radius, sleeping, drag) in all.into_iter().flatten().chain(selected) {
        if drag {
            continue;
        }
        let body = *drawing.0;
        let position = positions.of(drawing, alpha);
        if !position.is_finite() {
            continue;
        }
        let r = shown_radius(radius, &settings, px);
        let at = Isometry3d::from_translation(position);
        if settings.draw_bodies {
            let color = if body.is_fixed() {
                FIXED
            } else if sleeping {
                ASLEEP
            } else {
                AWAKE
            };
            gizmos.circle(at, r, color);
        }
        if selection.0 == Some(entity) {
            gizmos.circle(at, r + 4.0 * px, PICKED);
        }
        if settings.draw_velocities
            && !sleeping
            && !body.is_fixed()
            && body.velocity.is_finite()
            && body.velocity.length() * settings.velocity_arrow_seconds > px
        {
            let end = position + body.velocity * settings.velocity_arrow_seconds;
            gizmos
                .arrow(position, end, VELOCITY)
                .with_tip_length(6.0 * px);
        }
    }
}

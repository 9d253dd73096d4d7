//! The cursor in the world: picking a body, and dragging it on a spring.

use core::f32::consts::TAU;

use bevy::prelude::*;
use bevy::window::PrimaryWindow;
use bevy_egui::input::EguiWantsInput;

use super::{DebugUiSettings, Selection};
use crate::body::Body;
use crate::constraints::Radius;
use crate::interpolation::TransformSyncDisabled;
use crate::islands::Island;
use crate::spring::Spring;

/// The body within reach of `ray` that is nearest to it, if any.
///
/// `bodies` yields each candidate's entity, centre and radius. A body is
/// within reach when its centre is in front of the ray's origin and at most
/// `max(radius, pick_radius)` from the ray's line; of those, the one whose
/// centre is nearest to the line wins (the first one on a tie). For a 2D
/// camera (a ray along −z) this is the distance in the xy plane.
///
/// # Example
///
/// ```
/// use bevy::prelude::*;
/// use bevy_euler_physics::prelude::*;
///
/// let (a, b) = (Entity::from_raw_u32(1).unwrap(), Entity::from_raw_u32(2).unwrap());
/// let bodies = [(a, Vec3::new(0.0, 0.0, 0.0), 0.1), (b, Vec3::new(1.0, 0.0, 0.0), 0.1)];
/// // Looking down −z at x = 0.9, picking within 0.2 m: `b`.
/// let ray = Ray3d::new(Vec3::new(0.9, 0.0, 10.0), Dir3::NEG_Z);
/// assert_eq!(pick_body(ray, 0.2, bodies), Some(b));
/// // At x = 0.5 neither is within reach.
/// let ray = Ray3d::new(Vec3::new(0.5, 0.0, 10.0), Dir3::NEG_Z);
/// assert_eq!(pick_body(ray, 0.2, bodies), None);
/// ```
pub fn pick_body(
    ray: Ray3d,
    pick_radius: f32,
    bodies: impl IntoIterator<Item = (Entity, Vec3, f32)>,
) -> Option<Entity> {
    let mut best: Option<(f32, Entity)> = None;
    for (entity, centre, radius) in bodies {
        let offset = centre - ray.origin;
        let along = offset.dot(*ray.direction);
        if along.is_nan() || along < 0.0 {
            continue;
        }
        let distance = (offset - along * *ray.direction).length();
        let reach = if radius.is_finite() {
            radius.max(pick_radius)
        } else {
            pick_radius
        };
        if distance <= reach && best.is_none_or(|(d, _)| distance < d) {
            best = Some((distance, entity));
        }
    }
    best.map(|(_, entity)| entity)
}

/// Where `ray` meets the plane `z = z`; `None` when it runs along it.
pub(crate) fn ray_at_z(ray: Ray3d, z: f32) -> Option<Vec3> {
    let dz = ray.direction.z;
    if dz.abs() < 1e-6 {
        return None;
    }
    let point = ray.get_point((z - ray.origin.z) / dz);
    point.is_finite().then_some(point)
}

/// The stiffness `k` and damping `c` of the drag spring for a body of
/// `mass` stepped with pass step `h`: natural frequency `frequency` (Hz),
/// damping ratio 0.7, with the frequency lowered where needed so that the
/// spring alone uses at most 60 % of the stability limit of semi-implicit
/// Euler, `(ω·h)² + 2·γ·h < 4` with `γ = c/m` (the anchor is fixed, so the
/// reduced mass is the body's).
///
/// With `x = ω·h` and `γ·h = 2·ζ·x`, a load `L` is `√(x² + 4·ζ·x)/2`, so
/// the largest `x` for `L` is `−2ζ + √(4ζ² + 4L²)` (0.444 for ζ = 0.7 and
/// L = 0.6: 4 Hz fits at fixed rates down to about 57 Hz).
pub(crate) fn drag_spring_params(mass: f32, h: f32, frequency: f32) -> (f32, f32) {
    const ZETA: f32 = 0.7;
    const LOAD: f32 = 0.6;
    let x_max = -2.0 * ZETA + (4.0 * ZETA * ZETA + 4.0 * LOAD * LOAD).sqrt();
    let mut omega = TAU * frequency.max(0.0);
    if h > 0.0 {
        omega = omega.min(x_max / h);
    }
    (mass * omega * omega, 2.0 * ZETA * mass * omega)
}

/// The mouse, as the plugin's picking and dragging see it. Written each
/// frame from the primary window, the first active camera and the mouse
/// buttons; headless tests write it themselves.
#[derive(Resource, Debug, Clone, Copy, PartialEq)]
pub(crate) struct Pointer {
    /// The cursor as a ray in the world; `None` off the window.
    pub(crate) ray: Option<Ray3d>,
    /// Metres per screen pixel at the plane z = 0.
    pub(crate) world_per_px: f32,
    pub(crate) pressed: bool,
    pub(crate) just_pressed: bool,
    /// Whether egui has the pointer (over a window, or dragging a widget).
    pub(crate) over_ui: bool,
}

impl Default for Pointer {
    fn default() -> Self {
        Self {
            ray: None,
            world_per_px: 0.01,
            pressed: false,
            just_pressed: false,
            over_ui: false,
        }
    }
}

/// The mouse drag's own entities: its fixed anchor and its spring. Left out
/// of the readouts, the energy, picking and the body list.
#[derive(Component, Debug, Clone, Copy, Default)]
pub(crate) struct DragPart;

/// The drag in progress.
#[derive(Resource, Debug, Default, Clone, Copy, PartialEq)]
pub(crate) struct DragState {
    pub(crate) active: Option<ActiveDrag>,
}

#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct ActiveDrag {
    /// The dragged body.
    pub(crate) body: Entity,
    pub(crate) anchor: Entity,
    pub(crate) spring: Entity,
    /// The plane z = this in which the anchor follows the cursor: the
    /// body's depth when the drag began.
    pub(crate) z: f32,
}

/// Writes [`Pointer`] from the primary window, its first active camera and
/// the mouse.
pub(crate) fn update_pointer(
    mut pointer: ResMut<Pointer>,
    buttons: Option<Res<ButtonInput<MouseButton>>>,
    windows: Query<&Window, With<PrimaryWindow>>,
    cameras: Query<(&Camera, &GlobalTransform)>,
    egui: Option<Res<EguiWantsInput>>,
) {
    let mut next = Pointer {
        ray: None,
        world_per_px: pointer.world_per_px,
        pressed: buttons
            .as_ref()
            .is_some_and(|b| b.pressed(MouseButton::Left)),
        just_pressed: buttons
            .as_ref()
            .is_some_and(|b| b.just_pressed(MouseButton::Left)),
        over_ui: egui.is_some_and(|e| e.wants_any_pointer_input()),
    };
    let camera = cameras
        .iter()
        .filter(|(camera, _)| camera.is_active)
        .min_by_key(|(camera, _)| camera.order);
    if let Some((camera, transform)) = camera {
        if let Some(cursor) = windows.single().ok().and_then(Window::cursor_position) {
            next.ray = camera.viewport_to_world(transform, cursor).ok();
        }
        // The size of a pixel where the plane z = 0 crosses the view's
        // centre.
        if let Some(rect) = camera.logical_viewport_rect() {
            let centre = rect.center();
            let at = |p: Vec2| {
                camera
                    .viewport_to_world(transform, p)
                    .ok()
                    .and_then(|ray| ray_at_z(ray, 0.0))
            };
            if let (Some(a), Some(b)) = (at(centre), at(centre + Vec2::X)) {
                let size = a.distance(b);
                if size.is_finite() && size > 0.0 {
                    next.world_per_px = size;
                }
            }
        }
    }
    pointer.set_if_neq(next);
}

/// The radius a body is drawn and picked with.
pub(crate) fn shown_radius(radius: Option<&Radius>, settings: &DebugUiSettings, px: f32) -> f32 {
    match radius {
        Some(&Radius(r)) if r.is_finite() && r > 0.0 => r,
        _ => settings.body_radius_px * px,
    }
}

type Candidate = (
    Entity,
    &'static Body,
    Option<&'static Radius>,
    &'static Island,
);

/// Picks on a click, starts, moves and ends the drag.
#[allow(clippy::too_many_arguments)]
pub(crate) fn pointer_actions(
    mut commands: Commands,
    settings: Res<DebugUiSettings>,
    pointer: Res<Pointer>,
    time: Res<Time<Fixed>>,
    mut selection: ResMut<Selection>,
    mut drag: ResMut<DragState>,
    bodies: Query<Candidate, Without<DragPart>>,
    mut anchors: Query<&mut Body, With<DragPart>>,
) {
    if let Some(active) = drag.active {
        let keep = pointer.pressed && settings.mouse_drag && bodies.contains(active.body);
        if !keep {
            commands.entity(active.anchor).try_despawn();
            commands.entity(active.spring).try_despawn();
            drag.active = None;
        } else if let Some(target) = pointer.ray.and_then(|ray| ray_at_z(ray, active.z))
            && let Ok(mut anchor) = anchors.get_mut(active.anchor)
            && anchor.position != target
        {
            anchor.position = target;
        }
    }
    if !(pointer.just_pressed && !pointer.over_ui && settings.mouse_picking) {
        return;
    }
    let Some(ray) = pointer.ray else {
        return;
    };
    let px = pointer.world_per_px;
    let candidates = bodies.iter().map(|(entity, body, radius, _)| {
        (entity, body.position, shown_radius(radius, &settings, px))
    });
    let picked = pick_body(ray, settings.pick_radius_px * px, candidates);
    selection.set_if_neq(Selection(picked));
    let Some(picked) = picked else {
        return;
    };
    let Ok((_, body, _, island)) = bodies.get(picked) else {
        return;
    };
    if !settings.mouse_drag || drag.active.is_some() || body.inv_mass <= 0.0 {
        return;
    }
    let mass = body.mass();
    if !(mass.is_finite() && body.position.is_finite()) {
        return;
    }
    let z = body.position.z;
    let target = ray_at_z(ray, z).unwrap_or(body.position);
    let h = time.timestep().as_secs_f32() / island.substeps().max(1) as f32;
    let (k, c) = drag_spring_params(mass, h, settings.drag_frequency_hz);
    let anchor = commands
        .spawn((
            Body::fixed(target),
            TransformSyncDisabled,
            DragPart,
            Name::new("physics debug drag anchor"),
        ))
        .id();
    let spring = commands
        .spawn((
            Spring::new(anchor, picked, 0.0, k).with_damping(c),
            DragPart,
            Name::new("physics debug drag spring"),
        ))
        .id();
    drag.active = Some(ActiveDrag {
        body: picked,
        anchor,
        spring,
        z,
    });
}

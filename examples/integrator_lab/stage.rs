//! The stage: the shown run drawn with gizmos right of the panel, with the
//! arrows of the current trace event and the ghost of where the recorded
//! run ends.

use bevy::math::DVec2;
use bevy::prelude::*;
use bevy_euler_physics::integrators::{SpringSystem, State};

use crate::trace::Event;
use crate::view::LabView;

/// How much of its own path the shown run leaves behind, in simulated
/// seconds and in points.
const TRAIL_SECONDS: f64 = 20.0;
const TRAIL_POINTS: usize = 4000;
/// How much of the exact path is drawn, and the time each dash spans.
const EXACT_PATH_SECONDS: f64 = 3.0;
const DASH_SECONDS: f64 = 0.05;
/// Arrow scales: metres of arrow per m/s, and per newton (unit mass).
const VELOCITY_SCALE: f32 = 0.5;
const FORCE_SCALE: f32 = 0.15;
/// The square of the world the view keeps visible between the panels,
/// centred on the anchor, in metres.
const SCENE_SIZE: f32 = 12.0;

const ANCHOR_COLOR: Color = Color::srgb(0.85, 0.85, 0.9);
const SPRING_COLOR: Color = Color::srgb(0.55, 0.55, 0.6);
const PARTICLE_COLOR: Color = Color::srgb(0.98, 0.85, 0.3);
const TRAIL_COLOR: Color = Color::srgb(0.75, 0.62, 0.25);
const GHOST_COLOR: Color = Color::srgba(0.75, 0.75, 0.85, 0.45);
const EXACT_COLOR: Color = Color::srgb(0.6, 0.8, 1.0);
const VELOCITY_COLOR: Color = Color::srgb(0.3, 0.9, 0.95);
const OLD_VELOCITY_COLOR: Color = Color::srgb(0.2, 0.45, 0.5);
const SPRING_FORCE_COLOR: Color = Color::srgb(1.0, 0.55, 0.2);
const DRAG_COLOR: Color = Color::srgb(0.95, 0.3, 0.3);
const GRAVITY_COLOR: Color = Color::srgb(0.4, 0.85, 0.4);
const SUM_COLOR: Color = Color::srgb(1.0, 1.0, 1.0);
/// The current trace event's arrow (a move, a kick, an error).
pub const EVENT_COLOR: Color = Color::srgb(1.0, 0.3, 0.85);

fn arrow(gizmos: &mut Gizmos, from: Vec2, vector: Vec2, color: Color) {
    let length = vector.length();
    if length > 1.0e-3 {
        gizmos
            .arrow_2d(from, from + vector, color)
            .with_tip_length((0.3 * length).min(0.25));
    }
}

/// An arrow of the trace event, as line strips: Bevy draws its gizmos'
/// strips (circles, paths) over their plain lines, and the event's arrow
/// goes over everything.
fn event_arrow(gizmos: &mut Gizmos, from: Vec2, vector: Vec2) {
    let length = vector.length();
    if length <= 1.0e-3 {
        return;
    }
    let tip = from + vector;
    let head = (0.3 * length).min(0.25);
    let back = -vector / length * head;
    let side = back.perp() * 0.5;
    gizmos.linestrip_2d([from, tip], EVENT_COLOR);
    gizmos.linestrip_2d([tip + back + side, tip, tip + back - side], EVENT_COLOR);
}

/// The pulls at `position` with `velocity`: spring, drag, gravity and their
/// sum.
fn forces(gizmos: &mut Gizmos, system: &SpringSystem, position: DVec2, velocity: DVec2) {
    let spring = -system.stiffness * position;
    let drag = -system.drag * velocity;
    let gravity = system.gravity;
    let at = position.as_vec2();
    // The sum first, so that a force equal to it (the spring alone, without
    // drag or gravity) is drawn over it in its own colour.
    for (force, color) in [
        (spring + drag + gravity, SUM_COLOR),
        (spring, SPRING_FORCE_COLOR),
        (drag, DRAG_COLOR),
        (gravity, GRAVITY_COLOR),
    ] {
        arrow(gizmos, at, force.as_vec2() * FORCE_SCALE, color);
    }
}

/// Filled-looking: concentric rings.
fn particle(gizmos: &mut Gizmos, position: Vec2, color: Color) {
    for ring in 1..=8 {
        gizmos.circle_2d(position, 0.022 * ring as f32, color);
    }
}

/// The exact path over the last few seconds before `now` (since the last
/// measure), sampled on a grid fixed in time so the dashes do not crawl;
/// every other segment is drawn.
fn exact_path(gizmos: &mut Gizmos, view: &LabView, now: f64) {
    let lab = view.race.shown();
    let from = (now - EXACT_PATH_SECONDS).max(lab.exact.reference_time());
    let first = (from / DASH_SECONDS).ceil() as i64;
    let last = (now / DASH_SECONDS).floor() as i64;
    let mut previous: Option<(i64, Vec2)> = None;
    for i in first..=last {
        let point = lab
            .exact
            .state_at(i as f64 * DASH_SECONDS)
            .position
            .as_vec2();
        if let Some((j, start)) = previous
            && j.rem_euclid(2) == 0
        {
            gizmos.line_2d(start, point, EXACT_COLOR);
        }
        previous = Some((i, point));
    }
}

/// The arrows of the current event, drawn with the mass where the event
/// leaves it (`state`).
fn event_arrows(gizmos: &mut Gizmos, system: &SpringSystem, event: &Event, state: State) {
    let at = state.position.as_vec2();
    match *event {
        Event::Force {
            position, velocity, ..
        } => {
            // Where the force is measured, if not where the mass is (RK2's
            // midpoint).
            if position != state.position {
                gizmos.circle_2d(position.as_vec2(), 0.15, EVENT_COLOR);
            }
            forces(gizmos, system, position, velocity);
        }
        Event::Move { from, to, .. } => {
            event_arrow(gizmos, from.as_vec2(), (to - from).as_vec2());
        }
        Event::Accelerate { from, to, .. } => {
            let (old, new) = (from.as_vec2(), to.as_vec2());
            arrow(gizmos, at, old * VELOCITY_SCALE, OLD_VELOCITY_COLOR);
            arrow(gizmos, at, new * VELOCITY_SCALE, VELOCITY_COLOR);
            event_arrow(
                gizmos,
                at + old * VELOCITY_SCALE,
                (new - old) * VELOCITY_SCALE,
            );
        }
        Event::Energy { exact, .. } => {
            gizmos.linestrip_2d([at, exact.position.as_vec2()], EVENT_COLOR);
            forces(gizmos, system, state.position, state.velocity);
            arrow(
                gizmos,
                at,
                state.velocity.as_vec2() * VELOCITY_SCALE,
                VELOCITY_COLOR,
            );
        }
    }
}

pub fn draw(view: Res<LabView>, mut gizmos: Gizmos) {
    let lab = view.race.shown();
    let system = lab.settings.system();
    let shown = view.shown();
    let now = lab.time();

    if !lab.settings.projectile() {
        gizmos.cross_2d(Vec2::ZERO, 0.3, ANCHOR_COLOR);
    }
    let trail = view
        .timeline
        .path(view.timeline.cursor(), shown, TRAIL_SECONDS, TRAIL_POINTS);
    gizmos.linestrip_2d(trail.iter().map(|(_, p)| *p), TRAIL_COLOR);

    // The ghost: where the recorded run ends, and its path from here.
    if !view.timeline.at_end() {
        let ahead: Vec<Vec2> = view
            .timeline
            .path(view.timeline.end(), shown, f64::INFINITY, TRAIL_POINTS)
            .into_iter()
            .filter(|&(t, _)| t >= now)
            .map(|(_, p)| p)
            .collect();
        gizmos.linestrip_2d(ahead.iter().copied(), GHOST_COLOR);
        if let Some(&end) = ahead.first() {
            particle(&mut gizmos, end, GHOST_COLOR);
        }
    }

    exact_path(&mut gizmos, &view, now);
    gizmos.circle_2d(lab.exact_state().position.as_vec2(), 0.22, EXACT_COLOR);

    // The mass where the current event leaves it.
    let (state, event) = match &view.trace {
        Some(trace) => (trace.state_after(view.event), trace.events.get(view.event)),
        None => (lab.state, None),
    };
    if !state.is_finite() {
        return;
    }
    let position = state.position.as_vec2();
    if !lab.settings.projectile() {
        gizmos.line_2d(Vec2::ZERO, position, SPRING_COLOR);
    }
    particle(&mut gizmos, position, PARTICLE_COLOR);
    match event {
        Some(event) => event_arrows(&mut gizmos, &system, event, state),
        None => {
            forces(&mut gizmos, &system, state.position, state.velocity);
            let velocity = state.velocity.as_vec2() * VELOCITY_SCALE;
            arrow(&mut gizmos, position, velocity, VELOCITY_COLOR);
        }
    }
}

/// Keeps a [`SCENE_SIZE`] square around the anchor visible and centred
/// between a panel `left` wide and one `right` wide.
pub fn fit_camera(
    left: f32,
    right: f32,
    window: &Window,
    transform: &mut Transform,
    projection: &mut Projection,
) {
    let free_width = (window.width() - left - right).max(1.0);
    let scale = (SCENE_SIZE / free_width).max(SCENE_SIZE / window.height().max(1.0));
    if let Projection::Orthographic(orthographic) = projection
        && orthographic.scale != scale
    {
        orthographic.scale = scale;
    }
    let x = -0.5 * (left - right) * scale;
    if transform.translation.x != x {
        transform.translation.x = x;
    }
}

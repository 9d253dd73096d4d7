//! Headless tests of the panel's logic: the step controls, the readouts,
//! picking and dragging, driven through [`Pointer`] instead of a window.

use core::f32::consts::TAU;
use core::time::Duration;

use bevy::prelude::*;
use bevy::time::TimeUpdateStrategy;

use super::drag::{DragPart, DragState, Pointer, drag_spring_params};
use super::gizmos::{BodiesDrawn, bodies_drawn, strain, strain_color};
use super::stats::{self, DebugStats, StepRequest};
use super::{DebugCorePlugin, DebugUiSettings, Selection};
use crate::SpringStability;
use crate::prelude::*;

const H: f64 = 1.0 / 64.0;

/// Counts fixed steps.
#[derive(Resource, Default)]
struct FixedRuns(u32);

fn count_runs(mut runs: ResMut<FixedRuns>) {
    runs.0 += 1;
}

fn app(strategy: TimeUpdateStrategy, debug: bool) -> App {
    let mut app = App::new();
    app.add_plugins((MinimalPlugins, EulerPhysicsPlugin))
        .insert_resource(Time::<Fixed>::from_seconds(H))
        .insert_resource(strategy)
        .init_resource::<FixedRuns>()
        .add_systems(FixedUpdate, count_runs);
    if debug {
        app.add_plugins(DebugCorePlugin);
    }
    app.update();
    app
}

fn runs(app: &App) -> u32 {
    app.world().resource::<FixedRuns>().0
}

fn request_step(app: &mut App) {
    let world = app.world_mut();
    let time = *world.resource::<Time<Virtual>>();
    stats::request_step(&mut world.resource_mut::<StepRequest>(), &time);
}

fn set_paused(app: &mut App, paused: bool) {
    let mut time = app.world_mut().resource_mut::<Time<Virtual>>();
    if time.is_paused() != paused {
        stats::toggle_pause(&mut time);
    }
}

#[test]
fn single_step_while_paused_runs_exactly_one_fixed_step() {
    // 0.4 of a step per frame: frames run zero or one step, and the clock
    // always carries some overstep.
    let frame = Duration::from_secs_f64(0.4 * H);
    let mut app = app(TimeUpdateStrategy::ManualDuration(frame), true);
    for _ in 0..7 {
        app.update();
    }
    assert!(runs(&app) >= 2, "the clock runs while not paused");

    set_paused(&mut app, true);
    app.update();
    let before = runs(&app);
    let overstep = app.world().resource::<Time<Fixed>>().overstep();
    for _ in 0..5 {
        app.update();
    }
    assert_eq!(runs(&app), before, "no step while paused");

    request_step(&mut app);
    app.update();
    assert_eq!(runs(&app), before + 1, "one request, one step");
    assert_eq!(app.world().resource::<DebugStats>().steps_this_frame, 1);
    // The overstep, and so the interpolation, stays where it was.
    assert_eq!(app.world().resource::<Time<Fixed>>().overstep(), overstep);
    for _ in 0..5 {
        app.update();
    }
    assert_eq!(runs(&app), before + 1, "and no more");
    assert_eq!(app.world().resource::<DebugStats>().steps_this_frame, 0);

    // Three requests: one step in each of the next three frames.
    for _ in 0..3 {
        request_step(&mut app);
    }
    for i in 1..=3 {
        app.update();
        assert_eq!(runs(&app), before + 1 + i);
    }
    app.update();
    assert_eq!(runs(&app), before + 4);
}

#[test]
fn step_requests_are_ignored_while_running() {
    let frame = Duration::from_secs_f64(H);
    let mut app = app(TimeUpdateStrategy::ManualDuration(frame), true);
    app.update();
    let before = runs(&app);
    // Made while running: dropped, not saved up for a later pause.
    app.world_mut().resource_mut::<StepRequest>().pending = 2;
    app.update();
    assert_eq!(runs(&app), before + 1, "only the clock's own step");
    set_paused(&mut app, true);
    app.update();
    app.update();
    assert_eq!(runs(&app), before + 1);
    // `request_step` itself refuses while running.
    set_paused(&mut app, false);
    app.update();
    request_step(&mut app);
    assert_eq!(app.world().resource::<StepRequest>().pending, 0);
}

#[test]
fn step_time_and_count_are_measured_per_frame() {
    let mut app = app(TimeUpdateStrategy::FixedTimesteps(3), true);
    app.world_mut().spawn(Body::new(1.0));
    app.update();
    let stats = app.world().resource::<DebugStats>();
    assert_eq!(stats.steps_this_frame, 3);
    assert!(stats.step_time > Duration::ZERO);
    assert!(stats.mean_step_seconds > 0.0);
    // The physics apart: inside the fixed loop, and what the mean follows.
    assert!(stats.physics_time > Duration::ZERO);
    assert!(stats.physics_time < stats.step_time, "{stats:?}");
    assert_eq!(
        stats.mean_step_seconds,
        stats.physics_time.as_secs_f64() / 3.0
    );
}

fn ray_at(x: f32, y: f32) -> Ray3d {
    Ray3d::new(Vec3::new(x, y, 10.0), Dir3::NEG_Z)
}

fn set_pointer(app: &mut App, ray: Option<Ray3d>, pressed: bool, just_pressed: bool) {
    let mut pointer = app.world_mut().resource_mut::<Pointer>();
    pointer.ray = ray;
    pointer.pressed = pressed;
    pointer.just_pressed = just_pressed;
}

fn drag_parts(app: &mut App) -> (usize, usize) {
    let world = app.world_mut();
    let anchors = world
        .query_filtered::<&Body, With<DragPart>>()
        .iter(world)
        .count();
    let springs = world
        .query_filtered::<&Spring, With<DragPart>>()
        .iter(world)
        .count();
    (anchors, springs)
}

#[test]
fn dragging_pulls_the_body_to_the_cursor_and_release_cleans_up() {
    let mut app = app(TimeUpdateStrategy::FixedTimesteps(1), true);
    app.insert_resource(Gravity::ZERO);
    let body = app.world_mut().spawn(Body::new(2.0)).id();
    app.update();

    // Press on the body: picked, and a drag starts.
    set_pointer(&mut app, Some(ray_at(0.01, 0.0)), true, true);
    app.update();
    assert_eq!(app.world().resource::<Selection>().0, Some(body));
    let drag = app.world().resource::<DragState>().active.expect("a drag");
    assert_eq!(drag.body, body);
    assert_eq!(drag_parts(&mut app), (1, 1));
    let spring = *app.world().get::<Spring>(drag.spring).unwrap();
    assert_eq!((spring.a, spring.b), (drag.anchor, body));
    assert_eq!(spring.rest_length, 0.0);
    // 4 Hz on a 2 kg body.
    let omega = TAU * 4.0;
    assert!((spring.stiffness - 2.0 * omega * omega).abs() < 1e-2 * spring.stiffness);
    assert!(app.world().get::<Body>(drag.anchor).unwrap().is_fixed());

    // Hold and move to x = 1: the anchor follows, the body comes.
    set_pointer(&mut app, Some(ray_at(1.0, 0.0)), true, false);
    for _ in 0..64 {
        app.update();
    }
    let anchor = app.world().get::<Body>(drag.anchor).unwrap().position;
    assert_eq!(anchor, Vec3::new(1.0, 0.0, 0.0));
    let position = app.world().get::<Body>(body).unwrap().position;
    assert!(
        position.distance(Vec3::X) < 0.1,
        "after 1 s on a 4 Hz spring the body is near the cursor: {position}"
    );
    // The drag's spring is not the scene's energy.
    assert_eq!(Energy::of_world(app.world_mut()).spring, 0.0);

    // Release: anchor and spring are gone, the body stays picked.
    set_pointer(&mut app, Some(ray_at(1.0, 0.0)), false, false);
    app.update();
    assert_eq!(drag_parts(&mut app), (0, 0));
    assert!(app.world().get_entity(drag.anchor).is_err());
    assert!(app.world().get_entity(drag.spring).is_err());
    assert_eq!(app.world().resource::<DragState>().active, None);
    assert_eq!(app.world().resource::<Selection>().0, Some(body));
}

#[test]
fn a_drag_ends_when_its_body_is_despawned() {
    let mut app = app(TimeUpdateStrategy::FixedTimesteps(1), true);
    let body = app.world_mut().spawn(Body::new(1.0)).id();
    app.update();
    set_pointer(&mut app, Some(ray_at(0.0, 0.0)), true, true);
    app.update();
    assert_eq!(drag_parts(&mut app), (1, 1));
    app.world_mut().despawn(body);
    set_pointer(&mut app, Some(ray_at(0.0, 0.0)), true, false);
    app.update();
    assert_eq!(drag_parts(&mut app), (0, 0));
}

#[test]
fn fixed_bodies_are_picked_but_not_dragged() {
    let mut app = app(TimeUpdateStrategy::FixedTimesteps(1), true);
    let anchor = app.world_mut().spawn(Body::fixed(Vec3::Y)).id();
    app.update();
    set_pointer(&mut app, Some(ray_at(0.0, 1.0)), true, true);
    app.update();
    assert_eq!(app.world().resource::<Selection>().0, Some(anchor));
    assert_eq!(app.world().resource::<DragState>().active, None);
    assert_eq!(drag_parts(&mut app), (0, 0));
}

#[test]
fn clicks_on_empty_space_unpick_and_clicks_on_the_ui_do_nothing() {
    let mut app = app(TimeUpdateStrategy::FixedTimesteps(1), true);
    let body = app.world_mut().spawn(Body::new(1.0)).id();
    app.update();
    // Over egui: no pick, no drag.
    set_pointer(&mut app, Some(ray_at(0.0, 0.0)), true, true);
    app.world_mut().resource_mut::<Pointer>().over_ui = true;
    app.update();
    assert_eq!(app.world().resource::<Selection>().0, None);
    assert_eq!(drag_parts(&mut app), (0, 0));
    // On the body, with dragging off: picked only.
    app.world_mut().resource_mut::<Pointer>().over_ui = false;
    app.world_mut().resource_mut::<DebugUiSettings>().mouse_drag = false;
    app.update();
    assert_eq!(app.world().resource::<Selection>().0, Some(body));
    assert_eq!(drag_parts(&mut app), (0, 0));
    // 1 m away (100 px at 0.01 m/px, beyond the 12 px pick radius).
    set_pointer(&mut app, Some(ray_at(1.0, 0.0)), true, true);
    app.update();
    assert_eq!(app.world().resource::<Selection>().0, None);
}

#[test]
fn picking_uses_the_radius_and_the_pixel_size() {
    let mut app = app(TimeUpdateStrategy::FixedTimesteps(1), true);
    let big = app
        .world_mut()
        .spawn((Body::fixed(Vec3::ZERO), Radius(0.5)))
        .id();
    let small = app
        .world_mut()
        .spawn(Body::fixed(Vec3::new(2.0, 0.0, 0.0)))
        .id();
    app.update();
    // Inside the big one's radius, far beyond 12 px.
    set_pointer(&mut app, Some(ray_at(0.4, 0.0)), true, true);
    app.update();
    assert_eq!(app.world().resource::<Selection>().0, Some(big));
    // 0.1 m from the small one: 10 px at 0.01 m/px, within 12 px…
    set_pointer(&mut app, Some(ray_at(2.1, 0.0)), true, true);
    app.update();
    assert_eq!(app.world().resource::<Selection>().0, Some(small));
    // …but 20 px when zoomed in to 0.005 m/px.
    app.world_mut().resource_mut::<Pointer>().world_per_px = 0.005;
    app.update();
    assert_eq!(app.world().resource::<Selection>().0, None);
}

#[test]
fn drag_spring_stays_within_the_stability_limit() {
    // At 64 Hz the full 4 Hz fits: ω·h ≈ 0.39.
    let (k, c) = drag_spring_params(3.0, 1.0 / 64.0, 4.0);
    assert!((k - 3.0 * (TAU * 4.0).powi(2)).abs() < 1e-3 * k);
    let s = SpringStability::new(k, c, 1.0 / 3.0);
    assert!(s.load(1.0 / 64.0) <= 0.6 + 1e-4, "{}", s.load(1.0 / 64.0));
    // Damping ratio 0.7: c = 2·0.7·m·ω.
    assert!((c - 1.4 * 3.0 * TAU * 4.0).abs() < 1e-3 * c);
    // At 20 Hz it would not: the frequency comes down to 60 % of the limit.
    for h in [1.0 / 20.0, 1.0 / 10.0, 0.5] {
        let (k, c) = drag_spring_params(0.5, h, 4.0);
        let s = SpringStability::new(k, c, 1.0 / 0.5);
        assert!(s.is_stable(h));
        assert!(
            (s.load(h) - 0.6).abs() < 1e-3,
            "load {} at h = {h}",
            s.load(h)
        );
    }
}

#[test]
fn strain_colours() {
    assert!((strain(1.2, 1.0) - 0.2).abs() < 1e-6);
    assert!((strain(0.5, 1.0) + 0.5).abs() < 1e-6);
    assert_eq!(strain(0.3, 0.0), f32::INFINITY);
    assert_eq!(strain(0.0, 0.0), 0.0);
    let white = strain_color(0.0, 0.2).to_srgba();
    assert_eq!((white.red, white.green, white.blue), (1.0, 1.0, 1.0));
    let red = strain_color(0.5, 0.2).to_srgba();
    assert!(red.red == 1.0 && red.green < 0.3 && red.blue < 0.3);
    let blue = strain_color(-0.5, 0.2).to_srgba();
    assert!(blue.blue == 1.0 && blue.red < 0.3);
    let half = strain_color(0.1, 0.2).to_srgba();
    assert!(half.green > red.green && half.green < 1.0);
    let nan = strain_color(f32::NAN, 0.2).to_srgba();
    assert_eq!((nan.red, nan.green, nan.blue), (1.0, 1.0, 1.0));
}

#[test]
fn readouts_count_bodies_islands_and_find_the_least_stable_island() {
    let mut app = app(TimeUpdateStrategy::FixedTimesteps(1), true);
    let world = app.world_mut();
    let anchor = world.spawn(Body::fixed(Vec3::ZERO)).id();
    // Island 1: a soft pendulum.
    let soft = world.spawn(Body::new(1.0).with_position(Vec3::NEG_Y)).id();
    world.spawn(Spring::new(anchor, soft, 1.0, 10.0));
    // Island 2: a spring far past the limit (ω·h ≈ 4.9) between two bodies
    // that float in place.
    let a = world
        .spawn((
            Body::new(1.0).with_position(Vec3::X * 5.0),
            SleepingDisabled,
        ))
        .id();
    let stiff = world
        .spawn(Body::new(1.0).with_position(Vec3::X * 6.0))
        .id();
    world.spawn(Spring::new(a, stiff, 1.0, 50_000.0));
    // Island 3: a lone body.
    world.spawn(Body::new(1.0).with_position(Vec3::Y * 10.0));
    app.update();
    app.update();

    let stats = app.world().resource::<DebugStats>().clone();
    assert_eq!((stats.awake, stats.asleep, stats.fixed), (4, 0, 1));
    let world = app.world_mut();
    let ids: bevy::platform::collections::HashSet<u32> = world
        .query::<&Island>()
        .iter(world)
        .filter(|i| i.is_some())
        .map(Island::id)
        .collect();
    assert_eq!(ids.len(), 3);
    assert_eq!(stats.islands, 3);
    let worst = stats.worst.expect("islands");
    let island = *app.world().get::<Island>(stiff).unwrap();
    assert!(worst.margin < 0.0);
    assert_eq!(worst.margin, island.margin());
    assert_eq!(worst.island, island.id());
    assert_eq!(worst.entity, a.min(stiff));

    // While the panel is hidden nothing is gathered.
    app.world_mut().resource_mut::<DebugUiSettings>().show_panel = false;
    app.world_mut().despawn(soft);
    app.update();
    assert_eq!(app.world().resource::<DebugStats>().awake, 4);
}

/// What a body's state is, without its entity (the debug plugin's
/// resources shift entity ids).
type State = (Body, bool, f32, PositionHistory);

/// A scene with a resting island that falls asleep, a swinging one, and
/// a stiff one, stepped with or without the debug plugin: the bodies'
/// states in spawn order and the number of wakes.
fn run_scene(debug: bool) -> (Vec<State>, usize) {
    let mut app = app(TimeUpdateStrategy::FixedTimesteps(1), debug);
    let world = app.world_mut();
    world.spawn(GroundPlane::horizontal(0.0));
    world.spawn((Body::new(1.0).with_position(Vec3::Y * 0.1), Radius(0.1)));
    let anchor = world.spawn(Body::fixed(Vec3::new(3.0, 3.0, 0.0))).id();
    let mut previous = anchor;
    for i in 1..=5 {
        let bob = world
            .spawn((
                Body::new(0.5).with_position(Vec3::new(3.0 + 0.5 * i as f32, 3.0, 0.0)),
                Damping(0.05),
            ))
            .id();
        world.spawn(Spring::new(previous, bob, 0.5, 400.0).with_damping(0.2));
        previous = bob;
    }
    let mut woke = 0;
    for _ in 0..300 {
        app.update();
        woke += app
            .world_mut()
            .resource_mut::<Messages<IslandWoke>>()
            .drain()
            .count();
    }
    let states = PhysicsSnapshot::save(app.world_mut())
        .bodies()
        .iter()
        .map(|s| (s.body, s.sleeping, s.rest_time, s.history))
        .collect();
    (states, woke)
}

#[test]
fn the_plugin_changes_no_result_and_wakes_nothing() {
    let (plain, plain_woke) = run_scene(false);
    let (debug, debug_woke) = run_scene(true);
    assert_eq!(plain.len(), 7);
    assert!(plain.iter().any(|s| s.1), "the scene has a sleeping island");
    assert!(
        plain.iter().any(|s| !s.1 && !s.0.is_fixed()),
        "and a moving one"
    );
    assert_eq!(plain, debug, "the same states (f32 ==)");
    assert_eq!(plain_woke, debug_woke);
}

#[test]
fn energy_is_recorded_after_every_fixed_step_for_the_chosen_span() {
    let mut app = app(TimeUpdateStrategy::FixedTimesteps(2), true);
    app.insert_resource(Gravity::ZERO);
    app.world_mut()
        .spawn(Body::new(2.0).with_velocity(Vec3::new(1.0, 0.0, 0.0)));
    app.world_mut()
        .resource_mut::<DebugUiSettings>()
        .energy_history_seconds = 0.5;
    for _ in 0..40 {
        app.update();
    }
    let history = app.world().resource::<super::energy::EnergyHistory>();
    // Two samples per frame, 1/64 s apart, covering the last 0.5 s.
    let samples: Vec<_> = history.samples.iter().collect();
    assert_eq!(samples.len(), 33);
    for pair in samples.windows(2) {
        assert!((pair[1].time - pair[0].time - H).abs() < 1e-9);
    }
    assert!(samples.iter().all(|s| s.energy.kinetic == 1.0));
    app.world_mut()
        .resource_mut::<DebugUiSettings>()
        .energy_plot = false;
    app.update();
    assert!(
        app.world()
            .resource::<super::energy::EnergyHistory>()
            .samples
            .is_empty()
    );
}

/// The gizmos walk every body only when each gets a circle or an arrow;
/// with both off only the selected body is drawn (its ring), and with
/// nothing selected none.
#[test]
fn gizmos_walk_the_bodies_only_when_each_is_drawn() {
    let picked = Entity::from_raw_u32(7).unwrap();
    let with = |draw_bodies, draw_velocities| DebugUiSettings {
        draw_bodies,
        draw_velocities,
        ..default()
    };
    for (bodies, velocities) in [(true, false), (false, true), (true, true)] {
        let settings = with(bodies, velocities);
        assert_eq!(bodies_drawn(&settings, None), BodiesDrawn::All);
        assert_eq!(bodies_drawn(&settings, Some(picked)), BodiesDrawn::All);
    }
    let off = with(false, false);
    assert_eq!(
        bodies_drawn(&off, Some(picked)),
        BodiesDrawn::Selected(picked)
    );
    assert_eq!(bodies_drawn(&off, None), BodiesDrawn::None);
}

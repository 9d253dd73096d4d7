//! Bevy's fixed schedules on the executor that costs least for what they
//! hold (`PhysicsSettings::lean_fixed_schedules`), seen from the thread a
//! system runs on: the single-threaded executor runs every system on the
//! thread that runs the app, the multi-threaded one hands systems that are
//! not exclusive to the compute pool's threads.

use std::sync::Mutex;
use std::thread::ThreadId;
use std::time::Duration;

use bevy::ecs::schedule::SingleThreadedExecutor;
use bevy::prelude::*;
use bevy::time::TimeUpdateStrategy;
use bevy_euler_physics::prelude::*;

/// The threads the watched systems ran on.
#[derive(Resource, Default)]
struct Seen(Mutex<Vec<ThreadId>>);

/// Read-only access, so two of these may run in parallel.
fn note(seen: Res<Seen>) {
    seen.0.lock().unwrap().push(std::thread::current().id());
}

fn note_too(seen: Res<Seen>) {
    note(seen);
}

/// The plugin on `MinimalPlugins` with two compute threads, one fixed step
/// per update, and `lean` as `lean_fixed_schedules`.
fn new_app(lean: bool) -> App {
    let mut pools = TaskPoolPlugin::default();
    pools.task_pool_options.compute.min_threads = 2;
    pools.task_pool_options.compute.max_threads = 2;
    let mut app = App::new();
    app.add_plugins((MinimalPlugins.set(pools), EulerPhysicsPlugin))
        .insert_resource(Time::<Fixed>::from_duration(Duration::from_secs_f32(
            1.0 / 64.0,
        )))
        .insert_resource(TimeUpdateStrategy::FixedTimesteps(1))
        .insert_resource(PhysicsSettings {
            lean_fixed_schedules: lean,
            ..default()
        })
        .init_resource::<Seen>();
    app.world_mut().spawn(Body::new(1.0));
    app
}

/// After a few frames (the schedules built, the executors chosen): whether
/// every watched run in the next frames was on this thread.
fn on_this_thread(app: &mut App) -> bool {
    for _ in 0..3 {
        app.update();
    }
    app.world().resource::<Seen>().0.lock().unwrap().clear();
    for _ in 0..3 {
        app.update();
    }
    let seen = app.world().resource::<Seen>().0.lock().unwrap();
    assert!(!seen.is_empty(), "the watched systems ran");
    let here = std::thread::current().id();
    seen.iter().all(|&id| id == here)
}

#[test]
fn a_fixed_schedule_with_one_threaded_system_runs_single_threaded() {
    let mut app = new_app(true);
    app.add_systems(FixedUpdate, note);
    assert!(on_this_thread(&mut app));
    let mut app = new_app(true);
    app.add_systems(FixedFirst, note);
    assert!(on_this_thread(&mut app));
    // `FixedPostUpdate` already holds one of Bevy's.
    let mut app = new_app(true);
    app.add_systems(FixedPostUpdate, note);
    assert!(!on_this_thread(&mut app));
}

#[test]
fn two_threaded_systems_keep_the_multi_threaded_executor() {
    let mut app = new_app(true);
    app.add_systems(FixedUpdate, (note, note_too));
    assert!(!on_this_thread(&mut app));
}

/// A system added later, in a running app, switches the schedule back.
#[test]
fn a_second_system_added_later_switches_back() {
    let mut app = new_app(true);
    app.add_systems(FixedUpdate, note);
    assert!(on_this_thread(&mut app));
    app.add_systems(FixedUpdate, note_too);
    assert!(!on_this_thread(&mut app));
}

#[test]
fn lean_off_leaves_bevy_s_executors() {
    let mut app = new_app(false);
    app.add_systems(FixedUpdate, note);
    assert!(!on_this_thread(&mut app));
}

/// Turned off in a running app, the schedules it switched go back to
/// Bevy's default executor.
#[test]
fn turned_off_it_gives_the_schedules_back() {
    let mut app = new_app(true);
    app.add_systems(FixedFirst, note);
    assert!(on_this_thread(&mut app));
    app.world_mut()
        .resource_mut::<PhysicsSettings>()
        .lean_fixed_schedules = false;
    assert!(!on_this_thread(&mut app));
}

/// An executor your code set on a schedule the plugin never switched (it
/// holds more than one system that is not exclusive) stays.
#[test]
fn an_executor_you_set_stays() {
    let mut app = new_app(true);
    app.add_systems(FixedUpdate, (note, note_too));
    app.edit_schedule(FixedUpdate, |schedule| {
        schedule.set_executor(SingleThreadedExecutor::new());
    });
    assert!(on_this_thread(&mut app));
}

/// The step itself is unchanged: a body in free fall for 64 steps of
/// 1/64 s falls `g·t·(t + h)/2` (semi-implicit Euler), either way.
#[test]
fn the_step_is_the_same_either_way() {
    let fall = |lean: bool| {
        let mut app = new_app(lean);
        app.add_systems(FixedUpdate, note);
        app.update();
        for _ in 0..64 {
            app.update();
        }
        let mut bodies = app.world_mut().query::<&Body>();
        bodies.single(app.world()).unwrap().position
    };
    let (lean, not_lean) = (fall(true), fall(false));
    assert_eq!(lean, not_lean);
    let (g, h) = (9.81f32, 1.0 / 64.0);
    let expected = -g * 1.0 * (1.0 + h) / 2.0;
    assert!((lean.y - expected).abs() < 1e-4, "{} vs {expected}", lean.y);
}

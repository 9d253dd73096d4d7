//! This plugin: an app like `bench_app(false)` in `benches/common/mod.rs`
//! (the plugin on `MinimalPlugins`, fixed step `H`, one substep, sleeping
//! off, no parallel passes, `FixedMain`'s schedules on the single-threaded
//! executor), ropes spawned by its `rope`.

use bevy::math::Vec2;
use bevy::prelude::*;
use bevy_euler_physics::prelude::*;

use crate::apps::{Probe, minimal_app, single_threaded_fixed_main, warm};
use crate::scene::{G, SPACING, rope, swinging};

/// The plugin on one thread with gravity `G`, sleeping off and
/// `settings` otherwise (one thread: `parallel_threshold` never reached),
/// no scene yet.
pub fn bare_app(settings: PhysicsSettings) -> App {
    let mut app = minimal_app();
    app.add_plugins(EulerPhysicsPlugin)
        .insert_resource(Gravity(G))
        .insert_resource(PhysicsSettings {
            parallel_threshold: usize::MAX,
            ..settings
        })
        .insert_resource(SleepSettings {
            enabled: false,
            ..default()
        });
    single_threaded_fixed_main(&mut app);
    app
}

/// The scene's app, warmed.
pub fn app(ropes: usize, links: usize) -> App {
    let mut app = bare_app(PhysicsSettings {
        substeps: 1,
        ..default()
    });
    for r in 0..ropes {
        let x = r as f32 * SPACING;
        let bodies = rope(app.world_mut(), x, links, false, ());
        if let (0, Some(&body)) = (r, bodies.last()) {
            let start = swinging(x, links).truncate();
            app.world_mut().insert_resource(Probe { body, start });
        }
    }
    warm(&mut app);
    app
}

/// The moving bodies' positions.
pub fn positions(world: &mut World) -> Vec<(Entity, Vec2)> {
    world
        .query::<(Entity, &Body)>()
        .iter(world)
        .filter(|(_, body)| body.inv_mass > 0.0)
        .map(|(e, body)| (e, body.position.truncate()))
        .collect()
}

//! What saving, restoring and checksumming the physics state of 10 000
//! bodies costs, beside copying the same bodies as a plain array.
//!
//! `cargo bench --bench snapshot` prints:
//!
//! - `snapshot/plain_copy`: cloning a `Vec` of 10 000 `Body` values (the
//!   reference: the least a snapshot can cost);
//! - `snapshot/save`, `snapshot/restore`, `snapshot/checksum`: the plugin's
//!   `PhysicsSnapshot` on a scene of 100 ropes of 100 bodies (10 100 bodies
//!   with the anchors).

use std::hint::black_box;
use std::time::Duration;

use bevy::prelude::*;
use bevy_euler_physics::prelude::*;
use criterion::{Criterion, criterion_group, criterion_main};

mod common;
use common::rope;

fn scene() -> App {
    let mut app = App::new();
    app.add_plugins((MinimalPlugins, EulerPhysicsPlugin));
    for r in 0..100 {
        rope(app.world_mut(), r as f32 * 0.5, 100, false, ());
    }
    app.update();
    for _ in 0..3 {
        app.world_mut().run_schedule(FixedUpdate);
    }
    app
}

fn snapshot(c: &mut Criterion) {
    let mut group = c.benchmark_group("snapshot");
    group.warm_up_time(Duration::from_secs(1));
    group.measurement_time(Duration::from_secs(3));
    let mut app = scene();
    let plain: Vec<Body> = app
        .world_mut()
        .query::<&Body>()
        .iter(app.world())
        .copied()
        .collect();
    assert_eq!(plain.len(), 10_100);
    group.bench_function("plain_copy", |b| b.iter(|| black_box(plain.clone())));
    group.bench_function("save", |b| {
        b.iter(|| black_box(PhysicsSnapshot::save(app.world_mut())))
    });
    let saved = PhysicsSnapshot::save(app.world_mut());
    group.bench_function("restore", |b| b.iter(|| saved.restore(app.world_mut())));
    group.bench_function("checksum", |b| b.iter(|| black_box(saved.checksum())));
    group.finish();
}

criterion_group!(benches, snapshot);
criterion_main!(benches);

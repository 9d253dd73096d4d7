//! Joins hold entities: copied into another world through reflection, with
//! the entity mapping a scene loader applies, or saved to a `DynamicWorld`
//! (Bevy's dynamic scene), written out as RON, read back and spawned into a
//! fresh world, a rope's springs and rods point at the copies of their
//! bodies, and the copy steps to the same bits.

mod common;

use std::any::TypeId;

use bevy::asset::{AssetPath, LoadFromPath, UntypedHandle};
use bevy::ecs::entity::EntityHashMap;
use bevy::prelude::*;
use bevy::world_serialization::serde::WorldDeserializer;
use bevy::world_serialization::{DynamicWorld, DynamicWorldBuilder};
use bevy_euler_physics::prelude::*;
use common::*;
use serde::de::DeserializeSeed;

/// A rope of springs, one rod, under a fixed anchor.
fn rope(app: &mut App) -> Vec<Entity> {
    let mut entities = vec![spawn(app, Body::fixed(Vec3::ZERO))];
    for i in 1..=6 {
        let body = spawn(
            app,
            Body::new(1.0).with_position(Vec3::new(0.2 * i as f32, -0.3 * i as f32, 0.0)),
        );
        let previous = *entities.last().unwrap();
        entities.push(body);
        let join = if i == 4 {
            spawn(app, DistanceConstraint::new(previous, body, 0.36))
        } else {
            spawn(
                app,
                Spring::new(previous, body, 0.3, 200.0).with_damping(0.5),
            )
        };
        entities.push(join);
    }
    entities
}

/// Copies `entities` of `from` into new entities of `to` the way a scene
/// loader does: every reflected component, its entities mapped to the new
/// ones. Returns the mapping.
fn copy(from: &App, to: &mut App, entities: &[Entity]) -> EntityHashMap<Entity> {
    let mut map: EntityHashMap<Entity> = entities
        .iter()
        .map(|&e| (e, to.world_mut().spawn_empty().id()))
        .collect();
    let registry = from.world().resource::<AppTypeRegistry>().clone();
    let registry = registry.read();
    for &entity in entities {
        let source = from.world().entity(entity);
        for registration in registry.iter() {
            let Some(reflect) = registration.data::<ReflectComponent>() else {
                continue;
            };
            if !(registration
                .type_info()
                .type_path()
                .contains("bevy_euler_physics"))
            {
                continue;
            }
            let Some(value) = reflect.reflect(source) else {
                continue;
            };
            let mut value = value.reflect_clone().expect("cloneable");
            reflect.map_entities(value.as_mut(), &mut map);
            let target = map[&entity];
            reflect.insert(
                &mut to.world_mut().entity_mut(target),
                value.as_partial_reflect(),
                &registry,
            );
        }
    }
    map
}

/// Each copied spring and rod joins the copies of its ends, and after 60
/// steps of both every copied body has the original's bits.
fn joins_follow_and_bits_match(
    original: &mut App,
    copy: &mut App,
    entities: &[Entity],
    map: &EntityHashMap<Entity>,
) {
    for &e in entities {
        if let Some(spring) = original.world().get::<Spring>(e) {
            let copied = copy.world().get::<Spring>(map[&e]).unwrap();
            assert_eq!((copied.a, copied.b), (map[&spring.a], map[&spring.b]));
        }
        if let Some(rod) = original.world().get::<DistanceConstraint>(e) {
            let copied = copy.world().get::<DistanceConstraint>(map[&e]).unwrap();
            assert_eq!((copied.a, copied.b), (map[&rod.a], map[&rod.b]));
        }
    }
    step(original, 60);
    step(copy, 60);
    for &e in entities {
        if let Some(&body) = original.world().get::<Body>(e) {
            assert_eq!(body, *copy.world().get::<Body>(map[&e]).unwrap(), "{e}");
        }
    }
}

#[test]
fn a_rope_copied_with_its_entities_mapped_steps_to_the_same_bits() {
    let mut original = app();
    let entities = rope(&mut original);
    step(&mut original, 10);
    let mut copy_app = app();
    // Entities the copy's world already uses, so that the ids differ.
    for _ in 0..5 {
        copy_app.world_mut().spawn_empty();
    }
    let map = copy(&original, &mut copy_app, &entities);
    joins_follow_and_bits_match(&mut original, &mut copy_app, &entities, &map);
}

/// The rope holds no asset handles: nothing is loaded.
struct NoAssets;

impl LoadFromPath for NoAssets {
    fn load_from_path_erased(&mut self, _: TypeId, path: AssetPath<'static>) -> UntypedHandle {
        panic!("the rope holds no asset, yet {path} was asked for")
    }
}

/// A rope saved to a `DynamicWorld` (every reflected component of its
/// entities), written out as RON text, read back and spawned into a fresh
/// world whose entity ids differ: its joins point at the new bodies, and
/// 60 steps later every body has the same bits as the original's.
#[test]
fn a_rope_saved_as_a_dynamic_world_and_loaded_steps_to_the_same_bits() {
    let mut original = app();
    let entities = rope(&mut original);
    step(&mut original, 10);
    let registry = original.world().resource::<AppTypeRegistry>().clone();
    let text = DynamicWorldBuilder::from_world(original.world(), &registry.read())
        .extract_entities(entities.iter().copied())
        .build()
        .serialize(&registry.read())
        .expect("the rope serializes");
    assert!(text.contains("Spring") && text.contains("DistanceConstraint"));

    let mut loaded = app();
    for _ in 0..7 {
        loaded.world_mut().spawn_empty();
    }
    let registry = loaded.world().resource::<AppTypeRegistry>().clone();
    let scene: DynamicWorld = {
        let mut reader = ron::Deserializer::from_str(&text).expect("RON");
        WorldDeserializer {
            type_registry: &registry.read(),
            load_from_path: &mut NoAssets,
        }
        .deserialize(&mut reader)
        .expect("the rope reads back")
    };
    let mut map = EntityHashMap::default();
    scene
        .write_to_world(loaded.world_mut(), &mut map)
        .expect("the rope spawns");
    for &e in &entities {
        assert_ne!(map[&e], e, "the copy has other ids");
    }
    joins_follow_and_bits_match(&mut original, &mut loaded, &entities, &map);
}

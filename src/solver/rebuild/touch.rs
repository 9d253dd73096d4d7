//! The rebuild's contact stages: round bodies within reach join islands,
//! and the layout the broad phase reads each step.

use bevy::prelude::*;

use super::{Decided, Islands, Layout, Rebuild, Scene};
use crate::data::constraints::ContactMaterial;
use crate::data::requests::{WakeCause, WakeTarget};
use crate::kernels::broad::Reach;
use crate::kernels::constraints::Material;
use crate::solver::contacts::{Sleeper, Toucher, key, reach};

/// Stage 2, after the joins: dynamic round bodies within reach of each
/// other (see [`contacts`](crate::solver::contacts)) join islands, as
/// joins do. An awake body within reach of a sleeping one asks to wake its
/// island ([`WakeCause::Touched`]).
pub(super) fn join(p: &mut Rebuild, scene: &mut Scene) {
    let h = p.solver.timestep;
    let mut items = Vec::new();
    let mut node = Vec::new();
    for (i, n) in scene.nodes.iter().enumerate() {
        if let Some(radius) = n.radius
            && n.dynamic
            && n.valid
        {
            items.push(Reach {
                pos: n.pos,
                reach: reach(radius, n.vel, h),
                key: key(n.entity),
            });
            node.push(i as u32);
        }
    }
    p.solver.touch.merged = false;
    if items.len() < 2 {
        return;
    }
    let mut found = Vec::new();
    let nodes = &scene.nodes;
    let touches = |a: u32, b: u32| {
        let (a, b) = (
            &nodes[node[a as usize] as usize],
            &nodes[node[b as usize] as usize],
        );
        a.groups.touches(&b.groups)
    };
    p.solver.broad.pairs(&items, touches, &mut found);
    let joined: bevy::platform::collections::HashSet<(u32, u32)> = if found.is_empty() {
        default()
    } else {
        scene
            .joined_pairs()
            .map(|(a, b)| (a.min(b), a.max(b)))
            .collect()
    };
    let mut merged = false;
    for (a, b) in found {
        let (a, b) = (node[a as usize], node[b as usize]);
        merged |= scene.union.union(a, b);
        if !joined.contains(&(a.min(b), a.max(b))) {
            scene.nodes[a as usize].touching = true;
            scene.nodes[b as usize].touching = true;
        }
        let (na, nb) = (&scene.nodes[a as usize], &scene.nodes[b as usize]);
        for (sleeper, other) in [(na, nb), (nb, na)] {
            if sleeper.sleeping.is_some() && other.sleeping.is_none() {
                p.requests.wakes.push((
                    WakeTarget::Body(sleeper.entity),
                    WakeCause::Touched(other.entity),
                ));
            }
        }
    }
    p.solver.touch.merged = merged;
}

/// Stage 7, after the rows: for the broad phase, the round bodies with a
/// slot and those of sleeping islands, each slot's island, and which slots
/// are joined directly (a rope's neighbours do not touch).
pub(super) fn lay_out(
    p: &mut Rebuild,
    scene: &Scene,
    islands: &Islands,
    decided: &Decided,
    layout: &Layout,
) {
    let h = p.solver.timestep;
    let touch = &mut p.solver.touch;
    touch.slots.clear();
    touch.sleepers.clear();
    touch.island_of_slot.clear();
    touch.island_of_slot.resize(layout.slots, u32::MAX);
    let default: Material = ContactMaterial::default().into();
    for (i, node) in scene.nodes.iter().enumerate() {
        let slot = layout.slot_of[i];
        let island = islands.island_of[i];
        if slot != u32::MAX {
            touch.island_of_slot[slot as usize] = island;
        }
        let Some(radius) = node.radius else {
            continue;
        };
        let body = Toucher {
            entity: node.entity,
            radius,
            material: node.material.unwrap_or(default),
            groups: node.groups,
        };
        if slot != u32::MAX {
            touch.slots.push((slot, body));
        } else if island != u32::MAX && decided.states[island as usize].sleeping && node.valid {
            touch.sleepers.push(Sleeper {
                pos: node.pos,
                reach: reach(radius, node.vel, h),
                body,
            });
        }
    }
    touch.slots.sort_unstable_by_key(|&(slot, _)| slot);
    // Joined slots, both ways, as compressed rows.
    let ends: Vec<(u32, u32)> = scene
        .joined_pairs()
        .map(|(a, b)| (layout.slot_of[a as usize], layout.slot_of[b as usize]))
        .filter(|&(a, b)| a != u32::MAX && b != u32::MAX)
        .collect();
    let start = &mut touch.joined_start;
    start.clear();
    start.resize(layout.slots + 1, 0);
    for &(a, b) in &ends {
        start[a as usize + 1] += 1;
        start[b as usize + 1] += 1;
    }
    for s in 0..layout.slots {
        start[s + 1] += start[s];
    }
    let mut next = start.clone();
    touch.joined.clear();
    touch.joined.resize(2 * ends.len(), 0);
    for &(a, b) in &ends {
        for (from, to) in [(a, b), (b, a)] {
            touch.joined[next[from as usize] as usize] = to;
            next[from as usize] += 1;
        }
    }
}

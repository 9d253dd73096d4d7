//! The rebuild's reading stages: bodies, then joins.

use bevy::ecs::entity::EntityHashMap;
use bevy::prelude::*;

use super::{Link, Node, Rebuild, RodLink, Scene};
use crate::data::islands::{SleepThreshold, Sleeping, Substeps, sanitize};
use crate::data::issues::PhysicsIssue;
use crate::data::requests::{SettingsReported, WakeCause, WakeTarget};
use crate::data::settings::PhysicsSettings;
use crate::kernels::springs::SpringRow;
use crate::kernels::union_find::UnionFind;
use crate::solver::report::{
    validate_angle, validate_ends, validate_limit, validate_rod, validate_spring,
};
use crate::solver::state_is_valid;

/// Kinds of bad per-body settings, one bit each, so that each is reported
/// once while it stays bad.
const BAD_SUBSTEPS: u8 = 1;
const BAD_THRESHOLD: u8 = 2;
const BAD_RADIUS: u8 = 4;

/// Stage 1: every body not left out for an error, as a [`Node`], with its
/// per-body settings checked (a bad value is reported once while it stays
/// bad; fixed and broken again, it is reported again).
pub(super) fn bodies(p: &mut Rebuild) -> Scene {
    let default_speed = p.sleep.threshold();
    let mut nodes = Vec::new();
    let mut node_of = EntityHashMap::<u32>::default();
    for (
        entity,
        body,
        _,
        _,
        sleeping,
        substeps,
        (auto, implicit),
        no_sleep,
        (threshold, reported),
        anchor,
        radius,
        rest,
        material,
        groups,
    ) in &p.bodies
    {
        let was = reported.map_or(0, |reported| reported.0);
        let mut now_bad = 0u8;
        let mut report = |bit: u8, issue| {
            now_bad |= bit;
            if was & bit == 0 {
                p.reporter.warn(entity, issue);
            }
        };
        let substeps = substeps.map(|&Substeps(k)| {
            let used = k.clamp(1, PhysicsSettings::MAX_SUBSTEPS);
            if used != k {
                report(
                    BAD_SUBSTEPS,
                    PhysicsIssue::InvalidSubsteps { substeps: k, used },
                );
            }
            used
        });
        let speed = threshold.map_or(default_speed, |&SleepThreshold(t)| {
            if sanitize(t) != t {
                report(
                    BAD_THRESHOLD,
                    PhysicsIssue::InvalidSleepThreshold { threshold: t },
                );
            }
            sanitize(t)
        });
        let radius = radius.and_then(|&radius| {
            if radius.is_valid() {
                Some(radius.0)
            } else {
                report(BAD_RADIUS, PhysicsIssue::InvalidRadius { radius: radius.0 });
                None
            }
        });
        if now_bad != was {
            let mut commands = p.reporter.commands().entity(entity);
            if now_bad == 0 {
                commands.try_remove::<SettingsReported>();
            } else {
                commands.try_insert(SettingsReported(now_bad));
            }
        }
        node_of.insert(entity, nodes.len() as u32);
        nodes.push(Node {
            entity,
            inv_mass: body.inv_mass,
            dynamic: body.is_dynamic(),
            sleeping: sleeping.filter(|s| !s.is_request()).map(|s| s.since),
            asks_sleep: sleeping.is_some_and(Sleeping::is_request),
            anchor_asleep: anchor,
            changed: body.last_changed(),
            substeps,
            auto,
            implicit,
            no_sleep,
            sleep_speed2: speed * speed,
            radius,
            material: material.map(|&m| m.into()),
            groups: groups.copied().unwrap_or_default(),
            pos: body.position.into(),
            vel: body.velocity.into(),
            valid: state_is_valid(&body),
            touching: false,
            rest_time: rest.seconds(),
            k_sum: 0.0,
            c_sum: 0.0,
        });
    }
    let union = UnionFind::new(nodes.len());
    Scene {
        nodes,
        node_of,
        links: Vec::new(),
        rods: Vec::new(),
        angles: Vec::new(),
        union,
    }
}

/// Stage 2: springs and rods, each checked (a bad one is reported and left
/// out), in entity order whatever the tables' order (so the sums over a
/// body's springs do not depend on how the scene was edited); joins
/// between dynamic bodies join their islands; springs add to their ends'
/// stiffness bounds. A moved or removed anchor asks to wake the islands of
/// the joins it ends.
pub(super) fn joins(p: &mut Rebuild, mut scene: Scene) -> Scene {
    let mut anchor_wakes = EntityHashMap::<WakeCause>::default();
    p.requests.wakes.retain(|&(target, cause)| match target {
        WakeTarget::Anchor(anchor) => {
            anchor_wakes.entry(anchor).or_insert(cause);
            false
        }
        _ => true,
    });
    let mut springs: Vec<_> = p.springs.iter().map(|(e, s)| (e, *s)).collect();
    springs.sort_unstable_by_key(|&(entity, _)| entity);
    for (entity, spring) in springs {
        wake_other_ends(p, &anchor_wakes, spring.a, spring.b);
        if let Err(issue) = validate_spring(&spring, &p.has_body, p.entities) {
            p.reporter.reject(entity, issue);
            continue;
        }
        let Some((a, b)) = join(&mut scene, spring.a, spring.b) else {
            continue;
        };
        let (da, db) = (
            scene.nodes[a as usize].dynamic,
            scene.nodes[b as usize].dynamic,
        );
        let weight = if da && db { 2.0 } else { 1.0 };
        for (end, dynamic) in [(a, da), (b, db)] {
            if dynamic {
                scene.nodes[end as usize].k_sum += weight * spring.stiffness;
                scene.nodes[end as usize].c_sum += weight * spring.damping;
            }
        }
        scene.links.push(Link {
            entity,
            a,
            b,
            row: SpringRow {
                a,
                b,
                rest: spring.rest_length,
                k: spring.stiffness,
                c: spring.damping,
            },
        });
    }
    let mut rods: Vec<_> = p.rods.iter().map(|(e, r)| (e, *r)).collect();
    rods.sort_unstable_by_key(|&(entity, _)| entity);
    for (entity, rod) in rods {
        wake_other_ends(p, &anchor_wakes, rod.a, rod.b);
        let checked =
            validate_ends(rod.a, rod.b, &p.has_body, p.entities).and_then(|()| validate_rod(&rod));
        if let Err(issue) = checked {
            p.reporter.reject(entity, issue);
            continue;
        }
        if let Some((a, b)) = join(&mut scene, rod.a, rod.b) {
            scene.rods.push(RodLink {
                a,
                b,
                min: rod.length,
                max: rod.length,
            });
        }
    }
    limits(p, &mut scene, &anchor_wakes);
    scene
}

/// Distance and angle limits, each checked, in entity order, read as rods
/// with two bounds and as angle links; they join islands as rods do.
fn limits(p: &mut Rebuild, scene: &mut Scene, anchor_wakes: &EntityHashMap<WakeCause>) {
    let mut limits: Vec<_> = p.limits.iter().map(|(e, l)| (e, *l)).collect();
    limits.sort_unstable_by_key(|&(entity, _)| entity);
    for (entity, limit) in limits {
        wake_other_ends(p, anchor_wakes, limit.a, limit.b);
        if let Err(issue) = validate_limit(&limit, &p.has_body, p.entities) {
            p.reporter.reject(entity, issue);
            continue;
        }
        if let Some((a, b)) = join(scene, limit.a, limit.b) {
            scene.rods.push(RodLink {
                a,
                b,
                min: limit.min,
                max: limit.max,
            });
        }
    }
    let mut angles: Vec<_> = p.angle_limits.iter().map(|(e, l)| (e, *l)).collect();
    angles.sort_unstable_by_key(|&(entity, _)| entity);
    for (entity, limit) in angles {
        for (end, other) in limit.pairs() {
            wake_other_ends(p, anchor_wakes, end, other);
        }
        if let Err(issue) = validate_angle(&limit, &p.has_body, p.entities) {
            p.reporter.reject(entity, issue);
            continue;
        }
        let (Some(&a), Some(&pivot), Some(&b)) = (
            scene.node_of.get(&limit.a),
            scene.node_of.get(&limit.pivot),
            scene.node_of.get(&limit.b),
        ) else {
            continue;
        };
        let dynamic = [a, pivot, b].map(|i| scene.nodes[i as usize].dynamic);
        if !dynamic.contains(&true) {
            continue;
        }
        for (x, y) in [(a, pivot), (pivot, b), (a, b)] {
            if scene.nodes[x as usize].dynamic && scene.nodes[y as usize].dynamic {
                scene.union.union(x, y);
            }
        }
        scene.angles.push(super::AngleLink {
            a,
            p: pivot,
            b,
            min: limit.min,
            max: limit.max,
            axis: limit.axis.normalize().into(),
        });
    }
}

/// The nodes of a join's two ends, if both are valid bodies and one is
/// dynamic (an end that is itself invalid was reported already; the join
/// waits for it); joins their islands when both are dynamic.
fn join(scene: &mut Scene, a: Entity, b: Entity) -> Option<(u32, u32)> {
    let (&a, &b) = (scene.node_of.get(&a)?, scene.node_of.get(&b)?);
    let (da, db) = (
        scene.nodes[a as usize].dynamic,
        scene.nodes[b as usize].dynamic,
    );
    if da && db {
        scene.union.union(a, b);
    }
    (da || db).then_some((a, b))
}

/// A join one of whose ends is a moved or removed anchor asks to wake the
/// island of its other end.
fn wake_other_ends(p: &mut Rebuild, anchors: &EntityHashMap<WakeCause>, a: Entity, b: Entity) {
    if anchors.is_empty() {
        return;
    }
    for (end, other) in [(a, b), (b, a)] {
        if let Some(&cause) = anchors.get(&end) {
            p.requests.wakes.push((WakeTarget::Body(other), cause));
        }
    }
}

//! The rebuild's island stages: find the islands, apply the requests,
//! decide each island's sleep and pass count.

use bevy::ecs::change_detection::Tick;
use bevy::prelude::*;

use super::{Build, Decided, Islands, Rebuild, Scene};
use crate::data::islands::Sleeping;
use crate::data::requests::{WakeCause, WakeTarget};
use crate::data::settings::PhysicsSettings;
use crate::kernels::stability::SpringStability;
use crate::solver::IslandState;
use crate::solver::report::unstable;
use crate::solver::sleep::fall_asleep;

/// Stage 3: the islands (sets of dynamic bodies joined directly or through
/// other dynamic bodies), numbered in the order of their first body, and
/// what their bodies and springs say: substeps, sleep, resting time, the
/// stability bound and the stiffest spring. A fixed anchor moved since its
/// sleeping island fell asleep wakes it.
pub(super) fn find(p: &mut Rebuild, scene: &mut Scene) -> Islands {
    let n = scene.nodes.len();
    let mut island_of = vec![u32::MAX; n];
    let mut island_of_root = vec![u32::MAX; n];
    let mut sizes = Vec::<usize>::new();
    for i in 0..n {
        if scene.nodes[i].dynamic {
            let root = scene.union.find(i as u32) as usize;
            if island_of_root[root] == u32::MAX {
                island_of_root[root] = sizes.len() as u32;
                sizes.push(0);
            }
            island_of[i] = island_of_root[root];
            sizes[island_of[i] as usize] += 1;
        }
    }
    let mut builds: Vec<Build> = Vec::with_capacity(sizes.len());
    let mut start = 0;
    for &size in &sizes {
        builds.push(Build {
            members: start..start,
            wake: None,
            sleep_request: false,
            explicit: None,
            auto: false,
            implicit: false,
            no_sleep: false,
            all_asleep: true,
            any_asleep: false,
            since: Tick::new(0),
            timer: f32::INFINITY,
            stability: SpringStability::new(0.0, 0.0, 0.0),
            touching: false,
            stiffest: None,
        });
        start += size;
    }
    let now = p.ticks.this_run();
    let mut members = vec![0u32; start];
    for (i, &island) in island_of.iter().enumerate().take(n) {
        let Some(b) = builds.get_mut(island as usize) else {
            continue;
        };
        members[b.members.end] = i as u32;
        b.members.end += 1;
        let node = &scene.nodes[i];
        b.explicit = b.explicit.max(node.substeps);
        b.auto |= node.auto;
        b.implicit |= node.implicit;
        b.touching |= node.touching;
        b.no_sleep |= node.no_sleep;
        b.sleep_request |= node.asks_sleep;
        b.all_asleep &= node.sleeping.is_some();
        b.any_asleep |= node.sleeping.is_some();
        if let Some(since) = node.sleeping
            && since.is_newer_than(b.since, now)
        {
            b.since = since;
        }
        b.timer = b.timer.min(node.rest_time);
        b.stability.omega_squared = b.stability.omega_squared.max(node.k_sum * node.inv_mass);
        b.stability.gamma = b.stability.gamma.max(node.c_sum * node.inv_mass);
    }
    let mut islands = Islands {
        island_of,
        builds,
        members,
    };
    for link in &scene.links {
        let island = islands.of_join(scene, link.a, link.b) as usize;
        let b = &mut islands.builds[island];
        let (a_node, b_node) = (&scene.nodes[link.a as usize], &scene.nodes[link.b as usize]);
        let pair = link.row.k * (a_node.inv_mass + b_node.inv_mass);
        if b.stiffest.is_none_or(|(_, k)| pair > k) {
            b.stiffest = Some((link.entity, pair));
        }
        // A fixed body a sleeping island hangs from, moved since it fell
        // asleep.
        for (end, other) in [(a_node, b_node), (b_node, a_node)] {
            if !end.dynamic
                && b.wake.is_none()
                && other.sleeping.is_some()
                && end.changed.is_newer_than(b.since, now)
            {
                b.wake = Some(WakeCause::FixedBodyMoved(end.entity));
            }
        }
    }
    islands
}

/// Stage 4: the wake and sleep requests of hooks, commands and the wake
/// scan, each marked on its island (the first cause found wins).
pub(super) fn apply_requests(p: &mut Rebuild, scene: &Scene, islands: &mut Islands) {
    let island_of = &islands.island_of;
    let mark = |builds: &mut Vec<Build>, entity: &Entity, cause: WakeCause| {
        if let Some(&i) = scene.node_of.get(entity)
            && let Some(b) = builds.get_mut(island_of[i as usize] as usize)
            && b.wake.is_none()
        {
            b.wake = Some(cause);
        }
    };
    for (target, cause) in core::mem::take(&mut p.requests.wakes) {
        match target {
            WakeTarget::Body(entity) => mark(&mut islands.builds, &entity, cause),
            WakeTarget::Island(old) => {
                if let Some(old) = p.solver.islands.get(old as usize) {
                    for entity in &p.solver.island_members[old.members.clone()] {
                        mark(&mut islands.builds, entity, cause);
                    }
                }
            }
            WakeTarget::All => {
                for b in &mut islands.builds {
                    b.wake.get_or_insert(cause);
                }
            }
            WakeTarget::Anchor(_) => {}
        }
    }
    for entity in core::mem::take(&mut p.requests.sleeps) {
        if let Some(&i) = scene.node_of.get(&entity)
            && let Some(b) = islands.builds.get_mut(island_of[i as usize] as usize)
        {
            b.sleep_request = true;
        }
    }
}

/// Stage 5: each island asleep or awake (waking or putting to sleep those
/// asked to, with their messages), its pass count (explicit, automatic or
/// the default) and its stability load, with one warning per spring while
/// its island is past the limit.
pub(super) fn decide(p: &mut Rebuild, scene: &Scene, islands: &Islands) -> Decided {
    let now = p.ticks.this_run();
    let timestep = p.time.timestep();
    let h = timestep.as_secs_f32();
    let mut decided = Decided {
        states: Vec::with_capacity(islands.builds.len()),
        passes: Vec::with_capacity(islands.builds.len()),
        implicit: Vec::with_capacity(islands.builds.len()),
        loads: Vec::with_capacity(islands.builds.len()),
        members: Vec::with_capacity(islands.members.len()),
    };
    let most = PhysicsSettings::most_passes(timestep);
    let mut wanted = 1;
    for b in &islands.builds {
        let bodies = || {
            islands.members[b.members.clone()]
                .iter()
                .map(|&i| scene.nodes[i as usize].entity)
        };
        let sleeping = sleeps(p, scene, islands, b, now);
        let asked = pass_count(p, b, h);
        wanted = wanted.max(asked);
        let passes = asked.min(most);
        let pass_h = (timestep / passes).as_secs_f32();
        // An implicit island is stable at any step: no share of a limit.
        let load = if b.implicit {
            0.0
        } else {
            b.stability.load(pass_h)
        };
        if let Some((spring, _)) = b.stiffest {
            // An implicit island is stable at any load.
            if load < 1.0 || b.implicit {
                p.solver.unstable_reported.remove(&spring);
            } else if p.solver.unstable_reported.insert(spring) {
                p.reporter.warn(spring, unstable(&b.stability, pass_h, h));
            }
        }
        let start = decided.members.len();
        decided.members.extend(bodies());
        decided.states.push(IslandState {
            members: start..decided.members.len(),
            slots: 0..0,
            sleeping,
            since: if sleeping && !b.any_asleep {
                now
            } else {
                b.since
            },
            can_sleep: !b.no_sleep,
            timer: if sleeping || b.wake.is_some() || !b.timer.is_finite() {
                0.0
            } else {
                b.timer
            },
            touching: b.touching,
        });
        decided.passes.push(passes);
        decided.implicit.push(b.implicit);
        decided.loads.push(load);
    }
    report_short_passes(p, wanted, most);
    decided
}

/// Warns once per fixed timestep and pass count when islands ask for more
/// passes than the timestep has nanoseconds (a pass of zero length would
/// divide by zero).
fn report_short_passes(p: &mut Rebuild, wanted: u32, most: u32) {
    let timestep = p.time.timestep();
    if wanted <= most {
        p.solver.short_passes_reported = None;
    } else if p.solver.short_passes_reported != Some((timestep, wanted)) {
        p.solver.short_passes_reported = Some((timestep, wanted));
        warn!(
            "bevy_euler_physics: the fixed timestep of {timestep:?} cannot be cut into {wanted} passes (each must be at least 1 ns); using {most}"
        );
    }
}

/// Whether an island sleeps after this rebuild. An island with a sleeping
/// body wakes whole (with an [`IslandWoke`](crate::IslandWoke)) unless all
/// its bodies sleep and nothing woke it; an awake island asked to sleep (by
/// a command or a `Sleeping` your code inserted) falls asleep whole (with
/// an [`IslandSlept`](crate::IslandSlept)) unless a body has
/// `SleepingDisabled`. A `Sleeping` your code inserted on an island that
/// stays awake is taken off.
fn sleeps(p: &mut Rebuild, scene: &Scene, islands: &Islands, b: &Build, now: Tick) -> bool {
    let members = &islands.members[b.members.clone()];
    let bodies = || members.iter().map(|&i| scene.nodes[i as usize].entity);
    if b.any_asleep && b.all_asleep && b.wake.is_none() {
        return true;
    }
    if !b.any_asleep && b.sleep_request && !b.no_sleep {
        for entity in bodies() {
            fall_asleep(p.reporter.commands(), entity, now);
        }
        p.slept.write(crate::data::islands::IslandSlept {
            bodies: bodies().collect(),
        });
        return true;
    }
    for &i in members {
        let node = &scene.nodes[i as usize];
        if node.sleeping.is_some() || node.asks_sleep {
            p.reporter
                .commands()
                .entity(node.entity)
                .try_remove::<Sleeping>();
        }
    }
    if b.any_asleep {
        p.woke.write(crate::data::islands::IslandWoke {
            bodies: bodies().collect(),
            cause: b.wake.unwrap_or(WakeCause::Joined),
        });
    }
    false
}

/// An island's pass count: the largest explicit [`Substeps`] of its
/// bodies, or the default; with automatic substeps, at least what keeps
/// its load within the target; with round bodies touching each other, at
/// least [`ConstraintSettings::contact_substeps`].
///
/// [`Substeps`]: crate::Substeps
/// [`ConstraintSettings::contact_substeps`]: crate::ConstraintSettings::contact_substeps
fn pass_count(p: &Rebuild, b: &Build, h: f32) -> u32 {
    let settings = &*p.settings;
    // An implicit island needs no more passes for its springs.
    let auto = !b.implicit && (b.auto || (settings.auto_substeps && b.explicit.is_none()));
    let base = b
        .explicit
        .unwrap_or(if auto { 1 } else { settings.passes() });
    let passes = if auto {
        base.max(
            b.stability
                .substeps_for_load(h, settings.target_load(), settings.auto_cap()),
        )
    } else {
        base
    };
    if b.touching {
        let contact = p.constraints.contact_substeps;
        passes.max(contact.clamp(1, PhysicsSettings::MAX_SUBSTEPS))
    } else {
        passes
    }
}

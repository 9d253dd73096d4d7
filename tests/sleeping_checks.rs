//! Checks that do not sleep: every report of the crate (each
//! [`PhysicsIssue`]) comes alike whether the bodies and joins it concerns
//! are awake or asleep. Each case edits a rope hanging from a fixed
//! anchor, once while the rope is awake and once while it sleeps, and
//! expects the same reports, naming the same entities, within the same
//! number of steps.
//!
//! Bad input is reported whatever the island does. The reports about how
//! an island steps (an implicit solve that did not converge or failed,
//! energy growth) need the island to step; their edits include a push,
//! which wakes a sleeping island as it would in a game.

mod common;

use bevy::prelude::*;
use bevy_euler_physics::prelude::*;
use common::*;

const LINKS: usize = 8;
const MASS: f32 = 0.5;
const K: f32 = 200.0;
const REST: f32 = 0.3;

/// The anchor, the bodies down the rope, and the springs between them.
struct Chain {
    anchor: Entity,
    bodies: Vec<Entity>,
    springs: Vec<Entity>,
}

/// An undamped rope of [`LINKS`] bodies hanging straight down at rest
/// length (it sways a little under gravity; it sleeps only when asked).
fn rope(app: &mut App, extra: impl Bundle + Clone) -> Chain {
    let anchor = spawn(app, Body::fixed(Vec3::ZERO));
    let (mut bodies, mut springs, mut last) = (Vec::new(), Vec::new(), anchor);
    for i in 1..=LINKS {
        let e = spawn(
            app,
            (
                Body::new(MASS).with_position(Vec3::new(0.0, -REST * i as f32, 0.0)),
                extra.clone(),
            ),
        );
        springs.push(spawn(app, Spring::new(last, e, REST, K)));
        bodies.push(e);
        last = e;
    }
    Chain {
        anchor,
        bodies,
        springs,
    }
}

/// One check: an edit of the rope, the issue it must bring, and for how
/// many steps to watch.
struct Case {
    name: &'static str,
    /// The rope's bodies have `ImplicitSprings`.
    implicit: bool,
    /// The report names the island by one of its bodies or springs, not
    /// (necessarily) the entity `edit` returns.
    island_wide: bool,
    /// Makes the bad input (or the push) on the rope; returns the entity
    /// the report must name.
    edit: fn(&mut App, &Chain) -> Entity,
    expect: fn(&PhysicsIssue) -> bool,
    steps: usize,
}

fn case(
    name: &'static str,
    edit: fn(&mut App, &Chain) -> Entity,
    expect: fn(&PhysicsIssue) -> bool,
) -> Case {
    Case {
        name,
        implicit: false,
        island_wide: false,
        edit,
        expect,
        steps: 10,
    }
}

impl Case {
    /// On a rope whose bodies have `ImplicitSprings`.
    fn on_implicit_rope(mut self) -> Self {
        self.implicit = true;
        self
    }

    /// Named by any body or spring of the rope (see [`Case::island_wide`]).
    fn island_wide(mut self) -> Self {
        self.island_wide = true;
        self
    }

    /// Watched for `steps` steps.
    fn steps(mut self, steps: usize) -> Self {
        self.steps = steps;
        self
    }
}

/// Reinserts the rope's last spring with `f` applied to it.
fn respring(app: &mut App, rope: &Chain, f: fn(Spring) -> Spring) -> Entity {
    let e = *rope.springs.last().unwrap();
    let spring = *app.world().get::<Spring>(e).unwrap();
    app.world_mut().entity_mut(e).insert(f(spring));
    e
}

fn cases() -> Vec<Case> {
    use PhysicsIssue as I;
    vec![
        case(
            "a negative mass written",
            |app, r| {
                body_mut(app, r.bodies[3]).inv_mass = -1.0;
                r.bodies[3]
            },
            |i| matches!(i, I::InvalidMass { .. }),
        ),
        case(
            "a NaN velocity written",
            |app, r| {
                body_mut(app, r.bodies[3]).velocity = Vec3::NAN;
                r.bodies[3]
            },
            |i| matches!(i, I::NonFinite { .. }),
        ),
        case(
            "a negative Damping on a body",
            |app, r| {
                app.world_mut()
                    .entity_mut(r.bodies[3])
                    .insert(Damping(-1.0));
                r.bodies[3]
            },
            |i| matches!(i, I::InvalidDamping { .. }),
        ),
        case(
            "a NaN Damping on the anchor",
            |app, r| {
                app.world_mut()
                    .entity_mut(r.anchor)
                    .insert(Damping(f32::NAN));
                r.anchor
            },
            |i| matches!(i, I::InvalidDamping { .. }),
        ),
        case(
            "a negative Damping on the anchor, changed in place",
            |app, r| {
                app.world_mut().entity_mut(r.anchor).insert(Damping(0.5));
                step(app, 1);
                app.world_mut().get_mut::<Damping>(r.anchor).unwrap().0 = -1.0;
                r.anchor
            },
            |i| matches!(i, I::InvalidDamping { .. }),
        ),
        case(
            "a spring to a despawned entity",
            |app, r| {
                let gone = app.world_mut().spawn_empty().id();
                app.world_mut().despawn(gone);
                spawn(app, Spring::new(r.bodies[7], gone, REST, K))
            },
            |i| matches!(i, I::MissingEndpoint { .. }),
        ),
        case(
            "a spring to an entity without a body",
            |app, r| {
                let bodiless = app.world_mut().spawn_empty().id();
                spawn(app, Spring::new(r.bodies[7], bodiless, REST, K))
            },
            |i| matches!(i, I::EndpointWithoutBody { .. }),
        ),
        case(
            "a spring from a body to itself",
            |app, r| spawn(app, Spring::new(r.bodies[7], r.bodies[7], REST, K)),
            |i| matches!(i, I::SelfSpring),
        ),
        case(
            "a rod of negative length",
            |app, r| spawn(app, DistanceConstraint::new(r.bodies[5], r.bodies[7], -1.0)),
            |i| matches!(i, I::InvalidLength { .. }),
        ),
        case(
            "a negative Radius",
            |app, r| {
                app.world_mut().entity_mut(r.bodies[3]).insert(Radius(-1.0));
                r.bodies[3]
            },
            |i| matches!(i, I::InvalidRadius { .. }),
        ),
        case(
            "a negative Radius, changed in place",
            |app, r| {
                app.world_mut().entity_mut(r.bodies[3]).insert(Radius(0.01));
                step(app, 1);
                app.world_mut().get_mut::<Radius>(r.bodies[3]).unwrap().0 = -1.0;
                r.bodies[3]
            },
            |i| matches!(i, I::InvalidRadius { .. }),
        ),
        case(
            "a negative stiffness",
            |app, r| {
                respring(app, r, |s| Spring {
                    stiffness: -5.0,
                    ..s
                })
            },
            |i| matches!(i, I::InvalidStiffness { .. }),
        ),
        case(
            "a negative spring damping",
            |app, r| respring(app, r, |s| s.with_damping(-1.0)),
            |i| matches!(i, I::InvalidSpringDamping { .. }),
        ),
        case(
            "a NaN rest length",
            |app, r| {
                respring(app, r, |s| Spring {
                    rest_length: f32::NAN,
                    ..s
                })
            },
            |i| matches!(i, I::InvalidRestLength { .. }),
        ),
        case(
            "a spring too stiff for the step",
            |app, r| {
                respring(app, r, |s| Spring {
                    stiffness: 1e6,
                    ..s
                })
            },
            |i| matches!(i, I::Unstable { .. }),
        ),
        // Named by the island's stiffest spring (all are alike here).
        case(
            "a timestep too long for the rope",
            |app, r| {
                app.insert_resource(Time::<Fixed>::from_hz(4.0));
                r.springs[0]
            },
            |i| matches!(i, I::Unstable { .. }),
        )
        .island_wide(),
        case(
            "zero substeps",
            |app, r| {
                app.world_mut().entity_mut(r.bodies[3]).insert(Substeps(0));
                r.bodies[3]
            },
            |i| matches!(i, I::InvalidSubsteps { .. }),
        ),
        case(
            "a negative sleep threshold",
            |app, r| {
                app.world_mut()
                    .entity_mut(r.bodies[3])
                    .insert(SleepThreshold(-1.0));
                r.bodies[3]
            },
            |i| matches!(i, I::InvalidSleepThreshold { .. }),
        ),
        case(
            "a NaN sleep threshold, changed in place",
            |app, r| {
                app.world_mut()
                    .entity_mut(r.bodies[3])
                    .insert(SleepThreshold(0.01));
                step(app, 1);
                app.world_mut()
                    .get_mut::<SleepThreshold>(r.bodies[3])
                    .unwrap()
                    .0 = f32::NAN;
                r.bodies[3]
            },
            |i| matches!(i, I::InvalidSleepThreshold { .. }),
        ),
        case(
            "a distance limit with min > max",
            |app, r| spawn(app, DistanceLimit::new(r.bodies[5], r.bodies[7], 2.0, 1.0)),
            |i| matches!(i, I::InvalidLimit { .. }),
        ),
        case(
            "an angle limit with min > max",
            |app, r| {
                spawn(
                    app,
                    AngleLimit::new(r.bodies[5], r.bodies[6], r.bodies[7], 2.0, 1.0),
                )
            },
            |i| matches!(i, I::InvalidLimit { .. }),
        ),
        case(
            "an angle limit about a zero axis",
            |app, r| {
                let limit = AngleLimit::new(r.bodies[5], r.bodies[6], r.bodies[7], -1.0, 1.0)
                    .with_axis(Vec3::ZERO);
                spawn(app, limit)
            },
            |i| matches!(i, I::InvalidAxis { .. }),
        ),
        case(
            "the anchor pinned to an entity that is then despawned",
            |app, r| {
                let target = spawn(app, Transform::default());
                app.world_mut()
                    .entity_mut(r.anchor)
                    .insert(PinnedTo::new(target));
                step(app, 1);
                app.world_mut().despawn(target);
                r.anchor
            },
            |i| matches!(i, I::PinTargetInvalid { .. }),
        ),
        case(
            "a pin on a dynamic body",
            |app, r| {
                let target = spawn(app, Transform::default());
                app.world_mut()
                    .entity_mut(r.bodies[3])
                    .insert(PinnedTo::new(target));
                r.bodies[3]
            },
            |i| matches!(i, I::PinnedDynamicBody),
        ),
        case(
            "an implicit solve capped at one iteration, and a push",
            |app, r| {
                app.insert_resource(ImplicitSettings {
                    max_iterations: 1,
                    tolerance: 1e-9,
                    solver: ImplicitSolver::ConjugateGradients,
                    preconditioner: ImplicitPreconditioner::Jacobi,
                });
                body_mut(app, r.bodies[7]).velocity = Vec3::new(1.0, 0.0, 0.0);
                r.bodies[0]
            },
            |i| matches!(i, I::ImplicitNotConverged { .. }),
        )
        .on_implicit_rope()
        .island_wide(),
        case(
            "extreme but finite values that overflow an implicit solve",
            |app, r| {
                // Each value is valid; h²·k·v overflows f32 in the solve.
                respring(app, r, |s| Spring {
                    stiffness: 3e38,
                    ..s
                });
                body_mut(app, r.bodies[LINKS - 1]).velocity = Vec3::new(1e10, 0.0, 0.0);
                r.bodies[0]
            },
            |i| matches!(i, I::ImplicitFailed),
        )
        .on_implicit_rope()
        .island_wide(),
        case(
            "the rope released level, heating itself",
            |app, r| {
                for (i, &e) in r.bodies.iter().enumerate() {
                    let mut b = body_mut(app, e);
                    b.position = Vec3::new(REST * (i + 1) as f32, 0.0, 0.0);
                    b.velocity = Vec3::ZERO;
                }
                r.bodies[0]
            },
            |i| matches!(i, I::EnergyGrowth { .. }),
        )
        .island_wide()
        .steps(12_000),
    ]
}

/// The name of an issue's variant.
fn kind(issue: &PhysicsIssue) -> String {
    let debug = format!("{issue:?}");
    debug
        .split([' ', '{', '('])
        .next()
        .unwrap_or_default()
        .to_owned()
}

/// What was reported after the `from`th warning: each entity with the kind
/// of its issue, sorted.
fn reports_since(app: &App, from: usize) -> Vec<(Entity, String)> {
    let mut out: Vec<_> = warnings(app)[from..]
        .iter()
        .map(|w| (w.entity, kind(&w.issue)))
        .collect();
    out.sort();
    out
}

/// Runs `case` on a rope awake or asleep; the reports after the edit, and
/// whether the case's report came (on another entity of the rope for the
/// island-wide reports).
fn run(case: &Case, sleeping: bool) -> (Vec<(Entity, String)>, bool) {
    let mut app = app();
    let rope = if case.implicit {
        rope(&mut app, ImplicitSprings)
    } else {
        rope(&mut app, ())
    };
    step(&mut app, 2);
    if sleeping {
        app.world_mut()
            .entity_mut(rope.bodies[0])
            .insert(Sleeping::default());
        step(&mut app, 1);
    }
    let asleep = |app: &App| {
        rope.bodies
            .iter()
            .all(|&e| app.world().get::<Sleeping>(e).is_some())
    };
    assert_eq!(
        asleep(&app),
        sleeping,
        "{}: the rope is {}",
        case.name,
        if sleeping { "asleep" } else { "awake" }
    );
    let from = warnings(&app).len();
    let named = (case.edit)(&mut app, &rope);
    let mut came = false;
    for _ in 0..case.steps {
        step(&mut app, 1);
        came = warnings(&app)[from..].iter().any(|w| {
            (case.expect)(&w.issue)
                && (w.entity == named
                    || case.island_wide
                        && (rope.bodies.contains(&w.entity) || rope.springs.contains(&w.entity)))
        });
        if came && case.steps > 100 {
            break;
        }
    }
    (reports_since(&app, from), came)
}

#[test]
fn every_check_reports_alike_on_an_awake_and_a_sleeping_island() {
    let mut failures = Vec::new();
    for case in cases() {
        let (awake, came_awake) = run(&case, false);
        let (asleep, came_asleep) = run(&case, true);
        if !came_awake {
            failures.push(format!(
                "{}: not reported on the awake rope: {awake:?}",
                case.name
            ));
        }
        if !came_asleep {
            failures.push(format!(
                "{}: not reported on the sleeping rope: {asleep:?}",
                case.name
            ));
        }
        if awake != asleep {
            failures.push(format!("{}: awake {awake:?}, asleep {asleep:?}", case.name));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// Every issue kind of the crate has a case above.
#[test]
fn the_table_covers_every_issue() {
    let sample = |i: &PhysicsIssue| core::mem::discriminant(i);
    let e = Entity::PLACEHOLDER;
    let all = [
        PhysicsIssue::InvalidMass { inv_mass: -1.0 },
        PhysicsIssue::NonFinite {
            position: Vec3::NAN,
            velocity: Vec3::NAN,
        },
        PhysicsIssue::InvalidDamping { damping: -1.0 },
        PhysicsIssue::MissingEndpoint { endpoint: e },
        PhysicsIssue::EndpointWithoutBody { endpoint: e },
        PhysicsIssue::SelfSpring,
        PhysicsIssue::InvalidLength { length: -1.0 },
        PhysicsIssue::InvalidRadius { radius: -1.0 },
        PhysicsIssue::InvalidStiffness { stiffness: -1.0 },
        PhysicsIssue::InvalidSpringDamping { damping: -1.0 },
        PhysicsIssue::InvalidRestLength { rest_length: -1.0 },
        PhysicsIssue::Unstable {
            omega_h: 3.0,
            gamma_h: 0.0,
            substeps_needed: 2,
        },
        PhysicsIssue::InvalidSubsteps {
            substeps: 0,
            used: 1,
        },
        PhysicsIssue::InvalidSleepThreshold { threshold: -1.0 },
        PhysicsIssue::InvalidLimit { min: 2.0, max: 1.0 },
        PhysicsIssue::InvalidAxis { axis: Vec3::ZERO },
        PhysicsIssue::ImplicitNotConverged {
            iterations: 1,
            residual: 1.0,
        },
        PhysicsIssue::ImplicitFailed,
        PhysicsIssue::EnergyGrowth {
            gained: 1.0,
            kinetic: 1.0,
        },
        PhysicsIssue::PinTargetInvalid { target: e },
        PhysicsIssue::PinnedDynamicBody,
        PhysicsIssue::SoftMesh {
            problem: bevy_euler_physics::diagnostics::MeshProblem::Empty,
        },
        PhysicsIssue::Obstacle {
            problem: bevy_euler_physics::diagnostics::ObstacleProblem::IsABody,
        },
        PhysicsIssue::BadTie,
    ];
    // A new variant added to the enum without a case fails to compile
    // here (the match is exhaustive), and one without a case fails below.
    for issue in &all {
        match issue {
            PhysicsIssue::InvalidMass { .. }
            | PhysicsIssue::NonFinite { .. }
            | PhysicsIssue::InvalidDamping { .. }
            | PhysicsIssue::MissingEndpoint { .. }
            | PhysicsIssue::EndpointWithoutBody { .. }
            | PhysicsIssue::SelfSpring
            | PhysicsIssue::InvalidLength { .. }
            | PhysicsIssue::InvalidRadius { .. }
            | PhysicsIssue::InvalidStiffness { .. }
            | PhysicsIssue::InvalidSpringDamping { .. }
            | PhysicsIssue::InvalidRestLength { .. }
            | PhysicsIssue::Unstable { .. }
            | PhysicsIssue::InvalidSubsteps { .. }
            | PhysicsIssue::InvalidSleepThreshold { .. }
            | PhysicsIssue::InvalidLimit { .. }
            | PhysicsIssue::InvalidAxis { .. }
            | PhysicsIssue::ImplicitNotConverged { .. }
            | PhysicsIssue::ImplicitFailed
            | PhysicsIssue::EnergyGrowth { .. }
            | PhysicsIssue::PinTargetInvalid { .. }
            | PhysicsIssue::PinnedDynamicBody => {}
            // Said when a mesh asset is built into bodies, about the
            // asset and the settings, before there is an island to sleep:
            // `tests/soft_mesh.rs` covers each problem.
            PhysicsIssue::SoftMesh { .. } => continue,
            // About an obstacle, which never sleeps: checked at every
            // step's start, whatever sleeps; `tests/obstacles.rs` covers
            // each problem.
            PhysicsIssue::Obstacle { .. } => continue,
            // About a tie: checked at every step's start for every
            // `TiedTo`, its body asleep or not; `tests/obstacles.rs`
            // covers it.
            PhysicsIssue::BadTie => continue,
        }
        let covered = cases().iter().any(|case| (case.expect)(issue));
        assert!(covered, "no case for {issue:?} ({:?})", sample(issue));
    }
}

//! Rods and contacts, solved on velocities by sequential impulses.
//!
//! After the kick and before the drift, each pass runs `iterations` rounds
//! over its rods and contacts, in a fixed order (so the result does not
//! depend on the thread count):
//!
//! - **Rod** between `a` and `b` of length `L`, along `n = (x_b − x_a)/|…|`:
//!   the relative velocity along `n` is driven to
//!   `(√(L² − h²·v_t²) − L)/h − β·C/h`, where `v_t` is the relative
//!   tangential velocity (the first term cancels the lengthening a turn of
//!   `h·v_t` causes), `C = |x_b − x_a| − L` the length error and `β` the
//!   position bias. The impulse is shared by inverse mass, so momentum is
//!   conserved.
//! - **Contact** of a body of radius `r` with a half-space `n·x ≥ d`: with
//!   the gap `s = n·x − d − r` and the normal speed `v_n = n·v`, a contact
//!   exists when `s + h·v_n < 0` (the drift would cross the plane). The
//!   normal speed becomes at least `−s/h` (reach the plane, not cross it),
//!   `−e·v_n` when approaching faster than the bounce threshold
//!   (restitution `e`), and at least `−β·s/h` when already inside. Coulomb
//!   friction caps the tangential impulse at `μ` times the normal one, so
//!   sliding bodies stop and resting ones stay.

use bevy::math::Vec3A;

/// A rod in the solver's arrays.
#[derive(Debug, Clone, Copy)]
pub struct RodRow {
    pub a: u32,
    pub b: u32,
    pub length: f32,
}

/// A body with a radius in the solver's arrays.
#[derive(Debug, Clone, Copy)]
pub struct RoundRow {
    pub slot: u32,
    pub radius: f32,
}

/// A half-space `normal · x ≥ offset`, with a unit normal.
#[derive(Debug, Clone, Copy)]
pub struct PlaneRow {
    pub normal: Vec3A,
    pub offset: f32,
    /// In `[0, 1]`.
    pub restitution: f32,
    /// Not negative.
    pub friction: f32,
}

/// One contact of one pass.
#[derive(Debug, Clone)]
pub struct Contact {
    slot: usize,
    normal: Vec3A,
    target: f32,
    friction: f32,
    normal_impulse: f32,
    friction_impulse: Vec3A,
}

/// How the rounds run.
#[derive(Debug, Clone, Copy)]
pub struct Rounds {
    pub h: f32,
    pub iterations: u32,
    /// The position bias `β`, in `[0, 1]`.
    pub beta: f32,
    pub bounce_threshold: f32,
}

/// The state the rounds read (`vel` is corrected in place).
pub struct Bodies<'a> {
    pub pos: &'a [Vec3A],
    pub vel: &'a mut [Vec3A],
    pub valid: &'a [bool],
    pub inv_mass: &'a [f32],
}

/// Finds the contacts of `rounds` with `planes` into `contacts`: bodies
/// whose drift would cross a plane, and (speculatively) bodies near one,
/// which the rods may push into it during the rounds. Fixed bodies have no
/// contacts.
pub fn find_contacts(
    rounds: &[RoundRow],
    planes: &[PlaneRow],
    bodies: &Bodies,
    solve: &Rounds,
    contacts: &mut Vec<Contact>,
) {
    let (h, beta) = (solve.h, solve.beta);
    let (pos, vel) = (bodies.pos, &*bodies.vel);
    contacts.clear();
    for round in rounds {
        let i = round.slot as usize;
        if !bodies.valid[i] || bodies.inv_mass[i] <= 0.0 {
            continue;
        }
        for plane in planes {
            let gap = plane.normal.dot(pos[i]) - plane.offset - round.radius;
            let approach = plane.normal.dot(vel[i]);
            let hits = gap + h * approach < 0.0;
            // A speculative contact only limits the approach to what closes
            // the gap.
            if !hits && gap >= round.radius + h * vel[i].length() {
                continue;
            }
            let bounce = if hits && approach < -solve.bounce_threshold {
                -plane.restitution * approach
            } else {
                0.0
            };
            let reach = if gap >= 0.0 {
                -gap / h
            } else {
                -beta * gap / h
            };
            contacts.push(Contact {
                slot: i,
                normal: plane.normal,
                // Without a bounce, the approach may close the gap and no
                // more; with one, the body leaves at the bounce speed.
                target: if bounce > 0.0 {
                    bounce.max(reach)
                } else {
                    reach
                },
                friction: plane.friction,
                normal_impulse: 0.0,
                friction_impulse: Vec3A::ZERO,
            });
        }
    }
}

/// `solve.iterations` rounds over `rods`, then `contacts`, each round.
pub fn solve(rods: &[RodRow], contacts: &mut [Contact], bodies: &mut Bodies, solve: &Rounds) {
    for _ in 0..solve.iterations {
        for rod in rods {
            solve_rod(rod, bodies, solve);
        }
        for contact in contacts.iter_mut() {
            solve_contact(contact, bodies.vel);
        }
    }
}

/// One rod's impulse.
#[inline]
fn solve_rod(rod: &RodRow, bodies: &mut Bodies, solve: &Rounds) {
    let (h, beta) = (solve.h, solve.beta);
    let (pos, vel, inv_mass) = (bodies.pos, &mut *bodies.vel, bodies.inv_mass);
    let (a, b) = (rod.a as usize, rod.b as usize);
    let w = inv_mass[a] + inv_mass[b];
    if !(bodies.valid[a] && bodies.valid[b]) || w <= 0.0 {
        return;
    }
    let d = pos[b] - pos[a];
    let length = d.length();
    if length <= 0.0 || !length.is_finite() {
        return;
    }
    let n = d / length;
    let error = length - rod.length;
    let relative = vel[b] - vel[a];
    let speed = n.dot(relative);
    // Turning lengthens a rod by about h²·v_t²/(2L) per pass; aim the
    // normal speed to undo that exactly, and a share β of the error
    // already there.
    let turn2 = (h * (relative - speed * n)).length_squared();
    let turning = ((rod.length * rod.length - turn2).max(0.0).sqrt() - rod.length) / h;
    let impulse = (turning - beta * error / h - speed) / w;
    vel[a] -= inv_mass[a] * impulse * n;
    vel[b] += inv_mass[b] * impulse * n;
}

/// One contact's normal and friction impulses, accumulated.
#[inline]
fn solve_contact(contact: &mut Contact, vel: &mut [Vec3A]) {
    let v = &mut vel[contact.slot];
    // Normal: accumulated, never pulling.
    let speed = contact.normal.dot(*v);
    let total = (contact.normal_impulse + contact.target - speed).max(0.0);
    *v += (total - contact.normal_impulse) * contact.normal;
    contact.normal_impulse = total;
    // Friction: accumulated, within the Coulomb cone.
    let tangential = *v - contact.normal.dot(*v) * contact.normal;
    let total = (contact.friction_impulse - tangential)
        .clamp_length_max(contact.friction * contact.normal_impulse);
    *v += total - contact.friction_impulse;
    contact.friction_impulse = total;
}

#[cfg(test)]
mod tests {
    use super::*;

    const ROUNDS: Rounds = Rounds {
        h: 0.01,
        iterations: 4,
        beta: 0.2,
        bounce_threshold: 0.5,
    };

    /// A rod between two free bodies conserves their momentum and leaves
    /// the relative speed along it that undoes the lengthening of the turn
    /// (`(√(L² − h²·v_t²) − L)/h`, the rod being at its length).
    #[test]
    fn a_rod_keeps_momentum_and_stops_stretching() {
        let pos = [Vec3A::ZERO, Vec3A::X];
        let mut vel = [Vec3A::new(-1.0, 0.5, 0.0), Vec3A::new(2.0, 0.0, 0.0)];
        let inv_mass = [1.0, 0.5];
        let momentum = |v: &[Vec3A]| v[0] / inv_mass[0] + v[1] / inv_mass[1];
        let before = momentum(&vel);
        let mut bodies = Bodies {
            pos: &pos,
            vel: &mut vel,
            valid: &[true, true],
            inv_mass: &inv_mass,
        };
        let rod = RodRow {
            a: 0,
            b: 1,
            length: 1.0,
        };
        solve(&[rod], &mut [], &mut bodies, &ROUNDS);
        assert!((momentum(&vel) - before).length() < 1e-5);
        let turning = ((1.0f32 - (ROUNDS.h * 0.5).powi(2)).sqrt() - 1.0) / ROUNDS.h;
        assert!(((vel[1] - vel[0]).x - turning).abs() < 1e-4);
    }

    /// A fixed body touching a plane gets no contact: its velocity is yours.
    #[test]
    fn fixed_bodies_have_no_contacts() {
        let pos = [Vec3A::ZERO];
        let vel = [Vec3A::new(0.0, -3.0, 0.0)];
        let bodies = Bodies {
            pos: &pos,
            vel: &mut vel.clone(),
            valid: &[true],
            inv_mass: &[0.0],
        };
        let plane = PlaneRow {
            normal: Vec3A::Y,
            offset: 0.0,
            restitution: 0.0,
            friction: 0.5,
        };
        let mut contacts = Vec::new();
        let round = RoundRow {
            slot: 0,
            radius: 0.1,
        };
        find_contacts(&[round], &[plane], &bodies, &ROUNDS, &mut contacts);
        assert!(contacts.is_empty());
    }

    /// A body falling onto a plane stops at it, without bouncing below the
    /// threshold.
    #[test]
    fn a_slow_contact_stops_at_the_plane() {
        let pos = [Vec3A::new(0.0, 0.1, 0.0)];
        let mut vel = [Vec3A::new(0.0, -0.4, 0.0)];
        let plane = PlaneRow {
            normal: Vec3A::Y,
            offset: 0.0,
            restitution: 1.0,
            friction: 0.0,
        };
        let round = RoundRow {
            slot: 0,
            radius: 0.1,
        };
        let mut contacts = Vec::new();
        let mut bodies = Bodies {
            pos: &pos,
            vel: &mut vel,
            valid: &[true],
            inv_mass: &[1.0],
        };
        find_contacts(&[round], &[plane], &bodies, &ROUNDS, &mut contacts);
        solve(&[], &mut contacts, &mut bodies, &ROUNDS);
        assert_eq!(vel[0].y, 0.0);
    }
}

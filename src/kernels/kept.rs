//! The forces pair contacts held over a step, laid out by slot so that the
//! next step finds each pair's in a few reads: its warm start.
//!
//! A contact holds a normal impulse and a friction impulse, accumulated
//! over the rounds of a pass. Kept as forces (the impulses of the step's
//! passes over the step's length), they carry over to a step of another
//! length or pass count.
//! [`Kept::lay_out`] files each pair under its smaller slot, with the
//! friction turned to point from the smaller slot's body to the larger's
//! one, so a pair found the other way round next step reads it back.

use bevy::math::Vec3A;

/// One pair contact's held forces: slots `a` and `b`, the normal force
/// pushing `b` away from `a`, and the friction force on `b`.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct HeldPair {
    pub a: u32,
    pub b: u32,
    pub normal: f32,
    pub friction: Vec3A,
}

/// One entry filed under its smaller slot: the larger slot and the forces,
/// friction on the larger slot's body.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
struct Entry {
    other: u32,
    normal: f32,
    friction: Vec3A,
}

/// Held forces by slot: those of pairs whose smaller slot is `s` are
/// `entries[start[s]..start[s + 1]]`. Empty, it finds nothing.
#[derive(Debug, Clone, Default)]
pub struct Kept {
    start: Vec<u32>,
    entries: Vec<Entry>,
}

impl Kept {
    /// Holds no pair.
    #[cfg(test)]
    pub const EMPTY: Kept = Kept {
        start: Vec::new(),
        entries: Vec::new(),
    };

    /// Forgets every pair.
    pub fn clear(&mut self) {
        self.start.clear();
        self.entries.clear();
    }

    /// Files `pairs` (slots below `slots`; a pair with a slot at or past
    /// it, or of one slot, is left out) by their smaller slot, in a
    /// counting sort: each slot's pairs keep their order in `pairs`. With
    /// no pairs it holds none and touches no slot.
    pub fn lay_out(&mut self, slots: usize, pairs: &[HeldPair]) {
        self.clear();
        // (A scene without touching pairs pays nothing per slot.)
        if pairs.is_empty() {
            return;
        }
        let fits = |p: &HeldPair| p.a != p.b && (p.a.max(p.b) as usize) < slots;
        self.start.resize(slots + 1, 0);
        for pair in pairs.iter().filter(|p| fits(p)) {
            self.start[pair.a.min(pair.b) as usize + 1] += 1;
        }
        for s in 0..slots {
            self.start[s + 1] += self.start[s];
        }
        self.entries
            .resize(self.start[slots] as usize, Entry::default());
        // `start[s]` moves on as slot `s`'s entries are written, and is
        // put back after.
        for pair in pairs.iter().filter(|p| fits(p)) {
            let (low, other, friction) = if pair.a < pair.b {
                (pair.a, pair.b, pair.friction)
            } else {
                (pair.b, pair.a, -pair.friction)
            };
            let at = &mut self.start[low as usize];
            self.entries[*at as usize] = Entry {
                other,
                normal: pair.normal,
                friction,
            };
            *at += 1;
        }
        for s in (1..=slots).rev() {
            self.start[s] = self.start[s - 1];
        }
        self.start[0] = 0;
    }

    /// The normal force and the friction force on `b` that the pair of `a`
    /// and `b` held, either way round; `None` when it held none.
    #[inline]
    pub fn find(&self, a: u32, b: u32) -> Option<(f32, Vec3A)> {
        let low = a.min(b) as usize;
        let range = self.start.get(low..low + 2)?;
        let entries = &self.entries[range[0] as usize..range[1] as usize];
        let entry = entries.iter().find(|e| e.other == a.max(b))?;
        let friction = if a < b {
            entry.friction
        } else {
            -entry.friction
        };
        Some((entry.normal, friction))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pair(a: u32, b: u32, normal: f32, friction: [f32; 3]) -> HeldPair {
        HeldPair {
            a,
            b,
            normal,
            friction: Vec3A::from_array(friction),
        }
    }

    #[test]
    fn each_pair_is_found_either_way_round_and_no_other() {
        let pairs = [
            pair(3, 1, 2.0, [1.0, 0.0, 0.0]),
            pair(0, 4, 5.0, [0.0, -1.0, 0.0]),
            pair(1, 4, 7.0, [0.0, 0.0, 3.0]),
            pair(2, 9, 1.0, [0.0; 3]),
            pair(2, 2, 1.0, [0.0; 3]),
        ];
        let mut kept = Kept::default();
        kept.lay_out(5, &pairs);
        // The friction is the force on the second slot named.
        assert_eq!(kept.find(3, 1), Some((2.0, Vec3A::X)));
        assert_eq!(kept.find(1, 3), Some((2.0, -Vec3A::X)));
        assert_eq!(kept.find(0, 4), Some((5.0, -Vec3A::Y)));
        assert_eq!(kept.find(4, 0), Some((5.0, Vec3A::Y)));
        assert_eq!(kept.find(1, 4), Some((7.0, 3.0 * Vec3A::Z)));
        // Pairs never held, or beyond the slots, or of one slot.
        for (a, b) in [(0, 1), (3, 4), (2, 9), (2, 2), (7, 8), (0, 3)] {
            assert_eq!(kept.find(a, b), None, "{a} {b}");
        }
        kept.clear();
        assert_eq!(kept.find(3, 1), None);
    }

    #[test]
    fn a_slots_pairs_keep_their_order() {
        // The same pair twice: the first filed is found.
        let pairs = [pair(0, 2, 1.0, [0.0; 3]), pair(2, 0, 9.0, [0.0; 3])];
        let mut kept = Kept::default();
        kept.lay_out(3, &pairs);
        assert_eq!(kept.find(0, 2).map(|f| f.0), Some(1.0));
    }
}

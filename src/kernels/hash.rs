//! A word-at-a-time hash for checksums of the physics state, defined here
//! rather than by the standard library so that equal states give equal
//! checksums on every platform and Rust version.

/// Rotate, xor, multiply (FxHash's step) per word, with a final avalanche
/// (SplitMix64's finaliser) so that one flipped bit anywhere changes about
/// half the output.
#[derive(Debug, Default)]
pub struct WordHash(u64);

impl WordHash {
    /// Adds `word`.
    pub fn write(&mut self, word: u64) {
        self.0 = (self.0.rotate_left(5) ^ word).wrapping_mul(0x517c_c1b7_2722_0a95);
    }

    /// The hash of the words written.
    pub fn finish(&self) -> u64 {
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
}

#[cfg(test)]
mod tests {
    use super::WordHash;

    /// The same words give the same hash; one flipped bit changes it.
    #[test]
    fn one_bit_changes_the_hash() {
        let hash = |words: &[u64]| {
            let mut h = WordHash::default();
            words.iter().for_each(|&w| h.write(w));
            h.finish()
        };
        assert_eq!(hash(&[1, 2, 3]), hash(&[1, 2, 3]));
        assert_ne!(hash(&[1, 2, 3]), hash(&[1, 2, 2]));
        assert_ne!(hash(&[1, 2, 3]), hash(&[3, 2, 1]));
    }
}

//! [`Spring`]: a damped spring between two bodies.
//!
//! A spring from `a` to `b` with direction `n = (x_b − x_a) / |x_b − x_a|`
//! pulls `a` with
//!
//! ```text
//! f = (k·(|x_b − x_a| − rest) + c·((v_b − v_a)·n)) · n
//! ```
//!
//! and pushes `b` with `−f`, so the pair's momentum is unchanged. Each
//! spring's force is computed into its own slot (in parallel for large
//! scenes), then added to its bodies in row order: the sums do not depend on
//! how many threads computed the slots.

pub use crate::data::joins::{Spring, SpringFrequency};

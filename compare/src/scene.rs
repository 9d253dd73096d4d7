//! The "ropes R×S" scene and its plain array loop, the reference every row
//! is measured against: the repository's benchmarks' own module
//! (`benches/common/mod.rs`), included by its path, so that this crate and
//! the benchmarks measure the same scene against the same loop.

#[path = "../../benches/common/mod.rs"]
mod common;

pub use common::{
    C, Counting, G, H, K, Plain, REST, SPACING, live_bytes, median, rope,
    single_threaded_fixed_main, swinging, time,
};

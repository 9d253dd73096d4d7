//! The kernels: pure functions on the solver's arrays, and nothing else.
//!
//! They know no ECS type and import nothing from the rest of the crate, so
//! they are the leaf of the module graph: the data layer may call them for
//! its own helpers (`Spring::force`), and the solver calls them for every
//! pass. Each is unit-tested on plain arrays at the bottom of its file.

pub mod batches;
pub mod broad;
pub mod chain;
pub mod constraints;
pub mod hash;
pub mod implicit;
pub mod integrate;
pub mod kept;
pub mod lanes;
pub mod ldlt;
#[cfg(feature = "soft-mesh")]
pub mod mesh;
pub mod multigrid;
pub mod origin;
pub mod parts;
pub mod shapes;
pub mod springs;
pub mod stability;
pub mod union_find;

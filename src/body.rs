//! [`Body`], [`Damping`], and the two integration passes of semi-implicit
//! Euler.
//!
//! For a body of inverse mass `w` under force `F`, one pass of step `h` is
//!
//! ```text
//! v ← v + h·(g + w·F)        kick            (IntegrateVelocities)
//! v ← v / (1 + h·c)          Padé damping    (IntegrateVelocities)
//! x ← x + h·v                drift, with the NEW velocity (IntegratePositions)
//! ```
//!
//! Using the new velocity for the drift is what makes the method symplectic:
//! it keeps the energy of an oscillator bounded while `ω·h < 2`, where
//! explicit Euler (drift with the old velocity) gains energy every step.
//!
//! Damping `dv/dt = −c·v` has the exact solution `v·e^(−c·h)` over a step; the
//! Padé approximant `1 / (1 + c·h)` of `e^(−c·h)` is positive and below one
//! for every `h > 0`, so damping never flips a velocity's sign nor adds
//! energy, however stiff. Kicking before damping makes the fixed point of
//! `v ← (v + h·g) / (1 + h·c)` exactly `g / c`: the terminal velocity is
//! right for every `h`.

pub use crate::data::body::{Body, Damping};

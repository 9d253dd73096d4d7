//! Forces: [`Gravity`] (a resource), [`ConstantForce`] and
//! [`AccumulatedForce`] (components).

pub use crate::data::forces::{AccumulatedForce, ConstantForce, Gravity};

//! Bad input: what is checked, how it is reported, and how it recovers.
//!
//! Nothing the user writes makes the step panic or spreads NaN. A body or
//! spring with invalid values is reported once — a `warn!` log and a
//! [`PhysicsWarning`] message, both naming the entity — and gets a
//! [`PhysicsError`] component that keeps it out of the step. The plugin
//! checks the entities that carry one at the start of every fixed step and
//! removes the component once the values are valid again.

pub use crate::data::issues::{PhysicsError, PhysicsIssue, PhysicsWarning};

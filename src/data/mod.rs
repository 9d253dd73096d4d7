//! The data layer: the public components, resources, sets and issue types,
//! with no behaviour beyond constructors and component hooks, which only
//! record requests for the solver ([`requests`]).
//!
//! Its files depend on each other bottom up: `requests` (the solver's marks
//! on entities and what hooks ask of it), `settings`, `forces`, `islands`,
//! `issues`, `drawing`, `body`, `joins`, `constraints`, `obstacles`; `origin` stands
//! apart (it imports none of them).

pub(crate) mod body;
pub(crate) mod constraints;
pub(crate) mod contacts;
pub(crate) mod drawing;
pub(crate) mod forces;
pub(crate) mod islands;
pub(crate) mod issues;
pub(crate) mod joins;
pub(crate) mod obstacles;
pub(crate) mod origin;
pub(crate) mod requests;
pub(crate) mod settings;

//! Check mode across a run: the predictions earlier tasks of `ansible-playbook --check` recorded, and the world modules read through them.

pub mod predictions;
pub mod unknown;
pub mod world;

//! Check mode across a run: the predictions earlier tasks of `ansible-playbook --check` recorded, the world modules read through them, and the saved plan a real run applies.

pub mod plan_verify;
pub mod predictions;
pub mod readback;
pub mod saved;
pub mod saved_inputs;
pub mod unknown;
pub mod world;

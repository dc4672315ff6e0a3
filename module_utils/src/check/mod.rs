//! Check mode across a run: the predictions earlier tasks of `ansible-playbook --check` recorded.

pub mod predictions;

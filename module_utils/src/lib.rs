//! ferro.proxmox's shared library: everything the module crates have in common.
//!
//! Map (see ARCHITECTURE.md for the invariants):
//! - `protocol`: the Ansible binary-module protocol; the only code that prints or exits.
//! - `spec`, `auth`: argument specs and their validation; the shared connection options.
//! - `client`, `task`: the PVE HTTP client (the only code that does network I/O) and the task waiter.
//! - `propstring`, `pveconfig`: PVE property strings, sizes, NIC and disk values; semantic comparison.
//! - `pveformat`: PVE's named formats (node, storage id, bridge, volume id, urlencoded) for task values.
//! - `diff`: `--diff` output for config maps.
//! - `vm`: VM lookups shared by modules (by vmid or name, through `/cluster/resources`).
//! - `vmconfig`: a VM config with its pending section (one `GET .../pending`), hotplug, writes.
//! - `checkplan`: what earlier tasks of an `ansible-playbook --check` run predicted (VMs, configs).
//! - `docs`: renders a module's `plugins/modules/<name>.py` stub from its spec.
//! - `error`: the one error type.

pub mod auth;
pub mod checkplan;
pub mod client;
pub mod diff;
pub mod docs;
pub mod error;
pub mod hotplug;
pub mod propstring;
pub mod protocol;
pub mod pveconfig;
pub mod pveformat;
pub mod spec;
pub mod task;
pub mod vm;
pub mod vmconfig;

pub use error::{Error, Result};

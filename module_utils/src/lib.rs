//! ferro.proxmox's shared library, in three layers under the protocol runner (ARCHITECTURE.md has the rules).
//!
//! - `protocol`: the Ansible binary-module protocol; the only code that prints or exits.
//! - `error`: the one error type.
//! - `connect`: the glue from a module's connection options to an authenticated PVE client.
//! - `ansible`: what a module declares and Ansible sees (argument specs, the shared connection
//!   options, docs stubs, `--diff` output); knows nothing of Proxmox VE.
//! - `pve`: Proxmox VE itself (client, login, tasks, cluster resources, configs with pending,
//!   devices, property strings, the hot-plug rule); knows nothing of Ansible.
//! - `check`: check mode across a run: what earlier tasks of `ansible-playbook --check` predicted.

pub mod ansible;
pub mod check;
pub mod connect;
pub mod error;
pub mod protocol;
pub mod pve;

pub use error::{Error, Result};

//! Proxmox VE: the HTTP client (the only network I/O), login, tasks, cluster resources, VM
//! configs with their pending section, devices, property strings and the hot-plug rule.

pub mod auth;
pub mod client;
pub mod config;
pub mod devices;
pub mod hotplug;
pub mod journal;
pub mod permissions;
pub mod preflight;
pub mod propstring;
pub mod pveformat;
pub mod resources;
pub mod tasks;
pub mod volume;

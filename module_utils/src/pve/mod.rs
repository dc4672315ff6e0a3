//! Proxmox VE: the HTTP client (the only network I/O), login, tasks, cluster resources, VM
//! configs with their pending section, devices, property strings, the hot-plug rule and PVE's
//! API schema for the writes we make.

pub mod auth;
pub mod bootorder;
pub mod cipassword;
pub mod client;
pub mod config;
pub mod devices;
pub mod footprint;
pub mod hotplug;
pub mod inflight;
pub mod journal;
pub mod machine;
pub mod mappings;
pub mod migration;
pub mod pattern;
pub mod permissions;
pub mod pools;
pub mod preflight;
pub mod propstring;
pub mod pveformat;
pub mod replication;
pub mod request;
pub mod resources;
pub mod restore;
pub mod schema;
pub mod snapshots;
pub mod sshkeys;
pub mod state;
pub mod storage;
pub mod tasks;
pub mod transient;
pub mod trust;
pub mod values;
pub mod volume;

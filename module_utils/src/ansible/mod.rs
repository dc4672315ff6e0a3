//! The Ansible side: argument specs and their validation, the connection options, docs stubs, `--diff`.

pub mod connection;
pub mod diff;
pub mod docs;
pub mod spec;
pub mod validate;

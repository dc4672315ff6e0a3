//! ferro_proxmox, the collection's one native binary: runs the module named by argv[0].
//!
//! Every module shares the TLS, HTTP, JSON and regex code, so one binary per platform instead of
//! one per module keeps the release tarball small. The collection ships it as
//! native/<triple>/ferro_proxmox with a link per module (native/<triple>/proxmox_kvm, ...); the
//! action plugin runs the link locally and copies the binary under the module's name for a
//! remote run, which is also how ansible-core names a binary module it runs.

use module_utils::protocol::{self, Module};

/// Every module of the collection; `tests` checks it against modules/.
const MODULES: &[Module] = &[
    (&proxmox_disk::SPEC, proxmox_disk::main),
    (&proxmox_kvm::SPEC, proxmox_kvm::main),
    (&proxmox_nic::SPEC, proxmox_nic::main),
    (&proxmox_vm_info::SPEC, proxmox_vm_info::main),
];

fn main() {
    protocol::run_named(MODULES)
}

#[cfg(test)]
mod tests {
    use super::MODULES;

    #[test]
    fn every_module_crate_is_in_the_table_once() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../modules");
        let mut crates: Vec<String> = std::fs::read_dir(&dir)
            .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
            .filter_map(|entry| entry.ok())
            .filter(|entry| entry.path().join("Cargo.toml").is_file())
            .map(|entry| entry.file_name().to_string_lossy().into_owned())
            .collect();
        crates.sort();
        let table: Vec<String> = MODULES.iter().map(|(spec, _)| spec.name.to_string()).collect();
        assert_eq!(table, crates, "multicall/src/main.rs MODULES must list every crate under modules/, sorted");
    }
}

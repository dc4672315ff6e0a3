//! The proxmox_disk binary: one line into the shared protocol runner.
fn main() {
    module_utils::protocol::run(&proxmox_disk::SPEC, proxmox_disk::main)
}

//! The proxmox_kvm binary: one line into the shared protocol runner.
fn main() {
    module_utils::protocol::run(&proxmox_kvm::SPEC, proxmox_kvm::main)
}

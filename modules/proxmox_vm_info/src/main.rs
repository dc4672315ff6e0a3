//! The proxmox_vm_info binary: one line into the shared protocol runner.
fn main() {
    module_utils::protocol::run(&proxmox_vm_info::SPEC, proxmox_vm_info::main)
}

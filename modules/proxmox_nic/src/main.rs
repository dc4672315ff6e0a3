//! The proxmox_nic binary: one line into the shared protocol runner.
fn main() {
    module_utils::protocol::run(&proxmox_nic::SPEC, proxmox_nic::main)
}

//! proxmox_nic's arguments: first byte = environment on/off, the rest = the args text.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Err(violation) = ferro_props::fuzz_args(ferro_props::Module::Nic, data) {
        panic!("{violation}");
    }
});

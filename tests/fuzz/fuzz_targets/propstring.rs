//! PVE property strings: first byte = the format, the rest = the text; parse, print, parse.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Err(violation) = ferro_props::fuzz_propstring(data) {
        panic!("{violation}");
    }
});

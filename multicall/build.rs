//! Linker option of the release binary where rustc links with the lld it ships (x86_64 Linux, glibc): identical functions folded once (ARCHITECTURE.md "Release size").
//!
//! Only `cargo build --release` of x86_64-unknown-linux-gnu with rustc 1.90 or later, whose default
//! linker there is the toolchain's own rust-lld (`rustc --print sysroot`/lib/rustlib/*/bin/gcc-ld:
//! nothing installed by hand), and no linker of the user's choice: `--icf` is an lld option, and
//! the musl and macOS builds of `make dist` link with zig's linker. Relative relocations are not
//! packed (`-z pack-relative-relocs`): the binary would then need glibc 2.36 to start, and RHEL 9
//! (AWX's execution environments) has 2.34.

use std::env;
use std::process::Command;

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-env-changed=RUSTC_LINKER");
    let var = |key: &str| env::var(key).unwrap_or_default();
    let target = [var("CARGO_CFG_TARGET_ARCH"), var("CARGO_CFG_TARGET_OS"), var("CARGO_CFG_TARGET_ENV")].join("-");
    let own_linker = env::var_os("RUSTC_LINKER").is_some() || var("CARGO_ENCODED_RUSTFLAGS").contains("link");
    if var("PROFILE") != "release" || target != "x86_64-linux-gnu" || own_linker || !rustc_links_with_lld() {
        return;
    }
    println!("cargo:rustc-link-arg-bins=-Wl,--icf=all");
}

/// Whether `rustc -V` is 1.90 or later (rust-lld the default linker of x86_64-unknown-linux-gnu).
fn rustc_links_with_lld() -> bool {
    let rustc = env::var("RUSTC").unwrap_or_else(|_| "rustc".into());
    let out = Command::new(rustc).arg("-V").output().map(|o| String::from_utf8_lossy(&o.stdout).into_owned());
    minor_version(&out.unwrap_or_default(), "rustc 1.").is_some_and(|minor| minor >= 90)
}

/// The number after `prefix` at the start of `text`: `minor_version("rustc 1.95.0 (...)", "rustc 1.")` is 95.
fn minor_version(text: &str, prefix: &str) -> Option<u32> {
    let rest = text.trim().strip_prefix(prefix)?;
    rest.split(|c: char| !c.is_ascii_digit()).next()?.parse().ok()
}

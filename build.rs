//! Link settings of the release binary: its code in the order the gateway
//! runs it.
//!
//! A gateway runs about 1.4 MB of the binary's 11 MB of code, spread all over
//! it, and the kernel maps 64 KiB of the file around every page it faults in:
//! 7 MiB of code were resident. `link/<target>.order` lists the functions that
//! `bench --mix venue`, `replay` and `run` call (those of `run` alone last);
//! lld places them together (`scripts/symbol-order.sh` writes the list, docs/src/performance.md;
//! scripts/release-profiles.sh remakes it, a release step). A
//! name in the list that the binary does not have is skipped, so a stale list
//! costs memory, never correctness.

use std::env;
use std::path::Path;
use std::process::Command;

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-env-changed=PITCHSIDE_SYMBOL_ORDER");
    let target = env::var("TARGET").unwrap_or_default();
    let order = Path::new("link").join(format!("{target}.order"));
    println!("cargo:rerun-if-changed={}", order.display());
    if env::var("PROFILE").as_deref() != Ok("release")
        || env::var("PITCHSIDE_SYMBOL_ORDER").as_deref() == Ok("off")
    {
        return;
    }
    let Ok(list) = std::fs::read_to_string(&order) else {
        return;
    };
    let rustc = rustc_version();
    // Only lld reads an ordering file, and rustc links this target with its
    // own lld from 1.90 on. The names carry a hash of the compiler version, so
    // another rustc's build matches none of them.
    if target != "x86_64-unknown-linux-gnu" || !list.starts_with(&format!("# {rustc} ")) {
        if target == "x86_64-unknown-linux-gnu" {
            println!(
                "cargo:warning={} was made by another rustc than {rustc}: the binary \
                 keeps the default code layout (more resident memory); \
                 run scripts/release-profiles.sh",
                order.display()
            );
        }
        return;
    }
    let path = Path::new(&env::var("CARGO_MANIFEST_DIR").unwrap_or_default()).join(&order);
    println!(
        "cargo:rustc-link-arg-bins=-Wl,--symbol-ordering-file={}",
        path.display()
    );
    println!("cargo:rustc-link-arg-bins=-Wl,--no-warn-symbol-ordering");
}

/// `rustc -V` of the compiler building this crate, e.g. `rustc 1.95.0 (59807616e 2026-04-14)`.
fn rustc_version() -> String {
    let rustc = env::var("RUSTC").unwrap_or_else(|_| "rustc".into());
    Command::new(rustc)
        .arg("-V")
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
        .unwrap_or_default()
}

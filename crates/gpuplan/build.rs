//! Parses and validates the built-in catalog once, at build time, and writes it in its compact
//! binary form for [`builtin_catalog`](../src/lib.rs) to read: loading the catalog is then no
//! longer the floor of every command. A catalog that does not validate fails the build.

// A build script speaks to cargo on standard output and fails the build with its exit code.
#![allow(clippy::exit, clippy::print_stdout)]

use std::path::PathBuf;

fn main() {
    let catalog = match gpuplan_catalog::Catalog::embedded() {
        Ok(catalog) => catalog,
        Err(error) => fail(&format!("the built-in catalog does not validate: {error}")),
    };
    let bytes = match catalog.to_compact() {
        Ok(bytes) => bytes,
        Err(error) => fail(&format!("the built-in catalog cannot be written compactly: {error}")),
    };
    let out = PathBuf::from(std::env::var_os("OUT_DIR").unwrap_or_default());
    if let Err(error) = std::fs::write(out.join("catalog.postcard"), bytes) {
        fail(&format!("writing the compact catalog into OUT_DIR: {error}"));
    }
    println!("cargo:rerun-if-changed=build.rs");
}

fn fail(message: &str) -> ! {
    println!("cargo::error={message}");
    std::process::exit(1)
}

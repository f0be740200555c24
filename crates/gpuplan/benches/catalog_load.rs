//! How long loading the built-in catalog takes: parsing and validating its text files, against
//! reading the compact form the build writes (with and without its offerings, which are read
//! when first asked for).
//!
//! `cargo bench -p gpuplan --bench catalog_load` — the README reports these figures.

#![allow(clippy::unwrap_used)]

use gpuplan::Catalog;

fn main() {
    divan::main();
}

#[divan::bench]
fn parse_and_validate_the_text_files() -> Catalog {
    Catalog::embedded().unwrap()
}

#[divan::bench]
fn read_the_compact_form() -> Catalog {
    gpuplan::builtin_catalog().unwrap()
}

#[divan::bench]
fn read_the_compact_form_with_its_offerings() -> usize {
    let catalog = gpuplan::builtin_catalog().unwrap();
    catalog.offerings().len()
}

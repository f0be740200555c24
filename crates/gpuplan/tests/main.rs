//! The crate's integration tests as one binary (one link, one run): each module is a file
//! beside this one.

use gpuplan::Catalog;
use std::sync::OnceLock;

mod compat;
mod estimates;
mod exports;
mod fuzz;
mod plans;
mod scenarios;
mod serving_scenarios;
mod serving_validation;

/// The built-in catalog, parsed once for every module of the binary.
#[allow(clippy::expect_used)]
fn catalog() -> &'static Catalog {
    static CATALOG: OnceLock<Catalog> = OnceLock::new();
    CATALOG.get_or_init(|| Catalog::embedded().expect("the built-in catalog parses"))
}

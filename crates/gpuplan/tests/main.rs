//! The crate's integration tests as one binary (one link, one run): each module is a file
//! beside this one.

mod compat;
mod estimates;
mod exports;
mod fuzz;
mod plans;
mod scenarios;
mod serving_scenarios;
mod serving_validation;

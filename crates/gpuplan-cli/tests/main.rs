//! The crate's integration tests as one binary (one link, one run): each module is a file
//! beside this one.

mod bad_input;
mod cli;
mod compat;
mod job_file;
mod probe;
mod prometheus;
mod rightsize;

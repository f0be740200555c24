//! The crate's integration tests as one binary (one link, one run): each module is a file
//! beside this one.

mod api;
mod browser;
mod held;
mod load;

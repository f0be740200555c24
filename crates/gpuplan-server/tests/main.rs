//! The crate's integration tests as one binary (one link, one run): each module is a file
//! beside this one.

mod api;
mod browser;
mod load;

/// Held by the tests that measure this process's memory and by those that make it grow
/// (the browser's plans), so that one does not read the other's allocations as a leak.
static MEMORY_MEASURED: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// The lock, whether or not a test that held it failed.
fn memory_measured() -> std::sync::MutexGuard<'static, ()> {
    MEMORY_MEASURED
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

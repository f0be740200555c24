//! A question's cancellation: a flag the one who asked sets (a server whose client is gone),
//! and long searches look at between candidates, so that work nobody waits for stops.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

/// Shared between the asker and the search; cloning shares the flag.
#[derive(Debug, Clone, Default)]
pub struct Cancel(Arc<AtomicBool>);

impl Cancel {
    /// Asks the search to stop at its next check.
    pub fn cancel(&self) {
        self.0.store(true, Ordering::Relaxed);
    }

    pub fn is_cancelled(&self) -> bool {
        self.0.load(Ordering::Relaxed)
    }
}

/// Every flag is equal to every other: cancellation is not part of what was asked.
impl PartialEq for Cancel {
    fn eq(&self, _: &Cancel) -> bool {
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_clone_sees_the_cancellation() {
        let asker = Cancel::default();
        let search = asker.clone();
        assert!(!search.is_cancelled());
        asker.cancel();
        assert!(search.is_cancelled());
    }
}

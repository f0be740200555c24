use gpuplan_catalog::Catalog;
use gpuplan_model::{Accelerator, AcceleratorId, CommitmentTerm, Offering, Operations, ProviderId, ReservedDiscount};

/// The operations tables of a source that has none: every figure falls back to the planner's
/// conservative defaults.
static NO_OPERATIONS: Operations = Operations {
    image_gb: None,
    image_source: None,
    startup: Vec::new(),
    billing: Vec::new(),
    capacity: Vec::new(),
    interruptions: Vec::new(),
    spot_shares: Vec::new(),
    decode: Vec::new(),
    image_file_kb: None,
    providers: Vec::new(),
    shared_storage: Vec::new(),
};

/// What the planner searches: offerings, the accelerators they carry, and committed-use
/// discounts. The built-in [`Catalog`] is one; tests use small hand-made ones.
pub trait OfferingSource {
    fn offerings(&self) -> &[Offering];
    fn accelerator(&self, id: &AcceleratorId) -> Option<&Accelerator>;
    fn reserved_discount(&self, provider: &ProviderId, term: CommitmentTerm) -> Option<&ReservedDiscount>;

    /// Start-up, capacity, interruption and input-pipeline figures.
    fn operations(&self) -> &Operations {
        &NO_OPERATIONS
    }
}

impl OfferingSource for Catalog {
    fn offerings(&self) -> &[Offering] {
        Catalog::offerings(self)
    }

    fn accelerator(&self, id: &AcceleratorId) -> Option<&Accelerator> {
        self.accelerators().get(id.as_str())
    }

    fn reserved_discount(&self, provider: &ProviderId, term: CommitmentTerm) -> Option<&ReservedDiscount> {
        // The deepest published discount for the term (no-upfront and upfront variants alike).
        self.reserved_discounts()
            .iter()
            .filter(|d| &d.provider == provider && d.term == term)
            .max_by(|a, b| a.discount.total_cmp(&b.discount))
    }

    fn operations(&self) -> &Operations {
        Catalog::operations(self)
    }
}

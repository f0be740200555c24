use gpuplan_catalog::Catalog;
use gpuplan_model::{Accelerator, AcceleratorId, CommitmentTerm, Offering, ProviderId, ReservedDiscount};

/// What the planner searches: offerings, the accelerators they carry, and committed-use
/// discounts. The built-in [`Catalog`] is one; tests use small hand-made ones.
pub trait OfferingSource {
    fn offerings(&self) -> &[Offering];
    fn accelerator(&self, id: &AcceleratorId) -> Option<&Accelerator>;
    fn reserved_discount(&self, provider: &ProviderId, term: CommitmentTerm) -> Option<&ReservedDiscount>;
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
}

//! What a candidate costs: its hourly price under a billing mode, and a job's total at the
//! provider's granularity, minimum and reserved term.

use super::*;

/// Hourly price per instance for a billing mode, with the note a derived price carries.
pub(super) fn hourly_price(
    source: &impl OfferingSource,
    offering: &Offering,
    billing: BillingMode,
) -> Option<(f64, Option<String>)> {
    let rate = crate::rate(source, offering, billing, None)?;
    let note = rate.derivation().map(|how| format!("{billing} price derived: {how}"));
    Some((rate.usd_per_hour, note))
}

/// Hours a reserved mode bills over its term; `None` for pay-as-you-go modes.
pub(super) fn term_hours(billing: BillingMode) -> Option<f64> {
    billing.commitment().map(|term| term.hours())
}

/// What `hours` of a job cost at `hourly` under `billing`: metered at the provider's
/// granularity and minimum; a reserved term billed whole unless `utilisation` shares it.
pub(super) fn job_total(
    source: &impl OfferingSource,
    offering: &Offering,
    billing: BillingMode,
    hourly: f64,
    hours: f64,
    utilisation: Option<f64>,
) -> f64 {
    let billed = source.operations().meter(offering).billed_hours(hours);
    match (term_hours(billing), utilisation) {
        (None, _) => hourly * billed,
        (Some(_), Some(utilisation)) => hourly * billed / utilisation,
        (Some(term), None) => hourly * term.max(billed),
    }
}

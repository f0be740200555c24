//! `cost` and `energy`: what renting an offering (or a negotiated rate) costs under each billing
//! mode, with spot interruptions; and what running GPUs costs in electricity.

use crate::{Error, resolve};
use gpuplan_catalog::Catalog;
use gpuplan_estimate::cost::{CostBreakdown, StorageRates, job_cost};
use gpuplan_estimate::energy::{EnergyEstimate, EnergyInput, RentOrBuy, energy, rent_or_buy};
use gpuplan_estimate::spot::{SpotEstimate, SpotJob, SpotSimulation, expected, simulate};
use gpuplan_model::{BillingMode, CommitmentTerm, Offering, ProviderId, did_you_mean};
use gpuplan_plan::OfferingSource;
use serde::Serialize;

/// Interruptions per hour assumed for spot capacity when the user gives none. Not a published
/// figure: providers publish only coarse buckets (AWS Spot Instance Advisor: share of instances
/// interrupted per month), and GPU spot capacity is reclaimed far more often than average.
/// One interruption per 20 hours is a middle-of-the-road planning value; give
/// `--interruption-rate` for your own.
pub const ASSUMED_SPOT_INTERRUPTIONS_PER_HOUR: f64 = 0.05;

/// How spot interruptions are to be modelled.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SpotSettings {
    pub interruption_rate: Option<f64>,
    pub checkpoint_interval_hours: Option<f64>,
    pub checkpoint_write_hours: f64,
    pub restart_hours: f64,
    pub monte_carlo_runs: Option<u32>,
    pub seed: u64,
}

/// A cost question.
#[derive(Debug, Clone)]
pub struct CostQuery {
    pub instance: Option<String>,
    pub gpu: Option<String>,
    pub gpus: Option<u32>,
    pub providers: Vec<String>,
    pub regions: Vec<String>,
    /// A negotiated on-demand (or, with a reserved billing mode, reserved) rate per hour.
    pub price: Option<f64>,
    pub spot_price: Option<f64>,
    pub hours: f64,
    pub billing: Vec<BillingMode>,
    pub spot: Option<SpotSettings>,
    pub storage_gb_months: f64,
    pub egress_gb: f64,
    /// Staged prices `(from hour of the month, USD per hour)`, priced as an extra line.
    pub tiers: Vec<(f64, f64)>,
    /// A savings-plan commitment in USD per hour, and its discount (else the provider's
    /// published 1-year discount).
    pub savings_plan: Option<(f64, Option<f64>)>,
    /// Hours billed at least (a minimum commitment period).
    pub minimum_hours: Option<f64>,
    /// Share of a reserved term the capacity is used (by this job and others); without it a
    /// reserved line bills the whole term.
    pub utilisation: Option<f64>,
}

impl CostQuery {
    /// `hours` of on-demand use of nothing yet: name an instance, a GPU or a price.
    pub fn for_hours(hours: f64) -> Self {
        CostQuery {
            instance: None,
            gpu: None,
            gpus: None,
            providers: Vec::new(),
            regions: Vec::new(),
            price: None,
            spot_price: None,
            hours,
            billing: vec![BillingMode::OnDemand],
            spot: None,
            storage_gb_months: 0.0,
            egress_gb: 0.0,
            tiers: Vec::new(),
            savings_plan: None,
            minimum_hours: None,
            utilisation: None,
        }
    }
}

/// The cost of one billing mode.
#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
pub struct CostLine {
    /// A billing mode (`on-demand`, `spot`, `reserved-1y`…), `tiered`, `usage-tiered` (the
    /// provider's prices that fall as an instance keeps running) or `savings-plan`.
    pub billing: String,
    pub usd_per_hour: f64,
    #[serde(flatten)]
    pub breakdown: CostBreakdown,
    /// Set when the rate is derived (reserved prices from a provider discount).
    pub derived_from: Option<String>,
    pub spot: Option<SpotEstimate>,
    pub simulation: Option<SpotSimulation>,
    pub notes: Vec<String>,
}

/// Costs of one subject under each billing mode.
#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
pub struct CostAnswer {
    /// What is priced: an instance and region, or a custom rate.
    pub subject: String,
    pub hours: f64,
    pub lines: Vec<CostLine>,
    /// Billing modes asked for that have no price, with why.
    pub unpriced: Vec<String>,
    pub assumptions: Vec<String>,
}

fn reserved_term_in(modes: &[BillingMode]) -> Option<CommitmentTerm> {
    modes.iter().find_map(|b| b.commitment())
}

/// The rate `billing` is priced at, and how it was derived: the user's rate where given (a
/// negotiated on-demand or spot price; for a reserved mode without an instance, the reserved
/// rate itself), else the catalog's under the planner's one pricing rule.
fn rate_of(
    catalog: &Catalog,
    query: &CostQuery,
    offering: Option<&Offering>,
    billing: BillingMode,
) -> (Option<f64>, Option<String>) {
    let given = if billing == BillingMode::Spot {
        query.spot_price
    } else {
        query.price
    };
    let Some(offering) = offering else {
        return (given, None);
    };
    match billing {
        BillingMode::OnDemand | BillingMode::Spot if given.is_some() => (given, None),
        _ => match gpuplan_plan::rate(catalog, offering, billing, query.price) {
            Some(rate) => (
                Some(rate.usd_per_hour),
                rate.derivation().map(|how| format!("derived: {how}")),
            ),
            None => (None, None),
        },
    }
}

fn choose_offering(catalog: &Catalog, query: &CostQuery) -> Result<Option<Offering>, Error> {
    let providers = resolve::providers(catalog, &query.providers)?;
    let in_scope = |o: &&Offering| {
        (providers.is_empty() || providers.contains(&o.provider))
            && (query.regions.is_empty()
                || query
                    .regions
                    .iter()
                    .any(|r| o.region.as_deref().unwrap_or("").starts_with(r.as_str())))
    };
    // The cheapest on demand among the offerings that price every billing mode asked for (a
    // spot price, a provider's reserved discount), where any does; else the cheapest.
    let prices = |o: &Offering, billing: BillingMode| match billing {
        BillingMode::OnDemand => true,
        BillingMode::Spot => query.spot_price.is_some() || gpuplan_plan::rate(catalog, o, billing, None).is_some(),
        reserved => reserved
            .commitment()
            .is_some_and(|term| query.price.is_some() || catalog.reserved_discount(&o.provider, term).is_some()),
    };
    let cheapest = |candidates: Vec<&Offering>| {
        let rate = |o: &&&Offering| o.on_demand.map_or(f64::INFINITY, |p| p.0);
        let by_price = |a: &&&Offering, b: &&&Offering| rate(a).total_cmp(&rate(b));
        let priced: Vec<&Offering> = candidates.into_iter().filter(|o| o.on_demand.is_some()).collect();
        priced
            .iter()
            .filter(|o| query.billing.iter().all(|b| prices(o, *b)))
            .min_by(by_price)
            .or_else(|| priced.iter().min_by(by_price))
            .map(|o| (*o).clone())
    };
    if let Some(instance) = &query.instance {
        let matching: Vec<&Offering> = catalog
            .offerings()
            .iter()
            .filter(|o| o.instance_type.eq_ignore_ascii_case(instance))
            .filter(in_scope)
            .collect();
        if matching.is_empty() {
            // The name exists but the provider or region filters leave none of it: say so,
            // and where it is offered.
            let mut regions: Vec<String> = catalog
                .offerings()
                .iter()
                .filter(|o| o.instance_type.eq_ignore_ascii_case(instance))
                .map(|o| format!("{} {}", o.provider, o.region.as_deref().unwrap_or("(any region)")))
                .collect();
            regions.sort();
            regions.dedup();
            if !regions.is_empty() {
                let shown: Vec<&str> = regions.iter().take(6).map(String::as_str).collect();
                return Err(Error::invalid(
                    format!("`{instance}` is not offered in the providers and regions given"),
                    Some(format!(
                        "it is offered in {}{}",
                        shown.join(", "),
                        if regions.len() > 6 {
                            format!(" and {} more", regions.len() - 6)
                        } else {
                            String::new()
                        }
                    )),
                ));
            }
            if let Some(sizes) = family_sizes(catalog, instance) {
                return Err(Error::invalid(
                    format!("`{instance}` is an instance family, not an instance type"),
                    Some(format!("name one of its sizes: {sizes}")),
                ));
            }
            let names = catalog.offerings().iter().map(|o| o.instance_type.as_str());
            let hint = did_you_mean(instance, names).map(|n| format!("did you mean `{n}`?"));
            return Err(Error::invalid(format!("no offering `{instance}` in the catalog"), hint));
        }
        return cheapest(matching).map(Some).ok_or_else(|| {
            Error::invalid(
                format!("`{instance}` has no on-demand price in the catalog"),
                Some("give {price}".to_string()),
            )
        });
    }
    if let Some(gpu) = &query.gpu {
        let family: Vec<_> = catalog
            .accelerators()
            .resolve_family(gpu)?
            .iter()
            .map(|a| a.id.clone())
            .collect();
        let matching: Vec<&Offering> = catalog
            .offerings()
            .iter()
            .filter(|o| o.accelerator.as_ref().is_some_and(|a| family.contains(a)))
            .filter(|o| query.gpus.is_none_or(|n| o.accelerator_count == n))
            .filter(in_scope)
            .collect();
        if matching.is_empty() {
            return Err(Error::invalid(
                format!(
                    "no offering with {} × {gpu} in the catalog (with these filters)",
                    query.gpus.unwrap_or(1)
                ),
                Some("`gpuplan instances --gpu …` lists the shapes on sale".to_string()),
            ));
        }
        return Ok(cheapest(matching));
    }
    Ok(None)
}

/// Longest job costed, hours: a century.
const MAX_HOURS: f64 = 876_000.0;

/// Most internet egress costed, GB: an exabyte.
const MAX_EGRESS_GB: f64 = 1e9;

/// Highest hourly price accepted: far above the largest rentable cluster's.
const MAX_USD_PER_HOUR: f64 = 100_000.0;

/// Most spot runs simulated.
const MAX_MONTE_CARLO_RUNS: u32 = 1_000_000;

/// Prices `query` under each requested billing mode: checked, resolved to an offering (or a
/// rate), then priced line by line.
pub fn cost_job(catalog: &Catalog, query: &CostQuery) -> Result<CostAnswer, Error> {
    crate::with_fitted(catalog, || cost_job_in(catalog, query))
}

fn cost_job_in(catalog: &Catalog, query: &CostQuery) -> Result<CostAnswer, Error> {
    check_cost_query(query)?;
    let offering = choose_offering(catalog, query)?;
    if offering.is_none() && query.price.is_none() {
        return Err(Error::invalid(
            "nothing to price",
            Some("name an {instance}, a {gpu} (with {gpus}), or give a {price} per hour".to_string()),
        ));
    }
    let (rates, rate_notes) = storage_rates(catalog, offering.as_ref().map(|o| &o.provider));
    let pricing = Pricing {
        catalog,
        query,
        offering: offering.as_ref(),
        meter: offering
            .as_ref()
            .map(|o| catalog.operations().meter(o))
            .unwrap_or_default(),
        // A minimum commitment bills at least its hours.
        billed_for: query.hours.max(query.minimum_hours.unwrap_or(0.0)),
        rates,
    };
    let mut lines = Vec::new();
    let mut unpriced = Vec::new();
    for &billing in &query.billing {
        match billing_line(&pricing, billing)? {
            Ok(line) => lines.push(line),
            Err(why) => unpriced.push(why),
        }
    }
    lines.extend(tiered_line(&pricing)?);
    lines.extend(usage_tiered_line(&pricing));
    lines.extend(savings_plan_line(&pricing)?);
    if lines.is_empty() {
        return Err(Error::invalid(
            "no billing mode could be priced",
            Some(unpriced.join("; ")),
        ));
    }
    Ok(CostAnswer {
        subject: subject_of(offering.as_ref(), query.price),
        hours: query.hours,
        lines,
        unpriced,
        assumptions: cost_assumptions(&pricing, rate_notes),
    })
}

/// The checks a cost question must pass before anything is looked up.
fn check_cost_query(query: &CostQuery) -> Result<(), Error> {
    use crate::{Field, RequestError};
    if !(query.hours > 0.0 && query.hours <= MAX_HOURS) {
        return Err(RequestError::out_of_range(
            Field::Hours,
            format!("{:e}", query.hours),
            format!("between 0 and {MAX_HOURS:.0} (a century)"),
        )
        .into());
    }
    if query.spot.is_some() && !query.billing.contains(&BillingMode::Spot) {
        let field = match &query.spot {
            Some(s) if s.checkpoint_interval_hours.is_some() => Field::CheckpointMinutes,
            Some(s) if s.interruption_rate.is_some() => Field::InterruptionRate,
            _ => Field::MonteCarlo,
        };
        return Err(RequestError::not_applicable(field, "spot billing")
            .with_hint("add {billing} spot (or on-demand,spot), or drop {checkpoint_minutes}, {interruption_rate} and {monte_carlo}")
            .into());
    }
    if let Some(runs) = query.spot.and_then(|s| s.monte_carlo_runs) {
        if !(1..=MAX_MONTE_CARLO_RUNS).contains(&runs) {
            return Err(RequestError::invalid(
                Field::MonteCarlo,
                runs,
                format!("give between 1 and {MAX_MONTE_CARLO_RUNS} runs"),
            )
            .with_hint("10,000 runs already pin the 90th percentile to a few tenths of a percent")
            .into());
        }
    }
    crate::defaults::require_positive(Field::Price, query.price)?;
    crate::defaults::require_positive(Field::SpotPrice, query.spot_price)?;
    for (field, price) in [(Field::Price, query.price), (Field::SpotPrice, query.spot_price)] {
        if let Some(price) = price.filter(|p| *p > MAX_USD_PER_HOUR) {
            return Err(RequestError::beyond(
                field,
                crate::defaults::shown(price),
                format!("beyond any rental price (at most {MAX_USD_PER_HOUR} USD per hour)"),
            )
            .into());
        }
    }
    crate::defaults::require_non_negative(Field::StorageGb, Some(query.storage_gb_months))?;
    crate::defaults::require_non_negative(Field::EgressGb, Some(query.egress_gb))?;
    if query.egress_gb > MAX_EGRESS_GB {
        return Err(RequestError::beyond(
            Field::EgressGb,
            crate::defaults::shown(query.egress_gb),
            "beyond any job's traffic (at most 1e9 GB, an exabyte)",
        )
        .into());
    }
    if query.billing.is_empty() {
        return Err(Error::invalid(
            "no billing mode given",
            Some("use {billing} on-demand,spot,reserved-1y".to_string()),
        ));
    }
    if let Some(u) = query.utilisation {
        if !(u > 0.0 && u <= 1.0) {
            return Err(
                RequestError::beyond(Field::Utilisation, u, "not a share between 0 and 1")
                    .with_hint("0.7 means the reserved capacity is busy 70 % of its term")
                    .into(),
            );
        }
        if reserved_term_in(&query.billing).is_none() {
            return Err(RequestError::not_applicable(Field::Utilisation, "reserved billing")
                .with_hint("add {billing} reserved-1y (or reserved-3y), or drop {utilisation}")
                .into());
        }
    }
    crate::defaults::require_non_negative(Field::MinimumHours, query.minimum_hours)?;
    Ok(())
}

/// What is priced, in words.
fn subject_of(offering: Option<&Offering>, price: Option<f64>) -> String {
    match (offering, price) {
        (Some(o), None) => format!(
            "{} {} ({}), cheapest region in scope",
            o.provider,
            o.instance_type,
            o.region.as_deref().unwrap_or("any region")
        ),
        (Some(o), Some(price)) => format!("{} {} at a negotiated ${price}/h", o.provider, o.instance_type),
        (None, Some(price)) => format!("a rate of ${price}/h"),
        (None, None) => String::new(),
    }
}

/// A resolved cost question: what every line is priced against.
struct Pricing<'a> {
    catalog: &'a Catalog,
    query: &'a CostQuery,
    offering: Option<&'a Offering>,
    /// How the offering's usage is billed (whole hours for a bare price).
    meter: gpuplan_model::BillingMeter,
    /// Hours billed: the job's, or the minimum commitment's where longer.
    billed_for: f64,
    rates: StorageRates,
}

impl Pricing<'_> {
    /// Compute, storage and egress for `hours` at `rate`.
    fn job(&self, rate: f64, hours: f64) -> CostBreakdown {
        job_cost(
            rate,
            hours,
            self.meter,
            self.query.storage_gb_months,
            self.query.egress_gb,
            &self.rates,
        )
    }

    /// A computed compute cost with the job's storage and egress added.
    fn with_extras(&self, compute: f64) -> CostBreakdown {
        let base = self.job(0.0, self.billed_for);
        CostBreakdown {
            compute_usd: compute,
            total_usd: compute + base.storage_usd + base.egress_usd,
            ..base
        }
    }

    fn on_demand_rate(&self) -> Option<f64> {
        self.query
            .price
            .or(self.offering.and_then(|o| o.on_demand.map(|p| p.0)))
    }
}

/// The line of one billing mode, or why it has no price.
fn billing_line(p: &Pricing, billing: BillingMode) -> Result<Result<CostLine, String>, Error> {
    let (rate, derived) = rate_of(p.catalog, p.query, p.offering, billing);
    let Some(rate) = rate else {
        let flag = if billing == BillingMode::Spot {
            "--spot-price"
        } else {
            "--price"
        };
        return Ok(Err(match p.offering {
            Some(o) => match published_spot_range(p, o).filter(|_| billing == BillingMode::Spot) {
                Some(range) => format!("{billing}: {range}; give {flag}"),
                None => format!("{billing}: no price in the catalog for this offering; give {flag}"),
            },
            None => format!("{billing}: no {billing} rate given; give {flag}"),
        }));
    };
    let mut notes = Vec::new();
    let hours = match billing.commitment() {
        None => p.billed_for,
        Some(term) => reserved_hours(p, term, &mut notes),
    };
    let mut breakdown = p.job(rate, hours);
    let (mut spot, mut simulation) = (None, None);
    if billing == BillingMode::Spot {
        match p.query.spot {
            Some(settings) => {
                let (modelled, estimate, runs) = spot_costs(p, rate, settings, &mut notes)?;
                breakdown = modelled;
                spot = Some(estimate);
                simulation = runs;
            }
            None => notes.push(
                "interruptible: priced without interruptions (add --checkpoint-minutes to model them)".to_string(),
            ),
        }
    }
    Ok(Ok(CostLine {
        billing: billing.to_string(),
        usd_per_hour: rate,
        breakdown,
        derived_from: derived,
        spot,
        simulation,
        notes,
    }))
}

/// Where a provider publishes spot only as a range of pay-as-you-go too wide to price with,
/// the range in dollars for this offering.
fn published_spot_range(p: &Pricing, offering: &Offering) -> Option<String> {
    let share = p.catalog.operations().spot_share(&offering.provider)?;
    let on_demand = p.on_demand_rate()?;
    Some(format!(
        "{} publishes no spot price per type, only that spot is {} (${:.3}–${:.3}/h here; {}, {})",
        offering.provider.display_name(),
        share.stated,
        on_demand * share.lowest,
        on_demand * share.highest,
        share.source.title,
        share.source.as_of
    ))
}

/// Hours a reserved `term` bills: the whole term, or the job's share of it at the stated
/// utilisation.
fn reserved_hours(p: &Pricing, term: CommitmentTerm, notes: &mut Vec<String>) -> f64 {
    match p.query.utilisation {
        Some(utilisation) => {
            notes.push(format!(
                "the job's {:.0} h at the reserved rate over {:.0} % use of the {term} term",
                p.billed_for,
                utilisation * 100.0
            ));
            p.billed_for / utilisation
        }
        None => {
            let hours = term.hours().max(p.billed_for);
            if p.billed_for < hours {
                notes.push(format!(
                    "a {term} commitment bills {hours:.0} h whatever the job uses; --utilisation shares it with other work"
                ));
            }
            hours
        }
    }
}

/// A spot line with interruptions modelled: the expected wall time's cost, the estimate, and
/// the Monte Carlo runs where asked.
fn spot_costs(
    p: &Pricing,
    rate: f64,
    settings: SpotSettings,
    notes: &mut Vec<String>,
) -> Result<(CostBreakdown, SpotEstimate, Option<SpotSimulation>), Error> {
    let published = p
        .offering
        .and_then(|o| p.catalog.operations().interruption_of(&o.provider, &o.instance_type));
    let rate_per_hour = match (settings.interruption_rate, published) {
        (Some(rate), _) => rate,
        (None, Some(published)) => {
            notes.push(format!(
                "interruption rate {}/h: {}'s default ({})",
                published.per_hour,
                published.provider.display_name(),
                published.source.url
            ));
            published.per_hour
        }
        (None, None) => {
            notes.push(format!(
                "interruption rate {ASSUMED_SPOT_INTERRUPTIONS_PER_HOUR}/h assumed, not published; give --interruption-rate"
            ));
            ASSUMED_SPOT_INTERRUPTIONS_PER_HOUR
        }
    };
    let job = SpotJob {
        work_hours: p.query.hours,
        interruption_rate: rate_per_hour,
        checkpoint_interval_hours: settings.checkpoint_interval_hours,
        checkpoint_write_hours: settings.checkpoint_write_hours,
        restart_hours: settings.restart_hours,
        spot_usd_per_hour: rate,
        on_demand_usd_per_hour: p.offering.and_then(|o| o.on_demand.map(|p| p.0)).or(p.query.price),
    };
    let estimate = expected(&job)?;
    if settings.checkpoint_write_hours == 0.0 {
        notes.push(
            "checkpoints taken as free to write (no --checkpoint-write), so the wall time counts only lost work and restarts, and no interval is optimal; give the time one takes".to_string(),
        );
    }
    let breakdown = p.job(rate, estimate.expected_wall_hours);
    let simulation = settings
        .monte_carlo_runs
        .map(|runs| simulate(&job, runs, settings.seed))
        .transpose()?;
    Ok((breakdown, estimate, simulation))
}

/// The line of staged monthly prices, where given.
fn tiered_line(p: &Pricing) -> Result<Option<CostLine>, Error> {
    if p.query.tiers.is_empty() {
        return Ok(None);
    }
    let mut tiers = p.query.tiers.clone();
    tiers.sort_by(|a, b| a.0.total_cmp(&b.0));
    let written = |separator: &str, each: &dyn Fn(&(f64, f64)) -> String| {
        tiers.iter().map(each).collect::<Vec<_>>().join(separator)
    };
    if tiers[0].0 != 0.0 || tiers.iter().any(|(from, price)| !(*from >= 0.0 && *price > 0.0)) {
        return Err(crate::RequestError::unsuitable(
            crate::Field::Tiers,
            written(",", &|(from, price)| format!("{from}:{price}")),
            "must start at hour 0 with positive prices (e.g. 0:3.06,500:2.50)",
        )
        .into());
    }
    let compute = gpuplan_estimate::cost::tiered_compute_cost(p.billed_for, &tiers);
    Ok(Some(CostLine {
        billing: "tiered".to_string(),
        usd_per_hour: compute / p.billed_for,
        breakdown: p.with_extras(compute),
        derived_from: Some(format!(
            "staged monthly prices: {}",
            written(", ", &|(from, price)| format!("${price}/h from hour {from}"))
        )),
        spot: None,
        simulation: None,
        notes: Vec::new(),
    }))
}

/// The line of the provider's pay-as-you-go prices that fall as one instance keeps running
/// (Tencent Cloud's three tiers), where its terms have them, the job runs into a lower tier,
/// and no staged prices of the user's own replace them.
fn usage_tiered_line(p: &Pricing) -> Option<CostLine> {
    let offering = p.offering?;
    let tiers = p
        .catalog
        .operations()
        .billing_terms(&offering.provider, &offering.instance_type)?
        .usage_tiers
        .as_ref()?;
    let list = p.on_demand_rate()?;
    let first_step = tiers.steps.first()?.0;
    if !p.query.tiers.is_empty() || p.billed_for <= first_step {
        return None;
    }
    let compute = tiers.cost(p.billed_for, list);
    let steps: Vec<String> = tiers
        .steps
        .iter()
        .map(|(hour, fraction)| format!("{:.0} % of ${list}/h from hour {hour}", fraction * 100.0))
        .collect();
    let mut notes = vec![format!(
        "{provider} counts the hours per instance while its configuration is unchanged; a resized or replaced instance starts again at the full price, and the tiers discount the CPU and memory fees, so where a GPU's share is billed apart this is the most they save",
        provider = offering.provider
    )];
    if !tiers.every_type {
        notes.push(format!(
            "{provider} bills only some instance types in tiers and names them on its purchase page: this line holds if {instance}'s shows tiered prices",
            provider = offering.provider,
            instance = offering.instance_type
        ));
    }
    Some(CostLine {
        billing: "usage-tiered".to_string(),
        usd_per_hour: compute / p.billed_for,
        breakdown: p.with_extras(compute),
        derived_from: Some(format!(
            "pay-as-you-go tiers of one instance's run: {}",
            steps.join(", ")
        )),
        spot: None,
        simulation: None,
        notes,
    })
}

/// The line of a savings plan, where one is asked for.
fn savings_plan_line(p: &Pricing) -> Result<Option<CostLine>, Error> {
    use crate::{Field, RequestError};
    let Some((commitment, discount)) = p.query.savings_plan else {
        return Ok(None);
    };
    if !(commitment > 0.0 && commitment.is_finite()) {
        return Err(RequestError::out_of_range(
            Field::SavingsPlan,
            commitment,
            "a positive commitment in USD per hour",
        )
        .into());
    }
    if let Some(d) = discount.filter(|d| !(*d > 0.0 && *d < 1.0)) {
        return Err(RequestError::out_of_range(Field::SavingsDiscount, d, "between 0 and 1").into());
    }
    let Some(on_demand) = p.on_demand_rate() else {
        return Err(RequestError::needs(
            Field::SavingsPlan,
            Field::Price,
            ", an on-demand rate (or an {instance} that has one)",
        )
        .into());
    };
    let discount = match discount {
        Some(d) => d,
        None => p
            .offering
            .and_then(|o| p.catalog.reserved_discount(&o.provider, CommitmentTerm::OneYear))
            .map(|d| d.discount)
            .ok_or_else(|| RequestError::missing(Field::SavingsDiscount, "where the provider publishes no discount"))?,
    };
    let compute = gpuplan_estimate::cost::savings_plan_cost(p.billed_for, on_demand, discount, commitment);
    Ok(Some(CostLine {
        billing: "savings-plan".to_string(),
        usd_per_hour: compute / p.billed_for,
        breakdown: p.with_extras(compute),
        derived_from: Some(format!(
            "${commitment}/h committed at {:.0} % off; usage beyond it at on-demand",
            discount * 100.0
        )),
        spot: None,
        simulation: None,
        notes: Vec::new(),
    }))
}

/// What the lines assume: the billing granularity, the storage and egress rates, the spot model.
fn cost_assumptions(p: &Pricing, rate_notes: RateNotes) -> Vec<String> {
    let mut assumptions = vec![format!("billed {}", p.meter.describe())];
    if p.query.storage_gb_months > 0.0 {
        assumptions.push(rate_notes.storage);
    }
    if p.query.egress_gb > 0.0 {
        assumptions.push(rate_notes.egress);
    }
    if p.query.spot.is_some() {
        assumptions.push(
            "spot: expected wall time W(1 + δ/τ)(1 + λ(R + (τ + δ)/2)) (Daly 2006); Young's τ* = √(2δ/λ) suggested"
                .to_string(),
        );
    }
    assumptions
}

/// An energy question.
#[derive(Debug, Clone)]
pub struct EnergyQuery {
    pub gpu: String,
    pub gpus: u32,
    pub hours: f64,
    pub pue: f64,
    /// `None`: [`gpuplan_estimate::energy::DEFAULT_HOST_OVERHEAD`].
    pub host_overhead: Option<f64>,
    pub utilization: f64,
    pub price_per_kwh: Option<f64>,
    pub purchase_usd: Option<f64>,
    pub depreciation_years: f64,
    pub rent_usd_per_hour: Option<f64>,
}

/// Energy, and rent-against-buy when a purchase price is given.
#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
pub struct EnergyAnswer {
    pub gpu: String,
    pub gpus: u32,
    pub hours: f64,
    pub tdp_watts: f64,
    pub pue: f64,
    pub host_overhead: f64,
    pub utilization: f64,
    #[serde(flatten)]
    pub energy: EnergyEstimate,
    pub rent_or_buy: Option<RentOrBuy>,
    pub assumptions: Vec<String>,
}

pub fn energy_of(catalog: &Catalog, query: &EnergyQuery) -> Result<EnergyAnswer, Error> {
    crate::with_fitted(catalog, || energy_of_in(catalog, query))
}

fn energy_of_in(catalog: &Catalog, query: &EnergyQuery) -> Result<EnergyAnswer, Error> {
    let accelerator = catalog.accelerators().resolve_one(&query.gpu)?.accelerator;
    let tdp = accelerator.tdp.ok_or_else(|| {
        Error::invalid(
            format!("{} has no published TDP", accelerator.id),
            Some("pick another {gpu}".to_string()),
        )
    })?;
    let host_overhead = query
        .host_overhead
        .unwrap_or(gpuplan_estimate::energy::DEFAULT_HOST_OVERHEAD);
    let input = EnergyInput {
        tdp_watts: tdp.0,
        gpus: query.gpus,
        hours: query.hours,
        utilization: query.utilization,
        pue: query.pue,
        host_overhead,
        price_per_kwh: query.price_per_kwh,
    };
    crate::defaults::require_positive(crate::Field::Hours, Some(query.hours))?;
    if query.hours > MAX_HOURS {
        return Err(crate::RequestError::beyond(
            crate::Field::Hours,
            crate::defaults::shown(query.hours),
            "more than a century of running",
        )
        .with_hint(format!("give at most {MAX_HOURS} hours"))
        .into());
    }
    crate::defaults::require_positive(crate::Field::PriceKwh, query.price_per_kwh)?;
    if query.gpus == 0 {
        return Err(crate::defaults::at_least_one(crate::Field::Gpus, 0));
    }
    let estimate = energy(&input)?;
    for (field, value) in [
        (crate::Field::PurchasePrice, query.purchase_usd),
        (crate::Field::RentPrice, query.rent_usd_per_hour),
        (crate::Field::DepreciationYears, Some(query.depreciation_years)),
    ] {
        crate::defaults::require_positive(field, value)?;
    }
    let rent_or_buy = match (query.purchase_usd, query.rent_usd_per_hour) {
        (Some(purchase), Some(rent)) => {
            let energy_per_hour = estimate.average_kw * query.price_per_kwh.unwrap_or(0.0);
            rent_or_buy(purchase, query.depreciation_years, energy_per_hour, rent)
        }
        (Some(_), None) => {
            return Err(crate::RequestError::needs(
                crate::Field::PurchasePrice,
                crate::Field::RentPrice,
                " to compare with",
            )
            .into());
        }
        _ => None,
    };
    let assumptions = vec![
        format!(
            "{} TDP {} W per GPU (catalog), drawn at {:.0} % on average",
            accelerator.id,
            tdp.0,
            query.utilization * 100.0
        ),
        format!(
            "the rest of the server (CPUs, memory, NVSwitches, NICs, fans) draws {:.0} % more than its GPUs at the wall{}",
            (host_overhead - 1.0) * 100.0,
            if query.host_overhead.is_none() {
                " (DGX H100: 10.2 kW maximum input for 8 × 700 W GPUs; --host-overhead 1 counts the GPUs alone)"
            } else {
                ""
            }
        ),
        format!("PUE {} covers cooling and power distribution", query.pue),
    ];
    Ok(EnergyAnswer {
        gpu: accelerator.id.to_string(),
        gpus: query.gpus,
        hours: query.hours,
        tdp_watts: tdp.0,
        pue: query.pue,
        host_overhead,
        utilization: query.utilization,
        energy: estimate,
        rent_or_buy,
        assumptions,
    })
}

/// What the storage and egress prices of a cost rest on.
struct RateNotes {
    storage: String,
    egress: String,
}

/// The provider's storage and egress prices where the catalog has them, AWS's otherwise.
fn storage_rates(catalog: &Catalog, provider: Option<&ProviderId>) -> (StorageRates, RateNotes) {
    let published = provider.and_then(|p| catalog.storage_pricing(p));
    let fallback = StorageRates::default();
    let name = provider.map_or("the provider".to_string(), |p| p.display_name().to_string());
    let aws_storage = "storage at $0.08 per GB-month (AWS EBS gp3, us-east-1)";
    let aws_egress = "egress at AWS internet data-transfer tiers (first 100 GB free, then $0.09…$0.05 per GB)";
    let (block, storage) = match published.and_then(|p| p.block_usd_per_gb_month.map(|b| (b, p))) {
        Some((block, p)) => (
            block,
            format!(
                "storage at ${block} per GB-month ({}, {}, as of {})",
                name,
                p.block_kind.as_deref().unwrap_or("block storage"),
                p.as_of
            ),
        ),
        None if provider.is_some() => (
            fallback.block_usd_per_gb_month,
            format!("{aws_storage}: no published block-storage price for {name}"),
        ),
        None => (fallback.block_usd_per_gb_month, aws_storage.to_string()),
    };
    let published_egress = published.and_then(|p| Some((p.egress_tiers_per_gb()?, p.egress_text()?, p.as_of)));
    let (tiers, egress) = match published_egress {
        Some((tiers, described, as_of)) => (
            tiers,
            format!("egress at {name}'s published internet egress: {described} (as of {as_of})"),
        ),
        None if provider.is_some() => (
            fallback.egress_tiers.clone(),
            format!("{aws_egress}: no published egress price for {name}"),
        ),
        None => (fallback.egress_tiers.clone(), aws_egress.to_string()),
    };
    (
        StorageRates {
            block_usd_per_gb_month: block,
            egress_tiers: tiers,
        },
        RateNotes { storage, egress },
    )
}

/// The sizes of the instance family `name` (`NDv4`, `gn7i`) with their accelerators, smallest
/// first; `None` when `name` is no family.
fn family_sizes(catalog: &Catalog, name: &str) -> Option<String> {
    let key = gpuplan_model::family_key(name);
    let mut sizes: Vec<(u32, String)> = catalog
        .offerings()
        .iter()
        .filter(|o| {
            gpuplan_model::instance_families(o.provider.as_str(), &o.instance_type)
                .iter()
                .any(|family| gpuplan_model::family_key(family) == key)
        })
        .map(|o| {
            let gpus = o
                .accelerator
                .as_ref()
                .map_or(String::new(), |a| format!(" ({}× {a})", o.accelerator_count));
            (o.accelerator_count, format!("{}{gpus}", o.instance_type))
        })
        .collect();
    sizes.sort();
    sizes.dedup();
    let shown: Vec<String> = sizes.iter().take(8).map(|(_, s)| s.clone()).collect();
    let more = sizes.len().saturating_sub(shown.len());
    (!shown.is_empty()).then(|| {
        let rest = if more > 0 {
            format!(" and {more} more")
        } else {
            String::new()
        };
        format!("{}{rest}", shown.join(", "))
    })
}

//! What `cost` and `energy` are asked, as one value both front ends fill: the CLI from its
//! flags, the HTTP API from a JSON body whose fields carry the flags' names.

use crate::Error;
use crate::cost_job::{CostQuery, EnergyQuery, SpotSettings};
use crate::options::billing_mode;
use serde::{Deserialize, Serialize};

/// A staged price: from this hour of the month on, this rate (`--tiers 0:3.06,500:2.50`).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct PriceTier {
    pub from_hour: f64,
    pub usd_per_hour: f64,
}

impl std::str::FromStr for PriceTier {
    type Err = String;

    /// `FROM_HOUR:USD`, as the CLI takes it.
    fn from_str(text: &str) -> Result<Self, String> {
        let (from, price) = text
            .split_once(':')
            .ok_or_else(|| format!("`{text}` is not FROM_HOUR:USD"))?;
        let number = |t: &str| match t.trim().parse::<f64>() {
            Ok(v) if v.is_finite() && v >= 0.0 => Ok(v),
            _ => Err(format!("`{t}` is not a number of zero or more")),
        };
        Ok(PriceTier {
            from_hour: number(from)?,
            usd_per_hour: number(price)?,
        })
    }
}

/// `cost`: what an offering (or a negotiated rate) costs for some hours under each billing
/// mode. Name an `instance`, a `gpu` (with `gpus`) or a `price`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct CostOptions {
    /// An instance type from the catalog (`p3.2xlarge`); the cheapest region in scope is priced
    /// (among those that price every `billing` mode asked for, where any does).
    #[serde(default)]
    pub instance: Option<String>,
    /// A GPU type; with `gpus`, the cheapest offering of that shape is priced (among those that
    /// price every `billing` mode asked for, where any does).
    #[serde(default)]
    pub gpu: Option<String>,
    #[serde(default)]
    pub gpus: Option<u32>,
    #[serde(default, alias = "provider")]
    pub providers: Vec<String>,
    /// Region prefixes.
    #[serde(default, alias = "region")]
    pub regions: Vec<String>,
    /// A negotiated rate, USD per hour.
    #[serde(default)]
    pub price: Option<f64>,
    /// A spot rate, USD per hour, when the catalog has none.
    #[serde(default)]
    pub spot_price: Option<f64>,
    /// Hours of use.
    pub hours: f64,
    /// on-demand, spot, reserved-1y, reserved-3y.
    #[serde(default = "on_demand")]
    pub billing: Vec<String>,
    /// Checkpoint every this many minutes of work (spot; enables the interruption model).
    #[serde(default)]
    pub checkpoint_minutes: Option<f64>,
    /// Time to write a checkpoint (spot): seconds, or a duration (`"2min"`).
    #[serde(default, deserialize_with = "gpuplan_model::duration::seconds")]
    #[schema(schema_with = crate::duration_schema)]
    pub checkpoint_write: Option<f64>,
    /// Time to restart after an interruption (spot): seconds, or a duration (`"8min"`).
    #[serde(default, deserialize_with = "gpuplan_model::duration::seconds")]
    #[schema(schema_with = crate::duration_schema)]
    pub restart: Option<f64>,
    /// Spot interruptions per hour.
    #[serde(default)]
    pub interruption_rate: Option<f64>,
    /// Also simulate this many runs and report P50/P90 (spot).
    #[serde(default)]
    pub monte_carlo: Option<u32>,
    #[serde(default = "default_seed")]
    pub seed: u64,
    /// Block storage kept for the job, GB.
    #[serde(default)]
    pub storage_gb: f64,
    #[serde(default = "one")]
    pub storage_months: f64,
    /// Data sent out to the internet, GB.
    #[serde(default)]
    pub egress_gb: f64,
    #[serde(default)]
    pub tiers: Vec<PriceTier>,
    /// A savings-plan commitment, USD per hour.
    #[serde(default)]
    pub savings_plan: Option<f64>,
    /// The savings plan's discount (default: the provider's published 1-year discount).
    #[serde(default)]
    pub savings_discount: Option<f64>,
    /// Bill at least this many hours.
    #[serde(default)]
    pub minimum_hours: Option<f64>,
    /// Share of a reserved term the capacity is used, 0–1.
    #[serde(default, alias = "utilization")]
    pub utilisation: Option<f64>,
}

/// The simulation's seed when none is given.
const DEFAULT_SEED: u64 = 42;

fn default_seed() -> u64 {
    DEFAULT_SEED
}

fn on_demand() -> Vec<String> {
    vec!["on-demand".to_string()]
}

fn one() -> f64 {
    1.0
}

const SECONDS_PER_HOUR: f64 = 3600.0;
const MINUTES_PER_HOUR: f64 = 60.0;

impl CostOptions {
    /// `hours` of on-demand use, nothing named yet.
    pub fn for_hours(hours: f64) -> Self {
        CostOptions {
            instance: None,
            gpu: None,
            gpus: None,
            providers: Vec::new(),
            regions: Vec::new(),
            price: None,
            spot_price: None,
            hours,
            billing: on_demand(),
            checkpoint_minutes: None,
            checkpoint_write: None,
            restart: None,
            interruption_rate: None,
            monte_carlo: None,
            seed: DEFAULT_SEED,
            storage_gb: 0.0,
            storage_months: 1.0,
            egress_gb: 0.0,
            tiers: Vec::new(),
            savings_plan: None,
            savings_discount: None,
            minimum_hours: None,
            utilisation: None,
        }
    }

    /// The facade's query, billing modes parsed; the spot model applies when any of its
    /// inputs is given.
    pub fn query(&self) -> Result<CostQuery, Error> {
        let modeled =
            self.checkpoint_minutes.is_some() || self.interruption_rate.is_some() || self.monte_carlo.is_some();
        let spot_only = [
            (crate::Field::CheckpointWrite, self.checkpoint_write.is_some()),
            (crate::Field::Restart, self.restart.is_some()),
        ];
        if let Some((field, _)) = spot_only.iter().find(|(_, given)| *given && !modeled) {
            return Err(
                crate::RequestError::not_applicable(*field, "the spot interruption model only")
                    .with_hint("give {checkpoint_minutes} or {interruption_rate} too")
                    .into(),
            );
        }
        crate::defaults::require_non_negative(crate::Field::StorageGb, Some(self.storage_gb))?;
        crate::defaults::require_non_negative(crate::Field::StorageMonths, Some(self.storage_months))?;
        Ok(CostQuery {
            instance: self.instance.clone(),
            gpu: self.gpu.clone(),
            gpus: self.gpus,
            providers: self.providers.clone(),
            regions: self.regions.clone(),
            price: self.price,
            spot_price: self.spot_price,
            hours: self.hours,
            billing: self.billing.iter().map(|b| billing_mode(b)).collect::<Result<_, _>>()?,
            spot: modeled.then(|| SpotSettings {
                interruption_rate: self.interruption_rate,
                checkpoint_interval_hours: self.checkpoint_minutes.map(|m| m / MINUTES_PER_HOUR),
                checkpoint_write_hours: self.checkpoint_write.unwrap_or(0.0) / SECONDS_PER_HOUR,
                restart_hours: self.restart.unwrap_or(0.0) / SECONDS_PER_HOUR,
                monte_carlo_runs: self.monte_carlo,
                seed: self.seed,
            }),
            storage_gb_months: self.storage_gb * self.storage_months,
            egress_gb: self.egress_gb,
            tiers: self.tiers.iter().map(|t| (t.from_hour, t.usd_per_hour)).collect(),
            savings_plan: match (self.savings_plan, self.savings_discount) {
                (None, Some(_)) => {
                    return Err(Error::invalid(
                        "{savings_discount} applies with {savings_plan}",
                        Some(
                            "give the commitment with {savings_plan} USD_PER_HOUR, or drop {savings_discount}"
                                .to_string(),
                        ),
                    ));
                }
                (plan, discount) => plan.map(|commitment| (commitment, discount)),
            },
            minimum_hours: self.minimum_hours,
            utilisation: self.utilisation,
        })
    }
}

/// `energy`: electricity for GPUs running some hours, and rent against buy.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct EnergyOptions {
    /// The GPU type (its TDP comes from the catalog).
    pub gpu: String,
    #[serde(default = "one_gpu")]
    pub gpus: u32,
    /// Hours of operation.
    pub hours: f64,
    /// Power usage effectiveness of the facility (≥ 1; 1.0 for no cooling or distribution).
    #[serde(default = "one")]
    pub pue: f64,
    /// The server's wall power over its GPUs' (≥ 1; default 1.8, DGX H100's maximum system
    /// input over its GPUs' TDP; 1.0 counts the GPUs alone).
    #[serde(default)]
    pub host_overhead: Option<f64>,
    /// Average share of TDP drawn, 0–1.
    #[serde(default = "one", alias = "utilization")]
    pub utilisation: f64,
    /// Electricity price, USD per kWh.
    #[serde(default)]
    pub price_kwh: Option<f64>,
    /// Purchase price of the machine (USD), for rent against buy.
    #[serde(default)]
    pub purchase_price: Option<f64>,
    /// Years over which the purchase is depreciated.
    #[serde(default = "four_years")]
    pub depreciation_years: f64,
    /// Rental price of the same machine per hour (USD), for rent against buy.
    #[serde(default)]
    pub rent_price: Option<f64>,
}

fn one_gpu() -> u32 {
    1
}

/// Depreciation period when none is given: a common straight-line schedule for servers.
const DEFAULT_DEPRECIATION_YEARS: f64 = 4.0;

fn four_years() -> f64 {
    DEFAULT_DEPRECIATION_YEARS
}

impl EnergyOptions {
    pub fn query(&self) -> EnergyQuery {
        EnergyQuery {
            gpu: self.gpu.clone(),
            gpus: self.gpus,
            hours: self.hours,
            pue: self.pue,
            host_overhead: self.host_overhead,
            utilization: self.utilisation,
            price_per_kwh: self.price_kwh,
            purchase_usd: self.purchase_price,
            depreciation_years: self.depreciation_years,
            rent_usd_per_hour: self.rent_price,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cost_body_names_the_flags() {
        let options: CostOptions = serde_json::from_str(
            r#"{"gpu": "H100", "gpus": 8, "hours": 100, "billing": ["on-demand", "spot"],
                "checkpoint_minutes": 30, "restart": 480, "tiers": [{"from_hour": 0, "usd_per_hour": 3}]}"#,
        )
        .unwrap();
        let query = options.query().unwrap();
        let spot = query.spot.unwrap();
        assert_eq!(spot.checkpoint_interval_hours, Some(0.5));
        assert!((spot.restart_hours - 480.0 / 3600.0).abs() < 1e-12);
        assert_eq!(query.tiers, vec![(0.0, 3.0)]);
        assert_eq!(query.storage_gb_months, 0.0);
    }

    #[test]
    fn spot_timings_without_the_spot_model_are_refused() {
        let mut options = CostOptions::for_hours(10.0);
        options.restart = Some(60.0);
        let error = options.query().unwrap_err().to_string();
        assert!(error.starts_with("--restart applies to the spot"), "{error}");
    }

    #[test]
    fn unknown_fields_are_refused() {
        let error = serde_json::from_str::<EnergyOptions>(r#"{"gpu": "H100", "hours": 1, "watts": 700}"#).unwrap_err();
        assert!(error.to_string().contains("unknown field `watts`"), "{error}");
    }

    #[test]
    fn tiers_parse_as_the_cli_writes_them() {
        let tier: PriceTier = "500:2.50".parse().unwrap();
        assert_eq!(
            tier,
            PriceTier {
                from_hour: 500.0,
                usd_per_hour: 2.5
            }
        );
        assert!("500".parse::<PriceTier>().is_err());
        assert!("inf:3".parse::<PriceTier>().is_err());
    }
}

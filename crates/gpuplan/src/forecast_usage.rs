//! `forecast`: a usage history → a forecast with its backtest → a reserved-commitment plan.

use crate::{Error, resolve};
use gpuplan_catalog::Catalog;
use gpuplan_forecast::history::{Aggregate, HistoryOptions, Period, parse_csv, parse_json};
use gpuplan_forecast::{Backtest, Commitment, CommitmentPrices, ForecastPoint, Frequency, forecast, plan_commitment};
use gpuplan_model::CommitmentTerm;
use gpuplan_plan::OfferingSource;
use serde::Serialize;

/// What the history's values count.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, serde::Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "kebab-case")]
pub enum UsageUnit {
    /// GPU-hours used in each period.
    #[default]
    GpuHours,
    /// GPUs in use on average during each period.
    Gpus,
}

/// A forecasting question.
#[derive(Debug, Clone)]
pub struct ForecastQuery {
    pub history: String,
    /// `json` when the history is JSON, else CSV.
    pub json: bool,
    pub value_column: String,
    pub gpu: Option<String>,
    pub unit: UsageUnit,
    pub horizon: usize,
    pub level: f64,
    /// On-demand price per GPU-hour, to size a commitment.
    pub on_demand_price: Option<f64>,
    /// Reserved price per GPU-hour; else the provider's published discount for `term`.
    pub reserved_price: Option<f64>,
    pub provider: String,
    pub term: CommitmentTerm,
    /// The period to forecast in; `None`: days for sub-daily telemetry, else as observed.
    pub period: Option<Period>,
}

/// The answer, in the documented JSON shape.
#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
pub struct ForecastAnswer {
    pub forecast: Vec<ForecastPoint>,
    pub model: String,
    pub level: f64,
    pub frequency: Frequency,
    pub backtest: Backtest,
    pub commitment: Option<Commitment>,
    /// Periods missing from the history, filled by interpolation.
    #[schema(value_type = Vec<String>)]
    pub filled: Vec<gpuplan_forecast::PeriodStart>,
    pub assumptions: Vec<String>,
    /// The history as forecast: GPU-hours per period, after combining and filling.
    pub history: Vec<UsagePoint>,
}

/// GPU-hours used in one period of the history.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, utoipa::ToSchema)]
pub struct UsagePoint {
    /// The period's start: `2024-01-01`, or `2024-01-01T07:00` for hourly periods.
    #[schema(value_type = String)]
    pub timestamp: gpuplan_forecast::PeriodStart,
    pub gpu_hours: f64,
}

pub fn forecast_usage(catalog: &Catalog, query: &ForecastQuery) -> Result<ForecastAnswer, Error> {
    let options = HistoryOptions {
        value_column: query.value_column.clone(),
        gpu: query.gpu.clone(),
        // GPU-hours add up within a period; GPUs in use average over it.
        aggregate: match query.unit {
            UsageUnit::GpuHours => Aggregate::Sum,
            UsageUnit::Gpus => Aggregate::Mean,
        },
        period: query.period,
    };
    let series = if query.json {
        parse_json(&query.history, &options)
    } else {
        parse_csv(&query.history, &options)
    }
    .map_err(|e| Error::invalid(format!("history: {e}"), None))?;
    let hours = series.frequency.hours();
    let mut series_hours = series.clone();
    if query.unit == UsageUnit::Gpus {
        series_hours.values.iter_mut().for_each(|v| *v *= hours);
    }
    let result = forecast(&series_hours, query.horizon, query.level)?;
    let mut assumptions = vec![
        format!(
            "{:?} periods of {hours} h; values are GPU-hours per period",
            series.frequency
        )
        .to_lowercase(),
        format!("prediction intervals at {:.0} %", query.level * 100.0),
    ];
    if !series.filled.is_empty() {
        assumptions.push(format!(
            "{} missing periods filled by linear interpolation",
            series.filled.len()
        ));
    }
    let commitment = match query.on_demand_price {
        None => None,
        Some(on_demand) => {
            let reserved = match query.reserved_price {
                Some(price) => price,
                None => {
                    let provider = resolve::providers(catalog, std::slice::from_ref(&query.provider))?
                        .into_iter()
                        .next()
                        .ok_or_else(|| Error::invalid("no provider", None))?;
                    let discount = catalog.reserved_discount(&provider, query.term).ok_or_else(|| {
                        Error::invalid(
                            format!(
                                "{} publishes no {} discount in the catalog",
                                provider.display_name(),
                                query.term
                            ),
                            Some("give --reserved-price".to_string()),
                        )
                    })?;
                    let rate = gpuplan_plan::reserved_rate(on_demand, discount);
                    assumptions.extend(rate.derivation().map(|how| format!("reserved price derived: {how}")));
                    rate.usd_per_hour
                }
            };
            let prices = CommitmentPrices {
                on_demand_usd_per_gpu_hour: on_demand,
                reserved_usd_per_gpu_hour: reserved,
                hours_per_period: hours,
            };
            Some(plan_commitment(&result, &prices)?)
        }
    };
    if commitment.is_none() {
        assumptions.push("no --on-demand-price: no commitment plan".to_string());
    }
    Ok(ForecastAnswer {
        forecast: result.points.clone(),
        model: result.model.clone(),
        level: result.level,
        frequency: series.frequency,
        backtest: result.backtest.clone(),
        commitment,
        filled: series.filled,
        assumptions,
        history: series_hours
            .starts
            .iter()
            .zip(&series_hours.values)
            .map(|(&timestamp, &gpu_hours)| UsagePoint { timestamp, gpu_hours })
            .collect(),
    })
}

/// The chart of an answer, as SVG.
pub fn forecast_chart(answer: &ForecastAnswer, title: &str) -> String {
    let forecast = gpuplan_forecast::Forecast {
        model: answer.model.clone(),
        level: answer.level,
        points: answer.forecast.clone(),
        backtest: answer.backtest.clone(),
    };
    let hours = answer.frequency.hours();
    let history: Vec<f64> = answer.history.iter().map(|p| p.gpu_hours).collect();
    let starts: Vec<gpuplan_forecast::PeriodStart> = answer.history.iter().map(|p| p.timestamp).collect();
    gpuplan_forecast::chart::svg(
        &starts,
        &history,
        &forecast,
        answer.commitment.as_ref().map(|c| c.reserved_gpus as f64 * hours),
        title,
    )
}

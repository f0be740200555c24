//! What `forecast` is asked, as one value both front ends fill: the CLI from its flags (the
//! history read from `--history FILE`), the HTTP API from a JSON body.

use crate::Error;
use crate::forecast_usage::{ForecastQuery, UsageUnit};
use gpuplan_forecast::history::Period;
use gpuplan_model::CommitmentTerm;
use serde::{Deserialize, Serialize};

/// A usage history: CSV text with a header (`timestamp,value`), or JSON records
/// (`[{"timestamp": "2024-01-01", "value": 120}]`), as an array or as text.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(untagged)]
pub enum UsageHistory {
    /// CSV, or JSON written as text (it starts with `[`).
    Text(String),
    Records(Vec<serde_json::Value>),
}

impl UsageHistory {
    /// The history as text, and whether that text is JSON.
    fn text(&self) -> (String, bool) {
        match self {
            UsageHistory::Text(text) => (text.clone(), text.trim_start().starts_with('[')),
            UsageHistory::Records(records) => (serde_json::Value::from(records.clone()).to_string(), true),
        }
    }
}

/// `forecast`: a usage history forecast with its backtest, and the reserved commitment that
/// minimises the expected cost when prices are given.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct ForecastOptions {
    pub history: UsageHistory,
    /// Periods to forecast.
    #[serde(default = "twelve")]
    pub horizon: usize,
    /// The CSV column holding the values.
    #[serde(default = "value")]
    pub value_column: String,
    /// Only rows whose `gpu` column is this.
    #[serde(default)]
    pub gpu: Option<String>,
    /// What the values count.
    #[serde(default)]
    pub unit: UsageUnit,
    /// Forecast per hour, day, week or month (default: days for telemetry with times of day,
    /// else as observed).
    #[serde(default)]
    pub period: Option<Period>,
    /// Prediction-interval level.
    #[serde(default = "ninety_percent")]
    pub level: f64,
    /// On-demand price per GPU-hour (USD), to plan a commitment.
    #[serde(default)]
    pub on_demand_price: Option<f64>,
    /// Reserved price per GPU-hour (USD); else the provider's published discount.
    #[serde(default)]
    pub reserved_price: Option<f64>,
    /// Provider whose reserved discount applies.
    #[serde(default = "aws")]
    pub provider: String,
    /// Commitment term: 1y or 3y.
    #[serde(default = "one_year")]
    pub term: String,
}

/// Periods forecast when none are asked: a year of months, or twelve of any period.
const DEFAULT_HORIZON: usize = 12;
/// Prediction-interval level when none is asked: the 5th to 95th percentile.
const DEFAULT_LEVEL: f64 = 0.9;

fn twelve() -> usize {
    DEFAULT_HORIZON
}

fn value() -> String {
    "value".to_string()
}

fn ninety_percent() -> f64 {
    DEFAULT_LEVEL
}

fn aws() -> String {
    "aws".to_string()
}

fn one_year() -> String {
    "1y".to_string()
}

impl ForecastOptions {
    /// `history` with every other option at its default.
    pub fn for_history(history: UsageHistory) -> Self {
        ForecastOptions {
            history,
            horizon: DEFAULT_HORIZON,
            value_column: value(),
            gpu: None,
            unit: UsageUnit::GpuHours,
            period: None,
            level: DEFAULT_LEVEL,
            on_demand_price: None,
            reserved_price: None,
            provider: aws(),
            term: one_year(),
        }
    }

    pub fn query(&self) -> Result<ForecastQuery, Error> {
        let term = match self.term.as_str() {
            "1y" => CommitmentTerm::OneYear,
            "3y" => CommitmentTerm::ThreeYears,
            other => {
                return Err(Error::invalid(format!("--term `{other}` is not 1y or 3y"), None));
            }
        };
        let commitment_only = [
            ("reserved-price", self.reserved_price.is_some()),
            ("term", self.term != one_year()),
        ];
        if self.on_demand_price.is_none()
            && let Some((flag, _)) = commitment_only.iter().find(|(_, given)| *given)
        {
            return Err(Error::invalid(
                format!("--{flag} sizes a commitment, which needs --on-demand-price"),
                Some("give --on-demand-price too".to_string()),
            ));
        }
        let (history, json) = self.history.text();
        Ok(ForecastQuery {
            history,
            json,
            value_column: self.value_column.clone(),
            gpu: self.gpu.clone(),
            unit: self.unit,
            horizon: self.horizon,
            level: self.level,
            period: self.period,
            on_demand_price: self.on_demand_price,
            reserved_price: self.reserved_price,
            provider: self.provider.clone(),
            term,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_history_is_text_or_records() {
        let csv: ForecastOptions =
            serde_json::from_str(r#"{"history": "timestamp,value\n2024-01-01,3\n", "unit": "gpus"}"#).unwrap();
        let query = csv.query().unwrap();
        assert!(!query.json);
        assert_eq!(query.unit, UsageUnit::Gpus);
        let records: ForecastOptions =
            serde_json::from_str(r#"{"history": [{"timestamp": "2024-01-01", "value": 3}], "period": "week"}"#)
                .unwrap();
        let query = records.query().unwrap();
        assert!(query.json);
        assert_eq!(query.period, Some(Period::Week));
    }

    #[test]
    fn commitment_options_without_a_price_are_refused() {
        let mut options = ForecastOptions::for_history(UsageHistory::Text(String::new()));
        options.term = "3y".to_string();
        let error = options.query().unwrap_err().to_string();
        assert!(error.starts_with("--term sizes a commitment"), "{error}");
    }
}

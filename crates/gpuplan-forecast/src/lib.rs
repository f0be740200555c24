//! gpuplan forecasting: usage histories, seasonal forecasts chosen by backtest, and reserved
//! commitments sized against the forecast's uncertainty.
//!
//! ```
//! use gpuplan_forecast::history::{HistoryOptions, parse_csv};
//!
//! let text = "timestamp,value\n2024-01-01,10\n2024-02-01,12\n2024-03-01,11\n2024-04-01,13\n2024-05-01,12\n2024-06-01,14\n";
//! let series = parse_csv(text, &HistoryOptions::default()).unwrap();
//! assert_eq!(series.values.len(), 6);
//! ```

pub mod chart;
pub mod commitment;
pub mod forecast;
pub mod history;
mod holt_winters;
mod optimize;
mod period_start;
mod sarima;

pub use commitment::{Commitment, CommitmentError, CommitmentPrices, plan_commitment};
pub use forecast::{Backtest, Forecast, ForecastError, ForecastPoint, forecast};
pub use history::{Frequency, HistoryError, Series};
pub use period_start::PeriodStart;

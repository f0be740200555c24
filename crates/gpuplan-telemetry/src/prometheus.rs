//! Answers of a Prometheus server's range queries (`/api/v1/query_range`, result type
//! `matrix`) for the DCGM exporter's metrics, as samples: one per GPU and step, the metrics
//! of a GPU at a step combined, as in a scrape.

use crate::dcgm::parse_dcgm;
use crate::sample::{Sample, TelemetryError};
use std::fmt::Write as _;

/// The DCGM exporter metrics a rightsizing reads.
pub const DCGM_METRICS: [&str; 6] = [
    "DCGM_FI_DEV_GPU_UTIL",
    "DCGM_FI_PROF_SM_ACTIVE",
    "DCGM_FI_PROF_PIPE_TENSOR_ACTIVE",
    "DCGM_FI_DEV_FB_USED",
    "DCGM_FI_DEV_FB_FREE",
    "DCGM_FI_DEV_POWER_USAGE",
];

#[derive(serde::Deserialize)]
struct Answer {
    status: String,
    #[serde(default)]
    data: Option<Data>,
    #[serde(default)]
    error: Option<String>,
}

#[derive(serde::Deserialize)]
struct Data {
    #[serde(rename = "resultType")]
    result_type: String,
    result: Vec<Series>,
}

#[derive(serde::Deserialize)]
struct Series {
    metric: std::collections::BTreeMap<String, String>,
    values: Vec<(f64, String)>,
}

/// The samples of one or more range-query answers (JSON texts), each for a DCGM metric.
pub fn parse_query_ranges(answers: &[&str]) -> Result<Vec<Sample>, TelemetryError> {
    // Written back as timestamped exposition lines, so a range answer and a scrape are read by
    // one parser.
    let mut exposition = String::new();
    for (index, text) in answers.iter().enumerate() {
        let line = index as u64 + 1;
        let answer: Answer = serde_json::from_str(text).map_err(|e| TelemetryError::Line {
            line,
            message: format!("not a Prometheus API answer: {e}"),
        })?;
        if answer.status != "success" {
            return Err(TelemetryError::Line {
                line,
                message: format!(
                    "Prometheus answered {}: {}",
                    answer.status,
                    answer.error.unwrap_or_default()
                ),
            });
        }
        let Some(data) = answer.data else { continue };
        if data.result_type != "matrix" {
            return Err(TelemetryError::Line {
                line,
                message: format!("a `{}` result, not a range query's `matrix`", data.result_type),
            });
        }
        for series in data.result {
            let name = series.metric.get("__name__").cloned().unwrap_or_default();
            let labels: Vec<String> = series
                .metric
                .iter()
                .filter(|(k, _)| k.as_str() != "__name__")
                .map(|(k, v)| {
                    format!(
                        "{k}=\"{}\"",
                        v.replace('\\', "\\\\").replace('"', "\\\"").replace('\n', "\\n")
                    )
                })
                .collect();
            for (at, value) in series.values {
                let _ = writeln!(
                    exposition,
                    "{name}{{{}}} {value} {}",
                    labels.join(","),
                    (at * 1000.0) as i64
                );
            }
        }
    }
    parse_dcgm(&exposition, 0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_matrix_becomes_samples() {
        let answer = r#"{"status":"success","data":{"resultType":"matrix","result":[
            {"metric":{"__name__":"DCGM_FI_DEV_GPU_UTIL","UUID":"GPU-1","modelName":"NVIDIA L4","namespace":"ml","pod":"p"},
             "values":[[1714564800,"40"],[1714564860,"60"]]}]}}"#;
        let samples = parse_query_ranges(&[answer]).unwrap();
        assert_eq!(samples.len(), 2);
        assert_eq!(samples[1].utilisation, Some(0.6));
        assert_eq!(samples[0].job.as_deref(), Some("ml/p"));
        let failed = r#"{"status":"error","errorType":"bad_data","error":"parse error"}"#;
        assert!(
            parse_query_ranges(&[failed])
                .unwrap_err()
                .to_string()
                .contains("parse error")
        );
        assert!(parse_query_ranges(&["<html>"]).is_err());
    }
}

//! Published measurements of what GPUs reach in practice (`data/benchmarks/published.toml`):
//! best dense matrix-multiply TFLOPS per precision and device-memory bandwidth, each with its
//! method and source. `probe` calibrates a machine against them.

use gpuplan_model::{AcceleratorId, Precision};
use serde::{Deserialize, Serialize};

/// What a row measured.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Measured {
    /// Dense matrix multiply, TFLOPS.
    Gemm,
    /// Device memory, GB/s (bytes read plus written).
    MemoryBandwidth,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PublishedMeasurement {
    /// The catalog's accelerator.
    pub gpu: AcceleratorId,
    /// The GPU as the source names it.
    pub as_named: String,
    pub what: Measured,
    /// For a GEMM: the precision of its inputs.
    pub precision: Option<Precision>,
    /// TFLOPS (GEMM) or GB/s (bandwidth).
    pub measured: f64,
    pub method: String,
    pub note: Option<String>,
    pub source: String,
}

/// A catalog's `benchmarks/published.toml` (empty where its folder has none).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PublishedBenchmarks {
    pub measurement: Vec<PublishedMeasurement>,
}

impl PublishedBenchmarks {
    pub(crate) fn parse(file: &str, text: &str) -> Result<PublishedBenchmarks, crate::CatalogError> {
        crate::raw::parse_toml(file, text)
    }

    /// The rows of `what` (and, for a GEMM, `precision`), on any GPU.
    pub fn measuring(
        &self,
        what: Measured,
        precision: Option<Precision>,
    ) -> impl Iterator<Item = &PublishedMeasurement> {
        self.measurement
            .iter()
            .filter(move |m| m.what == what && (what != Measured::Gemm || m.precision == precision))
    }

    /// The rows of `what` (and, for a GEMM, `precision`) measured on `gpu`.
    pub fn of<'a>(
        &'a self,
        gpu: &'a AcceleratorId,
        what: Measured,
        precision: Option<Precision>,
    ) -> impl Iterator<Item = &'a PublishedMeasurement> + 'a {
        self.measuring(what, precision).filter(move |m| &m.gpu == gpu)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Catalog;

    #[test]
    fn every_row_names_a_catalog_gpu_a_source_and_a_plausible_figure() {
        let catalog = Catalog::embedded().unwrap();
        let published = catalog.published_benchmarks();
        assert!(published.measurement.len() >= 40);
        for row in &published.measurement {
            let gpu = catalog.accelerators().get(row.gpu.as_str());
            let gpu = gpu.unwrap_or_else(|| panic!("{} is not in the catalog", row.gpu));
            assert!(row.source.starts_with("https://"), "{}", row.source);
            // A measurement never beats the datasheet, and a sound one reaches a third of it.
            let datasheet = match row.what {
                Measured::Gemm => row.precision.and_then(|p| gpu.dense.get(p)).map(|f| f.0 / 1e12),
                Measured::MemoryBandwidth => gpu.memory_bandwidth.map(|b| b.0 / 1e9),
            };
            if let Some(datasheet) = datasheet {
                let ratio = row.measured / datasheet;
                assert!(
                    (0.33..=1.0).contains(&ratio),
                    "{} {:?} {:?}: {ratio:.2}",
                    row.gpu,
                    row.what,
                    row.precision
                );
            }
        }
    }
}

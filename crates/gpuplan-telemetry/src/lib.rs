//! GPU telemetry: samples read from `nvidia-smi --query-gpu … --format=csv` logs and from DCGM
//! exporter scrapes (Prometheus text format), summarised per GPU and per job. Pure: the text
//! comes in, numbers go out; reading files and querying Prometheus are the front end's.

mod benchmark;
mod dcgm;
mod device_facts;
mod nvidia_smi;
mod nvidia_smi_xml;
mod poc;
mod prometheus;
mod sample;
mod summary;

pub use benchmark::{
    AllReduceMeasurement, DeviceBenchmark, GemmMeasurement, HostBenchmarks, all_reduce_bus_bandwidth, gemm_flops,
};
pub use dcgm::parse_dcgm;
pub use device_facts::{DeviceFacts, DeviceLink, HostFacts};
pub use nvidia_smi::parse_nvidia_smi_csv;
pub use nvidia_smi_xml::parse_nvidia_smi_xml;
pub use poc::{PocReport, PocRun, PocShape, scaling_efficiency};
pub use prometheus::{DCGM_METRICS, parse_query_ranges};
pub use sample::{GpuKey, Sample, TelemetryError, check_samples};
pub use summary::{GpuSummary, IDLE_UTILISATION, JobSummary, summarise, summarise_jobs, usage_per_hour};

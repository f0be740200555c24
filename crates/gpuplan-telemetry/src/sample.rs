//! One observation of one GPU.

/// Which GPU: its UUID where the source gives one, else host and index.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct GpuKey(pub String);

/// What one GPU was doing at one moment. Shares are 0–1; absent when the source does not say.
#[derive(Debug, Clone, PartialEq)]
pub struct Sample {
    /// Seconds since the Unix epoch (UTC).
    pub at: i64,
    pub gpu: GpuKey,
    /// The device name NVML reports (`NVIDIA A100-SXM4-80GB`).
    pub name: String,
    /// The job on the GPU (`namespace/pod`), where the source says.
    pub job: Option<String>,
    /// Share of time a kernel ran (nvidia-smi `utilization.gpu`, DCGM `GPU_UTIL`).
    pub utilisation: Option<f64>,
    /// Share of time the streaming multiprocessors were active (DCGM `PROF_SM_ACTIVE`).
    pub sm_active: Option<f64>,
    /// Share of cycles the tensor cores were active (DCGM `PROF_PIPE_TENSOR_ACTIVE`).
    pub tensor_active: Option<f64>,
    pub memory_used_bytes: Option<u64>,
    pub memory_total_bytes: Option<u64>,
    pub power_watts: Option<f64>,
}

/// Telemetry that cannot be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TelemetryError {
    #[error("line {line}: {message}")]
    Line { line: u64, message: String },
    #[error(
        "no `{0}` column: the log needs --query-gpu=timestamp,index,name,uuid,utilization.gpu,memory.used,memory.total (and optionally utilization.memory, power.draw)"
    )]
    MissingColumn(String),
    #[error("no GPU samples in the telemetry")]
    Empty,
}

pub(crate) const MIB: u64 = 1024 * 1024;

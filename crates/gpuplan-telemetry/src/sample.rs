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

/// Most a GPU draws, watts: above any board's limit (B200 1,000 W, MI355X 1,400 W).
const MAX_WATTS: f64 = 3000.0;

impl Sample {
    /// What no GPU can report: a share above 100 %, more memory in use than it has, a power
    /// beyond any board. Such a sample is a damaged log, not an observation.
    pub fn impossible(&self) -> Option<String> {
        let shares = [
            ("utilisation", self.utilisation),
            ("SM activity", self.sm_active),
            ("tensor activity", self.tensor_active),
        ];
        if let Some((what, share)) = shares
            .iter()
            .find(|(_, s)| s.is_some_and(|s| !(0.0..=1.0).contains(&s)))
        {
            return Some(format!(
                "{what} {:.0} % is not a share of time",
                share.unwrap_or(0.0) * 100.0
            ));
        }
        if let (Some(used), Some(total)) = (self.memory_used_bytes, self.memory_total_bytes) {
            if used > total {
                return Some(format!(
                    "{:.0} MiB of memory used on a GPU of {:.0} MiB",
                    used as f64 / MIB as f64,
                    total as f64 / MIB as f64
                ));
            }
        }
        if let Some(watts) = self.power_watts.filter(|w| *w > MAX_WATTS) {
            return Some(format!("{watts:.0} W is beyond any GPU's power"));
        }
        None
    }
}

/// Refuses samples no GPU can produce, naming the first.
pub fn check_samples(samples: &[Sample]) -> Result<(), TelemetryError> {
    match samples.iter().find_map(|s| s.impossible().map(|why| (s, why))) {
        Some((sample, why)) => Err(TelemetryError::Impossible {
            gpu: sample.gpu.0.clone(),
            at: sample.at,
            why,
        }),
        None => Ok(()),
    }
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
    #[error("{gpu} at {at} (Unix seconds): {why}; the log is damaged")]
    Impossible { gpu: String, at: i64, why: String },
}

pub(crate) const MIB: u64 = 1024 * 1024;

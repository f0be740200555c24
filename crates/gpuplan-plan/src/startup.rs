//! The time around the computation: provisioning nodes, pulling the container image, staging
//! weights and data, writing checkpoints — part of the wall time and of the bill. Figures come
//! from the catalog's operations tables per provider class; each can be overridden, and a
//! catalog without the tables gets the conservative fallbacks below, stated as assumptions.

use gpuplan_model::{Offering, Operations, Precision, Task};

/// Provisioning assumed where the catalog has no start-up table for a provider: the slow end
/// of what providers document for a GPU VM to boot with its drivers (10 min).
pub const FALLBACK_PROVISION_SECONDS: f64 = 600.0;

/// Image pull, storage read and checkpoint write throughput assumed without a table, Gbit/s
/// per node: a single-stream object-storage transfer.
pub const FALLBACK_TRANSFER_GBPS: f64 = 1.0;

/// Container image size assumed without a table, GB (an NGC PyTorch image is 10–20 GB
/// uncompressed).
pub const FALLBACK_IMAGE_GB: f64 = 15.0;

/// Hours of work between checkpoints on capacity that is not interrupted, unless the user
/// says otherwise: the hourly checkpoint most training recipes default to.
pub const DEFAULT_CHECKPOINT_INTERVAL_HOURS: f64 = 1.0;

/// Bytes per trainable parameter in a checkpoint with AdamW: fp32 master weights and two
/// fp32 moments (Rajbhandari et al. 2020, ZeRO §3: 12 bytes of optimizer state).
pub const CHECKPOINT_BYTES_PER_TRAINABLE_PARAMETER: f64 = 12.0;

/// What the user overrides.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct StartupOverrides {
    pub provision_seconds: Option<f64>,
    pub image_gb: Option<f64>,
    /// Object storage read and write throughput per node, Gbit/s.
    pub storage_gbps: Option<f64>,
    pub checkpoint_interval_hours: Option<f64>,
    /// Bytes staged onto every node before the first step besides the image and weights
    /// (a vision dataset copied to local disk).
    pub dataset_bytes: Option<f64>,
}

/// Bytes of one training checkpoint: the weights in 16 bits and, for each trainable parameter,
/// its fp32 master copy and two Adam moments. Nothing for serving.
pub fn checkpoint_bytes(parameters: u64, trainable: u64, task: Task) -> f64 {
    if task.is_training() {
        parameters as f64 * 2.0 + trainable as f64 * CHECKPOINT_BYTES_PER_TRAINABLE_PARAMETER
    } else {
        0.0
    }
}

/// Time around the computation of one configuration.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Startup {
    pub provision_seconds: f64,
    pub image_seconds: f64,
    pub staging_seconds: f64,
    /// Writing one checkpoint.
    pub checkpoint_write_seconds: f64,
    /// Reading weights and a checkpoint back after an interruption (restart, less provisioning).
    pub reload_seconds: f64,
    pub interval_hours: f64,
    /// Object-storage read rate per node it assumed, Gbit/s.
    pub storage_read_gbps: f64,
}

impl Startup {
    /// Rent to first useful step.
    pub fn seconds(&self) -> f64 {
        self.provision_seconds + self.image_seconds + self.staging_seconds
    }

    /// Wall time of a job of `work_seconds` of computation on uninterrupted capacity:
    /// start-up, the work, a checkpoint every interval and a final save.
    pub fn wall_seconds(&self, work_seconds: f64, task: Task) -> f64 {
        let checkpoints = if task.is_training() {
            (work_seconds / 3600.0 / self.interval_hours).floor() + 1.0
        } else {
            0.0
        };
        self.seconds() + work_seconds + checkpoints * self.checkpoint_write_seconds
    }
}

/// Bytes a stored checkpoint of the weights takes at `precision` (hub checkpoints of 32-bit
/// trained models are stored in 16 bits).
pub(crate) fn stored_bytes_per_parameter(precision: Precision) -> f64 {
    match precision {
        Precision::Int4 | Precision::Fp4 => 0.5,
        Precision::Int8 | Precision::Fp8 | Precision::Fp6 => 1.0,
        _ => 2.0,
    }
}

/// The model a job loads at start and checkpoints as it runs.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct JobWeights {
    pub parameters: u64,
    /// Of `parameters`, those trained (their optimizer state is checkpointed too).
    pub trainable: u64,
    pub precision: Precision,
    pub task: Task,
}

impl JobWeights {
    /// Bytes of weights the job downloads at start, at their stored precision: none for
    /// pre-training, which starts from random weights.
    pub fn downloaded_bytes(&self) -> f64 {
        if self.task == Task::Pretrain {
            0.0
        } else {
            self.parameters as f64 * stored_bytes_per_parameter(self.precision)
        }
    }
}

/// Start-up of `nodes` instances of `offering` for a job on `weights`.
pub fn startup(
    operations: &Operations,
    overrides: &StartupOverrides,
    offering: &Offering,
    nodes: u32,
    weights: JobWeights,
) -> Startup {
    let JobWeights {
        parameters,
        trainable,
        task,
        ..
    } = weights;
    let profile = operations.startup(&offering.provider);
    let provision = overrides
        .provision_seconds
        .or(profile.map(|p| p.provision_seconds))
        .unwrap_or(FALLBACK_PROVISION_SECONDS);
    let image_gb = overrides.image_gb.or(operations.image_gb).unwrap_or(FALLBACK_IMAGE_GB);
    let pull = profile.map_or(FALLBACK_TRANSFER_GBPS, |p| p.image_pull_gbps);
    let read = overrides
        .storage_gbps
        .or(profile.map(|p| p.storage_read_gbps))
        .unwrap_or(FALLBACK_TRANSFER_GBPS);
    let write = overrides
        .storage_gbps
        .or(profile.map(|p| p.checkpoint_write_gbps))
        .unwrap_or(FALLBACK_TRANSFER_GBPS);
    let bytes_per_second = |gbps: f64| gbps * 1e9 / 8.0;
    let weights = weights.downloaded_bytes();
    let dataset = overrides.dataset_bytes.unwrap_or(0.0);
    let checkpoint = checkpoint_bytes(parameters, trainable, task);
    // Every node writes its shard of the checkpoint in parallel.
    let write_seconds = checkpoint / (bytes_per_second(write) * f64::from(nodes.max(1)));
    Startup {
        provision_seconds: provision,
        image_seconds: image_gb * 1e9 / bytes_per_second(pull),
        staging_seconds: (weights + dataset) / bytes_per_second(read),
        checkpoint_write_seconds: write_seconds,
        reload_seconds: image_gb * 1e9 / bytes_per_second(pull)
            + (weights + checkpoint / f64::from(nodes.max(1))) / bytes_per_second(read),
        interval_hours: overrides
            .checkpoint_interval_hours
            .unwrap_or(DEFAULT_CHECKPOINT_INTERVAL_HOURS),
        storage_read_gbps: read,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn offering() -> Offering {
        crate::test_offering::offering(None, 8, 192.0)
    }

    #[test]
    fn fallbacks_give_minutes_not_seconds() {
        let s = startup(
            &Operations::default(),
            &StartupOverrides::default(),
            &offering(),
            1,
            JobWeights {
                parameters: 8_000_000_000,
                trainable: 8_000_000_000,
                precision: Precision::Bf16,
                task: Task::Finetune,
            },
        );
        // 600 s provisioning, 15 GB image at 1 Gbit/s = 120 s, 16 GB of weights = 128 s.
        assert!((s.seconds() - (600.0 + 120.0 + 128.0)).abs() < 1e-6, "{}", s.seconds());
        // A 2-hour job writes three checkpoints of 16 + 96 GB at 1 Gbit/s.
        let wall = s.wall_seconds(7200.0, Task::Finetune);
        assert!((wall - (s.seconds() + 7200.0 + 3.0 * 896.0)).abs() < 1e-6, "{wall}");
    }

    #[test]
    fn pretraining_downloads_no_weights_and_overrides_win() {
        let overrides = StartupOverrides {
            provision_seconds: Some(60.0),
            image_gb: Some(0.0),
            ..StartupOverrides::default()
        };
        let s = startup(
            &Operations::default(),
            &overrides,
            &offering(),
            2,
            JobWeights {
                parameters: 1_000_000,
                trainable: 1_000_000,
                precision: Precision::Bf16,
                task: Task::Pretrain,
            },
        );
        assert_eq!(s.seconds(), 60.0);
    }
}

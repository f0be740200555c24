//! The best way to run one workload on one cluster: tensor × pipeline layout, ZeRO stage,
//! recomputation and micro-batch, where the user left them open.

use gpuplan_estimate::{Cluster, Estimate, EstimateError, EstimateRequest, TrainingAmount};
use gpuplan_model::{
    Accelerator, Checkpointing, Engine, Framework, ImageSettings, KvCacheDtype, LoraTargets, ModelSpec, Offload,
    Optimizer, ParallelLayout, Precision, SequencePacking, Task, TransformerSpec, Workload,
};

/// Largest micro-batch the automatic choice tries.
const MAX_AUTO_MICRO_BATCH: u64 = 64;

/// Global batch, in sequences (samples), when none is given: the usual starting point of the
/// training recipes (GPT-3's and Llama 2's 4M-token batches are 1–2 K sequences of 2–4 K
/// tokens; ImageNet recipes use 256 images).
pub const DEFAULT_GLOBAL_BATCH: u64 = 256;

/// The largest global batch, in tokens, the default grows to with data parallelism: Llama 3
/// 405B's final batch, 16 M tokens (Dubey et al. 2024, §3.4.1: 4 M tokens, raised to 8 M and
/// 16 M as training went on). Beyond the critical batch size more sequences per step no longer
/// shorten training (McCandlish et al. 2018).
pub const CRITICAL_BATCH_TOKENS: f64 = 16.0 * 1024.0 * 1024.0;

/// Micro-batches per pipeline stage a replica runs each step when the batch is left open: with
/// `m = 4p` the 1F1B bubble, (p − 1)/m, stays under a quarter (Narayanan et al. 2021 run
/// m ≫ p; Llama 3 405B ran 16 micro-batches through 16 interleaved stages).
pub const MICRO_BATCHES_PER_STAGE: u64 = 4;

/// The global batch when none is given for `dp` data-parallel replicas of `pp` pipeline stages
/// and sequences of `seq` tokens: [`DEFAULT_GLOBAL_BATCH`], or more on large clusters — `micro`
/// sequences per replica, and [`MICRO_BATCHES_PER_STAGE`] micro-batches per stage when the
/// model is pipelined, up to [`CRITICAL_BATCH_TOKENS`] — a multiple of `dp × micro` so that it
/// splits evenly; `None` when even one step of `micro` per replica exceeds the critical batch
/// (so many replicas waste tokens: the layout should split the model more instead).
pub fn default_global_batch(dp: u64, micro: u64, seq: u64, pp: u64) -> Option<u64> {
    let step = (dp * micro).max(1);
    let critical = ((CRITICAL_BATCH_TOKENS / seq.max(1) as f64).floor() as u64).max(1);
    if step > critical && dp > 1 {
        return None;
    }
    let pipelined = if pp > 1 {
        (step * MICRO_BATCHES_PER_STAGE * pp).min(critical)
    } else {
        0
    };
    let wanted = DEFAULT_GLOBAL_BATCH.min(critical).max(pipelined).max(step);
    Some(wanted.div_ceil(step) * step)
}

/// A workload with the open choices left as `None`.
#[derive(Debug, Clone, PartialEq)]
pub struct WorkloadTemplate {
    pub task: Task,
    pub precision: Precision,
    pub batch: Option<u64>,
    pub micro_batch: Option<u64>,
    pub seq: u64,
    pub output_tokens: u64,
    pub tp: Option<u32>,
    pub pp: Option<u32>,
    /// Context parallel degree (1 unless given).
    pub cp: u32,
    /// Expert parallel degree (1 unless given).
    pub ep: u32,
    /// Virtual pipeline stages per GPU, where given.
    pub vp: Option<u32>,
    /// Attention data parallelism across a serving replica (mixture of experts).
    pub attention_dp: bool,
    /// Expert-parallel all-to-alls overlapped with the adjacent micro-batch's compute.
    pub ep_overlap: bool,
    pub zero: Option<u8>,
    pub checkpointing: Option<Checkpointing>,
    pub optimizer: Optimizer,
    /// The optimizer steps inside the backward pass: one micro-batch per replica and step, no
    /// pipeline stages.
    pub optimizer_in_backward: bool,
    pub lora_rank: u64,
    pub lora_targets: LoraTargets,
    pub offload: Offload,
    pub packing: SequencePacking,
    pub compiled: bool,
    pub flash_attention: bool,
    pub engine: Engine,
    pub engine_settings: gpuplan_model::EngineSettings,
    pub weight_kernel: Option<gpuplan_model::WeightKernel>,
    pub framework: Option<Framework>,
    pub kv_cache: KvCacheDtype,
    pub image: ImageSettings,
}

impl WorkloadTemplate {
    /// The workload with the open choices filled.
    pub fn workload(
        &self,
        batch: u64,
        micro_batch: u64,
        layout: ParallelLayout,
        checkpointing: Checkpointing,
    ) -> Workload {
        Workload {
            task: self.task,
            precision: self.precision,
            batch,
            micro_batch,
            seq: self.seq,
            output_tokens: self.output_tokens,
            layout,
            checkpointing,
            optimizer: self.optimizer,
            optimizer_in_backward: self.optimizer_in_backward,
            lora_rank: self.lora_rank,
            lora_targets: self.lora_targets,
            offload: self.offload,
            packing: self.packing,
            compiled: self.compiled,
            flash_attention: self.flash_attention,
            engine: self.engine,
            engine_settings: self.engine_settings,
            weight_kernel: self.weight_kernel,
            framework: self.framework,
            kv_cache: self.kv_cache,
            image: self.image,
        }
    }
}

/// A fully chosen workload and its estimate.
#[derive(Debug, Clone, PartialEq)]
pub struct Configured {
    pub workload: Workload,
    pub estimate: Estimate,
}

impl Configured {
    /// What a job of this workload loads at start and checkpoints as it runs.
    pub fn job_weights(&self) -> crate::JobWeights {
        crate::JobWeights {
            parameters: self.estimate.parameters.total,
            trainable: self.estimate.parameters.trainable,
            precision: self.workload.precision,
            task: self.workload.task,
        }
    }
}

/// Whether `candidate` beats `current`: fitting beats not fitting; among fitting estimates the
/// faster wins (training throughput, or serving latency); among the rest, less memory wins.
pub(crate) fn better(candidate: &Estimate, current: &Estimate, memory_margin: f64) -> bool {
    let fits =
        |e: &Estimate| e.memory.per_gpu.as_u64() as f64 <= e.memory.capacity.as_u64() as f64 * (1.0 - memory_margin);
    match (fits(candidate), fits(current)) {
        (true, false) => true,
        (false, true) => false,
        (false, false) => candidate.memory.per_gpu < current.memory.per_gpu,
        (true, true) => match (
            &candidate.training,
            &current.training,
            &candidate.inference,
            &current.inference,
        ) {
            (Some(a), Some(b), _, _) => {
                a.tokens_per_second.max(a.samples_per_second) > b.tokens_per_second.max(b.samples_per_second) * 1.0001
            }
            (_, _, Some(a), Some(b)) => a.request_latency_seconds < b.request_latency_seconds * 0.9999,
            _ => candidate.memory.per_gpu < current.memory.per_gpu,
        },
    }
}

/// The global batch and the micro-batches worth trying for `dp` replicas; `None` when the
/// given batch cannot be split over them.
fn batch_and_micro_batches(
    task: Task,
    batch: Option<u64>,
    micro: Option<u64>,
    (dp, pp): (u32, u32),
    seq: u64,
) -> Option<(u64, Vec<u64>)> {
    let (dp, pp) = (u64::from(dp), u64::from(pp));
    match (task, batch, micro) {
        (Task::Inference, batch, _) => Some((batch.unwrap_or(1), vec![batch.unwrap_or(1)])),
        (_, Some(batch), Some(micro)) => {
            let per_step = micro.checked_mul(dp).filter(|n| *n > 0)?;
            (batch % per_step == 0).then(|| (batch, vec![micro]))
        }
        (_, None, Some(micro)) => Some((default_global_batch(dp, micro, seq, pp)?, vec![micro])),
        (_, batch, None) => {
            let batch = match batch {
                Some(batch) => batch,
                None => default_global_batch(dp, 1, seq, pp)?,
            };
            if batch % dp != 0 {
                return None;
            }
            let per_replica = batch / dp;
            let mut options = Vec::new();
            let mut micro = per_replica.min(MAX_AUTO_MICRO_BATCH);
            while micro >= 1 {
                if per_replica % micro == 0 {
                    options.push(micro);
                }
                micro /= 2;
            }
            if options.is_empty() {
                options.push(1);
            }
            Some((batch, options))
        }
    }
}

/// A framework whose pipeline splits each replica's batch into one micro-batch per stage
/// (torchtitan) runs micro-batches of `batch / (dp · pp)` sequences when none is given.
pub fn micro_batch_per_stage(template: &WorkloadTemplate, batch: u64, dp: u32, pp: u32) -> Option<u64> {
    let framework = template.framework?;
    if template.micro_batch.is_some()
        || pp < 2
        || !gpuplan_estimate::calibration::framework(framework).microbatches_per_stage
    {
        return None;
    }
    let per_replica = batch / u64::from(dp.max(1));
    (per_replica % u64::from(pp) == 0)
        .then(|| per_replica / u64::from(pp))
        .filter(|m| *m > 0)
}

/// Tensor × pipeline splits worth trying: the given ones, or tensor parallelism within a node
/// (powers of two dividing the heads) times pipeline stages (powers of two up to the layers).
pub fn layout_candidates(
    template: &WorkloadTemplate,
    transformer: Option<&TransformerSpec>,
    gpus: u32,
    gpus_per_node: u32,
) -> Vec<(u32, u32)> {
    let heads = transformer.map_or(1, |spec| spec.heads);
    let layers = transformer.map_or(1, |spec| spec.layers + spec.decoder_layers);
    let tps: Vec<u32> = match template.tp {
        Some(tp) => vec![tp],
        None => [1u32, 2, 4, 8]
            .into_iter()
            .filter(|tp| *tp <= gpus_per_node.max(1) && u64::from(*tp) <= heads && heads % u64::from(*tp) == 0)
            .collect(),
    };
    let pps: Vec<u32> = match template.pp {
        Some(pp) => vec![pp],
        None => [1u32, 2, 4, 8, 16, 32, 64]
            .into_iter()
            .filter(|pp| u64::from(*pp) <= layers)
            .collect(),
    };
    let mut layouts = Vec::new();
    for &tp in &tps {
        for &pp in &pps {
            if gpus % (tp * pp * template.cp.max(1)) == 0 {
                layouts.push((tp, pp));
            }
        }
    }
    layouts
}

/// Scaling efficiency below which a layout that fits without pipeline stages is not taken as
/// the answer before pipelined layouts are weighed: where ZeRO-3 or plain data parallelism
/// over thousands of GPUs spends half or more of each step communicating, the stages' smaller
/// data-parallel groups are the usual way out (Llama 3 405B: TP 8 × PP 16 on 16,384 GPUs; a
/// single-stage 405B layout there runs at 17 %). Between a half and one a pipeline can still
/// win a little (Llama 3.1 70B on 16,384 H100 at a 16 M-token batch: PP 2 at 75 % against
/// 65 % without), which the greedy search leaves on the table to stay fast over thousands of
/// offerings.
const PIPELINE_WORTH_TRYING_BELOW: f64 = 0.5;

/// Whether a fitting training configuration communicates enough of its step that pipelined
/// layouts are worth estimating too.
fn worth_pipelining(estimate: &Estimate) -> bool {
    estimate
        .training
        .as_ref()
        .is_some_and(|t| t.scaling_efficiency < PIPELINE_WORTH_TRYING_BELOW)
}

/// Chooses the open settings for `cluster`: the fastest configuration that fits within
/// `memory_margin`, or the one needing the least memory when none fits. `Ok(None)` when no
/// layout can use the GPUs, `Err` when the estimators refused every layout.
///
/// The search is greedy where experience allows, to stay fast over thousands of offerings:
/// per layout, the lowest ZeRO stage and the least recomputation that fit, with the largest
/// micro-batch that fits (each step down costs speed); pipeline parallelism is tried only
/// when no single-stage layout fits, or when the best one spends half its step or more
/// communicating ([`PIPELINE_WORTH_TRYING_BELOW`]). Among the fitting layouts the fastest wins.
pub fn configure(
    model: &ModelSpec,
    accelerator: &Accelerator,
    template: &WorkloadTemplate,
    cluster: Cluster,
    amount: Option<TrainingAmount>,
    memory_margin: f64,
) -> Result<Option<Configured>, EstimateError> {
    let transformer = model.transformer();
    let task = template.task;
    let gpus = cluster.gpus;
    let profile = template.framework.map(gpuplan_estimate::calibration::framework);
    let zeros: Vec<u8> = match template.zero {
        Some(zero) => vec![zero],
        // Offloaded parameters are sharded (ZeRO-3, FSDP) before they leave the GPU.
        None if template.offload.parameters => vec![3],
        None if task.is_training() && gpus > 1 && !matches!(task, Task::Lora | Task::Qlora) => {
            profile.map_or_else(|| vec![0, 1, 2, 3], |p| p.zero_stages.clone())
        }
        None => vec![0],
    };
    let mut checkpointings: Vec<Checkpointing> = match template.checkpointing {
        Some(mode) => vec![mode],
        None if task.is_training() => profile.map_or_else(
            || vec![Checkpointing::None, Checkpointing::Full],
            |p| p.checkpointing.clone(),
        ),
        None => vec![Checkpointing::None],
    };
    // Megatron-Core refuses full recomputation beside overlapped expert all-to-alls (a whole
    // layer's checkpoint leaves the schedule nothing to interleave).
    if template.ep_overlap && template.checkpointing.is_none() {
        checkpointings.retain(|&mode| mode != Checkpointing::Full);
    }
    let fits =
        |e: &Estimate| e.memory.per_gpu.as_u64() as f64 <= e.memory.capacity.as_u64() as f64 * (1.0 - memory_margin);
    let mut best: Option<Configured> = None;
    let mut first_error = None;
    let layouts = layout_candidates(template, transformer, gpus, cluster.gpus_per_node);
    // Tensor parallelism over PCIe (no NVLink) only where nothing else fits: its all-reduces
    // sit on the critical path of every layer, and QLoRA/LoRA stacks on consumer cards run
    // data parallel or on one GPU (the estimate's communication term is a floor, not the
    // contention a PCIe switch adds). Cards an NVLink bridge joins (H100 NVL pairs) count as
    // linked within the bridge.
    let pcie_only = !cluster.scale_up_linked && template.tp.is_none();
    let split = |over_pcie: bool| -> Vec<(u32, u32)> {
        layouts
            .iter()
            .copied()
            .filter(|(tp, pp)| *pp == 1 && (*tp > cluster.bridged_gpus) == over_pcie)
            .collect()
    };
    let single_stage: Vec<(u32, u32)> = layouts.iter().copied().filter(|(_, pp)| *pp == 1).collect();
    let pipelined: Vec<(u32, u32)> = layouts.iter().copied().filter(|(_, pp)| *pp > 1).collect();
    let phases = if pcie_only {
        vec![split(false), split(true), pipelined]
    } else {
        vec![single_stage, pipelined]
    };
    for phase in phases {
        for (tp, pp) in phase {
            let dp = gpus / (tp * pp * template.cp.max(1));
            let Some((batch, mut micro_batches)) =
                batch_and_micro_batches(task, template.batch, template.micro_batch, (dp, pp), template.seq)
            else {
                continue;
            };
            if template.optimizer_in_backward {
                // Nothing may accumulate: one micro-batch per replica and step, one stage. A
                // given batch sets the micro-batch; without one, each micro-batch sets the batch.
                let whole = batch / u64::from(dp.max(1));
                match (template.batch, template.micro_batch) {
                    (Some(_), None) => micro_batches = vec![whole],
                    (Some(_), Some(_)) => micro_batches.retain(|m| *m == whole),
                    (None, _) => {}
                }
                if pp > 1 || micro_batches.is_empty() {
                    continue;
                }
            }
            if let Some(micro) = micro_batch_per_stage(template, batch, dp, pp) {
                micro_batches = vec![micro];
            }
            // One replica has nothing to shard over.
            let zeros: &[u8] = if dp == 1 && template.zero.is_none() {
                &[0]
            } else {
                &zeros
            };
            // Least recomputation first, and at each level the lowest ZeRO stage that fits;
            // a level that fits without sharding cannot be beaten by more recomputation.
            'layout: for &checkpointing in &checkpointings {
                for (rank, &zero) in zeros.iter().enumerate() {
                    // Without pipelining the largest micro-batch that fits is the fastest; with
                    // it, smaller micro-batches shrink the bubble, so every size is weighed.
                    let mut fitted_any = false;
                    for &micro_batch in &micro_batches {
                        let layout = ParallelLayout {
                            dp,
                            tp,
                            pp,
                            cp: template.cp,
                            ep: template.ep,
                            vp: template.vp,
                            zero,
                            attention_dp: template.attention_dp,
                            ep_overlap: template.ep_overlap,
                        };
                        let batch = if template.optimizer_in_backward && template.batch.is_none() {
                            micro_batch * u64::from(dp)
                        } else {
                            batch
                        };
                        let workload = template.workload(batch, micro_batch, layout, checkpointing);
                        let request = EstimateRequest {
                            model,
                            accelerator,
                            workload: &workload,
                            cluster,
                            amount,
                            explain: false,
                        };
                        let estimate = match gpuplan_estimate::estimate(&request) {
                            Ok(estimate) => estimate,
                            Err(error) => {
                                first_error.get_or_insert(error);
                                continue;
                            }
                        };
                        let fitted = fits(&estimate);
                        if best
                            .as_ref()
                            .is_none_or(|current| better(&estimate, &current.estimate, memory_margin))
                        {
                            best = Some(Configured { workload, estimate });
                        }
                        fitted_any |= fitted;
                        if fitted && pp == 1 {
                            break;
                        }
                    }
                    if fitted_any {
                        if rank == 0 {
                            break 'layout;
                        }
                        break;
                    }
                }
            }
        }
        if best
            .as_ref()
            .is_some_and(|b| fits(&b.estimate) && !worth_pipelining(&b.estimate))
        {
            break;
        }
    }
    match (best, first_error) {
        (Some(mut best), _) => {
            // Once chosen, estimate again with the assumptions written out.
            let request = EstimateRequest {
                model,
                accelerator,
                workload: &best.workload,
                cluster,
                amount,
                explain: true,
            };
            best.estimate = gpuplan_estimate::estimate(&request)?;
            let moe = model.transformer().is_some_and(|t| t.moe.is_some());
            best.estimate.uncertainty =
                best.estimate
                    .uncertainty
                    .measured(task.is_training(), moe, cluster.gpus, cluster.gpus_per_node);
            Ok(Some(best))
        }
        (None, Some(error)) => Err(error),
        (None, None) => Ok(None),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Without stages the default batch is 256 sequences until the replicas need more; with
    /// stages each replica gets four micro-batches per stage, up to the 16 M-token critical
    /// batch (Llama 3 405B's 2,048 sequences of 8,192 tokens on 128 replicas of 16 stages).
    #[test]
    fn a_pipelined_default_batch_gives_each_stage_several_micro_batches() {
        assert_eq!(default_global_batch(8, 1, 2048, 1), Some(256));
        assert_eq!(default_global_batch(1024, 1, 2048, 1), Some(1024));
        assert_eq!(default_global_batch(8, 1, 2048, 4), Some(256));
        assert_eq!(default_global_batch(64, 1, 2048, 4), Some(1024));
        assert_eq!(default_global_batch(128, 1, 8192, 16), Some(2048));
        assert_eq!(default_global_batch(1024, 1, 2048, 4), Some(8192));
        assert_eq!(default_global_batch(16384, 1, 2048, 1), None);
    }
}

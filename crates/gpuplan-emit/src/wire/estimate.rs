use gpuplan_estimate::serving::LoadReport;
use gpuplan_estimate::{Estimate, ImageSummary, Uncertainty};
use gpuplan_model::{Accelerator, ModelSpec, ParallelLayout, SequencePacking, Workload};
use serde::Serialize;

/// `gpuplan estimate --format json`.
#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
pub struct EstimateJson {
    pub model: ModelJson,
    pub gpu: GpuRefJson,
    pub gpus: u32,
    pub gpus_per_node: u32,
    pub workload: WorkloadJson,
    pub memory: MemoryJson,
    pub training: Option<TrainingJson>,
    pub inference: Option<InferenceJson>,
    /// Diffusion pipelines: image size, schedule and FLOPs per pass; null otherwise.
    #[schema(value_type = Option<Object>)]
    pub image: Option<ImageSummary>,
    #[schema(value_type = Object)]
    pub uncertainty: Uncertainty,
    /// Values gpuplan chose because the request left them open, one line each in the asking
    /// front end's words (`--seq 2048 (…)` from the command line, `` `seq` = 2048 (…) `` from
    /// the API).
    pub defaults: Vec<String>,
    /// The same choices as records: the field's key, the value and why.
    pub defaulted: Vec<super::DefaultedJson>,
    pub assumptions: Vec<String>,
    /// Continuous-batching serving of one replica: capacity, goodput within the targets and
    /// latency percentiles at the offered load; null for other engines and tasks.
    #[schema(value_type = Option<Object>)]
    pub serving: Option<LoadReport>,
}

#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
pub struct ModelJson {
    pub id: String,
    pub parameters: u64,
    pub active_parameters: u64,
    pub trainable_parameters: u64,
}

#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
pub struct GpuRefJson {
    pub id: String,
}

#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
pub struct WorkloadJson {
    pub task: String,
    pub precision: String,
    pub batch: u64,
    pub micro_batch: u64,
    pub seq: u64,
    pub output_tokens: u64,
    pub layout: LayoutJson,
    pub checkpointing: String,
    pub optimizer: String,
    /// Training: the optimizer steps inside the backward pass (`--optimizer-in-backward`).
    pub optimizer_in_backward: bool,
    pub lora_rank: u64,
    /// The layers LoRA adapts (`--lora-targets`).
    pub lora_targets: String,
    /// Training state kept in host memory (`--offload`).
    pub offload: String,
    /// Training: the step runs under torch.compile (`--compile`).
    pub compiled: bool,
    /// Training on padded examples: their mean real length (`--mean-seq`); `None`: packed.
    pub padded_mean_seq: Option<u64>,
    pub flash_attention: bool,
    pub engine: String,
    /// The training framework whose profile the estimate followed (`--framework`).
    pub framework: Option<String>,
    /// Storage of the serving engine's KV cache (`--kv-cache-dtype`).
    pub kv_cache: String,
}

#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
pub struct LayoutJson {
    pub dp: u32,
    pub tp: u32,
    pub pp: u32,
    pub cp: u32,
    pub ep: u32,
    /// Virtual pipeline stages per GPU where given; `null`: the framework's schedule.
    pub vp: Option<u32>,
    /// Serving a mixture of experts with attention data parallelism.
    pub attention_dp: bool,
    /// The expert-parallel all-to-alls overlapped with the adjacent micro-batch's compute
    /// (training; present only when asked for).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub ep_overlap: bool,
    pub zero: u8,
}

impl From<ParallelLayout> for LayoutJson {
    fn from(l: ParallelLayout) -> Self {
        LayoutJson {
            dp: l.dp,
            tp: l.tp,
            pp: l.pp,
            cp: l.cp,
            ep: l.ep,
            vp: l.vp,
            attention_dp: l.attention_dp,
            ep_overlap: l.ep_overlap,
            zero: l.zero,
        }
    }
}

#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
pub struct MemoryJson {
    pub per_gpu_bytes: u64,
    pub capacity_bytes: u64,
    /// Fits with `margin` of the capacity kept free.
    pub fits: bool,
    /// Usable capacity (capacity less the margin) minus the need; negative when it does not fit.
    pub headroom_bytes: i64,
    /// Share of each GPU's memory kept free (the same default as `plan`).
    pub margin: f64,
    /// Where it does not fit: the nearest configurations that do.
    pub nearest_fit: Vec<String>,
    pub breakdown: BreakdownJson,
}

#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
pub struct BreakdownJson {
    pub weights: u64,
    pub gradients: u64,
    pub optimizer: u64,
    pub activations: u64,
    pub kv_cache: u64,
    pub overhead: u64,
    /// Optimizer states in managed memory (bitsandbytes' paged optimizers), not in
    /// `per_gpu_bytes`: on the GPU while it has room, paged to the host otherwise.
    pub paged_optimizer: u64,
}

#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
pub struct TrainingJson {
    pub step_seconds: f64,
    pub tokens_per_second: f64,
    pub samples_per_second: f64,
    /// Model FLOPs (what the model needs, without recomputation) over the GPUs' dense peak.
    pub mfu: f64,
    /// Hardware FLOPs (recomputation included) over the dense peak.
    pub hfu: f64,
    pub time_seconds: Option<f64>,
    pub gpu_hours: Option<f64>,
    /// The step's compute, pipeline bubble included; the step is this plus
    /// `communication_seconds`.
    pub compute_seconds: f64,
    pub communication_seconds: f64,
    pub pipeline_bubble: f64,
    pub scaling_efficiency: f64,
}

#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
pub struct InferenceJson {
    pub ttft_seconds: f64,
    pub tpot_seconds: f64,
    pub output_tokens_per_second: f64,
    pub requests_per_second: f64,
    pub max_concurrent_sequences: u64,
    pub request_latency_seconds: f64,
    pub decode_bound: String,
}

impl EstimateJson {
    /// Judges the fit with `margin` of each GPU's memory kept free, and names the nearest
    /// configurations that fit when this one does not.
    /// Adds the serving figures of a continuous-batching estimate.
    pub fn with_serving(mut self, serving: Option<LoadReport>) -> Self {
        self.serving = serving;
        self
    }

    pub fn with_margin(mut self, margin: f64, nearest_fit: Vec<String>) -> Self {
        let m = &mut self.memory;
        let usable = (m.capacity_bytes as f64 * (1.0 - margin)) as i64;
        m.headroom_bytes = usable - m.per_gpu_bytes as i64;
        m.fits = m.headroom_bytes >= 0;
        m.margin = margin;
        m.nearest_fit = nearest_fit;
        self
    }

    /// The values chosen for the request, in `naming`'s words.
    pub fn with_defaults(
        mut self,
        chosen: &[gpuplan_model::field::Defaulted],
        naming: gpuplan_model::field::Naming,
    ) -> Self {
        (self.defaults, self.defaulted) = super::defaulted::defaults(chosen, naming);
        self
    }

    pub fn new(
        model: &ModelSpec,
        accelerator: &Accelerator,
        gpus: u32,
        gpus_per_node: u32,
        workload: &Workload,
        estimate: &Estimate,
    ) -> EstimateJson {
        let m = &estimate.memory;
        EstimateJson {
            model: ModelJson {
                id: model.id.clone(),
                parameters: estimate.parameters.total,
                active_parameters: estimate.parameters.active,
                trainable_parameters: estimate.parameters.trainable,
            },
            gpu: GpuRefJson {
                id: accelerator.id.to_string(),
            },
            gpus,
            gpus_per_node,
            workload: WorkloadJson {
                task: workload.task.to_string(),
                precision: workload.precision.to_string(),
                batch: workload.batch,
                micro_batch: workload.micro_batch,
                seq: workload.seq,
                output_tokens: workload.output_tokens,
                layout: workload.layout.into(),
                checkpointing: workload.checkpointing.to_string(),
                optimizer: workload.optimizer.to_string(),
                optimizer_in_backward: workload.optimizer_in_backward,
                lora_rank: workload.lora_rank,
                lora_targets: workload.lora_targets.to_string(),
                offload: workload.offload.to_string(),
                compiled: workload.compiled,
                padded_mean_seq: match workload.packing {
                    SequencePacking::Packed => None,
                    SequencePacking::Padded { mean_tokens } => Some(mean_tokens),
                },
                flash_attention: workload.flash_attention,
                engine: workload.engine.to_string(),
                framework: workload.framework.map(|f| f.to_string()),
                kv_cache: workload.kv_cache.to_string(),
            },
            memory: MemoryJson {
                per_gpu_bytes: m.per_gpu.as_u64(),
                capacity_bytes: m.capacity.as_u64(),
                fits: m.fits(),
                headroom_bytes: m.headroom_bytes(),
                margin: 0.0,
                nearest_fit: Vec::new(),
                breakdown: BreakdownJson {
                    weights: m.weights.as_u64(),
                    gradients: m.gradients.as_u64(),
                    optimizer: m.optimizer.as_u64(),
                    activations: m.activations.as_u64(),
                    kv_cache: m.kv_cache.as_u64(),
                    overhead: m.overhead.as_u64(),
                    paged_optimizer: m.paged_optimizer.as_u64(),
                },
            },
            training: estimate.training.map(|t| TrainingJson {
                step_seconds: t.step_seconds,
                tokens_per_second: t.tokens_per_second,
                samples_per_second: t.samples_per_second,
                mfu: t.mfu,
                hfu: t.hfu,
                compute_seconds: t.compute_seconds,
                time_seconds: t.time_seconds,
                gpu_hours: t.gpu_hours,
                communication_seconds: t.communication_seconds,
                pipeline_bubble: t.pipeline_bubble,
                scaling_efficiency: t.scaling_efficiency,
            }),
            inference: estimate.inference.map(|i| InferenceJson {
                ttft_seconds: i.ttft_seconds,
                tpot_seconds: i.tpot_seconds,
                output_tokens_per_second: i.output_tokens_per_second,
                requests_per_second: i.requests_per_second,
                max_concurrent_sequences: i.max_concurrent_sequences,
                request_latency_seconds: i.request_latency_seconds,
                decode_bound: format!("{:?}", i.decode_bound).to_lowercase(),
            }),
            image: estimate.image,
            uncertainty: estimate.uncertainty,
            defaults: Vec::new(),
            defaulted: Vec::new(),
            assumptions: estimate.assumptions.clone(),
            serving: None,
        }
    }
}

//! `estimate`: a user's description of a workload, with defaults filled in and said, run
//! through the estimators.

use crate::{Defaulted, Error, Field, Naming, applicability, defaults};
use gpuplan_catalog::Catalog;
use gpuplan_estimate::serving::{self, LoadReport};
use gpuplan_estimate::{Cluster, Estimate};
use gpuplan_model::{
    Accelerator, Architecture, Checkpointing, Engine, Framework, GpuInterconnect, ImageSettings, KvCacheDtype,
    LatencyTarget, LoraTargets, ModelSpec, Offload, Optimizer, Precision, RequestMix, SequencePacking, Task, Workload,
};
use gpuplan_plan::{Configured, WorkloadTemplate, configure, layout_candidates};

/// Where the model comes from.
#[derive(Debug, Clone)]
pub enum ModelSource {
    /// A built-in model id or alias.
    BuiltIn(String),
    /// The text of a Hugging Face `config.json`, with the name to call it by, and the text of
    /// its checkpoint's `model.safetensors.index.json` where one was read.
    Config {
        name: String,
        text: String,
        checkpoint_index: Option<String>,
    },
}

/// A workload as a user describes it; `None` means "choose for me", and every choice made is
/// reported in [`EstimateAnswer::defaults`].
#[derive(Debug, Clone)]
pub struct WorkloadRequest {
    pub model: ModelSource,
    pub task: Task,
    pub gpu: String,
    pub gpus: Option<u32>,
    pub gpus_per_node: Option<u32>,
    pub precision: Option<Precision>,
    pub batch: Option<u64>,
    pub micro_batch: Option<u64>,
    pub seq: Option<u64>,
    pub output_tokens: Option<u64>,
    pub tp: Option<u32>,
    pub pp: Option<u32>,
    /// Context parallel degree.
    pub cp: Option<u32>,
    /// Virtual pipeline stages per GPU (interleaved 1F1B); `None`: the framework's schedule.
    pub vp: Option<u32>,
    /// Expert parallel degree (mixture-of-experts models).
    pub ep: Option<u32>,
    /// Attention data parallelism across a serving replica (mixture-of-experts models).
    pub attention_dp: Option<bool>,
    /// Training: the expert-parallel all-to-alls overlapped with the adjacent micro-batch's
    /// compute (Megatron-Core's combined 1F1B).
    pub ep_overlap: Option<bool>,
    pub zero: Option<u8>,
    pub checkpointing: Option<Checkpointing>,
    pub optimizer: Option<Optimizer>,
    pub lora_rank: Option<u64>,
    /// The layers LoRA adapts (default: the framework's recipe, else every linear layer).
    pub lora_targets: Option<LoraTargets>,
    /// Training state kept in host memory.
    pub offload: Option<Offload>,
    /// Training: packed sequences (the default) or one padded example per sequence.
    pub packing: SequencePacking,
    /// Training: the step runs under `torch.compile`.
    pub compiled: bool,
    /// Training: the optimizer steps inside the backward pass (no full set of gradients).
    pub optimizer_in_backward: bool,
    pub flash_attention: Option<bool>,
    pub engine: Option<Engine>,
    /// Training framework, whose defaults and loss the estimate follows.
    pub framework: Option<Framework>,
    /// Framework builds the job needs (`pytorch==2.5`), checked against the GPU.
    pub framework_builds: Vec<crate::software_fit::SoftwareBuild>,
    /// A machine's measurements over its GPUs' datasheet figures (`--calibration`).
    pub calibration: Option<gpuplan_model::CalibrationProfile>,
    /// Storage of the serving engine's KV cache (inference).
    pub kv_cache: Option<KvCacheDtype>,
    /// The serving engine's release and scheduler knobs (inference).
    pub engine_settings: gpuplan_model::EngineSettings,
    /// The kernel for quantised weights, from `--precision int4:awq-gemm` (inference).
    pub weight_kernel: Option<gpuplan_model::WeightKernel>,
    /// Image size, denoising steps and guidance (image models).
    pub image: ImageSettings,
    pub tokens: Option<f64>,
    pub epochs: Option<f64>,
    pub dataset_size: Option<f64>,
    /// How the GPUs of a node are linked, when known (an offering's interconnect).
    pub interconnect: Option<GpuInterconnect>,
    /// Network bandwidth of each node, Gbit/s, when known.
    pub node_network_gbps: Option<f64>,
    /// Share of each GPU's memory kept free (default: the planner's 10 %).
    pub memory_margin: Option<f64>,
    /// Serving: the offered load, latency targets and request shapes to report on.
    pub serving: ServingQuestion,
}

/// What a serving estimate is asked about one replica.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ServingQuestion {
    /// Offered load, requests/s (Poisson arrivals).
    pub qps: Option<f64>,
    /// Closed-loop load: users each sending the next request when the last ends.
    pub concurrency: Option<f64>,
    pub ttft: Option<LatencyTarget>,
    pub tpot: Option<LatencyTarget>,
    /// Prompt and output lengths; `None`: `seq` and `output_tokens` for every request.
    pub requests: Option<RequestMix>,
    /// Share of prompt tokens served from the engine's prefix cache.
    pub prefix_cache_hit: Option<f64>,
}

impl ServingQuestion {
    pub fn is_asked(&self) -> bool {
        self.qps.is_some()
            || self.concurrency.is_some()
            || self.ttft.is_some()
            || self.tpot.is_some()
            || self.requests.is_some()
            || self.prefix_cache_hit.is_some()
    }

    /// The first serving field given, in the order the flags are documented.
    pub(crate) fn first_given(&self) -> Option<crate::Field> {
        use crate::Field;
        [
            (Field::Qps, self.qps.is_some()),
            (Field::Concurrency, self.concurrency.is_some()),
            (Field::Ttft, self.ttft.is_some()),
            (Field::Tpot, self.tpot.is_some()),
            (Field::Requests, self.requests.is_some()),
            (Field::PrefixCacheHit, self.prefix_cache_hit.is_some()),
        ]
        .into_iter()
        .find_map(|(field, given)| given.then_some(field))
    }
}

impl WorkloadRequest {
    /// A request with every optional field left to the defaults.
    pub fn new(model: ModelSource, task: Task, gpu: impl Into<String>) -> Self {
        WorkloadRequest {
            model,
            task,
            gpu: gpu.into(),
            gpus: None,
            gpus_per_node: None,
            precision: None,
            batch: None,
            micro_batch: None,
            seq: None,
            output_tokens: None,
            tp: None,
            pp: None,
            cp: None,
            vp: None,
            ep: None,
            attention_dp: None,
            ep_overlap: None,
            zero: None,
            checkpointing: None,
            optimizer: None,
            lora_rank: None,
            lora_targets: None,
            offload: None,
            packing: SequencePacking::Packed,
            compiled: false,
            optimizer_in_backward: false,
            flash_attention: None,
            engine: None,
            framework: None,
            framework_builds: Vec::new(),
            calibration: None,
            kv_cache: None,
            engine_settings: gpuplan_model::EngineSettings::default(),
            weight_kernel: None,
            image: ImageSettings::default(),
            tokens: None,
            epochs: None,
            dataset_size: None,
            interconnect: None,
            node_network_gbps: None,
            memory_margin: None,
            serving: ServingQuestion::default(),
        }
    }
}

/// The estimate and what it was computed for.
#[derive(Debug, Clone)]
pub struct EstimateAnswer {
    pub model: ModelSpec,
    pub accelerator: Accelerator,
    pub workload: Workload,
    pub gpus: u32,
    pub gpus_per_node: u32,
    pub estimate: Estimate,
    /// Every value chosen for the user, with why.
    pub defaults: Vec<Defaulted>,
    /// How names were resolved.
    pub notes: Vec<String>,
    /// Share of each GPU's memory kept free when judging the fit.
    pub memory_margin: f64,
    /// Whether the workload fits with that margin.
    pub fits: bool,
    /// When it does not fit: the nearest configurations that do.
    pub nearest_fit: Vec<String>,
    /// Continuous-batching serving: capacity, goodput and latency at the load.
    pub serving: Option<LoadReport>,
}

impl EstimateAnswer {
    /// The answer as the documented JSON (`estimate --format json`, `POST /api/v1/estimate`).
    pub fn wire(&self, naming: Naming) -> gpuplan_emit::wire::EstimateJson {
        gpuplan_emit::wire::EstimateJson::new(
            &self.model,
            &self.accelerator,
            self.gpus,
            self.gpus_per_node,
            &self.workload,
            &self.estimate,
        )
        .with_defaults(&self.defaults, naming)
        .with_margin(self.memory_margin, self.nearest_fit.clone())
        .with_serving(self.serving.clone())
    }
}

/// Runs the estimators on `request`, choosing what the user left open; on the request's
/// calibrated GPUs, when it carries a calibration.
pub fn estimate_workload(catalog: &Catalog, request: &WorkloadRequest) -> Result<EstimateAnswer, Error> {
    crate::with_fitted(catalog, || estimate_workload_in(catalog, request))
}

fn estimate_workload_in(catalog: &Catalog, request: &WorkloadRequest) -> Result<EstimateAnswer, Error> {
    match &request.calibration {
        None => estimate_on(catalog, request),
        Some(profile) => estimate_on(&crate::calibrate::calibrated(catalog, profile)?, request),
    }
}

fn estimate_on(catalog: &Catalog, request: &WorkloadRequest) -> Result<EstimateAnswer, Error> {
    let model = crate::resolve::model(catalog, &request.model)?;
    let gpus = check_estimate_request(request, &model)?;
    let mut notes = Vec::new();
    let resolved = catalog.accelerators().resolve_one(&request.gpu)?;
    let accelerator = resolved.accelerator.clone();
    let gpus_per_node = request.gpus_per_node.unwrap_or(gpus.min(accelerator.node_gpus()));
    defaults::check_node_shape(gpus, gpus_per_node)?;
    if resolved.note.is_some() {
        notes.push(format!("`{}` means {}", request.gpu, accelerator.id));
    }
    let calibration = crate::calibrate::calibration_note(catalog, Some(&accelerator.id));
    let mut defaults: Vec<Defaulted> = crate::generic_model::assumed_shape(&model).into_iter().collect();
    if request.gpus_per_node.is_none() && gpus > 1 {
        defaults.push(Defaulted::new(
            Field::GpusPerNode,
            gpus_per_node,
            match accelerator.gpus_per_node {
                None => format!(
                    "up to {} per node, as most GPU servers have",
                    gpuplan_model::USUAL_GPUS_PER_NODE
                ),
                Some(1) => format!("one per node, as {} systems have", accelerator.id),
                Some(n) => format!("up to {n} per node, as {} systems have", accelerator.id),
            },
        ));
    }
    check_software(catalog, request, &accelerator, &mut defaults)?;
    let template = estimate_template(request, &model, &accelerator, &mut defaults)?;
    check_stack(&accelerator, &model, &template)?;
    let cluster = Cluster::new(
        &accelerator,
        gpus,
        gpus_per_node,
        request.interconnect,
        request.node_network_gbps,
    );
    let amount = defaults::training_amount(request.tokens, request.epochs, request.dataset_size)?;
    let memory_margin = request.memory_margin.unwrap_or(gpuplan_plan::DEFAULT_MEMORY_MARGIN);
    let configured = configure(&model, &accelerator, &template, cluster, amount, memory_margin)?;
    let Some(Configured { workload, mut estimate }) = configured else {
        if template.optimizer_in_backward {
            return Err(Error::invalid(
                format!(
                    "with {{optimizer_in_backward}} each replica takes one micro-batch a step, and no layout of \
                     {gpus} GPUs without pipeline stages splits the batch so"
                ),
                Some("give a {batch} of {micro_batch} × the data-parallel replicas, or drop {micro_batch}".to_string()),
            ));
        }
        return Err(Error::invalid(
            format!("the batch cannot be spread over {gpus} GPUs in any layout"),
            Some("use a {batch} that is a multiple of the data-parallel replicas".to_string()),
        ));
    };
    let transformer = model.transformer();
    estimate.assumptions.splice(0..0, calibration);
    estimate.uncertainty = estimate.uncertainty.measured(
        request.task.is_training(),
        transformer.is_some_and(|t| t.moe.is_some()),
        gpus,
        gpus_per_node,
    );
    let layouts = layout_candidates(&template, transformer, gpus, gpus_per_node).len();
    chosen_layout_defaults(request, &template, &workload, layouts, gpus, &mut defaults);
    let fits = fits_with(&estimate, memory_margin);
    let nearest_fit = if fits {
        Vec::new()
    } else {
        let search = FitSearch {
            model: &model,
            accelerator: &accelerator,
            template: &template,
            amount,
            margin: memory_margin,
            interconnect: request.interconnect,
            network: request.node_network_gbps,
        };
        search.nearest(gpus, gpus_per_node)
    };
    let serving = serving_report(request, &workload, &estimate)?;
    Ok(EstimateAnswer {
        model,
        accelerator,
        workload,
        gpus,
        gpus_per_node,
        estimate,
        defaults,
        notes,
        memory_margin,
        fits,
        nearest_fit,
        serving,
    })
}

/// The checks an estimate request must pass before anything is looked up; the GPUs it asks
/// for.
fn check_estimate_request(request: &WorkloadRequest, model: &ModelSpec) -> Result<u32, Error> {
    let task = request.task;
    if request.tokens.is_some() && matches!(model.architecture, Architecture::Cited(_)) {
        return Err(
            crate::RequestError::not_applicable(crate::Field::Tokens, "text models, which train on tokens")
                .with_hint("image models train on images: give {dataset_size} (images) and {epochs}")
                .into(),
        );
    }
    let gpus = request.gpus.unwrap_or(1);
    if gpus == 0 {
        return Err(crate::defaults::at_least_one(crate::Field::Gpus, 0));
    }
    defaults::check_counts(&[
        (crate::Field::Seq, request.seq),
        (crate::Field::Batch, request.batch),
        (crate::Field::MicroBatch, request.micro_batch),
        (crate::Field::LoraRank, request.lora_rank),
    ])?;
    if let Some(precision) = request.precision {
        defaults::check_training_precision(task, precision, request.framework)?;
    }
    if request.tp == Some(0) || request.pp == Some(0) {
        let field = if request.tp == Some(0) {
            crate::Field::Tp
        } else {
            crate::Field::Pp
        };
        return Err(crate::defaults::at_least_one(field, 0));
    }
    if let (Some(tp), Some(pp)) = (request.tp, request.pp) {
        if gpus % (tp * pp) != 0 {
            return Err(Error::invalid(
                format!("{gpus} GPUs cannot be split into tensor parallel {tp} × pipeline parallel {pp} groups"),
                Some(format!("use a GPU count that is a multiple of {}", tp * pp)),
            ));
        }
    }
    for (field, degree) in [
        (crate::Field::Cp, request.cp),
        (crate::Field::Ep, request.ep),
        (crate::Field::Vp, request.vp),
    ] {
        if degree == Some(0) {
            return Err(crate::defaults::at_least_one(field, 0));
        }
    }
    if request.vp.is_some() && (task == Task::Inference || request.pp.is_none_or(|pp| pp < 2)) {
        return Err(crate::RequestError::not_applicable(
            crate::Field::Vp,
            "training with pipeline stages ({pp} 2 or more)",
        )
        .with_hint("drop it, or give {pp}")
        .into());
    }
    defaults::require_positive(crate::Field::Qps, request.serving.qps)?;
    defaults::require_plausible_load(request.serving.qps)?;
    if request.lora_targets.is_some() && !matches!(task, Task::Lora | Task::Qlora) {
        return Err(
            crate::RequestError::not_applicable(crate::Field::LoraTargets, "{task} lora or qlora")
                .with_hint("drop it")
                .into(),
        );
    }
    if let Some(offload) = request.offload {
        defaults::check_offload(offload, task, request.zero)?;
    }
    defaults::check_optimizer_in_backward(request.optimizer_in_backward, task, request.offload, request.pp)?;
    if request.kv_cache.is_some() && task.is_training() {
        return Err(
            crate::RequestError::not_applicable(crate::Field::KvCacheDtype, "{task} inference")
                .with_hint("drop it; training keeps no KV cache")
                .into(),
        );
    }
    if request.framework.is_some() && !task.is_training() {
        return Err(crate::RequestError::not_applicable(
            crate::Field::Framework,
            "training tasks (pretrain, finetune, lora, qlora)",
        )
        .with_hint("drop it; serving is described by {engine}")
        .into());
    }
    for (field, kind, degree) in [
        (crate::Field::Tp, "tensor", request.tp),
        (crate::Field::Pp, "pipeline", request.pp),
        (crate::Field::Cp, "context", request.cp),
    ] {
        if let Some(degree) = degree {
            if gpus % degree != 0 {
                return Err(crate::RequestError::unsuitable(
                    field,
                    degree,
                    format!("does not divide {{gpus}} {gpus}: {gpus} GPUs cannot be split into {kind} parallel groups of {degree}"),
                )
                .with_hint(format!("use a GPU count that is a multiple of {degree}"))
                .into());
            }
        }
    }
    let memory_margin = request.memory_margin.unwrap_or(gpuplan_plan::DEFAULT_MEMORY_MARGIN);
    if !(0.0..0.9).contains(&memory_margin) {
        return Err(
            crate::RequestError::out_of_range(crate::Field::MemoryMargin, memory_margin, "between 0 and 0.9").into(),
        );
    }
    Ok(gpus)
}

/// The framework builds the job needs run on the GPU asked for.
fn check_software(
    catalog: &Catalog,
    request: &WorkloadRequest,
    accelerator: &gpuplan_model::Accelerator,
    defaults: &mut Vec<Defaulted>,
) -> Result<(), Error> {
    let task = request.task;
    if !request.framework_builds.is_empty() {
        if request.framework.is_none() && task.is_training() {
            defaults.push(crate::software_fit::no_recipe(&request.framework_builds));
        }
        let mut checked = Vec::new();
        let outside = crate::software_fit::not_running(catalog, None, &request.framework_builds, &mut checked)?;
        if outside.contains(&accelerator.id) {
            let builds: Vec<String> = request.framework_builds.iter().map(ToString::to_string).collect();
            return Err(Error::invalid(
                format!("{} does not run on {}", builds.join(" and "), accelerator.id),
                Some(format!(
                    "`gpuplan compat --gpu {} --framework {}` says which versions do",
                    accelerator.id, builds[0]
                )),
            ));
        }
    }
    Ok(())
}

/// A part whose recorded software stacks do not run the workload (training on an
/// inference-only chip, a model its compiler does not take, an engine it lacks) is refused, as
/// `plan` refuses its offerings; a part with no stack recorded is not.
fn check_stack(
    accelerator: &gpuplan_model::Accelerator,
    model: &ModelSpec,
    template: &WorkloadTemplate,
) -> Result<(), Error> {
    if accelerator.stacks.is_empty() {
        return Ok(());
    }
    let model_type = model.transformer().map(|spec| spec.model_type.as_str());
    match accelerator.stack_for(&[], template.task, model_type, template.engine) {
        Ok(_) => Ok(()),
        Err(reason) => Err(crate::RequestError::unsuitable(
            crate::Field::Gpu,
            &accelerator.id,
            format!("cannot run this workload: {reason}"),
        )
        .with_hint(format!(
            "{} runs {}; ask for what it runs, or choose another {{gpu}}",
            accelerator.id,
            accelerator
                .stacks
                .iter()
                .map(gpuplan_model::StackSupport::summary)
                .collect::<Vec<_>>()
                .join(" | ")
        ))
        .into()),
    }
}

/// The workload estimated, with the defaults chosen for it.
fn estimate_template(
    request: &WorkloadRequest,
    model: &ModelSpec,
    accelerator: &gpuplan_model::Accelerator,
    defaults: &mut Vec<Defaulted>,
) -> Result<WorkloadTemplate, Error> {
    let task = request.task;
    let transformer = model.transformer();
    let checkpoint = match request.precision {
        Some(_) => None,
        None => defaults::checkpoint_precision(transformer, task, defaults)?,
    };
    let precision = match (request.precision, checkpoint) {
        (Some(precision), _) | (None, Some((precision, _))) => precision,
        (None, None) => {
            let chosen = if accelerator.peak(Precision::Bf16).is_some() {
                Precision::Bf16
            } else {
                Precision::Fp16
            };
            defaults.push(Defaulted::new(
                Field::Precision,
                chosen,
                format!("what {} computes fastest in 16 bits", accelerator.id),
            ));
            chosen
        }
    };
    let given = (request.seq, request.output_tokens);
    let log = request.serving.requests.as_ref();
    let (seq, output_tokens) = defaults::lengths(given, log, task, transformer, defaults);
    applicability::check_training_step(task, model, request.packing, request.compiled, seq)?;
    let moe = transformer.is_some_and(|spec| spec.moe.is_some());
    crate::expert_placement::check_attention_dp(request, moe)?;
    crate::expert_placement::check_ep_overlap(request, moe)?;
    let flash_attention = request.flash_attention.unwrap_or_else(|| {
        if crate::defaults::is_diffusion(model) {
            defaults.push(Defaulted::new(
                Field::FlashAttention,
                true,
                "fused attention: PyTorch scaled_dot_product_attention, diffusers' default",
            ));
            return true;
        }
        if transformer.is_none() {
            return false;
        }
        let on = accelerator.runs_flash_attention();
        let why = match (on, accelerator.vendor.as_str()) {
            (true, "AMD") => "FlashAttention-2's ROCm build runs on the MI200, MI300 and MI350 series",
            (true, _) => "compute capability 8.0 or newer",
            (false, "NVIDIA") => "needs compute capability 8.0",
            (false, _) => {
                "FlashAttention-2 is built for NVIDIA from compute capability 8.0 and AMD's MI200 series onwards"
            }
        };
        defaults.push(Defaulted::new(Field::FlashAttention, on, why));
        on
    });
    let engine = defaults::engine(request.engine, task, model, defaults);
    let optimizer = request.optimizer.unwrap_or(Optimizer::AdamW);
    let lora_rank = defaults::lora_rank(request.lora_rank, task, defaults);
    let lora_targets = defaults::lora_targets(request.lora_targets, task, request.framework, defaults);
    let batch_given = request.batch;
    let template = WorkloadTemplate {
        task,
        precision,
        batch: batch_given,
        micro_batch: request.micro_batch,
        seq,
        output_tokens,
        tp: request.tp,
        pp: request.pp,
        cp: request.cp.unwrap_or(1),
        ep: request.ep.unwrap_or(1),
        vp: request.vp,
        attention_dp: request.attention_dp.unwrap_or(false),
        ep_overlap: request.ep_overlap.unwrap_or(false),
        zero: request.zero,
        checkpointing: request.checkpointing,
        optimizer,
        optimizer_in_backward: request.optimizer_in_backward,
        lora_rank,
        lora_targets,
        offload: request.offload.unwrap_or_default(),
        packing: request.packing,
        compiled: request.compiled,
        flash_attention,
        engine,
        framework: request.framework,
        engine_settings: request.engine_settings,
        weight_kernel: request.weight_kernel.or(checkpoint.and_then(|(_, kernel)| kernel)),
        kv_cache: request.kv_cache.unwrap_or(KvCacheDtype::Auto),
        image: request.image,
    };
    Ok(template)
}

/// The defaults of the layout the estimate chose, where the request left it open.
fn chosen_layout_defaults(
    request: &WorkloadRequest,
    template: &WorkloadTemplate,
    workload: &gpuplan_model::Workload,
    layouts: usize,
    gpus: u32,
    defaults: &mut Vec<Defaulted>,
) {
    let task = request.task;
    let zeros = if task.is_training() && gpus > 1 && !matches!(task, Task::Lora | Task::Qlora) {
        4
    } else {
        1
    };
    let checkpointings = if task.is_training() { 2 } else { 1 };
    if request.tp.is_none() && layouts > 1 {
        defaults.push(Defaulted::new(
            Field::Tp,
            workload.layout.tp,
            "chosen for speed among layouts that fit",
        ));
    }
    if request.pp.is_none() && layouts > 1 {
        defaults.push(Defaulted::new(Field::Pp, workload.layout.pp, "the layout chosen"));
    }
    if request.zero.is_none() && zeros > 1 {
        defaults.push(Defaulted::new(
            Field::Zero,
            workload.layout.zero,
            "the lowest stage that fits",
        ));
    }
    if request.checkpointing.is_none() && checkpointings > 1 {
        defaults.push(Defaulted::new(
            Field::Checkpointing,
            workload.checkpointing,
            "the least activation recomputation that fits",
        ));
    }
    if request.batch.is_none() && task.is_training() {
        let why = if workload.optimizer_in_backward {
            defaults::BATCH_IN_BACKWARD_WHY
        } else {
            defaults::BATCH_DEFAULT_WHY
        };
        defaults.push(Defaulted::new(Field::Batch, workload.batch, why));
    }
    if request.micro_batch.is_none() && task.is_training() {
        let layout = workload.layout;
        let per_stage = gpuplan_plan::micro_batch_per_stage(template, workload.batch, layout.dp, layout.pp)
            == Some(workload.micro_batch);
        defaults.push(Defaulted::new(
            Field::MicroBatch,
            workload.micro_batch,
            if per_stage {
                "the framework splits each replica's batch into one micro-batch per pipeline stage"
            } else {
                "the fastest that fits"
            },
        ));
    }
    if task.is_training() && request.optimizer.is_none() {
        defaults.push(Defaulted::new(
            Field::Optimizer,
            workload.optimizer,
            "the usual optimizer for these models",
        ));
    }
}

fn fits_with(estimate: &gpuplan_estimate::Estimate, margin: f64) -> bool {
    estimate.memory.per_gpu.as_u64() as f64 <= estimate.memory.capacity.as_u64() as f64 * (1.0 - margin)
}

/// GPU counts tried when looking for the nearest configuration that fits.
const NEAREST_FIT_GPUS: [u32; 8] = [2, 4, 8, 16, 32, 64, 128, 256];

/// What an estimate that does not fit is re-run with to find the nearest one that does.
struct FitSearch<'a> {
    model: &'a ModelSpec,
    accelerator: &'a gpuplan_model::Accelerator,
    template: &'a WorkloadTemplate,
    amount: Option<gpuplan_estimate::TrainingAmount>,
    margin: f64,
    interconnect: Option<gpuplan_model::GpuInterconnect>,
    network: Option<f64>,
}

impl FitSearch<'_> {
    fn fits(&self, template: &WorkloadTemplate, gpus: u32, per_node: u32) -> Option<gpuplan_model::Workload> {
        let cluster = Cluster::new(self.accelerator, gpus, per_node, self.interconnect, self.network);
        match configure(
            self.model,
            self.accelerator,
            template,
            cluster,
            self.amount,
            self.margin,
        ) {
            Ok(Some(found)) if fits_with(&found.estimate, self.margin) => Some(found.workload),
            _ => None,
        }
    }

    /// llama.cpp: the most transformer layers the GPUs hold with the others on the host,
    /// where at least one does.
    fn gpu_layers_that_fit(&self, gpus: u32, per_node: u32) -> Option<u32> {
        let layers = self.model.transformer()?.layers;
        if self.template.engine != gpuplan_model::Engine::LlamaCpp || self.template.task != Task::Inference {
            return None;
        }
        let fits = |g: u32| {
            let mut placed = self.template.clone();
            placed.engine_settings.gpu_layers = Some(g);
            self.fits(&placed, gpus, per_node).is_some()
        };
        if !fits(1) {
            return None;
        }
        // The most layers that fit lie in [low, high]: halve the interval.
        let (mut low, mut high) = (1_u32, u32::try_from(layers).ok()?);
        while low < high {
            let mid = (low + high).div_ceil(2);
            if fits(mid) {
                low = mid;
            } else {
                high = mid - 1;
            }
        }
        Some(low)
    }

    /// More GPUs (any layout, ZeRO stage and recomputation), or smaller weights.
    fn nearest(&self, gpus: u32, per_node: u32) -> Vec<String> {
        let mut found = Vec::new();
        let mut open = self.template.clone();
        open.tp = None;
        open.pp = None;
        open.zero = None;
        open.checkpointing = None;
        if let Some(more) = NEAREST_FIT_GPUS.iter().copied().filter(|g| *g > gpus).find_map(|g| {
            let per_node = per_node.max(g.min(self.accelerator.node_gpus()));
            self.fits(&open, g, per_node).map(|w| (g, w))
        }) {
            let (count, workload) = more;
            found.push(format!(
                "--gpus {count} ({}·{}·{} DP·TP·PP, ZeRO {}, {} recomputation)",
                workload.layout.dp,
                workload.layout.tp,
                workload.layout.pp,
                workload.layout.zero,
                workload.checkpointing
            ));
        }
        let smaller: &[(Task, Precision, &str)] = match self.template.task {
            Task::Inference => &[
                (Task::Inference, Precision::Int8, "--precision int8"),
                (Task::Inference, Precision::Int4, "--precision int4"),
            ],
            Task::Finetune => &[
                (Task::Lora, Precision::Bf16, "--task lora"),
                (Task::Qlora, Precision::Bf16, "--task qlora"),
            ],
            Task::Lora => &[(Task::Qlora, Precision::Bf16, "--task qlora")],
            _ => &[],
        };
        if let Some(layers) = self.gpu_layers_that_fit(gpus, per_node) {
            found.push(format!(
                "--gpu-layers {layers} on {gpus} GPU{} (the other layers on the host's CPU)",
                if gpus == 1 { "" } else { "s" }
            ));
        }
        for (task, precision, flag) in smaller {
            let mut changed = open.clone();
            changed.task = *task;
            changed.precision = *precision;
            if changed.lora_rank == 0 && matches!(task, Task::Lora | Task::Qlora) {
                changed.lora_rank = crate::defaults::DEFAULT_LORA_RANK;
            }
            if self.fits(&changed, gpus, per_node).is_some() {
                found.push(format!("{flag} on {gpus} GPU{}", if gpus == 1 { "" } else { "s" }));
                break;
            }
        }
        found
    }
}

/// The serving figures of a continuous-batching estimate; an error when serving flags are
/// given where no such engine generates.
fn serving_report(
    request: &WorkloadRequest,
    workload: &Workload,
    estimate: &gpuplan_estimate::Estimate,
) -> Result<Option<LoadReport>, Error> {
    let question = &request.serving;
    if question.qps.is_some() && question.concurrency.is_some() {
        return Err(crate::RequestError::conflict(
            crate::Field::Qps,
            crate::Field::Concurrency,
            "are two ways to state the load; give one",
        )
        .with_hint("{qps} is an open load of Poisson arrivals; {concurrency} N is N users in a closed loop")
        .into());
    }
    let Some(cost) = estimate.serving_cost else {
        if question.is_asked() || workload.engine_settings.any() {
            return Err(crate::RequestError::not_applicable(
                question
                    .first_given()
                    .or_else(|| workload.engine_settings.first_given())
                    .unwrap_or(crate::Field::Engine),
                "generative models served by a continuous-batching engine (as do the other serving fields, an \
                 engine release and the engine's scheduler knobs)",
            )
            .with_hint(
                "use {task} inference with {engine} vllm, sglang, tensorrt-llm or tgi on a text-generation model",
            )
            .into());
        }
        return Ok(None);
    };
    let given = (request.seq, request.output_tokens);
    let mut mix = crate::defaults::request_mix(question.requests.as_ref(), given)?
        .unwrap_or_else(|| RequestMix::fixed(workload.seq, workload.output_tokens));
    if let Some(hit) = question.prefix_cache_hit {
        mix = mix
            .with_prefix_cache_hit(hit)
            .map_err(|message| crate::RequestError::invalid(crate::Field::PrefixCacheHit, "", message))?;
    }
    Ok(Some(serving::report(
        &cost,
        &mix,
        serving::Load {
            rate: question.qps,
            users: question.concurrency,
        },
        question.ttft,
        question.tpot,
    )))
}

//! `plan`: a workload and its constraints, searched over the catalog's offerings.

use crate::estimate_workload::ModelSource;
use crate::{Defaulted, Error, Field, Naming, defaults, resolve};
use gpuplan_catalog::Catalog;
use gpuplan_model::{
    AcceleratorId, BillingMode, Checkpointing, Engine, Framework, ImageSettings, KvCacheDtype, LoraTargets, ModelSpec,
    Offload, Optimizer, Precision, RequestMix, SequencePacking, Task,
};
use gpuplan_plan::{
    Constraints, DEFAULT_PIPELINE, Objective, Operational, Plan, PlanError, PlanRequest, ServingTargets,
    WorkloadTemplate, known_pipelines,
};

/// A planning question as a user asks it; `None` means "choose for me".
#[derive(Debug, Clone)]
pub struct PlanQuery {
    pub model: ModelSource,
    pub task: Task,
    /// Precisions allowed, preferred first; empty: 16-bit.
    pub precisions: Vec<Precision>,
    pub batch: Option<u64>,
    pub micro_batch: Option<u64>,
    pub seq: Option<u64>,
    pub output_tokens: Option<u64>,
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
    pub engine: Option<Engine>,
    /// Training framework, whose defaults and loss the estimates follow.
    pub framework: Option<Framework>,
    /// Framework builds the job needs (`pytorch==2.5`): GPUs they do not run on are left out.
    pub framework_builds: Vec<crate::software_fit::SoftwareBuild>,
    /// A machine's measurements over its GPUs' datasheet figures (`--calibration`).
    pub calibration: Option<gpuplan_model::CalibrationProfile>,
    /// Storage of the serving engine's KV cache (inference).
    pub kv_cache: Option<KvCacheDtype>,
    /// The serving engine's release and scheduler knobs (inference).
    pub engine_settings: gpuplan_model::EngineSettings,
    /// Set by the asker when the answer is no longer wanted: the search stops.
    pub cancel: gpuplan_model::Cancel,
    /// The kernel for quantised weights, from `--precision int4:awq-gemm` (inference).
    pub weight_kernel: Option<gpuplan_model::WeightKernel>,
    /// Image size, denoising steps and guidance (image models).
    pub image: ImageSettings,
    pub tokens: Option<f64>,
    pub epochs: Option<f64>,
    pub dataset_size: Option<f64>,
    pub deadline_hours: Option<f64>,
    pub budget_usd: Option<f64>,
    /// The most a configuration may cost per hour.
    pub max_hourly_usd: Option<f64>,
    pub serving: ServingTargets,
    /// Share of prompt tokens served from the engine's prefix cache.
    pub prefix_cache_hit: Option<f64>,
    pub providers: Vec<String>,
    pub regions: Vec<String>,
    pub gpus: Vec<String>,
    pub exclude_gpus: Vec<String>,
    /// The CUDA release the job is built with: GPUs it does not compile for are left out.
    pub cuda: Option<String>,
    pub billing: Vec<BillingMode>,
    pub max_gpus: Option<u32>,
    pub max_nodes: Option<u32>,
    pub memory_margin: Option<f64>,
    pub min_vcpus_per_gpu: Option<f64>,
    pub min_host_memory_gib_per_gpu: Option<f64>,
    /// vCPUs and host memory (GiB) each instance has at least.
    pub min_vcpus: Option<f64>,
    pub min_memory_gib: Option<f64>,
    /// Local disk each instance needs at least, GB.
    pub min_local_disk_gb: Option<f64>,
    /// The GPUs' CUDA compute capability at least, as written (`8.0`, `sm_90`).
    pub compute_capability: Option<String>,
    /// Instance families as typed (`p5`, `a3 mega`, `NDv4`).
    pub families: Vec<String>,
    /// What providers must publish: an uptime SLA, compliance programmes, region countries.
    pub provider_scope: crate::provider_scope::ProviderScope,
    pub objective: Objective,
    pub top: usize,
    /// Share of cost or time below which two configurations count as equal; `None`:
    /// [`gpuplan_plan::DEFAULT_TOLERANCE`].
    pub tolerance: Option<f64>,
    /// Start-up overrides, spot rate, reserved utilisation, trusted prices, stacks.
    pub operational: Operational,
}

impl PlanQuery {
    pub fn new(model: ModelSource, task: Task) -> Self {
        PlanQuery {
            model,
            task,
            precisions: Vec::new(),
            batch: None,
            micro_batch: None,
            seq: None,
            output_tokens: None,
            checkpointing: None,
            optimizer: None,
            lora_rank: None,
            lora_targets: None,
            offload: None,
            packing: SequencePacking::Packed,
            compiled: false,
            optimizer_in_backward: false,
            engine: None,
            framework: None,
            framework_builds: Vec::new(),
            calibration: None,
            kv_cache: None,
            engine_settings: gpuplan_model::EngineSettings::default(),
            cancel: gpuplan_model::Cancel::default(),
            weight_kernel: None,
            image: ImageSettings::default(),
            tokens: None,
            epochs: None,
            dataset_size: None,
            deadline_hours: None,
            budget_usd: None,
            max_hourly_usd: None,
            serving: ServingTargets::default(),
            prefix_cache_hit: None,
            providers: Vec::new(),
            regions: Vec::new(),
            gpus: Vec::new(),
            exclude_gpus: Vec::new(),
            cuda: None,
            billing: vec![BillingMode::OnDemand],
            max_gpus: None,
            max_nodes: None,
            memory_margin: None,
            min_vcpus_per_gpu: None,
            min_vcpus: None,
            min_memory_gib: None,
            min_local_disk_gb: None,
            compute_capability: None,
            families: Vec::new(),
            provider_scope: Default::default(),
            min_host_memory_gib_per_gpu: None,
            objective: Objective::Cost,
            top: 10,
            tolerance: None,
            operational: Operational::default(),
        }
    }
}

/// The plan and what the query was taken to mean.
#[derive(Debug, Clone)]
pub struct PlanAnswer {
    pub model: ModelSpec,
    pub plan: Plan,
    /// Every value chosen because the query left it open, with why.
    pub defaults: Vec<Defaulted>,
}

impl PlanAnswer {
    /// The answer as the documented JSON (`plan --format json`, `POST /api/v1/plan`), its
    /// defaults in the front end's words.
    pub fn wire(&self, naming: Naming) -> gpuplan_emit::wire::PlanJson {
        gpuplan_emit::wire::PlanJson::new(&self.plan, &self.defaults, naming)
    }
}

/// A plan with no feasible configuration, explained.
pub type InfeasiblePlan = gpuplan_plan::Infeasible;

/// Mean size of an ImageNet training JPEG, KB, where the catalog does not give one (1.28 M
/// images in about 140 GB).
const DEFAULT_IMAGE_FILE_KB: f64 = 110.0;

/// Plans `query` over the catalog; on the query's calibrated GPUs, when it carries a
/// calibration.
pub fn plan_workload(catalog: &Catalog, query: &PlanQuery) -> Result<Result<PlanAnswer, Box<InfeasiblePlan>>, Error> {
    crate::with_fitted(catalog, || plan_workload_in(catalog, query))
}

fn plan_workload_in(catalog: &Catalog, query: &PlanQuery) -> Result<Result<PlanAnswer, Box<InfeasiblePlan>>, Error> {
    match &query.calibration {
        None => plan_on(catalog, query),
        Some(profile) => plan_on(&crate::calibrate::calibrated(catalog, profile)?, query),
    }
}

fn plan_on(catalog: &Catalog, query: &PlanQuery) -> Result<Result<PlanAnswer, Box<InfeasiblePlan>>, Error> {
    let model = resolve::model(catalog, &query.model)?;
    crate::applicability::check_plan_query(query, &model)?;
    check_plan_numbers(query)?;
    let mut notes: Vec<String> = crate::calibrate::calibration_note(catalog, None)
        .into_iter()
        .chain(your_prices_note(catalog))
        .collect();
    let mut defaults: Vec<Defaulted> = crate::generic_model::assumed_shape(&model).into_iter().collect();
    let (template, precisions) = template_for(query, &model, &mut defaults)?;
    let amount = if query.task.is_training() {
        defaults::training_amount(query.tokens, query.epochs, query.dataset_size)?
    } else {
        None
    };
    let operational = operational_for(catalog, query, &model, &mut defaults)?;
    if query.task.is_training() && amount.is_none() {
        defaults.push(Defaulted::new(
            Field::Tokens,
            "none",
            "no amount of training given: ranked by cost per token, no total",
        ));
    }
    serving_defaults(query, &mut defaults);
    let constraints = constraints_for(catalog, query, &template, &mut defaults, &mut notes)?;
    let request = PlanRequest {
        model: &model,
        template,
        precisions,
        amount,
        constraints,
        objective: query.objective,
        top: query.top,
        tolerance: query.tolerance.unwrap_or(gpuplan_plan::DEFAULT_TOLERANCE),
        operational,
        cancel: query.cancel.clone(),
    };
    match gpuplan_plan::plan(catalog, &request) {
        Ok(mut plan) => {
            plan.assumptions.splice(0..0, notes);
            Ok(Ok(PlanAnswer {
                model: model.clone(),
                plan,
                defaults,
            }))
        }
        Err(PlanError::Infeasible(infeasible)) => Ok(Err(infeasible)),
        Err(PlanError::Invalid(message)) => Err(Error::invalid(message, None)),
        Err(PlanError::Cancelled) => Err(Error::Cancelled),
    }
}

/// The numbers of a plan question, each within what it may be.
fn check_plan_numbers(query: &PlanQuery) -> Result<(), Error> {
    use crate::{Field, RequestError};
    for (field, value) in [
        (Field::Deadline, query.deadline_hours),
        (Field::Budget, query.budget_usd),
        (Field::MaxHourlyPrice, query.max_hourly_usd),
        (Field::Qps, query.serving.qps),
        (Field::PeakQps, query.serving.peak_qps),
        (Field::Ttft, query.serving.ttft.map(|t| t.seconds)),
        (Field::Tpot, query.serving.tpot.map(|t| t.seconds)),
    ] {
        defaults::require_positive(field, value)?;
    }
    defaults::require_plausible_load(query.serving.qps)?;
    if let Some(headroom) = query.serving.headroom.filter(|h| !(0.0..=0.9).contains(h)) {
        return Err(RequestError::beyond(Field::Headroom, headroom, "outside 0 to 0.9")
            .with_hint("the share of each replica's goodput kept free: 0.1 plans at 90 % of goodput")
            .into());
    }
    if let Some(tolerance) = query.tolerance.filter(|t| !(0.0..=1.0).contains(t)) {
        return Err(RequestError::beyond(Field::Tolerance, tolerance, "outside 0 to 1")
            .with_hint("the share of cost or time below which configurations count as equal: 0.1 is 10 %")
            .into());
    }
    if let (Some(qps), Some(peak)) = (query.serving.qps, query.serving.peak_qps) {
        if peak < qps {
            return Err(
                RequestError::beyond(Field::PeakQps, peak, format!("below {{qps}} {qps}"))
                    .with_hint("the peak is the highest load; give it at least {qps}")
                    .into(),
            );
        }
    }
    for (field, value) in [
        (Field::MinVcpusPerGpu, query.min_vcpus_per_gpu),
        (Field::MinHostMemoryPerGpu, query.min_host_memory_gib_per_gpu),
        (Field::MinVcpus, query.min_vcpus),
        (Field::MinMemory, query.min_memory_gib),
        (Field::MinDisk, query.min_local_disk_gb),
    ] {
        defaults::require_non_negative(field, value)?;
    }
    if query.max_gpus == Some(0) {
        return Err(defaults::at_least_one(Field::MaxGpus, 0));
    }
    if query.top == 0 {
        return Err(defaults::at_least_one(Field::Top, 0));
    }
    defaults::check_counts(&[
        (Field::Seq, query.seq),
        (Field::Batch, query.batch),
        (Field::MicroBatch, query.micro_batch),
        (Field::LoraRank, query.lora_rank),
    ])?;
    for precision in &query.precisions {
        defaults::check_training_precision(query.task, *precision, query.framework)?;
    }
    let memory_margin = query.memory_margin.unwrap_or(gpuplan_plan::DEFAULT_MEMORY_MARGIN);
    if !(0.0..0.9).contains(&memory_margin) {
        return Err(RequestError::out_of_range(Field::MemoryMargin, memory_margin, "between 0 and 0.9").into());
    }
    Ok(())
}

/// The workload every candidate is configured from, and the precisions allowed, with the
/// defaults chosen for it.
fn template_for(
    query: &PlanQuery,
    model: &ModelSpec,
    defaults: &mut Vec<Defaulted>,
) -> Result<(WorkloadTemplate, Vec<Precision>), Error> {
    let transformer = model.transformer();
    let task = query.task;
    let checkpoint = if query.precisions.is_empty() {
        defaults::checkpoint_precision(transformer, task, defaults)?
    } else {
        None
    };
    let precisions = if let Some((precision, _)) = checkpoint {
        vec![precision]
    } else if query.precisions.is_empty() {
        defaults.push(Defaulted::new(
            Field::Precision,
            Precision::Bf16,
            if task == Task::Inference {
                "fp16 on GPUs without bf16; list fp8, int8 or int4 too to allow quantisation"
            } else {
                "fp16 on GPUs without bf16; list fp8 too to allow fp8 training"
            },
        ));
        vec![Precision::Bf16]
    } else {
        query.precisions.clone()
    };
    let given = (query.seq, query.output_tokens);
    let log = query.serving.requests.as_ref();
    let (seq, output_tokens) = defaults::lengths(given, log, task, transformer, defaults);
    crate::applicability::check_training_step(task, model, query.packing, query.compiled, seq)?;
    let engine = defaults::engine(query.engine, task, model, defaults);
    let lora_rank = defaults::lora_rank(query.lora_rank, task, defaults);
    let lora_targets = defaults::lora_targets(query.lora_targets, task, query.framework, defaults);
    let batch = match (query.batch, task) {
        (Some(batch), _) => Some(batch),
        (None, Task::Inference) => None,
        (None, _) if query.optimizer_in_backward => {
            defaults.push(Defaulted::new(
                Field::Batch,
                "the micro-batch × the replicas",
                defaults::BATCH_IN_BACKWARD_WHY,
            ));
            None
        }
        (None, _) => {
            defaults.push(Defaulted::new(
                Field::Batch,
                gpuplan_plan::DEFAULT_GLOBAL_BATCH,
                defaults::BATCH_DEFAULT_WHY,
            ));
            None
        }
    };
    let template = WorkloadTemplate {
        task,
        precision: precisions[0],
        batch,
        micro_batch: query.micro_batch,
        seq,
        output_tokens,
        tp: None,
        pp: None,
        cp: 1,
        ep: 1,
        vp: None,
        attention_dp: false,
        ep_overlap: false,
        zero: None,
        checkpointing: query.checkpointing,
        optimizer: query.optimizer.unwrap_or(Optimizer::AdamW),
        optimizer_in_backward: query.optimizer_in_backward,
        lora_rank,
        lora_targets,
        offload: query.offload.unwrap_or_default(),
        packing: query.packing,
        compiled: query.compiled,
        flash_attention: transformer.is_some() || crate::defaults::is_diffusion(model),
        engine,
        framework: query.framework,
        engine_settings: query.engine_settings,
        weight_kernel: query.weight_kernel.or(checkpoint.and_then(|(_, kernel)| kernel)),
        kv_cache: query.kv_cache.unwrap_or(KvCacheDtype::Auto),
        image: query.image,
    };
    Ok((template, precisions))
}

/// How the job runs around its computation: the batch of requests, the input pipeline and
/// the dataset copied to each node, and the stacks allowed.
fn operational_for(
    catalog: &Catalog,
    query: &PlanQuery,
    model: &ModelSpec,
    defaults: &mut Vec<Defaulted>,
) -> Result<gpuplan_plan::Operational, Error> {
    let task = query.task;
    let mut operational = query.operational.clone();
    if task == Task::Inference {
        operational.batch_requests = query.dataset_size;
    }
    if (task.is_training() || task == Task::Inference) && defaults::decodes_images(model) {
        let image_bytes = catalog.operations().image_file_kb.unwrap_or(DEFAULT_IMAGE_FILE_KB) * 1e3;
        operational.input.image_bytes = Some(image_bytes);
        check_pipeline(catalog, operational.input.pipeline.as_deref())?;
        let pipeline = operational.input.pipeline.as_deref().unwrap_or(DEFAULT_PIPELINE);
        if operational.input.pipeline.is_none() {
            defaults.push(Defaulted::new(
                Field::InputPipeline,
                pipeline,
                if task.is_training() {
                    "DataLoader workers on the vCPUs; dali decodes on the GPU"
                } else {
                    "the server's workers decode each request's image on the vCPUs; dali decodes on the GPU"
                },
            ));
        }
        // Image datasets are copied to each node before training starts.
        if let (false, Some(samples)) = (operational.input.stream_dataset, query.dataset_size) {
            operational.startup.dataset_bytes.get_or_insert(samples * image_bytes);
        }
    }
    if operational.stacks.is_empty() {
        defaults.push(Defaulted::new(
            Field::Stack,
            "any",
            "every software stack that runs the request (CUDA, ROCm, Neuron, XLA)",
        ));
    }
    Ok(operational)
}

/// The defaults a serving plan's load and targets were read with.
fn serving_defaults(query: &PlanQuery, defaults: &mut Vec<Defaulted>) {
    if query.task != Task::Inference {
        return;
    }
    let online_load = query.serving.qps.is_some() || query.serving.concurrency.is_some();
    if !online_load && query.dataset_size.is_none() {
        defaults.push(Defaulted::new(Field::Qps, "none", "no load given: one replica"));
    }
    if online_load && query.serving.headroom.is_none() {
        defaults.push(Defaulted::new(
            Field::Headroom,
            gpuplan_plan::DEFAULT_SERVING_HEADROOM,
            format!(
                "each replica planned at {:.0} % of its goodput",
                (1.0 - gpuplan_plan::DEFAULT_SERVING_HEADROOM) * 100.0
            ),
        ));
    }
    for (field, target) in [(Field::Ttft, query.serving.ttft), (Field::Tpot, query.serving.tpot)] {
        if let Some(target) = target.filter(|t| t.percentile == gpuplan_model::DEFAULT_TARGET_PERCENTILE) {
            defaults.push(Defaulted::new(field, target, "a bare target is the 90th percentile"));
        }
    }
}

/// What every candidate must satisfy: providers, regions and GPUs resolved in the catalog,
/// the GPUs the job's software runs on, the serving targets, the limits.
fn constraints_for(
    catalog: &Catalog,
    query: &PlanQuery,
    template: &WorkloadTemplate,
    defaults: &mut Vec<Defaulted>,
    notes: &mut Vec<String>,
) -> Result<Constraints, Error> {
    let resolve_gpus = |names: &[String]| -> Result<Vec<AcceleratorId>, Error> {
        let mut ids = Vec::new();
        for name in names {
            for accelerator in catalog.accelerators().resolve_family(name)? {
                ids.push(accelerator.id.clone());
            }
        }
        Ok(ids)
    };
    let providers = resolve::providers(catalog, &query.providers)?;
    let gpus = resolve_gpus(&query.gpus)?;
    let mut excluded = resolve_gpus(&query.exclude_gpus)?;
    if query.framework.is_none() && query.task.is_training() && !query.framework_builds.is_empty() {
        defaults.push(crate::software_fit::no_recipe(&query.framework_builds));
    }
    if query.cuda.is_some() || !query.framework_builds.is_empty() {
        let outside = crate::software_fit::not_running(catalog, query.cuda.as_deref(), &query.framework_builds, notes)?;
        if !gpus.is_empty() && gpus.iter().all(|g| outside.contains(g)) {
            return Err(Error::invalid(
                format!(
                    "the job's software runs on none of the GPUs asked ({})",
                    query.gpus.join(", ")
                ),
                Some("`gpuplan compat --gpu … --framework … --cuda …` says what each GPU needs".to_string()),
            ));
        }
        excluded.extend(outside);
    }
    let max_gpus = query.max_gpus.unwrap_or_else(|| {
        defaults.push(Defaulted::new(
            Field::MaxGpus,
            gpuplan_plan::DEFAULT_MAX_GPUS,
            "larger clusters need capacity reservations",
        ));
        gpuplan_plan::DEFAULT_MAX_GPUS
    });
    Ok(Constraints {
        deadline_hours: query.deadline_hours,
        budget_usd: query.budget_usd,
        max_hourly_usd: query.max_hourly_usd,
        serving: serving_targets(query, template.seq, template.output_tokens)?,
        providers,
        regions: query.regions.clone(),
        families: resolve::families(catalog, &query.families)?,
        locations: crate::provider_scope::allowed_locations(catalog, &query.provider_scope, notes)?,
        gpus,
        exclude_gpus: excluded,
        billing: query.billing.clone(),
        max_gpus,
        max_nodes: query.max_nodes.unwrap_or_else(|| default_max_nodes(max_gpus, defaults)),
        memory_margin: query.memory_margin.unwrap_or(gpuplan_plan::DEFAULT_MEMORY_MARGIN),
        min_vcpus_per_gpu: query.min_vcpus_per_gpu,
        min_host_memory_gib_per_gpu: query.min_host_memory_gib_per_gpu,
        min_vcpus: query.min_vcpus,
        min_memory_gib: query.min_memory_gib,
        min_local_disk_gb: query.min_local_disk_gb,
        min_compute_capability: query
            .compute_capability
            .as_deref()
            .map(crate::resolve::compute_capability)
            .transpose()?,
    })
}

/// A tabular (gradient-boosted trees) training job.
#[derive(Debug, Clone)]
pub struct TabularQuery {
    pub rows: f64,
    pub features: f64,
    pub rounds: Option<u32>,
    pub providers: Vec<String>,
    pub regions: Vec<String>,
    pub billing: Vec<BillingMode>,
    pub deadline_hours: Option<f64>,
    pub budget_usd: Option<f64>,
    pub by_time: bool,
}

/// Priced options (cheapest or fastest first), the defaults chosen, the assumptions.
/// A tabular job's options with the defaults and assumptions behind them; where there is none,
/// why (`shortfall`).
#[derive(Debug, Clone)]
pub struct TabularAnswer {
    pub options: Vec<gpuplan_plan::TabularOption>,
    pub defaults: Vec<Defaulted>,
    pub assumptions: Vec<String>,
    pub shortfall: Option<String>,
}

/// The priced options for a tabular job, cheapest (or fastest) first, with the defaults and
/// assumptions behind them.
pub fn plan_tabular_workload(catalog: &Catalog, query: &TabularQuery) -> Result<TabularAnswer, Error> {
    crate::with_fitted(catalog, || plan_tabular_workload_in(catalog, query))
}

fn plan_tabular_workload_in(catalog: &Catalog, query: &TabularQuery) -> Result<TabularAnswer, Error> {
    if !(query.rows >= 1.0 && query.rows.is_finite() && query.features >= 1.0 && query.features.is_finite()) {
        let (field, value) = if query.rows >= 1.0 && query.rows.is_finite() {
            (crate::Field::Features, query.features)
        } else {
            (crate::Field::Rows, query.rows)
        };
        return Err(crate::defaults::at_least_one(field, crate::defaults::shown(value)));
    }
    let mut defaults = Vec::new();
    let rounds = query.rounds.unwrap_or_else(|| {
        defaults.push(Defaulted::new(
            Field::Rounds,
            gpuplan_plan::DEFAULT_BOOSTING_ROUNDS,
            "XGBoost's default",
        ));
        gpuplan_plan::DEFAULT_BOOSTING_ROUNDS
    });
    let constraints = Constraints {
        deadline_hours: query.deadline_hours,
        budget_usd: query.budget_usd,
        providers: resolve::providers(catalog, &query.providers)?,
        regions: query.regions.clone(),
        billing: query.billing.clone(),
        ..Constraints::default()
    };
    let request = gpuplan_plan::TabularRequest {
        rows: query.rows,
        features: query.features,
        rounds,
        constraints,
    };
    let options = gpuplan_plan::plan_tabular(catalog, &request, query.by_time);
    let mut assumptions: Vec<String> = your_prices_note(catalog).into_iter().collect();
    assumptions.extend([
        format!(
            "gradient-boosted trees: {:.0e} row·feature·rounds per second per vCPU (hist), {:.1e} on a V100 scaled by memory bandwidth (gpu_hist); ±50 %",
            gpuplan_plan::CPU_CELL_ROUNDS_PER_VCPU_SECOND,
            gpuplan_plan::GPU_CELL_ROUNDS_PER_SECOND_V100
        ),
        format!(
            "{:.0} s per job to start the instance and load the data",
            gpuplan_plan::TABULAR_FIXED_SECONDS
        ),
        "single-GPU instances with CUDA only for GPU boosting (XGBoost's and LightGBM's GPU builds); host RAM must hold 3× the float matrix".to_string(),
    ]);
    let shortfall = options
        .is_empty()
        .then(|| gpuplan_plan::tabular_shortfall(catalog, &request));
    Ok(TabularAnswer {
        options,
        defaults,
        assumptions,
        shortfall,
    })
}

/// Where the user's own prices replace list prices.
fn your_prices_note(catalog: &Catalog) -> Option<String> {
    catalog.your_prices().map(|yours| {
        format!(
            "your prices from {} for {} offerings; list prices elsewhere",
            yours.file, yours.offerings
        )
    })
}

/// Refuses an input pipeline the catalog has no decode rate for.
fn check_pipeline(catalog: &Catalog, pipeline: Option<&str>) -> Result<(), Error> {
    let Some(pipeline) = pipeline else {
        return Ok(());
    };
    let known = known_pipelines(catalog.operations());
    if known.iter().any(|k| k == pipeline) {
        Ok(())
    } else {
        Err(crate::RequestError::invalid(
            crate::Field::InputPipeline,
            "",
            format!("unknown pipeline `{pipeline}`"),
        )
        .with_hint(format!("one of: {}", known.join(", ")))
        .into())
    }
}

/// The serving targets, the request log scaled to the lengths given beside it and the
/// prefix-cache hit rate applied to the request shapes.
fn serving_targets(query: &PlanQuery, seq: u64, output_tokens: u64) -> Result<ServingTargets, Error> {
    let mut targets = query.serving.clone();
    let given = (query.seq, query.output_tokens);
    targets.requests = crate::defaults::request_mix(query.serving.requests.as_ref(), given)?;
    if let Some(hit) = query.prefix_cache_hit {
        let mix = targets
            .requests
            .take()
            .unwrap_or_else(|| RequestMix::fixed(seq, output_tokens));
        targets.requests = Some(
            mix.with_prefix_cache_hit(hit)
                .map_err(|message| crate::RequestError::invalid(crate::Field::PrefixCacheHit, "", message))?,
        );
    }
    Ok(targets)
}

/// Nodes the search may use when none was given: the default, or as many eight-GPU nodes as
/// `max_gpus` fills where that is more, so a larger GPU bound is not stopped by a node bound
/// the user never set (and the answer says which it used).
fn default_max_nodes(max_gpus: u32, defaults: &mut Vec<Defaulted>) -> u32 {
    let nodes = max_gpus.div_ceil(8).max(gpuplan_plan::DEFAULT_MAX_NODES);
    if nodes > gpuplan_plan::DEFAULT_MAX_NODES {
        defaults.push(Defaulted::new(
            Field::MaxNodes,
            nodes,
            "enough nodes of eight GPUs for the GPUs allowed",
        ));
    }
    nodes
}

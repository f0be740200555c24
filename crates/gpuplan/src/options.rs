//! What `estimate` and `plan` are asked, as one value both front ends fill: the CLI from its
//! flags, the HTTP API from a JSON body whose fields carry the flags' names (`--kv-cache-dtype`
//! is `kv_cache_dtype`). Names given as text (a task, a precision, a framework …) are parsed
//! here, once, with the flag named in the error, so a flag and a JSON field cannot come to
//! mean different things.

use crate::estimate_workload::{ModelSource, ServingQuestion, WorkloadRequest};
use crate::instances::InstancesRequest;
use crate::plan_workload::PlanQuery;
use crate::{Error, Field, RequestError};
use gpuplan_catalog::OfferingSort;
use gpuplan_model::{BillingMode, ImageSettings, LatencyTarget, RequestMix, SequencePacking, SoftwareStack, Task};
use gpuplan_plan::{InputSettings, Objective, Operational, ServingTargets, StartupOverrides};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::str::FromStr;

/// The workload both `estimate` and `plan` describe. (Flattened into both; serde cannot deny
/// unknown fields through a flattened struct, so each keeps the fields no part claims in
/// `unknown` and refuses them itself.)
/// Other names a request field answers to, as `(alias, field)`: the serde `alias` attributes,
/// listed once for the job file's key check.
pub(crate) const FIELD_ALIASES: &[(&str, &str)] = &[
    ("input_tokens", "seq"),
    ("provider", "providers"),
    ("region", "regions"),
    ("utilization", "utilisation"),
];

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct WorkloadOptions {
    /// A built-in model id (`gpuplan models`), a Hugging Face Hub id (`ORG/NAME[@REVISION]`,
    /// read from the Hub where the server may: `gpuplan serve` reads it as `--model` does), or
    /// the name of the config in `model_config` (needed unless `workload` is `tabular`).
    #[serde(default)]
    pub model: String,
    /// A Hugging Face config.json for `model`, as an object or as text (the CLI reads it from
    /// the path given as `--model`).
    #[serde(default)]
    #[schema(value_type = Option<Object>)]
    pub model_config: Option<serde_json::Value>,
    /// The checkpoint's `model.safetensors.index.json` for `model_config`, as text: the
    /// parameters it holds (its `total_parameters`, or its `total_size` over the config's
    /// dtype) are what the weights take (the CLI reads it from the Hub with the config).
    #[serde(default)]
    pub checkpoint_index: Option<String>,
    /// pretrain, finetune, lora, qlora or inference (needed unless `workload` is `tabular`).
    #[serde(default)]
    pub task: String,
    #[serde(default)]
    pub batch: Option<u64>,
    #[serde(default)]
    pub micro_batch: Option<u64>,
    /// Tokens per sequence (training) or prompt tokens (inference); `input_tokens` is the same
    /// field (the command line's `--input-tokens`; listed in [`FIELD_ALIASES`]).
    #[serde(default, alias = "input_tokens")]
    pub seq: Option<u64>,
    #[serde(default)]
    pub output_tokens: Option<u64>,
    #[serde(default)]
    pub checkpointing: Option<String>,
    #[serde(default)]
    pub framework: Option<String>,
    #[serde(default)]
    pub offload: Option<String>,
    /// The training step runs under torch.compile.
    #[serde(default)]
    pub compile: bool,
    /// Examples padded to `seq`, with this mean real length.
    #[serde(default)]
    pub mean_seq: Option<u64>,
    #[serde(default)]
    pub kv_cache_dtype: Option<String>,
    #[serde(default)]
    pub optimizer: Option<String>,
    /// Training: the optimizer steps each parameter inside the backward pass and frees its
    /// gradient (torchtune's `optimizer_in_bwd`).
    #[serde(default)]
    pub optimizer_in_backward: bool,
    #[serde(default)]
    pub lora_rank: Option<u64>,
    #[serde(default)]
    pub lora_targets: Option<String>,
    #[serde(default)]
    pub engine: Option<String>,
    /// Image models: pixels per side.
    #[serde(default)]
    pub resolution: Option<u64>,
    /// Diffusion models: denoising steps.
    #[serde(default)]
    pub steps: Option<u64>,
    /// Diffusion models: no classifier-free guidance.
    #[serde(default)]
    pub no_guidance: bool,
    #[serde(default)]
    pub tokens: Option<f64>,
    #[serde(default)]
    pub epochs: Option<f64>,
    #[serde(default)]
    pub dataset_size: Option<f64>,
    #[serde(default)]
    pub memory_margin: Option<f64>,
    #[serde(default)]
    pub qps: Option<f64>,
    /// Time-to-first-token target: `{"seconds": 0.8, "percentile": 90}`.
    #[serde(default)]
    #[schema(value_type = Option<Object>)]
    pub ttft: Option<LatencyTarget>,
    /// Time-per-output-token target: `{"seconds": 0.05, "percentile": 90}`.
    #[serde(default)]
    #[schema(value_type = Option<Object>)]
    pub tpot: Option<LatencyTarget>,
    #[serde(default)]
    pub prefix_cache_hit: Option<f64>,
    /// Prompt and output lengths of the traffic, one `{"input_tokens": 900, "output_tokens":
    /// 250}` per request (the CLI reads them from `--requests FILE`). Read, not echoed: an
    /// answer states the mix's means and spread in its assumptions.
    #[serde(
        default,
        deserialize_with = "crate::request_log::request_list",
        serialize_with = "crate::request_log::not_echoed",
        skip_serializing_if = "crate::request_log::always"
    )]
    #[schema(value_type = Option<Vec<Object>>)]
    pub requests: Option<RequestMix>,
    /// A calibration `gpuplan probe --calibration-out` wrote (the CLI reads it from
    /// `--calibration FILE`): the measured GPUs' peaks and bandwidth in place of the
    /// datasheet's.
    #[serde(default)]
    #[schema(value_type = Option<Object>)]
    pub calibration: Option<gpuplan_model::CalibrationProfile>,
}

/// `estimate`: a workload on one GPU type.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct EstimateOptions {
    #[serde(flatten)]
    pub workload: WorkloadOptions,
    /// The serving engine's scheduler knobs and a closed-loop load.
    #[serde(flatten)]
    pub knobs: crate::EngineKnobs,
    /// Fields no option claims: refused.
    #[serde(flatten, skip_serializing)]
    #[schema(ignore)]
    pub unknown: BTreeMap<String, serde_json::Value>,
    /// The GPU type: an id or alias.
    pub gpu: String,
    #[serde(default)]
    pub gpus: Option<u32>,
    #[serde(default)]
    pub gpus_per_node: Option<u32>,
    #[serde(default)]
    pub precision: Option<String>,
    #[serde(default)]
    pub tp: Option<u32>,
    #[serde(default)]
    pub pp: Option<u32>,
    #[serde(default)]
    pub cp: Option<u32>,
    #[serde(default)]
    pub ep: Option<u32>,
    /// Virtual pipeline stages per GPU (interleaved 1F1B; 1: plain 1F1B); default: the
    /// framework's schedule.
    #[serde(default)]
    pub vp: Option<u32>,
    /// Attention data parallelism for a mixture of experts (see `--attention-dp`).
    #[serde(default)]
    pub attention_dp: Option<bool>,
    /// Training a mixture of experts: the expert-parallel all-to-alls overlapped with the
    /// adjacent micro-batch's compute (see `--ep-overlap`).
    #[serde(default)]
    pub ep_overlap: Option<bool>,
    #[serde(default)]
    pub zero: Option<u8>,
    #[serde(default)]
    pub flash_attention: Option<bool>,
}

/// `plan`: a workload over every offering, GPU count, layout and billing mode.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct PlanOptions {
    #[serde(flatten)]
    pub workload: WorkloadOptions,
    /// The serving engine's scheduler knobs and a closed-loop load.
    #[serde(flatten)]
    pub knobs: crate::EngineKnobs,
    /// Fields no option claims: refused.
    #[serde(flatten, skip_serializing)]
    #[schema(ignore)]
    pub unknown: BTreeMap<String, serde_json::Value>,
    /// Precisions allowed, preferred first.
    #[serde(default)]
    pub precision: Vec<String>,
    /// Finish within this time: hours, or a duration (`"36h"`, `"3d"`).
    #[serde(default, deserialize_with = "gpuplan_model::duration::hours")]
    #[schema(schema_with = crate::duration_schema)]
    pub deadline: Option<f64>,
    /// Spend at most this many USD (serving: per month).
    #[serde(default)]
    pub budget: Option<f64>,
    /// Pay at most this many USD per hour for a configuration, all its instances together.
    #[serde(default)]
    pub max_hourly_price: Option<f64>,
    #[serde(default)]
    pub peak_qps: Option<f64>,
    /// Share of each serving replica's goodput kept free (0 to 0.9; default 0.1).
    #[serde(default)]
    pub headroom: Option<f64>,
    #[serde(default)]
    pub providers: Vec<String>,
    #[serde(default)]
    pub regions: Vec<String>,
    /// Instance families as guides name them (`p5`, `a3 mega`, `NDv4`, `gn7i`).
    #[serde(default)]
    pub family: Vec<String>,
    /// Only providers whose single-VM uptime SLA is at least this, %.
    #[serde(default)]
    pub sla: Option<f64>,
    /// Only providers stating every one of these programmes (`SOC 2`, `HIPAA`, `FedRAMP`).
    #[serde(default)]
    pub compliance: Vec<String>,
    /// Only regions in these countries (ISO 3166-1 alpha-2: `US`, `DE`).
    #[serde(default)]
    pub countries: Vec<String>,
    #[serde(default)]
    pub gpu: Vec<String>,
    #[serde(default)]
    pub exclude_gpu: Vec<String>,
    /// on-demand, spot, reserved-1y, reserved-3y.
    #[serde(default = "on_demand")]
    pub billing: Vec<String>,
    /// Adds spot to `billing`.
    #[serde(default)]
    pub spot: bool,
    #[serde(default)]
    pub max_gpus: Option<u32>,
    #[serde(default)]
    pub max_nodes: Option<u32>,
    #[serde(default)]
    pub min_vcpus_per_gpu: Option<f64>,
    #[serde(default)]
    pub min_host_memory_per_gpu: Option<f64>,
    /// vCPUs each instance has at least.
    #[serde(default)]
    pub min_vcpus: Option<f64>,
    /// Host memory each instance has at least, GiB.
    #[serde(default)]
    pub min_memory: Option<f64>,
    /// Local disk each instance needs at least, GB.
    #[serde(default)]
    pub min_disk: Option<f64>,
    /// The GPUs' CUDA compute capability at least (`8.0`, `sm_90`).
    #[serde(default)]
    pub compute_capability: Option<String>,
    /// cost, time or balanced.
    #[serde(default = "cost")]
    pub objective: String,
    #[serde(default = "ten")]
    pub top: usize,
    /// Share of cost or time below which two configurations count as equal (0 to 1; default
    /// 0.1): the Pareto front and the cheapest and fastest labels ignore smaller differences.
    #[serde(default)]
    pub tolerance: Option<f64>,
    #[serde(default)]
    pub stack: Vec<String>,
    #[serde(default)]
    pub trust_prices: bool,
    #[serde(default)]
    pub utilisation: Option<f64>,
    #[serde(default)]
    pub interruption_rate: Option<f64>,
    /// From asking for the machines to running on them: seconds, or a duration (`"5m"`).
    #[serde(default, deserialize_with = "gpuplan_model::duration::seconds")]
    #[schema(schema_with = crate::duration_schema)]
    pub provision_time: Option<f64>,
    #[serde(default)]
    pub image_size: Option<f64>,
    #[serde(default)]
    pub storage_gbps: Option<f64>,
    #[serde(default)]
    pub input_pipeline: Option<String>,
    #[serde(default)]
    pub stream_dataset: bool,
    /// Time between checkpoints: hours, or a duration (`"30m"`).
    #[serde(default, deserialize_with = "gpuplan_model::duration::hours")]
    #[schema(schema_with = crate::duration_schema)]
    pub checkpoint_every: Option<f64>,
    /// The CUDA release the job is built with (`12.4`): GPUs it does not compile for are left
    /// out (Volta from CUDA 13, Blackwell before 12.8), and accelerators without CUDA.
    #[serde(default)]
    pub cuda: Option<String>,
    /// `tabular` for classical ML (gradient-boosted trees) on `rows` × `features`, instead of
    /// a `model` and `task`.
    #[serde(default, rename = "workload")]
    pub kind: Option<String>,
    /// Tabular: training rows.
    #[serde(default)]
    pub rows: Option<f64>,
    /// Tabular: features per row.
    #[serde(default)]
    pub features: Option<f64>,
    /// Tabular: boosting rounds (default 100).
    #[serde(default)]
    pub rounds: Option<u32>,
}

fn on_demand() -> Vec<String> {
    vec!["on-demand".to_string()]
}

fn cost() -> String {
    "cost".to_string()
}

fn ten() -> usize {
    10
}

impl Default for PlanOptions {
    fn default() -> Self {
        PlanOptions {
            workload: WorkloadOptions::default(),
            knobs: crate::EngineKnobs::default(),
            unknown: BTreeMap::new(),
            precision: Vec::new(),
            deadline: None,
            budget: None,
            max_hourly_price: None,
            peak_qps: None,
            headroom: None,
            providers: Vec::new(),
            regions: Vec::new(),
            family: Vec::new(),
            sla: None,
            compliance: Vec::new(),
            countries: Vec::new(),
            gpu: Vec::new(),
            exclude_gpu: Vec::new(),
            billing: on_demand(),
            spot: false,
            max_gpus: None,
            max_nodes: None,
            min_vcpus_per_gpu: None,
            min_host_memory_per_gpu: None,
            min_vcpus: None,
            min_memory: None,
            min_disk: None,
            compute_capability: None,
            objective: cost(),
            top: ten(),
            tolerance: None,
            stack: Vec::new(),
            trust_prices: false,
            utilisation: None,
            interruption_rate: None,
            provision_time: None,
            image_size: None,
            storage_gbps: None,
            input_pipeline: None,
            stream_dataset: false,
            checkpoint_every: None,
            cuda: None,
            kind: None,
            rows: None,
            features: None,
            rounds: None,
        }
    }
}

/// `instances`: which offerings to list. As a URL query, lists are comma-separated
/// (`provider=aws,gcp`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, utoipa::ToSchema, utoipa::IntoParams)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub struct InstancesOptions {
    /// An accelerator id, alias or family name (`H100` matches every H100 variant).
    #[serde(default)]
    pub gpu: Option<String>,
    /// Providers, comma-separated (`provider` is the same field).
    #[serde(default, alias = "provider")]
    pub providers: Option<String>,
    /// Regions, comma-separated (`region` is the same field).
    #[serde(default, alias = "region")]
    pub regions: Option<String>,
    #[serde(default)]
    pub min_gpus: Option<u32>,
    #[serde(default)]
    pub max_gpus: Option<u32>,
    /// Minimum memory per GPU, GiB.
    #[serde(default)]
    pub min_gpu_memory: Option<f64>,
    /// Minimum vCPUs per instance.
    #[serde(default)]
    pub min_vcpus: Option<f64>,
    /// Minimum host memory per instance, GiB.
    #[serde(default)]
    pub min_memory: Option<f64>,
    /// Minimum local disk per instance, GB.
    #[serde(default)]
    pub min_disk: Option<f64>,
    /// Minimum CUDA compute capability (`8.0`, `sm_90`).
    #[serde(default)]
    pub compute_capability: Option<String>,
    /// Instance families (comma-separated: `NDv4`, `a3 mega`, `p5`, `gn7i`).
    #[serde(default)]
    pub family: Option<String>,
    /// Maximum USD per hour (the spot price with `spot`).
    #[serde(default)]
    pub max_price: Option<f64>,
    /// Only offerings with a spot price.
    #[serde(default)]
    pub spot: bool,
    /// CPU-only shapes too.
    #[serde(default)]
    pub include_cpu: bool,
    /// One row per zone where zone prices differ.
    #[serde(default)]
    pub zones: bool,
    /// price (default), price-per-gpu, gpus, memory or provider.
    #[serde(default)]
    pub sort: Option<String>,
    /// Offerings to skip from the top of the sorted list (paging; default 0).
    #[serde(default)]
    pub offset: Option<usize>,
    /// Offerings to return at most after `offset` (paging; default: all). The API's
    /// `X-Total-Count` header says how many matched.
    #[serde(default)]
    pub limit: Option<usize>,
}

fn comma_list(text: &Option<String>) -> Vec<String> {
    text.as_deref()
        .map(|t| {
            t.split(',')
                .map(str::trim)
                .filter(|s| !s.is_empty())
                .map(str::to_string)
                .collect()
        })
        .unwrap_or_default()
}

impl InstancesOptions {
    /// The facade's request, the sort parsed.
    pub fn request(&self) -> Result<InstancesRequest, Error> {
        let sort = match self.sort.as_deref().unwrap_or("price") {
            "price" => OfferingSort::Price,
            "price-per-gpu" => OfferingSort::PricePerGpu,
            "gpus" => OfferingSort::Gpus,
            "memory" => OfferingSort::Memory,
            "provider" => OfferingSort::Provider,
            other => {
                return Err(
                    RequestError::invalid(Field::Sort, "", format!("unknown order `{other}`"))
                        .with_hint("use price, price-per-gpu, gpus, memory or provider")
                        .into(),
                );
            }
        };
        Ok(InstancesRequest {
            gpu: self.gpu.clone(),
            providers: comma_list(&self.providers),
            regions: comma_list(&self.regions),
            families: comma_list(&self.family),
            min_gpus: self.min_gpus,
            max_gpus: self.max_gpus,
            min_gpu_memory_gib: self.min_gpu_memory,
            min_vcpus: self.min_vcpus,
            min_memory_gib: self.min_memory,
            min_disk_gb: self.min_disk,
            compute_capability: self.compute_capability.clone(),
            max_price: self.max_price,
            spot_only: self.spot,
            include_cpu_only: self.include_cpu,
            per_zone: self.zones,
            sort,
            offset: self.offset.unwrap_or(0),
            limit: self.limit,
        })
    }
}

/// `text` of `flag` parsed, the flag named when it is not understood.
fn parse<T: FromStr<Err = E>, E: ToString>(field: Field, text: &Option<String>) -> Result<Option<T>, Error> {
    text.as_deref().map(|t| parse_one(field, t)).transpose()
}

/// `text` of `field` parsed; the parser's message (which names the value and suggests the
/// nearest known name) says what is wrong.
fn parse_one<T: FromStr<Err = E>, E: ToString>(field: Field, text: &str) -> Result<T, Error> {
    text.parse::<T>()
        .map_err(|e| RequestError::invalid(field, "", e.to_string()).into())
}

fn non_negative(field: Field, value: Option<f64>) -> Result<Option<f64>, Error> {
    crate::defaults::require_non_negative(field, value)?;
    Ok(value)
}

fn positive(field: Field, value: Option<f64>) -> Result<Option<f64>, Error> {
    crate::defaults::require_positive(field, value)?;
    Ok(value)
}

/// Largest token, epoch or sample count taken: a quintillion.
const MAX_AMOUNT: f64 = 1e18;

/// A count of tokens, epochs or samples: positive and at most [`MAX_AMOUNT`].
fn amount(field: Field, value: Option<f64>) -> Result<Option<f64>, Error> {
    match positive(field, value)? {
        Some(v) if v > MAX_AMOUNT => Err(RequestError::beyond(
            field,
            format!("{v:e}"),
            format!("more than any run processes (at most {MAX_AMOUNT:e})"),
        )
        .into()),
        other => Ok(other),
    }
}

/// Refuses the fields of a request no option claims, naming the first.
fn refuse_unknown(unknown: &BTreeMap<String, serde_json::Value>) -> Result<(), Error> {
    match unknown.keys().next() {
        Some(field) => {
            let near = gpuplan_model::did_you_mean(field, Field::ALL.iter().map(|f| f.key()));
            let hint = match near {
                Some(near) => format!("did you mean `{near}`? Fields are the command's flags in snake_case"),
                None => "fields are the command's flags in snake_case: kv_cache_dtype for the kv-cache-dtype flag"
                    .to_string(),
            };
            Err(Error::invalid(format!("unknown field `{field}`"), Some(hint)))
        }
        None => Ok(()),
    }
}

/// The billing modes named (`--billing`), spot added by `spot` (`--spot`).
pub fn billing_modes(names: &[String], spot: bool) -> Result<Vec<BillingMode>, Error> {
    let mut modes: Vec<BillingMode> = names.iter().map(|b| billing_mode(b)).collect::<Result<_, _>>()?;
    if spot && !modes.contains(&BillingMode::Spot) {
        modes.push(BillingMode::Spot);
    }
    Ok(modes)
}

/// A billing mode by any of its names.
pub fn billing_mode(text: &str) -> Result<BillingMode, Error> {
    match text.trim().to_lowercase().as_str() {
        "on-demand" | "ondemand" | "od" => Ok(BillingMode::OnDemand),
        "spot" | "preemptible" => Ok(BillingMode::Spot),
        "reserved-1y" | "1y" | "reserved" => Ok(BillingMode::Reserved1y),
        "reserved-3y" | "3y" => Ok(BillingMode::Reserved3y),
        other => {
            let names = ["on-demand", "spot", "reserved-1y", "reserved-3y"];
            let near = gpuplan_model::did_you_mean(other, names)
                .map_or(String::new(), |near| format!(" (did you mean `{near}`?)"));
            Err(
                RequestError::invalid(Field::Billing, "", format!("unknown billing mode `{other}`{near}"))
                    .with_hint("use on-demand, spot, reserved-1y or reserved-3y")
                    .into(),
            )
        }
    }
}

impl WorkloadOptions {
    fn task(&self) -> Result<Task, Error> {
        for (field, value) in [(Field::Model, &self.model), (Field::Task, &self.task)] {
            if value.trim().is_empty() {
                return Err(RequestError::missing(field, "to say what is run")
                    .with_hint("give {model} and {task} (or {workload} tabular with {rows} and {features})")
                    .into());
            }
        }
        parse_one(Field::Task, &self.task)
    }

    fn model_source(&self) -> ModelSource {
        crate::model_request::model_source(&self.model, self.model_config.as_ref(), self.checkpoint_index.as_ref())
    }

    fn packing(&self) -> SequencePacking {
        self.mean_seq
            .map_or(SequencePacking::Packed, |mean_tokens| SequencePacking::Padded {
                mean_tokens,
            })
    }

    fn image(&self) -> ImageSettings {
        ImageSettings {
            resolution: self.resolution,
            denoising_steps: self.steps,
            guidance: self.no_guidance.then_some(false),
        }
    }
}

/// Sets the workload fields `estimate` and `plan` share on `$target` (a `WorkloadRequest` or a
/// `PlanQuery`, whose fields carry the same names), every name parsed here, once.
macro_rules! fill_workload {
    ($target:ident, $w:expr) => {{
        let w: &WorkloadOptions = $w;
        $target.batch = w.batch;
        $target.micro_batch = w.micro_batch;
        $target.seq = w.seq;
        $target.output_tokens = w.output_tokens;
        $target.checkpointing = parse(Field::Checkpointing, &w.checkpointing)?;
        let (recipe, builds) = crate::software_fit::split_framework(&w.framework)?;
        $target.framework = recipe;
        $target.framework_builds = builds;
        $target.offload = parse(Field::Offload, &w.offload)?;
        $target.packing = w.packing();
        $target.compiled = w.compile;
        $target.kv_cache = parse(Field::KvCacheDtype, &w.kv_cache_dtype)?;
        $target.optimizer = parse(Field::Optimizer, &w.optimizer)?;
        $target.optimizer_in_backward = w.optimizer_in_backward;
        $target.lora_rank = w.lora_rank;
        $target.lora_targets = parse(Field::LoraTargets, &w.lora_targets)?;
        let (engine, release) = crate::engine_knobs::split_release(&w.engine)?;
        $target.engine = parse(Field::Engine, &engine)?;
        $target.engine_settings.release = release;
        $target.image = w.image();
        $target.tokens = amount(Field::Tokens, w.tokens)?;
        $target.epochs = amount(Field::Epochs, w.epochs)?;
        $target.dataset_size = amount(Field::DatasetSize, w.dataset_size)?;
        $target.memory_margin = w.memory_margin;
        if let Some(calibration) = &w.calibration {
            calibration.check().map_err(|e| {
                Error::from(
                    RequestError::invalid(Field::Calibration, "", e.to_string())
                        .with_hint("measure again with `gpuplan probe`"),
                )
            })?;
        }
        $target.calibration = w.calibration.clone();
    }};
}

impl EstimateOptions {
    /// Refuses fields no option claims (before anything else is looked at).
    pub fn check_fields(&self) -> Result<(), Error> {
        refuse_unknown(&self.unknown)
    }

    /// The facade's request, every name parsed.
    pub fn request(&self) -> Result<WorkloadRequest, Error> {
        self.check_fields()?;
        let w = &self.workload;
        let mut request = WorkloadRequest::new(w.model_source(), w.task()?, &self.gpu);
        request.gpus = self.gpus;
        request.gpus_per_node = self.gpus_per_node;
        let (precision, kernel) = self
            .precision
            .as_deref()
            .map(crate::precision_kernel::parse)
            .transpose()?
            .unzip();
        request.precision = precision;
        request.weight_kernel = kernel.flatten();
        fill_workload!(request, w);
        crate::precision_kernel::check_task(request.weight_kernel, request.task)?;
        request.tp = self.tp;
        request.pp = self.pp;
        request.cp = self.cp;
        request.ep = self.ep;
        request.vp = self.vp;
        request.attention_dp = self.attention_dp;
        request.ep_overlap = self.ep_overlap;
        request.zero = self.zero;
        request.flash_attention = self.flash_attention;
        self.knobs.check_task(request.task)?;
        request.engine_settings = self.knobs.settings(request.engine, request.engine_settings.release)?;
        request.serving = ServingQuestion {
            qps: w.qps,
            concurrency: self.knobs.concurrency,
            ttft: w.ttft,
            tpot: w.tpot,
            requests: w.requests.clone(),
            prefix_cache_hit: w.prefix_cache_hit,
        };
        Ok(request)
    }
}

impl PlanOptions {
    /// Refuses fields no option claims (before anything else is looked at).
    pub fn check_fields(&self) -> Result<(), Error> {
        refuse_unknown(&self.unknown)
    }

    /// The tabular question, when `workload` is `tabular`; `None` for a model and task.
    pub fn tabular_query(&self) -> Result<Option<crate::TabularQuery>, Error> {
        self.check_fields()?;
        match self.kind.as_deref() {
            None => {
                let given = [
                    (Field::Rows, self.rows.is_some()),
                    (Field::Features, self.features.is_some()),
                    (Field::Rounds, self.rounds.is_some()),
                ];
                match given.into_iter().find(|(_, given)| *given) {
                    Some((field, _)) => Err(RequestError::not_applicable(field, "{workload} tabular")
                        .with_hint("add {workload} tabular, or drop it")
                        .into()),
                    None => Ok(None),
                }
            }
            Some("tabular") => self.tabular().map(Some),
            Some(other) => Err(
                RequestError::invalid(Field::Workload, other, "the one workload kind is `tabular`")
                    .with_hint("drop {workload} to plan a model and task")
                    .into(),
            ),
        }
    }

    fn tabular(&self) -> Result<crate::TabularQuery, Error> {
        let w = &self.workload;
        for (field, given) in [(Field::Model, !w.model.is_empty()), (Field::Task, !w.task.is_empty())] {
            if given {
                return Err(
                    RequestError::not_applicable(field, "a model and task, not {workload} tabular")
                        .with_hint("drop it; a tabular job is described by {rows} and {features}")
                        .into(),
                );
            }
        }
        let model_only = [
            (Field::Precision, !self.precision.is_empty()),
            (Field::Gpu, !self.gpu.is_empty()),
            (Field::ExcludeGpu, !self.exclude_gpu.is_empty()),
            (Field::MaxGpus, self.max_gpus.is_some()),
            (Field::MaxNodes, self.max_nodes.is_some()),
            (Field::MinVcpusPerGpu, self.min_vcpus_per_gpu.is_some()),
            (Field::MinHostMemoryPerGpu, self.min_host_memory_per_gpu.is_some()),
            (Field::MinVcpus, self.min_vcpus.is_some()),
            (Field::MinMemory, self.min_memory.is_some()),
            (Field::MinDisk, self.min_disk.is_some()),
            (Field::ComputeCapability, self.compute_capability.is_some()),
            (Field::Family, !self.family.is_empty()),
            (Field::Sla, self.sla.is_some()),
            (Field::Compliance, !self.compliance.is_empty()),
            (Field::Countries, !self.countries.is_empty()),
            (Field::PeakQps, self.peak_qps.is_some()),
            (Field::Headroom, self.headroom.is_some()),
            (Field::Tolerance, self.tolerance.is_some()),
            (Field::MaxHourlyPrice, self.max_hourly_price.is_some()),
            (Field::Batch, w.batch.is_some()),
            (Field::Seq, w.seq.is_some()),
            (Field::Tokens, w.tokens.is_some()),
            (Field::Epochs, w.epochs.is_some()),
            (Field::DatasetSize, w.dataset_size.is_some()),
            (Field::Qps, w.qps.is_some()),
            (Field::Engine, w.engine.is_some()),
        ];
        if let Some((field, _)) = model_only.into_iter().find(|(_, given)| *given) {
            return Err(
                RequestError::not_applicable(field, "a model and task, not {workload} tabular")
                    .with_hint("drop it; a tabular job is sized by {rows}, {features} and {rounds}")
                    .into(),
            );
        }
        let (Some(rows), Some(features)) = (self.rows, self.features) else {
            return Err(
                RequestError::unsuitable(Field::Workload, "tabular", "needs {rows} and {features}")
                    .with_hint("e.g. {workload} tabular {rows} 5e6 {features} 200")
                    .into(),
            );
        };
        Ok(crate::TabularQuery {
            rows,
            features,
            rounds: self.rounds,
            providers: self.providers.clone(),
            regions: self.regions.clone(),
            billing: billing_modes(&self.billing, self.spot)?,
            deadline_hours: positive(Field::Deadline, self.deadline)?,
            budget_usd: positive(Field::Budget, self.budget)?,
            by_time: self.objective == "time",
        })
    }

    /// The facade's query, every name parsed.
    pub fn query(&self) -> Result<PlanQuery, Error> {
        self.check_fields()?;
        if self.kind.is_some() {
            return Err(RequestError::not_applicable(Field::Workload, "the tabular question")
                .with_hint("ask `tabular_query` for it")
                .into());
        }
        let w = &self.workload;
        let mut query = PlanQuery::new(w.model_source(), w.task()?);
        let parsed: Vec<_> = self
            .precision
            .iter()
            .map(|p| crate::precision_kernel::parse(p))
            .collect::<Result<_, _>>()?;
        query.precisions = parsed.iter().map(|(p, _)| *p).collect();
        let mut kernels: Vec<_> = parsed.iter().filter_map(|(_, k)| *k).collect();
        kernels.dedup();
        if kernels.len() > 1 {
            return Err(
                RequestError::invalid(Field::Precision, "", "names more than one weight kernel")
                    .with_hint("name the kernel once, on the precision it runs (int4:marlin)")
                    .into(),
            );
        }
        query.weight_kernel = kernels.first().copied();
        fill_workload!(query, w);
        crate::precision_kernel::check_task(query.weight_kernel, query.task)?;
        query.deadline_hours = positive(Field::Deadline, self.deadline)?;
        query.budget_usd = self.budget;
        query.max_hourly_usd = self.max_hourly_price;
        query.serving = ServingTargets {
            qps: w.qps,
            peak_qps: self.peak_qps,
            ttft: w.ttft,
            tpot: w.tpot,
            requests: w.requests.clone(),
            headroom: self.headroom,
            concurrency: self.knobs.concurrency,
        };
        self.knobs.check_task(query.task)?;
        query.engine_settings = self.knobs.settings(query.engine, query.engine_settings.release)?;
        query.prefix_cache_hit = w.prefix_cache_hit;
        query.providers = self.providers.clone();
        query.regions = self.regions.clone();
        query.families = self.family.clone();
        query.provider_scope = crate::provider_scope::ProviderScope {
            sla: self.sla,
            compliance: self.compliance.clone(),
            countries: self.countries.clone(),
        };
        query.gpus = self.gpu.clone();
        query.exclude_gpus = self.exclude_gpu.clone();
        query.cuda = self.cuda.clone();
        query.billing = self.billing_modes()?;
        query.max_gpus = self.max_gpus;
        query.max_nodes = self.max_nodes;
        query.min_vcpus_per_gpu = self.min_vcpus_per_gpu;
        query.min_host_memory_gib_per_gpu = self.min_host_memory_per_gpu;
        query.min_vcpus = self.min_vcpus;
        query.min_memory_gib = self.min_memory;
        query.min_local_disk_gb = self.min_disk;
        query.compute_capability = self.compute_capability.clone();
        query.objective = self.objective()?;
        query.top = self.top;
        query.tolerance = self.tolerance;
        query.operational = self.operational()?;
        Ok(query)
    }

    /// The billing modes asked, spot added by `spot`.
    pub fn billing_modes(&self) -> Result<Vec<BillingMode>, Error> {
        billing_modes(&self.billing, self.spot)
    }

    fn objective(&self) -> Result<Objective, Error> {
        match self.objective.as_str() {
            "cost" => Ok(Objective::Cost),
            "time" => Ok(Objective::Time),
            "balanced" => Ok(Objective::Balanced),
            other => Err(
                RequestError::invalid(Field::Objective, "", format!("unknown objective `{other}`"))
                    .with_hint("use cost, time or balanced")
                    .into(),
            ),
        }
    }

    fn operational(&self) -> Result<Operational, Error> {
        let stacks = self
            .stack
            .iter()
            .map(|s| parse_one::<SoftwareStack, _>(Field::Stack, s))
            .collect::<Result<_, _>>()?;
        Ok(Operational {
            startup: StartupOverrides {
                provision_seconds: non_negative(Field::ProvisionTime, self.provision_time)?,
                image_gb: non_negative(Field::ImageSize, self.image_size)?,
                storage_gbps: positive(Field::StorageGbps, self.storage_gbps)?,
                checkpoint_interval_hours: positive(Field::CheckpointEvery, self.checkpoint_every)?,
                dataset_bytes: None,
            },
            interruption_rate: self.interruption_rate,
            utilisation: self.utilisation,
            trust_prices: self.trust_prices,
            stacks,
            batch_requests: None,
            input: InputSettings {
                pipeline: self.input_pipeline.clone(),
                stream_dataset: self.stream_dataset,
                image_bytes: None,
            },
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_json_body_names_the_flags() {
        let body = r#"{"model": "llama-3.1-8b", "task": "lora", "tokens": 5e8, "kv_cache_dtype": null,
                      "billing": ["on-demand", "spot"], "objective": "time"}"#;
        let options: PlanOptions = serde_json::from_str(body).unwrap();
        let query = options.query().unwrap();
        assert_eq!(query.tokens, Some(5e8));
        assert_eq!(query.billing, vec![BillingMode::OnDemand, BillingMode::Spot]);
        assert_eq!(query.objective, Objective::Time);
    }

    #[test]
    fn unknown_fields_and_names_are_refused_by_flag() {
        let typo: PlanOptions = serde_json::from_str(r#"{"model": "x", "task": "lora", "tokenz": 1}"#).unwrap();
        assert_eq!(typo.query().unwrap_err().to_string(), "unknown field `tokenz`");
        let options: EstimateOptions =
            serde_json::from_str(r#"{"model": "llama-3.1-8b", "task": "lora", "gpu": "H100", "framework": "keras"}"#)
                .unwrap();
        // A framework name is checked against the catalog's compatibility data when the
        // request is resolved.
        let catalog = crate::Catalog::embedded().unwrap();
        let error = crate::estimate_workload(&catalog, &options.request().unwrap()).unwrap_err();
        assert!(error.to_string().starts_with("--framework: "), "{error}");
    }
}

#[cfg(test)]
mod field_reach {
    use super::*;

    /// The property names of a request type's schema, its own and those it flattens in.
    fn properties<T: utoipa::PartialSchema>() -> Vec<String> {
        let schema = serde_json::to_value(T::schema()).unwrap();
        let mut names = Vec::new();
        let parts = schema["allOf"]
            .as_array()
            .cloned()
            .unwrap_or_else(|| vec![schema.clone()]);
        for part in parts.iter().chain([&schema]) {
            if let Some(map) = part["properties"].as_object() {
                names.extend(map.keys().cloned());
            }
        }
        names
    }

    /// Every field is a key of some API request, and a plan's are keys of job files too;
    /// every key of those requests is a field (a knob cannot be added without being declared
    /// here).
    #[test]
    fn every_field_is_reachable_from_the_api_and_job_files() {
        use super::{EstimateOptions, PlanOptions, WorkloadOptions};
        use crate::{CostOptions, EnergyOptions, EngineKnobs, InstancesOptions};
        let api: Vec<String> = [
            properties::<WorkloadOptions>(),
            properties::<EngineKnobs>(),
            properties::<EstimateOptions>(),
            properties::<PlanOptions>(),
            properties::<CostOptions>(),
            properties::<EnergyOptions>(),
            properties::<InstancesOptions>(),
        ]
        .concat();
        let plan: Vec<String> = [
            properties::<WorkloadOptions>(),
            properties::<EngineKnobs>(),
            properties::<PlanOptions>(),
        ]
        .concat();
        let job_file = crate::option_names();
        for field in Field::ALL {
            let key = field.key().to_string();
            assert!(api.contains(&key), "{key}: no API request has it");
            if plan.contains(&key) {
                assert!(job_file.contains(&key), "{key}: a plan field job files refuse");
            }
        }
        for key in api.iter().chain(&job_file) {
            let aliased = FIELD_ALIASES.iter().any(|(alias, _)| alias == key);
            assert!(
                aliased || Field::ALL.iter().any(|f| f.key() == key),
                "`{key}` is a request key no Field declares"
            );
        }
    }
}

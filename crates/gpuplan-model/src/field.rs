//! Every knob of a request, named once. The command line spells a field as a flag
//! (`--lora-rank`), job files and the HTTP API as a key (`lora_rank`); both spellings come from
//! the one name here, so a message about a field can be written once and rendered in the words
//! of whichever front end asked.

use std::fmt;

/// How a front end names fields in what it prints.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Naming {
    /// Command-line flags: `--lora-rank`.
    Flags,
    /// JSON/YAML keys of job files and the HTTP API: `` `lora_rank` ``.
    Keys,
}

/// Where a front end takes a field from, where it is not a flag or key of the same name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Spelling {
    /// `--flag` on the command line, `key` in a job file and the API.
    Same,
    /// Only a key: the command line reads the value from a file another flag names
    /// (`model_config` from the path given as `--model`).
    KeyOnly { cli: &'static str },
    /// Only a flag naming a file: the value is data read from that file on the command line;
    /// job files and the API carry the data itself under the key (`requests`).
    FlagReadsFile,
}

macro_rules! fields {
    ($( $variant:ident = $key:literal $(, $spelling:expr)? ; )*) => {
        /// One knob of an `estimate`, `plan`, `cost`, `energy` or `instances` request.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub enum Field { $( $variant, )* }

        impl Field {
            /// Every field, in the order the requests declare them.
            pub const ALL: &'static [Field] = &[ $( Field::$variant, )* ];

            /// The key in a job file or an API body (`lora_rank`).
            pub const fn key(self) -> &'static str {
                match self { $( Field::$variant => $key, )* }
            }

            /// How the command line spells it, where that is not `--` and the key in kebab case.
            pub const fn spelling(self) -> Spelling {
                match self {
                    $( Field::$variant => fields!(@spelling $($spelling)?), )*
                }
            }
        }
    };
    (@spelling) => { Spelling::Same };
    (@spelling $spelling:expr) => { $spelling };
}

fields! {
    // The workload, shared by estimate and plan.
    Model = "model";
    ModelConfig = "model_config", Spelling::KeyOnly { cli: "--model PATH (a config.json)" };
    CheckpointIndex = "checkpoint_index", Spelling::KeyOnly { cli: "--model ORG/NAME (its model.safetensors.index.json)" };
    Task = "task";
    Batch = "batch";
    MicroBatch = "micro_batch";
    Seq = "seq";
    OutputTokens = "output_tokens";
    Checkpointing = "checkpointing";
    Framework = "framework";
    Offload = "offload";
    Compile = "compile";
    MeanSeq = "mean_seq";
    KvCacheDtype = "kv_cache_dtype";
    Optimizer = "optimizer";
    OptimizerInBackward = "optimizer_in_backward";
    LoraRank = "lora_rank";
    LoraTargets = "lora_targets";
    Engine = "engine";
    Resolution = "resolution";
    Steps = "steps";
    NoGuidance = "no_guidance";
    Tokens = "tokens";
    Epochs = "epochs";
    DatasetSize = "dataset_size";
    MemoryMargin = "memory_margin";
    Qps = "qps";
    Ttft = "ttft";
    Tpot = "tpot";
    PrefixCacheHit = "prefix_cache_hit";
    Requests = "requests", Spelling::FlagReadsFile;
    Calibration = "calibration", Spelling::FlagReadsFile;
    // The serving engine's scheduler knobs and a closed-loop load.
    MaxNumSeqs = "max_num_seqs";
    MaxNumBatchedTokens = "max_num_batched_tokens";
    SchedulerSteps = "scheduler_steps";
    ChunkedPrefill = "chunked_prefill";
    ReserveFullContext = "reserve_full_context";
    EngineBackend = "engine_backend";
    Sampling = "sampling";
    EnforceEager = "enforce_eager";
    PiecewiseCudaGraphs = "piecewise_cuda_graphs";
    GpuMemoryFraction = "gpu_memory_fraction";
    GpuLayers = "gpu_layers";
    HostBandwidth = "host_bandwidth";
    Concurrency = "concurrency";
    // One GPU type (estimate).
    Gpu = "gpu";
    Gpus = "gpus";
    GpusPerNode = "gpus_per_node";
    Precision = "precision";
    Tp = "tp";
    Pp = "pp";
    Cp = "cp";
    Ep = "ep";
    Vp = "vp";
    AttentionDp = "attention_dp";
    EpOverlap = "ep_overlap";
    Zero = "zero";
    FlashAttention = "flash_attention";
    // The search (plan).
    Deadline = "deadline";
    Budget = "budget";
    MaxHourlyPrice = "max_hourly_price";
    PeakQps = "peak_qps";
    Headroom = "headroom";
    Tolerance = "tolerance";
    Providers = "providers";
    Regions = "regions";
    ExcludeGpu = "exclude_gpu";
    Billing = "billing";
    Spot = "spot";
    MaxGpus = "max_gpus";
    MaxNodes = "max_nodes";
    MinVcpusPerGpu = "min_vcpus_per_gpu";
    MinHostMemoryPerGpu = "min_host_memory_per_gpu";
    Objective = "objective";
    Top = "top";
    Stack = "stack";
    TrustPrices = "trust_prices";
    Utilisation = "utilisation";
    InterruptionRate = "interruption_rate";
    ProvisionTime = "provision_time";
    ImageSize = "image_size";
    StorageGbps = "storage_gbps";
    InputPipeline = "input_pipeline";
    StreamDataset = "stream_dataset";
    CheckpointEvery = "checkpoint_every";
    Cuda = "cuda";
    // Tabular training (plan --workload tabular).
    Workload = "workload";
    Rows = "rows";
    Features = "features";
    Rounds = "rounds";
    // A job's bill (cost) and its energy (energy).
    Instance = "instance";
    Price = "price";
    SpotPrice = "spot_price";
    Hours = "hours";
    CheckpointMinutes = "checkpoint_minutes";
    CheckpointWrite = "checkpoint_write";
    Restart = "restart";
    MonteCarlo = "monte_carlo";
    Seed = "seed";
    StorageGb = "storage_gb";
    StorageMonths = "storage_months";
    EgressGb = "egress_gb";
    Tiers = "tiers";
    SavingsPlan = "savings_plan";
    SavingsDiscount = "savings_discount";
    MinimumHours = "minimum_hours";
    Pue = "pue";
    PriceKwh = "price_kwh";
    HostOverhead = "host_overhead";
    PurchasePrice = "purchase_price";
    DepreciationYears = "depreciation_years";
    RentPrice = "rent_price";
    // Which offerings to list (instances).
    Family = "family";
    Sla = "sla";
    Compliance = "compliance";
    Countries = "countries";
    MinGpus = "min_gpus";
    MinGpuMemory = "min_gpu_memory";
    MinVcpus = "min_vcpus";
    MinMemory = "min_memory";
    MinDisk = "min_disk";
    ComputeCapability = "compute_capability";
    MaxPrice = "max_price";
    IncludeCpu = "include_cpu";
    Zones = "zones";
    Sort = "sort";
    Offset = "offset";
    Limit = "limit";
}

impl Field {
    /// The command-line flag (`--lora-rank`); for a key-only field, what the command line
    /// takes instead.
    pub fn flag(self) -> String {
        match self.spelling() {
            Spelling::KeyOnly { cli } => cli.to_string(),
            Spelling::Same | Spelling::FlagReadsFile => format!("--{}", self.key().replace('_', "-")),
        }
    }

    /// The field by its key, or by its flag without the dashes (`lora-rank`).
    pub fn from_key(key: &str) -> Option<Field> {
        let key = key.trim_start_matches("--").replace('-', "_");
        Field::ALL.iter().copied().find(|f| f.key() == key)
    }

    /// The field as `naming` writes it in a message.
    pub fn named(self, naming: Naming) -> String {
        match naming {
            Naming::Flags => self.flag(),
            Naming::Keys => format!("`{}`", self.key()),
        }
    }
}

impl fmt::Display for Field {
    /// The command line's spelling; front ends that name keys render through [`Field::named`].
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.flag())
    }
}

/// Text that mentions fields as `{key}` (`"give {dataset_size} with {deadline}"`), rendered in
/// the front end's own words: `--dataset-size` on the command line, `` `dataset_size` `` in an
/// API answer. Braces around anything that is not a field's key are kept as written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Phrase(String);

impl Phrase {
    pub fn new(text: impl Into<String>) -> Self {
        Phrase(text.into())
    }

    /// The text with each `{key}` written as `naming` names that field.
    pub fn render(&self, naming: Naming) -> String {
        let mut out = String::with_capacity(self.0.len() + 16);
        let mut rest = self.0.as_str();
        while let Some(open) = rest.find('{') {
            out.push_str(&rest[..open]);
            let after = &rest[open + 1..];
            let field = after.find('}').and_then(|close| {
                Field::ALL
                    .iter()
                    .find(|f| f.key() == &after[..close])
                    .map(|f| (f, close))
            });
            match field {
                Some((field, close)) => {
                    out.push_str(&field.named(naming));
                    rest = &after[close + 1..];
                }
                None => {
                    out.push('{');
                    rest = after;
                }
            }
        }
        out.push_str(rest);
        out
    }
}

impl From<&str> for Phrase {
    fn from(text: &str) -> Self {
        Phrase::new(text)
    }
}

impl From<String> for Phrase {
    fn from(text: String) -> Self {
        Phrase::new(text)
    }
}

/// A field the request left open, the value chosen for it and why: what an answer's
/// `defaults` lists, so that a reader sees every choice made on their behalf and which knob
/// changes it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Defaulted {
    pub field: Field,
    /// The value chosen, as the request would write it (`2048`, `bf16`, `none`).
    pub value: String,
    /// Why this value: its source or the rule that picked it.
    pub why: String,
}

impl Defaulted {
    pub fn new(field: Field, value: impl fmt::Display, why: impl Into<String>) -> Self {
        Defaulted {
            field,
            value: value.to_string(),
            why: why.into(),
        }
    }

    /// One line in a front end's words: `--seq 2048 (why)` on the command line,
    /// `` `seq` = 2048 (why) `` in an API answer.
    pub fn render(&self, naming: Naming) -> String {
        let field = self.field.named(naming);
        let set = match naming {
            Naming::Flags => format!("{field} {}", self.value),
            Naming::Keys => format!("{field} = {}", self.value),
        };
        if self.why.is_empty() {
            set
        } else {
            format!("{set} ({})", self.why)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_are_unique_snake_case_and_flags_follow_them() {
        let mut keys: Vec<&str> = Field::ALL.iter().map(|f| f.key()).collect();
        keys.sort_unstable();
        keys.dedup();
        assert_eq!(keys.len(), Field::ALL.len(), "a key named twice");
        assert!(
            keys.iter()
                .all(|k| k.chars().all(|c| c.is_ascii_lowercase() || c == '_'))
        );
        assert_eq!(Field::LoraRank.flag(), "--lora-rank");
        assert_eq!(Field::from_key("lora-rank"), Some(Field::LoraRank));
        assert_eq!(Field::from_key("--max-num-seqs"), Some(Field::MaxNumSeqs));
        assert_eq!(Field::from_key("lora"), None);
    }

    #[test]
    fn a_phrase_names_fields_in_each_front_ends_words() {
        let phrase = Phrase::new("give {dataset_size} with {deadline}, or {qps} for serving ({not_a_field})");
        assert_eq!(
            phrase.render(Naming::Flags),
            "give --dataset-size with --deadline, or --qps for serving ({not_a_field})"
        );
        assert_eq!(
            phrase.render(Naming::Keys),
            "give `dataset_size` with `deadline`, or `qps` for serving ({not_a_field})"
        );
        assert_eq!(Phrase::new("{").render(Naming::Keys), "{");
    }

    #[test]
    fn a_default_names_its_field_in_each_front_ends_words() {
        let chosen = Defaulted::new(Field::Seq, 2048, "capped by the model's context");
        assert_eq!(
            chosen.render(Naming::Flags),
            "--seq 2048 (capped by the model's context)"
        );
        assert_eq!(
            chosen.render(Naming::Keys),
            "`seq` = 2048 (capped by the model's context)"
        );
    }
}

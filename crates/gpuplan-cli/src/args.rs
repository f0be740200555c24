//! The command-line grammar. Doc comments here are the `--help` text.

use clap::{Args, Parser, Subcommand, ValueEnum};
use gpuplan::emit::OutputFormat;
use gpuplan::model::LatencyTarget;
use std::path::PathBuf;

/// Which cloud GPU server to rent for an ML job, how many, and at what cost.
///
/// gpuplan answers from a built-in catalog of accelerators and cloud offerings in which
/// every number carries its source and the date it was read.
#[derive(Debug, Parser)]
#[command(name = "gpuplan", version, max_term_width = 100)]
pub struct Cli {
    /// Output format.
    #[arg(long, global = true, value_enum, default_value_t = Format::Table)]
    pub format: Format,

    /// Read the catalog from this folder (same layout as the built-in one: catalog.toml,
    /// accelerators/*.toml, offerings/*.csv) instead of the built-in catalog.
    #[arg(long, global = true, env = "GPUPLAN_CATALOG", value_name = "DIR")]
    pub catalog: Option<PathBuf>,

    /// The prices you pay, over the list prices: a TOML or CSV file of instance prices and
    /// per-provider discounts (see docs/sources.md, "Your prices").
    #[arg(long, global = true, env = "GPUPLAN_PRICES", value_name = "FILE")]
    pub prices: Option<PathBuf>,

    /// Show amounts in this currency (USD, or one the catalog has an exchange rate for, such
    /// as CNY). Tables and text convert at the catalog's cited rate; JSON stays in USD.
    #[arg(long, global = true, default_value = "USD", value_name = "CODE")]
    pub currency: String,

    #[command(subcommand)]
    pub command: Command,
}

impl Cli {
    pub fn output_format(&self) -> OutputFormat {
        self.format.into()
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Format {
    /// A table for people.
    Table,
    /// The documented JSON wire format (docs/json.md).
    Json,
    Csv,
    Markdown,
}

impl From<Format> for OutputFormat {
    fn from(format: Format) -> Self {
        match format {
            Format::Table => OutputFormat::Table,
            Format::Json => OutputFormat::Json,
            Format::Csv => OutputFormat::Csv,
            Format::Markdown => OutputFormat::Markdown,
        }
    }
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// List accelerators with their specifications, or show one with its sources.
    Gpus(GpusArgs),
    /// List cloud offerings: who rents a GPU, in which shape, at what price.
    Instances(InstancesArgs),
    /// Show what the catalog holds, per provider, with as-of dates.
    Catalog(CatalogArgs),
    /// List the built-in models with their parameter counts.
    Models,
    /// Estimate memory per GPU and speed of a workload on a GPU type.
    Estimate(Box<EstimateArgs>),
    /// Find the best cloud GPU configurations for a workload: offering, GPU count, layout,
    /// billing mode, with reasons.
    Plan(Box<PlanArgs>),
    /// What renting costs under each billing mode, with spot interruptions, storage and egress.
    Cost(Box<CostArgs>),
    /// Electricity of running GPUs, and renting against buying.
    Energy(EnergyArgs),
    /// Forecast GPU usage from its history and size a reserved commitment.
    Forecast(ForecastArgs),
    /// Serve the JSON API (gpus, instances, models, catalog, estimate, plan, cost, energy,
    /// forecast) and the page over HTTP, with health,
    /// readiness and Prometheus metrics, until SIGTERM or Ctrl-C.
    Serve(ServeArgs),
    /// Write a commented example job file for `gpuplan plan -f`, and its JSON Schema beside it.
    Init(InitArgs),
    /// Write deployment files (Kubernetes, SkyPilot, SkyServe) for a saved plan.
    Export(Box<ExportArgs>),
    /// What changed between two saved plans: the choice, cost, time, memory and assumptions.
    Diff(DiffArgs),
    /// Right-size GPUs from telemetry (nvidia-smi logs, DCGM scrapes): what each GPU and job
    /// used, what to change, and what it saves a month.
    Rightsize(RightsizeArgs),
    /// Read this machine's NVIDIA GPUs through the driver (NVML) and compare them with the
    /// catalog; measure GEMM, memory and all-reduce rates (CUDA) against published figures for a
    /// calibration the estimates apply; or run a proof of concept of a model (--poc).
    Probe(ProbeArgs),
    /// Will a GPU, driver, CUDA release and framework build run together? OK, or what breaks
    /// and the fix, with sources; and what the GPU's compute capability supports.
    Compat(CompatArgs),
    /// Print a shell completion script for gpuplan: `gpuplan completions bash >
    /// /etc/bash_completion.d/gpuplan`, or `source <(gpuplan completions zsh)`.
    Completions(CompletionsArgs),
    /// Write gpuplan's manual pages (roff): the main page on standard output, or a page for
    /// every command into a folder (`gpuplan man --out /usr/local/share/man/man1`).
    Man(ManArgs),
}

#[derive(Debug, Args)]
pub struct CompletionsArgs {
    /// The shell to complete in.
    #[arg(value_enum)]
    pub shell: clap_complete::Shell,
}

#[derive(Debug, Args)]
pub struct ManArgs {
    /// Write `gpuplan.1` and one `gpuplan-COMMAND.1` per command into this folder (created if
    /// missing) instead of printing the main page.
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
}

#[derive(Debug, Args)]
pub struct ServeArgs {
    /// Address to listen on; 127.0.0.1 keeps it on this machine (use 0.0.0.0:8080 in a
    /// container).
    #[arg(long, default_value = "127.0.0.1:8080")]
    pub addr: std::net::SocketAddr,

    /// Web origins whose pages may call the API from a browser (CORS), comma-separated
    /// (`https://tools.example.com`), or `*` for any; by default only the page the server
    /// serves itself.
    #[arg(long, value_delimiter = ',', value_name = "ORIGIN")]
    pub cors_origin: Vec<String>,
}

#[derive(Debug, Args)]
#[command(allow_negative_numbers = true)]
pub struct CatalogArgs {
    /// List the prices that failed the load-time checks (spot under 10 % of on-demand, one
    /// price copied across every region); plans leave them out unless --trust-prices.
    #[arg(long)]
    pub check: bool,

    /// What this provider publishes beyond prices: its uptime SLA and credits, status page,
    /// compliance programmes, the countries of its regions, what data costs and takes between
    /// its regions, and its dedicated interconnect, each with its source.
    #[arg(long, value_name = "NAME", conflicts_with = "check")]
    pub provider: Option<String>,

    #[command(subcommand)]
    pub action: Option<CatalogAction>,
}

#[derive(Debug, Subcommand)]
pub enum CatalogAction {
    /// Fetch current prices from the providers' public price endpoints (AWS's Price List Bulk
    /// API, Azure's Retail Prices API, GCP's Cloud Billing Catalog API, Lambda's instance-types
    /// API) and write a refreshed catalog to the cache folder; the built-in catalog stays the
    /// default (use the refreshed one with --catalog or GPUPLAN_CATALOG).
    Refresh(RefreshArgs),
}

#[derive(Debug, Args)]
pub struct RefreshArgs {
    /// Providers to refresh: aws (the Price List Bulk API's EC2 offer files: on-demand Linux
    /// prices), azure (the Retail Prices API: on-demand and spot) and gcp (the Cloud Billing
    /// Catalog API, which needs --gcp-api-key: machine and GPU rates, on-demand and spot) and
    /// lambda (its Cloud API, which needs --lambda-api-key: on-demand, the same in every region).
    #[arg(long, value_delimiter = ',', default_value = "aws,azure")]
    pub provider: Vec<String>,

    /// API key for GCP's Cloud Billing Catalog API (a project with the Cloud Billing API
    /// enabled); never printed.
    #[arg(long, env = "GPUPLAN_GCP_API_KEY", hide_env_values = true, value_name = "KEY")]
    pub gcp_api_key: Option<String>,

    /// API key for Lambda's Cloud API (sent as a bearer token); never printed.
    #[arg(long, env = "GPUPLAN_LAMBDA_API_KEY", hide_env_values = true, value_name = "KEY")]
    pub lambda_api_key: Option<String>,

    /// Read recorded responses (*.json, in name order) from this folder instead of the network:
    /// Azure pages, or one EC2 offer file per region; with several providers, from a folder
    /// named after each.
    #[arg(long, value_name = "DIR")]
    pub from: Option<PathBuf>,

    /// Write the refreshed catalog here (default: $XDG_CACHE_HOME/gpuplan/catalog, else
    /// ~/.cache/gpuplan/catalog). The folder is replaced whole, never half-written.
    #[arg(long, value_name = "DIR")]
    pub into: Option<PathBuf>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum PeriodArg {
    Hour,
    Day,
    Week,
    Month,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum UnitArg {
    /// GPU-hours used per period.
    GpuHours,
    /// GPUs in use on average per period.
    Gpus,
}

#[derive(Debug, Args)]
#[command(allow_negative_numbers = true)]
pub struct ForecastArgs {
    /// Usage history: CSV with `timestamp` and `value` columns (or `.json`: [{timestamp, value}]).
    #[arg(long)]
    pub history: std::path::PathBuf,

    /// Periods to forecast.
    #[arg(long, default_value_t = 12)]
    pub horizon: usize,

    /// Column holding the values.
    #[arg(long, default_value = "value")]
    pub value_column: String,

    /// Only rows whose `gpu` column is this.
    #[arg(long)]
    pub gpu: Option<String>,

    /// What the values count.
    #[arg(long, value_enum, default_value_t = UnitArg::GpuHours)]
    pub unit: UnitArg,

    /// Forecast per hour, day, week or month; telemetry with times of day is combined per day
    /// (GPU-hours added, GPUs in use averaged) unless another period is asked. Hourly
    /// forecasts model the daily and the weekly cycle together; --horizon counts periods.
    #[arg(long, value_enum)]
    pub period: Option<PeriodArg>,

    /// Prediction-interval level.
    #[arg(long, default_value_t = 0.9)]
    pub level: f64,

    /// On-demand price per GPU-hour (USD), to plan a commitment.
    #[arg(long)]
    pub on_demand_price: Option<f64>,

    /// Reserved price per GPU-hour (USD); else the provider's published discount.
    #[arg(long)]
    pub reserved_price: Option<f64>,

    /// Provider whose reserved discount applies.
    #[arg(long, default_value = "aws")]
    pub provider: String,

    /// Commitment term: 1y or 3y.
    #[arg(long, default_value = "1y")]
    pub term: String,

    /// Write a chart (history, forecast band, commitment) to this SVG file.
    #[arg(long)]
    pub plot: Option<std::path::PathBuf>,
}

#[derive(Debug, Args)]
#[command(allow_negative_numbers = true)]
pub struct CostArgs {
    /// An instance type from the catalog (`p3.2xlarge`); the cheapest region in scope is priced
    /// (among those that price every --billing mode asked for, where any does).
    #[arg(long)]
    pub instance: Option<String>,

    /// A GPU type; with --gpus, the cheapest offering of that shape is priced (among those that
    /// price every --billing mode asked for, where any does).
    #[arg(long)]
    pub gpu: Option<String>,

    /// GPUs per instance, with --gpu.
    #[arg(long)]
    pub gpus: Option<u32>,

    /// Only these providers (comma-separated).
    #[arg(long, alias = "provider", value_delimiter = ',')]
    pub providers: Vec<String>,

    /// Only regions starting with these prefixes.
    #[arg(long, alias = "region", value_delimiter = ',')]
    pub regions: Vec<String>,

    /// A negotiated rate per hour (USD), used as the on-demand price (or as the reserved price
    /// when no instance is named).
    #[arg(long, value_name = "USD")]
    pub price: Option<f64>,

    /// A spot rate per hour (USD) when the catalog has none.
    #[arg(long, value_name = "USD")]
    pub spot_price: Option<f64>,

    /// Hours of use.
    #[arg(long)]
    pub hours: f64,

    /// Billing modes to price: on-demand, spot, reserved-1y, reserved-3y (comma-separated).
    #[arg(long, value_delimiter = ',', default_value = "on-demand")]
    pub billing: Vec<String>,

    /// Checkpoint every this many minutes of work (spot; enables the interruption model).
    #[arg(long)]
    pub checkpoint_minutes: Option<f64>,

    /// Time to write a checkpoint (`2min`; spot).
    #[arg(long, value_parser = seconds_duration, value_name = "DURATION")]
    pub checkpoint_write: Option<f64>,

    /// Time to restart after an interruption (`8min`; spot).
    #[arg(long, value_parser = seconds_duration, value_name = "DURATION")]
    pub restart: Option<f64>,

    /// Spot interruptions per hour (default 0.05, an assumption).
    #[arg(long)]
    pub interruption_rate: Option<f64>,

    /// Also simulate this many runs and report P50/P90 (spot).
    #[arg(long)]
    pub monte_carlo: Option<u32>,

    /// Seed of the simulation.
    #[arg(long, default_value_t = 42)]
    pub seed: u64,

    /// Block storage kept for the job, GB.
    #[arg(long, default_value_t = 0.0)]
    pub storage_gb: f64,

    /// Months the storage is kept.
    #[arg(long, default_value_t = 1.0)]
    pub storage_months: f64,

    /// Data sent out to the internet, GB.
    #[arg(long, default_value_t = 0.0)]
    pub egress_gb: f64,

    /// Staged monthly prices, `FROM_HOUR:USD` pairs (`0:3.06,500:2.50`: cheaper after 500 h).
    #[arg(long, value_delimiter = ',')]
    pub tiers: Vec<gpuplan::PriceTier>,

    /// A savings-plan commitment, USD per hour.
    #[arg(long, value_name = "USD")]
    pub savings_plan: Option<f64>,

    /// The savings plan's discount (default: the provider's published 1-year discount).
    #[arg(long)]
    pub savings_discount: Option<f64>,

    /// Bill at least this many hours (a minimum commitment period).
    #[arg(long)]
    pub minimum_hours: Option<f64>,

    /// Share of a reserved term the capacity is used, 0–1 (reserved billing); without it a
    /// reserved line bills the whole term.
    #[arg(long, alias = "utilization")]
    pub utilisation: Option<f64>,
}

#[derive(Debug, Args)]
#[command(allow_negative_numbers = true)]
pub struct EnergyArgs {
    /// The GPU type (its TDP comes from the catalog).
    #[arg(long)]
    pub gpu: String,

    /// Number of GPUs.
    #[arg(long, default_value_t = 1)]
    pub gpus: u32,

    /// Hours of operation.
    #[arg(long)]
    pub hours: f64,

    /// Power usage effectiveness of the facility (≥ 1; 1.0 for no cooling or distribution).
    #[arg(long, default_value_t = 1.0)]
    pub pue: f64,

    /// The server's wall power over its GPUs' (≥ 1; default 1.8, DGX H100's maximum input
    /// over its GPUs' TDP; 1 counts the GPUs alone).
    #[arg(long)]
    pub host_overhead: Option<f64>,

    /// Average share of TDP drawn, 0–1.
    #[arg(long, alias = "utilization", default_value_t = 1.0)]
    pub utilisation: f64,

    /// Electricity price, USD per kWh.
    #[arg(long)]
    pub price_kwh: Option<f64>,

    /// Purchase price of the machine (USD), for rent-against-buy.
    #[arg(long)]
    pub purchase_price: Option<f64>,

    /// Years over which the purchase is depreciated.
    #[arg(long, default_value_t = 4.0)]
    pub depreciation_years: f64,

    /// Rental price of the same machine per hour (USD), for rent-against-buy.
    #[arg(long)]
    pub rent_price: Option<f64>,
}

/// Parses a duration: `24h`, `90m`, `3d`, `1.5h`, `200ms`, `1s`; a bare number is in
/// `default_unit` seconds (the one syntax job files and the API read too).
fn duration_in(text: &str, default_unit: f64) -> Result<f64, String> {
    gpuplan::model::duration::parse_duration(text, default_unit)
}

fn hours_duration(text: &str) -> Result<f64, String> {
    duration_in(text, 3600.0).map(|seconds| seconds / 3600.0)
}

fn seconds_duration(text: &str) -> Result<f64, String> {
    duration_in(text, 1.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Fuzz targets for the flag syntaxes (durations, counts, cost tiers, latency targets):
    /// any text yields a value or a message, never a panic, and what parses is finite and
    /// positive.
    mod fuzz {
        use super::*;
        use proptest::prelude::*;
        use proptest::test_runner::RngSeed;

        fn config() -> ProptestConfig {
            ProptestConfig {
                cases: std::env::var("PROPTEST_CASES")
                    .ok()
                    .and_then(|v| v.parse().ok())
                    .unwrap_or(256),
                rng_seed: RngSeed::Fixed(
                    std::env::var("PROPTEST_RNG_SEED")
                        .ok()
                        .and_then(|v| v.parse().ok())
                        .unwrap_or(0x6770_7570),
                ),
                ..ProptestConfig::default()
            }
        }

        proptest! {
            #![proptest_config(config())]

            #[test]
            fn flag_values_parse_or_are_refused(text in "[-+0-9eE.:,pP hmsdwinfatyHMS]{0,24}|\\PC{0,40}") {
                let parsed = [hours_duration(&text), seconds_duration(&text), count(&text)];
                for value in parsed.into_iter().flatten() {
                    prop_assert!(value.is_finite() && value > 0.0, "{text} → {value}");
                }
                if let Ok(tier) = text.parse::<gpuplan::PriceTier>() {
                    prop_assert!(tier.from_hour.is_finite() && tier.usd_per_hour.is_finite(), "{text}");
                }
                if let Ok(target) = latency_target(&text) {
                    prop_assert!(target.seconds.is_finite() && target.seconds > 0.0, "{text}");
                }
            }
        }
    }

    #[test]
    fn durations_take_scientific_notation_and_units() {
        assert_eq!(hours_duration("1e3h"), Ok(1000.0));
        assert_eq!(hours_duration("2.5e-1d"), Ok(6.0));
        assert_eq!(seconds_duration("800ms"), Ok(0.8));
        assert_eq!(hours_duration("3d"), Ok(72.0));
        assert!(hours_duration("1e308d").is_err());
        assert!(hours_duration("-2h").is_err());
        assert!(hours_duration("5 parsecs").unwrap_err().contains("unknown time unit"));
    }
}

/// `p90:800ms` or a bare duration (p90).
fn latency_target(text: &str) -> Result<LatencyTarget, String> {
    LatencyTarget::parse_with(text, seconds_duration)
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ObjectiveArg {
    /// Lowest total cost (serving: lowest cost per hour).
    Cost,
    /// Shortest time to finish (serving: lowest latency).
    Time,
    /// Cost under a deadline, time under a budget.
    Balanced,
}

#[derive(Debug, Args)]
#[command(allow_negative_numbers = true)]
pub struct PlanArgs {
    /// A job file (YAML, or TOML by its `.toml` name) holding these options, each flag in
    /// snake_case; flags given here win over it. `gpuplan init` writes an example.
    #[arg(short = 'f', long = "file", value_name = "JOB_FILE", conflicts_with = "workload")]
    pub file: Option<PathBuf>,

    /// A built-in model id (`gpuplan models`), the path of a Hugging Face config.json, a
    /// llama.cpp GGUF file or an Ultralytics model YAML (the stock YOLOv8 or YOLO11 layout with
    /// its own nc), a Hugging Face Hub id (ORG/NAME[@REVISION]: its config.json is fetched once
    /// and cached as the Hub does; HF_TOKEN, HF_ENDPOINT, HF_HOME and HF_HUB_OFFLINE are
    /// honoured) or a bare size (`7b`).
    #[arg(long, required_unless_present_any = ["workload", "file"], help_heading = "Workload")]
    pub model: Option<String>,

    /// pretrain, finetune, lora, qlora or inference.
    #[arg(long, required_unless_present_any = ["workload", "file"], help_heading = "Workload")]
    pub task: Option<String>,

    /// Write the chosen configuration as deployment files: k8s (Kubernetes, with KEDA for
    /// serving), skypilot (a SkyPilot task) or skyserve (a SkyPilot service).
    #[arg(long, value_enum, help_heading = "Export")]
    pub export: Option<ExportTarget>,

    #[command(flatten)]
    pub export_settings: ExportSettingsArgs,

    /// The CUDA release the job is built with (`12.4`): GPUs it does not compile for (Volta
    /// from CUDA 13, Blackwell before 12.8) and accelerators without CUDA are left out.
    #[arg(long, value_name = "VERSION", help_heading = "Where to rent")]
    pub cuda: Option<String>,

    /// The flags given on the command line (filled after parsing), which win over a job file.
    #[arg(skip)]
    pub given: Vec<String>,

    /// `tabular` for classical ML (gradient-boosted trees) on --rows × --features.
    #[arg(long = "workload", id = "workload", value_name = "KIND", value_parser = ["tabular"], help_heading = "Tabular jobs")]
    pub workload_kind: Option<String>,

    /// Training rows (tabular).
    #[arg(long, value_parser = count, requires = "workload", help_heading = "Tabular jobs")]
    pub rows: Option<f64>,

    /// Features per row (tabular).
    #[arg(long, value_parser = count, requires = "workload", help_heading = "Tabular jobs")]
    pub features: Option<f64>,

    /// Boosting rounds (tabular; default 100).
    #[arg(long, requires = "workload", help_heading = "Tabular jobs")]
    pub rounds: Option<u32>,

    /// Precisions allowed, preferred first (comma-separated: bf16,fp8,int8,int4).
    #[arg(long, value_delimiter = ',', help_heading = "Workload")]
    pub precision: Vec<String>,

    #[command(flatten)]
    pub workload: WorkloadArgs,

    /// Finish within this time (`24h`, `3d`; a bare number is hours).
    #[arg(long, value_parser = hours_duration, value_name = "DURATION", help_heading = "Limits")]
    pub deadline: Option<f64>,

    /// Spend at most this many USD (serving: per month).
    #[arg(long, value_name = "USD", help_heading = "Limits")]
    pub budget: Option<f64>,

    /// Peak requests per second, for the autoscaling range.
    #[arg(long, help_heading = "Serving")]
    pub peak_qps: Option<f64>,

    /// Pay at most this many USD per hour for a configuration, all its instances together.
    #[arg(long, help_heading = "Limits")]
    pub max_hourly_price: Option<f64>,

    /// Share of each serving replica's goodput kept free for bursts and forecast error
    /// (0 to 0.9; default 0.1): replicas are planned at goodput × (1 − headroom).
    #[arg(long, help_heading = "Serving")]
    pub headroom: Option<f64>,

    /// Only these providers (comma-separated).
    #[arg(long, alias = "provider", value_delimiter = ',', help_heading = "Where to rent")]
    pub providers: Vec<String>,

    /// Only regions starting with these prefixes (comma-separated).
    #[arg(long, alias = "region", value_delimiter = ',', help_heading = "Where to rent")]
    pub regions: Vec<String>,

    /// Only these accelerators (ids, aliases or families; comma-separated).
    #[arg(long, value_delimiter = ',', help_heading = "Where to rent")]
    pub gpu: Vec<String>,

    /// Never these accelerators.
    #[arg(long, value_delimiter = ',', help_heading = "Where to rent")]
    pub exclude_gpu: Vec<String>,

    /// Billing modes allowed: on-demand, spot, reserved-1y, reserved-3y (comma-separated).
    #[arg(
        long,
        value_delimiter = ',',
        default_value = "on-demand",
        help_heading = "Where to rent"
    )]
    pub billing: Vec<String>,

    /// Allow spot capacity in addition to the --billing modes.
    #[arg(long, help_heading = "Where to rent")]
    pub spot: bool,

    /// At most this many GPUs in all (default 64; larger clusters need capacity reservations).
    #[arg(long, help_heading = "Limits")]
    pub max_gpus: Option<u32>,

    /// At most this many nodes (default 64).
    #[arg(long, help_heading = "Limits")]
    pub max_nodes: Option<u32>,

    /// At least this many vCPUs per GPU on the host.
    #[arg(long, help_heading = "Where to rent")]
    pub min_vcpus_per_gpu: Option<f64>,

    /// At least this much host memory per GPU, GiB.
    #[arg(long, value_name = "GIB", help_heading = "Where to rent")]
    pub min_host_memory_per_gpu: Option<f64>,

    /// At least this many vCPUs per instance (a guide's "a machine with 32 vCPUs"; per GPU:
    /// --min-vcpus-per-gpu).
    #[arg(long, help_heading = "Where to rent")]
    pub min_vcpus: Option<f64>,

    /// At least this much host memory per instance, GiB.
    #[arg(long, visible_alias = "min-ram", value_name = "GIB", help_heading = "Where to rent")]
    pub min_memory: Option<f64>,

    /// At least this much local disk per instance, GB (instances whose disk the catalog does
    /// not state are left out, and the plan says so).
    #[arg(long, value_name = "GB", help_heading = "Where to rent")]
    pub min_disk: Option<f64>,

    /// Only GPUs of at least this CUDA compute capability (8.0, 8.9, 9.0 or sm_90).
    #[arg(long, value_name = "X.Y", help_heading = "Where to rent")]
    pub compute_capability: Option<String>,

    /// Only these instance families, as guides name them (comma-separated: p5, "a3 mega", a2,
    /// NDv4, "ND H100 v5", gn7i, GN10Xp, BM.GPU.H100).
    #[arg(long, value_delimiter = ',', value_name = "FAMILY", help_heading = "Where to rent")]
    pub family: Vec<String>,

    /// Only providers whose published uptime SLA for a single VM is at least this, % (99.9).
    /// Providers that publish none, or less, are left out, and the plan's assumptions
    /// (`--explain`, or JSON) name them.
    #[arg(long, value_name = "PERCENT", help_heading = "Where to rent")]
    pub sla: Option<f64>,

    /// Only providers that state every one of these compliance programmes (comma-separated:
    /// "SOC 2", "ISO 27001", HIPAA, "PCI DSS", FedRAMP, C5, GDPR …).
    #[arg(
        long,
        value_delimiter = ',',
        value_name = "PROGRAMME",
        help_heading = "Where to rent"
    )]
    pub compliance: Vec<String>,

    /// Only regions in these countries (ISO 3166-1 alpha-2, comma-separated: US,DE,JP).
    #[arg(long, value_delimiter = ',', value_name = "CC", help_heading = "Where to rent")]
    pub countries: Vec<String>,

    /// What to optimise.
    #[arg(long, value_enum, default_value_t = ObjectiveArg::Cost, help_heading = "Choosing")]
    pub objective: ObjectiveArg,

    /// How many of the best configurations to show; the cheapest, the fastest and the rest
    /// of the cost–time Pareto front are always shown beside them.
    #[arg(long, default_value_t = 10, help_heading = "Choosing")]
    pub top: usize,

    /// Differences in cost or time below this share count as none (0 to 1; default 0.1):
    /// the Pareto front and the cheapest and fastest labels ignore them.
    #[arg(long, help_heading = "Choosing")]
    pub tolerance: Option<f64>,

    /// Show the candidates each constraint removed and every assumption.
    #[arg(long, help_heading = "Choosing")]
    pub explain: bool,

    #[command(flatten)]
    pub operations: OperationsArgs,
}

/// How the job runs around its computation, and which prices and stacks to trust.
#[derive(Debug, Args)]
#[command(allow_negative_numbers = true)]
pub struct OperationsArgs {
    /// Only these software stacks (comma-separated: cuda, rocm, neuron, xla; default: every
    /// stack that runs the request).
    #[arg(long, value_delimiter = ',', help_heading = "Operations")]
    pub stack: Vec<String>,

    /// Use prices that failed the catalog's checks (`gpuplan catalog --check` lists them).
    #[arg(long, help_heading = "Operations")]
    pub trust_prices: bool,

    /// Share of a reserved term the capacity is used (0–1); without it a job shorter than
    /// the term pays the whole term.
    #[arg(long, alias = "utilization", help_heading = "Operations")]
    pub utilisation: Option<f64>,

    /// Spot interruptions per node-hour (default: the provider's published rate).
    #[arg(long, help_heading = "Operations")]
    pub interruption_rate: Option<f64>,

    /// Time to provision a node (`5m`; default: the provider class's figure).
    #[arg(long, value_parser = seconds_duration, value_name = "DURATION", help_heading = "Operations")]
    pub provision_time: Option<f64>,

    /// Container image size, GB (default: the catalog's typical image).
    #[arg(long, value_name = "GB", help_heading = "Operations")]
    pub image_size: Option<f64>,

    /// Object storage throughput per node, Gbit/s, for weights, data and checkpoints.
    #[arg(long, value_name = "GBPS", help_heading = "Operations")]
    pub storage_gbps: Option<f64>,

    /// How a vision job decodes its images: cpu-pil (default), cpu-pillow-simd, ffcv-jpeg, or
    /// dali (on the GPU).
    #[arg(long, value_name = "PIPELINE", help_heading = "Operations")]
    pub input_pipeline: Option<String>,

    /// Read the image dataset from object storage every epoch instead of staging it to local
    /// disk first (bounded by --storage-gbps).
    #[arg(long, help_heading = "Operations")]
    pub stream_dataset: bool,

    /// Checkpoint every this long on uninterrupted capacity (default 1h; spot uses Young's
    /// optimum).
    #[arg(long, value_parser = hours_duration, value_name = "DURATION", help_heading = "Operations")]
    pub checkpoint_every: Option<f64>,
}

/// Parses a count that may be written in scientific notation (`2e9`).
fn count(text: &str) -> Result<f64, String> {
    let value: f64 = text
        .trim()
        .replace('_', "")
        .parse()
        .map_err(|_| format!("`{text}` is not a number"))?;
    if value.is_nan() || value <= 0.0 {
        Err(format!("`{text}` must be a positive number"))
    } else if value > MAX_COUNT_VALUE {
        Err(format!("`{text}` is beyond any real workload (at most 1e18)"))
    } else {
        Ok(value)
    }
}

/// Largest count of tokens, samples or epochs accepted: a quintillion, a thousand times the
/// largest published training run.
const MAX_COUNT_VALUE: f64 = 1e18;

#[derive(Debug, Args)]
#[command(allow_negative_numbers = true)]
pub struct EstimateArgs {
    /// A built-in model id (`gpuplan models`), the path of a Hugging Face config.json, a
    /// llama.cpp GGUF file or an Ultralytics model YAML (the stock YOLOv8 or YOLO11 layout with
    /// its own nc), a Hugging Face Hub id (ORG/NAME[@REVISION]: its config.json is fetched once
    /// and cached as the Hub does; HF_TOKEN, HF_ENDPOINT, HF_HOME and HF_HUB_OFFLINE are
    /// honoured) or a bare size (`7b`).
    #[arg(long, help_heading = "Workload")]
    pub model: String,

    /// What to run: pretrain, finetune, lora, qlora or inference.
    #[arg(long, help_heading = "Workload")]
    pub task: String,

    /// The GPU type: an id or alias (`H100`, `A100-80GB`, `rtx-4090`).
    #[arg(long, help_heading = "GPUs and layout")]
    pub gpu: String,

    /// Number of GPUs.
    #[arg(long, help_heading = "GPUs and layout")]
    pub gpus: Option<u32>,

    /// GPUs per node (default: up to 8).
    #[arg(long, help_heading = "GPUs and layout")]
    pub gpus_per_node: Option<u32>,

    /// fp32, tf32, fp16, bf16, fp8, int8 or int4 (default: bf16 where supported, else fp16).
    #[arg(long, help_heading = "GPUs and layout")]
    pub precision: Option<String>,

    #[command(flatten)]
    pub workload: WorkloadArgs,

    /// Tensor-parallel degree (default: chosen).
    #[arg(long, help_heading = "GPUs and layout")]
    pub tp: Option<u32>,

    /// Pipeline-parallel degree (default: chosen).
    #[arg(long, help_heading = "GPUs and layout")]
    pub pp: Option<u32>,

    /// Context (sequence) parallel degree: each GPU holds 1/cp of every sequence.
    #[arg(long, help_heading = "GPUs and layout")]
    pub cp: Option<u32>,

    /// Expert parallel degree (mixture-of-experts): experts spread over this many
    /// data-parallel ranks.
    #[arg(long, help_heading = "GPUs and layout")]
    pub ep: Option<u32>,

    /// Virtual pipeline stages per GPU (interleaved 1F1B; 1: plain 1F1B) [default: the
    /// framework's schedule].
    #[arg(long, help_heading = "GPUs and layout")]
    pub vp: Option<u32>,

    /// Serve a mixture of experts with attention data parallelism: each GPU of the replica
    /// runs attention for its own sequences (whole attention weights, its sequences' whole KV
    /// cache) and the experts are spread over all of them, exchanged by all-to-all (as
    /// TensorRT-LLM's enable_attention_dp, SGLang's DP attention and vLLM's data parallel size
    /// with expert parallelism run it). Default: tensor-parallel attention.
    #[arg(long, help_heading = "GPUs and layout")]
    pub attention_dp: bool,

    /// Train a mixture of experts with the expert-parallel all-to-alls overlapped: each
    /// micro-batch's dispatch and combine run beside the adjacent micro-batch's forward or
    /// backward compute (Megatron-Core's combined 1F1B, --overlap-moe-expert-parallel-comm;
    /// Megatron-Bridge's moe_a2a_overlap). Default: exposed, as Megatron-Core runs them
    /// unless asked.
    #[arg(long, help_heading = "GPUs and layout")]
    pub ep_overlap: bool,

    /// ZeRO stage 0–3 (FSDP full sharding = 3; default: the lowest that fits).
    #[arg(long, help_heading = "GPUs and layout")]
    pub zero: Option<u8>,

    /// Use fused flash attention (default: on for compute capability 8.0+; diffusion: on).
    #[arg(long, help_heading = "GPUs and layout")]
    pub flash_attention: Option<bool>,
}

/// The workload `estimate` and `plan` both describe: one declaration of each flag, flattened
/// into both commands, so their names, parsers and help cannot drift apart.
#[derive(Debug, Args)]
#[command(allow_negative_numbers = true)]
pub struct WorkloadArgs {
    /// Global batch in sequences or samples (training; `plan` defaults to 256). For `estimate
    /// --task inference`: sequences processed together.
    #[arg(long, help_heading = "Workload")]
    pub batch: Option<u64>,

    /// Sequences per GPU per forward/backward pass (default: the fastest that fits).
    #[arg(long, help_heading = "Workload")]
    pub micro_batch: Option<u64>,

    /// Tokens per sequence (training) or prompt tokens (inference).
    #[arg(long, alias = "input-tokens", help_heading = "Workload")]
    pub seq: Option<u64>,

    /// Tokens generated per request (inference; 0 for encoders such as BERT).
    #[arg(long, help_heading = "Workload")]
    pub output_tokens: Option<u64>,

    /// Activation recomputation: none, selective (attention core), norms-activation (Megatron's
    /// recompute modules layernorm and moe_act), op (torchtitan's per-op) or full (default: the
    /// least that fits).
    #[arg(long, help_heading = "Workload")]
    pub checkpointing: Option<String>,

    /// Training framework whose defaults and loss to follow: hf-trainer, torchtune, litgpt,
    /// torchtitan, megatron, deepspeed, llm-foundry or axolotl; and, comma-separated, framework
    /// builds the job needs (`pytorch==2.5`, `vllm==0.8`): GPUs they do not run on are left out.
    #[arg(long, help_heading = "Workload")]
    pub framework: Option<String>,

    /// Training state kept in host memory: a comma list of optimizer, params, activations
    /// (DeepSpeed ZeRO-Offload, FSDP CPU offload, torchtune activation offloading).
    #[arg(long, help_heading = "Workload")]
    pub offload: Option<String>,

    #[command(flatten)]
    pub step: TrainingStepArgs,

    /// adamw, adam8bit, sgd, adafactor, or bitsandbytes' paged-adamw / paged-adamw-8bit, whose
    /// states page to the host when the GPU runs short (default adamw).
    #[arg(long, help_heading = "Workload")]
    pub optimizer: Option<String>,

    /// Step the optimizer inside the backward pass, freeing each gradient once applied
    /// (torchtune's optimizer_in_bwd): full training, one micro-batch per step, no pipeline.
    #[arg(long, help_heading = "Workload")]
    pub optimizer_in_backward: bool,

    /// LoRA rank (LoRA/QLoRA; default 16).
    #[arg(long, help_heading = "Workload")]
    pub lora_rank: Option<u64>,

    /// Layers LoRA adapts: q,v, attention, all-linear or all-linear+head (default: the
    /// framework's recipe, else all-linear).
    #[arg(long, help_heading = "Workload")]
    pub lora_targets: Option<String>,

    /// Tokens to train on (`5e8`).
    #[arg(long, value_parser = count, help_heading = "Workload")]
    pub tokens: Option<f64>,

    /// Epochs over --dataset-size samples.
    #[arg(long, value_parser = count, help_heading = "Workload")]
    pub epochs: Option<f64>,

    /// Samples (sequences or images) per epoch; for inference, the requests of a batch job.
    #[arg(long, value_parser = count, help_heading = "Workload")]
    pub dataset_size: Option<f64>,

    /// Inference engine: pytorch, torch-compile, vllm, sglang, tensorrt-llm, tgi, tensorrt or
    /// onnxruntime (default vllm for text generation); a release after `@` applies that
    /// release's defaults and overheads (`vllm@0.6`).
    #[arg(long, help_heading = "Workload")]
    pub engine: Option<String>,

    #[command(flatten)]
    pub knobs: gpuplan::EngineKnobs,

    /// Serving: how the engine stores the KV cache: auto (the engine's default), 16-bit or fp8
    /// (vLLM's and SGLang's `--kv-cache-dtype`).
    #[arg(long, help_heading = "Workload")]
    pub kv_cache_dtype: Option<String>,

    /// Share of each GPU's memory kept free when judging the fit (default 0.10).
    #[arg(long, help_heading = "Workload")]
    pub memory_margin: Option<f64>,

    /// A calibration `gpuplan probe --calibration-out` wrote: the measured GPUs' peaks and
    /// memory bandwidth in place of the datasheet's.
    #[arg(long, value_name = "FILE", help_heading = "Workload")]
    pub calibration: Option<PathBuf>,

    /// Requests per second: the load on one replica (`estimate`) or the total to serve
    /// (`plan`).
    #[arg(long, help_heading = "Serving")]
    pub qps: Option<f64>,

    /// Time-to-first-token target at a percentile (`p90:800ms`, `p99:2s`; a bare `1s` is p90).
    #[arg(long, value_parser = latency_target, value_name = "[pNN:]DURATION", help_heading = "Serving")]
    pub ttft: Option<LatencyTarget>,

    /// Time-per-output-token target at a percentile (`p99:60ms`; a bare `50ms` is p90).
    #[arg(long, value_parser = latency_target, value_name = "[pNN:]DURATION", help_heading = "Serving")]
    pub tpot: Option<LatencyTarget>,

    /// Prompt and output lengths of the traffic from a request log: CSV with columns
    /// input_tokens,output_tokens, or JSON Lines with those keys. With --seq or
    /// --output-tokens beside it, the log's prompts or outputs are scaled to that mean.
    #[arg(long, value_name = "FILE", help_heading = "Serving")]
    pub requests: Option<PathBuf>,

    /// Share of prompt tokens the engine finds in its prefix cache (0–1: a shared system
    /// prompt, chat history); they are not computed again.
    #[arg(long, value_name = "SHARE", help_heading = "Serving")]
    pub prefix_cache_hit: Option<f64>,

    #[command(flatten)]
    pub image: ImageArgs,
}

/// Settings of image models: CNNs and diffusion pipelines.
#[derive(Debug, Args)]
#[command(allow_negative_numbers = true)]
pub struct ImageArgs {
    /// Image side in pixels (default: the model's reference resolution; diffusion models are
    /// counted at any multiple of 8, diffusion transformers of 16).
    #[arg(long, value_name = "PX", help_heading = "Image models")]
    pub resolution: Option<u64>,

    /// Denoising steps per image (diffusion; default: the reference pipeline's: 50 for SDXL, 28
    /// for SD3 and FLUX.1-dev, 4 for FLUX.1-schnell).
    #[arg(long, help_heading = "Image models")]
    pub steps: Option<u64>,

    /// Run without classifier-free guidance: one denoiser pass per step instead of two
    /// (distilled models such as SDXL-Turbo, or guidance scale ≤ 1; FLUX.1 runs one already).
    #[arg(long, help_heading = "Image models")]
    pub no_guidance: bool,
}

#[derive(Debug, Args)]
#[command(allow_negative_numbers = true)]
pub struct GpusArgs {
    /// An accelerator id, alias or family (`h100`, `A100-80GB`, `rtx 4090`).
    pub name: Option<String>,
}

#[derive(Debug, Args)]
#[command(allow_negative_numbers = true)]
pub struct InstancesArgs {
    /// Accelerator id, alias or family; a family (`H100`) matches all its variants.
    #[arg(long)]
    pub gpu: Option<String>,

    /// Only these providers (comma-separated: aws,gcp,azure,oci,lambda,runpod,…).
    #[arg(long, alias = "provider", value_delimiter = ',')]
    pub providers: Vec<String>,

    /// Only regions starting with this text (comma-separated; `us-` matches every US region).
    #[arg(long, alias = "region", value_delimiter = ',')]
    pub regions: Vec<String>,

    /// At least this many GPUs per instance.
    #[arg(long)]
    pub min_gpus: Option<u32>,

    /// At most this many GPUs per instance.
    #[arg(long)]
    pub max_gpus: Option<u32>,

    /// At least this much memory per GPU, in GiB.
    #[arg(long, value_name = "GIB")]
    pub min_gpu_memory: Option<f64>,

    /// At least this many vCPUs per instance.
    #[arg(long)]
    pub min_vcpus: Option<f64>,

    /// At least this much host memory per instance, in GiB.
    #[arg(long, visible_alias = "min-ram", value_name = "GIB")]
    pub min_memory: Option<f64>,

    /// At least this much local disk per instance, in GB (instances whose disk the catalog
    /// does not state are left out).
    #[arg(long, value_name = "GB")]
    pub min_disk: Option<f64>,

    /// GPUs of at least this CUDA compute capability (8.0, 8.9, 9.0 or sm_90; NVIDIA only).
    #[arg(long, value_name = "X.Y")]
    pub compute_capability: Option<String>,

    /// Only these instance families, as guides name them (comma-separated: p5, "a3 mega", a2,
    /// NDv4, "ND H100 v5", gn7i, GN10Xp, BM.GPU.H100).
    #[arg(long, value_delimiter = ',', value_name = "FAMILY")]
    pub family: Vec<String>,

    /// At most this price per instance-hour, USD (the spot price with --spot).
    #[arg(long, value_name = "USD")]
    pub max_price: Option<f64>,

    /// Only offerings sold as spot / preemptible, priced at spot.
    #[arg(long)]
    pub spot: bool,

    /// Include CPU-only instances.
    #[arg(long)]
    pub include_cpu: bool,

    /// One row per availability zone where zone prices differ (default: one row per
    /// region, with the lowest spot price of its zones).
    #[arg(long)]
    pub zones: bool,

    /// Order of the listing.
    #[arg(long, value_enum, default_value_t = SortKey::Price)]
    pub sort: SortKey,

    /// Show at most this many rows (0: all). Defaults to 40 for tables, all otherwise.
    #[arg(long)]
    pub limit: Option<usize>,

    /// Skip this many offerings from the top of the sorted list first (paging).
    #[arg(long)]
    pub offset: Option<usize>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum SortKey {
    /// Instance price, cheapest first.
    Price,
    /// Price per GPU-hour, cheapest first.
    PricePerGpu,
    /// Most GPUs first.
    Gpus,
    /// Most GPU memory first.
    Memory,
    /// Provider, instance type, region.
    Provider,
}

/// How the training step runs: compiled or eager, packed or padded sequences.
#[derive(Debug, Args)]
pub struct TrainingStepArgs {
    /// The training step runs under torch.compile (fused element-wise kernels; about 1.16×
    /// the eager speed in 16-bit training).
    #[arg(long, help_heading = "Workload")]
    pub compile: bool,

    /// Training without packing: each example is padded to --seq and holds this many real
    /// tokens on average. Compute and memory follow --seq; tokens/s, time and GPU-hours count
    /// real tokens only. Default: packed sequences, every token real.
    #[arg(long, value_name = "TOKENS", help_heading = "Workload")]
    pub mean_seq: Option<u64>,
}

/// What a plan is exported to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ExportTarget {
    /// Kubernetes manifests: a Job (training) or a Deployment with a KEDA ScaledObject (serving).
    K8s,
    /// A SkyPilot task YAML.
    Skypilot,
    /// A SkyPilot task YAML with a SkyServe `service:` section.
    Skyserve,
}

/// The kind of Kubernetes object a multi-node training job becomes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum FlavourArg {
    /// An indexed Job and a headless Service (no operator needed).
    IndexedJob,
    /// A JobSet (kubernetes-sigs/jobset).
    Jobset,
    /// A Kubeflow PyTorchJob (training-operator).
    Pytorchjob,
}

/// How an export is written.
#[derive(Debug, Args)]
pub struct ExportSettingsArgs {
    /// Which recommendation to export, counting from 1 in the plan's order (default 1).
    #[arg(long, help_heading = "Export")]
    pub pick: Option<usize>,

    /// Write the files into this folder instead of printing them.
    #[arg(long, value_name = "DIR", help_heading = "Export")]
    pub out: Option<PathBuf>,

    /// Kubernetes, multi-node training: indexed-job (the default), jobset or pytorchjob.
    #[arg(long, value_enum, help_heading = "Export")]
    pub flavour: Option<FlavourArg>,

    /// Container image (default: the catalog's for the configuration's software stack: NGC
    /// PyTorch or vLLM on NVIDIA, ROCm's on AMD, the Neuron containers on Trainium and
    /// Inferentia).
    #[arg(long, help_heading = "Export")]
    pub image: Option<String>,

    /// Kubernetes StorageClass of the checkpoint volume (default: on several nodes, the
    /// provider's shared-file class — GKE's standard-rwx, AKS's azurefile-csi-premium, EFS's
    /// efs-sc on EKS; on one node, the cluster's default class).
    #[arg(long, value_name = "CLASS", help_heading = "Export")]
    pub storage_class: Option<String>,

    /// Name of the job or service and of its objects (default: from the model and task).
    #[arg(long, help_heading = "Export")]
    pub name: Option<String>,

    /// Kubernetes namespace (default `default`).
    #[arg(long, help_heading = "Export")]
    pub namespace: Option<String>,
}

#[derive(Debug, Args)]
pub struct InitArgs {
    /// Where to write the example job file.
    #[arg(default_value = "job.yaml")]
    pub path: PathBuf,

    /// An online-serving example instead of a training one.
    #[arg(long)]
    pub serving: bool,

    /// Overwrite the files if they exist.
    #[arg(long)]
    pub force: bool,

    /// Print the job file's JSON Schema instead of writing anything.
    #[arg(long, conflicts_with_all = ["serving", "force"])]
    pub schema: bool,
}

#[derive(Debug, Args)]
pub struct ExportArgs {
    /// A plan saved with `gpuplan plan --format json > plan.json`.
    pub plan: PathBuf,

    /// What to write: k8s, skypilot or skyserve.
    #[arg(long, value_enum)]
    pub to: ExportTarget,

    #[command(flatten)]
    pub settings: ExportSettingsArgs,
}

#[derive(Debug, Args)]
pub struct DiffArgs {
    /// The plan before (`gpuplan plan --format json`).
    pub before: PathBuf,
    /// The plan after.
    pub after: PathBuf,
}

#[derive(Debug, Args)]
pub struct RightsizeArgs {
    /// nvidia-smi CSV logs (`nvidia-smi --query-gpu=timestamp,index,name,uuid,utilization.gpu,utilization.memory,memory.used,memory.total,power.draw --format=csv -l 5`)
    /// or `nvidia-smi -q -x` snapshots (XML, several per file).
    #[arg(long = "nvidia-smi", value_name = "FILE")]
    pub nvidia_smi: Vec<PathBuf>,

    /// DCGM exporter scrapes (Prometheus text format); lines without a timestamp are taken at
    /// the file's modification time.
    #[arg(long, value_name = "FILE")]
    pub dcgm: Vec<PathBuf>,

    /// The rate you pay per GPU-hour (USD), where the catalog's on-demand price is not it.
    #[arg(long, value_name = "USD")]
    pub price: Option<f64>,

    /// Compare prices of these providers only (comma-separated).
    #[arg(long, alias = "provider", value_delimiter = ',')]
    pub providers: Vec<String>,

    /// Room kept above the observed memory and compute peaks, 0–1.
    #[arg(long, default_value_t = 0.2)]
    pub headroom: f64,

    /// Also write the busy GPU-hours of each hour as a CSV history for `gpuplan forecast`.
    #[arg(long, value_name = "FILE")]
    pub history: Option<PathBuf>,

    /// Read DCGM exporter metrics from this Prometheus server (`http://prometheus:9090`).
    #[arg(long, value_name = "URL", help_heading = "Prometheus")]
    pub prometheus: Option<String>,

    /// Label matchers for the series to read (`{namespace="ml"}`).
    #[arg(long, requires = "prometheus", default_value = "", help_heading = "Prometheus")]
    pub selector: String,

    /// How far back to read (`14d`, `36h`).
    #[arg(long, requires = "prometheus", value_parser = hours_duration, default_value = "14d", help_heading = "Prometheus")]
    pub since: f64,

    /// The end of the window read (RFC 3339, `2024-05-01T13:00:00Z`; default now).
    #[arg(long, requires = "prometheus", help_heading = "Prometheus")]
    pub until: Option<String>,
}

#[derive(Debug, Args)]
pub struct ProbeArgs {
    /// Also write the driver's facts and the measurements as JSON, to read back with --from on
    /// any machine.
    #[arg(long, value_name = "FILE")]
    pub out: Option<PathBuf>,

    /// Read the facts from a report written with --out instead of from this machine's driver.
    #[arg(long, value_name = "FILE", conflicts_with_all = ["out", "facts_only"])]
    pub from: Option<PathBuf>,

    /// Only the driver's facts: run no kernels (the measurements take about a minute and load
    /// every GPU).
    #[arg(long)]
    pub facts_only: bool,

    /// Write the calibration the measurements give, for `estimate` and `plan --calibration`.
    #[arg(long, value_name = "FILE", conflicts_with = "facts_only")]
    pub calibration_out: Option<PathBuf>,

    /// Run the proof of concept instead: a short training and decode benchmark of --model's
    /// shape in this machine's PyTorch, on one GPU and on --gpus, against the estimates
    /// (--out writes its report, --from reads one back).
    #[arg(long, conflicts_with_all = ["facts_only", "calibration_out"], help_heading = "Proof of concept")]
    pub poc: bool,

    /// The catalog model whose shape the proof of concept runs.
    #[arg(long, requires = "poc", help_heading = "Proof of concept")]
    pub model: Option<String>,

    /// pretrain, finetune (full training) or lora (default).
    #[arg(long, requires = "poc", help_heading = "Proof of concept")]
    pub task: Option<String>,

    /// GPUs for the data-parallel run (default: every GPU the driver reports).
    #[arg(long, requires = "poc", help_heading = "Proof of concept")]
    pub gpus: Option<u32>,

    /// Tokens per sequence (default 2048).
    #[arg(long, requires = "poc", help_heading = "Proof of concept")]
    pub seq: Option<u64>,

    /// Sequences per GPU per step (default 1).
    #[arg(long, requires = "poc", help_heading = "Proof of concept")]
    pub micro_batch: Option<u64>,

    /// LoRA rank (default 16).
    #[arg(long, requires = "poc", help_heading = "Proof of concept")]
    pub lora_rank: Option<u64>,

    /// Recompute each layer in the backward pass.
    #[arg(long, requires = "poc", help_heading = "Proof of concept")]
    pub checkpointing: bool,

    /// Timed training steps (default 10).
    #[arg(long, requires = "poc", help_heading = "Proof of concept")]
    pub steps: Option<u64>,

    /// The Python with PyTorch to run the benchmark (default python3).
    #[arg(long, requires = "poc", help_heading = "Proof of concept")]
    pub python: Option<String>,

    /// Also compare with the estimates on this calibration (`probe --calibration-out`).
    #[arg(long, value_name = "FILE", requires = "poc", help_heading = "Proof of concept")]
    pub calibration: Option<PathBuf>,
}

#[derive(Debug, Args)]
pub struct CompatArgs {
    /// A GPU type (its compute capability comes from the catalog).
    #[arg(long)]
    pub gpu: Option<String>,

    /// A framework, optionally with its version: `pytorch`, `pytorch==2.5`, `tensorflow==2.18`.
    #[arg(long)]
    pub framework: Option<String>,

    /// The CUDA release (`12.4`), for NVIDIA GPUs.
    #[arg(long)]
    pub cuda: Option<String>,

    /// The ROCm release (`7.1`), for AMD GPUs.
    #[arg(long)]
    pub rocm: Option<String>,

    /// The AWS Neuron SDK release (`2.30`), for Inferentia and Trainium.
    #[arg(long)]
    pub neuron: Option<String>,

    /// The driver version: NVIDIA's (`535.104.05`, as `nvidia-smi` prints it), the amdgpu
    /// driver (`30.10.1`, or the kernel driver `6.4` of ROCm up to 6.4) or aws-neuronx-dkms
    /// (`2.28.0.0`).
    #[arg(long)]
    pub driver: Option<String>,
}

//! The command-line grammar. Doc comments here are the `--help` text.

use clap::{Args, Parser, Subcommand, ValueEnum};
use gpuplan::emit::OutputFormat;
use std::path::PathBuf;

/// Which cloud GPU server to rent for an ML job, how many, and at what cost.
///
/// gpuplan answers from a built-in catalog of accelerators and cloud offerings in which
/// every number carries its source and the date it was read.
#[derive(Debug, Parser)]
#[command(name = "gpuplan", version, about, max_term_width = 100)]
pub struct Cli {
    /// Output format.
    #[arg(long, global = true, value_enum, default_value_t = Format::Table)]
    pub format: Format,

    /// Read the catalog from this folder (same layout as the built-in one: catalog.toml,
    /// accelerators/*.toml, offerings/*.csv) instead of the built-in catalog.
    #[arg(long, global = true, env = "GPUPLAN_CATALOG", value_name = "DIR")]
    pub catalog: Option<PathBuf>,

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
    Catalog,
}

#[derive(Debug, Args)]
pub struct GpusArgs {
    /// An accelerator id, alias or family (`h100`, `A100-80GB`, `rtx 4090`).
    pub name: Option<String>,
}

#[derive(Debug, Args)]
pub struct InstancesArgs {
    /// Accelerator id, alias or family; a family (`H100`) matches all its variants.
    #[arg(long)]
    pub gpu: Option<String>,

    /// Only these providers (comma-separated: aws,gcp,azure,oci,lambda,runpod,…).
    #[arg(long, value_delimiter = ',')]
    pub provider: Vec<String>,

    /// Only regions starting with this text (comma-separated; `us-` matches every US region).
    #[arg(long, value_delimiter = ',')]
    pub region: Vec<String>,

    /// At least this many GPUs per instance.
    #[arg(long)]
    pub min_gpus: Option<u32>,

    /// At most this many GPUs per instance.
    #[arg(long)]
    pub max_gpus: Option<u32>,

    /// At least this much memory per GPU, in GiB.
    #[arg(long, value_name = "GIB")]
    pub min_gpu_memory: Option<f64>,

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

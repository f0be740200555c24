//! How gpuplan shows its answers.
//!
//! Listings are first turned into a plain [`Table`] of text cells (the `view` functions), then
//! written by one [`Exporter`] per format: a terminal table, CSV or Markdown. JSON does not go
//! through a table: it serialises the documented wire types of [`wire`] (see `docs/json.md`),
//! which the CLI and the HTTP API share.
//!
//! ```
//! use gpuplan_emit::{Exporter, MarkdownExporter, Table};
//!
//! let table = Table::new(["gpu", "memory"]).with_row(["H100-SXM5-80GB", "80 GiB"]);
//! assert!(MarkdownExporter.export(&table).contains("| H100-SXM5-80GB | 80 GiB |"));
//! ```

mod data_csv;
mod export;
mod finite;
mod format;
pub mod manifest;
mod money;
mod table;
mod view;
pub mod wire;
mod wrap;

pub use data_csv::data_csv;
pub use export::{CsvExporter, Exporter, MarkdownExporter, TerminalExporter, terminal_width};
pub use finite::first_non_finite;
pub use format::OutputFormat;
pub use money::Money;
pub use table::{Align, Table};
pub use view::{
    FlaggedPriceJson, catalog_table, estimate_report, gpu_detail, gpu_table, infeasible_report, instance_table,
    model_table, parameter_count, plan_explanation, plan_table, price_check_table, provider_facts_text,
};
pub use wrap::wrap_report;

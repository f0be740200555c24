use crate::{CsvExporter, Exporter, MarkdownExporter, TerminalExporter};
use std::fmt;
use std::str::FromStr;

/// The output formats every listing offers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum OutputFormat {
    /// A table for people at a terminal.
    #[default]
    Table,
    /// The documented wire format of `docs/json.md`.
    Json,
    Csv,
    Markdown,
}

impl OutputFormat {
    /// The exporter for a text format; `None` for JSON, which serialises wire types instead.
    pub fn exporter(self) -> Option<&'static dyn Exporter> {
        match self {
            OutputFormat::Table => Some(&TerminalExporter::PLAIN),
            OutputFormat::Csv => Some(&CsvExporter),
            OutputFormat::Markdown => Some(&MarkdownExporter),
            OutputFormat::Json => None,
        }
    }
}

impl FromStr for OutputFormat {
    type Err = String;
    fn from_str(text: &str) -> Result<Self, String> {
        match text.to_lowercase().as_str() {
            "table" => Ok(OutputFormat::Table),
            "json" => Ok(OutputFormat::Json),
            "csv" => Ok(OutputFormat::Csv),
            "markdown" | "md" => Ok(OutputFormat::Markdown),
            other => Err(format!(
                "unknown format `{other}` (expected table, json, csv or markdown)"
            )),
        }
    }
}

impl fmt::Display for OutputFormat {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            OutputFormat::Table => "table",
            OutputFormat::Json => "json",
            OutputFormat::Csv => "csv",
            OutputFormat::Markdown => "markdown",
        })
    }
}

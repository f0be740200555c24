use std::collections::BTreeMap;
use std::fmt::Write as _;

/// How many examples of each repair or drop the report keeps.
const EXAMPLES_KEPT: usize = 3;

/// What the import of one provider read, wrote, repaired and dropped, with reasons.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ProviderReport {
    pub rows_read: usize,
    pub offerings_written: usize,
    /// Rows not imported, by reason.
    pub dropped_rows: BTreeMap<String, Tally>,
    /// Prices removed (the offering kept, its price unknown), by reason.
    pub dropped_prices: BTreeMap<String, Tally>,
    /// Values corrected, by reason.
    pub repairs: BTreeMap<String, Tally>,
    /// Facts worth knowing that changed nothing.
    pub notes: BTreeMap<String, Tally>,
}

/// A count and a few examples.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Tally {
    pub count: usize,
    pub examples: Vec<String>,
}

impl Tally {
    fn add(&mut self, example: String) {
        self.count += 1;
        if self.examples.len() < EXAMPLES_KEPT && !self.examples.contains(&example) {
            self.examples.push(example);
        }
    }
}

impl ProviderReport {
    pub(crate) fn drop_row(&mut self, reason: &str, example: String) {
        self.dropped_rows.entry(reason.to_string()).or_default().add(example);
    }

    pub(crate) fn drop_price(&mut self, reason: &str, example: String) {
        self.dropped_prices.entry(reason.to_string()).or_default().add(example);
    }

    pub(crate) fn repair(&mut self, reason: &str, example: String) {
        self.repairs.entry(reason.to_string()).or_default().add(example);
    }

    pub(crate) fn note_price(&mut self, reason: &str, example: String) {
        self.notes.entry(reason.to_string()).or_default().add(example);
    }
}

/// The whole import's report, per provider.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ImportReport {
    pub providers: BTreeMap<String, ProviderReport>,
}

impl ImportReport {
    pub(crate) fn provider(&mut self, cloud: &str) -> &mut ProviderReport {
        self.providers.entry(cloud.to_string()).or_default()
    }

    /// The report as Markdown, for the committed `IMPORT_REPORT.md` and the terminal.
    pub fn to_markdown(&self) -> String {
        let mut text = String::from("| provider | rows read | offerings written |\n|---|---:|---:|\n");
        for (name, provider) in &self.providers {
            let _ = writeln!(
                text,
                "| {name} | {} | {} |",
                provider.rows_read, provider.offerings_written
            );
        }
        for (name, provider) in &self.providers {
            let sections = [
                ("Rows dropped", &provider.dropped_rows),
                (
                    "Prices dropped (offering kept, price unknown)",
                    &provider.dropped_prices,
                ),
                ("Repairs", &provider.repairs),
                ("Notes", &provider.notes),
            ];
            if sections.iter().all(|(_, tallies)| tallies.is_empty()) {
                continue;
            }
            let _ = writeln!(text, "\n## {name}");
            for (title, tallies) in sections {
                if tallies.is_empty() {
                    continue;
                }
                let _ = writeln!(text, "\n{title}:\n");
                for (reason, tally) in tallies {
                    let _ = writeln!(text, "- {reason}: {} (e.g. {})", tally.count, tally.examples.join("; "));
                }
            }
        }
        text
    }
}

//! One exporter per text format, behind one trait.

use crate::{Align, Table};
use comfy_table::{CellAlignment, ContentArrangement, presets};

/// Writes a [`Table`] in one format.
pub trait Exporter {
    fn export(&self, table: &Table) -> String;

    /// The footer lines, one per line, shared by the formats that show them.
    fn footer(&self, table: &Table) -> String {
        table.footer.iter().map(|line| format!("{line}\n")).collect()
    }
}

/// A boxed table for a terminal, sized to its content.
#[derive(Debug, Clone, Copy)]
pub struct TerminalExporter;

impl TerminalExporter {
    /// The table alone, without its footer.
    pub fn export_table(&self, table: &Table) -> String {
        let mut bare = table.clone();
        bare.footer.clear();
        self.export(&bare)
    }
}

impl Exporter for TerminalExporter {
    fn export(&self, table: &Table) -> String {
        let mut out = comfy_table::Table::new();
        out.load_preset(presets::UTF8_FULL_CONDENSED)
            .set_content_arrangement(ContentArrangement::Disabled)
            .set_header(&table.headers);
        for row in &table.rows {
            out.add_row(row);
        }
        for (index, align) in table.align.iter().enumerate() {
            if let Some(column) = out.column_mut(index) {
                column.set_cell_alignment(match align {
                    Align::Left => CellAlignment::Left,
                    Align::Right => CellAlignment::Right,
                });
            }
        }
        format!("{out}\n{}", self.footer(table))
    }
}

/// RFC 4180 CSV with a header row; no footer.
#[derive(Debug, Clone, Copy)]
pub struct CsvExporter;

impl Exporter for CsvExporter {
    fn export(&self, table: &Table) -> String {
        let mut writer = csv::WriterBuilder::new()
            .terminator(csv::Terminator::Any(b'\n'))
            .from_writer(Vec::new());
        // Writing to a Vec cannot fail.
        let _ = writer.write_record(&table.headers);
        for row in &table.rows {
            let _ = writer.write_record(row);
        }
        String::from_utf8(writer.into_inner().unwrap_or_default()).unwrap_or_default()
    }
}

/// A GitHub-flavoured Markdown table.
#[derive(Debug, Clone, Copy)]
pub struct MarkdownExporter;

impl Exporter for MarkdownExporter {
    fn export(&self, table: &Table) -> String {
        let escape = |cell: &str| cell.replace('|', "\\|");
        let line = |cells: &[String]| {
            format!(
                "| {} |\n",
                cells.iter().map(|c| escape(c)).collect::<Vec<_>>().join(" | ")
            )
        };
        let mut text = line(&table.headers);
        let rule: Vec<String> = table
            .align
            .iter()
            .map(|align| match align {
                Align::Left => "---".to_string(),
                Align::Right => "---:".to_string(),
            })
            .collect();
        text.push_str(&format!("|{}|\n", rule.join("|")));
        for row in &table.rows {
            text.push_str(&line(row));
        }
        if !table.footer.is_empty() {
            text.push('\n');
            text.push_str(&self.footer(table));
        }
        text
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> Table {
        let mut table = Table::new(["gpu", "price"]).right_aligned(&["price"]);
        table.push_row(["T4, 16 GB", "0.526"]);
        table.push_row(["A|B", "1"]);
        table
    }

    #[test]
    fn csv_quotes_commas() {
        assert_eq!(CsvExporter.export(&sample()), "gpu,price\n\"T4, 16 GB\",0.526\nA|B,1\n");
    }

    #[test]
    fn markdown_escapes_pipes_and_aligns_numbers() {
        let text = MarkdownExporter.export(&sample());
        assert!(text.starts_with("| gpu | price |\n|---|---:|\n"), "{text}");
        assert!(text.contains("| A\\|B | 1 |"), "{text}");
    }

    #[test]
    fn terminal_table_shows_every_cell() {
        let text = TerminalExporter.export(&sample());
        assert!(text.contains("T4, 16 GB") && text.contains("0.526"), "{text}");
    }
}

//! One exporter per text format, behind one trait.

use crate::wrap::{MIN_VALUE_WIDTH, wrap_report, wrap_words};
use crate::{Align, Table};
use comfy_table::{Attribute, Cell, CellAlignment, Color, ColumnConstraint, ContentArrangement, Width, presets};

/// Writes a [`Table`] in one format.
pub trait Exporter {
    fn export(&self, table: &Table) -> String;

    /// The footer lines, one per line, shared by the formats that show them.
    fn footer(&self, table: &Table) -> String {
        table.footer.iter().map(|line| format!("{line}\n")).collect()
    }
}

/// A boxed table for a terminal, sized to its content or, with `width`, wrapped within that
/// many columns; with `colour`, the header is bold and the labels that mark the chosen rows
/// (`cheapest`, `fastest`, `best`) are green, in ANSI escapes (the front end decides: a
/// terminal, and no `NO_COLOR`).
#[derive(Debug, Clone, Copy)]
pub struct TerminalExporter {
    pub colour: bool,
    /// Columns of the terminal the table must fit; `None`: as wide as its content (pipes,
    /// files and snapshots).
    pub width: Option<u16>,
}

/// The narrowest a table is wrapped to: below it cells would break inside short words.
const MIN_WIDTH: u16 = 60;

impl TerminalExporter {
    /// Plain text, for pipes, files and snapshots.
    pub const PLAIN: TerminalExporter = TerminalExporter {
        colour: false,
        width: None,
    };

    /// The table alone, without its footer.
    pub fn export_table(&self, table: &Table) -> String {
        let mut bare = table.clone();
        bare.footer.clear();
        self.export(&bare)
    }
}

impl TerminalExporter {
    /// `table` fitted to the terminal: its optional columns left out, first to go first, while
    /// its words cannot fit the width, and a footer line naming those left out.
    fn fitted<'a>(&self, table: &'a Table) -> std::borrow::Cow<'a, Table> {
        let Some(width) = self.width.map(|w| w.max(MIN_WIDTH)) else {
            return std::borrow::Cow::Borrowed(table);
        };
        if needed(table) <= u32::from(width) {
            return std::borrow::Cow::Borrowed(table);
        }
        let mut fitted = table.clone();
        let mut dropped = Vec::new();
        while needed(&fitted) > u32::from(width) {
            let Some(next) = fitted.optional.first().cloned() else {
                break;
            };
            fitted = fitted.without(&next);
            if !next.is_empty() {
                dropped.push(next);
            }
        }
        if !dropped.is_empty() {
            fitted.footer.insert(
                0,
                format!(
                    "{} left out to fit {width} columns (a wider terminal, COLUMNS, or --format csv shows them)",
                    dropped.join(", ")
                ),
            );
        }
        std::borrow::Cow::Owned(fitted)
    }
}

/// The columns a boxed table needs to show its words unbroken: each column's longest word with
/// its padding, and the rules between and around them.
fn needed(table: &Table) -> u32 {
    (0..table.headers.len())
        .map(|i| u32::from(longest_word(table, i)))
        .sum::<u32>()
        + table.headers.len() as u32
        + 1
}

impl TerminalExporter {
    /// Each row as a block of `header  value` lines, for a terminal too narrow for the table's
    /// columns side by side even without its optional ones: every cell shown, long values
    /// wrapped at spaces, a blank line between rows.
    fn records(&self, table: &Table, width: usize) -> String {
        let key_width = table.headers.iter().map(|h| h.chars().count()).max().unwrap_or(0);
        let value_width = width.saturating_sub(key_width + 2).max(MIN_VALUE_WIDTH);
        let mut out = String::new();
        for (index, row) in table.rows.iter().enumerate() {
            if index > 0 {
                out.push('\n');
            }
            // A column without a header (the plan's labels) joins the row's first value.
            let (named, unnamed): (Vec<_>, Vec<_>) = table
                .headers
                .iter()
                .zip(row)
                .filter(|(_, cell)| !cell.trim().is_empty())
                .partition(|(header, _)| !header.trim().is_empty());
            let labels: Vec<&str> = unnamed.iter().map(|(_, cell)| cell.as_str()).collect();
            for (field, (header, cell)) in named.into_iter().enumerate() {
                let cell = match field {
                    0 if !labels.is_empty() => format!("{cell} · {}", labels.join(" · ")),
                    _ => cell.clone(),
                };
                out.push_str(&self.record_field(header, &cell, key_width, value_width));
            }
        }
        out
    }

    /// One field of a record: the header padded to `key_width` (bold in colour), then the
    /// value wrapped at `value_width`, its continuations under the first line (green where it
    /// marks a chosen row).
    fn record_field(&self, header: &str, value: &str, key_width: usize, value_width: usize) -> String {
        let chosen = self.colour && marks_chosen(value);
        let mut out = String::new();
        for (line, text) in wrap_words(value, value_width).into_iter().enumerate() {
            let key = format!("{:<key_width$}", if line == 0 { header } else { "" });
            let key = if self.colour {
                format!("\u{1b}[1m{key}\u{1b}[22m")
            } else {
                key
            };
            let text = if chosen {
                format!("\u{1b}[38;5;10m{text}\u{1b}[39m")
            } else {
                text
            };
            out.push_str(&format!("{key}  {text}\n"));
        }
        out
    }
}

impl Exporter for TerminalExporter {
    /// The footer lines, those longer than the terminal wrapped at spaces where there is one.
    fn footer(&self, table: &Table) -> String {
        let lines: String = table.footer.iter().map(|line| format!("{line}\n")).collect();
        match self.width {
            Some(width) => wrap_report(&lines, usize::from(width)),
            None => lines,
        }
    }

    fn export(&self, table: &Table) -> String {
        let fitted = self.fitted(table);
        if let Some(width) = self.width
            && !table.rows.is_empty()
            && needed(&fitted) > u32::from(width)
        {
            let footer = self.footer(table);
            let gap = if footer.is_empty() { "" } else { "\n" };
            return format!("{}{gap}{footer}", self.records(table, usize::from(width)));
        }
        let table = fitted.as_ref();
        let mut out = comfy_table::Table::new();
        out.load_preset(presets::UTF8_FULL_CONDENSED);
        match self.width {
            Some(width) => {
                out.set_content_arrangement(ContentArrangement::Dynamic)
                    .set_width(width.max(MIN_WIDTH));
            }
            None => {
                out.set_content_arrangement(ContentArrangement::Disabled);
            }
        }
        if self.colour {
            out.enforce_styling();
            out.set_header(
                table
                    .headers
                    .iter()
                    .map(|h| Cell::new(h).add_attribute(Attribute::Bold)),
            );
            for row in &table.rows {
                out.add_row(row.iter().map(|cell| styled(cell)));
            }
        } else {
            out.set_header(&table.headers);
            for row in &table.rows {
                out.add_row(row);
            }
        }
        for (index, align) in table.align.iter().enumerate() {
            if let Some(column) = out.column_mut(index) {
                column.set_cell_alignment(match align {
                    Align::Left => CellAlignment::Left,
                    Align::Right => CellAlignment::Right,
                });
                // Wrapped at spaces only: an instance type or a region broken in two cannot be
                // copied.
                if self.width.is_some() {
                    let word = longest_word(table, index);
                    column.set_constraint(ColumnConstraint::LowerBoundary(Width::Fixed(word)));
                }
            }
        }
        format!("{out}\n{}", self.footer(table))
    }
}

/// The longest word in column `index` (its header included), in characters, with the cell's
/// padding.
fn longest_word(table: &Table, index: usize) -> u16 {
    let header = table.headers.get(index).map(String::as_str);
    let cells = table.rows.iter().filter_map(|row| row.get(index)).map(String::as_str);
    let longest = header
        .into_iter()
        .chain(cells)
        .flat_map(str::split_whitespace)
        .map(|word| word.chars().count())
        .max()
        .unwrap_or(0);
    u16::try_from(longest + 2).unwrap_or(u16::MAX)
}

/// The columns of the terminal standard output is, where it is one.
pub fn terminal_width() -> Option<u16> {
    comfy_table::Table::new().width()
}

/// Whether a cell carries a label that marks a chosen row.
fn marks_chosen(cell: &str) -> bool {
    cell.split_whitespace()
        .any(|word| matches!(word, "cheapest" | "fastest" | "best" | "chosen"))
}

/// A cell in colour: the labels of chosen rows in green.
fn styled(cell: &str) -> Cell {
    let chosen = marks_chosen(cell);
    if chosen {
        Cell::new(cell).fg(Color::Green)
    } else {
        Cell::new(cell)
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
        let text = TerminalExporter::PLAIN.export(&sample());
        assert!(text.contains("T4, 16 GB") && text.contains("0.526"), "{text}");
        assert!(!text.contains('\u{1b}'), "no escapes in plain text: {text:?}");
    }

    #[test]
    fn a_wide_table_wraps_within_the_terminal_and_keeps_every_word() {
        let mut table = Table::new(["provider", "instance", "region", "GPUs", "note"]);
        table.push_row([
            "nebius",
            "gpu-h100-sxm_8gpu-128vcpu-1600gb",
            "eu-north1",
            "8× H100-SXM5-80GB ×32",
            "cheapest fastest pareto, 32 nodes over InfiniBand (3200 Gbps)",
        ]);
        let wide = TerminalExporter::PLAIN.export(&table);
        assert!(wide.lines().any(|l| l.chars().count() > 100), "{wide}");
        let narrow = TerminalExporter {
            colour: false,
            width: Some(100),
        }
        .export(&table);
        assert!(narrow.lines().all(|l| l.chars().count() <= 100), "{narrow}");
        for word in ["gpu-h100-sxm_8gpu-128vcpu-1600gb", "InfiniBand", "eu-north1"] {
            assert!(narrow.contains(word), "{word}: {narrow}");
        }
    }

    #[test]
    fn a_table_too_wide_for_its_words_leaves_out_its_optional_columns_and_says_so() {
        let mut table = Table::new(["instance", "region", "layout", "memory", "price"]).optional(&["layout", "memory"]);
        table.push_row([
            "gpu-b200-sxm-a_8gpu-160vcpu-1792gb",
            "asia-northeast1",
            "16·1·1",
            "120/179 GiB",
            "$44.00",
        ]);
        let at = |width: u16| {
            TerminalExporter {
                colour: false,
                width: Some(width),
            }
            .export(&table)
        };
        // Wide enough: every column stays.
        let wide = at(120);
        assert!(wide.contains("16·1·1") && !wide.contains("left out"), "{wide}");
        // Too narrow for every word: the optional columns go, in order, and the footer says so.
        let narrow = at(70);
        assert!(!narrow.contains("16·1·1") && !narrow.contains("120/179"), "{narrow}");
        assert!(narrow.contains("layout, memory left out to fit 70 columns"), "{narrow}");
        assert!(narrow.contains("gpu-b200-sxm-a_8gpu-160vcpu-1792gb") && narrow.contains("$44.00"));
        let table_lines = narrow.lines().filter(|l| l.starts_with(['┌', '│', '╞', '└']));
        assert!(table_lines.into_iter().all(|l| l.chars().count() <= 70), "{narrow}");
        // Only as many as needed go: at 80 the memory column wraps at its space and stays.
        let middle = at(80);
        assert!(
            middle.contains("120/179") && middle.contains("layout left out"),
            "{middle}"
        );
    }

    #[test]
    fn a_table_whose_words_cannot_sit_side_by_side_becomes_records_within_the_terminal() {
        let mut table =
            Table::new(["#", "provider", "instance", "region", "GPUs", "total", "why", ""]).optional(&["why"]);
        for (n, instance) in [
            (1, "gpu-b200-sxm-a_8gpu-160vcpu-1792gb"),
            (2, "sapphire-rapids-h100_8x64v128gb"),
        ] {
            table.push_row([
                n.to_string().as_str(),
                "nebius",
                instance,
                "no-kristiansand-1",
                "8× H100-SXM5-80GB",
                "$23.80",
                "best by cost: within 10 % of the lowest cost and faster than the rest of those",
                if n == 1 { "cheapest pareto" } else { "" },
            ]);
        }
        table.footer.push(
            "Prices are on-demand list prices as of the catalog's date; spot and reserved lines need --spot or --reserved."
                .to_string(),
        );
        let text = TerminalExporter {
            colour: false,
            width: Some(60),
        }
        .export(&table);
        assert!(text.lines().all(|l| l.chars().count() <= 60), "{text}");
        assert!(!text.contains('┆') && !text.contains("left out"), "{text}");
        // Every cell, the optional ones too, each word whole, under its header.
        for word in [
            "gpu-b200-sxm-a_8gpu-160vcpu-1792gb",
            "sapphire-rapids-h100_8x64v128gb",
            "H100-SXM5-80GB",
        ] {
            assert!(text.contains(word), "{word}: {text}");
        }
        assert!(text.contains("why       best by cost"), "{text}");
        assert_eq!(text.matches("provider  nebius").count(), 2, "{text}");
        // The column without a header joins the row's first line.
        assert!(text.starts_with("#         1 · cheapest pareto\n"), "{text}");
        assert!(text.contains("\n#         2\n"), "{text}");
        // The footer is wrapped at spaces too (the width check above covers its lines).
        assert!(text.contains("--reserved."), "{text}");
        // In a pipe (no width) it stays a table.
        assert!(TerminalExporter::PLAIN.export(&table).contains('┆'));
    }

    #[test]
    fn in_colour_the_header_is_bold_and_chosen_rows_are_green() {
        let mut table = sample();
        table.push_row(["H100", "cheapest pareto"]);
        let text = TerminalExporter {
            colour: true,
            width: None,
        }
        .export(&table);
        let line = |word: &str| text.lines().find(|l| l.contains(word)).unwrap_or_default().to_string();
        assert!(line("gpu").contains("\u{1b}[1m gpu"), "bold header: {text:?}");
        assert!(
            line("cheapest").contains("\u{1b}[38;5;10m cheapest pareto"),
            "green label: {text:?}"
        );
        assert!(!line("0.526").contains('\u{1b}'), "plain cells stay plain: {text:?}");
    }
}

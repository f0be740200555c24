//! Writing answers to standard output. A closed pipe (`gpuplan instances | head`) ends the
//! program quietly instead of panicking.

use gpuplan::Error;
use gpuplan::emit::{Exporter, OutputFormat, Table, TerminalExporter, first_non_finite};
use serde::Serialize;
use std::io::Write;

pub fn text(text: &str) {
    let mut stdout = std::io::stdout().lock();
    if stdout.write_all(text.as_bytes()).and_then(|()| stdout.flush()).is_err() {
        // The reader went away; there is nobody left to tell.
    }
}

/// A report for a person: on a terminal, its lines longer than the terminal wrapped at spaces
/// (its tables are fitted to the width already); as it is in a pipe or a file.
pub fn report(report: &str) {
    match terminal().width {
        Some(width) => text(&gpuplan::emit::wrap_report(report, usize::from(width))),
        None => text(report),
    }
}

/// The answer as JSON; an error instead when a number in it is NaN or infinite, which JSON
/// would print as `null`.
pub fn json<T: Serialize>(value: &T) -> Result<(), Error> {
    if let Some(path) = first_non_finite(value) {
        return Err(Error::NotANumber { path });
    }
    match serde_json::to_string_pretty(value) {
        Ok(body) => text(&format!("{body}\n")),
        Err(error) => eprintln_note(&format!("could not encode the answer as JSON: {error}")),
    }
    Ok(())
}

/// A table in any text format, or the JSON of `wire` when JSON was asked for. CSV is data: the
/// wire format's records with raw values where the answer is a list of them (the table, as
/// shown, otherwise).
pub fn listing<T: Serialize>(format: OutputFormat, table: &Table, wire: &T) -> Result<(), Error> {
    if format == OutputFormat::Csv {
        if let Some(csv) = serde_json::to_value(wire)
            .ok()
            .as_ref()
            .and_then(gpuplan::emit::data_csv)
        {
            text(&csv);
            return Ok(());
        }
    }
    if format == OutputFormat::Table {
        text(&terminal().export(table));
        return Ok(());
    }
    match format.exporter() {
        Some(exporter) => {
            text(&exporter.export(table));
            Ok(())
        }
        None => json(wire),
    }
}

/// The table writer for this terminal: colour when standard output is a terminal and
/// `NO_COLOR` (no-color.org) is unset or empty; on a terminal, wrapped within `COLUMNS` where
/// it is set, else within the terminal's width; as wide as its content in a pipe or a file.
pub fn terminal() -> TerminalExporter {
    use std::io::IsTerminal;
    let no_colour = std::env::var_os("NO_COLOR").is_some_and(|v| !v.is_empty());
    let on_terminal = std::io::stdout().is_terminal();
    let columns = std::env::var("COLUMNS").ok().and_then(|c| c.trim().parse::<u16>().ok());
    TerminalExporter {
        colour: !no_colour && on_terminal,
        width: on_terminal
            .then(|| columns.or_else(gpuplan::emit::terminal_width))
            .flatten(),
    }
}

/// A note for the person at the terminal, on standard error so pipes stay clean.
pub fn eprintln_note(note: &str) {
    let _ = writeln!(std::io::stderr(), "note: {note}");
}

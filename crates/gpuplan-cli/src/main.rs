//! The `gpuplan` command line: parse the arguments, resolve them into a request, run the use
//! case from the `gpuplan` library, print the answer. Errors are rendered once, here.

#![allow(clippy::print_stdout, clippy::print_stderr, clippy::exit)]

mod args;
mod catalog_source;
mod commands;
mod output;

use clap::Parser;
use gpuplan::Error;

fn main() {
    let cli = args::Cli::parse();
    let json_errors = cli.format == args::Format::Json;
    let status = match commands::run(cli) {
        Ok(status) => status,
        Err(error) => {
            report(&error, json_errors);
            error.exit_status()
        }
    };
    std::process::exit(status as i32);
}

/// Prints an error as `error:` / `caused by:` / `hint:` lines, or as one JSON object when the
/// user asked for JSON, on standard error.
fn report(error: &Error, json: bool) {
    let mut causes = Vec::new();
    let mut source = std::error::Error::source(error);
    while let Some(cause) = source {
        causes.push(cause.to_string());
        source = cause.source();
    }
    if json {
        let body = serde_json::json!({
            "error": { "code": error.code(), "message": error.to_string(), "causes": causes, "hint": error.hint() }
        });
        eprintln!("{body}");
        return;
    }
    eprintln!("error: {error}");
    for cause in causes {
        eprintln!("  caused by: {cause}");
    }
    if let Some(hint) = error.hint() {
        eprintln!("  hint: {hint}");
    }
}

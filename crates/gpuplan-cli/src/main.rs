//! The `gpuplan` command line: parse the arguments, resolve them into a request, run the use
//! case from the `gpuplan` library, print the answer. Errors are rendered once, here.

#![allow(clippy::print_stdout, clippy::print_stderr, clippy::exit)]

mod args;
mod catalog_source;
mod catalog_target;
mod causes;
mod commands;
mod hub;
mod input_file;
mod output;
mod prometheus;

use clap::{CommandFactory, FromArgMatches};
use gpuplan::Error;

/// Longest message line printed: a value pasted by mistake (a whole file as a flag) is cut in
/// the middle rather than echoed back in full.
const MAX_MESSAGE_CHARS: usize = 400;

/// `text` with its middle cut out when it is longer than [`MAX_MESSAGE_CHARS`].
fn shorten(text: &str) -> String {
    let count = text.chars().count();
    if count <= MAX_MESSAGE_CHARS {
        return text.to_string();
    }
    let keep = MAX_MESSAGE_CHARS / 2;
    let head: String = text.chars().take(keep).collect();
    let tail: String = text.chars().skip(count - keep).collect();
    format!("{head} … ({} characters left out) … {tail}", count - 2 * keep)
}

/// The ids of the flags given on the command line (not defaulted), which win over a job file.
fn given_flags(matches: &clap::ArgMatches) -> Vec<String> {
    matches
        .ids()
        .filter(|id| matches.value_source(id.as_str()) == Some(clap::parser::ValueSource::CommandLine))
        .map(|id| id.as_str().to_string())
        .collect()
}

fn parse() -> Result<args::Cli, clap::Error> {
    let matches = args::Cli::command().try_get_matches()?;
    let mut cli = args::Cli::from_arg_matches(&matches)?;
    if let (args::Command::Plan(plan), Some(("plan", plan_matches))) = (&mut cli.command, matches.subcommand()) {
        plan.given = given_flags(plan_matches);
    }
    Ok(cli)
}

fn main() {
    let cli = match parse() {
        Ok(cli) => cli,
        Err(error) => {
            use clap::error::ErrorKind;
            if matches!(error.kind(), ErrorKind::DisplayHelp | ErrorKind::DisplayVersion) {
                error.exit();
            }
            let text = error.render().to_string();
            let lines: Vec<String> = text.lines().map(shorten).collect();
            eprintln!("{}", lines.join("\n"));
            std::process::exit(2);
        }
    };
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
            "error": {
                "code": error.code().as_str(),
                "field": error.field().map(|f| f.key()),
                "message": shorten(&error.to_string()),
                "causes": causes.iter().map(|c| shorten(c)).collect::<Vec<_>>(),
                "hint": error.hint().map(|h| shorten(&h)),
            }
        });
        eprintln!("{body}");
        return;
    }
    eprintln!("error: {}", shorten(&error.to_string()));
    for cause in causes {
        eprintln!("  caused by: {}", shorten(&cause));
    }
    if let Some(hint) = error.hint() {
        eprintln!("  hint: {}", shorten(&hint));
    }
}

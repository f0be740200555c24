//! `gpuplan completions SHELL`: the shell's completion script, generated from the same clap
//! grammar that parses the flags, so every command, flag and enumerated value completes.

use crate::args::{Cli, CompletionsArgs};
use clap::CommandFactory;
use gpuplan::{Error, ExitStatus};

pub fn run(args: &CompletionsArgs) -> Result<ExitStatus, Error> {
    let mut command = Cli::command();
    let mut script = Vec::new();
    clap_complete::generate(args.shell, &mut command, "gpuplan", &mut script);
    crate::output::text(&String::from_utf8_lossy(&script));
    Ok(ExitStatus::Success)
}

//! `gpuplan man`: manual pages in roff, generated from the clap grammar (the `--help` text),
//! printed or written one page per command.

use crate::args::{Cli, ManArgs};
use clap::CommandFactory;
use gpuplan::{Error, ExitStatus};

pub fn run(args: &ManArgs) -> Result<ExitStatus, Error> {
    let command = Cli::command();
    let refuse = |what: &str, e: std::io::Error| Error::invalid(format!("{what}: {e}"), None);
    let Some(dir) = &args.out else {
        let mut page = Vec::new();
        clap_mangen::Man::new(command)
            .render(&mut page)
            .map_err(|e| refuse("the manual page", e))?;
        crate::output::text(&String::from_utf8_lossy(&page));
        return Ok(ExitStatus::Success);
    };
    let shown = dir.display().to_string();
    std::fs::create_dir_all(dir).map_err(|e| refuse(&shown, e))?;
    clap_mangen::generate_to(command, dir).map_err(|e| refuse(&shown, e))?;
    crate::output::text(&format!(
        "wrote gpuplan.1 and a page per command (gpuplan-plan.1, …) into {shown}; read them with `man -l {shown}/gpuplan.1`\n"
    ));
    Ok(ExitStatus::Success)
}

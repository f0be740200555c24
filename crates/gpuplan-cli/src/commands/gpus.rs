use crate::args::GpusArgs;
use crate::output;
use gpuplan::emit::wire::GpuJson;
use gpuplan::emit::{OutputFormat, gpu_detail, gpu_table};
use gpuplan::{Catalog, Error, ExitStatus, GpuAnswer, show_gpus};

pub fn run(catalog: &Catalog, args: &GpusArgs, format: OutputFormat) -> Result<ExitStatus, Error> {
    match show_gpus(catalog, args.name.as_deref())? {
        GpuAnswer::List { accelerators, note } => {
            if let Some(note) = note {
                output::eprintln_note(&note);
            }
            let wire: Vec<GpuJson> = accelerators.iter().map(|a| GpuJson::from(*a)).collect();
            output::listing(format, &gpu_table(accelerators), &wire)?;
        }
        GpuAnswer::One { accelerator, note } => {
            if let Some(note) = note {
                output::eprintln_note(&note);
            }
            match format {
                OutputFormat::Table => output::report(&gpu_detail(accelerator)),
                OutputFormat::Json => output::json(&GpuJson::from(accelerator))?,
                _ => output::listing(format, &gpu_table([accelerator]), &())?,
            }
        }
    }
    Ok(ExitStatus::Success)
}

//! `gpuplan compat`: OK, or what breaks and the fix, for a GPU, driver, CUDA release and
//! framework build together. Exit 1 when something breaks.

use crate::args::CompatArgs;
use crate::output;
use gpuplan::emit::OutputFormat;
use gpuplan::{Catalog, CompatQuery, Error, ExitStatus, compat};
use std::fmt::Write as _;

pub fn run(catalog: &Catalog, args: &CompatArgs, format: OutputFormat) -> Result<ExitStatus, Error> {
    let answer = compat(
        catalog,
        &CompatQuery {
            gpu: args.gpu.clone(),
            framework: args.framework.clone(),
            cuda: args.cuda.clone(),
            rocm: args.rocm.clone(),
            neuron: args.neuron.clone(),
            driver: args.driver.clone(),
        },
    )?;
    match format {
        OutputFormat::Json => output::json(&answer)?,
        OutputFormat::Table => {
            let mut text = String::new();
            if let (Some(gpu), Some(cc)) = (&answer.gpu, &answer.compute_capability) {
                let _ = writeln!(text, "{gpu}: compute capability {cc}");
            }
            if let (Some(gpu), Some(target)) = (&answer.gpu, &answer.gpu_target) {
                let _ = writeln!(text, "{gpu}: {target}");
            }
            for c in &answer.checks {
                let _ = writeln!(text, "{} {}: {}", if c.ok { "ok  " } else { "FAIL" }, c.check, c.detail);
                if let Some(fix) = &c.fix {
                    let _ = writeln!(text, "     fix: {fix}");
                }
            }
            if !answer.features.is_empty() {
                let (yes, no): (Vec<_>, Vec<_>) = answer.features.iter().partition(|f| f.supported);
                let names = |list: &[&gpuplan::FeatureSupport]| {
                    list.iter().map(|f| f.feature.as_str()).collect::<Vec<_>>().join(", ")
                };
                if !yes.is_empty() {
                    let _ = writeln!(text, "supports: {}", names(&yes));
                }
                if !no.is_empty() {
                    let _ = writeln!(text, "lacks: {}", names(&no));
                }
            }
            if !answer.containers.is_empty() {
                let _ = writeln!(text, "NGC containers that match: {}", answer.containers.join("; "));
            }
            let _ = writeln!(
                text,
                "{}",
                if answer.ok {
                    "compatible"
                } else {
                    "not compatible: see the fixes above"
                }
            );
            output::report(&text);
        }
        other => {
            return Err(Error::invalid(
                format!("--format {other:?} does not apply to compat"),
                Some("use table or json".to_string()),
            ));
        }
    }
    Ok(if answer.ok {
        ExitStatus::Success
    } else {
        ExitStatus::Infeasible
    })
}

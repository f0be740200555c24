//! `gpuplan probe`: this machine's GPUs as the driver reports them, against the catalog.

use crate::args::ProbeArgs;
use crate::output;
use gpuplan::emit::{OutputFormat, Table};
use gpuplan::telemetry::HostFacts;
use gpuplan::{Catalog, Error, ExitStatus, check_probe};
use std::fmt::Write as _;

/// Largest report read back.
const MAX_REPORT_BYTES: u64 = 16 * 1024 * 1024;

fn facts(args: &ProbeArgs) -> Result<HostFacts, Error> {
    if let Some(path) = &args.from {
        let text = crate::input_file::read(
            "--from",
            path,
            MAX_REPORT_BYTES,
            "give a report written by `gpuplan probe --out`",
        )?;
        return serde_json::from_str(&text).map_err(|e| {
            Error::invalid(
                format!("--from {}: {e}", path.display()),
                Some("give a report written by `gpuplan probe --out`".to_string()),
            )
        });
    }
    gpuplan_probe::read_host().map_err(|e| match e {
        gpuplan_probe::ProbeError::NoDriver(_) => Error::invalid(
            e.to_string(),
            Some("run probe on a machine with NVIDIA GPUs and their driver installed (Debian: `apt install nvidia-driver`; check with `nvidia-smi`); elsewhere, read a report with --from".to_string()),
        ),
        other => Error::invalid(other.to_string(), Some("check `nvidia-smi`".to_string())),
    })
}

pub fn run(catalog: &Catalog, args: &ProbeArgs, format: OutputFormat) -> Result<ExitStatus, Error> {
    let host = facts(args)?;
    if let Some(path) = &args.out {
        let json = serde_json::to_string_pretty(&host).map_err(|e| Error::invalid(format!("the report: {e}"), None))?;
        std::fs::write(path, json + "\n")
            .map_err(|e| Error::invalid(format!("--out {}: {e}", path.display()), None))?;
    }
    let answer = check_probe(catalog, host)?;
    let mut table = Table::new([
        "#",
        "name",
        "catalog",
        "memory GiB",
        "CC",
        "power limit W",
        "MIG",
        "ECC",
        "NVLinks",
        "notes",
    ])
    .right_aligned(&["#", "memory GiB", "power limit W", "NVLinks"]);
    for (facts, check) in answer.host.devices.iter().zip(&answer.devices) {
        let flag = |b: Option<bool>| b.map_or("–".to_string(), |on| if on { "on" } else { "off" }.to_string());
        table.push_row([
            facts.index.to_string(),
            facts.name.clone(),
            check.accelerator.clone().unwrap_or_else(|| "–".to_string()),
            format!("{:.1}", facts.memory_total_bytes as f64 / f64::from(1u32 << 30)),
            facts.compute_capability.clone().unwrap_or_else(|| "–".to_string()),
            facts.power_limit_watts.map_or("–".to_string(), |w| format!("{w:.0}")),
            flag(facts.mig_enabled),
            flag(facts.ecc_enabled),
            facts.nvlinks_active.map_or("–".to_string(), |n| n.to_string()),
            check.notes.join("; "),
        ]);
    }
    match format {
        OutputFormat::Json => output::json(&answer)?,
        OutputFormat::Table => {
            let mut text = format!(
                "driver {}, CUDA {} (the newest the driver runs)\n",
                answer.host.driver_version, answer.host.cuda_driver_version
            );
            text.push_str(&gpuplan::emit::TerminalExporter.export_table(&table));
            for link in &answer.host.links {
                let _ = writeln!(text, "GPU {} ↔ GPU {}: {}", link.from, link.to, link.level);
            }
            if let Some(path) = &args.out {
                let _ = writeln!(text, "report written to {}", path.display());
            }
            let _ = writeln!(text, "not measured: {}", answer.not_measured.join("; "));
            output::text(&text);
        }
        _ => output::listing(format, &table, &answer)?,
    }
    Ok(ExitStatus::Success)
}

//! `gpuplan probe`: this machine's GPUs as the driver reports them, against the catalog.

use crate::args::ProbeArgs;
use crate::output;
use gpuplan::emit::{OutputFormat, Table};
use gpuplan::telemetry::HostFacts;
use gpuplan::{Catalog, Error, ExitStatus, check_probe};
use std::fmt::Write as _;

/// Largest report read back.
const MAX_REPORT_BYTES: u64 = 16 * 1024 * 1024;

/// Reads a JSON file `probe` wrote (`flag` names it in errors; `hint` says what to give).
fn read_json<T: serde::de::DeserializeOwned>(flag: &str, path: &std::path::Path, hint: &str) -> Result<T, Error> {
    let text = crate::input_file::read(flag, path, MAX_REPORT_BYTES, hint)?;
    serde_json::from_str(&text)
        .map_err(|e| Error::invalid(format!("{flag} {}: {e}", path.display()), Some(hint.to_string())))
}

fn facts(args: &ProbeArgs) -> Result<HostFacts, Error> {
    if let Some(path) = &args.from {
        return read_json("--from", path, "give a report written by `gpuplan probe --out`");
    }
    let mut host = gpuplan_probe::read_host().map_err(probe_error)?;
    if !args.facts_only {
        let devices = u32::try_from(host.devices.len()).unwrap_or(u32::MAX);
        let settings = gpuplan_probe::benchmarks::BenchSettings::default();
        host.benchmarks = Some(gpuplan_probe::measure(devices, &settings).map_err(probe_error)?);
    }
    Ok(host)
}

fn probe_error(e: gpuplan_probe::ProbeError) -> Error {
    use gpuplan_probe::ProbeError;
    let hint = match &e {
        ProbeError::NoDriver(_) => {
            "run probe on a machine with NVIDIA GPUs and their driver installed (Debian: `apt install nvidia-driver`; check with `nvidia-smi`); elsewhere, read a report with --from"
        }
        ProbeError::NoCudaLibrary(_) => {
            "install the CUDA runtime libraries (`apt install libcublas12`, or run in an NGC container), or pass --facts-only"
        }
        ProbeError::Driver(_) | ProbeError::Cuda(_) => "check `nvidia-smi`; --facts-only skips the measurements",
        ProbeError::NoPython(_) => {
            "install Python with PyTorch (or run in an NGC PyTorch container), or name it with --python"
        }
        ProbeError::Poc(_) => "check that `python3 -c 'import torch; print(torch.cuda.is_available())'` prints True",
    };
    Error::invalid(e.to_string(), Some(hint.to_string()))
}

/// Reads a calibration file (`--calibration`).
pub(crate) fn read_calibration(path: &std::path::Path) -> Result<gpuplan::model::CalibrationProfile, Error> {
    read_json(
        "--calibration",
        path,
        "give a file written by `gpuplan probe --calibration-out`",
    )
}

fn write_json(flag: &str, path: &std::path::Path, value: &impl serde::Serialize) -> Result<(), Error> {
    let json = serde_json::to_string_pretty(value).map_err(|e| Error::invalid(format!("{flag}: {e}"), None))?;
    std::fs::write(path, json + "\n").map_err(|e| Error::invalid(format!("{flag} {}: {e}", path.display()), None))
}

pub fn run(catalog: &Catalog, args: &ProbeArgs, format: OutputFormat) -> Result<ExitStatus, Error> {
    if args.poc {
        return run_poc(catalog, args, format);
    }
    let host = facts(args)?;
    if let Some(path) = &args.out {
        write_json("--out", path, &host)?;
    }
    let answer = check_probe(catalog, host)?;
    if let Some(path) = &args.calibration_out {
        let Some(calibration) = &answer.calibration else {
            return Err(Error::invalid(
                "--calibration-out: the report has no measurements",
                Some("run `gpuplan probe` without --facts-only on the GPU machine".to_string()),
            ));
        };
        write_json("--calibration-out", path, calibration)?;
    }
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
            text.push_str(&crate::output::terminal().export_table(&table));
            for link in &answer.host.links {
                let _ = writeln!(text, "GPU {} ↔ GPU {}: {}", link.from, link.to, link.level);
            }
            measurements(&mut text, &answer);
            if let Some(path) = &args.out {
                let _ = writeln!(text, "report written to {}", path.display());
            }
            if let Some(path) = &args.calibration_out {
                let _ = writeln!(text, "calibration written to {}", path.display());
            }
            if !answer.not_measured.is_empty() {
                let _ = writeln!(text, "not measured: {}", answer.not_measured.join("; "));
            }
            output::report(&text);
        }
        _ => output::listing(format, &table, &answer)?,
    }
    Ok(ExitStatus::Success)
}

/// The measured figures per GPU, the all-reduce, and the calibration they give.
fn measurements(text: &mut String, answer: &gpuplan::ProbeAnswer) {
    let Some(benchmarks) = &answer.host.benchmarks else {
        return;
    };
    for device in &benchmarks.devices {
        let gemm: Vec<String> = device
            .gemm
            .iter()
            .map(|g| format!("{} {:.1}", g.precision, g.tflops))
            .collect();
        let _ = writeln!(
            text,
            "GPU {}: GEMM TFLOPS {}; memory copy {}",
            device.index,
            gemm.join(", "),
            device
                .memory_copy_gb_per_s
                .map_or("–".to_string(), |rate| format!("{rate:.0} GB/s"))
        );
    }
    if let Some(all_reduce) = &benchmarks.all_reduce {
        let _ = writeln!(
            text,
            "all-reduce across {} GPUs: bus bandwidth {:.0} GB/s ({} MiB per GPU)",
            all_reduce.gpus,
            all_reduce.bus_gb_per_s,
            all_reduce.bytes >> 20
        );
    }
    if let Some(calibration) = &answer.calibration {
        for gpu in &calibration.gpus {
            let _ = writeln!(text, "calibration {}", gpu.summary());
            for line in &gpu.evidence {
                let _ = writeln!(text, "  {line}");
            }
        }
    }
}

/// `probe --poc`: runs (or, with --from, reads) the proof of concept and compares it with the
/// estimates.
pub fn run_poc(catalog: &Catalog, args: &ProbeArgs, format: OutputFormat) -> Result<ExitStatus, Error> {
    let report = match &args.from {
        Some(path) => read_json("--from", path, "give a report written by `gpuplan probe --poc --out`")?,
        None => run_poc_here(catalog, args)?,
    };
    if let Some(path) = &args.out {
        write_json("--out", path, &report)?;
    }
    let calibration = args.calibration.as_deref().map(read_calibration).transpose()?;
    let answer = gpuplan::compare_poc(catalog, report, calibration.as_ref())?;
    let mut table = Table::new([
        "GPUs",
        "GPU",
        "what",
        "measured",
        "estimated",
        "calibrated",
        "measured ÷ estimated",
    ])
    .right_aligned(&["GPUs", "measured", "estimated", "calibrated", "measured ÷ estimated"]);
    for run in &answer.runs {
        if run.oom {
            table.push_row([
                run.gpus.to_string(),
                run.gpu.clone(),
                "training".to_string(),
                "out of memory".to_string(),
                if run.estimated_fit { "fits" } else { "does not fit" }.to_string(),
                "–".to_string(),
                "–".to_string(),
            ]);
        }
        for f in &run.figures {
            table.push_row([
                run.gpus.to_string(),
                run.gpu.clone(),
                format!("{} ({})", f.what, f.unit),
                format!("{:.1}", f.measured),
                format!("{:.1}", f.estimated),
                f.calibrated.map_or("–".to_string(), |c| format!("{c:.1}")),
                format!("{:.2}", f.measured / f.estimated),
            ]);
        }
    }
    match format {
        OutputFormat::Json => output::json(&answer)?,
        OutputFormat::Table => {
            let first = answer.report.runs.first();
            let mut text = format!(
                "proof of concept: {} · {} · PyTorch {}\n",
                answer.report.model,
                answer.report.task,
                first.map_or("–", |r| r.torch.as_str())
            );
            text.push_str(&crate::output::terminal().export_table(&table));
            if let Some((measured, estimated)) = answer.scaling_efficiency {
                let _ = writeln!(
                    text,
                    "scaling efficiency: measured {:.0} %, estimated {:.0} %",
                    measured * 100.0,
                    estimated * 100.0
                );
            }
            for note in &answer.notes {
                let _ = writeln!(text, "note: {note}");
            }
            if let Some(path) = &args.out {
                let _ = writeln!(text, "report written to {}", path.display());
            }
            output::report(&text);
        }
        _ => output::listing(format, &table, &answer)?,
    }
    Ok(ExitStatus::Success)
}

fn run_poc_here(catalog: &Catalog, args: &ProbeArgs) -> Result<gpuplan::telemetry::PocReport, Error> {
    let model = args.model.clone().ok_or_else(|| {
        Error::invalid(
            "--poc needs --model",
            Some("name a catalog model (`gpuplan models`), or read a report with --from".to_string()),
        )
    })?;
    let task_name = args.task.clone().unwrap_or_else(|| "lora".to_string());
    let task: gpuplan::model::Task = task_name
        .parse()
        .map_err(|e| Error::invalid(format!("--task: {e}"), Some("pretrain, finetune or lora".to_string())))?;
    let request = gpuplan::PocRequest {
        model: model.clone(),
        task,
        seq: args.seq,
        micro_batch: args.micro_batch,
        lora_rank: args.lora_rank,
        checkpointing: args.checkpointing,
        steps: args.steps,
    };
    let shape = gpuplan::poc_shape(catalog, &request)?;
    let gpus = match args.gpus {
        Some(0) => return Err(Error::invalid("--gpus must be at least 1", None)),
        Some(n) => n,
        None => u32::try_from(gpuplan_probe::read_host().map_err(probe_error)?.devices.len()).unwrap_or(1),
    };
    let python = args.python.as_deref().unwrap_or("python3");
    let runs = gpuplan_probe::poc::run(python, &shape, gpus).map_err(probe_error)?;
    Ok(gpuplan::telemetry::PocReport {
        model,
        task: task_name,
        shape,
        runs,
    })
}

//! `gpuplan rightsize`: telemetry files in, per-GPU and per-job use, findings with their
//! monthly savings out; optionally the hourly history `forecast` reads.

use crate::args::RightsizeArgs;
use crate::output;
use gpuplan::emit::{Money, OutputFormat, Table};
use gpuplan::telemetry::{Sample, parse_dcgm, parse_nvidia_smi_csv, parse_nvidia_smi_xml};
use gpuplan::{Catalog, Error, ExitStatus, RightsizeQuery, rightsize};
use std::fmt::Write as _;
use std::path::Path;

/// Largest telemetry file read: months of 5-second samples of a node.
const MAX_TELEMETRY_BYTES: u64 = 1024 * 1024 * 1024;

fn read(flag: &str, path: &Path) -> Result<String, Error> {
    crate::input_file::read(
        flag,
        path,
        MAX_TELEMETRY_BYTES,
        "give an nvidia-smi CSV log or a DCGM scrape",
    )
}

fn samples(args: &RightsizeArgs) -> Result<Vec<Sample>, Error> {
    if args.nvidia_smi.is_empty() && args.dcgm.is_empty() && args.prometheus.is_none() {
        return Err(Error::invalid(
            "no telemetry given",
            Some(
                "give --nvidia-smi FILE (a CSV log), --dcgm FILE (a DCGM exporter scrape) or --prometheus URL"
                    .to_string(),
            ),
        ));
    }
    let mut samples = Vec::new();
    if let Some(url) = &args.prometheus {
        let until = match &args.until {
            Some(text) => text
                .parse::<jiff::Timestamp>()
                .map_err(|e| {
                    Error::invalid(
                        format!("--until `{text}`: {e}"),
                        Some("write it as 2024-05-01T13:00:00Z".to_string()),
                    )
                })?
                .as_second(),
            None => jiff::Timestamp::now().as_second(),
        };
        samples.extend(crate::prometheus::read(url, &args.selector, args.since, until)?);
    }
    for path in &args.nvidia_smi {
        let text = read("--nvidia-smi", path)?;
        // A CSV log, or `nvidia-smi -q -x` snapshots (XML).
        let parsed = if text.trim_start().starts_with('<') {
            parse_nvidia_smi_xml(&text)
        } else {
            parse_nvidia_smi_csv(&text)
        };
        samples.extend(parsed.map_err(|e| Error::invalid(format!("{}: {e}", path.display()), None))?);
    }
    for path in &args.dcgm {
        let text = read("--dcgm", path)?;
        let modified = std::fs::metadata(path)
            .and_then(|m| m.modified())
            .ok()
            .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
            .map_or(0, |d| d.as_secs() as i64);
        samples
            .extend(parse_dcgm(&text, modified).map_err(|e| Error::invalid(format!("{}: {e}", path.display()), None))?);
    }
    Ok(samples)
}

fn percent(value: Option<f64>) -> String {
    value.map_or("–".to_string(), |v| format!("{:.0} %", v * 100.0))
}

fn gib(bytes: Option<u64>) -> String {
    bytes.map_or("–".to_string(), |b| {
        format!("{:.1}", b as f64 / f64::from(1u32 << 30))
    })
}

pub fn run(catalog: &Catalog, args: &RightsizeArgs, format: OutputFormat, money: &Money) -> Result<ExitStatus, Error> {
    if !(0.0..=1.0).contains(&args.headroom) {
        return Err(Error::invalid(
            format!("--headroom {} is not between 0 and 1", args.headroom),
            None,
        ));
    }
    let samples = samples(args)?;
    if let Some(path) = &args.history {
        write_history(path, &samples)?;
    }
    let answer = rightsize(
        catalog,
        &RightsizeQuery {
            samples,
            price_per_gpu_hour: args.price,
            providers: args.providers.clone(),
            headroom: args.headroom,
        },
    )?;
    let per_hour = money.per("GPU-h");
    let mut table = Table::new([
        "gpu",
        "name",
        "jobs",
        "hours",
        "util p50",
        "util p95",
        "tensor",
        "mem peak GiB",
        "of GiB",
        "idle h",
        per_hour.as_str(),
    ])
    .right_aligned(&[
        "hours",
        "util p50",
        "util p95",
        "tensor",
        "mem peak GiB",
        "of GiB",
        "idle h",
        per_hour.as_str(),
    ]);
    for g in &answer.gpus {
        table.push_row([
            g.gpu.clone(),
            g.accelerator.clone().unwrap_or_else(|| g.name.clone()),
            g.jobs.join(", "),
            format!("{:.1}", g.hours),
            percent(g.utilisation_p50),
            percent(g.utilisation_p95),
            percent(g.tensor_active_mean),
            gib(g.memory_peak_bytes),
            gib(g.memory_total_bytes),
            format!("{:.1}", g.idle_hours),
            g.usd_per_gpu_hour
                .map_or("–".to_string(), |r| format!("{:.2}", money.amount(r))),
        ]);
    }
    match format {
        OutputFormat::Json => output::json(&answer)?,
        OutputFormat::Table => {
            let mut text = crate::output::terminal().export_table(&table);
            for f in &answer.findings {
                let saving = f
                    .savings_usd_per_month
                    .map_or(String::new(), |s| format!(" — saves {}/month", money.format(s, 0)));
                let _ = writeln!(text, "{}: {}: {}{saving}", f.kind, f.subject, f.what);
            }
            let _ = writeln!(
                text,
                "savings: {}/month (findings that change different GPUs, the largest first)",
                money.format(answer.savings_usd_per_month, 0)
            );
            if let Some(path) = &args.history {
                let _ = writeln!(text, "hourly history written to {}", path.display());
            }
            let _ = writeln!(text, "assumptions: {}", answer.assumptions.join("; "));
            output::report(&text);
        }
        _ => output::listing(format, &table, &answer)?,
    }
    Ok(ExitStatus::Success)
}

/// Busy GPU-hours per hour as `timestamp,value` rows.
fn write_history(path: &Path, samples: &[Sample]) -> Result<(), Error> {
    let mut text = "timestamp,value\n".to_string();
    for (hour, busy) in gpuplan::telemetry::usage_per_hour(samples) {
        let stamp = jiff::Timestamp::from_second(hour)
            .map_err(|e| Error::invalid(format!("a sample's time: {e}"), None))?
            .strftime("%Y-%m-%dT%H:%M");
        let _ = writeln!(text, "{stamp},{busy:.3}");
    }
    std::fs::write(path, text).map_err(|e| Error::invalid(format!("--history {}: {e}", path.display()), None))
}

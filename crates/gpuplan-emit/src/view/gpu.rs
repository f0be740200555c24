use super::cell;
use crate::Table;
use gpuplan_model::{Accelerator, Precision};
use std::fmt::Write as _;

/// The accelerator listing of `gpuplan gpus`.
pub fn gpu_table<'a>(accelerators: impl IntoIterator<Item = &'a Accelerator>) -> Table {
    let mut table = Table::new([
        "id",
        "vendor",
        "architecture",
        "memory",
        "bandwidth",
        "fp32",
        "bf16/fp16",
        "fp8",
        "int8",
        "TDP",
        "scale-up link",
        "year",
    ])
    .right_aligned(&["memory", "bandwidth", "fp32", "bf16/fp16", "fp8", "int8", "TDP", "year"])
    .optional(&["scale-up link", "year", "int8", "fp32", "TDP", "architecture"]);
    for a in accelerators {
        let half = a
            .peak(Precision::Bf16)
            .or(a.peak(Precision::Fp16))
            .map(|r| r.as_tflops());
        table.push_row([
            a.id.to_string(),
            a.vendor.clone(),
            a.architecture.clone(),
            a.memory.to_string(),
            a.memory_bandwidth.map_or("-".to_string(), |b| b.to_string()),
            cell(a.peak(Precision::Fp32).map(|r| r.as_tflops())),
            cell(half),
            cell(a.peak(Precision::Fp8).map(|r| r.as_tflops())),
            cell(a.peak(Precision::Int8).map(|r| r.as_tflops())),
            a.tdp.map_or("-".to_string(), |w| w.to_string()),
            link(a),
            a.release_year.map_or("-".to_string(), |y| y.to_string()),
        ]);
    }
    table.footer.push(
        "Peak throughput: dense TFLOPS (TOPS for int8), no sparsity. `gpuplan gpus ID` shows sources.".to_string(),
    );
    table
}

fn link(a: &Accelerator) -> String {
    match a.nvlink {
        Some(nvlink) => format!("NVLink{} {}", nvlink.generation, nvlink.bandwidth),
        None => a
            .pcie_generation
            .map_or("-".to_string(), |generation| format!("PCIe {generation}")),
    }
}

/// Everything known about one accelerator, with the source of each number.
pub fn gpu_detail(a: &Accelerator) -> String {
    let mut text = String::new();
    let mut line = |label: &str, value: String| {
        let _ = writeln!(text, "  {label:<22} {value}");
    };
    line("id", a.id.to_string());
    line("name", a.name.clone());
    line("vendor / architecture", format!("{} {}", a.vendor, a.architecture));
    if let Some(cc) = &a.compute_capability {
        line("compute capability", cc.clone());
    }
    if let Some(form) = &a.form_factor {
        line("form factor", form.clone());
    }
    if let Some(year) = a.release_year {
        line("released", year.to_string());
    }
    let reported = a
        .reported_memory
        .map(|m| format!(" ({m} reported by the driver)"))
        .unwrap_or_default();
    line(
        "memory",
        format!(
            "{}{}{reported}",
            a.memory,
            a.memory_type.as_ref().map(|t| format!(" {t}")).unwrap_or_default()
        )
        .trim_end()
        .to_string(),
    );
    line(
        "memory bandwidth",
        a.memory_bandwidth.map_or("unknown".to_string(), |b| b.to_string()),
    );
    line("TDP", a.tdp.map_or("unknown".to_string(), |w| w.to_string()));
    line(
        "host interface",
        a.pcie_generation
            .map_or("unknown".to_string(), |g| format!("PCIe Gen{g}")),
    );
    line(
        "scale-up link",
        match (a.nvlink, &a.interconnect) {
            (Some(nvlink), _) => format!("NVLink {} — {} per GPU", nvlink.generation, nvlink.bandwidth),
            (None, Some(text)) => text.clone(),
            (None, None) => "none known".to_string(),
        },
    );
    if let Some(domain) = a.scale_up_domain {
        line("scale-up domain", format!("{domain} GPUs on that link"));
    }
    if let Some(node) = a.gpus_per_node {
        let gpus = if node == 1 { "GPU" } else { "GPUs" };
        line("node", format!("{node} {gpus}, as its systems hold"));
    }
    if !a.aliases.is_empty() {
        line("aliases", a.aliases.join(", "));
    }
    let _ = writeln!(text, "\n  peak throughput (TFLOPS; TOPS for integer formats)");
    let _ = writeln!(text, "  {:<10} {:>12} {:>12}", "precision", "dense", "sparse");
    for precision in Precision::ALL {
        let dense = a.dense.get(precision).map(|r| r.as_tflops());
        let sparse = a.sparse.get(precision).map(|r| r.as_tflops());
        if dense.is_some() || sparse.is_some() {
            let _ = writeln!(
                text,
                "  {:<10} {:>12} {:>12}",
                precision.to_string(),
                cell(dense),
                cell(sparse)
            );
        }
    }
    let _ = writeln!(text, "\n  sources");
    for (index, source) in a.sources.iter().enumerate() {
        let _ = writeln!(text, "  [{}] {} (read {})", index + 1, source.title, source.as_of);
        let _ = writeln!(text, "      {}", source.url);
        let _ = writeln!(text, "      covers: {}", source.covers.join(", "));
        if let Some(note) = &source.note {
            let _ = writeln!(text, "      note: {note}");
        }
    }
    text
}

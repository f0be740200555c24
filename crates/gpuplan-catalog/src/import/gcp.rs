//! Google Cloud prices a GPU VM in two rows: the machine type (host only) and the GPUs
//! attached to it (a row with no instance type). This joins them per zone into rows that
//! carry the whole price.
//!
//! References: Google Cloud, "GPU machine types",
//! <https://cloud.google.com/compute/docs/gpus> (A2/A3/A4 GPU counts per machine type,
//! G2 L4 counts, N1 GPU attachment limits).

use super::report::ProviderReport;
use super::sky_row::SkyRow;
use std::collections::HashMap;

/// GPUs built into an accelerator-optimised machine type: `(prefix, SkyPilot name)`, the
/// count being the `-Ng` suffix.
const BUILT_IN: &[(&str, &str)] = &[
    ("a2-highgpu-", "A100"),
    ("a2-megagpu-", "A100"),
    ("a2-ultragpu-", "A100-80GB"),
    ("a3-highgpu-", "H100"),
    ("a3-edgegpu-", "H100"),
    ("a3-megagpu-", "H100-MEGA"),
    ("a3-ultragpu-", "H200"),
    ("a4-highgpu-", "B200"),
];

/// L4 GPUs that come with each G2 machine type (GCP documentation).
const G2_L4_COUNT: &[(&str, u32)] = &[
    ("g2-standard-4", 1),
    ("g2-standard-8", 1),
    ("g2-standard-12", 1),
    ("g2-standard-16", 1),
    ("g2-standard-24", 2),
    ("g2-standard-32", 1),
    ("g2-standard-48", 4),
    ("g2-standard-96", 8),
];

/// GPUs attached to N1 machine types, with GCP's accelerator type names.
const N1_ATTACHABLE: &[&str] = &["T4", "V100", "P100", "P4"];

type GpuKey = (String, String, u32);

pub(crate) fn join(rows: Vec<(String, SkyRow)>, report: &mut ProviderReport) -> Vec<(String, SkyRow)> {
    let mut gpu_rows: HashMap<GpuKey, SkyRow> = HashMap::new();
    let mut hosts = Vec::new();
    for (source, row) in rows {
        match (&row.accelerator_name, row.instance_type.is_empty()) {
            (Some(name), true) => {
                let count = row.accelerator_count.unwrap_or(0.0).round() as u32;
                let zone = row.zone.clone().unwrap_or_default();
                gpu_rows.insert((zone, name.clone(), count), row);
            }
            _ => hosts.push((source, row)),
        }
    }

    let mut joined = Vec::new();
    for (source, host) in hosts {
        let zone = host.zone.clone().unwrap_or_default();
        let attach = |name: &str, count: u32, instance_type: String, report: &mut ProviderReport| {
            let key = (zone.clone(), name.to_string(), count);
            let Some(gpu) = gpu_rows.get(&key) else {
                report.drop_row(
                    "GCP machine type without a GPU price row in its zone",
                    format!("{instance_type} {zone}"),
                );
                return None;
            };
            let spot = match (host.spot, gpu.spot) {
                (Some(host_spot), Some(gpu_spot)) if gpu.price.is_some_and(|p| gpu_spot < p) => {
                    Some(host_spot + gpu_spot)
                }
                (_, Some(_)) => {
                    report.drop_price(
                        "GCP GPU row's spot price above its on-demand price; spot dropped",
                        format!("{name} x{count} {zone}"),
                    );
                    None
                }
                _ => None,
            };
            Some(SkyRow {
                instance_type,
                accelerator_name: Some(name.to_string()),
                accelerator_count: Some(f64::from(count)),
                gpu_info: gpu.gpu_info.clone(),
                price: match (host.price, gpu.price) {
                    (Some(h), Some(g)) => Some(h + g),
                    _ => None,
                },
                spot,
                ..host.clone()
            })
        };

        let machine = host.instance_type.as_str();
        if let Some((_, name)) = BUILT_IN.iter().find(|(prefix, _)| machine.starts_with(prefix)) {
            let count = machine
                .rsplit('-')
                .find_map(|part| part.strip_suffix('g').and_then(|n| n.parse::<u32>().ok()));
            match count {
                Some(count) => {
                    joined.extend(attach(name, count, machine.to_string(), report).map(|r| (source.clone(), r)))
                }
                None => report.drop_row("GCP machine type with no GPU count in its name", machine.to_string()),
            }
        } else if let Some((_, count)) = G2_L4_COUNT.iter().find(|(name, _)| *name == machine) {
            joined.extend(attach("L4", *count, machine.to_string(), report).map(|r| (source.clone(), r)));
        } else if machine.starts_with("n1-standard-") || machine.starts_with("n1-highmem-") {
            let vcpus = host.vcpus.round() as u32;
            for name in N1_ATTACHABLE {
                for count in [1u32, 2, 4, 8] {
                    let fits = vcpus == 8 * count || (count == 1 && vcpus == 4);
                    let sold = gpu_rows.contains_key(&(zone.clone(), (*name).to_string(), count));
                    if fits && sold {
                        let instance_type = format!("{machine}+{name}x{count}");
                        joined.extend(attach(name, count, instance_type, report).map(|r| (source.clone(), r)));
                    }
                }
            }
            // The host alone is a CPU-only offering.
            joined.push((source, host));
        } else {
            joined.push((source, host));
        }
    }
    joined
}

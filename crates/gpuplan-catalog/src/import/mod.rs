//! Imports a snapshot of the public SkyPilot catalog (`catalogs/<version>/<cloud>/vms*.csv`)
//! into gpuplan offerings.
//!
//! The source files differ per cloud in column order and carry known traps: $0.00 spot
//! prices on marketplaces, round placeholder prices, spot prices above on-demand, GPU-only
//! rows that must be added to a host price (GCP), per-GPU memory written as a total and the
//! reverse, memory in GB where MiB is promised, wrong accelerator counts. Every such row is
//! repaired or dropped here with a recorded reason ([`ImportReport`]); a placeholder price
//! never reaches a user as a real one.
//!
//! The importer is pure: it takes file contents and returns offerings plus a report. The
//! `xtask import` command reads the snapshot and writes `data/offerings/*.csv`.

mod accelerator_names;
mod gcp;
mod instance_traits;
mod offering_csv;
mod price_checks;
mod report;
mod sky_row;

pub use offering_csv::write_offerings_csv;
pub use report::{ImportReport, ProviderReport};

use crate::AcceleratorIndex;
use gpuplan_model::{Bytes, Date, Offering, ProviderId};
use sky_row::SkyRow;
use std::collections::{BTreeMap, HashSet};

/// Clouds whose thousands of CPU-only sizes are left out: the planner needs a few CPU-only
/// shapes for classical ML, not every general-purpose VM of every cloud.
const CPU_ONLY_NOT_IMPORTED: [&str; 2] = ["azure", "oci"];

/// One file of the snapshot.
#[derive(Debug, Clone)]
pub struct SnapshotFile {
    /// The SkyPilot cloud name (`aws`, `gcp`, `lambda`, …), from the folder it sits in.
    pub cloud: String,
    /// How rows from this file cite their source, e.g. `skypilot-catalog v9/aws/vms.csv @2c3d7ea`.
    pub source: String,
    pub text: String,
}

/// What the import needs besides the files.
#[derive(Debug, Clone)]
pub struct ImportOptions {
    /// The date the snapshot was taken; every imported row carries it.
    pub as_of: Date,
    /// `(provider, instance_type, region)` of hand-curated rows, which supersede imported ones.
    pub curated: HashSet<(String, String, String)>,
}

/// A snapshot file the importer cannot read at all.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{source_name}: {message}")]
pub struct ImportError {
    pub source_name: String,
    pub message: String,
}

/// The imported offerings, per provider, and what was repaired or dropped on the way.
#[derive(Debug, Clone)]
pub struct Imported {
    pub offerings: BTreeMap<ProviderId, Vec<Offering>>,
    pub report: ImportReport,
}

/// Imports every file; GCP host and GPU rows are joined across its files.
pub fn import_skypilot(
    files: &[SnapshotFile],
    accelerators: &AcceleratorIndex,
    options: &ImportOptions,
) -> Result<Imported, ImportError> {
    let mut report = ImportReport::default();
    let mut rows_by_cloud: BTreeMap<String, Vec<(String, SkyRow)>> = BTreeMap::new();
    for file in files {
        let rows = sky_row::parse(&file.text).map_err(|message| ImportError {
            source_name: file.source.clone(),
            message,
        })?;
        let provider = report.provider(&file.cloud);
        for row in rows {
            provider.rows_read += 1;
            match row {
                Ok(row) => rows_by_cloud
                    .entry(file.cloud.clone())
                    .or_default()
                    .push((file.source.clone(), row)),
                Err(problem) => provider.drop_row("malformed row", problem),
            }
        }
    }

    let mut offerings: BTreeMap<ProviderId, Vec<Offering>> = BTreeMap::new();
    for (cloud, rows) in rows_by_cloud {
        let provider_report = report.provider(&cloud);
        let rows = if cloud == "gcp" {
            gcp::join(rows, provider_report)
        } else {
            rows
        };
        let mut built = Vec::new();
        for (source, row) in rows {
            if let Some(offering) = build_offering(&cloud, &source, &row, accelerators, options, provider_report) {
                built.push(offering);
            }
        }
        let collapsed = collapse_zones(built, provider_report);
        provider_report.offerings_written = collapsed.len();
        if !collapsed.is_empty() {
            offerings.insert(ProviderId::new(&cloud), collapsed);
        }
    }
    Ok(Imported { offerings, report })
}

fn build_offering(
    cloud: &str,
    source: &str,
    row: &SkyRow,
    accelerators: &AcceleratorIndex,
    options: &ImportOptions,
    report: &mut ProviderReport,
) -> Option<Offering> {
    let label = || format!("{} {}", row.instance_type, row.region.as_deref().unwrap_or("-"));
    let region = row.region.clone();
    if options.curated.contains(&(
        cloud.to_string(),
        row.instance_type.clone(),
        region.clone().unwrap_or_default(),
    )) {
        report.drop_row("superseded by a curated row", label());
        return None;
    }
    if row.accelerator_name.is_none() && CPU_ONLY_NOT_IMPORTED.contains(&cloud) {
        report.drop_row(
            "CPU-only VM size (CPU-only shapes are imported from GCP, Lambda, RunPod, Nebius and Seeweb)",
            label(),
        );
        return None;
    }

    let mut notes = Vec::new();
    let (accelerator, count, accelerator_memory) = match &row.accelerator_name {
        None => (None, 0, None),
        Some(name) => {
            let mut count = row.accelerator_count.unwrap_or(0.0).round() as u32;
            if let Some(fixed) = instance_traits::corrected_count(cloud, &row.instance_type) {
                if fixed != count {
                    report.repair(
                        "accelerator count corrected from the provider's documentation",
                        format!("{}: {count} → {fixed}", row.instance_type),
                    );
                    notes.push(format!("accelerator count corrected from {count} to {fixed}"));
                    count = fixed;
                }
            }
            if count == 0 {
                report.drop_row("accelerator without a count", label());
                return None;
            }
            let mapped = match accelerator_names::map(cloud, name, row, count, accelerators) {
                Ok(mapped) => mapped,
                Err(reason) => {
                    report.drop_row(&reason, format!("{name} ({}, line {})", row.instance_type, row.line));
                    return None;
                }
            };
            if let Some(assumption) = mapped.assumption {
                notes.push(assumption.to_string());
            }
            let Some(accelerator) = accelerators.get(mapped.id.as_str()) else {
                report.drop_row("accelerator not in the catalog", name.clone());
                return None;
            };
            if let Some(claimed) = row.claimed_memory_per_gpu(cloud, count) {
                let relative = (claimed.as_gib() - accelerator.memory.as_gib()).abs() / accelerator.memory.as_gib();
                if relative > 0.10 {
                    report.repair(
                        "GPU memory in the source disagrees with the datasheet; total recomputed",
                        format!("{} {}: {} per GPU claimed", row.instance_type, accelerator.id, claimed),
                    );
                }
            }
            if let Some(total) = row.claimed_total_memory() {
                let per_gpu = row.claimed_memory_per_gpu(cloud, count);
                if count > 1 && per_gpu.is_some_and(|per_gpu| per_gpu == total) {
                    report.repair(
                        "TotalGpuMemoryInMiB is the per-GPU size, not the total; total recomputed",
                        format!("{} ({count} GPUs): {total}", row.instance_type),
                    );
                }
            }
            (Some(mapped.id), count, Some(accelerator.memory * count))
        }
    };

    let prices = price_checks::check(cloud, row, count, report, &label());
    notes.extend(prices.notes);
    let traits = instance_traits::traits(
        cloud,
        &row.instance_type,
        accelerator.as_ref().map(|a| a.as_str()),
        count,
    );
    Some(Offering {
        provider: ProviderId::new(cloud),
        instance_type: row.instance_type.clone(),
        region,
        zone: row.zone.clone(),
        accelerator,
        accelerator_count: count,
        accelerator_memory,
        vcpus: row.vcpus,
        memory: Bytes::from_gib(row.memory_gib),
        local_disk: row.local_disk_gb.map(Bytes::from_gb),
        network: traits.network,
        gpu_interconnect: traits.gpu_interconnect,
        node_network: traits.node_network,
        on_demand: prices.on_demand,
        spot: prices.spot,
        billing_granularity: traits.billing,
        source: source.to_string(),
        as_of: options.as_of,
        notes: (!notes.is_empty()).then(|| notes.join("; ")),
        fabric: None,
        native: None,
        list_on_demand: None,
        list_spot: None,
        price_flags: Vec::new(),
    })
}

/// One row per `(instance type, region)` when every zone has the same prices; one row per
/// zone otherwise. Duplicate keys keep the cheapest row.
fn collapse_zones(offerings: Vec<Offering>, report: &mut ProviderReport) -> Vec<Offering> {
    let mut groups: BTreeMap<(String, Option<String>), Vec<Offering>> = BTreeMap::new();
    for offering in offerings {
        groups
            .entry((offering.instance_type.clone(), offering.region.clone()))
            .or_default()
            .push(offering);
    }
    let mut result = Vec::new();
    for (_, mut group) in groups {
        let same_prices = group
            .windows(2)
            .all(|pair| pair[0].on_demand == pair[1].on_demand && pair[0].spot == pair[1].spot);
        let same_shape = group.windows(2).all(|pair| {
            pair[0].accelerator == pair[1].accelerator
                && pair[0].accelerator_count == pair[1].accelerator_count
                && pair[0].vcpus == pair[1].vcpus
        });
        if same_prices && same_shape {
            let mut first = group.swap_remove(0);
            first.zone = None;
            result.push(first);
            continue;
        }
        let mut seen: BTreeMap<Option<String>, Offering> = BTreeMap::new();
        for offering in group {
            match seen.get(&offering.zone) {
                Some(kept) if cheaper_or_equal(kept, &offering) => {
                    report.drop_row(
                        "duplicate of another row with the same key (kept the cheapest)",
                        format!(
                            "{} {}",
                            offering.instance_type,
                            offering.region.as_deref().unwrap_or("-")
                        ),
                    );
                }
                _ => {
                    if seen.contains_key(&offering.zone) {
                        report.drop_row(
                            "duplicate of another row with the same key (kept the cheapest)",
                            format!(
                                "{} {}",
                                offering.instance_type,
                                offering.region.as_deref().unwrap_or("-")
                            ),
                        );
                    }
                    seen.insert(offering.zone.clone(), offering);
                }
            }
        }
        result.extend(seen.into_values());
    }
    result
}

fn cheaper_or_equal(a: &Offering, b: &Offering) -> bool {
    let price = |o: &Offering| o.on_demand.map_or(f64::INFINITY, |p| p.0);
    price(a) <= price(b)
}

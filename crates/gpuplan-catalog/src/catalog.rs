use crate::accelerator_index::AcceleratorIndex;
use crate::error::CatalogError;
use crate::model_library::{ModelLibrary, parse_model};
use crate::raw;
use gpuplan_model::{Accelerator, Date, Offering, ReservedDiscount};
use std::collections::HashMap;

/// The version of the data layout in `data/SCHEMA.md` that this build reads.
pub const SCHEMA_VERSION: u32 = 1;

include!(concat!(env!("OUT_DIR"), "/embedded_files.rs"));

/// One catalog file, as a front end read it: a path relative to the catalog root
/// (`accelerators/nvidia.toml`, `offerings/aws.csv`, `catalog.toml`) and its text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CatalogFile {
    pub path: String,
    pub text: String,
}

/// Largest relative difference tolerated between an offering's accelerator memory and
/// count × the accelerator's datasheet memory. Clouds report driver-visible memory (an H100
/// shows 79.6 of its 80 GiB, an L40S 44.7 of 48), so a few percent is normal; a total that
/// is off by more is a per-GPU figure written as a total, or the wrong accelerator.
const MEMORY_TOTAL_TOLERANCE: f64 = 0.10;

/// What makes an offering unique: provider, instance type, region, zone.
type OfferingKey = (String, String, Option<String>, Option<String>);

/// Accelerators, offerings and reserved-price discounts, validated together.
#[derive(Debug, Clone)]
pub struct Catalog {
    accelerators: AcceleratorIndex,
    offerings: Vec<Offering>,
    reserved_discounts: Vec<ReservedDiscount>,
    models: ModelLibrary,
    schema_version: u32,
}

impl Catalog {
    /// The catalog compiled into this binary.
    pub fn embedded() -> Result<Catalog, CatalogError> {
        let files: Vec<CatalogFile> = EMBEDDED_FILES
            .iter()
            .map(|(path, text)| CatalogFile {
                path: (*path).to_string(),
                text: (*text).to_string(),
            })
            .collect();
        Catalog::from_files(&files)
    }

    /// Builds a catalog from files laid out as under `data/`: `catalog.toml`,
    /// `accelerators/*.toml`, `offerings/**/*.csv`, `billing/*.toml`, `models/*.json`. Other files
    /// are ignored.
    pub fn from_files(files: &[CatalogFile]) -> Result<Catalog, CatalogError> {
        let manifest = files.iter().find(|file| file.path == "catalog.toml").ok_or_else(|| {
            CatalogError::new(
                "catalog.toml",
                "missing: a catalog folder needs its catalog.toml manifest",
            )
        })?;
        let schema_version = raw::parse_manifest(&manifest.path, &manifest.text)?.schema_version;
        if schema_version != SCHEMA_VERSION {
            return Err(CatalogError::new(
                &manifest.path,
                format!(
                    "schema version {schema_version} is not supported; this gpuplan reads version {SCHEMA_VERSION}"
                ),
            )
            .in_field("schema_version"));
        }

        let mut accelerators = Vec::new();
        let mut offering_rows = Vec::new();
        let mut reserved_discounts = Vec::new();
        let mut models = Vec::new();
        for file in files {
            let path = file.path.as_str();
            if path.starts_with("accelerators/") && path.ends_with(".toml") {
                accelerators.extend(raw::parse_accelerators(path, &file.text)?);
            } else if path.starts_with("offerings/") && path.ends_with(".csv") {
                for (line, offering) in raw::parse_offerings(path, &file.text)? {
                    offering_rows.push((path, line, offering));
                }
            } else if path.starts_with("models/") && path.ends_with(".json") {
                models.push(parse_model(path, &file.text)?);
            } else if path.starts_with("billing/") && path.ends_with(".toml") {
                reserved_discounts.extend(raw::parse_reserved(path, &file.text)?);
            }
        }
        let models = ModelLibrary::new(models).map_err(|message| CatalogError::new("models/", message))?;
        let accelerators =
            AcceleratorIndex::new(accelerators).map_err(|message| CatalogError::new("accelerators/", message))?;

        let mut seen: HashMap<OfferingKey, (&str, Option<usize>)> = HashMap::new();
        let mut offerings = Vec::with_capacity(offering_rows.len());
        for (path, line, offering) in offering_rows {
            let error = |field: &str, message: String| CatalogError::new(path, message).at_line(line).in_field(field);
            if let Some(id) = &offering.accelerator {
                let accelerator = accelerators.get(id.as_str()).ok_or_else(|| {
                    error(
                        "accelerator",
                        format!("`{id}` is not an accelerator id of this catalog"),
                    )
                })?;
                if let Some(total) = offering.accelerator_memory {
                    check_memory_total(accelerator, offering.accelerator_count, total.as_gib())
                        .map_err(|message| error("accelerator_memory_gib", message))?;
                }
            }
            let key = (
                offering.provider.as_str().to_string(),
                offering.instance_type.clone(),
                offering.region.clone(),
                offering.zone.clone(),
            );
            if let Some((first_path, first_line)) = seen.insert(key, (path, line)) {
                return Err(error(
                    "instance_type",
                    format!(
                        "duplicate offering {} {} {}: first at {first_path}:{}",
                        offering.provider,
                        offering.instance_type,
                        offering.region.as_deref().unwrap_or("-"),
                        first_line.unwrap_or(0)
                    ),
                ));
            }
            offerings.push(offering);
        }
        Ok(Catalog {
            accelerators,
            offerings,
            reserved_discounts,
            models,
            schema_version,
        })
    }

    pub fn accelerators(&self) -> &AcceleratorIndex {
        &self.accelerators
    }

    pub fn offerings(&self) -> &[Offering] {
        &self.offerings
    }

    pub fn reserved_discounts(&self) -> &[ReservedDiscount] {
        &self.reserved_discounts
    }

    /// The built-in models (`data/models/*.json`).
    pub fn models(&self) -> &ModelLibrary {
        &self.models
    }

    pub fn schema_version(&self) -> u32 {
        self.schema_version
    }

    /// The oldest and newest `as_of` dates among all numbers of the catalog.
    pub fn as_of_range(&self) -> Option<(Date, Date)> {
        let dates = self
            .offerings
            .iter()
            .map(|offering| offering.as_of)
            .chain(self.accelerators.iter().flat_map(|a| a.sources.iter().map(|s| s.as_of)));
        dates.fold(None, |range, date| match range {
            None => Some((date, date)),
            Some((oldest, newest)) => Some((oldest.min(date), newest.max(date))),
        })
    }
}

fn check_memory_total(accelerator: &Accelerator, count: u32, total_gib: f64) -> Result<(), String> {
    let expected = accelerator.memory.as_gib() * f64::from(count);
    let relative = (total_gib - expected).abs() / expected;
    if relative > MEMORY_TOTAL_TOLERANCE {
        return Err(format!(
            "{total_gib} GiB for {count} × {} is not {count} × {} GiB = {expected} GiB",
            accelerator.id,
            accelerator.memory.as_gib()
        ));
    }
    Ok(())
}

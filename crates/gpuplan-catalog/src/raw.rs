//! Private wire shapes of the data files, and their conversion into validated model values.
//! Nothing outside this module sees a `Raw*` type.

use crate::error::{CatalogError, line_column};
use gpuplan_model::{
    Accelerator, AcceleratorId, BillingGranularity, Bytes, BytesPerSecond, CommitmentTerm, DataUnit, Date,
    ExchangeRate, FlopsPerSecond, GigabitsPerSecond, GpuInterconnect, NativePrice, NodeNetwork, NvLink, Offering,
    PeakTable, Precision, ProviderId, ReservedDiscount, Source, StoragePricing, UsdPerHour, Watts,
};
use serde::Deserialize;
use std::collections::BTreeMap;

/// The header every offerings CSV starts with, in this order.
pub(crate) const OFFERING_COLUMNS: [&str; 19] = [
    "provider",
    "instance_type",
    "region",
    "zone",
    "accelerator",
    "accelerator_count",
    "accelerator_memory_gib",
    "vcpus",
    "memory_gib",
    "local_disk_gb",
    "network_gbps",
    "gpu_interconnect",
    "node_network",
    "on_demand_usd_per_hour",
    "spot_usd_per_hour",
    "billing_granularity",
    "source",
    "as_of",
    "notes",
];

/// Columns an offerings file may add after [`OFFERING_COLUMNS`] for prices published in
/// another currency than USD; the USD columns then stay empty.
pub(crate) const NATIVE_PRICE_COLUMNS: [&str; 3] = ["currency", "on_demand_native", "spot_native"];

/// The smallest sparse/dense ratio a datasheet shows (NVIDIA B300 FP4: 18/14 = 1.29).
const MIN_SPARSE_TO_DENSE_RATIO: f64 = 1.25;

/// The keys an accelerator source may say it covers.
const COVERABLE_FIELDS: [&str; 15] = [
    "memory_gib",
    "reported_memory_mib",
    "memory_bandwidth_gb_per_s",
    "dense_tflops",
    "sparse_tflops",
    "tdp_watts",
    "nvlink_gb_per_s",
    "peer_link_gb_per_s",
    "scale_up_domain_gpus",
    "gpus_per_node",
    "cores_per_device",
    "pcie_generation",
    "release_year",
    "compute_capability",
    "memory_type",
];

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawManifest {
    pub schema_version: u32,
    #[allow(dead_code)]
    pub name: Option<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawAcceleratorFile {
    #[serde(default)]
    accelerator: Vec<RawAccelerator>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawAccelerator {
    id: toml::Spanned<String>,
    name: String,
    vendor: String,
    architecture: String,
    compute_capability: Option<String>,
    form_factor: Option<String>,
    release_year: Option<u16>,
    memory_gib: f64,
    reported_memory_mib: Option<u64>,
    memory_type: Option<String>,
    memory_bandwidth_gb_per_s: Option<f64>,
    tdp_watts: Option<f64>,
    pcie_generation: Option<u8>,
    nvlink_generation: Option<u8>,
    nvlink_gb_per_s: Option<f64>,
    peer_link_gb_per_s: Option<f64>,
    scale_up_domain_gpus: Option<u32>,
    gpus_per_node: Option<u32>,
    cores_per_device: Option<u32>,
    interconnect: Option<String>,
    #[serde(default)]
    aliases: Vec<String>,
    #[serde(default)]
    dense_tflops: BTreeMap<String, f64>,
    #[serde(default)]
    sparse_tflops: BTreeMap<String, f64>,
    #[serde(default)]
    sources: Vec<RawSource>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawSource {
    covers: Vec<String>,
    title: String,
    url: String,
    as_of: String,
    note: Option<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawReservedFile {
    #[allow(dead_code)]
    schema_version: Option<u32>,
    #[serde(default)]
    discount: Vec<RawReservedDiscount>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawReservedDiscount {
    provider: String,
    term: String,
    payment: String,
    discount: f64,
    applies_to: String,
    title: String,
    url: String,
    as_of: String,
    note: Option<String>,
}

pub(crate) fn parse_toml<T: serde::de::DeserializeOwned>(file: &str, text: &str) -> Result<T, CatalogError> {
    toml::from_str(text).map_err(|error| {
        let (line, column) = error
            .span()
            .map(|span| line_column(text, span.start))
            .map_or((None, None), |(l, c)| (Some(l), Some(c)));
        CatalogError::new(file, error.message().trim().to_string())
            .at_line(line)
            .at_column(column)
    })
}

pub(crate) fn parse_manifest(file: &str, text: &str) -> Result<RawManifest, CatalogError> {
    parse_toml(file, text)
}

/// Parses one `accelerators/*.toml` file.
pub(crate) fn parse_accelerators(file: &str, text: &str) -> Result<Vec<Accelerator>, CatalogError> {
    let raw: RawAcceleratorFile = parse_toml(file, text)?;
    raw.accelerator
        .into_iter()
        .map(|accelerator| {
            let line = line_column(text, accelerator.id.span().start).0;
            accelerator
                .into_model()
                .map_err(|(field, message)| CatalogError::new(file, message).at_line(Some(line)).in_field(&field))
        })
        .collect()
}

pub(crate) type FieldError = (String, String);

pub(crate) fn field_error(field: &str, message: impl Into<String>) -> FieldError {
    (field.to_string(), message.into())
}

pub(crate) fn positive(field: &str, value: f64) -> Result<f64, FieldError> {
    if value.is_finite() && value > 0.0 {
        Ok(value)
    } else {
        Err(field_error(field, format!("must be a positive number, found {value}")))
    }
}

fn peak_table(field: &str, raw: BTreeMap<String, f64>) -> Result<PeakTable, FieldError> {
    let mut table = BTreeMap::new();
    for (key, tflops) in raw {
        let precision: Precision = key
            .parse()
            .map_err(|error: gpuplan_model::UnknownPrecision| field_error(field, error.to_string()))?;
        let tflops = positive(&format!("{field}.{key}"), tflops)?;
        table.insert(precision, FlopsPerSecond::from_tflops(tflops));
    }
    Ok(PeakTable(table))
}

pub(crate) fn parse_date(field: &str, text: &str) -> Result<Date, FieldError> {
    text.parse()
        .map_err(|error: gpuplan_model::DateError| field_error(field, error.to_string()))
}

impl RawAccelerator {
    fn into_model(self) -> Result<Accelerator, FieldError> {
        let id = self.id.into_inner();
        if id.trim().is_empty() || id.contains(char::is_whitespace) {
            return Err(field_error("id", "must be non-empty and without spaces"));
        }
        let memory = Bytes::from_gib(positive("memory_gib", self.memory_gib)?);
        let memory_bandwidth = self
            .memory_bandwidth_gb_per_s
            .map(|gb| positive("memory_bandwidth_gb_per_s", gb).map(BytesPerSecond::from_gb_per_s))
            .transpose()?;
        let tdp = self
            .tdp_watts
            .map(|w| positive("tdp_watts", w).map(Watts))
            .transpose()?;
        let nvlink = match (self.nvlink_generation, self.nvlink_gb_per_s) {
            (Some(generation), Some(gb)) => Some(NvLink {
                generation,
                bandwidth: BytesPerSecond::from_gb_per_s(positive("nvlink_gb_per_s", gb)?),
            }),
            (None, None) => None,
            (Some(_), None) => return Err(field_error("nvlink_gb_per_s", "is required with nvlink_generation")),
            (None, Some(_)) => return Err(field_error("nvlink_generation", "is required with nvlink_gb_per_s")),
        };
        let peer_link = self
            .peer_link_gb_per_s
            .map(|gb| positive("peer_link_gb_per_s", gb).map(BytesPerSecond::from_gb_per_s))
            .transpose()?;
        match self.scale_up_domain_gpus {
            Some(0) => return Err(field_error("scale_up_domain_gpus", "must be at least 1")),
            Some(_) if nvlink.is_none() && peer_link.is_none() => {
                return Err(field_error(
                    "scale_up_domain_gpus",
                    "needs the link that joins the domain (nvlink_gb_per_s or peer_link_gb_per_s)",
                ));
            }
            _ => {}
        }
        if self.gpus_per_node == Some(0) {
            return Err(field_error("gpus_per_node", "must be at least 1"));
        }
        if self.cores_per_device == Some(0) {
            return Err(field_error("cores_per_device", "must be at least 1"));
        }
        let dense = peak_table("dense_tflops", self.dense_tflops)?;
        let sparse = peak_table("sparse_tflops", self.sparse_tflops)?;
        for (precision, sparse_rate) in sparse.iter() {
            if let Some(dense_rate) = dense.get(precision) {
                // Structured sparsity doubles the math rate on most parts (B300's FP4 is
                // the exception: 14 dense vs 18 sparse PFLOPS); a "dense" figure close to
                // the sparse one is a sparse number in the wrong column.
                if sparse_rate.0 < dense_rate.0 * MIN_SPARSE_TO_DENSE_RATIO {
                    return Err(field_error(
                        &format!("dense_tflops.{precision}"),
                        format!(
                            "dense {:.1} is too close to the sparse {:.1}: a sparse figure in the dense column?",
                            dense_rate.as_tflops(),
                            sparse_rate.as_tflops()
                        ),
                    ));
                }
            }
        }
        let mut sources = Vec::with_capacity(self.sources.len());
        for raw in self.sources {
            for covered in &raw.covers {
                if !COVERABLE_FIELDS.contains(&covered.as_str()) {
                    return Err(field_error(
                        "sources.covers",
                        format!(
                            "unknown field `{covered}` (expected one of {})",
                            COVERABLE_FIELDS.join(", ")
                        ),
                    ));
                }
            }
            if raw.url.trim().is_empty() || raw.title.trim().is_empty() {
                return Err(field_error("sources", "every source needs a title and a url"));
            }
            sources.push(Source {
                covers: raw.covers,
                title: raw.title,
                url: raw.url,
                as_of: parse_date("sources.as_of", &raw.as_of)?,
                note: raw.note,
            });
        }
        let present = [
            ("memory_gib", true),
            ("reported_memory_mib", self.reported_memory_mib.is_some()),
            ("memory_bandwidth_gb_per_s", memory_bandwidth.is_some()),
            ("dense_tflops", !dense.is_empty()),
            ("sparse_tflops", !sparse.is_empty()),
            ("tdp_watts", tdp.is_some()),
            ("nvlink_gb_per_s", nvlink.is_some()),
            ("peer_link_gb_per_s", peer_link.is_some()),
            ("scale_up_domain_gpus", self.scale_up_domain_gpus.is_some()),
            ("gpus_per_node", self.gpus_per_node.is_some()),
            ("cores_per_device", self.cores_per_device.is_some()),
        ];
        for (field, is_present) in present {
            if is_present && !sources.iter().any(|source| source.covers.iter().any(|c| c == field)) {
                return Err(field_error(field, "has a value but no source covers it"));
            }
        }
        Ok(Accelerator {
            id: AcceleratorId::new(id),
            name: self.name,
            vendor: self.vendor,
            architecture: self.architecture,
            compute_capability: self.compute_capability,
            form_factor: self.form_factor,
            release_year: self.release_year,
            memory,
            reported_memory: self.reported_memory_mib.map(Bytes::from_mib),
            memory_type: self.memory_type,
            memory_bandwidth,
            tdp,
            pcie_generation: self.pcie_generation,
            nvlink,
            interconnect: self.interconnect,
            peer_link,
            scale_up_domain: self.scale_up_domain_gpus,
            gpus_per_node: self.gpus_per_node,
            cores_per_device: self.cores_per_device,
            aliases: self.aliases,
            dense,
            sparse,
            sources,
            stacks: Vec::new(),
        })
    }
}

/// Parses one `billing/*.toml` discount file.
pub(crate) fn parse_reserved(file: &str, text: &str) -> Result<Vec<ReservedDiscount>, CatalogError> {
    let raw: RawReservedFile = parse_toml(file, text)?;
    raw.discount
        .into_iter()
        .enumerate()
        .map(|(index, raw)| {
            let error = |(field, message): FieldError| {
                CatalogError::new(file, format!("discount #{}: {message}", index + 1)).in_field(&field)
            };
            let term = match raw.term.as_str() {
                "1y" => CommitmentTerm::OneYear,
                "3y" => CommitmentTerm::ThreeYears,
                other => return Err(error(field_error("term", format!("`{other}` is not 1y or 3y")))),
            };
            if !(raw.discount > 0.0 && raw.discount < 1.0) {
                return Err(error(field_error("discount", "must be a fraction between 0 and 1")));
            }
            Ok(ReservedDiscount {
                provider: ProviderId::new(&raw.provider),
                term,
                payment: raw.payment,
                discount: raw.discount,
                applies_to: raw.applies_to,
                title: raw.title,
                url: raw.url,
                as_of: parse_date("as_of", &raw.as_of).map_err(error)?,
                note: raw.note,
            })
        })
        .collect()
}

/// One offerings CSV row as written, before validation.
#[derive(Debug, Deserialize)]
pub(crate) struct RawOffering {
    pub provider: String,
    pub instance_type: String,
    pub region: String,
    pub zone: String,
    pub accelerator: String,
    pub accelerator_count: String,
    pub accelerator_memory_gib: String,
    pub vcpus: String,
    pub memory_gib: String,
    pub local_disk_gb: String,
    pub network_gbps: String,
    pub gpu_interconnect: String,
    pub node_network: String,
    pub on_demand_usd_per_hour: String,
    pub spot_usd_per_hour: String,
    pub billing_granularity: String,
    pub source: String,
    pub as_of: String,
    pub notes: String,
    #[serde(default)]
    pub currency: String,
    #[serde(default)]
    pub on_demand_native: String,
    #[serde(default)]
    pub spot_native: String,
}

fn optional(text: &str) -> Option<&str> {
    let text = text.trim();
    (!text.is_empty()).then_some(text)
}

fn number(field: &str, text: &str) -> Result<Option<f64>, FieldError> {
    optional(text)
        .map(|text| {
            text.parse::<f64>()
                .ok()
                .filter(|value| value.is_finite() && *value >= 0.0)
                .ok_or_else(|| field_error(field, format!("`{text}` is not a non-negative number")))
        })
        .transpose()
}

fn price(field: &str, text: &str) -> Result<Option<UsdPerHour>, FieldError> {
    match number(field, text)? {
        Some(value) if value <= 0.0 => Err(field_error(
            field,
            "a price must be positive; leave it empty when unknown",
        )),
        value => Ok(value.map(UsdPerHour)),
    }
}

fn parsed<T: std::str::FromStr<Err = String>>(field: &str, text: &str) -> Result<Option<T>, FieldError> {
    optional(text)
        .map(|text| text.parse().map_err(|e| field_error(field, e)))
        .transpose()
}

impl RawOffering {
    pub(crate) fn into_model(self) -> Result<Offering, FieldError> {
        let provider = optional(&self.provider).ok_or_else(|| field_error("provider", "is empty"))?;
        let instance_type = optional(&self.instance_type).ok_or_else(|| field_error("instance_type", "is empty"))?;
        let accelerator = optional(&self.accelerator).map(AcceleratorId::new);
        let accelerator_count = match optional(&self.accelerator_count) {
            None => 0,
            Some(text) => text
                .parse::<u32>()
                .map_err(|_| field_error("accelerator_count", format!("`{text}` is not a whole number")))?,
        };
        if accelerator.is_some() != (accelerator_count > 0) {
            return Err(field_error(
                "accelerator_count",
                "must be positive exactly when an accelerator is named",
            ));
        }
        let on_demand = price("on_demand_usd_per_hour", &self.on_demand_usd_per_hour)?;
        let spot = price("spot_usd_per_hour", &self.spot_usd_per_hour)?;
        if let (Some(on_demand), Some(spot)) = (on_demand, spot) {
            if spot.0 >= on_demand.0 {
                return Err(field_error(
                    "spot_usd_per_hour",
                    format!("spot {} is not below on-demand {}", spot.0, on_demand.0),
                ));
            }
        }
        let native = self.native_price(on_demand.is_some() || spot.is_some())?;
        let vcpus = number("vcpus", &self.vcpus)?.ok_or_else(|| field_error("vcpus", "is empty"))?;
        let memory = number("memory_gib", &self.memory_gib)?.ok_or_else(|| field_error("memory_gib", "is empty"))?;
        Ok(Offering {
            provider: ProviderId::new(provider),
            instance_type: instance_type.to_string(),
            region: optional(&self.region).map(str::to_string),
            zone: optional(&self.zone).map(str::to_string),
            accelerator,
            accelerator_count,
            accelerator_memory: number("accelerator_memory_gib", &self.accelerator_memory_gib)?.map(Bytes::from_gib),
            vcpus,
            memory: Bytes::from_gib(memory),
            local_disk: number("local_disk_gb", &self.local_disk_gb)?.map(Bytes::from_gb),
            network: number("network_gbps", &self.network_gbps)?.map(GigabitsPerSecond),
            gpu_interconnect: parsed::<GpuInterconnect>("gpu_interconnect", &self.gpu_interconnect)?,
            node_network: parsed::<NodeNetwork>("node_network", &self.node_network)?,
            on_demand,
            spot,
            billing_granularity: parsed::<BillingGranularity>("billing_granularity", &self.billing_granularity)?,
            source: optional(&self.source)
                .ok_or_else(|| field_error("source", "every offering needs a source"))?
                .to_string(),
            as_of: parse_date("as_of", &self.as_of)?,
            notes: optional(&self.notes).map(str::to_string),
            fabric: None,
            native,
            list_on_demand: None,
            list_spot: None,
            price_flags: Vec::new(),
        })
    }
}

impl RawOffering {
    /// The price in the provider's own currency, where the row gives one instead of USD.
    fn native_price(&self, has_usd: bool) -> Result<Option<NativePrice>, FieldError> {
        let Some(currency) = optional(&self.currency).filter(|c| !c.eq_ignore_ascii_case("USD")) else {
            if optional(&self.on_demand_native).is_some() || optional(&self.spot_native).is_some() {
                return Err(field_error("currency", "native prices need their currency"));
            }
            return Ok(None);
        };
        if has_usd {
            return Err(field_error(
                "on_demand_usd_per_hour",
                format!("a {currency} row leaves the USD prices empty: they are converted at the catalog's rate"),
            ));
        }
        if !(currency.len() == 3 && currency.chars().all(|c| c.is_ascii_uppercase())) {
            return Err(field_error(
                "currency",
                format!("`{currency}` is not an ISO 4217 code such as CNY"),
            ));
        }
        let on_demand = price("on_demand_native", &self.on_demand_native)?.map(|p| p.0);
        let spot = price("spot_native", &self.spot_native)?.map(|p| p.0);
        if let (Some(on_demand), Some(spot)) = (on_demand, spot) {
            if spot >= on_demand {
                return Err(field_error(
                    "spot_native",
                    format!("spot {spot} is not below on-demand {on_demand}"),
                ));
            }
        }
        Ok(Some(NativePrice {
            currency: currency.to_string(),
            on_demand,
            spot,
        }))
    }
}

/// Parses `billing/exchange-rates.toml`.
pub(crate) fn parse_exchange_rates(file: &str, text: &str) -> Result<Vec<ExchangeRate>, CatalogError> {
    #[derive(Deserialize)]
    #[serde(deny_unknown_fields)]
    struct Rates {
        rate: Vec<Rate>,
    }
    #[derive(Deserialize)]
    #[serde(deny_unknown_fields)]
    struct Rate {
        currency: String,
        per_usd: f64,
        as_of: String,
        title: String,
        url: String,
    }
    let rates: Rates = toml::from_str(text).map_err(|e| CatalogError::new(file, e.message().to_string()))?;
    rates
        .rate
        .into_iter()
        .map(|r| {
            if !(r.per_usd.is_finite() && r.per_usd > 0.0) {
                return Err(
                    CatalogError::new(file, format!("{}: per_usd must be positive", r.currency)).in_field("per_usd"),
                );
            }
            let as_of = parse_date("as_of", &r.as_of)
                .map_err(|(field, message)| CatalogError::new(file, message).in_field(&field))?;
            Ok(ExchangeRate {
                currency: r.currency,
                per_usd: r.per_usd,
                as_of,
                title: r.title,
                url: r.url,
            })
        })
        .collect()
}

/// Parses `billing/storage-egress.toml`: per provider, block and object storage and tiered
/// internet egress.
pub(crate) fn parse_storage_pricing(file: &str, text: &str) -> Result<Vec<StoragePricing>, CatalogError> {
    #[derive(Deserialize)]
    #[serde(deny_unknown_fields)]
    struct File {
        provider: Vec<Entry>,
    }
    #[derive(Deserialize)]
    #[serde(deny_unknown_fields)]
    struct Entry {
        id: String,
        block_storage_usd_per_gb_month: Option<f64>,
        block_storage_kind: Option<String>,
        object_storage_usd_per_gb_month: Option<f64>,
        object_storage_kind: Option<String>,
        egress_tiers: Option<Vec<(f64, f64)>>,
        #[serde(default)]
        egress_unit: DataUnit,
        egress_note: Option<String>,
        local_nvme_included: Option<String>,
        sources: Vec<SourceEntry>,
        as_of: String,
    }
    #[derive(Deserialize)]
    #[serde(deny_unknown_fields)]
    struct SourceEntry {
        title: String,
        url: String,
        as_of: String,
    }
    let parsed: File = toml::from_str(text).map_err(|e| CatalogError::new(file, e.message().to_string()))?;
    parsed
        .provider
        .into_iter()
        .map(|entry| {
            let fail = |field: &str, message: String| {
                CatalogError::new(file, format!("{}: {message}", entry.id)).in_field(field)
            };
            for (field, value) in [
                ("block_storage_usd_per_gb_month", entry.block_storage_usd_per_gb_month),
                ("object_storage_usd_per_gb_month", entry.object_storage_usd_per_gb_month),
            ] {
                if value.is_some_and(|v| !(v.is_finite() && (0.0..10.0).contains(&v))) {
                    return Err(fail(
                        field,
                        "must be a price between 0 and 10 USD per GB-month".to_string(),
                    ));
                }
            }
            if let Some(tiers) = &entry.egress_tiers {
                let ascending = tiers.windows(2).all(|w| w[0].0 < w[1].0);
                if tiers.is_empty()
                    || !ascending
                    || tiers
                        .iter()
                        .any(|(upper, price)| !(*upper > 0.0 && (0.0..10.0).contains(price)))
                {
                    return Err(fail(
                        "egress_tiers",
                        "tiers need ascending bounds and prices between 0 and 10 USD per GB".to_string(),
                    ));
                }
            }
            if entry.sources.is_empty() {
                return Err(fail("sources", "every price needs a source".to_string()));
            }
            let as_of = parse_date("as_of", &entry.as_of).map_err(|(field, message)| fail(&field, message))?;
            let mut sources = Vec::new();
            for s in entry.sources {
                parse_date("as_of", &s.as_of).map_err(|(field, message)| fail(&field, message))?;
                sources.push(format!("{} — {} (as of {})", s.title, s.url, s.as_of));
            }
            let egress_note = match (entry.egress_note, entry.local_nvme_included) {
                (Some(note), Some(nvme)) => Some(format!("{note} Local NVMe: {nvme}")),
                (note, nvme) => note.or(nvme.map(|n| format!("Local NVMe: {n}"))),
            };
            Ok(StoragePricing {
                provider: ProviderId::new(&entry.id),
                block_usd_per_gb_month: entry.block_storage_usd_per_gb_month,
                block_kind: entry.block_storage_kind,
                object_usd_per_gb_month: entry.object_storage_usd_per_gb_month,
                object_kind: entry.object_storage_kind,
                egress_tiers: entry.egress_tiers,
                egress_unit: entry.egress_unit,
                egress_note,
                sources,
                as_of,
            })
        })
        .collect()
}

/// Parses one `offerings/*.csv` file into offerings with the line each came from.
pub(crate) fn parse_offerings(file: &str, text: &str) -> Result<Vec<(Option<usize>, Offering)>, CatalogError> {
    let mut reader = csv::ReaderBuilder::new().from_reader(text.as_bytes());
    let headers = reader
        .headers()
        .map_err(|error| CatalogError::new(file, error.to_string()).at_line(Some(1)))?
        .clone();
    let plain = headers.iter().eq(OFFERING_COLUMNS.iter().copied());
    let native = headers
        .iter()
        .eq(OFFERING_COLUMNS.iter().chain(NATIVE_PRICE_COLUMNS.iter()).copied());
    if !plain && !native {
        return Err(CatalogError::new(
            file,
            format!(
                "the header must be exactly: {} (optionally followed by {})",
                OFFERING_COLUMNS.join(","),
                NATIVE_PRICE_COLUMNS.join(",")
            ),
        )
        .at_line(Some(1)));
    }
    let mut offerings = Vec::new();
    for record in reader.records() {
        let record = record.map_err(|error| {
            let line = error.position().map(|p| p.line() as usize);
            CatalogError::new(file, error.to_string()).at_line(line)
        })?;
        let line = record.position().map(|p| p.line() as usize);
        let raw: RawOffering = record
            .deserialize(Some(&headers))
            .map_err(|error| CatalogError::new(file, error.to_string()).at_line(line))?;
        let offering = raw
            .into_model()
            .map_err(|(field, message)| CatalogError::new(file, message).at_line(line).in_field(&field))?;
        offerings.push((line, offering));
    }
    Ok(offerings)
}

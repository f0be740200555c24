//! Private wire shapes of the fabric, software-stack and operations tables
//! (`networks/*.toml`, `stacks.toml`, `operations/*.toml`) and their conversion into model
//! values.

use crate::error::CatalogError;
use crate::raw::{FieldError, field_error, parse_date, parse_toml, positive};
use gpuplan_model::{
    AcceleratorId, BillingTerms, CapacityLimit, DecodeRate, Engine, FabricKind, FabricRule, FabricSource,
    GigabitsPerSecond, ImageRole, InterruptionRate, NodeFabric, Operations, ProviderId, SoftwareStack, Source,
    SpotShare, StackImage, StackSupport, StackTarget, StartupProfile, UsageTiers,
};
use serde::Deserialize;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawSourceRef {
    #[serde(default)]
    covers: Vec<String>,
    title: String,
    url: String,
    as_of: String,
    note: Option<String>,
}

impl RawSourceRef {
    fn into_model(self) -> Result<Source, FieldError> {
        if self.title.trim().is_empty() || self.url.trim().is_empty() {
            return Err(field_error("source", "every source needs a title and a url"));
        }
        Ok(Source {
            covers: self.covers,
            title: self.title,
            url: self.url,
            as_of: parse_date("as_of", &self.as_of)?,
            note: self.note,
        })
    }
}

/// A source written beside the numbers of an entry.
fn inline(title: String, url: String, as_of: String, note: Option<String>) -> Result<Source, FieldError> {
    RawSourceRef {
        covers: Vec::new(),
        title,
        url,
        as_of,
        note,
    }
    .into_model()
}

fn entries<R, T>(
    file: &str,
    what: &str,
    raw: Vec<R>,
    convert: impl Fn(R) -> Result<T, FieldError>,
) -> Result<Vec<T>, CatalogError> {
    raw.into_iter()
        .enumerate()
        .map(|(index, raw)| {
            convert(raw).map_err(|(field, message)| {
                CatalogError::new(file, format!("{what} #{}: {message}", index + 1)).in_field(&field)
            })
        })
        .collect()
}

// ---- networks/*.toml -------------------------------------------------------------------

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawFabricFile {
    #[allow(dead_code)]
    schema_version: Option<u32>,
    #[serde(default)]
    fabric: Vec<RawFabric>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawFabric {
    provider: String,
    instance_types: Vec<String>,
    fabric: String,
    node_gbps: Option<f64>,
    cluster_placement: bool,
    cluster_product: Option<String>,
    devices: Option<u32>,
    title: String,
    url: String,
    as_of: String,
    note: Option<String>,
}

pub(crate) fn parse_fabrics(file: &str, text: &str) -> Result<Vec<FabricRule>, CatalogError> {
    let raw: RawFabricFile = parse_toml(file, text)?;
    entries(file, "fabric", raw.fabric, |raw| {
        if raw.instance_types.is_empty() {
            return Err(field_error("instance_types", "names no instance type"));
        }
        let kind: FabricKind = raw.fabric.parse().map_err(|e| field_error("fabric", e))?;
        let bandwidth = raw
            .node_gbps
            .map(|gbps| positive("node_gbps", gbps).map(GigabitsPerSecond))
            .transpose()?;
        let source = inline(raw.title, raw.url, raw.as_of, raw.note)?;
        Ok(FabricRule {
            provider: ProviderId::new(&raw.provider),
            instance_types: raw.instance_types,
            fabric: NodeFabric {
                kind,
                bandwidth,
                cluster_placement: raw.cluster_placement,
                cluster_product: raw.cluster_product,
                devices: raw.devices.filter(|n| *n > 0),
                source: Some(FabricSource {
                    title: source.title,
                    url: source.url,
                    as_of: source.as_of,
                }),
            },
        })
    })
}

// ---- stacks.toml -----------------------------------------------------------------------

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawStackFile {
    #[allow(dead_code)]
    schema_version: Option<u32>,
    #[serde(default)]
    support: Vec<RawSupport>,
    #[serde(default)]
    image: Vec<RawImage>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawImage {
    stack: String,
    role: ImageRole,
    engine: Option<String>,
    image: String,
    device_resource: String,
    fabric: Option<String>,
    min_compute_capability: Option<String>,
    title: String,
    url: String,
    as_of: String,
    note: Option<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawSupport {
    stack: String,
    vendors: Option<Vec<String>>,
    accelerators: Option<Vec<String>>,
    training: bool,
    inference: bool,
    model_types: Option<Vec<String>>,
    engines: Vec<String>,
    title: String,
    url: String,
    as_of: String,
    note: Option<String>,
}

pub(crate) fn parse_stacks(file: &str, text: &str) -> Result<(Vec<StackSupport>, Vec<StackImage>), CatalogError> {
    let raw: RawStackFile = parse_toml(file, text)?;
    let images = entries(file, "image", raw.image, |raw| {
        let stack: SoftwareStack = raw.stack.parse().map_err(|e| field_error("stack", e))?;
        let engine = raw
            .engine
            .map(|e| e.parse::<Engine>().map_err(|message| field_error("engine", message)))
            .transpose()?;
        if (raw.role == ImageRole::Serving) != engine.is_some() {
            return Err(field_error(
                "engine",
                "a serving image names its engine; a training image none",
            ));
        }
        let reference = raw.image.trim();
        if reference.is_empty() || reference.contains(char::is_whitespace) || !reference.contains(':') {
            return Err(field_error("image", "a pinned reference: registry/repository:tag"));
        }
        Ok(StackImage {
            stack,
            role: raw.role,
            engine,
            image: reference.to_string(),
            device_resource: raw.device_resource,
            fabric: match raw.fabric.as_deref() {
                None => None,
                Some("efa") => Some("efa".to_string()),
                Some(other) => {
                    return Err(field_error(
                        "fabric",
                        format!("`{other}`: images are kept per fabric for efa only"),
                    ));
                }
            },
            min_compute_capability: match raw.min_compute_capability {
                Some(cc) if cc.parse::<crate::compatibility::Version>().is_err() => {
                    return Err(field_error(
                        "min_compute_capability",
                        format!("`{cc}` is not MAJOR.MINOR"),
                    ));
                }
                cc => cc,
            },
            source: inline(raw.title, raw.url, raw.as_of, raw.note)?,
        })
    })?;
    let support = entries(file, "support", raw.support, |raw| {
        let stack: SoftwareStack = raw.stack.parse().map_err(|e| field_error("stack", e))?;
        let target = match (raw.vendors, raw.accelerators) {
            (Some(vendors), None) => StackTarget::Vendors(vendors),
            (None, Some(ids)) => StackTarget::Accelerators(ids.into_iter().map(AcceleratorId::new).collect()),
            _ => return Err(field_error("vendors", "give exactly one of vendors or accelerators")),
        };
        let engines = raw
            .engines
            .iter()
            .map(|e| e.parse::<Engine>().map_err(|message| field_error("engines", message)))
            .collect::<Result<Vec<_>, _>>()?;
        let source = inline(raw.title, raw.url, raw.as_of, raw.note)?;
        Ok(StackSupport {
            stack,
            target,
            training: raw.training,
            inference: raw.inference,
            model_types: raw.model_types,
            engines,
            title: source.title,
            url: source.url,
            as_of: source.as_of,
            note: source.note,
        })
    })?;
    Ok((support, images))
}

// ---- operations/*.toml -----------------------------------------------------------------

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawOperationsFile {
    #[allow(dead_code)]
    schema_version: Option<u32>,
    image_gb: Option<f64>,
    image_source: Option<RawSourceRef>,
    average_imagenet_jpeg_kb: Option<f64>,
    jpeg_source: Option<RawSourceRef>,
    #[serde(default)]
    provider_class: Vec<RawProviderClass>,
    #[serde(default)]
    billing: Vec<RawBilling>,
    #[serde(default)]
    capacity: Vec<RawCapacity>,
    #[serde(default)]
    interruption: Vec<RawInterruption>,
    #[serde(default)]
    spot_share: Vec<RawSpotShare>,
    #[serde(default)]
    decode: Vec<RawDecode>,
    #[serde(default)]
    provider: Vec<RawProviderFacts>,
    #[serde(default)]
    shared_storage: Vec<RawSharedStorage>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawSharedStorage {
    provider: String,
    storage_class: String,
    kind: String,
    built_in: bool,
    dynamic: bool,
    needs: String,
    /// `ignored`, `rounded_up` (with `min_gib`) or `unstated`.
    claim_size: String,
    min_gib: Option<f64>,
    title: String,
    url: String,
    as_of: String,
    note: Option<String>,
}

fn shared_storage(raw: RawSharedStorage) -> Result<gpuplan_model::SharedStorage, FieldError> {
    let claim_size = match (raw.claim_size.as_str(), raw.min_gib) {
        ("ignored", None) => gpuplan_model::ClaimSize::Ignored,
        ("unstated", None) => gpuplan_model::ClaimSize::Unstated,
        ("rounded_up", Some(gib)) => gpuplan_model::ClaimSize::RoundedUpTo {
            min_gib: positive("min_gib", gib)?,
        },
        ("rounded_up", None) => return Err(field_error("min_gib", "is required with claim_size = \"rounded_up\"")),
        ("ignored" | "unstated", Some(_)) => {
            return Err(field_error("min_gib", "applies only with claim_size = \"rounded_up\""));
        }
        (other, _) => {
            return Err(field_error(
                "claim_size",
                format!("`{other}`: expected ignored, rounded_up or unstated"),
            ));
        }
    };
    Ok(gpuplan_model::SharedStorage {
        provider: ProviderId::new(&raw.provider),
        storage_class: raw.storage_class,
        kind: raw.kind,
        built_in: raw.built_in,
        dynamic: raw.dynamic,
        needs: raw.needs,
        claim_size,
        source: inline(raw.title, raw.url, raw.as_of, raw.note)?,
    })
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawProviderFacts {
    provider: String,
    sla_instance_percent: Option<f64>,
    sla_multi_zone_percent: Option<f64>,
    sla_credits: Option<String>,
    sla_source: Option<RawSourceRef>,
    status_page: Option<String>,
    status_page_source: Option<RawSourceRef>,
    #[serde(default)]
    compliance: Vec<String>,
    compliance_source: Option<RawSourceRef>,
    #[serde(default)]
    countries: std::collections::BTreeMap<String, String>,
    regions_source: Option<RawSourceRef>,
    inter_region_usd_per_gb: Option<f64>,
    inter_region_scope: Option<String>,
    inter_continent_usd_per_gb: Option<f64>,
    inter_region_source: Option<RawSourceRef>,
    interconnect: Option<String>,
    interconnect_source: Option<RawSourceRef>,
    /// `[from, to, milliseconds]` rows.
    #[serde(default)]
    latencies: Vec<(String, String, f64)>,
    latency_source: Option<RawSourceRef>,
}

/// A value given must come with its source.
fn sourced_if(given: bool, field: &str, raw: Option<RawSourceRef>) -> Result<Option<Source>, FieldError> {
    match (given, raw) {
        (_, Some(raw)) => raw.into_model().map(Some),
        (true, None) => Err(field_error(field, "a value needs its source")),
        (false, None) => Ok(None),
    }
}

fn provider_facts(raw: RawProviderFacts) -> Result<gpuplan_model::ProviderFacts, FieldError> {
    for (field, value) in [
        ("sla_instance_percent", raw.sla_instance_percent),
        ("sla_multi_zone_percent", raw.sla_multi_zone_percent),
    ] {
        if value.is_some_and(|v| !(50.0..=100.0).contains(&v)) {
            return Err(field_error(field, "must be a percentage between 50 and 100"));
        }
    }
    for programme in &raw.compliance {
        if !gpuplan_model::COMPLIANCE_PROGRAMMES.contains(&programme.as_str()) {
            return Err(field_error("compliance", format!("unknown programme `{programme}`")));
        }
    }
    for (region, country) in &raw.countries {
        if country.len() != 2 || !country.chars().all(|c| c.is_ascii_uppercase()) {
            return Err(field_error(
                "countries",
                format!("{region}: `{country}` is no ISO 3166-1 alpha-2 code"),
            ));
        }
    }
    for (field, value) in [
        ("inter_region_usd_per_gb", raw.inter_region_usd_per_gb),
        ("inter_continent_usd_per_gb", raw.inter_continent_usd_per_gb),
    ] {
        if value.is_some_and(|v| !(0.0..=1.0).contains(&v)) {
            return Err(field_error(field, "must be between 0 and 1 USD per GB"));
        }
    }
    if let Some((from, to, _)) = raw.latencies.iter().find(|(_, _, ms)| !(*ms > 0.0 && *ms < 1000.0)) {
        return Err(field_error(
            "latencies",
            format!("{from} to {to}: a round trip must be between 0 and 1000 ms"),
        ));
    }
    if raw.inter_region_scope.is_some() && raw.inter_region_usd_per_gb.is_none() {
        return Err(field_error(
            "inter_region_scope",
            "narrows inter_region_usd_per_gb, which is not given",
        ));
    }
    let sla = raw.sla_instance_percent.is_some() || raw.sla_multi_zone_percent.is_some();
    let inter_region = raw.inter_region_usd_per_gb.is_some() || raw.inter_continent_usd_per_gb.is_some();
    sourced_if(raw.status_page.is_some(), "status_page_source", raw.status_page_source)?;
    Ok(gpuplan_model::ProviderFacts {
        provider: ProviderId::new(&raw.provider),
        sla_instance_percent: raw.sla_instance_percent,
        sla_multi_zone_percent: raw.sla_multi_zone_percent,
        sla_credits: raw.sla_credits,
        sla_source: sourced_if(sla, "sla_source", raw.sla_source)?,
        status_page: raw.status_page,
        compliance_source: sourced_if(!raw.compliance.is_empty(), "compliance_source", raw.compliance_source)?,
        compliance: raw.compliance,
        regions_source: sourced_if(!raw.countries.is_empty(), "regions_source", raw.regions_source)?,
        countries: raw.countries,
        inter_region_usd_per_gb: raw.inter_region_usd_per_gb,
        inter_region_scope: raw.inter_region_scope,
        inter_continent_usd_per_gb: raw.inter_continent_usd_per_gb,
        inter_region_source: sourced_if(inter_region, "inter_region_source", raw.inter_region_source)?,
        interconnect_source: sourced_if(
            raw.interconnect.is_some(),
            "interconnect_source",
            raw.interconnect_source,
        )?,
        interconnect: raw.interconnect,
        latency_source: sourced_if(!raw.latencies.is_empty(), "latency_source", raw.latency_source)?,
        latencies: raw
            .latencies
            .into_iter()
            .map(|(from, to, milliseconds)| gpuplan_model::RegionLatency { from, to, milliseconds })
            .collect(),
    })
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawProviderClass {
    class: String,
    providers: Vec<String>,
    provision_seconds: f64,
    image_pull_gbps: f64,
    storage_read_gbps: f64,
    checkpoint_write_gbps: f64,
    sources: Vec<RawSourceRef>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawBilling {
    provider: String,
    instances: Option<String>,
    increment: String,
    minimum_seconds: f64,
    /// `[[from hour, fraction of the list price], …]`, ascending.
    usage_tiers: Option<Vec<(f64, f64)>>,
    /// Whether the tiers hold for every instance type (`false`: "some types").
    usage_tiers_every_type: Option<bool>,
    title: String,
    url: String,
    as_of: String,
    note: Option<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawCapacity {
    provider: String,
    family: Option<String>,
    #[allow(dead_code)]
    max_gpus_per_node: Option<u32>,
    accelerators: Vec<String>,
    on_demand_gpus: u32,
    beyond: String,
    title: String,
    url: String,
    as_of: String,
    note: Option<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawInterruption {
    provider: String,
    instances: Option<String>,
    /// `spot` or `preemptible` (GCP sells both).
    offering: Option<String>,
    interruptions_per_hour: f64,
    band: Option<String>,
    advance_notice_seconds: Option<f64>,
    max_runtime_hours: Option<f64>,
    title: String,
    url: String,
    as_of: String,
    note: Option<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawSpotShare {
    provider: String,
    lowest_share: f64,
    highest_share: f64,
    /// Whether the highest share is what spot typically costs at most, not only its ceiling.
    typical: bool,
    stated: String,
    title: String,
    url: String,
    as_of: String,
    note: Option<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawDecode {
    pipeline: String,
    #[allow(dead_code)]
    description: Option<String>,
    accelerators: Option<Vec<String>>,
    images_per_second_per_vcpu: Option<f64>,
    images_per_second_per_gpu: Option<f64>,
    title: String,
    url: String,
    as_of: String,
    note: Option<String>,
}

fn source_of(field: &str, raw: Option<RawSourceRef>) -> Result<Source, FieldError> {
    raw.ok_or_else(|| field_error(field, "a value needs its source"))?
        .into_model()
}

/// A provider's spot range as shares of pay-as-you-go: 0 < lowest ≤ highest ≤ 1, and a range
/// that is not typical reaches pay-as-you-go itself.
fn spot_share(raw: RawSpotShare) -> Result<SpotShare, FieldError> {
    let (lowest, highest) = (raw.lowest_share, raw.highest_share);
    if !(lowest > 0.0 && lowest <= highest && highest <= 1.0) {
        return Err(field_error(
            "lowest_share",
            "needs 0 < lowest_share ≤ highest_share ≤ 1 (shares of the pay-as-you-go price)",
        ));
    }
    if !raw.typical && highest < 1.0 {
        return Err(field_error(
            "highest_share",
            "a range that is not typical is bounded only by the pay-as-you-go price: say 1.0",
        ));
    }
    Ok(SpotShare {
        provider: ProviderId::new(&raw.provider),
        lowest,
        highest,
        typical: raw.typical,
        stated: raw.stated,
        source: inline(raw.title, raw.url, raw.as_of, raw.note)?,
    })
}

/// A billing entry's usage tiers: ascending hours, fractions of the list price that fall and
/// stay above zero, and whether they hold for every type, which must be said.
fn usage_tiers(steps: Option<Vec<(f64, f64)>>, every_type: Option<bool>) -> Result<Option<UsageTiers>, FieldError> {
    let Some(steps) = steps else {
        return match every_type {
            Some(_) => Err(field_error(
                "usage_tiers_every_type",
                "is said only beside `usage_tiers`",
            )),
            None => Ok(None),
        };
    };
    let hours_rise = steps.windows(2).all(|w| w[0].0 < w[1].0 && w[0].1 > w[1].1);
    let valid = |&(hour, fraction): &(f64, f64)| hour > 0.0 && hour.is_finite() && fraction > 0.0 && fraction < 1.0;
    if steps.is_empty() || !hours_rise || !steps.iter().all(valid) {
        return Err(field_error(
            "usage_tiers",
            "needs [hour, fraction] steps at rising hours with fractions of the list price falling between 0 and 1",
        ));
    }
    let every_type = every_type.ok_or_else(|| {
        field_error(
            "usage_tiers_every_type",
            "must say whether the tiers hold for every instance type",
        )
    })?;
    Ok(Some(UsageTiers { steps, every_type }))
}

/// Adds one `operations/*.toml` file's tables to `operations`.
pub(crate) fn parse_operations(file: &str, text: &str, operations: &mut Operations) -> Result<(), CatalogError> {
    let raw: RawOperationsFile = parse_toml(file, text)?;
    let whole = |(field, message): FieldError| CatalogError::new(file, message).in_field(&field);
    if let Some(gb) = raw.image_gb {
        operations.image_gb = Some(positive("image_gb", gb).map_err(whole)?);
        operations.image_source = Some(source_of("image_source", raw.image_source).map_err(whole)?);
    }
    if let Some(kb) = raw.average_imagenet_jpeg_kb {
        operations.image_file_kb = Some(positive("average_imagenet_jpeg_kb", kb).map_err(whole)?);
        source_of("jpeg_source", raw.jpeg_source).map_err(whole)?;
    }
    operations
        .startup
        .extend(entries(file, "provider_class", raw.provider_class, |raw| {
            Ok(StartupProfile {
                class: raw.class,
                providers: raw.providers.iter().map(|p| ProviderId::new(p)).collect(),
                provision_seconds: positive("provision_seconds", raw.provision_seconds)?,
                image_pull_gbps: positive("image_pull_gbps", raw.image_pull_gbps)?,
                storage_read_gbps: positive("storage_read_gbps", raw.storage_read_gbps)?,
                checkpoint_write_gbps: positive("checkpoint_write_gbps", raw.checkpoint_write_gbps)?,
                sources: raw
                    .sources
                    .into_iter()
                    .map(RawSourceRef::into_model)
                    .collect::<Result<_, _>>()?,
            })
        })?);
    operations.billing.extend(entries(file, "billing", raw.billing, |raw| {
        if !(raw.minimum_seconds >= 0.0 && raw.minimum_seconds.is_finite()) {
            return Err(field_error(
                "minimum_seconds",
                format!("must be a duration in seconds, found {}", raw.minimum_seconds),
            ));
        }
        Ok(BillingTerms {
            provider: ProviderId::new(&raw.provider),
            instances: raw.instances,
            granularity: raw
                .increment
                .parse()
                .map_err(|message: String| field_error("increment", message))?,
            minimum_seconds: raw.minimum_seconds,
            usage_tiers: usage_tiers(raw.usage_tiers, raw.usage_tiers_every_type)?,
            source: inline(raw.title, raw.url, raw.as_of, raw.note)?,
        })
    })?);
    operations
        .capacity
        .extend(entries(file, "capacity", raw.capacity, |raw| {
            Ok(CapacityLimit {
                provider: ProviderId::new(&raw.provider),
                accelerators: raw.accelerators.into_iter().map(AcceleratorId::new).collect(),
                on_demand_gpus: raw.on_demand_gpus,
                family: raw.family,
                beyond: raw.beyond,
                source: inline(raw.title, raw.url, raw.as_of, raw.note)?,
            })
        })?);
    operations
        .interruptions
        .extend(entries(file, "interruption", raw.interruption, |raw| {
            Ok(InterruptionRate {
                provider: ProviderId::new(&raw.provider),
                instances: raw.instances,
                offering: raw.offering.unwrap_or_else(|| "spot".to_string()),
                per_hour: positive("interruptions_per_hour", raw.interruptions_per_hour)?,
                band: raw.band,
                notice_seconds: raw.advance_notice_seconds,
                max_runtime_hours: raw.max_runtime_hours,
                source: inline(raw.title, raw.url, raw.as_of, raw.note)?,
            })
        })?);
    operations
        .spot_shares
        .extend(entries(file, "spot_share", raw.spot_share, spot_share)?);
    operations
        .providers
        .extend(entries(file, "provider", raw.provider, provider_facts)?);
    operations
        .shared_storage
        .extend(entries(file, "shared_storage", raw.shared_storage, shared_storage)?);
    operations.decode.extend(entries(file, "decode", raw.decode, |raw| {
        if raw.images_per_second_per_vcpu.is_none() && raw.images_per_second_per_gpu.is_none() {
            return Err(field_error(
                "images_per_second_per_vcpu",
                "give a rate per vCPU or per GPU",
            ));
        }
        Ok(DecodeRate {
            pipeline: raw.pipeline,
            accelerators: raw
                .accelerators
                .map(|ids| ids.into_iter().map(AcceleratorId::new).collect()),
            images_per_second_per_vcpu: raw.images_per_second_per_vcpu,
            images_per_second_per_gpu: raw.images_per_second_per_gpu,
            source: inline(raw.title, raw.url, raw.as_of, raw.note)?,
        })
    })?);
    Ok(())
}

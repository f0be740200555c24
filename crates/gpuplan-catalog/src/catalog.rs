use crate::accelerator_index::AcceleratorIndex;
use crate::compatibility::Compatibility;
use crate::error::CatalogError;
use crate::model_library::{ModelLibrary, parse_model};
use crate::price_flags::flag_prices;
use crate::price_overlay::PriceOverlay;
use crate::published_benchmarks::PublishedBenchmarks;
use crate::raw;
use crate::raw_operations;
use gpuplan_model::fitted::Calibration;
use gpuplan_model::{
    Accelerator, CalibrationProfile, Date, Engine, ExchangeRate, FabricRule, ImageRole, Offering, Operations,
    ProviderId, ReservedDiscount, SoftwareStack, StackImage, StackSupport, StoragePricing, UsdPerHour,
};
use std::collections::HashMap;
use std::sync::OnceLock;

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

/// The first bytes of a compact catalog: its format and the gpuplan version that wrote it (the
/// binary form has no field names, so only the same types can read it).
const COMPACT_MAGIC: &[u8] = concat!("gpuplan-catalog ", env!("CARGO_PKG_VERSION"), " compact 1\n").as_bytes();

/// What makes an offering unique: provider, instance type, region, zone.
type OfferingKey = (String, String, Option<String>, Option<String>);

/// Accelerators, offerings and reserved-price discounts, validated together.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Catalog {
    accelerators: AcceleratorIndex,
    /// Written apart in the compact form, and read from it when first asked for.
    #[serde(skip)]
    offerings: Offerings,
    /// The newest `as_of` of any offering.
    newest_price: Option<Date>,
    reserved_discounts: Vec<ReservedDiscount>,
    models: ModelLibrary,
    fabrics: Vec<FabricRule>,
    operations: Operations,
    schema_version: u32,
    /// The user's prices applied over the list prices, if any.
    your_prices: Option<YourPrices>,
    /// Units of each non-USD currency per US dollar, for prices published in them.
    exchange_rates: Vec<ExchangeRate>,
    /// Storage and egress list prices per provider.
    storage_pricing: Vec<StoragePricing>,
    /// A machine's measurements applied over the datasheet figures, if any.
    calibration: Option<CalibrationProfile>,
    /// Driver, CUDA, framework and container compatibility facts.
    compatibility: Compatibility,
    /// Published GEMM and memory-bandwidth measurements, for calibrating against.
    published_benchmarks: PublishedBenchmarks,
    /// The container images that run each stack's training and serving.
    images: Vec<StackImage>,
    /// The estimators' fitted constants, where the catalog's folder carries its own
    /// `calibration.toml`; the built-in ones otherwise. (Parsed once per catalog and kept for
    /// the life of the process, so estimators can borrow them for as long as they run.)
    #[serde(skip)]
    fitted: Option<&'static Calibration>,
}

/// The built-in fitted constants (`data/calibration.toml`). The build validates them with the
/// rest of the built-in catalog, so they parse.
fn builtin_fitted() -> &'static Calibration {
    static BUILTIN: OnceLock<Calibration> = OnceLock::new();
    BUILTIN.get_or_init(|| {
        let text = EMBEDDED_FILES
            .iter()
            .find(|(path, _)| *path == FITTED_FILE)
            .map_or("", |(_, text)| text);
        parse_fitted(FITTED_FILE, text).expect("the built-in calibration.toml is validated when gpuplan is built")
    })
}

/// The file of a catalog folder that holds the estimators' fitted constants.
const FITTED_FILE: &str = "calibration.toml";

/// Fitted constants from `text`, checked.
fn parse_fitted(path: &str, text: &str) -> Result<Calibration, CatalogError> {
    let calibration: Calibration = toml::from_str(text).map_err(|e| CatalogError::new(path, e.to_string()))?;
    calibration
        .check()
        .map_err(|e| CatalogError::new(path, e.to_string()))?;
    Ok(calibration)
}

/// A catalog's offerings: parsed, or the compact bytes they are parsed from on first use (most
/// commands that read the built-in catalog never look at its 8,000 offerings).
#[derive(Debug, Clone, Default)]
struct Offerings {
    parsed: OnceLock<Vec<Offering>>,
    compact: &'static [u8],
}

impl Offerings {
    fn parsed(list: Vec<Offering>) -> Self {
        Offerings {
            parsed: OnceLock::from(list),
            compact: &[],
        }
    }

    fn compact(bytes: &'static [u8]) -> Self {
        Offerings {
            parsed: OnceLock::new(),
            compact: bytes,
        }
    }

    /// The offerings the compact bytes hold. They were written by this build from a
    /// validated catalog (and a test reads them back whole), so they decode; were they ever not
    /// to, the catalog would have no offerings rather than stop the program.
    fn decode(&self) -> Vec<Offering> {
        postcard::from_bytes(self.compact).unwrap_or_default()
    }

    fn get(&self) -> &[Offering] {
        self.parsed.get_or_init(|| self.decode())
    }

    fn take(&mut self) -> Vec<Offering> {
        self.parsed.take().unwrap_or_else(|| self.decode())
    }
}

impl PartialEq for Offerings {
    fn eq(&self, other: &Self) -> bool {
        self.get() == other.get()
    }
}

/// Fills an offering's USD prices from its native-currency ones at the catalog's rate.
fn convert_native(offering: &mut Offering, rates: &[ExchangeRate]) -> Result<(), String> {
    let Some(native) = &offering.native else {
        return Ok(());
    };
    let rate = rates.iter().find(|r| r.currency == native.currency).ok_or_else(|| {
        format!(
            "no exchange rate for {} in billing/exchange-rates.toml",
            native.currency
        )
    })?;
    offering.on_demand = native.on_demand.map(|p| UsdPerHour(p / rate.per_usd));
    offering.spot = native.spot.map(|p| UsdPerHour(p / rate.per_usd));
    Ok(())
}

/// Where the user's prices came from and what they changed.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct YourPrices {
    pub file: String,
    /// Offerings whose price the file changed.
    pub offerings: usize,
}

impl Catalog {
    /// The files of the catalog compiled into this binary, as a folder would hold them.
    pub fn embedded_files() -> Vec<CatalogFile> {
        EMBEDDED_FILES
            .iter()
            .map(|(path, text)| CatalogFile {
                path: (*path).to_string(),
                text: (*text).to_string(),
            })
            .collect()
    }

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

    /// The catalog in its compact binary form ([postcard](https://postcard.jamesmunns.com/)),
    /// which [`Catalog::from_compact`] reads back without parsing or validating the text
    /// files again: a build step writes the built-in catalog so, once validated.
    /// The form is the magic line, the length of the rest of the catalog as 8 little-endian
    /// bytes, the rest of the catalog, then its offerings.
    pub fn to_compact(&self) -> Result<Vec<u8>, CatalogError> {
        let error = |e: postcard::Error| CatalogError::new("the compact catalog", e.to_string());
        let head = postcard::to_stdvec(self).map_err(error)?;
        let offerings = postcard::to_stdvec(self.offerings()).map_err(error)?;
        let length = (head.len() as u64).to_le_bytes();
        Ok([COMPACT_MAGIC, &length, &head, &offerings].concat())
    }

    /// A catalog [`Catalog::to_compact`] wrote, by this same version of gpuplan; its offerings
    /// are read when first asked for.
    pub fn from_compact(bytes: &'static [u8]) -> Result<Catalog, CatalogError> {
        let error = |message: &str| CatalogError::new("the compact catalog", message);
        let body = bytes
            .strip_prefix(COMPACT_MAGIC)
            .ok_or_else(|| error("written by another version of gpuplan, or not a compact catalog"))?;
        let (length, body) = body.split_first_chunk::<8>().ok_or_else(|| error("cut short"))?;
        let length = usize::try_from(u64::from_le_bytes(*length)).map_err(|_| error("cut short"))?;
        let (head, offerings) = body.split_at_checked(length).ok_or_else(|| error("cut short"))?;
        let mut catalog: Catalog =
            postcard::from_bytes(head).map_err(|e| CatalogError::new("the compact catalog", e.to_string()))?;
        catalog.offerings = Offerings::compact(offerings);
        Ok(catalog)
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
        let mut fabrics = Vec::new();
        let mut stacks = Vec::new();
        let mut images = Vec::new();
        let mut operations = Operations::default();
        let mut exchange_rates = Vec::new();
        let mut storage_pricing = Vec::new();
        let mut compatibility = Compatibility::default();
        let mut published_benchmarks = PublishedBenchmarks::default();
        let mut fitted = None;
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
            } else if path == "billing/storage-egress.toml" {
                storage_pricing.extend(raw::parse_storage_pricing(path, &file.text)?);
            } else if path == "billing/exchange-rates.toml" {
                exchange_rates.extend(raw::parse_exchange_rates(path, &file.text)?);
            } else if path.starts_with("billing/") && path.ends_with(".toml") {
                reserved_discounts.extend(raw::parse_reserved(path, &file.text)?);
            } else if path.starts_with("networks/") && path.ends_with(".toml") {
                fabrics.extend(raw_operations::parse_fabrics(path, &file.text)?);
            } else if path == "stacks.toml" {
                let (support, stack_images) = raw_operations::parse_stacks(path, &file.text)?;
                stacks.extend(support);
                images.extend(stack_images);
            } else if path.starts_with("operations/") && path.ends_with(".toml") {
                raw_operations::parse_operations(path, &file.text, &mut operations)?;
            } else if path == "compat/compatibility.toml" {
                compatibility = Compatibility::parse(path, &file.text)?;
            } else if path == "benchmarks/published.toml" {
                published_benchmarks = PublishedBenchmarks::parse(path, &file.text)?;
            } else if path == FITTED_FILE {
                fitted = Some(parse_fitted(path, &file.text)?);
            }
        }
        let models = ModelLibrary::new(models).map_err(|message| CatalogError::new("models/", message))?;
        attach_stacks(&mut accelerators, &stacks)?;
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
            let mut offering = offering;
            offering.fabric = fabric_of(&fabrics, &offering).map_err(|message| error("instance_type", message))?;
            if offering.billing_granularity.is_none() {
                offering.billing_granularity = operations
                    .billing_terms(&offering.provider, &offering.instance_type)
                    .map(|terms| terms.granularity);
            }
            convert_native(&mut offering, &exchange_rates).map_err(|message| error("currency", message))?;
            offerings.push(offering);
        }
        flag_prices(&mut offerings);
        Ok(Catalog {
            accelerators,
            newest_price: offerings.iter().map(|o| o.as_of).max(),
            offerings: Offerings::parsed(offerings),
            reserved_discounts,
            models,
            fabrics,
            operations,
            schema_version,
            your_prices: None,
            exchange_rates,
            storage_pricing,
            calibration: None,
            compatibility,
            published_benchmarks,
            images,
            fitted: fitted.and_then(own_fitted),
        })
    }

    /// The estimators' fitted constants: the catalog folder's `calibration.toml`, or the
    /// built-in ones.
    pub fn fitted(&self) -> &'static Calibration {
        self.fitted.unwrap_or_else(builtin_fitted)
    }

    /// The catalog with other fitted constants (tests, and catalogs built in code).
    pub fn with_fitted(mut self, fitted: Calibration) -> Result<Catalog, CatalogError> {
        fitted
            .check()
            .map_err(|e| CatalogError::new(FITTED_FILE, e.to_string()))?;
        self.fitted = own_fitted(fitted);
        Ok(self)
    }

    /// Driver, CUDA, framework and container compatibility facts.
    pub fn compatibility(&self) -> &Compatibility {
        &self.compatibility
    }

    /// The image that runs `stack`'s training (`engine` `None`) or its serving with `engine`.
    pub fn stack_image(&self, stack: SoftwareStack, role: ImageRole, engine: Option<Engine>) -> Option<&StackImage> {
        self.images.iter().find(|i| {
            i.fabric.is_none()
                && i.stack == stack
                && i.role == role
                && (role == ImageRole::Training || i.engine == engine)
        })
    }

    /// Whether `image` runs on a GPU of compute capability `cc`: as the compatibility data
    /// knows its release, else by the floor its own entry states.
    pub fn image_runs_on(&self, image: &StackImage, cc: &crate::compatibility::Version) -> bool {
        match self.compatibility.container(&image.image) {
            Some(container) => self.compatibility.container_runs_on(container, cc),
            None => image
                .min_compute_capability
                .as_deref()
                .and_then(|min| min.parse::<crate::compatibility::Version>().ok())
                .is_none_or(|min| min <= *cc),
        }
    }

    /// The stack's training image for jobs across nodes over `fabric` (`efa`), where the
    /// general one lacks what the fabric needs.
    pub fn fabric_training_image(&self, stack: SoftwareStack, fabric: &str) -> Option<&StackImage> {
        self.images
            .iter()
            .find(|i| i.stack == stack && i.role == ImageRole::Training && i.fabric.as_deref() == Some(fabric))
    }

    /// Published GEMM and memory-bandwidth measurements.
    pub fn published_benchmarks(&self) -> &PublishedBenchmarks {
        &self.published_benchmarks
    }

    pub fn accelerators(&self) -> &AcceleratorIndex {
        &self.accelerators
    }

    /// The catalog with the user's prices applied (`--prices`); list prices stay on each
    /// changed offering.
    pub fn with_prices(mut self, file: &str, overlay: &PriceOverlay) -> Result<Catalog, CatalogError> {
        let mut list = self.offerings.take();
        let offerings = overlay.apply(file, &mut list)?;
        self.offerings = Offerings::parsed(list);
        self.your_prices = Some(YourPrices {
            file: file.to_string(),
            offerings,
        });
        Ok(self)
    }

    /// The catalog with a machine's measurements in place of its GPUs' datasheet figures
    /// (`--calibration`): each calibrated GPU's peaks and memory bandwidth scaled by the
    /// profile's factors.
    pub fn with_calibration(mut self, profile: &CalibrationProfile) -> Result<Catalog, CatalogError> {
        for gpu in &profile.gpus {
            let accelerator = self.accelerators.get_mut(gpu.gpu.as_str()).ok_or_else(|| {
                CatalogError::new("the calibration", format!("`{}` is not in the catalog", gpu.gpu)).in_field("gpu")
            })?;
            gpu.apply(accelerator);
        }
        self.calibration = Some(profile.clone());
        Ok(self)
    }

    /// The calibration applied, if any.
    pub fn calibration(&self) -> Option<&CalibrationProfile> {
        self.calibration.as_ref()
    }

    /// A provider's storage and egress list prices, where the catalog has them.
    pub fn storage_pricing(&self, provider: &ProviderId) -> Option<&StoragePricing> {
        self.storage_pricing.iter().find(|s| &s.provider == provider)
    }

    /// Exchange rates used to compare prices published in other currencies.
    pub fn exchange_rates(&self) -> &[ExchangeRate] {
        &self.exchange_rates
    }

    /// The user's prices in force, if any.
    pub fn your_prices(&self) -> Option<&YourPrices> {
        self.your_prices.as_ref()
    }

    pub fn offerings(&self) -> &[Offering] {
        self.offerings.get()
    }

    /// The newest date any offering's price was read.
    pub fn newest_price(&self) -> Option<Date> {
        self.newest_price
    }

    pub fn reserved_discounts(&self) -> &[ReservedDiscount] {
        &self.reserved_discounts
    }

    /// The built-in models (`data/models/*.json`).
    pub fn models(&self) -> &ModelLibrary {
        &self.models
    }

    /// The node-to-node network table (`networks/*.toml`).
    pub fn fabrics(&self) -> &[FabricRule] {
        &self.fabrics
    }

    /// Start-up, capacity, spot interruption and input-pipeline tables (`operations/*.toml`).
    pub fn operations(&self) -> &Operations {
        &self.operations
    }

    pub fn schema_version(&self) -> u32 {
        self.schema_version
    }

    /// The oldest and newest `as_of` dates among all numbers of the catalog.
    pub fn as_of_range(&self) -> Option<(Date, Date)> {
        let dates = self
            .offerings()
            .iter()
            .map(|offering| offering.as_of)
            .chain(self.accelerators.iter().flat_map(|a| a.sources.iter().map(|s| s.as_of)));
        dates.fold(None, |range, date| match range {
            None => Some((date, date)),
            Some((oldest, newest)) => Some((oldest.min(date), newest.max(date))),
        })
    }
}

/// Gives each accelerator the stack entries that cover it; an entry naming an accelerator
/// the catalog does not have is an error.
fn attach_stacks(accelerators: &mut [Accelerator], stacks: &[StackSupport]) -> Result<(), CatalogError> {
    for support in stacks {
        if let gpuplan_model::StackTarget::Accelerators(ids) = &support.target {
            if let Some(unknown) = ids.iter().find(|id| !accelerators.iter().any(|a| &a.id == *id)) {
                return Err(CatalogError::new(
                    "stacks.toml",
                    format!("`{unknown}` is not an accelerator id of this catalog"),
                )
                .in_field("accelerators"));
            }
        }
    }
    for accelerator in accelerators.iter_mut() {
        accelerator.stacks = stacks
            .iter()
            .filter(|s| s.covers(&accelerator.vendor, &accelerator.id))
            .cloned()
            .collect();
    }
    Ok(())
}

/// The fabric-table entry describing an offering; two entries describing it are an error.
fn fabric_of(fabrics: &[FabricRule], offering: &Offering) -> Result<Option<gpuplan_model::NodeFabric>, String> {
    let mut matching = fabrics
        .iter()
        .filter(|rule| rule.matches(&offering.provider, &offering.instance_type));
    let first = matching.next();
    if let Some(second) = matching.next() {
        return Err(format!(
            "{} {} matches two fabric entries ({} and {}) in networks/",
            offering.provider,
            offering.instance_type,
            first.map(|r| r.instance_types.join("/")).unwrap_or_default(),
            second.instance_types.join("/")
        ));
    }
    Ok(first.map(|rule| rule.fabric.clone()))
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

/// Fitted constants other than the built-in ones (`None` for those), kept for the rest of
/// the process: estimators borrow them for the span of a request, and a catalog is loaded once
/// per process (or per test), so what is kept is small and bounded.
fn own_fitted(fitted: Calibration) -> Option<&'static Calibration> {
    (&fitted != builtin_fitted()).then(|| &*Box::leak(Box::new(fitted)))
}

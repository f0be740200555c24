//! Fresh prices from the providers' public price endpoints, applied to a catalog's files: each
//! quote replaces the price of the offering with the same provider, instance type and region;
//! the result is validated as a whole catalog before anything is written. Fetching is the
//! front end's business; this module only reads responses and rewrites text.

pub mod aws;
pub mod azure;
pub mod gcp;
pub mod lambda;

use crate::catalog::{Catalog, CatalogFile};
use crate::error::CatalogError;
use crate::raw::{NATIVE_PRICE_COLUMNS, OFFERING_COLUMNS};
use gpuplan_model::Date;

/// Which price a quote is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum QuoteBilling {
    OnDemand,
    Spot,
}

/// One price read from a provider's endpoint.
#[derive(Debug, Clone, PartialEq)]
pub struct PriceQuote {
    pub instance_type: String,
    pub region: String,
    pub billing: QuoteBilling,
    pub usd_per_hour: f64,
}

/// A price that a refresh changed (or set where the catalog had none).
#[derive(Debug, Clone, PartialEq)]
pub struct PriceChange {
    pub instance_type: String,
    pub region: String,
    pub billing: QuoteBilling,
    pub before: Option<f64>,
    pub after: f64,
}

/// What a refresh produced: the new files and what changed in them.
#[derive(Debug, Clone)]
pub struct Refreshed {
    pub files: Vec<CatalogFile>,
    pub changes: Vec<PriceChange>,
    /// Quotes left out because their price is not one an instance can have, with why.
    pub skipped: Vec<SkippedQuote>,
    /// Quotes for offerings the catalog does not have (new sizes or regions), left out: the
    /// catalog needs their specifications, which a price endpoint does not give.
    pub unmatched: usize,
    /// Offerings of the provider the endpoint returned no price for, left as they were.
    pub unquoted: usize,
}

/// A quote a refresh did not apply, and why.
#[derive(Debug, Clone, PartialEq)]
pub struct SkippedQuote {
    pub instance_type: String,
    pub region: String,
    pub why: String,
}

/// Highest hourly price an instance is taken to have: above the largest GPU servers' list
/// prices (8-GPU Blackwell servers run about $100 an hour on demand) by far.
pub const MAX_INSTANCE_USD_PER_HOUR: f64 = 2_000.0;

/// Why a quoted price cannot be an instance's hourly price, if it cannot.
pub fn implausible(usd_per_hour: f64) -> Option<String> {
    if !(usd_per_hour.is_finite() && usd_per_hour > 0.0) {
        Some(format!("{usd_per_hour} is not a price"))
    } else if usd_per_hour > MAX_INSTANCE_USD_PER_HOUR {
        Some(format!(
            "${usd_per_hour:.2}/h is beyond any instance's price (at most ${MAX_INSTANCE_USD_PER_HOUR:.0}/h)"
        ))
    } else {
        None
    }
}

/// Applies `quotes` for `provider` to the offerings files among `files`, dating the changed
/// rows `today` and citing `source`; fails when the result is not a valid catalog.
pub fn apply_quotes(
    files: &[CatalogFile],
    provider: &str,
    quotes: &[PriceQuote],
    today: Date,
    source: &str,
) -> Result<Refreshed, CatalogError> {
    let (quotes, skipped): (Vec<PriceQuote>, Vec<PriceQuote>) = quotes
        .iter()
        .cloned()
        .partition(|q| implausible(q.usd_per_hour).is_none());
    let skipped = skipped
        .into_iter()
        .map(|q| SkippedQuote {
            why: implausible(q.usd_per_hour).unwrap_or_default(),
            instance_type: q.instance_type,
            region: q.region,
        })
        .collect();
    let quotes = &quotes[..];
    let mut changes = Vec::new();
    let mut matched = vec![false; quotes.len()];
    let mut unquoted = 0;
    let mut out = Vec::with_capacity(files.len());
    for file in files {
        if !(file.path.starts_with("offerings/") && file.path.ends_with(".csv")) {
            out.push(file.clone());
            continue;
        }
        let (text, file_changes, file_unquoted) =
            rewrite_offerings(file, provider, quotes, &mut matched, today, source)?;
        changes.extend(file_changes);
        unquoted += file_unquoted;
        out.push(CatalogFile {
            path: file.path.clone(),
            text,
        });
    }
    // The same invariants as the embedded data: a refresh never yields a catalog that would
    // not load.
    Catalog::from_files(&out)?;
    Ok(Refreshed {
        files: out,
        changes,
        skipped,
        unmatched: matched.iter().filter(|m| !**m).count(),
        unquoted,
    })
}

type Rewritten = (String, Vec<PriceChange>, usize);

/// A quote this close to the catalog's price is the same price rounded differently (prices put
/// together from per-vCPU and per-GiB rates, say), not a change: a hundredth of a cent an hour.
const UNCHANGED_BELOW_USD_PER_HOUR: f64 = 1e-4;

fn rewrite_offerings(
    file: &CatalogFile,
    provider: &str,
    quotes: &[PriceQuote],
    matched: &mut [bool],
    today: Date,
    source: &str,
) -> Result<Rewritten, CatalogError> {
    let error = |e: csv::Error| CatalogError::new(&file.path, e.to_string());
    let mut reader = csv::ReaderBuilder::new().from_reader(file.text.as_bytes());
    let headers = reader.headers().map_err(error)?.clone();
    let column = |name: &str| headers.iter().position(|h| h == name);
    let (Some(p), Some(t), Some(r), Some(od), Some(sp), Some(src), Some(asof)) = (
        column("provider"),
        column("instance_type"),
        column("region"),
        column("on_demand_usd_per_hour"),
        column("spot_usd_per_hour"),
        column("source"),
        column("as_of"),
    ) else {
        return Ok((file.text.clone(), Vec::new(), 0));
    };
    debug_assert!(
        headers.len() == OFFERING_COLUMNS.len() || headers.len() == OFFERING_COLUMNS.len() + NATIVE_PRICE_COLUMNS.len()
    );
    let mut writer = csv::WriterBuilder::new()
        .terminator(csv::Terminator::Any(b'\n'))
        .from_writer(Vec::new());
    writer.write_record(&headers).map_err(error)?;
    let mut changes = Vec::new();
    let mut unquoted = 0;
    for record in reader.records() {
        let record = record.map_err(error)?;
        let mut fields: Vec<String> = record.iter().map(str::to_string).collect();
        if fields[p] == provider {
            let mut changed = false;
            let mut quoted = false;
            for (index, quote) in quotes.iter().enumerate() {
                if quote.instance_type != fields[t] || quote.region != fields[r] {
                    continue;
                }
                matched[index] = true;
                quoted = true;
                let slot = match quote.billing {
                    QuoteBilling::OnDemand => od,
                    QuoteBilling::Spot => sp,
                };
                let before = fields[slot].parse::<f64>().ok();
                let same = before.is_some_and(|b| (b - quote.usd_per_hour).abs() < UNCHANGED_BELOW_USD_PER_HOUR);
                if !same {
                    fields[slot] = format!("{}", quote.usd_per_hour);
                    changed = true;
                    changes.push(PriceChange {
                        instance_type: quote.instance_type.clone(),
                        region: quote.region.clone(),
                        billing: quote.billing,
                        before,
                        after: quote.usd_per_hour,
                    });
                }
            }
            // A spot price at or above a new on-demand one is dropped, as the importer does.
            if let (Ok(on_demand), Ok(spot)) = (fields[od].parse::<f64>(), fields[sp].parse::<f64>()) {
                if spot >= on_demand {
                    fields[sp].clear();
                }
            }
            if changed {
                fields[src] = source.to_string();
                fields[asof] = today.to_string();
            }
            if !quoted {
                unquoted += 1;
            }
        }
        writer.write_record(&fields).map_err(error)?;
    }
    let bytes = writer
        .into_inner()
        .map_err(|e| CatalogError::new(&file.path, e.to_string()))?;
    let text = String::from_utf8(bytes).map_err(|e| CatalogError::new(&file.path, e.to_string()))?;
    Ok((text, changes, unquoted))
}

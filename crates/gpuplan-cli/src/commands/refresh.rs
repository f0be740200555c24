//! `gpuplan catalog refresh`: current prices from the providers' public endpoints (or recorded
//! pages), applied to the catalog in use, validated, and written atomically to the cache.

use crate::args::RefreshArgs;
use crate::catalog_target::Target;
use crate::output;
use gpuplan::catalog::refresh::{
    PriceQuote, QuoteBilling, Refreshed, SkippedQuote, apply_quotes, aws, azure, gcp, lambda,
};
use gpuplan::model::Date;
use gpuplan::{Catalog, CatalogFile, Error, ExitStatus};
use indicatif::{ProgressBar, ProgressStyle};
use std::collections::{BTreeMap, BTreeSet};
use std::io::Read;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// Pages followed per instance type before giving up on a `NextPageLink` chain.
const MAX_PAGES: usize = 50;
/// Largest response read, bytes.
const MAX_RESPONSE_BYTES: u64 = 32 * 1024 * 1024;
/// Largest EC2 offer file read (streamed, never held whole): us-east-1's runs to gigabytes.
const MAX_OFFER_FILE_BYTES: u64 = 16 * 1024 * 1024 * 1024;
/// Time allowed for one request (for offer files: to connect).
const REQUEST_TIMEOUT: Duration = Duration::from_secs(30);

fn invalid(message: impl Into<String>, hint: Option<&str>) -> Error {
    Error::invalid(message.into(), hint.map(str::to_string))
}

/// A provider whose public price endpoint a refresh reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Endpoint {
    Azure,
    Aws,
    Gcp,
    Lambda,
}

impl Endpoint {
    const ALL: [Endpoint; 4] = [Endpoint::Aws, Endpoint::Azure, Endpoint::Gcp, Endpoint::Lambda];

    fn provider(self) -> &'static str {
        match self {
            Endpoint::Azure => "azure",
            Endpoint::Aws => "aws",
            Endpoint::Gcp => "gcp",
            Endpoint::Lambda => "lambda",
        }
    }

    fn source(self) -> &'static str {
        match self {
            Endpoint::Azure => azure::ENDPOINT,
            Endpoint::Aws => aws::REGION_INDEX_URL,
            Endpoint::Gcp => gcp::ENDPOINT,
            Endpoint::Lambda => lambda::ENDPOINT,
        }
    }

    fn parse(name: &str) -> Result<Endpoint, Error> {
        Endpoint::ALL.into_iter().find(|e| e.provider() == name).ok_or_else(|| {
            invalid(
                format!("catalog refresh cannot fetch prices for `{name}` yet"),
                Some(
                    "refresh aws (the Price List Bulk API's EC2 offer files), azure (the Retail Prices API), \
                     gcp (the Cloud Billing Catalog, with --gcp-api-key) or lambda (its Cloud API, with \
                     --lambda-api-key); the other providers' prices come with releases or your --prices file",
                ),
            )
        })
    }
}

pub fn run(base: Vec<CatalogFile>, args: &RefreshArgs) -> Result<ExitStatus, Error> {
    let endpoints: Vec<Endpoint> = args
        .provider
        .iter()
        .map(|name| Endpoint::parse(name))
        .collect::<Result<_, _>>()?;
    // Where the catalog goes is checked before anything is fetched.
    let target = match &args.into {
        Some(path) => Target::check(path, args.from.as_deref(), false)?,
        None => Target::check(&cache_folder()?, args.from.as_deref(), true)?,
    };
    let today = today()?;
    let mut files = base;
    let mut reports = Vec::new();
    for endpoint in endpoints {
        let catalog = Catalog::from_files(&files)?;
        let offered = |pick: fn(&gpuplan::model::Offering) -> Option<String>| -> BTreeSet<String> {
            catalog
                .offerings()
                .iter()
                .filter(|o| o.provider.as_str() == endpoint.provider())
                .filter_map(pick)
                .collect()
        };
        let types = offered(|o| Some(o.instance_type.clone()));
        let mut skipped = Vec::new();
        let quotes = match (endpoint, &args.from) {
            (Endpoint::Azure, Some(folder)) => recorded_azure(&provider_folder(folder, endpoint, args)?, &mut skipped)?,
            (Endpoint::Azure, None) => fetched_azure(&types, &mut skipped)?,
            (Endpoint::Aws, Some(folder)) => recorded_aws(&provider_folder(folder, endpoint, args)?, &types)?,
            (Endpoint::Aws, None) => fetched_aws(&types, &offered(|o| o.region.clone()))?,
            (Endpoint::Gcp, Some(folder)) => gcp::quotes(
                &recorded_gcp(&provider_folder(folder, endpoint, args)?)?,
                catalog.offerings(),
            ),
            (Endpoint::Gcp, None) => gcp::quotes(&fetched_gcp(args.gcp_api_key.as_deref())?, catalog.offerings()),
            (Endpoint::Lambda, Some(folder)) => lambda::quotes(
                &recorded_lambda(&provider_folder(folder, endpoint, args)?)?,
                catalog.offerings(),
            ),
            (Endpoint::Lambda, None) => {
                lambda::quotes(&fetched_lambda(args.lambda_api_key.as_deref())?, catalog.offerings())
            }
        };
        let mut refreshed = apply_quotes(&files, endpoint.provider(), &quotes, today, endpoint.source())?;
        refreshed.skipped.extend(skipped);
        files = refreshed.files.clone();
        reports.push(report(endpoint.provider(), &refreshed));
    }
    target.write(&files)?;
    let mut text = reports.concat();
    text.push_str(&format!(
        "written to {}; use it with --catalog {0} (or GPUPLAN_CATALOG)\n",
        target.path().display()
    ));
    output::report(&text);
    Ok(ExitStatus::Success)
}

/// Where a provider's recorded responses are: `DIR/<provider>` when it exists, else `DIR`
/// itself when only one provider is refreshed.
fn provider_folder(folder: &Path, endpoint: Endpoint, args: &RefreshArgs) -> Result<PathBuf, Error> {
    let own = folder.join(endpoint.provider());
    if own.is_dir() {
        return Ok(own);
    }
    if args.provider.len() > 1 {
        return Err(invalid(
            format!("--from {}: no `{}` folder in it", folder.display(), endpoint.provider()),
            Some("with several providers, keep each one's recorded responses in a folder named after it"),
        ));
    }
    Ok(folder.to_path_buf())
}

fn today() -> Result<Date, Error> {
    let now = jiff::Zoned::now().date();
    Date::new(now.year() as u16, now.month() as u8, now.day() as u8)
        .ok_or_else(|| invalid("the system clock gives an impossible date", None))
}

/// The `*.json` files of `folder`, in name order.
fn recorded_files(folder: &Path) -> Result<Vec<PathBuf>, Error> {
    let entries = std::fs::read_dir(folder).map_err(|e| {
        invalid(
            format!("--from {}: {e}", folder.display()),
            Some("give a folder of recorded *.json responses"),
        )
    })?;
    let mut pages: Vec<PathBuf> = entries
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.is_file() && p.extension().is_some_and(|e| e == "json"))
        .collect();
    pages.sort();
    if pages.is_empty() {
        return Err(invalid(format!("--from {}: no *.json pages", folder.display()), None));
    }
    Ok(pages)
}

fn recorded_azure(folder: &Path, skipped: &mut Vec<SkippedQuote>) -> Result<Vec<PriceQuote>, Error> {
    let mut quotes = Vec::new();
    for page in recorded_files(folder)? {
        let text = read_recorded(&page)?;
        let page = azure::parse_page(&page.display().to_string(), &text).map_err(response)?;
        quotes.extend(page.quotes);
        skipped.extend(page.skipped);
    }
    Ok(quotes)
}

/// Each `*.json` of `folder` read as one region's EC2 offer file.
fn recorded_aws(folder: &Path, types: &BTreeSet<String>) -> Result<Vec<PriceQuote>, Error> {
    let mut quotes = Vec::new();
    for file in recorded_files(folder)? {
        let reader = std::fs::File::open(&file).map_err(|e| invalid(format!("{}: {e}", file.display()), None))?;
        let name = file.display().to_string();
        quotes.extend(aws::read_offer_file(&name, reader.take(MAX_OFFER_FILE_BYTES), types).map_err(response)?);
    }
    Ok(quotes)
}

/// A price response that cannot be read: the endpoint changed, or a recorded file is not one.
fn response(error: gpuplan::CatalogError) -> Error {
    invalid(
        error.to_string(),
        Some("the previous catalog is untouched; --from takes responses recorded from the provider's price API"),
    )
}

fn client(timeout: Option<Duration>) -> Result<reqwest::blocking::Client, Error> {
    reqwest::blocking::Client::builder()
        .timeout(timeout)
        .connect_timeout(REQUEST_TIMEOUT)
        .user_agent(concat!("gpuplan/", env!("CARGO_PKG_VERSION")))
        .build()
        .map_err(|e| invalid(format!("cannot start an HTTP client: {e}"), None))
}

/// Sends `request`, naming it `shown` in errors (a URL or header with a key is never printed).
fn send(request: reqwest::blocking::RequestBuilder, shown: &str) -> Result<reqwest::blocking::Response, Error> {
    request.send().and_then(|r| r.error_for_status()).map_err(|e| {
        invalid(
            format!("fetching {shown}: {}", crate::causes::chain(&e.without_url())),
            Some("check the network and any API key, or refresh from recorded responses with --from DIR; the previous catalog is untouched"),
        )
    })
}

/// The whole answer to `request` as text, read no further than the size limit.
fn fetch_text(request: reqwest::blocking::RequestBuilder, shown: &str) -> Result<String, Error> {
    let mut text = String::new();
    send(request, shown)?
        .take(MAX_RESPONSE_BYTES + 1)
        .read_to_string(&mut text)
        .map_err(|e| invalid(format!("reading {shown}: {e}"), None))?;
    if text.len() as u64 > MAX_RESPONSE_BYTES {
        return Err(invalid(format!("{shown}: response larger than 32 MiB"), None));
    }
    Ok(text)
}

fn progress(len: usize, message: &'static str, unit: &str) -> ProgressBar {
    let bar = ProgressBar::new(len as u64);
    bar.set_style(
        ProgressStyle::with_template(&format!("{{msg}} {{bar:30}} {{pos}}/{{len}} {unit}"))
            .unwrap_or_else(|_| ProgressStyle::default_bar()),
    );
    bar.set_message(message);
    bar
}

fn fetched_azure(types: &BTreeSet<String>, skipped: &mut Vec<SkippedQuote>) -> Result<Vec<PriceQuote>, Error> {
    let client = client(Some(REQUEST_TIMEOUT))?;
    let bar = progress(types.len(), "Azure Retail Prices API", "instance types");
    let mut quotes = Vec::new();
    for instance_type in types {
        let mut url = Some(azure::query_url(instance_type));
        let mut pages = 0;
        while let Some(next) = url.take() {
            pages += 1;
            if pages > MAX_PAGES {
                break;
            }
            let text = fetch_text(client.get(&next), &next)?;
            let page = azure::parse_page(&next, &text).map_err(response)?;
            quotes.extend(page.quotes);
            skipped.extend(page.skipped);
            url = page.next;
        }
        bar.inc(1);
    }
    bar.finish_and_clear();
    Ok(quotes)
}

fn recorded_gcp(folder: &Path) -> Result<Vec<gcp::Rate>, Error> {
    let mut rates = Vec::new();
    for page in recorded_files(folder)? {
        let text = read_recorded(&page)?;
        rates.extend(
            gcp::parse_page(&page.display().to_string(), &text)
                .map_err(response)?
                .rates,
        );
    }
    Ok(rates)
}

/// Every page of Compute Engine's SKUs. The key goes in the URL, which is never printed.
fn fetched_gcp(api_key: Option<&str>) -> Result<Vec<gcp::Rate>, Error> {
    let key = api_key.filter(|k| !k.is_empty()).ok_or_else(|| {
        invalid(
            "catalog refresh --provider gcp needs an API key for the Cloud Billing Catalog API",
            Some("give --gcp-api-key KEY (or GPUPLAN_GCP_API_KEY): a key of a Google Cloud project with the Cloud Billing API enabled"),
        )
    })?;
    let client = client(Some(REQUEST_TIMEOUT))?;
    let bar = ProgressBar::new_spinner();
    bar.set_message("Cloud Billing Catalog: Compute Engine SKUs");
    let mut rates = Vec::new();
    let mut token: Option<String> = None;
    for page_number in 1..=MAX_PAGES {
        let shown = format!("{} (page {page_number})", gcp::ENDPOINT);
        let text = fetch_text(client.get(gcp::page_url(key, token.as_deref())), &shown)?;
        let page = gcp::parse_page(&shown, &text).map_err(response)?;
        rates.extend(page.rates);
        bar.tick();
        token = page.next;
        if token.is_none() {
            break;
        }
    }
    bar.finish_and_clear();
    Ok(rates)
}

/// A recorded answer read whole, within the size limit.
fn read_recorded(file: &Path) -> Result<String, Error> {
    let size = std::fs::metadata(file).map(|m| m.len()).unwrap_or(0);
    if size > MAX_RESPONSE_BYTES {
        return Err(invalid(format!("{}: larger than 32 MiB", file.display()), None));
    }
    std::fs::read_to_string(file).map_err(|e| invalid(format!("{}: {e}", file.display()), None))
}

fn recorded_lambda(folder: &Path) -> Result<BTreeMap<String, f64>, Error> {
    let mut prices = BTreeMap::new();
    for file in recorded_files(folder)? {
        let text = read_recorded(&file)?;
        prices.extend(lambda::parse(&file.display().to_string(), &text).map_err(response)?);
    }
    Ok(prices)
}

/// Lambda's instance types, with the API key as a bearer token (never printed).
fn fetched_lambda(api_key: Option<&str>) -> Result<BTreeMap<String, f64>, Error> {
    let key = api_key.filter(|k| !k.is_empty()).ok_or_else(|| {
        invalid(
            "catalog refresh --provider lambda needs an API key for Lambda's Cloud API",
            Some("give --lambda-api-key KEY (or GPUPLAN_LAMBDA_API_KEY): a key from the Lambda Cloud dashboard"),
        )
    })?;
    let client = client(Some(REQUEST_TIMEOUT))?;
    let text = fetch_text(client.get(lambda::ENDPOINT).bearer_auth(key), lambda::ENDPOINT)?;
    lambda::parse(lambda::ENDPOINT, &text).map_err(response)
}

/// The region index, then each catalog region's EC2 offer file, streamed: the files run to
/// gigabytes, and only the catalog's instance types are kept.
fn fetched_aws(types: &BTreeSet<String>, regions: &BTreeSet<String>) -> Result<Vec<PriceQuote>, Error> {
    let index_client = client(Some(REQUEST_TIMEOUT))?;
    let index = fetch_text(index_client.get(aws::REGION_INDEX_URL), aws::REGION_INDEX_URL)?;
    let urls = aws::parse_region_index(aws::REGION_INDEX_URL, &index).map_err(response)?;
    let wanted: Vec<(&String, &String)> = urls.iter().filter(|(region, _)| regions.contains(*region)).collect();
    // A whole offer file takes minutes; only connecting is bounded.
    let client = client(None)?;
    let bar = progress(wanted.len(), "AWS Price List offer files", "regions");
    let mut quotes = Vec::new();
    for (region, url) in wanted {
        bar.set_message(format!("AWS Price List offer file {region}"));
        let body = send(client.get(url), url)?;
        quotes.extend(aws::read_offer_file(url, body.take(MAX_OFFER_FILE_BYTES), types).map_err(response)?);
        bar.inc(1);
    }
    bar.finish_and_clear();
    Ok(quotes)
}

/// `$XDG_CACHE_HOME/gpuplan/catalog`, else `$HOME/.cache/gpuplan/catalog`.
fn cache_folder() -> Result<PathBuf, Error> {
    let base = std::env::var_os("XDG_CACHE_HOME")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|home| PathBuf::from(home).join(".cache")))
        .ok_or_else(|| {
            invalid(
                "no cache folder: neither XDG_CACHE_HOME nor HOME is set",
                Some("give --into DIR"),
            )
        })?;
    Ok(base.join("gpuplan").join("catalog"))
}

/// What a refresh changed: one line per instance type and price change, naming its region, or
/// counting its regions when the change is the same in several (Lambda prices alike
/// everywhere), and counting the zones of a region (AWS rows per zone).
fn report(provider: &str, refreshed: &Refreshed) -> String {
    struct Line {
        head: String,
        change: String,
        regions: Vec<String>,
        rows: usize,
    }
    let mut lines: Vec<Line> = Vec::new();
    for change in &refreshed.changes {
        let head = format!(
            "{} {}",
            change.instance_type,
            match change.billing {
                QuoteBilling::OnDemand => "on-demand",
                QuoteBilling::Spot => "spot",
            }
        );
        let before = change.before.map_or("none".to_string(), |b| format!("{b:.4}"));
        let text = format!("{before} → {:.4}", change.after);
        match lines.iter_mut().find(|l| l.head == head && l.change == text) {
            Some(line) => {
                line.rows += 1;
                if !line.regions.contains(&change.region) {
                    line.regions.push(change.region.clone());
                }
            }
            None => lines.push(Line {
                head,
                change: text,
                regions: vec![change.region.clone()],
                rows: 1,
            }),
        }
    }
    let counted = |n: usize, one: &str, many: &str| gpuplan::model::counted(n as f64, one, many);
    let mut text = format!(
        "refreshed {provider}: {} changed, {} no quote and kept {} prices, {} for shapes the catalog lacks\n",
        counted(lines.len(), "price", "prices"),
        counted(refreshed.unquoted, "offering had", "offerings had"),
        if refreshed.unquoted == 1 { "its" } else { "their" },
        counted(refreshed.unmatched, "quote", "quotes"),
    );
    for line in lines.iter().take(MAX_REPORTED) {
        let place = match line.regions.as_slice() {
            [region] if line.rows > 1 => format!("{region} ({} zones)", line.rows),
            [region] => region.clone(),
            many => format!("in {} regions", many.len()),
        };
        let (instance_type, billing) = line.head.split_once(' ').unwrap_or((&line.head, ""));
        text.push_str(&format!("  {instance_type} {place} {billing}: {}\n", line.change));
    }
    if lines.len() > MAX_REPORTED {
        text.push_str(&format!("  … and {} more\n", lines.len() - MAX_REPORTED));
    }
    text.push_str(&skipped_report(&refreshed.skipped));
    text
}

/// The quotes left out, counted by reason, with an example of each.
fn skipped_report(skipped: &[SkippedQuote]) -> String {
    if skipped.is_empty() {
        return String::new();
    }
    let mut reasons: BTreeMap<&str, (usize, &SkippedQuote)> = BTreeMap::new();
    for quote in skipped {
        reasons.entry(quote.why.as_str()).or_insert((0, quote)).0 += 1;
    }
    let mut text = format!(
        "  {} skipped:\n",
        if skipped.len() == 1 {
            "1 quote".to_string()
        } else {
            format!("{} quotes", skipped.len())
        }
    );
    for (why, (count, example)) in reasons {
        text.push_str(&format!(
            "    {count} × {why} (e.g. {} in {})\n",
            example.instance_type, example.region
        ));
    }
    text
}

/// Changed prices listed by name; the rest are counted.
const MAX_REPORTED: usize = 20;

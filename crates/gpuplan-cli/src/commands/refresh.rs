//! `gpuplan catalog refresh`: current prices from the providers' public endpoints (or recorded
//! pages), applied to the catalog in use, validated, and written atomically to the cache.

use crate::args::RefreshArgs;
use crate::output;
use gpuplan::catalog::refresh::{PriceQuote, QuoteBilling, Refreshed, apply_quotes, azure};
use gpuplan::model::Date;
use gpuplan::{Catalog, CatalogFile, Error, ExitStatus};
use indicatif::{ProgressBar, ProgressStyle};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// Pages followed per instance type before giving up on a `NextPageLink` chain.
const MAX_PAGES: usize = 50;
/// Largest response read, bytes.
const MAX_RESPONSE_BYTES: u64 = 32 * 1024 * 1024;
/// Time allowed for one request.
const REQUEST_TIMEOUT: Duration = Duration::from_secs(30);

fn invalid(message: impl Into<String>, hint: Option<&str>) -> Error {
    Error::InvalidInput {
        message: message.into(),
        hint: hint.map(str::to_string),
    }
}

pub fn run(base: Vec<CatalogFile>, args: &RefreshArgs) -> Result<ExitStatus, Error> {
    if let Some(other) = args.provider.iter().find(|p| p.as_str() != "azure") {
        return Err(invalid(
            format!("catalog refresh cannot fetch prices for `{other}` yet"),
            Some("refresh azure (the Azure Retail Prices API); the other providers' endpoints are not read yet"),
        ));
    }
    let base_catalog = Catalog::from_files(&base)?;
    let types: Vec<String> = {
        let mut types: Vec<String> = base_catalog
            .offerings()
            .iter()
            .filter(|o| o.provider.as_str() == "azure")
            .map(|o| o.instance_type.clone())
            .collect();
        types.sort();
        types.dedup();
        types
    };
    let quotes = match &args.from {
        Some(folder) => recorded_quotes(folder)?,
        None => fetched_quotes(&types)?,
    };
    let refreshed = apply_quotes(&base, "azure", &quotes, today()?, azure::ENDPOINT)?;
    let target = match &args.into {
        Some(path) => path.clone(),
        None => cache_folder()?,
    };
    write_atomically(&target, &refreshed.files)?;
    output::text(&report(&refreshed, &target));
    Ok(ExitStatus::Success)
}

fn today() -> Result<Date, Error> {
    let now = jiff::Zoned::now().date();
    Date::new(now.year() as u16, now.month() as u8, now.day() as u8)
        .ok_or_else(|| invalid("the system clock gives an impossible date", None))
}

fn recorded_quotes(folder: &Path) -> Result<Vec<PriceQuote>, Error> {
    let entries = std::fs::read_dir(folder).map_err(|e| {
        invalid(
            format!("--from {}: {e}", folder.display()),
            Some("give a folder of recorded *.json pages"),
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
    let mut quotes = Vec::new();
    for page in pages {
        let size = std::fs::metadata(&page).map(|m| m.len()).unwrap_or(0);
        if size > MAX_RESPONSE_BYTES {
            return Err(invalid(format!("{}: larger than 32 MiB", page.display()), None));
        }
        let text = std::fs::read_to_string(&page).map_err(|e| invalid(format!("{}: {e}", page.display()), None))?;
        quotes.extend(azure::parse_page(&page.display().to_string(), &text)?.quotes);
    }
    Ok(quotes)
}

fn fetched_quotes(types: &[String]) -> Result<Vec<PriceQuote>, Error> {
    let client = reqwest::blocking::Client::builder()
        .timeout(REQUEST_TIMEOUT)
        .user_agent(concat!("gpuplan/", env!("CARGO_PKG_VERSION")))
        .build()
        .map_err(|e| invalid(format!("cannot start an HTTP client: {e}"), None))?;
    let bar = ProgressBar::new(types.len() as u64);
    bar.set_style(
        ProgressStyle::with_template("{msg} {bar:30} {pos}/{len} instance types")
            .unwrap_or_else(|_| ProgressStyle::default_bar()),
    );
    bar.set_message("Azure Retail Prices API");
    let mut quotes = Vec::new();
    for instance_type in types {
        let mut url = Some(azure::query_url(instance_type));
        let mut pages = 0;
        while let Some(next) = url.take() {
            pages += 1;
            if pages > MAX_PAGES {
                break;
            }
            let text = client
                .get(&next)
                .send()
                .and_then(|r| r.error_for_status())
                .and_then(|r| r.text())
                .map_err(|e| {
                    invalid(
                        format!("fetching {next}: {e}"),
                        Some("check the network, or refresh from recorded pages with --from DIR; the previous catalog is untouched"),
                    )
                })?;
            if text.len() as u64 > MAX_RESPONSE_BYTES {
                return Err(invalid(format!("{next}: response larger than 32 MiB"), None));
            }
            let page = azure::parse_page(&next, &text)?;
            quotes.extend(page.quotes);
            url = page.next;
        }
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

/// Writes `files` into a fresh sibling folder and swaps it in by renames, so that `target` is
/// always either the previous catalog or the whole new one.
fn write_atomically(target: &Path, files: &[CatalogFile]) -> Result<(), Error> {
    let fail = |what: &str, path: &Path, e: std::io::Error| invalid(format!("{what} {}: {e}", path.display()), None);
    let parent = target.parent().unwrap_or(Path::new("."));
    std::fs::create_dir_all(parent).map_err(|e| fail("cannot create", parent, e))?;
    let name = target
        .file_name()
        .map_or("catalog".into(), |n| n.to_string_lossy().into_owned());
    let staging = parent.join(format!(".{name}.new-{}", std::process::id()));
    let previous = parent.join(format!(".{name}.old-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&staging);
    for file in files {
        let path = staging.join(&file.path);
        if let Some(folder) = path.parent() {
            std::fs::create_dir_all(folder).map_err(|e| fail("cannot create", folder, e))?;
        }
        std::fs::write(&path, &file.text).map_err(|e| fail("cannot write", &path, e))?;
    }
    let had_previous = target.exists();
    if had_previous {
        std::fs::rename(target, &previous).map_err(|e| fail("cannot move aside", target, e))?;
    }
    if let Err(e) = std::fs::rename(&staging, target) {
        if had_previous {
            let _ = std::fs::rename(&previous, target);
        }
        return Err(fail("cannot move into place", target, e));
    }
    if had_previous {
        let _ = std::fs::remove_dir_all(&previous);
    }
    Ok(())
}

fn report(refreshed: &Refreshed, target: &Path) -> String {
    let mut text = format!(
        "refreshed azure: {} prices changed, {} offerings had no quote and kept their prices, {} quotes for shapes the catalog lacks\n",
        refreshed.changes.len(),
        refreshed.unquoted,
        refreshed.unmatched
    );
    for change in refreshed.changes.iter().take(20) {
        text.push_str(&format!(
            "  {} {} {}: {} → {:.4}\n",
            change.instance_type,
            change.region,
            match change.billing {
                QuoteBilling::OnDemand => "on-demand",
                QuoteBilling::Spot => "spot",
            },
            change.before.map_or("none".to_string(), |b| format!("{b:.4}")),
            change.after
        ));
    }
    if refreshed.changes.len() > 20 {
        text.push_str(&format!("  … and {} more\n", refreshed.changes.len() - 20));
    }
    text.push_str(&format!(
        "written to {}; use it with --catalog {0} (or GPUPLAN_CATALOG)\n",
        target.display()
    ));
    text
}

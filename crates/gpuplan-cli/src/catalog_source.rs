//! Where the catalog comes from: the built-in one, or a folder named by `--catalog` /
//! `GPUPLAN_CATALOG`.

use gpuplan::catalog::PriceOverlay;
use gpuplan::{Catalog, CatalogError, CatalogFile, Error};
use std::path::Path;

/// The catalog with the user's prices over it, when a `--prices` file is given.
pub fn with_prices(catalog: Catalog, file: Option<&Path>) -> Result<Catalog, Error> {
    let Some(path) = file else {
        return Ok(catalog);
    };
    let name = path.display().to_string();
    let hint = "give a TOML or CSV file of [[price]] and [[discount]] entries (see docs/sources.md, \"Your prices\")";
    let text = crate::input_file::read("--prices", path, crate::input_file::MAX_PRICES_BYTES, hint)?;
    let refuse = |message: String| Error::invalid(format!("--prices {name}: {message}"), Some(hint.to_string()));
    let invalid = |e: CatalogError| {
        refuse(format!(
            "{}{}",
            e.line.map_or(String::new(), |l| format!("line {l}: ")),
            e.message
        ))
    };
    let overlay = PriceOverlay::parse(&name, &text).map_err(invalid)?;
    catalog.with_prices(&name, &overlay).map_err(invalid)
}

/// The display currency: USD, or one the catalog has a rate for.
pub fn money(catalog: &Catalog, code: &str) -> Result<gpuplan::emit::Money, Error> {
    let code = code.trim().to_uppercase();
    if code == "USD" {
        return Ok(gpuplan::emit::Money::usd());
    }
    match catalog.exchange_rates().iter().find(|r| r.currency == code) {
        Some(rate) => Ok(gpuplan::emit::Money::new(&code, rate.per_usd)),
        None => {
            let mut known: Vec<&str> = catalog.exchange_rates().iter().map(|r| r.currency.as_str()).collect();
            known.insert(0, "USD");
            Err(Error::invalid(
                format!("--currency {code}: the catalog has no exchange rate for it"),
                Some(format!("use one of {}", known.join(", "))),
            ))
        }
    }
}

/// Largest file read from a `--catalog` folder: the built-in offerings files are a few MiB.
const MAX_CATALOG_FILE_BYTES: u64 = 64 * 1024 * 1024;

/// Age of a catalog's newest price beyond which every command says so.
const STALE_AFTER_DAYS: i32 = 120;

/// Says on standard error when the catalog's newest price is older than
/// [`STALE_AFTER_DAYS`], naming the catalog, and how to refresh it.
pub fn warn_if_stale(catalog: &Catalog, folder: Option<&Path>) {
    let Some(newest) = catalog.newest_price() else {
        return;
    };
    // A catalog other than the built-in one (a refresh, a copy) is named on every command, so
    // that an answer is never mistaken for one from the data that ships.
    if let Some(folder) = folder {
        crate::output::eprintln_note(&format!(
            "using the catalog in {}, prices up to {newest}",
            folder.display()
        ));
    }
    let (Ok(newest), now) = (
        newest.to_string().parse::<jiff::civil::Date>(),
        jiff::Zoned::now().date(),
    ) else {
        return;
    };
    let Ok(age) = newest.until(now) else {
        return;
    };
    let days = age.get_days();
    if days > STALE_AFTER_DAYS {
        let which = folder.map_or("the built-in catalog".to_string(), |f| {
            format!("the catalog in {}", f.display())
        });
        crate::output::eprintln_note(&format!(
            "{which} has prices up to {newest}, {days} days old; `gpuplan catalog refresh` fetches current ones"
        ));
    }
}

/// The files of the catalog in use: the built-in one, or those of `folder`.
pub fn files(folder: Option<&Path>) -> Result<Vec<CatalogFile>, Error> {
    match folder {
        None => Ok(Catalog::embedded_files()),
        Some(folder) => {
            let mut files = Vec::new();
            read_folder(folder, folder, &mut files)?;
            Ok(files)
        }
    }
}

/// The catalog in use: the built-in one, or the one in `folder`, which must have a catalog.toml.
pub fn load(folder: Option<&Path>) -> Result<Catalog, Error> {
    let Some(folder) = folder else {
        return gpuplan::builtin_catalog();
    };
    let files = files(Some(folder))?;
    if !files.iter().any(|f| f.path == "catalog.toml") {
        return Err(Error::Catalog(CatalogError {
            file: folder.display().to_string(),
            line: None,
            column: None,
            field: None,
            message: "is not a catalog: it has no catalog.toml at its top".to_string(),
        }));
    }
    Ok(Catalog::from_files(&files)?)
}

fn read_folder(root: &Path, folder: &Path, files: &mut Vec<CatalogFile>) -> Result<(), Error> {
    let unreadable = |path: &Path, error: std::io::Error| {
        Error::Catalog(CatalogError {
            file: path.display().to_string(),
            line: None,
            column: None,
            field: None,
            message: format!("cannot be read: {error}"),
        })
    };
    let entries = std::fs::read_dir(folder).map_err(|e| unreadable(folder, e))?;
    // Symbolic links are not followed: a link back up the tree would never end.
    let mut paths: Vec<_> = entries
        .filter_map(Result::ok)
        .filter(|entry| entry.file_type().is_ok_and(|t| !t.is_symlink()))
        .map(|entry| entry.path())
        .collect();
    paths.sort();
    for path in paths {
        if path.is_dir() {
            read_folder(root, &path, files)?;
        } else if matches!(path.extension().and_then(|e| e.to_str()), Some("toml" | "csv" | "json")) {
            let size = std::fs::metadata(&path).map_err(|e| unreadable(&path, e))?.len();
            if size > MAX_CATALOG_FILE_BYTES {
                return Err(Error::Catalog(CatalogError {
                    file: path.display().to_string(),
                    line: None,
                    column: None,
                    field: None,
                    message: format!(
                        "is larger than {} MiB, more than any catalog file holds",
                        MAX_CATALOG_FILE_BYTES / 1024 / 1024
                    ),
                }));
            }
            let text = std::fs::read_to_string(&path).map_err(|e| unreadable(&path, e))?;
            let relative = path
                .strip_prefix(root)
                .unwrap_or(&path)
                .to_string_lossy()
                .replace('\\', "/");
            files.push(CatalogFile { path: relative, text });
        }
    }
    Ok(())
}

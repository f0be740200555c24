//! Where the catalog comes from: the built-in one, or a folder named by `--catalog` /
//! `GPUPLAN_CATALOG`.

use gpuplan::{Catalog, CatalogError, CatalogFile, Error};
use std::path::Path;

pub fn load(folder: Option<&Path>) -> Result<Catalog, Error> {
    match folder {
        None => Ok(Catalog::embedded()?),
        Some(folder) => {
            let mut files = Vec::new();
            read_folder(folder, folder, &mut files)?;
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
    }
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

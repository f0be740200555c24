//! Where `catalog refresh` may write: a folder that does not exist yet, or one that is provably
//! an earlier catalog written by gpuplan (it holds [`MARKER`] with a schema version). Anything
//! else at the path — the user's files, a regular file, a device node, a link, the recorded
//! answers being read — is refused and left untouched. The new catalog is staged in a sibling
//! folder and swapped in by renames; the staging folder is removed on every failure path.

use gpuplan::Error;
use std::path::{Path, PathBuf};

/// The file that marks a folder as a catalog gpuplan wrote (it is not a catalog file itself:
/// the loader reads only `*.toml`, `*.csv` and `*.json`).
pub const MARKER: &str = ".gpuplan-catalog";

/// The catalog layout a refresh writes, recorded in the marker.
const SCHEMA_VERSION: u32 = 1;

fn marker_text() -> String {
    format!(
        "written by gpuplan {}\nschema_version = {SCHEMA_VERSION}\n",
        env!("CARGO_PKG_VERSION")
    )
}

/// Whether `text` is a marker this version can replace.
fn is_marker(text: &str) -> bool {
    text.lines()
        .filter_map(|line| line.strip_prefix("schema_version = "))
        .any(|v| v.trim().parse::<u32>().is_ok_and(|v| v >= 1))
}

fn refuse(target: &Path, why: impl std::fmt::Display, hint: &str) -> Error {
    Error::invalid(
        format!("--into {}: {why}; nothing was written", target.display()),
        Some(hint.to_string()),
    )
}

/// A checked place for a new catalog.
#[derive(Debug)]
pub struct Target {
    path: PathBuf,
    replaces: bool,
}

impl Target {
    /// Checks `path` as the target of a refresh that reads recorded answers from `from`.
    /// `create_parents`: the default cache folder's parents are gpuplan's own to create; a
    /// folder the user names must have an existing parent.
    pub fn check(path: &Path, from: Option<&Path>, create_parents: bool) -> Result<Target, Error> {
        let named = path.file_name().is_some_and(|n| n != "." && n != "..");
        if !named {
            return Err(refuse(
                path,
                "is not a folder name gpuplan can create or replace",
                "give the path of a new folder, e.g. --into ./my-catalog",
            ));
        }
        let replaces = match std::fs::symlink_metadata(path) {
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => false,
            Err(e) => return Err(refuse(path, e, "give a path gpuplan can read")),
            Ok(meta) if meta.file_type().is_symlink() => {
                return Err(refuse(
                    path,
                    "is a symbolic link",
                    "give the folder itself, or a new path; links are never followed or replaced",
                ));
            }
            Ok(meta) if !meta.is_dir() => {
                return Err(refuse(
                    path,
                    "is a file, not a catalog folder",
                    "give the path of a new folder, or of a catalog an earlier refresh wrote",
                ));
            }
            Ok(_) => {
                check_marked(path)?;
                true
            }
        };
        let parent = parent_of(path);
        if !parent.is_dir() {
            if create_parents {
                std::fs::create_dir_all(parent).map_err(|e| refuse(path, e, "give --into DIR"))?;
            } else {
                return Err(refuse(
                    path,
                    format!("its folder {} does not exist", parent.display()),
                    "create the parent folder first, or give another --into",
                ));
            }
        }
        if let Some(from) = from {
            check_apart(path, from)?;
        }
        check_not_around_cwd(path)?;
        Ok(Target {
            path: path.to_path_buf(),
            replaces,
        })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Writes `files` into a fresh sibling folder and swaps it in by renames, so that the
    /// target is always either the previous catalog or the whole new one.
    pub fn write(&self, files: &[gpuplan::CatalogFile]) -> Result<(), Error> {
        let mut staging = Staging::create(&self.path)?;
        for file in files {
            staging.write(&file.path, &file.text)?;
        }
        staging.write(MARKER, &marker_text())?;
        let previous = sibling(&self.path, "old");
        if self.replaces {
            // Checked again right before the swap: the folder may have changed meanwhile.
            check_marked(&self.path)?;
            std::fs::rename(&self.path, &previous)
                .map_err(|e| refuse(&self.path, e, "check the folder's permissions"))?;
        }
        if let Err(e) = std::fs::rename(&staging.path, &self.path) {
            if self.replaces {
                let _ = std::fs::rename(&previous, &self.path);
            }
            return Err(refuse(&self.path, e, "check the folder's permissions"));
        }
        staging.keep();
        if self.replaces {
            let _ = std::fs::remove_dir_all(&previous);
        }
        Ok(())
    }
}

/// The folder's marker, or a refusal that says what the folder is.
fn check_marked(path: &Path) -> Result<(), Error> {
    let marker = path.join(MARKER);
    let marked = std::fs::symlink_metadata(&marker).is_ok_and(|m| m.is_file())
        && std::fs::read_to_string(&marker).is_ok_and(|t| is_marker(&t));
    if marked {
        return Ok(());
    }
    let empty = std::fs::read_dir(path).is_ok_and(|mut d| d.next().is_none());
    Err(refuse(
        path,
        if empty {
            "is an existing folder, not a catalog gpuplan wrote"
        } else {
            "holds files that are not a catalog gpuplan wrote (it has no .gpuplan-catalog marker)"
        },
        "give the path of a new folder; a refresh replaces only a catalog an earlier refresh wrote",
    ))
}

fn parent_of(path: &Path) -> &Path {
    match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    }
}

/// The canonical form of `path`, or of its parent joined with its name when it does not exist.
fn canonical(path: &Path) -> Option<PathBuf> {
    std::fs::canonicalize(path)
        .ok()
        .or_else(|| Some(std::fs::canonicalize(parent_of(path)).ok()?.join(path.file_name()?)))
}

/// The target and the recorded answers must not contain each other.
fn check_apart(target: &Path, from: &Path) -> Result<(), Error> {
    let (Some(t), Some(f)) = (canonical(target), canonical(from)) else {
        return Ok(());
    };
    if t.starts_with(&f) || f.starts_with(&t) {
        return Err(refuse(
            target,
            format!(
                "overlaps --from {}, whose recorded answers would be replaced",
                from.display()
            ),
            "write the catalog to a folder apart from the recorded answers",
        ));
    }
    Ok(())
}

/// The target must not be the current folder or one above it.
fn check_not_around_cwd(target: &Path) -> Result<(), Error> {
    let (Some(t), Ok(cwd)) = (canonical(target), std::env::current_dir()) else {
        return Ok(());
    };
    if cwd.starts_with(&t) {
        return Err(refuse(
            target,
            "is the current folder or one above it",
            "give the path of a new folder, e.g. --into ./my-catalog",
        ));
    }
    Ok(())
}

fn sibling(target: &Path, what: &str) -> PathBuf {
    let name = target
        .file_name()
        .map_or("catalog".into(), |n| n.to_string_lossy().into_owned());
    parent_of(target).join(format!(".{name}.{what}-{}", std::process::id()))
}

/// A staging folder of our own making, removed when dropped unless kept.
struct Staging {
    path: PathBuf,
    kept: bool,
}

impl Staging {
    /// A new folder beside `target`; never one that already exists.
    fn create(target: &Path) -> Result<Staging, Error> {
        let base = sibling(target, "new");
        for attempt in 0..100 {
            let path = if attempt == 0 {
                base.clone()
            } else {
                PathBuf::from(format!("{}-{attempt}", base.display()))
            };
            match std::fs::create_dir(&path) {
                Ok(()) => {
                    return Ok(Staging { path, kept: false });
                }
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
                Err(e) => return Err(refuse(target, e, "check the folder's permissions")),
            }
        }
        Err(refuse(
            target,
            "no free name for a staging folder beside it",
            "remove stale .*.new-* folders",
        ))
    }

    fn write(&self, relative: &str, text: &str) -> Result<(), Error> {
        let safe = Path::new(relative)
            .components()
            .all(|c| matches!(c, std::path::Component::Normal(_)));
        if !safe {
            return Err(Error::invalid(
                format!("catalog file path `{relative}` leaves its folder"),
                None,
            ));
        }
        let path = self.path.join(relative);
        if let Some(folder) = path.parent() {
            std::fs::create_dir_all(folder)
                .map_err(|e| Error::invalid(format!("cannot create {}: {e}", folder.display()), None))?;
        }
        std::fs::write(&path, text).map_err(|e| Error::invalid(format!("cannot write {}: {e}", path.display()), None))
    }

    fn keep(&mut self) {
        self.kept = true;
    }
}

impl Drop for Staging {
    fn drop(&mut self) {
        if !self.kept {
            let _ = std::fs::remove_dir_all(&self.path);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scratch(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("gpuplan-target-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        dir
    }

    #[test]
    fn only_a_marked_folder_is_replaced() {
        let root = scratch("marked");
        let user = root.join("user");
        std::fs::create_dir(&user).unwrap();
        std::fs::write(user.join("notes.txt"), "precious").unwrap();
        assert!(Target::check(&user, None, false).is_err());
        assert_eq!(std::fs::read_to_string(user.join("notes.txt")).unwrap(), "precious");
        let fresh = root.join("fresh");
        let target = Target::check(&fresh, None, false).unwrap();
        target
            .write(&[gpuplan::CatalogFile {
                path: "catalog.toml".into(),
                text: "x".into(),
            }])
            .unwrap();
        assert!(fresh.join(MARKER).is_file());
        assert!(Target::check(&fresh, None, false).unwrap().replaces);
        let leftovers: Vec<_> = std::fs::read_dir(&root)
            .unwrap()
            .filter_map(Result::ok)
            .filter(|e| e.file_name().to_string_lossy().starts_with('.'))
            .collect();
        assert!(leftovers.is_empty(), "{leftovers:?}");
        std::fs::remove_dir_all(&root).unwrap();
    }

    #[test]
    fn a_file_a_link_a_missing_parent_and_the_source_are_refused() {
        let root = scratch("refused");
        let file = root.join("file");
        std::fs::write(&file, "data").unwrap();
        assert!(Target::check(&file, None, false).is_err());
        assert!(Target::check(&root.join("no/such/parent"), None, false).is_err());
        let link = root.join("link");
        std::os::unix::fs::symlink(&root, &link).unwrap();
        assert!(Target::check(&link, None, false).is_err());
        assert!(Target::check(&root.join("inside"), Some(&root), false).is_err());
        assert!(Target::check(Path::new("."), None, false).is_err());
        assert!(Target::check(Path::new("/dev/null"), None, false).is_err());
        assert!(is_marker("schema_version = 1\n") && !is_marker("precious"));
        std::fs::remove_dir_all(&root).unwrap();
    }

    #[test]
    fn a_failed_write_leaves_no_staging_folder() {
        let root = scratch("failed");
        let target = Target::check(&root.join("catalog"), None, false).unwrap();
        let bad = target.write(&[gpuplan::CatalogFile {
            path: "../escape.toml".into(),
            text: String::new(),
        }]);
        assert!(bad.is_err());
        assert_eq!(std::fs::read_dir(&root).unwrap().count(), 0);
        std::fs::remove_dir_all(&root).unwrap();
    }
}

//! Embeds every file under `data/` into the library: writes `embedded_files.rs`, a sorted
//! list of `(relative path, contents)` built from `include_str!`, so adding a data file needs
//! no code change.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

fn main() {
    let manifest_dir = PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR"));
    let data_dir = manifest_dir.join("data");
    println!("cargo:rerun-if-changed=data");

    let mut files = Vec::new();
    collect(&data_dir, &mut files);
    files.sort();

    let mut code = String::from("/// Every embedded catalog file, as `(path relative to data/, contents)`.\n");
    code.push_str("pub(crate) static EMBEDDED_FILES: &[(&str, &str)] = &[\n");
    for file in &files {
        let relative = file.strip_prefix(&data_dir).expect("collected under data/");
        let relative = relative.to_string_lossy().replace('\\', "/");
        writeln!(
            code,
            "    ({relative:?}, include_str!({:?})),",
            file.display().to_string()
        )
        .expect("writing to a String");
    }
    code.push_str("];\n");

    let out = PathBuf::from(std::env::var_os("OUT_DIR").expect("cargo sets OUT_DIR"));
    std::fs::write(out.join("embedded_files.rs"), code).expect("OUT_DIR is writable");
}

fn collect(dir: &Path, files: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    for entry in entries.flatten() {
        let path = entry.path();
        println!("cargo:rerun-if-changed={}", path.display());
        if path.is_dir() {
            collect(&path, files);
        } else if matches!(path.extension().and_then(|e| e.to_str()), Some("toml" | "csv" | "json")) {
            files.push(path);
        }
    }
}

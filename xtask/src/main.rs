//! `cargo xtask import [--snapshot DIR] [--as-of YYYY-MM-DD]`, `cargo xtask fuzz [--minutes N]`,
//! `cargo xtask load [--requests N] [--plans N]` (the API under load on loopback).
//!
//! Imports the SkyPilot catalog snapshot into `crates/gpuplan-catalog/data/offerings/`,
//! one CSV per provider, and writes `IMPORT_REPORT.md` beside them. Run it after updating
//! the snapshot or the accelerator data, then review the diff.

#![allow(clippy::print_stdout, clippy::print_stderr)]

mod load;

use anyhow::{Context, Result, bail};
use gpuplan_catalog::import::{ImportOptions, SnapshotFile, import_skypilot, write_offerings_csv};
use gpuplan_catalog::{Catalog, CatalogFile};
use gpuplan_model::Date;
use std::collections::HashSet;
use std::path::{Path, PathBuf};

/// The snapshot files imported: `(cloud, path under catalogs/, source commit)`, from the
/// snapshot's SOURCE.md.
const SNAPSHOT_FILES: &[(&str, &str, &str)] = &[
    ("aws", "v9/aws/vms.subset.csv", "2c3d7ea"),
    ("aws", "v9/aws/vms.subset2.csv", "2c3d7ea"),
    ("gcp", "v9/gcp/vms.subset.csv", "2c3d7ea"),
    ("gcp", "v9/gcp/vms.subset2.csv", "2c3d7ea"),
    ("azure", "v6/azure/vms.csv", "098741e"),
    ("oci", "v9/oci/vms.csv", "a5be538"),
    ("lambda", "v9/lambda/vms.csv", "2c3d7ea"),
    ("runpod", "v8/runpod/vms.csv", "01acdfd"),
    ("cudo", "v9/cudo/vms.csv", "d9bf3aa"),
    ("fluidstack", "v9/fluidstack/vms.csv", "2c3d7ea"),
    ("nebius", "v9/nebius/vms.csv", "d9bf3aa"),
    ("seeweb", "v9/seeweb/vms.csv", "2c3d7ea"),
    ("vast", "v9/vast/vms.csv", "a5be538"),
    ("ibm", "v9/ibm/vms.csv", "a5be538"),
    ("verda", "v8/verda/vms.csv", "000c1d0"),
    ("hyperbolic", "v8/hyperbolic/vms.csv", "0082b04"),
    ("mithril", "v8/mithril/vms.csv", "1f9eb0c"),
];

/// The day the snapshot in `shared/data/skypilot-catalog` was taken.
const DEFAULT_AS_OF: &str = "2026-11-22";

fn main() -> Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.first().map(String::as_str) {
        Some("import") => import(&args[1..]),
        Some("fuzz") => fuzz(&args[1..]),
        Some("load") => load::load(&args[1..]),
        _ => bail!(
            "usage: cargo xtask import [--snapshot DIR] [--as-of YYYY-MM-DD] | cargo xtask fuzz [--minutes N] | cargo xtask load [--requests N] [--plans N]"
        ),
    }
}

/// Cases per fuzz round: one `cargo test` of `crates/gpuplan/tests/fuzz.rs`, each of its
/// targets run this many times with a fresh seed.
const FUZZ_CASES_PER_ROUND: u64 = 2_000;

/// Runs the fuzz targets with fresh seeds, round after round, for `--minutes` (default 10),
/// and reports the inputs tried; a failing round stops with proptest's minimal failing input.
fn fuzz(args: &[String]) -> Result<()> {
    let minutes: u64 = match args {
        [] => 10,
        [flag, value] if flag == "--minutes" => value.parse()?,
        _ => bail!("usage: cargo xtask fuzz [--minutes N]"),
    };
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(minutes * 60);
    let mut rounds = 0u64;
    while std::time::Instant::now() < deadline {
        let seed = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(rounds, |d| d.as_nanos() as u64 ^ rounds);
        let status = std::process::Command::new(env!("CARGO"))
            .current_dir(workspace_root())
            .args([
                "test",
                "--release",
                "--quiet",
                "-p",
                "gpuplan",
                "--test",
                "integration",
                "fuzz::",
            ])
            .env("PROPTEST_CASES", FUZZ_CASES_PER_ROUND.to_string())
            .env("PROPTEST_RNG_SEED", seed.to_string())
            .status()?;
        if !status.success() {
            bail!(
                "fuzz round {} (seed {seed}) failed; proptest printed the minimal input above",
                rounds + 1
            );
        }
        rounds += 1;
    }
    let targets = 6;
    println!(
        "fuzzed {} inputs per target across {targets} targets ({} rounds of {FUZZ_CASES_PER_ROUND}); 0 crashes",
        rounds * FUZZ_CASES_PER_ROUND,
        rounds
    );
    Ok(())
}

fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .map(Path::to_path_buf)
        .unwrap_or_default()
}

fn import(args: &[String]) -> Result<()> {
    let root = workspace_root();
    let mut snapshot = root.join("../shared/data/skypilot-catalog");
    let mut as_of = DEFAULT_AS_OF.to_string();
    let mut rest = args.iter();
    while let Some(flag) = rest.next() {
        let value = rest.next().with_context(|| format!("{flag} needs a value"))?;
        match flag.as_str() {
            "--snapshot" => snapshot = PathBuf::from(value),
            "--as-of" => as_of = value.clone(),
            other => bail!("unknown flag {other}"),
        }
    }
    let as_of: Date = as_of.parse()?;
    let data = root.join("crates/gpuplan-catalog/data");

    // The accelerators and the curated offerings, validated as a catalog of their own.
    let mut files = vec![read(&data, "catalog.toml")?];
    for dir in ["accelerators", "offerings/curated"] {
        for entry in std::fs::read_dir(data.join(dir)).with_context(|| format!("reading {dir}"))? {
            let name = entry?.file_name().to_string_lossy().to_string();
            if name.ends_with(".toml") || name.ends_with(".csv") {
                files.push(read(&data, &format!("{dir}/{name}"))?);
            }
        }
    }
    let base = Catalog::from_files(&files)?;
    let curated: HashSet<(String, String, String)> = base
        .offerings()
        .iter()
        .map(|o| {
            (
                o.provider.to_string(),
                o.instance_type.clone(),
                o.region.clone().unwrap_or_default(),
            )
        })
        .collect();

    let mut snapshot_files = Vec::new();
    for (cloud, path, commit) in SNAPSHOT_FILES {
        let full = snapshot.join("catalogs").join(path);
        let text = std::fs::read_to_string(&full).with_context(|| format!("reading {}", full.display()))?;
        snapshot_files.push(SnapshotFile {
            cloud: (*cloud).to_string(),
            source: format!("skypilot-catalog catalogs/{path} @{commit}"),
            text,
        });
    }
    let imported = import_skypilot(&snapshot_files, base.accelerators(), &ImportOptions { as_of, curated })?;

    for (provider, offerings) in &imported.offerings {
        let path = data.join(format!("offerings/{provider}.csv"));
        std::fs::write(&path, write_offerings_csv(offerings)).with_context(|| format!("writing {}", path.display()))?;
        println!("{provider:>12}: {} offerings", offerings.len());
    }
    let report = format!(
        "# Import report\n\nWritten by `cargo xtask import` from the SkyPilot catalog snapshot \
         (as of {as_of}). Every repaired or dropped row is counted here with its reason.\n\n{}",
        imported.report.to_markdown()
    );
    std::fs::write(data.join("offerings/IMPORT_REPORT.md"), report)?;
    println!("report: crates/gpuplan-catalog/data/offerings/IMPORT_REPORT.md");
    Ok(())
}

fn read(data: &Path, relative: &str) -> Result<CatalogFile> {
    let text = std::fs::read_to_string(data.join(relative)).with_context(|| format!("reading {relative}"))?;
    Ok(CatalogFile {
        path: relative.to_string(),
        text,
    })
}

//! `gpuplan export plan.json --to …` and `gpuplan plan … --export …`: deployment files for a
//! plan's configuration, printed or written to a folder.

use crate::args::{ExportArgs, ExportSettingsArgs, ExportTarget};
use crate::output;
use gpuplan::emit::manifest::{ALTERNATIVES, ManifestFile, yaml_stream};
use gpuplan::emit::wire::PlanJson;
use gpuplan::{Catalog, Error, ExitStatus, SavedPlan};

/// Largest saved plan read.
const MAX_PLAN_BYTES: u64 = 64 * 1024 * 1024;

pub fn run(catalog: &Catalog, args: &ExportArgs) -> Result<ExitStatus, Error> {
    let text = crate::input_file::read(
        "export",
        &args.plan,
        MAX_PLAN_BYTES,
        "give a plan saved with `gpuplan plan … --format json > plan.json`",
    )?;
    let plan = gpuplan::read_saved_plan(&text, &args.plan.display().to_string())?;
    emit(catalog, &plan, args.to, &args.settings)
}

/// A plan just computed, exported.
pub fn write(
    catalog: &Catalog,
    wire: &PlanJson,
    target: ExportTarget,
    settings: &ExportSettingsArgs,
) -> Result<ExitStatus, Error> {
    let json = serde_json::to_string(wire).map_err(|e| Error::invalid(format!("the plan: {e}"), None))?;
    let plan = gpuplan::read_saved_plan(&json, "the plan")?;
    emit(catalog, &plan, target, settings)
}

fn emit(
    catalog: &Catalog,
    plan: &SavedPlan,
    target: ExportTarget,
    settings: &ExportSettingsArgs,
) -> Result<ExitStatus, Error> {
    // The flags are the API's export fields: one parser, one set of defaults.
    let options = gpuplan::ExportOptions {
        plan: serde_json::Value::Null,
        to: clap_name(target)?,
        pick: settings.pick,
        flavour: settings.flavour.map(clap_name).transpose()?,
        image: settings.image.clone(),
        storage_class: settings.storage_class.clone(),
        name: settings.name.clone(),
        namespace: settings.namespace.clone(),
    };
    let (target, export_settings) = options.settings()?;
    let files = gpuplan::export_plan(catalog, plan, target, &export_settings)?;
    match &settings.out {
        Some(folder) => write_folder(folder, &files),
        None => {
            output::text(&yaml_stream(&files));
            Ok(ExitStatus::Success)
        }
    }
}

/// The name clap knows a value by.
fn clap_name(value: impl clap::ValueEnum) -> Result<String, Error> {
    value
        .to_possible_value()
        .map(|v| v.get_name().to_string())
        .ok_or_else(|| Error::invalid("a value with no name", None))
}

/// Where a file goes inside the export folder.
fn relative_path(file: &ManifestFile) -> std::path::PathBuf {
    if file.alternative {
        std::path::Path::new(ALTERNATIVES).join(&file.name)
    } else {
        std::path::PathBuf::from(&file.name)
    }
}

/// Writes the files into `folder`: created if missing (its parent must exist), an existing
/// one only where it is a folder; a file in it is replaced only where it is a plain file, never
/// through a link.
fn write_folder(folder: &std::path::Path, files: &[ManifestFile]) -> Result<ExitStatus, Error> {
    let refuse =
        |why: String, hint: &str| Error::invalid(format!("--out {}: {why}", folder.display()), Some(hint.to_string()));
    match std::fs::symlink_metadata(folder) {
        Ok(meta) if meta.is_dir() => {}
        Ok(_) => return Err(refuse("is not a folder".into(), "give a folder for the exported files")),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            let parent = folder
                .parent()
                .filter(|p| !p.as_os_str().is_empty())
                .unwrap_or(std::path::Path::new("."));
            if !parent.is_dir() {
                return Err(refuse(
                    format!("its folder {} does not exist", parent.display()),
                    "create the parent folder first, or give another --out",
                ));
            }
            std::fs::create_dir(folder).map_err(|e| refuse(e.to_string(), "check the folder's permissions"))?;
        }
        Err(e) => return Err(refuse(e.to_string(), "give a folder gpuplan can read")),
    }
    for file in files {
        let relative = relative_path(file);
        let path = folder.join(&relative);
        if file.alternative {
            let sub = folder.join(ALTERNATIVES);
            if std::fs::symlink_metadata(&sub).is_ok_and(|m| !m.is_dir()) {
                return Err(refuse(
                    format!("{ALTERNATIVES} exists and is not a folder"),
                    "remove it, or give another --out",
                ));
            }
            std::fs::create_dir_all(&sub).map_err(|e| refuse(e.to_string(), "check the folder's permissions"))?;
        }
        if std::fs::symlink_metadata(&path).is_ok_and(|m| !m.is_file()) {
            return Err(refuse(
                format!("{} exists and is not a plain file", relative.display()),
                "remove it, or give another --out",
            ));
        }
        std::fs::write(&path, &file.yaml).map_err(|e| refuse(e.to_string(), "check the folder's permissions"))?;
    }
    let names: Vec<String> = files.iter().map(|f| relative_path(f).display().to_string()).collect();
    output::text(&format!("wrote {} to {}\n", names.join(", "), folder.display()));
    // A warning in a file's header is one the user must act on before applying: say it here
    // too, once, rather than only in comments nobody reads before `kubectl apply`.
    for warning in warnings(files) {
        eprintln!("warning: {warning}");
    }
    Ok(ExitStatus::Success)
}

/// The distinct `WARNING:` lines of the files' comment headers, in order.
fn warnings(files: &[ManifestFile]) -> Vec<String> {
    let mut seen = Vec::new();
    for line in files.iter().flat_map(|f| f.yaml.lines()) {
        if let Some(text) = line.trim_start_matches('#').trim().strip_prefix("WARNING: ") {
            if !seen.iter().any(|s: &String| s == text) {
                seen.push(text.to_string());
            }
        }
    }
    seen
}

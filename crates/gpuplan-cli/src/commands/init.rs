//! `gpuplan init`: a commented example job file, with its JSON Schema beside it for editors.

use crate::args::InitArgs;
use crate::output;
use gpuplan::{Error, ExitStatus};

/// The schema's file name, as the examples' first line points editors to it.
const SCHEMA_FILE: &str = "job.schema.json";

pub fn run(args: &InitArgs) -> Result<ExitStatus, Error> {
    let schema = serde_json::to_string_pretty(&gpuplan::job_schema())
        .map_err(|e| Error::invalid(format!("the schema: {e}"), None))?;
    if args.schema {
        output::text(&format!("{schema}\n"));
        return Ok(ExitStatus::Success);
    }
    let example = if args.serving {
        gpuplan::EXAMPLE_SERVING_JOB
    } else {
        gpuplan::EXAMPLE_TRAINING_JOB
    };
    let schema_path = args.path.parent().unwrap_or(std::path::Path::new("")).join(SCHEMA_FILE);
    let schema_text = format!("{schema}\n");
    // The same schema already beside another example is no conflict.
    let same_schema = std::fs::read_to_string(&schema_path).is_ok_and(|text| text == schema_text);
    for path in [&args.path, &schema_path] {
        if path.exists() && !args.force && !(path == &schema_path && same_schema) {
            return Err(Error::invalid(
                format!("{} exists", path.display()),
                Some("give another path, or --force to overwrite".to_string()),
            ));
        }
    }
    let refuse = |path: &std::path::Path, e: std::io::Error| Error::invalid(format!("{}: {e}", path.display()), None);
    std::fs::write(&args.path, example).map_err(|e| refuse(&args.path, e))?;
    std::fs::write(&schema_path, schema_text).map_err(|e| refuse(&schema_path, e))?;
    output::text(&format!(
        "wrote {} and {}; plan it with `gpuplan plan -f {}`\n",
        args.path.display(),
        schema_path.display(),
        args.path.display()
    ));
    Ok(ExitStatus::Success)
}

//! The job file: what `gpuplan plan` is asked, kept in YAML or TOML beside the training code.
//! Its keys are the plan's options (the flags in snake_case), so a file, a flag and an API field
//! cannot come to mean different things. Mistakes are reported at their line and column.

use crate::Error;
use crate::options::PlanOptions;
use gpuplan_model::did_you_mean;
use serde_json::{Map, Value};

/// How a job file is written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum JobFormat {
    Yaml,
    Toml,
}

impl JobFormat {
    /// The format a file name implies: `.toml` is TOML, anything else YAML.
    pub fn of_path(path: &str) -> JobFormat {
        if path.to_ascii_lowercase().ends_with(".toml") {
            JobFormat::Toml
        } else {
            JobFormat::Yaml
        }
    }

    /// The format of a job: its name's where it has an extension (`.toml`, `.yaml`, `.yml`),
    /// else read from its first line with a key (standard input): `key = …` is TOML.
    pub fn detect(name: &str, text: &str) -> JobFormat {
        let lower = name.to_ascii_lowercase();
        if lower.ends_with(".toml") || lower.ends_with(".yaml") || lower.ends_with(".yml") {
            return JobFormat::of_path(name);
        }
        let first = text
            .lines()
            .map(str::trim)
            .find(|line| !line.is_empty() && !line.starts_with('#'));
        match first {
            Some(line) if line.starts_with('[') || toml_key_line(line) => JobFormat::Toml,
            _ => JobFormat::Yaml,
        }
    }
}

/// `key = value`, with the key before any `:` (which would make it YAML).
fn toml_key_line(line: &str) -> bool {
    match (line.find('='), line.find(':')) {
        (Some(equals), Some(colon)) => equals < colon,
        (Some(_), None) => true,
        _ => false,
    }
}

/// A commented example of a training job (`gpuplan init`).
pub const EXAMPLE_TRAINING_JOB: &str = include_str!("../assets/job.training.yaml");
/// A commented example of a serving job (`gpuplan init --serving`).
pub const EXAMPLE_SERVING_JOB: &str = include_str!("../assets/job.serving.yaml");

/// The options a job file sets, checked key by key: each is one of the plan's options and
/// holds a value of its type. `name` names the file in messages.
pub fn parse_job(text: &str, format: JobFormat, name: &str) -> Result<Map<String, Value>, Error> {
    check_nesting(text, name)?;
    let value: Value = match format {
        JobFormat::Yaml => {
            let raw: serde_yaml_ng::Value = serde_yaml_ng::from_str(text).map_err(|e| {
                let at = e.location().map(|l| (l.line(), l.column()));
                located(name, at, &e.to_string(), "check the YAML syntax")
            })?;
            if let serde_yaml_ng::Value::Mapping(map) = &raw {
                let keyed = map.iter().filter_map(|(k, v)| Some((k.as_str()?, yaml_non_finite(v)?)));
                check_finite(keyed, text, name)?;
            }
            serde_yaml_ng::from_value(raw).map_err(|e| located(name, None, &e.to_string(), "check the YAML syntax"))?
        }
        JobFormat::Toml => {
            let raw: toml::Value = toml::from_str(text).map_err(|e| {
                let at = e.span().map(|span| line_and_column(text, span.start));
                located(
                    name,
                    at,
                    &e.message().trim().replace('\n', "; "),
                    "check the TOML syntax",
                )
            })?;
            if let toml::Value::Table(table) = &raw {
                let keyed = table
                    .iter()
                    .filter_map(|(k, v)| Some((k.as_str(), toml_non_finite(v)?)));
                check_finite(keyed, text, name)?;
            }
            raw.try_into()
                .map_err(|e: toml::de::Error| located(name, None, e.message(), "check the TOML syntax"))?
        }
    };
    let map = match value {
        Value::Object(map) => map,
        Value::Null => Map::new(),
        other => {
            return Err(located(
                name,
                Some((1, 1)),
                &format!("a job file is a mapping of options, not {}", kind_of(&other)),
                "write `model: …`, `task: …` and the other options as keys",
            ));
        }
    };
    let known = option_names();
    for (key, value) in &map {
        let at = key_position(text, key);
        if !known.iter().any(|k| k == key) {
            let hint = match did_you_mean(key, known.iter().map(String::as_str)) {
                Some(near) => format!("did you mean `{near}`? Keys are `gpuplan plan` flags in snake_case"),
                None => "keys are `gpuplan plan` flags in snake_case (`gpuplan init` writes an example)".to_string(),
            };
            return Err(located(name, at, &format!("unknown key `{key}`"), &hint));
        }
        if let Err(problem) = check_value(key, value) {
            return Err(located(
                name,
                at,
                &format!("`{key}`: {problem}"),
                "see `gpuplan plan --help` for what the flag takes",
            ));
        }
    }
    Ok(map)
}

/// Deepest nesting of brackets a job file may have: options are at most a list of mappings
/// deep, and a parser given thousands of levels takes quadratic time.
const MAX_NESTING: usize = 16;

/// Refuses a file whose flow collections (`[`, `{`) or indentation nest deeper than any job
/// file needs, before a parser sees it.
fn check_nesting(text: &str, name: &str) -> Result<(), Error> {
    let (mut depth, mut deepest, mut quote) = (0usize, 0usize, None::<char>);
    for (line_index, line) in text.lines().enumerate() {
        let indent = line.len() - line.trim_start_matches([' ', '-']).len();
        if indent / 2 > MAX_NESTING * 2 {
            return Err(located(
                name,
                Some((line_index + 1, 1)),
                "nested deeper than any job file needs",
                "options are at most a list of mappings deep",
            ));
        }
        for c in line.chars() {
            match (quote, c) {
                (Some(q), c) if c == q => quote = None,
                (Some(_), _) => {}
                (None, '"' | '\'') => quote = Some(c),
                (None, '#') => break,
                (None, '[' | '{') => depth += 1,
                (None, ']' | '}') => depth = depth.saturating_sub(1),
                _ => {}
            }
            deepest = deepest.max(depth);
            if deepest > MAX_NESTING {
                return Err(located(
                    name,
                    Some((line_index + 1, 1)),
                    &format!("brackets nested more than {MAX_NESTING} deep"),
                    "options are at most a list of mappings deep",
                ));
            }
        }
    }
    Ok(())
}

/// The first number under a YAML value that is NaN or infinite: JSON cannot hold them, so they
/// would otherwise vanish into `null`.
fn yaml_non_finite(value: &serde_yaml_ng::Value) -> Option<f64> {
    match value {
        serde_yaml_ng::Value::Number(n) => n.as_f64().filter(|f| !f.is_finite()),
        serde_yaml_ng::Value::Sequence(items) => items.iter().find_map(yaml_non_finite),
        serde_yaml_ng::Value::Mapping(map) => map.values().find_map(yaml_non_finite),
        serde_yaml_ng::Value::Tagged(tagged) => yaml_non_finite(&tagged.value),
        _ => None,
    }
}

/// The same for TOML.
fn toml_non_finite(value: &toml::Value) -> Option<f64> {
    match value {
        toml::Value::Float(f) => Some(*f).filter(|f| !f.is_finite()),
        toml::Value::Array(items) => items.iter().find_map(toml_non_finite),
        toml::Value::Table(table) => table.values().find_map(toml_non_finite),
        _ => None,
    }
}

/// Refuses the first top-level key holding a NaN or an infinity, at its line.
fn check_finite<'a>(mut keyed: impl Iterator<Item = (&'a str, f64)>, text: &str, name: &str) -> Result<(), Error> {
    match keyed.next() {
        Some((key, bad)) => Err(located(
            name,
            key_position(text, key),
            &format!("`{key}`: {bad} is not a number a job can use"),
            "give a finite number",
        )),
        None => Ok(()),
    }
}

/// The names of the plan's options: the keys a job file may hold.
pub fn option_names() -> Vec<String> {
    let mut names = match serde_json::to_value(PlanOptions::default()) {
        Ok(Value::Object(map)) => map.into_iter().map(|(k, _)| k).collect(),
        _ => Vec::new(),
    };
    names.extend(crate::options::FIELD_ALIASES.iter().map(|(alias, _)| alias.to_string()));
    // Read but not echoed (see `WorkloadOptions::requests`).
    names.push("requests".to_string());
    names
}

/// `value` as option `key`: the other options at their defaults (a model and task stand in, as
/// both are required), so a failure is this key's.
fn check_value(key: &str, value: &Value) -> Result<(), String> {
    let mut probe = Map::new();
    probe.insert("model".to_string(), Value::from("probe"));
    probe.insert("task".to_string(), Value::from("lora"));
    probe.insert(key.to_string(), value.clone());
    serde_json::from_value::<PlanOptions>(Value::Object(probe))
        .map(|_| ())
        .map_err(|e| e.to_string())
}

fn kind_of(value: &Value) -> &'static str {
    match value {
        Value::Array(_) => "a list",
        Value::String(_) => "a string",
        Value::Number(_) => "a number",
        Value::Bool(_) => "a boolean",
        Value::Null | Value::Object(_) => "a mapping",
    }
}

fn located(name: &str, at: Option<(usize, usize)>, message: &str, hint: &str) -> Error {
    let place = match at {
        Some((line, column)) => format!("{name}:{line}:{column}"),
        None => name.to_string(),
    };
    Error::invalid(format!("{place}: {message}"), Some(hint.to_string()))
}

/// 1-based line and column of byte `offset` in `text`.
fn line_and_column(text: &str, offset: usize) -> (usize, usize) {
    let before = &text[..offset.min(text.len())];
    let line = before.matches('\n').count() + 1;
    let column = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
    (line, column)
}

/// Where a top-level `key` is written (`key:` in YAML, `key =` in TOML, quoted or not).
fn key_position(text: &str, key: &str) -> Option<(usize, usize)> {
    text.lines().enumerate().find_map(|(index, line)| {
        let column = line.len() - line.trim_start().len();
        let rest = line.trim_start();
        let rest = rest
            .strip_prefix(key)
            .or_else(|| rest.strip_prefix(&format!("\"{key}\"")))
            .or_else(|| rest.strip_prefix(&format!("'{key}'")))?;
        let rest = rest.trim_start();
        (rest.starts_with(':') || rest.starts_with('=')).then_some((index + 1, column + 1))
    })
}

/// A JSON Schema (2020-12) of the job file, generated from the options' types, for editors.
pub fn job_schema() -> Value {
    use utoipa::OpenApi;
    #[derive(OpenApi)]
    #[openapi(components(schemas(PlanOptions, crate::options::WorkloadOptions, crate::EngineKnobs)))]
    struct JobFileSchema;
    let components = serde_json::to_value(JobFileSchema::openapi().components).unwrap_or(Value::Null);
    let mut definitions = components.get("schemas").cloned().unwrap_or(Value::Null);
    rewrite_refs(&mut definitions);
    serde_json::json!({
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "title": "gpuplan job file",
        "description": "What `gpuplan plan -f FILE` is asked: the plan's flags in snake_case. A flag on the command line wins over the file.",
        "$ref": "#/$defs/PlanOptions",
        "unevaluatedProperties": false,
        "$defs": definitions,
    })
}

/// OpenAPI's `#/components/schemas/X` references as `#/$defs/X`.
fn rewrite_refs(value: &mut Value) {
    match value {
        Value::Object(map) => {
            for (key, inner) in map.iter_mut() {
                match inner {
                    Value::String(text) if key == "$ref" => {
                        *text = text.replace("#/components/schemas/", "#/$defs/");
                    }
                    _ => rewrite_refs(inner),
                }
            }
        }
        Value::Array(items) => items.iter_mut().for_each(rewrite_refs),
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_job_on_standard_input_is_read_in_the_format_it_is_written_in() {
        assert_eq!(
            JobFormat::detect("<stdin>", "model = \"x\"\ntask = \"lora\"\n"),
            JobFormat::Toml
        );
        assert_eq!(JobFormat::detect("<stdin>", "# a job\n\nmodel: x\n"), JobFormat::Yaml);
        assert_eq!(JobFormat::detect("<stdin>", "[serving]\nqps = 1\n"), JobFormat::Toml);
        assert_eq!(JobFormat::detect("job.yaml", "model = x"), JobFormat::Yaml);
        assert_eq!(JobFormat::detect("job.toml", "model: x"), JobFormat::Toml);
    }

    #[test]
    fn the_examples_are_valid_job_files() {
        for example in [EXAMPLE_TRAINING_JOB, EXAMPLE_SERVING_JOB] {
            let map = parse_job(example, JobFormat::Yaml, "job.yaml").unwrap();
            let options: PlanOptions = serde_json::from_value(Value::Object(map)).unwrap();
            options.query().unwrap();
        }
    }

    #[test]
    fn mistakes_are_reported_at_their_line_with_a_hint() {
        let text = "model: llama-3.1-8b\ntask: lora\n  \ntokenz: 5e8\n";
        let error = parse_job(text, JobFormat::Yaml, "job.yaml").unwrap_err();
        assert_eq!(error.to_string(), "job.yaml:4:1: unknown key `tokenz`");
        assert!(
            error.hint().unwrap().contains("did you mean `tokens`"),
            "{:?}",
            error.hint()
        );
        let error = parse_job("model: x\nseq: long\n", JobFormat::Yaml, "job.yaml").unwrap_err();
        assert!(
            error.to_string().starts_with("job.yaml:2:1: `seq`: invalid type"),
            "{error}"
        );
        let error = parse_job("model = \"x\"\nseq = = 4\n", JobFormat::Toml, "job.toml").unwrap_err();
        assert!(error.to_string().starts_with("job.toml:2:"), "{error}");
        let error = parse_job("model = \"x\"\nseq = \"long\"\n", JobFormat::Toml, "job.toml").unwrap_err();
        assert!(error.to_string().starts_with("job.toml:2:1: `seq`"), "{error}");
        let error = parse_job("- model\n", JobFormat::Yaml, "job.yaml").unwrap_err();
        assert!(error.to_string().contains("not a list"), "{error}");
    }

    #[test]
    fn toml_and_yaml_say_the_same() {
        let yaml = parse_job(
            "model: llama-3.1-8b\ntask: lora\nbilling: [spot]\n",
            JobFormat::Yaml,
            "a",
        )
        .unwrap();
        let toml = parse_job(
            "model = \"llama-3.1-8b\"\ntask = \"lora\"\nbilling = [\"spot\"]\n",
            JobFormat::Toml,
            "b",
        )
        .unwrap();
        assert_eq!(yaml, toml);
    }

    #[test]
    fn the_schema_names_every_option() {
        let schema = job_schema();
        let plan = &schema["$defs"]["PlanOptions"];
        let text = plan.to_string();
        for key in ["deadline", "billing", "checkpoint_every"] {
            assert!(text.contains(&format!("\"{key}\"")), "{key}");
        }
        assert!(!schema.to_string().contains("#/components/"));
    }
}

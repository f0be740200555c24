//! `gpuplan diff a.json b.json`: what changed between two saved plans, for a review: what was
//! asked, the configuration chosen, its cost, time and memory, and the assumptions.

use crate::args::DiffArgs;
use crate::output;
use gpuplan::emit::OutputFormat;
use gpuplan::{Error, ExitStatus};
use serde::Serialize;
use serde_json::Value;
use std::collections::BTreeSet;

/// Largest saved plan read.
const MAX_PLAN_BYTES: u64 = 64 * 1024 * 1024;

#[derive(Debug, Serialize)]
struct Change {
    what: String,
    before: Value,
    after: Value,
}

#[derive(Debug, Serialize)]
struct PlanDiff {
    /// Options asked differently.
    request: Vec<Change>,
    /// The first configuration and its figures.
    choice: Vec<Change>,
    assumptions_added: Vec<String>,
    assumptions_removed: Vec<String>,
}

fn read(path: &std::path::Path) -> Result<Value, Error> {
    let text = crate::input_file::read(
        "diff",
        path,
        MAX_PLAN_BYTES,
        "give two plans saved with `--format json`",
    )?;
    let value: Value =
        serde_json::from_str(&text).map_err(|e| Error::invalid(format!("{}: not JSON: {e}", path.display()), None))?;
    if value.get("recommendations").is_none() {
        return Err(Error::invalid(
            format!("{}: not a saved plan (no `recommendations`)", path.display()),
            Some("save one with `gpuplan plan … --format json > plan.json`".to_string()),
        ));
    }
    Ok(value)
}

/// The first configuration in words.
fn configuration(plan: &Value) -> Value {
    let first = &plan["recommendations"][0];
    if first.is_null() {
        return Value::Null;
    }
    Value::String(format!(
        "{} {} · {}× {} · {}",
        first["provider"].as_str().unwrap_or("?"),
        first["instance_type"].as_str().unwrap_or("?"),
        first["gpus"],
        first["gpu"].as_str().unwrap_or("CPU"),
        first["billing"].as_str().unwrap_or("?"),
    ))
}

fn compare(before: &Value, after: &Value) -> PlanDiff {
    let mut request = Vec::new();
    let empty = serde_json::Map::new();
    let asked = |plan: &Value| plan["request"].as_object().cloned().unwrap_or_else(|| empty.clone());
    let (a, b) = (asked(before), asked(after));
    let keys: BTreeSet<&String> = a.keys().chain(b.keys()).collect();
    for key in keys {
        let (x, y) = (a.get(key).unwrap_or(&Value::Null), b.get(key).unwrap_or(&Value::Null));
        if x != y {
            request.push(Change {
                what: key.clone(),
                before: x.clone(),
                after: y.clone(),
            });
        }
    }
    let mut choice = Vec::new();
    let mut field = |what: &str, x: Value, y: Value| {
        if x != y {
            choice.push(Change {
                what: what.to_string(),
                before: x,
                after: y,
            });
        }
    };
    field("configuration", configuration(before), configuration(after));
    let first = |plan: &Value, key: &str| plan["recommendations"][0][key].clone();
    for key in [
        "total_usd",
        "hourly_usd",
        "time_seconds",
        "memory_per_gpu_bytes",
        "nodes",
    ] {
        field(key, first(before, key), first(after, key));
    }
    let lines = |plan: &Value| -> BTreeSet<String> {
        let strings = |key: &str| {
            plan[key]
                .as_array()
                .cloned()
                .unwrap_or_default()
                .into_iter()
                .filter_map(|v| v.as_str().map(str::to_string))
        };
        // The records, rendered the command line's way, so that an answer saved from the API
        // compares equal to the same answer saved from the CLI; older saves have only lines.
        let defaults: Vec<String> = match plan["defaulted"].as_array() {
            Some(records) => records.iter().filter_map(defaulted_line).collect(),
            None => strings("defaults").collect(),
        };
        defaults.into_iter().chain(strings("assumptions")).collect()
    };
    let (x, y) = (lines(before), lines(after));
    PlanDiff {
        request,
        choice,
        assumptions_added: y.difference(&x).cloned().collect(),
        assumptions_removed: x.difference(&y).cloned().collect(),
    }
}

/// A `defaulted` record as the command line writes it.
fn defaulted_line(record: &Value) -> Option<String> {
    let field = gpuplan::Field::from_key(record["field"].as_str()?)?;
    let chosen = gpuplan::Defaulted::new(field, record["value"].as_str()?, record["why"].as_str()?);
    Some(chosen.render(gpuplan::Naming::Flags))
}

/// `after` against `before`: `+12.5 %`.
fn percent(before: &Value, after: &Value) -> String {
    match (before.as_f64(), after.as_f64()) {
        (Some(x), Some(y)) if x != 0.0 => format!(" ({:+.1} %)", (y / x - 1.0) * 100.0),
        _ => String::new(),
    }
}

fn show(value: &Value) -> String {
    match value {
        Value::String(text) => text.clone(),
        Value::Null => "–".to_string(),
        other => other.to_string(),
    }
}

fn report(diff: &PlanDiff) -> String {
    if diff.request.is_empty()
        && diff.choice.is_empty()
        && diff.assumptions_added.is_empty()
        && diff.assumptions_removed.is_empty()
    {
        return "no change\n".to_string();
    }
    let mut text = String::new();
    if !diff.request.is_empty() {
        text.push_str("asked:\n");
        for c in &diff.request {
            text.push_str(&format!("  {}: {} → {}\n", c.what, show(&c.before), show(&c.after)));
        }
    }
    if !diff.choice.is_empty() {
        text.push_str("first configuration:\n");
        for c in &diff.choice {
            text.push_str(&format!(
                "  {}: {} → {}{}\n",
                c.what,
                show(&c.before),
                show(&c.after),
                percent(&c.before, &c.after)
            ));
        }
    }
    for (sign, lines) in [("+", &diff.assumptions_added), ("-", &diff.assumptions_removed)] {
        for line in lines {
            text.push_str(&format!("{sign} {line}\n"));
        }
    }
    text
}

pub fn run(args: &DiffArgs, format: OutputFormat) -> Result<ExitStatus, Error> {
    let diff = compare(&read(&args.before)?, &read(&args.after)?);
    match format {
        OutputFormat::Json => output::json(&diff)?,
        OutputFormat::Table => output::report(&report(&diff)),
        other => {
            return Err(Error::invalid(
                format!("--format {other:?} does not apply to diff"),
                Some("use table or json".to_string()),
            ));
        }
    }
    Ok(ExitStatus::Success)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_diff_names_what_was_asked_and_what_changed() {
        let before = json!({"recommendations": [{"provider": "aws", "instance_type": "p5.48xlarge", "gpus": 8,
            "gpu": "H100-SXM5-80GB", "billing": "on-demand", "total_usd": 100.0}],
            "request": {"deadline": 24}, "assumptions": ["a"], "defaults": []});
        let after = json!({"recommendations": [{"provider": "aws", "instance_type": "p5.48xlarge", "gpus": 8,
            "gpu": "H100-SXM5-80GB", "billing": "spot", "total_usd": 40.0}],
            "request": {"deadline": 24, "spot": true}, "assumptions": ["a", "b"], "defaults": []});
        let text = report(&compare(&before, &after));
        assert!(text.contains("spot: – → true"), "{text}");
        assert!(text.contains("total_usd: 100.0 → 40.0 (-60.0 %)"), "{text}");
        assert!(text.contains("+ b"), "{text}");
        assert_eq!(report(&compare(&before, &before)), "no change\n");
    }

    /// The API writes its default lines with keys, the command line with flags: the records
    /// behind them are what is compared.
    #[test]
    fn an_api_answer_and_a_cli_answer_with_the_same_defaults_do_not_differ() {
        let record = json!({"field": "lora_rank", "value": "16", "why": "PEFT and torchtune recipes use 8–16"});
        let cli = json!({"recommendations": [], "request": {}, "assumptions": [],
            "defaults": ["--lora-rank 16 (PEFT and torchtune recipes use 8–16)"], "defaulted": [record]});
        let api = json!({"recommendations": [], "request": {}, "assumptions": [],
            "defaults": ["`lora_rank` = 16 (PEFT and torchtune recipes use 8–16)"], "defaulted": [record]});
        assert_eq!(report(&compare(&cli, &api)), "no change\n");
        let mut other = api.clone();
        other["defaulted"][0]["value"] = json!("64");
        assert!(report(&compare(&cli, &other)).contains("+ --lora-rank 64"));
    }
}

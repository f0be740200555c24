//! `probe --poc`: runs the proof-of-concept benchmark (`poc/poc_step.py`, embedded) in the
//! machine's PyTorch, on one GPU and, under `torch.distributed.run`, on several.

use crate::ProbeError;
use gpuplan_telemetry::{PocRun, PocShape};
use std::path::{Path, PathBuf};
use std::process::Command;

/// The benchmark script, written to a temporary file for each run.
pub const SCRIPT: &str = include_str!("../poc/poc_step.py");

/// Lines of the script's error output kept in an error.
const ERROR_LINES: usize = 12;

fn script_file() -> Result<PathBuf, ProbeError> {
    let path = std::env::temp_dir().join(format!("gpuplan-poc-{}.py", std::process::id()));
    std::fs::write(&path, SCRIPT).map_err(|e| ProbeError::Poc(format!("writing {}: {e}", path.display())))?;
    Ok(path)
}

/// One run of the script on `gpus` GPUs with `python`.
fn run_once(python: &str, script: &Path, shape: &str, gpus: u32) -> Result<PocRun, ProbeError> {
    let mut command = Command::new(python);
    if gpus > 1 {
        command.args(["-m", "torch.distributed.run", "--standalone", "--nproc_per_node"]);
        command.arg(gpus.to_string());
    }
    let output = command.arg(script).arg(shape).output().map_err(|e| {
        if e.kind() == std::io::ErrorKind::NotFound {
            ProbeError::NoPython(python.to_string())
        } else {
            ProbeError::Poc(format!("starting {python}: {e}"))
        }
    })?;
    let stdout = String::from_utf8_lossy(&output.stdout);
    let last = stdout.lines().rev().find(|l| l.trim_start().starts_with('{'));
    if let Some(error) = last
        .and_then(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .and_then(|v| v.get("error").and_then(|e| e.as_str()).map(String::from))
    {
        return Err(ProbeError::Poc(error));
    }
    if !output.status.success() || last.is_none() {
        let stderr = String::from_utf8_lossy(&output.stderr);
        let tail: Vec<&str> = stderr.lines().rev().take(ERROR_LINES).collect();
        let tail: Vec<&str> = tail.into_iter().rev().collect();
        return Err(ProbeError::Poc(format!(
            "the benchmark on {gpus} GPU{} failed ({}):\n{}",
            if gpus == 1 { "" } else { "s" },
            output.status,
            tail.join("\n")
        )));
    }
    let line = last.unwrap_or_default();
    serde_json::from_str(line).map_err(|e| ProbeError::Poc(format!("the benchmark's output `{line}`: {e}")))
}

/// Runs `shape` on one GPU and, when `gpus` > 1, on `gpus`.
pub fn run(python: &str, shape: &PocShape, gpus: u32) -> Result<Vec<PocRun>, ProbeError> {
    let script = script_file()?;
    let shape = serde_json::to_string(shape).map_err(|e| ProbeError::Poc(e.to_string()))?;
    let mut runs = vec![run_once(python, &script, &shape, 1)];
    if gpus > 1 {
        runs.push(run_once(python, &script, &shape, gpus));
    }
    let _ = std::fs::remove_file(&script);
    runs.into_iter().collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_missing_python_is_named() {
        let script = std::env::temp_dir().join("gpuplan-poc-test-none.py");
        let error = run_once("gpuplan-no-such-python", &script, "{}", 1).unwrap_err();
        assert!(matches!(error, ProbeError::NoPython(_)), "{error}");
    }

    #[test]
    fn the_script_reads_the_shape_it_is_given() {
        for field in [
            "hidden",
            "kv_heads",
            "lora_targets",
            "prompt_tokens",
            "decode_tokens",
            "checkpointing",
        ] {
            assert!(SCRIPT.contains(&format!("\"{field}\"")), "{field}");
        }
    }
}

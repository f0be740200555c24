//! Job files, exports and diffs as a user runs them: `gpuplan init`, `plan -f`, flags over the
//! file, mistakes at their line, `--export`, `export plan.json`, `diff`.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Command;

struct Run {
    code: i32,
    stdout: String,
    stderr: String,
}

fn gpuplan(folder: &Path, args: &[&str]) -> Run {
    gpuplan_fed(folder, args, b"")
}

/// `gpuplan args` in `folder` with `input` on its standard input.
fn gpuplan_fed(folder: &Path, args: &[&str], input: &[u8]) -> Run {
    use std::io::Write;
    use std::process::Stdio;
    let mut child = Command::new(env!("CARGO_BIN_EXE_gpuplan"))
        .args(args)
        .current_dir(folder)
        .env_remove("GPUPLAN_CATALOG")
        .env("NO_COLOR", "1")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the gpuplan binary runs");
    if let Some(mut stdin) = child.stdin.take() {
        // A command that does not read its input closes the pipe early; that is not an error.
        let _ = stdin.write_all(input);
    }
    let output = child.wait_with_output().expect("the gpuplan binary runs");
    Run {
        code: output.status.code().unwrap_or(-1),
        stdout: String::from_utf8(output.stdout).unwrap(),
        stderr: String::from_utf8(output.stderr).unwrap(),
    }
}

/// An empty folder of the test's own.
fn folder(test: &str) -> PathBuf {
    let path = std::env::temp_dir().join(format!("gpuplan-job-{}-{test}", std::process::id()));
    let _ = std::fs::remove_dir_all(&path);
    std::fs::create_dir_all(&path).unwrap();
    path
}

fn json(run: &Run) -> Value {
    assert_eq!(run.code, 0, "{}", run.stderr);
    serde_json::from_str(&run.stdout).unwrap()
}

#[test]
fn init_writes_an_example_that_plans_and_flags_win_over_it() {
    let dir = folder("init");
    let init = gpuplan(&dir, &["init"]);
    assert_eq!(init.code, 0, "{}", init.stderr);
    assert!(dir.join("job.yaml").is_file() && dir.join("job.schema.json").is_file());
    let plan = json(&gpuplan(&dir, &["plan", "-f", "job.yaml", "--format", "json"]));
    assert_eq!(plan["request"]["model"], "llama-3.1-8b");
    assert_eq!(plan["request"]["objective"], "cost", "from the file");
    assert_eq!(plan["request"]["deadline"], 24.0);
    let overridden = json(&gpuplan(
        &dir,
        &[
            "plan",
            "-f",
            "job.yaml",
            "--objective",
            "time",
            "--deadline",
            "6",
            "--format",
            "json",
        ],
    ));
    assert_eq!(overridden["request"]["objective"], "time", "the flag wins");
    assert_eq!(overridden["request"]["deadline"], 6.0);
    assert_eq!(overridden["request"]["seq"], 4096, "the rest from the file");
    // Writing over the example needs --force.
    let again = gpuplan(&dir, &["init"]);
    assert_eq!(again.code, 2);
    assert!(again.stderr.contains("--force"), "{}", again.stderr);
    // The schema accepts the example and names every option.
    let schema: Value = serde_json::from_str(&std::fs::read_to_string(dir.join("job.schema.json")).unwrap()).unwrap();
    assert!(schema["$defs"]["PlanOptions"].to_string().contains("checkpoint_every"));
}

#[test]
fn mistakes_in_a_job_file_name_their_line_and_exit_2() {
    let dir = folder("mistakes");
    let cases = [
        (
            "typo.yaml",
            "model: llama-3.1-8b\ntask: lora\ntokenz: 5e8\n",
            "typo.yaml:3:1: unknown key `tokenz`",
            "did you mean `tokens`",
        ),
        (
            "type.yaml",
            "model: llama-3.1-8b\ntask: lora\nseq: long\n",
            "type.yaml:3:1: `seq`: invalid type",
            "--help",
        ),
        (
            "nomodel.yaml",
            "task: lora\ntokens: 5e8\n",
            "nomodel.yaml: no `model`",
            "--model",
        ),
        (
            "syntax.toml",
            "model = \"llama-3.1-8b\"\ntask = = \"lora\"\n",
            "syntax.toml:2:",
            "TOML",
        ),
        ("list.yaml", "- model\n", "not a list", "model:"),
    ];
    for (name, text, message, hint) in cases {
        std::fs::write(dir.join(name), text).unwrap();
        let run = gpuplan(&dir, &["plan", "-f", name]);
        assert_eq!(run.code, 2, "{name}: {}", run.stderr);
        assert!(run.stderr.contains(message), "{name}: {}", run.stderr);
        assert!(run.stderr.contains(hint), "{name}: {}", run.stderr);
    }
}

#[test]
fn a_saved_plan_exports_and_diffs() {
    let dir = folder("export");
    std::fs::write(
        dir.join("serve.toml"),
        "model = \"llama-3.1-8b\"\ntask = \"inference\"\nqps = 20\npeak_qps = 60\nproviders = [\"aws\", \"gcp\"]\ntop = 3\n",
    )
    .unwrap();
    let saved = gpuplan(&dir, &["plan", "-f", "serve.toml", "--format", "json"]);
    assert_eq!(saved.code, 0, "{}", saved.stderr);
    std::fs::write(dir.join("plan.json"), &saved.stdout).unwrap();
    let kubernetes = gpuplan(&dir, &["export", "plan.json", "--to", "k8s"]);
    assert_eq!(kubernetes.code, 0, "{}", kubernetes.stderr);
    for kind in [
        "kind: Deployment",
        "kind: ScaledObject",
        "kind: PodDisruptionBudget",
        "kind: PriorityClass",
    ] {
        assert!(kubernetes.stdout.contains(kind), "{kind}");
    }
    assert!(
        !kubernetes.stdout.contains("kind: HorizontalPodAutoscaler"),
        "the HPA is an alternative"
    );
    // The same export straight from the plan.
    let direct = gpuplan(&dir, &["plan", "-f", "serve.toml", "--export", "k8s"]);
    assert_eq!(direct.stdout, kubernetes.stdout);
    // Written to a folder, the HPA goes into a subfolder: `kubectl apply -f k8s` applies the
    // rest, never both autoscalers.
    let folder_written = gpuplan(&dir, &["export", "plan.json", "--to", "k8s", "--out", "k8s"]);
    assert_eq!(folder_written.code, 0, "{}", folder_written.stderr);
    assert!(dir.join("k8s/scaledobject.yaml").is_file());
    assert!(dir.join("k8s/alternatives/hpa-without-keda.yaml").is_file());
    assert!(!dir.join("k8s/hpa-without-keda.yaml").exists());
    let written = gpuplan(&dir, &["export", "plan.json", "--to", "skyserve", "--out", "sky"]);
    assert_eq!(written.code, 0, "{}", written.stderr);
    let service = std::fs::read_to_string(dir.join("sky/service.yaml")).unwrap();
    assert!(service.contains("replica_policy:"), "{service}");
    let bad_pick = gpuplan(&dir, &["export", "plan.json", "--to", "k8s", "--pick", "40"]);
    assert_eq!(bad_pick.code, 2);
    let stray = gpuplan(&dir, &["plan", "-f", "serve.toml", "--pick", "2"]);
    assert_eq!(stray.code, 2);
    assert!(
        stray.stderr.contains("--pick applies to --export only"),
        "{}",
        stray.stderr
    );
    // A review: the same job with a tighter latency target.
    let tighter = gpuplan(
        &dir,
        &["plan", "-f", "serve.toml", "--ttft", "0.2s", "--format", "json"],
    );
    std::fs::write(dir.join("tighter.json"), &tighter.stdout).unwrap();
    let diff = gpuplan(&dir, &["diff", "plan.json", "tighter.json"]);
    assert_eq!(diff.code, 0, "{}", diff.stderr);
    assert!(diff.stdout.contains("ttft: – → "), "{}", diff.stdout);
    let same = gpuplan(&dir, &["diff", "plan.json", "plan.json"]);
    assert_eq!(same.stdout, "no change\n");
}

/// One request written in the command line's flags, in a YAML job file and in a TOML one, with
/// durations and the prompt length in the same syntax (`36h`, `5m`, `input_tokens`): the same
/// plan and the same echoed request, so `diff` finds nothing.
#[test]
fn flags_and_job_files_in_their_own_syntax_give_the_same_plan() {
    let dir = folder("syntax");
    std::fs::write(
        dir.join("job.yaml"),
        "model: llama-3.1-8b\ntask: lora\ntokens: 5e8\ndeadline: 36h\nprovision_time: 5m\ninput_tokens: 2048\n",
    )
    .unwrap();
    std::fs::write(
        dir.join("job.toml"),
        "model = \"llama-3.1-8b\"\ntask = \"lora\"\ntokens = 5e8\ndeadline = \"36h\"\nprovision_time = \"5m\"\ninput_tokens = 2048\n",
    )
    .unwrap();
    let flags = gpuplan(
        &dir,
        &[
            "plan",
            "--model",
            "llama-3.1-8b",
            "--task",
            "lora",
            "--tokens",
            "5e8",
            "--deadline",
            "36h",
            "--provision-time",
            "5m",
            "--input-tokens",
            "2048",
            "--format",
            "json",
        ],
    );
    std::fs::write(dir.join("flags.json"), &flags.stdout).unwrap();
    let flags = json(&flags);
    assert_eq!(flags["request"]["deadline"], 36.0);
    for file in ["job.yaml", "job.toml"] {
        let run = gpuplan(&dir, &["plan", "-f", file, "--format", "json"]);
        std::fs::write(dir.join("file.json"), &run.stdout).unwrap();
        let from_file = json(&run);
        assert_eq!(from_file["request"], flags["request"], "{file}");
        assert_eq!(from_file["configurations"], flags["configurations"], "{file}");
        let diff = gpuplan(&dir, &["diff", "flags.json", "file.json"]);
        assert_eq!(diff.code, 0, "{}", diff.stderr);
        assert!(diff.stdout.contains("no change"), "{file}: {}", diff.stdout);
    }
    std::fs::remove_dir_all(&dir).ok();
}

/// `plan -f -` reads the job from standard input, as a pipeline would send it.
#[test]
fn a_job_file_can_be_piped_in() {
    let dir = folder("stdin");
    let job = b"model: llama-3.1-8b\ntask: lora\ntokens: 5e8\ndeadline: 36h\n";
    let plan = json(&gpuplan_fed(&dir, &["plan", "-f", "-", "--format", "json"], job));
    assert_eq!(plan["request"]["deadline"], 36.0);
    assert_eq!(plan["request"]["model"], "llama-3.1-8b");
    std::fs::remove_dir_all(&dir).ok();
}

/// A mistake in a value the job file set is named as the file names it, with the file; the
/// same mistake made with a flag is named by the flag.
#[test]
fn a_bad_value_from_the_file_is_named_by_its_key() {
    let dir = folder("key-named");
    std::fs::write(
        dir.join("job.yaml"),
        "model: llama-3.1-8b\ntask: lora\ntokens: 5e8\nlora_rank: 0\n",
    )
    .unwrap();
    let run = gpuplan(&dir, &["plan", "-f", "job.yaml"]);
    assert_eq!(run.code, 2, "{}", run.stderr);
    assert!(
        run.stderr.contains("job.yaml: `lora_rank` must be at least 1"),
        "{}",
        run.stderr
    );
    assert!(!run.stderr.contains("--lora-rank"), "{}", run.stderr);
    let json_error = gpuplan(&dir, &["plan", "-f", "job.yaml", "--format", "json"]);
    let error: Value = serde_json::from_str(json_error.stderr.trim()).unwrap();
    assert_eq!(
        (&error["error"]["code"], &error["error"]["field"]),
        (&Value::from("out_of_range"), &Value::from("lora_rank"))
    );
    std::fs::write(dir.join("job.yaml"), "model: llama-3.1-8b\ntask: lora\ntokens: 5e8\n").unwrap();
    let flagged = gpuplan(&dir, &["plan", "-f", "job.yaml", "--lora-rank", "0"]);
    assert_eq!(flagged.code, 2, "{}", flagged.stderr);
    assert!(
        flagged.stderr.contains("--lora-rank must be at least 1"),
        "{}",
        flagged.stderr
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// A tabular job can be written in a job file like any other.
#[test]
fn a_tabular_job_file_plans() {
    let dir = folder("tabular");
    std::fs::write(dir.join("job.yaml"), "workload: tabular\nrows: 5e6\nfeatures: 200\n").unwrap();
    let plan = json(&gpuplan(&dir, &["plan", "-f", "job.yaml", "--format", "json"]));
    assert!(
        plan["recommendations"].as_array().is_some_and(|r| !r.is_empty()),
        "{plan}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// Files written to a folder keep their warnings in their headers, and the command says them
/// too: a multi-node RunPod job's shared checkpoint volume needs a shared-file class, and its
/// RDMA fabric is not requested, which the user must know before `kubectl apply`.
#[test]
fn an_export_written_to_a_folder_says_its_warnings() {
    let dir = folder("warnings");
    let run = gpuplan(
        &dir,
        &[
            "plan",
            "--model",
            "llama-3.1-70b",
            "--task",
            "pretrain",
            "--tokens",
            "1e10",
            "--seq",
            "4096",
            "--deadline",
            "9d",
            "--max-nodes",
            "4",
            "--providers",
            "runpod",
            "--export",
            "k8s",
            "--out",
            "k8s",
        ],
    );
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(run.stdout.starts_with("wrote "), "{}", run.stdout);
    let warnings: Vec<&str> = run.stderr.lines().filter(|l| l.starts_with("warning: ")).collect();
    assert!(
        warnings
            .iter()
            .any(|w| w.contains("shared by every node (ReadWriteMany)")),
        "{}",
        run.stderr
    );
    // Each once, though several files carry it.
    let distinct: std::collections::BTreeSet<&&str> = warnings.iter().collect();
    assert_eq!(distinct.len(), warnings.len(), "{}", run.stderr);
}

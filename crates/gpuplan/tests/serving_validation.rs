//! The continuous-batching serving model against published serving measurements
//! (`tests/validation/serving.toml`): offline and fixed-concurrency throughput, throughput at
//! an offered request rate, and TTFT / TPOT / ITL percentiles.
//!
//! Calibration is kept apart from validation. The constants the serving model uses were set
//! from the cases its calibration data lists in `calibrated_on` (the engines' iteration
//! profiles from NVIDIA's own MLPerf v4.0/v4.1 submissions and two A100 light-load rows); the
//! targets are asserted on every other case, MLPerf Server and Interactive runs by their
//! goodput within the scenario's limits.
//!
//! `cargo test -p gpuplan --test integration serving_validation -- --nocapture` prints the table.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::print_stdout)]

use gpuplan::estimator::serving::{self, StepCost, closed_loop};
use gpuplan::estimator::serving_near_capacity::MeasuredOn;
use gpuplan::estimator::serving_users::{at_users, burst_ttft};
use gpuplan::model::{Engine, EngineRelease, EngineSettings, LatencyTarget, Precision, RequestMix, RequestShape, Task};
use gpuplan::{ModelSource, WorkloadRequest, estimate_workload};
use serde::Deserialize;
use std::sync::OnceLock;

use crate::catalog;

/// Case-id prefixes the serving constants were set from (see `efficiency.rs`:
/// `low_precision_decode_factor()` cites TensorRT-LLM's fp8 throughput tables on H100/H200).
/// Median relative error allowed on the held-out cases: 10 % for throughput (the issue's
/// target; 9.2 % today, since TensorRT-LLM's fixed iteration time is read per layer), 20 % for
/// latency percentiles.
const THROUGHPUT_TARGET: f64 = 0.10;
const LATENCY_TARGET: f64 = 0.20;
/// Median relative error allowed on the highest load held-out MLPerf Server and Interactive
/// runs passed, against the model's goodput within the same limits.
const GOODPUT_TARGET: f64 = 0.10;
/// The same for the Llama-3.1-405B and 8B runs (v5.0–v5.1, fp4 on Blackwell): the 10 %,
/// met since a prompt's last chunk is timed at its own size (8.0 %; 11.2 % when every chunk
/// was timed as a full one, 25.9 % before the prompt queue drained at the GPU's pace where
/// that is the slower one). The 405B goodputs come within −10…+6 % but NVIDIA's 405B
/// Interactive run on 8 B200 (+45 %), and the Llama-3.1-8B fp4 runs on B200, whose Offline
/// capacity is itself 21–31 % high, stay above.
const LLAMA3_GOODPUT_BAR: f64 = 0.10;
/// Where the model's p99 TTFT and TPOT at those loads stand today (18.4 %: a bar against
/// regressions, not a target met; 20.9 % while AMD's v4.1 runs were read as the current vLLM
/// release rather than the 0.4.3 they ran). Their times to first token stay 69–86 % short:
/// AMD's harness gathers requests for 0.3 s and hands each batch to one GPU, which the model's
/// Poisson arrivals do not reproduce. The prompt queue's tail (Cramér–Lundberg rather than an
/// exponential of the mean wait) brings the NVIDIA runs' TTFTs closer.
const LIMIT_PERCENTILE_BAR: f64 = 0.21;
/// The same percentiles at the model's own goodput (the curve's shape at its limit). The
/// issue's target is 15 %; NVIDIA's tuned MLPerf fp4 runs on B200 are ≈ 13 % faster than the
/// public TensorRT-LLM tables the fp4 GEMM factor also answers to, and at the model's lower
/// goodput their p99 TPOT reaches the 200 ms limit where the runs stopped near 150 ms.
const OWN_LIMIT_PERCENTILE_BAR: f64 = 0.19;
/// The MLPerf runs' mean TTFT and TPOT at the loads they passed (LoadGen's summaries give
/// them beside the p99s): a bar against regressions for Llama-2-70B and for Llama-3.1 405B/8B.
/// A mean is steadier than the p99 of a few hundred requests (a 405B run completes about 270),
/// but at a load near the limit it is as sensitive to the capacity's error. Today 18.7 % and
/// 16.8 %.
const MEAN_AT_LOAD_BAR: (f64, f64) = (0.20, 0.19);
/// The same rows whose load is past the estimated capacity but inside that range, reported as
/// near capacity without latencies: four runs, 3–5 % above the estimate (AMD's and MiTAC's v5.1
/// MI325X, whose configuration alone tunes and swizzles its fp8 GEMMs, which the model does not
/// know, and Cisco's 16 and 32 H100 in their pipeline-parallel layout).
const NEAR_CAPACITY_BAR: usize = 8;
/// The same rows whose load is past even the top of that range (1.056), reported as saturated:
/// none, the target. (AMD's v5.1 MI325X Server run read as saturated while the range's top was
/// 1.046; prompt attention timed at the pace of Blackwell's softmax exponentials moves the
/// Llama-3.1-405B B200 and GB200 residuals, from which the range is learned, and its top with
/// them.)
const SATURATED_BAR: usize = 0;
/// Median error allowed on each end of the vLLM 0.11.1 batch sweeps (time between tokens and
/// throughput, at 8–32 and at 128–256 sequences): 12.0 % and 12.3 % at 8–32, 14.4 % and 11.7 %
/// at 128–256, with the benchmark's top-p sampling charged (vLLM sorts each sequence's logits
/// every step). The median time between tokens is the model's median iteration: the prompts
/// an iteration carries are a Poisson count, so it is a decode-only step where more than half
/// the iterations carry none. At 256 sequences of Llama 3.1's short answers (0.62–0.73 prompts
/// an iteration) that share is 48–54 %, and where it falls short of half the median lands on a
/// prompt-carrying step (+53…+82 %) where vLLM's, with prompts of varied lengths, does not. A
/// bar against regressions; the targets are 10 % and 15 %.
const SWEEP_BAR: f64 = 0.15;

/// Bars on the Mixtral-8x7B runs (`mlperf_mixtral_runs_are_reported_against_the_same_model`),
/// at today's figures: Offline capacity 4.6 % over 24, goodput 4.6 % over 19 (the 10 %
/// met), p99 TTFT/TPOT at the loads passed 43.7 % over 34 (its 15 % not met: the runs' p99
/// times to first token are 1.6–7 times their means, the model's 1.5–1.9 times; the vLLM runs'
/// times per token come out about twice as long where the model finds their loads near its
/// capacity), 32 latency rows of 8 runs not evaluated (their loads 0–5 % past the estimated
/// capacity), and two plans above 1.15×: the single-GH200 runs, whose goodput comes out 7 %
/// short, so one GPU becomes two.
/// A set reported apart is held to bars like these: its rows at least, medians of its Offline
/// capacities, goodputs and p99s at most, and its rows not evaluated and plans above 1.15× the
/// submission's GPUs at most.
struct SetBars {
    rows: usize,
    offline: f64,
    goodput: f64,
    percentiles: f64,
    not_evaluated: usize,
    plans_over: usize,
}

const MIXTRAL_BARS: SetBars = SetBars {
    rows: 150,
    offline: 0.05,
    goodput: 0.05,
    percentiles: 0.45,
    not_evaluated: 32,
    plans_over: 2,
};

/// Bars on the DeepSeek-R1 runs (`mlperf_deepseek_runs_are_reported_against_the_same_model`),
/// at today's figures, far from the targets: every run comes out fast, Offline
/// capacity by 17–37 % (median 33.3 %) and goodput within the 80 ms p99 time per token by
/// 89–181 % (median 133.6 %), because at the loads passed the model's iteration is about
/// half the measured 58–70 ms; the p99s there 72.7 % (median) short. Plans at the two NVL72 runs'
/// loads ask for 40 and 48 GPUs where 72 served; at the 8-GPU runs' loads, one replica, as used.
const DEEPSEEK_BARS: SetBars = SetBars {
    rows: 48,
    offline: 0.34,
    goodput: 1.34,
    percentiles: 0.73,
    not_evaluated: 0,
    plans_over: 0,
};

/// Bars on MLPerf Inference v6.0's dense-model runs (`mlperf_v6_runs_are_reported_against_the_same_model`),
/// at today's figures, far from the targets and kept as a record against regressions.
/// The model holds where it has been before (B200's Llama-2-70B and 8B runs within 1–12 %, GB200
/// and GB300 NVL72 Offline within 2–12 %, Dell's MI300X within 4 %) and misses on the parts new
/// to it, by GPU rather than by submitter: the RTX PRO 6000 10–29 % slow on TensorRT-LLM 1.2's
/// PyTorch backend and the H200 NVL's two 1.2 Offline runs 16–20 % slow. A slow capacity near the
/// published load reads that load as past it (60 RTX PRO 6000 latency rows) and plans 1.25–1.38×
/// the GPUs. Two factors were set from one run each of the set (left out of the medians): the
/// MI355X's serving factor (AMD's Offline run; its other runs came within 0.7–5.6 % Offline and in
/// Server goodput, Interactive 17–20 % short) and the B300's on its 4-bit GEMMs (NVIDIA's
/// Llama-2-70B Offline run: the B300's 14 PFLOPS of dense fp4, 1.56× B200's, had put its runs
/// 7–35 % fast Offline; Llama-2-70B and 405B now come within +0.7…+4.1 %, 8B +12…+29 %).
const V6_BARS: SetBars = SetBars {
    rows: 339,
    offline: 0.08,
    goodput: 0.14,
    percentiles: 0.32,
    not_evaluated: 80,
    plans_over: 25,
};

/// Bars on MLPerf Inference v6.1's dense-model runs, at their first reading, kept as a record
/// against regressions. The MI355X's serving factor, set from one v6.0 Offline run on vLLM 0.14,
/// holds on the round's vLLM 0.22 build (Offline −2.6…+2.2 %); the RTX PRO 4500, new to the
/// tables, comes within 0.3–2.6 % on Llama-3.1-8B Offline; GB200 and GB300 within 3.3 %; the B300,
/// with the 4-bit factor set from one v6.0 run, within −1.5…+7.9 % on Llama-2-70B Offline (5–16 %
/// fast before it). The misses are v6.0's: the RTX PRO 6000 17–30 % slow (its latency rows past
/// the estimated capacity, its plans 1.25–1.5× the GPUs), and the p99s at the passed loads far off
/// where AMD's patched vLLM holds prompts back for decode steps (times to first token 64–85 %
/// longer than the model's). The MI350X, the MI355X's chip at 1,000 W, runs Llama-2-70B at 0.80×
/// the MI355X's speed per GPU against 0.92× its peak: the model is 16 % fast there.
const V61_BARS: SetBars = SetBars {
    rows: 377,
    offline: 0.045,
    goodput: 0.11,
    percentiles: 0.485,
    not_evaluated: 108,
    plans_over: 23,
};

/// Bars on MLPerf Inference v6.1's DeepSeek-R1 runs, at their first reading.
/// v6.0's picture holds a round on: TensorRT-LLM 1.2's DeepSeek-R1 iterations are faster than the
/// model's, Offline by 17–28 % on every 8-GPU replica and NVL72 rack (median 26.5 % with the B300's
/// 4-bit factor, 25.3 % before it), the Server goodputs 7–41 % short, so every latency row's load reads past the estimated capacity and every
/// plan asks for more GPUs than served (two replicas where one did). Crusoe's SGLang on 512 MI355X
/// comes out 60–72 % slow: the MI355X's serving factor was set on a dense model under vLLM.
const V61_DEEPSEEK_BARS: SetBars = SetBars {
    rows: 88,
    offline: 0.27,
    goodput: 0.325,
    percentiles: 0.0,
    not_evaluated: 60,
    plans_over: 15,
};

/// Bars on MLPerf Inference v6.0's DeepSeek-R1 runs, at their first reading. The round turned the
/// v5.1 picture over: the same 8 B200 that ran 33k tokens/s Offline on TensorRT-LLM 1.0 ran 57–59k
/// on 1.2, so where the model had come out 17–37 % fast Offline it now comes out 19–36 % slow
/// (median 25.8 %; 26.9 % since the B300's 4-bit factor, which slows its B300 replicas further),
/// the Server goodputs within 11.2 % (median; Cisco's and Nebius's runs 25–32 % slow, Google's
/// NVL72 Server run, at half NVIDIA's load on the same rack, 137 % fast), and the plans at the
/// 8-GPU Server loads ask for two replicas where one served, 11 of 17 above 1.15×.
const V6_DEEPSEEK_BARS: SetBars = SetBars {
    rows: 102,
    offline: 0.27,
    goodput: 0.113,
    percentiles: 0.73,
    not_evaluated: 36,
    plans_over: 11,
};

/// Held-out MLPerf runs' throughput at the concurrency each held (Little's law on its mean
/// time per output token), median |error|: today's figure, not a target of the issue.
const CONCURRENCY_HELD_BAR: f64 = 0.10;

#[derive(Debug, Deserialize)]
struct Table {
    case: Vec<Case>,
}

#[derive(Debug, Deserialize)]
struct Case {
    id: String,
    kind: String,
    statistic: String,
    model: String,
    gpu: String,
    gpus: u32,
    tp: u32,
    /// Pipeline stages of a replica, where the benchmark split it so.
    pp: Option<u32>,
    /// Experts spread over this many GPUs of the replica, where the benchmark says.
    ep: Option<u32>,
    /// Attention data parallelism across the replica's GPUs, where the benchmark says.
    attention_dp: Option<bool>,
    precision: String,
    engine: String,
    input_tokens: Option<f64>,
    /// A mean, fractional where it was derived from a run's totals.
    output_tokens: Option<f64>,
    request_rate: Option<f64>,
    max_concurrency: Option<f64>,
    /// Requests the benchmark sent in all.
    num_prompts: Option<f64>,
    /// Where the request lengths come from: `fixed`, or a dataset
    /// (`dataset:openorca-mlperf`, whose per-request lengths are in the table beside this one).
    lengths: Option<String>,
    /// The engine release the benchmark ran, where stated (`0.6.0`).
    engine_version: Option<String>,
    /// TensorRT-LLM's runtime, where the benchmark states it (`tensorrt`: prebuilt engines,
    /// as NVIDIA's MLPerf harness runs them).
    engine_backend: Option<String>,
    /// `top-p` where the benchmark's requests sample with top-p/top-k; else greedy.
    #[serde(default)]
    sampling: Option<String>,
    /// Iterations scheduled at once, where the benchmark set it (vLLM 0.6 multi-step).
    scheduler_steps: Option<f64>,
    /// Whether the benchmark's engine mixed prompt chunks into decode steps, where its
    /// configuration says (vLLM 0.6 with a 4k context did not).
    chunked_prefill: Option<bool>,
    /// Whether the engine reserved each request's whole KV cache on admission, where its
    /// configuration says (NVIDIA's MLPerf harness: MAX_UTILIZATION, so no).
    reserve_full_context: Option<bool>,
    /// Sequences the engine ran at once at most and tokens per iteration, where the
    /// submission's configuration states them (TensorRT-LLM `gpu_batch_size`, `max_num_tokens`).
    max_num_seqs: Option<u32>,
    max_num_batched_tokens: Option<u32>,
    /// How the engine stored the KV cache, where the submission's scripts or model card say
    /// (`fp8`); else the engine's default for the precision.
    kv_cache_dtype: Option<String>,
    /// Whether the engine ran without CUDA/HIP graphs, where its configuration says
    /// (AMD's MLPerf vLLM builds: enforce_eager True).
    enforce_eager: Option<bool>,
    /// Whether TensorRT-LLM's PyTorch backend replayed piecewise CUDA graphs for the iterations
    /// that carry prompts, where the submission's configuration says
    /// (`torch_compile_config.enable_piecewise_cuda_graph`).
    piecewise_cuda_graphs: Option<bool>,
    /// The engine's share of GPU memory, where its configuration says (AMD's MLPerf vLLM
    /// builds: gpu_memory_utilization 1.0, 0.98 Offline).
    gpu_memory_fraction: Option<f64>,
    /// MLPerf scenario: `server` and `interactive` runs passed their latency limits at
    /// `request_rate`, the highest load the submitter found to pass.
    scenario: Option<String>,
    /// The scenario's p99 limits where they are not Llama-2-70B's (each benchmark's
    /// `mlperf.conf` entries).
    ttft_limit_ms: Option<f64>,
    tpot_limit_ms: Option<f64>,
    measured: f64,
}

impl Case {
    /// GPUs of one replica: its tensor-parallel size times its pipeline stages.
    fn replica_gpus(&self) -> u32 {
        self.tp.max(1) * self.pp.unwrap_or(1).max(1)
    }

    /// The latency limits of an MLPerf scenario (LoadGen `mlperf.conf`, llama2-70b): p99 TTFT
    /// and p99 TPOT.
    fn limits(&self) -> Option<(LatencyTarget, LatencyTarget)> {
        let p99 = |seconds: f64| LatencyTarget {
            seconds,
            percentile: 99.0,
        };
        if let (Some(ttft), Some(tpot)) = (self.ttft_limit_ms, self.tpot_limit_ms) {
            return Some((p99(ttft / 1e3), p99(tpot / 1e3)));
        }
        match self.scenario.as_deref() {
            Some("server") => Some((p99(2.0), p99(0.2))),
            Some("interactive") => Some((p99(0.45), p99(0.04))),
            _ => None,
        }
    }
}

/// Whether an MLPerf Server or Interactive run stopped well short of its limits: both of its
/// measured p99s (the table's `-ttft-p99` and `-tpot-p99` rows of the same run) at most two
/// thirds of the scenario's. Its load passed, but a higher one would have too, so it bounds the
/// system's goodput from below rather than measuring it.
fn short_of_limits(case: &Case, table: &Table) -> bool {
    let (Some((ttft, tpot)), Some(run)) = (case.limits(), case.id.strip_suffix("-throughput")) else {
        return false;
    };
    let measured = |suffix: &str| {
        let id = format!("{run}-{suffix}");
        table.case.iter().find(|c| c.id == id).map(|c| c.measured / 1e3)
    };
    match (measured("ttft-p99"), measured("tpot-p99")) {
        (Some(t), Some(p)) => t <= ttft.seconds * 2.0 / 3.0 && p <= tpot.seconds * 2.0 / 3.0,
        _ => false,
    }
}

/// The closed loop of a batch-sweep row (the ML.ENERGY tables): its sequences at once.
fn sweep_concurrency(case: &Case) -> Option<f64> {
    case.id
        .starts_with("mlenergy-")
        .then_some(case.max_concurrency)
        .flatten()
}

fn table() -> Table {
    let mut table: Table = toml::from_str(include_str!("validation/serving.toml")).unwrap();
    for extra in [
        include_str!("validation/serving-mlperf.toml"),
        include_str!("validation/serving-mlperf-llama3.toml"),
        include_str!("validation/serving-moe.toml"),
        include_str!("validation/serving-sweeps.toml"),
    ] {
        let extra: Table = toml::from_str(extra).unwrap();
        table.case.extend(extra.case);
    }
    table
}

/// Every serving case of every table, the ones reported apart included.
fn every_case() -> Vec<Case> {
    let mut cases = table().case;
    for extra in [
        second_table(),
        v6_table(),
        v6_deepseek_table(),
        v61_table(),
        v61_deepseek_table(),
        mixtral_table(),
        deepseek_table(),
    ] {
        cases.extend(extra.case);
    }
    cases
}

/// The id of every serving case, for the checks that a constant's evidence names real rows.
pub(crate) fn every_case_id() -> Vec<String> {
    every_case().into_iter().map(|case| case.id).collect()
}

/// A second set of MLPerf Inference v5.1 Llama-3.1 runs, gathered after the model and its
/// serving-capacity interval were set: other submitters, GPUs and engines (Red Hat's vLLM on
/// one L40S and one H100, H200 NVL, RTX PRO 6000, GB300 NVL72). It is reported apart, as a
/// check of both on runs neither has seen.
fn second_table() -> Table {
    toml::from_str(include_str!("validation/serving-mlperf-llama3-more.toml")).unwrap()
}

/// MLPerf Inference v6.0's runs of the dense models (Llama-2-70B, Llama-3.1-8B and 405B),
/// gathered after every constant and the serving-capacity interval were set: a round and GPUs
/// (B300, GB300 NVL72, MI355X, RTX PRO 6000, H200 NVL) the model had not met. Reported apart.
fn v6_table() -> Table {
    toml::from_str(include_str!("validation/serving-mlperf-v6.toml")).unwrap()
}

/// MLPerf Inference v6.1's runs of the dense models (Llama-2-70B and Llama-3.1-8B), gathered
/// after every constant was set and read once against the model as it stood. Reported apart.
fn v61_table() -> Table {
    toml::from_str(include_str!("validation/serving-mlperf-v6.1.toml")).unwrap()
}

/// MLPerf Inference v6.1's DeepSeek-R1 runs (B300, B200, GB200 and GB300 racks on TensorRT-LLM 1.2,
/// 512 MI355X on SGLang), gathered with the dense ones and reported apart.
fn v61_deepseek_table() -> Table {
    toml::from_str(include_str!("validation/serving-mlperf-v6.1-deepseek.toml")).unwrap()
}

/// MLPerf Inference v6.0's DeepSeek-R1 runs (B200, B300, GB200, GB300 on TensorRT-LLM 1.2),
/// gathered with the dense ones and reported apart.
fn v6_deepseek_table() -> Table {
    toml::from_str(include_str!("validation/serving-mlperf-v6-deepseek.toml")).unwrap()
}

/// MLPerf Inference's Mixtral-8x7B runs, a mixture of experts served on the same harnesses.
fn mixtral_table() -> Table {
    toml::from_str(include_str!("validation/serving-mlperf-mixtral.toml")).unwrap()
}

/// MLPerf Inference v5.1's DeepSeek-R1 runs: experts spread over each 8-GPU replica with
/// attention data parallelism, long reasoning outputs.
fn deepseek_table() -> Table {
    toml::from_str(include_str!("validation/serving-mlperf-deepseek.toml")).unwrap()
}

/// The per-request lengths of a dataset the table names (`dataset:openorca-mlperf` …), read
/// once from the files beside the table.
pub(crate) fn dataset(name: &str) -> Option<&'static [RequestShape]> {
    static SETS: OnceLock<Vec<(&'static str, Vec<RequestShape>)>> = OnceLock::new();
    let sets = SETS.get_or_init(|| {
        [
            (
                "dataset:openorca-mlperf",
                include_str!("validation/openorca-llama2-lengths.csv"),
            ),
            (
                "dataset:llama3.1-405b-mlperf",
                include_str!("validation/llama3.1-405b-lengths.csv"),
            ),
            (
                "dataset:llama3.1-8b-mlperf",
                include_str!("validation/llama3.1-8b-lengths.csv"),
            ),
            (
                "dataset:mixtral-8x7b-mlperf",
                include_str!("validation/mixtral-8x7b-lengths.csv"),
            ),
            (
                "dataset:deepseek-r1-mlperf",
                include_str!("validation/deepseek-r1-lengths.csv"),
            ),
        ]
        .into_iter()
        .map(|(name, text)| (name, read_lengths(text)))
        .collect()
    });
    sets.iter()
        .find(|(n, _)| *n == name)
        .map(|(_, shapes)| shapes.as_slice())
}

fn read_lengths(text: &str) -> Vec<RequestShape> {
    text.lines()
        .filter(|l| !l.starts_with('#') && !l.starts_with("input_length"))
        .map(|l| {
            let (input, output) = l.split_once(',').unwrap();
            RequestShape {
                input_tokens: input.parse().unwrap(),
                output_tokens: output.parse().unwrap(),
            }
        })
        .collect()
}

/// The traffic of a case: its dataset's lengths where the table has them, else its stated
/// means for every request. The datasets' outputs are reference answers; the served model's own
/// outputs, whose per-request lengths are unpublished, are taken as those scaled to the run's
/// mean (an assumption), within the dataset's cap.
fn case_mix(case: &Case, input: u64, output: u64) -> RequestMix {
    let Some(name) = case.lengths.as_deref().filter(|n| dataset(n).is_some()) else {
        return RequestMix::fixed(input, output);
    };
    // Built once per dataset and output mean: a case is evaluated three ways.
    static MIXES: OnceLock<std::sync::Mutex<std::collections::HashMap<(String, u64), RequestMix>>> = OnceLock::new();
    let key = (name.to_string(), case.output_tokens.unwrap_or(0.0).to_bits());
    let mixes = MIXES.get_or_init(Default::default);
    if let Some(mix) = mixes.lock().unwrap().get(&key) {
        return mix.clone();
    }
    let mix = scaled_mix(case, name);
    mixes.lock().unwrap().insert(key, mix.clone());
    mix
}

/// The dataset's requests with their outputs scaled to the case's mean output.
fn scaled_mix(case: &Case, name: &str) -> RequestMix {
    let shapes = dataset(name).unwrap();
    let mean = shapes.iter().map(|s| s.output_tokens as f64).sum::<f64>() / shapes.len() as f64;
    let cap = shapes.iter().map(|s| s.output_tokens).max().unwrap_or(1).max(1024);
    let scale = case.output_tokens.unwrap_or(mean) / mean;
    let scaled = shapes
        .iter()
        .map(|s| RequestShape {
            input_tokens: s.input_tokens,
            output_tokens: ((s.output_tokens as f64 * scale).round() as u64).clamp(1, cap),
        })
        .collect();
    RequestMix::from_shapes(scaled, case.lengths.clone().unwrap_or_default()).unwrap()
}

fn step_cost(case: &Case, input: u64, output: u64) -> Option<StepCost> {
    let mut request = WorkloadRequest::new(ModelSource::BuiltIn(case.model.clone()), Task::Inference, &case.gpu);
    request.gpus = Some(case.replica_gpus());
    request.tp = Some(case.tp);
    request.pp = case.pp;
    request.ep = case.ep;
    request.attention_dp = case.attention_dp;
    if case.attention_dp == Some(true) {
        request.ep = None;
    }
    request.precision = Some(case.precision.parse::<Precision>().unwrap());
    request.engine = Some(case.engine.parse::<Engine>().unwrap());
    request.seq = Some(input);
    request.output_tokens = Some(output);
    request.batch = Some(1);
    request.kv_cache = case.kv_cache_dtype.as_deref().map(|k| k.parse().unwrap());
    // The release the benchmark ran and the scheduler settings it states.
    request.engine_settings = EngineSettings {
        release: case.engine_version.as_deref().and_then(EngineRelease::parse),
        backend: case.engine_backend.as_deref().map(|b| b.parse().unwrap()),
        scheduler_steps: case.scheduler_steps.map(|s| s as u32),
        chunked_prefill: case.chunked_prefill,
        reserve_full_context: case.reserve_full_context,
        max_num_seqs: case.max_num_seqs,
        max_num_batched_tokens: case.max_num_batched_tokens,
        sampling: case.sampling.as_deref().map(|s| s.parse().unwrap()),
        enforce_eager: case.enforce_eager,
        piecewise_cuda_graphs: case.piecewise_cuda_graphs,
        gpu_memory_fraction: case.gpu_memory_fraction,
        ..EngineSettings::default()
    };
    estimate_workload(catalog(), &request).ok()?.estimate.serving_cost
}

/// Whether a case measures throughput (else a latency in ms).
/// A case's replica and traffic: its step cost and request mix, where its lengths are stated
/// and the model fits.
fn served(case: &Case) -> Option<(StepCost, RequestMix)> {
    let (input, output) = (case.input_tokens?.round() as u64, case.output_tokens?.round() as u64);
    Some((step_cost(case, input, output)?, case_mix(case, input, output)))
}

fn is_throughput(case: &Case) -> bool {
    case.kind.contains("throughput")
}

/// The model's figure for a case, in the case's unit; `None` where the case cannot be
/// evaluated (an input length the source does not state) or the model saturates.
fn predict(case: &Case) -> Result<f64, String> {
    let (Some(input), Some(output)) = (case.input_tokens, case.output_tokens) else {
        return Err("input length unstated".to_string());
    };
    let (input, output) = (input.round() as u64, output.round() as u64);
    let cost = step_cost(case, input, output).ok_or("does not fit")?;
    let mix = case_mix(case, input, output);
    let replicas = f64::from(case.gpus / case.replica_gpus());
    let per_replica_rate = case.request_rate.map(|r| r / replicas);
    let concurrency = case.max_concurrency.map(|c| c / replicas);
    let closed = closed_loop(&cost, &mix, concurrency);
    let point = per_replica_rate.map(|rate| serving::at_load(&cost, rate, &mix));
    // An MLPerf Server or Interactive run: the load it passed is compared with the highest load
    // the model finds within the same limits (its goodput), not with the offered load itself.
    if let (Some((ttft, tpot)), true) = (case.limits(), is_throughput(case)) {
        let found = serving::goodput(&cost, &mix, Some(ttft), Some(tpot)).ok_or("no load meets the limits")?;
        if std::env::var_os("GPUPLAN_SERVING_TRACE").is_some() {
            let at = serving::at_load(&cost, found.requests_per_second, &mix).ok();
            println!(
                "  {}: limit {}, step {:.1} ms, decode {:.1} ms, {:.0} sequences, KV cap {:.0}, TTFT p99 {:.0} ms, TPOT p99 {:.0} ms",
                case.id,
                found.limit,
                at.map_or(0.0, |p| p.iterations.step_seconds * 1e3),
                at.map_or(0.0, |p| p.iterations.decode_step_seconds * 1e3),
                at.map_or(0.0, |p| p.sequences),
                cost.max_sequences(&mix),
                at.map_or(0.0, |p| p.ttft_at(0.99) * 1e3),
                at.map_or(0.0, |p| p.tpot_at(0.99) * 1e3),
            );
        }
        return Ok(replicas * found.requests_per_second * output as f64);
    }
    if is_throughput(case) {
        let (tokens, requests) = match point {
            Some(Ok(p)) => (p.output_tokens_per_second(), p.requests_per_second),
            _ => (closed.output_tokens_per_second, closed.requests_per_second),
        };
        return Ok(replicas
            * match case.kind.as_str() {
                "request_throughput" => requests,
                "throughput_total" => tokens * (input + output) as f64 / output as f64,
                _ => tokens,
            });
    }
    let q = match case.statistic.as_str() {
        "p50" => Some(0.5),
        "p90" => Some(0.9),
        "p99" => Some(0.99),
        _ => None,
    };
    let seconds = match point {
        Some(Ok(p)) => match (case.kind.as_str(), q) {
            ("ttft", Some(q)) => p.ttft_at(q),
            ("ttft", None) => p.ttft_mean(),
            ("tpot", Some(q)) => p.tpot_at(q),
            ("tpot", None) => p.iterations.tpot_mean(),
            ("itl", Some(q)) => p.itl_at(q),
            ("itl", None) => p.iterations.tpot_mean(),
            ("e2e_latency", _) => p.e2e_mean(),
            (kind, _) => return Err(format!("unknown kind {kind}")),
        },
        Some(Err(saturation)) => {
            use gpuplan::estimator::serving_near_capacity::classify;
            let past =
                per_replica_rate.map(|rate| classify(saturation, rate, closed.requests_per_second, cost.measured_on()));
            return Err(match past {
                Some(Ok(near)) => format!(
                    "near capacity: {:.0} % above it, {:?}",
                    (near.load_over_capacity - 1.0) * 100.0,
                    near.bound
                ),
                _ => format!("saturated: {saturation:?}"),
            });
        }
        None => match case.kind.as_str() {
            "tpot" => q.map_or(closed.iterations.tpot_mean(), |q| closed.iterations.tpot_at(q)),
            "itl" => q.map_or(closed.iterations.tpot_mean(), |q| closed.iterations.itl_at(q)),
            // Every prompt sent at once: one burst, no steady state.
            "ttft" if case.num_prompts.is_some_and(|n| Some(n) <= case.max_concurrency) => {
                burst_ttft(&cost, &mix, case.num_prompts.unwrap_or(1.0) / replicas)
            }
            "ttft" => {
                let users = at_users(&cost, &mix, concurrency.unwrap_or(closed.sequences));
                match q {
                    Some(_) => users.ttft.p50,
                    None => users.ttft.mean,
                }
            }
            kind => return Err(format!("{kind} without a load")),
        },
    };
    Ok(seconds * 1e3)
}

/// An MLPerf run's p99 TTFT or TPOT against the model's at the model's own goodput within
/// the same limits: the run was at its limit, so this compares the shape of the latency curve
/// near saturation whatever error the goodput itself has (a 9 % error in capacity moves the
/// percentiles at a fixed load by half near the limit).
fn at_own_goodput(case: &Case) -> Option<f64> {
    if case.statistic != "p99" {
        return None;
    }
    let (ttft, tpot) = case.limits()?;
    let (cost, mix) = served(case)?;
    let rate = serving::goodput(&cost, &mix, Some(ttft), Some(tpot))?.requests_per_second;
    let point = serving::at_load(&cost, rate, &mix).ok()?;
    let seconds = match case.kind.as_str() {
        "ttft" => point.ttft_at(0.99),
        "tpot" => point.tpot_at(0.99),
        _ => return None,
    };
    Some(seconds * 1e3)
}

/// GPUs a plan at an MLPerf Server or Interactive run's load asks for: replicas of the
/// submission's tensor-parallel size, each carrying the model's goodput within the scenario's
/// limits, with no headroom (the submission ran at its limit too).
fn planned_gpus(case: &Case) -> Option<u32> {
    let (ttft, tpot) = case.limits()?;
    let (cost, mix) = served(case)?;
    let per_replica = serving::goodput(&cost, &mix, Some(ttft), Some(tpot))?.requests_per_second;
    let replicas = (case.request_rate? / per_replica).ceil() as u32;
    Some(replicas.max(1) * case.replica_gpus())
}

/// Every MLPerf Server and Interactive run's load, planned: about the GPUs the submission
/// used on the held-out runs (a plan is no longer the 1.25–2.25× over-provisioned answer it
/// was), with the spread printed.
#[test]
fn plans_at_mlperf_loads_use_about_the_gpus_the_submissions_used() {
    let calibrated = gpuplan::estimator::calibration::calibrated_cases();
    let mut ratios = Vec::new();
    for case in table().case.iter().filter(|c| c.limits().is_some() && is_throughput(c)) {
        let Some(gpus) = planned_gpus(case) else {
            panic!("{}: no plan", case.id);
        };
        let ratio = f64::from(gpus) / f64::from(case.gpus);
        println!(
            "{:<64} {:>3} GPUs planned, {:>3} used: {ratio:.2}×",
            case.id, gpus, case.gpus
        );
        if !calibrated.contains(case.id.as_str()) {
            ratios.push((ratio, case.id.clone()));
        }
    }
    ratios.sort_by(|a, b| a.0.total_cmp(&b.0));
    let over: Vec<_> = ratios.iter().filter(|(r, _)| *r > 1.15).collect();
    let median = ratios[ratios.len() / 2].0;
    println!(
        "held out: {} runs, median {median:.2}×, {} above 1.15×",
        ratios.len(),
        over.len()
    );
    assert!(ratios.len() >= 30, "{}", ratios.len());
    // The bound on every run, held for the median: one-GPU B200 replicas at the
    // Llama-2 Server loads come out 9 for 8 since the fp4 GEMM factor answers to the public
    // TensorRT-LLM tables as well as to NVIDIA's tuned MLPerf engines.
    assert!(median <= 1.15, "median {median:.2}×");
    // Not yet every run. Three Llama-3.1-405B runs on one TP8 replica of 8 H200 ask for two:
    // their goodputs come out 5–10 % under the loads they passed (the p99 time to first token
    // there 8–20 % long), and a replica is eight GPUs. NVIDIA's GB200 NVL72 Interactive run,
    // read on the PyTorch backend, asked for 1.22×; its configuration builds TensorRT engines,
    // and read so it asks for 1.06×.
    assert!(over.len() <= 3, "plans above 1.15× the submission's GPUs: {over:?}");
    assert!(ratios.last().is_some_and(|r| r.0 <= 2.0), "{:?}", ratios.last());
}

/// The second set of MLPerf runs against the model as it stands: Offline capacities,
/// goodputs within each scenario's limits and the p99s at the loads passed, with what the
/// serving capacity's 80 % interval (learned from the first tables) covers of them. Held to
/// today's figures as bars against regressions; the targets (10 % and 15 %) are not
/// yet met on this set.
#[test]
fn a_second_set_of_mlperf_runs_is_reported_against_the_same_model() {
    let table = second_table();
    let set = SetReport::of(
        &table,
        ("second set", "second set, short of its limits: a lower bound"),
        MeasuredOn::DenseModels,
    );
    set.print("second set");
    // Today: Offline 3.9 %, goodput 7.2 %, p99s 22.5 %, eight rows past the estimated capacity.
    // The Llama-3.1-8B runs whose iterations hold 1,536 tokens (Quanta's and Cisco's H200 and
    // H200 NVL) came out 9–13 % slow Offline while TensorRT-LLM's fixed iteration time was 4 ms
    // whatever the model; read as 50 µs a layer, a 32-layer model's is 1.6 ms.
    assert!(table.case.len() >= 40, "{}", table.case.len());
    let (o, g, p) = set.medians();
    assert!(o <= 0.05 && g <= 0.08 && p <= 0.23, "{o:.3} {g:.3} {p:.3}");
    assert!(set.not_evaluated <= 10, "{}", set.not_evaluated);
    // Plans at the loads: three above 1.15×, Red Hat's one H100 (two for its one), Quanta's
    // 405B on one TP8 replica of 8 H200 (sixteen) and its 4 H200 NVL (five).
    assert!(set.plans_over() <= 3, "{} plans above 1.15×", set.plans_over());
}

/// MLPerf Inference v6.0's dense-model runs against the model as it stands, as first read:
/// no constant was set from them, and none was changed after reading them.
#[test]
fn mlperf_v6_runs_are_reported_against_the_same_model() {
    report_apart(
        v6_table(),
        ("v6.0", "v6.0, short of its limits: a lower bound"),
        MeasuredOn::DenseModels,
        &V6_BARS,
    );
}

/// MLPerf Inference v6.1's dense-model runs against the model as it stands, as first read: no
/// constant was set from them, and none was changed after reading them.
#[test]
fn mlperf_v61_runs_are_reported_against_the_same_model() {
    report_apart(
        v61_table(),
        ("v6.1", "v6.1, short of its limits: a lower bound"),
        MeasuredOn::DenseModels,
        &V61_BARS,
    );
}

/// MLPerf Inference v6.1's DeepSeek-R1 runs against the model as it stands: none set a constant.
#[test]
fn mlperf_v61_deepseek_runs_are_reported_against_the_same_model() {
    report_apart(
        v61_deepseek_table(),
        ("v6.1 deepseek", "v6.1 deepseek, short of its limits: a lower bound"),
        MeasuredOn::MixturesOfExperts,
        &V61_DEEPSEEK_BARS,
    );
}

/// MLPerf Inference v6.0's DeepSeek-R1 runs against the model as it stands: none set a constant.
#[test]
fn mlperf_v6_deepseek_runs_are_reported_against_the_same_model() {
    report_apart(
        v6_deepseek_table(),
        ("v6.0 deepseek", "v6.0 deepseek, short of its limits: a lower bound"),
        MeasuredOn::MixturesOfExperts,
        &V6_DEEPSEEK_BARS,
    );
}

/// MLPerf Inference's Mixtral-8x7B runs (v4.1 and v5.1: TensorRT-LLM on H100, H200, GH200
/// and RTX PRO 6000, vLLM on MI300X and MI325X), one of which set a constant: a mixture of
/// experts at the loads and limits of the Llama-2-70B benchmark, over the dataset's own
/// 15,000 request lengths, with the GPUs a plan at each Server load asks for.
#[test]
fn mlperf_mixtral_runs_are_reported_against_the_same_model() {
    let (table, set) = mixtral_set();
    set.print("mixtral");
    set.check(&table, &MIXTRAL_BARS);
}

fn mixtral_set() -> (Table, SetReport) {
    moe_set(
        mixtral_table(),
        ("mixtral", "mixtral, short of its limits: a lower bound"),
    )
}

/// A set of mixture-of-experts runs evaluated, read against the experts' capacity range.
fn moe_set(table: Table, labels: (&'static str, &'static str)) -> (Table, SetReport) {
    let set = SetReport::of(&table, labels, MeasuredOn::MixturesOfExperts);
    (table, set)
}

/// A set reported apart: evaluated against the capacity range of its replicas' kind, printed
/// under `label` (its runs short of their limits under "`label`, short of its limits"), and
/// held to `bars`.
fn report_apart(table: Table, labels: (&'static str, &'static str), measured_on: MeasuredOn, bars: &SetBars) {
    let set = SetReport::of(&table, labels, measured_on);
    set.print(labels.0);
    set.check(&table, bars);
}

/// MLPerf Inference v5.1's DeepSeek-R1 runs (TensorRT-LLM on B200, GB200 and GB300: one
/// replica of TP 8 × EP 8 with attention data parallelism per 8 GPUs), none of which set a
/// constant, over the dataset's 4,388 request lengths (804 tokens in, about 3,700 out), with
/// the GPUs a plan at each Server load asks for.
#[test]
fn mlperf_deepseek_runs_are_reported_against_the_same_model() {
    let (table, set) = deepseek_set();
    set.print("deepseek");
    set.check(&table, &DEEPSEEK_BARS);
}

fn deepseek_set() -> (Table, SetReport) {
    moe_set(
        deepseek_table(),
        ("deepseek", "deepseek, short of its limits: a lower bound"),
    )
}

/// A mixture of experts' replica has a capacity range of its own: the split-conformal 80 %
/// range of the held-out MLPerf Mixtral-8x7B and DeepSeek-R1 runs' capacity and goodput,
/// measured over estimated, which the calibration data holds and which covers the other half
/// of the runs as it promises. It reaches far lower than the dense models': the DeepSeek-R1
/// replicas came to 36–86 % of the estimate.
#[test]
fn mixtures_of_experts_have_a_serving_capacity_range_of_their_own() {
    let mut residuals = mixtral_set().1.capacities;
    residuals.extend(deepseek_set().1.capacities);
    crate::estimates::intervals::check(&residuals);
    let range = gpuplan::estimator::serving_near_capacity::capacity_interval;
    let (dense, experts) = (
        range(MeasuredOn::DenseModels).unwrap(),
        range(MeasuredOn::MixturesOfExperts).unwrap(),
    );
    assert!(experts.low < dense.low - 0.25, "{experts:?} {dense:?}");
}

/// A set of MLPerf runs read apart from the tables the constants were set from: their
/// Offline capacities, goodputs within each scenario's limits, p99s at the loads passed, the
/// rows not evaluated (a load past the estimated capacity), and how many of the runs the
/// serving capacity's 80 % interval holds.
struct SetReport {
    offline: Vec<f64>,
    goodput: Vec<f64>,
    percentiles: Vec<f64>,
    means: Vec<f64>,
    not_evaluated: usize,
    /// The capacity's range for these replicas' kind (`None` where none is measured), and
    /// the kind.
    interval: Option<gpuplan::estimator::serving_near_capacity::CapacityInterval>,
    measured_on: MeasuredOn,
    /// Held-out capacities and goodputs, measured over estimated.
    capacities: Vec<crate::estimates::intervals::Residual>,
    /// GPUs a plan at each Server or Interactive run's load asks for, over the run's own.
    plans: Vec<f64>,
}

impl SetReport {
    /// Every case of `table` evaluated and printed with its role, the first of `labels`, or
    /// the second for a run stopped short of its limits (printed, but left out of the medians,
    /// as a row a constant was set from is). The replicas are read against the capacity range
    /// measured on their kind.
    fn of(table: &Table, labels: (&'static str, &'static str), measured_on: MeasuredOn) -> SetReport {
        let calibrated = gpuplan::estimator::calibration::calibrated_cases();
        let interval = gpuplan::estimator::serving_near_capacity::capacity_interval(measured_on);
        let mut set = SetReport {
            offline: Vec::new(),
            goodput: Vec::new(),
            percentiles: Vec::new(),
            means: Vec::new(),
            not_evaluated: 0,
            interval,
            measured_on,
            capacities: Vec::new(),
            plans: Vec::new(),
        };
        for case in &table.case {
            let calibration = calibrated.contains(case.id.as_str());
            let role = |short| match (calibration, short) {
                (true, _) => "calibration",
                (false, true) => labels.1,
                (false, false) => labels.0,
            };
            match evaluate(case, table, role) {
                Ok(_) if calibration => {}
                Ok((_, _, true)) => {}
                Ok((predicted, error, false)) => set.add(case, predicted, error),
                Err(why) => {
                    println!("{:<64} {:>10.1} {:>10} ({why})", case.id, case.measured, "-");
                    set.not_evaluated += 1;
                }
            }
        }
        for case in table.case.iter().filter(|c| c.limits().is_some() && is_throughput(c)) {
            let gpus = planned_gpus(case).unwrap_or_else(|| panic!("{}: no plan", case.id));
            let ratio = f64::from(gpus) / f64::from(case.gpus);
            println!(
                "{:<64} {:>3} GPUs planned, {:>3} used: {ratio:.2}×",
                case.id, gpus, case.gpus
            );
            set.plans.push(ratio);
        }
        set
    }

    /// The set against its bars.
    fn check(&self, table: &Table, bars: &SetBars) {
        let (o, g, p) = self.medians();
        assert!(table.case.len() >= bars.rows, "{}", table.case.len());
        // A set none of whose latency rows is evaluated has no percentile median; the bar on the
        // rows not evaluated holds it then.
        let p = if self.percentiles.is_empty() { 0.0 } else { p };
        assert!(
            o <= bars.offline && g <= bars.goodput && p <= bars.percentiles,
            "{o:.3} {g:.3} {p:.3}"
        );
        assert!(self.not_evaluated <= bars.not_evaluated, "{}", self.not_evaluated);
        let over = self.plans_over();
        assert!(over <= bars.plans_over, "{over} plans above 1.15×");
    }

    fn plans_over(&self) -> usize {
        self.plans.iter().filter(|r| **r > 1.15).count()
    }

    fn add(&mut self, case: &Case, predicted: f64, error: f64) {
        if is_throughput(case) {
            let ratio = case.measured / predicted;
            let kind = match self.measured_on {
                MeasuredOn::DenseModels => "serving_capacity",
                MeasuredOn::MixturesOfExperts => "moe_serving_capacity",
            };
            self.capacities.extend(crate::estimates::intervals::Residual::of(
                &case.id,
                kind,
                (case.gpus, 8),
                ratio,
            ));
        }
        match (is_throughput(case), case.limits().is_some()) {
            (true, true) => self.goodput.push(error.abs()),
            (true, false) => self.offline.push(error.abs()),
            (false, _) if case.statistic == "mean" => self.means.push(error.abs()),
            (false, _) => self.percentiles.push(error.abs()),
        }
    }

    /// Median |error| of the Offline capacities, the goodputs and the p99 latency rows.
    fn medians(&self) -> (f64, f64, f64) {
        (
            median(self.offline.clone()),
            median(self.goodput.clone()),
            median(self.percentiles.clone()),
        )
    }

    fn print(&self, label: &str) {
        let (o, g, p) = self.medians();
        let means = if self.means.is_empty() {
            String::new()
        } else {
            format!(
                ", means {:.1} % over {}",
                median(self.means.clone()) * 100.0,
                self.means.len()
            )
        };
        let ratios: Vec<f64> = self.capacities.iter().map(|r| r.ratio).collect();
        let range = match self.interval.map(|range| (range.low, range.high)) {
            Some((low, high)) => format!(
                "the serving capacity's 80 % range for {} {low:.3}–{high:.3} holds {} of {} runs",
                self.measured_on.describe(),
                ratios.iter().filter(|r| (low..=high).contains(*r)).count(),
                ratios.len()
            ),
            None => format!(
                "no serving capacity range is measured on {}; these {} runs came to {:.2}–{:.2} of the estimate",
                self.measured_on.describe(),
                ratios.len(),
                ratios.iter().copied().fold(f64::INFINITY, f64::min),
                ratios.iter().copied().fold(0.0, f64::max)
            ),
        };
        let percentiles = if self.percentiles.is_empty() {
            "no p99 TTFT/TPOT at the passed load (every latency row's load past the estimated capacity)".to_string()
        } else {
            format!(
                "p99 TTFT/TPOT at the passed load {:.1} % over {}{means}",
                p * 100.0,
                self.percentiles.len()
            )
        };
        println!(
            "{label}: Offline capacity {:.1} % over {}, goodput {:.1} % over {}, {percentiles}; {} not evaluated (saturated or near capacity); {range}",
            o * 100.0,
            self.offline.len(),
            g * 100.0,
            self.goodput.len(),
            self.not_evaluated,
        );
        if !self.plans.is_empty() {
            let under = self.plans.iter().filter(|r| **r < 1.0 / 1.15).count();
            println!(
                "{label}: {} Server and Interactive runs planned, {} above 1.15× the submission's GPUs, {under} below 1/1.15 of them",
                self.plans.len(),
                self.plans_over()
            );
        }
    }
}

/// The model's figure for a case of `table`, printed as a line of the table (measured, model,
/// error, and the role `role` gives it from whether the run stopped short of its limits):
/// the figure, its relative error and that flag.
fn evaluate(case: &Case, table: &Table, role: impl Fn(bool) -> &'static str) -> Result<(f64, f64, bool), String> {
    let predicted = predict(case)?;
    let short = short_of_limits(case, table);
    let error = (predicted - case.measured) / case.measured;
    println!(
        "{:<64} {:>10.1} {:>10.1} {:>+7.1}%  {}",
        case.id,
        case.measured,
        predicted,
        error * 100.0,
        role(short)
    );
    Ok((predicted, error, short))
}

fn median(mut values: Vec<f64>) -> f64 {
    values.sort_by(f64::total_cmp);
    if values.is_empty() {
        return f64::NAN;
    }
    let mid = values.len() / 2;
    if values.len() % 2 == 0 {
        (values[mid - 1] + values[mid]) / 2.0
    } else {
        values[mid]
    }
}

#[test]
fn the_table_has_enough_cases_across_gpus_and_engines() {
    let cases = table().case;
    assert!(cases.len() >= 25, "{}", cases.len());
    let mut gpus: Vec<&str> = cases.iter().map(|c| c.gpu.as_str()).collect();
    gpus.sort_unstable();
    gpus.dedup();
    let mut engines: Vec<&str> = cases.iter().map(|c| c.engine.as_str()).collect();
    engines.sort_unstable();
    engines.dedup();
    assert!(gpus.len() >= 3 && engines.len() >= 3, "{gpus:?} {engines:?}");
}

/// Every MLPerf run on TensorRT-LLM 1.0 or later names the runtime it ran: that release's
/// default is the PyTorch backend, while NVIDIA's v5.1 harness builds TensorRT engines for its
/// Llama and Mixtral runs and serves DeepSeek-R1 on the PyTorch backend, and the two differ in
/// their GEMMs' efficiency and their CUDA graphs. (NVIDIA's GB200 NVL72 Llama-3.1-405B rows had
/// named none, and were read on the wrong one.)
#[test]
fn every_mlperf_run_on_tensorrt_llm_1_names_its_runtime() {
    let release_one = EngineRelease::new(1, 0);
    let cases = every_case();
    let unnamed: Vec<&str> = cases
        .iter()
        .filter(|c| c.id.starts_with("mlperf-") && c.engine == "tensorrt-llm")
        .filter(|c| {
            c.engine_version
                .as_deref()
                .and_then(EngineRelease::parse)
                .is_some_and(|release| release >= release_one)
        })
        .filter(|c| c.engine_backend.is_none())
        .map(|c| c.id.as_str())
        .collect();
    assert!(unnamed.is_empty(), "{unnamed:?}");
}

#[test]
fn held_out_serving_errors_meet_the_targets() {
    let mut throughput = Vec::new();
    let mut latency = Vec::new();
    let mut goodput = Vec::new();
    let mut llama3_goodput = Vec::new();
    let mut llama3_percentiles = Vec::new();
    let mut llama3_own = Vec::new();
    let mut limit_percentiles = Vec::new();
    let mut own_limit = Vec::new();
    // MLPerf runs' mean TTFT and TPOT at their passed loads: (Llama-2-70B?, TTFT?, |error|).
    let mut means = Vec::new();
    let mut saturated = 0;
    let mut near_capacity = 0;
    let mut skipped = Vec::new();
    // Held-out MLPerf capacities and goodputs, measured over estimated: the capacity's range.
    let mut capacities = Vec::new();
    // Runs short of their limits: (model / passed load) for each.
    let mut lower_bounds = Vec::new();
    // Rows of the batch sweeps: (sequences, throughput?, |error|).
    let mut sweeps = Vec::new();
    let calibrated = gpuplan::estimator::calibration::calibrated_cases();
    println!("{:<64} {:>10} {:>10} {:>8}  role", "case", "measured", "model", "error");
    let table = table();
    for case in &table.case {
        // A run's mean goes with its p99 row: in-sample where that row set a constant.
        let p99_twin = case.id.strip_suffix("-mean").map(|run| format!("{run}-p99"));
        let calibration =
            calibrated.contains(case.id.as_str()) || p99_twin.is_some_and(|twin| calibrated.contains(twin.as_str()));
        let role = |short: bool| match (calibration, short) {
            (true, _) => "calibration",
            (false, true) => "held out, short of its limits: a lower bound",
            (false, false) => "held out",
        };
        match evaluate(case, &table, role) {
            Ok((predicted, error, short)) => {
                if !short && !calibration && is_throughput(case) && case.id.starts_with("mlperf-") {
                    capacities.extend(crate::estimates::intervals::Residual::of(
                        &case.id,
                        "serving_capacity",
                        (case.gpus, 8),
                        case.measured / predicted,
                    ));
                }
                if short && !calibration {
                    lower_bounds.push((predicted / case.measured, case.id.clone()));
                } else if let (Some(users), false) = (sweep_concurrency(case), calibration) {
                    sweeps.push((users, is_throughput(case), error.abs()));
                } else if !calibration {
                    match (is_throughput(case), case.limits().is_some()) {
                        (true, true) if case.model == "llama-2-70b" => goodput.push(error.abs()),
                        (true, true) => llama3_goodput.push(error.abs()),
                        (true, false) => throughput.push(error.abs()),
                        (false, true) if case.statistic == "mean" => {
                            means.push((case.model == "llama-2-70b", case.kind == "ttft", error.abs()))
                        }
                        (false, true) if case.model == "llama-2-70b" => limit_percentiles.push(error.abs()),
                        (false, true) => llama3_percentiles.push(error.abs()),
                        (false, false) => latency.push(error.abs()),
                    }
                }
            }
            Err(why) => {
                println!("{:<64} {:>10.1} {:>10} ({why})", case.id, case.measured, "-");
                if !calibration && case.limits().is_some() && case.statistic == "p99" {
                    saturated += usize::from(why.starts_with("saturated"));
                    near_capacity += usize::from(why.starts_with("near capacity"));
                }
                skipped.push((case.id.clone(), why));
            }
        }
        if let (Some(at_limit), false) = (at_own_goodput(case), calibration) {
            let error = (at_limit - case.measured) / case.measured;
            println!(
                "{:<64} {:>10.1} {:>10.1} {:>+7.1}%  at the model's own goodput",
                case.id,
                case.measured,
                at_limit,
                error * 100.0
            );
            if case.model == "llama-2-70b" {
                own_limit.push(error.abs());
            } else {
                llama3_own.push(error.abs());
            }
        }
    }
    let (t, l) = (median(throughput.clone()), median(latency.clone()));
    let (g, p) = (median(goodput.clone()), median(limit_percentiles.clone()));
    println!(
        "held out: throughput median |error| {:.1} % over {} cases; latency {:.1} % over {}; MLPerf Llama-2-70B goodput {:.1} % over {}, p99 TTFT/TPOT at the passed load {:.1} % over {}; {} not evaluated",
        t * 100.0,
        throughput.len(),
        l * 100.0,
        latency.len(),
        g * 100.0,
        goodput.len(),
        p * 100.0,
        limit_percentiles.len(),
        skipped.len()
    );
    let o = median(own_limit.clone());
    let g3 = median(llama3_goodput.clone());
    println!(
        "held out: MLPerf Llama-3.1-405B/8B goodput {:.1} % over {}; p99 TTFT/TPOT at the passed load {:.1} % over {}, at the model's own goodput {:.1} % over {}",
        g3 * 100.0,
        llama3_goodput.len(),
        median(llama3_percentiles.clone()) * 100.0,
        llama3_percentiles.len(),
        median(llama3_own.clone()) * 100.0,
        llama3_own.len()
    );
    println!(
        "held out: MLPerf Llama-2-70B p99 TTFT/TPOT at the model's own goodput {:.1} % over {}; published loads found saturated (all MLPerf rows): {saturated}; near capacity, within its 80 % range: {near_capacity}",
        o * 100.0,
        own_limit.len()
    );
    let mean_of = |llama2: bool, ttft: Option<bool>| {
        let errors: Vec<f64> = means
            .iter()
            .filter(|(l, t, _)| *l == llama2 && ttft.is_none_or(|ttft| *t == ttft))
            .map(|(_, _, e)| *e)
            .collect();
        (median(errors.clone()), errors.len())
    };
    let medians = |llama2: bool| [None, Some(true), Some(false)].map(|ttft| mean_of(llama2, ttft));
    let ([(m2, n2), (m2_ttft, _), (m2_tpot, _)], [(m3, n3), (m3_ttft, _), (m3_tpot, _)]) =
        (medians(true), medians(false));
    println!(
        "held out: MLPerf mean TTFT/TPOT at the passed load, Llama-2-70B {:.1} % over {n2} (TTFT {:.1} %, TPOT {:.1} %), Llama-3.1-405B/8B {:.1} % over {n3} (TTFT {:.1} %, TPOT {:.1} %)",
        m2 * 100.0,
        m2_ttft * 100.0,
        m2_tpot * 100.0,
        m3 * 100.0,
        m3_ttft * 100.0,
        m3_tpot * 100.0
    );
    // Not yet within the percentiles' 15 %: held to today's 17.2 % and 21.1 %.
    assert!(n2 >= 60 && n3 >= 30, "{n2} {n3}");
    assert!(
        m2 <= MEAN_AT_LOAD_BAR.0 && m3 <= MEAN_AT_LOAD_BAR.1,
        "means {m2:.3} {m3:.3}"
    );
    crate::estimates::intervals::check(&capacities);
    println!(
        "held out: {} MLPerf runs stopped short of their limits (both p99s within two thirds of them); the model's goodput over their passed load: {}",
        lower_bounds.len(),
        lower_bounds
            .iter()
            .map(|(r, _)| format!("{r:.2}×"))
            .collect::<Vec<_>>()
            .join(", ")
    );
    // A passed load bounds goodput from below: the model may find more, not much less.
    assert!(lower_bounds.iter().all(|(ratio, _)| *ratio >= 0.9), "{lower_bounds:?}");
    let sweep = |throughput: bool, light: bool| {
        let errors: Vec<f64> = sweeps
            .iter()
            .filter(|(users, t, _)| *t == throughput && (*users <= 32.0) == light)
            .map(|(_, _, e)| *e)
            .collect();
        (median(errors.clone()), errors.len())
    };
    let [(itl_light, n1), (itl_heavy, n2), (tput_light, n3), (tput_heavy, n4)] =
        [(false, true), (false, false), (true, true), (true, false)].map(|(t, l)| sweep(t, l));
    println!(
        "held out: vLLM 0.11.1 batch sweeps (ML.ENERGY v3), median ITL at 8–32 sequences {:.1} % over {n1}, at 128–256 {:.1} % over {n2}; throughput at 8–32 {:.1} % over {n3}, at 128–256 {:.1} % over {n4}",
        itl_light * 100.0,
        itl_heavy * 100.0,
        tput_light * 100.0,
        tput_heavy * 100.0
    );
    assert!(n1 + n2 + n3 + n4 >= 150, "{}", n1 + n2 + n3 + n4);
    assert!(
        [itl_light, itl_heavy, tput_light, tput_heavy]
            .iter()
            .all(|e| *e <= SWEEP_BAR),
        "sweep medians {itl_light:.3} {itl_heavy:.3} {tput_light:.3} {tput_heavy:.3}"
    );
    assert!(throughput.len() + latency.len() >= 25);
    assert!(t <= THROUGHPUT_TARGET, "throughput median error {:.1} %", t * 100.0);
    assert!(l <= LATENCY_TARGET, "latency median error {:.1} %", l * 100.0);
    assert!(goodput.len() >= 30, "{}", goodput.len());
    assert!(g <= GOODPUT_TARGET, "MLPerf goodput median error {:.1} %", g * 100.0);
    assert!(llama3_goodput.len() >= 15, "{}", llama3_goodput.len());
    assert!(
        g3 <= LLAMA3_GOODPUT_BAR,
        "Llama-3.1 goodput median error {:.1} %",
        g3 * 100.0
    );
    // The Llama-3.1 p99s: 22.3 % at the loads passed (24.6 % before prompt attention went at
    // the pace of Blackwell's softmax exponentials, 35.0 % before the GPU's pace), 19.1 % at
    // the model's own goodput (the goodput, limited by the time to first token, leaves the
    // time per token shorter than the runs' at theirs).
    assert!(median(llama3_percentiles) <= 0.25 && median(llama3_own) <= 0.21);
    // The tails at the passed load are not yet within their target (15 %): near its limit the
    // model's step grows more slowly than the measured systems'. Held to today's level.
    assert!(p <= LIMIT_PERCENTILE_BAR, "MLPerf p99 median error {:.1} %", p * 100.0);
    assert!(
        o <= OWN_LIMIT_PERCENTILE_BAR,
        "MLPerf p99 at own goodput {:.1} %",
        o * 100.0
    );
    // Held-out MLPerf Server and Interactive percentile rows (two per run) whose published
    // load the model finds beyond even the top of its capacity's 80 % range. (Cisco's 16 H100
    // were, while read as TP2 at the engine's defaults: 9 % past what the KV cache held; their
    // configuration's TP1 × PP2 layout and knobs bring them within 3 %.)
    assert_eq!(saturated, SATURATED_BAR, "{saturated} published loads found saturated");
    assert!(
        near_capacity <= NEAR_CAPACITY_BAR,
        "{near_capacity} published loads found near capacity"
    );
}

/// Each MLPerf Server and Interactive run at the concurrency it held: by Little's law a
/// replica's sequences in flight are its output tokens/s times its mean time per output token
/// (the run's `-tpot-mean` row), and the model's throughput with that many sequences in a
/// closed loop is compared with the run's. This reads the iteration's level at the batch the
/// run had, apart from the queueing and tails that the goodput and percentiles add.
#[test]
fn mlperf_runs_at_the_concurrency_they_held() {
    let calibrated = gpuplan::estimator::calibration::calibrated_cases();
    let table = table();
    let mut held_out = Vec::new();
    for case in table.case.iter().filter(|c| is_throughput(c) && c.limits().is_some()) {
        let Some(run) = case.id.strip_suffix("-throughput") else {
            continue;
        };
        let twin = format!("{run}-tpot-mean");
        let Some(tpot) = table.case.iter().find(|c| c.id == twin).map(|c| c.measured / 1e3) else {
            continue;
        };
        let Some((cost, mix)) = served(case) else {
            continue;
        };
        let replicas = f64::from(case.gpus / case.replica_gpus());
        let sequences = case.measured / replicas * tpot;
        let model = closed_loop(&cost, &mix, Some(sequences)).output_tokens_per_second * replicas;
        let error = (model - case.measured) / case.measured;
        let calibration = calibrated.contains(case.id.as_str());
        println!(
            "{:<64} {:>6.0} sequences {:>10.1} {:>10.1} {:>+7.1}%  {}",
            case.id,
            sequences,
            case.measured,
            model,
            error * 100.0,
            if calibration { "calibration" } else { "held out" }
        );
        if !calibration {
            held_out.push(error);
        }
    }
    let n = held_out.len();
    let signed = median(held_out.clone());
    let absolute = median(held_out.iter().map(|e| e.abs()).collect());
    println!(
        "held out: MLPerf runs at the concurrency they held, throughput median |error| {:.1} % over {n} (median signed {:+.1} %)",
        absolute * 100.0,
        signed * 100.0
    );
    // Today 5.6 % over 54 held-out runs (median signed +2.3 %).
    assert!(n >= 50, "{n}");
    assert!(absolute <= CONCURRENCY_HELD_BAR, "{absolute:.3}");
}

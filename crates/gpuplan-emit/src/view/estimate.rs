use crate::view::model::parameter_count;
use crate::wire::EstimateJson;
use gpuplan_estimate::serving::{LoadReport, Percentiles};
use gpuplan_model::Bytes;
use std::fmt::Write as _;

fn duration(seconds: f64) -> String {
    if !seconds.is_finite() {
        return "-".to_string();
    }
    if seconds < 1e-3 {
        format!("{:.0} µs", seconds * 1e6)
    } else if seconds < 1.0 {
        format!("{:.1} ms", seconds * 1e3)
    } else if seconds < 120.0 {
        format!("{seconds:.2} s")
    } else if seconds < 2.0 * 3600.0 {
        format!("{:.1} min", seconds / 60.0)
    } else if seconds < 3.0 * 86400.0 {
        format!("{:.1} h", seconds / 3600.0)
    } else {
        format!("{:.1} days", seconds / 86400.0)
    }
}

fn rate(value: f64) -> String {
    if value >= 1e6 {
        format!("{:.2} M", value / 1e6)
    } else if value >= 1e3 {
        format!("{:.1} k", value / 1e3)
    } else {
        format!("{value:.2}")
    }
}

/// The human-readable report of `gpuplan estimate`.
pub fn estimate_report(e: &EstimateJson) -> String {
    let mut text = String::new();
    let w = &e.workload;
    let _ = writeln!(
        text,
        "{} ({} parameters{}) · {} on {} × {}",
        e.model.id,
        parameter_count(e.model.parameters),
        if e.model.active_parameters != e.model.parameters {
            format!(", {} active", parameter_count(e.model.active_parameters))
        } else {
            String::new()
        },
        w.task,
        e.gpus,
        e.gpu.id
    );
    let mut layout = format!("DP {} × TP {} × PP {}", w.layout.dp, w.layout.tp, w.layout.pp);
    if w.layout.cp > 1 {
        layout.push_str(&format!(" × CP {}", w.layout.cp));
    }
    // Experts are split over EP ranks of the data-parallel (and context-parallel) ones.
    if w.layout.ep > 1 {
        layout.push_str(&format!(", EP {}", w.layout.ep));
        if w.layout.ep_overlap {
            layout.push_str(" overlapped");
        }
    }
    if w.layout.zero > 0 {
        layout.push_str(&format!(", ZeRO-{}", w.layout.zero));
    }
    let per_sample = if w.seq > 1 {
        format!(" × {} tokens", w.seq)
    } else {
        String::new()
    };
    let _ = writeln!(
        text,
        "{layout} · {} · batch {}{per_sample}{}{}",
        w.precision,
        w.batch,
        if let Some(image) = &e.image {
            format!(
                " image{} · {} px · {} steps{}",
                if w.batch == 1 { "" } else { "s" },
                image.resolution,
                image.denoising_steps,
                if image.guidance { " with guidance" } else { "" }
            )
        } else if w.task == "inference" && w.output_tokens == 0 {
            // Nothing generated: a forward pass per image (vision) or per sequence (encoders).
            if w.seq > 1 {
                String::new()
            } else {
                format!(" image{}", if w.batch == 1 { "" } else { "s" })
            }
        } else if w.task == "inference" {
            format!(" + {} output", w.output_tokens)
        } else {
            format!(" · micro-batch {}", w.micro_batch)
        },
        if w.task == "inference" {
            String::new()
        } else {
            format!(" · recompute {}", w.checkpointing)
        },
    );

    let m = &e.memory;
    let b = &m.breakdown;
    let _ = writeln!(
        text,
        "\nmemory per GPU ({})",
        band(e.uncertainty.memory, e.uncertainty.memory_interval)
    );
    for (label, bytes) in [
        ("weights", b.weights),
        ("gradients", b.gradients),
        ("optimizer states", b.optimizer),
        ("activations", b.activations),
        ("KV cache", b.kv_cache),
        ("runtime overhead", b.overhead),
    ] {
        if bytes > 0 {
            let _ = writeln!(text, "  {label:<18} {:>12}", Bytes(bytes).to_string());
        }
    }
    let kept = if m.margin > 0.0 {
        format!(" with {:.0} % kept free", m.margin * 100.0)
    } else {
        String::new()
    };
    let verdict = if m.fits {
        format!("fits{kept}, {} to spare", Bytes(m.headroom_bytes.unsigned_abs()))
    } else {
        format!("does NOT fit{kept}: {} short", Bytes(m.headroom_bytes.unsigned_abs()))
    };
    let _ = writeln!(
        text,
        "  {:<18} {:>12} of {} → {verdict}",
        "total",
        Bytes(m.per_gpu_bytes).to_string(),
        Bytes(m.capacity_bytes)
    );
    for fit in &m.nearest_fit {
        let _ = writeln!(text, "  nearest fit: {fit}");
    }
    if b.paged_optimizer > 0 {
        let _ = writeln!(
            text,
            "  {:<18} {:>12}   paged, not in the total: on the GPU while it has room, else on the host",
            "+ optimizer states",
            Bytes(b.paged_optimizer).to_string()
        );
    }

    if let Some(t) = &e.training {
        let _ = writeln!(
            text,
            "\ntraining ({})",
            band(e.uncertainty.speed, e.uncertainty.speed_interval)
        );
        let _ = writeln!(text, "  {:<18} {}", "step time", duration(t.step_seconds));
        if t.tokens_per_second > 0.0 {
            let _ = writeln!(
                text,
                "  {:<18} {} tokens/s ({} per GPU)",
                "throughput",
                rate(t.tokens_per_second),
                rate(t.tokens_per_second / f64::from(e.gpus))
            );
        }
        let _ = writeln!(text, "  {:<18} {} samples/s", "", rate(t.samples_per_second));
        // Hardware FLOPs count the recomputed forward passes the model FLOPs leave out.
        let hfu = if t.hfu > t.mfu * 1.001 {
            format!(" (HFU {:.1} %, recomputation included)", t.hfu * 100.0)
        } else {
            String::new()
        };
        let _ = writeln!(text, "  {:<18} {:.1} %{hfu}", "MFU", t.mfu * 100.0);
        if e.gpus > 1 {
            let _ = writeln!(
                text,
                "  {:<18} {:.0} % (communication {} per step, pipeline bubble {:.1} %)",
                "scaling efficiency",
                t.scaling_efficiency * 100.0,
                duration(t.communication_seconds),
                t.pipeline_bubble * 100.0
            );
        }
        if let (Some(seconds), Some(hours)) = (t.time_seconds, t.gpu_hours) {
            // Time is the inverse of speed: the slow end of the speed interval is the long end.
            let range = e.uncertainty.speed_interval.map_or(String::new(), |[slow, fast]| {
                format!(
                    ", 80 % interval {}–{}",
                    duration(seconds / fast),
                    duration(seconds / slow)
                )
            });
            let _ = writeln!(
                text,
                "  {:<18} {} ({:.0} GPU-hours{range})",
                "time to train",
                duration(seconds),
                hours
            );
        }
    }
    if let Some(i) = &e.inference {
        let batch = if e.serving.is_some() {
            format!(", one static batch of {}", w.batch)
        } else {
            String::new()
        };
        let _ = writeln!(
            text,
            "\ninference ({}{batch})",
            band(e.uncertainty.speed, e.uncertainty.speed_interval)
        );
        if e.image.is_some() {
            let _ = writeln!(
                text,
                "  {:<18} {} per batch of {} ({}-bound denoiser passes)",
                "latency",
                duration(i.request_latency_seconds),
                w.batch,
                i.decode_bound
            );
            let _ = writeln!(text, "  {:<18} {} images/s", "throughput", rate(i.requests_per_second));
            let _ = writeln!(text, "  {:<18} {}", "images at once", i.max_concurrent_sequences);
        } else if w.output_tokens == 0 {
            // A forward pass and no generation (a classifier, a detector, an encoder): its
            // latency and rate, not tokens'.
            let unit = if w.seq > 1 { "sequences" } else { "images" };
            let _ = writeln!(
                text,
                "  {:<18} {} per batch of {}",
                "latency",
                duration(i.request_latency_seconds),
                w.batch
            );
            let _ = writeln!(text, "  {:<18} {} {unit}/s", "throughput", rate(i.requests_per_second));
            let _ = writeln!(
                text,
                "  {:<18} {}",
                format!("{unit} at once"),
                i.max_concurrent_sequences
            );
        } else {
            let _ = writeln!(text, "  {:<18} {}", "time to first token", duration(i.ttft_seconds));
            if i.tpot_seconds > 0.0 {
                let _ = writeln!(
                    text,
                    "  {:<18} {} ({}-bound)",
                    "time per token",
                    duration(i.tpot_seconds),
                    i.decode_bound
                );
                let _ = writeln!(
                    text,
                    "  {:<18} {} tokens/s",
                    "output throughput",
                    rate(i.output_tokens_per_second)
                );
            }
            let _ = writeln!(
                text,
                "  {:<18} {}",
                "request latency",
                duration(i.request_latency_seconds)
            );
            let _ = writeln!(
                text,
                "  {:<18} {} requests/s",
                "throughput",
                rate(i.requests_per_second)
            );
            let _ = writeln!(text, "  {:<18} {}", "max concurrent", i.max_concurrent_sequences);
        }
    }
    if let Some(serving) = &e.serving {
        serving_section(&mut text, serving, w.layout.dp);
    }
    if !e.defaults.is_empty() {
        let _ = writeln!(text, "\ndefaults chosen");
        for default in &e.defaults {
            let _ = writeln!(text, "  - {default}");
        }
    }
    let _ = writeln!(text, "\nassumptions");
    for assumption in &e.assumptions {
        let _ = writeln!(text, "  - {assumption}");
    }
    text
}

fn percentiles(p: &Percentiles) -> String {
    format!(
        "p50 {} · p90 {} · p99 {} (mean {})",
        duration(p.p50),
        duration(p.p90),
        duration(p.p99),
        duration(p.mean)
    )
}

/// One continuous-batching replica of `replicas`: capacity, goodput, and latency at the load.
fn serving_section(text: &mut String, s: &LoadReport, replicas: u32) {
    let _ = writeln!(
        text,
        "\nserving, one replica with continuous batching ({} requests{}, {:.0} in / {:.0} out tokens)",
        s.requests,
        s.requests_scaled
            .as_ref()
            .map(|how| format!(", {how}"))
            .unwrap_or_default(),
        s.mean_input_tokens,
        s.mean_output_tokens
    );
    // `--qps` is one replica's load here and the total in `plan`: with several replicas, say so.
    if replicas > 1 {
        let total = s
            .load_requests_per_second
            .map(|load| format!(": {} requests/s in all at this load", rate(load * f64::from(replicas))))
            .unwrap_or_default();
        let _ = writeln!(
            text,
            "  {:<18} {replicas} on these GPUs, each figure below is one replica's{total}",
            "replicas"
        );
    }
    let _ = writeln!(
        text,
        "  {:<18} {} requests/s, {} output tokens/s at full concurrency ({:.0} sequences)",
        "capacity",
        rate(s.capacity_requests_per_second),
        rate(s.capacity_output_tokens_per_second),
        s.max_concurrent_sequences
    );
    if let Some(range) = s.capacity_interval {
        let _ = writeln!(
            text,
            "  {:<18} {}–{} requests/s: 80 % of held-out MLPerf runs of {} measured {:.2}–{:.2}× the estimate",
            "capacity range",
            rate(s.capacity_requests_per_second * range.low),
            rate(s.capacity_requests_per_second * range.high),
            range.measured_on.describe(),
            range.low,
            range.high,
        );
    }
    if let Some(goodput) = s.goodput_requests_per_second {
        let limit = s
            .goodput_limit
            .map_or("not even a trickle meets the targets".to_string(), |l| {
                format!("bounded by {l}")
            });
        let _ = writeln!(text, "  {:<18} {} requests/s ({limit})", "goodput", rate(goodput));
    }
    if let Some(users) = s.users_within_targets {
        let _ = writeln!(
            text,
            "  {:<18} {users:.0} concurrent users within the targets (closed loop)",
            "users"
        );
    }
    if let Some(closed) = &s.closed_loop {
        let _ = writeln!(
            text,
            "  with {:.0} users in a closed loop: {} requests/s, {} output tokens/s, {:.0} sequences running",
            closed.users,
            rate(closed.requests_per_second),
            rate(closed.output_tokens_per_second),
            closed.sequences
        );
        let _ = writeln!(text, "  {:<18} {}", "time to first token", percentiles(&closed.ttft));
        let _ = writeln!(text, "  {:<18} {}", "time per token", percentiles(&closed.tpot));
    }
    if let Some(load) = s.load_requests_per_second {
        match (s.saturated, &s.ttft, &s.tpot) {
            (Some(saturation), _, _) => {
                let _ = writeln!(
                    text,
                    "  at {} requests/s the replica saturates ({saturation}): queues grow without bound",
                    rate(load)
                );
            }
            (None, Some(ttft), Some(tpot)) => {
                let _ = writeln!(text, "  at {} requests/s (Poisson arrivals):", rate(load));
                let _ = writeln!(text, "  {:<18} {}", "time to first token", percentiles(ttft));
                let _ = writeln!(text, "  {:<18} {}", "time per token", percentiles(tpot));
                if let (Some(n), Some(kv)) = (s.concurrent_sequences, s.kv_cache_utilisation) {
                    let _ = writeln!(
                        text,
                        "  {:<18} {n:.0} sequences, KV cache {:.0} % used",
                        "in flight",
                        kv * 100.0
                    );
                }
            }
            _ => {}
        }
        if let Some(near) = &s.near_capacity {
            let _ = writeln!(
                text,
                "  at {} requests/s the load is {:.0} % above the estimated capacity (bounded by {}), inside the estimate's 80 % range (up to {} requests/s): it may hold, at its limit; no latencies are given this close to it",
                rate(load),
                (near.load_over_capacity - 1.0) * 100.0,
                near.bound,
                rate(near.capacity_high_requests_per_second)
            );
        }
    }
    let _ = writeln!(text, "  {:<18} {}", "scheduler", s.scheduler);
}

/// How far a figure may be off: the 80 % interval of measured / estimated the validation
/// tables give (`80 % of runs −18…+42 %`), else the fixed band (`±25 %`).
fn band(half_width: f64, interval: Option<[f64; 2]>) -> String {
    match interval {
        Some([low, high]) => format!(
            "80 % of measured runs {:+.0}…{:+.0} %",
            (low - 1.0) * 100.0,
            (high - 1.0) * 100.0
        ),
        None => format!("±{:.0} %", half_width * 100.0),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_pick_a_readable_unit() {
        assert_eq!(duration(0.0123), "12.3 ms");
        assert_eq!(duration(3.0 * 3600.0), "3.0 h");
        assert_eq!(duration(10.0 * 86400.0), "10.0 days");
    }
}

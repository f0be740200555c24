use crate::wire::{InfeasibleJson, PlanJson};
use crate::{Money, Table};
use gpuplan_model::Bytes;
use gpuplan_plan::{Batching, OneFewer, OneFewerReading, Percentiles, Serving};
use std::fmt::Write as _;

fn hours(seconds: Option<f64>) -> String {
    match seconds {
        None => "-".to_string(),
        Some(s) if s < 3600.0 => format!("{:.0} min", s / 60.0),
        Some(s) if s < 3.0 * 86400.0 => format!("{:.1} h", s / 3600.0),
        Some(s) => format!("{:.1} d", s / 86400.0),
    }
}

/// The ranked table of `gpuplan plan`.
pub fn plan_table(plan: &PlanJson, serving: bool, money: &Money) -> Table {
    let per_hour = money.per("h");
    let per_month = money.per("month");
    let mut table = Table::new([
        "#",
        "provider",
        "instance",
        "region",
        "GPUs",
        "layout",
        "prec",
        "billing",
        "mem/GPU",
        if serving { "replicas" } else { "time" },
        per_hour.as_str(),
        if serving { per_month.as_str() } else { "total" },
        "",
    ])
    .right_aligned(&[
        "#",
        "mem/GPU",
        "time",
        "replicas",
        per_hour.as_str(),
        "total",
        per_month.as_str(),
    ])
    // What a narrow terminal leaves out first: the explanation below names the winners, and
    // --format csv keeps every column.
    .optional(&["layout", "prec", "mem/GPU", "", "billing"]);
    for (index, r) in plan.recommendations.iter().enumerate() {
        let mut tags = Vec::new();
        if index == plan.cheapest {
            tags.push("cheapest");
        }
        if index == plan.fastest {
            tags.push("fastest");
        }
        if plan.pareto.contains(&index) {
            tags.push("pareto");
        }
        let gpus = match &r.gpu {
            Some(gpu) if r.nodes > 1 => format!("{}× {gpu} ×{}", r.gpus_per_node, r.nodes),
            Some(gpu) => format!("{}× {gpu}", r.gpus_per_node),
            None => "CPU".to_string(),
        };
        let mut layout = format!("{}·{}·{}", r.layout.dp, r.layout.tp, r.layout.pp);
        if r.layout.ep > 1 {
            layout.push_str(&format!(" ep{}", r.layout.ep));
        }
        if r.layout.zero > 0 {
            layout.push_str(&format!(" z{}", r.layout.zero));
        }
        table.push_row([
            (index + 1).to_string(),
            r.provider.clone(),
            r.instance_type.clone(),
            r.region.clone().unwrap_or_else(|| "-".to_string()),
            gpus,
            layout,
            r.precision.clone(),
            // A spot fleet with a floor: both modes, the floor's first.
            match r.serving.as_ref().and_then(|s| s.fleet).and_then(|f| f.floor_billing) {
                Some(floor) => format!("{floor}+{}", r.billing),
                None => r.billing.clone(),
            },
            format!(
                "{:.0}/{:.0} GiB",
                Bytes(r.memory_per_gpu_bytes).as_gib(),
                Bytes(r.memory_capacity_bytes).as_gib()
            ),
            match &r.serving {
                Some(s) if serving => format!("{} ({}–{})", s.replicas, s.min_replicas, s.max_replicas),
                _ => hours(r.time_seconds),
            },
            money.brief(r.hourly_usd),
            r.total_usd.map_or("-".to_string(), |t| money.brief(t)),
            tags.join(" "),
        ]);
    }
    table.footer.extend(money.footnote());
    table
}

/// The explanation under the table: why the best won, what the others cost, what was rejected.
pub fn plan_explanation(plan: &PlanJson, explain: bool, money: &Money) -> String {
    let mut text = String::new();
    if let Some(best) = plan.recommendations.first() {
        let _ = writeln!(text, "\nwhy #1: {}", best.why.join("; "));
        for warning in &best.warnings {
            let _ = writeln!(text, "  warning: {warning}");
        }
        if let Some(serving) = &best.serving {
            let _ = writeln!(text, "{}", serving_summary(serving, money));
        }
    }
    for (index, r) in plan.recommendations.iter().enumerate().skip(1).take(3) {
        let _ = writeln!(text, "  #{}: {}", index + 1, r.why.first().cloned().unwrap_or_default());
    }
    if !plan.rejected_counts.is_empty() {
        let counts: Vec<String> = plan.rejected_counts.iter().map(|(c, n)| format!("{c} {n}")).collect();
        let _ = writeln!(
            text,
            "\n{} candidates evaluated, {} feasible; rejected by {}",
            plan.candidates_evaluated,
            plan.feasible_candidates,
            counts.join(", ")
        );
    }
    let shown = if explain {
        plan.rejected.len()
    } else {
        plan.rejected.len().min(3)
    };
    for rejection in plan.rejected.iter().take(shown) {
        let _ = writeln!(text, "  rejected {}: {}", rejection.candidate, rejection.reason);
    }
    if !explain && plan.rejected.len() > shown {
        let _ = writeln!(text, "  (--explain lists the nearest misses of every constraint)");
    }
    if !plan.defaults.is_empty() {
        let _ = writeln!(text, "\ndefaults: {}", plan.defaults.join("; "));
    }
    if explain {
        let _ = writeln!(text, "\nassumptions");
        for assumption in &plan.assumptions {
            let _ = writeln!(text, "  - {assumption}");
        }
    }
    text
}

/// What `gpuplan plan` prints when nothing is feasible.
pub fn infeasible_report(infeasible: &InfeasibleJson) -> String {
    let mut text = format!(
        "no configuration satisfies the constraints ({} candidates evaluated)\n",
        infeasible.candidates_evaluated
    );
    for (constraint, count) in &infeasible.rejected_counts {
        let _ = writeln!(text, "  {constraint}: {count} rejected");
    }
    if !infeasible.nearest.is_empty() {
        let _ = writeln!(text, "nearest misses:");
        for miss in &infeasible.nearest {
            let _ = writeln!(text, "  {}: {}", miss.candidate, miss.reason);
        }
    }
    if let Some(suggestion) = &infeasible.suggestion {
        let _ = writeln!(text, "hint: {suggestion}");
    }
    text
}

/// Milliseconds of a percentile summary: `p50/p90/p99 45/46/48 ms`.
fn percentiles_ms(p: &Percentiles) -> String {
    format!(
        "p50/p90/p99 {:.0}/{:.0}/{:.0} ms",
        p.p50 * 1e3,
        p.p90 * 1e3,
        p.p99 * 1e3
    )
}

/// What the last instance buys: `one instance fewer (1 instance, 1 replica): 0.45 requests/s each,
/// 1.14× the estimated goodput, beyond the range measured goodputs fall in (0.79–1.12× the
/// estimate, 8 runs in 10)`.
fn one_fewer_line(fewer: &OneFewer) -> String {
    let mut line = format!(
        "one instance fewer ({}, {}): {:.2} requests/s each, {:.2}× the estimated goodput",
        gpuplan_model::counted(fewer.instances, "instance", "instances"),
        gpuplan_model::counted(fewer.replicas, "replica", "replicas"),
        fewer.load_per_replica,
        fewer.load_over_goodput
    );
    let range = fewer.goodput_range.map_or(String::new(), |[low, high]| {
        format!(" the range measured goodputs fall in ({low:.2}–{high:.2}× the estimate, 8 runs in 10)")
    });
    match fewer.reading {
        OneFewerReading::HeadroomOnly => line.push_str(": only the headroom asks for the last instance"),
        OneFewerReading::WithinRange => {
            let _ = write!(line, ", inside{range}: it may hold; a load test decides");
        }
        OneFewerReading::BeyondRange => {
            let _ = write!(line, ", beyond{range}");
        }
        OneFewerReading::Unmeasured => {}
    }
    line
}

/// The replicas an autoscaler moves between, or that there is no range to move over.
fn autoscale_range(min: u32, max: u32) -> String {
    if min == max {
        format!(
            "{} at every load (no autoscaling range)",
            gpuplan_model::counted(max, "replica", "replicas")
        )
    } else {
        format!("autoscale {min}–{max} replicas")
    }
}

/// The serving lines under the best recommendation.
fn serving_summary(serving: &Serving, money: &Money) -> String {
    let latency = &serving.latency;
    let how = match latency.batching {
        Batching::Continuous => "continuous batching".to_string(),
        Batching::Dynamic => format!("dynamic batches of up to {}", serving.batch_per_replica),
        Batching::Offline => "offline, full concurrency".to_string(),
    };
    let plural = |n: u32, one: &str, many: &str| format!("{n} {}", if n == 1 { one } else { many });
    let mut text = format!(
        "  serving: {} of {}, {how}; {:.2} requests/s planned per replica",
        plural(serving.replicas, "replica", "replicas"),
        plural(serving.gpus_per_replica, "GPU", "GPUs"),
        serving.requests_per_second_per_replica
    );
    if let Some(within) = latency.users_within_targets_per_replica {
        let _ = write!(text, " ({within:.0} concurrent users within the targets)");
    } else if let Some(goodput) = latency.goodput_per_replica {
        let _ = write!(text, " (goodput {goodput:.2} within the targets)");
    }
    let mut at_load = Vec::new();
    if let Some(ttft) = &latency.ttft {
        at_load.push(format!("TTFT {}", percentiles_ms(ttft)));
    }
    if let Some(tpot) = &latency.tpot {
        at_load.push(format!("TPOT {}", percentiles_ms(tpot)));
    }
    match (latency.concurrent_sequences, latency.batching) {
        (Some(batch), Batching::Dynamic) => at_load.push(format!("batches of {batch:.0}")),
        (Some(sequences), _) => at_load.push(format!("{sequences:.0} sequences in flight")),
        (None, _) => {}
    }
    if let Some(kv) = latency.kv_cache_utilisation {
        at_load.push(format!("KV cache {:.0} % used", kv * 100.0));
    }
    match (at_load.is_empty(), latency.users_per_replica) {
        (true, _) => {}
        (false, Some(users)) => {
            let _ = write!(
                text,
                "\n  with {users:.0} users per replica ({:.2} requests/s): {}",
                latency.load_per_replica,
                at_load.join(", ")
            );
        }
        (false, None) => {
            let _ = write!(
                text,
                "\n  at {:.2} requests/s per replica: {}",
                latency.load_per_replica,
                at_load.join(", ")
            );
        }
    }
    if let Some(fewer) = &serving.one_fewer {
        let _ = write!(text, "\n  {}", one_fewer_line(fewer));
    }
    let _ = write!(
        text,
        "\n  {}{}{}",
        autoscale_range(serving.min_replicas, serving.max_replicas),
        serving.usd_per_million_output_tokens.map_or(String::new(), |v| format!(
            "; {} per million output tokens",
            money.format(v, 3)
        )),
        serving.usd_per_thousand_requests.map_or(String::new(), |v| format!(
            "; {} per 1,000 requests",
            money.format(v, 4)
        )),
    );
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_range_of_one_replica_count_is_no_autoscaling_range() {
        assert_eq!(autoscale_range(1, 3), "autoscale 1–3 replicas");
        assert_eq!(autoscale_range(1, 1), "1 replica at every load (no autoscaling range)");
        assert_eq!(autoscale_range(4, 4), "4 replicas at every load (no autoscaling range)");
    }

    #[test]
    fn one_instance_fewer_reads_against_the_goodputs_measured_range() {
        let at = |load_over_goodput| OneFewer::new(1, 1, 0.45, load_over_goodput, Some([0.79, 1.12]));
        assert_eq!(
            one_fewer_line(&at(1.26)),
            "one instance fewer (1 instance, 1 replica): 0.45 requests/s each, 1.26× the estimated goodput, \
             beyond the range measured goodputs fall in (0.79–1.12× the estimate, 8 runs in 10)"
        );
        assert!(one_fewer_line(&at(1.05)).ends_with("8 runs in 10): it may hold; a load test decides"));
        assert!(one_fewer_line(&at(0.95)).ends_with("only the headroom asks for the last instance"));
    }
}

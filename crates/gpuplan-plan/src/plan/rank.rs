//! The feasible configurations ranked by the objective, folded across regions, with the
//! Pareto front; or, when none is feasible, the report of what removed what.

use super::*;

pub(super) fn order(
    objective: Objective,
    a: &Recommendation,
    b: &Recommendation,
    best_cost: f64,
    best_time: f64,
) -> std::cmp::Ordering {
    let by_cost = a
        .cost_metric
        .total_cmp(&b.cost_metric)
        .then(a.time_metric.total_cmp(&b.time_metric));
    let by_time = a
        .time_metric
        .total_cmp(&b.time_metric)
        .then(a.cost_metric.total_cmp(&b.cost_metric));
    match objective {
        Objective::Cost => by_cost,
        Objective::Time => by_time,
        Objective::Balanced => {
            let score = |r: &Recommendation| ((r.cost_metric / best_cost) * (r.time_metric / best_time)).sqrt();
            score(a).total_cmp(&score(b)).then(by_cost)
        }
    }
}

/// Provider, instance type, nodes, billing, precision, hourly price and time (as bits).
pub(super) type RegionFoldKey = (String, String, u32, BillingMode, Precision, u64, u64);

/// Candidates that differ only by region (same price, same estimate) become one, whose
/// `why` names the other regions.
pub(super) fn fold_regions(feasible: Vec<Recommendation>) -> Vec<Recommendation> {
    let mut folded: Vec<Recommendation> = Vec::new();
    let mut index: HashMap<RegionFoldKey, (usize, Vec<String>)> = HashMap::new();
    for candidate in feasible {
        let key = (
            candidate.offering.provider.to_string(),
            candidate.offering.instance_type.clone(),
            candidate.nodes,
            candidate.billing,
            candidate.workload.precision,
            candidate.hourly_usd.to_bits(),
            candidate.time_metric.to_bits(),
        );
        match index.get_mut(&key) {
            Some((_, regions)) => regions.extend(candidate.offering.region.clone()),
            None => {
                index.insert(key, (folded.len(), Vec::new()));
                folded.push(candidate);
            }
        }
    }
    for (at, regions) in index.into_values() {
        if !regions.is_empty() {
            let mut regions = regions;
            regions.sort();
            let shown: Vec<&str> = regions.iter().take(4).map(String::as_str).collect();
            let more = if regions.len() > 4 {
                format!(" and {} more", regions.len() - 4)
            } else {
                String::new()
            };
            folded[at].why.push(format!("same price in {}{more}", shown.join(", ")));
        }
    }
    folded
}

/// The winner by `first` (cost or time): of the points within `tolerance` of the best, the
/// best by `second` (the fastest of the near-cheapest, the cheapest of the near-fastest) —
/// unless one on fewer nodes is within the tolerance of it on `second` too. A layout across
/// more nodes adds a fabric to rely on and more machines to fail; it is chosen only when it
/// beats those on fewer nodes by more than the tolerance on one measure or the other.
fn winner_within(
    points: &[(f64, f64)],
    nodes: &[u32],
    tolerance: f64,
    first: impl Fn(&(f64, f64)) -> f64,
    second: impl Fn(&(f64, f64)) -> f64,
) -> usize {
    let best = points.iter().map(&first).fold(f64::INFINITY, f64::min);
    let near: Vec<usize> = (0..points.len())
        .filter(|&i| first(&points[i]) <= best * (1.0 + tolerance))
        .collect();
    let by = |a: &usize, b: &usize| {
        second(&points[*a])
            .total_cmp(&second(&points[*b]))
            .then(first(&points[*a]).total_cmp(&first(&points[*b])))
            .then(a.cmp(b))
    };
    let Some(plain) = near.iter().copied().min_by(by) else {
        return 0;
    };
    near.iter()
        .copied()
        .filter(|&i| nodes[i] < nodes[plain] && second(&points[i]) <= second(&points[plain]) * (1.0 + tolerance))
        .min_by(|a, b| nodes[*a].cmp(&nodes[*b]).then(by(a, b)))
        .unwrap_or(plain)
}

pub(super) fn rank(
    feasible: Vec<Recommendation>,
    mut rejections: Vec<Rejection>,
    counts: BTreeMap<Constraint, usize>,
    evaluated: usize,
    request: &PlanRequest,
) -> Plan {
    let total_feasible = feasible.len();
    let feasible = fold_regions(feasible);
    let best_cost = feasible.iter().map(|r| r.cost_metric).fold(f64::INFINITY, f64::min);
    let best_time = feasible.iter().map(|r| r.time_metric).fold(f64::INFINITY, f64::min);
    let objective = match (
        request.objective,
        request.constraints.deadline_hours,
        request.constraints.budget_usd,
    ) {
        (Objective::Balanced, Some(_), None) => Objective::Cost,
        (Objective::Balanced, None, Some(_)) => Objective::Time,
        (objective, _, _) => objective,
    };
    // Sort positions, then move each recommendation once: they are large.
    let mut positions: Vec<usize> = (0..feasible.len()).collect();
    positions.sort_by(|&a, &b| order(objective, &feasible[a], &feasible[b], best_cost, best_time));
    let mut slots: Vec<Option<Recommendation>> = feasible.into_iter().map(Some).collect();
    let mut feasible: Vec<Recommendation> = positions.iter().filter_map(|&i| slots[i].take()).collect();
    // The winner by cost (time) is the fastest (cheapest) of those within the tolerance of
    // the lowest cost (time): a smaller difference has not been shown to be one.
    let metrics = |feasible: &[Recommendation]| -> Vec<(f64, f64)> {
        feasible.iter().map(|r| (r.cost_metric, r.time_metric)).collect()
    };
    let nodes: Vec<u32> = feasible.iter().map(|r| r.nodes).collect();
    let winner = match objective {
        Objective::Cost => winner_within(&metrics(&feasible), &nodes, request.tolerance, |p| p.0, |p| p.1),
        Objective::Time => winner_within(&metrics(&feasible), &nodes, request.tolerance, |p| p.1, |p| p.0),
        Objective::Balanced => 0,
    };
    let within = if winner > 0 {
        let fewer_nodes = feasible[winner].nodes < feasible[0].nodes;
        let best = feasible.remove(winner);
        feasible.insert(0, best);
        let (measure, other) = if objective == Objective::Cost {
            ("cost", "faster")
        } else {
            ("time", "cheaper")
        };
        if fewer_nodes {
            format!(
                ": within {:.0} % of the lowest {measure} on fewer nodes, which a smaller difference does not outweigh",
                request.tolerance * 100.0
            )
        } else {
            format!(
                ": within {:.0} % of the lowest {measure} and {other} than the rest of those",
                request.tolerance * 100.0
            )
        }
    } else {
        String::new()
    };
    let points = metrics(&feasible);
    let front = pareto_front(&points, request.tolerance);
    // The labels follow the winner's rule: within the tolerance, fewer nodes first.
    let nodes: Vec<u32> = feasible.iter().map(|r| r.nodes).collect();
    let cheapest = winner_within(&points, &nodes, request.tolerance, |p| p.0, |p| p.1);
    let fastest = winner_within(&points, &nodes, request.tolerance, |p| p.1, |p| p.0);

    // Keep the top N, plus the cheapest, the fastest and the front.
    let top = request.top.max(1);
    let mut keep: Vec<usize> = (0..feasible.len().min(top)).collect();
    for index in front.iter().copied().chain([cheapest, fastest]) {
        if !keep.contains(&index) {
            keep.push(index);
        }
    }
    keep.sort_unstable();
    let remap: HashMap<usize, usize> = keep.iter().enumerate().map(|(new, old)| (*old, new)).collect();
    let kept: Vec<Recommendation> = keep.iter().map(|&i| feasible[i].clone()).collect();
    let mut recommendations = kept;
    let pareto: Vec<usize> = front.iter().filter_map(|i| remap.get(i).copied()).collect();

    // Explain the winner against its neighbours.
    if recommendations.len() > 1 {
        let winner = recommendations[0].clone();
        recommendations[0].why.insert(0, format!("best by {objective}{within}"));
        for other in recommendations.iter_mut().skip(1) {
            let cost_ratio = other.cost_metric / winner.cost_metric;
            let speed_ratio = winner.time_metric / other.time_metric;
            other.why.insert(
                0,
                format!(
                    "{:.2}× the cost of the best for {:.2}× its speed",
                    cost_ratio, speed_ratio
                ),
            );
        }
    } else if let Some(only) = recommendations.first_mut() {
        only.why.insert(0, "the only feasible configuration".to_string());
    }

    // Nearest misses: the three closest of each constraint.
    rejections.sort_by(|a, b| {
        a.constraint
            .cmp(&b.constraint)
            .then(a.shortfall.total_cmp(&b.shortfall))
    });
    let mut shown: BTreeMap<Constraint, usize> = BTreeMap::new();
    rejections.retain(|r| {
        let count = shown.entry(r.constraint).or_default();
        *count += 1;
        *count <= 3
    });

    let mut assumptions = vec![
        format!(
            "memory must fit with {:.0} % of each GPU kept free",
            request.constraints.memory_margin * 100.0
        ),
        "zones folded per region: on-demand is the region's price, spot the lowest of its zones".to_string(),
        "each offering billed in its provider's step (second, minute or hour) with its minimum charge; providers that publish neither in whole hours"
            .to_string(),
        format!(
            "differences under {:.0} % in cost or time are no difference: the Pareto front and the cheapest and fastest labels ignore them",
            request.tolerance * 100.0
        ),
    ];
    if request.template.task == Task::Inference {
        assumptions.push(format!(
            "each replica planned at its goodput (the highest load within the latency targets) less {:.0} % headroom; cost is per month of {HOURS_PER_MONTH} h",
            request.constraints.serving.headroom() * 100.0
        ));
        if let Some(mix) = &request.constraints.serving.requests {
            if let Some(how) = &mix.scaling {
                assumptions.push(format!("request lengths from {}, {how}", mix.origin));
            }
        }
    }
    if let Some(TrainingAmount::Tokens(tokens)) = request.amount {
        assumptions.push(format!("{tokens:.3e} training tokens"));
    }
    if let Some(first) = recommendations.first() {
        assumptions.extend(first.estimate.assumptions.iter().cloned());
    }
    Plan {
        recommendations,
        cheapest: remap.get(&cheapest).copied().unwrap_or(0),
        fastest: remap.get(&fastest).copied().unwrap_or(0),
        pareto,
        rejected: rejections,
        rejected_counts: counts,
        evaluated,
        feasible: total_feasible,
        assumptions,
    }
}

/// Where the node bound, not the GPU bound, stops the search from going faster: eight-GPU
/// nodes up to `max_nodes` hold fewer GPUs than `max_gpus` allows.
fn node_bound(constraints: &crate::Constraints) -> String {
    let (nodes, gpus) = (constraints.max_nodes, constraints.max_gpus);
    if u64::from(nodes) * 8 < u64::from(gpus) {
        format!("; or raise {{max_nodes}}: the search stops at {nodes} nodes, fewer than {{max_gpus}} {gpus} allows")
    } else {
        String::new()
    }
}

pub(super) fn infeasible(
    mut rejections: Vec<Rejection>,
    counts: BTreeMap<Constraint, usize>,
    evaluated: usize,
    request: &PlanRequest,
) -> Infeasible {
    rejections.sort_by(|a, b| a.shortfall.total_cmp(&b.shortfall));
    // One suggestion per constraint that removed something, the user's own limits first.
    let mut suggestions = Vec::new();
    for constraint in [
        Constraint::Deadline,
        Constraint::Budget,
        Constraint::HourlyPrice,
        Constraint::Latency,
        Constraint::Memory,
        Constraint::Network,
        Constraint::Size,
    ] {
        let Some(nearest) = rejections
            .iter()
            .find(|r| r.constraint == constraint && r.shortfall.is_finite())
        else {
            continue;
        };
        suggestions.push(match constraint {
            Constraint::Deadline => format!(
                "relax {{deadline}} to {:.0} h (nearest: {}){}",
                nearest.needed.unwrap_or(0.0).ceil(),
                nearest.candidate,
                node_bound(&request.constraints)
            ),
            Constraint::Budget => {
                format!(
                    "raise {{budget}} to ${:.0} (nearest: {})",
                    nearest.needed.unwrap_or(0.0).ceil(),
                    nearest.candidate
                )
            }
            Constraint::HourlyPrice => format!(
                "raise {{max_hourly_price}} to ${:.2} (nearest: {})",
                nearest.needed.unwrap_or(0.0),
                nearest.candidate
            ),
            Constraint::Memory => {
                let quantise = if request.template.task == Task::Inference {
                    "allow int8 or int4 weights ({precision}), "
                } else {
                    ""
                };
                format!(
                    "{quantise}allow more GPUs ({{max_gpus}}) or larger GPUs: the nearest needs {:.0} % more memory",
                    (nearest.shortfall - 1.0) * 100.0
                )
            }
            Constraint::Latency => format!(
                "relax the latency target ({{ttft}}, {{tpot}}) to {:.0} ms (nearest: {})",
                nearest.needed.unwrap_or(0.0) * 1e3,
                nearest.candidate
            ),
            Constraint::Network => "allow single-node configurations or providers with faster networks".to_string(),
            _ => "raise {max_gpus} or {max_nodes}".to_string(),
        });
    }
    if evaluated == 0 {
        suggestions.push(nothing_in_scope(&request.constraints));
    }
    let suggestion = (!suggestions.is_empty()).then(|| gpuplan_model::field::Phrase::new(suggestions.join("; or ")));
    // The nearest misses shown: per constraint (the user's own limits first), a few distinct
    // reasons, since the same shape misses the same way in every region.
    let priority = |c: Constraint| match c {
        Constraint::Host => 5,
        Constraint::Deadline => 0,
        Constraint::Budget | Constraint::HourlyPrice => 1,
        Constraint::Latency => 2,
        Constraint::Memory => 3,
        _ => 4,
    };
    rejections.sort_by(|a, b| {
        priority(a.constraint)
            .cmp(&priority(b.constraint))
            .then(a.shortfall.total_cmp(&b.shortfall))
    });
    let mut seen = std::collections::HashSet::new();
    let mut per_constraint: BTreeMap<Constraint, usize> = BTreeMap::new();
    rejections.retain(|r| {
        let count = per_constraint.entry(r.constraint).or_default();
        if *count >= 3 || !seen.insert((r.constraint, r.reason.clone())) {
            return false;
        }
        *count += 1;
        true
    });
    rejections.truncate(10);
    Infeasible {
        rejected_counts: counts,
        nearest: rejections,
        suggestion,
        evaluated,
    }
}

/// Why nothing was evaluated: no offering in the catalog rents the accelerators in the
/// providers and regions asked for.
fn nothing_in_scope(c: &crate::Constraints) -> String {
    let mut scope = Vec::new();
    if !c.gpus.is_empty() {
        let gpus: Vec<&str> = c.gpus.iter().map(|g| g.as_str()).collect();
        scope.push(gpus.join(", "));
    }
    if !c.providers.is_empty() {
        let providers: Vec<&str> = c.providers.iter().map(|p| p.as_str()).collect();
        scope.push(format!("at {}", providers.join(", ")));
    }
    if !c.regions.is_empty() {
        scope.push(format!("in regions {}", c.regions.join(", ")));
    }
    if c.locations.is_some() {
        scope.push("within the SLA, compliance and country filters".to_string());
        return format!(
            "no priced offering in the catalog rents {}: relax the SLA, compliance or country filter; `gpuplan catalog --provider NAME` shows what each provider publishes",
            scope.join(" ")
        );
    }
    let scope = if scope.is_empty() {
        "the request".to_string()
    } else {
        scope.join(" ")
    };
    format!(
        "no priced offering in the catalog rents {scope}: `gpuplan instances` with the same filters lists what can be rented, and `--catalog` reads a catalog with offerings of your own"
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Two nodes that are no more than 10 % better on either measure lose to one node; two
    /// nodes clearly cheaper, or clearly faster at about the cost, win; under the time
    /// objective the same holds with the measures swapped.
    #[test]
    fn more_nodes_must_beat_fewer_by_more_than_the_tolerance() {
        let (cost, time) = (|p: &(f64, f64)| p.0, |p: &(f64, f64)| p.1);
        // (cost, time) of one node and of two.
        let close = [(100.0, 10.0), (95.0, 9.5)];
        assert_eq!(winner_within(&close, &[1, 2], 0.1, cost, time), 0);
        let cheaper = [(100.0, 10.0), (80.0, 10.0)];
        assert_eq!(winner_within(&cheaper, &[1, 2], 0.1, cost, time), 1);
        let faster_at_the_cost = [(100.0, 10.0), (98.0, 5.0)];
        assert_eq!(winner_within(&faster_at_the_cost, &[1, 2], 0.1, cost, time), 1);
        let slightly_faster = [(100.0, 10.0), (120.0, 9.5)];
        assert_eq!(winner_within(&slightly_faster, &[1, 2], 0.1, time, cost), 0);
        let much_faster = [(100.0, 10.0), (120.0, 5.0)];
        assert_eq!(winner_within(&much_faster, &[1, 2], 0.1, time, cost), 1);
        // On equal nodes the near-cheapest fastest wins, as before.
        assert_eq!(winner_within(&close, &[1, 1], 0.1, cost, time), 1);
    }
}

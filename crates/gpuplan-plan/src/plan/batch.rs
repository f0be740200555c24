//! Batch inference: replicas for a number of requests within a deadline.

use super::*;

/// An offline batch of requests and what one replica processes.
#[derive(Debug, Clone, Copy)]
pub(super) struct BatchShape {
    pub(super) requests: f64,
    /// Requests per second of one replica, at full use (no latency headroom offline).
    pub(super) per_replica: f64,
    pub(super) replicas_per_instance: u32,
    pub(super) gpus_per_replica: u32,
}

/// Offline batch inference: enough replicas to process every request before the deadline
/// (one instance without one), priced for the hours it runs, start-up included.
pub(super) fn evaluate_batch(
    evaluator: &mut Evaluator<'_, impl OfferingSource>,
    candidate: &Candidate<'_>,
    configured: &Configured,
    shape: BatchShape,
) -> Outcomes {
    let mut outcomes = Outcomes::default();
    let Candidate {
        offering,
        stack,
        priced,
        ..
    } = *candidate;
    let request = evaluator.request;
    let c = &request.constraints;
    let per_node = offering.accelerator_count;
    let parameters = configured.estimate.parameters;
    let boot = startup(
        evaluator.source.operations(),
        &request.operational.startup,
        offering,
        1,
        JobWeights {
            parameters: parameters.total,
            trainable: 0,
            precision: configured.workload.precision,
            task: Task::Inference,
        },
    );
    let label = candidate_label(offering, 1, None);
    let replicas = match c.deadline_hours {
        Some(deadline) => {
            let available = deadline * 3600.0 - boot.seconds();
            if available <= 0.0 {
                outcomes.reject(Rejection {
                    candidate: label,
                    constraint: Constraint::Deadline,
                    reason: format!(
                        "{:.0} min of start-up leaves no time before the deadline",
                        boot.seconds() / 60.0
                    ),
                    shortfall: boot.seconds() / (deadline * 3600.0),
                    needed: Some(boot.seconds() / 3600.0),
                });
                return outcomes;
            }
            ((shape.requests / available / shape.per_replica).ceil() as u32).max(1)
        }
        None => shape.replicas_per_instance,
    };
    let instances = replicas.div_ceil(shape.replicas_per_instance);
    let replicas = instances * shape.replicas_per_instance;
    if instances > c.max_nodes || instances * per_node > c.max_gpus {
        outcomes.reject(Rejection {
            candidate: label,
            constraint: Constraint::Size,
            reason: format!("{instances} instances needed to finish in time, over the limits"),
            shortfall: f64::from(instances * per_node) / f64::from(c.max_gpus.max(1)),
            needed: None,
        });
        return outcomes;
    }
    let seconds = boot.seconds() + shape.requests / (f64::from(replicas) * shape.per_replica);
    let warnings: Vec<String> = capacity_warning(evaluator.source, offering, instances * per_node)
        .into_iter()
        .collect();
    for (billing, price, note) in priced {
        let hourly = price * f64::from(instances);
        let total = job_total(
            evaluator.source,
            offering,
            *billing,
            hourly,
            seconds / 3600.0,
            request.operational.utilisation,
        );
        if let (Some(budget), true) = (c.budget_usd, total > c.budget_usd.unwrap_or(f64::INFINITY)) {
            outcomes.reject(Rejection {
                candidate: candidate_label(offering, instances, Some(*billing)),
                constraint: Constraint::Budget,
                reason: format!("${total:.0}, over the ${budget:.0} budget"),
                shortfall: total / budget,
                needed: Some(total),
            });
            continue;
        }
        let mut why: Vec<String> = note.iter().cloned().collect();
        why.push(format!(
            "batch: {:.3e} requests at {:.2} req/s per replica × {replicas} replicas",
            shape.requests, shape.per_replica
        ));
        outcomes.feasible.push(Recommendation {
            offering: offering.clone(),
            billing: *billing,
            nodes: instances,
            gpus: instances * per_node,
            workload: configured.workload.clone(),
            estimate: configured.estimate.clone(),
            hourly_usd: hourly,
            time_seconds: Some(seconds),
            total_usd: Some(total),
            serving: Some(Serving {
                batch_per_replica: configured.workload.batch,
                gpus_per_replica: shape.gpus_per_replica,
                replicas,
                requests_per_second_per_replica: shape.per_replica,
                min_replicas: replicas,
                max_replicas: replicas,
                usd_per_million_output_tokens: None,
                usd_per_thousand_requests: Some(total / shape.requests * 1e3),
                latency: ServingLatency::offline(shape.per_replica),
                disaggregated: None,
                fleet: None,
                scale_to_zero: None,
                one_fewer: None,
                pending_latency: None,
            }),
            cost_metric: total,
            time_metric: seconds,
            why,
            warnings: warnings.clone(),
            startup_seconds: Some(boot.seconds()),
            fabric: None,
            stack,
            expected_interruptions: None,
        });
    }
    outcomes
}

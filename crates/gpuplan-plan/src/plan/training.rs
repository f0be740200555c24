//! Training candidates: a layout per cluster shape, start-up, input pipeline, spot
//! interruptions, and the job's time and cost under each billing mode.

use super::*;

pub(super) fn evaluate_training(
    evaluator: &mut Evaluator<'_, impl OfferingSource>,
    candidate: &Candidate<'_>,
) -> Outcomes {
    let mut outcomes = Outcomes::default();
    let Candidate {
        offering,
        stack,
        precision,
        priced,
    } = *candidate;
    let request = evaluator.request;
    let c = &request.constraints;
    let per_node = offering.accelerator_count;
    for nodes in node_counts(c.max_nodes) {
        let gpus = nodes.saturating_mul(per_node);
        if nodes > c.max_nodes || gpus > c.max_gpus {
            break;
        }
        outcomes.evaluated += priced.len();
        // Labels are written only for candidates that are rejected.
        let label = || candidate_label(offering, nodes, None);
        if nodes > 1 {
            if let Some(rejection) = fabric_rejection(offering, &label()) {
                // The fabric is the same for every larger cluster of this shape.
                outcomes.reject(rejection);
                break;
            }
        }
        let configured = match evaluator.configured_over_experts(offering, gpus, per_node, precision) {
            Ok(Some(configured)) => configured,
            Ok(None) => {
                let why = if request.template.optimizer_in_backward {
                    format!("the batch is not one micro-batch per replica on {gpus} GPUs without pipeline stages")
                } else {
                    format!("the batch cannot be spread over {gpus} GPUs")
                };
                outcomes.reject(Rejection::outright(label(), Constraint::Layout, why));
                continue;
            }
            Err(error) => {
                outcomes.reject(Rejection::outright(label(), Constraint::Layout, error.to_string()));
                continue;
            }
        };
        if let Some(rejection) = memory_rejection(label, &configured, c.memory_margin) {
            outcomes.reject(rejection);
            // More nodes may fit; keep going.
            continue;
        }
        let Some(training) = configured.estimate.training else {
            continue;
        };
        let ops = &request.operational;
        let boot = startup(
            evaluator.source.operations(),
            &ops.startup,
            offering,
            nodes,
            configured.job_weights(),
        );
        let (training, input_note) = match fed_training(evaluator.source, ops, offering, nodes, &boot, training) {
            Ok(fed) => fed,
            Err(reason) => {
                outcomes.reject(Rejection::outright(label(), Constraint::Stack, reason));
                continue;
            }
        };
        let mut estimate = configured.estimate.clone();
        estimate.training = Some(training);
        let work_seconds = training.time_seconds;
        if let Some(work) = work_seconds.filter(|work| nodes > 1 && *work < boot.seconds()) {
            outcomes.reject(Rejection {
                candidate: label(),
                constraint: Constraint::Size,
                reason: format!(
                    "{nodes} nodes would compute for {:.0} s after {:.0} s of start-up: scaling out buys nothing",
                    work,
                    boot.seconds()
                ),
                shortfall: boot.seconds() / work.max(1e-9),
                needed: None,
            });
            continue;
        }
        let mut warnings = host_warnings(offering, &configured, nodes);
        let staged = configured.job_weights().downloaded_bytes() + ops.startup.dataset_bytes.unwrap_or(0.0);
        warnings.extend(super::checks::disk_warning(offering, staged));
        warnings.extend(capacity_warning(evaluator.source, offering, gpus));
        for (billing, price, note) in priced {
            let hourly = price * f64::from(nodes);
            let placement = Placement {
                offering,
                billing: *billing,
                nodes,
                work_seconds,
                task: configured.workload.task,
            };
            let run = job_run(evaluator.source, ops, placement, &boot);
            if run.wall_seconds.is_some_and(|s| !s.is_finite()) {
                outcomes.reject(Rejection::outright(
                    label(),
                    Constraint::Layout,
                    "the estimate gives no finite time for this amount of work".to_string(),
                ));
                continue;
            }
            let hours = run.wall_seconds.map(|s| s / 3600.0);
            let total = hours.map(|h| job_total(evaluator.source, offering, *billing, hourly, h, ops.utilisation));
            let label = || candidate_label(offering, nodes, Some(*billing));
            if let (Some(deadline), Some(h)) = (c.deadline_hours, hours) {
                if h > deadline {
                    outcomes.reject(Rejection {
                        candidate: label(),
                        constraint: Constraint::Deadline,
                        reason: format!("{h:.1} h, over the {deadline} h deadline"),
                        shortfall: h / deadline,
                        needed: Some(h),
                    });
                    continue;
                }
            }
            if let (Some(budget), Some(total)) = (c.budget_usd, total) {
                if total > budget {
                    outcomes.reject(Rejection {
                        candidate: label(),
                        constraint: Constraint::Budget,
                        reason: format!("${total:.0}, over the ${budget:.0} budget"),
                        shortfall: total / budget,
                        needed: Some(total),
                    });
                    continue;
                }
            }
            // Without an amount, rank by price per token processed (spot inflated by the
            // expected interruptions of a reference-length job).
            let per_token =
                hourly * run.slowdown / (training.tokens_per_second.max(training.samples_per_second) * 3600.0);
            let mut why = Vec::new();
            if let Some(note) = note {
                why.push(note.clone());
            }
            why.extend(run.note.clone());
            why.extend(input_note.clone());
            if let Some(term) = term_hours(*billing) {
                match ops.utilisation {
                    Some(utilisation) => why.push(format!(
                        "{billing}: the job's hours at the reserved rate over {:.0} % use of the term",
                        utilisation * 100.0
                    )),
                    None if hours.is_some_and(|h| h < term) => why.push(format!(
                        "a {billing} commitment bills {term:.0} h whatever the job uses (--utilisation shares it)"
                    )),
                    None => {}
                }
            }
            if nodes > 1 {
                let fabric = offering.node_fabric();
                why.push(format!(
                    "{nodes} nodes over {} ({:.0} Gbps), {:.0} % scaling efficiency",
                    fabric.kind,
                    offering.node_bandwidth_gbps().0,
                    training.scaling_efficiency * 100.0
                ));
            }
            warnings.dedup();
            outcomes.feasible.push(Recommendation {
                offering: offering.clone(),
                billing: *billing,
                nodes,
                gpus,
                workload: configured.workload.clone(),
                estimate: estimate.clone(),
                hourly_usd: hourly,
                time_seconds: run.wall_seconds,
                total_usd: total,
                serving: None,
                cost_metric: total.unwrap_or(per_token),
                time_metric: run.wall_seconds.unwrap_or(training.step_seconds * run.slowdown),
                why,
                warnings: warnings.clone(),
                startup_seconds: Some(boot.seconds()),
                fabric: (nodes > 1).then(|| offering.node_fabric()),
                stack,
                expected_interruptions: run.interruptions,
            });
        }
    }
    outcomes
}

/// Training as fast as the host can feed it: a vision job whose input pipeline decodes (or
/// reads) fewer images per second than the GPUs would consume runs at the pipeline's rate,
/// and says so. `Err`: the pipeline cannot run on this offering.
pub(super) fn fed_training(
    source: &impl OfferingSource,
    ops: &Operational,
    offering: &Offering,
    nodes: u32,
    boot: &Startup,
    training: TrainingEstimate,
) -> Result<(TrainingEstimate, Option<String>), String> {
    let bound = input_bound(source.operations(), &ops.input, offering, nodes, boot.storage_read_gbps)?;
    match bound {
        Some(bound) if bound.images_per_second < training.samples_per_second => {
            let slowdown = training.samples_per_second / bound.images_per_second;
            let note = format!(
                "input-bound: {} feeds {:.0} images/s, the GPUs could take {:.0}",
                bound.what, bound.images_per_second, training.samples_per_second
            );
            Ok((training.slowed_by(slowdown), Some(note)))
        }
        _ => Ok((training, None)),
    }
}

/// A training job's wall time under one billing mode.
pub(super) struct JobRun {
    /// Start-up, work, checkpoints and (spot) interruptions; `None` without an amount.
    pub(super) wall_seconds: Option<f64>,
    /// Wall time over uninterrupted wall time (spot > 1).
    pub(super) slowdown: f64,
    pub(super) interruptions: Option<f64>,
    pub(super) note: Option<String>,
}

/// Spot interruptions per node-hour for `offering`'s provider: the user's, the catalog's, or
/// the fallback; with where it came from.
pub(super) fn interruption_rate(source: &impl OfferingSource, rate: Option<f64>, offering: &Offering) -> (f64, String) {
    if let Some(rate) = rate {
        return (rate, "--interruption-rate".to_string());
    }
    match source
        .operations()
        .interruption_of(&offering.provider, &offering.instance_type)
    {
        Some(published) => (
            published.per_hour,
            format!(
                "{}'s {}{}",
                offering.provider.display_name(),
                published
                    .instances
                    .as_deref()
                    .map_or("default".to_string(), |prefix| format!("rate for {prefix}*")),
                published.band.as_deref().map(|b| format!(", {b}")).unwrap_or_default()
            ),
        ),
        None => (
            FALLBACK_INTERRUPTIONS_PER_HOUR,
            "no published rate; assumed".to_string(),
        ),
    }
}

/// `nodes` instances of an offering under one billing mode, doing `work_seconds` of `task`.
pub(super) struct Placement<'a> {
    pub(super) offering: &'a Offering,
    pub(super) billing: BillingMode,
    pub(super) nodes: u32,
    pub(super) work_seconds: Option<f64>,
    pub(super) task: Task,
}

pub(super) fn job_run(
    source: &impl OfferingSource,
    ops: &crate::request::Operational,
    placement: Placement<'_>,
    boot: &Startup,
) -> JobRun {
    let Placement {
        offering,
        billing,
        nodes,
        work_seconds,
        task,
    } = placement;
    if billing != BillingMode::Spot {
        return JobRun {
            wall_seconds: work_seconds.map(|work| boot.wall_seconds(work, task)),
            slowdown: 1.0,
            interruptions: None,
            note: None,
        };
    }
    // Any node's interruption stops a synchronous job.
    let (per_node, origin) = interruption_rate(source, ops.interruption_rate, offering);
    let rate = per_node * f64::from(nodes);
    let spot_job = |work_hours: f64| SpotJob {
        work_hours,
        interruption_rate: rate,
        checkpoint_interval_hours: None,
        checkpoint_write_hours: boot.checkpoint_write_seconds / 3600.0,
        restart_hours: (boot.provision_seconds + boot.reload_seconds) / 3600.0,
        spot_usd_per_hour: 1.0,
        on_demand_usd_per_hour: None,
    };
    let reference = expected(&spot_job(REFERENCE_SPOT_WORK_HOURS)).ok();
    let slowdown = reference.map_or(1.0, |e| e.expected_wall_hours / REFERENCE_SPOT_WORK_HOURS);
    let estimate = work_seconds.and_then(|work| expected(&spot_job(work / 3600.0)).ok());
    let note = format!(
        "spot: {per_node:.3} interruptions per node-hour ({origin}); checkpoints every {:.1} h (Young's optimum), each restart {:.0} min",
        estimate.or(reference).map_or(0.0, |e| e.checkpoint_interval_hours),
        (boot.provision_seconds + boot.reload_seconds) / 60.0
    );
    JobRun {
        wall_seconds: estimate.map(|e| e.expected_wall_hours * 3600.0 + boot.seconds()),
        slowdown,
        interruptions: estimate.map(|e| e.expected_interruptions),
        note: Some(note),
    }
}

/// Expert-parallel degrees worth trying for a mixture of experts on `gpus`: none, and the
/// powers of two from a node's worth up to the experts a layer has (each GPU then holds whole
/// experts of its own), where they divide the experts and fit in the cluster.
fn expert_parallel_degrees(experts: u64, gpus: u32, per_node: u32) -> Vec<u32> {
    let mut degrees = vec![1];
    let mut ep = per_node.max(2);
    while u64::from(ep) <= experts && ep <= gpus {
        if experts % u64::from(ep) == 0 {
            degrees.push(ep);
        }
        ep *= 2;
    }
    degrees
}

impl<S: OfferingSource> Evaluator<'_, S> {
    /// The configuration of `gpus` for the request, over the expert-parallel degrees worth
    /// trying when the model is a mixture of experts and the request left the degree open:
    /// the fastest that fits, else the one needing the least memory.
    fn configured_over_experts(
        &mut self,
        offering: &Offering,
        gpus: u32,
        per_node: u32,
        precision: Precision,
    ) -> Result<Option<Configured>, EstimateError> {
        let experts = self
            .request
            .model
            .transformer()
            .and_then(|t| t.moe)
            .map(|moe| moe.experts);
        let degrees = match experts {
            Some(experts) if self.request.template.ep == 1 => expert_parallel_degrees(experts, gpus, per_node),
            _ => vec![self.request.template.ep],
        };
        let margin = self.request.constraints.memory_margin;
        let mut best: Option<Configured> = None;
        let mut first = None;
        for ep in degrees {
            match self.configured(offering, gpus, per_node, precision, None, ep) {
                Ok(Some(configured)) => {
                    if best
                        .as_ref()
                        .is_none_or(|b| crate::configure::better(&configured.estimate, &b.estimate, margin))
                    {
                        best = Some(configured);
                    }
                }
                Ok(None) => {}
                Err(error) => {
                    first.get_or_insert(error);
                }
            }
        }
        match (best, first) {
            (Some(best), _) => Ok(Some(best)),
            (None, Some(error)) => Err(error),
            (None, None) => Ok(None),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn expert_parallel_degrees_run_from_a_node_to_the_experts() {
        assert_eq!(expert_parallel_degrees(256, 2048, 8), vec![1, 8, 16, 32, 64, 128, 256]);
        assert_eq!(expert_parallel_degrees(8, 16, 8), vec![1, 8]);
        assert_eq!(expert_parallel_degrees(128, 4, 4), vec![1, 4]);
        assert_eq!(expert_parallel_degrees(60, 64, 8), vec![1]);
        assert_eq!(expert_parallel_degrees(8, 1, 1), vec![1]);
    }
}

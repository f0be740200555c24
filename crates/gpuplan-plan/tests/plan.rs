//! The planner against a brute-force oracle on small random catalogs, and its explanations.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use gpuplan_catalog::Catalog;
use gpuplan_estimate::{Cluster, TrainingAmount};
use gpuplan_model::{
    Accelerator, AcceleratorId, BillingGranularity, BillingMode, Bytes, CommitmentTerm, Date, Engine, Offering,
    Operations, Optimizer, Precision, ProviderId, ReservedDiscount, Task, UsdPerHour,
};
use gpuplan_plan::{
    Constraint, Constraints, Objective, OfferingSource, Operational, PlanError, PlanRequest, StartupOverrides,
    WorkloadTemplate, configure, plan, startup,
};
use proptest::prelude::*;
use std::sync::OnceLock;

fn catalog() -> &'static Catalog {
    static CATALOG: OnceLock<Catalog> = OnceLock::new();
    CATALOG.get_or_init(|| Catalog::embedded().unwrap())
}

/// A hand-made offering source.
#[derive(Debug)]
struct SmallCatalog {
    offerings: Vec<Offering>,
}

impl OfferingSource for SmallCatalog {
    fn offerings(&self) -> &[Offering] {
        &self.offerings
    }
    fn accelerator(&self, id: &AcceleratorId) -> Option<&Accelerator> {
        catalog().accelerators().get(id.as_str())
    }
    fn reserved_discount(&self, _: &ProviderId, _: CommitmentTerm) -> Option<&ReservedDiscount> {
        None
    }
}

const GPUS: [&str; 4] = ["T4", "A10G", "L4", "A100-SXM4-80GB"];

fn offering(index: usize, gpu: usize, count: u32, price: f64, spot: Option<f64>) -> Offering {
    Offering {
        provider: ProviderId::new("test"),
        instance_type: format!("type-{index}"),
        region: Some("r1".to_string()),
        zone: None,
        accelerator: Some(AcceleratorId::new(GPUS[gpu])),
        accelerator_count: count,
        accelerator_memory: Some(catalog().accelerators().get(GPUS[gpu]).unwrap().memory * count),
        vcpus: 8.0 * f64::from(count),
        memory: Bytes::from_gib(64.0 * f64::from(count)),
        local_disk: None,
        network: Some(gpuplan_model::GigabitsPerSecond(400.0)),
        gpu_interconnect: None,
        node_network: Some(gpuplan_model::NodeNetwork::Infiniband),
        on_demand: Some(UsdPerHour(price)),
        spot: spot.map(UsdPerHour),
        billing_granularity: Some(BillingGranularity::Second),
        source: "test".to_string(),
        as_of: "2026-11-22".parse::<Date>().unwrap(),
        notes: None,
        fabric: None,
        native: None,
        list_on_demand: None,
        list_spot: None,
        price_flags: Vec::new(),
    }
}

fn template() -> WorkloadTemplate {
    WorkloadTemplate {
        task: Task::Finetune,
        precision: Precision::Fp16,
        batch: Some(64),
        micro_batch: None,
        seq: 1024,
        output_tokens: 0,
        tp: None,
        pp: None,
        cp: 1,
        ep: 1,
        vp: None,
        attention_dp: false,
        ep_overlap: false,
        zero: None,
        checkpointing: None,
        optimizer: Optimizer::AdamW,
        optimizer_in_backward: false,
        lora_rank: 0,
        flash_attention: false,
        engine: Engine::Pytorch,
        framework: None,
        engine_settings: gpuplan_model::EngineSettings::default(),
        weight_kernel: None,
        kv_cache: gpuplan_model::KvCacheDtype::Auto,
        lora_targets: gpuplan_model::LoraTargets::AllLinear,
        offload: gpuplan_model::Offload::NONE,
        packing: gpuplan_model::SequencePacking::Packed,
        compiled: false,
        image: Default::default(),
    }
}

fn request(constraints: Constraints, objective: Objective) -> PlanRequest<'static> {
    PlanRequest {
        model: catalog().models().get("gpt2-xl").unwrap(),
        template: template(),
        precisions: vec![Precision::Fp16],
        amount: Some(TrainingAmount::Tokens(2e9)),
        constraints,
        objective,
        top: 100,
        // The exact front: the oracle below knows no tolerance.
        tolerance: 0.0,
        // Spot without interruptions keeps the oracle's arithmetic plain; the spot model has
        // its own tests.
        operational: Operational {
            interruption_rate: Some(0.0),
            ..Operational::default()
        },
        cancel: Default::default(),
    }
}

/// The oracle: every offering × node count × billing mode, configured and checked directly.
fn oracle(source: &SmallCatalog, request: &PlanRequest) -> Vec<(String, u32, BillingMode, f64, f64)> {
    let mut feasible = Vec::new();
    for offering in &source.offerings {
        let accelerator = source.accelerator(offering.accelerator.as_ref().unwrap()).unwrap();
        for nodes in [1u32, 2, 4, 8, 16, 32, 64, 128] {
            let gpus = nodes * offering.accelerator_count;
            if nodes > request.constraints.max_nodes || gpus > request.constraints.max_gpus {
                break;
            }
            let cluster = Cluster::new(
                accelerator,
                gpus,
                offering.accelerator_count,
                None,
                offering.network.map(|n| n.0),
            );
            let Ok(Some(configured)) = configure(
                request.model,
                accelerator,
                &request.template,
                cluster,
                request.amount,
                request.constraints.memory_margin,
            ) else {
                continue;
            };
            let memory = &configured.estimate.memory;
            if memory.per_gpu.as_u64() as f64
                > memory.capacity.as_u64() as f64 * (1.0 - request.constraints.memory_margin)
            {
                continue;
            }
            let work = configured.estimate.training.unwrap().time_seconds.unwrap();
            let boot = startup(
                &Operations::default(),
                &StartupOverrides::default(),
                offering,
                nodes,
                configured.job_weights(),
            );
            // Scaling out a job shorter than its start-up is refused.
            if nodes > 1 && work < boot.seconds() {
                continue;
            }
            for (billing, price) in [
                (BillingMode::OnDemand, offering.on_demand),
                (BillingMode::Spot, offering.spot),
            ] {
                let Some(price) = price else { continue };
                if !request.constraints.billing.contains(&billing) {
                    continue;
                }
                let seconds = match billing {
                    BillingMode::Spot => work + boot.seconds(),
                    _ => boot.wall_seconds(work, configured.workload.task),
                };
                if request.constraints.deadline_hours.is_some_and(|d| seconds / 3600.0 > d) {
                    continue;
                }
                let billed = (seconds.ceil().max(60.0)) / 3600.0;
                let total = price.0 * f64::from(nodes) * billed;
                if request.constraints.budget_usd.is_some_and(|b| total > b) {
                    continue;
                }
                feasible.push((offering.instance_type.clone(), nodes, billing, total, seconds));
            }
        }
    }
    feasible
}

fn arbitrary_catalog() -> impl Strategy<Value = SmallCatalog> {
    proptest::collection::vec(
        (
            0usize..4,
            prop_oneof![Just(1u32), Just(2), Just(4), Just(8)],
            0.2f64..40.0,
            any::<bool>(),
        ),
        1..6,
    )
    .prop_map(|rows| SmallCatalog {
        offerings: rows
            .into_iter()
            .enumerate()
            .map(|(i, (gpu, count, price, spot))| {
                offering(i, gpu, count, price * f64::from(count), spot.then_some(price * 0.4))
            })
            .collect(),
    })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]

    #[test]
    fn the_plan_agrees_with_the_oracle(
        source in arbitrary_catalog(),
        deadline in prop_oneof![Just(None), (1.0f64..200.0).prop_map(Some)],
        spot in any::<bool>(),
        objective in prop_oneof![Just(Objective::Cost), Just(Objective::Time)],
    ) {
        let mut billing = vec![BillingMode::OnDemand];
        if spot {
            billing.push(BillingMode::Spot);
        }
        let request = request(Constraints { deadline_hours: deadline, billing, max_gpus: 64, ..Constraints::default() }, objective);
        let expected = oracle(&source, &request);
        match plan(&source, &request) {
            Err(PlanError::Infeasible(_)) => prop_assert!(expected.is_empty(), "the oracle found {expected:?}"),
            Err(error) => prop_assert!(false, "{error}"),
            Ok(plan) => {
                prop_assert!(!expected.is_empty());
                let best = &plan.recommendations[0];
                // Never infeasible.
                prop_assert!(best.estimate.memory.per_gpu.as_u64() as f64 <= best.estimate.memory.capacity.as_u64() as f64 * 0.9 + 1.0);
                if let Some(deadline) = deadline {
                    prop_assert!(best.time_seconds.unwrap() / 3600.0 <= deadline);
                }
                // Optimal for the objective.
                let best_cost = expected.iter().map(|e| e.3).fold(f64::INFINITY, f64::min);
                let best_time = expected.iter().map(|e| e.4).fold(f64::INFINITY, f64::min);
                match objective {
                    Objective::Cost => prop_assert!((plan.recommendations[plan.cheapest].total_usd.unwrap() - best_cost).abs() <= 1e-9 * best_cost),
                    _ => prop_assert!((plan.recommendations[plan.fastest].time_seconds.unwrap() - best_time).abs() <= 1e-9 * best_time),
                }
                let winner = if objective == Objective::Cost { best.total_usd.unwrap() } else { best.time_seconds.unwrap() };
                let optimum = if objective == Objective::Cost { best_cost } else { best_time };
                prop_assert!((winner - optimum).abs() <= 1e-9 * optimum);
                // The Pareto front is exactly the non-dominated feasible points.
                // Spot times go through hours and back: compare to a relative 1e-12.
                let less = |a: f64, b: f64| a < b * (1.0 - 1e-12);
                let dominated = |c: f64, t: f64| {
                    expected.iter().any(|e| !less(c, e.3) && !less(t, e.4) && (less(e.3, c) || less(e.4, t)))
                };
                let key = |c: f64, t: f64| ((c * 1e6).round() as i64, (t * 1e3).round() as i64);
                let front: Vec<(f64, f64)> = plan.pareto.iter().map(|&i| {
                    let r = &plan.recommendations[i];
                    (r.total_usd.unwrap(), r.time_seconds.unwrap())
                }).collect();
                for (c, t) in &front {
                    prop_assert!(!dominated(*c, *t), "({c}, {t}) is dominated");
                }
                let mut oracle_front: Vec<(i64, i64)> = expected.iter().filter(|e| !dominated(e.3, e.4)).map(|e| key(e.3, e.4)).collect();
                oracle_front.sort_unstable();
                oracle_front.dedup();
                let mut plan_front: Vec<(i64, i64)> = front.iter().map(|(c, t)| key(*c, *t)).collect();
                plan_front.sort_unstable();
                plan_front.dedup();
                prop_assert_eq!(plan_front, oracle_front);
            }
        }
    }
}

#[test]
fn memory_rejections_say_how_much_is_missing() {
    let source = SmallCatalog {
        offerings: vec![offering(0, 0, 1, 0.5, None)],
    };
    let mut request = request(Constraints::default(), Objective::Cost);
    request.model = catalog().models().get("llama-2-70b").unwrap();
    let Err(PlanError::Infeasible(infeasible)) = plan(&source, &request) else {
        panic!("a 70B model cannot fit a T4")
    };
    assert!(infeasible.rejected_counts.contains_key(&Constraint::Memory));
    let reason = &infeasible.nearest[0].reason;
    assert!(
        reason.contains("per GPU needed") && reason.contains("available"),
        "{reason}"
    );
    let suggestion = infeasible
        .suggestion
        .as_ref()
        .map(|s| s.render(gpuplan_model::field::Naming::Flags));
    assert!(
        suggestion.as_deref().unwrap_or_default().contains("more memory"),
        "{suggestion:?}"
    );
}

#[test]
fn an_unmeetable_deadline_suggests_the_nearest() {
    let source = SmallCatalog {
        offerings: vec![offering(0, 3, 8, 30.0, None)],
    };
    let request = request(
        Constraints {
            deadline_hours: Some(0.01),
            max_gpus: 8,
            ..Constraints::default()
        },
        Objective::Cost,
    );
    let Err(PlanError::Infeasible(infeasible)) = plan(&source, &request) else {
        panic!("0.6 minutes is too short")
    };
    let suggestion = infeasible
        .suggestion
        .unwrap()
        .render(gpuplan_model::field::Naming::Flags);
    assert!(suggestion.starts_with("relax --deadline to"), "{suggestion}");
}

#[test]
fn spot_is_priced_with_its_interruptions() {
    let source = SmallCatalog {
        offerings: vec![offering(0, 3, 8, 30.0, Some(10.0))],
    };
    let mut request = request(
        Constraints {
            billing: vec![BillingMode::OnDemand, BillingMode::Spot],
            max_gpus: 8,
            ..Constraints::default()
        },
        Objective::Cost,
    );
    request.operational.interruption_rate = Some(0.2);
    let plan = plan(&source, &request).unwrap();
    let spot = plan
        .recommendations
        .iter()
        .find(|r| r.billing == BillingMode::Spot)
        .unwrap();
    let on_demand = plan
        .recommendations
        .iter()
        .find(|r| r.billing == BillingMode::OnDemand)
        .unwrap();
    assert!(
        spot.why
            .iter()
            .any(|w| w.starts_with("spot: 0.200 interruptions per node-hour")),
        "{:?}",
        spot.why
    );
    // Interruptions cost restarts and lost work: the spot run takes longer.
    assert!(spot.expected_interruptions.unwrap() > 0.0);
    assert!(spot.time_seconds.unwrap() > on_demand.time_seconds.unwrap());
}

/// A serving request for an 8B model at `qps`, with latency targets.
fn serving_request(qps: f64) -> PlanRequest<'static> {
    let mut template = template();
    template.task = Task::Inference;
    template.engine = Engine::Vllm;
    template.batch = None;
    template.seq = 512;
    template.output_tokens = 128;
    template.flash_attention = true;
    PlanRequest {
        // Needs two GPUs or more of 16–24 GB, one of 80 GB: the replica size depends on the
        // instance's GPUs.
        model: catalog().models().get("llama-3.1-8b").unwrap(),
        template,
        precisions: vec![Precision::Fp16],
        amount: None,
        constraints: Constraints {
            serving: gpuplan_plan::ServingTargets {
                qps: Some(qps),
                ttft: Some(gpuplan_model::LatencyTarget::at_default_percentile(1.0).unwrap()),
                tpot: Some(gpuplan_model::LatencyTarget::at_default_percentile(0.05).unwrap()),
                ..Default::default()
            },
            ..Constraints::default()
        },
        objective: Objective::Cost,
        top: 100,
        tolerance: 0.0,
        operational: Operational::default(),
        cancel: Default::default(),
    }
}

/// What a serving recommendation says of one offering, to compare across plans.
fn serving_answer(plan: &gpuplan_plan::Plan, instance_type: &str) -> Option<String> {
    plan.recommendations
        .iter()
        .find(|r| r.offering.instance_type == instance_type && r.billing == BillingMode::OnDemand)
        .map(|r| {
            let s = r.serving.as_ref().unwrap();
            format!(
                "{} instances, {} × {} GPUs, {:.6} req/s a replica, {:?}",
                r.nodes, s.replicas, s.gpus_per_replica, s.requests_per_second_per_replica, s.latency
            )
        })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]

    /// Replica sizes and latencies are worked out once per instance shape and reused: an
    /// offering's serving answer must not depend on the other offerings planned beside it.
    #[test]
    fn a_serving_answer_does_not_depend_on_the_other_offerings(
        source in arbitrary_catalog(),
        qps in 1.0f64..60.0,
    ) {
        let request = serving_request(qps);
        let Ok(together) = plan(&source, &request) else {
            return Ok(());
        };
        prop_assert!(serving_answer(&together, &together.recommendations[0].offering.instance_type).is_some());
        // Every configuration kept has its latency percentiles, worked out once ranked.
        for kept in &together.recommendations {
            let latency = kept.serving.as_ref().unwrap().latency;
            prop_assert!(latency.ttft.is_some() && latency.tpot.is_some(), "{latency:?}");
        }
        for offering in &source.offerings {
            let alone = SmallCatalog { offerings: vec![offering.clone()] };
            let by_itself = plan(&alone, &request).ok().and_then(|p| serving_answer(&p, &offering.instance_type));
            prop_assert_eq!(serving_answer(&together, &offering.instance_type), by_itself);
        }
    }
}

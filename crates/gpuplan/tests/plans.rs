//! Planning scenarios that read like the advice in the field, on the built-in catalog.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use gpuplan::model::{BillingMode, LatencyTarget, Task};
use gpuplan::planner::ServingTargets;
use gpuplan::{Catalog, ModelSource, PlanAnswer, PlanQuery, TabularQuery, plan_tabular_workload, plan_workload};

use crate::catalog;

fn query(model: &str, task: Task) -> PlanQuery {
    PlanQuery::new(ModelSource::BuiltIn(model.to_string()), task)
}

fn feasible(query: &PlanQuery) -> PlanAnswer {
    match plan_workload(catalog(), query).unwrap() {
        Ok(answer) => answer,
        Err(infeasible) => panic!("infeasible: {:?} {:?}", infeasible.suggestion, infeasible.nearest),
    }
}

#[test]
fn llama_2_70b_full_fine_tuning_is_never_placed_on_a_single_24_gb_gpu() {
    let mut q = query("llama-2-70b", Task::Finetune);
    q.tokens = Some(1e9);
    q.seq = Some(2048);
    let answer = feasible(&q);
    for r in &answer.plan.recommendations {
        let per_gpu = r.offering.accelerator_memory.unwrap().as_gib() / f64::from(r.offering.accelerator_count);
        assert!(!(r.gpus == 1 && per_gpu <= 24.5), "{}", r.label());
        assert!(
            r.gpus >= 8,
            "{} has only {} GPUs for 70B × 16 bytes of state",
            r.label(),
            r.gpus
        );
    }
}

#[test]
fn seven_b_inference_at_modest_qps_does_not_pick_an_eight_h100_node() {
    let mut q = query("mistral-7b", Task::Inference);
    q.serving = ServingTargets {
        qps: Some(2.0),
        peak_qps: Some(6.0),
        ttft: Some(LatencyTarget::at_default_percentile(2.0).unwrap()),
        tpot: Some(LatencyTarget::at_default_percentile(0.1).unwrap()),
        requests: None,
        headroom: None,
        concurrency: None,
    };
    q.seq = Some(1000);
    q.output_tokens = Some(200);
    let answer = feasible(&q);
    let best = &answer.plan.recommendations[0];
    assert!(best.offering.accelerator_count < 8, "{}", best.label());
    let serving = best.serving.unwrap();
    assert!(serving.replicas >= 1 && serving.max_replicas >= serving.replicas);
}

#[test]
fn serving_meets_its_latency_targets() {
    let mut q = query("mistral-7b", Task::Inference);
    q.serving = ServingTargets {
        qps: Some(20.0),
        peak_qps: None,
        ttft: Some(LatencyTarget::at_default_percentile(1.0).unwrap()),
        tpot: Some(LatencyTarget::at_default_percentile(0.05).unwrap()),
        requests: None,
        headroom: None,
        concurrency: None,
    };
    q.seq = Some(1000);
    q.output_tokens = Some(200);
    q.providers = vec!["aws".into(), "gcp".into(), "lambda".into()];
    let answer = feasible(&q);
    for r in &answer.plan.recommendations {
        let serving = r.serving.unwrap();
        let (ttft, tpot) = (serving.latency.ttft.unwrap(), serving.latency.tpot.unwrap());
        assert!(ttft.p90 <= 1.0 && tpot.p90 <= 0.05, "{} {ttft:?} {tpot:?}", r.label());
        assert!(["aws", "gcp", "lambda"].contains(&r.offering.provider.as_str()));
        assert!(f64::from(serving.replicas) * serving.requests_per_second_per_replica >= 20.0 - 1e-9);
        assert!(serving.latency.load_per_replica <= serving.latency.goodput_per_replica.unwrap());
    }
}

#[test]
fn resnet_50_on_imagenet_under_a_tight_deadline_scales_out() {
    let mut q = query("resnet-50", Task::Pretrain);
    q.dataset_size = Some(1_281_167.0);
    q.epochs = Some(90.0);
    q.batch = Some(1024);
    q.deadline_hours = Some(2.0);
    let answer = feasible(&q);
    let best = &answer.plan.recommendations[0];
    assert!(best.gpus >= 8, "{} with {} GPUs", best.label(), best.gpus);
    assert!(best.time_seconds.unwrap() <= 2.0 * 3600.0);
}

#[test]
fn spot_is_cheaper_when_allowed() {
    let mut q = query("llama-3.1-8b", Task::Lora);
    q.tokens = Some(5e8);
    q.seq = Some(4096);
    q.batch = Some(32);
    q.providers = vec!["aws".into()];
    let on_demand = feasible(&q).plan.recommendations[0].total_usd.unwrap();
    q.billing = vec![BillingMode::OnDemand, BillingMode::Spot];
    let answer = feasible(&q);
    let best = &answer.plan.recommendations[0];
    assert_eq!(best.billing, BillingMode::Spot);
    assert!(best.total_usd.unwrap() < on_demand);
}

#[test]
fn an_impossible_deadline_is_infeasible_with_a_suggestion() {
    let mut q = query("llama-2-70b", Task::Pretrain);
    q.tokens = Some(1e12);
    q.deadline_hours = Some(1.0);
    q.max_gpus = Some(64);
    let infeasible = plan_workload(catalog(), &q).unwrap().unwrap_err();
    // Written once, in each front end's words: a flag on the command line, a key in the API.
    let suggestion = infeasible.suggestion.clone().unwrap();
    let (flags, keys) = (
        suggestion.render(gpuplan::Naming::Flags),
        suggestion.render(gpuplan::Naming::Keys),
    );
    assert!(flags.contains("relax --deadline to"), "{flags}");
    assert!(keys.contains("relax `deadline` to") && !keys.contains("--"), "{keys}");
}

#[test]
fn contradictory_or_bad_constraints_are_errors() {
    let mut q = query("llama-2-7b", Task::Inference);
    q.serving = ServingTargets {
        qps: Some(10.0),
        peak_qps: Some(5.0),
        ttft: None,
        tpot: None,
        requests: None,
        headroom: None,
        concurrency: None,
    };
    assert!(
        plan_workload(catalog(), &q)
            .unwrap_err()
            .to_string()
            .contains("below --qps")
    );
    let mut q = query("llama-2-7b", Task::Finetune);
    q.deadline_hours = Some(0.0);
    assert!(
        plan_workload(catalog(), &q)
            .unwrap_err()
            .to_string()
            .contains("--deadline must be a positive number")
    );
    let mut q = query("llama-2-7b", Task::Finetune);
    q.providers = vec!["awz".into()];
    let error = plan_workload(catalog(), &q).unwrap_err();
    assert_eq!(error.hint().as_deref(), Some("did you mean `aws`?"));
}

/// A tabular job of `rows` × `features`, on demand, everything else left open.
fn tabular(rows: f64, features: f64) -> gpuplan::TabularAnswer {
    let query = TabularQuery {
        rows,
        features,
        rounds: None,
        providers: Vec::new(),
        regions: Vec::new(),
        billing: vec![BillingMode::OnDemand],
        deadline_hours: None,
        budget_usd: None,
        by_time: false,
    };
    plan_tabular_workload(catalog(), &query).unwrap()
}

#[test]
fn a_tabular_model_gets_a_cpu_instance() {
    // Two million rows of a hundred features boost in minutes on a few vCPUs; billed by the
    // second, a GPU rented for it costs more. (At 5e6 × 200 a $0.18/h V100 billed per second
    // finishes first and costs less.)
    let answer = tabular(2e6, 100.0);
    let (options, defaults) = (&answer.options, &answer.defaults);
    assert!(options[0].gpu.is_none(), "{:?}", options[0]);
    assert_eq!(options[0].gpus, 0);
    assert!(
        defaults
            .iter()
            .any(|d| d.field == gpuplan::Field::Rounds && d.value == "100")
    );
    // A GPU is offered too, and is faster, but does not pay for itself.
    let gpu = options.iter().find(|o| o.gpu.is_some()).unwrap();
    assert!(gpu.time_seconds < options[0].time_seconds && gpu.total_usd > options[0].total_usd);
    // GPU boosting runs on CUDA GPUs only: no Inferentia, Trainium, TPU or Gaudi.
    for option in options.iter().filter(|o| o.gpu.is_some()) {
        let id = option.gpu.as_deref().unwrap();
        let accelerator = catalog().accelerators().get(id).unwrap();
        assert!(
            accelerator
                .stacks
                .iter()
                .any(|s| s.stack == gpuplan::model::SoftwareStack::Cuda),
            "{id}"
        );
    }
    assert!(answer.shortfall.is_none());
}

#[test]
fn a_table_too_large_for_any_instance_says_so_instead_of_blaming_a_deadline_never_given() {
    let answer = tabular(5e8, 500.0);
    assert!(answer.options.is_empty());
    let why = answer.shortfall.unwrap();
    assert!(
        why.contains("of host memory") && why.contains("distributed boosting"),
        "{why}"
    );
    assert!(!why.contains("deadline") && !why.contains("budget"), "{why}");
}

#[test]
fn minimum_host_resources_are_enforced() {
    let mut q = query("llama-3.1-8b", Task::Lora);
    q.tokens = Some(1e8);
    q.seq = Some(2048);
    q.batch = Some(16);
    q.min_vcpus_per_gpu = Some(12.0);
    q.min_host_memory_gib_per_gpu = Some(96.0);
    let answer = feasible(&q);
    for r in &answer.plan.recommendations {
        let gpus = f64::from(r.offering.accelerator_count);
        assert!(
            r.offering.vcpus / gpus >= 12.0 && r.offering.memory.as_gib() / gpus >= 96.0,
            "{}",
            r.label()
        );
    }
    assert!(
        answer
            .plan
            .rejected_counts
            .contains_key(&gpuplan::planner::Constraint::Host)
    );
}

/// Llama 3 70B with half its layers left on the host by llama.cpp needs about 16 GiB of host
/// memory a replica for them (their weights, their cache, the embeddings): an instance that
/// packs more replicas than its memory holds is refused, and every plan has the room.
#[test]
fn llama_cpp_layers_on_the_host_need_host_memory_for_every_replica() {
    let mut q = query("llama-3-70b", Task::Inference);
    q.engine = Some(gpuplan::model::Engine::LlamaCpp);
    q.precisions = vec![gpuplan::model::Precision::Int4];
    q.engine_settings.gpu_layers = Some(40);
    q.gpus = vec!["RTX-4090".to_string()];
    q.serving.qps = Some(0.2);
    let answer = feasible(&q);
    let refused = answer
        .plan
        .rejected
        .iter()
        .find(|r| r.reason.contains("llama.cpp keeps there"));
    assert!(refused.is_some(), "{:?}", answer.plan.rejected_counts);
    for r in &answer.plan.recommendations {
        let replicas = f64::from(r.offering.accelerator_count) / f64::from(r.workload.layout.gpus().max(1));
        assert!(r.offering.memory.as_gib() >= 15.0 * replicas.max(1.0), "{}", r.label());
    }
}

/// A guide's "a machine with at least 64 vCPUs and 512 GB of RAM": whole-instance minimums,
/// whatever its GPUs, beside the per-GPU ones.
#[test]
fn whole_instance_minimums_are_enforced() {
    let mut q = query("llama-3.1-8b", Task::Lora);
    q.tokens = Some(1e8);
    q.seq = Some(2048);
    q.batch = Some(16);
    q.min_vcpus = Some(64.0);
    q.min_memory_gib = Some(512.0);
    let answer = feasible(&q);
    for r in &answer.plan.recommendations {
        assert!(
            r.offering.vcpus >= 64.0 && r.offering.memory.as_gib() >= 512.0,
            "{}",
            r.label()
        );
    }
    assert!(
        answer
            .plan
            .rejected_counts
            .contains_key(&gpuplan::planner::Constraint::Host)
    );
    q.min_vcpus = Some(-1.0);
    assert!(plan_workload(catalog(), &q).is_err());
}

/// The fitted constants are the catalog's: a catalog whose vLLM reaches half the memory
/// bandwidth needs more GPUs for the same traffic.
#[test]
fn a_catalog_with_slower_engine_constants_plans_more_gpus() {
    let mut fitted = catalog().fitted().clone();
    fitted.engines.get_mut("vllm").unwrap().decode_bandwidth_fraction /= 2.0;
    let slower = catalog().clone().with_fitted(fitted).unwrap();
    let mut q = query("llama-3.1-8b", Task::Inference);
    q.gpus = vec!["H100".to_string()];
    q.serving.qps = Some(40.0);
    q.serving.tpot = Some(LatencyTarget::new(0.03, 90.0).unwrap());
    let gpus = |catalog: &Catalog| match plan_workload(catalog, &q).unwrap() {
        Ok(answer) => answer.plan.recommendations[0].gpus,
        Err(infeasible) => panic!("infeasible: {:?}", infeasible.suggestion),
    };
    assert!(
        gpus(&slower) > gpus(catalog()),
        "{} against {}",
        gpus(&slower),
        gpus(catalog())
    );
    let mut broken = catalog().fitted().clone();
    broken.engines.remove("sglang");
    let refused = catalog().clone().with_fitted(broken).unwrap_err();
    assert!(refused.to_string().contains("sglang"), "{refused}");
}

#[test]
fn a_configuration_that_wins_by_less_than_the_model_error_is_not_called_the_fastest() {
    // ResNet-50, 90 ImageNet epochs: with no tolerance the fastest label goes to whatever is a
    // minute sooner, however dear; with the default 10 % it goes to the cheapest of those
    // within 10 % of the fastest time, and the front keeps only trade-offs worth the name.
    let mut q = query("resnet-50", Task::Pretrain);
    q.epochs = Some(90.0);
    q.dataset_size = Some(1_281_167.0);
    q.top = 3;
    let exact = {
        let mut q = q.clone();
        q.tolerance = Some(0.0);
        feasible(&q).plan
    };
    let tolerant = feasible(&q).plan;
    let time = |plan: &gpuplan::planner::Plan, i: usize| plan.recommendations[i].time_seconds.unwrap();
    let cost = |plan: &gpuplan::planner::Plan, i: usize| plan.recommendations[i].total_usd.unwrap();
    let fastest_time = time(&exact, exact.fastest);
    assert!(time(&tolerant, tolerant.fastest) <= fastest_time * 1.1 + 1e-9);
    assert!(cost(&tolerant, tolerant.fastest) <= cost(&exact, exact.fastest));
    assert!(
        tolerant.pareto.len() < exact.pareto.len(),
        "{} vs {}",
        tolerant.pareto.len(),
        exact.pareto.len()
    );
    // The winner by cost is within 10 % of the lowest cost.
    let lowest = (0..exact.recommendations.len())
        .map(|i| cost(&exact, i))
        .fold(f64::INFINITY, f64::min);
    assert!(cost(&tolerant, 0) <= lowest * 1.1);
    assert!(
        tolerant
            .assumptions
            .iter()
            .any(|a| a.contains("differences under 10 %"))
    );
}

#[test]
fn a_qlora_that_fits_one_consumer_gpu_is_not_split_by_tensor_parallelism_over_pcie() {
    // An 8B QLoRA fits one 24 GB RTX 4090 with recomputation; 4090s have no NVLink, so more of
    // them run data parallel, never tensor parallel over PCIe.
    let mut q = query("llama-3.1-8b", Task::Qlora);
    q.tokens = Some(1e8);
    q.gpus = vec!["RTX-4090".to_string()];
    let answer = feasible(&q);
    assert!(answer.plan.recommendations.iter().any(|r| r.gpus == 1));
    for r in &answer.plan.recommendations {
        assert_eq!(r.workload.layout.tp, 1, "{}", r.label());
    }
}

#[test]
fn a_bare_size_plans_a_generic_decoder_and_says_its_shape_is_assumed() {
    // "What do I need to fine-tune a 7B model with LoRA?": one 80 GB GPU does, and the answer
    // says the 7B's shape was assumed.
    let mut q = query("7b", Task::Lora);
    q.tokens = Some(1e8);
    let answer = feasible(&q);
    let parameters = answer.plan.recommendations[0].estimate.parameters.total as f64;
    assert!((parameters / 7e9 - 1.0).abs() < 0.02, "{parameters}");
    assert!(
        answer
            .defaults
            .iter()
            .any(|d| d.field == gpuplan::Field::Model && d.why.contains("shape assumed")),
        "{:?}",
        answer.defaults
    );
}

#[test]
fn an_hourly_price_cap_keeps_every_configuration_under_it_and_says_what_it_would_take() {
    // A guide's "keep it within $2 per hour": every configuration costs at most that per hour,
    // all its instances together.
    let mut q = query("llama-3.1-8b", Task::Lora);
    q.tokens = Some(1e8);
    q.max_hourly_usd = Some(2.0);
    let answer = feasible(&q);
    for r in &answer.plan.recommendations {
        assert!(r.hourly_usd <= 2.0, "{}: ${}/h", r.label(), r.hourly_usd);
    }
    // A cap nothing meets names the cap the nearest configuration needs.
    let mut q = query("llama-3.1-70b", Task::Pretrain);
    q.tokens = Some(1e11);
    q.max_hourly_usd = Some(0.5);
    let Err(infeasible) = plan_workload(catalog(), &q).unwrap() else {
        panic!("a 70B pretraining under $0.50 an hour")
    };
    let hint = infeasible.suggestion.clone().unwrap().render(gpuplan::Naming::Flags);
    assert!(hint.contains("raise --max-hourly-price to $"), "{hint}");
}

/// Cloud TPU slices are rented per slice at Google's per-chip prices: a LoRA plans on every
/// generation, priced as chips × the chip-hour rate. An accelerator whose specs are known but
/// which no offering rents says so, instead of a bare "0 candidates evaluated".
#[test]
fn tpu_slices_of_every_generation_are_plannable_and_an_unrented_part_says_why() {
    let mut q = query("llama-3.1-8b", Task::Lora);
    q.tokens = Some(1e8);
    q.gpus = vec!["TPU-v5e".to_string()];
    let answer = feasible(&q);
    let best = &answer.plan.recommendations[0];
    let instance = &best.offering.instance_type;
    assert!(instance.starts_with("v5litepod-"), "{instance}");
    let chips = f64::from(best.gpus);
    let hourly = best.hourly_usd;
    // us-central1 and the other cheapest regions list $1.20 per chip-hour.
    assert!(
        hourly >= chips * 1.2 - 1e-6 && hourly <= chips * 1.72,
        "{hourly} for {chips} chips"
    );
    // Every Cloud TPU generation the catalog describes is rented at its chip-hour list price:
    // v6e from $2.70, v5p from $4.20, v4 at $3.22 (us-central2 only).
    for (gpu, prefix, low, high) in [
        ("TPU-v6e", "v6e-", 2.7, 3.24),
        ("TPU-v5p", "v5p-", 4.2, 4.78),
        ("TPU-v4", "v4-", 3.22, 3.22),
    ] {
        q.gpus = vec![gpu.to_string()];
        let answer = feasible(&q);
        let best = &answer.plan.recommendations[0];
        assert!(
            best.offering.instance_type.starts_with(prefix),
            "{gpu}: {}",
            best.offering.instance_type
        );
        let per_chip = best.hourly_usd / f64::from(best.gpus);
        assert!(
            per_chip >= low - 1e-6 && per_chip <= high + 1e-6,
            "{gpu}: {per_chip} a chip-hour"
        );
    }
    q.gpus = vec!["MI250X".to_string()];
    let infeasible = plan_workload(catalog(), &q).unwrap().unwrap_err();
    let suggestion = infeasible.suggestion.clone().unwrap().render(gpuplan::Naming::Flags);
    assert!(
        suggestion.contains("no priced offering in the catalog rents MI250X"),
        "{suggestion}"
    );
}

/// The families guides speak in resolve, on listings and plans alike: Azure's `NDv4`, GCP's
/// `A3 Mega`, Alibaba's `gn7i`, Tencent's `GN10Xp`; a mistyped one names the nearest, and a
/// family given where a size is needed lists its sizes.
#[test]
fn instance_families_from_the_guides_resolve() {
    for (family, provider, instance) in [
        ("NDv4", "azure", "Standard_ND96asr_v4"),
        ("A3 Mega", "gcp", "a3-megagpu-8g"),
        ("gn7i", "alibaba", "ecs.gn7i-c8g1.2xlarge"),
        ("GN10Xp", "tencent", "GN10Xp.2XLARGE40"),
        ("ND H100 v5", "azure", "Standard_ND96isr_H100_v5"),
    ] {
        let request = gpuplan::InstancesRequest {
            families: vec![family.to_string()],
            ..Default::default()
        };
        let answer = gpuplan::find_instances(catalog(), &request).unwrap();
        assert!(!answer.offerings.is_empty(), "{family}");
        assert!(
            answer
                .offerings
                .iter()
                .all(|o| o.offering.provider.as_str() == provider),
            "{family}"
        );
        assert!(
            answer.offerings.iter().any(|o| o.offering.instance_type == instance),
            "{family}: {instance}"
        );
    }
    let mut q = query("llama-3.1-8b", Task::Lora);
    q.tokens = Some(1e8);
    q.families = vec!["a3 mega".to_string()];
    let answer = feasible(&q);
    assert!(
        answer
            .plan
            .recommendations
            .iter()
            .all(|r| r.offering.instance_type == "a3-megagpu-8g")
    );
    q.families = vec!["NDv9".to_string()];
    let error = plan_workload(catalog(), &q).unwrap_err().to_string();
    assert!(error.contains("NDv9"), "{error}");
    let mut cost = gpuplan::CostQuery::for_hours(1.0);
    cost.instance = Some("NDv4".to_string());
    let error = gpuplan::cost_job(catalog(), &cost).unwrap_err();
    let text = format!("{error} {:?}", error.hint());
    assert!(
        text.contains("instance family") && text.contains("Standard_ND96asr_v4"),
        "{text}"
    );
}

/// What providers publish beyond prices narrows a plan as a procurement checklist would: a
/// HIPAA workload in Germany under a 99.9 % single-VM SLA goes only to German regions of
/// providers that state HIPAA and commit to 99.9 %; providers with no published SLA are left
/// out and the answer says so; a bar no provider meets is infeasible with the reason.
#[test]
fn sla_compliance_and_country_filters_keep_only_providers_that_publish_them() {
    let mut q = query("llama-3.1-8b", Task::Lora);
    q.tokens = Some(1e8);
    q.provider_scope = gpuplan::ProviderScope {
        sla: Some(99.9),
        compliance: vec!["hipaa".to_string()],
        countries: vec!["de".to_string()],
    };
    let answer = feasible(&q);
    let operations = catalog().operations();
    for r in &answer.plan.recommendations {
        let facts = operations.provider_facts(&r.offering.provider).unwrap();
        assert!(facts.sla_instance_percent.unwrap() >= 99.9, "{}", r.offering.provider);
        assert!(facts.compliance.iter().any(|c| c == "HIPAA"));
        assert_eq!(facts.country(r.offering.region.as_deref().unwrap()), Some("DE"));
    }
    assert!(
        answer.plan.assumptions.iter().any(|a| a.contains("lambda")),
        "{:?}",
        answer.plan.assumptions
    );
    // A provider that publishes a lower SLA is named with it, not left out silently.
    assert!(
        answer
            .plan
            .assumptions
            .iter()
            .any(|a| a.contains("SLA below 99.9 %") && a.contains("aws (99.5 %)")),
        "{:?}",
        answer.plan.assumptions
    );
    q.provider_scope.sla = Some(99.999);
    let infeasible = plan_workload(catalog(), &q).unwrap().unwrap_err();
    let suggestion = infeasible.suggestion.unwrap().render(gpuplan::Naming::Flags);
    assert!(suggestion.contains("SLA, compliance or country"), "{suggestion}");
}

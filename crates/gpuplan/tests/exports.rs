//! Exports of saved plans (`tests/fixtures/plans`, written by `gpuplan plan --format json`):
//! each file is compared with its golden copy and validated against the real schema of what it
//! is — Kubernetes 1.33's, KEDA's, JobSet's and the PyTorchJob's CRDs, SkyPilot 0.14.1's task,
//! resources and service schemas (`tests/fixtures/schemas`, with their sources).

#![allow(clippy::unwrap_used, clippy::expect_used)]

use gpuplan::emit::manifest::{ManifestFile, TrainingFlavour};
use gpuplan::{ExportSettings, ExportTarget, SavedPlan, export_plan, read_saved_plan};
use serde_json::{Value, json};
use std::path::{Path, PathBuf};

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures")
}

use crate::catalog;

fn plan(name: &str) -> SavedPlan {
    let text = std::fs::read_to_string(fixtures().join("plans").join(format!("{name}.json"))).unwrap();
    read_saved_plan(&text, name).unwrap()
}

fn settings(flavour: TrainingFlavour) -> ExportSettings {
    ExportSettings {
        pick: 1,
        flavour,
        image: None,
        storage_class: None,
        name: None,
        namespace: "ml".to_string(),
    }
}

fn export(name: &str, target: ExportTarget, flavour: TrainingFlavour) -> Vec<ManifestFile> {
    exported(&plan(name), target, flavour)
}

/// A saved plan's files for `target` with the default settings and `flavour`.
fn exported(saved: &SavedPlan, target: ExportTarget, flavour: TrainingFlavour) -> Vec<ManifestFile> {
    export_plan(catalog(), saved, target, &settings(flavour)).unwrap()
}

fn load_schema(path: &str) -> Value {
    let text = std::fs::read_to_string(fixtures().join("schemas").join(path)).unwrap();
    let mut schema: Value = serde_json::from_str(&text).unwrap();
    schema.as_object_mut().unwrap().remove("$schema");
    schema
}

/// A custom resource's schema as strict as Kubernetes' own: objects that list their
/// properties refuse others (the API server would drop them silently).
fn strict(schema: &mut Value) {
    if let Value::Object(map) = schema {
        let open = map.contains_key("additionalProperties") || map.contains_key("x-kubernetes-preserve-unknown-fields");
        if map.contains_key("properties") && !open {
            map.insert("additionalProperties".to_string(), Value::Bool(false));
        }
        map.values_mut().for_each(strict);
    } else if let Value::Array(items) = schema {
        items.iter_mut().for_each(strict);
    }
}

fn schema_of_kind(kind: &str) -> Value {
    let (file, custom) = match kind {
        "Job" => ("kubernetes/job-batch-v1.json", false),
        "Deployment" => ("kubernetes/deployment-apps-v1.json", false),
        "Service" => ("kubernetes/service-v1.json", false),
        "PodDisruptionBudget" => ("kubernetes/poddisruptionbudget-policy-v1.json", false),
        "PriorityClass" => ("kubernetes/priorityclass-scheduling-v1.json", false),
        "HorizontalPodAutoscaler" => ("kubernetes/horizontalpodautoscaler-autoscaling-v2.json", false),
        "PersistentVolumeClaim" => ("kubernetes/persistentvolumeclaim-v1.json", false),
        "ScaledObject" => ("kubernetes/keda-scaledobject-v1alpha1.json", true),
        "JobSet" => ("kubernetes/jobset-v1alpha2.json", true),
        "PyTorchJob" => ("kubernetes/pytorchjob-v1.json", true),
        "PodMonitor" => ("kubernetes/podmonitor-v1.json", true),
        other => panic!("no schema for kind {other}"),
    };
    let mut schema = load_schema(file);
    if custom {
        strict(&mut schema);
    }
    schema
}

/// The errors of `value` against `schema`, each with where it is.
fn violations(schema: &Value, value: &Value) -> Vec<String> {
    let validator = jsonschema::options()
        .with_draft(jsonschema::Draft::Draft7)
        .build(schema)
        .unwrap();
    validator
        .iter_errors(value)
        .map(|e| format!("{e} at {}", e.instance_path))
        .collect()
}

fn document(file: &ManifestFile) -> Value {
    serde_yaml_ng::from_str(&file.yaml).unwrap_or_else(|e| panic!("{}: {e}", file.name))
}

/// Every Kubernetes object of `files` is valid against its kind's schema.
fn assert_valid_kubernetes(files: &[ManifestFile]) {
    for file in files {
        let object = document(file);
        let kind = object["kind"].as_str().unwrap();
        let errors = violations(&schema_of_kind(kind), &object);
        assert!(errors.is_empty(), "{} ({kind}): {errors:#?}", file.name);
    }
}

/// A SkyPilot task is valid as a whole, its resources and each alternative on their own, and
/// its service section against SkyServe's schema.
fn assert_valid_skypilot(file: &ManifestFile) {
    let task = document(file);
    let mut errors = violations(&load_schema("skypilot/task.schema.json"), &task);
    let resources_schema = load_schema("skypilot/resources.schema.json");
    errors.extend(violations(&resources_schema, &task["resources"]));
    for candidate in task["resources"]["ordered"].as_array().unwrap() {
        errors.extend(violations(&resources_schema, candidate));
    }
    if !task["service"].is_null() {
        errors.extend(violations(
            &load_schema("skypilot/service.schema.json"),
            &task["service"],
        ));
    }
    assert!(errors.is_empty(), "{}: {errors:#?}", file.name);
}

fn stream(files: &[ManifestFile]) -> String {
    files
        .iter()
        .map(|f| format!("# {}\n{}", f.name, f.yaml))
        .collect::<Vec<_>>()
        .join("---\n")
}

#[test]
fn one_node_training_is_a_job_with_a_checkpoint_volume() {
    let files = export("lora-one-node", ExportTarget::Kubernetes, TrainingFlavour::IndexedJob);
    let names: Vec<&str> = files.iter().map(|f| f.name.as_str()).collect();
    assert_eq!(names, ["priorityclass.yaml", "pvc.yaml", "job.yaml"]);
    assert_valid_kubernetes(&files);
    let job = document(&files[2]);
    let container = &job["spec"]["template"]["spec"]["containers"][0];
    let saved = plan("lora-one-node");
    let gpus = saved.recommendations[0].gpus_per_node.to_string();
    assert_eq!(container["resources"]["limits"]["nvidia.com/gpu"], json!(gpus));
    assert!(
        container["command"]
            .as_array()
            .unwrap()
            .contains(&json!("--standalone"))
    );
    // The plan chose spot: more retries, and only spot nodes of the managed service.
    assert_eq!(job["spec"]["backoffLimit"], 6);
    assert!(files[2].yaml.contains("eks.amazonaws.com/capacityType"));
    insta::assert_snapshot!("lora_one_node_k8s", stream(&files));
}

#[test]
fn multi_node_training_sets_up_the_rendezvous_in_every_flavour() {
    let saved = plan("finetune-multi-node");
    let nodes = saved.recommendations[0].nodes;
    assert!(nodes > 1, "the fixture is a multi-node plan");
    for (flavour, kind) in [
        (TrainingFlavour::IndexedJob, "Job"),
        (TrainingFlavour::JobSet, "JobSet"),
        (TrainingFlavour::PyTorchJob, "PyTorchJob"),
    ] {
        let files = export("finetune-multi-node", ExportTarget::Kubernetes, flavour);
        assert_valid_kubernetes(&files);
        let workload = document(files.last().unwrap());
        assert_eq!(workload["kind"], kind);
        let pvc = document(&files[1]);
        assert_eq!(
            pvc["spec"]["accessModes"][0], "ReadWriteMany",
            "every node writes its shard"
        );
        let text = &files.last().unwrap().yaml;
        // Each flavour retries a bounded number of times, and a disruption (a reclaim, a
        // drain) is not one of the failures it counts.
        let retries = match flavour {
            TrainingFlavour::IndexedJob => &workload["spec"]["backoffLimit"],
            TrainingFlavour::JobSet => &workload["spec"]["failurePolicy"]["maxRestarts"],
            TrainingFlavour::PyTorchJob => &workload["spec"]["runPolicy"]["backoffLimit"],
        };
        assert!(
            retries.as_i64().is_some_and(|n| (1..=10).contains(&n)),
            "{kind}: {retries}"
        );
        if flavour != TrainingFlavour::PyTorchJob {
            assert!(text.contains("DisruptionTarget"), "{kind}: the pod failure policy");
        }
        if flavour == TrainingFlavour::PyTorchJob {
            assert_eq!(workload["spec"]["pytorchReplicaSpecs"]["Worker"]["replicas"], nodes - 1);
        } else {
            assert!(text.contains(&format!("value: '{nodes}'")), "NNODES: {text}");
            assert!(text.contains("job-completion-index"), "the node rank");
        }
        insta::assert_snapshot!(format!("finetune_multi_node_{kind}"), stream(&files));
    }
}

#[test]
fn serving_scales_on_the_engine_queue_between_the_planned_replicas() {
    let files = export("serving", ExportTarget::Kubernetes, TrainingFlavour::IndexedJob);
    assert_valid_kubernetes(&files);
    let saved = plan("serving");
    let serving = saved.recommendations[0].serving.clone().unwrap();
    let scaled = document(files.iter().find(|f| f.name == "scaledobject.yaml").unwrap());
    assert_eq!(scaled["spec"]["minReplicaCount"], serving.min_replicas);
    assert_eq!(scaled["spec"]["maxReplicaCount"], serving.max_replicas);
    let query = scaled["spec"]["triggers"][1]["metadata"]["query"].as_str().unwrap();
    assert!(query.contains("vllm:num_requests_waiting"), "{query}");
    // Nothing scraped is not zero load: KEDA holds the planned replicas instead.
    for trigger in scaled["spec"]["triggers"].as_array().unwrap() {
        assert_eq!(trigger["metadata"]["ignoreNullValues"], "false");
    }
    assert_eq!(scaled["spec"]["fallback"]["replicas"], serving.replicas);
    // The model cache is shared by every replica the autoscaler may start: across nodes once
    // the largest replica count outgrows one node, whatever the planned count.
    let gpus_per_node = saved.recommendations[0].gpus_per_node;
    let cache = document(files.iter().find(|f| f.name == "model-cache.yaml").unwrap());
    let spread = serving.max_replicas * serving.gpus_per_replica > gpus_per_node;
    assert_eq!(
        cache["spec"]["accessModes"][0],
        if spread { "ReadWriteMany" } else { "ReadWriteOnce" },
        "{} replicas of {} GPUs on {gpus_per_node}-GPU nodes",
        serving.max_replicas,
        serving.gpus_per_replica
    );
    assert!(spread, "the fixture's service outgrows one node at its peak");
    let engine = document(files.iter().find(|f| f.name == "deployment.yaml").unwrap());
    let pod = &engine["spec"]["template"];
    assert_eq!(pod["metadata"]["annotations"]["prometheus.io/scrape"], "true");
    // The Operator's Prometheus, which the triggers query, scrapes through a PodMonitor that
    // selects the engine's pods on the port they name.
    let monitor = document(files.iter().find(|f| f.name == "podmonitor.yaml").unwrap());
    assert_eq!(monitor["spec"]["selector"]["matchLabels"], pod["metadata"]["labels"]);
    let port = &monitor["spec"]["podMetricsEndpoints"][0]["port"];
    assert_eq!(*port, pod["spec"]["containers"][0]["ports"][0]["name"]);
    let container = &pod["spec"]["containers"][0];
    // A missing token secret stops the pod at once rather than failing the download later.
    assert_eq!(container["env"][0]["valueFrom"]["secretKeyRef"]["optional"], false);
    let args: Vec<&str> = container["args"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a.as_str().unwrap())
        .collect();
    // The plan's prompt and output lengths, not the model's 128 K context.
    let at = args.iter().position(|a| *a == "--max-model-len").unwrap();
    assert!(args[at + 1].parse::<u64>().unwrap() < 8192, "{args:?}");
    assert!(args.contains(&"--gpu-memory-utilization"), "{args:?}");
    let requests = &container["resources"]["requests"];
    assert!(
        requests["cpu"].is_string() && requests["memory"].is_string(),
        "{requests}"
    );
    // The autoscaler may hold one replica: an update then surges rather than replacing the
    // only replica in place, and drains keep one serving.
    let budget = document(files.iter().find(|f| f.name == "pdb.yaml").unwrap());
    assert_eq!(budget["spec"]["minAvailable"], 1);
    let rolling = &engine["spec"]["strategy"]["rollingUpdate"];
    assert_eq!(
        (rolling["maxSurge"].as_i64(), rolling["maxUnavailable"].as_i64()),
        (Some(1), Some(0)),
        "{rolling}"
    );
    // ...and the file says the update needs room for one more replica.
    let deployment_file = files.iter().find(|f| f.name == "deployment.yaml").unwrap();
    assert!(
        deployment_file.yaml.contains("the cluster needs")
            && deployment_file.yaml.contains("free for the update's length"),
        "{}",
        deployment_file.yaml
    );
    let priority = |name: &str| {
        document(files.iter().find(|f| f.name == name).unwrap())["value"]
            .as_i64()
            .unwrap()
    };
    let training = export("lora-one-node", ExportTarget::Kubernetes, TrainingFlavour::IndexedJob);
    let training_priority = document(&training[0])["value"].as_i64().unwrap();
    assert!(
        priority("priorityclass.yaml") > training_priority,
        "serving preempts training"
    );
    assert!(files.iter().any(|f| f.name == "hpa-without-keda.yaml" && f.alternative));
    insta::assert_snapshot!("serving_k8s", stream(&files));
}

#[test]
fn skypilot_tasks_and_services_pass_skypilots_schemas() {
    for (plan_name, target, snapshot) in [
        ("lora-one-node", ExportTarget::SkyPilot, "lora_one_node_skypilot"),
        (
            "finetune-multi-node",
            ExportTarget::SkyPilot,
            "finetune_multi_node_skypilot",
        ),
        ("serving", ExportTarget::SkyPilot, "serving_skypilot"),
        ("serving", ExportTarget::SkyServe, "serving_skyserve"),
    ] {
        let files = export(plan_name, target, TrainingFlavour::IndexedJob);
        assert_eq!(files.len(), 1);
        assert_valid_skypilot(&files[0]);
        insta::assert_snapshot!(snapshot, files[0].yaml);
    }
    let spot = document(&export("lora-one-node", ExportTarget::SkyPilot, TrainingFlavour::IndexedJob)[0]);
    assert_eq!(spot["resources"]["use_spot"], true);
    assert_eq!(spot["resources"]["job_recovery"]["strategy"], "EAGER_NEXT_REGION");
    let multi = document(
        &export(
            "finetune-multi-node",
            ExportTarget::SkyPilot,
            TrainingFlavour::IndexedJob,
        )[0],
    );
    assert_eq!(multi["num_nodes"], plan("finetune-multi-node").recommendations[0].nodes);
    // Fallbacks are the same cluster shape elsewhere, never another accelerator or count.
    for task in [&spot, &multi] {
        let ordered = task["resources"]["ordered"].as_array().unwrap();
        assert!(
            ordered.iter().all(|c| c["accelerators"] == ordered[0]["accelerators"]),
            "{ordered:?}"
        );
        // The code is synced and checkpoints outlive a recovered node.
        assert_eq!(task["workdir"], ".");
        assert_eq!(task["file_mounts"]["/checkpoints"]["mode"], "MOUNT_CACHED");
        // The bucket is named by an environment variable the user may override, with a default
        // that carries the configuration's digest (bucket names are global).
        assert_eq!(task["file_mounts"]["/checkpoints"]["name"], "${CHECKPOINT_BUCKET}");
        let bucket = task["envs"]["CHECKPOINT_BUCKET"].as_str().unwrap();
        assert!(bucket.len() <= 63 && bucket.contains("-ckpt-"), "{bucket}");
        assert!(
            bucket
                .chars()
                .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-'),
            "{bucket}"
        );
    }
    // A job across nodes recovers from a failed node as a managed job, spot or not.
    assert_eq!(multi["resources"]["job_recovery"]["strategy"], "EAGER_NEXT_REGION");
    let service = document(&export("serving", ExportTarget::SkyServe, TrainingFlavour::IndexedJob)[0]);
    assert!(
        service["secrets"].get("HF_TOKEN").is_some(),
        "gated weights need the token"
    );
    let policy = &service["service"]["replica_policy"];
    assert_eq!(
        policy["min_replicas"],
        plan("serving").recommendations[0].serving.clone().unwrap().min_replicas
    );
}

/// The checks above can fail: a misspelt field, a string where a count goes.
#[test]
fn the_schemas_refuse_what_kubernetes_and_skypilot_refuse() {
    let files = export("serving", ExportTarget::Kubernetes, TrainingFlavour::IndexedJob);
    let mut deployment = document(files.iter().find(|f| f.name == "deployment.yaml").unwrap());
    deployment["spec"]["replica"] = json!(2);
    assert!(!violations(&schema_of_kind("Deployment"), &deployment).is_empty());
    let mut scaled = document(files.iter().find(|f| f.name == "scaledobject.yaml").unwrap());
    scaled["spec"]["maxReplicas"] = json!(4);
    assert!(!violations(&schema_of_kind("ScaledObject"), &scaled).is_empty());
    let mut task = document(&export("serving", ExportTarget::SkyServe, TrainingFlavour::IndexedJob)[0]);
    task["num_nodes"] = json!("two");
    assert!(!violations(&load_schema("skypilot/task.schema.json"), &task).is_empty());
}

#[test]
fn what_cannot_be_exported_says_why() {
    let error = export_plan(
        catalog(),
        &plan("lora-one-node"),
        ExportTarget::SkyServe,
        &settings(TrainingFlavour::IndexedJob),
    )
    .unwrap_err();
    assert!(error.to_string().contains("serves a model"), "{error}");
    let mut far = settings(TrainingFlavour::IndexedJob);
    far.pick = 99;
    let error = export_plan(catalog(), &plan("serving"), ExportTarget::Kubernetes, &far).unwrap_err();
    assert!(error.to_string().starts_with("--pick 99: the plan has"), "{error}");
    let mut bare = plan("serving");
    bare.request = None;
    let error = export_plan(
        catalog(),
        &bare,
        ExportTarget::Kubernetes,
        &settings(TrainingFlavour::IndexedJob),
    )
    .unwrap_err();
    assert!(error.to_string().contains("request"), "{error}");
}

/// The plan for `request` (a plan request in JSON), saved as `plan --format json` writes it.
fn planned(request: Value) -> SavedPlan {
    let options: gpuplan::PlanOptions = serde_json::from_value(request.clone()).unwrap();
    let answer = gpuplan::plan_workload(catalog(), &options.query().unwrap())
        .unwrap()
        .unwrap();
    let mut wire = serde_json::to_value(answer.wire(gpuplan::Naming::Flags)).unwrap();
    wire["request"] = serde_json::to_value(&options).unwrap();
    read_saved_plan(&wire.to_string(), "planned").unwrap()
}

/// Each accelerator gets the software that runs on it: ROCm's PyTorch on MI300X, the Neuron
/// containers on Trainium and Inferentia, with the vendor's device resource; never NVIDIA's
/// containers on other chips.
#[test]
fn exports_run_each_accelerators_own_software() {
    let cases = [
        (
            json!({"model": "llama-3.1-8b", "task": "lora", "tokens": 5e8, "seq": 4096, "batch": 32, "gpu": ["MI300X"]}),
            "rocm/pytorch:",
            "amd.com/gpu",
        ),
        (
            json!({"model": "llama-3.1-8b", "task": "inference", "qps": 10, "gpu": ["MI300X"]}),
            "rocm/vllm:",
            "amd.com/gpu",
        ),
        (
            json!({"model": "llama-3.1-8b", "task": "lora", "tokens": 5e8, "seq": 4096, "batch": 32, "gpu": ["Trainium"]}),
            "public.ecr.aws/neuron/pytorch-training-neuronx:",
            "aws.amazon.com/neuron",
        ),
        (
            json!({"model": "llama-3.1-8b", "task": "inference", "qps": 10, "gpu": ["Inferentia2"]}),
            "public.ecr.aws/neuron/pytorch-inference-vllm-neuronx:",
            "aws.amazon.com/neuron",
        ),
    ];
    for (request, image, resource) in cases {
        let saved = planned(request.clone());
        let files = exported(&saved, ExportTarget::Kubernetes, TrainingFlavour::IndexedJob);
        let text = stream(&files);
        assert!(text.contains(&format!("image: {image}")), "{request}: {text}");
        assert!(text.contains(resource), "{request}");
        assert!(
            !text.contains("nvcr.io") && !text.contains("nvidia.com/gpu"),
            "{request}"
        );
        assert_valid_kubernetes(&files);
        // SkyPilot's training task runs the script in the same image (the VMs carry no ROCm
        // or Neuron PyTorch), with the synced workdir and the checkpoints mounted.
        if request["task"] == "lora" {
            let sky = exported(&saved, ExportTarget::SkyPilot, TrainingFlavour::IndexedJob);
            let yaml = &sky[0].yaml;
            assert!(yaml.contains(&format!("docker pull {image}")), "{request}: {yaml}");
            assert!(
                yaml.contains("-v $HOME/sky_workdir:/workdir -v /checkpoints:/checkpoints -w /workdir")
                    && yaml.contains(image),
                "{request}: {yaml}"
            );
            assert_valid_skypilot(&sky[0]);
        }
        // SkyServe runs the same vendor image, with the plan's engine arguments.
        if request["task"] == "inference" {
            let sky = exported(&saved, ExportTarget::SkyServe, TrainingFlavour::IndexedJob);
            let yaml = &sky[0].yaml;
            assert!(yaml.contains(&format!("docker run --privileged --net host --ipc host --shm-size 16g -e HF_TOKEN -v $HOME/.cache/huggingface:/root/.cache/huggingface {image}")), "{request}: {yaml}");
            assert!(!yaml.contains("pip install vllm"), "{request}: {yaml}");
            assert!(
                yaml.contains("--max-model-len") && yaml.contains("--gpu-memory-utilization"),
                "{yaml}"
            );
            assert_valid_skypilot(&sky[0]);
        }
    }
}

/// A Neuron device is several NeuronCores, and Neuron software counts cores: a trn1 node of
/// 16 Trainium chips runs 32 torchrun workers (one per NeuronCore, as AWS's recipes do), and
/// an Inferentia2 replica's tensor-parallel size is its chips' cores, in every export; the
/// device plugin is still asked for chips. A GPU keeps one worker per device.
#[test]
fn neuron_exports_count_neuroncores_not_chips() {
    let training = planned(
        json!({"model": "llama-3.1-8b", "task": "lora", "tokens": 5e8, "seq": 4096, "batch": 32, "gpu": ["Trainium"]}),
    );
    let devices = |text: &str| -> u32 {
        let at = text.find("aws.amazon.com/neuron: '").unwrap() + "aws.amazon.com/neuron: '".len();
        text[at..].split('\'').next().unwrap().parse().unwrap()
    };
    let job = stream(&exported(
        &training,
        ExportTarget::Kubernetes,
        TrainingFlavour::IndexedJob,
    ));
    let chips = devices(&job);
    assert!(job.contains(&format!("--nproc_per_node={}", 2 * chips)), "{job}");
    let pytorchjob = stream(&exported(
        &training,
        ExportTarget::Kubernetes,
        TrainingFlavour::PyTorchJob,
    ));
    assert!(
        pytorchjob.contains(&format!("nprocPerNode: '{}'", 2 * chips)),
        "{pytorchjob}"
    );
    let sky = exported(&training, ExportTarget::SkyPilot, TrainingFlavour::IndexedJob);
    assert!(
        sky[0].yaml.contains(&format!("--nproc_per_node={}", 2 * chips)),
        "{}",
        sky[0].yaml
    );

    let serving = planned(json!({"model": "llama-3.1-8b", "task": "inference", "qps": 10, "gpu": ["Inferentia2"]}));
    let per_replica = stream(&exported(
        &serving,
        ExportTarget::Kubernetes,
        TrainingFlavour::IndexedJob,
    ));
    let chips = devices(&per_replica);
    assert!(
        per_replica.contains(&format!("- --tensor-parallel-size\n        - '{}'", 2 * chips)),
        "{per_replica}"
    );
    let skyserve = exported(&serving, ExportTarget::SkyServe, TrainingFlavour::IndexedJob);
    assert!(
        skyserve[0]
            .yaml
            .contains(&format!("--tensor-parallel-size {}", 2 * chips)),
        "{}",
        skyserve[0].yaml
    );

    let gpu = planned(
        json!({"model": "llama-3.1-8b", "task": "lora", "tokens": 5e8, "seq": 4096, "batch": 32, "gpu": ["H100"]}),
    );
    let sky = exported(&gpu, ExportTarget::SkyPilot, TrainingFlavour::IndexedJob);
    assert!(
        sky[0].yaml.contains("--nproc_per_node=$SKYPILOT_NUM_GPUS_PER_NODE"),
        "{}",
        sky[0].yaml
    );
}

/// An image is only as new as the GPU allows: NGC releases from 25.01 need compute capability
/// 7.5, so a V100 (7.0) job gets the newest release that still runs on it, 24.12 (CUDA 12.6),
/// its header says why, and `compat` agrees with the pick; an H100 keeps the catalog's image.
#[test]
fn a_volta_job_gets_the_newest_ngc_release_that_runs_on_it() {
    let lora = |gpu: &str| {
        let request =
            json!({"model": "llama-3.1-8b", "task": "lora", "tokens": 5e8, "seq": 4096, "batch": 32, "gpu": [gpu]});
        stream(&exported(
            &planned(request),
            ExportTarget::Kubernetes,
            TrainingFlavour::IndexedJob,
        ))
    };
    let volta = lora("V100");
    assert!(volta.contains("image: nvcr.io/nvidia/pytorch:24.12-py3"), "{volta}");
    assert!(
        volta.contains("compute capability 7.0") && volta.contains("needs compute capability 7.5"),
        "{volta}"
    );
    let answer = gpuplan::compat(
        catalog(),
        &gpuplan::CompatQuery {
            gpu: Some("V100".into()),
            cuda: Some("12.6".into()),
            ..gpuplan::CompatQuery::default()
        },
    )
    .unwrap();
    assert!(answer.ok, "{:?}", answer.checks);
    assert!(
        answer
            .containers
            .iter()
            .any(|c| c.starts_with("nvcr.io/nvidia/pytorch:24.12-py3")),
        "{:?}",
        answer.containers
    );
    let hopper = lora("H100");
    let catalog_image = catalog()
        .stack_image(
            gpuplan::model::SoftwareStack::Cuda,
            gpuplan::model::ImageRole::Training,
            None,
        )
        .unwrap();
    assert!(hopper.contains(&format!("image: {}", catalog_image.image)), "{hopper}");
    assert!(!hopper.contains("# Image:"), "{hopper}");
}

/// On NVIDIA GPUs SkyServe installs the vLLM release the Kubernetes image carries and starts
/// it with the arguments the plan assumed, as the Deployment does.
#[test]
fn skyserve_runs_the_planned_engine_release_with_the_planned_arguments() {
    let saved = plan("serving");
    let sky = exported(&saved, ExportTarget::SkyServe, TrainingFlavour::IndexedJob);
    let yaml = &sky[0].yaml;
    let k8s = exported(&saved, ExportTarget::Kubernetes, TrainingFlavour::IndexedJob);
    let engine = document(k8s.iter().find(|f| f.name == "deployment.yaml").unwrap());
    let image = engine["spec"]["template"]["spec"]["containers"][0]["image"]
        .as_str()
        .unwrap();
    let version = image.rsplit_once(":v").unwrap().1;
    assert!(yaml.contains(&format!("pip install vllm=={version}")), "{yaml}");
    let args: Vec<&str> = engine["spec"]["template"]["spec"]["containers"][0]["args"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a.as_str().unwrap())
        .collect();
    for flag in ["--max-model-len", "--gpu-memory-utilization"] {
        let at = args.iter().position(|a| *a == flag).unwrap();
        assert!(yaml.contains(&format!("{flag} {}", args[at + 1])), "{flag}: {yaml}");
    }
}

/// A saved plan's Kubernetes files as an indexed Job, checked against the schemas, and the Job.
fn indexed_job(saved: &SavedPlan) -> (Vec<ManifestFile>, Value) {
    let files = exported(saved, ExportTarget::Kubernetes, TrainingFlavour::IndexedJob);
    assert_valid_kubernetes(&files);
    let job = files.iter().map(document).find(|d| d["kind"] == "Job").unwrap();
    (files, job)
}

/// A multi-node plan over EFA asks for the fabric it was priced with: the instance's EFA
/// interfaces from the device plugin, the right to pin memory, libfabric's EFA provider for
/// NCCL; SkyPilot's task asks for the cloud's best network tier.
#[test]
fn a_multi_node_plan_over_efa_requests_the_fabric() {
    let saved = planned(
        json!({"model": "llama-3.1-70b", "task": "finetune", "tokens": 2e9, "seq": 4096,
        "providers": ["aws"], "gpu": ["H100"], "max_gpus": 32, "objective": "time"}),
    );
    let chosen = &saved.recommendations[0];
    assert_eq!(chosen.instance_type, "p5.48xlarge");
    assert!(chosen.nodes > 1, "{} nodes", chosen.nodes);
    let (files, job) = indexed_job(&saved);
    // A reclaimed or preempted pod is restarted, not counted as a failure.
    assert_eq!(
        job["spec"]["podFailurePolicy"]["rules"][0]["onPodConditions"][0]["type"],
        "DisruptionTarget"
    );
    let container = &job["spec"]["template"]["spec"]["containers"][0];
    assert_eq!(container["resources"]["limits"]["vpc.amazonaws.com/efa"], "32");
    assert_eq!(container["securityContext"]["capabilities"]["add"][0], "IPC_LOCK");
    let env = container["env"].to_string();
    assert!(env.contains("FI_PROVIDER") && env.contains("efa"), "{env}");
    // An image whose NCCL reaches EFA (libfabric and the AWS OFI plugin inside), from the
    // registry of the planned region; the same job in every flavour.
    let region = chosen.region.as_deref().unwrap();
    let dlc = format!("763104351884.dkr.ecr.{region}.amazonaws.com/pytorch-training:");
    assert!(
        container["image"].as_str().unwrap().starts_with(&dlc),
        "{}",
        container["image"]
    );
    for flavour in [TrainingFlavour::JobSet, TrainingFlavour::PyTorchJob] {
        let text = stream(&exported(&saved, ExportTarget::Kubernetes, flavour));
        assert!(
            text.contains(&dlc) && text.contains("vpc.amazonaws.com/efa"),
            "{flavour:?}"
        );
    }
    // The nodes share the checkpoint volume: a class that binds ReadWriteMany, or the one given.
    let pvc = files
        .iter()
        .map(document)
        .find(|d| d["kind"] == "PersistentVolumeClaim")
        .unwrap();
    assert_eq!(pvc["spec"]["accessModes"][0], "ReadWriteMany");
    assert_eq!(pvc["spec"]["storageClassName"], "efs-sc");
    // EKS has no shared-file class of its own: the header says what to install and create.
    let header = files.iter().find(|f| f.yaml.contains("PersistentVolumeClaim")).unwrap();
    assert!(
        header
            .yaml
            .contains("# Not built in: it needs the EKS add-on aws-efs-csi-driver"),
        "{}",
        header.yaml
    );
    let mut chosen_class = settings(TrainingFlavour::IndexedJob);
    chosen_class.storage_class = Some("fsx-lustre".to_string());
    let files = export_plan(catalog(), &saved, ExportTarget::Kubernetes, &chosen_class).unwrap();
    let pvc = files
        .iter()
        .map(document)
        .find(|d| d["kind"] == "PersistentVolumeClaim")
        .unwrap();
    assert_eq!(pvc["spec"]["storageClassName"], "fsx-lustre");
    // The default names the faster FSx for Lustre class the catalog knows, which, chosen, gets
    // its own notes: the driver to install and the 1,200 GiB a claim starts at.
    assert!(
        header.yaml.contains("choose it with --storage-class fsx-sc"),
        "{}",
        header.yaml
    );
    chosen_class.storage_class = Some("fsx-sc".to_string());
    let files = export_plan(catalog(), &saved, ExportTarget::Kubernetes, &chosen_class).unwrap();
    let header = files.iter().find(|f| f.yaml.contains("PersistentVolumeClaim")).unwrap();
    assert!(
        header.yaml.contains("aws-fsx-csi-driver") && header.yaml.contains("Volumes start at 1200 GiB"),
        "{}",
        header.yaml
    );
    let sky = exported(&saved, ExportTarget::SkyPilot, TrainingFlavour::IndexedJob);
    assert_valid_skypilot(&sky[0]);
    assert!(sky[0].yaml.contains("network_tier: best"), "{}", sky[0].yaml);
}

/// Every fabric a multi-node plan priced is either asked for or named as missing: Azure's
/// InfiniBand NICs as the RDMA device plugin's `rdma/ib` (eight per ND H100 v5) with IPC_LOCK,
/// GKE's GPUDirect RDMA and GPUDirect-TCPX(O) as Google's own manifests write them, OCI's RoCE
/// as the Network Operator's SR-IOV functions; a fabric whose devices are not counted gets a
/// warning that says what to add and where the provider documents it.
#[test]
fn every_priced_fabric_is_requested_or_named_as_missing() {
    let multi_node = |provider: &str, gpu: &str| {
        planned(
            json!({"model": "llama-3.1-70b", "task": "finetune", "tokens": 2e9, "seq": 4096,
            "providers": [provider], "gpu": [gpu], "max_gpus": 32, "objective": "time"}),
        )
    };
    // The plan's files in `flavour`, checked against the schemas, as one text.
    let exported = |saved: &SavedPlan, flavour| {
        let files = exported(saved, ExportTarget::Kubernetes, flavour);
        assert_valid_kubernetes(&files);
        stream(&files)
    };
    let azure = multi_node("azure", "H100");
    assert_eq!(azure.recommendations[0].instance_type, "Standard_ND96isr_H100_v5");
    assert!(azure.recommendations[0].nodes > 1);
    let text = exported(&azure, TrainingFlavour::JobSet);
    assert!(text.contains("rdma/ib: '8'") && text.contains("IPC_LOCK"), "{text}");
    assert!(
        text.contains("NCCL_NET_GDR_LEVEL") && text.contains("NCCL_TOPO_FILE"),
        "{text}"
    );
    assert!(
        text.contains("NVIDIA Network Operator") && !text.contains("WARNING: the plan priced"),
        "{text}"
    );
    // GKE's A3 Ultra (H200): the RDMA networks as multi-network annotations, the gIB plugin
    // and driver folders from the node, its NCCL settings sourced before torchrun.
    let a3_ultra = multi_node("gcp", "H200");
    assert_eq!(a3_ultra.recommendations[0].instance_type, "a3-ultragpu-8g");
    let text = exported(&a3_ultra, TrainingFlavour::PyTorchJob);
    for needed in [
        "networking.gke.io/interfaces",
        "rdma-7",
        "/home/kubernetes/bin/gib",
        "set_nccl_env.sh && exec torchrun",
        "LD_LIBRARY_PATH",
    ] {
        assert!(text.contains(needed), "{needed}: {text}");
    }
    assert!(!text.contains("WARNING: the plan priced"), "{text}");
    // GKE's A3 High or Mega (H100): the GPU NICs' networks, the receive-data-path daemon as a
    // native sidecar with the GPUs injected, the NCCL plugin from the node.
    let a3 = multi_node("gcp", "H100");
    let instance = a3.recommendations[0].instance_type.clone();
    assert!(a3.recommendations[0].nodes > 1);
    let text = exported(&a3, TrainingFlavour::JobSet);
    let (nics, daemon) = match instance.as_str() {
        "a3-highgpu-8g" | "a3-edgegpu-8g" => ("vpc4", "tcpx-daemon"),
        "a3-megagpu-8g" => ("vpc8", "tcpxo-daemon"),
        other => panic!("{other}"),
    };
    for needed in [
        nics,
        daemon,
        "initContainers",
        "restartPolicy: Always",
        "devices.gke.io/container.",
        "/home/kubernetes/bin/nvidia/lib64",
        "NET_ADMIN",
    ] {
        assert!(text.contains(needed), "{needed}: {text}");
    }
    assert!(!text.contains("WARNING: the plan priced"), "{text}");
    // OCI's H100 bare metal over RoCE: the Network Operator's SR-IOV functions, one per RDMA
    // port, each attached through Multus.
    let oci = multi_node("oci", "H100");
    assert_eq!(oci.recommendations[0].instance_type, "BM.GPU.H100.8");
    assert!(oci.recommendations[0].nodes > 1);
    let text = exported(&oci, TrainingFlavour::IndexedJob);
    let vfs = ["rdma-vf"; 16].join(",");
    for needed in [
        "nvidia.com/rdma-vf: '16'",
        vfs.as_str(),
        "IPC_LOCK",
        "NVIDIA Network Operator",
        "NCCL_IB_GID_INDEX",
    ] {
        assert!(text.contains(needed), "{needed}: {text}");
    }
    assert!(!text.contains("WARNING: the plan priced"), "{text}");
    // A fabric whose devices the table does not count is named as missing, with the fix.
    let l40s = multi_node("oci", "L40S");
    assert!(l40s.recommendations[0].nodes > 1);
    let text = exported(&l40s, TrainingFlavour::IndexedJob);
    let warning = text
        .lines()
        .find(|l| l.starts_with("# WARNING: the plan priced"))
        .unwrap_or_else(|| panic!("{text}"));
    assert!(warning.contains("RoCE") && warning.contains('('), "{warning}");
}

/// Where the plan's machines can be told apart, the pods go there and nowhere else: spot plans
/// only to the cloud's spot nodes of the instance type (the price they were planned at), other
/// clouds' machines by their GPU, since their node labels do not carry the catalog's names.
#[test]
fn pods_are_placed_only_where_the_plan_priced_them() {
    let files = export("lora-one-node", ExportTarget::Kubernetes, TrainingFlavour::IndexedJob);
    let job = files.iter().map(document).find(|d| d["kind"] == "Job").unwrap();
    let terms = &job["spec"]["template"]["spec"]["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]
        ["nodeSelectorTerms"];
    assert_eq!(terms.as_array().unwrap().len(), 1, "{terms}");
    assert!(terms.to_string().contains("eks.amazonaws.com/capacityType"), "{terms}");
    let runpod = planned(
        json!({"model": "llama-3.1-8b", "task": "lora", "tokens": 5e8, "seq": 4096,
        "batch": 32, "providers": ["runpod"], "gpu": ["H100"]}),
    );
    let files = exported(&runpod, ExportTarget::Kubernetes, TrainingFlavour::IndexedJob);
    let text = stream(&files);
    assert!(!text.contains("node.kubernetes.io/instance-type"), "{text}");
    assert!(text.contains("nvidia.com/gpu.product"), "{text}");
    // The header says which component writes that label, since RunPod's nodes lack it.
    assert!(text.contains("GPU Feature Discovery"), "{text}");
    // On a cloud that labels its nodes, on demand too, only the planned instance type: not any
    // node with the same GPU at another price.
    let on_demand = planned(
        json!({"model": "llama-3.1-8b", "task": "lora", "tokens": 5e8, "seq": 4096,
        "batch": 32, "providers": ["aws"], "gpu": ["H100"], "billing": ["on-demand"]}),
    );
    let files = exported(&on_demand, ExportTarget::Kubernetes, TrainingFlavour::IndexedJob);
    let text = stream(&files);
    assert!(text.contains("node.kubernetes.io/instance-type"), "{text}");
    assert!(!text.contains("nvidia.com/gpu.product"), "{text}");
}

#[test]
fn a_spot_fleet_with_a_floor_exports_its_floor() {
    // A 24/7 service allowed reserved and spot: SkyServe keeps the floor on on-demand capacity
    // beside its spot replicas; Kubernetes, which one Deployment cannot split, runs every
    // replica off spot and says how to add the spot share.
    let mut options = gpuplan::PlanOptions::default();
    options.workload.model = "llama-3.1-8b".to_string();
    options.workload.task = "inference".to_string();
    options.workload.qps = Some(20.0);
    options.providers = vec!["gcp".to_string()];
    options.billing = vec!["on-demand".to_string(), "spot".to_string(), "reserved-1y".to_string()];
    let saved = saved_from(options);
    let pick = saved
        .recommendations
        .iter()
        .position(|r| r.serving.as_ref().is_some_and(|s| s.fleet.is_some()))
        .expect("a spot row")
        + 1;
    let settings = ExportSettings {
        pick,
        ..settings(TrainingFlavour::IndexedJob)
    };
    let sky = export_plan(catalog(), &saved, ExportTarget::SkyServe, &settings).unwrap();
    let service = &sky[0].yaml;
    assert!(service.contains("use_spot: true"), "{service}");
    assert!(service.contains("base_ondemand_fallback_replicas: 1"), "{service}");
    assert_valid_skypilot(&sky[0]);
    let k8s = export_plan(catalog(), &saved, ExportTarget::Kubernetes, &settings).unwrap();
    let all = stream(&k8s);
    assert!(
        !all.contains("cloud.google.com/gke-spot"),
        "the floor must not be pinned to spot"
    );
    assert!(all.contains("a spot fleet with a floor"), "{all}");
}

/// A plan made and saved as `plan --format json` would, with its request.
fn saved_from(options: gpuplan::PlanOptions) -> SavedPlan {
    let query = options.query().unwrap();
    let answer = gpuplan::plan_workload(catalog(), &query).unwrap().unwrap();
    let text = serde_json::to_string(&answer.wire(gpuplan::Naming::Keys)).unwrap();
    let mut saved = read_saved_plan(&text, "saved").unwrap();
    saved.request = Some(options);
    saved
}

#[test]
fn a_service_used_a_few_times_a_day_scales_to_zero_on_skyserve_only() {
    let mut options = gpuplan::PlanOptions::default();
    options.workload.model = "llama-3.1-8b".to_string();
    options.workload.task = "inference".to_string();
    options.workload.qps = Some(24.0 / 86_400.0);
    options.providers = vec!["aws".to_string()];
    let saved = saved_from(options);
    let settings = settings(TrainingFlavour::IndexedJob);
    let sky = export_plan(catalog(), &saved, ExportTarget::SkyServe, &settings).unwrap();
    assert!(sky[0].yaml.contains("min_replicas: 0"), "{}", sky[0].yaml);
    assert_valid_skypilot(&sky[0]);
    // A replica at zero exposes no engine metrics to wake it by: Kubernetes keeps one.
    let k8s = stream(&export_plan(catalog(), &saved, ExportTarget::Kubernetes, &settings).unwrap());
    assert!(k8s.contains("minReplicaCount: 1"), "{k8s}");
}

/// checkov's Kubernetes checks that do not apply to the files a GPU plan exports, each with
/// why. Every other check must pass.
const POLICY_CHECKS_NOT_APPLICABLE: [(&str, &str); 9] = [
    (
        "CKV_K8S_15",
        "images are pinned to release tags; pulling 10–20 GB on every start delays each scale-up",
    ),
    (
        "CKV_K8S_43",
        "images are pinned to release tags; their digests differ by registry and architecture",
    ),
    (
        "CKV_K8S_21",
        "the namespace is the one --namespace names, `default` unless given: a cluster's namespaces are its operators' choice",
    ),
    (
        "CKV_K8S_22",
        "the engines write kernel and compiler caches into the image's own paths",
    ),
    (
        "CKV_K8S_23",
        "the CUDA, ROCm and Neuron images run as root and keep their caches under it",
    ),
    ("CKV_K8S_40", "the same: the vendor images' user is root"),
    (
        "CKV_K8S_25",
        "IPC_LOCK is added only where RDMA (EFA, InfiniBand, TCPX) must pin memory, NET_ADMIN only to GKE's TCPX daemon, as Google's manifests do",
    ),
    (
        "CKV_K8S_35",
        "Hugging Face's libraries and vLLM read the token from HF_TOKEN",
    ),
    (
        "CKV2_K8S_6",
        "a NetworkPolicy depends on the cluster's CNI; NCCL needs every port between a job's pods",
    ),
];

/// The pod templates inside a JobSet (`replicatedJobs[].template.spec.template`) or a
/// PyTorchJob (`pytorchReplicaSpecs.*.template`), each in a Job, as the batch pods they are.
fn custom_pod_templates(object: &Value) -> Vec<Value> {
    let templates: Vec<&Value> = match object["kind"].as_str() {
        Some("JobSet") => object["spec"]["replicatedJobs"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|job| &job["template"]["spec"]["template"])
            .collect(),
        Some("PyTorchJob") => object["spec"]["pytorchReplicaSpecs"]
            .as_object()
            .into_iter()
            .flat_map(|specs| specs.values())
            .map(|spec| &spec["template"])
            .collect(),
        _ => Vec::new(),
    };
    templates
        .into_iter()
        .map(|template| {
            let metadata = json!({"name": object["metadata"]["name"], "namespace": object["metadata"]["namespace"]});
            json!({"apiVersion": "batch/v1", "kind": "Job", "metadata": metadata, "spec": {"template": template}})
        })
        .collect()
}

/// Beyond the schemas, the exported objects pass a Kubernetes policy checker (checkov, which
/// CI installs): no privilege escalation, no capability beyond those a fabric needs, the
/// runtime's seccomp profile, no service-account token, CPU and memory limits. Training (one
/// node, multi-node over EFA in every flavour), serving, and AMD's and Neuron's exports.
#[test]
fn exports_pass_a_kubernetes_policy_checker() {
    let dir = std::env::temp_dir().join(format!("gpuplan-policy-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let mut plans: Vec<(String, SavedPlan)> = ["lora-one-node", "finetune-multi-node", "serving"]
        .iter()
        .map(|name| (name.to_string(), plan(name)))
        .collect();
    for (name, request) in [
        (
            "efa",
            json!({"model": "llama-3.1-70b", "task": "finetune", "tokens": 2e9, "seq": 4096,
                       "providers": ["aws"], "gpu": ["H100"], "max_gpus": 32, "objective": "time"}),
        ),
        (
            "gke-tcpx",
            json!({"model": "llama-3.1-70b", "task": "finetune", "tokens": 2e9, "seq": 4096,
                       "providers": ["gcp"], "gpu": ["H100"], "max_gpus": 32, "objective": "time"}),
        ),
        (
            "oci-roce",
            json!({"model": "llama-3.1-70b", "task": "finetune", "tokens": 2e9, "seq": 4096,
                       "providers": ["oci"], "gpu": ["H100"], "max_gpus": 32, "objective": "time"}),
        ),
        (
            "rocm",
            json!({"model": "llama-3.1-8b", "task": "inference", "qps": 10, "gpu": ["MI300X"]}),
        ),
        (
            "neuron",
            json!({"model": "llama-3.1-8b", "task": "lora", "tokens": 5e8, "seq": 4096, "batch": 32, "gpu": ["Trainium"]}),
        ),
        (
            "tpu",
            json!({"model": "llama-3.1-8b", "task": "lora", "tokens": 5e8, "seq": 4096, "batch": 32,
                   "gpu": ["TPU-v5e"], "objective": "time"}),
        ),
    ] {
        plans.push((name.to_string(), planned(request)));
    }
    let mut written = 0;
    for (name, saved) in &plans {
        for flavour in [
            TrainingFlavour::IndexedJob,
            TrainingFlavour::JobSet,
            TrainingFlavour::PyTorchJob,
        ] {
            let Ok(files) = export_plan(catalog(), saved, ExportTarget::Kubernetes, &settings(flavour)) else {
                assert!(
                    name == "tpu" && flavour == TrainingFlavour::PyTorchJob,
                    "{name} {flavour:?}"
                );
                continue;
            };
            for file in files {
                let path = dir.join(format!("{name}-{flavour:?}-{}", file.name));
                std::fs::write(path, &file.yaml).unwrap();
                written += 1;
                // checkov reads the pods of built-in kinds only: a JobSet's or PyTorchJob's pod
                // templates are checked inside Jobs.
                for (index, pod) in custom_pod_templates(&document(&file)).into_iter().enumerate() {
                    let path = dir.join(format!("{name}-{flavour:?}-pod-{index}-{}", file.name));
                    std::fs::write(path, serde_yaml_ng::to_string(&pod).unwrap()).unwrap();
                }
            }
        }
    }
    let skips: Vec<&str> = POLICY_CHECKS_NOT_APPLICABLE.iter().map(|(id, _)| *id).collect();
    let run = std::process::Command::new("python3")
        .args(["-m", "checkov.main", "--framework", "kubernetes", "--output", "json"])
        // Offline: checkov otherwise asks its vendor's service for guideline links first.
        .arg("--skip-download")
        .args(["--skip-check", &skips.join(",")])
        .arg("--directory")
        .arg(&dir)
        .output();
    std::fs::remove_dir_all(&dir).ok();
    let missing = match &run {
        Err(_) => true,
        Ok(out) => String::from_utf8_lossy(&out.stderr).contains("No module named checkov"),
    };
    if missing {
        assert!(std::env::var_os("CI").is_none(), "CI installs checkov (.ci/run)");
        eprintln!("skipped: python3 with checkov is not installed");
        return;
    }
    let out = run.unwrap();
    let report: Value =
        serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&out.stderr)));
    let summary = &report["summary"];
    let failed: Vec<String> = report["results"]["failed_checks"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|c| format!("{} {} in {}", c["check_id"], c["check_name"], c["file_path"]))
        .collect();
    assert!(failed.is_empty(), "{failed:#?}");
    // It did look: every Deployment, Job and claim of the files written.
    assert!(written >= 30, "{written} files");
    assert!(summary["passed"].as_u64().unwrap_or(0) >= 200, "{summary}");
    assert!(summary["resource_count"].as_u64().unwrap_or(0) >= 20, "{summary}");
    // And inside the JobSets and PyTorchJobs.
    let inside_custom = report["results"]["passed_checks"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|c| c["file_path"].as_str().is_some_and(|p| p.contains("-pod-")))
        .count();
    assert!(
        inside_custom >= 100,
        "{inside_custom} checks passed on JobSet and PyTorchJob pods"
    );
}

/// A service planned on one node that the autoscaler may grow beyond it shares its model
/// cache across nodes; one that never leaves its node keeps a single-node volume.
#[test]
fn the_model_cache_is_shared_once_the_autoscaler_may_leave_the_node() {
    let mut saved = plan("serving");
    let chosen = &mut saved.recommendations[0];
    let per_node = chosen.gpus_per_node;
    let gpus_per_replica = chosen.serving.as_ref().unwrap().gpus_per_replica;
    chosen.nodes = 1;
    chosen.gpus = per_node;
    let access = |saved: &SavedPlan| {
        let files = exported(saved, ExportTarget::Kubernetes, TrainingFlavour::IndexedJob);
        let cache = document(files.iter().find(|f| f.name == "model-cache.yaml").unwrap());
        cache["spec"]["accessModes"][0].as_str().unwrap().to_string()
    };
    let fits = per_node / gpus_per_replica;
    let serving = saved.recommendations[0].serving.as_mut().unwrap();
    (serving.replicas, serving.min_replicas, serving.max_replicas) = (1, 1, fits);
    assert_eq!(access(&saved), "ReadWriteOnce");
    saved.recommendations[0].serving.as_mut().unwrap().max_replicas = fits + 1;
    assert_eq!(access(&saved), "ReadWriteMany");
}

/// A Cloud TPU slice runs as GKE makes it: a v5e slice of more than eight chips is nodes of
/// four chips selected by the slice's accelerator and topology labels (not by an instance
/// type no node carries), the script started on every host by PyTorch/XLA (not torchrun);
/// SkyPilot names the slice as one accelerator and picks its TPU VMs itself.
#[test]
fn a_tpu_slice_runs_on_its_gke_hosts_and_as_skypilots_tpu() {
    let saved = planned(
        json!({"model": "llama-3.1-8b", "task": "lora", "tokens": 5e8, "seq": 4096, "batch": 32,
        "gpu": ["TPU-v5e"], "objective": "time"}),
    );
    let chosen = &saved.recommendations[0];
    let chips = chosen.gpus;
    assert!(
        chips > 8,
        "a multi-host slice: {} ({chips} chips)",
        chosen.instance_type
    );
    let (files, job) = indexed_job(&saved);
    assert_eq!(job["spec"]["completions"], chips / 4, "one pod per four-chip host");
    let pod = &job["spec"]["template"]["spec"];
    let container = &pod["containers"][0];
    assert_eq!(container["resources"]["limits"]["google.com/tpu"], "4");
    assert_eq!(container["command"][0], "python3");
    let text = stream(&files);
    for needle in [
        "cloud.google.com/gke-tpu-accelerator",
        "tpu-v5-lite-podslice",
        "cloud.google.com/gke-tpu-topology",
        "PJRT_DEVICE",
    ] {
        assert!(text.contains(needle), "{needle}: {text}");
    }
    assert!(
        !text.contains("torchrun") && !text.contains("node.kubernetes.io/instance-type"),
        "{text}"
    );
    assert_eq!(
        pod["subdomain"], job["metadata"]["name"],
        "GKE names the TPU workers through the subdomain"
    );
    // The operator's torchrun launch cannot drive a multi-host slice.
    let refused = export_plan(
        catalog(),
        &saved,
        ExportTarget::Kubernetes,
        &settings(TrainingFlavour::PyTorchJob),
    );
    assert!(refused.is_err_and(|e| e.to_string().contains("jobset")));
    let sky = exported(&saved, ExportTarget::SkyPilot, TrainingFlavour::IndexedJob);
    assert_valid_skypilot(&sky[0]);
    let task = document(&sky[0]);
    let first = &task["resources"]["ordered"][0];
    assert_eq!(first["accelerators"], format!("tpu-{}", chosen.instance_type));
    assert!(first["instance_type"].is_null(), "{first}");
    assert_eq!(first["accelerator_args"]["runtime_version"], "v2-alpha-tpuv5-lite");
    assert!(
        task["num_nodes"].is_null(),
        "SkyPilot runs a pod slice's hosts as one node"
    );
    assert!(!sky[0].yaml.contains("torchrun"), "{}", sky[0].yaml);
}

/// The other TPU generations export the same way with their own GKE shapes: a v5p slice is a
/// three-dimensional topology of four-chip hosts labelled `tpu-v5p-slice`, and SkyPilot gets
/// the slice by its TensorCore-counted name with the runtime Google names for v5p.
#[test]
fn a_tpu_v5p_slice_runs_on_its_three_dimensional_topology() {
    let saved = planned(
        json!({"model": "llama-3.1-8b", "task": "lora", "tokens": 5e8, "seq": 4096, "batch": 32,
        "gpu": ["TPU-v5p"], "objective": "time"}),
    );
    let chosen = &saved.recommendations[0];
    let (files, job) = indexed_job(&saved);
    assert_eq!(
        job["spec"]["completions"],
        chosen.gpus / 4,
        "one pod per four-chip host"
    );
    let text = stream(&files);
    assert!(text.contains("tpu-v5p-slice"), "{text}");
    let topology = text
        .lines()
        .skip_while(|l| !l.contains("cloud.google.com/gke-tpu-topology"))
        .skip(1)
        .find(|l| l.trim_start().starts_with("- "))
        .unwrap();
    assert_eq!(topology.matches('x').count(), 2, "a 3D topology: {topology}");
    let sky = exported(&saved, ExportTarget::SkyPilot, TrainingFlavour::IndexedJob);
    let task = document(&sky[0]);
    let first = &task["resources"]["ordered"][0];
    assert_eq!(first["accelerators"], format!("tpu-{}", chosen.instance_type));
    assert_eq!(first["accelerator_args"]["runtime_version"], "v2-alpha-tpuv5");
}

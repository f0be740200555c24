//! The API as a client sees it, in process (no socket): every route, and every way a request
//! body can be wrong, answered with the CLI's JSON or a problem+json with the CLI's exit code.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use axum::body::Body;
use axum::http::{Request, StatusCode, header};
use gpuplan_server::{AppState, MAX_BODY_BYTES, app};
use http_body_util::BodyExt;
use serde_json::{Value, json};
use std::sync::OnceLock;
use tower::ServiceExt;

fn state() -> AppState {
    static STATE: OnceLock<AppState> = OnceLock::new();
    STATE
        .get_or_init(|| AppState::new(gpuplan::Catalog::embedded().unwrap()))
        .clone()
}

struct Answer {
    status: StatusCode,
    content_type: String,
    body: Vec<u8>,
}

impl Answer {
    fn json(&self) -> Value {
        serde_json::from_slice(&self.body).unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&self.body)))
    }

    fn text(&self) -> String {
        String::from_utf8_lossy(&self.body).into_owned()
    }

    /// A problem+json answer: its status member matches, its exit code is the CLI's.
    fn problem(&self, status: StatusCode, exit_code: u64) -> Value {
        assert_eq!(self.status, status, "{}", self.text());
        assert_eq!(self.content_type, "application/problem+json");
        let problem = self.json();
        assert_eq!(problem["status"], status.as_u16());
        assert_eq!(problem["exit_code"], exit_code);
        // Every problem names its row of the one code table, which fixes status and exit code.
        let code = problem["code"].as_str().unwrap_or_else(|| panic!("no code: {problem}"));
        let row = gpuplan::ErrorCode::ALL
            .into_iter()
            .find(|c| c.as_str() == code)
            .unwrap_or_else(|| panic!("unknown code {code}"));
        assert_eq!(
            (row.http_status(), row.exit_status() as u64),
            (status.as_u16(), exit_code)
        );
        problem
    }
}

async fn send(request: Request<Body>) -> Answer {
    let response = app(state()).oneshot(request).await.unwrap();
    let status = response.status();
    let content_type = response
        .headers()
        .get(header::CONTENT_TYPE)
        .map_or(String::new(), |v| v.to_str().unwrap().to_string());
    let body = response.into_body().collect().await.unwrap().to_bytes().to_vec();
    Answer {
        status,
        content_type,
        body,
    }
}

/// The OpenAPI document as the server serves it.
async fn openapi() -> Value {
    static DOCUMENT: tokio::sync::OnceCell<Value> = tokio::sync::OnceCell::const_new();
    DOCUMENT
        .get_or_init(|| async { get("/openapi.json").await.json() })
        .await
        .clone()
}

/// Checks `value` against the component `schema` of the served OpenAPI document.
async fn conforms(value: &Value, schema: &str) {
    let mut root = openapi().await;
    root["$ref"] = json!(format!("#/components/schemas/{schema}"));
    let validator = jsonschema::validator_for(&root).unwrap();
    let errors: Vec<String> = validator
        .iter_errors(value)
        .map(|e| format!("{} at {}", e, e.instance_path))
        .collect();
    assert!(errors.is_empty(), "{schema}: {errors:#?}");
}

/// Checks `value` against the array of `schema` items.
async fn conforms_each(value: &Value, schema: &str) {
    for item in value.as_array().unwrap() {
        conforms(item, schema).await;
    }
}

async fn get(path: &str) -> Answer {
    send(Request::get(path).body(Body::empty()).unwrap()).await
}

async fn post(path: &str, body: impl Into<Body>) -> Answer {
    send(
        Request::post(path)
            .header(header::CONTENT_TYPE, "application/json")
            .body(body.into())
            .unwrap(),
    )
    .await
}

#[tokio::test]
async fn health_readiness_and_metrics() {
    assert_eq!(get("/healthz").await.text(), "ok\n");
    assert!(get("/readyz").await.text().starts_with("ready: "));
    let _ = get("/api/v1/models").await;
    let metrics = get("/metrics").await;
    assert!(metrics.content_type.starts_with("text/plain"));
    let text = metrics.text();
    assert!(text.contains("# TYPE gpuplan_http_requests_total counter"), "{text}");
    assert!(
        text.contains("gpuplan_http_requests_total{route=\"/api/v1/models\",status=\"200\"}"),
        "{text}"
    );
    assert!(text.contains("gpuplan_http_request_duration_seconds_bucket{route=\"/api/v1/models\",le=\"+Inf\"}"));
}

#[tokio::test]
async fn catalog_reads_answer_with_the_cli_json() {
    let gpus = get("/api/v1/gpus").await.json();
    assert!(gpus.as_array().unwrap().len() > 40);
    conforms_each(&gpus, "GpuJson").await;
    let h100 = get("/api/v1/gpus/H100").await.json();
    assert_eq!(h100["id"], "H100-SXM5-80GB", "{h100}");
    conforms(&h100, "GpuJson").await;
    // A GPU the path names and the catalog lacks is not found.
    let problem = get("/api/v1/gpus/nosuch").await.problem(StatusCode::NOT_FOUND, 2);
    assert!(problem["detail"].as_str().unwrap().contains("nosuch"), "{problem}");
    assert_eq!(problem["code"], "not_found");
    let typo = get("/api/v1/gpus/h1OO").await;
    assert!(
        typo.status == StatusCode::NOT_FOUND || typo.status == StatusCode::OK,
        "{}",
        typo.text()
    );
    conforms(&problem, "ProblemJson").await;
    let models = get("/api/v1/models").await.json();
    assert!(models.as_array().unwrap().iter().any(|m| m["id"] == "llama-3.1-8b"));
    conforms_each(&models, "ModelSummaryJson").await;
    let h100s = get("/api/v1/instances?gpu=H100&provider=aws,gcp&max_price=100")
        .await
        .json();
    let rows = h100s.as_array().unwrap();
    assert!(!rows.is_empty());
    assert!(
        rows.iter().all(|r| r["provider"] == "aws" || r["provider"] == "gcp"),
        "{h100s}"
    );
    conforms_each(&h100s, "InstanceJson").await;
    get("/api/v1/instances?sort=cheapest")
        .await
        .problem(StatusCode::BAD_REQUEST, 2);
    let many = get("/api/v1/instances?min_gpus=many")
        .await
        .problem(StatusCode::BAD_REQUEST, 2);
    let detail = many["detail"].as_str().unwrap();
    assert!(
        detail.starts_with("the query parameters do not fit the request") && detail.contains("min_gpus"),
        "{detail}"
    );
    get("/api/v1/instances?gpus=8")
        .await
        .problem(StatusCode::BAD_REQUEST, 2);
    let catalog = get("/api/v1/catalog").await.json();
    assert!(catalog.to_string().contains("aws"), "{catalog}");
    conforms(&catalog, "CatalogSummaryJson").await;
}

#[tokio::test]
async fn an_estimate_is_the_cli_estimate() {
    let body = json!({"model": "llama-3.1-8b", "task": "lora", "gpu": "H100", "seq": 4096, "batch": 8});
    let answer = post("/api/v1/estimate", body.to_string()).await;
    assert_eq!(answer.status, StatusCode::OK, "{}", answer.text());
    let estimate = answer.json();
    assert_eq!(estimate["gpu"]["id"], "H100-SXM5-80GB");
    assert_eq!(estimate["workload"]["seq"], 4096);
    assert!(estimate["memory"]["per_gpu_bytes"].as_u64().unwrap() > 16_000_000_000);
    assert!(estimate["training"]["tokens_per_second"].as_f64().unwrap() > 0.0);
    // What was chosen for the request names its JSON key, as a line and as a record.
    let lines = estimate["defaults"].to_string();
    assert!(lines.contains("`lora_rank` = 16"), "{lines}");
    assert!(!lines.contains("--"), "{lines}");
    let rank = estimate["defaulted"]
        .as_array()
        .unwrap()
        .iter()
        .find(|d| d["field"] == "lora_rank");
    assert_eq!(rank.map(|d| d["value"].clone()), Some(json!("16")));
    conforms(&estimate, "EstimateJson").await;
    conforms(&body, "EstimateOptions").await;
    // Serving, with its load report.
    let body = json!({"model": "llama-3.1-8b", "task": "inference", "gpu": "H100", "qps": 2.0,
                      "ttft": {"seconds": 1.0, "percentile": 90.0}});
    let serving = post("/api/v1/estimate", body.to_string()).await;
    assert_eq!(serving.status, StatusCode::OK, "{}", serving.text());
    conforms(&serving.json(), "EstimateJson").await;
    // The engine's release, scheduler knobs and a closed loop are the same fields the job files
    // take, and the answer says which were in force.
    let body = json!({"model": "llama-3.1-8b", "task": "inference", "gpu": "H100", "engine": "vllm@0.6",
                      "max_num_seqs": 64, "concurrency": 32, "gpu_memory_fraction": 0.95,
                      "tpot": {"seconds": 0.05, "percentile": 90.0}});
    let knobs = post("/api/v1/estimate", body.to_string()).await;
    assert_eq!(knobs.status, StatusCode::OK, "{}", knobs.text());
    let report = &knobs.json()["serving"];
    assert_eq!(report["max_concurrent_sequences"], 64.0);
    assert_eq!(report["closed_loop"]["users"], 32.0);
    assert!(report["scheduler"].as_str().unwrap().contains("vllm 0.6"), "{report}");
    assert!(
        report["scheduler"]
            .as_str()
            .unwrap()
            .contains("95 % of the GPU's memory"),
        "{report}"
    );
    conforms(&body, "EstimateOptions").await;
    let typo = json!({"model": "llama-3.1-8b", "task": "inference", "gpu": "H100", "max_num_seq": 64});
    assert_eq!(
        post("/api/v1/estimate", typo.to_string()).await.status,
        StatusCode::BAD_REQUEST
    );
    // A chip whose software does not train is refused in the API's words (its JSON field).
    let inference_only = json!({"model": "llama-3.1-8b", "task": "lora", "gpu": "Inferentia2"});
    let problem = post("/api/v1/estimate", inference_only.to_string())
        .await
        .problem(StatusCode::BAD_REQUEST, 2);
    let detail = problem["detail"].as_str().unwrap();
    assert!(
        detail.contains("`gpu` Inferentia2 cannot run this workload") && !detail.contains("--gpu"),
        "{problem}"
    );
}

/// Overlapping a mixture of experts' all-to-alls is the same knob in the API as on the command
/// line: the answer's layout carries it, and a request it does not apply to is refused in the
/// API's words.
#[tokio::test]
async fn the_expert_overlap_is_a_field_of_the_layout() {
    let body = json!({"model": "qwen3-235b-a22b", "task": "pretrain", "gpu": "H100", "gpus": 256,
                      "tp": 2, "pp": 8, "vp": 4, "ep": 32, "seq": 4096, "batch": 2048, "micro_batch": 1,
                      "precision": "fp8", "framework": "megatron", "ep_overlap": true});
    let answer = post("/api/v1/estimate", body.to_string()).await;
    assert_eq!(answer.status, StatusCode::OK, "{}", answer.text());
    let estimate = answer.json();
    assert_eq!(estimate["workload"]["layout"]["ep_overlap"], true);
    assert_eq!(estimate["workload"]["layout"]["vp"], 4);
    conforms(&estimate, "EstimateJson").await;
    conforms(&body, "EstimateOptions").await;
    let dense = json!({"model": "llama-3.1-8b", "task": "pretrain", "gpu": "H100", "gpus": 8, "ep_overlap": true});
    let problem = post("/api/v1/estimate", dense.to_string())
        .await
        .problem(StatusCode::BAD_REQUEST, 2);
    assert_eq!(
        (&problem["code"], &problem["field"]),
        (&json!("not_applicable"), &json!("ep_overlap"))
    );
    let text = format!("{} {}", problem["detail"], problem["hint"]);
    assert!(
        text.contains("`ep_overlap`") && text.contains("`ep`") && !text.contains("--"),
        "{problem}"
    );
}

#[tokio::test]
async fn a_plan_ranks_offerings_and_an_impossible_one_says_why() {
    let body = json!({"model": "llama-3.1-8b", "task": "lora", "tokens": 5e8, "seq": 4096, "batch": 32, "top": 3});
    let answer = post("/api/v1/plan", body.to_string()).await;
    assert_eq!(answer.status, StatusCode::OK, "{}", answer.text());
    let plan = answer.json();
    assert!(!plan["recommendations"].as_array().unwrap().is_empty());
    conforms(&plan, "PlanJson").await;
    conforms(&body, "PlanOptions").await;
    // A 70B model cannot be fine-tuned in full on one 24 GB GPU.
    let body = json!({"model": "llama-3.1-70b", "task": "finetune", "tokens": 1e8,
                      "gpu": ["RTX-4090"], "max_gpus": 1});
    let problem = post("/api/v1/plan", body.to_string())
        .await
        .problem(StatusCode::UNPROCESSABLE_ENTITY, 1);
    assert_eq!(problem["report"]["feasible"], false, "{problem}");
    conforms(&problem, "ProblemJson").await;
    conforms(&problem["report"], "InfeasibleJson").await;
}

#[tokio::test]
async fn the_plan_knobs_of_the_command_line_are_api_fields_with_the_same_limits() {
    // `--tolerance` and `--max-hourly-price` are `tolerance` and `max_hourly_price` here.
    let body = json!({"model": "llama-3.1-8b", "task": "lora", "tokens": 1e8, "top": 3,
                      "tolerance": 0.0, "max_hourly_price": 2.0});
    let answer = post("/api/v1/plan", body.to_string()).await;
    assert_eq!(answer.status, StatusCode::OK, "{}", answer.text());
    let plan = answer.json();
    for r in plan["recommendations"].as_array().unwrap() {
        assert!(r["hourly_usd"].as_f64().unwrap() <= 2.0, "{r}");
    }
    conforms(&body, "PlanOptions").await;
    let problem = post(
        "/api/v1/plan",
        json!({"model": "llama-3.1-8b", "task": "lora", "tokens": 1e8, "tolerance": 2}).to_string(),
    )
    .await
    .problem(StatusCode::BAD_REQUEST, 2);
    assert!(
        problem.to_string().contains("`tolerance` 2 is outside 0 to 1"),
        "{problem}"
    );
}

#[tokio::test]
async fn a_cost_prices_each_billing_mode_with_the_spot_model() {
    let body = json!({"gpu": "H100", "gpus": 8, "providers": ["aws"], "hours": 200, "billing": ["on-demand", "spot"],
                      "checkpoint_minutes": 30, "restart": 480, "storage_gb": 500});
    let answer = post("/api/v1/cost", body.to_string()).await;
    assert_eq!(answer.status, StatusCode::OK, "{}", answer.text());
    let cost = answer.json();
    let lines = cost["lines"].as_array().unwrap();
    assert_eq!(lines.len(), 2, "{cost}");
    assert_eq!(lines[0]["billing"], "on-demand");
    assert!(lines[1]["spot"]["expected_wall_hours"].as_f64().unwrap() > 200.0);
    assert!(lines[0]["storage_usd"].as_f64().unwrap() > 0.0);
    conforms(&cost, "CostAnswer").await;
    conforms(&body, "CostOptions").await;
    // A restart time means nothing without the spot model: refused, as on the command line.
    let problem = post(
        "/api/v1/cost",
        json!({"gpu": "H100", "gpus": 8, "hours": 1, "restart": 60}).to_string(),
    )
    .await
    .problem(StatusCode::BAD_REQUEST, 2);
    assert!(
        problem["detail"].as_str().unwrap().starts_with("`restart`"),
        "{problem}"
    );
    post("/api/v1/cost", json!({"gpu": "H100", "hourz": 1}).to_string())
        .await
        .problem(StatusCode::UNPROCESSABLE_ENTITY, 2);
}

#[tokio::test]
async fn energy_counts_kilowatt_hours_and_rent_against_buy() {
    let body = json!({"gpu": "H100", "gpus": 8, "hours": 1000, "pue": 1.3, "utilisation": 0.7,
                      "price_kwh": 0.12, "purchase_price": 250000, "rent_price": 25});
    let answer = post("/api/v1/energy", body.to_string()).await;
    assert_eq!(answer.status, StatusCode::OK, "{}", answer.text());
    let energy = answer.json();
    // 8 × 700 W × 0.7 × 1.8 (the rest of the server) × 1.3 × 1000 h = 9,173 kWh.
    assert!((energy["kwh"].as_f64().unwrap() - 5096.0 * 1.8).abs() < 1.0, "{energy}");
    assert!(energy["rent_or_buy"]["break_even_hours_per_year"].is_number());
    conforms(&energy, "EnergyAnswer").await;
    conforms(&body, "EnergyOptions").await;
    post(
        "/api/v1/energy",
        json!({"gpu": "H100", "hours": 10, "pue": 0.5}).to_string(),
    )
    .await
    .problem(StatusCode::BAD_REQUEST, 2);
}

/// Twelve weeks of weekday-heavy usage, as CSV text or as JSON records.
fn weekly_history() -> (String, Vec<Value>) {
    let mut csv = "timestamp,value\n".to_string();
    let mut records = Vec::new();
    let start = jiff::civil::date(2024, 1, 1);
    for day in 0..84_i64 {
        let date = start.checked_add(jiff::Span::new().days(day)).unwrap();
        let value = if day % 7 < 5 { 400.0 + day as f64 } else { 120.0 };
        csv.push_str(&format!("{date},{value}\n"));
        records.push(json!({"timestamp": date.to_string(), "value": value}));
    }
    (csv, records)
}

#[tokio::test]
async fn a_forecast_takes_csv_or_records_and_sizes_a_commitment() {
    let (csv, records) = weekly_history();
    let body = json!({"history": csv, "horizon": 14, "on_demand_price": 2.5});
    let answer = post("/api/v1/forecast", body.to_string()).await;
    assert_eq!(answer.status, StatusCode::OK, "{}", answer.text());
    let forecast = answer.json();
    assert_eq!(forecast["forecast"].as_array().unwrap().len(), 14);
    assert_eq!(forecast["history"].as_array().unwrap().len(), 84);
    assert_eq!(forecast["frequency"], "daily");
    assert!(
        forecast["commitment"]["reserved_gpus"].as_u64().unwrap() > 0,
        "{forecast}"
    );
    conforms(&forecast, "ForecastAnswer").await;
    conforms(&body, "ForecastOptions").await;
    let same = post(
        "/api/v1/forecast",
        json!({"history": records, "horizon": 14, "on_demand_price": 2.5}).to_string(),
    )
    .await;
    assert_eq!(same.json()["forecast"], forecast["forecast"]);
    let problem = post("/api/v1/forecast", json!({"history": "timestamp,value\n"}).to_string())
        .await
        .problem(StatusCode::BAD_REQUEST, 2);
    assert!(problem["detail"].as_str().unwrap().starts_with("history"), "{problem}");
}

#[tokio::test]
async fn bad_bodies_are_problems_never_server_errors() {
    let cases: [(&str, StatusCode); 6] = [
        (
            r#"{"model": "llama-3.1-8b", "task": "lora", "gpu": "H100""#,
            StatusCode::BAD_REQUEST,
        ),
        (r#"[1, 2, 3]"#, StatusCode::UNPROCESSABLE_ENTITY),
        (
            r#"{"model": "llama-3.1-8b", "task": "lora", "gpu": "H100", "seq": "long"}"#,
            StatusCode::UNPROCESSABLE_ENTITY,
        ),
        (
            r#"{"model": "llama-3.1-8b", "task": "lora", "gpu": "H100", "seq": -1}"#,
            StatusCode::UNPROCESSABLE_ENTITY,
        ),
        (
            r#"{"model": "llama-3.1-8b", "task": "lora", "gpu": "H100", "sequence": 4}"#,
            StatusCode::BAD_REQUEST,
        ),
        (
            r#"{"model": "llama-3.1-8b", "task": "sing", "gpu": "H100"}"#,
            StatusCode::BAD_REQUEST,
        ),
    ];
    for (body, status) in cases {
        let problem = post("/api/v1/estimate", body).await.problem(status, 2);
        let detail = problem["detail"].as_str().unwrap();
        assert!(!detail.is_empty(), "{body}");
        // The API's own words, not the web framework's.
        assert!(!detail.contains("Failed to"), "{detail}");
    }
    let truncated = post("/api/v1/estimate", r#"{"model": "llama-3.1-8b""#)
        .await
        .problem(StatusCode::BAD_REQUEST, 2);
    assert!(
        truncated["detail"]
            .as_str()
            .unwrap()
            .starts_with("the body is not valid JSON: EOF while parsing"),
        "{truncated}"
    );
    let wrong = post(
        "/api/v1/estimate",
        r#"{"model": "llama-3.1-8b", "task": "lora", "gpu": "H100", "seq": "long"}"#,
    )
    .await
    .problem(StatusCode::UNPROCESSABLE_ENTITY, 2);
    let detail = wrong["detail"].as_str().unwrap();
    assert!(
        detail.starts_with("the JSON does not fit the request: invalid type: string \"long\""),
        "{detail}"
    );
    let unknown = post(
        "/api/v1/estimate",
        r#"{"model": "x", "task": "lora", "gpu": "H100", "sequence": 4}"#,
    )
    .await
    .json();
    assert_eq!(unknown["detail"], "unknown field `sequence`");
}

#[tokio::test]
async fn wrong_media_huge_bodies_and_unknown_routes_are_refused() {
    let plain = send(
        Request::post("/api/v1/plan")
            .header(header::CONTENT_TYPE, "text/plain")
            .body(Body::from("{}"))
            .unwrap(),
    )
    .await;
    let media = plain.problem(StatusCode::UNSUPPORTED_MEDIA_TYPE, 2);
    assert!(
        media["detail"]
            .as_str()
            .unwrap()
            .contains("Content-Type: application/json"),
        "{media}"
    );
    let huge = format!(r#"{{"model": "{}", "task": "lora"}}"#, "x".repeat(MAX_BODY_BYTES));
    post("/api/v1/plan", huge)
        .await
        .problem(StatusCode::PAYLOAD_TOO_LARGE, 2);
    get("/api/v1/nothing").await.problem(StatusCode::NOT_FOUND, 2);
}

#[tokio::test]
async fn every_answer_carries_a_request_id() {
    let response = app(state())
        .oneshot(Request::get("/healthz").body(Body::empty()).unwrap())
        .await
        .unwrap();
    assert!(response.headers().contains_key("x-request-id"));
}

/// The document covers every route the server answers, in OpenAPI 3.1, and the reference page
/// that renders it is served without anything from elsewhere.
#[tokio::test]
async fn the_openapi_document_lists_every_route() {
    let document = openapi().await;
    assert_eq!(document["openapi"], "3.1.0");
    for path in [
        "/healthz",
        "/readyz",
        "/metrics",
        "/api/v1/gpus",
        "/api/v1/gpus/{name}",
        "/api/v1/instances",
        "/api/v1/models",
        "/api/v1/catalog",
        "/api/v1/estimate",
        "/api/v1/plan",
        "/api/v1/cost",
        "/api/v1/energy",
        "/api/v1/forecast",
    ] {
        assert!(document["paths"].get(path).is_some(), "{path}");
    }
    let page = get("/docs").await;
    assert!(page.content_type.starts_with("text/html"));
    let html = page.text();
    assert!(html.contains("/openapi.json"));
    assert!(!html.contains("https://"), "the page loads nothing from elsewhere");
}

/// The check above can fail: a GPU whose id is a number, or a plan without its
/// recommendations, is not what the document describes.
#[tokio::test]
async fn the_schemas_refuse_what_the_api_never_answers() {
    let mut root = openapi().await;
    root["$ref"] = json!("#/components/schemas/GpuJson");
    let gpu = jsonschema::validator_for(&root).unwrap();
    let mut h100 = get("/api/v1/gpus/H100").await.json();
    assert!(gpu.is_valid(&h100));
    h100["id"] = json!(5);
    assert!(!gpu.is_valid(&h100));
    root["$ref"] = json!("#/components/schemas/PlanJson");
    let plan = jsonschema::validator_for(&root).unwrap();
    assert!(!plan.is_valid(&json!({"cheapest": 0})));
}

/// A repeated request is answered from the kept answers, identically; a request with a field
/// no option claims is refused even when the same request without it was answered before.
#[tokio::test]
async fn repeated_requests_get_the_same_answer() {
    let body = json!({"model": "llama-3.1-8b", "task": "lora", "tokens": 2e8, "seq": 1024, "batch": 16, "top": 2});
    let first = post("/api/v1/plan", body.to_string()).await;
    let second = post("/api/v1/plan", body.to_string()).await;
    assert_eq!(first.status, StatusCode::OK);
    assert_eq!(first.body, second.body);
    let mut typo = body.clone();
    typo["tokenz"] = json!(1);
    post("/api/v1/plan", typo.to_string())
        .await
        .problem(StatusCode::BAD_REQUEST, 2);
}

/// A calibration travels inline in the options, as `probe --calibration-out` writes it.
#[tokio::test]
async fn an_estimate_on_a_calibrated_gpu_follows_the_measurement() {
    let body = json!({"model": "llama-3.1-8b", "task": "lora", "gpu": "H100", "seq": 2048, "batch": 8});
    let datasheet = post("/api/v1/estimate", body.to_string()).await.json();
    let mut calibrated = body.clone();
    calibrated["calibration"] = json!({
        "measured_on": "driver 550.54.15, 1× NVIDIA H100 80GB HBM3",
        "method": "example",
        "gpus": [{"gpu": "H100-SXM5-80GB", "compute": {"bf16": 0.5}, "compute_other": 0.5,
                  "memory_bandwidth": 1.0, "evidence": [], "sources": []}]
    });
    let answer = post("/api/v1/estimate", calibrated.to_string()).await;
    assert_eq!(answer.status, StatusCode::OK, "{}", answer.text());
    let answer = answer.json();
    let rate = |e: &Value| e["training"]["tokens_per_second"].as_f64().unwrap();
    assert!((rate(&answer) / rate(&datasheet) - 0.5).abs() < 0.01);
    assert!(
        answer["assumptions"]
            .to_string()
            .contains("calibrated on driver 550.54.15")
    );
    conforms(&calibrated, "EstimateOptions").await;
    // A GPU the catalog does not know is bad input.
    calibrated["calibration"]["gpus"][0]["gpu"] = json!("H900");
    post("/api/v1/estimate", calibrated.to_string())
        .await
        .problem(StatusCode::BAD_REQUEST, 2);
}

/// Every operation of the OpenAPI document has its own id (validators and client generators
/// refuse a document where two share one).
#[tokio::test]
async fn operation_ids_are_unique() {
    let document = openapi().await;
    let mut ids: Vec<String> = document["paths"]
        .as_object()
        .unwrap()
        .values()
        .flat_map(|methods| methods.as_object().unwrap().values())
        .filter_map(|operation| operation["operationId"].as_str().map(str::to_string))
        .collect();
    let count = ids.len();
    ids.sort();
    ids.dedup();
    assert_eq!(ids.len(), count, "{ids:?}");
    assert!(count >= 13, "{count} operations");
}

/// The API speaks of its own fields: a refused value is named as the JSON field the client
/// sent, not as the command-line flag of the same knob.
#[tokio::test]
async fn errors_name_json_fields_not_flags() {
    let problem = post("/api/v1/cost", json!({"gpu": "H100", "hours": -3}).to_string())
        .await
        .problem(StatusCode::BAD_REQUEST, 2);
    // The kind of fault and the field at fault, for machines.
    assert_eq!(problem["code"], "out_of_range");
    assert_eq!(problem["field"], "hours");
    let detail = problem["detail"].as_str().unwrap();
    assert!(detail.contains("`hours`") && !detail.contains("--"), "{problem}");
    let problem = post(
        "/api/v1/estimate",
        json!({"model": "llama-3.1-8b", "task": "lora", "gpu": "H100", "max_num_seqs": 8}).to_string(),
    )
    .await
    .problem(StatusCode::BAD_REQUEST, 2);
    let text = format!("{} {}", problem["detail"], problem["hint"]);
    assert!(text.contains("`max_num_seqs`") && !text.contains("--"), "{problem}");
    assert_eq!(
        (&problem["code"], &problem["field"]),
        (&json!("not_applicable"), &json!("max_num_seqs"))
    );
    // A request's own list of prompt and output lengths (the command line's `--requests FILE`).
    let answer = post(
        "/api/v1/estimate",
        json!({"model": "llama-3.1-8b", "task": "inference", "gpu": "H100", "qps": 2,
               "requests": [{"input_tokens": 900, "output_tokens": 200}, {"prompt_tokens": 3000, "completion_tokens": 50}]})
        .to_string(),
    )
    .await;
    let body = String::from_utf8_lossy(&answer.body);
    assert_eq!(answer.status, StatusCode::OK, "{body}");
    assert!(
        body.contains("the listed requests"),
        "the answer names the mix it used: {body}"
    );
}

/// The optimizer's knobs travel as JSON keys: torchtune's single-GPU recipe (paged 8-bit AdamW
/// stepped in the backward pass) answers with its paged states outside the total, and the
/// knob refused for LoRA is named as the key that was sent.
#[tokio::test]
async fn optimizer_knobs_are_keys_of_the_api() {
    let answer = post(
        "/api/v1/estimate",
        json!({"model": "llama-3.1-8b", "task": "finetune", "gpu": "RTX-4090", "gpus": 1, "precision": "bf16",
               "seq": 2048, "batch": 2, "micro_batch": 2, "framework": "torchtune", "checkpointing": "full",
               "optimizer": "paged-adamw-8bit", "optimizer_in_backward": true})
        .to_string(),
    )
    .await;
    assert_eq!(answer.status, StatusCode::OK, "{}", answer.text());
    let body = answer.json();
    assert_eq!(body["workload"]["optimizer_in_backward"], json!(true));
    let memory = &body["memory"];
    let paged = memory["breakdown"]["paged_optimizer"].as_u64().unwrap();
    assert!(paged > 7 << 30, "{memory}");
    assert!(memory["per_gpu_bytes"].as_u64().unwrap() < 22 << 30, "{memory}");
    assert_eq!(memory["fits"], json!(true));
    let problem = post(
        "/api/v1/estimate",
        json!({"model": "llama-3.1-8b", "task": "lora", "gpu": "H100", "optimizer_in_backward": true}).to_string(),
    )
    .await
    .problem(StatusCode::BAD_REQUEST, 2);
    let text = format!("{} {}", problem["detail"], problem["hint"]);
    assert!(
        text.contains("`optimizer_in_backward`") && !text.contains("--"),
        "{problem}"
    );
}

/// A route asked with a method it does not take answers 405 as problem+json, like every other
/// refusal.
#[tokio::test]
async fn a_wrong_method_is_a_problem() {
    let answer = send(
        Request::builder()
            .method("DELETE")
            .uri("/api/v1/plan")
            .body(Body::empty())
            .unwrap(),
    )
    .await;
    let problem = answer.problem(StatusCode::METHOD_NOT_ALLOWED, 2);
    assert_eq!(problem["code"], "method_not_allowed");
}

/// The served document passes a real OpenAPI 3.1 validator (Python's openapi-spec-validator,
/// which CI installs): unique operation ids, every answer's schema resolvable.
#[tokio::test]
async fn the_openapi_document_passes_a_validator() {
    let document = openapi().await;
    let path = std::env::temp_dir().join(format!("gpuplan-openapi-{}.json", std::process::id()));
    std::fs::write(&path, document.to_string()).unwrap();
    let script = "import sys, json\n\
                  from openapi_spec_validator import validate\n\
                  validate(json.load(open(sys.argv[1])))\n";
    let run = std::process::Command::new("python3")
        .args(["-c", script])
        .arg(&path)
        .output();
    std::fs::remove_file(&path).ok();
    let missing = match &run {
        Err(_) => true,
        Ok(out) => String::from_utf8_lossy(&out.stderr).contains("No module named 'openapi_spec_validator'"),
    };
    if missing {
        assert!(
            std::env::var_os("CI").is_none(),
            "CI installs openapi-spec-validator (.ci/run)"
        );
        eprintln!("skipped: python3 with openapi-spec-validator is not installed");
        return;
    }
    let out = run.unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
}

/// The API reads durations and the prompt length in the command line's syntax too (`"36h"`,
/// `"5m"`, `input_tokens`), gives the same plan as with plain numbers in the stated units, and
/// echoes the request in its answer as the CLI does.
#[tokio::test]
async fn the_api_takes_the_command_lines_syntax_and_echoes_the_request() {
    let worded = json!({"model": "llama-3.1-8b", "task": "lora", "tokens": 5e8, "deadline": "36h",
                        "provision_time": "5m", "input_tokens": 2048, "top": 3});
    let plain = json!({"model": "llama-3.1-8b", "task": "lora", "tokens": 5e8, "deadline": 36,
                       "provision_time": 300, "seq": 2048, "top": 3});
    let (a, b) = (
        post("/api/v1/plan", worded.to_string()).await,
        post("/api/v1/plan", plain.to_string()).await,
    );
    assert_eq!(a.status, StatusCode::OK, "{}", a.text());
    let (a, b) = (a.json(), b.json());
    assert_eq!(a["configurations"], b["configurations"]);
    assert_eq!(a["request"]["deadline"], 36.0);
    assert_eq!(a["request"]["provision_time"], 300.0);
    assert_eq!(a["request"]["seq"], 2048);
    let problem = post(
        "/api/v1/plan",
        json!({"model": "llama-3.1-8b", "task": "lora", "tokens": 5e8, "deadline": "soon"}).to_string(),
    )
    .await
    .problem(StatusCode::UNPROCESSABLE_ENTITY, 2);
    assert!(
        problem["detail"].as_str().unwrap().contains("not a duration"),
        "{problem}"
    );
}

/// A tabular job is asked in the API as on the command line: `workload: tabular` with rows and
/// features, and a field that only a model's plan reads is refused by name.
#[tokio::test]
async fn a_tabular_job_is_planned_through_the_api() {
    let answer = post(
        "/api/v1/plan",
        json!({"workload": "tabular", "rows": 5e6, "features": 200, "billing": ["on-demand", "spot"]}).to_string(),
    )
    .await;
    let plan = answer.json();
    assert_eq!(answer.status, StatusCode::OK, "{plan}");
    let first = &plan["recommendations"][0];
    assert_eq!(
        first["billing"], "spot",
        "the cheapest allowed mode, named as such: {first}"
    );
    assert_eq!(plan["request"]["workload"], "tabular");
    let problem = post(
        "/api/v1/plan",
        json!({"workload": "tabular", "rows": 5e6, "features": 200, "gpu": ["H100"]}).to_string(),
    )
    .await
    .problem(StatusCode::BAD_REQUEST, 2);
    assert_eq!(
        (&problem["code"], &problem["field"]),
        (&json!("not_applicable"), &json!("gpu"))
    );
    let problem = post("/api/v1/plan", json!({"task": "lora"}).to_string())
        .await
        .problem(StatusCode::BAD_REQUEST, 2);
    assert_eq!(
        (&problem["code"], &problem["field"]),
        (&json!("missing_field"), &json!("model"))
    );
}

/// The catalog's reads are cheap to ask again: gzip where the client takes it (the unfiltered
/// offerings listing is megabytes), an `ETag` and `Cache-Control` on every catalog read, and
/// `304 Not Modified` without a body when `If-None-Match` names the current tag. Plans, which
/// depend on their bodies, carry neither.
#[tokio::test]
async fn catalog_reads_are_compressed_and_revalidated() {
    let get = |uri: &str, headers: &[(&str, &str)]| {
        let mut request = Request::builder().uri(uri);
        for (name, value) in headers {
            request = request.header(*name, *value);
        }
        app(state()).oneshot(request.body(Body::empty()).unwrap())
    };
    let plain = get("/api/v1/instances", &[]).await.unwrap();
    let plain_len = plain.into_body().collect().await.unwrap().to_bytes().len();
    let zipped = get("/api/v1/instances", &[("accept-encoding", "gzip")]).await.unwrap();
    assert_eq!(zipped.headers()[header::CONTENT_ENCODING], "gzip");
    let tag = zipped.headers()[header::ETAG].to_str().unwrap().to_string();
    assert!(
        zipped.headers()[header::CACHE_CONTROL]
            .to_str()
            .unwrap()
            .contains("max-age")
    );
    let zipped_len = zipped.into_body().collect().await.unwrap().to_bytes().len();
    assert!(zipped_len * 5 < plain_len, "{zipped_len} of {plain_len} bytes");
    let again = get("/api/v1/instances", &[("if-none-match", &tag)]).await.unwrap();
    assert_eq!(again.status(), StatusCode::NOT_MODIFIED);
    assert!(again.into_body().collect().await.unwrap().to_bytes().is_empty());
    // Another query is another answer, with another tag.
    let filtered = get("/api/v1/instances?gpu=H100", &[("if-none-match", &tag)])
        .await
        .unwrap();
    assert_eq!(filtered.status(), StatusCode::OK);
    assert_ne!(filtered.headers()[header::ETAG].to_str().unwrap(), tag);
    let gpus = get("/api/v1/gpus", &[]).await.unwrap();
    assert!(gpus.headers().contains_key(header::ETAG));
    let health = get("/healthz", &[]).await.unwrap();
    assert!(!health.headers().contains_key(header::ETAG));
}

/// Browsers may call the API from the origins the operator names, and from no other: the
/// preflight of a JSON POST from an allowed origin is granted, one from elsewhere is not, and
/// a server started without origins grants none.
#[tokio::test]
async fn cross_origin_calls_are_allowed_only_from_the_named_origins() {
    let origins = gpuplan_server::cors_origins(&["https://tools.example.com".to_string()]).unwrap();
    let preflight = |origin: &str, state: AppState| {
        let request = Request::builder()
            .method("OPTIONS")
            .uri("/api/v1/plan")
            .header("origin", origin)
            .header("access-control-request-method", "POST")
            .header("access-control-request-headers", "content-type")
            .body(Body::empty())
            .unwrap();
        app(state).oneshot(request)
    };
    let allowed = preflight("https://tools.example.com", state().with_cors_origins(origins.clone()))
        .await
        .unwrap();
    assert_eq!(
        allowed.headers()["access-control-allow-origin"],
        "https://tools.example.com"
    );
    let other = preflight("https://elsewhere.example", state().with_cors_origins(origins))
        .await
        .unwrap();
    assert!(!other.headers().contains_key("access-control-allow-origin"));
    let closed = preflight("https://tools.example.com", state()).await.unwrap();
    assert!(!closed.headers().contains_key("access-control-allow-origin"));
    assert!(gpuplan_server::cors_origins(&["tools.example.com/path".to_string()]).is_err());
    assert!(gpuplan_server::cors_origins(&["*".to_string()]).is_ok());
}

/// Long listings come in pages: `offset` and `limit` cut the sorted offerings, and
/// `X-Total-Count` says how many matched, so a client can walk them all.
#[tokio::test]
async fn offerings_come_in_pages_with_their_total() {
    let page = |uri: &str| app(state()).oneshot(Request::builder().uri(uri).body(Body::empty()).unwrap());
    let all = page("/api/v1/instances?gpu=L4").await.unwrap();
    let total: usize = all.headers()["x-total-count"].to_str().unwrap().parse().unwrap();
    let all: Value = serde_json::from_slice(&all.into_body().collect().await.unwrap().to_bytes()).unwrap();
    let all = all.as_array().unwrap();
    assert_eq!(all.len(), total);
    assert!(total > 3);
    let second = page("/api/v1/instances?gpu=L4&offset=1&limit=2").await.unwrap();
    assert_eq!(second.headers()["x-total-count"], total.to_string().as_str());
    let second: Value = serde_json::from_slice(&second.into_body().collect().await.unwrap().to_bytes()).unwrap();
    assert_eq!(second.as_array().unwrap(), &all[1..3]);
    let past = page(&format!("/api/v1/instances?gpu=L4&offset={total}")).await.unwrap();
    let past: Value = serde_json::from_slice(&past.into_body().collect().await.unwrap().to_bytes()).unwrap();
    assert!(past.as_array().unwrap().is_empty());
}

/// A `model` named by its Hugging Face Hub id is read through the hub the server was given (a
/// stand-in here; `gpuplan serve` gives one that reads the Hugging Face cache and the Hub as
/// `--model` does) and counted as the same config pasted in `model_config` is. A built-in model
/// never asks the hub, and the hub's refusal comes back as bad input naming `model`.
#[tokio::test]
async fn a_hub_id_is_read_through_the_servers_hub() {
    let config = json!({
        "model_type": "qwen3", "hidden_size": 4096, "intermediate_size": 12288, "num_hidden_layers": 36,
        "num_attention_heads": 32, "num_key_value_heads": 8, "head_dim": 128, "vocab_size": 151936,
        "max_position_embeddings": 40960, "tie_word_embeddings": false
    });
    let asked = std::sync::Arc::new(std::sync::Mutex::new(Vec::<String>::new()));
    let hub = {
        let (text, asked) = (config.to_string(), asked.clone());
        gpuplan_server::HubFiles(std::sync::Arc::new(move |model: &str| {
            asked.lock().unwrap().push(model.to_string());
            match model {
                "Org/Model" => Some(Ok((text.clone(), None))),
                "Org/Gated" => Some(Err(gpuplan::Error::invalid(
                    "model Org/Gated: https://hub.example/Org/Gated/resolve/main/config.json: 401 Unauthorized"
                        .to_string(),
                    Some("accept its licence and set HF_TOKEN".to_string()),
                ))),
                _ => None,
            }
        }))
    };
    let served = app(state().with_hub(hub));
    let ask = |body: Value| {
        let served = served.clone();
        async move {
            let request = Request::post("/api/v1/estimate")
                .header(header::CONTENT_TYPE, "application/json")
                .body(Body::from(body.to_string()))
                .unwrap();
            let response = served.oneshot(request).await.unwrap();
            let status = response.status();
            let body = response.into_body().collect().await.unwrap().to_bytes();
            (status, serde_json::from_slice::<Value>(&body).unwrap())
        }
    };
    let job = json!({"task": "inference", "gpu": "H100"});
    let with = |fields: Value| {
        let mut body = job.clone();
        body.as_object_mut()
            .unwrap()
            .extend(fields.as_object().unwrap().clone());
        body
    };
    let (status, by_id) = ask(with(json!({"model": "Org/Model"}))).await;
    assert_eq!(status, StatusCode::OK, "{by_id}");
    let (_, pasted) = ask(with(json!({"model": "config.json", "model_config": config}))).await;
    assert_eq!(by_id["model"]["parameters"], pasted["model"]["parameters"]);
    assert!(
        by_id["model"]["parameters"].as_u64().unwrap() > 8_000_000_000,
        "{by_id}"
    );

    let (status, _) = ask(with(json!({"model": "llama-3.1-8b"}))).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(
        *asked.lock().unwrap(),
        ["Org/Model"],
        "a built-in or pasted model never asks the hub"
    );

    let (status, problem) = ask(with(json!({"model": "Org/Gated"}))).await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{problem}");
    let detail = problem["detail"].as_str().unwrap();
    assert!(
        detail.starts_with("model Org/Gated") && !detail.contains("--"),
        "{detail}"
    );
    assert!(problem["hint"].as_str().unwrap().contains("HF_TOKEN"), "{problem}");
}

/// `/metrics` counts the estimates and plans answered from the recent answers apart from those
/// computed: the same request twice is one miss, then one hit.
#[tokio::test]
async fn the_answer_cache_is_counted() {
    let served = app(AppState::new(gpuplan::Catalog::embedded().unwrap()));
    let body = json!({"model": "llama-3.1-8b", "task": "lora", "gpu": "H100"}).to_string();
    for _ in 0..2 {
        let request = Request::post("/api/v1/estimate")
            .header(header::CONTENT_TYPE, "application/json")
            .body(Body::from(body.clone()))
            .unwrap();
        assert_eq!(served.clone().oneshot(request).await.unwrap().status(), StatusCode::OK);
    }
    let response = served
        .oneshot(Request::get("/metrics").body(Body::empty()).unwrap())
        .await
        .unwrap();
    let text = String::from_utf8(response.into_body().collect().await.unwrap().to_bytes().to_vec()).unwrap();
    assert!(text.contains("gpuplan_answer_cache_total{result=\"hit\"} 1"), "{text}");
    assert!(text.contains("gpuplan_answer_cache_total{result=\"miss\"} 1"), "{text}");
}

/// The catalog's lists page as `/api/v1/instances` does: `offset` and `limit` give a slice of the
/// whole list and `x-total-count` its length; any other parameter is refused in our words.
#[tokio::test]
async fn gpus_and_models_page_with_offset_and_limit() {
    for route in ["/api/v1/gpus", "/api/v1/models"] {
        let whole = get(route).await.json();
        let whole = whole.as_array().unwrap();
        let response = app(state())
            .oneshot(
                Request::get(format!("{route}?offset=2&limit=3"))
                    .body(Body::empty())
                    .unwrap(),
            )
            .await
            .unwrap();
        assert_eq!(response.status(), StatusCode::OK);
        assert_eq!(response.headers()["x-total-count"], whole.len().to_string().as_str());
        let page: Value = serde_json::from_slice(&response.into_body().collect().await.unwrap().to_bytes()).unwrap();
        assert_eq!(page.as_array().unwrap(), &whole[2..5], "{route}");
        let past: Value = get(&format!("{route}?offset=100000")).await.json();
        assert_eq!(past, json!([]));
        let problem = get(&format!("{route}?gpu=H100"))
            .await
            .problem(StatusCode::BAD_REQUEST, 2);
        let detail = problem["detail"].as_str().unwrap();
        assert!(
            detail.contains("gpu") && !detail.contains("Failed to deserialize"),
            "{detail}"
        );
    }
}

/// A plan the API answered exports as `gpuplan export` writes it: each file, and the stream to
/// apply; a configuration the plan lacks, an unknown target or a field no flag has is refused
/// in the API's words.
#[tokio::test]
async fn a_plan_exports_its_files() {
    let body = json!({"model": "llama-3.1-8b", "task": "lora", "tokens": 5e8, "seq": 4096, "batch": 32, "top": 3, "gpu": ["H100"]});
    let planned = post("/api/v1/plan", body.to_string()).await;
    assert_eq!(planned.status, StatusCode::OK, "{}", planned.text());
    let plan = planned.json();
    let request = json!({"plan": plan, "to": "k8s", "pick": 2, "namespace": "training"});
    let answer = post("/api/v1/export", request.to_string()).await;
    assert_eq!(answer.status, StatusCode::OK, "{}", answer.text());
    let files = answer.json();
    conforms(&files, "ExportJson").await;
    conforms(&request, "ExportOptions").await;
    let names: Vec<&str> = files["files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["name"].as_str().unwrap())
        .collect();
    assert!(names.contains(&"job.yaml"), "{names:?}");
    let stream = files["stream"].as_str().unwrap();
    assert!(
        stream.contains("kind: Job") && stream.contains("namespace: training"),
        "{stream}"
    );
    let second = &plan["recommendations"][1]["instance_type"];
    assert!(
        stream.contains(second.as_str().unwrap()),
        "the second configuration: {second}"
    );
    let sky = post("/api/v1/export", json!({"plan": plan, "to": "skypilot"}).to_string()).await;
    assert!(
        sky.json()["stream"].as_str().unwrap().contains("resources:"),
        "{}",
        sky.text()
    );

    let refused = |fields: Value| {
        let mut request = json!({"plan": plan, "to": "k8s"});
        request
            .as_object_mut()
            .unwrap()
            .extend(fields.as_object().unwrap().clone());
        async move { post("/api/v1/export", request.to_string()).await }
    };
    let count = plan["recommendations"].as_array().unwrap().len();
    let problem = refused(json!({"pick": count + 1}))
        .await
        .problem(StatusCode::BAD_REQUEST, 2);
    let detail = problem["detail"].as_str().unwrap();
    assert_eq!(
        detail,
        format!("`pick` {}: the plan has {count} configurations", count + 1)
    );
    let problem = refused(json!({"to": "helm"})).await.problem(StatusCode::BAD_REQUEST, 2);
    assert!(
        problem["detail"].as_str().unwrap().contains("k8s, skypilot, skyserve"),
        "{problem}"
    );
    let problem = refused(json!({"export": "k8s"})).await;
    assert!(problem.status.is_client_error(), "{}", problem.text());
    assert!(problem.text().contains("export"), "{}", problem.text());
    let problem = refused(json!({"to": "skyserve"}))
        .await
        .problem(StatusCode::BAD_REQUEST, 2);
    assert!(!problem["detail"].as_str().unwrap().contains("--"), "{problem}");
}

/// A model is read back before anything is planned: a built-in one, a pasted config and an
/// Ultralytics YAML's content give their kind and counts; an unknown one is refused naming it.
#[tokio::test]
async fn a_model_is_read_back() {
    let built_in = post("/api/v1/model", json!({"model": "llama-3.1-8b"}).to_string()).await;
    assert_eq!(built_in.status, StatusCode::OK, "{}", built_in.text());
    let summary = built_in.json();
    conforms(&summary, "ModelSummaryJson").await;
    assert_eq!(summary["parameters"], 8_030_261_248u64);
    let config = json!({"model_type": "qwen3", "hidden_size": 4096, "intermediate_size": 12288,
        "num_hidden_layers": 36, "num_attention_heads": 32, "num_key_value_heads": 8, "head_dim": 128,
        "vocab_size": 151936, "tie_word_embeddings": false});
    let request = json!({"model": "config.json", "model_config": config});
    conforms(&request, "ModelRequest").await;
    let pasted = post("/api/v1/model", request.to_string()).await.json();
    assert_eq!(
        (pasted["architecture"].as_str(), pasted["layers"].as_u64()),
        (Some("qwen3"), Some(36))
    );
    assert!(pasted["parameters"].as_u64().unwrap() > 8_000_000_000, "{pasted}");
    let problem = post("/api/v1/model", json!({"model": "llama-9"}).to_string())
        .await
        .problem(StatusCode::BAD_REQUEST, 2);
    assert!(problem["detail"].as_str().unwrap().contains("llama-9"), "{problem}");
    let problem = post(
        "/api/v1/model",
        json!({"model": "llama-3.1-8b", "gpu": "H100"}).to_string(),
    )
    .await;
    assert!(
        problem.status.is_client_error() && problem.text().contains("gpu"),
        "{}",
        problem.text()
    );
}

/// An Ultralytics model YAML pasted as it is (YAML, its scale named) is read as the CLI reads
/// the file.
#[tokio::test]
async fn an_ultralytics_yaml_is_read_as_pasted() {
    let yaml =
        include_str!("../../gpuplan-cli/tests/fixtures/yolov8s-one-class.yaml").replace("nc: 1\n", "nc: 1\nscale: s\n");
    let answer = post(
        "/api/v1/model",
        json!({"model": "parts.yaml", "model_config": yaml}).to_string(),
    )
    .await;
    assert_eq!(answer.status, StatusCode::OK, "{}", answer.text());
    let summary = answer.json();
    assert_eq!(
        (summary["kind"].as_str(), summary["parameters"].as_u64()),
        (Some("vision"), Some(11_135_987))
    );
}

//! The page as a person uses it, in a real browser: headless Chromium driven over WebDriver
//! (Debian's `chromium` and `chromium-driver`). Fill the plan form, submit, see the table and
//! both charts, follow the link the page gives and get the same plan; a bad value shows the
//! API's message. Screenshots are kept in `target/` (`page.png`, `page-serving.png`,
//! `page-infeasible.png`, `page-forecast.png`).
//!
//! In CI (`CI` set) a missing browser fails the test; elsewhere the test says it is skipped.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::print_stderr)]

use base64::Engine;
use serde_json::{Value, json};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

const CHROMIUM: &str = "/usr/bin/chromium";
const CHROMEDRIVER: &str = "/usr/bin/chromedriver";

/// How often and how many times a condition is looked for before the test gives up: the page
/// plans in well under a second; a minute allows for a loaded CI machine.
const POLL: Duration = Duration::from_millis(20);
const POLLS: usize = 3000;

/// The API on a free port, served from a background thread for the life of the test.
fn start_server() -> String {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let address = listener.local_addr().unwrap();
    listener.set_nonblocking(true).unwrap();
    std::thread::spawn(move || {
        let runtime = tokio::runtime::Runtime::new().unwrap();
        runtime.block_on(async {
            let listener = tokio::net::TcpListener::from_std(listener).unwrap();
            // A stand-in for the Hub (`gpuplan serve` reads the real one): `Org/Model` is Qwen3-8B.
            let hub = gpuplan_server::HubFiles(std::sync::Arc::new(|model: &str| {
                (model == "Org/Model").then(|| Ok((QWEN3_8B_CONFIG.to_string(), None)))
            }));
            let state = gpuplan_server::AppState::new(gpuplan::Catalog::embedded().unwrap()).with_hub(hub);
            axum::serve(listener, gpuplan_server::app(state)).await.unwrap();
        });
    });
    format!("http://{address}")
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// Stops chromedriver when the test ends, however it ends.
struct Driver(Child);

impl Drop for Driver {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// A WebDriver session (W3C WebDriver, the JSON wire protocol over HTTP).
struct Session {
    client: reqwest::blocking::Client,
    base: String,
    /// The browser's profile folder, which names its processes.
    profile: std::path::PathBuf,
}

/// Ends the session, which closes the browser; any of its processes still running (a crashed
/// session) are stopped by their profile folder, so that none outlives the test.
impl Drop for Session {
    fn drop(&mut self) {
        let _ = self.client.delete(&self.base).send();
        let _ = Command::new("pkill")
            .args(["-f", "--", &format!("--user-data-dir={}", self.profile.display())])
            .status();
        let _ = std::fs::remove_dir_all(&self.profile);
    }
}

impl Session {
    fn call(&self, method: reqwest::Method, path: &str, body: Option<Value>) -> Value {
        let url = format!("{}{path}", self.base);
        let mut request = self.client.request(method, &url);
        if let Some(body) = body {
            request = request.json(&body);
        }
        let answer: Value = request.send().unwrap().json().unwrap();
        answer["value"].clone()
    }

    fn post(&self, path: &str, body: Value) -> Value {
        self.call(reqwest::Method::POST, path, Some(body))
    }

    fn get(&self, path: &str) -> Value {
        self.call(reqwest::Method::GET, path, None)
    }

    fn open(&self, url: &str) {
        self.post("/url", json!({ "url": url }));
    }

    /// Opens `url` and waits for its plan: the table's rows.
    fn open_plan(&self, url: &str) -> Vec<String> {
        self.open(url);
        self.wait_for("#plan-table tbody tr")
    }

    fn find_all(&self, css: &str) -> Vec<String> {
        let found = self.post("/elements", json!({"using": "css selector", "value": css}));
        found
            .as_array()
            .map(|elements| {
                elements
                    .iter()
                    .filter_map(|e| e.as_object()?.values().next()?.as_str().map(str::to_string))
                    .collect()
            })
            .unwrap_or_default()
    }

    fn text(&self, element: &str) -> String {
        self.get(&format!("/element/{element}/text"))
            .as_str()
            .unwrap_or_default()
            .to_string()
    }

    /// The elements matching `css` once there is at least one.
    fn wait_for(&self, css: &str) -> Vec<String> {
        for _ in 0..POLLS {
            let found = self.find_all(css);
            if !found.is_empty() {
                return found;
            }
            std::thread::sleep(POLL);
        }
        panic!("nothing matched `{css}`");
    }

    /// The text of the element matching `css` once `accept` takes it.
    fn wait_for_text(&self, css: &str, accept: impl Fn(&str) -> bool) -> String {
        for _ in 0..POLLS {
            if let Some(element) = self.find_all(css).first() {
                let text = self.text(element);
                if accept(&text) {
                    return text;
                }
            }
            std::thread::sleep(POLL);
        }
        panic!("`{css}` never showed the text expected");
    }

    fn set(&self, css: &str, text: &str) {
        let element = self.wait_for(css).remove(0);
        self.post(&format!("/element/{element}/clear"), json!({}));
        self.post(&format!("/element/{element}/value"), json!({ "text": text }));
    }

    fn click(&self, css: &str) {
        let element = self.wait_for(css).remove(0);
        self.post(&format!("/element/{element}/click"), json!({}));
    }

    /// The value the script `body` returns, run in the page.
    fn script(&self, body: &str) -> Value {
        self.post("/execute/sync", json!({ "script": body, "args": [] }))
    }

    fn url(&self) -> String {
        self.get("/url").as_str().unwrap_or_default().to_string()
    }

    /// The page's WCAG 2.1 A and AA violations as axe-core finds them: one line per rule, with
    /// its impact, the first element it names and how many elements break it.
    fn accessibility_violations(&self) -> Vec<String> {
        const AXE: &str = include_str!("fixtures/axe-core/axe.min.js");
        self.script(&format!("{AXE}\n;return typeof window.axe;"));
        let found = self.post(
            "/execute/async",
            json!({"script": "const done = arguments[arguments.length - 1];
                axe.run(document, {runOnly: {type: 'tag', values: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa']}})
                  .then(r => done({passes: r.passes.length, violations: r.violations.map(v => `${v.id} (${v.impact}, ${v.nodes.length} elements): ${v.nodes[0].target.join(' ')}: ${v.nodes[0].failureSummary}`)}))
                  .catch(e => done({passes: 0, violations: ['axe failed: ' + e]}));", "args": []}),
        );
        // The rules did run: labels, contrast, names, landmarks and the rest pass by the dozen.
        assert!(
            found["passes"].as_u64().is_some_and(|n| n >= 10),
            "axe answered {found}"
        );
        found["violations"]
            .as_array()
            .unwrap_or_else(|| panic!("axe answered {found}"))
            .iter()
            .map(|v| v.as_str().unwrap_or_default().to_string())
            .collect()
    }

    fn screenshot(&self, path: &Path) {
        let png = self.get("/screenshot");
        let bytes = base64::engine::general_purpose::STANDARD
            .decode(png.as_str().unwrap())
            .unwrap();
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, bytes).unwrap();
    }
}

fn browser_present() -> bool {
    if Path::new(CHROMIUM).exists() && Path::new(CHROMEDRIVER).exists() {
        return true;
    }
    assert!(
        std::env::var_os("CI").is_none(),
        "the browser test needs {CHROMIUM} and {CHROMEDRIVER} (Debian's chromium and chromium-driver), which .ci/run installs"
    );
    eprintln!("skipped: {CHROMIUM} or {CHROMEDRIVER} is not installed (apt-get install chromium chromium-driver)");
    false
}

fn start_session() -> (Driver, Session) {
    let port = free_port();
    let driver = Driver(
        Command::new(CHROMEDRIVER)
            .arg(format!("--port={port}"))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap(),
    );
    let client = reqwest::blocking::Client::builder()
        .timeout(Duration::from_secs(120))
        .build()
        .unwrap();
    let root = format!("http://127.0.0.1:{port}");
    let ready = (0..POLLS).any(|_| {
        let up = client
            .get(format!("{root}/status"))
            .send()
            .is_ok_and(|r| r.status().is_success());
        if !up {
            std::thread::sleep(POLL);
        }
        up
    });
    assert!(ready, "chromedriver did not start");
    let profile = std::env::temp_dir().join(format!("gpuplan-browser-{}", std::process::id()));
    let capabilities = json!({"capabilities": {"alwaysMatch": {
        "browserName": "chrome",
        "goog:chromeOptions": {
            "binary": CHROMIUM,
            "args": ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                     "--disable-background-networking", "--disable-component-update", "--disable-sync",
                     "--disable-dev-shm-usage", "--window-size=1280,1000",
                     format!("--user-data-dir={}", profile.display())]
        }
    }}});
    let created: Value = client
        .post(format!("{root}/session"))
        .json(&capabilities)
        .send()
        .unwrap()
        .json()
        .unwrap();
    let id = created["value"]["sessionId"]
        .as_str()
        .unwrap_or_else(|| panic!("no session: {created}"))
        .to_string();
    let session = Session {
        client,
        base: format!("{root}/session/{id}"),
        profile,
    };
    (driver, session)
}

/// One browser for every view (two headless Chromiums side by side contend for one profile).
#[test]
fn the_page_plans_estimates_prices_and_forecasts() {
    if !browser_present() {
        return;
    }
    let site = start_server();
    let (_driver, page) = start_session();
    plans_draws_and_shares(&site, &page);
    estimates_prices_and_forecasts(&site, &page);
}

fn plans_draws_and_shares(site: &str, page: &Session) {
    // Fill the form and submit.
    page.open(&format!("{site}/"));
    page.wait_for("#model option[value='llama-3.1-8b']");
    page.set("#tokens", "200000000");
    page.set("#seq", "2048");
    page.click("#submit");
    let rows = page.wait_for("#plan-table tbody tr");
    assert!(rows.len() > 1, "a ranked table");
    let violations = page.accessibility_violations();
    assert!(violations.is_empty(), "the plan view: {violations:#?}");
    // What the plan chose for the fields left open, in the form's words, and its assumptions.
    let defaults = page.wait_for_text("#plan-notes", |t| t.contains("default:"));
    assert!(
        defaults.contains("lora_rank") || defaults.contains("precision"),
        "{defaults}"
    );
    let first = page.text(&rows[0]);
    assert!(first.starts_with('1'), "{first}");
    assert!(
        !page.find_all("#scatter circle").is_empty(),
        "the cost-time chart has points"
    );
    // Each point is reachable by keyboard and named, as its tooltip is.
    assert!(
        !page
            .find_all("#scatter circle[tabindex='0'][aria-label^='#1 ']")
            .is_empty(),
        "the chart's points take the keyboard's focus"
    );
    assert!(page.find_all("#memory rect").len() > 2, "the memory chart has bars");
    let status = page.wait_for_text("#status", |t| t.contains("configurations"));
    assert!(status.contains("evaluated"), "{status}");
    // The answer downloads as the JSON the CLI writes, and the table as CSV.
    let files = page.script("const href = (id) => document.getElementById(id).href; return [JSON.stringify(lastPlan), planCsv(lastPlan), href('download-json'), href('download-csv')];");
    let saved: Value = serde_json::from_str(files[0].as_str().unwrap_or_else(|| panic!("{files}"))).unwrap();
    assert!(
        saved["recommendations"].as_array().is_some_and(|r| r.len() > 1),
        "{saved}"
    );
    let csv = files[1].as_str().unwrap();
    assert!(
        csv.starts_with("provider,instance_type,region,gpu,gpus,nodes,billing"),
        "{csv}"
    );
    assert_eq!(
        csv.lines().count(),
        saved["recommendations"].as_array().unwrap().len() + 1
    );
    // Times that span a factor of more than 20 are drawn on a logarithmic axis, whose ticks
    // are 1, 2 and 5 times powers of ten.
    let scale = page.script("const c = document.querySelector('#scatter'); const xs = lastPlan.recommendations.map(r => r.time_seconds).filter(t => t > 0); return [c.dataset.xScale, Math.max(...xs) / Math.min(...xs), [...c.querySelectorAll('text')].map(t => t.textContent)];");
    let wide = scale[1].as_f64().unwrap_or_default() > 20.0;
    assert_eq!(scale[0], if wide { "log" } else { "linear" }, "{scale}");
    let blob = |i: usize| files[i].as_str().is_some_and(|href| href.starts_with("blob:"));
    assert!(blob(2) && blob(3), "{}", files[2]);
    // A configuration's deployment files come from the API as `gpuplan export` writes them.
    page.click("#export-k8s");
    let exported = page.wait_for_text("#export-status", |t| t.contains("kubernetes-1.yaml"));
    assert!(exported.contains("priorityclass.yaml"), "{exported}");
    let stream = page.script("return lastExport;");
    let stream = stream.as_str().unwrap_or_default();
    assert!(
        stream.contains("apiVersion: batch/v1") || stream.contains("kind: JobSet"),
        "{stream}"
    );
    page.screenshot(&Path::new(env!("CARGO_MANIFEST_DIR")).join("../../target/page.png"));

    // The address now carries the request; opened afresh it gives the same plan.
    let shared = page.url();
    assert!(
        shared.contains("tokens=200000000") && shared.contains("seq=2048"),
        "{shared}"
    );
    // The API page lists every route's request body, descriptions with code as code.
    page.open(&format!("{site}/docs"));
    let bodies = page.wait_for("#schemas h3");
    let names: Vec<String> = bodies.iter().map(|b| page.text(b)).collect();
    for body in [
        "PlanOptions",
        "EstimateOptions",
        "CostOptions",
        "EnergyOptions",
        "ForecastOptions",
    ] {
        assert!(names.iter().any(|n| n == body), "{body} in {names:?}");
    }
    let routes = page.wait_for_text("#routes", |t| t.contains("/api/v1/plan"));
    assert!(!routes.contains('`'), "{routes}");
    let again = page.open_plan(&shared);
    assert_eq!(page.text(&again[0]), first);

    // Serving: the latency percentiles replace the memory chart; each row says how many
    // replicas of how many GPUs, the autoscaling range, TPOT and the price per million tokens,
    // and the targets and output length the form sends come back in the shared address.
    page.open_plan(&format!(
        "{site}/?model=llama-3.1-8b&task=inference&qps=5&seq=1024&output_tokens=200&tpot=p90:60ms"
    ));
    let bars = page.wait_for("#latency .latency-bar");
    assert!(bars.len() >= 3, "p50, p90 and p99 bars");
    let latency = page.text(&page.wait_for("#plan-table tbody tr")[0]);
    assert!(
        latency.contains("TTFT p90") && latency.contains("TPOT p90"),
        "{latency}"
    );
    assert!(
        latency.contains(" × ") && latency.contains('–') && latency.contains('$'),
        "{latency}"
    );
    let header = page.text(&page.wait_for("#plan-table thead tr")[0]);
    assert!(header.contains("replicas") && header.contains("$/M tokens"), "{header}");
    page.script("document.getElementById('plan-table').scrollIntoView();");
    page.screenshot(&Path::new(env!("CARGO_MANIFEST_DIR")).join("../../target/page-serving.png"));
    // The replicas cell gives the autoscaling range only where there is one: never "(1–1)".
    let ranges = page.script("const cells = [...document.querySelectorAll('#plan-table tbody tr')].map(r => r.cells[8].firstChild.textContent); return lastPlan.recommendations.map((r, i) => [r.serving.min_replicas === r.serving.max_replicas, cells[i]]);");
    let rows = ranges.as_array().unwrap();
    assert!(
        rows.iter().any(|r| r[0] == json!(true)) && rows.iter().any(|r| r[0] == json!(false)),
        "{ranges}"
    );
    for row in rows {
        let (fixed, cell) = (row[0].as_bool().unwrap(), row[1].as_str().unwrap());
        assert_eq!(fixed, !cell.contains('–'), "{ranges}");
    }
    // A row of more than one instance says what one instance fewer would ask of each replica,
    // against the goodput's measured range, as the command line's line does; a row of one
    // instance says nothing of it.
    let fewer = page.script("return [[...document.querySelectorAll('#plan-table .fewer')].map(e => [e.textContent, e.title]), lastPlan.recommendations.filter(r => r.serving.one_fewer).length];");
    let (notes, expected) = (fewer[0].as_array().unwrap(), fewer[1].as_u64().unwrap());
    assert!(expected >= 1 && notes.len() as u64 == expected, "{fewer}");
    for note in notes {
        let (text, title) = (note[0].as_str().unwrap(), note[1].as_str().unwrap());
        assert!(text.starts_with("1 fewer: ") && text.contains('×'), "{text}");
        assert!(
            title.starts_with("One instance fewer (") && title.contains("× the estimated goodput"),
            "{title}"
        );
    }

    // The serving engine and the headroom are form fields: a shared address restores them, the
    // API plans with them (headroom 0 plans each replica at its goodput), and a headroom out of
    // range is named by the field's label.
    page.open_plan(&format!(
        "{site}/?model=llama-3.1-8b&task=inference&qps=5&seq=1024&output_tokens=200&engine=tensorrt-llm&headroom=0"
    ));
    let asked = page.script("const s = lastPlan.recommendations[0].serving; return [document.getElementById('engine').value, document.getElementById('headroom').value, lastPlan.request.engine, lastPlan.request.headroom, s.requests_per_second_per_replica / s.goodput_per_replica];");
    let asked = asked.as_array().unwrap();
    assert_eq!(
        asked[..4],
        json!(["tensorrt-llm", "0", "tensorrt-llm", 0]).as_array().unwrap()[..],
        "{asked:?}"
    );
    assert!((asked[4].as_f64().unwrap() - 1.0).abs() < 1e-9, "{asked:?}");
    // A closed loop of users in place of a request rate: the request carries `concurrency` and
    // no `qps`, and each row says how many users a replica takes within the targets.
    page.open_plan(&format!(
        "{site}/?model=llama-3.1-8b&task=inference&concurrency=64&seq=1024&output_tokens=200&tpot=p90:60ms"
    ));
    let closed = page.script("const s = lastPlan.recommendations[0].serving; return [document.getElementById('concurrency').value, lastPlan.request.concurrency, lastPlan.request.qps, s.users_within_targets_per_replica, document.querySelectorAll('#latency .latency-bar').length, document.querySelector('#plan-table tbody tr').textContent];");
    let closed = closed.as_array().unwrap();
    assert_eq!(
        closed[..3],
        json!(["64", 64, null]).as_array().unwrap()[..],
        "{closed:?}"
    );
    assert!(
        closed[3].as_f64().unwrap() >= 64.0 && closed[4].as_u64().unwrap() >= 3,
        "{closed:?}"
    );
    assert!(closed[5].as_str().unwrap().contains("users"), "{closed:?}");
    page.open(&format!(
        "{site}/?model=llama-3.1-8b&task=inference&qps=5&seq=1024&headroom=2"
    ));
    let error = page.wait_for_text("#status", |t| t.contains("“Headroom”"));
    assert!(error.contains("outside 0 to 0.9"), "{error}");

    // Axis ticks are round numbers (1, 2 or 5 times a power of ten apart), not fifths of the
    // range ($23, $45, $68).
    let labels = page.script("return [ticks(0, 68, 0, 100, (v, d) => '$' + v.toFixed(d)).map(t => t.label), ticks(0, 0.37, 0, 1, (v, d) => v.toFixed(d)).map(t => t.label)];");
    assert_eq!(
        labels,
        json!([["$0", "$20", "$40", "$60"], ["0.0", "0.1", "0.2", "0.3"]])
    );

    // On a phone (390 px), a plan on screen keeps the page as wide as the screen: the table
    // scrolls inside its own box.
    page.post("/window/rect", json!({"width": 390, "height": 844}));
    page.open(&format!(
        "{site}/?model=llama-3.1-8b&task=lora&tokens=200000000&seq=2048&batch=32"
    ));
    // The page's width and the window's.
    let widths = || {
        let widths = page.script("return [document.documentElement.scrollWidth, window.innerWidth];");
        (widths[0].as_u64().unwrap(), widths[1].as_u64().unwrap())
    };
    page.wait_for("#plan-table tbody tr");
    let (scroll, inner) = widths();
    assert!(
        inner <= 400 && scroll <= inner,
        "page {scroll} px wide in a {inner} px window"
    );
    page.open(&format!(
        "{site}/?view=cost&gpu=H100-SXM5-80GB&gpus=8&provider=aws&hours=720&billing=on-demand,spot"
    ));
    page.wait_for("#cost-table tbody tr");
    let (scroll, inner) = widths();
    assert!(
        scroll <= inner,
        "the cost view is {scroll} px wide in a {inner} px window"
    );
    page.post("/window/rect", json!({"width": 1280, "height": 900}));

    // A value the API refuses shows its message, naming the form's field, and no stale table.
    page.open(&format!(
        "{site}/?model=llama-3.1-8b&task=lora&tokens=-5&seq=2048&batch=32"
    ));
    let error = page.wait_for_text("#status", |t| t.contains("“Tokens to train on”"));
    assert!(error.contains("must be a positive number"), "{error}");
    let hidden = page.script("return document.getElementById('results').hidden;");
    assert_eq!(hidden, json!(true));

    // Nothing fits: what ruled the configurations out, the nearest misses, and what to relax
    // in the form's own words (never a command-line flag).
    page.open(&format!(
        "{site}/?model=llama-3.1-70b&task=finetune&tokens=10000000000&seq=4096&batch=32&deadline=0.01"
    ));
    let suggestion = page.wait_for_text("#infeasible-suggestion", |t| !t.is_empty());
    assert!(
        suggestion.contains("“Deadline”") && !suggestion.contains("--"),
        "{suggestion}"
    );
    assert!(
        page.find_all("#reject-table tbody tr").len() >= 2,
        "the counts per constraint"
    );
    assert!(!page.wait_for("#nearest-list li").is_empty());
    let status = page.text(&page.wait_for("#status")[0]);
    assert!(!status.contains("--"), "{status}");
    let violations = page.accessibility_violations();
    assert!(violations.is_empty(), "the infeasible plan: {violations:#?}");
    page.screenshot(&Path::new(env!("CARGO_MANIFEST_DIR")).join("../../target/page-infeasible.png"));
}

/// Qwen3-8B's config.json (Qwen/Qwen3-8B on the Hugging Face Hub), the fields the estimate reads.
const QWEN3_8B_CONFIG: &str = r#"{"architectures": ["Qwen3ForCausalLM"], "model_type": "qwen3", "hidden_size": 4096, "intermediate_size": 12288, "num_hidden_layers": 36, "num_attention_heads": 32, "num_key_value_heads": 8, "head_dim": 128, "vocab_size": 151936, "tie_word_embeddings": false, "max_position_embeddings": 40960, "rms_norm_eps": 1e-06, "rope_theta": 1000000, "torch_dtype": "bfloat16"}"#;

fn estimates_prices_and_forecasts(site: &str, page: &Session) {
    let hidden = |id: &str| page.script(&format!("return document.getElementById('{id}').hidden;"));

    // Estimate: the memory breakdown by part, and the figures.
    page.open(&format!("{site}/?view=estimate"));
    page.wait_for("#e-gpu option[value='H100-SXM5-80GB']");
    assert_eq!(hidden("view-plan"), json!(true), "one view at a time");
    page.set("#e-seq", "2048");
    page.click("#e-submit");
    let parts = page.wait_for("#e-memory .memory-part");
    assert!(parts.len() >= 4, "weights, gradients, optimizer, activations");
    let figures = page.wait_for_text("#e-figures", |t| t.contains("tokens per second"));
    assert!(figures.contains("fits"), "{figures}");
    let violations = page.accessibility_violations();
    assert!(violations.is_empty(), "the estimate view: {violations:#?}");
    let shared = page.url();
    assert!(
        shared.contains("view=estimate") && shared.contains("seq=2048"),
        "{shared}"
    );

    // Every built-in model is offered, in groups by kind; a pasted config.json stands in for
    // them (Qwen3-8B's: 8.19B parameters), and one that lacks a field is refused naming it.
    let groups = page.script(
        "return [...document.querySelectorAll('#e-model optgroup')].map(g => g.label + ':' + g.children.length);",
    );
    let groups = groups.as_array().map(|g| g.len()).unwrap_or_default();
    assert_eq!(groups, 3, "language, image classification and image generation models");
    page.click("#e-own-model summary");
    page.set("#e-model_config", QWEN3_8B_CONFIG);
    page.click("#e-submit");
    let figures = page.wait_for_text("#e-figures", |t| t.contains("config.json"));
    assert!(figures.contains("8.19B parameters"), "{figures}");
    page.set("#e-model_config", r#"{"model_type": "llama"}"#);
    page.click("#e-submit");
    let refused = page.wait_for_text("#e-status", |t| t.contains("hidden_size"));
    assert!(refused.contains("lacks"), "{refused}");
    page.set("#e-model_config", "");
    // A Hugging Face id, read by the server from the Hub, stands in the same way, and a shared
    // link brings it back to its field.
    page.set("#e-hub_id", "Org/Model");
    // Read back before anything is estimated: what the server counts of it.
    let read = page.wait_for_text("#e-model-read", |t| t.starts_with("Read:"));
    assert!(
        read.contains("qwen3") && read.contains("8.19B parameters") && read.contains("36 layers"),
        "{read}"
    );
    page.click("#e-submit");
    let figures = page.wait_for_text("#e-figures", |t| t.contains("Org/Model"));
    assert!(figures.contains("8.19B parameters"), "{figures}");
    let shared = page.url();
    assert!(shared.contains("model=Org%2FModel"), "{shared}");
    page.open(&shared);
    page.wait_for_text("#e-figures", |t| t.contains("Org/Model"));
    let restored =
        page.script("return [document.querySelector('#e-hub_id').value, document.querySelector('#e-own-model').open];");
    assert_eq!(restored, json!(["Org/Model", true]));

    // Cost: one bar per billing mode, the spot line marked with its interruptions.
    page.open(&format!(
        "{site}/?view=cost&gpu=H100-SXM5-80GB&gpus=8&provider=aws&hours=720&billing=on-demand,spot&checkpoint_minutes=30"
    ));
    let rows = page.wait_for("#cost-table tbody tr");
    assert_eq!(rows.len(), 2, "on-demand and spot");
    assert!(page.find_all("#c-chart .cost-bar").len() >= 2);
    let notes = page.wait_for_text("#c-notes", |t| t.contains("interruptions"));
    assert!(notes.contains("free to write"), "{notes}");
    let violations = page.accessibility_violations();
    assert!(violations.is_empty(), "the cost view: {violations:#?}");

    // Forecast: the example history, the band and the commitment line.
    page.open(&format!("{site}/?view=forecast"));
    page.click("#f-example");
    page.click("#f-submit");
    page.wait_for("#f-chart .forecast-band");
    assert_eq!(page.find_all("#f-chart .commitment-line").len(), 1);
    assert_eq!(page.find_all("#f-chart .history-line").len(), 1);
    // The chart shows the recent history; "History shown" widens it to all of it and back.
    let counts = page.script("const count = () => document.querySelector('#f-chart .history-line').getAttribute('points').split(' ').length; const w = document.querySelector('#f-window'); const before = count(); w.value = 'all'; w.dispatchEvent(new Event('change')); const all = count(); w.value = 'recent'; w.dispatchEvent(new Event('change')); return [before, all, count(), lastForecast.history.length];");
    let counts: Vec<u64> = counts.as_array().unwrap().iter().map(|v| v.as_u64().unwrap()).collect();
    assert_eq!(counts[1], counts[3], "all of the history: {counts:?}");
    assert!(counts[0] <= counts[1] && counts[2] == counts[0], "{counts:?}");
    let figures = page.wait_for_text("#f-figures", |t| t.contains("reserve"));
    assert!(figures.contains("MAPE"), "{figures}");
    let violations = page.accessibility_violations();
    assert!(violations.is_empty(), "the forecast view: {violations:#?}");
    page.screenshot(&Path::new(env!("CARGO_MANIFEST_DIR")).join("../../target/page-forecast.png"));
    // The link carries the history: opened afresh, the same forecast.
    let shared = page.url();
    assert!(
        shared.contains("view=forecast") && shared.contains("history="),
        "{shared}"
    );
    page.open(&format!("{site}/docs"));
    page.open(&shared);
    let again = page.wait_for_text("#f-figures", |t| t.contains("reserve"));
    assert_eq!(again, figures);
}

//! `cargo xtask load [--requests N] [--plans N]`: the API under load on loopback, in this
//! process: requests per second and p50/p99 latency for a catalog read and for the README's
//! plan at several concurrencies, errors counted, and the resident memory before and after
//! 100,000 catalog reads. Run it optimised: `cargo run --release -p xtask -- load`.

use anyhow::{Result, bail};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

/// Clients at once, per measurement.
const CONCURRENCIES: [usize; 3] = [1, 4, 20];

/// The README's plan.
const PLAN_BODY: &str =
    r#"{"model":"llama-3.1-8b","task":"lora","seq":4096,"batch":32,"tokens":5e8,"deadline":24,"top":5}"#;

struct Outcome {
    requests: usize,
    errors: usize,
    seconds: f64,
    latencies: Vec<Duration>,
}

impl Outcome {
    fn percentile(&self, p: f64) -> Duration {
        let mut sorted = self.latencies.clone();
        sorted.sort_unstable();
        let index = ((sorted.len() as f64 - 1.0) * p).round() as usize;
        sorted.get(index).copied().unwrap_or_default()
    }
}

/// What is asked.
#[derive(Clone, Copy, PartialEq)]
enum Ask {
    CatalogRead,
    /// The README's plan, every time (answered from the kept answers after the first).
    SamePlan,
    /// The README's plan with a different token count each time: every one computed.
    DistinctPlans,
}

/// `requests` requests from `clients` clients at once, each waiting for its answer.
async fn run(client: &reqwest::Client, base: &str, ask: Ask, requests: usize, clients: usize) -> Outcome {
    let next = Arc::new(AtomicUsize::new(0));
    let started = Instant::now();
    // Distinct from every earlier round's plans, so none is answered from the kept answers.
    let started_nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.subsec_nanos() as usize % 1_000_000);
    let mut tasks = Vec::new();
    for _ in 0..clients {
        let (client, next, base) = (client.clone(), next.clone(), base.to_string());
        tasks.push(tokio::spawn(async move {
            let (mut latencies, mut errors) = (Vec::new(), 0);
            loop {
                let index = next.fetch_add(1, Ordering::Relaxed);
                if index >= requests {
                    break;
                }
                let sent = Instant::now();
                let plan = |body: String| {
                    client
                        .post(format!("{base}/api/v1/plan"))
                        .header("content-type", "application/json")
                        .body(body)
                };
                let request = match ask {
                    Ask::CatalogRead => client.get(format!("{base}/api/v1/catalog")),
                    Ask::SamePlan => plan(PLAN_BODY.to_string()),
                    Ask::DistinctPlans => {
                        plan(PLAN_BODY.replace("5e8", &format!("{}", 500_000_000 + index * 1_000_000 + started_nanos)))
                    }
                };
                let ok = match request.send().await {
                    Ok(response) => response.status().is_success() && response.bytes().await.is_ok(),
                    Err(_) => false,
                };
                latencies.push(sent.elapsed());
                if !ok {
                    errors += 1;
                }
            }
            (latencies, errors)
        }));
    }
    let mut outcome = Outcome {
        requests,
        errors: 0,
        seconds: 0.0,
        latencies: Vec::new(),
    };
    for task in tasks {
        if let Ok((latencies, errors)) = task.await {
            outcome.latencies.extend(latencies);
            outcome.errors += errors;
        }
    }
    outcome.seconds = started.elapsed().as_secs_f64();
    outcome
}

/// Resident memory of this process, MiB (Linux).
fn resident_mib() -> f64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmRSS:"))
                .and_then(|l| l.split_whitespace().nth(1)?.parse::<f64>().ok())
        })
        .map_or(f64::NAN, |kib| kib / 1024.0)
}

pub fn load(args: &[String]) -> Result<()> {
    let (mut reads, mut plans) = (20_000usize, 300usize);
    let mut rest = args.iter();
    while let Some(flag) = rest.next() {
        let value = rest.next().map(|v| v.parse::<usize>());
        match (flag.as_str(), value) {
            ("--requests", Some(Ok(n))) if n > 0 => reads = n,
            ("--plans", Some(Ok(n))) if n > 0 => plans = n,
            _ => bail!("usage: cargo xtask load [--requests N] [--plans N]"),
        }
    }
    let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build()?;
    runtime.block_on(async move {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
        let base = format!("http://{}", listener.local_addr()?);
        let state = gpuplan_server::AppState::new(gpuplan::Catalog::embedded()?);
        tokio::spawn(async move {
            let _ = axum::serve(listener, gpuplan_server::app(state)).await;
        });
        let client = reqwest::Client::builder().pool_max_idle_per_host(64).build()?;
        println!("| route | clients | requests | errors | req/s | p50 | p99 |");
        println!("|---|---:|---:|---:|---:|---:|---:|");
        let rounds = [
            ("GET /api/v1/catalog", Ask::CatalogRead, reads),
            ("POST /api/v1/plan, the README's plan repeated", Ask::SamePlan, reads),
            ("POST /api/v1/plan, a different plan each time", Ask::DistinctPlans, plans),
        ];
        for (route, ask, count) in rounds {
            for clients in CONCURRENCIES {
                let outcome = run(&client, &base, ask, count, clients).await;
                println!(
                    "| {route} | {clients} | {} | {} | {:.0} | {:.1} ms | {:.1} ms |",
                    outcome.requests,
                    outcome.errors,
                    outcome.requests as f64 / outcome.seconds,
                    outcome.percentile(0.5).as_secs_f64() * 1e3,
                    outcome.percentile(0.99).as_secs_f64() * 1e3,
                );
            }
        }
        let warm = run(&client, &base, Ask::CatalogRead, 10_000, 20).await;
        let before = resident_mib();
        let long = run(&client, &base, Ask::CatalogRead, 100_000, 20).await;
        let after = resident_mib();
        println!(
            "\nresident memory: {before:.0} MiB after 10,000 warm-up reads, {after:.0} MiB after 100,000 more ({} errors)",
            warm.errors + long.errors
        );
        anyhow::Ok(())
    })
}

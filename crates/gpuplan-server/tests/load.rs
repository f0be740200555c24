//! The API under load on loopback, checking only what must not vary with the machine: no
//! request fails, and memory does not grow with the number of requests served. Speed figures
//! come from `cargo run --release -p xtask -- load` and go in the README, never in a test.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

/// Resident memory of this process, KiB (Linux).
fn resident_kib() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .unwrap()
        .lines()
        .find(|l| l.starts_with("VmRSS:"))
        .and_then(|l| l.split_whitespace().nth(1)?.parse().ok())
        .unwrap()
}

/// `requests` requests of `path` (a plan body when given) from `clients` clients at once; the
/// number that failed.
async fn hammer(base: &str, path: &str, body: Option<&str>, requests: usize, clients: usize) -> usize {
    let client = reqwest::Client::new();
    let next = Arc::new(AtomicUsize::new(0));
    let failed = Arc::new(AtomicUsize::new(0));
    let mut tasks = Vec::new();
    for _ in 0..clients {
        let (client, next, failed) = (client.clone(), next.clone(), failed.clone());
        let url = format!("{base}{path}");
        let body = body.map(str::to_string);
        tasks.push(tokio::spawn(async move {
            while next.fetch_add(1, Ordering::Relaxed) < requests {
                let request = match &body {
                    Some(body) => client
                        .post(&url)
                        .header("content-type", "application/json")
                        .body(body.clone()),
                    None => client.get(&url),
                };
                let ok = match request.send().await {
                    Ok(r) => r.status().is_success() && r.bytes().await.is_ok(),
                    Err(_) => false,
                };
                if !ok {
                    failed.fetch_add(1, Ordering::Relaxed);
                }
            }
        }));
    }
    for task in tasks {
        task.await.unwrap();
    }
    failed.load(Ordering::Relaxed)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn many_requests_fail_none_and_leave_memory_flat() {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    let state = gpuplan_server::AppState::new(gpuplan::Catalog::embedded().unwrap());
    tokio::spawn(async move { axum::serve(listener, gpuplan_server::app(state)).await.unwrap() });

    let plan = r#"{"model":"llama-3.1-8b","task":"lora","seq":4096,"batch":32,"tokens":5e8,"deadline":24,"top":5}"#;
    assert_eq!(hammer(&base, "/api/v1/plan", Some(plan), 40, 20).await, 0);
    assert_eq!(hammer(&base, "/api/v1/catalog", None, 4_000, 20).await, 0);
    let warm = resident_kib();
    assert_eq!(hammer(&base, "/api/v1/catalog", None, 20_000, 20).await, 0);
    assert_eq!(hammer(&base, "/api/v1/models", None, 5_000, 20).await, 0);
    let after = resident_kib();
    // A leak of even 1 KiB a request would add 25 MiB; allocator noise stays well under 16 MiB.
    let growth_mib = after.saturating_sub(warm) as f64 / 1024.0;
    assert!(
        growth_mib < 16.0,
        "memory grew {growth_mib:.1} MiB over 25,000 requests"
    );
}

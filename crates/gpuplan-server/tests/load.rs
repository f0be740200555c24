//! The API under load on loopback, checking only what must not vary with the machine: no
//! request fails, and memory does not grow with the number of requests served. Speed figures
//! come from `cargo run --release -p xtask -- load` and go in docs/performance.md, never in a test.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

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

/// A runtime of two workers whose threads, and the calling one, count what they hold.
fn marked_runtime() -> tokio::runtime::Runtime {
    crate::held::mark_this_thread();
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .on_thread_start(crate::held::mark_this_thread)
        .enable_all()
        .build()
        .unwrap()
}

#[test]
fn many_requests_fail_none_and_leave_memory_flat() {
    marked_runtime().block_on(async {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let base = format!("http://{}", listener.local_addr().unwrap());
        let state = gpuplan_server::AppState::new(gpuplan::Catalog::embedded().unwrap());
        tokio::spawn(async move {
            gpuplan_server::serve_with(
                listener,
                state,
                gpuplan_server::Limits::default(),
                std::future::pending(),
            )
            .await
            .unwrap()
        });

        let plan = r#"{"model":"llama-3.1-8b","task":"lora","seq":4096,"batch":32,"tokens":5e8,"deadline":24,"top":5}"#;
        assert_eq!(hammer(&base, "/api/v1/plan", Some(plan), 40, 20).await, 0);
        assert_eq!(hammer(&base, "/api/v1/catalog", None, 500, 20).await, 0);
        assert_eq!(hammer(&base, "/api/v1/models", None, 500, 20).await, 0);
        // Two rounds of 2,000 requests, each counted exactly on this runtime's threads only. A
        // leak of one block a request, of any size, holds about 2,000 more after each round,
        // and one every other request 1,000; a one-off (a connection the clients' pool opens
        // late, a thread the runtime starts) shows in one round only. Measured: −142 to +125
        // blocks a reading across the whole suite, this test alone and beside four busy loops,
        // and 704 once in a fresh clone's whole suite on two cores (not reproduced since).
        let mut growth = Vec::new();
        for _ in 0..2 {
            let before = crate::held::held_blocks();
            assert_eq!(hammer(&base, "/api/v1/catalog", None, 1_000, 20).await, 0);
            assert_eq!(hammer(&base, "/api/v1/models", None, 1_000, 20).await, 0);
            growth.push(crate::held::held_blocks() - before);
        }
        assert!(
            growth.iter().any(|&g| g < 1_000),
            "the server and its clients hold {growth:?} more allocations after each 2,000 requests"
        );
    });
}

/// A server on loopback with `limits`, stopped when the returned sender is dropped or sent to.
async fn limited(limits: gpuplan_server::Limits) -> (String, tokio::sync::oneshot::Sender<()>) {
    limited_with(
        limits,
        gpuplan_server::AppState::new(gpuplan::Catalog::embedded().unwrap()),
    )
    .await
}

async fn limited_with(
    limits: gpuplan_server::Limits,
    state: gpuplan_server::AppState,
) -> (String, tokio::sync::oneshot::Sender<()>) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap().to_string();
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    tokio::spawn(async move {
        gpuplan_server::serve_with(listener, state, limits, async {
            let _ = stopped.await;
        })
        .await
        .unwrap();
    });
    (address, stop)
}

/// Bytes read from `stream` until it closes or `within` passes; `None` if it stayed open.
async fn read_until_closed(stream: &mut tokio::net::TcpStream, within: std::time::Duration) -> Option<Vec<u8>> {
    use tokio::io::AsyncReadExt as _;
    let mut bytes = Vec::new();
    tokio::time::timeout(within, stream.read_to_end(&mut bytes))
        .await
        .ok()?
        .ok()?;
    Some(bytes)
}

/// A client that drips its headers is cut off once its time for them is up, and connections
/// past the cap are closed as they arrive; the server goes on answering others.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn slow_senders_and_connections_past_the_cap_are_closed() {
    use tokio::io::AsyncWriteExt as _;
    let limits = gpuplan_server::Limits {
        connections: 2,
        request_timeout: gpuplan_server::REQUEST_TIMEOUT,
        header_read_timeout: std::time::Duration::from_millis(300),
        shutdown_grace: std::time::Duration::from_secs(1),
    };
    let (address, stop) = limited(limits).await;
    let mut slow = tokio::net::TcpStream::connect(&address).await.unwrap();
    slow.write_all(b"GET /healthz HTTP/1.1\r\nhost: x\r\n").await.unwrap();
    // Never finishes its headers: closed well before ten times its limit.
    assert!(
        read_until_closed(&mut slow, std::time::Duration::from_secs(3))
            .await
            .is_some(),
        "a slow sender held its connection"
    );
    let _first = tokio::net::TcpStream::connect(&address).await.unwrap();
    let _second = tokio::net::TcpStream::connect(&address).await.unwrap();
    tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    let mut third = tokio::net::TcpStream::connect(&address).await.unwrap();
    let closed = read_until_closed(&mut third, std::time::Duration::from_secs(3)).await;
    assert_eq!(
        closed,
        Some(Vec::new()),
        "a third connection past a cap of 2 was served"
    );
    drop((_first, _second));
    let _ = stop.send(());
}

/// Every answer says how it may be read: no content sniffing, no framing, no referrer; the
/// page's policy allows only its own script and style.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn answers_carry_the_security_headers() {
    let (address, stop) = limited(gpuplan_server::Limits::default()).await;
    let client = reqwest::Client::new();
    let health = client.get(format!("http://{address}/healthz")).send().await.unwrap();
    assert_eq!(health.headers()["x-content-type-options"], "nosniff");
    assert_eq!(health.headers()["x-frame-options"], "DENY");
    let page = client.get(format!("http://{address}/")).send().await.unwrap();
    let policy = page.headers()["content-security-policy"].to_str().unwrap().to_string();
    assert!(
        policy.contains("script-src 'sha256-") && policy.contains("frame-ancestors 'none'"),
        "{policy}"
    );
    assert!(!policy.contains("unsafe-inline"), "{policy}");
    let _ = stop.send(());
}

/// A plan cut off at the time limit is answered 503 and then stops: its search gives its core
/// back at the next candidate, and the server counts it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_plan_cut_off_at_its_limit_stops_and_frees_its_core() {
    let mut state = gpuplan_server::AppState::new(gpuplan::Catalog::embedded().unwrap());
    state.computing = Arc::new(tokio::sync::Semaphore::new(1));
    let limits = gpuplan_server::Limits {
        request_timeout: std::time::Duration::from_millis(20),
        ..gpuplan_server::Limits::default()
    };
    let (address, stop) = limited_with(limits, state).await;
    let client = reqwest::Client::new();
    let plan =
        r#"{"model":"llama-3.1-70b","task":"inference","qps":50,"ttft":"p90:1s","tpot":"p90:50ms","max_gpus":512}"#;
    let cut = client
        .post(format!("http://{address}/api/v1/plan"))
        .header("content-type", "application/json")
        .body(plan)
        .send()
        .await
        .unwrap();
    assert_eq!(cut.status(), reqwest::StatusCode::SERVICE_UNAVAILABLE);
    // The search notices at its next candidate; counted once it has stopped.
    let mut stopped = false;
    for _ in 0..200 {
        let metrics = client
            .get(format!("http://{address}/metrics"))
            .send()
            .await
            .unwrap()
            .text()
            .await
            .unwrap();
        if metrics.contains("gpuplan_cancelled_computations_total 1") {
            stopped = true;
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    assert!(stopped, "the cut-off plan kept computing");
    let _ = stop.send(());
}

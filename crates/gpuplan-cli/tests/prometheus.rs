//! `rightsize --prometheus` against a real Prometheus (Debian's `prometheus` package): the DCGM
//! fixture is backfilled with `promtool tsdb create-blocks-from openmetrics`, the server started
//! on loopback on that data, queried, and stopped. In CI the server must be there.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::print_stderr)]

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// Time Prometheus may take to open its database and answer `/-/ready`.
const READY_WITHIN: Duration = Duration::from_secs(60);

struct Server(Child);

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn installed(tool: &str) -> bool {
    Command::new(tool)
        .arg("--version")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

fn fixture(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../gpuplan-telemetry/tests/fixtures")
        .join(name)
}

fn start(data: &Path, port: u16) -> Server {
    let config = data.join("prometheus.yml");
    std::fs::write(&config, "global:\n  scrape_interval: 1h\nscrape_configs: []\n").unwrap();
    let child = Command::new("prometheus")
        .arg(format!("--config.file={}", config.display()))
        .arg(format!("--storage.tsdb.path={}", data.join("tsdb").display()))
        // The fixture is from 2024: keep it.
        .arg("--storage.tsdb.retention.time=100y")
        .arg(format!("--web.listen-address=127.0.0.1:{port}"))
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("prometheus starts");
    let server = Server(child);
    let ready = format!("http://127.0.0.1:{port}/-/ready");
    let started = Instant::now();
    while started.elapsed() < READY_WITHIN {
        if reqwest::blocking::get(&ready).is_ok_and(|r| r.status().is_success()) {
            return server;
        }
        std::thread::sleep(Duration::from_millis(200));
    }
    panic!("prometheus did not become ready");
}

#[test]
fn rightsize_reads_dcgm_metrics_from_a_live_prometheus() {
    if !installed("prometheus") || !installed("promtool") {
        assert!(
            std::env::var_os("CI").is_none(),
            "CI installs Debian's prometheus package (.ci/run)"
        );
        eprintln!("skipped: Debian's `prometheus` package (prometheus, promtool) is not installed");
        return;
    }
    let data = std::env::temp_dir().join(format!("gpuplan-prometheus-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&data);
    std::fs::create_dir_all(&data).unwrap();
    let backfill = Command::new("promtool")
        .args(["tsdb", "create-blocks-from", "openmetrics"])
        .arg(fixture("dcgm.om"))
        .arg(data.join("tsdb"))
        .output()
        .unwrap();
    assert!(
        backfill.status.success(),
        "{}",
        String::from_utf8_lossy(&backfill.stderr)
    );
    let port = free_port();
    let _server = start(&data, port);
    let output = Command::new(env!("CARGO_BIN_EXE_gpuplan"))
        .args(["rightsize", "--prometheus", &format!("http://127.0.0.1:{port}")])
        .args([
            "--selector",
            "{namespace=\"ml\"}",
            "--since",
            "2h",
            "--until",
            "2024-05-01T13:00:00Z",
        ])
        .args(["--format", "json"])
        .env_remove("GPUPLAN_CATALOG")
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    let answer: Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(answer["gpus"].as_array().unwrap().len(), 6);
    let kinds: Vec<&str> = answer["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["kind"].as_str().unwrap())
        .collect();
    assert!(
        kinds.contains(&"fewer-gpus") && kinds.contains(&"low-tensor-activity"),
        "{kinds:?}"
    );
    // A selector that matches nothing is a clear error, not an empty report.
    let empty = Command::new(env!("CARGO_BIN_EXE_gpuplan"))
        .args(["rightsize", "--prometheus", &format!("http://127.0.0.1:{port}")])
        .args([
            "--selector",
            "{namespace=\"nobody\"}",
            "--since",
            "2h",
            "--until",
            "2024-05-01T13:00:00Z",
        ])
        .output()
        .unwrap();
    assert_eq!(empty.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&empty.stderr).contains("--selector"));
    let _ = std::fs::remove_dir_all(&data);
}

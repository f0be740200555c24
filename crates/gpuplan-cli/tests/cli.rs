//! The `gpuplan` command line as a user meets it: commands, their output, their exit codes.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use serde_json::Value;
use std::process::Command;

struct Run {
    code: i32,
    stdout: String,
    stderr: String,
}

impl Run {
    fn json(&self) -> Value {
        serde_json::from_str(&self.stdout).unwrap_or_else(|e| panic!("not JSON ({e}):\n{}", self.stdout))
    }
}

fn gpuplan(args: &[&str]) -> Run {
    let output = Command::new(env!("CARGO_BIN_EXE_gpuplan"))
        .args(args)
        .env_remove("GPUPLAN_CATALOG")
        .env_remove("GPUPLAN_GCP_API_KEY")
        .env_remove("GPUPLAN_LAMBDA_API_KEY")
        .env("NO_COLOR", "1")
        .output()
        .expect("the gpuplan binary runs");
    Run {
        code: output.status.code().unwrap_or(-1),
        stdout: String::from_utf8(output.stdout).unwrap(),
        stderr: String::from_utf8(output.stderr).unwrap(),
    }
}

mod gpus {
    use super::*;

    #[test]
    fn lists_every_accelerator_as_json_with_the_contract_fields() {
        let run = gpuplan(&["gpus", "--format", "json"]);
        assert_eq!(run.code, 0, "{}", run.stderr);
        let gpus = run.json();
        let gpus = gpus.as_array().unwrap();
        assert!(gpus.len() >= 35, "{} accelerators", gpus.len());
        for gpu in gpus {
            for field in [
                "id",
                "aliases",
                "memory_bytes",
                "memory_bandwidth_bytes_per_second",
                "peak_tflops",
                "tdp_watts",
                "sources",
            ] {
                assert!(gpu.get(field).is_some(), "{} lacks {field}", gpu["id"]);
            }
        }
        let h100 = gpus.iter().find(|g| g["id"] == "H100-SXM5-80GB").unwrap();
        assert_eq!(h100["memory_bytes"], 80u64 * 1024 * 1024 * 1024);
        assert_eq!(h100["peak_tflops"]["bf16"], 989.4);
        assert!(
            h100["peak_tflops"].get("int4").is_none(),
            "unsupported precisions are absent"
        );
    }

    #[test]
    fn the_table_lists_accelerators() {
        let run = gpuplan(&["gpus"]);
        assert_eq!(run.code, 0);
        assert!(run.stdout.contains("H100-SXM5-80GB") && run.stdout.contains("TPU-v5e"));
    }

    #[test]
    fn one_accelerator_shows_its_sources() {
        let run = gpuplan(&["gpus", "t4"]);
        assert_eq!(run.code, 0, "{}", run.stderr);
        insta::assert_snapshot!(run.stdout);
    }

    #[test]
    fn a_rack_scale_part_shows_its_nvlink_domain_and_node() {
        let run = gpuplan(&["gpus", "GB200"]);
        assert_eq!(run.code, 0, "{}", run.stderr);
        assert!(
            run.stdout.contains("scale-up domain        72 GPUs on that link"),
            "{}",
            run.stdout
        );
        assert!(
            run.stdout
                .contains("node                   4 GPUs, as its systems hold"),
            "{}",
            run.stdout
        );
        let hgx = gpuplan(&["gpus", "H100-SXM5-80GB"]);
        assert!(
            !hgx.stdout.contains("node   "),
            "an 8-GPU server is the usual node: {}",
            hgx.stdout
        );
    }

    #[test]
    fn an_alias_resolves_with_a_visible_note() {
        let run = gpuplan(&["gpus", "h100"]);
        assert_eq!(run.code, 0);
        assert!(run.stdout.contains("H100-SXM5-80GB"));
        assert_eq!(
            run.stderr,
            "note: `h100` means H100-SXM5-80GB; other variants: H100-NVL-94GB, H100-PCIE-80GB\n"
        );
    }

    #[test]
    fn an_ambiguous_family_lists_its_members() {
        let run = gpuplan(&["gpus", "A100", "--format", "csv"]);
        assert_eq!(run.code, 0);
        insta::assert_snapshot!(run.stdout);
        assert!(run.stderr.contains("`A100` matches 4 accelerators"), "{}", run.stderr);
    }

    #[test]
    fn a_typo_gets_did_you_mean_and_exit_2() {
        let run = gpuplan(&["gpus", "h1OO"]);
        assert_eq!(run.code, 2);
        assert_eq!(
            run.stderr,
            "error: unknown accelerator `h1OO`\n  hint: did you mean `H100`?\n"
        );
        assert_eq!(run.stdout, "");
    }
}

mod instances {
    /// CPU shapes obey the provider, region and price filters like GPU ones.
    #[test]
    fn cpu_shapes_are_filtered_by_provider_region_and_price() {
        let run = gpuplan(&[
            "instances",
            "--include-cpu",
            "--provider",
            "aws",
            "--region",
            "us-east-1",
            "--max-price",
            "0.2",
            "--format",
            "json",
        ]);
        assert_eq!(run.code, 0, "{}", run.stderr);
        let rows = run.json();
        let rows = rows.as_array().unwrap();
        assert!(rows.iter().any(|r| r["gpu"].is_null()), "no CPU shape listed");
        for r in rows {
            assert_eq!(r["provider"], "aws");
            assert_eq!(r["region"], "us-east-1");
            assert!(r["on_demand_usd_per_hour"].as_f64().unwrap() <= 0.2);
        }
    }

    /// A guide's whole-machine filters: at least 32 vCPUs and 128 GiB of host memory.
    #[test]
    fn whole_machine_filters_keep_only_instances_that_large() {
        let run = gpuplan(&[
            "instances",
            "--gpu",
            "L4",
            "--min-vcpus",
            "32",
            "--min-memory",
            "128",
            "--limit",
            "0",
            "--format",
            "json",
        ]);
        assert_eq!(run.code, 0, "{}", run.stderr);
        let rows = run.json();
        let rows = rows.as_array().unwrap();
        assert!(!rows.is_empty());
        for r in rows {
            assert!(r["vcpus"].as_f64().unwrap() >= 32.0, "{r}");
            assert!(
                r["memory_bytes"].as_f64().unwrap() >= 128.0 * 1024.0 * 1024.0 * 1024.0,
                "{r}"
            );
        }
        assert_eq!(gpuplan(&["instances", "--min-vcpus", "-1"]).code, 2);
        // The guides say "RAM": the same filter.
        let ram = gpuplan(&[
            "instances",
            "--gpu",
            "L4",
            "--min-vcpus",
            "32",
            "--min-ram",
            "128",
            "--limit",
            "0",
            "--format",
            "json",
        ]);
        assert_eq!(ram.code, 0, "{}", ram.stderr);
        assert_eq!(ram.json(), run.json());
    }

    /// Tencent Cloud publishes no spot price per type, only a typical share of pay-as-you-go:
    /// `--spot` lists its instances at that share (20 %), marked, with the footer saying how;
    /// JSON carries the derivation, and a price the catalog lists carries none.
    #[test]
    fn spot_published_only_as_a_share_is_listed_marked() {
        let table = gpuplan(&["instances", "--spot", "--providers", "tencent", "--gpu", "T4"]);
        assert_eq!(table.code, 0, "{}", table.stderr);
        assert!(table.stdout.contains("GN7.2XLARGE32"), "{}", table.stdout);
        assert!(table.stdout.contains("0.204*"), "{}", table.stdout);
        assert!(
            table
                .stdout
                .contains("* Tencent Cloud: 20 % of on-demand, the top of the spot range"),
            "{}",
            table.stdout
        );
        let json = gpuplan(&[
            "instances",
            "--spot",
            "--providers",
            "tencent,aws",
            "--gpu",
            "T4",
            "--limit",
            "0",
            "--format",
            "json",
        ]);
        assert_eq!(json.code, 0, "{}", json.stderr);
        let rows = json.json();
        let rows = rows.as_array().unwrap();
        for row in rows {
            let (on_demand, spot) = (
                row["on_demand_usd_per_hour"].as_f64(),
                row["spot_usd_per_hour"].as_f64().unwrap(),
            );
            match row["provider"].as_str().unwrap() {
                "tencent" => {
                    assert!((spot - 0.2 * on_demand.unwrap()).abs() < 1e-9, "{row}");
                    assert!(row["spot_derivation"].as_str().unwrap().contains("3–20 %"), "{row}");
                }
                _ => assert!(row["spot_derivation"].is_null(), "{row}"),
            }
        }
        assert!(rows.iter().any(|r| r["provider"] == "aws"), "{rows:?}");
        // Cheapest spot first, derived and listed prices sorted together.
        let prices: Vec<f64> = rows.iter().map(|r| r["spot_usd_per_hour"].as_f64().unwrap()).collect();
        assert!(prices.windows(2).all(|w| w[0] <= w[1]), "{prices:?}");
        // Alibaba states only a floor: no spot price to list.
        let alibaba = gpuplan(&["instances", "--spot", "--providers", "alibaba", "--format", "json"]);
        assert_eq!(alibaba.code, 0, "{}", alibaba.stderr);
        assert_eq!(alibaba.json(), serde_json::json!([]));
    }

    /// A guide's "Ampere or newer" and "at least 1 TB of local NVMe": compute capability 8.0
    /// keeps A100, L4 and H100 and drops T4 (7.5) and V100 (7.0), and every row has the disk;
    /// a capability written as a word is refused with the spelling to use.
    #[test]
    fn compute_capability_and_local_disk_filters_keep_only_what_they_say() {
        let run = gpuplan(&[
            "instances",
            "--compute-capability",
            "8.0",
            "--min-disk",
            "1000",
            "--limit",
            "0",
            "--format",
            "json",
        ]);
        assert_eq!(run.code, 0, "{}", run.stderr);
        let rows = run.json();
        let rows = rows.as_array().unwrap();
        let gpus: std::collections::BTreeSet<&str> = rows.iter().map(|r| r["gpu"].as_str().unwrap()).collect();
        assert!(
            gpus.contains("A100-SXM4-80GB") && gpus.contains("H100-SXM5-80GB"),
            "{gpus:?}"
        );
        assert!(
            !gpus.iter().any(|g| g.starts_with("T4") || g.starts_with("V100")),
            "{gpus:?}"
        );
        assert!(
            !gpus.iter().any(|g| g.starts_with("MI") || g.starts_with("TPU")),
            "{gpus:?}"
        );
        for r in rows {
            assert!(r["local_disk_bytes"].as_f64().unwrap() >= 1e12, "{r}");
        }
        let hopper = gpuplan(&[
            "instances",
            "--compute-capability",
            "sm_90",
            "--limit",
            "0",
            "--format",
            "json",
        ]);
        let hopper = hopper.json();
        assert!(
            hopper
                .as_array()
                .unwrap()
                .iter()
                .all(|r| !r["gpu"].as_str().unwrap().starts_with("A100"))
        );
        let word = gpuplan(&["instances", "--compute-capability", "hopper"]);
        assert_eq!(word.code, 2);
        assert!(
            word.stderr.contains("--compute-capability") && word.stderr.contains("sm_90"),
            "{}",
            word.stderr
        );
    }

    #[test]
    fn your_prices_replace_list_prices_and_show_them_beside() {
        let dir = std::env::temp_dir().join(format!("gpuplan-prices-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join("ours.csv");
        std::fs::write(
            &file,
            "provider,instance_type,region,billing,usd_per_hour,discount_percent\naws,p5.48xlarge,,on-demand,31,\n",
        )
        .unwrap();
        let run = gpuplan(&[
            "--prices",
            file.to_str().unwrap(),
            "instances",
            "--provider",
            "aws",
            "--gpu",
            "H100",
            "--format",
            "json",
        ]);
        assert_eq!(run.code, 0, "{}", run.stderr);
        let rows = run.json();
        let p5 = rows
            .as_array()
            .unwrap()
            .iter()
            .find(|r| r["instance_type"] == "p5.48xlarge")
            .unwrap();
        assert_eq!(p5["on_demand_usd_per_hour"], 31.0);
        assert!(p5["list_on_demand_usd_per_hour"].as_f64().unwrap() > 31.0);
        std::fs::write(
            &file,
            "provider,instance_type,region,billing,usd_per_hour,discount_percent\naws,p5.48xlarg,,on-demand,31,\n",
        )
        .unwrap();
        let typo = gpuplan(&["--prices", file.to_str().unwrap(), "instances"]);
        assert_eq!(typo.code, 2);
        assert!(typo.stderr.contains("did you mean `p5.48xlarge`"), "{}", typo.stderr);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    use super::*;

    #[test]
    fn h100_is_rented_by_at_least_five_providers() {
        let run = gpuplan(&["instances", "--gpu", "H100", "--format", "json"]);
        assert_eq!(run.code, 0, "{}", run.stderr);
        let providers: std::collections::BTreeSet<String> = run
            .json()
            .as_array()
            .unwrap()
            .iter()
            .map(|o| o["provider"].as_str().unwrap().to_string())
            .collect();
        assert!(providers.len() >= 5, "{providers:?}");
    }

    #[test]
    fn t4_includes_aws_g4dn_and_an_alibaba_or_tencent_offering() {
        let run = gpuplan(&["instances", "--gpu", "T4", "--format", "json"]);
        let offerings = run.json();
        let offerings = offerings.as_array().unwrap();
        assert!(
            offerings
                .iter()
                .any(|o| o["provider"] == "aws" && o["instance_type"] == "g4dn.xlarge")
        );
        assert!(
            offerings
                .iter()
                .any(|o| o["provider"] == "alibaba" || o["provider"] == "tencent")
        );
        for field in [
            "provider",
            "instance_type",
            "region",
            "gpu",
            "gpu_count",
            "vcpus",
            "memory_bytes",
            "on_demand_usd_per_hour",
            "spot_usd_per_hour",
            "source",
            "as_of",
        ] {
            assert!(offerings[0].get(field).is_some(), "missing {field}");
        }
    }

    #[test]
    fn filters_and_sorts_by_price() {
        let run = gpuplan(&[
            "instances",
            "--provider",
            "aws",
            "--max-price",
            "2",
            "--sort",
            "price",
            "--format",
            "json",
        ]);
        assert_eq!(run.code, 0, "{}", run.stderr);
        let offerings = run.json();
        let prices: Vec<f64> = offerings
            .as_array()
            .unwrap()
            .iter()
            .map(|o| {
                assert_eq!(o["provider"], "aws");
                o["on_demand_usd_per_hour"].as_f64().unwrap()
            })
            .collect();
        assert!(!prices.is_empty());
        assert!(prices.iter().all(|p| *p <= 2.0));
        assert!(prices.windows(2).all(|w| w[0] <= w[1]));
    }

    #[test]
    fn min_gpus_and_memory_filters() {
        let run = gpuplan(&["instances", "--gpu", "A100-80GB", "--min-gpus", "8", "--format", "json"]);
        let offerings = run.json();
        let offerings = offerings.as_array().unwrap();
        assert!(!offerings.is_empty());
        assert!(offerings.iter().all(|o| o["gpu_count"].as_u64().unwrap() >= 8));
        assert!(offerings.iter().all(|o| o["gpu"].as_str().unwrap().contains("80GB")));
        assert!(run.stderr.contains("`A100-80GB` matches"), "{}", run.stderr);
    }

    #[test]
    fn a_table_for_people() {
        let run = gpuplan(&[
            "instances",
            "--gpu",
            "L4",
            "--provider",
            "gcp",
            "--region",
            "us-central1",
            "--limit",
            "4",
        ]);
        assert_eq!(run.code, 0, "{}", run.stderr);
        insta::assert_snapshot!(run.stdout);
    }

    #[test]
    fn markdown_and_csv() {
        let markdown = gpuplan(&[
            "instances",
            "--gpu",
            "p100",
            "--provider",
            "oci",
            "--format",
            "markdown",
        ]);
        assert!(
            markdown.stdout.starts_with("| provider | instance type |"),
            "{}",
            markdown.stdout
        );
        // CSV is data: raw values under the wire format's names, units in the column names.
        let csv = gpuplan(&["instances", "--gpu", "p100", "--provider", "oci", "--format", "csv"]);
        assert!(
            csv.stdout.starts_with("provider,instance_type,region,gpu,"),
            "{}",
            csv.stdout
        );
        let header = csv.stdout.lines().next().unwrap();
        assert!(
            header.contains("on_demand_usd_per_hour") && header.contains("gpu_memory_bytes"),
            "{header}"
        );
        assert!(
            !csv.stdout.contains('$') && !csv.stdout.contains("GiB"),
            "{}",
            csv.stdout
        );
    }

    #[test]
    fn unknown_gpu_exits_2_with_did_you_mean() {
        let run = gpuplan(&["instances", "--gpu", "h1OO"]);
        assert_eq!(run.code, 2);
        assert!(run.stderr.contains("did you mean `H100`?"), "{}", run.stderr);
    }

    #[test]
    fn unknown_provider_exits_2_with_did_you_mean() {
        let run = gpuplan(&["instances", "--provider", "lamda"]);
        assert_eq!(run.code, 2);
        assert_eq!(
            run.stderr,
            "error: unknown provider `lamda`\n  hint: did you mean `lambda`?\n"
        );
    }

    #[test]
    fn contradictory_filters_exit_2() {
        let run = gpuplan(&["instances", "--min-gpus", "8", "--max-gpus", "2"]);
        assert_eq!(run.code, 2);
        assert!(
            run.stderr.contains("--min-gpus 8 is more than --max-gpus 2"),
            "{}",
            run.stderr
        );
    }

    #[test]
    fn errors_are_json_when_json_was_asked_for() {
        let run = gpuplan(&["instances", "--gpu", "h1OO", "--format", "json"]);
        assert_eq!(run.code, 2);
        let error: Value = serde_json::from_str(&run.stderr).unwrap();
        assert_eq!(error["error"]["code"], "unknown_accelerator");
        assert_eq!(error["error"]["hint"], "did you mean `H100`?");
    }

    #[test]
    fn bad_arguments_exit_2_without_a_backtrace() {
        for args in [
            &["instances", "--max-price", "cheap"][..],
            &["instances", "--sort", "colour"],
            &["frobnicate"],
        ] {
            let run = gpuplan(args);
            assert_eq!(run.code, 2, "{args:?}");
            assert!(!run.stderr.contains("panicked"), "{}", run.stderr);
        }
    }

    #[test]
    fn negative_numbers_are_read_as_values_and_refused_for_what_they_are() {
        let run = gpuplan(&["cost", "--price", "3.06", "--hours", "-1"]);
        assert_eq!(run.code, 2);
        assert!(run.stderr.contains("--hours must be between 0 and"), "{}", run.stderr);
        let run = gpuplan(&[
            "plan",
            "--model",
            "llama-3.1-8b",
            "--task",
            "lora",
            "--memory-margin",
            "-0.1",
        ]);
        assert_eq!(run.code, 2);
        assert!(run.stderr.contains("--memory-margin"), "{}", run.stderr);
    }

    #[test]
    fn zero_sizes_are_bad_input_in_plan_as_in_estimate() {
        for flag in ["--seq", "--batch", "--micro-batch", "--lora-rank"] {
            for command in ["plan", "estimate"] {
                let mut args = vec![command, "--model", "llama-3.1-8b", "--task", "lora", flag, "0"];
                if command == "estimate" {
                    args.extend(["--gpu", "H100"]);
                }
                let run = gpuplan(&args);
                assert_eq!(run.code, 2, "{command} {flag}: {}", run.stderr);
                assert!(
                    run.stderr.contains(&format!("{flag} must be at least 1")),
                    "{}",
                    run.stderr
                );
            }
        }
    }

    #[test]
    fn durations_take_scientific_notation_like_counts() {
        let run = gpuplan(&[
            "plan",
            "--model",
            "llama-3.1-8b",
            "--task",
            "lora",
            "--tokens",
            "1e8",
            "--deadline",
            "1e308h",
        ]);
        assert_eq!(run.code, 2);
        assert!(run.stderr.contains("longer than any job"), "{}", run.stderr);
        let run = gpuplan(&[
            "plan",
            "--model",
            "llama-3.1-8b",
            "--task",
            "lora",
            "--tokens",
            "1e8",
            "--deadline",
            "2.4e1h",
            "--format",
            "json",
        ]);
        assert_eq!(run.code, 0, "{}", run.stderr);
    }

    #[test]
    fn integer_precisions_do_not_train_and_node_shapes_must_be_whole() {
        let run = gpuplan(&[
            "estimate",
            "--model",
            "gpt2",
            "--task",
            "pretrain",
            "--gpu",
            "A30",
            "--precision",
            "int4",
        ]);
        assert_eq!(run.code, 2);
        assert!(run.stderr.contains("does not train"), "{}", run.stderr);
        let run = gpuplan(&[
            "estimate",
            "--model",
            "gpt2",
            "--task",
            "pretrain",
            "--gpu",
            "A30",
            "--gpus",
            "98",
            "--gpus-per-node",
            "8",
        ]);
        assert_eq!(run.code, 2);
        assert!(run.stderr.contains("whole nodes"), "{}", run.stderr);
    }

    #[test]
    fn spot_without_a_spot_price_names_the_flag_that_is_missing() {
        let run = gpuplan(&["cost", "--price", "3.06", "--hours", "10", "--billing", "spot"]);
        assert_eq!(run.code, 2, "{}", run.stdout);
        assert!(run.stderr.contains("--spot-price"), "{}", run.stderr);
    }

    #[test]
    fn a_copy_of_the_built_in_data_is_a_catalog_with_its_models_and_a_stray_folder_is_not() {
        let data = format!("{}/../gpuplan-catalog/data", env!("CARGO_MANIFEST_DIR"));
        let run = gpuplan(&["--catalog", &data, "models", "--format", "json"]);
        assert_eq!(run.code, 0, "{}", run.stderr);
        assert!(run.stdout.contains("llama-3.1-8b"));
        let run = gpuplan(&["--catalog", env!("CARGO_MANIFEST_DIR"), "models"]);
        assert_eq!(run.code, 2);
        assert!(run.stderr.contains("not a catalog"), "{}", run.stderr);
    }

    #[test]
    fn an_instance_filtered_out_by_region_says_where_it_is_offered() {
        let run = gpuplan(&[
            "cost",
            "--instance",
            "p4d.24xlarge",
            "--region",
            "mars-",
            "--hours",
            "10",
        ]);
        assert_eq!(run.code, 2);
        assert!(
            run.stderr.contains("not offered in the providers and regions given"),
            "{}",
            run.stderr
        );
        assert!(run.stderr.contains("aws "), "{}", run.stderr);
        assert!(!run.stderr.contains("did you mean"), "{}", run.stderr);
        let run = gpuplan(&[
            "estimate",
            "--model",
            "gpt2",
            "--task",
            "pretrain",
            "--gpu",
            "A30",
            "--gpus",
            "4294967295",
        ]);
        assert_eq!(run.code, 2);
        assert!(run.stderr.contains("more than any cluster"), "{}", run.stderr);
    }

    #[test]
    fn rent_against_buy_and_host_minimums_refuse_nan_and_zero() {
        for args in [
            &[
                "energy",
                "--gpu",
                "H100-SXM5-80GB",
                "--hours",
                "100",
                "--purchase-price",
                "NaN",
                "--rent-price",
                "2",
            ][..],
            &[
                "energy",
                "--gpu",
                "H100-SXM5-80GB",
                "--hours",
                "100",
                "--purchase-price",
                "30000",
                "--rent-price",
                "0",
            ],
            &[
                "energy",
                "--gpu",
                "H100-SXM5-80GB",
                "--hours",
                "100",
                "--purchase-price",
                "30000",
                "--rent-price",
                "2",
                "--depreciation-years",
                "0",
            ],
            &[
                "plan",
                "--model",
                "llama-3.1-8b",
                "--task",
                "lora",
                "--tokens",
                "1e8",
                "--min-vcpus-per-gpu",
                "NaN",
            ],
        ] {
            let run = gpuplan(args);
            assert_eq!(run.code, 2, "{args:?}: {}", run.stdout);
            assert!(run.stderr.contains("must be"), "{}", run.stderr);
        }
    }

    #[test]
    fn a_huge_value_is_not_echoed_back_in_full() {
        let long = "x".repeat(100_000);
        for args in [
            vec!["plan", "--model", long.as_str(), "--task", "lora"],
            vec![
                "plan",
                "--model",
                "llama-3.1-8b",
                "--task",
                "lora",
                "--seq",
                long.as_str(),
            ],
        ] {
            let run = gpuplan(&args);
            assert_eq!(run.code, 2);
            assert!(run.stderr.len() < 2_000, "{} bytes of error", run.stderr.len());
            assert!(
                run.stderr.contains("characters left out"),
                "{}",
                &run.stderr[..200.min(run.stderr.len())]
            );
        }
    }

    #[test]
    fn a_nan_storage_size_is_refused_not_priced() {
        let run = gpuplan(&["cost", "--price", "3.06", "--hours", "10", "--storage-gb", "NaN"]);
        assert_eq!(run.code, 2, "{}", run.stdout);
        assert!(run.stderr.contains("--storage-gb"), "{}", run.stderr);
        assert!(!run.stdout.contains("NaN"), "{}", run.stdout);
    }

    #[test]
    fn tokens_for_an_image_model_are_refused_instead_of_an_infinite_plan() {
        let run = gpuplan(&["plan", "--model", "sdxl", "--task", "pretrain", "--tokens", "1e8"]);
        assert_eq!(run.code, 2, "{}", run.stdout);
        assert!(run.stderr.contains("--dataset-size"), "{}", run.stderr);
        assert!(!run.stdout.contains("inf"), "{}", run.stdout);
    }

    #[test]
    fn a_forecast_far_beyond_its_history_is_refused_and_a_short_one_still_forecasts() {
        let dir = std::env::temp_dir().join(format!("gpuplan-six-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("six.csv");
        let rows: String = (1..=6).map(|m| format!("2024-{m:02}-01,{m}\n")).collect();
        std::fs::write(&path, format!("timestamp,value\n{rows}")).unwrap();
        let history = path.to_str().unwrap();
        let far = gpuplan(&[
            "forecast",
            "--history",
            history,
            "--horizon",
            "1000000",
            "--format",
            "csv",
        ]);
        assert_eq!(far.code, 2, "{}", far.stdout);
        assert!(far.stderr.contains("horizon"), "{}", far.stderr);
        let near = gpuplan(&["forecast", "--history", history, "--horizon", "3"]);
        assert_eq!(near.code, 0, "{}", near.stderr);
        assert!(near.stdout.contains("drift"), "{}", near.stdout);
    }

    #[test]
    fn an_unknown_input_pipeline_is_refused_with_the_known_ones() {
        let run = gpuplan(&[
            "plan",
            "--model",
            "resnet-50",
            "--task",
            "pretrain",
            "--input-pipeline",
            "magic",
        ]);
        assert_eq!(run.code, 2, "{}", run.stderr);
        assert!(
            run.stderr.contains("cpu-pil") && run.stderr.contains("dali"),
            "{}",
            run.stderr
        );
    }

    #[test]
    fn a_negative_price_limit_is_refused() {
        let run = gpuplan(&["instances", "--max-price=-1"]);
        assert_eq!(run.code, 2);
        assert!(
            run.stderr.contains("--max-price must be a positive number, found -1"),
            "{}",
            run.stderr
        );
    }
}

mod catalog {
    use super::*;

    fn scratch(name: &str) -> std::path::PathBuf {
        let dir = std::env::temp_dir().join(format!("gpuplan-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        dir
    }

    /// `gpuplan catalog refresh --provider azure --from FROM --into INTO`.
    fn refresh_azure(from: &str, into: &str) -> Run {
        gpuplan(&[
            "catalog",
            "refresh",
            "--provider",
            "azure",
            "--from",
            from,
            "--into",
            into,
        ])
    }

    /// Recorded Azure pages in, a catalog folder out that every command can read, with the
    /// quoted prices changed; refreshing twice replaces the folder whole.
    #[test]
    fn a_refresh_from_recorded_pages_round_trips() {
        let into = scratch("refresh");
        let pages = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../gpuplan-catalog/tests/fixtures/refresh/azure"
        );
        for _ in 0..2 {
            let run = refresh_azure(pages, into.to_str().unwrap());
            assert_eq!(run.code, 0, "{}", run.stderr);
            // Each refresh starts from the catalog in use (here the built-in one), so both
            // change the same three prices; the folder is replaced whole, not merged into.
            assert!(run.stdout.contains("3 prices changed"), "{}", run.stdout);
            assert!(
                run.stdout
                    .contains("Standard_NC4as_T4_v3 eastus on-demand: 0.5260 → 0.5000"),
                "{}",
                run.stdout
            );
        }
        let listed = gpuplan(&[
            "--catalog",
            into.to_str().unwrap(),
            "instances",
            "--provider",
            "azure",
            "--gpu",
            "T4",
            "--region",
            "eastus",
            "--format",
            "json",
        ]);
        assert_eq!(listed.code, 0, "{}", listed.stderr);
        let rows = listed.json();
        let t4 = rows
            .as_array()
            .unwrap()
            .iter()
            .find(|r| r["instance_type"] == "Standard_NC4as_T4_v3" && r["region"] == "eastus")
            .unwrap();
        assert_eq!(t4["on_demand_usd_per_hour"], 0.5);
        assert_eq!(t4["source"], "https://prices.azure.com/api/retail/prices");
        std::fs::remove_dir_all(&into).unwrap();
    }

    /// Both providers at once, from a folder with one subfolder each: AWS's offer file and
    /// Azure's pages change their prices in one catalog, and every command reads it.
    #[test]
    fn aws_and_azure_refresh_together() {
        let into = scratch("refresh-both");
        let folder = concat!(env!("CARGO_MANIFEST_DIR"), "/../gpuplan-catalog/tests/fixtures/refresh");
        let run = gpuplan(&["catalog", "refresh", "--from", folder, "--into", into.to_str().unwrap()]);
        assert_eq!(run.code, 0, "{}", run.stderr);
        assert!(run.stdout.contains("refreshed aws: 2 prices changed"), "{}", run.stdout);
        assert!(
            run.stdout
                .contains("p4d.24xlarge us-east-1 (4 zones) on-demand: 21.9576 → 20.0000"),
            "{}",
            run.stdout
        );
        assert!(
            run.stdout.contains("refreshed azure: 3 prices changed"),
            "{}",
            run.stdout
        );
        let listed = gpuplan(&[
            "--catalog",
            into.to_str().unwrap(),
            "instances",
            "--provider",
            "aws",
            "--gpu",
            "A100-SXM4-40GB",
            "--region",
            "us-east-1",
            "--format",
            "json",
        ]);
        assert_eq!(listed.code, 0, "{}", listed.stderr);
        assert!(listed.stdout.contains("20.0"), "{}", listed.stdout);
        assert!(
            listed.stderr.contains("note: using the catalog in ") && listed.stderr.contains("prices up to"),
            "a command names the catalog it used: {}",
            listed.stderr
        );
    }

    /// Every file of `folder`, with its bytes, in name order.
    fn contents(folder: &std::path::Path) -> Vec<(std::path::PathBuf, Vec<u8>)> {
        let mut files: Vec<_> = walk(folder)
            .into_iter()
            .map(|p| {
                let bytes = std::fs::read(&p).unwrap();
                (p, bytes)
            })
            .collect();
        files.sort();
        files
    }

    /// A refresh never replaces what is not a catalog an earlier refresh wrote: a folder of the
    /// user's files, a plain file, the recorded answers themselves, or the current folder; each
    /// is refused with exit 2 and left byte-identical, with no staging folder left behind.
    #[test]
    fn into_refuses_whatever_is_not_a_gpuplan_catalog() {
        let root = scratch("refuse");
        std::fs::create_dir_all(root.join("notes")).unwrap();
        std::fs::write(root.join("notes/notes.txt"), "precious").unwrap();
        std::fs::write(root.join("file.txt"), "also precious").unwrap();
        let pages = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../gpuplan-catalog/tests/fixtures/refresh/azure"
        );
        let recorded = contents(std::path::Path::new(pages));
        let before = contents(&root);
        for into in [
            root.join("notes"),
            root.join("file.txt"),
            root.join("missing/parent"),
            std::path::PathBuf::from(pages),
            std::path::PathBuf::from(pages).join("inside"),
        ] {
            let run = refresh_azure(pages, into.to_str().unwrap());
            assert_eq!(run.code, 2, "{}: {}", into.display(), run.stderr);
            assert!(
                run.stderr.contains("--into") && run.stderr.contains("nothing was written"),
                "{}",
                run.stderr
            );
        }
        let here = Command::new(env!("CARGO_BIN_EXE_gpuplan"))
            .args([
                "catalog",
                "refresh",
                "--provider",
                "azure",
                "--from",
                pages,
                "--into",
                ".",
            ])
            .current_dir(&root)
            .output()
            .unwrap();
        assert_eq!(here.status.code(), Some(2));
        assert_eq!(contents(&root), before, "the folders are untouched");
        assert_eq!(
            contents(std::path::Path::new(pages)),
            recorded,
            "the recorded answers are untouched"
        );
        let names: Vec<String> = std::fs::read_dir(&root)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        assert!(
            names.iter().all(|n| !n.starts_with('.')),
            "no staging folder is left: {names:?}"
        );
        std::fs::remove_dir_all(&root).unwrap();
    }

    /// Quotes no instance can have are left out and named, never written: a price of 1e308, a
    /// negative one, one of $120 million an hour, and a meter priced per month.
    #[test]
    fn impossible_quotes_are_skipped_and_named() {
        let pages = scratch("absurd-pages");
        std::fs::create_dir_all(&pages).unwrap();
        let meter = |price: &str, unit: &str, sku: &str| {
            format!(
                r#"{{"currencyCode":"USD","retailPrice":{price},"unitPrice":{price},"armRegionName":"eastus","location":"US East","meterName":"x","productName":"Virtual Machines NCasT4_v3 Series","skuName":"{sku}","serviceName":"Virtual Machines","unitOfMeasure":"{unit}","type":"Consumption","armSkuName":"Standard_NC4as_T4_v3"}}"#
            )
        };
        let page = format!(
            r#"{{"BillingCurrency":"USD","Items":[{},{},{},{},{}],"NextPageLink":null}}"#,
            meter("1e308", "1 Hour", "NC4as T4 v3"),
            meter("-3", "1 Hour", "NC4as T4 v3 Spot"),
            meter("120000000", "1 Hour", "NC4as T4 v3"),
            meter("380", "1 Month", "NC4as T4 v3"),
            meter("0.51", "1 Hour", "NC4as T4 v3"),
        );
        std::fs::write(pages.join("page.json"), page).unwrap();
        let into = scratch("absurd-into");
        let run = refresh_azure(pages.to_str().unwrap(), into.to_str().unwrap());
        assert_eq!(run.code, 0, "{}", run.stderr);
        assert!(run.stdout.contains("4 quotes skipped"), "{}", run.stdout);
        assert!(
            run.stdout.contains("not a price") && run.stdout.contains("beyond any instance's price"),
            "{}",
            run.stdout
        );
        assert!(
            run.stdout.contains("priced per `1 Month`, not per hour"),
            "{}",
            run.stdout
        );
        assert!(run.stdout.contains("0.5260 → 0.5100"), "{}", run.stdout);
        let written = walk(&into)
            .into_iter()
            .map(|p| std::fs::read_to_string(p).unwrap_or_default())
            .collect::<String>();
        assert!(
            !written.contains("1e308") && !written.contains("120000000"),
            "an impossible price was written"
        );
        std::fs::remove_dir_all(&pages).unwrap();
        std::fs::remove_dir_all(&into).unwrap();
    }

    #[test]
    fn a_provider_whose_endpoint_is_not_read_is_refused() {
        let run = gpuplan(&["catalog", "refresh", "--provider", "runpod", "--from", "."]);
        assert_eq!(run.code, 2);
        assert!(
            run.stderr.contains("cannot fetch prices for `runpod`"),
            "{}",
            run.stderr
        );
    }

    #[test]
    fn an_old_catalog_is_named_with_its_age() {
        let into = scratch("stale");
        let pages = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../gpuplan-catalog/tests/fixtures/refresh/azure"
        );
        let run = refresh_azure(pages, into.to_str().unwrap());
        assert_eq!(run.code, 0, "{}", run.stderr);
        // Age every offering's date.
        for entry in walk(&into.join("offerings")) {
            let text = std::fs::read_to_string(&entry).unwrap();
            let aged = text
                .lines()
                .map(|line| {
                    let mut fields: Vec<String> = line.split(',').map(str::to_string).collect();
                    for field in &mut fields {
                        if field.len() == 10 && field.starts_with("20") && field.as_bytes()[4] == b'-' {
                            *field = "2020-01-01".to_string();
                        }
                    }
                    fields.join(",")
                })
                .collect::<Vec<_>>()
                .join("\n");
            std::fs::write(&entry, aged).unwrap();
        }
        let listed = gpuplan(&["--catalog", into.to_str().unwrap(), "gpus"]);
        assert_eq!(listed.code, 0, "{}", listed.stderr);
        assert!(
            listed.stderr.contains("days old") && listed.stderr.contains("catalog refresh"),
            "{}",
            listed.stderr
        );
        std::fs::remove_dir_all(&into).unwrap();
    }

    fn walk(folder: &std::path::Path) -> Vec<std::path::PathBuf> {
        let mut files = Vec::new();
        for entry in std::fs::read_dir(folder).unwrap().flatten() {
            let path = entry.path();
            if path.is_dir() {
                files.extend(walk(&path));
            } else {
                files.push(path);
            }
        }
        files
    }

    #[test]
    fn summarises_providers_with_dates_and_schema_version() {
        let run = gpuplan(&["catalog", "--format", "json"]);
        assert_eq!(run.code, 0);
        let summary = run.json();
        assert_eq!(summary["schema_version"], 1);
        let providers = summary["providers"].as_array().unwrap();
        for expected in ["aws", "gcp", "azure", "oci", "lambda", "runpod", "alibaba", "tencent"] {
            assert!(
                providers.iter().any(|p| p["provider"] == expected),
                "{expected} missing"
            );
        }
        assert!(
            providers
                .iter()
                .all(|p| p["oldest_as_of"].as_str().unwrap().len() == 10)
        );
    }

    #[test]
    fn the_table_names_every_provider() {
        let run = gpuplan(&["catalog"]);
        assert!(run.stdout.contains("Alibaba Cloud") && run.stdout.contains("Catalog schema version 1"));
    }

    fn write(dir: &std::path::Path, path: &str, text: &str) {
        let path = dir.join(path);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }

    fn copy_tree(from: &std::path::Path, to: &std::path::Path) {
        for entry in std::fs::read_dir(from).unwrap().flatten() {
            let target = to.join(entry.file_name());
            if entry.path().is_dir() {
                std::fs::create_dir_all(&target).unwrap();
                copy_tree(&entry.path(), &target);
            } else {
                std::fs::copy(entry.path(), &target).unwrap();
            }
        }
    }

    /// The estimators' fitted constants are the catalog's: a folder with its own
    /// `calibration.toml` changes the estimates, and a broken one is named.
    #[test]
    fn a_catalog_folder_carries_its_own_fitted_constants() {
        let dir = std::env::temp_dir().join(format!("gpuplan-cli-fitted-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let data = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../gpuplan-catalog/data");
        copy_tree(&data, &dir);
        let dir_arg = dir.to_str().unwrap();
        let tpot = |catalog: &[&str]| {
            let mut args = catalog.to_vec();
            args.extend([
                "estimate",
                "--model",
                "llama-3.1-8b",
                "--task",
                "inference",
                "--gpu",
                "H100",
                "--format",
                "json",
            ]);
            let run = gpuplan(&args);
            assert_eq!(run.code, 0, "{}", run.stderr);
            run.json()["inference"]["tpot_seconds"].as_f64().unwrap()
        };
        let built_in = tpot(&[]);
        assert!(
            (tpot(&["--catalog", dir_arg]) - built_in).abs() < 1e-12,
            "a copy estimates the same"
        );
        let fitted = dir.join("calibration.toml");
        let text = std::fs::read_to_string(&fitted).unwrap();
        let slower = text.replacen(
            "[engines.vllm]\nprefill_peak_fraction = 0.55\ndecode_bandwidth_fraction = 0.75\n",
            "[engines.vllm]\nprefill_peak_fraction = 0.55\ndecode_bandwidth_fraction = 0.375\n",
            1,
        );
        assert_ne!(slower, text, "vLLM's decode bandwidth is where the test expects it");
        std::fs::write(&fitted, slower).unwrap();
        let with_own = tpot(&["--catalog", dir_arg]);
        // Half the bandwidth: a memory-bound decode step takes nearly twice as long.
        assert!(with_own > 1.6 * built_in, "{with_own} against {built_in}");
        std::fs::write(&fitted, text.replace("[engines.vllm]", "[engines.vllm-old]")).unwrap();
        let run = gpuplan(&["--catalog", dir_arg, "gpus"]);
        assert_eq!(run.code, 2);
        assert!(run.stderr.contains("calibration.toml"), "{}", run.stderr);
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn another_catalog_can_be_loaded_and_a_broken_one_is_named() {
        let dir = std::env::temp_dir().join(format!("gpuplan-cli-test-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        write(&dir, "catalog.toml", "schema_version = 1\n");
        write(
            &dir,
            "accelerators/x.toml",
            "[[accelerator]]\nid = \"X1\"\nname = \"X\"\nvendor = \"V\"\narchitecture = \"A\"\nmemory_gib = 8\n\
             [[accelerator.sources]]\ncovers = [\"memory_gib\"]\ntitle = \"t\"\nurl = \"https://x\"\nas_of = \"2026-01-01\"\n",
        );
        let dir_arg = dir.to_str().unwrap();
        let run = gpuplan(&["--catalog", dir_arg, "gpus", "--format", "json"]);
        assert_eq!(run.code, 0, "{}", run.stderr);
        assert_eq!(run.json().as_array().unwrap().len(), 1);

        write(&dir, "offerings/bad.csv", "provider,instance_type\naws,x\n");
        let run = gpuplan(&["--catalog", dir_arg, "gpus"]);
        assert_eq!(run.code, 2);
        assert!(
            run.stderr
                .contains("caused by: offerings/bad.csv:1: the header must be exactly"),
            "{}",
            run.stderr
        );

        let run = Command::new(env!("CARGO_BIN_EXE_gpuplan"))
            .args(["catalog"])
            .env("GPUPLAN_CATALOG", dir.join("missing"))
            .output()
            .unwrap();
        assert_eq!(run.status.code(), Some(2));
        assert!(String::from_utf8_lossy(&run.stderr).contains("cannot be read"));
        let _ = std::fs::remove_dir_all(&dir);
    }
}

mod models {
    use super::*;

    #[test]
    fn lists_at_least_40_models_with_parameter_counts() {
        let run = gpuplan(&["models", "--format", "json"]);
        assert_eq!(run.code, 0, "{}", run.stderr);
        let models = run.json();
        let models = models.as_array().unwrap();
        assert!(models.len() >= 40);
        let llama = models.iter().find(|m| m["id"] == "llama-2-7b").unwrap();
        assert_eq!(llama["parameters"], 6_738_415_616u64);
        let mixtral = models.iter().find(|m| m["id"] == "mixtral-8x7b").unwrap();
        assert!(mixtral["active_parameters"].as_u64() < mixtral["parameters"].as_u64());
    }

    #[test]
    fn the_table_shows_ids_and_sizes() {
        let run = gpuplan(&["models"]);
        assert!(
            run.stdout.contains("llama-3.1-405b") && run.stdout.contains("405.85B"),
            "{}",
            run.stdout
        );
    }
}

/// Models by their Hugging Face Hub id, against a local server standing in for the Hub
/// (`HF_ENDPOINT`): the config.json is fetched with the token, kept in the Hub's cache layout
/// under `HF_HOME`, and read from there with `HF_HUB_OFFLINE=1` once the server is gone; a
/// gated model says how to get access.
mod hub {
    use super::*;
    use std::io::{BufRead, BufReader, Write};
    use std::net::TcpListener;

    const COMMIT: &str = "0123456789abcdef0123456789abcdef01234567";
    /// The checkpoint holds 8,190,735,360 + 400,000,000 parameters: more than its config's
    /// layers, as a checkpoint with a vision tower does.
    const INDEX: &str =
        r#"{"metadata": {"total_parameters": 8590735360, "total_size": 17181470720}, "weight_map": {}}"#;

    fn gpuplan_with(args: &[&str], env: &[(&str, &str)]) -> Run {
        let mut command = Command::new(env!("CARGO_BIN_EXE_gpuplan"));
        command.args(args).env_remove("GPUPLAN_CATALOG").env("NO_COLOR", "1");
        for name in ["HF_TOKEN", "HF_ENDPOINT", "HF_HOME", "HF_HUB_CACHE", "HF_HUB_OFFLINE"] {
            command.env_remove(name);
        }
        command.envs(env.iter().copied());
        let output = command.output().expect("the gpuplan binary runs");
        Run {
            code: output.status.code().unwrap_or(-1),
            stdout: String::from_utf8(output.stdout).unwrap(),
            stderr: String::from_utf8(output.stderr).unwrap(),
        }
    }

    /// A stand-in for the Hub that answers `requests` requests and returns the paths it was
    /// asked for: `Org/Model`'s config.json and safetensors index (at the commit the config
    /// came from) to the bearer of `hf_test`, 401 for anyone else and for `Org/Gated`.
    fn hub(requests: usize, config: String) -> (String, std::thread::JoinHandle<Vec<String>>) {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        let thread = std::thread::spawn(move || {
            let mut seen = Vec::new();
            for stream in listener.incoming().take(requests) {
                let mut stream = stream.unwrap();
                let mut reader = BufReader::new(stream.try_clone().unwrap());
                let mut request_line = String::new();
                reader.read_line(&mut request_line).unwrap();
                let mut bearer = false;
                loop {
                    let mut line = String::new();
                    if reader.read_line(&mut line).unwrap() == 0 || line.trim().is_empty() {
                        break;
                    }
                    bearer |= line.to_ascii_lowercase().starts_with("authorization: bearer hf_test");
                }
                let path = request_line.split_whitespace().nth(1).unwrap_or_default().to_string();
                let index = format!("/Org/Model/resolve/{COMMIT}/model.safetensors.index.json");
                let (status, body, commit) = if path == "/Org/Model/resolve/main/config.json" && bearer {
                    ("200 OK", config.clone(), format!("X-Repo-Commit: {COMMIT}\r\n"))
                } else if path == index && bearer {
                    ("200 OK", INDEX.to_string(), format!("X-Repo-Commit: {COMMIT}\r\n"))
                } else if path == "/Org/Plain/resolve/main/config.json" {
                    ("200 OK", config.clone(), format!("X-Repo-Commit: {COMMIT}\r\n"))
                } else if path.starts_with("/Org/Plain/") {
                    ("404 Not Found", "{}".to_string(), String::new())
                } else {
                    ("401 Unauthorized", "{}".to_string(), String::new())
                };
                write!(
                    stream,
                    "HTTP/1.1 {status}\r\nContent-Type: application/json\r\nContent-Length: {}\r\n{commit}Connection: close\r\n\r\n{body}",
                    body.len()
                )
                .unwrap();
                seen.push(path);
            }
            seen
        });
        (url, thread)
    }

    /// Qwen3 8B's config.json, as the stand-in Hub serves it.
    fn qwen3_config() -> String {
        let file: Value =
            serde_json::from_str(include_str!("../../gpuplan-catalog/data/models/qwen3-8b.json")).unwrap();
        file["config"].to_string()
    }

    /// A Hugging Face home of this test process's own, and its path as text.
    fn hf_home(tag: &str) -> (std::path::PathBuf, String) {
        let home = std::env::temp_dir().join(format!("gpuplan-hf-{tag}-{}", std::process::id()));
        let text = home.to_string_lossy().to_string();
        (home, text)
    }

    /// `estimate` of `model` for serving on an H100, answered in JSON.
    fn estimate_json(model: &str) -> [&str; 9] {
        [
            "estimate",
            "--model",
            model,
            "--task",
            "inference",
            "--gpu",
            "H100",
            "--format",
            "json",
        ]
    }

    #[test]
    fn a_hub_id_is_fetched_once_cached_and_read_offline() {
        let (url, server) = hub(3, qwen3_config());
        let (home, home_text) = hf_home("model");
        let estimate = estimate_json("Org/Model");
        let online = gpuplan_with(
            &estimate,
            &[("HF_ENDPOINT", &url), ("HF_HOME", &home_text), ("HF_TOKEN", "hf_test")],
        );
        assert_eq!(online.code, 0, "{}", online.stderr);
        let model = &online.json()["model"];
        assert_eq!(
            model["parameters"], 8_590_735_360u64,
            "the checkpoint's own count: {model}"
        );
        let snapshot = home.join(format!("hub/models--Org--Model/snapshots/{COMMIT}/config.json"));
        assert!(snapshot.is_file(), "cached in the Hub's layout");
        assert!(snapshot.with_file_name("model.safetensors.index.json").is_file());
        assert_eq!(
            std::fs::read_to_string(home.join("hub/models--Org--Model/refs/main")).unwrap(),
            COMMIT
        );
        let gated = gpuplan_with(
            &[
                "estimate",
                "--model",
                "Org/Gated",
                "--task",
                "inference",
                "--gpu",
                "H100",
            ],
            &[("HF_ENDPOINT", &url), ("HF_HOME", &home_text)],
        );
        assert_eq!(gated.code, 2);
        assert!(
            gated.stderr.contains("HF_TOKEN") && gated.stderr.contains("huggingface.co/Org/Gated"),
            "{}",
            gated.stderr
        );
        let served = server.join().unwrap();
        assert_eq!(
            served,
            [
                "/Org/Model/resolve/main/config.json".to_string(),
                format!("/Org/Model/resolve/{COMMIT}/model.safetensors.index.json"),
                "/Org/Gated/resolve/main/config.json".to_string(),
            ]
        );
        // The server is gone: the cache answers, and what is not cached is refused by name.
        let offline = [
            ("HF_ENDPOINT", url.as_str()),
            ("HF_HOME", home_text.as_str()),
            ("HF_HUB_OFFLINE", "1"),
        ];
        let cached = gpuplan_with(&estimate, &offline);
        assert_eq!(cached.code, 0, "{}", cached.stderr);
        assert_eq!(cached.json()["model"]["parameters"], 8_590_735_360u64);
        let missing = gpuplan_with(
            &[
                "estimate",
                "--model",
                "Org/Other",
                "--task",
                "inference",
                "--gpu",
                "H100",
            ],
            &offline,
        );
        assert_eq!(missing.code, 2);
        assert!(missing.stderr.contains("HF_HUB_OFFLINE"), "{}", missing.stderr);
        // A job file names the model the same way.
        let job = home.join("job.yaml");
        std::fs::write(&job, "model: Org/Model\ntask: lora\ntokens: 1e8\ngpu: [H100]\ntop: 1\n").unwrap();
        let planned = gpuplan_with(&["plan", "-f", &job.to_string_lossy(), "--format", "json"], &offline);
        assert_eq!(planned.code, 0, "{}", planned.stderr);
        assert!(planned.stdout.contains("Org/Model"), "the plan names the model");
        // A built-in model's Hub name never goes to the network.
        let builtin = gpuplan_with(
            &[
                "estimate",
                "--model",
                "Qwen/Qwen3-30B-A3B",
                "--task",
                "inference",
                "--gpu",
                "H100",
            ],
            &offline,
        );
        assert_eq!(builtin.code, 0, "{}", builtin.stderr);
        std::fs::remove_dir_all(&home).ok();
    }

    /// `gpuplan serve` reads a request's Hub id as `--model` does: with the token, into the
    /// Hub's cache, the checkpoint's index counted; its errors name the JSON field `model`.
    #[test]
    fn the_server_reads_a_hub_id_as_the_command_line_does() {
        use std::io::Read;
        let (url, stand_in) = hub(3, qwen3_config());
        let (home, home_text) = hf_home("serve");
        let (mut server, address, mut log) = super::serve::start(&[
            ("HF_ENDPOINT", url.as_str()),
            ("HF_HOME", &home_text),
            ("HF_TOKEN", "hf_test"),
        ]);
        let post = |model: &str| {
            let body = format!(r#"{{"model":"{model}","task":"inference","gpu":"H100"}}"#);
            super::serve::exchange(
                &address,
                &format!(
                    "POST /api/v1/estimate HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
                    body.len()
                ),
            )
        };
        let answer = post("Org/Model");
        assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
        assert!(
            answer.contains(r#""parameters":8590735360"#),
            "the checkpoint's count: {answer}"
        );
        let refused = post("Org/Gated");
        assert!(refused.starts_with("HTTP/1.1 400"), "{refused}");
        assert!(refused.contains(r#""detail":"model Org/Gated: "#), "{refused}");
        assert!(!refused.contains("--model"), "{refused}");
        let _ = Command::new("kill")
            .args(["-TERM", &server.0.id().to_string()])
            .status();
        assert_eq!(server.0.wait().unwrap().code(), Some(0));
        let mut rest = String::new();
        log.read_to_string(&mut rest).unwrap();
        let seen = stand_in.join().unwrap();
        assert_eq!(seen.len(), 3, "config, index, the gated config: {seen:?}");
        assert!(
            home.join(format!("hub/models--Org--Model/snapshots/{COMMIT}/config.json"))
                .is_file()
        );
        std::fs::remove_dir_all(&home).ok();
    }

    /// A repository without a safetensors index (one file of weights) is asked for it once: the
    /// 404 is remembered where huggingface_hub keeps it, and the next run needs no network.
    #[test]
    fn a_missing_index_is_remembered() {
        let (url, server) = hub(2, qwen3_config());
        let (home, home_text) = hf_home("plain");
        let estimate = estimate_json("Org/Plain");
        let env = [("HF_ENDPOINT", url.as_str()), ("HF_HOME", home_text.as_str())];
        let first = gpuplan_with(&estimate, &env);
        assert_eq!(first.code, 0, "{}", first.stderr);
        assert_eq!(
            first.json()["model"]["parameters"],
            8_190_735_360u64,
            "the architecture's count"
        );
        assert_eq!(
            server.join().unwrap(),
            [
                "/Org/Plain/resolve/main/config.json".to_string(),
                format!("/Org/Plain/resolve/{COMMIT}/model.safetensors.index.json"),
            ]
        );
        let marker = home.join(format!(
            "hub/models--Org--Plain/.no_exist/{COMMIT}/model.safetensors.index.json"
        ));
        assert!(marker.is_file(), "the 404 is remembered");
        // The stand-in is gone and HF_HUB_OFFLINE is not set: nothing is asked again.
        let second = gpuplan_with(&estimate, &env);
        assert_eq!(second.code, 0, "{}", second.stderr);
        let _ = std::fs::remove_dir_all(&home);
    }
}

/// An Ultralytics model YAML is a model too: the stock YOLOv8 layout with its own classes is
/// walked as the built-in detectors are, its scale read from the file's name as Ultralytics
/// reads it; another layout is refused naming its first different layer.
mod ultralytics {
    use super::*;

    /// The YOLOv8 detection layout with `classes` classes and `row` as its layer 12.
    fn yolov8_yaml(classes: u64, row: &str) -> String {
        include_str!("fixtures/yolov8s-one-class.yaml")
            .replace("nc: 1\n", &format!("nc: {classes}\n"))
            .replace(
                "  - [-1, 3, C2f, [512]]\n  - [-1, 1, nn.Upsample",
                &format!("  - {row}\n  - [-1, 1, nn.Upsample"),
            )
    }

    fn parameters_of(file: &str, text: &str) -> Run {
        let path = std::env::temp_dir().join(format!("gpuplan-{}-{file}", std::process::id()));
        std::fs::write(&path, text).unwrap();
        let run = on_a_t4(&path.to_string_lossy());
        std::fs::remove_file(&path).ok();
        run
    }

    /// Inference of `model` on a T4, as JSON.
    fn on_a_t4(model: &str) -> Run {
        gpuplan(&[
            "estimate",
            "--model",
            model,
            "--task",
            "inference",
            "--gpu",
            "T4",
            "--format",
            "json",
        ])
    }

    #[test]
    fn a_stock_layout_with_its_own_classes_is_walked() {
        let stock = parameters_of("yolov8s.yaml", &yolov8_yaml(80, "[-1, 3, C2f, [512]]"));
        assert_eq!(stock.code, 0, "{}", stock.stderr);
        let builtin = on_a_t4("yolov8s");
        assert_eq!(
            stock.json()["model"]["parameters"],
            builtin.json()["model"]["parameters"]
        );
        // One class: each of the three class convolutions loses 79 outputs of 129 weights; the
        // 11,135,987 Ultralytics' model summary prints for a one-class YOLOv8s.
        let single = parameters_of("yolov8s-parts.yaml", &yolov8_yaml(1, "[-1, 3, C2f, [512]]"));
        assert_eq!(single.code, 0, "{}", single.stderr);
        assert_eq!(single.json()["model"]["parameters"], 11_135_987u64);
        // Two scales and a name that says neither: the file must say which.
        let unnamed = parameters_of("detector.yaml", &yolov8_yaml(80, "[-1, 3, C2f, [512]]"));
        assert_eq!(unnamed.code, 2);
        assert!(unnamed.stderr.contains("`scales` lists n, s"), "{}", unnamed.stderr);
        // A detector generates nothing: its estimate speaks of images, not tokens; an encoder's
        // of sequences.
        let table = gpuplan(&["estimate", "--model", "yolov8s", "--task", "inference", "--gpu", "T4"]);
        assert!(
            table.stdout.contains("images/s") && table.stdout.contains("per batch of 1"),
            "{}",
            table.stdout
        );
        assert!(!table.stdout.contains("token"), "{}", table.stdout);
        let bert = gpuplan(&[
            "estimate",
            "--model",
            "bert-base-uncased",
            "--task",
            "inference",
            "--gpu",
            "T4",
            "--seq",
            "128",
        ]);
        assert!(
            bert.stdout.contains("sequences/s") && !bert.stdout.contains("first token"),
            "{}",
            bert.stdout
        );
        let custom = parameters_of("yolov8s-c3.yaml", &yolov8_yaml(80, "[-1, 3, C3, [512]]"));
        assert_eq!(custom.code, 2);
        assert!(
            custom.stderr.contains("head[2]") && custom.stderr.contains("C3"),
            "{}",
            custom.stderr
        );
    }
}

/// A llama.cpp GGUF file is a model too: its header gives the architecture and the weight
/// format, so a Q4_K_M Llama 3.1 8B is estimated at its 8.03 B parameters in 4 bits, and the
/// answer names the format it read.
mod gguf {
    use super::*;
    use serde_json::json;

    fn gguf(entries: &[(&str, Value)]) -> Vec<u8> {
        let mut out = b"GGUF".to_vec();
        out.extend(3u32.to_le_bytes());
        out.extend(0u64.to_le_bytes());
        out.extend((entries.len() as u64).to_le_bytes());
        let string = |out: &mut Vec<u8>, s: &str| {
            out.extend((s.len() as u64).to_le_bytes());
            out.extend(s.as_bytes());
        };
        for (key, value) in entries {
            string(&mut out, key);
            match value {
                Value::String(s) => {
                    out.extend(8u32.to_le_bytes());
                    string(&mut out, s);
                }
                other => {
                    out.extend(4u32.to_le_bytes());
                    out.extend((other.as_u64().unwrap() as u32).to_le_bytes());
                }
            }
        }
        out
    }

    #[test]
    fn a_gguf_file_is_estimated_in_its_own_format() {
        let bytes = gguf(&[
            ("general.architecture", json!("llama")),
            ("general.file_type", json!(15)),
            ("llama.block_count", json!(32)),
            ("llama.context_length", json!(131_072)),
            ("llama.embedding_length", json!(4096)),
            ("llama.feed_forward_length", json!(14_336)),
            ("llama.attention.head_count", json!(32)),
            ("llama.attention.head_count_kv", json!(8)),
            ("llama.vocab_size", json!(128_256)),
        ]);
        let path = std::env::temp_dir().join(format!("gpuplan-{}-llama-8b-Q4_K_M.gguf", std::process::id()));
        std::fs::write(&path, bytes).unwrap();
        let run = gpuplan(&[
            "estimate",
            "--model",
            &path.to_string_lossy(),
            "--task",
            "inference",
            "--gpu",
            "RTX-4090",
            "--format",
            "json",
        ]);
        std::fs::remove_file(&path).ok();
        assert_eq!(run.code, 0, "{}", run.stderr);
        let answer = run.json();
        let parameters = answer["model"]["parameters"].as_f64().unwrap();
        assert!((parameters / 8.03e9 - 1.0).abs() < 0.005, "{parameters}");
        assert_eq!(answer["workload"]["precision"], "int4");
        assert!(
            answer["defaults"].to_string().contains("gguf Q4_K_M"),
            "{}",
            answer["defaults"]
        );
        let not_gguf = std::env::temp_dir().join(format!("gpuplan-{}-broken.gguf", std::process::id()));
        std::fs::write(&not_gguf, b"GGUF").unwrap();
        let broken = gpuplan(&[
            "estimate",
            "--model",
            &not_gguf.to_string_lossy(),
            "--task",
            "inference",
            "--gpu",
            "L4",
        ]);
        std::fs::remove_file(&not_gguf).ok();
        assert_eq!(broken.code, 2);
        assert!(broken.stderr.contains("ends early"), "{}", broken.stderr);
    }
}

mod estimate {
    #[test]
    fn a_framework_shapes_the_estimate_and_is_named_in_its_assumptions() {
        let run = gpuplan(&[
            "estimate",
            "--model",
            "llama-2-70b",
            "--task",
            "pretrain",
            "--gpu",
            "H100-SXM5-80GB",
            "--gpus",
            "64",
            "--gpus-per-node",
            "8",
            "--precision",
            "fp8",
            "--seq",
            "4096",
            "--batch",
            "128",
            "--micro-batch",
            "1",
            "--tp",
            "4",
            "--pp",
            "4",
            "--framework",
            "nemo",
        ]);
        assert_eq!(run.code, 0, "{}", run.stderr);
        assert!(run.stdout.contains("ZeRO-1"), "{}", run.stdout);
        assert!(run.stdout.contains("megatron: Megatron-Core"), "{}", run.stdout);
    }

    /// Full recomputation repeats each forward pass: the hardware does a third more FLOPs
    /// than the model needs, so HFU is printed beside MFU and is 4/3 of it; without
    /// recomputation the two are one figure.
    #[test]
    fn full_recomputation_prints_hfu_beside_mfu() {
        let run_with = |checkpointing: &str| {
            gpuplan(&[
                "estimate",
                "--model",
                "llama-3.1-8b",
                "--task",
                "pretrain",
                "--gpu",
                "H100",
                "--gpus",
                "8",
                "--seq",
                "4096",
                "--micro-batch",
                "1",
                "--checkpointing",
                checkpointing,
            ])
        };
        let figure = |line: &str, label: &str| -> f64 {
            let at = line.find(label).unwrap() + label.len();
            line[at..].trim_start().split(' ').next().unwrap().parse().unwrap()
        };
        let full = run_with("full");
        assert_eq!(full.code, 0, "{}", full.stderr);
        let line = full.stdout.lines().find(|l| l.trim_start().starts_with("MFU")).unwrap();
        let (mfu, hfu) = (figure(line, "MFU"), figure(line, "(HFU"));
        assert!((hfu / mfu - 4.0 / 3.0).abs() < 0.02, "{line}");
        let none = run_with("none");
        assert_eq!(none.code, 0, "{}", none.stderr);
        assert!(
            none.stdout.contains("MFU") && !none.stdout.contains("HFU"),
            "{}",
            none.stdout
        );
    }

    #[test]
    fn an_unknown_framework_lists_the_known_ones_and_exits_2() {
        let run = gpuplan(&[
            "estimate",
            "--model",
            "gpt2",
            "--task",
            "pretrain",
            "--gpu",
            "A100-SXM4-80GB",
            "--framework",
            "keras",
        ]);
        assert_eq!(run.code, 2);
        assert!(
            run.stderr.contains("torchtitan") && run.stderr.contains("megatron"),
            "{}",
            run.stderr
        );
    }

    #[test]
    fn a_framework_does_not_apply_to_serving() {
        for command in ["estimate", "plan"] {
            let mut args = vec![
                command,
                "--model",
                "gpt2",
                "--task",
                "inference",
                "--framework",
                "torchtitan",
            ];
            if command == "estimate" {
                args.extend(["--gpu", "A100-SXM4-80GB"]);
            }
            let run = gpuplan(&args);
            assert_eq!(run.code, 2, "{command}: {}", run.stderr);
            assert!(run.stderr.contains("--framework applies to training"), "{}", run.stderr);
        }
    }

    use super::*;

    fn fixture(name: &str) -> String {
        format!("{}/tests/fixtures/{name}", env!("CARGO_MANIFEST_DIR"))
    }

    #[test]
    fn sdxl_on_one_l4_as_a_table_and_as_json() {
        let args = [
            "estimate",
            "--model",
            "sdxl",
            "--task",
            "inference",
            "--gpu",
            "L4",
            "--batch",
            "2",
            "--steps",
            "30",
        ];
        let run = gpuplan(&args);
        assert_eq!(run.code, 0, "{}", run.stderr);
        insta::assert_snapshot!(run.stdout);
        let run = gpuplan(&[&args[..], &["--format", "json", "--resolution", "768", "--no-guidance"]].concat());
        assert_eq!(run.code, 0, "{}", run.stderr);
        let e = run.json();
        assert_eq!(e["image"]["resolution"], 768);
        assert_eq!(e["image"]["denoising_steps"], 30);
        assert_eq!(e["image"]["guidance"], false);
        assert!(e["image"]["unet_flops_per_pass"].as_f64().unwrap() > 3e12);
        assert!(e["inference"]["requests_per_second"].as_f64().unwrap() > 0.0);
    }

    #[test]
    fn a_resolution_off_the_latent_grid_exits_2() {
        let run = gpuplan(&[
            "estimate",
            "--model",
            "sdxl",
            "--task",
            "inference",
            "--gpu",
            "L4",
            "--resolution",
            "1020",
        ]);
        assert_eq!(run.code, 2);
        assert!(run.stderr.contains("resolution"), "{}", run.stderr);
    }

    #[test]
    fn full_fine_tuning_on_eight_h100_as_json() {
        let run = gpuplan(&[
            "estimate",
            "--model",
            "llama-3.1-8b",
            "--task",
            "finetune",
            "--gpu",
            "H100-SXM5-80GB",
            "--gpus",
            "8",
            "--precision",
            "bf16",
            "--seq",
            "8192",
            "--batch",
            "64",
            "--zero",
            "3",
            "--tokens",
            "2e9",
            "--format",
            "json",
        ]);
        assert_eq!(run.code, 0, "{}", run.stderr);
        let e = run.json();
        assert_eq!(e["model"]["id"], "llama-3.1-8b");
        assert_eq!(e["model"]["parameters"], 8_030_261_248u64);
        assert_eq!(e["gpu"]["id"], "H100-SXM5-80GB");
        assert_eq!(e["gpus"], 8);
        for field in [
            "weights",
            "gradients",
            "optimizer",
            "activations",
            "kv_cache",
            "overhead",
        ] {
            assert!(e["memory"]["breakdown"][field].is_u64(), "{field}");
        }
        assert!(e["memory"]["fits"].as_bool().unwrap());
        let training = &e["training"];
        for field in [
            "step_seconds",
            "tokens_per_second",
            "samples_per_second",
            "mfu",
            "time_seconds",
            "gpu_hours",
        ] {
            assert!(training[field].is_f64(), "{field}");
        }
        assert!(e["inference"].is_null());
        assert!(e["assumptions"].as_array().unwrap().len() >= 3);
        let mfu = training["mfu"].as_f64().unwrap();
        assert!((0.2..0.7).contains(&mfu), "{mfu}");
    }

    #[test]
    fn serving_with_tensor_parallelism() {
        let run = gpuplan(&[
            "estimate",
            "--model",
            "llama-3.1-70b",
            "--task",
            "inference",
            "--gpu",
            "H100",
            "--gpus",
            "4",
            "--tp",
            "4",
            "--precision",
            "fp8",
            "--seq",
            "2048",
            "--output-tokens",
            "256",
            "--batch",
            "64",
            "--format",
            "json",
        ]);
        assert_eq!(run.code, 0, "{}", run.stderr);
        let e = run.json();
        let inference = &e["inference"];
        for field in [
            "ttft_seconds",
            "tpot_seconds",
            "output_tokens_per_second",
            "requests_per_second",
        ] {
            assert!(inference[field].as_f64().unwrap() > 0.0, "{field}");
        }
        assert!(inference["max_concurrent_sequences"].as_u64().unwrap() >= 64);
        assert!(e["training"].is_null());
        assert!(run.stderr.contains("`H100` means H100-SXM5-80GB"), "{}", run.stderr);
    }

    #[test]
    fn a_report_for_people() {
        let run = gpuplan(&[
            "estimate",
            "--model",
            "resnet-50",
            "--task",
            "pretrain",
            "--gpu",
            "A100-80GB",
            "--gpus",
            "8",
            "--batch",
            "2048",
            "--precision",
            "fp16",
        ]);
        assert_eq!(run.code, 0, "{}", run.stderr);
        insta::assert_snapshot!(run.stdout);
    }

    #[test]
    fn qlora_from_a_config_json() {
        let config = fixture("llama-like-config.json");
        let run = gpuplan(&[
            "estimate", "--model", &config, "--task", "qlora", "--gpu", "rtx-4090", "--seq", "2048", "--batch", "4",
        ]);
        assert_eq!(run.code, 0, "{}", run.stderr);
        assert!(run.stdout.contains("qlora on 1 × RTX-4090"), "{}", run.stdout);
        assert!(run.stdout.contains("NF4 base"), "{}", run.stdout);
    }

    #[test]
    fn a_malformed_config_names_line_and_column() {
        let config = fixture("malformed-config.json");
        let run = gpuplan(&["estimate", "--model", &config, "--task", "inference", "--gpu", "T4"]);
        assert_eq!(run.code, 2);
        assert!(
            run.stderr.contains("not valid JSON at line 4, column 27"),
            "{}",
            run.stderr
        );
    }

    #[test]
    fn an_unsupported_architecture_lists_the_supported_ones() {
        let run = gpuplan(&[
            "estimate",
            "--model",
            &fixture("mamba-config.json"),
            "--task",
            "inference",
            "--gpu",
            "T4",
        ]);
        assert_eq!(run.code, 2);
        assert!(
            run.stderr
                .contains("`mamba` is not supported: it is none of llama, mistral"),
            "{}",
            run.stderr
        );
    }

    #[test]
    fn a_missing_field_is_named() {
        let run = gpuplan(&[
            "estimate",
            "--model",
            &fixture("incomplete-config.json"),
            "--task",
            "inference",
            "--gpu",
            "T4",
        ]);
        assert_eq!(run.code, 2);
        assert!(
            run.stderr.contains("needs the field `num_hidden_layers`"),
            "{}",
            run.stderr
        );
    }

    #[test]
    fn a_model_that_does_not_fit_says_by_how_much() {
        let run = gpuplan(&[
            "estimate",
            "--model",
            "llama-2-70b",
            "--task",
            "finetune",
            "--gpu",
            "L4",
            "--format",
            "json",
        ]);
        // Like `plan`, a workload that does not fit exits 1, and names what would.
        assert_eq!(run.code, 1, "{}", run.stderr);
        let e = run.json();
        assert!(!e["memory"]["fits"].as_bool().unwrap());
        assert!(e["memory"]["headroom_bytes"].as_i64().unwrap() < 0);
        assert_eq!(e["memory"]["margin"].as_f64().unwrap(), 0.10);
        let nearest = e["memory"]["nearest_fit"].as_array().unwrap();
        assert!(
            nearest.iter().any(|n| n.as_str().unwrap().starts_with("--gpus ")),
            "{nearest:?}"
        );
    }

    #[test]
    fn bad_values_exit_2() {
        for args in [
            &["estimate", "--model", "llama-2-7b", "--task", "teach", "--gpu", "T4"][..],
            &[
                "estimate",
                "--model",
                "llama-2-7b",
                "--task",
                "inference",
                "--gpu",
                "T4",
                "--precision",
                "fp12",
            ],
            &[
                "estimate",
                "--model",
                "llama-2-7b",
                "--task",
                "inference",
                "--gpu",
                "T4",
                "--tokens",
                "-5",
            ],
            &[
                "estimate",
                "--model",
                "missing.json",
                "--task",
                "inference",
                "--gpu",
                "T4",
            ],
            &[
                "estimate",
                "--model",
                "llama-2-7b",
                "--task",
                "inference",
                "--gpu",
                "H100",
                "--gpus",
                "3",
                "--tp",
                "3",
            ],
        ] {
            let run = gpuplan(args);
            assert_eq!(run.code, 2, "{args:?}: {}", run.stderr);
            assert!(run.stderr.starts_with("error:"), "{args:?}: {}", run.stderr);
        }
    }
}

mod serving {
    use super::*;

    fn fixture(name: &str) -> String {
        format!("{}/tests/fixtures/{name}", env!("CARGO_MANIFEST_DIR"))
    }

    /// `estimate --qps` is one replica's load; on 8 GPUs at TP 1 the answer says there are 8
    /// replicas and what they serve together, so it is not read as the total `plan` takes.
    #[test]
    fn an_estimate_over_several_replicas_says_its_load_is_one_replicas() {
        let estimate = |layout: &[&str]| {
            let mut args = vec![
                "estimate",
                "--model",
                "llama-3.1-8b",
                "--task",
                "inference",
                "--gpu",
                "H100",
                "--qps",
                "2",
            ];
            args.extend_from_slice(layout);
            gpuplan(&args)
        };
        let run = estimate(&["--gpus", "8", "--tp", "1"]);
        assert_eq!(run.code, 0, "{}", run.stderr);
        assert!(
            run.stdout.contains(
                "replicas           8 on these GPUs, each figure below is one replica's: 16.00 requests/s in all"
            ),
            "{}",
            run.stdout
        );
        let one = estimate(&[]);
        assert!(!one.stdout.contains("replicas  "), "{}", one.stdout);
    }

    /// A replica's capacity comes with the range measured runs of its kind fell in: a dense
    /// model's from the Llama MLPerf runs, a mixture of experts' from the Mixtral-8x7B and
    /// DeepSeek-R1 runs, far wider below. The text prints it in requests/s under the capacity,
    /// the JSON carries the multiples and what they were measured on.
    #[test]
    fn an_estimate_states_the_capacity_range_of_its_kind_of_replica() {
        let estimate = |model: &str, format: &str| {
            let line =
                format!("estimate --model {model} --task inference --gpu H100 --precision fp8 --format {format}");
            gpuplan(&line.split_whitespace().collect::<Vec<_>>())
        };
        let dense = estimate("llama-3.1-8b", "table");
        assert_eq!(dense.code, 0, "{}", dense.stderr);
        assert!(
            dense.stdout.contains("capacity range")
                && dense
                    .stdout
                    .contains("runs of dense models (Llama-2-70B, Llama-3.1-405B and 8B) measured 0.73–1.06×"),
            "{}",
            dense.stdout
        );
        let experts = estimate("mixtral-8x7b", "json").json();
        let range = &experts["serving"]["capacity_interval"];
        assert_eq!(range["measured_on"], "mixtures_of_experts", "{range}");
        let (low, high) = (range["low"].as_f64().unwrap(), range["high"].as_f64().unwrap());
        assert!(low < 0.5 && high > 1.0, "{range}");
    }

    /// A load a few per cent past the estimated capacity is inside the estimate's error: the
    /// text says how far past it is and that it may hold, the JSON carries the same, and
    /// neither calls it saturated; far past it, both do.
    #[test]
    fn an_estimate_just_past_capacity_says_it_may_hold() {
        let estimate = |qps: &str, format: &str| {
            let line = format!(
                "estimate --model llama-3.1-8b --task inference --gpu H100 --seq 500 --output-tokens 200 --qps {qps} --format {format}"
            );
            gpuplan(&line.split_whitespace().collect::<Vec<_>>())
        };
        let capacity = estimate("1", "json").json()["serving"]["capacity_requests_per_second"]
            .as_f64()
            .unwrap();
        let near = estimate(&format!("{:.3}", capacity * 1.04), "table");
        assert_eq!(near.code, 0, "{}", near.stderr);
        assert!(
            near.stdout.contains("the load is 4 % above the estimated capacity")
                && near.stdout.contains("it may hold, at its limit")
                && !near.stdout.contains("saturates"),
            "{}",
            near.stdout
        );
        let json = estimate(&format!("{:.3}", capacity * 1.04), "json").json();
        assert!(json["serving"]["saturated"].is_null(), "{json}");
        let high = json["serving"]["near_capacity"]["capacity_high_requests_per_second"]
            .as_f64()
            .unwrap();
        assert!(high > capacity * 1.04, "{json}");
        let far = estimate(&format!("{:.3}", capacity * 1.5), "json").json();
        assert!(
            far["serving"]["near_capacity"].is_null() && far["serving"]["saturated"].is_string(),
            "{far}"
        );
    }

    #[test]
    fn a_plan_takes_percentile_targets_and_a_request_log() {
        let log = fixture("chat-requests.csv");
        let run = gpuplan(&[
            "plan",
            "--model",
            "llama-3.1-8b",
            "--task",
            "inference",
            "--qps",
            "20",
            "--ttft",
            "p99:800ms",
            "--tpot",
            "p90:40ms",
            "--requests",
            &log,
            "--gpu",
            "H100",
            "--format",
            "json",
        ]);
        assert_eq!(run.code, 0, "{}", run.stderr);
        let plan = run.json();
        let serving = &plan["recommendations"][0]["serving"];
        assert!(serving["ttft"]["p99"].as_f64().unwrap() <= 0.8);
        assert!(serving["tpot"]["p90"].as_f64().unwrap() <= 0.04);
    }

    #[test]
    fn a_percentile_outside_0_to_100_and_a_broken_log_are_refused() {
        let run = gpuplan(&[
            "plan",
            "--model",
            "llama-3.1-8b",
            "--task",
            "inference",
            "--ttft",
            "p100:1s",
        ]);
        assert_eq!(run.code, 2, "{}", run.stderr);
        assert!(run.stderr.contains("percentile"), "{}", run.stderr);
        let run = gpuplan(&[
            "plan",
            "--model",
            "llama-3.1-8b",
            "--task",
            "inference",
            "--requests",
            &fixture("llama-like-config.json"),
        ]);
        assert_eq!(run.code, 2, "{}", run.stderr);
        assert!(run.stderr.contains("--requests"), "{}", run.stderr);
    }

    #[test]
    fn an_estimate_at_a_load_prints_the_latency_distribution() {
        let run = gpuplan(&[
            "estimate",
            "--model",
            "llama-3.3-70b",
            "--task",
            "inference",
            "--gpu",
            "H100",
            "--gpus",
            "2",
            "--tp",
            "2",
            "--precision",
            "fp8",
            "--seq",
            "1000",
            "--output-tokens",
            "200",
            "--qps",
            "2",
            "--ttft",
            "1s",
            "--tpot",
            "p99:60ms",
        ]);
        assert_eq!(run.code, 0, "{}", run.stderr);
        for text in [
            "serving, one replica with continuous batching",
            "goodput",
            "time to first token p50",
            "p99",
        ] {
            assert!(run.stdout.contains(text), "{text}: {}", run.stdout);
        }
    }

    #[test]
    fn a_prefix_cache_share_on_a_training_plan_is_refused() {
        let run = gpuplan(&[
            "plan",
            "--model",
            "llama-3.1-8b",
            "--task",
            "lora",
            "--prefix-cache-hit",
            "0.5",
        ]);
        assert_eq!(run.code, 2, "{}", run.stderr);
        assert!(run.stderr.contains("--prefix-cache-hit"), "{}", run.stderr);
    }

    #[test]
    fn request_shapes_are_refused_where_no_continuous_batching_engine_uses_them() {
        let pytorch = [
            "plan",
            "--model",
            "llama-3.1-8b",
            "--task",
            "inference",
            "--engine",
            "pytorch",
            "--prefix-cache-hit",
            "0.5",
        ];
        let encoder = [
            "plan",
            "--model",
            "bert-base-uncased",
            "--task",
            "inference",
            "--prefix-cache-hit",
            "0.5",
        ];
        for args in [&pytorch[..], &encoder[..]] {
            let run = gpuplan(args);
            assert_eq!(run.code, 2, "{args:?}: {}", run.stdout);
            assert!(run.stderr.contains("continuous-batching"), "{}", run.stderr);
        }
    }
}

mod plan {
    use super::*;

    const README_COMMAND: [&str; 13] = [
        "plan",
        "--model",
        "llama-3.1-8b",
        "--task",
        "lora",
        "--seq",
        "4096",
        "--batch",
        "32",
        "--tokens",
        "5e8",
        "--deadline",
        "24h",
    ];

    /// A job built for Hopper (FlashAttention 3, fp8 kernels) asks for compute capability
    /// 9.0: every recommendation is Hopper or newer, and Ampere and Ada offerings are rejected
    /// naming their capability. A local-disk minimum rejects the instances with less, naming
    /// both figures.
    #[test]
    fn machine_requirements_reach_the_plan() {
        let run = gpuplan(&[
            "plan",
            "--model",
            "llama-3.1-8b",
            "--task",
            "lora",
            "--tokens",
            "5e8",
            "--compute-capability",
            "9.0",
            "--min-disk",
            "2000",
            "--explain",
            "--format",
            "json",
        ]);
        assert_eq!(run.code, 0, "{}", run.stderr);
        let plan = run.json();
        for r in plan["recommendations"].as_array().unwrap() {
            let gpu = r["gpu"].as_str().unwrap();
            assert!(
                gpu.starts_with('H') || gpu.starts_with('B') || gpu.starts_with("GH") || gpu.starts_with("GB"),
                "{gpu}"
            );
        }
        let reasons = plan["rejected"].to_string();
        assert!(
            reasons.contains("compute capability 8.") && reasons.contains("9.0 required"),
            "{reasons}"
        );
        assert!(reasons.contains("GB local disk, 2000 GB required"), "{reasons}");
        assert_eq!(
            gpuplan(&[
                "plan",
                "--model",
                "llama-3.1-8b",
                "--task",
                "lora",
                "--compute-capability",
                "x"
            ])
            .code,
            2
        );
    }

    #[test]
    fn the_readme_command_plans_and_exits_0() {
        let run = gpuplan(&README_COMMAND);
        assert_eq!(run.code, 0, "{}", run.stderr);
        assert!(
            run.stdout.contains("best by cost") && run.stdout.contains("why #1"),
            "{}",
            run.stdout
        );
    }

    #[test]
    fn json_follows_the_contract() {
        let mut args = README_COMMAND.to_vec();
        args.extend(["--format", "json"]);
        let run = gpuplan(&args);
        assert_eq!(run.code, 0, "{}", run.stderr);
        let plan = run.json();
        let recommendations = plan["recommendations"].as_array().unwrap();
        assert!(!recommendations.is_empty());
        for r in recommendations {
            for field in [
                "provider",
                "instance_type",
                "region",
                "gpu",
                "gpus",
                "gpus_per_node",
                "nodes",
                "layout",
                "precision",
                "billing",
                "memory_per_gpu_bytes",
                "memory_capacity_bytes",
                "time_seconds",
                "hourly_usd",
                "total_usd",
                "why",
            ] {
                assert!(r.get(field).is_some(), "missing {field}");
            }
            for field in ["dp", "tp", "pp", "zero"] {
                assert!(r["layout"][field].is_u64(), "layout.{field}");
            }
            assert!(r["time_seconds"].as_f64().unwrap() <= 24.0 * 3600.0);
            assert!(r["memory_per_gpu_bytes"].as_u64() < r["memory_capacity_bytes"].as_u64());
        }
        let len = recommendations.len() as u64;
        assert!(plan["cheapest"].as_u64().unwrap() < len && plan["fastest"].as_u64().unwrap() < len);
        assert!(
            plan["pareto"]
                .as_array()
                .unwrap()
                .iter()
                .all(|i| i.as_u64().unwrap() < len)
        );
        assert!(
            plan["rejected"]
                .as_array()
                .unwrap()
                .iter()
                .all(|r| r["candidate"].is_string() && r["reason"].is_string())
        );
        assert!(!plan["assumptions"].as_array().unwrap().is_empty());
        // The cheapest is within the 10 % tolerance of the lowest cost.
        let cheapest = &recommendations[plan["cheapest"].as_u64().unwrap() as usize];
        let cost = cheapest["total_usd"].as_f64().unwrap();
        assert!(
            recommendations
                .iter()
                .all(|r| r["total_usd"].as_f64().unwrap() * 1.1 >= cost)
        );
    }

    #[test]
    fn nothing_feasible_exits_1_with_the_nearest_miss() {
        let run = gpuplan(&[
            "plan",
            "--model",
            "llama-2-70b",
            "--task",
            "pretrain",
            "--tokens",
            "1e12",
            "--deadline",
            "1h",
            "--max-gpus",
            "64",
        ]);
        assert_eq!(run.code, 1, "{}", run.stderr);
        assert!(
            run.stdout.contains("no configuration satisfies the constraints"),
            "{}",
            run.stdout
        );
        assert!(run.stdout.contains("hint: relax --deadline to"), "{}", run.stdout);
        let json = gpuplan(&[
            "plan",
            "--model",
            "llama-2-70b",
            "--task",
            "pretrain",
            "--tokens",
            "1e12",
            "--deadline",
            "1h",
            "--max-gpus",
            "64",
            "--format",
            "json",
        ]);
        assert_eq!(json.code, 1);
        assert_eq!(json.json()["feasible"], false);
    }

    #[test]
    fn serving_plans_replicas_and_autoscaling() {
        let run = gpuplan(&[
            "plan",
            "--model",
            "mistral-7b",
            "--task",
            "inference",
            "--qps",
            "20",
            "--peak-qps",
            "60",
            "--input-tokens",
            "1000",
            "--output-tokens",
            "200",
            "--ttft",
            "1s",
            "--tpot",
            "50ms",
            "--providers",
            "aws,gcp,lambda",
            "--format",
            "json",
        ]);
        assert_eq!(run.code, 0, "{}", run.stderr);
        let plan = run.json();
        let serving = &plan["recommendations"][0]["serving"];
        assert!(serving["replicas"].as_u64().unwrap() >= 1);
        assert!(serving["max_replicas"].as_u64() >= serving["replicas"].as_u64());
        assert!(serving["usd_per_million_output_tokens"].as_f64().unwrap() > 0.0);
    }

    #[test]
    fn tabular_workloads_plan_cpu_instances() {
        let run = gpuplan(&[
            "plan",
            "--workload",
            "tabular",
            "--rows",
            "2e6",
            "--features",
            "100",
            "--format",
            "json",
        ]);
        assert_eq!(run.code, 0, "{}", run.stderr);
        let plan = run.json();
        let best = &plan["recommendations"][0];
        assert!(best["gpu"].is_null());
        assert_eq!(best["gpus"], 0);
        assert!(best["total_usd"].as_f64().unwrap() > 0.0);
        let missing = gpuplan(&["plan", "--workload", "tabular", "--rows", "5e6"]);
        assert_eq!(missing.code, 2);
        assert!(
            missing.stderr.contains("needs --rows and --features"),
            "{}",
            missing.stderr
        );
    }

    #[test]
    fn bad_constraints_exit_2() {
        for args in [
            &[
                "plan",
                "--model",
                "llama-2-7b",
                "--task",
                "finetune",
                "--deadline",
                "0h",
            ][..],
            &[
                "plan",
                "--model",
                "llama-2-7b",
                "--task",
                "finetune",
                "--deadline",
                "soon",
            ],
            &[
                "plan",
                "--model",
                "llama-2-7b",
                "--task",
                "finetune",
                "--providers",
                "awz",
            ],
            &[
                "plan",
                "--model",
                "llama-2-7b",
                "--task",
                "finetune",
                "--billing",
                "monthly",
            ],
            &[
                "plan",
                "--model",
                "llama-2-7b",
                "--task",
                "inference",
                "--qps",
                "10",
                "--peak-qps",
                "5",
            ],
        ] {
            let run = gpuplan(args);
            assert_eq!(run.code, 2, "{args:?}: {}", run.stderr);
        }
    }
}

mod cost {
    /// Amounts in yuan at the catalog's cited rate; JSON stays in dollars.
    #[test]
    fn amounts_show_in_the_currency_asked_for() {
        let usd = gpuplan(&["cost", "--price", "2", "--hours", "10", "--format", "json"]);
        let cny = gpuplan(&["cost", "--price", "2", "--hours", "10", "--currency", "CNY"]);
        assert_eq!(cny.code, 0, "{}", cny.stderr);
        assert!(
            cny.stdout.contains("¥/h") && cny.stdout.contains("Amounts in CNY at"),
            "{}",
            cny.stdout
        );
        let rate: f64 = cny
            .stdout
            .split("Amounts in CNY at ")
            .nth(1)
            .unwrap()
            .split(' ')
            .next()
            .unwrap()
            .parse()
            .unwrap();
        assert!(cny.stdout.contains(&format!("{:.2}", 20.0 * rate)), "{}", cny.stdout);
        assert_eq!(usd.json()["lines"][0]["total_usd"], 20.0);
        let unknown = gpuplan(&["cost", "--price", "2", "--hours", "10", "--currency", "XYZ"]);
        assert_eq!(unknown.code, 2);
        assert!(unknown.stderr.contains("USD, CNY"), "{}", unknown.stderr);
    }

    use super::*;

    #[test]
    fn textbook_figures_reproduce_exactly() {
        let run = gpuplan(&["cost", "--price", "3.06", "--hours", "8760", "--format", "json"]);
        assert_eq!(run.code, 0, "{}", run.stderr);
        assert_eq!(run.json()["lines"][0]["total_usd"], 26_805.6);
        let run = gpuplan(&[
            "cost",
            "--price",
            "1.38",
            "--hours",
            "8760",
            "--billing",
            "reserved-1y",
            "--format",
            "json",
        ]);
        let total = run.json()["lines"][0]["total_usd"].as_f64().unwrap();
        assert!((total - 12_088.80).abs() < 1e-6, "{total}");
    }

    #[test]
    fn an_instance_under_every_billing_mode() {
        let run = gpuplan(&[
            "cost",
            "--instance",
            "p3.2xlarge",
            "--hours",
            "8760",
            "--billing",
            "on-demand,reserved-1y,reserved-3y,spot",
            "--format",
            "json",
        ]);
        assert_eq!(run.code, 0, "{}", run.stderr);
        let answer = run.json();
        let lines = answer["lines"].as_array().unwrap();
        assert_eq!(lines.len(), 4);
        let total = |i: usize| lines[i]["total_usd"].as_f64().unwrap();
        assert!(total(1) < total(0) && total(3) < total(0));
        assert!(lines[1]["derived_from"].as_str().unwrap().starts_with("derived"));
        // A three-year commitment bills its three years, even for one year of use.
        assert_eq!(lines[2]["billed_hours"].as_f64().unwrap(), 3.0 * 8760.0);
        assert!(total(2) > total(1));
    }

    #[test]
    fn spot_with_interruptions_and_a_seeded_simulation() {
        let args = [
            "cost",
            "--instance",
            "p4d.24xlarge",
            "--hours",
            "500",
            "--billing",
            "spot",
            "--checkpoint-minutes",
            "10",
            "--checkpoint-write",
            "2min",
            "--restart",
            "8min",
            "--monte-carlo",
            "500",
            "--format",
            "json",
        ];
        let first = gpuplan(&args);
        assert_eq!(first.code, 0, "{}", first.stderr);
        let line = &first.json()["lines"][0];
        assert!(line["spot"]["expected_wall_hours"].as_f64().unwrap() > 500.0);
        assert_eq!(
            first.stdout,
            gpuplan(&args).stdout,
            "a fixed seed gives the same percentiles"
        );
    }

    /// Tencent Cloud bills some pay-as-you-go types in three tiers by the hours one instance has
    /// run (its price overview and S5 announcement): a 500-hour run pays 96 h at the list price,
    /// 264 h at half and 140 h at 34 %, and the line says it holds only for tiered types and
    /// that the count restarts with a new instance. A 50-hour run never leaves the first tier.
    #[test]
    fn tencent_runs_show_its_usage_tiers_and_when_they_hold() {
        let run = |hours: &str| {
            gpuplan(&[
                "cost",
                "--instance",
                "GN7.2XLARGE32",
                "--region",
                "ap-guangzhou",
                "--hours",
                hours,
                "--format",
                "json",
            ])
        };
        let long = run("500");
        assert_eq!(long.code, 0, "{}", long.stderr);
        let answer = long.json();
        let lines = answer["lines"].as_array().unwrap();
        let line = |label: &str| lines.iter().find(|l| l["billing"] == label).unwrap();
        let list = line("on-demand")["usd_per_hour"].as_f64().unwrap();
        let tiered = line("usage-tiered");
        let expected = list * (96.0 + 264.0 * 0.5 + 140.0 * 0.34);
        assert!(
            (tiered["compute_usd"].as_f64().unwrap() - expected).abs() < 1e-6,
            "{tiered}"
        );
        let notes = tiered["notes"].to_string();
        assert!(
            notes.contains("purchase page") && notes.contains("starts again"),
            "{notes}"
        );
        let short = run("50").json();
        assert!(!short["lines"].to_string().contains("usage-tiered"), "{short}");
    }

    #[test]
    fn spot_published_only_as_a_range_is_priced_from_it_or_named() {
        // Tencent says spot is 3–20 % of pay-as-you-go in the vast majority of cases: priced at
        // the top, and the line says how.
        let tencent = gpuplan(&[
            "cost",
            "--instance",
            "GN7.2XLARGE32",
            "--region",
            "ap-guangzhou",
            "--hours",
            "10",
            "--billing",
            "on-demand,spot",
            "--format",
            "json",
        ]);
        assert_eq!(tencent.code, 0, "{}", tencent.stderr);
        let answer = tencent.json();
        let lines = answer["lines"].as_array().unwrap();
        let rate = |label: &str| {
            lines.iter().find(|l| l["billing"] == label).unwrap()["usd_per_hour"]
                .as_f64()
                .unwrap()
        };
        assert!((rate("spot") - 0.2 * rate("on-demand")).abs() < 1e-9, "{answer}");
        assert!(
            answer
                .to_string()
                .contains("the top of the spot range Tencent Cloud publishes"),
            "{answer}"
        );
        // Alibaba states only 'as low as 10 %' and the pay-as-you-go ceiling: no price, the
        // range in dollars and the flag that gives one.
        let alibaba = gpuplan(&[
            "cost",
            "--instance",
            "ecs.gn7i-c8g1.2xlarge",
            "--hours",
            "10",
            "--billing",
            "spot",
        ]);
        assert_eq!(alibaba.code, 2, "{}", alibaba.stdout);
        assert!(
            alibaba
                .stderr
                .contains("Alibaba Cloud publishes no spot price per type")
                && alibaba.stderr.contains("give --spot-price"),
            "{}",
            alibaba.stderr
        );
    }

    #[test]
    fn staged_prices_savings_plans_and_minimum_periods() {
        let run = gpuplan(&[
            "cost",
            "--price",
            "3.0",
            "--hours",
            "1000",
            "--tiers",
            "0:3,500:2",
            "--savings-plan",
            "1.4",
            "--savings-discount",
            "0.3",
            "--format",
            "json",
        ]);
        assert_eq!(run.code, 0, "{}", run.stderr);
        let answer = run.json();
        let total = |label: &str| {
            answer["lines"]
                .as_array()
                .unwrap()
                .iter()
                .find(|l| l["billing"] == label)
                .unwrap()["total_usd"]
                .as_f64()
                .unwrap()
        };
        // One full month (500 h at $3 + 230 h at $2) and 270 h into the next at $3.
        assert!((total("tiered") - (1500.0 + 460.0 + 810.0)).abs() < 1e-9);
        // $1.40/h covers 2/3 of a $2.10/h discounted rate; the rest at $3/h on demand.
        assert!((total("savings-plan") - 1000.0 * (1.4 + 3.0 / 3.0)).abs() < 1e-6);
        let minimum = gpuplan(&[
            "cost",
            "--price",
            "2",
            "--hours",
            "10",
            "--minimum-hours",
            "730",
            "--format",
            "json",
        ]);
        assert_eq!(minimum.json()["lines"][0]["total_usd"], 1460.0);
    }

    #[test]
    fn bad_input_exits_2() {
        for args in [
            &["cost", "--price", "3", "--hours", "-5"][..],
            &["cost", "--hours", "10"],
            &["cost", "--instance", "p3.2xlarg", "--hours", "10"],
            &["energy", "--gpu", "H100", "--hours", "10", "--pue", "0.9"],
        ] {
            let run = gpuplan(args);
            assert_eq!(run.code, 2, "{args:?}: {}", run.stderr);
        }
        let typo = gpuplan(&["cost", "--instance", "p3.2xlarg", "--hours", "10"]);
        assert!(typo.stderr.contains("did you mean `p3.2xlarge`?"), "{}", typo.stderr);
    }
}

mod energy {
    use super::*;

    #[test]
    fn eight_h100_for_a_year_at_pue_1_5() {
        let run = gpuplan(&[
            "energy",
            "--gpu",
            "H100-SXM5-80GB",
            "--gpus",
            "8",
            "--hours",
            "8760",
            "--pue",
            "1.5",
            "--format",
            "json",
        ]);
        assert_eq!(run.code, 0, "{}", run.stderr);
        // 8 × 700 W × 1.8 (the rest of the server) × 1.5 × 8,760 h.
        let kwh = run.json()["kwh"].as_f64().unwrap();
        assert!((kwh - 73_584.0 * 1.8).abs() < 1e-6, "{kwh}");
        let one = gpuplan(&[
            "energy",
            "--gpu",
            "H100-SXM5-80GB",
            "--hours",
            "8760",
            "--pue",
            "1.5",
            "--host-overhead",
            "1",
            "--format",
            "json",
        ]);
        assert!((one.json()["kwh"].as_f64().unwrap() - 9_198.0).abs() < 1e-6);
    }

    #[test]
    fn rent_against_buy() {
        let run = gpuplan(&[
            "energy",
            "--gpu",
            "H100",
            "--gpus",
            "8",
            "--hours",
            "8760",
            "--pue",
            "1.3",
            "--price-kwh",
            "0.10",
            "--purchase-price",
            "300000",
            "--depreciation-years",
            "4",
            "--rent-price",
            "25",
        ]);
        assert_eq!(run.code, 0, "{}", run.stderr);
        assert!(run.stdout.contains("buying pays off"), "{}", run.stdout);
    }
}

mod forecast {
    /// Hourly telemetry (what an nvidia-smi or DCGM log gives) is combined per day, or per
    /// week when asked, instead of being refused as "not after the previous timestamp".
    #[test]
    fn hourly_telemetry_is_forecast_per_day_or_week() {
        let dir = std::env::temp_dir().join(format!("gpuplan-hourly-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join("telemetry.csv");
        let mut text = String::from("timestamp,value\n");
        for day in 0..120i64 {
            for hour in 0..24 {
                let date = jiff::civil::date(2024, 1, 1) + jiff::Span::new().days(day);
                text.push_str(&format!("{date}T{hour:02}:00:00Z,{}\n", 3 + (hour % 3)));
            }
        }
        std::fs::write(&file, text).unwrap();
        let daily = gpuplan(&[
            "forecast",
            "--history",
            file.to_str().unwrap(),
            "--unit",
            "gpus",
            "--horizon",
            "7",
            "--format",
            "json",
        ]);
        assert_eq!(daily.code, 0, "{}", daily.stderr);
        assert_eq!(daily.json()["frequency"], "daily");
        let weekly = gpuplan(&[
            "forecast",
            "--history",
            file.to_str().unwrap(),
            "--unit",
            "gpus",
            "--period",
            "week",
            "--horizon",
            "4",
            "--format",
            "json",
        ]);
        assert_eq!(weekly.code, 0, "{}", weekly.stderr);
        assert_eq!(weekly.json()["frequency"], "weekly");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    use super::*;

    fn fixture() -> String {
        format!(
            "{}/../gpuplan-forecast/tests/fixtures/air-passengers.csv",
            env!("CARGO_MANIFEST_DIR")
        )
    }

    #[test]
    fn forecast_json_follows_the_contract_and_the_chart_is_written() {
        let plot = std::env::temp_dir().join(format!("gpuplan-forecast-{}.svg", std::process::id()));
        let run = gpuplan(&[
            "forecast",
            "--history",
            &fixture(),
            "--horizon",
            "6",
            "--unit",
            "gpus",
            "--on-demand-price",
            "2.5",
            "--plot",
            plot.to_str().unwrap(),
            "--format",
            "json",
        ]);
        assert_eq!(run.code, 0, "{}", run.stderr);
        let answer = run.json();
        let points = answer["forecast"].as_array().unwrap();
        assert_eq!(points.len(), 6);
        for point in points {
            for field in ["timestamp", "mean", "lower", "upper"] {
                assert!(point.get(field).is_some(), "{field}");
            }
        }
        assert!(answer["model"].is_string());
        assert!(answer["backtest"]["mape"].as_f64().unwrap() < 0.1);
        assert!(answer["commitment"]["reserved_gpus"].as_u64().unwrap() > 0);
        let svg = std::fs::read_to_string(&plot).unwrap();
        assert!(svg.starts_with("<svg") && svg.contains("commitment"));
        let _ = std::fs::remove_file(plot);
    }

    #[test]
    fn bad_histories_exit_2_with_the_line() {
        let dir = std::env::temp_dir().join(format!("gpuplan-history-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let bad = dir.join("bad.csv");
        std::fs::write(&bad, "timestamp,value\n2024-01-01,1\n2024-01-02,x\n").unwrap();
        let run = gpuplan(&["forecast", "--history", bad.to_str().unwrap()]);
        assert_eq!(run.code, 2);
        assert!(run.stderr.contains("line 3"), "{}", run.stderr);
        let unordered = dir.join("unordered.csv");
        std::fs::write(&unordered, "timestamp,value\n2024-01-02,1\n2024-01-01,2\n").unwrap();
        let run = gpuplan(&["forecast", "--history", unordered.to_str().unwrap()]);
        assert_eq!(run.code, 2);
        assert!(run.stderr.contains("timestamps must increase"), "{}", run.stderr);
        let run = gpuplan(&["forecast", "--history", &fixture(), "--horizon", "0"]);
        assert_eq!(run.code, 2);
        let _ = std::fs::remove_dir_all(dir);
    }
}

mod serve {
    use std::io::{BufRead, BufReader, Read, Write};
    use std::process::{Command, Stdio};

    /// One HTTP/1.1 exchange on a fresh connection; the whole answer as text.
    pub(super) fn exchange(address: &str, request: &str) -> String {
        let mut stream = std::net::TcpStream::connect(address).unwrap();
        stream.write_all(request.as_bytes()).unwrap();
        let mut answer = String::new();
        stream.read_to_string(&mut answer).unwrap();
        answer
    }

    /// A server started by a test, killed if the test stops before it does (no process outlives
    /// the tests).
    pub(super) struct Served(pub std::process::Child);

    impl Drop for Served {
        fn drop(&mut self) {
            if matches!(self.0.try_wait(), Ok(None)) {
                let _ = self.0.kill();
                let _ = self.0.wait();
            }
        }
    }

    /// `gpuplan serve` on a port the system picks, with `env` set (and the Hugging Face and
    /// catalog variables of the test's own environment removed): the server, the address it
    /// logged, and the rest of its log.
    pub(super) fn start(env: &[(&str, &str)]) -> (Served, String, BufReader<std::process::ChildStderr>) {
        let mut command = Command::new(env!("CARGO_BIN_EXE_gpuplan"));
        command.args(["serve", "--addr", "127.0.0.1:0"]);
        for name in [
            "GPUPLAN_CATALOG",
            "HF_TOKEN",
            "HF_ENDPOINT",
            "HF_HOME",
            "HF_HUB_CACHE",
            "HF_HUB_OFFLINE",
        ] {
            command.env_remove(name);
        }
        let mut server = Served(
            command
                .envs(env.iter().copied())
                .env("RUST_LOG", "info")
                .stderr(Stdio::piped())
                .spawn()
                .unwrap(),
        );
        let mut log = BufReader::new(server.0.stderr.take().unwrap());
        let address = loop {
            let mut line = String::new();
            assert!(
                log.read_line(&mut line).unwrap() > 0,
                "the server exited before listening"
            );
            if let Some(rest) = line.split("listening on http://").nth(1) {
                break rest.split_whitespace().next().unwrap().to_string();
            }
        };
        (server, address, log)
    }

    /// `gpuplan serve` on a port the system picks: it logs where it listens, answers the API
    /// with the CLI's JSON, and on SIGTERM finishes and exits 0.
    #[test]
    fn serve_answers_over_http_and_stops_on_sigterm() {
        let (mut server, address, mut log) = start(&[]);
        let health = exchange(
            &address,
            "GET /healthz HTTP/1.1\r\nhost: x\r\nconnection: close\r\n\r\n",
        );
        assert!(health.starts_with("HTTP/1.1 200"), "{health}");
        let body = r#"{"model":"llama-3.1-8b","task":"lora","gpu":"H100","seq":2048}"#;
        let estimate = exchange(
            &address,
            &format!(
                "POST /api/v1/estimate HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
                body.len()
            ),
        );
        assert!(estimate.starts_with("HTTP/1.1 200"), "{estimate}");
        assert!(estimate.contains("\"per_gpu_bytes\""), "{estimate}");
        assert!(
            health.to_lowercase().contains("x-content-type-options: nosniff"),
            "{health}"
        );
        // A client in the middle of its headers does not keep the server from exiting.
        let mut pending = std::net::TcpStream::connect(&address).unwrap();
        std::io::Write::write_all(&mut pending, b"GET /healthz HTTP/1.1\r\nhost: x\r\n").unwrap();
        let killed = Command::new("kill")
            .args(["-TERM", &server.0.id().to_string()])
            .status()
            .unwrap();
        assert!(killed.success());
        let status = server.0.wait().unwrap();
        assert_eq!(status.code(), Some(0));
        drop(pending);
        let mut rest = String::new();
        log.read_to_string(&mut rest).unwrap();
        assert!(rest.contains("shutting down"), "{rest}");
    }
}

/// Every knob is one `gpuplan::Field`: the command line spells it as the field's flag, and
/// every flag of the request commands is a field, an engine's own name for one, or a flag
/// that shapes the output rather than the question.
mod fields {
    use super::*;
    use gpuplan::{Field, Spelling};

    const REQUEST_COMMANDS: [&str; 5] = ["estimate", "plan", "cost", "energy", "instances"];

    /// Flags about where answers go and how they look, or where the catalog comes from.
    const NOT_KNOBS: &[&str] = &[
        "help",
        "format",
        "catalog",
        "prices",
        "currency",
        "explain",
        "file",
        "export",
        "pick",
        "out",
        "flavour",
        "image",
        "storage-class",
        "name",
        "namespace",
    ];

    /// Engines' own names for a field, shown beside it in `--help`.
    const ENGINE_NAMES: &[(&str, Field)] = &[
        ("max-running-requests", Field::MaxNumSeqs),
        ("chunked-prefill-size", Field::MaxNumBatchedTokens),
    ];

    fn flags_of(command: &str) -> Vec<String> {
        let run = gpuplan(&[command, "--help"]);
        assert_eq!(run.code, 0, "{}", run.stderr);
        run.stdout
            .lines()
            .filter_map(|line| {
                let line = line.trim_start();
                let line = line
                    .strip_prefix("-")
                    .and_then(|l| l.split_once(", "))
                    .map_or(line, |(_, rest)| rest);
                let name = line.strip_prefix("--")?;
                Some(
                    name.split(|c: char| !(c.is_ascii_alphanumeric() || c == '-'))
                        .next()?
                        .to_string(),
                )
            })
            .collect()
    }

    #[test]
    fn every_field_is_a_flag_and_every_flag_a_field() {
        let flags: Vec<String> = REQUEST_COMMANDS.iter().flat_map(|c| flags_of(c)).collect();
        for field in Field::ALL {
            if matches!(field.spelling(), Spelling::KeyOnly { .. }) {
                continue;
            }
            let flag = field.flag();
            assert!(
                flags.contains(&flag[2..].to_string()),
                "{flag}: no request command takes it"
            );
        }
        for flag in &flags {
            let known = NOT_KNOBS.contains(&flag.as_str())
                || ENGINE_NAMES.iter().any(|(name, _)| name == flag)
                || Field::from_key(flag).is_some_and(|f| f.flag() == format!("--{flag}"));
            assert!(known, "--{flag} is a knob no gpuplan::Field declares");
        }
    }

    #[test]
    fn an_error_about_a_field_names_it_for_machines() {
        let run = gpuplan(&[
            "estimate",
            "--model",
            "llama-3.1-8b",
            "--task",
            "lora",
            "--gpu",
            "H100",
            "--lora-rank",
            "0",
            "--format",
            "json",
        ]);
        assert_eq!(run.code, 2, "{}", run.stderr);
        let error: Value = serde_json::from_str(run.stderr.trim()).unwrap();
        assert_eq!(error["error"]["code"], "out_of_range");
        assert_eq!(error["error"]["field"], "lora_rank");
        assert!(
            error["error"]["message"]
                .as_str()
                .unwrap()
                .contains("--lora-rank must be at least 1")
        );
    }
}

mod provider_facts {
    use super::*;

    /// `catalog --provider` shows what a provider publishes beyond prices, with its sources,
    /// and says which facts were not found.
    #[test]
    fn a_providers_sla_compliance_and_countries_come_with_their_sources() {
        let run = gpuplan(&["catalog", "--provider", "gcp"]);
        assert_eq!(run.code, 0, "{}", run.stderr);
        for needed in [
            "SLA, one VM",
            "99.9 %",
            "status.cloud.google.com",
            "HIPAA",
            "US (",
            "sources",
        ] {
            assert!(run.stdout.contains(needed), "{needed}: {}", run.stdout);
        }
        let run = gpuplan(&["catalog", "--provider", "lambda", "--format", "json"]);
        assert_eq!(run.code, 0, "{}", run.stderr);
        let facts = run.json();
        assert!(facts["sla_instance_percent"].is_null(), "{facts}");
        assert!(facts["compliance"].as_array().is_some_and(|c| !c.is_empty()));
        assert!(facts["spot_share"].is_null(), "{facts}");
        // IBM states its figures per deployment: one zone, and three zones of a region.
        let ibm = gpuplan(&["catalog", "--provider", "ibm", "--format", "json"]).json();
        assert_eq!(ibm["sla_instance_percent"], 99.9, "{ibm}");
        assert_eq!(ibm["sla_multi_zone_percent"], 99.99, "{ibm}");
        assert!(ibm["sla_credits"].is_null(), "credits not read are not given: {ibm}");
        // A provider that states spot only as a share of pay-as-you-go shows it and what is
        // priced from it.
        let tencent = gpuplan(&["catalog", "--provider", "tencent"]);
        assert!(
            tencent.stdout.contains("spot price")
                && tencent.stdout.contains("3 %–20 %")
                && tencent.stdout.contains("planned at 20 %"),
            "{}",
            tencent.stdout
        );
        let alibaba = gpuplan(&["catalog", "--provider", "alibaba", "--format", "json"]).json();
        assert_eq!(alibaba["spot_share"]["typical"], false, "{alibaba}");
        // Moving data between regions, the round trips a provider publishes, its private link.
        let azure = gpuplan(&["catalog", "--provider", "azure"]);
        for needed in [
            "eastus – westeurope: 83 ms",
            "ExpressRoute",
            "azure-network-latency",
            "to the internet      first 100 GB a month free, $0.087/GB",
        ] {
            assert!(azure.stdout.contains(needed), "{needed}: {}", azure.stdout);
        }
        let aws = gpuplan(&["catalog", "--provider", "aws", "--format", "json"]).json();
        assert_eq!(aws["inter_region_usd_per_gb"], 0.02, "{aws}");
        assert!(
            aws["interconnect"].as_str().unwrap().contains("Direct Connect"),
            "{aws}"
        );
        assert!(aws["latencies"].as_array().unwrap().is_empty(), "{aws}");
        assert!(
            aws["latency_source"]["title"].as_str().unwrap().contains("console"),
            "{aws}"
        );
        assert_eq!(aws["storage"]["egress_tiers"][1][1], 0.09, "{aws}");
        // A price within a continent and one between continents are shown apart.
        let gcp = gpuplan(&["catalog", "--provider", "gcp"]);
        assert!(
            gcp.stdout.contains("$0.02/GB within the US and Canada")
                && gcp.stdout.contains("$0.08/GB between continents"),
            "{}",
            gcp.stdout
        );
        for (provider, port) in [
            ("oci", "$1.275"),
            ("alibaba", "$720"),
            ("tencent", "$746"),
            ("ibm", "$1,800"),
        ] {
            let facts = gpuplan(&["catalog", "--provider", provider, "--format", "json"]).json();
            assert!(
                facts["interconnect"].as_str().unwrap().contains(port),
                "{provider}: {facts}"
            );
        }
    }
}

mod completions_and_manual {
    use super::*;

    #[test]
    fn each_shell_gets_a_script_that_knows_the_commands_and_their_values() {
        for shell in ["bash", "zsh", "fish", "elvish", "powershell"] {
            let run = gpuplan(&["completions", shell]);
            assert_eq!(run.code, 0, "{shell}: {}", run.stderr);
            for word in ["plan", "estimate", "max-hourly-price", "compat"] {
                assert!(run.stdout.contains(word), "{shell} script lacks {word}");
            }
        }
        // Enumerated values complete too: the output formats of --format.
        let bash = gpuplan(&["completions", "bash"]).stdout;
        assert!(
            bash.contains("table json csv markdown"),
            "bash lacks the --format values"
        );
    }

    #[test]
    fn an_unknown_shell_is_refused_with_the_known_ones() {
        let run = gpuplan(&["completions", "tcsh"]);
        assert_eq!(run.code, 2);
        assert!(
            run.stderr.contains("bash") && run.stderr.contains("zsh"),
            "{}",
            run.stderr
        );
    }

    #[test]
    fn the_manual_page_is_roff_with_every_command() {
        let run = gpuplan(&["man"]);
        assert_eq!(run.code, 0, "{}", run.stderr);
        assert!(
            run.stdout.starts_with(".ie") || run.stdout.contains(".TH gpuplan 1"),
            "{}",
            &run.stdout[..200]
        );
        for command in ["plan", "estimate", "cost", "export", "completions"] {
            assert!(
                run.stdout.contains(&format!("gpuplan\\-{command}")),
                "the page lacks {command}"
            );
        }
    }

    #[test]
    fn the_manual_is_written_one_page_per_command() {
        let dir = std::env::temp_dir().join(format!("gpuplan-man-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let run = gpuplan(&["man", "--out", dir.to_str().unwrap()]);
        assert_eq!(run.code, 0, "{}", run.stderr);
        for page in ["gpuplan.1", "gpuplan-plan.1", "gpuplan-catalog-refresh.1"] {
            let text = std::fs::read_to_string(dir.join(page)).unwrap_or_else(|e| panic!("{page}: {e}"));
            assert!(text.contains(".TH"), "{page} is not roff");
        }
        let plan = std::fs::read_to_string(dir.join("gpuplan-plan.1")).unwrap();
        assert!(plan.contains("\\-\\-deadline"), "the plan page lacks --deadline");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn output_flags_do_not_apply() {
        let run = gpuplan(&["completions", "bash", "--format", "json"]);
        assert_eq!(run.code, 2);
        assert!(
            run.stderr.contains("--format does not apply to completions"),
            "{}",
            run.stderr
        );
    }
}

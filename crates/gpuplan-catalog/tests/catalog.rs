//! The catalog as a specification: what the embedded data promise, how a broken catalog is
//! reported, and what the SkyPilot importer does with each known trap of its source.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use gpuplan_catalog::import::{ImportOptions, SnapshotFile, import_skypilot};
use gpuplan_catalog::{Catalog, CatalogFile, OfferingQuery, OfferingSort};
use gpuplan_model::{FabricKind, FabricRule, Offering, Precision, ProviderId};
use std::collections::{BTreeSet, HashSet};
use std::sync::OnceLock;

fn catalog() -> &'static Catalog {
    static CATALOG: OnceLock<Catalog> = OnceLock::new();
    CATALOG.get_or_init(|| Catalog::embedded().expect("the embedded catalog is valid"))
}

fn offerings_of(provider: &str) -> Vec<&'static Offering> {
    catalog()
        .offerings()
        .iter()
        .filter(|o| o.provider.as_str() == provider)
        .collect()
}

mod embedded_catalog {
    use super::*;

    #[test]
    fn has_at_least_35_accelerators_with_unique_ids() {
        let ids: Vec<&str> = catalog().accelerators().iter().map(|a| a.id.as_str()).collect();
        let unique: BTreeSet<&str> = ids.iter().copied().collect();
        assert!(ids.len() >= 35, "{} accelerators", ids.len());
        assert_eq!(unique.len(), ids.len());
    }

    #[test]
    fn covers_the_accelerators_clouds_rent() {
        for id in [
            "V100-SXM2-16GB",
            "V100-SXM2-32GB",
            "T4",
            "P100-PCIE-16GB",
            "A10",
            "A10G",
            "L4",
            "L40",
            "L40S",
            "A100-PCIE-40GB",
            "A100-SXM4-40GB",
            "A100-PCIE-80GB",
            "A100-SXM4-80GB",
            "H100-PCIE-80GB",
            "H100-SXM5-80GB",
            "H100-NVL-94GB",
            "H200-SXM-141GB",
            "GH200-96GB",
            "B200",
            "B300",
            "GB200",
            "RTX-A6000",
            "RTX-6000-ADA",
            "RTX-3090",
            "RTX-4090",
            "RTX-5090",
            "MI250X",
            "MI300X",
            "MI325X",
            "TPU-v4",
            "TPU-v5e",
            "TPU-v5p",
            "TPU-v6e",
            "Trainium",
            "Inferentia2",
        ] {
            assert!(catalog().accelerators().get(id).is_some(), "{id} is missing");
        }
    }

    #[test]
    fn every_accelerator_number_has_a_dated_source() {
        for a in catalog().accelerators().iter() {
            assert!(!a.sources.is_empty(), "{} has no source", a.id);
            let covered: HashSet<&str> = a
                .sources
                .iter()
                .flat_map(|s| s.covers.iter().map(String::as_str))
                .collect();
            let present = [
                ("memory_gib", true),
                ("memory_bandwidth_gb_per_s", a.memory_bandwidth.is_some()),
                ("dense_tflops", !a.dense.is_empty()),
                ("sparse_tflops", !a.sparse.is_empty()),
                ("tdp_watts", a.tdp.is_some()),
                ("nvlink_gb_per_s", a.nvlink.is_some()),
            ];
            for (field, is_present) in present {
                assert!(
                    !is_present || covered.contains(field),
                    "{}: {field} has no source",
                    a.id
                );
            }
            for source in &a.sources {
                assert!(source.url.starts_with("http"), "{}: source url `{}`", a.id, source.url);
            }
        }
    }

    #[test]
    fn no_sparse_figure_sits_in_a_dense_column() {
        for a in catalog().accelerators().iter() {
            for (precision, sparse) in a.sparse.iter() {
                if let Some(dense) = a.dense.get(precision) {
                    assert!(
                        sparse.0 > dense.0 * 1.25,
                        "{} {precision}: dense {dense} vs sparse {sparse}",
                        a.id
                    );
                }
            }
        }
    }

    #[test]
    fn unknown_stays_unknown() {
        // No zero stands for a missing value: every stated number is positive.
        for a in catalog().accelerators().iter() {
            assert!(a.memory.as_u64() > 0);
            for (_, rate) in a.dense.iter().chain(a.sparse.iter()) {
                assert!(rate.0 > 0.0, "{}", a.id);
            }
        }
        // The Hopper GPU has no int4 tensor path: absent, not zero.
        let h100 = catalog().accelerators().get("H100-SXM5-80GB").unwrap();
        assert_eq!(h100.peak(Precision::Int4), None);
    }

    #[test]
    fn every_offering_names_a_known_accelerator_with_a_consistent_memory_total() {
        for o in catalog().offerings() {
            let Some(id) = &o.accelerator else {
                assert_eq!(o.accelerator_count, 0);
                continue;
            };
            let accelerator = catalog().accelerators().get(id.as_str()).expect("known accelerator");
            assert!(o.accelerator_count > 0);
            let total = o.accelerator_memory.expect("memory total").as_gib();
            let expected = accelerator.memory.as_gib() * f64::from(o.accelerator_count);
            assert!(
                (total - expected).abs() / expected <= 0.10,
                "{} {}",
                o.provider,
                o.instance_type
            );
        }
    }

    #[test]
    fn prices_are_positive_or_unknown_and_spot_is_below_on_demand() {
        for o in catalog().offerings() {
            for price in [o.on_demand, o.spot].into_iter().flatten() {
                assert!(
                    price.0 > 0.0 && price.0.is_finite(),
                    "{} {}",
                    o.provider,
                    o.instance_type
                );
            }
            if let (Some(on_demand), Some(spot)) = (o.on_demand, o.spot) {
                assert!(
                    spot.0 < on_demand.0,
                    "{} {} {:?}",
                    o.provider,
                    o.instance_type,
                    o.region
                );
            }
        }
    }

    #[test]
    fn no_placeholder_price_reaches_a_user() {
        assert!(
            offerings_of("mithril")
                .iter()
                .all(|o| o.on_demand.is_none() && o.spot.is_none())
        );
        assert!(offerings_of("vast").iter().all(|o| o.spot.is_none()));
    }

    #[test]
    fn offerings_are_unique_per_provider_type_region_and_zone() {
        let mut seen = HashSet::new();
        for o in catalog().offerings() {
            assert!(
                seen.insert((&o.provider, &o.instance_type, &o.region, &o.zone)),
                "duplicate {} {} {:?} {:?}",
                o.provider,
                o.instance_type,
                o.region,
                o.zone
            );
        }
    }

    #[test]
    fn every_offering_has_a_source_and_date() {
        for o in catalog().offerings() {
            assert!(!o.source.trim().is_empty(), "{} {}", o.provider, o.instance_type);
        }
    }

    #[test]
    fn h100_is_rented_by_at_least_five_providers() {
        let query = OfferingQuery {
            accelerators: catalog()
                .accelerators()
                .resolve_family("H100")
                .unwrap()
                .iter()
                .map(|a| a.id.clone())
                .collect(),
            ..OfferingQuery::default()
        };
        let providers: BTreeSet<ProviderId> = query.run(catalog()).into_iter().map(|o| o.provider).collect();
        assert!(providers.len() >= 5, "{providers:?}");
    }

    #[test]
    fn the_issue_families_are_covered() {
        let types: HashSet<(&str, &str)> = catalog()
            .offerings()
            .iter()
            .map(|o| (o.provider.as_str(), o.instance_type.as_str()))
            .collect();
        for (provider, instance_type) in [
            ("aws", "g4dn.xlarge"),
            ("aws", "g5.xlarge"),
            ("aws", "g6.xlarge"),
            ("aws", "g6e.xlarge"),
            ("aws", "p3.2xlarge"),
            ("aws", "p4d.24xlarge"),
            ("aws", "p4de.24xlarge"),
            ("aws", "p5.48xlarge"),
            ("aws", "p5e.48xlarge"),
            ("aws", "p5en.48xlarge"),
            ("aws", "p6-b200.48xlarge"),
            ("aws", "inf2.xlarge"),
            ("aws", "trn1.32xlarge"),
            ("gcp", "a2-highgpu-1g"),
            ("gcp", "a3-highgpu-8g"),
            ("gcp", "g2-standard-4"),
            ("gcp", "n1-standard-8+T4x1"),
            ("gcp", "n1-standard-8+V100x1"),
            ("azure", "Standard_NC4as_T4_v3"),
            ("azure", "Standard_NC24ads_A100_v4"),
            ("azure", "Standard_ND96asr_v4"),
            ("azure", "Standard_ND96isr_H100_v5"),
            ("oci", "BM.GPU.H100.8"),
            ("lambda", "gpu_8x_h100_sxm5"),
        ] {
            assert!(
                types.contains(&(provider, instance_type)),
                "{provider} {instance_type} missing"
            );
        }
        for (provider, prefix) in [
            ("alibaba", "ecs.gn6i"),
            ("alibaba", "ecs.gn7i"),
            ("alibaba", "ecs.gn7e"),
            ("tencent", "GN7"),
        ] {
            assert!(
                types.iter().any(|(p, t)| *p == provider && t.starts_with(prefix)),
                "{provider} {prefix}* missing"
            );
        }
    }

    #[test]
    fn gcp_prices_include_the_host_and_the_gpu() {
        // asia-east1-a: g2-standard-4 host 0.16997 + L4 x1 0.64847 (the snapshot's SOURCE.md example).
        let g2 = catalog()
            .offerings()
            .iter()
            .find(|o| o.instance_type == "g2-standard-4" && o.region.as_deref() == Some("asia-east1"))
            .expect("g2-standard-4 in asia-east1");
        assert!((g2.on_demand.unwrap().0 - 0.81844).abs() < 1e-6, "{:?}", g2.on_demand);
    }

    #[test]
    fn query_results_obey_every_filter_and_the_order() {
        let query = OfferingQuery {
            providers: vec![ProviderId::new("aws")],
            max_price: Some(gpuplan_model::UsdPerHour(2.0)),
            sort: OfferingSort::Price,
            ..OfferingQuery::default()
        };
        let found = query.run(catalog());
        assert!(!found.is_empty());
        assert!(
            found
                .iter()
                .all(|o| o.provider.as_str() == "aws" && o.on_demand.unwrap().0 <= 2.0)
        );
        assert!(
            found
                .windows(2)
                .all(|w| w[0].on_demand.unwrap().0 <= w[1].on_demand.unwrap().0)
        );
    }
}

mod broken_catalogs {
    use super::*;

    const MANIFEST: &str = "schema_version = 1\n";
    const ACCELERATOR: &str = r#"
[[accelerator]]
id = "T4"
name = "NVIDIA T4"
vendor = "NVIDIA"
architecture = "Turing"
memory_gib = 16
aliases = ["tesla-t4"]

[[accelerator.sources]]
covers = ["memory_gib"]
title = "NVIDIA T4 datasheet"
url = "https://www.nvidia.com/t4"
as_of = "2026-11-22"
"#;
    const HEADER: &str = "provider,instance_type,region,zone,accelerator,accelerator_count,accelerator_memory_gib,vcpus,memory_gib,local_disk_gb,network_gbps,gpu_interconnect,node_network,on_demand_usd_per_hour,spot_usd_per_hour,billing_granularity,source,as_of,notes\n";

    fn file(path: &str, text: &str) -> CatalogFile {
        CatalogFile {
            path: path.to_string(),
            text: text.to_string(),
        }
    }

    fn load(offerings: &str) -> Result<Catalog, String> {
        Catalog::from_files(&[
            file("catalog.toml", MANIFEST),
            file("accelerators/test.toml", ACCELERATOR),
            file("offerings/test.csv", &format!("{HEADER}{offerings}")),
        ])
        .map_err(|e| e.to_string())
    }

    /// Compatibility facts and published measurements are the catalog's own data: a folder
    /// without them knows none (and says so, rather than borrowing the built-in ones); one with
    /// them uses its own; a malformed file is refused with its line.
    #[test]
    fn compatibility_and_published_measurements_come_from_the_catalog_folder() {
        let bare = load("").unwrap();
        assert!(bare.compatibility().cuda_driver.is_empty() && bare.published_benchmarks().measurement.is_empty());
        let facts = r#"
[[cuda_driver]]
cuda = "12.4"
min_driver = "550.54.14"
source = "https://docs.nvidia.com/cuda/cuda-toolkit-release-notes/"
"#;
        let own = Catalog::from_files(&[
            file("catalog.toml", MANIFEST),
            file("accelerators/test.toml", ACCELERATOR),
            file("compat/compatibility.toml", facts),
        ])
        .unwrap();
        assert_eq!(own.compatibility().cuda_driver.len(), 1);
        let broken = Catalog::from_files(&[
            file("catalog.toml", MANIFEST),
            file("accelerators/test.toml", ACCELERATOR),
            file("benchmarks/published.toml", "[[measurement]]\ngpu = 3\n"),
        ])
        .unwrap_err()
        .to_string();
        assert!(broken.starts_with("benchmarks/published.toml:2:"), "{broken}");
    }

    const NATIVE: &str = ",currency,on_demand_native,spot_native";

    fn load_native(row: &str, rates: Option<&str>) -> Result<Catalog, String> {
        let mut files = vec![
            file("catalog.toml", MANIFEST),
            file("accelerators/test.toml", ACCELERATOR),
            file("offerings/test.csv", &format!("{}{NATIVE}\n{row}", HEADER.trim_end())),
        ];
        if let Some(rates) = rates {
            files.push(file("billing/exchange-rates.toml", rates));
        }
        Catalog::from_files(&files).map_err(|e| e.to_string())
    }

    const CNY_RATE: &str = "[[rate]]\ncurrency = \"CNY\"\nper_usd = 7.0\nas_of = \"2025-02-28\"\ntitle = \"t\"\nurl = \"https://example.com\"\n";

    /// A catalog of one AWS T4 offering (on demand only) and one operations table `text` at `path`.
    fn with_operations(path: &str, text: &str) -> Result<Catalog, String> {
        Catalog::from_files(&[
            file("catalog.toml", MANIFEST),
            file("accelerators/test.toml", ACCELERATOR),
            file(
                "offerings/test.csv",
                &format!("{HEADER}aws,g4dn.xlarge,us-east-1,,T4,1,16,4,16,125,25,none,ethernet,0.526,,second,test,2026-11-22,\n"),
            ),
            file(path, text),
        ])
        .map_err(|e| e.to_string())
    }

    #[test]
    fn usage_tiers_rise_in_hours_fall_in_price_and_say_which_types() {
        let terms = |tiers: &str| {
            let billing = format!(
                "[[billing]]\nprovider = \"aws\"\nincrement = \"second\"\nminimum_seconds = 0\n{tiers}\ntitle = \"t\"\nurl = \"https://example.com\"\nas_of = \"2026-11-01\"\n"
            );
            with_operations("operations/billing.toml", &billing)
        };
        let catalog = terms("usage_tiers = [[96.0, 0.5], [360.0, 0.34]]\nusage_tiers_every_type = false").unwrap();
        let tiers = catalog.operations().billing[0].usage_tiers.clone().unwrap();
        assert_eq!((tiers.steps.len(), tiers.every_type), (2, false));
        let rising = terms("usage_tiers = [[360.0, 0.5], [96.0, 0.34]]\nusage_tiers_every_type = false").unwrap_err();
        assert!(rising.contains("usage_tiers"), "{rising}");
        let unsaid = terms("usage_tiers = [[96.0, 0.5]]").unwrap_err();
        assert!(unsaid.contains("usage_tiers_every_type"), "{unsaid}");
    }

    /// Prices between regions are shares of a dollar per GB, round trips are milliseconds a
    /// provider could publish, and each comes with its source.
    #[test]
    fn network_facts_are_checked_and_sourced() {
        let facts = |fields: &str| {
            with_operations(
                "operations/providers.toml",
                &format!("schema_version = 1\n[[provider]]\nprovider = \"aws\"\n{fields}\n"),
            )
        };
        let source = "{ title = \"t\", url = \"https://example.com\", as_of = \"2026-11-01\" }";
        let catalog = facts(&format!(
            "inter_region_usd_per_gb = 0.02\ninter_region_source = {source}\nlatencies = [[\"a\", \"b\", 8.0]]\nlatency_source = {source}"
        ))
        .unwrap();
        let aws = catalog.operations().provider_facts(&ProviderId::new("aws")).unwrap();
        assert_eq!(aws.inter_region_usd_per_gb, Some(0.02));
        assert_eq!(aws.latencies[0].milliseconds, 8.0);
        let unsourced = facts("interconnect = \"x\"").unwrap_err();
        assert!(unsourced.contains("interconnect_source"), "{unsourced}");
        let dear = facts(&format!(
            "inter_region_usd_per_gb = 2.0\ninter_region_source = {source}"
        ))
        .unwrap_err();
        assert!(dear.contains("inter_region_usd_per_gb"), "{dear}");
        let slow = facts(&format!("latencies = [[\"a\", \"b\", 0.0]]\nlatency_source = {source}")).unwrap_err();
        assert!(slow.contains("latencies"), "{slow}");
        let scope_alone = facts("inter_region_scope = \"between US regions\"").unwrap_err();
        assert!(scope_alone.contains("inter_region_scope"), "{scope_alone}");
        // The built-in data: Azure's published round trips, RunPod's free transfer.
        let builtin = Catalog::embedded().unwrap();
        let azure = builtin.operations().provider_facts(&ProviderId::new("azure")).unwrap();
        assert!(
            azure
                .latencies
                .iter()
                .any(|l| l.from == "eastus" && l.to == "westeurope")
        );
        let runpod = builtin.operations().provider_facts(&ProviderId::new("runpod")).unwrap();
        assert_eq!(runpod.inter_region_usd_per_gb, Some(0.0));
        // A price read for some continents only says which.
        assert!(azure.inter_region_scope.as_deref().unwrap().contains("North America"));
    }

    #[test]
    fn spot_shares_are_shares_of_pay_as_you_go_and_only_a_typical_one_is_short_of_it() {
        let share = |fields: &str| {
            let spot = format!(
                "[[spot_share]]\nprovider = \"aws\"\n{fields}\nstated = \"s\"\ntitle = \"t\"\nurl = \"https://example.com\"\nas_of = \"2026-11-01\"\n"
            );
            with_operations("operations/spot.toml", &spot)
        };
        let catalog = share("lowest_share = 0.03\nhighest_share = 0.2\ntypical = true").unwrap();
        let aws = catalog.operations().spot_share(&ProviderId::new("aws")).unwrap();
        assert_eq!((aws.lowest, aws.highest, aws.planned_rate(1.0)), (0.03, 0.2, Some(0.2)));
        let ceiling = share("lowest_share = 0.1\nhighest_share = 1.0\ntypical = false").unwrap();
        assert_eq!(ceiling.operations().spot_shares[0].planned_rate(1.0), None);
        let upside_down = share("lowest_share = 0.3\nhighest_share = 0.2\ntypical = true").unwrap_err();
        assert!(upside_down.contains("lowest_share"), "{upside_down}");
        let short_ceiling = share("lowest_share = 0.1\nhighest_share = 0.5\ntypical = false").unwrap_err();
        assert!(short_ceiling.contains("highest_share"), "{short_ceiling}");
        // The built-in catalog states Tencent's and Alibaba's.
        let builtin = Catalog::embedded().unwrap();
        assert!(
            builtin
                .operations()
                .spot_share(&ProviderId::new("tencent"))
                .is_some_and(|s| s.typical)
        );
        assert!(
            builtin
                .operations()
                .spot_share(&ProviderId::new("alibaba"))
                .is_some_and(|s| !s.typical)
        );
    }

    #[test]
    fn native_prices_convert_at_the_rate_and_need_one() {
        let row = "alibaba,ecs.t,cn-test,,T4,1,16,4,16,,,,,,,second,test,2024-12-31,,CNY,14.0,\n";
        let catalog = load_native(row, Some(CNY_RATE)).unwrap();
        assert_eq!(catalog.offerings()[0].on_demand.unwrap().0, 2.0);
        assert!(load_native(row, None).unwrap_err().contains("no exchange rate for CNY"));
        let both = "alibaba,ecs.t,cn-test,,T4,1,16,4,16,,,,,1.0,,second,test,2024-12-31,,CNY,14.0,\n";
        assert!(
            load_native(both, Some(CNY_RATE))
                .unwrap_err()
                .contains("USD prices empty")
        );
    }

    #[test]
    fn a_valid_small_catalog_loads() {
        let catalog =
            load("aws,g4dn.xlarge,us-east-1,,T4,1,16,4,16,125,25,none,ethernet,0.526,0.2,second,test,2026-11-22,\n")
                .unwrap();
        assert_eq!(catalog.offerings().len(), 1);
        assert_eq!(
            catalog
                .accelerators()
                .resolve_one("Tesla T4")
                .unwrap()
                .accelerator
                .id
                .as_str(),
            "T4"
        );
    }

    #[test]
    fn a_bad_price_names_file_line_and_field() {
        let error = load("aws,g4dn.xlarge,us-east-1,,T4,1,16,4,16,,,,,-1,,,test,2026-11-22,\n").unwrap_err();
        assert_eq!(
            error,
            "offerings/test.csv:2: field `on_demand_usd_per_hour`: `-1` is not a non-negative number"
        );
    }

    /// A shared-file class that rounds claims up must say from what size.
    #[test]
    fn a_rounding_storage_class_without_its_minimum_is_refused() {
        let entry = "[[shared_storage]]\nprovider = \"x\"\nstorage_class = \"c\"\nkind = \"k\"\nbuilt_in = true\ndynamic = true\nneeds = \"n\"\nclaim_size = \"rounded_up\"\ntitle = \"t\"\nurl = \"https://example.com\"\nas_of = \"2026-11-28\"\n";
        let error = Catalog::from_files(&[
            file("catalog.toml", MANIFEST),
            file("accelerators/test.toml", ACCELERATOR),
            file("operations/shared_storage.toml", entry),
        ])
        .unwrap_err()
        .to_string();
        assert!(error.contains("min_gib") && error.contains("rounded_up"), "{error}");
    }

    #[test]
    fn a_zero_price_is_refused() {
        let error = load("aws,a,r,,T4,1,16,4,16,,,,,0,,,test,2026-11-22,\n").unwrap_err();
        assert!(error.contains("a price must be positive"), "{error}");
    }

    #[test]
    fn spot_above_on_demand_is_refused() {
        let error = load("aws,a,r,,T4,1,16,4,16,,,,,1.0,2.0,,test,2026-11-22,\n").unwrap_err();
        assert!(
            error.contains("spot_usd_per_hour") && error.contains("not below on-demand"),
            "{error}"
        );
    }

    #[test]
    fn an_unknown_accelerator_is_refused() {
        let error = load("aws,a,r,,Z9,1,16,4,16,,,,,1.0,,,test,2026-11-22,\n").unwrap_err();
        assert!(
            error.contains("field `accelerator`") && error.contains("`Z9`"),
            "{error}"
        );
    }

    #[test]
    fn a_per_gpu_memory_written_as_total_is_refused() {
        let error = load("aws,a,r,,T4,4,16,4,16,,,,,1.0,,,test,2026-11-22,\n").unwrap_err();
        assert!(error.contains("accelerator_memory_gib"), "{error}");
    }

    #[test]
    fn a_duplicate_offering_is_refused() {
        let row = "aws,a,r,,T4,1,16,4,16,,,,,1.0,,,test,2026-11-22,\n";
        let error = load(&format!("{row}{row}")).unwrap_err();
        assert!(error.contains("duplicate offering") && error.contains(":3:"), "{error}");
    }

    #[test]
    fn a_wrong_header_is_refused() {
        let error = Catalog::from_files(&[
            file("catalog.toml", MANIFEST),
            file("offerings/x.csv", "provider,instance\naws,a\n"),
        ])
        .unwrap_err();
        assert_eq!(error.line, Some(1));
    }

    #[test]
    fn a_toml_syntax_error_names_line_and_column() {
        let error = Catalog::from_files(&[
            file("catalog.toml", MANIFEST),
            file(
                "accelerators/bad.toml",
                "[[accelerator]]\nid = \"X\"\nmemory_gib = = 3\n",
            ),
        ])
        .unwrap_err();
        assert_eq!((error.file.as_str(), error.line), ("accelerators/bad.toml", Some(3)));
        assert!(error.column.is_some());
    }

    #[test]
    fn an_unsourced_number_is_refused() {
        let text = ACCELERATOR.replace("memory_gib = 16", "memory_gib = 16\ntdp_watts = 70");
        let error =
            Catalog::from_files(&[file("catalog.toml", MANIFEST), file("accelerators/a.toml", &text)]).unwrap_err();
        assert_eq!(error.field.as_deref(), Some("tdp_watts"));
        assert!(error.message.contains("no source"), "{error}");
    }

    #[test]
    fn a_future_schema_version_is_refused() {
        let error = Catalog::from_files(&[file("catalog.toml", "schema_version = 2\n")]).unwrap_err();
        assert!(
            error.to_string().contains("schema version 2 is not supported"),
            "{error}"
        );
    }

    #[test]
    fn a_missing_manifest_is_refused() {
        let error = Catalog::from_files(&[]).unwrap_err();
        assert_eq!(error.file, "catalog.toml");
    }
}

mod importer {
    use super::*;
    use gpuplan_catalog::import::Imported;

    fn snapshot(cloud: &str, fixture: &str) -> SnapshotFile {
        let path = format!("{}/tests/fixtures/snapshot/{fixture}", env!("CARGO_MANIFEST_DIR"));
        SnapshotFile {
            cloud: cloud.to_string(),
            source: format!("fixture {fixture}"),
            text: std::fs::read_to_string(path).unwrap(),
        }
    }

    fn import(files: &[SnapshotFile]) -> Imported {
        let options = ImportOptions {
            as_of: "2026-11-22".parse().unwrap(),
            curated: HashSet::new(),
        };
        import_skypilot(files, catalog().accelerators(), &options).unwrap()
    }

    fn rows<'a>(imported: &'a Imported, provider: &str) -> &'a [Offering] {
        imported
            .offerings
            .get(&ProviderId::new(provider))
            .map(Vec::as_slice)
            .unwrap_or_default()
    }

    fn dropped(imported: &Imported, provider: &str, reason_part: &str) -> usize {
        let report = &imported.report.providers[provider];
        report
            .dropped_rows
            .iter()
            .chain(&report.dropped_prices)
            .filter(|(reason, _)| reason.contains(reason_part))
            .map(|(_, tally)| tally.count)
            .sum()
    }

    #[test]
    fn zones_with_equal_prices_fold_into_their_region() {
        let imported = import(&[snapshot("aws", "aws.csv")]);
        let g4dn: Vec<&Offering> = rows(&imported, "aws")
            .iter()
            .filter(|o| o.instance_type == "g4dn.xlarge")
            .collect();
        // us-east-1: both zones at spot 0.20 → one row; us-east-2: 0.15 vs 0.17 → a row per zone.
        assert_eq!(g4dn.len(), 3);
        assert!(
            g4dn.iter()
                .any(|o| o.region.as_deref() == Some("us-east-1") && o.zone.is_none())
        );
        assert_eq!(
            g4dn.iter().filter(|o| o.region.as_deref() == Some("us-east-2")).count(),
            2
        );
        assert_eq!(g4dn[0].accelerator.as_ref().unwrap().as_str(), "T4");
        assert_eq!(g4dn[0].local_disk.unwrap().as_gb(), 125.0);
    }

    #[test]
    fn spot_equal_to_on_demand_is_dropped_and_missing_on_demand_stays_unknown() {
        let imported = import(&[snapshot("aws", "aws.csv")]);
        let p4d = rows(&imported, "aws")
            .iter()
            .find(|o| o.instance_type == "p4d.24xlarge")
            .unwrap();
        assert_eq!(p4d.spot, None);
        assert_eq!(p4d.accelerator.as_ref().unwrap().as_str(), "A100-SXM4-40GB");
        let p5e = rows(&imported, "aws")
            .iter()
            .find(|o| o.instance_type == "p5e.48xlarge")
            .unwrap();
        assert_eq!(p5e.on_demand, None);
        assert_eq!(dropped(&imported, "aws", "spot price not below on-demand"), 1);
    }

    #[test]
    fn gcp_joins_hosts_and_gpu_rows_per_zone() {
        let imported = import(&[snapshot("gcp", "gcp-hosts.csv"), snapshot("gcp", "gcp-gpus.csv")]);
        let gcp = rows(&imported, "gcp");
        let g2 = gcp.iter().find(|o| o.instance_type == "g2-standard-4").unwrap();
        assert!((g2.on_demand.unwrap().0 - 0.81844).abs() < 1e-9);
        assert!((g2.spot.unwrap().0 - 0.27).abs() < 1e-9);
        let n1 = gcp.iter().find(|o| o.instance_type == "n1-standard-8+T4x1").unwrap();
        assert!((n1.on_demand.unwrap().0 - 0.729998).abs() < 1e-9);
        assert!(
            gcp.iter()
                .any(|o| o.instance_type == "n1-standard-8" && o.accelerator.is_none())
        );
        // The A100 GPU row's spot (3.50) is above its on-demand (2.93): spot dropped.
        let a2 = gcp.iter().find(|o| o.instance_type == "a2-highgpu-1g").unwrap();
        assert!((a2.on_demand.unwrap().0 - (0.94803 + 2.9333)).abs() < 1e-9);
        assert_eq!(a2.spot, None);
    }

    #[test]
    fn a_per_gpu_size_written_as_the_total_is_repaired() {
        let imported = import(&[snapshot("lambda", "lambda.csv")]);
        let h100 = rows(&imported, "lambda")
            .iter()
            .find(|o| o.instance_type == "gpu_8x_h100_sxm5")
            .unwrap();
        assert_eq!(h100.accelerator_memory.unwrap().as_gib(), 640.0);
        assert!(
            imported.report.providers["lambda"]
                .repairs
                .keys()
                .any(|r| r.contains("TotalGpuMemoryInMiB"))
        );
        // Lambda's 1-GPU A100 is the PCIe card.
        let a100 = rows(&imported, "lambda")
            .iter()
            .find(|o| o.instance_type == "gpu_1x_a100")
            .unwrap();
        assert_eq!(a100.accelerator.as_ref().unwrap().as_str(), "A100-PCIE-40GB");
    }

    #[test]
    fn runpod_memory_in_gb_and_unknown_accelerators() {
        let imported = import(&[snapshot("runpod", "runpod.csv")]);
        let runpod = rows(&imported, "runpod");
        assert_eq!(runpod.len(), 1);
        assert_eq!(runpod[0].accelerator.as_ref().unwrap().as_str(), "A100-PCIE-80GB");
        assert_eq!(runpod[0].accelerator_memory.unwrap().as_gib(), 160.0);
        assert_eq!(runpod[0].spot, None, "RunPod's spot equals on-demand: not a spot price");
        assert_eq!(dropped(&imported, "runpod", "QUANTUM-9000"), 1);
    }

    #[test]
    fn marketplace_zero_spot_and_malformed_rows() {
        let imported = import(&[snapshot("vast", "vast.csv")]);
        let vast = rows(&imported, "vast");
        assert_eq!(vast.len(), 1, "the row with a price of `not-a-price` is dropped");
        assert_eq!(vast[0].region.as_deref(), Some("DK"));
        assert_eq!(vast[0].spot, None);
        assert_eq!(vast[0].accelerator_memory.unwrap().as_gib(), 48.0);
        assert_eq!(dropped(&imported, "vast", "zero spot price"), 1);
        let malformed = &imported.report.providers["vast"].dropped_rows["malformed row"];
        assert!(malformed.examples[0].contains("line 3"), "{:?}", malformed.examples);
    }

    #[test]
    fn placeholder_prices_never_become_prices() {
        let imported = import(&[snapshot("mithril", "mithril.csv")]);
        let mithril = rows(&imported, "mithril");
        assert_eq!((mithril[0].on_demand, mithril[0].spot), (None, None));
        assert!(mithril[0].notes.as_deref().unwrap().contains("placeholder"));
    }

    #[test]
    fn a_wrong_accelerator_count_is_corrected_and_cpu_only_vms_are_skipped() {
        let imported = import(&[snapshot("azure", "azure.csv")]);
        let azure = rows(&imported, "azure");
        assert_eq!(azure.len(), 1);
        assert_eq!(azure[0].accelerator_count, 8);
        assert_eq!(azure[0].spot, None);
    }

    #[test]
    fn a_file_without_a_required_column_fails_with_its_name() {
        let files = [snapshot("aws", "missing-column.csv")];
        let options = ImportOptions {
            as_of: "2026-11-22".parse().unwrap(),
            curated: HashSet::new(),
        };
        let error = import_skypilot(&files, catalog().accelerators(), &options).unwrap_err();
        assert_eq!(
            error.to_string(),
            "fixture missing-column.csv: line 1: missing column `AcceleratorName`"
        );
    }

    #[test]
    fn curated_rows_supersede_imported_ones() {
        let options = ImportOptions {
            as_of: "2026-11-22".parse().unwrap(),
            curated: HashSet::from([("lambda".to_string(), "gpu_1x_a100".to_string(), "us-east-1".to_string())]),
        };
        let imported =
            import_skypilot(&[snapshot("lambda", "lambda.csv")], catalog().accelerators(), &options).unwrap();
        assert!(
            rows(&imported, "lambda")
                .iter()
                .all(|o| o.instance_type != "gpu_1x_a100")
        );
    }

    #[test]
    fn the_report_lists_every_reason() {
        let imported = import(&[snapshot("vast", "vast.csv"), snapshot("mithril", "mithril.csv")]);
        let markdown = imported.report.to_markdown();
        assert!(markdown.contains("| vast | 2 | 1 |"), "{markdown}");
        assert!(markdown.contains("placeholder price"), "{markdown}");
    }
}

/// Accelerators with tensor (matrix) cores whose datasheets publish no 16-bit figure a
/// source states or lets us derive; each is planned only once its figure is sourced.
const TENSOR_PEAK_GAPS: [&str; 0] = [];

#[test]
fn every_tensor_core_accelerator_has_a_16_bit_peak() {
    let catalog = Catalog::embedded().unwrap();
    for accelerator in catalog.accelerators().iter() {
        // Volta (7.0) and newer NVIDIA parts, and every AMD, Google and AWS matrix engine.
        let tensor_cores = accelerator.compute_capability_major().is_none_or(|major| major >= 7);
        if !tensor_cores || TENSOR_PEAK_GAPS.contains(&accelerator.id.as_str()) {
            continue;
        }
        let sixteen_bit = [Precision::Fp16, Precision::Bf16]
            .iter()
            .any(|p| accelerator.peak(*p).is_some());
        assert!(
            sixteen_bit,
            "{} has tensor cores but no 16-bit dense peak",
            accelerator.id
        );
    }
}

/// Decode and every memory-bound phase are timed from the memory bandwidth: an accelerator
/// without one would be estimated as if its memory were infinitely fast.
#[test]
fn every_accelerator_has_a_memory_bandwidth() {
    let catalog = Catalog::embedded().unwrap();
    for accelerator in catalog.accelerators().iter() {
        assert!(
            accelerator.memory_bandwidth.is_some(),
            "{} has no memory bandwidth",
            accelerator.id
        );
    }
}

#[test]
fn every_accelerator_runs_some_software_stack() {
    let catalog = Catalog::embedded().unwrap();
    for accelerator in catalog.accelerators().iter() {
        assert!(
            !accelerator.stacks.is_empty(),
            "{} has no software stack",
            accelerator.id
        );
    }
    let inferentia = catalog.accelerators().get("Inferentia2").unwrap();
    assert!(inferentia.stacks.iter().all(|s| !s.training));
}

/// Every NVIDIA GPU in the catalog has an NGC PyTorch release that runs on it (an export of an
/// older GPU falls back to it), and the floor the 25.01 release notes set holds in the data.
#[test]
fn every_nvidia_gpu_has_an_ngc_release_that_runs_on_it() {
    use gpuplan_catalog::compatibility::Version;
    let catalog = Catalog::embedded().unwrap();
    let facts = catalog.compatibility();
    for accelerator in catalog.accelerators().iter().filter(|a| a.vendor == "NVIDIA") {
        let Some(cc) = accelerator.compute_capability.as_deref() else {
            continue;
        };
        let cc: Version = cc.parse().unwrap();
        let newest = facts.newest_container_on("nvcr.io/nvidia/pytorch", &cc);
        assert!(newest.is_some(), "{} ({cc})", accelerator.id);
    }
    let volta: Version = "7.0".parse().unwrap();
    let newest = facts.newest_container_on("nvcr.io/nvidia/pytorch", &volta).unwrap();
    assert_eq!(newest.image, "nvcr.io/nvidia/pytorch:24.12-py3");
    let release_25_01 = facts.container("nvcr.io/nvidia/pytorch:25.01-py3").unwrap();
    assert!(!facts.container_runs_on(release_25_01, &volta));
}

/// An export needs an image for the stack its configuration runs on: every stack that trains
/// has a training image, every stack that serves with vLLM a vLLM image, each pinned, with the
/// vendor's device resource; NGC images are releases the compatibility data knows.
#[test]
fn every_stack_has_the_images_its_exports_need() {
    use gpuplan_model::{Engine, ImageRole, SoftwareStack};
    let catalog = Catalog::embedded().unwrap();
    for accelerator in catalog.accelerators().iter() {
        for support in &accelerator.stacks {
            let stack = support.stack;
            if support.training {
                let image = catalog.stack_image(stack, ImageRole::Training, None);
                assert!(image.is_some(), "no {stack} training image ({})", accelerator.id);
            }
            if support.inference && support.engines.contains(&Engine::Vllm) {
                let image = catalog.stack_image(stack, ImageRole::Serving, Some(Engine::Vllm));
                assert!(image.is_some(), "no {stack} vLLM image ({})", accelerator.id);
            }
        }
    }
    for stack in SoftwareStack::ALL {
        for role in [ImageRole::Training, ImageRole::Serving] {
            let engine = (role == ImageRole::Serving).then_some(Engine::Vllm);
            let Some(image) = catalog.stack_image(stack, role, engine) else {
                continue;
            };
            assert!(
                image.image.contains(':') && !image.image.ends_with(":latest"),
                "{}",
                image.image
            );
            let expected = match stack {
                SoftwareStack::Cuda => "nvidia.com/gpu",
                SoftwareStack::Rocm => "amd.com/gpu",
                SoftwareStack::Neuron => "aws.amazon.com/neuron",
                SoftwareStack::Xla => "google.com/tpu",
            };
            assert_eq!(image.device_resource, expected, "{}", image.image);
            if image.image.starts_with("nvcr.io/") {
                let known = catalog
                    .compatibility()
                    .ngc_container
                    .iter()
                    .any(|c| c.image == image.image);
                assert!(known, "{} is not in the compatibility data", image.image);
            }
        }
    }
}

#[test]
fn the_fabric_table_places_only_fabric_shapes_in_clusters_and_names_its_sources() {
    let catalog = Catalog::embedded().unwrap();
    for rule in catalog.fabrics() {
        let source = rule.fabric.source.as_ref().unwrap();
        assert!(source.url.starts_with("http"), "{:?}", rule.instance_types);
        // Every pattern describes something the catalog rents.
        for pattern in &rule.instance_types {
            assert!(
                catalog.offerings().iter().any(|o| FabricRule {
                    instance_types: vec![pattern.clone()],
                    ..rule.clone()
                }
                .matches(&o.provider, &o.instance_type)),
                "{} {pattern} matches no offering",
                rule.provider
            );
        }
    }
    let p5 = catalog
        .offerings()
        .iter()
        .find(|o| o.instance_type == "p5.48xlarge")
        .unwrap();
    let fabric = p5.node_fabric();
    assert!(fabric.cluster_placement && fabric.kind == FabricKind::Efa);
    let small = catalog
        .offerings()
        .iter()
        .find(|o| o.instance_type == "g6e.xlarge")
        .unwrap();
    assert!(!small.node_fabric().cluster_placement);
}

#[test]
fn the_operations_tables_cover_the_big_three_clouds() {
    let catalog = Catalog::embedded().unwrap();
    let ops = catalog.operations();
    for provider in ["aws", "gcp", "azure"] {
        let id = ProviderId::new(provider);
        assert!(ops.startup(&id).is_some(), "{provider} start-up");
        assert!(ops.interruption(&id).is_some(), "{provider} spot rate");
    }
    assert!(ops.image_gb.is_some() && ops.image_file_kb.is_some());
}

mod chinese_clouds_and_currencies {
    use super::*;

    fn regions_priced(provider: &str) -> std::collections::BTreeSet<String> {
        catalog()
            .offerings()
            .iter()
            .filter(|o| o.provider.as_str() == provider && o.accelerator.is_some() && o.on_demand.is_some())
            .filter_map(|o| o.region.clone())
            .collect()
    }

    #[test]
    fn tencent_and_alibaba_are_priced_in_several_regions() {
        assert!(regions_priced("tencent").len() >= 3, "{:?}", regions_priced("tencent"));
        assert!(regions_priced("alibaba").len() >= 5, "{:?}", regions_priced("alibaba"));
    }

    /// A price published in yuan keeps its yuan and is compared in dollars at the cited rate.
    #[test]
    fn a_cny_price_is_kept_and_converted_at_the_cited_rate() {
        let rate = catalog()
            .exchange_rates()
            .iter()
            .find(|r| r.currency == "CNY")
            .expect("a CNY rate");
        assert!((6.0..8.0).contains(&rate.per_usd), "{}", rate.per_usd);
        let priced = catalog()
            .offerings()
            .iter()
            .filter(|o| o.native.as_ref().is_some_and(|n| n.currency == "CNY"))
            .collect::<Vec<_>>();
        assert!(!priced.is_empty());
        for o in priced {
            let native = o.native.as_ref().unwrap();
            let usd = o.on_demand.expect("converted").0;
            assert!((usd * rate.per_usd - native.on_demand.unwrap()).abs() < 1e-9);
        }
    }

    #[test]
    fn five_clouds_have_cpu_shapes() {
        for provider in ["aws", "gcp", "azure", "alibaba", "tencent"] {
            let shapes = catalog()
                .offerings()
                .iter()
                .filter(|o| o.provider.as_str() == provider && o.accelerator.is_none() && o.on_demand.is_some())
                .count();
            assert!(shapes >= 8, "{provider}: {shapes} priced CPU shapes");
        }
    }

    /// Each hyperscaler's managed Kubernetes has a shared-file class in the tables, with what
    /// becomes of a claim's size.
    #[test]
    fn shared_file_classes_are_sourced_and_say_how_they_size_claims() {
        let operations = catalog().operations();
        let class = |p: &str| operations.shared_storage(&gpuplan_model::ProviderId::new(p)).cloned();
        let gcp = class("gcp").unwrap();
        assert_eq!(gcp.storage_class, "standard-rwx");
        assert!(gcp.built_in && gcp.dynamic);
        assert_eq!(gcp.claim_size, gpuplan_model::ClaimSize::RoundedUpTo { min_gib: 100.0 });
        assert_eq!(class("aws").unwrap().claim_size, gpuplan_model::ClaimSize::Ignored);
        assert!(!class("aws").unwrap().built_in && class("azure").unwrap().built_in);
        assert!(
            !class("nebius").unwrap().dynamic,
            "static volumes over a mounted filesystem"
        );
        assert!(class("lambda").is_none());
    }

    #[test]
    fn storage_and_egress_differ_per_provider() {
        let price = |p: &str| {
            catalog()
                .storage_pricing(&gpuplan_model::ProviderId::new(p))
                .unwrap_or_else(|| panic!("{p} has storage prices"))
                .clone()
        };
        let (aws, lambda, oci) = (price("aws"), price("lambda"), price("oci"));
        assert_ne!(aws.block_usd_per_gb_month, lambda.block_usd_per_gb_month);
        assert_ne!(aws.egress_tiers, oci.egress_tiers);
        // Lambda publishes free egress.
        assert!(lambda.egress_tiers.unwrap().iter().all(|(_, price)| *price == 0.0));
    }
}

mod refresh {
    use super::*;
    use gpuplan_catalog::refresh::{QuoteBilling, apply_quotes, azure};
    use gpuplan_model::Date;

    fn fixture_quotes() -> Vec<gpuplan_catalog::refresh::PriceQuote> {
        let folder = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/refresh/azure");
        let mut quotes = Vec::new();
        for page in ["page-1.json", "page-2.json"] {
            let text = std::fs::read_to_string(format!("{folder}/{page}")).unwrap();
            quotes.extend(azure::parse_page(page, &text).unwrap().quotes);
        }
        quotes
    }

    /// Recorded pages in, a catalog that loads out, with exactly the quoted prices changed,
    /// dated and sourced; quotes for shapes the catalog lacks are counted, not invented.
    #[test]
    fn azure_pages_refresh_the_catalog_and_round_trip() {
        let quotes = fixture_quotes();
        assert_eq!(quotes.len(), 4, "Windows and Low Priority meters are dropped");
        let today = Date::new(2026, 11, 23).unwrap();
        let refreshed = apply_quotes(&Catalog::embedded_files(), "azure", &quotes, today, azure::ENDPOINT).unwrap();
        assert_eq!(refreshed.unmatched, 1, "brazilsouth is not in the catalog");
        assert!(
            refreshed
                .changes
                .iter()
                .any(|c| c.instance_type == "Standard_NC4as_T4_v3" && c.billing == QuoteBilling::Spot)
        );
        let catalog = Catalog::from_files(&refreshed.files).unwrap();
        let t4 = catalog
            .offerings()
            .iter()
            .find(|o| o.instance_type == "Standard_NC4as_T4_v3" && o.region.as_deref() == Some("eastus"))
            .unwrap();
        assert_eq!(t4.on_demand.unwrap().0, 0.5);
        assert_eq!(t4.spot.unwrap().0, 0.06);
        assert_eq!(t4.as_of, today);
        assert_eq!(t4.source, azure::ENDPOINT);
        // Offerings no quote covered keep their prices and dates.
        let untouched = catalog
            .offerings()
            .iter()
            .find(|o| o.instance_type == "Standard_NC4as_T4_v3" && o.region.as_deref() == Some("westus2"))
            .unwrap();
        assert_ne!(untouched.as_of, today);
        // Refreshing again with the same quotes changes nothing.
        let again = apply_quotes(&refreshed.files, "azure", &quotes, today, azure::ENDPOINT).unwrap();
        assert!(again.changes.is_empty());
    }

    /// An EC2 offer file in, the on-demand price of every zone of the region changed, spot
    /// prices (which offer files lack) kept; capacity-reservation, Windows and SQL Server rows
    /// of the same instance type are not taken for its price.
    #[test]
    fn an_aws_offer_file_refreshes_on_demand_prices() {
        use gpuplan_catalog::refresh::aws;
        let file = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/refresh/aws/us-east-1.json");
        let types = ["p4d.24xlarge", "g5.xlarge", "g7.xlarge"].map(String::from).into();
        let quotes = aws::read_offer_file(file, std::fs::File::open(file).unwrap(), &types).unwrap();
        let prices: Vec<(&str, f64)> = quotes
            .iter()
            .map(|q| (q.instance_type.as_str(), q.usd_per_hour))
            .collect();
        assert_eq!(
            prices,
            [("g5.xlarge", 0.95), ("g7.xlarge", 1.5), ("p4d.24xlarge", 20.0)]
        );
        let today = Date::new(2026, 11, 23).unwrap();
        let before = Catalog::embedded().unwrap();
        let refreshed = apply_quotes(&Catalog::embedded_files(), "aws", &quotes, today, aws::REGION_INDEX_URL).unwrap();
        assert_eq!(refreshed.unmatched, 1, "g7.xlarge is not in the catalog");
        let catalog = Catalog::from_files(&refreshed.files).unwrap();
        let zones = |c: &Catalog| -> Vec<(f64, Option<f64>)> {
            c.offerings()
                .iter()
                .filter(|o| o.instance_type == "p4d.24xlarge" && o.region.as_deref() == Some("us-east-1"))
                .map(|o| (o.on_demand.unwrap().0, o.spot.map(|s| s.0)))
                .collect()
        };
        let (old, new) = (zones(&before), zones(&catalog));
        assert!(new.len() > 1 && new.len() == old.len());
        assert!(new.iter().all(|(on_demand, _)| *on_demand == 20.0));
        assert_eq!(
            old.iter().map(|z| z.1).collect::<Vec<_>>(),
            new.iter().map(|z| z.1).collect::<Vec<_>>()
        );
    }

    /// GCP bills a VM per vCPU, per GiB and per GPU. Put together from Google's published N1
    /// and A2 rates, the machine prices come out as the catalog has them; only the rates the
    /// fixture changed (T4 $0.35 → $0.33, A100 40GB $2.933908 → $2.75) move prices, by the
    /// change times the GPU count.
    #[test]
    fn gcp_prices_are_put_together_from_core_memory_and_gpu_rates() {
        use gpuplan_catalog::refresh::gcp;
        let folder = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/refresh/gcp");
        let mut rates = Vec::new();
        for page in ["page-1.json", "page-2.json"] {
            let text = std::fs::read_to_string(format!("{folder}/{page}")).unwrap();
            let parsed = gcp::parse_page(page, &text).unwrap();
            assert_eq!(parsed.next.is_some(), page == "page-1.json");
            rates.extend(parsed.rates);
        }
        assert_eq!(rates.len(), 9, "commitments, custom cores and disks are skipped");
        let catalog = Catalog::embedded().unwrap();
        let quotes = gcp::quotes(&rates, catalog.offerings());
        let quote = |instance_type: &str| {
            quotes
                .iter()
                .find(|q| {
                    q.instance_type == instance_type && q.region == "us-central1" && q.billing == QuoteBilling::OnDemand
                })
                .map(|q| q.usd_per_hour)
                .unwrap()
        };
        let listed = |instance_type: &str| {
            catalog
                .offerings()
                .iter()
                .find(|o| o.instance_type == instance_type && o.region.as_deref() == Some("us-central1"))
                .and_then(|o| o.on_demand)
                .unwrap()
                .0
        };
        for machine in ["n1-standard-8", "n1-highmem-32", "n1-standard-96"] {
            assert!((quote(machine) - listed(machine)).abs() < 1e-4, "{machine}");
        }
        let t4 = quote("n1-standard-32+T4x4") - listed("n1-standard-32+T4x4");
        assert!((t4 - 4.0 * (0.33 - 0.35)).abs() < 1e-4, "{t4}");
        let a100 = quote("a2-highgpu-1g") - listed("a2-highgpu-1g");
        assert!((a100 - (2.75 - 2.933908)).abs() < 1e-4, "{a100}");
        // No L4, H100 or G2/A3 rates in the fixture: those machines get no quote.
        assert!(
            !quotes
                .iter()
                .any(|q| q.instance_type.starts_with("g2-") || q.instance_type.starts_with("a3-"))
        );
        let today = Date::new(2026, 11, 23).unwrap();
        let refreshed = apply_quotes(&Catalog::embedded_files(), "gcp", &quotes, today, gcp::ENDPOINT).unwrap();
        assert!(
            refreshed
                .changes
                .iter()
                .all(|c| (c.after - c.before.unwrap_or(0.0)).abs() >= 1e-4)
        );
        Catalog::from_files(&refreshed.files).unwrap();
    }

    /// Lambda prices an instance type the same in every region: one price in, every region's
    /// offering of that type changed; types the catalog lacks are left out.
    #[test]
    fn lambda_prices_apply_to_every_region_of_a_type() {
        use gpuplan_catalog::refresh::lambda;
        let file = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/fixtures/refresh/lambda/instance-types.json"
        );
        let prices = lambda::parse(file, &std::fs::read_to_string(file).unwrap()).unwrap();
        assert_eq!(prices.len(), 4);
        let catalog = Catalog::embedded().unwrap();
        let quotes = lambda::quotes(&prices, catalog.offerings());
        let regions = |t: &str| {
            catalog
                .offerings()
                .iter()
                .filter(|o| o.provider.as_str() == "lambda" && o.instance_type == t)
                .count()
        };
        let quoted = |t: &str| quotes.iter().filter(|q| q.instance_type == t).count();
        assert!(regions("gpu_8x_h100_sxm5") > 1);
        assert_eq!(quoted("gpu_8x_h100_sxm5"), regions("gpu_8x_h100_sxm5"));
        assert_eq!(quoted("gpu_8x_b300_sxm6"), 0);
        let today = Date::new(2026, 11, 23).unwrap();
        let refreshed = apply_quotes(&Catalog::embedded_files(), "lambda", &quotes, today, lambda::ENDPOINT).unwrap();
        let after = Catalog::from_files(&refreshed.files).unwrap();
        assert!(
            after
                .offerings()
                .iter()
                .filter(|o| o.provider.as_str() == "lambda" && o.instance_type == "gpu_8x_h100_sxm5")
                .all(|o| o.on_demand.unwrap().0 == 23.92)
        );
    }

    /// A quote no instance can have (free, negative, not a number, $120 million an hour) never
    /// reaches the catalog: it is skipped and named, and the catalog stays what it was.
    #[test]
    fn a_quote_that_is_not_a_price_is_skipped_and_named() {
        let quote = |usd_per_hour: f64| gpuplan_catalog::refresh::PriceQuote {
            instance_type: "Standard_NC4as_T4_v3".into(),
            region: "eastus".into(),
            billing: QuoteBilling::OnDemand,
            usd_per_hour,
        };
        let today = Date::new(2026, 11, 23).unwrap();
        let broken = vec![quote(0.0), quote(-1.0), quote(f64::NAN), quote(1.2e8)];
        let refreshed = apply_quotes(&Catalog::embedded_files(), "azure", &broken, today, azure::ENDPOINT).unwrap();
        assert!(refreshed.changes.is_empty());
        assert_eq!(refreshed.skipped.len(), 4);
        assert!(
            refreshed
                .skipped
                .iter()
                .any(|s| s.why.contains("beyond any instance's price"))
        );
        assert_eq!(refreshed.files, Catalog::embedded_files());
    }
}

#[test]
fn every_billing_term_names_a_provider_with_offerings_and_most_providers_have_terms() {
    let terms = &catalog().operations().billing;
    for t in terms {
        let offered = offerings_of(t.provider.as_str());
        assert!(!offered.is_empty(), "{} has billing terms but no offerings", t.provider);
        if let Some(prefix) = &t.instances {
            assert!(
                offered.iter().any(|o| o.instance_type.starts_with(prefix.as_str())),
                "{} {prefix}",
                t.provider
            );
        }
    }
    // Every offering of a provider with terms is metered by a stated step.
    let metered = catalog()
        .offerings()
        .iter()
        .filter(|o| o.billing_granularity.is_some())
        .count();
    assert!(metered * 10 >= catalog().offerings().len() * 9, "{metered}");
}

#[test]
fn aws_spot_rates_follow_the_published_band_of_each_gpu_family() {
    let ops = catalog().operations();
    let aws = gpuplan_model::ProviderId::new("aws");
    let rate = |instance: &str| ops.interruption_of(&aws, instance).unwrap().per_hour;
    // H100 (10–20 % a month) is reclaimed more than A100 (5–10 %), and both more than L4 (<5 %).
    assert!(rate("p5.48xlarge") > rate("p4d.24xlarge"));
    assert!(rate("p4d.24xlarge") > rate("g6.xlarge"));
    // A family without a published band keeps the provider's default.
    assert_eq!(rate("g5.xlarge"), ops.interruption(&aws).unwrap().per_hour);
    // Every prefix names instances the catalog sells.
    for r in ops
        .interruptions
        .iter()
        .filter_map(|r| r.instances.as_ref().map(|p| (r, p)))
    {
        assert!(
            offerings_of(r.0.provider.as_str())
                .iter()
                .any(|o| o.instance_type.starts_with(r.1.as_str())),
            "{}",
            r.1
        );
    }
}

/// Every region the catalog prices, of every provider with published facts, has its country:
/// a country filter never drops a region for want of data.
#[test]
fn every_priced_region_of_a_provider_with_facts_has_its_country() {
    let catalog = Catalog::embedded().unwrap();
    let operations = catalog.operations();
    let mut missing = std::collections::BTreeSet::new();
    for offering in catalog.offerings() {
        let Some(facts) = operations.provider_facts(&offering.provider) else {
            continue;
        };
        // Rows the provider prices without a region (a few CPU shapes) have no country.
        let Some(region) = offering.region.clone() else {
            continue;
        };
        if facts.country(&region).is_none() {
            missing.insert(format!("{} {region}", offering.provider));
        }
    }
    assert!(missing.is_empty(), "{missing:?}");
}

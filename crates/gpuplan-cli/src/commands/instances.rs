use crate::args::{InstancesArgs, SortKey};
use crate::output;
use gpuplan::emit::Money;
use gpuplan::emit::wire::InstanceJson;
use gpuplan::emit::{OutputFormat, instance_table};
use gpuplan::{Catalog, Error, ExitStatus, InstancesOptions, find_instances};

/// Rows a terminal table shows unless `--limit` says otherwise.
const DEFAULT_TABLE_ROWS: usize = 40;

pub fn run(catalog: &Catalog, args: &InstancesArgs, format: OutputFormat, money: &Money) -> Result<ExitStatus, Error> {
    let request = InstancesOptions {
        gpu: args.gpu.clone(),
        providers: (!args.providers.is_empty()).then(|| args.providers.join(",")),
        regions: (!args.regions.is_empty()).then(|| args.regions.join(",")),
        family: (!args.family.is_empty()).then(|| args.family.join(",")),
        min_gpus: args.min_gpus,
        max_gpus: args.max_gpus,
        min_gpu_memory: args.min_gpu_memory,
        min_vcpus: args.min_vcpus,
        min_disk: args.min_disk,
        compute_capability: args.compute_capability.clone(),
        min_memory: args.min_memory,
        max_price: args.max_price,
        spot: args.spot,
        include_cpu: args.include_cpu,
        zones: args.zones,
        sort: Some(
            match args.sort {
                SortKey::Price => "price",
                SortKey::PricePerGpu => "price-per-gpu",
                SortKey::Gpus => "gpus",
                SortKey::Memory => "memory",
                SortKey::Provider => "provider",
            }
            .to_string(),
        ),
        offset: args.offset,
        // A table shows rows grouped by region, limited below; other formats one record per
        // offering, limited here.
        limit: match format {
            OutputFormat::Table => None,
            _ => args.limit.filter(|n| *n > 0),
        },
    }
    .request()?;
    let answer = find_instances(catalog, &request)?;
    for note in &answer.notes {
        output::eprintln_note(note);
    }
    let limit = match (args.limit, format) {
        (Some(limit), _) => limit,
        (None, OutputFormat::Table) => DEFAULT_TABLE_ROWS,
        (None, _) => 0,
    };
    let table = instance_table(&answer.offerings, limit, money);
    let shown = if limit == 0 {
        answer.offerings.len()
    } else {
        answer.offerings.len().min(limit)
    };
    let wire: Vec<InstanceJson> = answer.offerings[..shown].iter().map(InstanceJson::from).collect();
    output::listing(format, &table, &wire)?;
    Ok(ExitStatus::Success)
}

use crate::args::{InstancesArgs, SortKey};
use crate::output;
use gpuplan::emit::Money;
use gpuplan::emit::wire::InstanceJson;
use gpuplan::emit::{OutputFormat, instance_table};
use gpuplan::{Catalog, Error, ExitStatus, InstancesRequest, OfferingSort, find_instances};

/// Rows a terminal table shows unless `--limit` says otherwise.
const DEFAULT_TABLE_ROWS: usize = 40;

pub fn run(catalog: &Catalog, args: &InstancesArgs, format: OutputFormat, money: &Money) -> Result<ExitStatus, Error> {
    let request = InstancesRequest {
        gpu: args.gpu.clone(),
        providers: args.provider.clone(),
        regions: args.region.clone(),
        min_gpus: args.min_gpus,
        max_gpus: args.max_gpus,
        min_gpu_memory_gib: args.min_gpu_memory,
        max_price: args.max_price,
        spot_only: args.spot,
        include_cpu_only: args.include_cpu,
        per_zone: args.zones,
        sort: match args.sort {
            SortKey::Price => OfferingSort::Price,
            SortKey::PricePerGpu => OfferingSort::PricePerGpu,
            SortKey::Gpus => OfferingSort::Gpus,
            SortKey::Memory => OfferingSort::Memory,
            SortKey::Provider => OfferingSort::Provider,
        },
    };
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

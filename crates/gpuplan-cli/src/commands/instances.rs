use crate::args::{InstancesArgs, SortKey};
use crate::output;
use gpuplan::emit::wire::InstanceJson;
use gpuplan::emit::{OutputFormat, instance_table};
use gpuplan::{Catalog, Error, ExitStatus, InstancesRequest, OfferingSort, find_instances};

/// Rows a terminal table shows unless `--limit` says otherwise.
const DEFAULT_TABLE_ROWS: usize = 40;

pub fn run(catalog: &Catalog, args: &InstancesArgs, format: OutputFormat) -> Result<ExitStatus, Error> {
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
    let total = answer.offerings.len();
    let limit = match args.limit {
        Some(0) => total,
        Some(limit) => limit,
        None if format == OutputFormat::Table => DEFAULT_TABLE_ROWS,
        None => total,
    };
    let shown = &answer.offerings[..total.min(limit)];
    let mut table = instance_table(shown.iter().copied());
    if total == 0 {
        table.footer.push("No offering matches these filters.".to_string());
    } else if shown.len() < total {
        table.footer.push(format!("{} of {total} offerings shown; --limit 0 shows all.", shown.len()));
    } else {
        table.footer.push(format!("{total} offerings. Prices in USD per hour."));
    }
    let wire: Vec<InstanceJson> = shown.iter().map(|o| InstanceJson::from(*o)).collect();
    output::listing(format, &table, &wire);
    Ok(ExitStatus::Success)
}

use crate::Table;
use gpuplan_model::{Offering, UsdPerHour};

/// The offering listing of `gpuplan instances`.
pub fn instance_table<'a>(offerings: impl IntoIterator<Item = &'a Offering>) -> Table {
    let mut table = Table::new([
        "provider", "instance type", "region", "GPUs", "GPU memory", "vCPUs", "RAM", "GPU link", "on-demand", "spot", "$/GPU-h",
    ])
    .right_aligned(&["GPU memory", "vCPUs", "RAM", "on-demand", "spot", "$/GPU-h"]);
    let price = |p: Option<UsdPerHour>| p.map_or("-".to_string(), |p| format!("{:.3}", p.0));
    for o in offerings {
        let gpus = match &o.accelerator {
            Some(id) => format!("{}× {id}", o.accelerator_count),
            None => "CPU only".to_string(),
        };
        let region = match (&o.region, &o.zone) {
            (Some(region), Some(zone)) => format!("{region} ({zone})"),
            (Some(region), None) => region.clone(),
            (None, _) => "-".to_string(),
        };
        table.push_row([
            o.provider.to_string(),
            o.instance_type.clone(),
            region,
            gpus,
            o.accelerator_memory.map_or("-".to_string(), |m| m.to_string()),
            format!("{}", o.vcpus),
            o.memory.to_string(),
            o.gpu_interconnect.map_or("-".to_string(), |i| i.to_string()),
            price(o.on_demand),
            price(o.spot),
            price(o.on_demand.filter(|_| o.accelerator_count > 0).map(|p| p.per(o.accelerator_count))),
        ]);
    }
    table
}

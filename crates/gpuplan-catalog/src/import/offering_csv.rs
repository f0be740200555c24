use crate::raw::OFFERING_COLUMNS;
use gpuplan_model::Offering;

/// Writes offerings in the `data/offerings/*.csv` schema, sorted by instance type, region
/// and zone so that a refresh produces a reviewable diff.
pub fn write_offerings_csv(offerings: &[Offering]) -> String {
    let mut sorted: Vec<&Offering> = offerings.iter().collect();
    sorted.sort_by(|a, b| (&a.instance_type, &a.region, &a.zone).cmp(&(&b.instance_type, &b.region, &b.zone)));
    let mut writer = csv::WriterBuilder::new()
        .terminator(csv::Terminator::Any(b'\n'))
        .from_writer(Vec::new());
    let number = |value: f64| {
        let text = format!("{value:.6}");
        text.trim_end_matches('0').trim_end_matches('.').to_string()
    };
    // Writing to a Vec cannot fail, and every record has the header's width.
    let _ = writer.write_record(OFFERING_COLUMNS);
    for o in sorted {
        let record = [
            o.provider.to_string(),
            o.instance_type.clone(),
            o.region.clone().unwrap_or_default(),
            o.zone.clone().unwrap_or_default(),
            o.accelerator.as_ref().map(|a| a.to_string()).unwrap_or_default(),
            o.accelerator_count.to_string(),
            o.accelerator_memory.map(|m| number(m.as_gib())).unwrap_or_default(),
            number(o.vcpus),
            number(o.memory.as_gib()),
            o.local_disk.map(|d| number(d.as_gb())).unwrap_or_default(),
            o.network.map(|n| number(n.0)).unwrap_or_default(),
            o.gpu_interconnect.map(|i| i.to_string()).unwrap_or_default(),
            o.node_network.map(|n| n.to_string()).unwrap_or_default(),
            o.on_demand.map(|p| number(p.0)).unwrap_or_default(),
            o.spot.map(|p| number(p.0)).unwrap_or_default(),
            o.billing_granularity.map(|b| b.to_string()).unwrap_or_default(),
            o.source.clone(),
            o.as_of.to_string(),
            o.notes.clone().unwrap_or_default(),
        ];
        let _ = writer.write_record(&record);
    }
    String::from_utf8(writer.into_inner().unwrap_or_default()).unwrap_or_default()
}

use crate::{Money, Table};
use gpuplan_model::{Offering, UsdPerHour};
use gpuplan_plan::Listing;

/// Regions named in a folded row before the rest are counted.
const REGIONS_NAMED: usize = 2;

/// The offering listing of `gpuplan instances`, at most `limit` rows (0: all).
///
/// Neighbouring offerings that differ only by region (RunPod and Lambda list every type in
/// every region at one price) are shown as one row naming their regions. A spot price derived
/// from the provider's published share of pay-as-you-go is marked, and the footer says how.
pub fn instance_table(offerings: &[Listing], limit: usize, money: &Money) -> Table {
    let per_gpu_hour = money.per("GPU-h");
    let mut table = Table::new([
        "provider",
        "instance type",
        "region",
        "GPUs",
        "GPU memory",
        "vCPUs",
        "RAM",
        "GPU link",
        "on-demand",
        "spot",
        per_gpu_hour.as_str(),
    ])
    .right_aligned(&["GPU memory", "vCPUs", "RAM", "on-demand", "spot", per_gpu_hour.as_str()])
    .optional(&["GPU link", "RAM", "vCPUs", "GPU memory", per_gpu_hour.as_str()]);
    let groups = group_by_region(offerings);
    let shown = if limit == 0 {
        groups.len()
    } else {
        groups.len().min(limit)
    };
    let price = |p: Option<UsdPerHour>| p.map_or("-".to_string(), |p| format!("{:.3}", money.amount(p.0)));
    // Your price, with the list price it replaced in brackets.
    let yours = |p: Option<UsdPerHour>, list: Option<UsdPerHour>| match list {
        Some(list) => format!("{} (list {:.3})", price(p), money.amount(list.0)),
        None => price(p),
    };
    let mut derivations: Vec<String> = Vec::new();
    for group in &groups[..shown] {
        let listing = group[0];
        let o = &listing.offering;
        let spot = match listing.spot_derivation() {
            Some(how) => {
                let note = format!("* {}: {how}.", o.provider.display_name());
                if !derivations.contains(&note) {
                    derivations.push(note);
                }
                format!("{}*", price(listing.spot_usd_per_hour().map(UsdPerHour)))
            }
            None => yours(o.spot, o.list_spot),
        };
        let gpus = match &o.accelerator {
            Some(id) => format!("{}× {id}", o.accelerator_count),
            None => "CPU only".to_string(),
        };
        table.push_row([
            o.provider.to_string(),
            o.instance_type.clone(),
            regions(group),
            gpus,
            o.accelerator_memory.map_or("-".to_string(), |m| m.to_string()),
            format!("{}", o.vcpus),
            o.memory.to_string(),
            o.gpu_interconnect.map_or("-".to_string(), |i| i.to_string()),
            yours(o.on_demand, o.list_on_demand),
            spot,
            price(
                o.on_demand
                    .filter(|_| o.accelerator_count > 0)
                    .map(|p| p.per(o.accelerator_count)),
            ),
        ]);
    }
    table.footer.push(match (offerings.len(), shown < groups.len()) {
        (0, _) => "No offering matches these filters.".to_string(),
        (total, true) => format!(
            "{shown} of {} rows shown ({total} offerings); --limit 0 shows all.",
            groups.len()
        ),
        (1, false) => format!("1 offering. Prices in {} per hour.", money.code()),
        (total, false) => format!("{total} offerings. Prices in {} per hour.", money.code()),
    });
    table.footer.extend(money.footnote());
    table.footer.extend(derivations);
    if offerings
        .iter()
        .any(|l| l.offering.list_on_demand.is_some() || l.offering.list_spot.is_some())
    {
        table
            .footer
            .push("Your prices (--prices) where given; the list price they replace in brackets.".to_string());
    }
    table
}

fn same_but_region(a: &Listing, b: &Listing) -> bool {
    let (x, y) = (&a.offering, &b.offering);
    x.provider == y.provider
        && x.instance_type == y.instance_type
        && x.on_demand == y.on_demand
        && a.spot == b.spot
        && x.accelerator == y.accelerator
        && x.accelerator_count == y.accelerator_count
}

fn group_by_region(offerings: &[Listing]) -> Vec<Vec<&Listing>> {
    let mut groups: Vec<Vec<&Listing>> = Vec::new();
    for offering in offerings {
        match groups.last_mut() {
            Some(group) if same_but_region(group[0], offering) => group.push(offering),
            _ => groups.push(vec![offering]),
        }
    }
    groups
}

fn regions(group: &[&Listing]) -> String {
    let name = |o: &Offering| match (&o.region, &o.zone) {
        (Some(region), Some(zone)) => format!("{region} ({zone})"),
        (Some(region), None) => region.clone(),
        (None, _) => "-".to_string(),
    };
    let mut names: Vec<String> = group.iter().map(|l| name(&l.offering)).collect();
    names.dedup();
    if names.len() > REGIONS_NAMED {
        let rest = names.len() - REGIONS_NAMED;
        names.truncate(REGIONS_NAMED);
        format!("{} +{rest}", names.join(", "))
    } else {
        names.join(", ")
    }
}

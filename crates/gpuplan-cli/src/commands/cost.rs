use crate::args::CostArgs;
use crate::output;
use gpuplan::emit::Money;
use gpuplan::emit::{OutputFormat, Table};
use gpuplan::{Catalog, CostOptions, Error, ExitStatus, cost_job};
use std::fmt::Write as _;

pub fn run(catalog: &Catalog, args: &CostArgs, format: OutputFormat, money: &Money) -> Result<ExitStatus, Error> {
    let options = CostOptions {
        instance: args.instance.clone(),
        gpu: args.gpu.clone(),
        gpus: args.gpus,
        providers: args.providers.clone(),
        regions: args.regions.clone(),
        price: args.price,
        spot_price: args.spot_price,
        hours: args.hours,
        billing: args.billing.clone(),
        checkpoint_minutes: args.checkpoint_minutes,
        checkpoint_write: args.checkpoint_write,
        restart: args.restart,
        interruption_rate: args.interruption_rate,
        monte_carlo: args.monte_carlo,
        seed: args.seed,
        storage_gb: args.storage_gb,
        storage_months: args.storage_months,
        egress_gb: args.egress_gb,
        tiers: args.tiers.clone(),
        savings_plan: args.savings_plan,
        savings_discount: args.savings_discount,
        minimum_hours: args.minimum_hours,
        utilisation: args.utilisation,
    };
    let query = options.query()?;
    let answer = cost_job(catalog, &query)?;
    let per_hour = money.per("h");
    let mut table = Table::new([
        "billing",
        per_hour.as_str(),
        "billed hours",
        "compute",
        "storage",
        "egress",
        "total",
    ])
    .right_aligned(&[
        per_hour.as_str(),
        "billed hours",
        "compute",
        "storage",
        "egress",
        "total",
    ]);
    for line in &answer.lines {
        let b = &line.breakdown;
        table.push_row([
            line.billing.to_string(),
            format!("{:.4}", money.amount(line.usd_per_hour)),
            format!("{:.2}", b.billed_hours),
            format!("{:.2}", money.amount(b.compute_usd)),
            format!("{:.2}", money.amount(b.storage_usd)),
            format!("{:.2}", money.amount(b.egress_usd)),
            format!("{:.2}", money.amount(b.total_usd)),
        ]);
    }
    table.footer.extend(money.footnote());
    match format {
        OutputFormat::Json => output::json(&answer)?,
        OutputFormat::Table => {
            let mut text = format!("{} for {} h\n", answer.subject, answer.hours);
            text.push_str(&crate::output::terminal().export_table(&table));
            for line in &answer.lines {
                if let Some(derived) = &line.derived_from {
                    let _ = writeln!(text, "{}: {derived}", line.billing);
                }
                if let Some(spot) = &line.spot {
                    let _ = writeln!(
                        text,
                        "spot: expected {:.1} h wall ({:.1} interruptions), checkpoint every {:.0} min{}{}",
                        spot.expected_wall_hours,
                        spot.expected_interruptions,
                        spot.checkpoint_interval_hours * 60.0,
                        optimum(spot),
                        spot.break_even_interruption_rate.map_or(String::new(), |r| format!(
                            "; cheaper than on-demand below {r:.2} interruptions/h"
                        )),
                    );
                }
                if let Some(sim) = &line.simulation {
                    let _ = writeln!(
                        text,
                        "spot, {} simulated runs (seed {}): P50 {:.1} h / {}, P90 {:.1} h / {}",
                        sim.runs,
                        sim.seed,
                        sim.p50_wall_hours,
                        money.format(sim.p50_cost_usd, 2),
                        sim.p90_wall_hours,
                        money.format(sim.p90_cost_usd, 2)
                    );
                }
                for note in &line.notes {
                    let _ = writeln!(text, "{}: {note}", line.billing);
                }
            }
            for missing in &answer.unpriced {
                let _ = writeln!(text, "{missing}");
            }
            let _ = writeln!(text, "assumptions: {}", answer.assumptions.join("; "));
            if let Some(note) = money.footnote() {
                let _ = writeln!(text, "{note}");
            }
            output::report(&text);
        }
        _ => output::listing(format, &table, &answer)?,
    }
    Ok(ExitStatus::Success)
}

/// ` (optimum N min)` when checkpointing has a cost to weigh against lost work.
fn optimum(spot: &gpuplan::estimator::spot::SpotEstimate) -> String {
    if spot.optimal_checkpoint_interval_hours < spot.expected_wall_hours && spot.optimal_checkpoint_interval_hours > 0.0
    {
        format!(" (optimum {:.0} min)", spot.optimal_checkpoint_interval_hours * 60.0)
    } else {
        String::new()
    }
}

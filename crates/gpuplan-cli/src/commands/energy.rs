use crate::args::EnergyArgs;
use crate::output;
use gpuplan::emit::Money;
use gpuplan::emit::OutputFormat;
use gpuplan::{Catalog, EnergyOptions, Error, ExitStatus, energy_of};
use std::fmt::Write as _;

pub fn run(catalog: &Catalog, args: &EnergyArgs, format: OutputFormat, money: &Money) -> Result<ExitStatus, Error> {
    let options = EnergyOptions {
        gpu: args.gpu.clone(),
        gpus: args.gpus,
        hours: args.hours,
        pue: args.pue,
        host_overhead: args.host_overhead,
        utilisation: args.utilisation,
        price_kwh: args.price_kwh,
        purchase_price: args.purchase_price,
        depreciation_years: args.depreciation_years,
        rent_price: args.rent_price,
    };
    let answer = energy_of(catalog, &options.query())?;
    if format == OutputFormat::Json {
        output::json(&answer)?;
        return Ok(ExitStatus::Success);
    }
    let mut text = format!(
        "{} × {} for {} h at {:.0} % utilisation, PUE {}\n",
        answer.gpus,
        answer.gpu,
        answer.hours,
        answer.utilization * 100.0,
        answer.pue
    );
    let _ = writeln!(
        text,
        "  energy           {:.1} kWh (average {:.2} kW)",
        answer.energy.kwh, answer.energy.average_kw
    );
    if let Some(cost) = answer.energy.cost_usd {
        let _ = writeln!(text, "  electricity      {}", money.format(cost, 2));
    }
    if let Some(r) = &answer.rent_or_buy {
        let _ = writeln!(
            text,
            "  owning           {}/h of use at full-year use, against {}/h rented",
            money.format(r.owned_usd_per_hour, 2),
            money.format(r.rented_usd_per_hour, 2)
        );
        match r.break_even_hours_per_year {
            Some(hours) => {
                let _ = writeln!(
                    text,
                    "  buying pays off  above {hours:.0} h of use a year ({:.0} %)",
                    hours / 87.6
                );
            }
            None => {
                let _ = writeln!(text, "  buying never pays off at this rental price");
            }
        }
    }
    let _ = writeln!(text, "assumptions: {}", answer.assumptions.join("; "));
    output::report(&text);
    Ok(ExitStatus::Success)
}

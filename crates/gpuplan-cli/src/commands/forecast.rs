use crate::args::{ForecastArgs, PeriodArg, UnitArg};
use crate::output;
use gpuplan::ForecastPeriod as Period;
use gpuplan::emit::Money;
use gpuplan::emit::{OutputFormat, Table};
use gpuplan::{Catalog, Error, ExitStatus, ForecastOptions, UsageHistory, UsageUnit, forecast_chart, forecast_usage};
use std::fmt::Write as _;

pub fn run(catalog: &Catalog, args: &ForecastArgs, format: OutputFormat, money: &Money) -> Result<ExitStatus, Error> {
    let options = ForecastOptions {
        history: UsageHistory::Text(read_history(&args.history)?),
        horizon: args.horizon,
        value_column: args.value_column.clone(),
        gpu: args.gpu.clone(),
        unit: match args.unit {
            UnitArg::GpuHours => UsageUnit::GpuHours,
            UnitArg::Gpus => UsageUnit::Gpus,
        },
        period: args.period.map(|p| match p {
            PeriodArg::Hour => Period::Hour,
            PeriodArg::Day => Period::Day,
            PeriodArg::Week => Period::Week,
            PeriodArg::Month => Period::Month,
        }),
        level: args.level,
        on_demand_price: args.on_demand_price,
        reserved_price: args.reserved_price,
        provider: args.provider.clone(),
        term: args.term.clone(),
    };
    let query = options.query()?;
    let answer = forecast_usage(catalog, &query)?;
    if let Some(path) = &args.plot {
        let svg = forecast_chart(&answer, &format!("{} — {}", args.history.display(), answer.model));
        std::fs::write(path, svg).map_err(|e| Error::invalid(format!("cannot write {}: {e}", path.display()), None))?;
    }
    let mut table = Table::new(["period", "mean", "lower", "upper"]).right_aligned(&["mean", "lower", "upper"]);
    for point in &answer.forecast {
        table.push_row([
            point.timestamp.to_string(),
            format!("{:.1}", point.mean),
            format!("{:.1}", point.lower),
            format!("{:.1}", point.upper),
        ]);
    }
    match format {
        OutputFormat::Json => output::json(&answer)?,
        OutputFormat::Table => {
            let b = &answer.backtest;
            let mut text = format!(
                "model: {} ({} periods held out: MAPE {:.1} %, MASE {:.2}; seasonal naive MAPE {:.1} %)\n",
                answer.model,
                b.holdout,
                b.mape * 100.0,
                b.mase,
                b.seasonal_naive_mape * 100.0
            );
            text.push_str(&crate::output::terminal().export_table(&table));
            if let Some(c) = &answer.commitment {
                let _ = writeln!(
                    text,
                    "commitment: reserve {} GPUs — expected {} against {} all on-demand (saves {}); {} at low demand, {} at high demand; {:.0} % of reserved hours used",
                    c.reserved_gpus,
                    money.format(c.expected_cost_usd, 0),
                    money.format(c.on_demand_only_cost_usd, 0),
                    money.format(c.expected_savings_usd, 0),
                    money.format(c.cost_at_low_demand_usd, 0),
                    money.format(c.cost_at_high_demand_usd, 0),
                    c.expected_utilization * 100.0
                );
                for why in &c.why {
                    let _ = writeln!(text, "  {why}");
                }
            }
            if let Some(path) = &args.plot {
                let _ = writeln!(text, "chart written to {}", path.display());
            }
            let _ = writeln!(text, "assumptions: {}", answer.assumptions.join("; "));
            output::report(&text);
        }
        _ => output::listing(format, &table, &answer)?,
    }
    Ok(ExitStatus::Success)
}

fn read_history(path: &std::path::Path) -> Result<String, Error> {
    crate::input_file::read(
        "--history",
        path,
        crate::input_file::MAX_HISTORY_BYTES,
        "give a CSV or JSON file of timestamps and values",
    )
}

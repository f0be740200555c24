//! Energy of running accelerators, and renting against buying.
//!
//! kWh = TDP × utilisation × host overhead × PUE × hours × GPUs / 1000. TDP is the board's
//! rated power (the catalog's `tdp_watts`); utilisation scales it linearly, a first-order model
//! (real boards idle at 10–20 % of TDP); the host overhead (≥ 1) adds the rest of the server at
//! the wall (CPUs, memory, NVSwitches, NICs, fans, power-supply losses) in proportion;
//! PUE (power usage effectiveness, ≥ 1) adds the data centre's cooling and distribution (The
//! Green Grid, "PUE: a comprehensive examination of the metric", 2012).

/// The whole server's draw at the wall over its GPUs' TDP: NVIDIA DGX H100's maximum system
/// input is 10.2 kW for 8 × 700 W GPUs (1.82; DGX H100 user guide, power specifications: six
/// 3.3 kW supplies, "maximum input 10.2 kW"); DGX A100's 6.5 kW for 8 × 400 W is 2.0. Applied
/// to the GPUs' average draw it gives 7.1 kW for a DGX H100 at 70 %, inside the 6.5–8.5 kW
/// reported as typical.
pub const DEFAULT_HOST_OVERHEAD: f64 = 1.8;

use serde::Serialize;

/// What an energy question needs.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct EnergyInput {
    pub tdp_watts: f64,
    pub gpus: u32,
    pub hours: f64,
    /// 0..=1, share of TDP drawn on average.
    pub utilization: f64,
    /// ≥ 1.
    pub pue: f64,
    /// The server's wall power over its GPUs', ≥ 1 ([`DEFAULT_HOST_OVERHEAD`]).
    pub host_overhead: f64,
    /// USD per kWh, when a cost is wanted.
    pub price_per_kwh: Option<f64>,
}

/// Energy and its cost.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, utoipa::ToSchema)]
pub struct EnergyEstimate {
    pub kwh: f64,
    pub cost_usd: Option<f64>,
    /// Average power drawn from the grid, kW.
    pub average_kw: f64,
}

/// Invalid energy input.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum EnergyError {
    #[error("PUE must be at least 1 (it is total facility power over IT power); got {0}")]
    Pue(String),
    #[error("the host overhead must be at least 1 (it is the server's power over its GPUs'); got {0}")]
    HostOverhead(String),
    #[error("utilization must be between 0 and 1; got {0}")]
    Utilization(String),
    #[error("{0} must be positive")]
    NotPositive(&'static str),
}

pub fn energy(input: &EnergyInput) -> Result<EnergyEstimate, EnergyError> {
    if !(input.pue >= 1.0 && input.pue.is_finite()) {
        return Err(EnergyError::Pue(input.pue.to_string()));
    }
    if !(input.host_overhead >= 1.0 && input.host_overhead.is_finite()) {
        return Err(EnergyError::HostOverhead(input.host_overhead.to_string()));
    }
    if !(0.0..=1.0).contains(&input.utilization) {
        return Err(EnergyError::Utilization(input.utilization.to_string()));
    }
    for (what, value) in [
        ("hours", input.hours),
        ("TDP", input.tdp_watts),
        ("GPUs", f64::from(input.gpus)),
    ] {
        if !(value > 0.0 && value.is_finite()) {
            return Err(EnergyError::NotPositive(what));
        }
    }
    if input.price_per_kwh.is_some_and(|p| !(p >= 0.0 && p.is_finite())) {
        return Err(EnergyError::NotPositive("price per kWh"));
    }
    let average_kw =
        input.tdp_watts * input.utilization * input.host_overhead * input.pue * f64::from(input.gpus) / 1000.0;
    let kwh = average_kw * input.hours;
    Ok(EnergyEstimate {
        kwh,
        cost_usd: input.price_per_kwh.map(|price| kwh * price),
        average_kw,
    })
}

/// Renting against buying one machine.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, utoipa::ToSchema)]
pub struct RentOrBuy {
    /// Owning cost per hour of use: purchase spread over the depreciation period at the given
    /// utilisation, plus energy.
    pub owned_usd_per_hour: f64,
    pub rented_usd_per_hour: f64,
    /// Hours of use per year above which buying is cheaper; `None` when it never is.
    pub break_even_hours_per_year: Option<f64>,
}

/// Compares owning (purchase over `years`, plus energy per hour of use) with renting.
pub fn rent_or_buy(
    purchase_usd: f64,
    years: f64,
    energy_usd_per_hour: f64,
    rented_usd_per_hour: f64,
) -> Option<RentOrBuy> {
    if !(purchase_usd > 0.0 && years > 0.0 && rented_usd_per_hour > 0.0) {
        return None;
    }
    let yearly_capital = purchase_usd / years;
    let margin = rented_usd_per_hour - energy_usd_per_hour;
    let break_even = (margin > 0.0).then(|| yearly_capital / margin).filter(|h| *h <= 8760.0);
    Some(RentOrBuy {
        owned_usd_per_hour: yearly_capital / 8760.0 + energy_usd_per_hour,
        rented_usd_per_hour,
        break_even_hours_per_year: break_even,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn input(gpus: u32, pue: f64) -> EnergyInput {
        EnergyInput {
            tdp_watts: 700.0,
            gpus,
            hours: 8760.0,
            utilization: 1.0,
            pue,
            host_overhead: 1.0,
            price_per_kwh: Some(0.12),
        }
    }

    #[test]
    fn eight_h100_at_pue_1_5_for_a_year() {
        let e = energy(&input(8, 1.5)).unwrap();
        assert!((e.kwh - 73_584.0).abs() < 1e-6, "{}", e.kwh);
        assert!((e.cost_usd.unwrap() - 8_830.08).abs() < 1e-6);
    }

    #[test]
    fn one_h100_at_full_load() {
        assert!((energy(&input(1, 1.5)).unwrap().kwh - 9_198.0).abs() < 1e-9);
    }

    #[test]
    fn bad_input_is_refused() {
        assert!(matches!(energy(&input(1, 0.9)), Err(EnergyError::Pue(_))));
        let mut bad = input(1, 1.2);
        bad.hours = -1.0;
        assert!(matches!(energy(&bad), Err(EnergyError::NotPositive("hours"))));
        bad.hours = 1.0;
        bad.utilization = 1.5;
        assert!(matches!(energy(&bad), Err(EnergyError::Utilization(_))));
    }

    #[test]
    fn buying_pays_off_above_the_break_even() {
        // $250,000 over 4 years = $62,500 a year; renting at $20/h less $1/h of energy.
        let r = rent_or_buy(250_000.0, 4.0, 1.0, 20.0).unwrap();
        assert!((r.break_even_hours_per_year.unwrap() - 62_500.0 / 19.0).abs() < 1e-9);
        assert!(
            rent_or_buy(250_000.0, 1.0, 1.0, 2.0)
                .unwrap()
                .break_even_hours_per_year
                .is_none()
        );
    }
}

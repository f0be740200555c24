//! Money as people read it: amounts are computed in US dollars and shown in the currency the
//! user asked for (`--currency`), converted at the catalog's cited rate. JSON stays in USD.

/// A display currency and its rate against the dollar.
#[derive(Debug, Clone, PartialEq)]
pub struct Money {
    code: String,
    per_usd: f64,
}

impl Default for Money {
    fn default() -> Self {
        Money::usd()
    }
}

impl Money {
    pub fn usd() -> Money {
        Money {
            code: "USD".to_string(),
            per_usd: 1.0,
        }
    }

    /// `code` at `per_usd` units per dollar.
    pub fn new(code: &str, per_usd: f64) -> Money {
        Money {
            code: code.to_string(),
            per_usd,
        }
    }

    pub fn code(&self) -> &str {
        &self.code
    }

    /// The symbol written before an amount.
    pub fn symbol(&self) -> &str {
        match self.code.as_str() {
            "USD" => "$",
            "CNY" => "¥",
            "EUR" => "€",
            _ => "",
        }
    }

    /// `usd` in this currency.
    pub fn amount(&self, usd: f64) -> f64 {
        usd * self.per_usd
    }

    /// `usd` written in this currency with `decimals` decimals: `$12.34`, `¥89.7`.
    pub fn format(&self, usd: f64, decimals: usize) -> String {
        let amount = self.amount(usd);
        match self.symbol() {
            "" => format!("{amount:.decimals$} {}", self.code),
            symbol => format!("{symbol}{amount:.decimals$}"),
        }
    }

    /// An amount with few decimals when it is large: `$1234`, `$12.34`.
    pub fn brief(&self, usd: f64) -> String {
        if self.amount(usd).abs() >= 100.0 {
            self.format(usd, 0)
        } else {
            self.format(usd, 2)
        }
    }

    /// A column heading for an amount per `unit`: `$/h`, `¥/GPU-h`.
    pub fn per(&self, unit: &str) -> String {
        match self.symbol() {
            "" => format!("{}/{unit}", self.code),
            symbol => format!("{symbol}/{unit}"),
        }
    }

    /// A footer saying which currency amounts are in.
    pub fn footnote(&self) -> Option<String> {
        (self.code != "USD").then(|| format!("Amounts in {} at {} per USD.", self.code, self.per_usd))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn converts_and_labels() {
        let yuan = Money::new("CNY", 7.0);
        assert_eq!(yuan.format(2.0, 2), "¥14.00");
        assert_eq!(yuan.per("h"), "¥/h");
        assert_eq!(Money::usd().brief(1234.4), "$1234");
        assert_eq!(Money::new("JPY", 150.0).format(1.0, 0), "150 JPY");
    }
}

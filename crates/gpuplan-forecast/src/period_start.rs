//! When one period of a series begins: a calendar date, with the hour for hourly series.

use gpuplan_model::Date;
use std::fmt;

/// The start of one period: a date, or a date and hour (hourly series), in the clock the
/// history was written in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct PeriodStart {
    date: Date,
    hour: Option<u8>,
}

impl PeriodStart {
    /// The start of an hour; `None` when `hour` is not 0–23.
    pub fn hour_of(date: Date, hour: u8) -> Option<Self> {
        (hour < 24).then_some(PeriodStart { date, hour: Some(hour) })
    }

    pub fn date(self) -> Date {
        self.date
    }

    /// The hour of an hourly period.
    pub fn hour(self) -> Option<u8> {
        self.hour
    }
}

impl From<Date> for PeriodStart {
    fn from(date: Date) -> Self {
        PeriodStart { date, hour: None }
    }
}

impl fmt::Display for PeriodStart {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.hour {
            None => write!(f, "{}", self.date),
            Some(hour) => write!(f, "{}T{hour:02}:00", self.date),
        }
    }
}

impl serde::Serialize for PeriodStart {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn days_print_as_dates_and_hours_with_their_hour() {
        let date: Date = "2024-03-01".parse().unwrap();
        assert_eq!(PeriodStart::from(date).to_string(), "2024-03-01");
        assert_eq!(PeriodStart::hour_of(date, 7).unwrap().to_string(), "2024-03-01T07:00");
        assert_eq!(PeriodStart::hour_of(date, 24), None);
    }
}

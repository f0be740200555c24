use serde::{Deserialize, Deserializer, Serialize};
use std::fmt;
use std::str::FromStr;

/// A calendar date, `YYYY-MM-DD`: when a catalog number was read from its source.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Date {
    year: u16,
    month: u8,
    day: u8,
}

/// Text that is not a `YYYY-MM-DD` date.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("`{0}` is not a date of the form YYYY-MM-DD")]
pub struct DateError(pub String);

impl Date {
    /// 1970-01-01.
    pub const EPOCH: Date = Date {
        year: 1970,
        month: 1,
        day: 1,
    };

    pub fn new(year: u16, month: u8, day: u8) -> Option<Date> {
        let days_in_month = match month {
            1 | 3 | 5 | 7 | 8 | 10 | 12 => 31,
            4 | 6 | 9 | 11 => 30,
            2 if year % 4 == 0 && (year % 100 != 0 || year % 400 == 0) => 29,
            2 => 28,
            _ => return None,
        };
        (1..=days_in_month).contains(&day).then_some(Date { year, month, day })
    }

    pub fn year(self) -> u16 {
        self.year
    }

    /// 1 to 12.
    pub fn month(self) -> u8 {
        self.month
    }

    /// 1 to 31.
    pub fn day(self) -> u8 {
        self.day
    }
}

impl FromStr for Date {
    type Err = DateError;

    fn from_str(text: &str) -> Result<Date, DateError> {
        let error = || DateError(text.to_string());
        let mut parts = text.trim().splitn(3, '-');
        let mut next = || parts.next().filter(|part| !part.is_empty()).ok_or_else(error);
        let (year, month, day) = (next()?, next()?, next()?);
        if year.len() != 4 || month.len() != 2 || day.len() != 2 {
            return Err(error());
        }
        Date::new(
            year.parse().map_err(|_| error())?,
            month.parse().map_err(|_| error())?,
            day.parse().map_err(|_| error())?,
        )
        .ok_or_else(error)
    }
}

impl fmt::Display for Date {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:04}-{:02}-{:02}", self.year, self.month, self.day)
    }
}

/// `2026-11-22` in text formats; `(year, month, day)` in compact binary ones.
impl Serialize for Date {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        if serializer.is_human_readable() {
            serializer.collect_str(self)
        } else {
            (self.year, self.month, self.day).serialize(serializer)
        }
    }
}

impl<'de> Deserialize<'de> for Date {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        if deserializer.is_human_readable() {
            let text = String::deserialize(deserializer)?;
            text.parse().map_err(serde::de::Error::custom)
        } else {
            let (year, month, day) = <(u16, u8, u8)>::deserialize(deserializer)?;
            Date::new(year, month, day)
                .ok_or_else(|| serde::de::Error::custom(format!("no such date {year}-{month}-{day}")))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_and_orders() {
        let early: Date = "2025-01-31".parse().unwrap();
        let late: Date = "2026-11-22".parse().unwrap();
        assert!(early < late);
        assert_eq!(late.to_string(), "2026-11-22");
    }

    #[test]
    fn rejects_impossible_dates() {
        for bad in ["2026-02-30", "2026-13-01", "26-01-01", "2026/01/01", "", "2026-1-1"] {
            assert!(bad.parse::<Date>().is_err(), "{bad}");
        }
        assert!("2024-02-29".parse::<Date>().is_ok());
    }
}

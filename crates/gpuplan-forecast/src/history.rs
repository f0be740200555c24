//! Usage histories: a CSV (or JSON) of timestamps and values, checked and made regular.

use gpuplan_model::Date;
use serde::Deserialize;
use std::collections::BTreeMap;

/// How far apart the observations are.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Frequency {
    Daily,
    Weekly,
    Monthly,
}

impl Frequency {
    /// Hours in one period (a month is 730 h, 8,760 / 12).
    pub fn hours(self) -> f64 {
        match self {
            Frequency::Daily => 24.0,
            Frequency::Weekly => 168.0,
            Frequency::Monthly => 730.0,
        }
    }

    /// The seasonal period worth trying: a week of days, a year of weeks or months.
    pub fn season(self) -> usize {
        match self {
            Frequency::Daily => 7,
            Frequency::Weekly => 52,
            Frequency::Monthly => 12,
        }
    }
}

/// A regular series of one quantity.
#[derive(Debug, Clone, PartialEq)]
pub struct Series {
    pub dates: Vec<Date>,
    pub values: Vec<f64>,
    pub frequency: Frequency,
    /// Periods that were missing and were filled by linear interpolation.
    pub filled: Vec<Date>,
}

/// A history that cannot be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum HistoryError {
    #[error("line {line}: {message}")]
    Row { line: u64, message: String },
    #[error("the history has no `{0}` column")]
    MissingColumn(String),
    #[error("the history is empty")]
    Empty,
    #[error("line {line}: {date} is not after the previous timestamp {previous}; timestamps must increase")]
    NotIncreasing { line: u64, date: String, previous: String },
    #[error("{0} observations are too few to forecast (at least 6 are needed)")]
    TooShort(usize),
    #[error("the timestamps are neither daily, weekly nor monthly (median spacing {0} days)")]
    Irregular(i64),
    #[error("not valid JSON: {0}")]
    Json(String),
}

/// Days since 1970-01-01 of a civil date (Howard Hinnant's days_from_civil).
fn days(date: Date) -> i64 {
    let text = date.to_string();
    let y: i64 = text[0..4].parse().unwrap_or(1970);
    let m: i64 = text[5..7].parse().unwrap_or(1);
    let d: i64 = text[8..10].parse().unwrap_or(1);
    let y = if m <= 2 { y - 1 } else { y };
    let era = if y >= 0 { y } else { y - 399 } / 400;
    let yoe = y - era * 400;
    let doy = (153 * (if m > 2 { m - 3 } else { m + 9 }) + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

fn date_at(days_since_epoch: i64) -> Date {
    let z = days_since_epoch + 719_468;
    let era = if z >= 0 { z } else { z - 146_096 } / 146_097;
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let y = yoe + era * 400;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = if m <= 2 { y + 1 } else { y };
    // Cannot fail: the civil-from-days algorithm yields a valid month and day.
    Date::new(y as u16, m as u8, d as u8).unwrap_or_else(epoch)
}

fn epoch() -> Date {
    Date::EPOCH
}

fn month_index(date: Date) -> i64 {
    let text = date.to_string();
    text[0..4].parse::<i64>().unwrap_or(0) * 12 + text[5..7].parse::<i64>().unwrap_or(1) - 1
}

fn month_start(index: i64) -> Date {
    // Cannot fail: the month is 1–12 and every month has a first day.
    Date::new((index / 12) as u16, (index % 12 + 1) as u8, 1).unwrap_or_else(epoch)
}

/// Parses a history CSV: a `timestamp` column (ISO dates; a time part is ignored) and a value
/// column (`value` or `value_column`), optionally a `gpu` column; `gpu` selects its rows.
/// Lines starting with `#` are comments.
pub fn parse_csv(text: &str, value_column: &str, gpu: Option<&str>) -> Result<Series, HistoryError> {
    let body: String = text
        .lines()
        .filter(|l| !l.trim_start().starts_with('#'))
        .map(|l| format!("{l}\n"))
        .collect();
    let comment_lines = text.lines().take_while(|l| l.trim_start().starts_with('#')).count() as u64;
    let mut reader = csv::ReaderBuilder::new()
        .trim(csv::Trim::All)
        .from_reader(body.as_bytes());
    let headers = reader
        .headers()
        .map_err(|e| HistoryError::Row {
            line: 1,
            message: e.to_string(),
        })?
        .clone();
    let column = |name: &str| headers.iter().position(|h| h.eq_ignore_ascii_case(name));
    let time = column("timestamp")
        .or_else(|| column("date"))
        .ok_or_else(|| HistoryError::MissingColumn("timestamp".into()))?;
    let value = column(value_column).ok_or_else(|| HistoryError::MissingColumn(value_column.to_string()))?;
    let gpu_column = column("gpu");
    let mut rows = Vec::new();
    for record in reader.records() {
        let record = record.map_err(|e| HistoryError::Row {
            line: e.position().map_or(0, |p| p.line()) + comment_lines,
            message: e.to_string(),
        })?;
        let line = record.position().map_or(0, |p| p.line()) + comment_lines;
        if let (Some(wanted), Some(at)) = (gpu, gpu_column) {
            if !record.get(at).is_some_and(|g| g.eq_ignore_ascii_case(wanted)) {
                continue;
            }
        }
        let stamp = record.get(time).unwrap_or("");
        let date: Date = stamp
            .get(..10)
            .unwrap_or(stamp)
            .parse()
            .map_err(|_| HistoryError::Row {
                line,
                message: format!("`{stamp}` is not an ISO date (YYYY-MM-DD)"),
            })?;
        let text = record.get(value).unwrap_or("");
        let number: f64 = text
            .parse()
            .ok()
            .filter(|v: &f64| v.is_finite() && *v >= 0.0)
            .ok_or_else(|| HistoryError::Row {
                line,
                message: format!("`{text}` is not a non-negative number"),
            })?;
        rows.push((line, date, number));
    }
    regular(rows)
}

#[derive(Deserialize)]
struct JsonPoint {
    timestamp: String,
    value: f64,
}

/// Parses the same history as JSON: `[{"timestamp": "2024-01-01", "value": 12.5}, …]`.
pub fn parse_json(text: &str) -> Result<Series, HistoryError> {
    let points: Vec<JsonPoint> = serde_json_lite(text)?;
    let mut rows = Vec::new();
    for (index, point) in points.into_iter().enumerate() {
        let line = index as u64 + 1;
        let date: Date = point
            .timestamp
            .get(..10)
            .unwrap_or(&point.timestamp)
            .parse()
            .map_err(|_| HistoryError::Row {
                line,
                message: format!("`{}` is not an ISO date", point.timestamp),
            })?;
        if !(point.value.is_finite() && point.value >= 0.0) {
            return Err(HistoryError::Row {
                line,
                message: format!("{} is not a non-negative number", point.value),
            });
        }
        rows.push((line, date, point.value));
    }
    regular(rows)
}

fn serde_json_lite<T: serde::de::DeserializeOwned>(text: &str) -> Result<T, HistoryError> {
    serde_json::from_str(text).map_err(|e| HistoryError::Json(e.to_string()))
}

/// Orders, checks and regularises observations; gaps are filled by linear interpolation.
pub fn regular(rows: Vec<(u64, Date, f64)>) -> Result<Series, HistoryError> {
    if rows.is_empty() {
        return Err(HistoryError::Empty);
    }
    for pair in rows.windows(2) {
        if pair[1].1 <= pair[0].1 {
            return Err(HistoryError::NotIncreasing {
                line: pair[1].0,
                date: pair[1].1.to_string(),
                previous: pair[0].1.to_string(),
            });
        }
    }
    if rows.len() < 6 {
        return Err(HistoryError::TooShort(rows.len()));
    }
    let mut gaps: Vec<i64> = rows.windows(2).map(|p| days(p[1].1) - days(p[0].1)).collect();
    gaps.sort_unstable();
    let median = gaps[gaps.len() / 2];
    let frequency = match median {
        1 => Frequency::Daily,
        7 => Frequency::Weekly,
        28..=31 => Frequency::Monthly,
        other => return Err(HistoryError::Irregular(other)),
    };
    // Index each observation on the regular grid.
    let index = |date: Date| match frequency {
        Frequency::Monthly => month_index(date),
        Frequency::Weekly => days(date).div_euclid(7),
        Frequency::Daily => days(date),
    };
    let observed: BTreeMap<i64, f64> = rows.iter().map(|(_, date, value)| (index(*date), *value)).collect();
    let first = *observed.keys().next().unwrap_or(&0);
    let last = *observed.keys().next_back().unwrap_or(&0);
    let (mut dates, mut values, mut filled) = (Vec::new(), Vec::new(), Vec::new());
    let start_day = days(rows[0].1);
    for i in first..=last {
        let date = match frequency {
            Frequency::Monthly => month_start(i),
            Frequency::Weekly => date_at(start_day + (i - first) * 7),
            Frequency::Daily => date_at(i),
        };
        let value = match observed.get(&i) {
            Some(v) => *v,
            None => {
                let (before, b) = observed
                    .range(..i)
                    .next_back()
                    .map(|(k, v)| (*k, *v))
                    .unwrap_or((i, 0.0));
                let (after, a) = observed.range(i..).next().map(|(k, v)| (*k, *v)).unwrap_or((i, b));
                filled.push(date);
                b + (a - b) * (i - before) as f64 / (after - before).max(1) as f64
            }
        };
        dates.push(date);
        values.push(value);
    }
    Ok(Series {
        dates,
        values,
        frequency,
        filled,
    })
}

/// The date `steps` periods after the last one of `series`.
pub fn date_after(series: &Series, steps: usize) -> Date {
    let last = *series.dates.last().unwrap_or(&epoch());
    match series.frequency {
        Frequency::Monthly => month_start(month_index(last) + steps as i64),
        Frequency::Weekly => date_at(days(last) + 7 * steps as i64),
        Frequency::Daily => date_at(days(last) + steps as i64),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dates_round_trip() {
        for text in ["1970-01-01", "2024-02-29", "1949-12-31", "2026-11-22"] {
            let date: Date = text.parse().unwrap();
            assert_eq!(date_at(days(date)), date);
        }
    }

    #[test]
    fn gaps_are_filled_and_reported() {
        let text = "timestamp,value\n2024-01-01,10\n2024-01-02,12\n2024-01-04,16\n2024-01-05,18\n2024-01-06,20\n2024-01-07,22\n";
        let series = parse_csv(text, "value", None).unwrap();
        assert_eq!(series.frequency, Frequency::Daily);
        assert_eq!(series.values[2], 14.0);
        assert_eq!(series.filled, vec!["2024-01-03".parse().unwrap()]);
    }

    #[test]
    fn bad_rows_are_reported_by_line() {
        let text = "timestamp,value\n2024-01-01,10\n2024-01-02,ten\n";
        assert_eq!(
            parse_csv(text, "value", None).unwrap_err(),
            HistoryError::Row {
                line: 3,
                message: "`ten` is not a non-negative number".to_string()
            }
        );
        let text = "timestamp,value\n2024-01-02,10\n2024-01-01,12\n";
        assert!(matches!(
            parse_csv(text, "value", None),
            Err(HistoryError::NotIncreasing { line: 3, .. })
        ));
        assert_eq!(parse_csv("timestamp,value\n", "value", None), Err(HistoryError::Empty));
        assert_eq!(
            parse_csv("when,value\n", "value", None),
            Err(HistoryError::MissingColumn("timestamp".into()))
        );
    }
}

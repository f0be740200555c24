//! Usage histories: a CSV (or JSON) of timestamps and values, checked and made regular.

use crate::period_start::PeriodStart;
use gpuplan_model::Date;
use serde::Deserialize;
use std::collections::BTreeMap;

/// How far apart the observations are.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, utoipa::ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum Frequency {
    Hourly,
    Daily,
    Weekly,
    Monthly,
}

impl Frequency {
    /// Hours in one period (a month is 730 h, 8,760 / 12).
    pub fn hours(self) -> f64 {
        match self {
            Frequency::Hourly => 1.0,
            Frequency::Daily => 24.0,
            Frequency::Weekly => 168.0,
            Frequency::Monthly => 730.0,
        }
    }

    /// The seasonal period worth trying: a day of hours, a week of days, a year of weeks or
    /// months.
    pub fn season(self) -> usize {
        match self {
            Frequency::Hourly => 24,
            Frequency::Daily => 7,
            Frequency::Weekly => 52,
            Frequency::Monthly => 12,
        }
    }

    /// A second, longer season nested in the data: the week of an hourly series.
    pub fn long_season(self) -> Option<usize> {
        match self {
            Frequency::Hourly => Some(HOURS_PER_WEEK),
            _ => None,
        }
    }
}

const HOURS_PER_DAY: i64 = 24;
const HOURS_PER_WEEK: usize = 168;

/// A regular series of one quantity.
#[derive(Debug, Clone, PartialEq)]
pub struct Series {
    pub starts: Vec<PeriodStart>,
    pub values: Vec<f64>,
    pub frequency: Frequency,
    /// Periods that were missing and were filled by linear interpolation.
    pub filled: Vec<PeriodStart>,
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
    #[error("the timestamps are neither hourly, daily, weekly nor monthly (median spacing {0} hours)")]
    Irregular(i64),
    #[error("not valid JSON: {0}")]
    Json(String),
    #[error("the history spans {periods} periods but holds {observed} observations: too many gaps to fill")]
    TooSparse { periods: i64, observed: usize },
    #[error("an hourly forecast needs timestamps with a time of day; this history has dates only")]
    NoTimeOfDay,
}

const CIVIL_EPOCH: jiff::civil::Date = jiff::civil::Date::constant(1970, 1, 1);

/// Most periods a history may span once its gaps are filled (23 years of hours).
const MAX_PERIODS: i64 = 200_000;

/// Most periods a history may span per observation: at most three in four filled.
const MAX_FILL_FACTOR: i64 = 4;

fn civil(date: Date) -> jiff::civil::Date {
    // Every `Date` is a valid calendar date within jiff's range (years up to 9999).
    jiff::civil::Date::new(date.year() as i16, date.month() as i8, date.day() as i8).unwrap_or(CIVIL_EPOCH)
}

fn from_civil(date: jiff::civil::Date) -> Date {
    Date::new(date.year() as u16, date.month() as u8, date.day() as u8).unwrap_or(Date::EPOCH)
}

/// Days since 1970-01-01.
fn days(date: Date) -> i64 {
    civil(date)
        .since(CIVIL_EPOCH)
        .map_or(0, |span| i64::from(span.get_days()))
}

fn date_at(days_since_epoch: i64) -> Date {
    CIVIL_EPOCH
        .checked_add(jiff::Span::new().days(days_since_epoch))
        .map_or(Date::EPOCH, from_civil)
}

fn month_index(date: Date) -> i64 {
    i64::from(date.year()) * 12 + i64::from(date.month()) - 1
}

fn month_start(index: i64) -> Date {
    Date::new((index / 12) as u16, (index % 12 + 1) as u8, 1).unwrap_or(Date::EPOCH)
}

/// Hours since 1970-01-01T00:00 of the start of `start`.
fn hours(start: PeriodStart) -> i64 {
    days(start.date()) * HOURS_PER_DAY + i64::from(start.hour().unwrap_or(0))
}

/// The start of the hour `hours` hours after 1970-01-01T00:00.
fn hour_at(hours: i64) -> PeriodStart {
    let date = date_at(hours.div_euclid(HOURS_PER_DAY));
    PeriodStart::hour_of(date, hours.rem_euclid(HOURS_PER_DAY) as u8).unwrap_or(PeriodStart::from(date))
}

/// How observations that fall in one period are combined.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Aggregate {
    /// Added up (GPU-hours used).
    Sum,
    /// Averaged (GPUs in use).
    Mean,
}

/// The period a history is forecast in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum Period {
    Hour,
    Day,
    Week,
    Month,
}

/// How to read a history.
#[derive(Debug, Clone, PartialEq)]
pub struct HistoryOptions {
    /// The value column (CSV).
    pub value_column: String,
    /// Keep only the rows of this GPU (a `gpu` column).
    pub gpu: Option<String>,
    /// How rows within one period combine, when there are several (sub-daily telemetry).
    pub aggregate: Aggregate,
    /// Roll the history up to this period; `None`: days for sub-daily data, else as observed.
    /// Hours keep sub-daily telemetry hourly, with its daily and weekly seasons.
    pub period: Option<Period>,
}

impl Default for HistoryOptions {
    fn default() -> Self {
        HistoryOptions {
            value_column: "value".to_string(),
            gpu: None,
            aggregate: Aggregate::Sum,
            period: None,
        }
    }
}

/// The hour a timestamp falls in (hours since 1970-01-01T00:00) and whether it has a time of
/// day: ISO dates (`2024-01-01`), RFC 3339 times with or without an offset
/// (`2024-01-01T10:00:00Z`, `2024-01-01 10:00:00`), and nvidia-smi's `2024/01/01
/// 10:00:00.123`. The date and hour are the ones written, in the timestamp's own offset.
fn timestamp_hour(stamp: &str) -> Option<(i64, bool)> {
    let stamp = stamp.trim();
    let head = stamp.get(..10)?.replace('/', "-");
    let date: Date = head.parse().ok()?;
    let rest = stamp.get(10..)?.trim_start_matches(['T', 't', ' ']);
    if rest.is_empty() {
        return Some((days(date) * HOURS_PER_DAY, false));
    }
    let full = format!("{head}T{rest}");
    let valid = full.parse::<jiff::Timestamp>().is_ok() || full.parse::<jiff::civil::DateTime>().is_ok();
    let hour: i64 = rest.get(..2)?.parse().ok()?;
    valid.then_some((days(date) * HOURS_PER_DAY + hour, true))
}

/// Rows (timed in hours since the epoch) rolled up into hours, days, weeks (from the first
/// day) or calendar months, in the order given.
fn roll_up(rows: Vec<(u64, i64, f64)>, period: Period, how: Aggregate) -> Vec<(u64, PeriodStart, f64)> {
    let first = rows.first().map_or(0, |r| r.1.div_euclid(HOURS_PER_DAY));
    let day = |hour: i64| hour.div_euclid(HOURS_PER_DAY);
    let key = |hour: i64| match period {
        Period::Hour => hour,
        Period::Day => day(hour),
        Period::Week => (day(hour) - first).div_euclid(7),
        Period::Month => month_index(date_at(day(hour))),
    };
    let start = |hour: i64| match period {
        Period::Hour => hour_at(hour),
        Period::Day => date_at(day(hour)).into(),
        Period::Week => date_at(first + (day(hour) - first).div_euclid(7) * 7).into(),
        Period::Month => month_start(month_index(date_at(day(hour)))).into(),
    };
    let mut out: Vec<(u64, PeriodStart, f64, usize, i64)> = Vec::new();
    for (line, hour, value) in rows {
        let k = key(hour);
        match out.last_mut() {
            Some(last) if last.4 == k => {
                last.2 += value;
                last.3 += 1;
            }
            _ => out.push((line, start(hour), value, 1, k)),
        }
    }
    out.into_iter()
        .map(|(line, date, total, count, _)| {
            let value = match how {
                Aggregate::Sum => total,
                Aggregate::Mean => total / count as f64,
            };
            (line, date, value)
        })
        .collect()
}

/// Checks the order of timestamped rows (hours since the epoch), rolls them up to the period
/// asked (sub-daily ones to days unless told otherwise), then regularises.
fn series_of(rows: Vec<(u64, i64, f64, bool)>, options: &HistoryOptions) -> Result<Series, HistoryError> {
    let sub_daily = rows.iter().any(|r| r.3);
    if options.period == Some(Period::Hour) && !sub_daily && !rows.is_empty() {
        return Err(HistoryError::NoTimeOfDay);
    }
    let written = |hour: i64| {
        if sub_daily {
            hour_at(hour).to_string()
        } else {
            date_at(hour.div_euclid(HOURS_PER_DAY)).to_string()
        }
    };
    for pair in rows.windows(2) {
        let out_of_order = if sub_daily {
            pair[1].1 < pair[0].1
        } else {
            pair[1].1 <= pair[0].1
        };
        if out_of_order {
            return Err(HistoryError::NotIncreasing {
                line: pair[1].0,
                date: written(pair[1].1),
                previous: written(pair[0].1),
            });
        }
    }
    let rows: Vec<(u64, i64, f64)> = rows.into_iter().map(|(l, h, v, _)| (l, h, v)).collect();
    let rows = match options.period {
        Some(period) => roll_up(rows, period, options.aggregate),
        None if sub_daily => roll_up(rows, Period::Day, options.aggregate),
        None => rows
            .into_iter()
            .map(|(l, h, v)| (l, date_at(h.div_euclid(HOURS_PER_DAY)).into(), v))
            .collect(),
    };
    regular(rows)
}

/// Parses a history CSV: a `timestamp` column (ISO dates, or times of day that are combined
/// into days) and a value column (`options.value_column`), optionally a `gpu` column, which
/// `options.gpu` selects rows of. Lines starting with `#` are comments.
pub fn parse_csv(text: &str, options: &HistoryOptions) -> Result<Series, HistoryError> {
    let (value_column, gpu) = (options.value_column.as_str(), options.gpu.as_deref());
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
        let (hour, timed) = timestamp_hour(stamp).ok_or_else(|| HistoryError::Row {
            line,
            message: format!("`{stamp}` is not an ISO date or RFC 3339 time (YYYY-MM-DD, YYYY-MM-DDTHH:MM:SSZ)"),
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
        rows.push((line, hour, number, timed));
    }
    series_of(rows, options)
}

#[derive(Deserialize)]
struct JsonPoint {
    timestamp: String,
    value: f64,
}

/// Parses the same history as JSON: `[{"timestamp": "2024-01-01", "value": 12.5}, …]`.
pub fn parse_json(text: &str, options: &HistoryOptions) -> Result<Series, HistoryError> {
    let points: Vec<JsonPoint> = serde_json_lite(text)?;
    let mut rows = Vec::new();
    for (index, point) in points.into_iter().enumerate() {
        let line = index as u64 + 1;
        let (hour, timed) = timestamp_hour(&point.timestamp).ok_or_else(|| HistoryError::Row {
            line,
            message: format!("`{}` is not an ISO date or RFC 3339 time", point.timestamp),
        })?;
        if !(point.value.is_finite() && point.value >= 0.0) {
            return Err(HistoryError::Row {
                line,
                message: format!("{} is not a non-negative number", point.value),
            });
        }
        rows.push((line, hour, point.value, timed));
    }
    series_of(rows, options)
}

fn serde_json_lite<T: serde::de::DeserializeOwned>(text: &str) -> Result<T, HistoryError> {
    serde_json::from_str(text).map_err(|e| HistoryError::Json(e.to_string()))
}

/// Orders, checks and regularises observations; gaps are filled by linear interpolation.
pub fn regular(rows: Vec<(u64, PeriodStart, f64)>) -> Result<Series, HistoryError> {
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
    let mut gaps: Vec<i64> = rows.windows(2).map(|p| hours(p[1].1) - hours(p[0].1)).collect();
    gaps.sort_unstable();
    let median = gaps[gaps.len() / 2];
    let frequency = match median {
        1 => Frequency::Hourly,
        24 => Frequency::Daily,
        168 => Frequency::Weekly,
        672..=744 => Frequency::Monthly,
        other => return Err(HistoryError::Irregular(other)),
    };
    // Index each observation on the regular grid.
    let index = |start: PeriodStart| match frequency {
        Frequency::Monthly => month_index(start.date()),
        Frequency::Weekly => days(start.date()).div_euclid(7),
        Frequency::Daily => days(start.date()),
        Frequency::Hourly => hours(start),
    };
    let observed: BTreeMap<i64, f64> = rows.iter().map(|(_, start, value)| (index(*start), *value)).collect();
    let first = *observed.keys().next().unwrap_or(&0);
    let last = *observed.keys().next_back().unwrap_or(&0);
    // Gaps are filled, not invented: a history mostly of gaps is refused before the filling
    // makes it millions of periods.
    let periods = last - first + 1;
    if periods > MAX_PERIODS || periods > MAX_FILL_FACTOR * rows.len() as i64 {
        return Err(HistoryError::TooSparse {
            periods,
            observed: rows.len(),
        });
    }
    let (mut starts, mut values, mut filled) = (Vec::new(), Vec::new(), Vec::new());
    let start_day = days(rows[0].1.date());
    for i in first..=last {
        let start = match frequency {
            Frequency::Monthly => month_start(i).into(),
            Frequency::Weekly => date_at(start_day + (i - first) * 7).into(),
            Frequency::Daily => date_at(i).into(),
            Frequency::Hourly => hour_at(i),
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
                filled.push(start);
                b + (a - b) * (i - before) as f64 / (after - before).max(1) as f64
            }
        };
        starts.push(start);
        values.push(value);
    }
    Ok(Series {
        starts,
        values,
        frequency,
        filled,
    })
}

/// Whether the period `steps` after the last one of `series` is still a calendar date (up to
/// 9999-12-31): the forecast's periods are written as dates.
pub fn calendar_holds(series: &Series, steps: usize) -> bool {
    let Some(last) = series.starts.last() else {
        return true;
    };
    let end = days(Date::new(9999, 12, 31).unwrap_or(Date::EPOCH));
    let steps = steps as i64;
    match series.frequency {
        Frequency::Monthly => {
            month_index(last.date()) + steps <= month_index(Date::new(9999, 12, 1).unwrap_or(Date::EPOCH))
        }
        Frequency::Weekly => days(last.date()) + 7 * steps <= end,
        Frequency::Daily => days(last.date()) + steps <= end,
        Frequency::Hourly => hours(*last) + steps < (end + 1) * HOURS_PER_DAY,
    }
}

/// The start of the period `steps` periods after the last one of `series`.
pub fn start_after(series: &Series, steps: usize) -> PeriodStart {
    let last = *series.starts.last().unwrap_or(&PeriodStart::from(Date::EPOCH));
    let steps = steps as i64;
    match series.frequency {
        Frequency::Monthly => month_start(month_index(last.date()) + steps).into(),
        Frequency::Weekly => date_at(days(last.date()) + 7 * steps).into(),
        Frequency::Daily => date_at(days(last.date()) + steps).into(),
        Frequency::Hourly => hour_at(hours(last) + steps),
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
        let series = parse_csv(text, &HistoryOptions::default()).unwrap();
        assert_eq!(series.frequency, Frequency::Daily);
        assert_eq!(series.values[2], 14.0);
        assert_eq!(
            series.filled,
            vec![PeriodStart::from("2024-01-03".parse::<Date>().unwrap())]
        );
    }

    #[test]
    fn bad_rows_are_reported_by_line() {
        let text = "timestamp,value\n2024-01-01,10\n2024-01-02,ten\n";
        assert_eq!(
            parse_csv(text, &HistoryOptions::default()).unwrap_err(),
            HistoryError::Row {
                line: 3,
                message: "`ten` is not a non-negative number".to_string()
            }
        );
        let text = "timestamp,value\n2024-01-02,10\n2024-01-01,12\n";
        assert!(matches!(
            parse_csv(text, &HistoryOptions::default()),
            Err(HistoryError::NotIncreasing { line: 3, .. })
        ));
        assert_eq!(
            parse_csv("timestamp,value\n", &HistoryOptions::default()),
            Err(HistoryError::Empty)
        );
        assert_eq!(
            parse_csv("when,value\n", &HistoryOptions::default()),
            Err(HistoryError::MissingColumn("timestamp".into()))
        );
    }

    fn hourly(days: u32, stamp: impl Fn(u32, u32) -> String) -> String {
        let mut text = String::from("timestamp,value\n");
        for day in 1..=days {
            for hour in 0..24 {
                text.push_str(&format!("{},{}\n", stamp(day, hour), 1.0 + f64::from(hour % 2)));
            }
        }
        text
    }

    /// Telemetry every hour (what nvidia-smi and DCGM exporters produce) becomes one value per
    /// day: GPU-hours add up, GPUs in use average.
    #[test]
    fn sub_daily_rows_are_combined_per_day() {
        let text = hourly(8, |d, h| format!("2024-01-{d:02}T{h:02}:00:00Z"));
        let sum = parse_csv(&text, &HistoryOptions::default()).unwrap();
        assert_eq!(sum.frequency, Frequency::Daily);
        assert_eq!(sum.values.len(), 8);
        assert_eq!(sum.values[0], 36.0);
        let mean = HistoryOptions {
            aggregate: Aggregate::Mean,
            ..HistoryOptions::default()
        };
        assert_eq!(parse_csv(&text, &mean).unwrap().values[0], 1.5);
    }

    #[test]
    fn nvidia_smi_and_offset_timestamps_are_read() {
        let smi = hourly(7, |d, h| format!("2024/01/{d:02} {h:02}:00:05.123"));
        assert_eq!(parse_csv(&smi, &HistoryOptions::default()).unwrap().values.len(), 7);
        let offset = hourly(7, |d, h| format!("2024-01-{d:02}T{h:02}:30:00+02:00"));
        assert_eq!(parse_csv(&offset, &HistoryOptions::default()).unwrap().values.len(), 7);
        let bad = "timestamp,value\n2024-01-01T25:00:00Z,1\n";
        assert!(matches!(
            parse_csv(bad, &HistoryOptions::default()),
            Err(HistoryError::Row { line: 2, .. })
        ));
    }

    #[test]
    fn a_history_rolls_up_to_weeks_or_months() {
        let mut text = String::from("timestamp,value\n");
        for day in 0..240 {
            text.push_str(&format!(
                "{},{}\n",
                date_at(days("2024-01-01".parse().unwrap()) + day),
                2.0
            ));
        }
        let weekly = HistoryOptions {
            period: Some(Period::Week),
            ..HistoryOptions::default()
        };
        let weeks = parse_csv(&text, &weekly).unwrap();
        assert_eq!(weeks.frequency, Frequency::Weekly);
        assert_eq!(weeks.values[0], 14.0);
        let monthly = HistoryOptions {
            period: Some(Period::Month),
            ..HistoryOptions::default()
        };
        let months = parse_csv(&text, &monthly).unwrap();
        assert_eq!(months.frequency, Frequency::Monthly);
        assert_eq!(months.values[0], 62.0);
        assert_eq!(months.starts[1].to_string(), "2024-02-01");
    }

    /// `--period hour`: per-minute rows become one value per hour, and a missing hour is
    /// filled between its neighbours.
    #[test]
    fn sub_daily_rows_can_stay_hourly() {
        let mut text = String::from("timestamp,value\n");
        for hour in (0..10).filter(|h| *h != 4) {
            for minute in [0, 30] {
                text.push_str(&format!("2024-01-01T{hour:02}:{minute:02}:00Z,{}\n", hour * 2));
            }
        }
        let options = HistoryOptions {
            period: Some(Period::Hour),
            aggregate: Aggregate::Mean,
            ..HistoryOptions::default()
        };
        let series = parse_csv(&text, &options).unwrap();
        assert_eq!(series.frequency, Frequency::Hourly);
        assert_eq!(
            series.values,
            vec![0.0, 2.0, 4.0, 6.0, 8.0, 10.0, 12.0, 14.0, 16.0, 18.0]
        );
        assert_eq!(series.filled.len(), 1);
        assert_eq!(series.filled[0].to_string(), "2024-01-01T04:00");
        assert_eq!(start_after(&series, 15).to_string(), "2024-01-02T00:00");
    }

    #[test]
    fn sub_daily_rows_out_of_order_are_refused() {
        let text = "timestamp,value\n2024-01-02T01:00:00Z,1\n2024-01-01T23:00:00Z,1\n";
        assert!(matches!(
            parse_csv(text, &HistoryOptions::default()),
            Err(HistoryError::NotIncreasing { line: 3, .. })
        ));
    }
}

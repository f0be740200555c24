//! `nvidia-smi --query-gpu=timestamp,index,name,uuid,utilization.gpu,utilization.memory,memory.used,memory.total,power.draw --format=csv -l 5`:
//! a header naming the fields with their units (`utilization.gpu [%]`), then one row per GPU
//! per interval (`2024/05/01 12:00:05.123, 0, NVIDIA A100-SXM4-80GB, GPU-…, 87 %, …`). The
//! header may repeat when logs are concatenated; `[N/A]` and `[Not Supported]` are absent values.

use crate::sample::{GpuKey, MIB, Sample, TelemetryError};

/// The samples of a log, in its order.
pub fn parse_nvidia_smi_csv(text: &str) -> Result<Vec<Sample>, TelemetryError> {
    let mut reader = csv::ReaderBuilder::new()
        .has_headers(false)
        .trim(csv::Trim::All)
        .flexible(true)
        .from_reader(text.as_bytes());
    let mut columns: Option<Columns> = None;
    let mut samples = Vec::new();
    for (index, record) in reader.records().enumerate() {
        let line = index as u64 + 1;
        let record = record.map_err(|e| TelemetryError::Line {
            line,
            message: e.to_string(),
        })?;
        if record.get(0).is_some_and(|f| f.starts_with("timestamp")) {
            columns = Some(Columns::of(&record)?);
            continue;
        }
        if record.iter().all(str::is_empty) {
            continue;
        }
        let columns = columns.as_ref().ok_or_else(|| TelemetryError::Line {
            line,
            message: "a row before the header (the log starts with `timestamp, index, …`)".to_string(),
        })?;
        let sample = columns.sample(&record, line)?;
        if let Some(why) = sample.impossible() {
            return Err(TelemetryError::Line { line, message: why });
        }
        samples.push(sample);
    }
    if samples.is_empty() {
        return Err(TelemetryError::Empty);
    }
    Ok(samples)
}

struct Columns {
    timestamp: usize,
    index: usize,
    name: usize,
    uuid: Option<usize>,
    utilisation: usize,
    memory_used: usize,
    memory_total: usize,
    power: Option<usize>,
}

impl Columns {
    fn of(header: &csv::StringRecord) -> Result<Columns, TelemetryError> {
        let find = |field: &str| header.iter().position(|h| h.split_whitespace().next() == Some(field));
        let need = |field: &str| find(field).ok_or_else(|| TelemetryError::MissingColumn(field.to_string()));
        Ok(Columns {
            timestamp: need("timestamp")?,
            index: need("index")?,
            name: need("name")?,
            uuid: find("uuid"),
            utilisation: need("utilization.gpu")?,
            memory_used: need("memory.used")?,
            memory_total: need("memory.total")?,
            power: find("power.draw"),
        })
    }

    /// Fields a row must have: up to the last column the header names.
    fn width(&self) -> usize {
        [
            Some(self.timestamp),
            Some(self.index),
            Some(self.name),
            self.uuid,
            Some(self.utilisation),
            Some(self.memory_used),
            Some(self.memory_total),
            self.power,
        ]
        .into_iter()
        .flatten()
        .max()
        .map_or(0, |i| i + 1)
    }

    fn sample(&self, record: &csv::StringRecord, line: u64) -> Result<Sample, TelemetryError> {
        if record.len() < self.width() {
            return Err(TelemetryError::Line {
                line,
                message: format!("a truncated row: {} of {} fields", record.len(), self.width()),
            });
        }
        let field = |i: usize| record.get(i).unwrap_or("");
        let bad = |what: &str, text: &str| TelemetryError::Line {
            line,
            message: format!("{what} `{text}` is not understood"),
        };
        let at = timestamp(field(self.timestamp)).ok_or_else(|| bad("timestamp", field(self.timestamp)))?;
        let number = |i: usize, what: &str| -> Result<Option<f64>, TelemetryError> {
            let text = field(i);
            if text.is_empty() || text.starts_with('[') {
                return Ok(None);
            }
            let value = text.split_whitespace().next().unwrap_or("");
            value
                .parse::<f64>()
                .ok()
                .filter(|v| v.is_finite() && *v >= 0.0)
                .map(Some)
                .ok_or_else(|| bad(what, text))
        };
        let index = field(self.index);
        Ok(Sample {
            at,
            gpu: GpuKey(match self.uuid.map(field) {
                Some(uuid) if !uuid.is_empty() => uuid.to_string(),
                _ => format!("gpu{index}"),
            }),
            name: field(self.name).to_string(),
            job: None,
            utilisation: number(self.utilisation, "utilization.gpu")?.map(|p| p / 100.0),
            sm_active: None,
            tensor_active: None,
            memory_used_bytes: number(self.memory_used, "memory.used")?.map(|m| (m * MIB as f64) as u64),
            memory_total_bytes: number(self.memory_total, "memory.total")?.map(|m| (m * MIB as f64) as u64),
            power_watts: match self.power {
                Some(i) => number(i, "power.draw")?,
                None => None,
            },
        })
    }
}

/// `2024/05/01 12:00:05.123` (nvidia-smi's, in the machine's clock, read as UTC) or RFC 3339.
fn timestamp(text: &str) -> Option<i64> {
    let iso = text.replacen('/', "-", 2).replacen(' ', "T", 1);
    if let Ok(stamp) = iso.parse::<jiff::Timestamp>() {
        return Some(stamp.as_second());
    }
    let civil: jiff::civil::DateTime = iso.parse().ok()?;
    civil
        .to_zoned(jiff::tz::TimeZone::UTC)
        .ok()
        .map(|z| z.timestamp().as_second())
}

#[cfg(test)]
mod tests {
    use super::*;

    const LOG: &str = "timestamp, index, name, uuid, utilization.gpu [%], utilization.memory [%], memory.used [MiB], memory.total [MiB], power.draw [W]
2024/05/01 12:00:00.000, 0, NVIDIA A100-SXM4-80GB, GPU-aaaa, 87 %, 40 %, 61440 MiB, 81920 MiB, 312.50 W
2024/05/01 12:00:00.000, 1, NVIDIA A100-SXM4-80GB, GPU-bbbb, 0 %, 0 %, 4 MiB, 81920 MiB, [N/A]
";

    #[test]
    fn rows_become_samples_with_units() {
        let samples = parse_nvidia_smi_csv(LOG).unwrap();
        assert_eq!(samples.len(), 2);
        let first = &samples[0];
        assert_eq!(first.gpu, GpuKey("GPU-aaaa".to_string()));
        assert_eq!(first.utilisation, Some(0.87));
        assert_eq!(first.memory_used_bytes, Some(61440 * MIB));
        assert_eq!(first.power_watts, Some(312.5));
        assert_eq!(samples[1].power_watts, None, "[N/A] is absent");
        assert_eq!(first.at, 1_714_564_800);
    }

    #[test]
    fn damaged_logs_are_refused_with_their_line() {
        let truncated = "timestamp, index, name, uuid, utilization.gpu [%], memory.used [MiB], memory.total [MiB]\n2024/05/01 12:00:00.000, 0, NVIDIA A100, GPU-a, lots %, 1 MiB, 2 MiB\n";
        let error = parse_nvidia_smi_csv(truncated).unwrap_err();
        assert_eq!(error.to_string(), "line 2: utilization.gpu `lots %` is not understood");
        assert!(matches!(
            parse_nvidia_smi_csv("timestamp, index\n"),
            Err(TelemetryError::MissingColumn(_))
        ));
        assert_eq!(parse_nvidia_smi_csv(""), Err(TelemetryError::Empty));
        let headless = "2024/05/01 12:00:00.000, 0, NVIDIA A100, GPU-a, 5 %, 1 MiB, 2 MiB\n";
        assert!(
            parse_nvidia_smi_csv(headless)
                .unwrap_err()
                .to_string()
                .starts_with("line 1: a row before")
        );
    }
}

//! One row of a SkyPilot `vms.csv`, read by column name because each cloud orders its
//! columns differently.

use gpuplan_model::Bytes;

#[derive(Debug, Clone)]
pub(crate) struct SkyRow {
    /// 1-based line in the source file.
    pub line: u64,
    pub instance_type: String,
    pub accelerator_name: Option<String>,
    pub accelerator_count: Option<f64>,
    pub vcpus: f64,
    pub memory_gib: f64,
    pub gpu_info: String,
    pub price: Option<f64>,
    pub spot: Option<f64>,
    pub region: Option<String>,
    pub zone: Option<String>,
    pub local_disk_gb: Option<f64>,
}

const REQUIRED: [&str; 5] = ["InstanceType", "AcceleratorName", "AcceleratorCount", "Price", "Region"];

/// Parses a whole file. A missing required column fails the file; a row that cannot be
/// read is returned as an `Err` with its line, for the report.
pub(crate) fn parse(text: &str) -> Result<Vec<Result<SkyRow, String>>, String> {
    let mut reader = csv::ReaderBuilder::new().flexible(true).from_reader(text.as_bytes());
    let headers = reader.headers().map_err(|e| format!("line 1: {e}"))?.clone();
    let column = |name: &str| headers.iter().position(|h| h.trim() == name);
    for name in REQUIRED {
        if column(name).is_none() {
            return Err(format!("line 1: missing column `{name}`"));
        }
    }
    let columns = Columns {
        instance_type: column("InstanceType"),
        accelerator_name: column("AcceleratorName"),
        accelerator_count: column("AcceleratorCount"),
        vcpus: column("vCPUs"),
        memory: column("MemoryGiB"),
        gpu_info: column("GpuInfo"),
        price: column("Price"),
        spot: column("SpotPrice"),
        region: column("Region"),
        zone: column("AvailabilityZone"),
        disk_size: column("LocalDiskSize"),
        disk_count: column("LocalDiskCount"),
        storage_gib: column("StorageGiB"),
    };
    let mut rows = Vec::new();
    for record in reader.records() {
        rows.push(match record {
            Err(error) => Err(error.to_string()),
            Ok(record) => {
                let line = record.position().map_or(0, |p| p.line());
                if record.len() != headers.len() {
                    Err(format!(
                        "line {line}: {} fields where the header has {}",
                        record.len(),
                        headers.len()
                    ))
                } else {
                    columns.read(&record, line).map_err(|e| format!("line {line}: {e}"))
                }
            }
        });
    }
    Ok(rows)
}

struct Columns {
    instance_type: Option<usize>,
    accelerator_name: Option<usize>,
    accelerator_count: Option<usize>,
    vcpus: Option<usize>,
    memory: Option<usize>,
    gpu_info: Option<usize>,
    price: Option<usize>,
    spot: Option<usize>,
    region: Option<usize>,
    zone: Option<usize>,
    disk_size: Option<usize>,
    disk_count: Option<usize>,
    storage_gib: Option<usize>,
}

impl Columns {
    fn read(&self, record: &csv::StringRecord, line: u64) -> Result<SkyRow, String> {
        let text = |column: Option<usize>| {
            column
                .and_then(|i| record.get(i))
                .map(str::trim)
                .filter(|t| !t.is_empty())
        };
        let number = |column: Option<usize>, name: &str| -> Result<Option<f64>, String> {
            text(column)
                .map(|t| {
                    t.parse::<f64>()
                        .ok()
                        .filter(|v| v.is_finite())
                        .ok_or_else(|| format!("{name} `{t}` is not a number"))
                })
                .transpose()
        };
        let local_disk_gb = match (
            number(self.disk_size, "LocalDiskSize")?,
            number(self.disk_count, "LocalDiskCount")?,
        ) {
            (Some(size), count) => Some(size * count.unwrap_or(1.0)),
            (None, _) => number(self.storage_gib, "StorageGiB")?.map(|gib| Bytes::from_gib(gib).as_gb()),
        };
        Ok(SkyRow {
            line,
            instance_type: text(self.instance_type).unwrap_or_default().to_string(),
            accelerator_name: text(self.accelerator_name).map(str::to_string),
            accelerator_count: number(self.accelerator_count, "AcceleratorCount")?,
            vcpus: number(self.vcpus, "vCPUs")?.unwrap_or(0.0),
            memory_gib: number(self.memory, "MemoryGiB")?.unwrap_or(0.0),
            gpu_info: text(self.gpu_info).unwrap_or_default().to_string(),
            price: number(self.price, "Price")?,
            spot: number(self.spot, "SpotPrice")?,
            region: text(self.region).map(normalize_region),
            zone: text(self.zone).map(str::to_string),
            local_disk_gb,
        })
    }
}

/// Vast writes regions as free text, `"Denmark, DK, EU"`: keep the country code.
fn normalize_region(region: &str) -> String {
    let parts: Vec<&str> = region.split(',').map(str::trim).collect();
    match parts.as_slice() {
        [_, code, _] if !code.is_empty() => code.to_string(),
        _ => region.to_string(),
    }
}

impl SkyRow {
    /// The per-GPU memory this row claims, in the cloud's own (sometimes wrong) units.
    pub(crate) fn claimed_memory_per_gpu(&self, cloud: &str, count: u32) -> Option<Bytes> {
        let value = number_after(&self.gpu_info, "SizeInMiB")?;
        if value <= 0.0 {
            return None;
        }
        Some(match cloud {
            // RunPod writes GB where MiB is promised.
            "runpod" => Bytes::from_gib(value),
            // Vast writes the total of all GPUs where the per-GPU size is promised.
            "vast" => Bytes::from_mib((value / f64::from(count.max(1))).round() as u64),
            _ => Bytes::from_mib(value.round() as u64),
        })
    }

    /// The `TotalGpuMemoryInMiB` this row claims, as written.
    pub(crate) fn claimed_total_memory(&self) -> Option<Bytes> {
        number_after(&self.gpu_info, "TotalGpuMemoryInMiB")
            .filter(|value| *value > 0.0)
            .map(|value| Bytes::from_mib(value.round() as u64))
    }

    /// The GPU name inside `GpuInfo` (`'Name': 'A100 PCIe'`), lower-cased.
    pub(crate) fn gpu_info_name(&self) -> String {
        let info = &self.gpu_info;
        let Some(start) = info.find("Name") else {
            return info.to_lowercase();
        };
        let rest = &info[start + 4..];
        let rest = rest.trim_start_matches(['\'', '"', ':', ' ']);
        rest.split(['\'', '"']).next().unwrap_or("").to_lowercase()
    }
}

fn number_after(text: &str, key: &str) -> Option<f64> {
    let start = text.find(key)? + key.len();
    let digits: String = text[start..]
        .chars()
        .skip_while(|c| !c.is_ascii_digit())
        .take_while(|c| c.is_ascii_digit() || *c == '.')
        .collect();
    digits.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_columns_by_name_whatever_their_order() {
        let text = "Region,InstanceType,Price,AcceleratorName,AcceleratorCount,vCPUs,MemoryGiB\n\
                    us-east-1,p3.2xlarge,3.06,V100,1,8,61\n";
        let rows = parse(text).unwrap();
        let row = rows[0].as_ref().unwrap();
        assert_eq!(row.instance_type, "p3.2xlarge");
        assert_eq!(row.price, Some(3.06));
        assert_eq!(row.region.as_deref(), Some("us-east-1"));
        assert_eq!(row.line, 2);
    }

    #[test]
    fn a_missing_column_fails_the_file() {
        let error = parse("InstanceType,Price\nx,1\n").unwrap_err();
        assert!(error.contains("AcceleratorName"), "{error}");
    }

    #[test]
    fn a_bad_number_fails_only_its_row() {
        let text = "InstanceType,AcceleratorName,AcceleratorCount,Price,Region\na,T4,1,abc,r\nb,T4,1,1.5,r\n";
        let rows = parse(text).unwrap();
        assert!(rows[0].as_ref().unwrap_err().contains("line 2"));
        assert!(rows[1].is_ok());
    }

    #[test]
    fn vast_regions_become_country_codes() {
        assert_eq!(normalize_region("Denmark, DK, EU"), "DK");
        assert_eq!(normalize_region(", CA, NA"), "CA");
        assert_eq!(normalize_region("us-east-1"), "us-east-1");
    }

    #[test]
    fn reads_the_gpu_name_and_memory() {
        let row = SkyRow {
            line: 1,
            instance_type: String::new(),
            accelerator_name: None,
            accelerator_count: None,
            vcpus: 0.0,
            memory_gib: 0.0,
            gpu_info: "{'Gpus': [{'Name': 'A100 PCIe', 'Count': 2, 'MemoryInfo': {'SizeInMiB': 80}}]}".into(),
            price: None,
            spot: None,
            region: None,
            zone: None,
            local_disk_gb: None,
        };
        assert_eq!(row.gpu_info_name(), "a100 pcie");
        assert_eq!(row.claimed_memory_per_gpu("runpod", 2), Some(Bytes::from_gib(80.0)));
    }
}

//! `nvidia-smi -q -x` snapshots: one `<nvidia_smi_log>` document per run, its `<timestamp>`
//! (`Wed May  1 12:00:00 2024`, the machine's clock, read as UTC) and one `<gpu>` element per
//! GPU with its name, UUID, memory use (`<fb_memory_usage>`), utilisation and power draw
//! (`<gpu_power_readings>`, `<power_readings>` before driver 530). Several snapshots may be
//! concatenated in one file.

use crate::sample::{GpuKey, MIB, Sample, TelemetryError};

/// The samples of one or more snapshots.
pub fn parse_nvidia_smi_xml(text: &str) -> Result<Vec<Sample>, TelemetryError> {
    let mut samples = Vec::new();
    let mut rest = text;
    while let Some(start) = rest.find("<nvidia_smi_log") {
        let end = rest[start..]
            .find("</nvidia_smi_log>")
            .map(|e| start + e + "</nvidia_smi_log>".len())
            .ok_or_else(|| line_error(text, rest, start, "a snapshot without its closing </nvidia_smi_log>"))?;
        samples.extend(snapshot(&rest[start..end]).map_err(|m| line_error(text, rest, start, &m))?);
        rest = &rest[end..];
    }
    if samples.is_empty() {
        return Err(TelemetryError::Empty);
    }
    Ok(samples)
}

/// An error at the line where the snapshot at `start` of `rest` begins in `text`.
fn line_error(text: &str, rest: &str, start: usize, message: &str) -> TelemetryError {
    let offset = text.len() - rest.len() + start;
    TelemetryError::Line {
        line: text[..offset].matches('\n').count() as u64 + 1,
        message: message.to_string(),
    }
}

fn snapshot(xml: &str) -> Result<Vec<Sample>, String> {
    let document = roxmltree::Document::parse(xml).map_err(|e| format!("not an nvidia-smi -q -x snapshot: {e}"))?;
    let root = document.root_element();
    let child_text = |node: roxmltree::Node, name: &str| {
        node.children()
            .find(|c| c.has_tag_name(name))
            .and_then(|c| c.text())
            .map(str::trim)
            .map(str::to_string)
    };
    let stamp = child_text(root, "timestamp").ok_or("no <timestamp>")?;
    let at = timestamp(&stamp).ok_or_else(|| format!("timestamp `{stamp}` is not understood"))?;
    let mut samples = Vec::new();
    for gpu in root.children().filter(|c| c.has_tag_name("gpu")) {
        let nested = |group: &str, name: &str| {
            gpu.children()
                .find(|c| c.has_tag_name(group))
                .and_then(|g| child_text(g, name))
        };
        let power = nested("gpu_power_readings", "power_draw").or_else(|| nested("power_readings", "power_draw"));
        samples.push(Sample {
            at,
            gpu: GpuKey(
                child_text(gpu, "uuid")
                    .or_else(|| gpu.attribute("id").map(str::to_string))
                    .ok_or("a <gpu> without uuid or id")?,
            ),
            name: child_text(gpu, "product_name").unwrap_or_default(),
            job: None,
            utilisation: number(nested("utilization", "gpu_util"))?.map(|p| (p / 100.0).min(1.0)),
            sm_active: None,
            tensor_active: None,
            memory_used_bytes: number(nested("fb_memory_usage", "used"))?.map(|m| (m * MIB as f64) as u64),
            memory_total_bytes: number(nested("fb_memory_usage", "total"))?.map(|m| (m * MIB as f64) as u64),
            power_watts: number(power)?,
        });
    }
    Ok(samples)
}

/// `93 %`, `81559 MiB`, `612.50 W`; `N/A` and `[Not Supported]` are absent.
fn number(text: Option<String>) -> Result<Option<f64>, String> {
    let Some(text) = text else { return Ok(None) };
    let value = text.split_whitespace().next().unwrap_or("");
    if value.is_empty() || value.starts_with('[') || value == "N/A" {
        return Ok(None);
    }
    value
        .parse::<f64>()
        .ok()
        .filter(|v| v.is_finite() && *v >= 0.0)
        .map(Some)
        .ok_or_else(|| format!("`{text}` is not a number"))
}

/// `Wed May  1 12:00:00 2024`.
fn timestamp(text: &str) -> Option<i64> {
    let single_spaced = text.split_whitespace().collect::<Vec<_>>().join(" ");
    let civil = jiff::civil::DateTime::strptime("%a %b %d %H:%M:%S %Y", &single_spaced).ok()?;
    civil
        .to_zoned(jiff::tz::TimeZone::UTC)
        .ok()
        .map(|z| z.timestamp().as_second())
}

#[cfg(test)]
mod tests {
    use super::*;

    const SNAPSHOT: &str = r#"<?xml version="1.0" ?>
<!DOCTYPE nvidia_smi_log SYSTEM "nvsmi_device_v12.dtd">
<nvidia_smi_log>
	<timestamp>Wed May  1 12:00:00 2024</timestamp>
	<driver_version>550.54.15</driver_version>
	<cuda_version>12.4</cuda_version>
	<attached_gpus>1</attached_gpus>
	<gpu id="00000000:18:00.0">
		<product_name>NVIDIA H100 80GB HBM3</product_name>
		<uuid>GPU-aaaa</uuid>
		<fb_memory_usage>
			<total>81559 MiB</total>
			<reserved>538 MiB</reserved>
			<used>70000 MiB</used>
			<free>11021 MiB</free>
		</fb_memory_usage>
		<utilization>
			<gpu_util>93 %</gpu_util>
			<memory_util>41 %</memory_util>
		</utilization>
		<gpu_power_readings>
			<power_draw>612.50 W</power_draw>
		</gpu_power_readings>
	</gpu>
</nvidia_smi_log>
"#;

    #[test]
    fn a_snapshot_becomes_one_sample_per_gpu() {
        let two = format!("{SNAPSHOT}{}", SNAPSHOT.replace("12:00:00", "12:05:00"));
        let samples = parse_nvidia_smi_xml(&two).unwrap();
        assert_eq!(samples.len(), 2);
        let s = &samples[0];
        assert_eq!(s.at, 1_714_564_800);
        assert_eq!(samples[1].at, 1_714_564_800 + 300);
        assert_eq!(s.utilisation, Some(0.93));
        assert_eq!(s.memory_used_bytes, Some(70000 * MIB));
        assert_eq!(s.power_watts, Some(612.5));
        assert_eq!(s.name, "NVIDIA H100 80GB HBM3");
    }

    #[test]
    fn damaged_snapshots_are_refused() {
        let truncated = &SNAPSHOT[..SNAPSHOT.len() / 2];
        assert!(
            parse_nvidia_smi_xml(truncated)
                .unwrap_err()
                .to_string()
                .contains("closing")
        );
        let garbled = SNAPSHOT.replace("<used>70000 MiB</used>", "<used>lots</used>");
        assert!(
            parse_nvidia_smi_xml(&garbled)
                .unwrap_err()
                .to_string()
                .contains("`lots`")
        );
        assert_eq!(parse_nvidia_smi_xml("no xml here"), Err(TelemetryError::Empty));
    }
}

//! One syntax for durations everywhere: `24h`, `90m`, `3d`, `1.5h`, `200ms`, `1e3h`; a bare
//! number is in the unit the knob states. The command line, job files and the API all read
//! durations through [`parse_duration`], and the two serde helpers take a JSON number (in the
//! stated unit) or such a string.

/// Longest duration any knob takes: a century.
pub const MAX_DURATION_SECONDS: f64 = 100.0 * 365.0 * 86400.0;

/// Seconds in `text`: a number and a unit (`ms`, `us`, `s`, `m`, `h`, `d`, `w` and their long
/// forms), or a bare number in `default_unit` seconds. Positive and at most a century.
pub fn parse_duration(text: &str, default_unit: f64) -> Result<f64, String> {
    let text = text.trim();
    let (number, unit) = text.split_at(number_prefix(text));
    let value: f64 = number
        .trim()
        .parse()
        .map_err(|_| format!("`{text}` is not a duration (e.g. 24h, 90m, 200ms)"))?;
    let scale = match unit.trim().to_lowercase().as_str() {
        "" => default_unit,
        "us" | "µs" => 1e-6,
        "ms" => 1e-3,
        "s" | "sec" => 1.0,
        "m" | "min" => 60.0,
        "h" | "hr" | "hours" => 3600.0,
        "d" | "days" => 86400.0,
        "w" | "weeks" => 7.0 * 86400.0,
        other => return Err(format!("unknown time unit `{other}` (use ms, s, m, h, d or w)")),
    };
    let seconds = value * scale;
    if seconds.is_nan() || seconds <= 0.0 {
        Err(format!("`{text}` must be a positive duration"))
    } else if seconds > MAX_DURATION_SECONDS {
        Err(format!("`{text}` is longer than any job (at most 100 years)"))
    } else {
        Ok(seconds)
    }
}

/// Length of the leading number of `text`, scientific notation included (`1e3h` → `1e3`).
fn number_prefix(text: &str) -> usize {
    let bytes = text.as_bytes();
    let digit_at = |i: usize| bytes.get(i).is_some_and(u8::is_ascii_digit);
    let mut end = 0;
    while let Some(&c) = bytes.get(end) {
        let sign = (c == b'-' || c == b'+') && (end == 0 || matches!(bytes[end - 1], b'e' | b'E'));
        // An exponent marker counts only where digits (or a sign and digits) follow it.
        let exponent = matches!(c, b'e' | b'E')
            && end > 0
            && (digit_at(end + 1) || (matches!(bytes.get(end + 1), Some(b'-' | b'+')) && digit_at(end + 2)));
        if c.is_ascii_digit() || c == b'.' || sign || exponent {
            end += 1;
        } else {
            break;
        }
    }
    end
}

/// An optional duration in `unit` seconds from a JSON number (in that unit) or a string with
/// a unit; the checks of the front end (sign, range) apply to numbers afterwards.
fn optional<'de, D: serde::Deserializer<'de>>(deserializer: D, unit: f64) -> Result<Option<f64>, D::Error> {
    use serde::Deserialize;
    #[derive(Deserialize)]
    #[serde(untagged)]
    enum Given {
        Number(f64),
        Text(String),
    }
    match Option::<Given>::deserialize(deserializer)? {
        None => Ok(None),
        Some(Given::Number(value)) => Ok(Some(value)),
        Some(Given::Text(text)) => parse_duration(&text, unit)
            .map(|seconds| Some(seconds / unit))
            .map_err(serde::de::Error::custom),
    }
}

/// `#[serde(deserialize_with = "gpuplan_model::duration::hours")]`: hours, or `"90m"`.
pub fn hours<'de, D: serde::Deserializer<'de>>(deserializer: D) -> Result<Option<f64>, D::Error> {
    optional(deserializer, 3600.0)
}

/// `#[serde(deserialize_with = "gpuplan_model::duration::seconds")]`: seconds, or `"5m"`.
pub fn seconds<'de, D: serde::Deserializer<'de>>(deserializer: D) -> Result<Option<f64>, D::Error> {
    optional(deserializer, 1.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_read_with_their_units() {
        assert_eq!(parse_duration("24h", 1.0), Ok(86400.0));
        assert_eq!(parse_duration("90m", 1.0), Ok(5400.0));
        assert_eq!(parse_duration("200ms", 1.0), Ok(0.2));
        assert_eq!(parse_duration("1e3h", 1.0), Ok(3.6e6));
        assert_eq!(parse_duration("36", 3600.0), Ok(129_600.0));
        for bad in ["", "soon", "-1h", "0s", "3 fortnights", "1000000w"] {
            assert!(parse_duration(bad, 1.0).is_err(), "{bad}");
        }
    }

    #[derive(Debug, serde::Deserialize)]
    struct Knobs {
        #[serde(default, deserialize_with = "hours")]
        deadline: Option<f64>,
        #[serde(default, deserialize_with = "seconds")]
        provision: Option<f64>,
    }

    #[test]
    fn json_takes_numbers_in_the_stated_unit_or_text_with_a_unit() {
        let read = |json: &str| serde_json::from_str::<Knobs>(json);
        let knobs = read(r#"{"deadline": "1h", "provision": "5m"}"#).unwrap();
        assert_eq!((knobs.deadline, knobs.provision), (Some(1.0), Some(300.0)));
        let knobs = read(r#"{"deadline": 36, "provision": 90}"#).unwrap();
        assert_eq!((knobs.deadline, knobs.provision), (Some(36.0), Some(90.0)));
        assert_eq!(read("{}").unwrap().deadline, None);
        assert!(read(r#"{"deadline": "later"}"#).is_err());
    }
}

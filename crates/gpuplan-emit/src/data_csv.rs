//! CSV that is data: the records of a JSON answer (its array, or the array of records an
//! answer object holds), one row each, with the raw values of the wire format. Nested objects
//! become dotted columns (`layout.tp`), lists of plain values are joined by `;`, lists of
//! objects are kept as JSON text. Units are in the column names the wire format already uses
//! (`memory_per_gpu_bytes`, `usd_per_hour`), never in the cells.

use serde_json::{Map, Value};

/// Columns that name a record, first wherever they appear (the rest follow in the wire
/// format's key order).
const LEADING_COLUMNS: [&str; 6] = ["id", "provider", "instance_type", "region", "gpu", "name"];

/// The member of an answer object that holds its records, in the order they are looked for.
const RECORD_MEMBERS: [&str; 4] = ["recommendations", "configurations", "offerings", "rows"];

/// The CSV of `answer`'s records; `None` when it holds no list of records.
pub fn data_csv(answer: &Value) -> Option<String> {
    let records = match answer {
        Value::Array(items) => items,
        Value::Object(map) => RECORD_MEMBERS
            .iter()
            .find_map(|m| map.get(*m).and_then(Value::as_array))?,
        _ => return None,
    };
    if records.is_empty() || !records.iter().all(Value::is_object) {
        return None;
    }
    let flat: Vec<Vec<(String, String)>> = records
        .iter()
        .map(|record| {
            let mut cells = Vec::new();
            if let Value::Object(map) = record {
                flatten("", map, &mut cells);
            }
            cells
        })
        .collect();
    let mut headers: Vec<String> = Vec::new();
    for cells in &flat {
        for (key, _) in cells {
            if !headers.contains(key) {
                headers.push(key.clone());
            }
        }
    }
    let rank = |h: &String| {
        LEADING_COLUMNS
            .iter()
            .position(|c| c == h)
            .unwrap_or(LEADING_COLUMNS.len())
    };
    headers.sort_by_key(rank);
    let mut writer = csv::WriterBuilder::new()
        .terminator(csv::Terminator::Any(b'\n'))
        .from_writer(Vec::new());
    // Writing to a Vec cannot fail.
    let _ = writer.write_record(&headers);
    for cells in &flat {
        let row = headers.iter().map(|h| {
            cells
                .iter()
                .find(|(k, _)| k == h)
                .map_or(String::new(), |(_, v)| v.clone())
        });
        let _ = writer.write_record(row);
    }
    String::from_utf8(writer.into_inner().unwrap_or_default()).ok()
}

fn flatten(prefix: &str, map: &Map<String, Value>, cells: &mut Vec<(String, String)>) {
    for (key, value) in map {
        let name = if prefix.is_empty() {
            key.clone()
        } else {
            format!("{prefix}.{key}")
        };
        match value {
            Value::Object(inner) => flatten(&name, inner, cells),
            Value::Array(items) if items.iter().all(|i| !i.is_object() && !i.is_array()) => {
                let joined: Vec<String> = items.iter().map(scalar).collect();
                cells.push((name, joined.join(";")));
            }
            Value::Array(_) => cells.push((name, value.to_string())),
            other => cells.push((name, scalar(other))),
        }
    }
}

fn scalar(value: &Value) -> String {
    match value {
        Value::Null => String::new(),
        Value::String(text) => text.clone(),
        other => other.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn records_become_rows_of_raw_values() {
        let answer = json!({"model": "m", "recommendations": [
            {"provider": "aws", "usd_per_hour": 98.32, "layout": {"tp": 8, "pp": 1}, "tags": ["cheapest", "pareto"], "region": null},
            {"provider": "gcp", "usd_per_hour": 88.0, "layout": {"tp": 4, "pp": 2}, "tags": [], "spot": true}
        ]});
        let csv = data_csv(&answer).unwrap();
        let lines: Vec<&str> = csv.lines().collect();
        // serde_json keeps keys sorted; the naming columns lead.
        assert_eq!(lines[0], "provider,region,layout.pp,layout.tp,tags,usd_per_hour,spot");
        assert_eq!(lines[1], "aws,,1,8,cheapest;pareto,98.32,");
        assert_eq!(lines[2], "gcp,,2,4,,88.0,true");
        assert_eq!(
            data_csv(&json!([{"id": "H100", "memory_gib": 80}])).unwrap(),
            "id,memory_gib\nH100,80\n"
        );
        assert!(data_csv(&json!({"total_usd": 3})).is_none());
        assert!(data_csv(&json!([])).is_none());
    }
}

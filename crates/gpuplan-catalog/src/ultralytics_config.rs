//! An Ultralytics model YAML (`yolov8.yaml`, `yolo11.yaml`, or a copy with its own `nc`), read
//! as JSON: its layers must be the stock detection layout of YOLOv8 or YOLO11, which the walk in
//! `gpuplan_model::YoloSpec` unrolls; its `nc`, `scales` and `scale` are read. A layout of other
//! layers is refused, naming the first that differs: its parameters and FLOPs would be guessed.
//!
//! The stock layouts are those of ultralytics/cfg/models/v8/yolov8.yaml and
//! ultralytics/cfg/models/11/yolo11.yaml (ultralytics/ultralytics, `[from, repeats, module,
//! args]` rows).

use crate::ModelConfigError;
use gpuplan_model::YoloSpec;
use serde_json::{Map, Value};

/// The layers of a stock layout, as `[from, repeats, module, args]` rows in JSON.
struct Layout {
    version: u64,
    file: &'static str,
    backbone: &'static str,
    head: &'static str,
}

const LAYOUTS: [Layout; 2] = [
    Layout {
        version: 8,
        file: "yolov8.yaml",
        backbone: r#"[[-1, 1, "Conv", [64, 3, 2]], [-1, 1, "Conv", [128, 3, 2]], [-1, 3, "C2f", [128, true]],
            [-1, 1, "Conv", [256, 3, 2]], [-1, 6, "C2f", [256, true]], [-1, 1, "Conv", [512, 3, 2]],
            [-1, 6, "C2f", [512, true]], [-1, 1, "Conv", [1024, 3, 2]], [-1, 3, "C2f", [1024, true]],
            [-1, 1, "SPPF", [1024, 5]]]"#,
        head: r#"[[-1, 1, "nn.Upsample", ["None", 2, "nearest"]], [[-1, 6], 1, "Concat", [1]], [-1, 3, "C2f", [512]],
            [-1, 1, "nn.Upsample", ["None", 2, "nearest"]], [[-1, 4], 1, "Concat", [1]], [-1, 3, "C2f", [256]],
            [-1, 1, "Conv", [256, 3, 2]], [[-1, 12], 1, "Concat", [1]], [-1, 3, "C2f", [512]],
            [-1, 1, "Conv", [512, 3, 2]], [[-1, 9], 1, "Concat", [1]], [-1, 3, "C2f", [1024]],
            [[15, 18, 21], 1, "Detect", ["nc"]]]"#,
    },
    Layout {
        version: 11,
        file: "yolo11.yaml",
        backbone: r#"[[-1, 1, "Conv", [64, 3, 2]], [-1, 1, "Conv", [128, 3, 2]], [-1, 2, "C3k2", [256, false, 0.25]],
            [-1, 1, "Conv", [256, 3, 2]], [-1, 2, "C3k2", [512, false, 0.25]], [-1, 1, "Conv", [512, 3, 2]],
            [-1, 2, "C3k2", [512, true]], [-1, 1, "Conv", [1024, 3, 2]], [-1, 2, "C3k2", [1024, true]],
            [-1, 1, "SPPF", [1024, 5]], [-1, 2, "C2PSA", [1024]]]"#,
        head: r#"[[-1, 1, "nn.Upsample", ["None", 2, "nearest"]], [[-1, 6], 1, "Concat", [1]], [-1, 2, "C3k2", [512, false]],
            [-1, 1, "nn.Upsample", ["None", 2, "nearest"]], [[-1, 4], 1, "Concat", [1]], [-1, 2, "C3k2", [256, false]],
            [-1, 1, "Conv", [256, 3, 2]], [[-1, 13], 1, "Concat", [1]], [-1, 2, "C3k2", [512, false]],
            [-1, 1, "Conv", [512, 3, 2]], [[-1, 10], 1, "Concat", [1]], [-1, 2, "C3k2", [1024, true]],
            [[16, 19, 22], 1, "Detect", ["nc"]]]"#,
    },
];

/// The image side Ultralytics trains and predicts at by default (`imgsz`).
pub const ULTRALYTICS_RESOLUTION: u64 = 640;

/// Most classes a config may name.
const MAX_CLASSES: u64 = 100_000;

/// Whether `config` is an Ultralytics model YAML: it lists `backbone` and `head` layers.
pub fn is_ultralytics_config(config: &Map<String, Value>) -> bool {
    config.get("backbone").is_some_and(Value::is_array) && config.get("head").is_some_and(Value::is_array)
}

/// The scale a model file's name gives, as Ultralytics reads it (`yolov8s.yaml` → `s`,
/// `yolo11x-custom.yaml` → `x`): the letter after `yolo`, an optional `v`, and the version digits.
pub fn ultralytics_scale_from_name(stem: &str) -> Option<char> {
    let lower = stem.to_ascii_lowercase();
    let rest = &lower[lower.find("yolo")? + 4..];
    let rest = rest.strip_prefix('v').unwrap_or(rest);
    let digits = rest.chars().take_while(char::is_ascii_digit).count();
    let letter = rest[digits..].chars().next()?;
    (digits > 0 && "nslmx".contains(letter)).then_some(letter)
}

/// The detector an Ultralytics model YAML describes: its version from its layers, its scale
/// (`scale`, or the one entry of `scales`), and its classes (`nc`).
pub fn parse_ultralytics_config(config: &Map<String, Value>) -> Result<YoloSpec, ModelConfigError> {
    let invalid = |field: &str, message: String| ModelConfigError::Invalid {
        field: field.to_string(),
        message,
    };
    let version = layout_version(config)?;
    let classes = config
        .get("nc")
        .and_then(Value::as_u64)
        .filter(|n| (1..=MAX_CLASSES).contains(n))
        .ok_or_else(|| invalid("nc", format!("expected the number of classes, 1 to {MAX_CLASSES}")))?;
    let scales = config
        .get("scales")
        .and_then(Value::as_object)
        .filter(|s| !s.is_empty())
        .ok_or_else(|| {
            invalid(
                "scales",
                "expected the scales' [depth, width, max_channels]".to_string(),
            )
        })?;
    let scale = match config.get("scale").and_then(Value::as_str) {
        Some(scale) => scale.to_string(),
        None if scales.len() == 1 => scales.keys().next().cloned().unwrap_or_default(),
        None => {
            return Err(invalid(
                "scale",
                format!(
                    "`scales` lists {}: say which with `scale`, or name the file after it as Ultralytics does (yolov8s.yaml)",
                    scales.keys().cloned().collect::<Vec<_>>().join(", ")
                ),
            ));
        }
    };
    let numbers = scales
        .get(&scale)
        .and_then(Value::as_array)
        .map(|values| values.iter().filter_map(Value::as_f64).collect::<Vec<f64>>())
        .ok_or_else(|| invalid("scale", format!("`{scale}` is not one of `scales`")))?;
    let [depth, width, max_channels] = numbers[..] else {
        return Err(invalid(
            &format!("scales.{scale}"),
            "expected [depth, width, max_channels]".to_string(),
        ));
    };
    let scale_ok = (0.0..=16.0).contains(&depth) && depth > 0.0 && width > 0.0 && width <= 16.0;
    if !scale_ok || !(8.0..=65_536.0).contains(&max_channels) {
        return Err(invalid(
            &format!("scales.{scale}"),
            format!("[{depth}, {width}, {max_channels}] is no scale a detector has"),
        ));
    }
    Ok(YoloSpec {
        version,
        depth,
        width,
        max_channels: max_channels as u64,
        classes,
    })
}

/// Which stock layout the config's layers are; else the first layer that differs from the
/// layout it follows longest.
fn layout_version(config: &Map<String, Value>) -> Result<u64, ModelConfigError> {
    let rows = |part: &str| config.get(part).and_then(Value::as_array).cloned().unwrap_or_default();
    let given: Vec<(String, Value)> = ["backbone", "head"]
        .into_iter()
        .flat_map(|part| {
            rows(part)
                .into_iter()
                .enumerate()
                .map(move |(i, row)| (format!("{part}[{i}]"), row))
        })
        .collect();
    let mut closest: Option<(usize, &Layout)> = None;
    for layout in &LAYOUTS {
        let stock: Vec<Value> = [layout.backbone, layout.head]
            .into_iter()
            .flat_map(|text| serde_json::from_str::<Vec<Value>>(text).unwrap_or_default())
            .collect();
        let same = given
            .iter()
            .zip(&stock)
            .take_while(|((_, row), want)| same_row(row, want))
            .count();
        if same == stock.len() && given.len() == stock.len() {
            return Ok(layout.version);
        }
        if closest.is_none_or(|(best, _)| same > best) {
            closest = Some((same, layout));
        }
    }
    let (same, layout) = closest.unwrap_or((0, &LAYOUTS[0]));
    let (field, row) = given
        .get(same)
        .map_or(("head".to_string(), "no layer".to_string()), |(field, row)| {
            (field.clone(), row.to_string())
        });
    Err(ModelConfigError::Invalid {
        field,
        message: format!(
            "{row} where the stock {} has its layer {}: only the stock YOLOv8 and YOLO11 detection layouts are walked (their own nc and scales are read)",
            layout.file, same
        ),
    })
}

/// Whether two layer rows are the same, numbers compared by value (`1` and `1.0` alike).
fn same_row(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => x.as_f64() == y.as_f64(),
        (Value::Array(x), Value::Array(y)) => x.len() == y.len() && x.iter().zip(y).all(|(p, q)| same_row(p, q)),
        _ => a == b,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stock(version: usize) -> Map<String, Value> {
        let layout = &LAYOUTS[version];
        let mut config = Map::new();
        config.insert("nc".into(), 80.into());
        config.insert(
            "scales".into(),
            serde_json::json!({"n": [0.33, 0.25, 1024], "s": [0.33, 0.5, 1024]}),
        );
        config.insert(
            "backbone".into(),
            serde_json::from_str(layout.backbone).unwrap_or_default(),
        );
        config.insert("head".into(), serde_json::from_str(layout.head).unwrap_or_default());
        config
    }

    #[test]
    fn the_stock_layouts_are_recognised_and_their_scale_chosen() {
        let mut config = stock(1);
        assert!(is_ultralytics_config(&config));
        let error = parse_ultralytics_config(&config).unwrap_err().to_string();
        assert!(error.contains("`scales` lists n, s"), "{error}");
        config.insert("scale".into(), "s".into());
        let spec = parse_ultralytics_config(&config).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!((spec.version, spec.width, spec.classes), (11, 0.5, 80));
    }

    #[test]
    fn another_layout_is_refused_naming_its_first_different_layer() {
        let mut config = stock(0);
        config.insert("scale".into(), "n".into());
        if let Some(Value::Array(head)) = config.get_mut("head") {
            head[2] = serde_json::json!([-1, 3, "C3", [512]]);
        }
        let error = parse_ultralytics_config(&config).unwrap_err().to_string();
        assert!(error.starts_with("field `head[2]`"), "{error}");
        assert!(error.contains("yolov8.yaml has its layer 12"), "{error}");
    }

    #[test]
    fn a_files_name_gives_its_scale_as_ultralytics_reads_it() {
        assert_eq!(ultralytics_scale_from_name("yolov8s"), Some('s'));
        assert_eq!(ultralytics_scale_from_name("yolo11x-custom"), Some('x'));
        assert_eq!(ultralytics_scale_from_name("my-yolov8m-3classes"), Some('m'));
        assert_eq!(ultralytics_scale_from_name("yolov8"), None);
        assert_eq!(ultralytics_scale_from_name("data"), None);
    }
}

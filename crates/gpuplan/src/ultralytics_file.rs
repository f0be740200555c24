//! An Ultralytics model YAML as the command line names it (`--model yolov8s-custom.yaml`): read
//! into the JSON config the model reader walks, with the scale its file name gives where the file
//! does not say (as Ultralytics' own `guess_model_scale` reads `yolov8s.yaml`).

use crate::Error;

/// The config of the Ultralytics model YAML `text`, from a file whose name without its
/// extension is `stem`.
pub fn ultralytics_model_config(text: &str, stem: &str) -> Result<serde_json::Value, Error> {
    let refuse = |why: String| {
        Error::invalid(
            format!("--model {stem}: {why}"),
            Some("give an Ultralytics model YAML (yolov8.yaml, yolo11.yaml or a copy with its own nc)".to_string()),
        )
    };
    let mut config: serde_json::Value = serde_yaml_ng::from_str(text).map_err(|e| refuse(format!("not YAML: {e}")))?;
    let map = config
        .as_object_mut()
        .filter(|map| gpuplan_catalog::is_ultralytics_config(map))
        .ok_or_else(|| refuse("no `backbone` and `head` layers: not an Ultralytics model YAML".to_string()))?;
    if !map.contains_key("scale") {
        if let Some(scale) = gpuplan_catalog::ultralytics_scale_from_name(stem) {
            map.insert("scale".to_string(), scale.to_string().into());
        }
    }
    Ok(config)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_files_name_gives_the_scale_and_other_yaml_is_refused() {
        let text = "nc: 3\nscales:\n  n: [0.33, 0.25, 1024]\n  s: [0.33, 0.50, 1024]\nbackbone: []\nhead: []\n";
        let config = ultralytics_model_config(text, "yolov8s-parts").unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(config["scale"], "s");
        assert_eq!(config["nc"], 3);
        let error = ultralytics_model_config("model: llama\n", "job").unwrap_err();
        assert!(error.to_string().contains("not an Ultralytics model YAML"), "{error}");
    }
}

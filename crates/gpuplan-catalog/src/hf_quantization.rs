//! A config.json's `quantization_config`: the format its checkpoint stores the weights in
//! (Transformers' quantizers: AutoAWQ, GPTQ, bitsandbytes, FBGEMM/fine-grained FP8, MXFP4,
//! llm-compressor's compressed-tensors and NVIDIA ModelOpt), so that a quantised model is
//! estimated at the precision it is served in rather than at 16 bits.

use crate::hf_config::ModelConfigError;
use gpuplan_model::{CheckpointQuantization, Fp4Format, Precision, WeightKernel};
use serde_json::{Map, Value};

/// The checkpoint's weight format, or `None` when the config has no `quantization_config`.
pub(crate) fn checkpoint_quantization(
    config: &Map<String, Value>,
) -> Result<Option<CheckpointQuantization>, ModelConfigError> {
    let Some(q) = config.get("quantization_config").filter(|v| !v.is_null()) else {
        return Ok(None);
    };
    let Some(q) = q.as_object() else {
        return Err(invalid("quantization_config", "expected an object"));
    };
    let method = q
        .get("quant_method")
        .and_then(Value::as_str)
        .ok_or_else(|| invalid("quantization_config.quant_method", "missing"))?
        .to_lowercase();
    let (precision, kernel) = match method.as_str() {
        "awq" | "gptq" => (Some(integer_bits(q)?), None),
        "bitsandbytes" => bitsandbytes(q)?,
        "fp8" | "fbgemm_fp8" => (Some(Precision::Fp8), None),
        "mxfp4" => (Some(Precision::Fp4), None),
        "modelopt" => (modelopt(q), None),
        "compressed-tensors" => (compressed_tensors(q), None),
        // A llama.cpp GGUF file, read by `gguf_config_text`, which names the precision.
        "gguf" => (
            q.get("precision").and_then(Value::as_str).and_then(|p| p.parse().ok()),
            None,
        ),
        _ => (None, None),
    };
    // A GGUF file names its llama.cpp format (`gguf Q4_K_M`).
    let method = match q.get("file_type").and_then(Value::as_str) {
        Some(format) if method == "gguf" => format!("gguf {format}"),
        _ => method,
    };
    let bits_per_weight = q
        .get("bits_per_weight")
        .and_then(Value::as_f64)
        .filter(|bits| (1.0..=32.0).contains(bits));
    let fp4_format = (precision == Some(Precision::Fp4))
        .then(|| fp4_format(&method, q))
        .flatten();
    Ok(Some(CheckpointQuantization {
        method,
        precision,
        kernel,
        bits_per_weight,
        fp4_format,
        unquantized_attention: keeps_attention_unquantized(q),
    }))
}

/// Whether the modules the config keeps out of quantisation include whole attention layers:
/// Transformers' `modules_to_not_convert` (gpt-oss: `model.layers.*.self_attn`),
/// compressed-tensors' `ignore` (`re:.*self_attn.*`) and ModelOpt's `exclude_modules`, by
/// name; a list that names single projections (`self_attn.q_proj`) does not count.
fn keeps_attention_unquantized(q: &Map<String, Value>) -> bool {
    ["modules_to_not_convert", "ignore", "exclude_modules"]
        .iter()
        .filter_map(|key| q.get(*key).and_then(Value::as_array))
        .flatten()
        .filter_map(Value::as_str)
        .any(|module| module.trim_end_matches(['*', '.']).ends_with("self_attn"))
}

/// How a 4-bit float checkpoint stores its weights, where the config says: the `mxfp4` method
/// (gpt-oss), ModelOpt's `quant_algo` (NVFP4 or MXFP4), or compressed-tensors' weight group
/// size (16 with FP8 scales is NVFP4, 32 is MXFP4).
fn fp4_format(method: &str, q: &Map<String, Value>) -> Option<Fp4Format> {
    match method {
        "mxfp4" => Some(Fp4Format::Mxfp4),
        "modelopt" => match modelopt_algo(q)?.as_str() {
            "NVFP4" => Some(Fp4Format::Nvfp4),
            "MXFP4" => Some(Fp4Format::Mxfp4),
            _ => None,
        },
        "compressed-tensors" => match compressed_weights(q)?.get("group_size").and_then(Value::as_u64)? {
            16 => Some(Fp4Format::Nvfp4),
            32 => Some(Fp4Format::Mxfp4),
            _ => None,
        },
        _ => None,
    }
}

fn invalid(field: &str, message: &str) -> ModelConfigError {
    ModelConfigError::Invalid {
        field: field.to_string(),
        message: message.to_string(),
    }
}

/// AWQ and GPTQ store 4- or 8-bit integer weights (`bits`, 4 when left out).
fn integer_bits(q: &Map<String, Value>) -> Result<Precision, ModelConfigError> {
    match q.get("bits").and_then(Value::as_u64).unwrap_or(4) {
        4 => Ok(Precision::Int4),
        8 => Ok(Precision::Int8),
        other => Err(invalid(
            "quantization_config.bits",
            &format!("{other}-bit weights are not modelled (4 or 8)"),
        )),
    }
}

/// bitsandbytes quantises on load, 4-bit (NF4 or FP4, both run by its own kernel) or 8-bit
/// (LLM.int8()).
fn bitsandbytes(q: &Map<String, Value>) -> Result<(Option<Precision>, Option<WeightKernel>), ModelConfigError> {
    let on = |key: &str| q.get(key).and_then(Value::as_bool).unwrap_or(false);
    if on("load_in_4bit") {
        Ok((Some(Precision::Int4), Some(WeightKernel::BnbNf4)))
    } else if on("load_in_8bit") {
        Ok((Some(Precision::Int8), Some(WeightKernel::BnbInt8)))
    } else {
        Err(invalid(
            "quantization_config",
            "bitsandbytes without load_in_4bit or load_in_8bit",
        ))
    }
}

/// NVIDIA ModelOpt's `quant_algo`: FP8, NVFP4, W4A16 AWQ, W8A8 SmoothQuant.
fn modelopt(q: &Map<String, Value>) -> Option<Precision> {
    match modelopt_algo(q)?.as_str() {
        "FP8" | "FP8_PER_CHANNEL_PER_TOKEN" | "FP8_BLOCK_SCALES" => Some(Precision::Fp8),
        "NVFP4" | "MXFP4" => Some(Precision::Fp4),
        "W4A16_AWQ" | "W4A8_AWQ" | "INT4_AWQ" => Some(Precision::Int4),
        "W8A8_SQ_PER_CHANNEL" | "INT8_SQ" | "INT8" => Some(Precision::Int8),
        _ => None,
    }
}

/// ModelOpt's `quant_algo`, upper-cased, at the top of the config or under `quantization`.
fn modelopt_algo(q: &Map<String, Value>) -> Option<String> {
    Some(
        q.get("quant_algo")
            .or_else(|| q.get("quantization").and_then(|inner| inner.get("quant_algo")))
            .and_then(Value::as_str)?
            .to_uppercase(),
    )
}

/// The weights' scheme of compressed-tensors' first scheme group.
fn compressed_weights(q: &Map<String, Value>) -> Option<&Value> {
    let groups = q.get("config_groups")?.as_object()?;
    groups.values().find_map(|group| group.get("weights"))
}

/// compressed-tensors (llm-compressor): the weights' `num_bits` and `type` of its first
/// scheme group.
fn compressed_tensors(q: &Map<String, Value>) -> Option<Precision> {
    let weights = compressed_weights(q)?;
    let bits = weights.get("num_bits").and_then(Value::as_u64)?;
    let float = weights.get("type").and_then(Value::as_str) == Some("float");
    match (bits, float) {
        (8, true) => Some(Precision::Fp8),
        (8, false) => Some(Precision::Int8),
        (4, true) => Some(Precision::Fp4),
        (4, false) => Some(Precision::Int4),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(json: &str) -> Option<CheckpointQuantization> {
        let config: Map<String, Value> = serde_json::from_str(json).unwrap();
        checkpoint_quantization(&config).unwrap()
    }

    #[test]
    fn each_quantizer_names_its_weight_format() {
        let precision = |json: &str| read(json).and_then(|q| q.precision);
        // As in TheBloke's and Qwen's AWQ/GPTQ repositories.
        assert_eq!(
            precision(r#"{"quantization_config": {"quant_method": "awq", "bits": 4, "group_size": 128}}"#),
            Some(Precision::Int4)
        );
        assert_eq!(
            precision(r#"{"quantization_config": {"quant_method": "gptq", "bits": 8}}"#),
            Some(Precision::Int8)
        );
        let nf4 = read(r#"{"quantization_config": {"quant_method": "bitsandbytes", "load_in_4bit": true, "bnb_4bit_quant_type": "nf4"}}"#).unwrap();
        assert_eq!(
            (nf4.precision, nf4.kernel),
            (Some(Precision::Int4), Some(WeightKernel::BnbNf4))
        );
        // DeepSeek-V3's block-wise FP8 and gpt-oss's MXFP4.
        assert_eq!(
            precision(r#"{"quantization_config": {"quant_method": "fp8", "weight_block_size": [128, 128]}}"#),
            Some(Precision::Fp8)
        );
        assert_eq!(
            precision(r#"{"quantization_config": {"quant_method": "mxfp4"}}"#),
            Some(Precision::Fp4)
        );
        assert_eq!(
            precision(r#"{"quantization_config": {"quant_method": "modelopt", "quant_algo": "NVFP4"}}"#),
            Some(Precision::Fp4)
        );
        assert_eq!(
            precision(
                r#"{"quantization_config": {"quant_method": "compressed-tensors", "config_groups": {"group_0": {"weights": {"num_bits": 8, "type": "float"}}}}}"#
            ),
            Some(Precision::Fp8)
        );
        // A method not modelled is kept by name, to be refused where a precision is needed.
        let hqq = read(r#"{"quantization_config": {"quant_method": "hqq"}}"#).unwrap();
        assert_eq!((hqq.method.as_str(), hqq.precision), ("hqq", None));
        assert_eq!(read(r#"{"model_type": "llama"}"#), None);
    }

    #[test]
    fn what_cannot_be_read_is_refused() {
        let error = |json: &str| {
            let config: Map<String, Value> = serde_json::from_str(json).unwrap();
            checkpoint_quantization(&config).unwrap_err().to_string()
        };
        assert!(error(r#"{"quantization_config": {"quant_method": "gptq", "bits": 3}}"#).contains("3-bit"));
        assert!(error(r#"{"quantization_config": {"bits": 4}}"#).contains("quant_method"));
        assert!(error(r#"{"quantization_config": {"quant_method": "bitsandbytes"}}"#).contains("load_in_4bit"));
    }

    /// A config that keeps whole attention layers out of quantisation says so, whichever
    /// quantizer's list names them; one that names single projections does not.
    #[test]
    fn a_checkpoint_that_keeps_its_attention_unquantized_says_so() {
        let keeps = |json: &str| read(json).unwrap().unquantized_attention;
        assert!(keeps(
            r#"{"quantization_config": {"quant_method": "mxfp4", "modules_to_not_convert": ["model.layers.*.self_attn", "model.layers.*.mlp.router", "lm_head"]}}"#
        ));
        assert!(keeps(
            r#"{"quantization_config": {"quant_method": "compressed-tensors", "ignore": ["lm_head", "re:.*self_attn.*"]}}"#
        ));
        assert!(!keeps(
            r#"{"quantization_config": {"quant_method": "modelopt", "exclude_modules": ["model.layers.0.self_attn.q_proj"]}}"#
        ));
        assert!(!keeps(r#"{"quantization_config": {"quant_method": "fp8"}}"#));
    }

    /// A 4-bit float checkpoint keeps the format its config names, which sets its bytes:
    /// ModelOpt's NVFP4 and MXFP4, the `mxfp4` method, compressed-tensors' group of 16 or 32;
    /// a config that does not say leaves it to the GPU.
    #[test]
    fn four_bit_float_checkpoints_name_their_format() {
        let format = |json: &str| read(json).unwrap().fp4_format;
        let modelopt = |algo: &str| {
            format(&format!(
                r#"{{"quantization_config": {{"quant_method": "modelopt", "quant_algo": "{algo}"}}}}"#
            ))
        };
        assert_eq!(modelopt("NVFP4"), Some(Fp4Format::Nvfp4));
        assert_eq!(modelopt("MXFP4"), Some(Fp4Format::Mxfp4));
        assert_eq!(modelopt("FP8"), None);
        assert_eq!(
            format(r#"{"quantization_config": {"quant_method": "mxfp4"}}"#),
            Some(Fp4Format::Mxfp4)
        );
        let compressed = |group: u64| {
            format(&format!(
                r#"{{"quantization_config": {{"quant_method": "compressed-tensors", "config_groups": {{"group_0": {{"weights": {{"num_bits": 4, "type": "float", "group_size": {group}}}}}}}}}}}"#
            ))
        };
        assert_eq!(compressed(16), Some(Fp4Format::Nvfp4));
        assert_eq!(compressed(32), Some(Fp4Format::Mxfp4));
        assert_eq!(compressed(128), None);
    }
}

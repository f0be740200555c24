//! A llama.cpp GGUF file's metadata (the GGUF specification, ggml-org/ggml `docs/gguf.md`):
//! the architecture's sizes and the file's weight format, turned into the Hugging Face config
//! the parser reads, with the format as its `quantization_config`. Only the header is read;
//! the tensors are never touched.

use serde_json::{Map, Value, json};

/// Why a file is not a GGUF gpuplan can read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum GgufError {
    #[error("not a GGUF file (no `GGUF` magic)")]
    NotGguf,
    #[error("GGUF version {0} is not read (versions 2 and 3 are)")]
    Version(u32),
    #[error("the header ends early (a truncated file, or metadata past the part read)")]
    Truncated,
    #[error("metadata value type {0} is not in the GGUF specification")]
    ValueType(u32),
    #[error("metadata arrays nested deeper than any llama.cpp writes")]
    Nested,
    #[error("metadata `{0}` is missing")]
    Missing(String),
    #[error("architecture `{0}` is not read (llama, mistral, qwen2, qwen3, qwen2moe, qwen3moe, gemma, gemma2, phi3)")]
    Architecture(String),
}

/// Reads the header of a GGUF file (its first bytes: metadata precedes the tensors) into the
/// text of an equivalent config.json.
pub fn gguf_config_text(bytes: &[u8]) -> Result<String, GgufError> {
    let metadata = read_metadata(bytes)?;
    Ok(Value::Object(config(&metadata)?).to_string())
}

/// A metadata value, as far as sizes go: numbers, strings, and arrays by their length.
#[derive(Debug, Clone, PartialEq)]
enum Meta {
    Number(f64),
    Text(String),
    Array(u64),
    Flag(bool),
}

struct Reader<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl Reader<'_> {
    fn take(&mut self, n: usize) -> Result<&[u8], GgufError> {
        let end = self.at.checked_add(n).ok_or(GgufError::Truncated)?;
        let slice = self.bytes.get(self.at..end).ok_or(GgufError::Truncated)?;
        self.at = end;
        Ok(slice)
    }

    fn u32(&mut self) -> Result<u32, GgufError> {
        Ok(u32::from_le_bytes(
            self.take(4)?.try_into().map_err(|_| GgufError::Truncated)?,
        ))
    }

    fn u64(&mut self) -> Result<u64, GgufError> {
        Ok(u64::from_le_bytes(
            self.take(8)?.try_into().map_err(|_| GgufError::Truncated)?,
        ))
    }

    fn string(&mut self) -> Result<String, GgufError> {
        let len = usize::try_from(self.u64()?).map_err(|_| GgufError::Truncated)?;
        Ok(String::from_utf8_lossy(self.take(len)?).into_owned())
    }

    /// A value of GGUF type `kind` (0–12); arrays nest at most `depth` deep (the format
    /// allows arrays of arrays; a file that nests them without end would exhaust the stack).
    fn value(&mut self, kind: u32, depth: u32) -> Result<Meta, GgufError> {
        let number = |bytes: &[u8]| -> f64 {
            match kind {
                0 => f64::from(bytes[0]),
                1 => f64::from(bytes[0] as i8),
                2 => f64::from(u16::from_le_bytes([bytes[0], bytes[1]])),
                3 => f64::from(i16::from_le_bytes([bytes[0], bytes[1]])),
                4 => f64::from(u32::from_le_bytes([bytes[0], bytes[1], bytes[2], bytes[3]])),
                5 => f64::from(i32::from_le_bytes([bytes[0], bytes[1], bytes[2], bytes[3]])),
                6 => f64::from(f32::from_le_bytes([bytes[0], bytes[1], bytes[2], bytes[3]])),
                10 => u64::from_le_bytes(bytes.try_into().unwrap_or([0; 8])) as f64,
                11 => i64::from_le_bytes(bytes.try_into().unwrap_or([0; 8])) as f64,
                _ => f64::from_le_bytes(bytes.try_into().unwrap_or([0; 8])),
            }
        };
        match kind {
            0 | 1 => Ok(Meta::Number(number(self.take(1)?))),
            2 | 3 => Ok(Meta::Number(number(self.take(2)?))),
            4..=6 => Ok(Meta::Number(number(self.take(4)?))),
            7 => Ok(Meta::Flag(self.take(1)?[0] != 0)),
            8 => Ok(Meta::Text(self.string()?)),
            9 if depth == 0 => Err(GgufError::Nested),
            9 => {
                let inner = self.u32()?;
                let count = self.u64()?;
                for _ in 0..count {
                    self.value(inner, depth - 1)?;
                }
                Ok(Meta::Array(count))
            }
            10..=12 => Ok(Meta::Number(number(self.take(8)?))),
            other => Err(GgufError::ValueType(other)),
        }
    }
}

/// Arrays of arrays read at most this deep (llama.cpp writes none deeper than one).
const MAX_ARRAY_DEPTH: u32 = 4;

fn read_metadata(bytes: &[u8]) -> Result<Map<String, Value>, GgufError> {
    let mut r = Reader { bytes, at: 0 };
    if r.take(4).map_err(|_| GgufError::NotGguf)? != b"GGUF" {
        return Err(GgufError::NotGguf);
    }
    let version = r.u32()?;
    if !(2..=3).contains(&version) {
        return Err(GgufError::Version(version));
    }
    let _tensors = r.u64()?;
    let entries = r.u64()?;
    let mut metadata = Map::new();
    for _ in 0..entries {
        let key = r.string()?;
        let kind = r.u32()?;
        let value = match r.value(kind, MAX_ARRAY_DEPTH)? {
            Meta::Number(n) => json!(n),
            Meta::Text(t) => json!(t),
            Meta::Array(n) => json!({ "length": n }),
            Meta::Flag(b) => json!(b),
        };
        metadata.insert(key, value);
    }
    Ok(metadata)
}

/// GGUF architectures and the Hugging Face `model_type` with the same shape.
const ARCHITECTURES: [(&str, &str); 9] = [
    ("llama", "llama"),
    ("mistral", "mistral"),
    ("qwen2", "qwen2"),
    ("qwen3", "qwen3"),
    ("qwen2moe", "qwen2_moe"),
    ("qwen3moe", "qwen3_moe"),
    ("gemma", "gemma"),
    ("gemma2", "gemma2"),
    ("phi3", "phi3"),
];

/// llama.cpp's `general.file_type` (the `LLAMA_FTYPE_MOSTLY_*` enumeration) as a name, the
/// precision gpuplan runs it at (2–4-bit formats as int4, 5–8-bit ones as int8) and the bits a
/// weight the whole file holds. The bits: llama.cpp's quantize table for Llama-3.1-8B
/// (`tools/quantize/README.md`: Q4_K_M 4.8944, Q8_0 8.5008 …), which counts the tensors each
/// mix keeps wider; where it gives none, the sizes `llama-quantize --help` lists for
/// Llama-3-8B (8.03 B parameters: Q4_0 4.34 GiB is 4.64 bits, Q3_K_M 3.74 GiB 4.00); and for
/// the IQ formats not listed, the bits of the 4-bit K mix, so memory errs high.
fn file_type(code: u64) -> (&'static str, &'static str, f64) {
    match code {
        0 => ("F32", "fp32", 32.0),
        1 => ("F16", "fp16", 16.0005),
        32 => ("BF16", "bf16", 16.0005),
        7 => ("Q8_0", "int8", 8.5008),
        8 => ("Q5_0", "int8", 5.57),
        9 => ("Q5_1", "int8", 6.04),
        16 => ("Q5_K_S", "int8", 5.5704),
        17 => ("Q5_K_M", "int8", 5.7036),
        18 => ("Q6_K", "int8", 6.5633),
        2 => ("Q4_0", "int4", 4.64),
        3 => ("Q4_1", "int4", 5.11),
        14 => ("Q4_K_S", "int4", 4.6672),
        15 => ("Q4_K_M", "int4", 4.8944),
        10 => ("Q2_K", "int4", 3.1593),
        11 => ("Q3_K_S", "int4", 3.6429),
        12 => ("Q3_K_M", "int4", 4.00),
        13 => ("Q3_K_L", "int4", 4.2979),
        _ => ("IQ or another", "int4", 4.8944),
    }
}

fn config(m: &Map<String, Value>) -> Result<Map<String, Value>, GgufError> {
    let text = |key: &str| m.get(key).and_then(Value::as_str).map(str::to_string);
    let number = |key: &str| m.get(key).and_then(Value::as_f64).map(|v| v as u64);
    let arch = text("general.architecture").ok_or_else(|| GgufError::Missing("general.architecture".into()))?;
    let model_type = ARCHITECTURES
        .iter()
        .find(|(name, _)| *name == arch)
        .map(|(_, t)| *t)
        .ok_or_else(|| GgufError::Architecture(arch.clone()))?;
    let need = |suffix: &str| {
        let key = format!("{arch}.{suffix}");
        number(&key).ok_or(GgufError::Missing(key))
    };
    let hidden = need("embedding_length")?;
    let heads = need("attention.head_count")?;
    let vocab = number(&format!("{arch}.vocab_size"))
        .or_else(|| m.get("tokenizer.ggml.tokens").and_then(|t| t["length"].as_u64()))
        .ok_or_else(|| GgufError::Missing("tokenizer.ggml.tokens".into()))?;
    let mut config = Map::new();
    config.insert("model_type".into(), json!(model_type));
    config.insert("hidden_size".into(), json!(hidden));
    config.insert("num_hidden_layers".into(), json!(need("block_count")?));
    config.insert("num_attention_heads".into(), json!(heads));
    config.insert(
        "num_key_value_heads".into(),
        json!(number(&format!("{arch}.attention.head_count_kv")).unwrap_or(heads)),
    );
    if let Some(head_dim) = number(&format!("{arch}.attention.key_length")) {
        config.insert("head_dim".into(), json!(head_dim));
    }
    config.insert("intermediate_size".into(), json!(need("feed_forward_length")?));
    config.insert("vocab_size".into(), json!(vocab));
    if let Some(context) = number(&format!("{arch}.context_length")) {
        config.insert("max_position_embeddings".into(), json!(context));
    }
    // No separate output matrix in the file means the embeddings are tied; the header alone
    // does not say, so the usual for the family is kept (Gemma ties, the rest do not).
    config.insert("tie_word_embeddings".into(), json!(model_type.starts_with("gemma")));
    if let (Some(experts), Some(used)) = (
        number(&format!("{arch}.expert_count")),
        number(&format!("{arch}.expert_used_count")),
    ) {
        config.insert("num_experts".into(), json!(experts));
        config.insert("num_experts_per_tok".into(), json!(used));
        if let Some(ffn) = number(&format!("{arch}.expert_feed_forward_length")) {
            config.insert("moe_intermediate_size".into(), json!(ffn));
        }
    }
    let (name, precision, bits) = file_type(number("general.file_type").unwrap_or(1));
    config.insert(
        "quantization_config".into(),
        json!({"quant_method": "gguf", "file_type": name, "precision": precision, "bits_per_weight": bits}),
    );
    Ok(config)
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// A GGUF header with `entries` (key, value) written as the specification lays them out.
    pub(crate) fn header(entries: &[(&str, Value)]) -> Vec<u8> {
        let mut out = b"GGUF".to_vec();
        out.extend(3u32.to_le_bytes());
        out.extend(0u64.to_le_bytes());
        out.extend((entries.len() as u64).to_le_bytes());
        let string = |out: &mut Vec<u8>, s: &str| {
            out.extend((s.len() as u64).to_le_bytes());
            out.extend(s.as_bytes());
        };
        for (key, value) in entries {
            string(&mut out, key);
            match value {
                Value::String(s) => {
                    out.extend(8u32.to_le_bytes());
                    string(&mut out, s);
                }
                Value::Array(items) => {
                    out.extend(9u32.to_le_bytes());
                    out.extend(8u32.to_le_bytes());
                    out.extend((items.len() as u64).to_le_bytes());
                    for item in items {
                        string(&mut out, item.as_str().unwrap_or(""));
                    }
                }
                other => {
                    out.extend(4u32.to_le_bytes());
                    out.extend((other.as_u64().unwrap_or(0) as u32).to_le_bytes());
                }
            }
        }
        out
    }

    /// Llama 3.1 8B as llama.cpp's converter writes it, in Q4_K_M.
    pub(crate) fn llama_8b_q4() -> Vec<u8> {
        let tokens: Vec<Value> = (0..128_256).map(|_| json!("t")).collect();
        header(&[
            ("general.architecture", json!("llama")),
            ("general.file_type", json!(15)),
            ("llama.block_count", json!(32)),
            ("llama.context_length", json!(131_072)),
            ("llama.embedding_length", json!(4096)),
            ("llama.feed_forward_length", json!(14_336)),
            ("llama.attention.head_count", json!(32)),
            ("llama.attention.head_count_kv", json!(8)),
            ("tokenizer.ggml.tokens", Value::Array(tokens)),
        ])
    }

    #[test]
    fn a_gguf_header_becomes_the_config_it_was_converted_from() {
        let text = gguf_config_text(&llama_8b_q4()).unwrap();
        let config: Value = serde_json::from_str(&text).unwrap();
        assert_eq!(config["model_type"], "llama");
        assert_eq!(config["num_key_value_heads"], 8);
        assert_eq!(config["vocab_size"], 128_256);
        assert_eq!(config["quantization_config"]["file_type"], "Q4_K_M");
        let spec = crate::parse_hf_config_text(&text).unwrap();
        assert_eq!(
            spec.quantization.unwrap().precision,
            Some(gpuplan_model::Precision::Int4)
        );
    }

    #[test]
    fn what_is_not_a_readable_gguf_says_why() {
        assert_eq!(gguf_config_text(b"{\"model_type\": 1}"), Err(GgufError::NotGguf));
        let mut truncated = llama_8b_q4();
        truncated.truncate(200);
        assert_eq!(gguf_config_text(&truncated), Err(GgufError::Truncated));
        let falcon = header(&[("general.architecture", json!("falcon"))]);
        assert!(matches!(gguf_config_text(&falcon), Err(GgufError::Architecture(_))));
    }
}

/// A workload the estimators cannot evaluate, with what to change.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum EstimateError {
    #[error("{what} must be positive")]
    NotPositive { what: &'static str },
    #[error("tensor parallel degree {tp} does not divide the {heads} attention heads")]
    TensorParallelHeads { tp: u32, heads: u64 },
    #[error("tensor parallel degree {tp} does not divide the {kv_heads} key/value heads")]
    TensorParallelKvHeads { tp: u32, kv_heads: u64 },
    #[error("pipeline parallel degree {pp} is more than the {layers} layers")]
    PipelineTooDeep { pp: u32, layers: u64 },
    #[error("the layout uses {layout} GPUs but {gpus} were given")]
    LayoutMismatch { layout: u32, gpus: u32 },
    #[error("global batch {batch} is not a multiple of micro-batch {micro_batch} × {dp} data-parallel replicas")]
    BatchNotDivisible { batch: u64, micro_batch: u64, dp: u32 },
    #[error("{accelerator} has no published {precision} throughput")]
    PrecisionUnsupported { accelerator: String, precision: String },
    /// The catalog lacks a figure the estimate needs: it is unknown, not zero or infinite.
    #[error("the catalog has no {what} for {accelerator}, which this estimate needs")]
    SpecMissing { accelerator: String, what: &'static str },
    #[error("{what} is out of range: {value}")]
    OutOfRange { what: &'static str, value: String },
    #[error("{task} is not available for {model}: {why}")]
    Unsupported { task: String, model: String, why: String },
}

impl EstimateError {
    /// What to change, where the fix is clear.
    pub fn hint(&self) -> Option<String> {
        match self {
            EstimateError::TensorParallelHeads { heads, .. }
            | EstimateError::TensorParallelKvHeads { kv_heads: heads, .. } => {
                let divisors: Vec<String> = [1u64, 2, 4, 8, 16]
                    .iter()
                    .filter(|d| *heads % **d == 0)
                    .map(u64::to_string)
                    .collect();
                Some(format!("use --tp {}", divisors.join(" or ")))
            }
            EstimateError::LayoutMismatch { .. } => {
                Some("make --gpus equal to tp × pp × data-parallel replicas".to_string())
            }
            EstimateError::BatchNotDivisible { micro_batch, dp, .. } => Some(format!(
                "use a --batch that is a multiple of {}",
                micro_batch * u64::from(*dp)
            )),
            EstimateError::PrecisionUnsupported { .. } => Some("try --precision bf16 or fp16".to_string()),
            EstimateError::SpecMissing { .. } => Some(
                "choose another GPU, or add the figure to its entry in a catalog folder of your own (docs/sources.md)"
                    .to_string(),
            ),
            _ => None,
        }
    }
}

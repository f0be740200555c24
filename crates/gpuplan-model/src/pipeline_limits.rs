//! How a serving engine applies its per-iteration limits to a pipeline's micro-batches.

use serde::Deserialize;

/// How a pipeline of stages, one micro-batch per stage, shares an engine's token budget
/// (`max_num_batched_tokens`, `max_num_tokens`) and its limit on running sequences
/// (`max_num_seqs`, `max_batch_size`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum PipelineLimits {
    /// Both limits are the replica's: the micro-batches share them.
    Replica,
    /// Each micro-batch takes up to the token budget; the running sequences are the
    /// replica's, spread over the micro-batches.
    TokensPerMicroBatch,
    /// Each micro-batch is scheduled apart, up to both limits.
    PerMicroBatch,
}

impl PipelineLimits {
    /// The multiples of the token budget and of the sequence limit that a replica of `stages`
    /// stages runs an iteration (one micro-batch through every stage).
    pub fn multiples(self, stages: f64) -> (f64, f64) {
        let stages = stages.max(1.0);
        match self {
            PipelineLimits::Replica => (1.0, 1.0),
            PipelineLimits::TokensPerMicroBatch => (stages, 1.0),
            PipelineLimits::PerMicroBatch => (stages, stages),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_pipeline_multiplies_only_the_limits_its_micro_batches_take_apart() {
        assert_eq!(PipelineLimits::Replica.multiples(4.0), (1.0, 1.0));
        assert_eq!(PipelineLimits::TokensPerMicroBatch.multiples(4.0), (4.0, 1.0));
        assert_eq!(PipelineLimits::PerMicroBatch.multiples(2.0), (2.0, 2.0));
        // Without a pipeline, nothing is multiplied.
        assert_eq!(PipelineLimits::PerMicroBatch.multiples(1.0), (1.0, 1.0));
    }
}

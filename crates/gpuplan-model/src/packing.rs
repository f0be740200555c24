//! How training examples fill the `seq` tokens of a sequence slot.
//!
//! Pre-training concatenates documents and cuts the stream at `seq`, so every token computed
//! is real. Fine-tuning without packing (Hugging Face Trainer's default collator, TRL's
//! `SFTTrainer` with `packing=False`) puts one example per slot and pads it: the GPU computes
//! the padding as if it were text, and only the real tokens advance the run.

use serde::{Deserialize, Serialize};

/// How the examples of a training run fill their sequences.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "kind")]
pub enum SequencePacking {
    /// Examples concatenated and cut at `seq`: every token is real.
    #[default]
    Packed,
    /// One example per sequence, padded to `seq`; `mean_tokens` of each are real on average.
    Padded { mean_tokens: u64 },
}

impl SequencePacking {
    /// The share of the `seq` tokens of a sequence that are real text, in (0, 1].
    pub fn real_share(self, seq: u64) -> f64 {
        match self {
            SequencePacking::Packed => 1.0,
            SequencePacking::Padded { mean_tokens } if seq > 0 => (mean_tokens.min(seq) as f64 / seq as f64).max(0.0),
            SequencePacking::Padded { .. } => 1.0,
        }
    }

    pub fn is_padded(self) -> bool {
        matches!(self, SequencePacking::Padded { .. })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn packed_sequences_are_all_real_tokens() {
        assert_eq!(SequencePacking::Packed.real_share(4096), 1.0);
    }

    #[test]
    fn padded_sequences_count_only_their_mean_length() {
        let padded = SequencePacking::Padded { mean_tokens: 512 };
        assert_eq!(padded.real_share(2048), 0.25);
        assert_eq!(padded.real_share(256), 1.0, "a mean above seq is cut to seq");
    }
}

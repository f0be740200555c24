//! Per-operator selective activation checkpointing, as torchtitan implements it
//! (`activation_checkpoint.mode = "selective"`, `selective_ac_option = "op"`): inside each
//! checkpointed layer the outputs of the attention kernel and of every other matmul, counted
//! in execution order from the first, are saved; the other matmuls and every element-wise
//! operation are recomputed in the backward pass.
//!
//! Reference: torchtitan `_save_list` and `_custom_policy` (the "every second mm" rule) in its
//! activation-checkpoint code; the layer's own input is kept by the checkpoint wrapper.

use gpuplan_model::TransformerSpec;

/// The matmuls of one layer in execution order, as (input width, output width) per token:
/// Q, K, V and output projections, then the feed-forward's up (and gate) and down projections.
fn layer_matmuls(spec: &TransformerSpec) -> Vec<(f64, f64)> {
    let h = spec.hidden as f64;
    let q = spec.attention_width() as f64;
    let kv = spec.kv_width() as f64;
    let (ffn, routed) = match spec.moe {
        Some(moe) => (
            moe.expert_ffn as f64,
            moe.experts_per_token as f64 + moe.shared_experts.min(1) as f64,
        ),
        None => (spec.ffn as f64, 1.0),
    };
    let f = ffn * routed;
    let mut matmuls = vec![(h, q), (h, kv), (h, kv), (q, h)];
    if spec.gated_ffn {
        matmuls.extend([(h, f), (h, f), (f, h)]);
    } else {
        matmuls.extend([(h, f), (f, h)]);
    }
    matmuls
}

/// 16-bit elements each token leaves per layer for the backward pass: the layer input, the
/// attention output and the outputs of the first, third, fifth … matmul.
pub fn saved_elements_per_token(spec: &TransformerSpec) -> f64 {
    let kept: f64 = layer_matmuls(spec).iter().step_by(2).map(|(_, out)| out).sum();
    spec.hidden as f64 + spec.attention_width() as f64 + kept
}

/// FLOPs per token of the matmuls recomputed in every layer's backward pass (the second,
/// fourth … matmul), all layers together.
pub fn recomputed_flops_per_token(spec: &TransformerSpec) -> f64 {
    let per_layer: f64 = layer_matmuls(spec)
        .iter()
        .skip(1)
        .step_by(2)
        .map(|(input, output)| 2.0 * input * output)
        .sum();
    per_layer * (spec.layers + spec.decoder_layers) as f64
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_specs::llama_2_7b;

    #[test]
    fn llama_keeps_q_v_gate_and_down_outputs() {
        let spec = llama_2_7b();
        // input h + attention output h + Q h + V h + gate f + down h.
        let expected = (5 * 4096 + 11008) as f64;
        assert_eq!(saved_elements_per_token(&spec), expected);
    }

    #[test]
    fn recomputes_k_output_and_up_projections() {
        let spec = llama_2_7b();
        let per_layer = 2.0 * (4096.0 * 4096.0 * 2.0 + 4096.0 * 11008.0);
        assert_eq!(recomputed_flops_per_token(&spec), per_layer * 32.0);
    }
}

//! What one continuous-batching iteration of an engine costs beside its GEMMs, attention and
//! collectives: a fixed time (per iteration, or per layer of the model where the engine runs
//! its kernels layer by layer) and a time per running sequence, from the engine's serving
//! profile and, where its release differs, the release's.

use crate::efficiency::{engine_profile, release_profile};
use gpuplan_model::fitted::IterationCosts;
use gpuplan_model::{Engine, EngineSettings};

/// An iteration's own costs for `engine` (its release's where the release differs) on a model of
/// `layers` layers: GEMM efficiency, fixed time and time per running sequence.
pub(crate) fn iteration_costs(engine: Engine, settings: &EngineSettings, layers: f64) -> IterationCosts {
    let mut serving = engine_profile(engine).iteration_costs(layers);
    if let Some(release) = release_profile(engine, settings) {
        serving.gemm_peak_fraction = release.gemm_peak_fraction.unwrap_or(serving.gemm_peak_fraction);
        if let Some(step) = release.step_seconds {
            serving.step_seconds = step;
            serving.seconds_per_layer = 0.0;
        }
        serving.seconds_per_sequence = release.seconds_per_sequence.unwrap_or(serving.seconds_per_sequence);
    }
    serving
}

/// The iteration's fixed time and time per running sequence in words, for the estimate's
/// assumptions.
pub fn iteration_note(engine: Engine, settings: &EngineSettings, layers: u64) -> String {
    let costs = iteration_costs(engine, settings, layers as f64);
    let fixed = if costs.seconds_per_layer > 0.0 {
        format!(
            "{:.1} ms fixed ({:.0} µs a layer × {layers} layers)",
            costs.step_seconds * 1e3,
            costs.seconds_per_layer * 1e6
        )
    } else {
        format!("{:.1} ms fixed", costs.step_seconds * 1e3)
    };
    format!(
        "a serving iteration costs {fixed} and {:.0} µs per running sequence on the host, beside its GEMMs, \
         attention and collectives",
        costs.seconds_per_sequence * 1e6
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tensorrt_llm_iterations_cost_a_fixed_time_per_layer() {
        // Set as 4 ms an iteration on 80-layer models: 1.6 ms for Llama 3.1 8B's 32 layers,
        // 6.3 ms for 405B's 126. vLLM's is the iteration's whatever the depth.
        let settings = EngineSettings::default();
        let layers = |n: u64| iteration_costs(Engine::TensorrtLlm, &settings, n as f64).step_seconds;
        assert!((layers(80) - 0.004).abs() < 1e-12);
        assert!((layers(32) - 0.0016).abs() < 1e-12 && (layers(126) - 0.0063).abs() < 1e-12);
        let vllm = |n: u64| iteration_costs(Engine::Vllm, &settings, n as f64).step_seconds;
        assert_eq!(vllm(32), vllm(126));
        assert!(
            iteration_note(Engine::TensorrtLlm, &settings, 32).contains("1.6 ms fixed (50 µs a layer × 32 layers)"),
            "{}",
            iteration_note(Engine::TensorrtLlm, &settings, 32)
        );
    }
}

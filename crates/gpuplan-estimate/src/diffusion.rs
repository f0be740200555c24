//! Memory and speed of a latent-diffusion pipeline (text encoders, a denoiser, UNet or
//! diffusion transformer, run once or twice per step, a VAE decoder run once per image) from
//! its layer-by-layer counts.
//!
//! References:
//! - Ho & Salimans 2022, "Classifier-Free Diffusion Guidance": each step evaluates the UNet on a
//!   conditional and an unconditional copy of the latent, which diffusers batches together.
//! - Rombach et al. 2022 ("Latent Diffusion Models") and Podell et al. 2023 ("SDXL"): the UNet
//!   works on a latent 8× smaller per side than the image; the VAE decoder maps it back once.
//! - Williams et al. 2009 ("Roofline"): a denoiser call takes the longer of its compute and of
//!   the host's kernel launches, which overlap on an asynchronous stream.
//! - Esser et al. 2024 (Stable Diffusion 3) and FLUX.1: a diffusion transformer runs as a
//!   language model's prompt pass does, matmuls over thousands of tokens and a fused attention,
//!   so it is timed at the engine's prompt-pass fraction of peak rather than a UNet's.

use crate::diffusion_flops::{PassCount, unet_pass, vae_decoder_pass};
use crate::dit_flops::dit_pass;
use crate::efficiency::{
    allocator_fragmentation, cuda_context_gib, diffusion_seconds_per_operator, diffusion_unet_peak_fraction,
    elementwise_bandwidth_fraction, engine_profile, inference_uncertainty, memory_uncertainty, training_uncertainty,
};
use crate::estimate::{Estimate, EstimateRequest, ImageSummary, ParameterSummary, Uncertainty, apply_amount};
use crate::inference::{Bound, InferenceEstimate};
use crate::memory;
use crate::notes::Notes;
use crate::precision_bytes::{activation_bytes, gradient_bytes, optimizer_bytes, weight_bytes};
use crate::training::TrainingEstimate;
use crate::{EstimateError, efficiency};
use gpuplan_model::{Bytes, Checkpointing, CitedSpec, DitSpec, Engine, FlopsPerSecond, Precision, Task, UnetSpec};

/// Largest image side accepted, in pixels: beyond it, a size is a mistake.
const MAX_RESOLUTION: u64 = 16_384;
/// Most denoising steps accepted.
const MAX_STEPS: u64 = 10_000;

/// The network that denoises the latent at every step.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Denoiser<'a> {
    Unet(&'a UnetSpec),
    Transformer(&'a DitSpec),
}

impl Denoiser<'_> {
    fn name(self) -> &'static str {
        match self {
            Denoiser::Unet(_) => "UNet",
            Denoiser::Transformer(_) => "transformer",
        }
    }

    /// Latent pixels per token along each side (1 for a UNet's convolutions).
    fn latent_patch(self) -> u64 {
        match self {
            Denoiser::Unet(_) => 1,
            Denoiser::Transformer(spec) => spec.latent_patch.max(1),
        }
    }

    /// Whether the pipeline runs classifier-free guidance by default.
    fn guided_by_default(self) -> bool {
        match self {
            Denoiser::Unet(_) => true,
            Denoiser::Transformer(spec) => spec.guided_by_default(),
        }
    }

    fn pass(self, latent: u64) -> PassCount {
        match self {
            Denoiser::Unet(spec) => unet_pass(spec, latent, latent),
            Denoiser::Transformer(spec) => dit_pass(spec, latent, latent),
        }
    }

    /// Fraction of the dense peak a pass reaches on `request`'s accelerator in PyTorch eager,
    /// and its evidence (engines scale it by their own prompt-pass fraction).
    fn peak_fraction(self, request: &EstimateRequest) -> (f64, &'static str) {
        match self {
            Denoiser::Unet(_) => diffusion_unet_peak_fraction(request.accelerator),
            Denoiser::Transformer(_) => (
                engine_profile(Engine::Pytorch).prefill_peak_fraction,
                "a diffusion transformer pass is timed as a language model's prompt pass (matmuls over thousands \
                 of tokens and a fused attention) at the engine's prompt-pass fraction of the dense peak (45 % in \
                 PyTorch eager, 50 % compiled, 55 % TensorRT), not fitted to image models",
            ),
        }
    }
}

/// The pipeline's shape for one request.
struct Pipeline {
    resolution: u64,
    latent: u64,
    steps: u64,
    /// Denoiser evaluations per image per step: 2 with classifier-free guidance.
    passes_per_step: u64,
    denoiser: PassCount,
    denoiser_name: &'static str,
    decoder: Option<PassCount>,
    /// Whether the decoder runs in fp32 (a VAE that overflows in fp16).
    decoder_fp32: bool,
}

impl Pipeline {
    fn summary(&self) -> ImageSummary {
        ImageSummary {
            resolution: self.resolution,
            denoising_steps: self.steps,
            guidance: self.passes_per_step == 2,
            unet_flops_per_pass: self.denoiser.forward_flops(),
            decoder_flops: self.decoder.map(|d| d.forward_flops()),
            step_seconds: None,
        }
    }
}

fn pipeline(request: &EstimateRequest, spec: &CitedSpec, denoiser: Denoiser) -> Result<Pipeline, EstimateError> {
    let image = request.workload.image;
    let factor = spec.vae_decoder.as_ref().map_or(8, |vae| vae.downscale_factor());
    let resolution = image.resolution.unwrap_or(spec.resolution);
    if resolution == 0 || resolution > MAX_RESOLUTION || resolution % (factor * denoiser.latent_patch()) != 0 {
        return Err(EstimateError::OutOfRange {
            what: match denoiser {
                Denoiser::Unet(_) => {
                    "resolution (pixels per side; a multiple of the VAE's downscale factor, 8, up to 16384)"
                }
                Denoiser::Transformer(_) => {
                    "resolution (pixels per side; a multiple of 16, the VAE's downscale factor times the transformer's \
                     2-pixel latent patches, up to 16384)"
                }
            },
            value: resolution.to_string(),
        });
    }
    let steps = image.denoising_steps.or(spec.denoising_steps).unwrap_or(50);
    if steps == 0 || steps > MAX_STEPS {
        return Err(EstimateError::OutOfRange {
            what: "denoising steps (1 to 10000)",
            value: steps.to_string(),
        });
    }
    let latent = resolution / factor;
    let decoder_fp32 =
        spec.vae_decoder.as_ref().is_some_and(|vae| vae.force_upcast) && request.workload.precision == Precision::Fp16;
    Ok(Pipeline {
        resolution,
        latent,
        steps,
        passes_per_step: if image.guidance.unwrap_or(denoiser.guided_by_default()) {
            2
        } else {
            1
        },
        denoiser: denoiser.pass(latent),
        denoiser_name: denoiser.name(),
        decoder: spec
            .vae_decoder
            .as_ref()
            .map(|vae| vae_decoder_pass(vae, latent, latent)),
        decoder_fp32,
    })
}

/// Estimates a diffusion pipeline whose denoiser (and, where known, VAE decoder) is given layer
/// by layer.
pub(crate) fn diffusion(
    request: &EstimateRequest,
    spec: &CitedSpec,
    denoiser: Denoiser,
    peak: FlopsPerSecond,
    mut assumptions: Notes,
) -> Result<Estimate, EstimateError> {
    let workload = request.workload;
    let accelerator = request.accelerator;
    let shape = pipeline(request, spec, denoiser)?;
    let model = request.model;
    let parameters = model
        .published_parameters
        .unwrap_or_else(|| spec.components.iter().map(|(_, p)| p).sum());
    assumptions.add(|| {
        format!(
            "{3} counted layer by layer from its diffusers config at {0}×{0} px ({1}×{1} latent): {2:.3} TFLOPs \
             per image per pass, attention matmuls included",
            shape.resolution,
            shape.latent,
            shape.denoiser.forward_flops() / 1e12,
            shape.denoiser_name
        )
    });
    if spec.components.len() == 1 {
        assumptions.add(|| {
            format!(
                "weights: the {} alone ({parameters} parameters); a pipeline's text encoders (Stable Diffusion 3: \
                 CLIP-L, OpenCLIP bigG and T5-XXL, 5.6 B parameters; FLUX.1: CLIP-L and T5-XXL, 4.9 B) are not \
                 in its config and not counted",
                shape.denoiser_name
            )
        });
    }
    if spec.vae_decoder.is_none() {
        assumptions.add(|| "no VAE config: the decode to pixels is not counted".to_string());
    }
    let fused = workload.flash_attention;
    let bytes = activation_bytes(workload.precision);
    let (efficiency, evidence) = denoiser.peak_fraction(request);
    assumptions.add(|| evidence.to_string());
    let capacity = memory::capacity(accelerator, workload);
    let gpus = u64::from(request.cluster.gpus.max(1));

    if workload.task.is_training() {
        return Ok(training(
            request,
            &shape,
            parameters,
            peak,
            efficiency,
            capacity,
            assumptions,
        ));
    }

    // Images are spread over the GPUs; each GPU runs whole pipelines.
    let images = workload.batch.div_ceil(gpus);
    let pass_batch = images * shape.passes_per_step;
    let weights = parameters as f64 * weight_bytes(workload.task, workload.precision)
        + if shape.decoder_fp32 {
            // The decoder's weights are upcast too: 2 more bytes each.
            shape.decoder.map_or(0.0, |d| d.parameters as f64 * 2.0)
        } else {
            0.0
        };
    let denoiser_activations = pass_batch as f64 * shape.denoiser.inference_peak(fused) * bytes;
    let decoder_bytes = if shape.decoder_fp32 { 4.0 } else { bytes };
    let decoder_activations = shape
        .decoder
        .map_or(0.0, |d| images as f64 * d.inference_peak(fused) * decoder_bytes);
    let activations = denoiser_activations.max(decoder_activations);
    let overhead = Bytes::from_gib(cuda_context_gib()) + Bytes((activations * allocator_fragmentation()) as u64);
    let memory = memory::without_kv_cache(weights, 0.0, 0.0, activations, overhead, capacity);
    assumptions.add(|| {
        format!(
            "activations: the larger of the {}'s {} ({pass_batch} latent{} per pass) and the VAE decoder's \
             working set ({images} image{}{}), attention {}",
            shape.denoiser_name,
            if shape.denoiser.skips > 0.0 {
                "skip tensors and working set"
            } else {
                "working set"
            },
            if pass_batch == 1 { "" } else { "s" },
            if images == 1 { "" } else { "s at once, no slicing" },
            if shape.decoder_fp32 {
                ", decoded in fp32 (force_upcast)"
            } else {
                ""
            },
            if fused {
                "fused (no score matrices)"
            } else {
                "unfused: score matrices materialised"
            }
        )
    });

    let profile = engine_profile(workload.engine);
    let engine_factor = profile.prefill_peak_fraction / engine_profile(Engine::Pytorch).prefill_peak_fraction;
    let compute_rate = peak.0 * efficiency * engine_factor;
    let (per_operator, operator_evidence) = diffusion_seconds_per_operator(workload.engine);
    let mut pass_compute = pass_batch as f64 * shape.denoiser.forward_flops() / compute_rate;
    if !fused {
        // Score and softmax matrices written and read back once each, at the engine's
        // achievable share of memory bandwidth.
        if let Some(bandwidth) = accelerator.memory_bandwidth {
            pass_compute += pass_batch as f64 * shape.denoiser.attention_scores * bytes * 2.0
                / (bandwidth.0 * profile.decode_bandwidth_fraction);
        }
    }
    // Eager PyTorch runs each norm, modulation, rotary embedding and activation as a kernel of
    // its own over the whole activation; compilers and TensorRT fuse them into the matmuls.
    let elementwise_seconds = match (workload.engine, accelerator.memory_bandwidth) {
        (Engine::Pytorch, Some(bandwidth)) => {
            pass_batch as f64 * shape.denoiser.elementwise * bytes / (bandwidth.0 * elementwise_bandwidth_fraction())
        }
        _ => 0.0,
    };
    pass_compute += elementwise_seconds;
    if elementwise_seconds > 0.0 {
        assumptions.add(|| {
            format!(
                "eager elementwise kernels (norms, modulations, rotary embeddings, activations, residuals) read and \
                 write {:.1} GB a pass at {:.0} % of memory bandwidth: {:.1} ms, counted from diffusers' forward code",
                pass_batch as f64 * shape.denoiser.elementwise * bytes / 1e9,
                elementwise_bandwidth_fraction() * 100.0,
                elementwise_seconds * 1e3
            )
        });
    }
    let pass_host = shape.denoiser.operators * per_operator;
    let pass_seconds = pass_compute.max(pass_host);
    let decoder_seconds = shape.decoder.map_or(0.0, |d| {
        let rate = if shape.decoder_fp32 {
            // cuDNN convolutions run fp32 tensors as TF32 by default in PyTorch.
            accelerator
                .peak(Precision::Tf32)
                .or_else(|| accelerator.peak(Precision::Fp32))
                .map_or(compute_rate * crate::efficiency::fp32_share_of_tensor_rate(), |p| {
                    p.0 * efficiency * engine_factor
                })
        } else {
            compute_rate
        };
        (images as f64 * d.forward_flops() / rate).max(d.operators * per_operator)
    });
    let latency = shape.steps as f64 * pass_seconds + decoder_seconds;
    assumptions.add(|| {
        format!(
            "{} steps × {} {} pass{} per image ({}), each the longer of compute ({:.1} ms) and host launches \
             ({:.0} operators: {:.1} ms); VAE decode {:.0} ms; text encoders not counted",
            shape.steps,
            shape.passes_per_step,
            shape.denoiser_name,
            if shape.passes_per_step == 1 { "" } else { "es" },
            if shape.passes_per_step == 2 {
                "classifier-free guidance"
            } else {
                "no classifier-free guidance"
            },
            pass_compute * 1e3,
            shape.denoiser.operators,
            pass_host * 1e3,
            decoder_seconds * 1e3
        )
    });
    assumptions.add(|| operator_evidence.to_string());
    let per_image = memory.activations.as_u64() as f64 / images.max(1) as f64;
    let free = capacity
        .as_u64()
        .saturating_sub(memory.weights.as_u64() + memory.overhead.as_u64()) as f64;
    Ok(Estimate {
        parameters: ParameterSummary {
            total: parameters,
            active: parameters,
            trainable: 0,
        },
        memory,
        training: None,
        serving_cost: None,
        inference: Some(InferenceEstimate {
            ttft_seconds: latency,
            tpot_seconds: 0.0,
            output_tokens_per_second: 0.0,
            requests_per_second: workload.batch as f64 / latency,
            max_concurrent_sequences: (free / per_image.max(1.0)) as u64 * gpus,
            request_latency_seconds: latency,
            decode_bound: if pass_compute >= pass_host {
                Bound::Compute
            } else {
                Bound::Overhead
            },
            host_memory_bytes: None,
        }),
        uncertainty: Uncertainty::bands(memory_uncertainty() * 2.0, inference_uncertainty()),
        image: Some(ImageSummary {
            step_seconds: Some(pass_seconds),
            ..shape.summary()
        }),
        assumptions: assumptions.into_vec(),
    })
}

/// Fine-tuning the denoiser (text encoders and VAE frozen), one noised timestep per image per step.
fn training(
    request: &EstimateRequest,
    shape: &Pipeline,
    parameters: u64,
    peak: FlopsPerSecond,
    efficiency: f64,
    capacity: Bytes,
    mut assumptions: Notes,
) -> Estimate {
    let workload = request.workload;
    let task = workload.task;
    let denoiser_parameters = shape.denoiser.parameters;
    let adapters_only = matches!(task, Task::Lora | Task::Qlora);
    let trainable = if adapters_only { 0 } else { denoiser_parameters };
    let bytes = activation_bytes(workload.precision);
    let frozen = parameters.saturating_sub(trainable) as f64 * weight_bytes(Task::Inference, workload.precision);
    let weights = frozen + trainable as f64 * weight_bytes(task, workload.precision);
    let shards = if workload.layout.zero >= 1 {
        f64::from(workload.layout.dp.max(1))
    } else {
        1.0
    };
    let gradients = trainable as f64 * gradient_bytes(task, workload.precision)
        / if workload.layout.zero >= 2 { shards } else { 1.0 };
    let optimizer = trainable as f64 * optimizer_bytes(task, workload.precision, workload.optimizer) / shards;
    let fused = workload.flash_attention;
    let saved_per_image = match workload.checkpointing {
        // A denoiser's norms are counted with its blocks: nothing recomputed is claimed.
        Checkpointing::None | Checkpointing::NormsAndActivation => shape.denoiser.training_saved(fused),
        Checkpointing::Selective | Checkpointing::Op => shape.denoiser.training_saved(true),
        // Only block inputs are kept; one block is recomputed at a time.
        Checkpointing::Full => shape.denoiser.skips * 2.0 + shape.denoiser.working,
    };
    let activations = saved_per_image * workload.micro_batch as f64 * bytes;
    let overhead = memory::training_overhead(activations, gradients)
        + if request.cluster.gpus > 1 {
            Bytes::from_gib(efficiency::nccl_buffers_gib())
        } else {
            Bytes::ZERO
        };
    let memory = memory::without_kv_cache(weights, gradients, optimizer, activations, overhead, capacity);
    assumptions.add(|| {
        let what = if adapters_only { "LoRA on" } else { "fine-tuning" };
        format!(
            "{what} the {3} ({denoiser_parameters} parameters) at {0}×{0} px; text encoders and VAE frozen in {1}; \
             activations counted layer by layer, {2} recomputation",
            shape.resolution, workload.precision, workload.checkpointing, shape.denoiser_name
        )
    });
    if adapters_only {
        assumptions
            .add(|| "adapter weights and their optimizer states not counted (a few MB at usual ranks)".to_string());
    }
    let forward = shape.denoiser.forward_flops();
    // Forward, backward through the activations, and (full fine-tuning) the weight gradients.
    let model_per_image = forward * if adapters_only { 2.0 } else { 3.0 };
    let hardware_per_image = model_per_image
        + if workload.checkpointing == Checkpointing::Full {
            forward
        } else {
            0.0
        };
    let gpus = f64::from(request.cluster.gpus.max(1));
    let step = hardware_per_image * workload.batch as f64 / (gpus * peak.0 * efficiency);
    let samples_per_second = workload.batch as f64 / step;
    assumptions.add(|| {
        "one noised timestep per image per step; the VAE encoder's pass over the training images not counted"
            .to_string()
    });
    let estimate = TrainingEstimate {
        step_seconds: step,
        tokens_per_second: 0.0,
        samples_per_second,
        mfu: model_per_image * samples_per_second / (gpus * peak.0),
        hfu: hardware_per_image * samples_per_second / (gpus * peak.0),
        time_seconds: None,
        gpu_hours: None,
        compute_seconds: step,
        communication_seconds: 0.0,
        pipeline_bubble: 0.0,
        scaling_efficiency: 1.0,
    };
    let estimate = apply_amount(estimate, request, 0);
    Estimate {
        parameters: ParameterSummary {
            total: parameters,
            active: parameters,
            trainable,
        },
        memory,
        training: Some(estimate),
        inference: None,
        serving_cost: None,
        uncertainty: Uncertainty::bands(memory_uncertainty() * 2.0, training_uncertainty()),
        image: Some(shape.summary()),
        assumptions: assumptions.into_vec(),
    }
}

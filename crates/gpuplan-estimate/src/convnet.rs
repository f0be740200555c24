//! Speed and memory of a convolutional network walked layer by layer: each convolution, batch
//! norm, ReLU, residual addition and pooling of the unrolled network, timed by a roofline at
//! the precision and engine of the workload.
//!
//! References:
//! - Williams et al. 2009 ("Roofline"): each operation takes the longer of its arithmetic at the
//!   achievable compute rate and its memory traffic at the achievable bandwidth.
//! - Ioffe & Szegedy 2015 (batch normalisation): in training, one pass gathers the statistics
//!   and one normalises; the backward pass reads the input and the gradient twice.
//! - PyTorch's cuDNN defaults: fp32 convolutions run as TF32 on tensor cores where the GPU has
//!   them (`torch.backends.cudnn.allow_tf32 = True`).
//! - TensorRT, ONNX Runtime and torch.compile (Inductor) fold batch normalisation into the
//!   convolution weights in inference and fuse ReLU and the residual addition into the
//!   convolution's epilogue.

use crate::EstimateError;
use crate::efficiency::{
    convolution_half_efficiency_elements, convolution_peak_fraction, cuda_context_gib, data_parallel_overlap,
    diffusion_seconds_per_operator, elementwise_bandwidth_fraction, engine_profile, inference_uncertainty,
    memory_uncertainty, tf32_convolution_share, training_peak_fraction, training_uncertainty,
};
use crate::estimate::{Estimate, EstimateRequest, ParameterSummary, Uncertainty, apply_amount};
use crate::inference::{Bound, InferenceEstimate};
use crate::memory;
use crate::notes::Notes;
use crate::precision_bytes::{gradient_bytes, optimizer_bytes, weight_bytes};
use crate::training::TrainingEstimate;
use gpuplan_model::{Accelerator, Bytes, ConvNetwork, ConvOp, Engine, Precision, Workload};

/// Smallest and largest image side accepted, in pixels (a ResNet halves its input five times).
const MIN_RESOLUTION: u64 = 32;
const MAX_RESOLUTION: u64 = 16_384;

/// Tensor passes (reads plus writes, in units of the tensor) of each memory-bound operation:
/// batch norm in training reads its input twice (statistics, then normalisation) and writes
/// once, and in its backward pass reads input and gradient twice and writes once; in inference
/// it reads and writes once. ReLU reads and writes once forward; backward reads the output and
/// the gradient and writes one. The residual addition reads two tensors and writes one; its
/// backward passes the gradient on.
const BATCH_NORM_TRAINING_PASSES: f64 = 3.0 + 5.0;
const BATCH_NORM_INFERENCE_PASSES: f64 = 2.0;
const RELU_PASSES: (f64, f64) = (2.0, 3.0);
const ADD_PASSES: (f64, f64) = (3.0, 2.0);
/// Kernels a training step launches per forward operation (forward, and the backward's one
/// or two).
const TRAINING_KERNELS_PER_OPERATION: f64 = 3.0;
/// Bytes of the index max pooling keeps per output value for its backward pass (int64).
const POOL_INDEX_BYTES: f64 = 8.0;

/// Where each kind of operation runs and how fast.
struct Rates {
    /// Achievable convolution FLOPs per second.
    compute: f64,
    /// Achievable memory bytes per second.
    bandwidth: f64,
    /// Bytes per activation value.
    element: f64,
    /// Whether batch norm, ReLU and the addition are fused into the convolutions.
    fused: bool,
    /// Output values at which a convolution reaches half its compute rate: tensor-core
    /// kernels' large tiles leave a GPU's multiprocessors idle on small outputs; CUDA-core
    /// (fp32) kernels tile finer, and are not slowed (0).
    half_filled: f64,
}

/// The precision convolutions actually run at, and its peak: PyTorch runs fp32 convolutions
/// as TF32 where the GPU has TF32 tensor cores.
fn convolution_peak(accelerator: &Accelerator, workload: &Workload, notes: &mut Notes) -> Option<(Precision, f64)> {
    let precision = match workload.precision {
        Precision::Fp32 if accelerator.peak(Precision::Tf32).is_some() && workload.engine == Engine::Pytorch => {
            notes.add(|| "fp32 convolutions run as TF32 (cuDNN's default in PyTorch)".to_string());
            Precision::Tf32
        }
        other => other,
    };
    let fallback = match precision {
        Precision::Bf16 => Some(Precision::Fp16),
        Precision::Tf32 => Some(Precision::Fp32),
        _ => None,
    };
    accelerator
        .peak(precision)
        .or_else(|| fallback.and_then(|f| accelerator.peak(f)))
        .map(|peak| (precision, peak.0))
}

/// Bytes of one activation element. Unlike a transformer's activations, which stay 16-bit under
/// weight quantisation (`precision_bytes::activation_bytes`), 8-bit convolution engines
/// (TensorRT int8/fp8) keep activations in 8 bits too.
fn element_bytes(precision: Precision) -> f64 {
    match precision {
        Precision::Fp64 => 8.0,
        Precision::Fp32 | Precision::Tf32 => 4.0,
        Precision::Fp16 | Precision::Bf16 => 2.0,
        _ => 1.0,
    }
}

/// Seconds a batch of `images` spends in `op`: forward only, or forward and backward. Weights
/// are read once per batch; activations once per image.
fn op_seconds(op: &ConvOp, rates: &Rates, training: bool, images: f64) -> f64 {
    let roofline = |flops: f64, elements: f64| (flops / rates.compute).max(elements * rates.element / rates.bandwidth);
    let passes = |forward: f64, backward: f64| forward + if training { backward } else { 0.0 };
    match *op {
        ConvOp::Conv {
            macs,
            input,
            output,
            weights,
        } => {
            // Backward: the input gradient and the weight gradient, each a forward's worth. A
            // small output fills few of the GPU's multiprocessors: the compute rate falls with it.
            let flops = 2.0 * macs * images * passes(1.0, 2.0);
            let filled = output * images / (output * images + rates.half_filled);
            let traffic = ((input + output) * images + weights) * passes(1.0, 2.0);
            roofline(flops / filled.max(1e-9), traffic)
        }
        ConvOp::BatchNorm { elements } if !rates.fused => {
            let passes = if training {
                BATCH_NORM_TRAINING_PASSES
            } else {
                BATCH_NORM_INFERENCE_PASSES
            };
            roofline(0.0, passes * elements * images)
        }
        ConvOp::Relu { elements } if !rates.fused => {
            roofline(0.0, elements * images * passes(RELU_PASSES.0, RELU_PASSES.1))
        }
        ConvOp::Add { elements } if !rates.fused => {
            roofline(0.0, elements * images * passes(ADD_PASSES.0, ADD_PASSES.1))
        }
        ConvOp::Pool { input, output } => roofline(0.0, (input + output) * images * passes(1.0, 1.5)),
        ConvOp::MemoryPass { input, output } => roofline(0.0, (input + output) * images * passes(1.0, 1.0)),
        // Each part read and written once; its backward splits the gradient the same way.
        ConvOp::Concat { elements } if !rates.fused => roofline(0.0, 2.0 * elements * images * passes(1.0, 1.0)),
        ConvOp::BatchNorm { .. } | ConvOp::Relu { .. } | ConvOp::Add { .. } | ConvOp::Concat { .. } => 0.0,
    }
}

/// Activation bytes one training image keeps for the backward pass: each batch norm's input,
/// each ReLU's output (in place over the norm's output), the image, and max pooling's indices.
fn saved_per_image(ops: &[ConvOp], resolution: u64, element: f64) -> f64 {
    let image = (3 * resolution * resolution) as f64 * element;
    ops.iter()
        .map(|op| match *op {
            ConvOp::BatchNorm { elements } | ConvOp::Relu { elements } => elements * element,
            ConvOp::Pool { output, .. } => output * POOL_INDEX_BYTES,
            _ => 0.0,
        })
        .sum::<f64>()
        + image
}

/// The largest input plus output of any operation: what inference keeps alive at once.
fn working_set_per_image(ops: &[ConvOp], element: f64) -> f64 {
    ops.iter()
        .map(|op| match *op {
            ConvOp::Conv { input, output, .. }
            | ConvOp::Pool { input, output }
            | ConvOp::MemoryPass { input, output } => input + output,
            ConvOp::BatchNorm { elements }
            | ConvOp::Relu { elements }
            | ConvOp::Add { elements }
            | ConvOp::Concat { elements } => 2.0 * elements,
        })
        .fold(0.0, f64::max)
        * element
}

/// The estimate of a convolutional network's workload (a ResNet, a ConvNeXt), walked
/// operation by operation.
pub(crate) fn network<N: ConvNetwork>(
    request: &EstimateRequest,
    spec: &N,
    default_resolution: u64,
    mut notes: Notes,
) -> Result<Estimate, EstimateError> {
    let (norm, activation) = (N::NORM, N::ACTIVATION);
    let workload = request.workload;
    let accelerator = request.accelerator;
    let resolution = workload.image.resolution.unwrap_or(default_resolution);
    if !(MIN_RESOLUTION..=MAX_RESOLUTION).contains(&resolution) {
        return Err(EstimateError::OutOfRange {
            what: "image side for a convolutional network (32–16384 pixels)",
            value: resolution.to_string(),
        });
    }
    let (ops, parameters) = spec.unroll(resolution);
    let Some((conv_precision, peak)) = convolution_peak(accelerator, workload, &mut notes) else {
        return Err(EstimateError::PrecisionUnsupported {
            accelerator: accelerator.id.to_string(),
            precision: workload.precision.to_string(),
        });
    };
    let profile = engine_profile(workload.engine);
    let engine_factor = profile.prefill_peak_fraction / engine_profile(Engine::Pytorch).prefill_peak_fraction;
    let training = workload.task.is_training();
    // Inductor fuses the inference graph; in training batch norm still gathers statistics.
    let fused = matches!(workload.engine, Engine::Tensorrt | Engine::Onnxruntime)
        || (workload.engine == Engine::TorchCompile && !training);
    // fp32 without TF32 runs on CUDA cores, where convolutions reach the fp32 fraction.
    let fraction = if conv_precision == Precision::Fp32 {
        training_peak_fraction(accelerator, Precision::Fp32).0
    } else if conv_precision == Precision::Tf32 {
        convolution_peak_fraction() * tf32_convolution_share()
    } else {
        convolution_peak_fraction()
    };
    let rates = Rates {
        compute: peak * fraction * engine_factor,
        bandwidth: accelerator.memory_bandwidth.map_or(f64::INFINITY, |b| b.0) * elementwise_bandwidth_fraction(),
        element: element_bytes(conv_precision),
        fused,
        half_filled: if conv_precision == Precision::Fp32 {
            0.0
        } else {
            convolution_half_efficiency_elements()
        },
    };
    notes.add(|| {
        format!(
            "{} operations per image walked one by one ({} convolutions), each the longer of its FLOPs at {:.0} % of the \
             {conv_precision} peak (a convolution of W output values over the batch at W/(W + {:.0}k) of that) and its \
             memory traffic at {:.0} % of bandwidth{}",
            ops.len(),
            ops.iter().filter(|op| matches!(op, ConvOp::Conv { .. })).count(),
            fraction * engine_factor * 100.0,
            convolution_half_efficiency_elements() / 1e3,
            elementwise_bandwidth_fraction() * 100.0,
            if fused {
                format!("; {norm}, {activation} and residual additions fused into the convolutions")
            } else {
                String::new()
            }
        )
    });
    let images = if training { workload.micro_batch } else { workload.batch }.max(1) as f64;
    let batch_seconds: f64 = ops.iter().map(|op| op_seconds(op, &rates, training, images)).sum();
    let (per_operator, operator_evidence) = diffusion_seconds_per_operator(workload.engine);
    let launched = ops
        .iter()
        .filter(|op| {
            !fused
                || matches!(
                    op,
                    ConvOp::Conv { .. } | ConvOp::Pool { .. } | ConvOp::MemoryPass { .. }
                )
        })
        .count() as f64
        * if training { TRAINING_KERNELS_PER_OPERATION } else { 1.0 };
    let host = launched * per_operator;
    notes.add(|| format!("{operator_evidence}; {launched:.0} kernels per pass"));
    let params = parameters as f64;
    let gpus = request.cluster.gpus.max(1);
    if training {
        let micro = images;
        let compute = batch_seconds.max(host);
        // Gradients all-reduced in fp32 across data-parallel replicas, overlapped with the
        // backward pass.
        let dp = f64::from(workload.layout.dp.max(1));
        let all_reduce = if dp > 1.0 {
            2.0 * (dp - 1.0) / dp * params * 4.0 / request.cluster.group_bandwidth(workload.layout.dp, 1).0
        } else {
            0.0
        };
        let exposed = (all_reduce - data_parallel_overlap() * compute * 2.0 / 3.0).max(0.0);
        let accumulation = (workload.batch as f64 / (micro * dp)).max(1.0);
        let step = compute * accumulation + exposed;
        let samples_per_second = workload.batch as f64 / step;
        let forward_flops: f64 = ops
            .iter()
            .map(|op| match op {
                ConvOp::Conv { macs, .. } => 2.0 * macs,
                _ => 0.0,
            })
            .sum();
        let utilisation = 3.0 * forward_flops * samples_per_second / (f64::from(gpus) * peak);
        let activations = saved_per_image(&ops, resolution, rates.element) * micro;
        let gradients = params * gradient_bytes(workload.task, workload.precision);
        let optimizer = params * optimizer_bytes(workload.task, workload.precision, workload.optimizer);
        let weights = params * weight_bytes(workload.task, workload.precision);
        notes.add(|| {
            format!(
                "activations: every {norm}'s input and {activation}'s output kept, {:.0} MB per image",
                activations / micro / 1e6
            )
        });
        let memory = memory::without_kv_cache(
            weights,
            gradients,
            optimizer,
            activations,
            memory::training_overhead(activations, gradients),
            memory::capacity(request.accelerator, request.workload),
        );
        let estimate = TrainingEstimate {
            step_seconds: step,
            tokens_per_second: 0.0,
            samples_per_second,
            mfu: utilisation,
            hfu: utilisation,
            time_seconds: None,
            gpu_hours: None,
            compute_seconds: compute * accumulation,
            communication_seconds: exposed,
            pipeline_bubble: 0.0,
            scaling_efficiency: compute * accumulation / step,
        };
        return Ok(Estimate {
            parameters: ParameterSummary {
                total: parameters,
                active: parameters,
                trainable: parameters,
            },
            memory,
            training: Some(apply_amount(estimate, request, 0)),
            inference: None,
            serving_cost: None,
            uncertainty: Uncertainty::bands(memory_uncertainty(), training_uncertainty()),
            image: None,
            assumptions: notes.into_vec(),
        });
    }
    let batch = images;
    let latency = batch_seconds.max(host) + profile.step_overhead_seconds;
    let weights = params * weight_bytes(workload.task, workload.precision);
    let activations = working_set_per_image(&ops, rates.element) * batch;
    let overhead = Bytes::from_gib(cuda_context_gib());
    let memory = memory::without_kv_cache(
        weights,
        0.0,
        0.0,
        activations,
        overhead,
        memory::capacity(accelerator, workload),
    );
    let free = memory
        .capacity
        .as_u64()
        .saturating_sub(memory.weights.as_u64() + overhead.as_u64()) as f64;
    Ok(Estimate {
        parameters: ParameterSummary {
            total: parameters,
            active: parameters,
            trainable: 0,
        },
        inference: Some(InferenceEstimate {
            ttft_seconds: latency,
            tpot_seconds: 0.0,
            output_tokens_per_second: 0.0,
            requests_per_second: batch * f64::from(gpus) / latency,
            max_concurrent_sequences: (free / (activations / batch).max(1.0)) as u64,
            request_latency_seconds: latency,
            decode_bound: if batch_seconds >= host {
                Bound::Compute
            } else {
                Bound::Overhead
            },
            host_memory_bytes: None,
        }),
        memory,
        training: None,
        serving_cost: None,
        uncertainty: Uncertainty::bands(memory_uncertainty() * 2.0, inference_uncertainty()),
        image: None,
        assumptions: notes.into_vec(),
    })
}

//! Measured throughput of this machine's GPUs through CUDA, loaded at run time (cudarc's
//! dynamic loading): square matrix multiplies in cuBLAS per precision, a device-to-device
//! copy for memory bandwidth, and an NCCL all-reduce across the GPUs. A missing library is a
//! typed error (or, for NCCL, a skipped measurement), never a failure to start.
//!
//! Each figure is the best of its timed repetitions after warm-up, timed with CUDA events on
//! the device (the all-reduce, spanning devices, with the host clock after synchronising),
//! the convention of the published tables it is compared with (maximum achievable matmul
//! FLOPS: Bekman, "Machine Learning Engineering", compute/accelerator; nccl-tests' bus
//! bandwidth).

use crate::ProbeError;
use cudarc::cublas::{CudaBlas, Gemm, GemmConfig, sys as cublas};
use cudarc::driver::sys::CUevent_flags;
use cudarc::driver::{CudaContext, CudaSlice, CudaStream, DeviceRepr, ValidAsZeroBits};
use gpuplan_telemetry::{
    AllReduceMeasurement, DeviceBenchmark, GemmMeasurement, HostBenchmarks, all_reduce_bus_bandwidth, gemm_flops,
};
use std::sync::Arc;
use std::time::Instant;

/// How much to measure.
#[derive(Debug, Clone)]
pub struct BenchSettings {
    /// m = n = k of the matrix multiplies: 8192 keeps every tensor-core GPU busy and fits
    /// three fp32 matrices (768 MiB) on a 16 GB card.
    pub gemm_size: u32,
    /// Bytes copied per repetition of the bandwidth test: far beyond any L2 cache.
    pub copy_bytes: usize,
    /// Bytes reduced per GPU in the all-reduce: large enough to reach bus bandwidth.
    pub all_reduce_bytes: usize,
    pub warmup: u32,
    pub repetitions: u32,
}

impl Default for BenchSettings {
    fn default() -> Self {
        BenchSettings {
            gemm_size: 8192,
            copy_bytes: 1 << 30,
            all_reduce_bytes: 256 << 20,
            warmup: 3,
            repetitions: 20,
        }
    }
}

impl BenchSettings {
    fn method(&self) -> String {
        format!(
            "cuBLAS square GEMM m=n=k={} (fp32 accumulation), device-to-device copy of {} MiB \
             (read + write counted), NCCL all-reduce of {} MiB per GPU (bus bandwidth); best of {} \
             repetitions after {} warm-up",
            self.gemm_size,
            self.copy_bytes >> 20,
            self.all_reduce_bytes >> 20,
            self.repetitions,
            self.warmup
        )
    }
}

const MS_PER_SECOND: f64 = 1e3;
const TERA: f64 = 1e12;
const GIGA: f64 = 1e9;

/// Compute capability from which cuBLAS runs bf16 and TF32 on tensor cores (Ampere).
const AMPERE: (i32, i32) = (8, 0);

fn cuda_error(what: &str, e: impl std::fmt::Debug) -> ProbeError {
    ProbeError::Cuda(format!("{what}: {e:?}"))
}

/// Measures every GPU of this machine (`devices` of them, as NVML counted).
pub fn run(devices: u32, settings: &BenchSettings) -> Result<HostBenchmarks, ProbeError> {
    // SAFETY: each only tries to open the shared library; nothing is called through it.
    if !unsafe { cudarc::driver::sys::is_culib_present() } {
        return Err(ProbeError::NoCudaLibrary("libcuda (the NVIDIA driver's CUDA library)"));
    }
    if !unsafe { cudarc::cublas::sys::is_culib_present() } {
        return Err(ProbeError::NoCudaLibrary("libcublas (the CUDA toolkit's cuBLAS)"));
    }
    let mut skipped = Vec::new();
    let mut measured = Vec::new();
    for index in 0..devices {
        measured.push(device(index, settings, &mut skipped)?);
    }
    let all_reduce = if devices < 2 {
        None
    } else if !unsafe { cudarc::nccl::sys::is_culib_present() } {
        skipped.push("all-reduce: libnccl not found (install NCCL, e.g. `apt install libnccl2`)".to_string());
        None
    } else {
        match all_reduce(devices, settings) {
            Ok(m) => Some(m),
            Err(e) => {
                skipped.push(format!("all-reduce: {e}"));
                None
            }
        }
    };
    Ok(HostBenchmarks {
        method: settings.method(),
        devices: measured,
        all_reduce,
        skipped,
    })
}

fn device(index: u32, settings: &BenchSettings, skipped: &mut Vec<String>) -> Result<DeviceBenchmark, ProbeError> {
    let context = CudaContext::new(index as usize).map_err(|e| cuda_error("opening the GPU", e))?;
    let capability = context
        .compute_capability()
        .map_err(|e| cuda_error("reading the compute capability", e))?;
    let stream = context.default_stream();
    let blas = CudaBlas::new(stream.clone()).map_err(|e| cuda_error("starting cuBLAS", e))?;
    let n = settings.gemm_size;
    let mut gemm = Vec::new();
    let mut record = |precision: &str, seconds: Result<f64, ProbeError>| match seconds {
        Ok(s) => gemm.push(GemmMeasurement {
            precision: precision.to_string(),
            size: n,
            tflops: gemm_flops(u64::from(n), u64::from(n), u64::from(n)) / s / TERA,
        }),
        Err(e) => skipped.push(format!("GPU {index} {precision} GEMM: {e}")),
    };
    record("fp32", time_gemm::<f32>(&stream, &blas, settings, 1.0, 0.0, |x| x));
    if capability >= AMPERE {
        record(
            "tf32",
            with_tf32(&blas, || time_gemm::<f32>(&stream, &blas, settings, 1.0, 0.0, |x| x)),
        );
    }
    let f16 = half::f16::from_f32;
    record("fp16", time_gemm(&stream, &blas, settings, f16(1.0), f16(0.0), f16));
    if capability >= AMPERE {
        let bf16 = half::bf16::from_f32;
        record("bf16", time_gemm(&stream, &blas, settings, bf16(1.0), bf16(0.0), bf16));
    }
    let memory_copy_gb_per_s = match copy_bandwidth(&stream, settings) {
        Ok(rate) => Some(rate),
        Err(e) => {
            skipped.push(format!("GPU {index} memory copy: {e}"));
            None
        }
    };
    Ok(DeviceBenchmark {
        index,
        gemm,
        memory_copy_gb_per_s,
    })
}

/// Runs `f` with cuBLAS allowed to round fp32 inputs to TF32 on tensor cores.
fn with_tf32(blas: &CudaBlas, f: impl FnOnce() -> Result<f64, ProbeError>) -> Result<f64, ProbeError> {
    let set = |mode| {
        // SAFETY: the handle is live for `blas`'s lifetime; the call only changes its math mode.
        let status = unsafe { cublas::cublasSetMathMode(*blas.handle(), mode) };
        if status == cublas::cublasStatus_t::CUBLAS_STATUS_SUCCESS {
            Ok(())
        } else {
            Err(cuda_error("setting the cuBLAS math mode", status))
        }
    };
    set(cublas::cublasMath_t::CUBLAS_TF32_TENSOR_OP_MATH)?;
    let result = f();
    set(cublas::cublasMath_t::CUBLAS_DEFAULT_MATH)?;
    result
}

/// Matrix entries in [-1, 1), from a fixed linear congruential sequence: real-looking data
/// (all zeros would draw less power and flatter the clocks).
fn entries<T>(count: usize, convert: impl Fn(f32) -> T) -> Vec<T> {
    let mut state: u32 = 0x2545_f491;
    (0..count)
        .map(|_| {
            state = state.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
            convert((state >> 8) as f32 / (1u32 << 23) as f32 - 1.0)
        })
        .collect()
}

/// Best time of one `size³` multiply, seconds.
fn time_gemm<T>(
    stream: &Arc<CudaStream>,
    blas: &CudaBlas,
    settings: &BenchSettings,
    one: T,
    zero: T,
    convert: impl Fn(f32) -> T,
) -> Result<f64, ProbeError>
where
    T: DeviceRepr + ValidAsZeroBits + Copy,
    CudaBlas: Gemm<T>,
{
    let n = settings.gemm_size as usize;
    let side = i32::try_from(n).map_err(|_| ProbeError::Cuda(format!("GEMM size {n} too large")))?;
    let host = entries(n * n, convert);
    let a = stream
        .clone_htod(&host)
        .map_err(|e| cuda_error("copying a matrix", e))?;
    let b = stream
        .clone_htod(&host)
        .map_err(|e| cuda_error("copying a matrix", e))?;
    let mut c: CudaSlice<T> = stream
        .alloc_zeros(n * n)
        .map_err(|e| cuda_error("allocating a matrix", e))?;
    let config = GemmConfig {
        transa: cublas::cublasOperation_t::CUBLAS_OP_N,
        transb: cublas::cublasOperation_t::CUBLAS_OP_N,
        m: side,
        n: side,
        k: side,
        alpha: one,
        lda: side,
        ldb: side,
        beta: zero,
        ldc: side,
    };
    best_of(stream, settings, || {
        // SAFETY: a, b and c hold n × n elements each, as the configuration states.
        unsafe { blas.gemm(config, &a, &b, &mut c) }.map_err(|e| cuda_error("cuBLAS GEMM", e))
    })
}

/// Device-to-device copy rate, bytes read plus written per second, GB/s.
fn copy_bandwidth(stream: &Arc<CudaStream>, settings: &BenchSettings) -> Result<f64, ProbeError> {
    let source: CudaSlice<u8> = stream
        .alloc_zeros(settings.copy_bytes)
        .map_err(|e| cuda_error("allocating the copy buffers", e))?;
    let mut target: CudaSlice<u8> = stream
        .alloc_zeros(settings.copy_bytes)
        .map_err(|e| cuda_error("allocating the copy buffers", e))?;
    let seconds = best_of(stream, settings, || {
        stream
            .memcpy_dtod(&source, &mut target)
            .map_err(|e| cuda_error("copying", e))
    })?;
    Ok(2.0 * settings.copy_bytes as f64 / seconds / GIGA)
}

/// The shortest of `settings.repetitions` runs of `work` on `stream`, after the warm-up,
/// timed by events on the device; seconds.
fn best_of(
    stream: &Arc<CudaStream>,
    settings: &BenchSettings,
    mut work: impl FnMut() -> Result<(), ProbeError>,
) -> Result<f64, ProbeError> {
    for _ in 0..settings.warmup {
        work()?;
    }
    let timed = Some(CUevent_flags::CU_EVENT_DEFAULT);
    let mut best = f64::INFINITY;
    for _ in 0..settings.repetitions {
        let start = stream
            .record_event(timed)
            .map_err(|e| cuda_error("recording an event", e))?;
        work()?;
        let end = stream
            .record_event(timed)
            .map_err(|e| cuda_error("recording an event", e))?;
        let ms = start.elapsed_ms(&end).map_err(|e| cuda_error("timing", e))?;
        best = best.min(f64::from(ms) / MS_PER_SECOND);
    }
    Ok(best)
}

/// An in-place sum of `settings.all_reduce_bytes` of fp32 on every GPU.
fn all_reduce(devices: u32, settings: &BenchSettings) -> Result<AllReduceMeasurement, ProbeError> {
    use cudarc::nccl::{Comm, ReduceOp, result as nccl};
    let streams: Vec<Arc<CudaStream>> = (0..devices as usize)
        .map(|i| CudaContext::new(i).map(|c| c.default_stream()))
        .collect::<Result<_, _>>()
        .map_err(|e| cuda_error("opening the GPUs", e))?;
    let comms = Comm::from_devices(streams.clone()).map_err(|e| cuda_error("starting NCCL", e))?;
    let count = settings.all_reduce_bytes / std::mem::size_of::<f32>();
    let mut buffers: Vec<CudaSlice<f32>> = streams
        .iter()
        .map(|s| s.alloc_zeros(count))
        .collect::<Result<_, _>>()
        .map_err(|e| cuda_error("allocating the all-reduce buffers", e))?;
    let mut once = || -> Result<f64, ProbeError> {
        let started = Instant::now();
        nccl::group_start().map_err(|e| cuda_error("NCCL group", e))?;
        for (comm, buffer) in comms.iter().zip(buffers.iter_mut()) {
            comm.all_reduce_in_place(buffer, &ReduceOp::Sum)
                .map_err(|e| cuda_error("NCCL all-reduce", e))?;
        }
        nccl::group_end().map_err(|e| cuda_error("NCCL group", e))?;
        for stream in &streams {
            stream.synchronize().map_err(|e| cuda_error("synchronising", e))?;
        }
        Ok(started.elapsed().as_secs_f64())
    };
    for _ in 0..settings.warmup {
        once()?;
    }
    let mut best = f64::INFINITY;
    for _ in 0..settings.repetitions {
        best = best.min(once()?);
    }
    let bytes = (count * std::mem::size_of::<f32>()) as u64;
    Ok(AllReduceMeasurement {
        gpus: devices,
        bytes,
        bus_gb_per_s: all_reduce_bus_bandwidth(bytes, devices, best) / GIGA,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn matrix_entries_are_spread_over_minus_one_to_one() {
        let values = entries(10_000, |x| x);
        assert!(values.iter().all(|v| (-1.0..1.0).contains(v)));
        let mean = values.iter().sum::<f32>() / values.len() as f32;
        assert!(mean.abs() < 0.05, "{mean}");
        assert!(values.iter().any(|v| *v < -0.5) && values.iter().any(|v| *v > 0.5));
    }

    #[test]
    fn the_method_line_names_the_sizes() {
        let method = BenchSettings::default().method();
        assert!(
            method.contains("m=n=k=8192") && method.contains("1024 MiB") && method.contains("256 MiB"),
            "{method}"
        );
    }
}

//! What each kind of parallelism adds to a training step: the pipeline bubble, the
//! tensor-, data-, context- and expert-parallel exchanges, and the routed experts' kernels.
//!
//! References (volumes per rank): Patarasuk & Yuan 2009 for ring all-reduce, 2(n − 1)/n · S;
//! Rajbhandari et al. 2020 ("ZeRO", §7) for ZeRO-3's 1.5× data-parallel volume; Narayanan et
//! al. 2021 (§2.2, §3) for the interleaved 1F1B bubble (p − 1)/(m·v) and the two all-reduces per
//! layer and pass of tensor parallelism; Liu et al. 2023 (ring attention) for context
//! parallelism's K/V ring.

use crate::calibration;
use crate::cluster::Cluster;
use crate::efficiency::{data_parallel_overlap, pipeline_virtual_stages, training_moe_expert_seconds};
use crate::notes::Notes;
use crate::precision_bytes::{activation_bytes, gradient_bytes, weight_bytes};
use crate::training::TrainingShape;
use gpuplan_model::{Checkpointing, Task, Workload};

/// One training step of `workload` on `cluster`: `micro_batches` per replica.
pub(crate) struct StepOf<'a> {
    pub workload: &'a Workload,
    pub cluster: &'a Cluster,
    pub shape: &'a TrainingShape,
    pub micro_batches: f64,
}

impl StepOf<'_> {
    fn stages(&self) -> f64 {
        f64::from(self.workload.layout.pp.max(1))
    }

    /// Layers each pipeline stage holds; it exchanges only theirs.
    fn layers_here(&self) -> f64 {
        (self.shape.layers as f64 / self.stages()).ceil()
    }

    pub fn moe_layers_here(&self) -> f64 {
        (self.shape.moe_layers as f64 / self.stages()).ceil()
    }

    /// Tokens of one micro-batch on each GPU of a context-parallel group.
    fn tokens_local(&self) -> f64 {
        (self.workload.micro_batch * self.shape.seq) as f64 / f64::from(self.workload.layout.cp.max(1))
    }

    fn value_bytes(&self) -> f64 {
        activation_bytes(self.workload.precision)
    }

    /// The schedule's virtual stages per GPU: given, else the framework's default, else the
    /// generic, at most one per layer of the stage.
    fn interleave(&self) -> f64 {
        let layout = self.workload.layout;
        let layers_per_stage = (self.shape.layers / u64::from(layout.pp.max(1))).max(1);
        let framework_stages = self
            .workload
            .framework
            .and_then(|f| calibration::framework(f).pipeline_virtual_stages);
        let virtual_stages = layout
            .vp
            .or(framework_stages)
            .map_or(pipeline_virtual_stages(), u64::from);
        virtual_stages.clamp(1, layers_per_stage) as f64
    }

    /// The pipeline bubble as a share of the ideal compute, with the schedule's virtual stages.
    pub fn pipeline_bubble(&self, notes: &mut Notes) -> f64 {
        let layout = self.workload.layout;
        let interleave = self.interleave();
        let micro_batches = self.micro_batches;
        let bubble = (f64::from(layout.pp) - 1.0) / (micro_batches * interleave);
        if layout.pp > 1 {
            notes.add(|| {
                let schedule = if interleave > 1.0 {
                    format!("interleaved 1F1B pipeline with {interleave} virtual stages per GPU")
                } else {
                    "1F1B pipeline".to_string()
                };
                format!(
                    "{schedule}, {micro_batches} micro-batches a step: bubble (p − 1)/(m·v) = {:.1} % of compute",
                    bubble * 100.0
                )
            });
        }
        bubble
    }

    /// Tensor parallelism: 4 all-reduces per layer and micro-batch (6 with full recompute).
    pub fn tensor_parallel_seconds(&self) -> f64 {
        let layout = self.workload.layout;
        if layout.tp <= 1 {
            return 0.0;
        }
        let tp = f64::from(layout.tp);
        let all_reduces = if self.workload.checkpointing == Checkpointing::Full {
            6.0
        } else {
            4.0
        };
        let bytes = (self.workload.micro_batch * self.shape.seq * self.shape.hidden) as f64 * self.value_bytes();
        let bandwidth = self.cluster.group_bandwidth(layout.tp, 1).0;
        self.micro_batches * self.layers_here() * all_reduces * 2.0 * (tp - 1.0) / tp * bytes / bandwidth
    }

    /// Data parallelism, less what hides behind the backward pass: the gradient all-reduce
    /// (ZeRO 0–2) or ZeRO-3's 1.5× volume in bf16, over every rank holding the same weights
    /// (the replicas and their context-parallel ranks, whose gradients each cover part of the
    /// sequences).
    pub fn exposed_data_parallel_seconds(&self, ideal: f64, notes: &mut Notes) -> f64 {
        let layout = self.workload.layout;
        let replicas = layout.dp * layout.cp.max(1);
        if replicas <= 1 {
            return 0.0;
        }
        let seconds =
            self.data_parallel_volume(f64::from(replicas)) / self.cluster.group_bandwidth(replicas, layout.tp).0;
        notes.add(|| {
            format!(
                "{:.0} % of data-parallel communication overlaps the backward pass (bucketed all-reduce)",
                data_parallel_overlap() * 100.0
            )
        });
        let hidden_behind = data_parallel_overlap() * ideal * if layout.zero >= 3 { 1.0 } else { 2.0 / 3.0 };
        (seconds - hidden_behind).max(0.0)
    }

    /// Bytes each GPU sends for its gradients (and ZeRO-3's gathers) among `dp` ranks.
    fn data_parallel_volume(&self, dp: f64) -> f64 {
        let (workload, shape) = (self.workload, self.shape);
        let layout = workload.layout;
        let split = f64::from(layout.tp) * self.stages();
        let share = 2.0 * (dp - 1.0) / dp;
        let adapters = matches!(workload.task, Task::Lora | Task::Qlora);
        let gradients = gradient_bytes(workload.task, workload.precision);
        if layout.zero >= 3 && !adapters {
            // Parameters on each GPU's shard of the model: the experts other EP ranks hold are not.
            let held = shape.parameters - shape.expert_parameters * (1.0 - 1.0 / layout.expert_split());
            1.5 * share * held / split * self.value_bytes()
        } else if layout.zero >= 3 {
            // Frozen base gathered in forward and backward, adapter gradients reduced.
            share * shape.parameters / split * weight_bytes(workload.task, workload.precision)
                + share * shape.trainable_parameters / split * gradients
        } else if layout.ep > 1 && !adapters {
            // Dense parameters reduced over every data-parallel rank; each GPU's share of the
            // experts over the ranks that hold the same ones.
            let experts = shape.expert_parameters.min(shape.trainable_parameters);
            let expert_dp = layout.expert_replicas(dp);
            (share * (shape.trainable_parameters - experts)
                + 2.0 * (expert_dp - 1.0) / expert_dp * experts / layout.expert_split())
                / split
                * gradients
        } else {
            share * shape.trainable_parameters / split * gradients
        }
    }

    /// Context parallelism (ring attention): each layer passes its K/V chunk around the ring
    /// cp − 1 times in the forward pass and twice as much in the backward.
    pub fn context_parallel_seconds(&self) -> f64 {
        let layout = self.workload.layout;
        if layout.cp <= 1 {
            return 0.0;
        }
        let cp = f64::from(layout.cp);
        let bytes = 2.0 * self.tokens_local() * self.shape.kv_width as f64 * self.value_bytes();
        self.micro_batches * self.layers_here() * 3.0 * (cp - 1.0) * bytes
            / self.cluster.group_bandwidth(layout.cp, layout.tp).0
    }

    /// Expert parallelism: each token goes to its top-k experts and comes back (dispatch and
    /// combine all-to-alls) in every MoE layer of the stage, forward and backward. With tensor
    /// parallelism the MoE layer's input is split over the TP GPUs (sequence parallelism, which
    /// Megatron-Core requires for MoE), so each sends its share of the tokens.
    pub fn expert_parallel_seconds(&self) -> f64 {
        let layout = self.workload.layout;
        if layout.ep <= 1 {
            return 0.0;
        }
        let bytes = self.tokens_local() / f64::from(layout.tp.max(1))
            * self.shape.hidden as f64
            * self.value_bytes()
            * self.shape.experts_per_token as f64;
        let stride = if layout.experts_folded() {
            layout.cp
        } else {
            layout.tp * layout.cp
        };
        self.micro_batches * self.moe_layers_here() * 4.0 * self.cluster.all_to_all_seconds(bytes, layout.ep, stride)
    }

    /// The expert-parallel exchanges a step waits for, of `exchanges` seconds of them beside
    /// `compute` seconds of compute. All of them, unless the all-to-alls are overlapped
    /// (Megatron-Core's combined 1F1B): then a micro-batch's dispatch and combine run beside the
    /// adjacent micro-batch's forward or backward pass, and the step waits only for the passes
    /// that have no partner ([`unpaired_share`]) and for what the partner's compute does not
    /// cover. Returns the exposed seconds and the unpaired share.
    pub fn exposed_expert_parallel_seconds(&self, exchanges: f64, compute: f64) -> (f64, f64) {
        if !self.workload.layout.ep_overlap || exchanges <= 0.0 {
            return (exchanges, 1.0);
        }
        let unpaired = unpaired_share(self.stages(), self.interleave(), self.micro_batches);
        let paired = 1.0 - unpaired;
        let exposed = exchanges * unpaired + (exchanges - compute).max(0.0) * paired;
        (exposed, unpaired)
    }

    /// Each routed expert a GPU holds costs launches of its own in every MoE layer and
    /// micro-batch.
    pub fn expert_kernel_seconds(&self, notes: &mut Notes) -> f64 {
        if self.shape.experts == 0 {
            return 0.0;
        }
        let local_experts = self.shape.experts as f64 / self.workload.layout.expert_split();
        let seconds = self.micro_batches * self.moe_layers_here() * local_experts * training_moe_expert_seconds();
        notes.add(|| {
            format!(
                "{local_experts:.0} routed experts on each GPU cost {:.1} ms per MoE layer and micro-batch beyond their FLOPs (per-expert casts and GEMM launches, set from Megatron-Bridge runs): {seconds:.2} s per step",
                local_experts * training_moe_expert_seconds() * 1e3
            )
        });
        seconds
    }
}

/// Of a combined 1F1B schedule's passes, the share that has no partner to overlap with: the
/// first rank's warm-up forwards (Megatron-Core's count, `p − 1` for 1F1B and
/// `2(p − 1) + (v − 1)·p` interleaved), the first steady forward, and their mirror in the
/// cool-down, out of `m·v` (one of `m` without a pipeline).
fn unpaired_share(stages: f64, interleave: f64, micro_batches: f64) -> f64 {
    let warm_up = if interleave > 1.0 {
        2.0 * (stages - 1.0) + (interleave - 1.0) * stages
    } else {
        stages - 1.0
    };
    ((warm_up + 1.0) / (micro_batches * interleave)).min(1.0)
}

#[cfg(test)]
mod tests {
    use super::unpaired_share;

    #[test]
    fn without_a_pipeline_only_the_first_forward_and_last_backward_go_unpaired() {
        assert!((unpaired_share(1.0, 1.0, 5.0) - 0.2).abs() < 1e-12);
        assert_eq!(
            unpaired_share(1.0, 1.0, 1.0),
            1.0,
            "one micro-batch has nothing to pair with"
        );
    }

    #[test]
    fn an_interleaved_pipeline_warms_up_over_its_virtual_stages() {
        // Qwen3-235B on H100 in Megatron-Bridge: PP 8, VP 4, 128 micro-batches.
        let share = unpaired_share(8.0, 4.0, 128.0);
        assert!((share - 39.0 / 512.0).abs() < 1e-12, "{share}");
        // Plain 1F1B with the same stages warms up over fewer passes.
        assert!((unpaired_share(8.0, 1.0, 128.0) - 8.0 / 128.0).abs() < 1e-12);
        // Too few micro-batches to reach a steady state: nothing overlaps.
        assert_eq!(unpaired_share(8.0, 4.0, 4.0), 1.0);
    }
}

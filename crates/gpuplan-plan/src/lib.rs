//! The planner: which offering, how many of it, in which parallel layout and billing mode runs
//! a workload cheapest (or fastest) within its constraints — and why the others lost.
//!
//! [`plan`] searches every offering of an [`OfferingSource`] × node count × parallel layout ×
//! allowed precision × billing mode. Each cluster shape is estimated once
//! ([`gpuplan_estimate`]) and shared by every offering of that shape, then priced per offering
//! and billing mode, filtered by the constraints (memory with a safety margin, deadline,
//! budget, latency targets, size limits, network) and ranked by the objective. The result is a
//! [`Plan`] with the cost–time Pareto front and the nearest misses of each constraint, or an
//! [`Infeasible`] report that says what to relax.
//!
//! The planner is pure and generic over its offering source, so tests run it on small
//! catalogs against a brute-force oracle.

mod configure;
mod dynamic_batching;
mod input_pipeline;
mod listing;
mod offering_source;
mod pareto;
mod plan;
mod rate;
mod recommendation;
mod rejection;
mod replica;
mod request;
mod startup;
mod tabular;
#[cfg(test)]
mod test_offering;

pub use configure::{
    CRITICAL_BATCH_TOKENS, Configured, DEFAULT_GLOBAL_BATCH, WorkloadTemplate, configure, default_global_batch,
    layout_candidates, micro_batch_per_stage,
};
pub use dynamic_batching::{BatchPass, DynamicPoint, DynamicReplica};
pub use input_pipeline::{
    DALI, DEFAULT_PIPELINE, FALLBACK_IMAGES_PER_VCPU, InputBound, InputSettings, input_bound, known_pipelines,
    pipeline_vcpus,
};
pub use listing::Listing;
pub use offering_source::OfferingSource;
pub use pareto::pareto_front;
pub use plan::{HOURS_PER_MONTH, Infeasible, Plan, PlanError, plan};
pub use plan::{OneFewer, OneFewerReading, SCALE_TO_ZERO_IDLE_SECONDS, ScaleToZero};
pub use rate::{Derivation, Rate, rate, reserved_rate};
pub use recommendation::{Batching, Percentiles, Recommendation, Serving, ServingLatency, candidate_label};
pub use rejection::{Constraint, Rejection};
pub use replica::SplitPools;
pub use request::{
    Constraints, DEFAULT_MAX_GPUS, DEFAULT_MAX_NODES, DEFAULT_MEMORY_MARGIN, DEFAULT_SERVING_HEADROOM,
    DEFAULT_TOLERANCE, Objective, Operational, PlanRequest, ServingTargets,
};
pub use startup::{
    CHECKPOINT_BYTES_PER_TRAINABLE_PARAMETER, DEFAULT_CHECKPOINT_INTERVAL_HOURS, FALLBACK_IMAGE_GB,
    FALLBACK_PROVISION_SECONDS, FALLBACK_TRANSFER_GBPS, JobWeights, Startup, StartupOverrides, checkpoint_bytes,
    startup,
};
pub use tabular::{
    CPU_CELL_ROUNDS_PER_VCPU_SECOND, DEFAULT_BOOSTING_ROUNDS, GPU_CELL_ROUNDS_PER_SECOND_V100, TABULAR_FIXED_SECONDS,
    TabularOption, TabularRequest, plan_tabular, tabular_shortfall,
};

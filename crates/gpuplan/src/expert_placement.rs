//! The knobs that place a mixture of experts' work, checked against the request: attention data
//! parallelism for serving and overlapped all-to-alls for training. `moe` says whether the
//! model routes its tokens to experts.

use crate::{Error, Field, RequestError, WorkloadRequest};
use gpuplan_model::{Checkpointing, Framework, Task};

/// Attention data parallelism serves a mixture of experts on a replica of two or more GPUs,
/// whose experts it spreads over all of them (an expert-parallel degree, if given, must be
/// the replica's).
pub(crate) fn check_attention_dp(request: &WorkloadRequest, moe: bool) -> Result<(), Error> {
    if request.attention_dp != Some(true) {
        return Ok(());
    }
    if request.task != Task::Inference || !moe {
        return Err(
            RequestError::not_applicable(Field::AttentionDp, "serving a mixture-of-experts model")
                .with_hint("drop it; a dense model's data parallelism is its replicas")
                .into(),
        );
    }
    let gpus = request.tp.or(request.gpus).unwrap_or(1);
    if gpus < 2 {
        return Err(
            RequestError::unsuitable(Field::AttentionDp, true, "needs a replica of two or more GPUs")
                .with_hint("give {gpus} 2 or more")
                .into(),
        );
    }
    if request.ep.is_some_and(|ep| ep != gpus) {
        return Err(RequestError::conflict(
            Field::AttentionDp,
            Field::Ep,
            "place the experts two ways: attention data parallelism spreads them over every GPU of the replica",
        )
        .with_hint("drop {ep}")
        .into());
    }
    Ok(())
}

/// Overlapping the expert-parallel all-to-alls is a schedule of Megatron-Core's for training a
/// mixture of experts whose experts are spread over two or more ranks.
pub(crate) fn check_ep_overlap(request: &WorkloadRequest, moe: bool) -> Result<(), Error> {
    if request.ep_overlap != Some(true) {
        return Ok(());
    }
    if !request.task.is_training() || !moe || request.ep.is_none_or(|ep| ep < 2) {
        return Err(RequestError::not_applicable(
            Field::EpOverlap,
            "training a mixture-of-experts model with expert parallelism ({ep} 2 or more)",
        )
        .with_hint("drop it, or give {ep}")
        .into());
    }
    if request.checkpointing == Some(Checkpointing::Full) {
        return Err(RequestError::conflict(
            Field::EpOverlap,
            Field::Checkpointing,
            "full disagree: Megatron-Core overlaps no all-to-all of a layer it recomputes whole",
        )
        .with_hint("drop one, or give {checkpointing} selective")
        .into());
    }
    if request.pp.is_some_and(|pp| pp > 1) && request.vp.is_none() {
        return Err(RequestError::needs(
            Field::EpOverlap,
            Field::Vp,
            " with pipeline stages: Megatron-Core overlaps the all-to-alls only in its interleaved schedule",
        )
        .with_hint("give {vp}, as the run sets it")
        .into());
    }
    if request.framework.is_some_and(|f| f != Framework::Megatron) {
        return Err(RequestError::conflict(
            Field::EpOverlap,
            Field::Framework,
            "disagree: overlapping the all-to-alls is Megatron-Core's combined 1F1B schedule",
        )
        .with_hint("drop it, or give {framework} megatron")
        .into());
    }
    Ok(())
}

//! `POST /api/v1/plan`: `gpuplan plan --format json`, the flags as the body. A request nothing
//! satisfies is answered 422 with the infeasibility report (the CLI's exit 1).

use crate::AppState;
use crate::error::ApiError;
use crate::json_body::JsonBody;
use axum::extract::State;
use axum::response::Response;
use gpuplan::PlanOptions;
use gpuplan::emit::wire::{InfeasibleJson, PlanJson};

/// Cancels a computation when the request that asked for it goes away.
struct CancelOnDrop(gpuplan::model::Cancel);

impl Drop for CancelOnDrop {
    fn drop(&mut self) {
        self.0.cancel();
    }
}

/// The best configurations over every offering, GPU count, layout and billing mode
/// (`gpuplan plan --format json`).
#[utoipa::path(post, path = "/api/v1/plan", tag = "planning", request_body = PlanOptions,
    responses((status = 200, body = PlanJson),
              (status = 400, description = "bad input (the CLI's exit 2)", body = crate::error::ProblemJson, content_type = "application/problem+json"),
              (status = 422, description = "nothing feasible (the CLI's exit 1), with the report in `report`; or a body of the wrong shape", body = crate::error::ProblemJson, content_type = "application/problem+json")))]
pub(crate) async fn plan(
    State(state): State<AppState>,
    JsonBody(options): JsonBody<PlanOptions>,
) -> Result<Response, ApiError> {
    options.check_fields()?;
    let key = super::cache_key("plan", &options);
    let catalog = state.catalog.clone();
    // Dropped with this request, answered or cut off at its time limit: the search then stops
    // at its next candidate and gives its core back.
    let cancel = gpuplan::model::Cancel::default();
    let _stop = CancelOnDrop(cancel.clone());
    let metrics = state.metrics.clone();
    // The answer echoes the request as the CLI's does, so a saved API answer exports and
    // diffs like a saved CLI one.
    let echoed = serde_json::to_value(&options).ok();
    let hub = state.hub.clone();
    let mut options = options;
    super::computed(&state, key, move || {
        if let Some(tabular) = options.tabular_query()? {
            return plan_tabular(&catalog, &tabular, options.top, echoed);
        }
        super::read_hub_workload(hub.as_ref(), &catalog, &mut options.workload)?;
        let mut query = options.query()?;
        query.cancel = cancel;
        let planned = gpuplan::plan_workload(&catalog, &query);
        if matches!(planned, Err(gpuplan::Error::Cancelled)) {
            metrics.cancelled();
        }
        match planned? {
            Ok(answer) => {
                let mut wire = answer.wire(gpuplan::Naming::Keys);
                wire.request = echoed;
                Ok(wire)
            }
            Err(infeasible) => {
                let report = InfeasibleJson::new(infeasible.as_ref(), gpuplan::Naming::Keys);
                let detail = report
                    .suggestion
                    .clone()
                    .unwrap_or_else(|| "no configuration satisfies the request".to_string());
                Err(ApiError::infeasible(
                    detail,
                    serde_json::to_value(&report).unwrap_or_default(),
                ))
            }
        }
    })
    .await
}

/// A tabular job's plan, in the same answer shape as a model's.
fn plan_tabular(
    catalog: &gpuplan::Catalog,
    query: &gpuplan::TabularQuery,
    top: usize,
    echoed: Option<serde_json::Value>,
) -> Result<PlanJson, ApiError> {
    let answer = gpuplan::plan_tabular_workload(catalog, query)?;
    let (options, defaults, assumptions) = (&answer.options, &answer.defaults, &answer.assumptions);
    if let Some(shortfall) = &answer.shortfall {
        let report = InfeasibleJson {
            feasible: false,
            candidates_evaluated: 0,
            rejected_counts: Default::default(),
            nearest: Vec::new(),
            suggestion: Some(shortfall.clone()),
        };
        let detail = report.suggestion.clone().unwrap_or_default();
        return Err(ApiError::infeasible(
            detail,
            serde_json::to_value(&report).unwrap_or_default(),
        ));
    }
    let mut wire = PlanJson::from_tabular(options, top, defaults, gpuplan::Naming::Keys, assumptions);
    wire.request = echoed;
    Ok(wire)
}

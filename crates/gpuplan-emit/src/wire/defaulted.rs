use gpuplan_model::field::{Defaulted, Naming};
use serde::Serialize;

/// One value chosen because the request left it open: the field's key, the value, why.
#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
pub struct DefaultedJson {
    /// The request key it sets (`seq`, `engine`, `headroom`).
    pub field: String,
    /// The value chosen, as the request would write it.
    pub value: String,
    pub why: String,
}

impl From<&Defaulted> for DefaultedJson {
    fn from(d: &Defaulted) -> Self {
        DefaultedJson {
            field: d.field.key().to_string(),
            value: d.value.clone(),
            why: d.why.clone(),
        }
    }
}

/// An answer's `defaults` (one line each, in the front end's words) and `defaulted` (the same
/// choices as records).
pub(crate) fn defaults(chosen: &[Defaulted], naming: Naming) -> (Vec<String>, Vec<DefaultedJson>) {
    (
        chosen.iter().map(|d| d.render(naming)).collect(),
        chosen.iter().map(DefaultedJson::from).collect(),
    )
}

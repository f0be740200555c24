use crate::Date;
use serde::{Deserialize, Serialize};

/// Where a set of catalog numbers comes from, and when it was read.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Source {
    /// The fields this source supports (e.g. `memory_gib`, `dense_tflops`).
    pub covers: Vec<String>,
    pub title: String,
    pub url: String,
    pub as_of: Date,
    #[serde(default)]
    pub note: Option<String>,
}

use serde::{Deserialize, Serialize};
use std::fmt;

/// The canonical id of an accelerator, e.g. `H100-SXM5-80GB`.
///
/// Ids are written once, in the catalog data; user input reaches an id through the catalog's
/// alias index, which folds case and separators and suggests the nearest id on a miss.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(transparent)]
pub struct AcceleratorId(String);

impl AcceleratorId {
    pub fn new(id: impl Into<String>) -> Self {
        AcceleratorId(id.into())
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for AcceleratorId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

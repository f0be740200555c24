//! What a provider charges for keeping and moving data: block and object storage per GB-month,
//! and tiered internet egress per GB.

use crate::{Date, ProviderId};
use serde::{Deserialize, Serialize};

/// One provider's storage and egress list prices, each part optional where nothing was
/// published.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StoragePricing {
    pub provider: ProviderId,
    /// Network block storage (the default SSD type), USD per GB-month.
    pub block_usd_per_gb_month: Option<f64>,
    pub block_kind: Option<String>,
    /// Object storage (standard class), USD per GB-month.
    pub object_usd_per_gb_month: Option<f64>,
    pub object_kind: Option<String>,
    /// Internet egress per month: `(GB up to, USD per GB)`, the last price also applying beyond
    /// its bound.
    pub egress_tiers: Option<Vec<(f64, f64)>>,
    pub egress_note: Option<String>,
    /// Sources, as `title — url (as of)`.
    pub sources: Vec<String>,
    pub as_of: Date,
}

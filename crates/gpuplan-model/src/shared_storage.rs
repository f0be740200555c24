//! Shared-file (ReadWriteMany) storage that a provider's managed Kubernetes offers, for the
//! checkpoints and model caches every node of a multi-node job reads and writes.

use crate::{ProviderId, Source};
use serde::{Deserialize, Serialize};

/// One provider's shared-file StorageClass and what a claim on it needs.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SharedStorage {
    pub provider: ProviderId,
    /// The StorageClass a claim names.
    pub storage_class: String,
    /// The file service behind it, in words.
    pub kind: String,
    /// Whether the managed Kubernetes installs the class itself; else the user creates it.
    pub built_in: bool,
    /// Whether a claim creates its volume; else the volume (a PersistentVolume over an existing
    /// file system) must exist before the claim binds.
    pub dynamic: bool,
    /// What the cluster needs before a claim binds, in words.
    pub needs: String,
    /// What the class does with the size a claim asks for.
    pub claim_size: ClaimSize,
    pub source: Source,
}

/// How a shared-file class treats the size of a claim.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub enum ClaimSize {
    /// The file system is elastic: the size is recorded, not provisioned (EFS).
    Ignored,
    /// Volumes start at `min_gib`: a smaller claim gets (and is billed for) that much.
    RoundedUpTo { min_gib: f64 },
    /// The sources read do not say.
    Unstated,
}

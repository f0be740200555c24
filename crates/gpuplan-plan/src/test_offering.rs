//! One offering for unit tests, with every optional column empty.

use gpuplan_model::{AcceleratorId, Bytes, Offering, ProviderId};

/// An AWS instance of `gpus` × `accelerator` (or none) with `vcpus`.
pub(crate) fn offering(accelerator: Option<&str>, gpus: u32, vcpus: f64) -> Offering {
    Offering {
        provider: ProviderId::new("aws"),
        instance_type: "test".into(),
        region: None,
        zone: None,
        accelerator: accelerator.map(AcceleratorId::new),
        accelerator_count: gpus,
        accelerator_memory: None,
        vcpus,
        memory: Bytes::from_gib(2048.0),
        local_disk: None,
        network: None,
        gpu_interconnect: None,
        node_network: None,
        on_demand: None,
        spot: None,
        billing_granularity: None,
        source: "test".into(),
        as_of: gpuplan_model::Date::new(2026, 11, 23).unwrap_or_else(|| unreachable!("a valid date")),
        notes: None,
        fabric: None,
        native: None,
        list_on_demand: None,
        list_spot: None,
        price_flags: Vec::new(),
    }
}

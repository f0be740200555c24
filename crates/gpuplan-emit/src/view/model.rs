use crate::Table;
use crate::wire::ModelSummaryJson;

/// Parameters in the units people say them: 124M, 6.74B, 1.07T.
pub fn parameter_count(parameters: u64) -> String {
    let value = parameters as f64;
    if value >= 1e12 {
        format!("{:.2}T", value / 1e12)
    } else if value >= 1e9 {
        format!("{:.2}B", value / 1e9)
    } else if value >= 1e6 {
        format!("{:.1}M", value / 1e6)
    } else {
        parameters.to_string()
    }
}

/// The listing of `gpuplan models`.
pub fn model_table(models: &[ModelSummaryJson]) -> Table {
    let mut table = Table::new([
        "id",
        "name",
        "kind",
        "parameters",
        "active",
        "layers",
        "hidden",
        "context",
    ])
    .right_aligned(&["parameters", "active", "layers", "hidden", "context"])
    .optional(&["hidden", "layers", "context", "kind"]);
    for m in models {
        let optional = |value: Option<u64>| value.map_or("-".to_string(), |v| v.to_string());
        table.push_row([
            m.id.clone(),
            m.name.clone(),
            m.architecture
                .clone()
                .map_or(m.kind.clone(), |a| format!("{} ({a})", m.kind)),
            parameter_count(m.parameters),
            if m.active_parameters == m.parameters {
                "-".to_string()
            } else {
                parameter_count(m.active_parameters)
            },
            optional(m.layers),
            optional(m.hidden_size),
            optional(m.context),
        ]);
    }
    table.footer.push(
        "Transformer parameters are counted from the architecture; `--model PATH` reads any Hugging Face config.json."
            .to_string(),
    );
    table
}

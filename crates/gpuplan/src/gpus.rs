use crate::Error;
use gpuplan_catalog::{Catalog, LookupError};
use gpuplan_model::Accelerator;

/// The answer to `gpus [NAME]`.
#[derive(Debug)]
pub enum GpuAnswer<'a> {
    /// Every accelerator (no name given), or every member of an ambiguous family.
    List {
        accelerators: Vec<&'a Accelerator>,
        note: Option<String>,
    },
    /// One accelerator in detail.
    One {
        accelerator: &'a Accelerator,
        note: Option<String>,
    },
}

/// Lists every accelerator, or describes the one `name` means. A family name with several
/// members (`A100`) lists the members with a note rather than failing.
pub fn show_gpus<'a>(catalog: &'a Catalog, name: Option<&str>) -> Result<GpuAnswer<'a>, Error> {
    let index = catalog.accelerators();
    let Some(name) = name else {
        return Ok(GpuAnswer::List {
            accelerators: index.iter().collect(),
            note: None,
        });
    };
    match index.resolve_one(name) {
        Ok(resolved) => {
            let family = index.resolve_family(name).unwrap_or_default();
            let others: Vec<String> = family
                .iter()
                .filter(|a| a.id != resolved.accelerator.id)
                .map(|a| a.id.to_string())
                .collect();
            let note = resolved.note.map(|_| {
                let mut note = format!("`{name}` means {}", resolved.accelerator.id);
                if !others.is_empty() {
                    note.push_str(&format!("; other variants: {}", others.join(", ")));
                }
                note
            });
            Ok(GpuAnswer::One {
                accelerator: resolved.accelerator,
                note,
            })
        }
        Err(LookupError::Ambiguous { candidates, .. }) => {
            let accelerators: Vec<&Accelerator> = candidates.iter().filter_map(|id| index.get(id)).collect();
            Ok(GpuAnswer::List {
                note: Some(format!(
                    "`{name}` matches {} accelerators; name one of them for its details and sources",
                    accelerators.len()
                )),
                accelerators,
            })
        }
        Err(error) => Err(error.into()),
    }
}

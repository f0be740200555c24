use gpuplan_model::{Accelerator, did_you_mean, normalize_name};
use std::collections::HashMap;

/// The accelerators of a catalog, with every id and alias folded into one lookup table.
///
/// Names are matched after [`normalize_name`] (case, spaces, `-`, `_` ignored). A name that
/// is no id or alias may still name a family by its tokens: `H100` matches every id whose
/// dash-separated tokens include `h100`, `A100 80GB` every id with `a100` and `80gb`.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct AcceleratorIndex {
    accelerators: Vec<Accelerator>,
    by_name: HashMap<String, usize>,
}

/// A name resolved to one accelerator; `note` says so when the name was not its id.
#[derive(Debug, Clone, Copy)]
pub struct Resolved<'a> {
    pub accelerator: &'a Accelerator,
    pub note: Option<&'static str>,
}

/// A name that resolves to no accelerator, or to several where one is needed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LookupError {
    #[error("unknown accelerator `{input}`")]
    Unknown { input: String, suggestion: Option<String> },
    #[error("`{input}` is ambiguous: it matches {}", candidates.join(", "))]
    Ambiguous { input: String, candidates: Vec<String> },
}

impl LookupError {
    /// A one-line hint for the user, where one helps.
    pub fn hint(&self) -> Option<String> {
        match self {
            LookupError::Unknown {
                suggestion: Some(name), ..
            } => Some(format!("did you mean `{name}`?")),
            LookupError::Unknown { suggestion: None, .. } => {
                Some("`gpuplan gpus` lists every accelerator with its aliases".to_string())
            }
            LookupError::Ambiguous { candidates, .. } => candidates
                .first()
                .map(|first| format!("name one of them, e.g. `{first}`")),
        }
    }
}

impl AcceleratorIndex {
    /// Indexes `accelerators`; fails when two of them share an id or alias.
    pub fn new(mut accelerators: Vec<Accelerator>) -> Result<AcceleratorIndex, String> {
        accelerators.sort_by(|a, b| a.id.cmp(&b.id));
        let mut by_name = HashMap::new();
        for (index, accelerator) in accelerators.iter().enumerate() {
            let names = std::iter::once(accelerator.id.as_str()).chain(accelerator.aliases.iter().map(String::as_str));
            for name in names {
                let key = normalize_name(name);
                if key.is_empty() {
                    return Err(format!("{} has an empty alias", accelerator.id));
                }
                if let Some(&other) = by_name.get(&key) {
                    if other != index {
                        let other: &Accelerator = &accelerators[other];
                        return Err(format!(
                            "the name `{name}` of {} is also a name of {}",
                            accelerator.id, other.id
                        ));
                    }
                }
                by_name.insert(key, index);
            }
        }
        Ok(AcceleratorIndex { accelerators, by_name })
    }

    /// Every accelerator, sorted by id.
    pub fn iter(&self) -> impl Iterator<Item = &Accelerator> {
        self.accelerators.iter()
    }

    pub fn len(&self) -> usize {
        self.accelerators.len()
    }

    pub fn is_empty(&self) -> bool {
        self.accelerators.is_empty()
    }

    /// The accelerator with exactly this id or alias (after folding).
    pub fn get(&self, name: &str) -> Option<&Accelerator> {
        self.by_name
            .get(&normalize_name(name))
            .map(|&index| &self.accelerators[index])
    }

    /// The accelerator with exactly this id or alias, to change (a calibration).
    pub(crate) fn get_mut(&mut self, name: &str) -> Option<&mut Accelerator> {
        let index = *self.by_name.get(&normalize_name(name))?;
        self.accelerators.get_mut(index)
    }

    /// One accelerator for `input`: an id or alias, or a family name with a single member.
    pub fn resolve_one(&self, input: &str) -> Result<Resolved<'_>, LookupError> {
        if let Some(accelerator) = self.get(input) {
            let note = (normalize_name(input) != normalize_name(accelerator.id.as_str())).then_some("alias");
            return Ok(Resolved { accelerator, note });
        }
        match self.family_members(input).as_slice() {
            [] => Err(self.unknown(input)),
            [only] => Ok(Resolved {
                accelerator: only,
                note: Some("family"),
            }),
            several => Err(LookupError::Ambiguous {
                input: input.to_string(),
                candidates: several.iter().map(|a| a.id.to_string()).collect(),
            }),
        }
    }

    /// Every accelerator `input` can mean: its exact match plus every id of the family it names.
    /// For filters, where `H100` should find the SXM, PCIe and NVL parts alike.
    pub fn resolve_family(&self, input: &str) -> Result<Vec<&Accelerator>, LookupError> {
        let mut members = self.family_members(input);
        if let Some(exact) = self.get(input) {
            members.retain(|member| member.id != exact.id);
            members.insert(0, exact);
        }
        if members.is_empty() {
            return Err(self.unknown(input));
        }
        Ok(members)
    }

    fn family_members(&self, input: &str) -> Vec<&Accelerator> {
        let wanted = tokens(input);
        if wanted.is_empty() {
            return Vec::new();
        }
        self.accelerators
            .iter()
            .filter(|accelerator| {
                let have = tokens(accelerator.id.as_str());
                wanted
                    .iter()
                    .all(|token| have.iter().any(|own| token_matches(token, own)))
            })
            .collect()
    }

    fn unknown(&self, input: &str) -> LookupError {
        let names = self
            .accelerators
            .iter()
            .flat_map(|a| std::iter::once(a.id.as_str()).chain(a.aliases.iter().map(String::as_str)));
        LookupError::Unknown {
            input: input.to_string(),
            suggestion: did_you_mean(input, names).map(str::to_string),
        }
    }
}

fn tokens(name: &str) -> Vec<String> {
    name.split([' ', '-', '_', '/'])
        .filter(|token| !token.is_empty())
        .map(str::to_lowercase)
        .collect()
}

/// `sxm` matches `sxm5` (a generation suffix) and `80g` matches `80gb`; `a10` does not
/// match `a100` (a different part).
fn token_matches(typed: &str, own: &str) -> bool {
    if typed == own {
        return true;
    }
    let Some(rest) = own.strip_prefix(typed) else {
        return false;
    };
    let typed_is_word = typed.chars().all(|c| c.is_ascii_alphabetic());
    (typed_is_word && rest.chars().all(|c| c.is_ascii_digit())) || (typed.ends_with('g') && rest == "b")
}

#[cfg(test)]
mod tests {
    use super::*;
    use gpuplan_model::{AcceleratorId, Bytes, PeakTable};

    fn accelerator(id: &str, aliases: &[&str]) -> Accelerator {
        Accelerator {
            id: AcceleratorId::new(id),
            name: id.to_string(),
            vendor: "NVIDIA".to_string(),
            architecture: "test".to_string(),
            compute_capability: None,
            form_factor: None,
            release_year: None,
            memory: Bytes::from_gib(80.0),
            reported_memory: None,
            memory_type: None,
            memory_bandwidth: None,
            tdp: None,
            pcie_generation: None,
            nvlink: None,
            interconnect: None,
            peer_link: None,
            scale_up_domain: None,
            gpus_per_node: None,
            cores_per_device: None,
            aliases: aliases.iter().map(|a| a.to_string()).collect(),
            dense: PeakTable::default(),
            sparse: PeakTable::default(),
            stacks: Vec::new(),
            sources: Vec::new(),
        }
    }

    fn index() -> AcceleratorIndex {
        AcceleratorIndex::new(vec![
            accelerator("H100-SXM5-80GB", &["H100", "H100-80GB"]),
            accelerator("H100-PCIE-80GB", &["H100-PCIe"]),
            accelerator("A100-SXM4-80GB", &["A100-80GB"]),
            accelerator("A100-PCIE-80GB", &[]),
            accelerator("A100-SXM4-40GB", &["A100-40GB"]),
            accelerator("A10", &[]),
            accelerator("A10G", &[]),
        ])
        .unwrap()
    }

    #[test]
    fn exact_names_fold_case_and_separators() {
        let index = index();
        assert_eq!(
            index.resolve_one("h100").unwrap().accelerator.id.as_str(),
            "H100-SXM5-80GB"
        );
        assert_eq!(
            index.resolve_one("h100 pcie").unwrap().accelerator.id.as_str(),
            "H100-PCIE-80GB"
        );
        assert_eq!(index.resolve_one("A10").unwrap().accelerator.id.as_str(), "A10");
        assert!(index.resolve_one("H100-SXM5-80GB").unwrap().note.is_none());
        assert_eq!(index.resolve_one("h100").unwrap().note, Some("alias"));
    }

    #[test]
    fn a_bare_family_name_is_ambiguous() {
        let error = index().resolve_one("A100").unwrap_err();
        let LookupError::Ambiguous { candidates, .. } = error else {
            panic!("{error:?}")
        };
        assert_eq!(candidates, ["A100-PCIE-80GB", "A100-SXM4-40GB", "A100-SXM4-80GB"]);
    }

    #[test]
    fn families_gather_every_variant() {
        let ids = |name| -> Vec<String> {
            index()
                .resolve_family(name)
                .unwrap()
                .iter()
                .map(|a| a.id.to_string())
                .collect()
        };
        assert_eq!(ids("H100"), ["H100-SXM5-80GB", "H100-PCIE-80GB"]);
        assert_eq!(ids("a100 80g"), ["A100-PCIE-80GB", "A100-SXM4-80GB"]);
        assert_eq!(ids("A10"), ["A10"]);
    }

    #[test]
    fn a_typo_gets_a_suggestion() {
        let error = index().resolve_one("h1OO").unwrap_err();
        assert_eq!(error.hint().as_deref(), Some("did you mean `H100`?"));
    }

    #[test]
    fn colliding_aliases_are_rejected() {
        let error = AcceleratorIndex::new(vec![accelerator("X-1", &["shared"]), accelerator("X-2", &["SHARED"])]);
        assert!(error.unwrap_err().to_lowercase().contains("shared"));
    }
}

//! Which accelerators a job's software runs on: the CUDA release it is built with and the
//! framework builds it needs (`pytorch==2.5`, `vllm==0.8`), from the compatibility data.

use crate::{Defaulted, Error, Field, RequestError};
use gpuplan_catalog::Catalog;
use gpuplan_catalog::compatibility::{Compatibility, FrameworkBuild, Version};
use gpuplan_model::{Accelerator, AcceleratorId, Framework};

/// A framework build the job needs: a name the compatibility data knows, and a version
/// matched on the parts given (`2.5` is any 2.5.x).
#[derive(Debug, Clone, PartialEq)]
pub struct SoftwareBuild {
    pub name: String,
    pub version: Option<Version>,
}

impl std::fmt::Display for SoftwareBuild {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.version {
            Some(v) => write!(f, "{}=={v}", self.name),
            None => f.write_str(&self.name),
        }
    }
}

/// The line a training answer carries when `--framework` named builds but no recipe.
pub fn no_recipe(builds: &[SoftwareBuild]) -> Defaulted {
    let named: Vec<String> = builds.iter().map(ToString::to_string).collect();
    Defaulted::new(
        Field::Framework,
        named.join(","),
        "no training recipe: the builds only limit the GPUs to those they run on, and memory and speed are \
         modelled without a recipe's defaults (add one: torchtune, megatron, …)",
    )
}

/// `--framework`'s comma list split into the training recipe (`torchtune`) and the framework
/// builds (`pytorch==2.5`, or `vllm` for any version): an item is a recipe when it names one,
/// a build otherwise. Only the syntax is checked here; [`check_builds`] checks the builds
/// against the catalog's compatibility data.
pub fn split_framework(text: &Option<String>) -> Result<(Option<Framework>, Vec<SoftwareBuild>), Error> {
    let Some(text) = text else {
        return Ok((None, Vec::new()));
    };
    let mut recipe = None;
    let mut builds = Vec::new();
    for item in text.split(',').map(str::trim).filter(|i| !i.is_empty()) {
        let (name, version) = item
            .split_once("==")
            .map_or((item, None), |(n, v)| (n.trim(), Some(v.trim())));
        match (version, item.parse::<Framework>()) {
            (None, Ok(_)) if recipe.is_some() => {
                return Err(
                    RequestError::invalid(Field::Framework, text, "more than one training framework")
                        .with_hint("name one recipe (e.g. torchtune) and any builds (e.g. pytorch==2.5)")
                        .into(),
                );
            }
            (None, Ok(framework)) => recipe = Some(framework),
            _ => builds.push(build(name, version)?),
        }
    }
    Ok((recipe, builds))
}

fn build(name: &str, version: Option<&str>) -> Result<SoftwareBuild, Error> {
    let version = version
        .map(|v| {
            v.parse::<Version>()
                .map_err(|e| RequestError::invalid(Field::Framework, name, e))
        })
        .transpose()?;
    Ok(SoftwareBuild {
        name: name.to_lowercase(),
        version,
    })
}

/// Each build in the catalog's compatibility data, or an error naming the versions it has.
fn check_builds(facts: &Compatibility, builds: &[SoftwareBuild]) -> Result<(), Error> {
    for wanted in builds {
        if !facts.builds(&wanted.name, wanted.version.as_ref()).is_empty() {
            continue;
        }
        let known: Vec<String> = facts
            .builds(&wanted.name, None)
            .iter()
            .map(|b| b.version.to_string())
            .collect();
        let recipes: Vec<&str> = Framework::ALL.iter().map(|f| f.name()).collect();
        let hint = if known.is_empty() {
            "name one training recipe and any framework builds, a build with its version (torchtune,pytorch==2.5)"
                .to_string()
        } else {
            format!("{} versions known: {}", wanted.name, known.join(", "))
        };
        let near = gpuplan_model::did_you_mean(
            &wanted.name,
            Framework::ALL.iter().map(|f| f.name()).chain(facts.framework_names()),
        );
        let error = if known.is_empty() {
            let near = near.map_or(String::new(), |near| format!("; did you mean `{near}`?"));
            RequestError::invalid(
                Field::Framework,
                "",
                format!(
                    "unknown framework `{}` (expected one of {}, or a framework build: {}){near}",
                    wanted.name,
                    recipes.join(", "),
                    facts.framework_names().join(", ")
                ),
            )
        } else {
            RequestError::invalid(Field::Framework, wanted, "not in the compatibility data")
        };
        return Err(error.with_hint(hint).into());
    }
    Ok(())
}

/// The rows of `build` that can be used, built for `cuda` when one is given.
fn usable_rows<'a>(
    facts: &'a Compatibility,
    build: &SoftwareBuild,
    cuda: Option<&Version>,
) -> Result<Vec<&'a FrameworkBuild>, Error> {
    let rows = facts.builds(&build.name, build.version.as_ref());
    let Some(cuda) = cuda else {
        return Ok(rows);
    };
    let kept: Vec<&FrameworkBuild> = rows.iter().copied().filter(|r| r.built_for(cuda)).collect();
    if kept.is_empty() {
        let built: std::collections::BTreeSet<String> = rows
            .iter()
            .flat_map(|r| r.cuda.iter().map(|c| c.truncated(2).to_string()))
            .collect();
        return Err(Error::invalid(
            format!("{{framework}} {build} has no build for CUDA {cuda}"),
            Some(format!(
                "its builds are for CUDA {}; change {{cuda}} or the version",
                built.into_iter().collect::<Vec<_>>().join(", ")
            )),
        ));
    }
    Ok(kept)
}

fn capability(accelerator: &Accelerator) -> Option<Version> {
    accelerator.compute_capability.as_deref().and_then(|cc| cc.parse().ok())
}

/// The accelerators the job's software does not run on — outside the compute capabilities
/// `cuda` compiles for or that every build in `builds` supports, and those without CUDA — with
/// a line in `notes` saying what was kept.
pub fn not_running(
    catalog: &Catalog,
    cuda: Option<&str>,
    builds: &[SoftwareBuild],
    notes: &mut Vec<String>,
) -> Result<Vec<AcceleratorId>, Error> {
    if cuda.is_none() && builds.is_empty() {
        return Ok(Vec::new());
    }
    let facts = catalog.compatibility();
    check_builds(facts, builds)?;
    let cuda = cuda
        .map(|c| {
            c.parse::<Version>()
                .map_err(|e| RequestError::invalid(Field::Cuda, "", e))
        })
        .transpose()?;
    let range = cuda
        .as_ref()
        .map(|c| {
            facts.compute_range(c).ok_or_else(|| {
                RequestError::invalid(Field::Cuda, c, "not a CUDA release the catalog knows")
                    .with_hint("give a released version, e.g. 12.4")
            })
        })
        .transpose()?;
    let rows: Vec<Vec<&FrameworkBuild>> = builds
        .iter()
        .map(|b| usable_rows(facts, b, cuda.as_ref()))
        .collect::<Result<_, _>>()?;
    let runs = |a: &Accelerator| {
        capability(a).is_some_and(|cc| {
            range.is_none_or(|r| {
                r.min_compute_capability <= cc && r.max_compute_capability.as_ref().is_none_or(|max| cc <= *max)
            }) && rows
                .iter()
                .all(|build_rows| build_rows.iter().any(|row| row.runs_on(&cc)))
        })
    };
    let (kept, left): (Vec<&Accelerator>, Vec<&Accelerator>) = catalog.accelerators().iter().partition(|a| runs(a));
    notes.push(kept_line(cuda.as_ref(), range, builds, &rows, kept.len(), &left));
    Ok(left.iter().map(|a| a.id.clone()).collect())
}

fn kept_line(
    cuda: Option<&Version>,
    range: Option<&gpuplan_catalog::compatibility::CudaCompute>,
    builds: &[SoftwareBuild],
    rows: &[Vec<&FrameworkBuild>],
    kept: usize,
    left: &[&Accelerator],
) -> String {
    let mut what = Vec::new();
    if let (Some(cuda), Some(range)) = (cuda, range) {
        what.push(format!(
            "--cuda {cuda} compiles for compute capability {}{}",
            range.min_compute_capability,
            range
                .max_compute_capability
                .as_ref()
                .map_or("+".to_string(), |m| format!("–{m}"))
        ));
    }
    for (build, rows) in builds.iter().zip(rows) {
        // The lowest compute capability any matching release runs on (`None`, no floor, orders
        // first), and the highest (any release without a ceiling: none).
        let lowest = rows.iter().map(|r| r.min_compute_capability.clone()).min().flatten();
        let highest = rows
            .iter()
            .map(|r| r.max_compute_capability.clone())
            .collect::<Option<Vec<_>>>()
            .and_then(|ceilings| ceilings.into_iter().max());
        what.push(match (lowest, highest) {
            (Some(min), Some(max)) => format!("{build} runs on compute capability {min}–{max}"),
            (Some(min), None) => format!("{build} runs on compute capability {min}+"),
            (None, Some(max)) => format!("{build} runs on compute capability up to {max}"),
            (None, None) => format!("{build} runs on any CUDA GPU"),
        });
    }
    let cuda_gpus_left: Vec<&str> = left
        .iter()
        .filter(|a| a.compute_capability.is_some())
        .map(|a| a.id.as_str())
        .collect();
    format!(
        "{}: {kept} accelerators kept{}",
        what.join("; "),
        if cuda_gpus_left.is_empty() {
            ", accelerators without CUDA left out".to_string()
        } else {
            format!("; left out {} and accelerators without CUDA", cuda_gpus_left.join(", "))
        }
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn recipes_and_builds_are_told_apart() {
        let (recipe, builds) = split_framework(&Some("torchtune, pytorch==2.5".to_string())).unwrap();
        assert_eq!(recipe, Some(Framework::Torchtune));
        assert_eq!(builds.len(), 1);
        assert_eq!(builds[0].to_string(), "pytorch==2.5");
        let (recipe, builds) = split_framework(&Some("tensorflow".to_string())).unwrap();
        assert_eq!((recipe, builds.len()), (None, 1));
    }

    #[test]
    fn unknown_builds_and_two_recipes_are_refused() {
        let catalog = Catalog::embedded().unwrap();
        let facts = catalog.compatibility();
        let (_, builds) = split_framework(&Some("pytorch==1.2".to_string())).unwrap();
        let error = check_builds(facts, &builds).unwrap_err();
        assert!(error.to_string().contains("not in the compatibility data"), "{error}");
        let error = split_framework(&Some("torchtune,axolotl".to_string())).unwrap_err();
        assert!(error.to_string().contains("more than one"), "{error}");
        let (_, builds) = split_framework(&Some("keras".to_string())).unwrap();
        let error = check_builds(facts, &builds).unwrap_err();
        assert!(error.to_string().starts_with("--framework: "), "{error}");
    }

    #[test]
    fn a_build_without_blackwell_kernels_leaves_blackwell_out() {
        let catalog = Catalog::embedded().unwrap();
        let mut notes = Vec::new();
        let builds = [SoftwareBuild {
            name: "pytorch".into(),
            version: Some("2.5".parse().unwrap()),
        }];
        let left = not_running(&catalog, None, &builds, &mut notes).unwrap();
        let left: Vec<&str> = left.iter().map(|a| a.as_str()).collect();
        assert!(left.iter().any(|a| a.starts_with("B200")), "{left:?}");
        assert!(!left.iter().any(|a| a.starts_with("H100")), "{left:?}");
        assert!(
            notes[0].starts_with("pytorch==2.5 runs on compute capability 5.0–9.0"),
            "{notes:?}"
        );
        let error = not_running(&catalog, Some("12.8"), &builds, &mut notes).unwrap_err();
        assert!(error.to_string().contains("no build for CUDA 12.8"), "{error}");
    }
}

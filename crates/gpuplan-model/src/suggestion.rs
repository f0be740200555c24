use crate::normalize_name;

/// The candidate closest to `input`, if it is close enough to be a plausible typo.
///
/// Names are compared after [`normalize_name`], with the Jaro-Winkler similarity, which
/// rewards a shared prefix (`h1OO` → `H100`). Returns `None` when nothing is similar enough
/// for a hint to help rather than confuse.
pub fn did_you_mean<'a, I>(input: &str, candidates: I) -> Option<&'a str>
where
    I: IntoIterator<Item = &'a str>,
{
    /// Below this similarity a suggestion is more noise than help (casey/just uses a
    /// Levenshtein bound for the same purpose; Jaro-Winkler suits short model names better).
    const MIN_SIMILARITY: f64 = 0.8;
    /// No name in the catalog is longer; comparing a pasted page against every name would
    /// take quadratic time for nothing.
    const MAX_INPUT_CHARS: usize = 200;
    if input.chars().count() > MAX_INPUT_CHARS {
        return None;
    }
    let typed = normalize_name(input);
    let typed_lenient = typed.replace('o', "0");
    candidates
        .into_iter()
        .map(|candidate| {
            let folded = normalize_name(candidate);
            let score = strsim::jaro_winkler(&typed, &folded).max(strsim::jaro_winkler(&typed_lenient, &folded));
            (score, candidate)
        })
        .filter(|(score, _)| *score >= MIN_SIMILARITY)
        .max_by(|a, b| a.0.total_cmp(&b.0))
        .map(|(_, candidate)| candidate)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn suggests_the_nearest_name() {
        let names = ["H100-SXM5-80GB", "H100", "A100-SXM4-80GB", "T4"];
        assert_eq!(did_you_mean("h1OO", names), Some("H100"));
        assert_eq!(did_you_mean("a100-sxm4-80g", names), Some("A100-SXM4-80GB"));
    }

    #[test]
    fn stays_silent_when_nothing_is_close() {
        assert_eq!(did_you_mean("quantum", ["H100", "T4"]), None);
    }
}

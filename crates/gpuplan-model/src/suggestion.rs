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
    let scored: Vec<(f64, usize, &'a str)> = candidates
        .into_iter()
        .map(|candidate| {
            let folded = normalize_name(candidate);
            let score = strsim::jaro_winkler(&typed, &folded).max(strsim::jaro_winkler(&typed_lenient, &folded));
            (score, shared_prefix(&typed, &folded), candidate)
        })
        .filter(|(score, _, _)| *score >= MIN_SIMILARITY)
        .collect();
    let best = scored
        .iter()
        .map(|(score, _, _)| *score)
        .fold(f64::NEG_INFINITY, f64::max);
    // Near-ties go to the name that shares more of what was typed from the start: the family
    // and size word (`GN10Xp.2XLARGE32` → `GN10Xp.2XLARGE40`, not `GN10Xp.20XLARGE320`).
    scored
        .into_iter()
        .filter(|(score, _, _)| best - score <= NEAR_TIE)
        .max_by(|a, b| a.1.cmp(&b.1).then(a.0.total_cmp(&b.0)))
        .map(|(_, _, candidate)| candidate)
}

/// Similarities this close are the same guess; the shared prefix decides between them.
const NEAR_TIE: f64 = 0.03;

/// How many leading characters `a` and `b` share.
fn shared_prefix(a: &str, b: &str) -> usize {
    a.chars().zip(b.chars()).take_while(|(x, y)| x == y).count()
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
    fn near_ties_keep_the_family_and_size_word() {
        let sizes = ["GN10Xp.20XLARGE320", "GN10Xp.2XLARGE40", "GN10Xp.10XLARGE160"];
        assert_eq!(did_you_mean("GN10Xp.2XLARGE32", sizes), Some("GN10Xp.2XLARGE40"));
    }

    #[test]
    fn stays_silent_when_nothing_is_close() {
        assert_eq!(did_you_mean("quantum", ["H100", "T4"]), None);
    }
}

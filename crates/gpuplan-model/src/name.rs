/// Folds a name the way users type it into one comparable key: lower case, with spaces,
/// `-`, `_`, `.` and `/` removed. `"A100 80GB"`, `"a100-80gb"` and `"A100_80GB"` all become
/// `"a10080gb"`.
pub fn normalize_name(name: &str) -> String {
    name.chars()
        .filter(|c| !matches!(c, ' ' | '-' | '_' | '.' | '/' | '\t'))
        .flat_map(char::to_lowercase)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn folds_case_and_separators() {
        assert_eq!(normalize_name("A100 80GB"), "a10080gb");
        assert_eq!(normalize_name("a100-80gb"), "a10080gb");
        assert_eq!(normalize_name("RTX_PRO_6000"), "rtxpro6000");
        assert_eq!(normalize_name("TPU v5e"), "tpuv5e");
    }
}

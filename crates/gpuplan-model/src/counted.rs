//! A count with its noun in the right number, for the sentences the answers print.

/// `n` followed by `one` when it is 1 and `many` otherwise: "1 replica", "3 replicas".
pub fn counted(n: impl Into<f64>, one: &str, many: &str) -> String {
    let n = n.into();
    let noun = if n == 1.0 { one } else { many };
    if n.fract() == 0.0 {
        format!("{n:.0} {noun}")
    } else {
        format!("{n} {noun}")
    }
}

#[cfg(test)]
mod tests {
    use super::counted;

    #[test]
    fn one_is_singular_and_the_rest_plural() {
        assert_eq!(counted(1, "replica", "replicas"), "1 replica");
        assert_eq!(counted(0, "replica", "replicas"), "0 replicas");
        assert_eq!(counted(3u32, "scheduler step", "scheduler steps"), "3 scheduler steps");
        assert_eq!(counted(2.5, "GPU", "GPUs"), "2.5 GPUs");
    }
}

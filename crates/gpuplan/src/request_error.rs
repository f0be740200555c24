//! What is wrong with one field of a request, as data: the field, the kind of fault and the
//! values involved. Each front end renders it in its own words (flags on the command line,
//! keys in job files and API answers), and API clients match on the code and the field.

use crate::{Field, Naming, Phrase};

/// One field of a request refused, and why.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{}", self.message(Naming::Flags))]
pub struct RequestError {
    pub field: Field,
    pub kind: RequestProblem,
    /// What to do instead.
    pub hint: Option<Phrase>,
}

/// The kinds of fault a field can have.
#[derive(Debug, Clone, PartialEq)]
pub enum RequestProblem {
    /// A number outside what the field allows (`allowed`: "at least 1", "a positive number").
    OutOfRange { value: String, allowed: Phrase },
    /// A number past a limit, said as what it is (`limit`: "outside 0 to 0.9", "below {qps} 10").
    Beyond { value: String, limit: Phrase },
    /// Given, but meaningless for this request (`applies_to`: "{task} inference").
    NotApplicable { applies_to: Phrase },
    /// Given together with `with`, which states the same thing another way or contradicts it.
    Conflict { with: Field, why: Phrase },
    /// Not given, and the request cannot be answered without it (`why`: "to name the model").
    Missing { why: Phrase },
    /// Given without `other`, which it needs (`why`: " (samples per epoch)").
    Needs { other: Field, why: Phrase },
    /// A value of the wrong form (`why`: "`next` is not a release line").
    Invalid { value: String, why: Phrase },
    /// A well-formed value this request cannot use (`why`: "does not train weights").
    Unsuitable { value: String, why: Phrase },
}

impl RequestError {
    pub fn new(field: Field, kind: RequestProblem) -> Self {
        RequestError {
            field,
            kind,
            hint: None,
        }
    }

    pub fn with_hint(mut self, hint: impl Into<Phrase>) -> Self {
        self.hint = Some(hint.into());
        self
    }

    /// `field` must be `allowed` ("at least 1"); `value` is what was given.
    pub fn out_of_range(field: Field, value: impl ToString, allowed: impl Into<Phrase>) -> Self {
        RequestError::new(
            field,
            RequestProblem::OutOfRange {
                value: value.to_string(),
                allowed: allowed.into(),
            },
        )
    }

    /// `field`'s `value` is `limit` ("outside 0 to 0.9").
    pub fn beyond(field: Field, value: impl ToString, limit: impl Into<Phrase>) -> Self {
        RequestError::new(
            field,
            RequestProblem::Beyond {
                value: value.to_string(),
                limit: limit.into(),
            },
        )
    }

    /// `field`'s `value` is well formed but `why` ("does not train weights").
    pub fn unsuitable(field: Field, value: impl ToString, why: impl Into<Phrase>) -> Self {
        RequestError::new(
            field,
            RequestProblem::Unsuitable {
                value: value.to_string(),
                why: why.into(),
            },
        )
    }

    pub fn not_applicable(field: Field, applies_to: impl Into<Phrase>) -> Self {
        RequestError::new(
            field,
            RequestProblem::NotApplicable {
                applies_to: applies_to.into(),
            },
        )
    }

    pub fn conflict(field: Field, with: Field, why: impl Into<Phrase>) -> Self {
        RequestError::new(field, RequestProblem::Conflict { with, why: why.into() })
    }

    /// `field` is needed and was not given; `why` says what for.
    pub fn missing(field: Field, why: impl Into<Phrase>) -> Self {
        RequestError::new(field, RequestProblem::Missing { why: why.into() })
    }

    /// `field` was given without `other`, which it needs.
    pub fn needs(field: Field, other: Field, why: impl Into<Phrase>) -> Self {
        RequestError::new(field, RequestProblem::Needs { other, why: why.into() })
    }

    pub fn invalid(field: Field, value: impl ToString, why: impl Into<Phrase>) -> Self {
        RequestError::new(
            field,
            RequestProblem::Invalid {
                value: value.to_string(),
                why: why.into(),
            },
        )
    }

    /// The message in `naming`'s words.
    pub fn message(&self, naming: Naming) -> String {
        let name = self.field.named(naming);
        match &self.kind {
            RequestProblem::OutOfRange { value, allowed } => {
                format!("{name} must be {}, found {value}", allowed.render(naming))
            }
            RequestProblem::Beyond { value, limit } => format!("{name} {value} is {}", limit.render(naming)),
            RequestProblem::NotApplicable { applies_to } => {
                format!("{name} applies to {}", applies_to.render(naming))
            }
            RequestProblem::Conflict { with, why } => {
                format!("{name} and {} {}", with.named(naming), why.render(naming))
            }
            RequestProblem::Missing { why } => format!("{name} is needed {}", why.render(naming)),
            RequestProblem::Needs { other, why } => {
                format!("{name} needs {}{}", other.named(naming), why.render(naming))
            }
            RequestProblem::Invalid { value, why } if value.is_empty() => format!("{name}: {}", why.render(naming)),
            RequestProblem::Invalid { value, why } => format!("{name} {value}: {}", why.render(naming)),
            RequestProblem::Unsuitable { value, why } => format!("{name} {value} {}", why.render(naming)),
        }
    }

    /// The hint in `naming`'s words.
    pub fn hint_in(&self, naming: Naming) -> Option<String> {
        self.hint.as_ref().map(|h| h.render(naming))
    }

    /// The machine-readable kind (`out_of_range`).
    pub fn code(&self) -> crate::ErrorCode {
        use crate::ErrorCode;
        match self.kind {
            RequestProblem::OutOfRange { .. } | RequestProblem::Beyond { .. } => ErrorCode::OutOfRange,
            RequestProblem::NotApplicable { .. } => ErrorCode::NotApplicable,
            RequestProblem::Conflict { .. } => ErrorCode::ConflictingFields,
            RequestProblem::Needs { .. } | RequestProblem::Missing { .. } => ErrorCode::MissingField,
            RequestProblem::Invalid { .. } | RequestProblem::Unsuitable { .. } => ErrorCode::InvalidValue,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_kind_reads_in_flags_and_in_keys() {
        let cases = [
            (
                RequestError::out_of_range(Field::LoraRank, 0, "at least 1"),
                "--lora-rank must be at least 1, found 0",
                "`lora_rank` must be at least 1, found 0",
            ),
            (
                RequestError::beyond(Field::PeakQps, 5, "below {qps} 10"),
                "--peak-qps 5 is below --qps 10",
                "`peak_qps` 5 is below `qps` 10",
            ),
            (
                RequestError::not_applicable(Field::Qps, "serving ({task} inference)"),
                "--qps applies to serving (--task inference)",
                "`qps` applies to serving (`task` inference)",
            ),
            (
                RequestError::conflict(Field::Qps, Field::Concurrency, "state the load two ways; give one"),
                "--qps and --concurrency state the load two ways; give one",
                "`qps` and `concurrency` state the load two ways; give one",
            ),
            (
                RequestError::needs(Field::Epochs, Field::DatasetSize, " (samples per epoch)"),
                "--epochs needs --dataset-size (samples per epoch)",
                "`epochs` needs `dataset_size` (samples per epoch)",
            ),
            (
                RequestError::unsuitable(Field::Precision, "int4", "does not train weights"),
                "--precision int4 does not train weights",
                "`precision` int4 does not train weights",
            ),
            (
                RequestError::invalid(Field::Engine, "vllm@next", "`next` is not a release line"),
                "--engine vllm@next: `next` is not a release line",
                "`engine` vllm@next: `next` is not a release line",
            ),
        ];
        for (error, flags, keys) in cases {
            assert_eq!(error.message(Naming::Flags), flags);
            assert_eq!(error.to_string(), flags);
            assert_eq!(error.message(Naming::Keys), keys);
        }
    }
}

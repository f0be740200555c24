use crate::request_error::RequestError;
use crate::{Field, Naming, Phrase};
use gpuplan_catalog::{CatalogError, LookupError};

/// How a run ended, as the process exit code every front end reports.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ExitStatus {
    /// An answer was found.
    Success = 0,
    /// The request was valid but no configuration satisfies it.
    Infeasible = 1,
    /// The request or the catalog was wrong.
    Error = 2,
}

/// What went wrong, as one table every front end reads: the stable code machines match on,
/// the exit status the CLI ends with, the HTTP status the API answers with, and a short title.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ErrorCode {
    UnknownAccelerator,
    AmbiguousAccelerator,
    /// The catalog given (`--catalog DIR`) or built in could not be read: the server's fault
    /// when it loaded it, never the request's.
    InvalidCatalog,
    InvalidInput,
    /// A field's number outside what it allows.
    OutOfRange,
    /// A field given that means nothing for the request.
    NotApplicable,
    /// Two fields that state the same thing, or contradict each other.
    ConflictingFields,
    /// A field the request needs and does not give.
    MissingField,
    /// A field's value of the wrong form.
    InvalidValue,
    NotANumber,
    Cancelled,
    /// A valid request that nothing satisfies.
    Infeasible,
    NotFound,
    MethodNotAllowed,
    BodyTooLarge,
    UnsupportedMediaType,
    /// A body that is not JSON.
    UnreadableBody,
    /// JSON of the wrong shape (a string for a number, a list for an object).
    WrongShape,
    TimedOut,
    Unavailable,
    Internal,
}

impl ErrorCode {
    /// Every code, for the documentation and the tests that walk the table.
    pub const ALL: [ErrorCode; 21] = [
        ErrorCode::UnknownAccelerator,
        ErrorCode::AmbiguousAccelerator,
        ErrorCode::InvalidCatalog,
        ErrorCode::InvalidInput,
        ErrorCode::OutOfRange,
        ErrorCode::NotApplicable,
        ErrorCode::ConflictingFields,
        ErrorCode::MissingField,
        ErrorCode::InvalidValue,
        ErrorCode::NotANumber,
        ErrorCode::Cancelled,
        ErrorCode::Infeasible,
        ErrorCode::NotFound,
        ErrorCode::MethodNotAllowed,
        ErrorCode::BodyTooLarge,
        ErrorCode::UnsupportedMediaType,
        ErrorCode::UnreadableBody,
        ErrorCode::WrongShape,
        ErrorCode::TimedOut,
        ErrorCode::Unavailable,
        ErrorCode::Internal,
    ];

    /// The row of the table: code, exit status, HTTP status, title.
    const fn row(self) -> (&'static str, ExitStatus, u16, &'static str) {
        use ErrorCode::*;
        match self {
            UnknownAccelerator => ("unknown_accelerator", ExitStatus::Error, 400, "unknown accelerator"),
            AmbiguousAccelerator => ("ambiguous_accelerator", ExitStatus::Error, 400, "ambiguous accelerator"),
            InvalidCatalog => ("invalid_catalog", ExitStatus::Error, 500, "invalid catalog"),
            InvalidInput => ("invalid_input", ExitStatus::Error, 400, "bad input"),
            OutOfRange => ("out_of_range", ExitStatus::Error, 400, "value out of range"),
            NotApplicable => ("not_applicable", ExitStatus::Error, 400, "field does not apply"),
            ConflictingFields => ("conflicting_fields", ExitStatus::Error, 400, "conflicting fields"),
            MissingField => ("missing_field", ExitStatus::Error, 400, "missing field"),
            InvalidValue => ("invalid_value", ExitStatus::Error, 400, "invalid value"),
            NotANumber => ("not_a_number", ExitStatus::Error, 422, "not a number"),
            Cancelled => ("cancelled", ExitStatus::Error, 503, "cancelled"),
            Infeasible => ("infeasible", ExitStatus::Infeasible, 422, "nothing feasible"),
            NotFound => ("not_found", ExitStatus::Error, 404, "not found"),
            MethodNotAllowed => ("method_not_allowed", ExitStatus::Error, 405, "method not allowed"),
            BodyTooLarge => ("body_too_large", ExitStatus::Error, 413, "request body too large"),
            UnsupportedMediaType => ("unsupported_media_type", ExitStatus::Error, 415, "not JSON"),
            UnreadableBody => ("unreadable_body", ExitStatus::Error, 400, "unreadable request body"),
            WrongShape => ("wrong_shape", ExitStatus::Error, 422, "JSON of the wrong shape"),
            TimedOut => ("timed_out", ExitStatus::Error, 503, "timed out"),
            Unavailable => ("unavailable", ExitStatus::Error, 503, "unavailable"),
            Internal => ("internal", ExitStatus::Error, 500, "internal error"),
        }
    }

    /// The stable machine-readable code (`invalid_input`).
    pub const fn as_str(self) -> &'static str {
        self.row().0
    }

    pub const fn exit_status(self) -> ExitStatus {
        self.row().1
    }

    pub const fn http_status(self) -> u16 {
        self.row().2
    }

    pub const fn title(self) -> &'static str {
        self.row().3
    }
}

impl std::fmt::Display for ErrorCode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Everything a use case can refuse, with a hint for the user where one helps.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum Error {
    #[error(transparent)]
    Lookup(#[from] LookupError),
    #[error("the catalog could not be loaded")]
    Catalog(#[source] CatalogError),
    /// A workload the estimators cannot evaluate, with what to change.
    #[error(transparent)]
    Estimate(#[from] gpuplan_estimate::EstimateError),
    /// Spot-interruption input the model cannot simulate.
    #[error(transparent)]
    Spot(#[from] gpuplan_estimate::spot::SpotError),
    /// Energy input out of range.
    #[error(transparent)]
    Energy(#[from] gpuplan_estimate::energy::EnergyError),
    /// A usage history the forecast cannot fit.
    #[error(transparent)]
    Forecast(#[from] gpuplan_forecast::ForecastError),
    /// Commitment prices the newsvendor plan cannot use.
    #[error(transparent)]
    Commitment(#[from] gpuplan_forecast::CommitmentError),
    /// One field of the request refused, as data each front end words in its own terms.
    #[error(transparent)]
    Request(#[from] RequestError),
    /// Input refused for a reason no one field carries, written with `{key}` placeholders
    /// for the fields it names, so each front end words it in its own terms.
    #[error("{}", message.render(Naming::Flags))]
    InvalidInput { message: Phrase, hint: Option<Phrase> },
    /// A computed figure came out as NaN or infinite: printing it as `null` would pass it
    /// off as "not applicable".
    #[error("the answer holds a value that is not a number at {path}")]
    NotANumber { path: String },
    /// An error about a field a job file set: named as the file names it (`lora_rank`), with
    /// the file.
    #[error("{file}: {}", error.message(Naming::Keys))]
    InFile { file: String, error: Box<Error> },
    /// The asker stopped waiting (a server's client went away or its time ran out).
    #[error("the question was cancelled before its answer was ready")]
    Cancelled,
}

impl From<CatalogError> for Error {
    fn from(error: CatalogError) -> Self {
        Error::Catalog(error)
    }
}

impl Error {
    /// Input refused with `message` (fields named as `{key}`) and a hint.
    pub fn invalid(message: impl Into<Phrase>, hint: Option<String>) -> Self {
        Error::InvalidInput {
            message: message.into(),
            hint: hint.map(Phrase::new),
        }
    }

    /// A one-line suggestion of what to do instead.
    pub fn hint(&self) -> Option<String> {
        match self {
            Error::Lookup(error) => error.hint(),
            Error::Catalog(_) => {
                Some("check the file named above, or drop --catalog to use the built-in catalog".to_string())
            }
            Error::Request(error) => error.hint_in(Naming::Flags),
            Error::Estimate(error) => error.hint(),
            Error::Spot(_) | Error::Energy(_) | Error::Forecast(_) | Error::Commitment(_) => None,
            Error::InFile { error, .. } => error.hint_in(Naming::Keys),
            Error::InvalidInput { hint, .. } => hint.as_ref().map(|h| h.render(Naming::Flags)),
            Error::NotANumber { .. } => Some(
                "the inputs drive a formula outside its range (a zero or an extreme value); check them".to_string(),
            ),
            Error::Cancelled => {
                Some("ask again; a narrower question (fewer providers or GPUs) answers sooner".to_string())
            }
        }
    }

    /// Its row of the code table, shared by the CLI's JSON errors and the HTTP API.
    pub fn code(&self) -> ErrorCode {
        match self {
            Error::Lookup(LookupError::Unknown { .. }) => ErrorCode::UnknownAccelerator,
            Error::Lookup(LookupError::Ambiguous { .. }) => ErrorCode::AmbiguousAccelerator,
            Error::Catalog(_) => ErrorCode::InvalidCatalog,
            Error::Request(error) => error.code(),
            Error::Estimate(_) | Error::Spot(_) | Error::Energy(_) | Error::Forecast(_) | Error::Commitment(_) => {
                ErrorCode::InvalidInput
            }
            Error::InFile { error, .. } => error.code(),
            Error::InvalidInput { .. } => ErrorCode::InvalidInput,
            Error::NotANumber { .. } => ErrorCode::NotANumber,
            Error::Cancelled => ErrorCode::Cancelled,
        }
    }

    pub fn exit_status(&self) -> ExitStatus {
        self.code().exit_status()
    }

    /// The field at fault, where one is.
    pub fn field(&self) -> Option<Field> {
        match self {
            Error::Request(error) => Some(error.field),
            Error::InFile { error, .. } => error.field(),
            _ => None,
        }
    }

    /// This error as one about a value `file` set: the field named by its key, as the file
    /// writes it.
    pub fn in_file(self, file: impl Into<String>) -> Error {
        Error::InFile {
            file: file.into(),
            error: Box::new(self),
        }
    }

    /// The message in `naming`'s words: field errors and the facade's own are rendered from
    /// their parts; text from below the facade has each command-line flag it mentions
    /// (`--max-num-seqs`) written as the key (`` `max_num_seqs` ``) when `naming` is
    /// [`Naming::Keys`].
    pub fn message(&self, naming: Naming) -> String {
        match (self, naming) {
            (Error::Request(error), _) => error.message(naming),
            (Error::InvalidInput { message, .. }, Naming::Flags) => message.render(naming),
            // A flag still written out in the text (a command-line-only option) is named as a key.
            (Error::InvalidInput { message, .. }, Naming::Keys) => in_key_terms(&message.render(naming)),
            (Error::InFile { .. }, _) | (_, Naming::Flags) => self.to_string(),
            (_, Naming::Keys) => in_key_terms(&self.to_string()),
        }
    }

    /// The hint in `naming`'s words (see [`Error::message`]).
    pub fn hint_in(&self, naming: Naming) -> Option<String> {
        match (self, naming) {
            (Error::Request(error), _) => error.hint_in(naming),
            (Error::InvalidInput { hint, .. }, Naming::Flags) => hint.as_ref().map(|h| h.render(naming)),
            (Error::InvalidInput { hint, .. }, Naming::Keys) => hint.as_ref().map(|h| in_key_terms(&h.render(naming))),
            (Error::InFile { .. }, _) | (_, Naming::Flags) => self.hint(),
            (_, Naming::Keys) => self.hint().map(|h| in_key_terms(&h)),
        }
    }
}

/// `text` with each command-line flag (`--max-num-seqs`) named as its key
/// (`` `max_num_seqs` ``): keys are the flags in snake_case, one name per knob.
pub fn in_key_terms(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find("--") {
        let (before, flag) = rest.split_at(at);
        out.push_str(before);
        let name_len = flag[2..]
            .find(|c: char| !(c.is_ascii_alphanumeric() || c == '-'))
            .unwrap_or(flag.len() - 2);
        let name = flag[2..2 + name_len].trim_end_matches('-');
        let starts_word = before.chars().next_back().is_none_or(|c| !c.is_alphanumeric());
        if name.is_empty() || !starts_word || !name.starts_with(|c: char| c.is_ascii_lowercase()) {
            out.push_str("--");
            rest = &flag[2..];
            continue;
        }
        out.push('`');
        out.push_str(&name.replace('-', "_"));
        out.push('`');
        rest = &flag[2 + name.len()..];
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flags_in_free_text_are_named_as_keys() {
        assert_eq!(
            in_key_terms("--hours must be between 0 and 1e6"),
            "`hours` must be between 0 and 1e6"
        );
        assert_eq!(
            in_key_terms("--max-num-seqs applies to serving (--task inference), not pretrain"),
            "`max_num_seqs` applies to serving (`task` inference), not pretrain"
        );
        assert_eq!(in_key_terms("give --engine NAME@RELEASE"), "give `engine` NAME@RELEASE");
        // Not a flag: dashes inside words, a bare `--`, upper case after the dashes.
        assert_eq!(in_key_terms("a--b, -- and --X"), "a--b, -- and --X");
        assert_eq!(in_key_terms("no flags here"), "no flags here");
    }

    #[test]
    fn the_facade_s_own_refusals_name_fields_in_each_front_end_s_words() {
        let error = Error::invalid(
            "{savings_discount} applies with {savings_plan}",
            Some("give {savings_plan} USD_PER_HOUR".to_string()),
        );
        assert_eq!(error.to_string(), "--savings-discount applies with --savings-plan");
        assert_eq!(
            error.message(Naming::Keys),
            "`savings_discount` applies with `savings_plan`"
        );
        assert_eq!(error.hint().as_deref(), Some("give --savings-plan USD_PER_HOUR"));
        assert_eq!(
            error.hint_in(Naming::Keys).as_deref(),
            Some("give `savings_plan` USD_PER_HOUR")
        );
    }

    #[test]
    fn the_code_table_is_consistent() {
        let mut codes: Vec<&str> = ErrorCode::ALL.iter().map(|c| c.as_str()).collect();
        codes.sort_unstable();
        codes.dedup();
        assert_eq!(codes.len(), ErrorCode::ALL.len(), "a code used twice");
        for code in ErrorCode::ALL {
            let status = code.http_status();
            assert!((400..600).contains(&status), "{code}: {status}");
            // Only a request nothing satisfies ends with exit 1; a server's own failure is
            // never the request's (5xx), and a request's fault is a 4xx.
            assert_eq!(
                code.exit_status() == ExitStatus::Infeasible,
                code == ErrorCode::Infeasible
            );
            assert!(code.as_str().chars().all(|c| c.is_ascii_lowercase() || c == '_'));
        }
    }
}

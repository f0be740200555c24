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
    pub const ALL: [ErrorCode; 16] = [
        ErrorCode::UnknownAccelerator,
        ErrorCode::AmbiguousAccelerator,
        ErrorCode::InvalidCatalog,
        ErrorCode::InvalidInput,
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
    #[error("{message}")]
    InvalidInput { message: String, hint: Option<String> },
    /// A computed figure came out as NaN or infinite: printing it as `null` would pass it
    /// off as "not applicable".
    #[error("the answer holds a value that is not a number at {path}")]
    NotANumber { path: String },
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
    pub fn invalid(message: impl Into<String>, hint: Option<String>) -> Self {
        Error::InvalidInput {
            message: message.into(),
            hint,
        }
    }

    /// A one-line suggestion of what to do instead.
    pub fn hint(&self) -> Option<String> {
        match self {
            Error::Lookup(error) => error.hint(),
            Error::Catalog(_) => {
                Some("check the file named above, or drop --catalog to use the built-in catalog".to_string())
            }
            Error::InvalidInput { hint, .. } => hint.clone(),
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
            Error::InvalidInput { .. } => ErrorCode::InvalidInput,
            Error::NotANumber { .. } => ErrorCode::NotANumber,
            Error::Cancelled => ErrorCode::Cancelled,
        }
    }

    pub fn exit_status(&self) -> ExitStatus {
        self.code().exit_status()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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

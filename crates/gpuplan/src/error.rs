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

    /// A stable machine-readable code, shared by the CLI's JSON errors and the HTTP API.
    pub fn code(&self) -> &'static str {
        match self {
            Error::Lookup(LookupError::Unknown { .. }) => "unknown_accelerator",
            Error::Lookup(LookupError::Ambiguous { .. }) => "ambiguous_accelerator",
            Error::Catalog(_) => "invalid_catalog",
            Error::InvalidInput { .. } => "invalid_input",
            Error::NotANumber { .. } => "not_a_number",
            Error::Cancelled => "cancelled",
        }
    }

    pub fn exit_status(&self) -> ExitStatus {
        ExitStatus::Error
    }
}

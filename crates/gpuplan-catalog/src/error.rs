use std::fmt;

/// A catalog file that could not be read: names the file, the line (and column) where known,
/// and the field.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CatalogError {
    pub file: String,
    pub line: Option<usize>,
    pub column: Option<usize>,
    pub field: Option<String>,
    pub message: String,
}

impl CatalogError {
    pub(crate) fn new(file: &str, message: impl Into<String>) -> Self {
        CatalogError {
            file: file.to_string(),
            line: None,
            column: None,
            field: None,
            message: message.into(),
        }
    }

    pub(crate) fn at_line(mut self, line: Option<usize>) -> Self {
        self.line = line;
        self
    }

    pub(crate) fn at_column(mut self, column: Option<usize>) -> Self {
        self.column = column;
        self
    }

    pub(crate) fn in_field(mut self, field: &str) -> Self {
        self.field = Some(field.to_string());
        self
    }
}

impl fmt::Display for CatalogError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.file)?;
        if let Some(line) = self.line {
            write!(f, ":{line}")?;
            if let Some(column) = self.column {
                write!(f, ":{column}")?;
            }
        }
        if let Some(field) = &self.field {
            write!(f, ": field `{field}`")?;
        }
        write!(f, ": {}", self.message)
    }
}

impl std::error::Error for CatalogError {}

/// 1-based line and column of a byte offset in `text`.
pub(crate) fn line_column(text: &str, offset: usize) -> (usize, usize) {
    let before = &text[..offset.min(text.len())];
    let line = before.matches('\n').count() + 1;
    let column = before.rsplit('\n').next().map_or(0, |rest| rest.chars().count()) + 1;
    (line, column)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn displays_every_known_part() {
        let error = CatalogError::new("offerings/aws.csv", "must be positive")
            .at_line(Some(12))
            .in_field("on_demand_usd_per_hour");
        assert_eq!(
            error.to_string(),
            "offerings/aws.csv:12: field `on_demand_usd_per_hour`: must be positive"
        );
    }

    #[test]
    fn finds_line_and_column() {
        assert_eq!(line_column("ab\ncd\nef", 4), (2, 2));
        assert_eq!(line_column("ab", 0), (1, 1));
    }
}

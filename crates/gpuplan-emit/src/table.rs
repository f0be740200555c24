/// How a column's cells line up.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Align {
    #[default]
    Left,
    Right,
}

/// A listing as text cells, before any format is chosen.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Table {
    pub headers: Vec<String>,
    pub align: Vec<Align>,
    pub rows: Vec<Vec<String>>,
    /// Lines shown under a terminal or Markdown table (e.g. "12 more rows: use --limit 0").
    pub footer: Vec<String>,
}

impl Table {
    pub fn new<I, S>(headers: I) -> Table
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        let headers: Vec<String> = headers.into_iter().map(Into::into).collect();
        Table {
            align: vec![Align::Left; headers.len()],
            headers,
            rows: Vec::new(),
            footer: Vec::new(),
        }
    }

    /// Right-aligns the named columns (numbers).
    pub fn right_aligned(mut self, columns: &[&str]) -> Table {
        for (index, header) in self.headers.iter().enumerate() {
            if columns.contains(&header.as_str()) {
                self.align[index] = Align::Right;
            }
        }
        self
    }

    pub fn push_row<I, S>(&mut self, cells: I)
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.rows.push(cells.into_iter().map(Into::into).collect());
    }

    pub fn with_row<I, S>(mut self, cells: I) -> Table
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.push_row(cells);
        self
    }
}

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
    /// Columns a terminal too narrow for the whole table may leave out, first to go first (by
    /// header); the others always stay.
    pub optional: Vec<String>,
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
            optional: Vec::new(),
        }
    }

    /// Marks the named columns as ones a narrow terminal may leave out, in that order.
    pub fn optional(mut self, columns: &[&str]) -> Table {
        self.optional = columns.iter().map(|c| c.to_string()).collect();
        self
    }

    /// The table without the column headed `header`.
    pub fn without(&self, header: &str) -> Table {
        let Some(index) = self.headers.iter().position(|h| h == header) else {
            return self.clone();
        };
        let mut table = self.clone();
        table.headers.remove(index);
        table.align.remove(index);
        for row in &mut table.rows {
            if index < row.len() {
                row.remove(index);
            }
        }
        table.optional.retain(|h| h != header);
        table
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

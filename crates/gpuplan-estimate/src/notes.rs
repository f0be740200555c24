/// Assumptions collected while estimating, formatted only when someone will read them: the
/// planner evaluates thousands of configurations and explains a handful.
#[derive(Debug, Clone, Default)]
pub struct Notes {
    enabled: bool,
    items: Vec<String>,
}

impl Notes {
    pub fn new(enabled: bool) -> Notes {
        Notes {
            enabled,
            items: Vec::new(),
        }
    }

    /// Records the note `text` builds, if notes are being kept.
    pub fn add(&mut self, text: impl FnOnce() -> String) {
        if self.enabled {
            self.items.push(text());
        }
    }

    pub fn into_vec(self) -> Vec<String> {
        self.items
    }
}

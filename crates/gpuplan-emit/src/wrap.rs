//! Text within a terminal's width: words kept whole, so that an instance type or a region can
//! still be copied from what is shown.

/// The narrowest a wrapped text is made, whatever the terminal.
pub(crate) const MIN_VALUE_WIDTH: usize = 20;

/// A report for a terminal `width` columns wide: every line longer than that broken at spaces,
/// its continuations indented two beyond the line's own indentation; the lines that fit (a
/// table fitted to the width among them) unchanged.
pub fn wrap_report(text: &str, width: usize) -> String {
    let mut out = String::with_capacity(text.len());
    for line in text.split_inclusive('\n') {
        let body = line.trim_end_matches('\n');
        if visible_width(body) <= width {
            out.push_str(line);
            continue;
        }
        let indent = body.chars().take_while(|c| *c == ' ').count();
        let first = width.saturating_sub(indent).max(MIN_VALUE_WIDTH);
        let rest = width.saturating_sub(indent + 2).max(MIN_VALUE_WIDTH);
        let mut lines = wrap_words(body, first).into_iter();
        if let Some(head) = lines.next() {
            out.push_str(&format!("{:indent$}{head}\n", ""));
        }
        // The rest rewrapped at the continuation's narrower width.
        let tail: Vec<String> = lines.collect();
        for part in wrap_words(&tail.join(" "), rest).into_iter().filter(|p| !p.is_empty()) {
            out.push_str(&format!("{:width$}{part}\n", "", width = indent + 2));
        }
        if !line.ends_with('\n') {
            out.pop();
        }
    }
    out
}

/// The characters of `line` a terminal shows: its ANSI escape sequences (colour) left out.
fn visible_width(line: &str) -> usize {
    let mut count = 0;
    let mut chars = line.chars();
    while let Some(c) = chars.next() {
        if c == '\u{1b}' {
            // ESC [ parameters, ended by a letter.
            for d in chars.by_ref() {
                if d.is_ascii_alphabetic() {
                    break;
                }
            }
        } else {
            count += 1;
        }
    }
    count
}

/// `text` in lines of at most `width` characters, broken at spaces only (a longer word keeps
/// a line of its own, so it can still be copied whole).
pub(crate) fn wrap_words(text: &str, width: usize) -> Vec<String> {
    let mut lines = Vec::new();
    let mut line = String::new();
    for word in text.split_whitespace() {
        let length = line.chars().count();
        if length > 0 && length + 1 + word.chars().count() > width {
            lines.push(std::mem::take(&mut line));
        }
        if !line.is_empty() {
            line.push(' ');
        }
        line.push_str(word);
    }
    if !line.is_empty() || lines.is_empty() {
        lines.push(line);
    }
    lines
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_report_is_wrapped_at_spaces_with_its_continuations_indented() {
        let report = "title\n  rejected aws g4dn.16xlarge (ap-northeast-1) 1× T4 ×2: 14.8 GiB per GPU needed, 14.4 GiB available\nshort\n";
        let wrapped = wrap_report(report, 40);
        assert!(wrapped.lines().all(|l| l.chars().count() <= 40), "{wrapped}");
        assert!(
            wrapped.starts_with("title\n  rejected aws g4dn.16xlarge\n    (ap-northeast-1)"),
            "{wrapped}"
        );
        assert!(wrapped.ends_with("available\nshort\n"), "{wrapped}");
        // Lines that fit, and the words of those that do not, are kept.
        assert_eq!(
            wrapped.split_whitespace().collect::<Vec<_>>(),
            report.split_whitespace().collect::<Vec<_>>()
        );
        assert_eq!(wrap_report("no newline at the end", 40), "no newline at the end");
        // Colour escapes take no columns: a bold header that fits stays whole.
        let bold = format!("│\u{1b}[1m{}\u{1b}[0m│\n", "x".repeat(38));
        assert_eq!(wrap_report(&bold, 40), bold);
    }
}

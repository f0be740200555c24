//! An error as people need to read it: the message and every cause under it
//! (`error sending request: client error (Connect): tcp connect error: Connection refused`).

/// `error` and its causes, outermost first, joined by `: `.
pub fn chain(error: &dyn std::error::Error) -> String {
    let mut text = error.to_string();
    let mut source = error.source();
    while let Some(cause) = source {
        let cause_text = cause.to_string();
        // Some layers repeat their cause in their own message; keep each text once.
        if !text.contains(&cause_text) {
            text.push_str(": ");
            text.push_str(&cause_text);
        }
        source = cause.source();
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_cause_is_printed_once() {
        let io = std::io::Error::new(std::io::ErrorKind::ConnectionRefused, "connection refused");
        let outer = std::io::Error::other(io);
        assert_eq!(chain(&outer), "connection refused");
        let parse = "x".parse::<u32>().unwrap_err();
        assert_eq!(chain(&parse), "invalid digit found in string");
    }
}

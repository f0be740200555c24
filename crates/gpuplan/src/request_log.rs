//! Request shapes from a log: the prompt and output token counts users export from their
//! serving logs or gateways, as CSV (a header naming the two columns) or JSON Lines.
//! OpenAI-style usage names (`prompt_tokens`, `completion_tokens`) and dataset summaries'
//! (`input_length`, `output_length`) are accepted too; CSV lines starting with `#` are comments.

use crate::Error;
use gpuplan_model::{RequestMix, RequestShape};
use serde::Deserialize;

/// One request as logged; either naming works.
#[derive(Debug, Deserialize)]
struct LoggedRequest {
    #[serde(
        alias = "prompt_tokens",
        alias = "input_len",
        alias = "input_length",
        alias = "input"
    )]
    input_tokens: u64,
    #[serde(
        alias = "completion_tokens",
        alias = "output_len",
        alias = "output_length",
        alias = "output"
    )]
    output_tokens: u64,
}

impl From<LoggedRequest> for RequestShape {
    fn from(r: LoggedRequest) -> RequestShape {
        RequestShape {
            input_tokens: r.input_tokens,
            output_tokens: r.output_tokens,
        }
    }
}

fn bad(origin: &str, line: usize, what: impl std::fmt::Display) -> Error {
    Error::invalid(
        format!("{{requests}} {origin}, line {line}: {what}"),
        Some(
            "give input_tokens and output_tokens per request: a CSV header naming both, or one JSON object per line"
                .to_string(),
        ),
    )
}

/// Parses a request log; `origin` names it in messages and assumptions.
pub fn parse_request_log(text: &str, origin: &str) -> Result<RequestMix, Error> {
    let first = text
        .lines()
        .find(|l| !l.trim().is_empty() && !l.trim_start().starts_with('#'))
        .unwrap_or_default();
    let shapes = if first.trim_start().starts_with('{') {
        parse_json_lines(text, origin)?
    } else {
        parse_csv(text, origin)?
    };
    if let Some((line, _)) = shapes
        .iter()
        .enumerate()
        .find(|(_, s)| s.input_tokens + s.output_tokens == 0)
    {
        return Err(bad(origin, line + 2, "a request of no tokens"));
    }
    RequestMix::from_shapes(shapes, origin).ok_or_else(|| bad(origin, 1, "no requests"))
}

/// The listed requests are read, not echoed (the answer states their mix).
pub(crate) fn always(_: &Option<RequestMix>) -> bool {
    true
}

/// Never called ([`always`] skips the field); writes nothing should it be.
pub(crate) fn not_echoed<S: serde::Serializer>(_: &Option<RequestMix>, serializer: S) -> Result<S::Ok, S::Error> {
    serializer.serialize_none()
}

/// The `requests` field of a job file or an API body: a list of requests, each with its
/// prompt and output tokens (either naming the log accepts).
pub(crate) fn request_list<'de, D>(deserializer: D) -> Result<Option<RequestMix>, D::Error>
where
    D: serde::Deserializer<'de>,
{
    use serde::de::Error as _;
    let Some(list) = Option::<Vec<LoggedRequest>>::deserialize(deserializer)? else {
        return Ok(None);
    };
    let shapes: Vec<RequestShape> = list.into_iter().map(RequestShape::from).collect();
    if let Some(index) = shapes.iter().position(|s| s.input_tokens + s.output_tokens == 0) {
        return Err(D::Error::custom(format!("request {} has no tokens", index + 1)));
    }
    RequestMix::from_shapes(shapes, "the listed requests")
        .map(Some)
        .ok_or_else(|| D::Error::custom("an empty list of requests"))
}

fn parse_json_lines(text: &str, origin: &str) -> Result<Vec<RequestShape>, Error> {
    text.lines()
        .enumerate()
        .filter(|(_, line)| !line.trim().is_empty())
        .map(|(index, line)| {
            serde_json::from_str::<LoggedRequest>(line)
                .map(RequestShape::from)
                .map_err(|e| bad(origin, index + 1, e))
        })
        .collect()
}

fn parse_csv(text: &str, origin: &str) -> Result<Vec<RequestShape>, Error> {
    let mut reader = csv::ReaderBuilder::new()
        .trim(csv::Trim::All)
        .comment(Some(b'#'))
        .from_reader(text.as_bytes());
    reader
        .deserialize::<LoggedRequest>()
        .map(|row| {
            row.map(RequestShape::from).map_err(|e| {
                let line = e.position().map_or(0, |p| p.line() as usize);
                bad(origin, line, e)
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_csv_and_json_lines_with_either_naming() {
        let csv = parse_request_log("input_tokens,output_tokens\n1000,200\n3000, 100\n", "log.csv").unwrap();
        let summary = parse_request_log(
            "# lengths\ninput_length,output_length\n1000,200\n# a note\n3000,100\n",
            "log.csv",
        );
        assert_eq!(summary.unwrap(), csv);
        assert_eq!((csv.len(), csv.mean_input()), (2, 2000.0));
        let jsonl = parse_request_log(
            "{\"prompt_tokens\": 10, \"completion_tokens\": 5}\n\n{\"input_tokens\": 30, \"output_tokens\": 15}\n",
            "log.jsonl",
        )
        .unwrap();
        assert_eq!((jsonl.len(), jsonl.mean_output()), (2, 10.0));
    }

    #[test]
    fn names_the_line_that_is_wrong() {
        let error = parse_request_log("input_tokens,output_tokens\n10,5\nten,5\n", "log.csv").unwrap_err();
        assert!(error.to_string().contains("line 3"), "{error}");
        assert!(parse_request_log("input_tokens,output_tokens\n", "empty.csv").is_err());
        assert!(parse_request_log("{\"input_tokens\": 1}\n", "x.jsonl").is_err());
        assert!(parse_request_log("input_tokens,output_tokens\n-5,1\n", "neg.csv").is_err());
    }
}

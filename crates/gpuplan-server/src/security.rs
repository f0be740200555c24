//! Response headers that keep answers from being sniffed as another type or framed by another
//! site, and the pages' Content-Security-Policy: only the script and style they carry (by
//! hash), requests only to this server.

use axum::extract::Request;
use axum::http::{HeaderValue, header};
use axum::middleware::Next;
use axum::response::Response;
use base64::Engine as _;

/// Adds the headers every answer carries.
pub async fn headers(request: Request, next: Next) -> Response {
    let mut response = next.run(request).await;
    let headers = response.headers_mut();
    headers.insert(header::X_CONTENT_TYPE_OPTIONS, HeaderValue::from_static("nosniff"));
    headers.insert(header::X_FRAME_OPTIONS, HeaderValue::from_static("DENY"));
    headers.insert(header::REFERRER_POLICY, HeaderValue::from_static("no-referrer"));
    response
}

/// The inline blocks between `open` and `</tag>` in `html`.
fn blocks<'a>(html: &'a str, tag: &str) -> Vec<&'a str> {
    let (open, close) = (format!("<{tag}>"), format!("</{tag}>"));
    let mut found = Vec::new();
    let mut rest = html;
    while let Some(start) = rest.find(&open) {
        let after = &rest[start + open.len()..];
        let Some(end) = after.find(&close) else { break };
        found.push(&after[..end]);
        rest = &after[end + close.len()..];
    }
    found
}

fn hashes(html: &str, tag: &str) -> String {
    blocks(html, tag)
        .iter()
        .map(|block| {
            let digest = ring::digest::digest(&ring::digest::SHA256, block.as_bytes());
            format!(
                "'sha256-{}'",
                base64::engine::general_purpose::STANDARD.encode(digest.as_ref())
            )
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// The Content-Security-Policy of a page: its own inline script and style by hash, data
/// images (the charts' downloads), requests to this server only, never framed.
pub fn page_policy(html: &str) -> String {
    format!(
        "default-src 'none'; script-src {}; style-src {}; img-src 'self' data: blob:; connect-src 'self'; \
         base-uri 'none'; form-action 'self'; frame-ancestors 'none'",
        hashes(html, "script"),
        hashes(html, "style")
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_policy_names_each_inline_block_by_its_hash() {
        let html = "<style>b{}</style><script>let a = 1;</script>";
        let policy = page_policy(html);
        assert!(policy.contains("script-src 'sha256-"), "{policy}");
        assert!(policy.contains("frame-ancestors 'none'"));
        assert_eq!(blocks(html, "script"), vec!["let a = 1;"]);
        assert!(!policy.contains("unsafe-inline"));
    }
}

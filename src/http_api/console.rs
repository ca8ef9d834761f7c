//! `/console`: the web console (registry, playground, insights) for people, served from the
//! component itself so that `structure serve` and Spin both have it. The page is static and
//! public; everything it shows comes from the API with the bearer token the person signs in
//! with (kept in `sessionStorage`, never in a cookie or a URL: no CSRF, nothing left behind).
//!
//! Every file goes out under a strict Content-Security-Policy: scripts and styles only from
//! these files, no inline script, requests only to this origin, no framing.

use super::exchange::ApiResponse;

const INDEX: &str = include_str!("../../console/index.html");
const SCRIPT: &str = include_str!("../../console/console.js");
const LOCATE: &str = include_str!("../../console/locate.js");
const MARKDOWN: &str = include_str!("../../console/markdown.js");
const STYLE: &str = include_str!("../../console/console.css");

/// The policy every console file is served under.
pub const CONTENT_SECURITY_POLICY: &str = "default-src 'none'; script-src 'self'; \
    style-src 'self'; img-src 'self' data:; connect-src 'self'; base-uri 'none'; \
    form-action 'none'; frame-ancestors 'none'";

/// The console's files: the page, its script and the modules it imports (where a JSON pointer's
/// value is in the editor's text; the manuals' Markdown), and its style.
pub const FILES: [(&str, &str, &str); 5] = [
    ("", "text/html; charset=utf-8", INDEX),
    ("console.js", "text/javascript; charset=utf-8", SCRIPT),
    ("locate.js", "text/javascript; charset=utf-8", LOCATE),
    ("markdown.js", "text/javascript; charset=utf-8", MARKDOWN),
    ("console.css", "text/css; charset=utf-8", STYLE),
];

/// `GET /console` (the page) and `GET /console/{file}`; `None` for a file it does not have.
pub fn serve(file: &str) -> Option<ApiResponse> {
    let (_, media_type, body) = FILES.iter().find(|(name, ..)| *name == file)?;
    Some(
        ApiResponse::file(media_type, body.as_bytes())
            .with_header("content-security-policy", CONTENT_SECURITY_POLICY)
            .with_header("x-content-type-options", "nosniff")
            .with_header("referrer-policy", "no-referrer")
            .with_header("cache-control", "no-cache"),
    )
}

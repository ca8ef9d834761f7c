//! The web console (registry, playground, insights, review) for people: its files and the one function
//! that answers a request for them.
//!
//! ```
//! let page = structure_console::serve("GET", "/console");
//! assert_eq!(page.status, 200);
//! assert!(page.header("content-security-policy").unwrap().contains("default-src 'none'"));
//! assert_eq!(structure_console::serve("GET", "/console/nothing.js").status, 404);
//! assert!(structure_console::is_console_path("/console/console.js?v=2"));
//! ```
//!
//! The console lives apart from the API's component (issue 41): its files are half a megabyte
//! (pdf.js above all), and every instance of the API, one a request on an edge platform, would
//! carry them. `structure serve` answers `/console` with [`serve`] itself; on Spin, the manifest
//! routes `/console/...` to this crate built as a `wasi:http` component of its own
//! (`component.rs`, built with the API's component by `component-build`).
//!
//! The page is static and public; everything it shows comes from the API with the bearer token
//! the person signs in with (kept in `sessionStorage`, never in a cookie or a URL: no CSRF,
//! nothing left behind). Every file goes out under a strict Content-Security-Policy: scripts,
//! styles and workers only from these files, no inline script, no `eval`, requests only to this
//! origin, no framing.
//!
//! A PDF's pages are drawn by pdf.js (`vendor/`), which the console imports only when it shows a
//! PDF's result: it is kept and served gzipped, as `scripts/update-pdfjs` vendored it.

#[cfg(target_arch = "wasm32")]
mod component;

use std::borrow::Cow;

use serde_json::json;

const INDEX: &str = include_str!("../index.html");
const SCRIPT: &str = include_str!("../console.js");
const LOCATE: &str = include_str!("../locate.js");
const MARKDOWN: &str = include_str!("../markdown.js");
const STYLE: &str = include_str!("../console.css");
const PAGES: &str = include_str!("../pages.js");
const REVIEW: &str = include_str!("../review.js");
const PDFJS: &[u8] = include_bytes!("../vendor/pdf.min.mjs.gz");
const PDFJS_WORKER: &[u8] = include_bytes!("../vendor/pdf.worker.min.mjs.gz");

/// Where the console is served: `/console` and the files under it.
pub const ROUTE: &str = "/console";

/// The policy every console file is served under.
pub const CONTENT_SECURITY_POLICY: &str = "default-src 'none'; script-src 'self'; \
    style-src 'self'; img-src 'self' data:; connect-src 'self'; worker-src 'self'; \
    base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

const JAVASCRIPT: &str = "text/javascript; charset=utf-8";

/// The console's first load: the page, its script and the modules it imports (where a JSON
/// pointer's value is in the editor's text; the manuals' Markdown), and its style.
pub const FILES: [(&str, &str, &str); 5] = [
    ("", "text/html; charset=utf-8", INDEX),
    ("console.js", JAVASCRIPT, SCRIPT),
    ("locate.js", JAVASCRIPT, LOCATE),
    ("markdown.js", JAVASCRIPT, MARKDOWN),
    ("console.css", "text/css; charset=utf-8", STYLE),
];

/// What the console imports only when it is needed: the review page, and to show a PDF's
/// result the page view, and pdf.js and its worker, gzipped (`true`: served with
/// `content-encoding: gzip`, which every browser accepts).
pub const ON_DEMAND: [(&str, &[u8], bool); 4] = [
    ("review.js", REVIEW.as_bytes(), false),
    ("pages.js", PAGES.as_bytes(), false),
    ("pdf.min.mjs", PDFJS, true),
    ("pdf.worker.min.mjs", PDFJS_WORKER, true),
];

/// A response to a request under [`ROUTE`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConsoleResponse {
    pub status: u16,
    pub headers: Vec<(&'static str, String)>,
    pub body: Cow<'static, [u8]>,
}

impl ConsoleResponse {
    /// The value of header `name` (given in lowercase), if set.
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(key, _)| *key == name)
            .map(|(_, value)| value.as_str())
    }

    fn file(media_type: &str, body: &'static [u8]) -> Self {
        Self {
            status: 200,
            headers: vec![("content-type", media_type.to_owned())],
            body: Cow::Borrowed(body),
        }
    }

    /// `{"error": {"kind", "message"}}`, as the API writes its errors.
    fn error(status: u16, kind: &str, message: &str) -> Self {
        let body = json!({ "error": { "kind": kind, "message": message } });
        Self {
            status,
            headers: vec![("content-type", "application/json".to_owned())],
            body: Cow::Owned(body.to_string().into_bytes()),
        }
    }

    fn with_header(mut self, name: &'static str, value: &str) -> Self {
        self.headers.push((name, value.to_owned()));
        self
    }
}

/// Whether `path` (with its query, as sent) is the console's: [`ROUTE`] or a file under it.
pub fn is_console_path(path: &str) -> bool {
    under_route(path).is_some()
}

/// What `path` (its query and fragment left out) names under [`ROUTE`]: `""` for the route
/// itself, `/…` for what is under it; `None` for a path that is not the console's.
fn under_route(path: &str) -> Option<&str> {
    let path = path.split(['?', '#']).next().unwrap_or_default();
    path.strip_prefix(ROUTE)
        .filter(|rest| rest.is_empty() || rest.starts_with('/'))
}

/// The answer to `method` on `path` (with its query, as sent): the page at `/console`, a file at
/// `/console/{file}`, 405 (with `Allow`) for a method other than GET, 404 for anything else.
pub fn serve(method: &str, path: &str) -> ConsoleResponse {
    let file = under_route(path).map(|rest| rest.trim_end_matches('/').trim_start_matches('/'));
    let path = path.split(['?', '#']).next().unwrap_or_default();
    let Some(file) = file.filter(|file| !file.contains('/')) else {
        return ConsoleResponse::error(404, "not-found", &format!("no console file {path}"));
    };
    if method != "GET" {
        return ConsoleResponse::error(
            405,
            "method-not-allowed",
            &format!("{path} takes GET, not {method}"),
        )
        .with_header("allow", "GET");
    }
    let Some(response) = file_named(file) else {
        return ConsoleResponse::error(404, "not-found", &format!("no console file {path}"));
    };
    response
        .with_header("content-security-policy", CONTENT_SECURITY_POLICY)
        .with_header("x-content-type-options", "nosniff")
        .with_header("referrer-policy", "no-referrer")
        .with_header("cache-control", "no-cache")
}

/// The file called `file` (`""`: the page), with its media type and encoding.
fn file_named(file: &str) -> Option<ConsoleResponse> {
    if let Some((_, media_type, body)) = FILES.iter().find(|(name, ..)| *name == file) {
        return Some(ConsoleResponse::file(media_type, body.as_bytes()));
    }
    let (_, body, gzipped) = ON_DEMAND.iter().find(|(name, ..)| *name == file)?;
    let response = ConsoleResponse::file(JAVASCRIPT, body);
    Some(if *gzipped {
        response.with_header("content-encoding", "gzip")
    } else {
        response
    })
}

//! `/console`: the web console (registry, playground, insights) for people, served from the
//! component itself so that `structure serve` and Spin both have it. The page is static and
//! public; everything it shows comes from the API with the bearer token the person signs in
//! with (kept in `sessionStorage`, never in a cookie or a URL: no CSRF, nothing left behind).
//!
//! Every file goes out under a strict Content-Security-Policy: scripts, styles and workers only
//! from these files, no inline script, no `eval`, requests only to this origin, no framing.
//!
//! A PDF's pages are drawn by pdf.js (`console/vendor/`), which the console imports only when it
//! shows a PDF's result: it is kept and served gzipped, as `scripts/update-pdfjs` vendored it.

use super::exchange::ApiResponse;

const INDEX: &str = include_str!("../../console/index.html");
const SCRIPT: &str = include_str!("../../console/console.js");
const LOCATE: &str = include_str!("../../console/locate.js");
const MARKDOWN: &str = include_str!("../../console/markdown.js");
const STYLE: &str = include_str!("../../console/console.css");
const PAGES: &str = include_str!("../../console/pages.js");
const PDFJS: &[u8] = include_bytes!("../../console/vendor/pdf.min.mjs.gz");
const PDFJS_WORKER: &[u8] = include_bytes!("../../console/vendor/pdf.worker.min.mjs.gz");

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

/// What the console imports only to show a PDF's result: the page view, and pdf.js and its
/// worker, gzipped (`true`: served with `content-encoding: gzip`, which every browser accepts).
pub const ON_DEMAND: [(&str, &[u8], bool); 3] = [
    ("pages.js", PAGES.as_bytes(), false),
    ("pdf.min.mjs", PDFJS, true),
    ("pdf.worker.min.mjs", PDFJS_WORKER, true),
];

/// `GET /console` (the page) and `GET /console/{file}`; `None` for a file it does not have.
pub fn serve(file: &str) -> Option<ApiResponse> {
    let response = match FILES.iter().find(|(name, ..)| *name == file) {
        Some((_, media_type, body)) => ApiResponse::file(media_type, body.as_bytes()),
        None => {
            let (_, body, gzipped) = ON_DEMAND.iter().find(|(name, ..)| *name == file)?;
            let response = ApiResponse::file(JAVASCRIPT, body);
            if *gzipped {
                response.with_header("content-encoding", "gzip")
            } else {
                response
            }
        }
    };
    Some(
        response
            .with_header("content-security-policy", CONTENT_SECURITY_POLICY)
            .with_header("x-content-type-options", "nosniff")
            .with_header("referrer-policy", "no-referrer")
            .with_header("cache-control", "no-cache"),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Read;

    fn header<'a>(response: &'a ApiResponse, name: &str) -> Option<&'a str> {
        response
            .headers
            .iter()
            .find(|(key, _)| key == name)
            .map(|(_, value)| value.as_str())
    }

    #[test]
    fn pdfjs_goes_out_gzipped_as_vendored_under_the_policy() {
        for (name, body, _) in ON_DEMAND.iter().filter(|(.., gzipped)| *gzipped) {
            let served = serve(name).expect("an on-demand file is served");
            assert_eq!(served.body, *body, "{name}: the bytes as vendored");
            assert_eq!(header(&served, "content-encoding"), Some("gzip"), "{name}");
            assert_eq!(header(&served, "content-type"), Some(JAVASCRIPT), "{name}");
            let policy = header(&served, "content-security-policy").unwrap();
            assert!(policy.contains("worker-src 'self'") && !policy.contains("unsafe"));
            let mut script = String::new();
            flate2::read::GzDecoder::new(*body)
                .read_to_string(&mut script)
                .expect("gzip of UTF-8");
            assert!(script.contains("pdfjsVersion"), "{name} is pdf.js");
        }
        let pages = serve("pages.js").unwrap();
        assert_eq!(header(&pages, "content-encoding"), None);
        assert!(serve("pdf.mjs").is_none());
    }
}

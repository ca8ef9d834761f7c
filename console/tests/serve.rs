//! What the console serves, and how: its files under a strict policy, pdf.js gzipped as
//! vendored, 404 and 405 as the API writes them, and a first load that stays small.

use std::io::{Read, Write};

use structure_console::{FILES, ON_DEMAND, is_console_path, serve};

#[test]
fn the_console_is_served_under_a_strict_policy_within_50_kb_gzipped() {
    let page = serve("GET", "/console");
    assert_eq!(page.status, 200, "the page itself needs no token");
    assert!(
        page.header("content-type")
            .unwrap()
            .starts_with("text/html")
    );
    let policy = page.header("content-security-policy").unwrap();
    assert!(
        policy.contains("script-src 'self'")
            && policy.contains("default-src 'none'")
            && !policy.contains("unsafe")
    );
    assert_eq!(serve("GET", "/console/?tab=registry").body, page.body);
    let html = String::from_utf8(page.body.to_vec()).unwrap();
    assert!(!html.contains("<script>"), "no inline script");
    let handler = html.split(" on").skip(1).any(|after| {
        let name: String = after
            .chars()
            .take_while(char::is_ascii_alphabetic)
            .collect();
        !name.is_empty() && after[name.len()..].starts_with('=')
    });
    assert!(!handler, "no inline event handler");
    for file in ["console.js", "locate.js", "markdown.js", "console.css"] {
        let served = serve("GET", &format!("/console/{file}"));
        assert_eq!(served.status, 200, "{file}");
        assert!(served.header("content-security-policy").is_some());
        assert_eq!(served.header("x-content-type-options"), Some("nosniff"));
    }
    let mut gzipped = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
    for (_, _, body) in FILES {
        gzipped.write_all(body.as_bytes()).unwrap();
    }
    let size = gzipped.finish().unwrap().len();
    assert!(size <= 50 * 1024, "the console is {size} bytes gzipped");
}

#[test]
fn pdfjs_goes_out_gzipped_as_vendored_under_the_policy() {
    for (name, body, _) in ON_DEMAND.iter().filter(|(.., gzipped)| *gzipped) {
        let served = serve("GET", &format!("/console/{name}"));
        assert_eq!(served.status, 200, "{name}");
        assert_eq!(&*served.body, *body, "{name}: the bytes as vendored");
        assert_eq!(served.header("content-encoding"), Some("gzip"), "{name}");
        assert!(
            served
                .header("content-type")
                .unwrap()
                .starts_with("text/javascript")
        );
        let policy = served.header("content-security-policy").unwrap();
        assert!(policy.contains("worker-src 'self'") && !policy.contains("unsafe"));
        let mut script = String::new();
        flate2::read::GzDecoder::new(*body)
            .read_to_string(&mut script)
            .expect("gzip of UTF-8");
        assert!(script.contains("pdfjsVersion"), "{name} is pdf.js");
    }
    let pages = serve("GET", "/console/pages.js");
    assert_eq!(
        (pages.status, pages.header("content-encoding")),
        (200, None)
    );
}

#[test]
fn anything_else_is_a_typed_404_or_405() {
    for path in [
        "/console/pdf.mjs",
        "/console/../secrets",
        "/console/a/console.js",
        // Not under the route at all, though it ends in a file the console has.
        "/consoleconsole.js",
    ] {
        let missing = serve("GET", path);
        assert_eq!(missing.status, 404, "{path}");
        assert_eq!(missing.header("content-type"), Some("application/json"));
        assert_eq!(missing.header("content-security-policy"), None, "{path}");
        let error: serde_json::Value = serde_json::from_slice(&missing.body).unwrap();
        assert_eq!(error["error"]["kind"], "not-found", "{path}");
        assert!(error["error"]["message"].as_str().unwrap().contains(path));
    }
    let posted = serve("POST", "/console");
    assert_eq!(posted.status, 405);
    assert_eq!(posted.header("allow"), Some("GET"));
    let error: serde_json::Value = serde_json::from_slice(&posted.body).unwrap();
    assert_eq!(error["error"]["kind"], "method-not-allowed");
}

#[test]
fn only_the_console_and_what_is_under_it_is_the_consoles() {
    for path in [
        "/console",
        "/console/",
        "/console/console.js",
        "/console?x=1",
    ] {
        assert!(is_console_path(path), "{path}");
    }
    for path in ["/consoles", "/v1/console", "/", "/mcp", "/console.js"] {
        assert!(!is_console_path(path), "{path}");
    }
}

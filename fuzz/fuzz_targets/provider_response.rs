//! Every provider's response parser on any body and status: a completion or a typed error,
//! never a panic. The first byte picks the provider, the second the status.
#![no_main]

use libfuzzer_sys::fuzz_target;
use structure::ports::{Config, HttpResponse};
use structure::provider::{Provider, connect};
use structure::settings::{Cascade, Settings};

struct Keys(&'static [(&'static str, &'static str)]);

impl Config for Keys {
    fn get(&self, key: &str) -> Result<Option<String>, String> {
        Ok(self.0.iter().find(|(name, _)| *name == key).map(|(_, value)| (*value).to_owned()))
    }
}

const PROVIDERS: &[(&str, &[(&str, &str)])] = &[
    ("openai/gpt-4.1-mini", &[("openai_api_key", "k")]),
    ("openai/gpt-4.1-mini", &[("openai_api_key", "k"), ("structure_openai_api", "responses")]),
    ("anthropic/claude-sonnet-4-5", &[("anthropic_api_key", "k")]),
    ("google/gemini-2.5-flash", &[("gemini_api_key", "k")]),
    ("google/gemini-2.5-flash", &[("gemini_api_key", "k"), ("structure_gemini_schema", "openapi")]),
    ("llamacpp/smollm2", &[]),
];

const STATUSES: &[u16] = &[200, 400, 401, 403, 404, 408, 413, 422, 429, 500, 502, 503, 529];

thread_local! {
    static CONNECTED: Vec<Box<dyn Provider>> = PROVIDERS
        .iter()
        .map(|(model, keys)| {
            let settings = Settings::load(&Cascade::new(&Keys(keys))).expect("fuzz settings load");
            connect(&settings, model).expect("fuzz providers connect")
        })
        .collect();
}

fuzz_target!(|data: &[u8]| {
    let [which, status, body @ ..] = data else {
        return;
    };
    let response = HttpResponse {
        status: STATUSES[*status as usize % STATUSES.len()],
        headers: vec![("retry-after".to_owned(), String::from_utf8_lossy(&body[..body.len().min(8)]).into_owned())],
        body: body.to_vec(),
    };
    CONNECTED.with(|providers| {
        let provider = &providers[*which as usize % providers.len()];
        let _ = provider.completion(&response);
        let _ = provider.retry_hint(&response);
    });
});

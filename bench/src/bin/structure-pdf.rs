//! `structure-pdf`: how well and how fast `structure` reads PDFs. For each PDF of a Kleister-NDA
//! split (read from the dataset's folder at run time, never copied), the text the component
//! reads (a call with `returnText` whose mock model answers at once that the text lacks the
//! value: one local round trip on top of the reading), the same read natively, and the
//! benchmark's own text layer (`text_best`): the gold values found in each, pages, and
//! milliseconds per page.
//!
//! ```text
//! cargo run --release -p structure-bench --bin structure-pdf -- \
//!     --dataset ../shared/datasets/kleister-nda/dev-0 [--json FILE]
//! ```

use std::path::PathBuf;
use std::time::{Duration, Instant};

use mock_llm::{MockLlm, Reply};
use serde_json::{Value, json};
use structure_host::{Request, SchemaInput, Scope, Settings, Structure};

#[derive(clap::Parser)]
struct Args {
    /// The split's folder: `cases.jsonl` and `pdf/`.
    #[arg(long)]
    dataset: PathBuf,
    /// Also write the figures here, as JSON.
    #[arg(long)]
    json: Option<PathBuf>,
}

#[derive(Default)]
struct Totals {
    documents: usize,
    errors: usize,
    pages: usize,
    gold: usize,
    found_in_best: usize,
    found_in_ours: usize,
    native: Duration,
    component: Duration,
}

fn main() -> anyhow::Result<()> {
    let args = <Args as clap::Parser>::parse();
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()?;
    let mock = MockLlm::start();
    mock.always(Some(Reply::need("the contract's id")));
    let settings = Settings::new()
        .set("structure_model", "openai/gpt-4.1-mini")
        .set("openai_api_key", "sk-unused")
        .set("openai_base_url", mock.base_url());
    let client = Structure::builder().settings(settings).build()?;
    let cases = std::fs::read_to_string(args.dataset.join("cases.jsonl"))?;
    let mut totals = Totals::default();
    for line in cases.lines().filter(|line| !line.trim().is_empty()) {
        let case: Value = serde_json::from_str(line)?;
        let file = case["file"].as_str().unwrap_or_default();
        let pdf = std::fs::read(args.dataset.join("pdf").join(file))?;
        let started = Instant::now();
        let native = structure::document::pdf::pages(&pdf, 1_000);
        totals.native += started.elapsed();
        let started = Instant::now();
        let ours = runtime.block_on(read(&client, pdf))?;
        totals.component += started.elapsed();
        totals.documents += 1;
        let (Some(ours), Ok(pages)) = (ours, native) else {
            totals.errors += 1;
            continue;
        };
        anyhow::ensure!(
            ours == pages.join(structure::document::PAGE_BREAK),
            "{file}: the component and the core read different text"
        );
        totals.pages += pages.len();
        let best = normalised(case["text"].as_str().unwrap_or_default());
        let ours = normalised(&ours);
        for value in gold(&case["expected"]) {
            totals.gold += 1;
            totals.found_in_best += usize::from(value.iter().any(|form| best.contains(form)));
            totals.found_in_ours += usize::from(value.iter().any(|form| ours.contains(form)));
        }
    }
    let per_page = |time: Duration| time.as_secs_f64() * 1000.0 / totals.pages.max(1) as f64;
    println!(
        "{} PDFs, {} pages, {} unreadable; gold values in the text read: {}/{} (text_best: {}/{}); \
         {:.2} ms a page natively, {:.2} ms a page through the component (a fresh instance a call)",
        totals.documents,
        totals.pages,
        totals.errors,
        totals.found_in_ours,
        totals.gold,
        totals.found_in_best,
        totals.gold,
        per_page(totals.native),
        per_page(totals.component),
    );
    if let Some(path) = args.json {
        let report = json!({
            "documents": totals.documents,
            "pages": totals.pages,
            "unreadable": totals.errors,
            "gold": totals.gold,
            "foundInOurs": totals.found_in_ours,
            "foundInTextBest": totals.found_in_best,
            "msPerPageNative": per_page(totals.native),
            "msPerPageComponent": per_page(totals.component),
        });
        std::fs::write(path, serde_json::to_string_pretty(&report)?)?;
    }
    Ok(())
}

/// The text the component reads from `pdf`, returned by a call the mock model ends at once.
/// `None` when the PDF cannot be read.
async fn read(client: &Structure, pdf: Vec<u8>) -> anyhow::Result<Option<String>> {
    let schema = json!({
        "type": "object",
        "properties": { "id": { "type": "string", "format": "uuid" } },
        "required": ["id"],
    });
    let request = Request {
        prompt: String::new(),
        schema: SchemaInput::Inline(schema.to_string()),
        max_loops: None,
        settings: None,
        records: false,
        document: None,
        return_text: true,
    }
    .with_document(pdf, "application/pdf");
    match client.structure(&Scope::default(), &request).await {
        Ok(outcome) => {
            anyhow::ensure!(outcome.usage.llm_calls <= 1, "more than one LLM call");
            Ok(outcome.text)
        }
        Err(structure_host::CallError::Structure(_)) => Ok(None),
        Err(error) => Err(anyhow::anyhow!("{error}")),
    }
}

/// Each expected value of a document, in the forms the text may write it (normalised).
fn gold(expected: &Value) -> Vec<Vec<String>> {
    let mut values = Vec::new();
    for (key, list) in expected.as_object().into_iter().flatten() {
        for value in list
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
        {
            let mut forms = vec![normalised(&value.replace('_', " "))];
            if key == "effective_date" {
                forms.extend(written_dates(value).iter().map(|form| normalised(form)));
            }
            values.push(forms);
        }
    }
    values
}

/// `2014-05-20` as a contract may write it: `May 20, 2014`, `20th day of May, 2014`, `5/20/2014`.
fn written_dates(iso: &str) -> Vec<String> {
    const MONTHS: [&str; 12] = [
        "January",
        "February",
        "March",
        "April",
        "May",
        "June",
        "July",
        "August",
        "September",
        "October",
        "November",
        "December",
    ];
    let parts: Vec<u32> = iso
        .split('-')
        .filter_map(|part| part.parse().ok())
        .collect();
    let [year, month, day] = parts[..] else {
        return Vec::new();
    };
    let Some(name) = MONTHS.get(month.saturating_sub(1) as usize) else {
        return Vec::new();
    };
    let suffix = match day {
        1 | 21 | 31 => "st",
        2 | 22 => "nd",
        3 | 23 => "rd",
        _ => "th",
    };
    vec![
        format!("{name} {day}, {year}"),
        format!("{name} {day}{suffix}, {year}"),
        format!("{day}{suffix} day of {name}, {year}"),
        format!("{day} {name} {year}"),
        format!("{month}/{day}/{year}"),
    ]
}

/// Lower case; `'’.-` dropped; any other punctuation a space; whitespace collapsed.
fn normalised(text: &str) -> String {
    let mapped: String = text
        .to_lowercase()
        .chars()
        .filter(|c| !matches!(c, '\'' | '’' | '.' | '-'))
        .map(|c| if c.is_alphanumeric() { c } else { ' ' })
        .collect();
    mapped.split_whitespace().collect::<Vec<_>>().join(" ")
}

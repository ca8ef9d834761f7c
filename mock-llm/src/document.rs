//! A task the mock model can do for one object from a long text: a contract whose terms are
//! planted in pages of filler, and a reader that answers what the part of it it is sent states,
//! as a perfect extraction model would — and, asked to choose among the values the parts gave,
//! the candidate whose passage does not call itself superseded.
//!
//! ```
//! use mock_llm::document::{Terms, planted_document, read_terms};
//!
//! let terms = Terms::default();
//! let text = planted_document(20_000, &terms);
//! assert_eq!(read_terms(&text)["governing_law"], "Delaware");
//! ```

use std::time::Duration;

use serde::Deserialize;
use serde_json::{Map, Value, json};

use crate::orders::user_text;
use crate::{Recorded, Reply};

/// What a planted contract states, and where (a fraction of the text: 0 at the start).
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct Terms {
    pub effective_date: Option<(String, f64)>,
    /// A second, superseded effective date, later in the text: the parts disagree.
    pub superseded_date: Option<(String, f64)>,
    pub parties: Vec<(String, f64)>,
    /// Counsel a clause names: a name a part's reader takes for a party's, as a small model
    /// does, that the document does not state as one.
    pub counsel: Vec<(String, f64)>,
    pub governing_law: Option<(String, f64)>,
    pub term_months: Option<(u32, f64)>,
}

impl Default for Terms {
    fn default() -> Self {
        Self {
            effective_date: Some(("2021-03-04".to_owned(), 0.05)),
            superseded_date: None,
            parties: vec![
                ("Acme Widgets Inc.".to_owned(), 0.02),
                ("Zoë Kim".to_owned(), 0.5),
                ("Łukasz Nowak LLC".to_owned(), 0.97),
            ],
            counsel: Vec::new(),
            governing_law: Some(("Delaware".to_owned(), 0.9)),
            term_months: Some((24, 0.6)),
        }
    }
}

/// The JSON Schema of a contract's terms: the effective date and the parties are required.
pub fn terms_schema() -> Value {
    json!({
        "type": "object",
        "properties": {
            "effective_date": { "type": "string", "format": "date", "description": "The date the agreement takes effect" },
            "parties": { "type": "array", "items": { "type": "string" }, "description": "Every party to the agreement" },
            "governing_law": { "type": "string", "description": "The state whose law governs the agreement" },
            "term_months": { "type": "integer", "minimum": 1, "description": "How long the agreement lasts, in months" },
        },
        "required": ["effective_date", "parties"],
        "additionalProperties": false,
    })
}

const FILLER: [&str; 4] = [
    "The receiving party shall keep the confidential information — in Kraków or elsewhere — secret. ",
    "Neither party shall disclose the terms hereof without the prior written consent of the other. ",
    "Notices shall be given in writing 📨 and delivered by hand or by registered mail. ",
    "Each obligation survives the return or destruction of the confidential information. ",
];

/// At least `chars` characters of contract prose (multi-byte characters in it, so that bytes,
/// code points and UTF-16 units differ) with `terms` planted where they say.
pub fn planted_document(chars: usize, terms: &Terms) -> String {
    let mut planted: Vec<(f64, String)> = Vec::new();
    if let Some((date, at)) = &terms.effective_date {
        planted.push((*at, format!("This Agreement is effective as of {date}. ")));
    }
    if let Some((date, at)) = &terms.superseded_date {
        planted.push((
            *at,
            format!("A superseded draft was effective as of {date}. "),
        ));
    }
    for (party, at) in &terms.parties {
        planted.push((*at, format!("Party: {party}. ")));
    }
    for (counsel, at) in &terms.counsel {
        planted.push((*at, format!("Counsel: {counsel}. ")));
    }
    if let Some((law, at)) = &terms.governing_law {
        planted.push((
            *at,
            format!("This Agreement is governed by the laws of {law}. "),
        ));
    }
    if let Some((months, at)) = &terms.term_months {
        planted.push((
            *at,
            format!("The term of this Agreement is {months} months. "),
        ));
    }
    planted.sort_by(|a, b| a.0.total_cmp(&b.0));
    let mut text = String::new();
    let mut length = 0;
    let mut sentence = 0;
    let push = |text: &mut String, length: &mut usize, piece: &str| {
        text.push_str(piece);
        *length += piece.chars().count();
    };
    for (at, line) in planted {
        let goal = (at * chars as f64) as usize;
        while length < goal {
            push(&mut text, &mut length, FILLER[sentence % FILLER.len()]);
            sentence += 1;
            if sentence % 7 == 0 {
                push(&mut text, &mut length, "\n\n");
            }
        }
        push(&mut text, &mut length, &line);
    }
    while length < chars {
        push(&mut text, &mut length, FILLER[sentence % FILLER.len()]);
        sentence += 1;
    }
    text
}

/// What `text` states whole of the terms, as `terms_schema` writes them (a sentence cut off by
/// a part's end is not read).
pub fn read_terms(text: &str) -> Value {
    let mut terms = Map::new();
    let mut parties = Vec::new();
    let sentences = text
        .split(['\n', '\u{c}'])
        .flat_map(|line| line.split_inclusive(". "));
    for sentence in sentences {
        let sentence = sentence.trim();
        let Some(sentence) = sentence.strip_suffix('.') else {
            continue;
        };
        if let Some(rest) = sentence.split("effective as of ").nth(1) {
            terms.entry("effective_date").or_insert(json!(rest));
        } else if let Some(party) =
            (sentence.strip_prefix("Party: ")).or_else(|| sentence.strip_prefix("Counsel: "))
        {
            parties.push(json!(party));
        } else if let Some(law) =
            sentence.strip_prefix("This Agreement is governed by the laws of ")
        {
            terms.insert("governing_law".into(), json!(law));
        } else if let Some(rest) = sentence.strip_prefix("The term of this Agreement is ")
            && let Some(Ok(months)) = rest.strip_suffix(" months").map(str::parse::<u32>)
        {
            terms.insert("term_months".into(), json!(months));
        }
    }
    if !parties.is_empty() {
        terms.insert("parties".into(), Value::Array(parties));
    }
    Value::Object(terms)
}

/// The choice a reader makes among the candidates a choosing request lists: per field, the
/// first candidate whose passage is not superseded.
pub fn choose(question: &str) -> Value {
    let mut chosen = Map::new();
    let mut field: Option<String> = None;
    for line in question.lines() {
        if let Some(name) = line.strip_suffix(':').filter(|name| !name.starts_with('-')) {
            field = Some(name.trim().to_owned());
            continue;
        }
        let (Some(name), Some(candidate)) = (&field, line.strip_prefix("- ")) else {
            continue;
        };
        if chosen.contains_key(name) || candidate.contains("superseded") {
            continue;
        }
        // The candidate's name is the JSON string the line starts with (it may hold ": ").
        let mut values = serde_json::Deserializer::from_str(candidate).into_iter::<Value>();
        if let Some(Ok(value)) = values.next() {
            chosen.insert(name.clone(), value);
        }
    }
    Value::Object(chosen)
}

/// The fields a request asks whether the text states (structure's question of the values it
/// is unsure of: `value_1`, `value_2`, … each `stated` or `not stated`), if it is one.
pub fn stated_question(body: &Value) -> Option<Vec<String>> {
    let mut asked = Vec::new();
    find_stated(&body["response_format"], &mut asked);
    (!asked.is_empty()).then_some(asked)
}

/// The names of the properties under `node` (at any depth) whose `enum` holds `not stated`.
fn find_stated(node: &Value, asked: &mut Vec<String>) {
    match node {
        Value::Object(fields) => {
            if let Some(Value::Object(properties)) = fields.get("properties") {
                for (name, property) in properties {
                    let values = property.get("enum").and_then(Value::as_array);
                    if values.is_some_and(|values| values.contains(&json!("not stated")))
                        && !asked.contains(name)
                    {
                        asked.push(name.clone());
                    }
                }
            }
            fields.values().for_each(|value| find_stated(value, asked));
        }
        Value::Array(items) => items.iter().for_each(|item| find_stated(item, asked)),
        _ => {}
    }
}

/// Whether a chat request body asks to choose among candidates (structure's choosing call).
pub fn is_choice(body: &Value) -> bool {
    body["messages"][0]["content"]
        .as_str()
        .is_some_and(|system| system.starts_with("Parts of one long document gave different"))
}

/// Whether a chat request body asks which items of lists the document states as theirs.
pub fn is_membership(body: &Value) -> bool {
    body["messages"][0]["content"]
        .as_str()
        .is_some_and(|system| system.starts_with("Parts of one long document each gave items"))
}

/// The answer a reader gives a membership question: `yes` for an item whose passage states it
/// as a party (`Party: <item>`), `no` for any other.
pub fn members(question: &str) -> Value {
    let mut answer = Map::new();
    for line in question.lines() {
        let Some(item) = line.strip_prefix("- ") else {
            continue;
        };
        let mut values = serde_json::Deserializer::from_str(item).into_iter::<Value>();
        let Some(Ok(Value::String(key))) = values.next() else {
            continue;
        };
        let rest = &item[values.byte_offset()..];
        let Some((label, passage)) = rest
            .trim_start()
            .strip_prefix('(')
            .and_then(|rest| rest.split_once("): "))
        else {
            continue;
        };
        let stated = passage.contains(&format!("Party: {label}"));
        answer.insert(key, json!(if stated { "yes" } else { "no" }));
    }
    Value::Object(answer)
}

/// How a mock model that reads contracts answers: after `latency`, a token per four bytes.
#[derive(Debug, Clone, Copy, PartialEq, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Reader {
    #[serde(default)]
    pub latency_ms: u64,
}

impl Reader {
    pub fn new(latency: Duration) -> Self {
        Self {
            latency_ms: latency.as_millis() as u64,
        }
    }

    /// The reply to `request`: the terms its text states, or its choice.
    pub fn reply(&self, request: &Recorded) -> Reply {
        let body = request.json();
        let text = user_text(&body).unwrap_or_default();
        let answer = if is_choice(&body) {
            choose(text)
        } else if is_membership(&body) {
            members(text)
        } else if let Some(asked) = stated_question(&body) {
            // A reader is sure the text states what it read from it.
            (asked.into_iter())
                .map(|name| (name, json!("stated")))
                .collect()
        } else {
            read_terms(text)
        };
        let content = json!({ "answer": answer }).to_string();
        // The prompt counted as a server counts it: its messages' text (a schema the server
        // turns into a grammar is not read).
        Reply::text(&content)
            .with_usage(
                u64::from(crate::servers::prompt_tokens(&body)),
                (content.len() / crate::orders::BYTES_PER_TOKEN) as u64,
            )
            .with_delay(Duration::from_millis(self.latency_ms))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_planted_document_reads_back_whole() {
        let text = planted_document(30_000, &Terms::default());
        assert!(text.chars().count() >= 30_000);
        let read = read_terms(&text);
        assert_eq!(read["effective_date"], "2021-03-04");
        assert_eq!(read["parties"].as_array().unwrap().len(), 3);
        assert_eq!(read["term_months"], 24);
    }

    #[test]
    fn a_membership_answer_says_yes_to_a_stated_party_only() {
        let question = "Lists:\n\nparties:\n- \"parties 1\" (Acme Inc.): \"…Party: Acme Inc. …\"\n- \"parties 2\" (Lane LLP): \"…Counsel: Lane LLP. …\"\n";
        assert_eq!(
            members(question),
            json!({ "parties 1": "yes", "parties 2": "no" })
        );
    }

    #[test]
    fn the_choice_skips_a_superseded_candidate() {
        let question = "Fields the parts disagree on:\n\neffective_date:\n- \"2019-01-01\": \"…A superseded draft was effective as of 2019-01-01…\"\n- \"2021-03-04\": \"…This Agreement is effective as of 2021-03-04…\"\n";
        assert_eq!(choose(question), json!({ "effective_date": "2021-03-04" }));
    }
}

//! A task the mock model can do for records mode: orders planted in a long text, and a reader
//! that finds them in the text it is sent, as a perfect extraction model would.
//!
//! ```
//! use mock_llm::orders::{planted_text, read_orders};
//!
//! let (text, planted) = planted_text(5_000, 4);
//! assert_eq!(read_orders(&text).len(), 4);
//! assert_eq!(planted[0].0, "ORD-0001");
//! ```

use std::time::Duration;

use serde::Deserialize;
use serde_json::{Value, json};

use crate::{Recorded, Reply};

const NAMES: [&str; 5] = [
    "Zoë Kim",
    "Łukasz Nowak",
    "Ada Lovelace",
    "José Núñez",
    "Grace Hopper",
];

const FILLER: [&str; 3] = [
    "The warehouse — in Kraków — reopened after the inventory count. ",
    "Shipping notes mention pallets, crates and a forklift 🚜 on loan. ",
    "Nothing else happened that week worth writing down here. ",
];

/// The JSON Schema of one order.
pub fn order_schema() -> Value {
    json!({
        "type": "object",
        "properties": {
            "order": { "type": "string", "pattern": "^ORD-[0-9]{4}$" },
            "customer": { "type": "string", "minLength": 2 },
            "quantity": { "type": "integer", "minimum": 1, "description": "units ordered" }
        },
        "required": ["order", "customer", "quantity"],
        "additionalProperties": false
    })
}

/// At least `chars` characters of prose (with multi-byte characters, so that bytes, code
/// points and UTF-16 units differ) with `count` orders spread through it, each as
/// `Order ORD-0007 was placed by NAME for N units.`; each order's id and the code-point offset
/// of that id.
pub fn planted_text(chars: usize, count: usize) -> (String, Vec<(String, usize)>) {
    let mut text = String::new();
    let mut length = 0;
    let mut planted = Vec::with_capacity(count);
    let step = chars / count.max(1);
    let mut sentence = 0;
    let push = |text: &mut String, length: &mut usize, piece: &str| {
        text.push_str(piece);
        *length += piece.chars().count();
    };
    for index in 0..count {
        let goal = index * step + step / 3 + (index * 7919) % (step / 2).max(1);
        while length < goal {
            push(&mut text, &mut length, FILLER[sentence % FILLER.len()]);
            sentence += 1;
            if sentence % 9 == 0 {
                push(&mut text, &mut length, "\n\n");
            }
        }
        let order = format!("ORD-{:04}", index + 1);
        planted.push((order.clone(), length + "Order ".len()));
        let line = format!(
            "Order {order} was placed by {} for {} units. ",
            NAMES[index % NAMES.len()],
            index % 9 + 1
        );
        push(&mut text, &mut length, &line);
    }
    while length < chars {
        push(&mut text, &mut length, FILLER[sentence % FILLER.len()]);
        sentence += 1;
    }
    (text, planted)
}

/// The orders `text` holds whole: `{"order", "customer", "quantity"}`, without the quantity
/// when the sentence gives none (`Order ORD-0002 was placed by Alan Turing.`).
pub fn read_orders(text: &str) -> Vec<Value> {
    text.split_inclusive('.')
        .filter_map(|sentence| {
            let rest = &sentence[sentence.find("Order ORD-")? + "Order ".len()..];
            let order = rest.get(..8)?;
            let (_, by) = rest.split_once(" was placed by ")?;
            // A sentence cut off by the chunk's end is not read.
            let by = by.strip_suffix('.')?;
            Some(match by.split_once(" for ") {
                Some((customer, units)) => {
                    let quantity: u64 = units.trim_end_matches(" units").parse().ok()?;
                    json!({ "order": order, "customer": customer, "quantity": quantity })
                }
                None => json!({ "order": order, "customer": by }),
            })
        })
        .collect()
}

/// The user's text in a Chat Completions request body.
pub fn user_text(body: &Value) -> Option<&str> {
    let content = &body["messages"]
        .as_array()?
        .iter()
        .find(|message| message["role"] == "user")?["content"];
    // With an image or a PDF beside it, the text is one part of the content.
    content.as_str().or_else(|| {
        (content.as_array()?.iter()).find(|part| part["type"] == "text")?["text"].as_str()
    })
}

/// The answer format a mock model that reads orders answers in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Form {
    /// structure's records mode: `{"answer": {"records": [...]}}`.
    Records,
    /// langextract's: `{"extractions": [{"order": "ORD-0007", "order_attributes": {...}}]}`,
    /// reading the text after its prompt's last `Q: `.
    Langextract,
}

/// How a mock model that reads orders answers: in `form`, after `latency` (`varied`: 0.5×, 1×
/// or 2× of it, by the request's bytes), counting a token per four bytes.
#[derive(Debug, Clone, Copy, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Reader {
    pub form: Form,
    #[serde(default)]
    pub latency_ms: u64,
    #[serde(default)]
    pub varied: bool,
}

impl Reader {
    /// A reader answering in records mode's format after `latency`.
    pub fn records(latency: Duration) -> Self {
        Self {
            form: Form::Records,
            latency_ms: latency.as_millis() as u64,
            varied: false,
        }
    }
}

/// Bytes per token of the mock's usage figures (English text runs at about four).
pub const BYTES_PER_TOKEN: usize = 4;

impl Reader {
    /// The reply to `request`.
    pub fn reply(&self, request: &Recorded) -> Reply {
        let body = request.json();
        let text = user_text(&body).unwrap_or_default();
        let content = match self.form {
            Form::Records => json!({ "answer": { "records": read_orders(text) } }),
            Form::Langextract => {
                let question = text.rsplit("Q: ").next().unwrap_or_default();
                let question = question.split("\nA:").next().unwrap_or_default();
                let extractions: Vec<Value> = read_orders(question)
                    .into_iter()
                    .map(|order| {
                        json!({
                            "order": order["order"],
                            "order_attributes": {
                                "customer": order["customer"],
                                "quantity": order.get("quantity").map(Value::to_string),
                            },
                        })
                    })
                    .collect();
                json!({ "extractions": extractions })
            }
        }
        .to_string();
        let latency = Duration::from_millis(self.latency_ms);
        let latency = if self.varied {
            let spread = request.body.bytes().map(usize::from).sum::<usize>() % 3;
            latency.mul_f64([0.5, 1.0, 2.0][spread])
        } else {
            latency
        };
        Reply::text(&content)
            .with_usage(
                (request.body.len() / BYTES_PER_TOKEN) as u64,
                (content.len() / BYTES_PER_TOKEN) as u64,
            )
            .with_delay(latency)
    }
}

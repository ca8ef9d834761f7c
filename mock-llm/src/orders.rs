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

use serde_json::{Value, json};

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
    body["messages"]
        .as_array()?
        .iter()
        .find(|message| message["role"] == "user")?["content"]
        .as_str()
}

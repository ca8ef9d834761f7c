//! How big a call's input may be and how long the call may take. Each limit is a setting of the
//! host's configuration (not of a tenant, a project or a call) with a default that real use stays
//! well within; going over one is an `invalid-request` or `invalid-schema` error naming the
//! setting, before any LLM call, or `budget-exhausted` for the time limit.

use std::time::Duration;

use serde_json::Value;

use crate::error::StructureError;
use crate::keys;

pub const DEFAULT_MAX_PROMPT_BYTES: usize = 256 << 10;
pub const DEFAULT_MAX_SCHEMA_BYTES: usize = 256 << 10;
pub const DEFAULT_MAX_SCHEMA_DEPTH: usize = 32;
pub const DEFAULT_MAX_SCHEMA_PROPERTIES: usize = 1000;
pub const DEFAULT_MAX_ENUM_VALUES: usize = 1000;
pub const DEFAULT_MAX_RESPONSE_BYTES: usize = 8 << 20;
pub const DEFAULT_MAX_MANUAL_BYTES: usize = 64 << 10;
pub const DEFAULT_MAX_DOCUMENT_BYTES: usize = 20 << 20;
pub const DEFAULT_MAX_DOCUMENT_PAGES: usize = 500;
pub const DEFAULT_MIN_CHUNK_TOKENS: u32 = 200;
pub const DEFAULT_MAX_CHUNKS: usize = 200;

/// The limits of one call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CallLimits {
    /// Bytes of the prompt (UTF-8).
    pub prompt_bytes: usize,
    /// Bytes of a schema, as compact JSON.
    pub schema_bytes: usize,
    /// Nesting of a schema's objects and arrays.
    pub schema_depth: usize,
    /// Properties declared across a whole schema.
    pub schema_properties: usize,
    /// Values of one `enum`.
    pub enum_values: usize,
    /// Bytes read from one provider response.
    pub response_bytes: usize,
    /// The whole call: every LLM request, retries and waits included; `None`: by the server's
    /// kind (`Settings::call_timeout`).
    pub call_timeout: Option<Duration>,
    /// Bytes of a schema's manual.
    pub manual_bytes: usize,
    /// Bytes of a document beside the prompt.
    pub document_bytes: usize,
    /// Pages of a PDF document.
    pub document_pages: usize,
    /// The operator's ceiling on a call's token budget.
    pub max_token_budget: Option<u64>,
    /// The fewest tokens of text a chunk may be asked to hold (`chunkTokens`).
    pub min_chunk_tokens: u32,
    /// The most chunks a text may be read in.
    pub max_chunks: usize,
    /// Refuse a schema with a format no one checks (`structure_unknown_formats=refuse`) instead
    /// of keeping it as an annotation.
    pub refuse_unknown_formats: bool,
}

impl Default for CallLimits {
    fn default() -> Self {
        Self {
            prompt_bytes: DEFAULT_MAX_PROMPT_BYTES,
            schema_bytes: DEFAULT_MAX_SCHEMA_BYTES,
            schema_depth: DEFAULT_MAX_SCHEMA_DEPTH,
            schema_properties: DEFAULT_MAX_SCHEMA_PROPERTIES,
            enum_values: DEFAULT_MAX_ENUM_VALUES,
            response_bytes: DEFAULT_MAX_RESPONSE_BYTES,
            call_timeout: None,
            manual_bytes: DEFAULT_MAX_MANUAL_BYTES,
            document_bytes: DEFAULT_MAX_DOCUMENT_BYTES,
            document_pages: DEFAULT_MAX_DOCUMENT_PAGES,
            max_token_budget: None,
            min_chunk_tokens: DEFAULT_MIN_CHUNK_TOKENS,
            max_chunks: DEFAULT_MAX_CHUNKS,
            refuse_unknown_formats: false,
        }
    }
}

impl CallLimits {
    pub fn check_prompt(&self, prompt: &str) -> Result<(), StructureError> {
        if prompt.len() > self.prompt_bytes {
            return Err(StructureError::invalid_request(
                "prompt",
                format!(
                    "the prompt is {} bytes, over the limit of {} ({})",
                    prompt.len(),
                    self.prompt_bytes,
                    keys::MAX_PROMPT_BYTES
                ),
            ));
        }
        Ok(())
    }

    /// The size of a schema's manual, when it is registered and when a call uses it.
    pub fn check_manual(&self, manual: &str) -> Result<(), StructureError> {
        if manual.len() > self.manual_bytes {
            return Err(over(format!(
                "the schema's manual is {} bytes, over the limit of {} ({})",
                manual.len(),
                self.manual_bytes,
                keys::MAX_MANUAL_BYTES
            )));
        }
        Ok(())
    }

    /// Size, depth, property and enum counts of a schema that is about to be used or stored.
    pub fn check_schema(&self, schema: &Value) -> Result<(), StructureError> {
        let mut tally = Tally::default();
        self.walk(schema, 1, &mut tally)?;
        if tally.properties > self.schema_properties {
            return Err(over(format!(
                "the schema declares {} properties, over the limit of {} ({})",
                tally.properties,
                self.schema_properties,
                keys::MAX_SCHEMA_PROPERTIES
            )));
        }
        // Compact JSON, counted without building it.
        if tally.bytes > self.schema_bytes {
            return Err(over(format!(
                "the schema is about {} bytes as JSON, over the limit of {} ({})",
                tally.bytes,
                self.schema_bytes,
                keys::MAX_SCHEMA_BYTES
            )));
        }
        Ok(())
    }

    fn walk(&self, node: &Value, depth: usize, tally: &mut Tally) -> Result<(), StructureError> {
        if depth > self.schema_depth {
            return Err(over(format!(
                "the schema nests deeper than {} levels ({})",
                self.schema_depth,
                keys::MAX_SCHEMA_DEPTH
            )));
        }
        match node {
            Value::Object(map) => {
                tally.bytes += 2 + map.len().saturating_sub(1);
                if let Some(Value::Object(properties)) = map.get("properties") {
                    tally.properties += properties.len();
                }
                if let Some(Value::Array(values)) = map.get("enum")
                    && values.len() > self.enum_values
                {
                    return Err(over(format!(
                        "an enum has {} values, over the limit of {} ({})",
                        values.len(),
                        self.enum_values,
                        keys::MAX_ENUM_VALUES
                    )));
                }
                for (key, value) in map {
                    tally.bytes += key.len() + 3;
                    self.walk(value, depth + 1, tally)?;
                }
            }
            Value::Array(items) => {
                tally.bytes += 2 + items.len().saturating_sub(1);
                for item in items {
                    self.walk(item, depth + 1, tally)?;
                }
            }
            Value::String(text) => tally.bytes += text.len() + 2,
            other => tally.bytes += other.to_string().len(),
        }
        // Stop walking a schema already too big rather than after it.
        if tally.bytes > self.schema_bytes.saturating_mul(2) {
            return Err(over(format!(
                "the schema is more than {} bytes as JSON ({})",
                self.schema_bytes,
                keys::MAX_SCHEMA_BYTES
            )));
        }
        Ok(())
    }
}

#[derive(Default)]
struct Tally {
    bytes: usize,
    properties: usize,
}

fn over(message: String) -> StructureError {
    StructureError::invalid_schema(message)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_byte_count_is_the_compact_json_length() {
        let schema = json!({ "type": "object", "properties": { "a": { "enum": [1, "x", null, true] } }, "required": ["a"] });
        let mut tally = Tally::default();
        CallLimits::default().walk(&schema, 1, &mut tally).unwrap();
        assert_eq!(tally.bytes, schema.to_string().len());
    }

    #[test]
    fn each_limit_names_its_setting() {
        let limits = CallLimits {
            schema_depth: 3,
            schema_properties: 2,
            enum_values: 2,
            schema_bytes: 60,
            prompt_bytes: 4,
            ..CallLimits::default()
        };
        let deep =
            json!({ "type": "object", "properties": { "a": { "properties": { "b": {} } } } });
        let many = json!({ "type": "object", "properties": { "a": {}, "b": {}, "c": {} } });
        let enums = json!({ "type": "object", "properties": { "a": { "enum": [1, 2, 3] } } });
        let big = json!({ "type": "object", "description": "x".repeat(100) });
        for (schema, key) in [
            (deep, keys::MAX_SCHEMA_DEPTH),
            (many, keys::MAX_SCHEMA_PROPERTIES),
            (enums, keys::MAX_ENUM_VALUES),
            (big, keys::MAX_SCHEMA_BYTES),
        ] {
            let error = limits.check_schema(&schema).unwrap_err();
            assert!(error.message.contains(key), "{}", error.message);
        }
        let error = limits.check_prompt("hello").unwrap_err();
        assert!(error.message.contains(keys::MAX_PROMPT_BYTES));
        assert!(limits.check_prompt("hi").is_ok());
    }
}

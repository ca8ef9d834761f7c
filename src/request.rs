//! The request: parsed and checked once, so every later stage can trust it.

use base64::Engine as _;
use serde_json::{Map, Value};

use crate::error::StructureError;
use crate::media_type::{self, MediaType};

/// Content-stage iterations when the caller does not say.
pub const DEFAULT_MAX_LOOPS: u8 = 3;
/// The most content-stage iterations one call may ask for.
pub const MAX_MAX_LOOPS: u8 = 10;

/// Where the target schema comes from.
#[derive(Debug, Clone, PartialEq)]
pub enum SchemaInput {
    /// A JSON Schema given inline.
    Inline(Value),
    /// The name of a schema in the registry.
    Named(String),
    /// A natural-language description for the schema builder.
    Described(String),
    /// One or more example objects the schema is inferred from.
    Examples(Vec<Value>),
}

/// A document beside the prompt: the text to structure is read from it.
#[derive(Clone, PartialEq, Eq)]
pub struct Document {
    pub media_type: MediaType,
    pub bytes: Vec<u8>,
}

impl std::fmt::Debug for Document {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "Document({}, {} bytes)",
            self.media_type.name(),
            self.bytes.len()
        )
    }
}

impl Document {
    /// A document of `media_type` (one of [`MediaType::ALL`]).
    pub fn new(bytes: Vec<u8>, media_type: &str) -> Result<Self, StructureError> {
        let media_type = MediaType::parse(media_type).ok_or_else(|| {
            StructureError::invalid_request(
                "document",
                format!(
                    "document media type {media_type:?} is not one this tool reads: send one \
                     of {}",
                    MediaType::names()
                ),
            )
        })?;
        Ok(Self { media_type, bytes })
    }
}

/// A checked `structure` request.
#[derive(Debug, Clone, PartialEq)]
pub struct StructureRequest {
    /// The text to structure; with a document, text that comes before it (and may be empty).
    pub prompt: String,
    pub schema: SchemaInput,
    /// Content-stage iterations; `None` takes the `maxLoops` setting (default 3).
    pub max_loops: Option<u8>,
    /// Per-call setting overrides by cascade name (`model`, `maxLoops`, ...).
    pub settings: Map<String, Value>,
    /// Records mode: the schema describes one record, and the answer is every record the text
    /// holds.
    pub records: bool,
    /// A document the text is read from (after the prompt, when there is one).
    pub document: Option<Document>,
    /// Whether the outcome carries the text that was read (a document's extracted text).
    pub return_text: bool,
}

impl StructureRequest {
    /// Checks the typed form of a request (the service API).
    pub fn new(
        prompt: impl Into<String>,
        schema: SchemaInput,
        max_loops: Option<u8>,
    ) -> Result<Self, StructureError> {
        let prompt = prompt.into();
        if prompt.trim().is_empty() {
            return Err(StructureError::invalid_request(
                "prompt",
                "prompt is empty: give the text to structure",
            ));
        }
        if let Some(max_loops) = max_loops
            && !(1..=MAX_MAX_LOOPS).contains(&max_loops)
        {
            return Err(max_loops_out_of_range(&max_loops.to_string()));
        }
        match &schema {
            SchemaInput::Inline(value) if !value.is_object() => {
                return Err(StructureError::invalid_request(
                    "schema",
                    "an inline schema must be a JSON object",
                ));
            }
            SchemaInput::Named(name) if name.trim().is_empty() => {
                return Err(StructureError::invalid_request(
                    "schema",
                    "schema name is empty",
                ));
            }
            SchemaInput::Described(text) if text.trim().is_empty() => {
                return Err(StructureError::invalid_request(
                    "schema",
                    "schema description is empty",
                ));
            }
            SchemaInput::Examples(examples)
                if examples.is_empty() || !examples.iter().all(Value::is_object) =>
            {
                return Err(StructureError::invalid_request(
                    "schema",
                    "examples must be one JSON object or a non-empty array of JSON objects",
                ));
            }
            _ => {}
        }
        Ok(Self {
            prompt,
            schema,
            max_loops,
            settings: Map::new(),
            records: false,
            document: None,
            return_text: false,
        })
    }

    /// A request whose text is read from `document` alone.
    pub fn for_document(
        document: Document,
        schema: SchemaInput,
        max_loops: Option<u8>,
    ) -> Result<Self, StructureError> {
        // Checked with a placeholder prompt, which the document then replaces.
        let mut request = Self::new("-", schema, max_loops)?;
        request.prompt.clear();
        Ok(request.with_document(document))
    }

    /// The same request with `document` read after the prompt.
    pub fn with_document(mut self, document: Document) -> Self {
        self.document = Some(document);
        self
    }

    /// The same request with the text that was read returned in the outcome (or not).
    pub fn with_return_text(mut self, return_text: bool) -> Self {
        self.return_text = return_text;
        self
    }

    /// The same request in records mode (or not).
    pub fn with_records(mut self, records: bool) -> Self {
        self.records = records;
        self
    }

    /// The same request with per-call setting overrides (checked when the call resolves them).
    pub fn with_settings(mut self, settings: Map<String, Value>) -> Self {
        self.settings = settings;
        self
    }

    /// Reads the tool-call arguments exactly as the tool definition describes them: `prompt`,
    /// `schema` (object, or string read per `schemaMode`, or examples), `schemaMode`, `maxLoops`,
    /// `settings`, `records`.
    ///
    /// A string `schema` with `schemaMode` `json` is accepted when it holds a JSON object: LLM
    /// tool callers often send a schema serialised as a string.
    pub fn from_tool_arguments(arguments: &Value) -> Result<Self, StructureError> {
        let Value::Object(fields) = arguments else {
            return Err(StructureError::invalid_request(
                "arguments",
                "the tool arguments must be a JSON object with prompt and schema",
            ));
        };
        if let Some(unknown) = fields
            .keys()
            .find(|key| !KNOWN_FIELDS.contains(&key.as_str()))
        {
            return Err(StructureError::invalid_request(
                unknown,
                format!(
                    "unknown argument {unknown:?}; the arguments are prompt, document, schema, \
                     schemaMode, maxLoops, settings, records and returnText"
                ),
            ));
        }
        let document = match fields.get("document") {
            None | Some(Value::Null) => None,
            Some(document) => Some(document_argument(document)?),
        };
        let prompt = match fields.get("prompt") {
            Some(Value::String(prompt)) => prompt.clone(),
            Some(other) => return Err(wrong_type("prompt", "a string", other)),
            None if document.is_some() => String::new(),
            None => {
                return Err(StructureError::invalid_request(
                    "prompt",
                    "prompt is missing: give the text to structure, or a document",
                ));
            }
        };
        let schema = schema_input(fields)?;
        let max_loops = match fields.get("maxLoops") {
            None | Some(Value::Null) => None,
            Some(Value::Number(number)) => match number.as_u64() {
                Some(n) => {
                    Some(u8::try_from(n).map_err(|_| max_loops_out_of_range(&n.to_string()))?)
                }
                None => return Err(max_loops_out_of_range(&number.to_string())),
            },
            Some(other) => return Err(wrong_type("maxLoops", "an integer from 1 to 10", other)),
        };
        let settings = match fields.get("settings") {
            None | Some(Value::Null) => Map::new(),
            Some(Value::Object(settings)) => settings.clone(),
            Some(other) => {
                return Err(wrong_type(
                    "settings",
                    "an object of setting overrides",
                    other,
                ));
            }
        };
        let flag = |name: &str| match fields.get(name) {
            None | Some(Value::Null) => Ok(false),
            Some(Value::Bool(flag)) => Ok(*flag),
            Some(other) => Err(wrong_type(name, "true or false", other)),
        };
        let records = flag("records")?;
        let return_text = flag("returnText")?;
        let request = match document {
            Some(document) if prompt.trim().is_empty() => {
                Self::for_document(document, schema, max_loops)?
            }
            Some(document) => Self::new(prompt, schema, max_loops)?.with_document(document),
            None => Self::new(prompt, schema, max_loops)?,
        };
        Ok(request
            .with_settings(settings)
            .with_records(records)
            .with_return_text(return_text))
    }
}

const KNOWN_FIELDS: [&str; 8] = [
    "prompt",
    "document",
    "schema",
    "schemaMode",
    "maxLoops",
    "settings",
    "records",
    "returnText",
];

/// The `document` argument: `{"mediaType": "application/pdf", "data": "<base64>"}`; without
/// `mediaType`, the media type its `name` (a file name) or else its bytes tell.
fn document_argument(value: &Value) -> Result<Document, StructureError> {
    let Value::Object(fields) = value else {
        return Err(wrong_type(
            "document",
            "an object with data (base64), and mediaType or name",
            value,
        ));
    };
    if let Some(unknown) = fields
        .keys()
        .find(|key| !["mediaType", "data", "name"].contains(&key.as_str()))
    {
        return Err(StructureError::invalid_request(
            "document",
            format!("unknown document field {unknown:?}; a document has data, mediaType and name"),
        ));
    }
    let media_type = match fields.get("mediaType") {
        Some(Value::String(name)) => Some(name),
        Some(other) => return Err(wrong_type("document.mediaType", "a string", other)),
        None => None,
    };
    let name = match fields.get("name") {
        Some(Value::String(name)) => Some(name.as_str()),
        Some(other) => return Err(wrong_type("document.name", "a file name", other)),
        None => None,
    };
    let data = match fields.get("data") {
        Some(Value::String(data)) => data,
        Some(other) => return Err(wrong_type("document.data", "a base64 string", other)),
        None => {
            return Err(StructureError::invalid_request(
                "document",
                "document.data is missing: the document's bytes, base64-encoded",
            ));
        }
    };
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(data.trim())
        .map_err(|error| {
            StructureError::invalid_request(
                "document",
                format!("document.data is not base64 ({error}): send the bytes base64-encoded"),
            )
        })?;
    match media_type {
        Some(media_type) => Document::new(bytes, media_type),
        None => {
            let media_type = media_type::of(&bytes, name);
            Ok(Document { media_type, bytes })
        }
    }
}

fn schema_input(fields: &Map<String, Value>) -> Result<SchemaInput, StructureError> {
    let mode = match fields.get("schemaMode") {
        None | Some(Value::Null) => None,
        Some(Value::String(mode)) => match mode.as_str() {
            "json" | "named" | "text" | "examples" => Some(mode.as_str()),
            _ => {
                return Err(StructureError::invalid_request(
                    "schemaMode",
                    format!(
                        "schemaMode {mode:?} is not one of \"json\", \"named\", \"text\", \"examples\""
                    ),
                ));
            }
        },
        Some(other) => return Err(wrong_type("schemaMode", "a string", other)),
    };
    if mode == Some("examples") {
        return match fields.get("schema") {
            Some(Value::Array(examples)) => Ok(SchemaInput::Examples(examples.clone())),
            Some(example @ Value::Object(_)) => Ok(SchemaInput::Examples(vec![example.clone()])),
            Some(Value::String(text)) => match serde_json::from_str::<Value>(text) {
                Ok(Value::Array(examples)) => Ok(SchemaInput::Examples(examples)),
                Ok(example @ Value::Object(_)) => Ok(SchemaInput::Examples(vec![example])),
                _ => Err(StructureError::invalid_request(
                    "schema",
                    "with schemaMode \"examples\", schema is an example object or an array of them",
                )),
            },
            Some(other) => Err(wrong_type(
                "schema",
                "an example object or an array of example objects",
                other,
            )),
            None => Err(StructureError::invalid_request(
                "schema",
                "schema is missing: give one or more example objects",
            )),
        };
    }
    match fields.get("schema") {
        // An object is always an inline schema, whatever schemaMode says.
        Some(schema @ Value::Object(_)) => Ok(SchemaInput::Inline(schema.clone())),
        Some(Value::String(text)) => match mode.unwrap_or("json") {
            "named" => Ok(SchemaInput::Named(text.trim().to_owned())),
            "text" => Ok(SchemaInput::Described(text.clone())),
            _ => match serde_json::from_str::<Value>(text) {
                Ok(schema @ Value::Object(_)) => Ok(SchemaInput::Inline(schema)),
                _ => Err(StructureError::invalid_request(
                    "schema",
                    "schema is a string but schemaMode is \"json\": pass the schema as an object, \
                     set schemaMode to \"named\" for a registry name, or to \"text\" for a description",
                )),
            },
        },
        Some(other) => Err(wrong_type(
            "schema",
            "an object (JSON Schema) or a string (name or description)",
            other,
        )),
        None => Err(StructureError::invalid_request(
            "schema",
            "schema is missing: give a JSON Schema object, a registry name or a description",
        )),
    }
}

fn wrong_type(field: &str, expected: &str, got: &Value) -> StructureError {
    StructureError::invalid_request(
        field,
        format!("{field} must be {expected}, not {}", json_type_name(got)),
    )
}

fn max_loops_out_of_range(got: &str) -> StructureError {
    StructureError::invalid_request(
        "maxLoops",
        format!("maxLoops must be an integer from 1 to {MAX_MAX_LOOPS}, not {got}"),
    )
}

/// The JSON type of a value, in words, for messages.
pub(crate) fn json_type_name(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

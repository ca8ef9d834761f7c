//! What each provider's structured-output mode accepts: a [`Subset`] of keywords and formats,
//! and what it demands of objects.

use crate::schema::subset::totals;

/// Which keywords a provider takes, as a list of names separated by spaces.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Keywords {
    Only(&'static str),
    AllBut(&'static str),
}

impl Keywords {
    pub(crate) fn allows(self, keyword: &str) -> bool {
        match self {
            Keywords::Only(list) => lists(list, keyword),
            Keywords::AllBut(list) => !lists(list, keyword),
        }
    }
}

/// Whether `name` is one of the names in the space-separated `list`.
pub(crate) fn lists(list: &str, name: &str) -> bool {
    list.split_whitespace().any(|listed| listed == name)
}

/// What a provider's structured-output mode accepts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Subset {
    pub name: &'static str,
    pub keywords: Keywords,
    /// String formats the provider takes, separated by spaces; `None`: all.
    pub formats: Option<&'static str>,
    /// Every object gets `additionalProperties: false`.
    pub closed_objects: bool,
    /// Every property is listed in `required`; optional ones become nullable.
    pub all_required: bool,
    /// Values no closed schema can describe (free-form objects, untyped values, maps) travel
    /// encoded: as JSON strings, maps as `{key, value}` pairs.
    pub encode_free_form: bool,
    /// `oneOf` is sent as `anyOf`, `allOf` merged into its node.
    pub any_of_only: bool,
    /// A `$ref` may not have siblings.
    pub bare_refs: bool,
    /// `minItems` above this moves into the description.
    pub max_min_items: Option<u64>,
    /// Objects list their property order in `propertyOrdering` (Gemini).
    pub property_ordering: bool,
    /// `const: v` is sent as `enum: [v]`, which says the same.
    pub const_as_enum: bool,
    /// `type: [a, b]` is sent as `anyOf: [{type: a, ...}, {type: b, ...}]`, which says the same.
    pub type_arrays_as_any_of: bool,
    /// The provider takes recursive schemas; without it, recursion is unrolled a few levels.
    pub recursive_refs: bool,
    /// What the provider counts over the whole schema; a schema over it is loosened.
    pub limits: Option<totals::Limits>,
}

/// The schema as it is.
pub const FULL: Subset = Subset {
    name: "full",
    keywords: Keywords::AllBut(""),
    formats: None,
    closed_objects: false,
    all_required: false,
    encode_free_form: false,
    any_of_only: false,
    bare_refs: false,
    max_min_items: None,
    property_ordering: false,
    const_as_enum: false,
    type_arrays_as_any_of: false,
    recursive_refs: true,
    limits: None,
};

/// OpenAI's strict mode (tests/provider-api/SUBSETS.md).
pub const OPENAI_STRICT: Subset = Subset {
    name: "openai-strict",
    keywords: Keywords::Only(concat!(
        "type properties required additionalProperties items enum const anyOf ",
        "$ref description title pattern format multipleOf minimum maximum ",
        "exclusiveMinimum exclusiveMaximum minItems maxItems"
    )),
    formats: Some("date-time time date duration email hostname ipv4 ipv6 uuid"),
    closed_objects: true,
    all_required: true,
    encode_free_form: true,
    any_of_only: true,
    bare_refs: true,
    limits: Some(totals::OPENAI_LIMITS),
    ..FULL
};

/// Anthropic's structured outputs and strict tools, as Anthropic's SDK rewrites schemas: closed
/// objects (optional properties may stay optional), formats from a list, `minItems` only 0 or 1,
/// no numeric or length bounds, no patterns, no `const` or type arrays (said another way).
pub const ANTHROPIC: Subset = Subset {
    name: "anthropic",
    keywords: Keywords::Only(concat!(
        "type properties required additionalProperties items enum anyOf allOf ",
        "$ref description title format minItems"
    )),
    formats: Some("date-time time date duration email hostname uri ipv4 ipv6 uuid"),
    closed_objects: true,
    encode_free_form: true,
    max_min_items: Some(1),
    const_as_enum: true,
    type_arrays_as_any_of: true,
    recursive_refs: false,
    ..FULL
};

/// Gemini's `responseJsonSchema`: the keywords it honours, key order stated.
pub const GEMINI: Subset = Subset {
    name: "gemini",
    keywords: Keywords::Only(concat!(
        "type format title description enum items prefixItems minItems maxItems ",
        "minimum maximum anyOf oneOf properties additionalProperties required ",
        "$ref"
    )),
    bare_refs: true,
    property_ordering: true,
    const_as_enum: true,
    type_arrays_as_any_of: true,
    recursive_refs: false,
    ..FULL
};

/// Servers that turn the schema into a grammar with llama.cpp's converter, which fails on some
/// regular expressions: everything but `pattern`.
pub const GRAMMAR_WITHOUT_PATTERNS: Subset = Subset {
    name: "grammar",
    keywords: Keywords::AllBut("pattern patternProperties"),
    // llama.cpp's grammar puts an object's required properties first and lets the model close
    // it after them: a small model then never writes the optional ones the schema lists before
    // them. All listed, the optional ones nullable, it writes each in the schema's order.
    all_required: true,
    ..FULL
};

/// Annotations with no meaning for the model, and extensions (`x-…`, `_…`): dropped silently.
pub(crate) fn is_silent(keyword: &str) -> bool {
    matches!(
        keyword,
        "$schema" | "$id" | "$comment" | "$anchor" | "$dynamicAnchor" | "$defs" | "definitions"
    ) || keyword.starts_with("x-")
        || keyword.starts_with('_')
}

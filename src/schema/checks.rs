//! Checks an inline schema passes before it is compiled: its references — none leaves the
//! document, each points to something, a bare JSON pointer is read as the fragment it means —
//! (its keywords and formats: [`super::keywords`]; its root: [`super::root`]).

use std::cell::RefCell;
use std::sync::Arc;

use serde_json::Value;

use crate::error::StructureError;
use crate::limits::CallLimits;
use crate::lru::Recent;
use crate::schema::rules::check::check as check_rules;
use crate::schema::target::TargetSchema;
use crate::schema::validator::CompiledSchema;
use crate::schema::walk::{self, Next, percent_decode, resolve_local};
use crate::schema::{keywords, root};

/// Rejects any `$ref` / `$dynamicRef` that leaves the document (http, https, file, another
/// document), before any compile or LLM call. Only same-document references starting with `#`,
/// and references to a `$id` embedded in the same document, are allowed.
pub fn reject_external_refs(schema: &Value) -> Result<(), StructureError> {
    let mut embedded_ids = Vec::new();
    walk::objects(schema, &mut |map, _| {
        if let Some(Value::String(id)) = map.get("$id") {
            embedded_ids.push(id.split('#').next().unwrap_or(id).to_owned());
        }
        Next::Descend
    });
    let mut found = None;
    walk::objects(schema, &mut |map, at| {
        for keyword in ["$ref", "$dynamicRef"] {
            if let Some(Value::String(reference)) = map.get(keyword) {
                let document = reference.split('#').next().unwrap_or_default();
                if !document.is_empty() && !embedded_ids.iter().any(|id| id == document) {
                    found = Some((format!("{at}/{keyword}"), reference.clone()));
                    return Next::Stop;
                }
            }
        }
        Next::Descend
    });
    match found {
        None => Ok(()),
        Some((location, reference)) => Err(StructureError::invalid_schema_at(
            &location,
            format!(
                "external reference {reference:?} at {location} is not allowed: only same-document \
             references starting with \"#\" are; inline the referenced schema under $defs"
            ),
        )),
    }
}

/// Every `$ref` the document itself resolves — not those inside an embedded resource (a
/// subschema with an `$id` of its own, where `#…` points into it) — with where it is written.
fn document_refs(schema: &Value) -> Vec<(String, String)> {
    let mut embedded = Vec::new();
    walk::objects(schema, &mut |map, at| {
        if !at.is_empty() && map.contains_key("$id") {
            embedded.push(format!("{at}/"));
        }
        Next::Descend
    });
    let mut found = Vec::new();
    walk::objects(schema, &mut |map, at| {
        if let Some(Value::String(reference)) = map.get("$ref")
            && !embedded
                .iter()
                .any(|resource| at.starts_with(resource.as_str()))
        {
            found.push((format!("{at}/$ref"), reference.clone()));
        }
        Next::Descend
    });
    found
}

/// Reads every `$ref` written as a bare JSON pointer into this document (`/properties/ipmi`) as
/// the fragment it means (`#/properties/ipmi`), with a warning each: JSON Schema reads it as a
/// relative URI against the document's address, where it points to nothing.
pub fn read_bare_pointers(schema: &mut Value) -> Vec<String> {
    if schema.get("$id").is_some() {
        // With an address of its own, `/x` names another document (refused as external).
        return Vec::new();
    }
    let bare: Vec<(String, String)> = document_refs(schema)
        .into_iter()
        .filter(|(_, reference)| {
            reference.starts_with('/') && resolve_local(schema, &format!("#{reference}")).is_some()
        })
        .collect();
    if bare.is_empty() {
        return Vec::new();
    }
    walk::objects_mut(schema, &mut |map| {
        if let Some(Value::String(reference)) = map.get_mut("$ref")
            && bare.iter().any(|(_, written)| written == reference)
        {
            reference.insert(0, '#');
        }
    });
    bare.into_iter()
        .map(|(at, reference)| {
            format!(
                "{at}: $ref {reference:?} is read as \"#{reference}\" (a JSON pointer into the \
                 schema is written after #)"
            )
        })
        .collect()
}

/// Refuses a same-document `$ref` (`#/…`) that points to nothing, naming where it is and the
/// reference as written, before the compiler says it in its own words.
pub fn reject_dangling_refs(schema: &Value) -> Result<(), StructureError> {
    let dangling = document_refs(schema).into_iter().find(|(_, reference)| {
        reference.starts_with("#/") && resolve_local(schema, reference).is_none()
    });
    match dangling {
        None => Ok(()),
        Some((at, reference)) => Err(StructureError::invalid_schema_at(
            &at,
            format!(
                "$ref {reference:?} at {at} points to nothing in the schema: no {} in it",
                percent_decode(&reference[1..])
            ),
        )),
    }
}

/// Checks that `schema` can be a target (before any LLM call, so a bad schema costs nothing):
/// the schema as it is read (a `$ref` written as a bare pointer read as the fragment it means),
/// its compiled form and its warnings (see [`keywords`]).
pub fn check(
    mut schema: Value,
    limits: &CallLimits,
) -> Result<(Value, CompiledSchema, Vec<String>), StructureError> {
    limits.check_schema(&schema)?;
    let mut warnings = keywords::check(&schema, limits.refuse_unknown_formats)?;
    warnings.extend(read_bare_pointers(&mut schema));
    reject_external_refs(&schema)?;
    reject_dangling_refs(&schema)?;
    check_rules(&schema)?;
    let compiled = CompiledSchema::compile(&schema)?;
    root::classify(&schema)?;
    Ok((schema, compiled, warnings))
}

impl TargetSchema {
    /// A checked target: within the limits, no external reference, compiles, a root some value
    /// validates against ([`check`]).
    pub fn new(
        schema: Value,
        manual: Option<String>,
        origin: String,
        limits: &CallLimits,
    ) -> Result<Self, StructureError> {
        let (schema, compiled, warnings) = check(schema, limits)?;
        Ok(Self::of(
            Arc::new(schema),
            manual,
            origin,
            compiled,
            warnings,
        ))
    }

    /// A target that passed [`check`] before it was stored (a bundled or registered
    /// schema, a built schema from the cache): compiled without the meta-schema check. A
    /// registered schema is shared with the registry, not copied.
    pub fn stored(
        schema: impl Into<Arc<Value>>,
        manual: Option<String>,
        origin: String,
    ) -> Result<Self, StructureError> {
        let schema = schema.into();
        let compiled = CompiledSchema::compile_checked(&schema)?;
        let warnings = stored_warnings(&schema);
        Ok(Self::of(schema, manual, origin, compiled, warnings))
    }

    fn of(
        schema: Arc<Value>,
        manual: Option<String>,
        origin: String,
        compiled: CompiledSchema,
        warnings: Vec<String>,
    ) -> Self {
        Self {
            schema,
            manual,
            origin,
            compiled,
            warnings,
            wrapped: false,
        }
    }
}

/// Stored schemas whose warnings an instance keeps, most recently used last.
const KEPT_WARNINGS: usize = 16;

thread_local! {
    /// By the shared value itself: a bundled schema is one `Arc` for the instance's life, so
    /// its warnings are found again without a walk; kept here, its address cannot pass to
    /// another schema. A schema read from the store is a new value each call, and walked.
    static WARNINGS: RefCell<Recent<Arc<Value>, Vec<String>>> =
        const { RefCell::new(Recent::new(KEPT_WARNINGS)) };
}

/// The warnings of a schema that passed [`check`] when it was stored: only they are wanted
/// again.
fn stored_warnings(schema: &Arc<Value>) -> Vec<String> {
    // Kept for the registry's bundled schemas, which others hold too; not for one read from
    // the store, which the caller alone holds.
    WARNINGS.with_borrow_mut(|kept| {
        kept.of_shared(schema, || {
            keywords::check(schema, false).unwrap_or_default()
        })
    })
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn a_stored_schemas_warnings_are_kept_by_the_shared_value_and_only_by_it() {
        let unknown_format = Arc::new(json!({ "type": "string", "format": "shoe-size" }));
        let plain = Arc::new(json!({ "type": "string" }));
        // Held elsewhere too, as the registry holds its bundled schemas.
        let registry = [Arc::clone(&unknown_format), Arc::clone(&plain)];
        let warned = stored_warnings(&unknown_format);
        assert!(
            warned.iter().any(|warning| warning.contains("shoe-size")),
            "{warned:?}"
        );
        assert_eq!(stored_warnings(&plain), Vec::<String>::new());
        // Found again by the value itself; an equal value of its own is walked, and agrees.
        let kept = |schema: &Arc<Value>| {
            WARNINGS.with_borrow_mut(|kept| kept.find(|seen| Arc::ptr_eq(seen, schema)).cloned())
        };
        assert_eq!(kept(&unknown_format), Some(warned.clone()));
        let copy = Arc::new(Value::clone(&unknown_format));
        assert_eq!(kept(&copy), None);
        assert_eq!(stored_warnings(&copy), warned);
        assert_eq!(
            kept(&copy),
            None,
            "a value the caller alone holds is not kept"
        );
        assert_eq!(stored_warnings(&plain), Vec::<String>::new());
        drop(registry);
    }
}

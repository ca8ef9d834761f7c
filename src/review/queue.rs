//! The review queue: one document an item in the key-value store, under the tenant's prefix
//! (`t/{tenant}/review/{id}`), so that it outlives the instance that wrote it and every
//! instance sharing the store serves it. A claim and a submission are each one
//! compare-and-swap ([`crate::store::update`]): of two reviewers claiming one item, one wins.

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use sha2::{Digest, Sha256};

use super::webhook::{self, Delivery};
use base64::Engine as _;

use crate::error::StructureError;
use crate::keys;
use crate::media_type::MediaType;
use crate::outcome::{Outcome, ReviewField, ReviewStatus, ReviewTicket};
use crate::ports::Ports;
use crate::request::Document;
use crate::schema::validator::CompiledSchema;
use crate::schema::violation::Violation;
use crate::scope::Scope;
use crate::store;
use crate::time::rfc3339;

/// How long a claim holds: after it, another reviewer may take the item (a reviewer who left
/// does not hold it forever).
pub const CLAIM_HOLDS_MS: u64 = 30 * 60 * 1000;
/// How many items a tenant's queue holds unless the operator says (`structure_review_max_items`).
pub const DEFAULT_MAX_ITEMS: u64 = 10_000;
/// How many days an item is kept unless the operator says (`structure_review_keep_days`).
pub const DEFAULT_KEEP_DAYS: u64 = 30;
/// The largest PDF an item keeps (a larger one's item shows its text alone): each claim and
/// read of the item carries it.
pub const MAX_KEPT_DOCUMENT_BYTES: usize = 4 << 20;
/// How many hex digits an item's id has.
const ID_DIGITS: usize = 20;

/// What a result sent to review is kept with.
#[derive(Debug, Clone, Copy)]
pub struct Sent<'a> {
    /// The schema the call asked for (in records mode, one record's).
    pub schema: &'a Value,
    /// What the schema is called: its registry name, else how it was given (`inline`,
    /// `described`, `examples`).
    pub schema_name: &'a str,
    pub records: bool,
    /// The text that was read: the reviewer sees each value in it.
    pub text: &'a str,
    /// `structure_confidence_threshold`: a value less sure than this is in doubt.
    pub threshold: f64,
    /// The document the text was read from, if any: a PDF is kept while the item is open, so
    /// that a reviewer sees each value boxed on its page.
    pub document: Option<&'a Document>,
}

/// A result waiting for, or given, a person's review.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Item {
    pub id: String,
    pub status: ReviewStatus,
    /// When it was queued (RFC 3339).
    pub created: String,
    /// What the data must validate against (in records mode, an array of the record's schema).
    pub schema: Value,
    /// The schema's registry name, else how it was given (`inline`, ...).
    pub schema_name: String,
    /// The result as the call returned it.
    pub result: Value,
    /// The text that was read, which the result's sources count their offsets in.
    pub text: String,
    /// The values in doubt, and why.
    pub fields: Vec<ReviewField>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub claim: Option<Claim>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reviewed: Option<Reviewed>,
    /// The PDF the text was read from, as the tool's `document` argument writes it
    /// (`{"mediaType", "data"}`, base64): kept while the item is open, up to
    /// [`MAX_KEPT_DOCUMENT_BYTES`]; dropped once it is reviewed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub document: Option<Value>,
    /// What came of sending the reviewed result to the operator's webhook.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub delivery: Option<Delivery>,
}

/// Who holds an item, since when.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Claim {
    pub by: String,
    pub at: String,
}

/// What a reviewer made of an item: the data (valid against its schema), who, when, and the
/// values they changed.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Reviewed {
    pub data: Value,
    pub by: String,
    pub at: String,
    /// JSON pointers of the values the reviewer changed, added or removed.
    pub corrected: Vec<String>,
}

/// An item as a list shows it.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Summary {
    pub id: String,
    pub status: ReviewStatus,
    pub created: String,
    pub schema_name: String,
    pub schema_origin: Value,
    pub fields: Vec<ReviewField>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub claim: Option<Claim>,
}

/// Why the queue does not do what was asked.
#[derive(Debug)]
pub enum Refused {
    /// No item of that id in the caller's tenant.
    NotFound(String),
    /// Another reviewer holds it.
    Claimed(Claim),
    /// A submission from a reviewer who does not hold the item.
    NotClaimed,
    /// It was reviewed already (or, to become an example, not yet).
    Reviewed,
    /// An example needs a schema of the registry; the item's was given inline (its name says
    /// how).
    NotNamed(String),
    /// The edit breaks the schema or its rules: each violation at its pointer.
    Invalid(Vec<Violation>),
    Store(StructureError),
}

impl From<StructureError> for Refused {
    fn from(error: StructureError) -> Self {
        Refused::Store(error)
    }
}

/// One tenant's review queue.
pub struct Queue<'a> {
    tenant: String,
    prefix: String,
    ports: &'a Ports<'a>,
}

impl<'a> Queue<'a> {
    pub fn new(scope: &Scope, ports: &'a Ports<'a>) -> Self {
        Queue {
            tenant: scope.tenant.clone(),
            prefix: prefix(scope),
            ports,
        }
    }

    /// Queues `outcome` with `fields` in doubt: a new pending item.
    pub(super) fn open(
        &self,
        outcome: &Outcome,
        sent: &Sent<'_>,
        fields: Vec<ReviewField>,
    ) -> Result<Item, StructureError> {
        self.check_room()?;
        let now = self.ports.clock.now_unix_millis();
        let result = outcome.to_json();
        let schema = match sent.records {
            true => json!({ "type": "array", "items": sent.schema }),
            false => sent.schema.clone(),
        };
        let mut item = Item {
            id: String::new(),
            status: ReviewStatus::Pending,
            created: rfc3339(now),
            schema,
            schema_name: sent.schema_name.to_owned(),
            result,
            text: sent.text.to_owned(),
            fields,
            claim: None,
            reviewed: None,
            document: sent.document.and_then(kept),
            delivery: None,
        };
        // Ids from what the item holds and when, checked unused: no randomness needed.
        for nonce in 0u32.. {
            let digest = Sha256::digest(format!("{}{now}{nonce}{}", self.prefix, item.result));
            let id: String = (digest.iter().map(|byte| format!("{byte:02x}"))).collect::<String>()
                [..ID_DIGITS]
                .to_owned();
            if store::read::<Value>(self.ports.key_value, &self.key(&id))?.is_none() {
                item.id = id;
                break;
            }
        }
        store::write(self.ports.key_value, &self.key(&item.id), &item)?;
        Ok(item)
    }

    /// The items of `status`, oldest first.
    pub fn items(&self, status: ReviewStatus) -> Result<Vec<Item>, StructureError> {
        let mut items: Vec<Item> = (self.kept()?.into_iter())
            .filter(|item| item.status == status)
            .collect();
        items.sort_by(|a, b| (&a.created, &a.id).cmp(&(&b.created, &b.id)));
        Ok(items)
    }

    /// Every item the queue keeps; those older than `structure_review_keep_days` are deleted
    /// on the way.
    fn kept(&self) -> Result<Vec<Item>, StructureError> {
        let now = self.ports.clock.now_unix_millis();
        let days = self.setting(keys::REVIEW_KEEP_DAYS, DEFAULT_KEEP_DAYS);
        let oldest = now.saturating_sub(days.saturating_mul(24 * 60 * 60 * 1000));
        let mut items = Vec::new();
        for key in store::keys(self.ports.key_value, &self.prefix)? {
            let Some(item) = store::read::<Item>(self.ports.key_value, &key)? else {
                continue;
            };
            match crate::time::parse_rfc3339(&item.created) {
                Some(created) if created < oldest => store::delete(self.ports.key_value, &key)?,
                _ => items.push(item),
            }
        }
        Ok(items)
    }

    /// The operator's setting `key` (a whole number), else `default`.
    fn setting(&self, key: &str, default: u64) -> u64 {
        let value = self.ports.config.get(key).ok().flatten();
        (value.and_then(|value| value.trim().parse().ok())).unwrap_or(default)
    }

    /// Refuses a new item while the queue holds `structure_review_max_items` (after letting
    /// the expired ones go).
    fn check_room(&self) -> Result<(), StructureError> {
        let max = self.setting(keys::REVIEW_MAX_ITEMS, DEFAULT_MAX_ITEMS);
        let held = store::keys(self.ports.key_value, &self.prefix)?.len() as u64;
        if held < max || (self.kept()?.len() as u64) < max {
            return Ok(());
        }
        Err(StructureError::configuration(
            keys::REVIEW_MAX_ITEMS,
            format!(
                "the review queue of tenant {} holds {max} items, the most it may \
                 (structure_review_max_items): review them, or let them expire sooner \
                 (structure_review_keep_days)",
                self.tenant
            ),
        ))
    }

    /// The items of `status`, oldest first, as a list shows them.
    pub fn list(&self, status: ReviewStatus) -> Result<Vec<Summary>, StructureError> {
        let summary = |item: Item| Summary {
            schema_origin: item.result["schemaOrigin"].clone(),
            schema_name: item.schema_name,
            id: item.id,
            status: item.status,
            created: item.created,
            fields: item.fields,
            claim: item.claim,
        };
        Ok(self.items(status)?.into_iter().map(summary).collect())
    }

    /// The item `id`.
    pub fn get(&self, id: &str) -> Result<Item, Refused> {
        let key = self.key_of(id)?;
        store::read(self.ports.key_value, &key)?.ok_or_else(|| Refused::NotFound(id.to_owned()))
    }

    /// `by` takes item `id`: theirs until they submit it or [`CLAIM_HOLDS_MS`] pass; refused
    /// while another holds it, or once it is reviewed.
    pub fn claim(&self, id: &str, by: &str) -> Result<Item, Refused> {
        let now = self.ports.clock.now_unix_millis();
        self.change(id, |item| {
            if item.status == ReviewStatus::Reviewed {
                return Err(Refused::Reviewed);
            }
            if let Some(claim) = item.claim.as_ref().filter(|claim| claim.by != by)
                && now < claim_ms(claim).saturating_add(CLAIM_HOLDS_MS)
            {
                return Err(Refused::Claimed(claim.clone()));
            }
            item.status = ReviewStatus::Claimed;
            item.claim = Some(Claim {
                by: by.to_owned(),
                at: rfc3339(now),
            });
            Ok(())
        })
    }

    /// `by`, who holds item `id`, confirms or corrects its data: `data` replaces it when it is
    /// valid against the item's schema and its rules, else the violations, and nothing is saved.
    /// The reviewed result then goes to the operator's webhook ([`webhook`]), what came of it
    /// kept with the item.
    pub fn submit(&self, id: &str, by: &str, data: Value) -> Result<Item, Refused> {
        let item = self.save_review(id, by, data)?;
        let Some(result) = item.reviewed_result() else {
            return Ok(item);
        };
        let Some(delivery) = webhook::deliver(&self.tenant, id, &result, self.ports) else {
            return Ok(item);
        };
        self.change(id, |item| {
            item.delivery = Some(delivery.clone());
            Ok(())
        })
    }

    /// The review of item `id` by `by` saved, when `data` is valid and `by` holds the item.
    fn save_review(&self, id: &str, by: &str, data: Value) -> Result<Item, Refused> {
        let schema = self.get(id)?.schema;
        let violations = CompiledSchema::compile(&schema)?.violations(&data);
        if !violations.is_empty() {
            return Err(Refused::Invalid(violations));
        }
        let now = self.ports.clock.now_unix_millis();
        self.change(id, |item| {
            match &item.claim {
                _ if item.status == ReviewStatus::Reviewed => return Err(Refused::Reviewed),
                Some(claim) if claim.by == by => {}
                Some(claim) => return Err(Refused::Claimed(claim.clone())),
                None => return Err(Refused::NotClaimed),
            }
            let mut corrected = Vec::new();
            changed(item.data(), &data, "", &mut corrected);
            item.status = ReviewStatus::Reviewed;
            item.document = None;
            item.reviewed = Some(Reviewed {
                data: data.clone(),
                by: by.to_owned(),
                at: rfc3339(now),
                corrected,
            });
            Ok(())
        })
    }

    /// Changes item `id` as one step: `change` decides on the stored item (it may run more
    /// than once, on a newer one each time), and what it refuses leaves the item as it was.
    fn change(
        &self,
        id: &str,
        mut change: impl FnMut(&mut Item) -> Result<(), Refused>,
    ) -> Result<Item, Refused> {
        let key = self.key_of(id)?;
        self.get(id)?;
        let mut decided: Option<Result<Item, Refused>> = None;
        store::update(self.ports.key_value, &key, |stored: Option<Value>| {
            let before = stored.unwrap_or(Value::Null);
            // The item was there a moment ago; a store that lost it since is a missing item.
            let Ok(mut item) = serde_json::from_value::<Item>(before.clone()) else {
                decided = Some(Err(Refused::NotFound(id.to_owned())));
                return before;
            };
            match change(&mut item) {
                Ok(()) => {
                    let after = serde_json::to_value(&item).unwrap_or(Value::Null);
                    decided = Some(Ok(item));
                    after
                }
                Err(refused) => {
                    decided = Some(Err(refused));
                    before
                }
            }
        })?;
        decided.unwrap_or_else(|| Err(Refused::NotFound(id.to_owned())))
    }

    /// The key of item `id`, or not found for what no id is (so no key can be reached through it).
    fn key_of(&self, id: &str) -> Result<String, Refused> {
        let well_formed = id.len() == ID_DIGITS && id.bytes().all(|b| b.is_ascii_hexdigit());
        match well_formed {
            true => Ok(self.key(id)),
            false => Err(Refused::NotFound(id.to_owned())),
        }
    }

    fn key(&self, id: &str) -> String {
        format!("{}{id}", self.prefix)
    }
}

impl Item {
    /// The data under review: an `ok` result's `data`, a question's `partial`, else nothing.
    pub fn data(&self) -> &Value {
        let result = &self.result;
        (result.get("data").or_else(|| result.get("partial"))).unwrap_or(&Value::Null)
    }

    /// The result as it goes out once reviewed: the reviewed data, status `ok`, its review
    /// `reviewed` (who and when: [`Item::reviewed`]).
    pub fn reviewed_result(&self) -> Option<Value> {
        let reviewed = self.reviewed.as_ref()?;
        let mut result = self.result.clone();
        let object = result.as_object_mut()?;
        for field in ["need", "partial", "errors"] {
            object.remove(field);
        }
        object.insert("status".into(), json!("ok"));
        object.insert("data".into(), reviewed.data.clone());
        let ticket = ReviewTicket {
            id: self.id.clone(),
            status: ReviewStatus::Reviewed,
            fields: self.fields.clone(),
        };
        object.insert("review".into(), json!(ticket));
        Some(result)
    }
}

/// What an item keeps of `document`: a PDF up to [`MAX_KEPT_DOCUMENT_BYTES`].
fn kept(document: &Document) -> Option<Value> {
    let pdf = document.media_type == MediaType::Pdf;
    (pdf && document.bytes.len() <= MAX_KEPT_DOCUMENT_BYTES).then(|| {
        let data = base64::engine::general_purpose::STANDARD.encode(&document.bytes);
        json!({ "mediaType": document.media_type.name(), "data": data })
    })
}

/// Where `scope`'s tenant keeps its review items.
fn prefix(scope: &Scope) -> String {
    format!("{}review/", scope.tenant_prefix())
}

/// The store key of item `id` of `scope`'s tenant: where a host reads an item directly.
pub fn item_key(scope: &Scope, id: &str) -> String {
    format!("{}{id}", prefix(scope))
}

/// When a claim was made (unix ms).
fn claim_ms(claim: &Claim) -> u64 {
    crate::time::parse_rfc3339(&claim.at).unwrap_or(0)
}

/// Adds to `out` the pointers (under `at`) where `after` differs from `before`: a leaf
/// changed, a key added or removed, an array item changed.
fn changed(before: &Value, after: &Value, at: &str, out: &mut Vec<String>) {
    match (before, after) {
        (Value::Object(a), Value::Object(b)) => {
            let keys = a.keys().chain(b.keys().filter(|key| !a.contains_key(*key)));
            for key in keys {
                let escaped = key.replace('~', "~0").replace('/', "~1");
                let null = Value::Null;
                let (x, y) = (a.get(key).unwrap_or(&null), b.get(key).unwrap_or(&null));
                changed(x, y, &format!("{at}/{escaped}"), out);
            }
        }
        (Value::Array(a), Value::Array(b)) if a.len() == b.len() => {
            for (index, (x, y)) in a.iter().zip(b).enumerate() {
                changed(x, y, &format!("{at}/{index}"), out);
            }
        }
        (x, y) if x != y => out.push(at.to_owned()),
        _ => {}
    }
}

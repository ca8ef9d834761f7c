"""Scoring extraction outcomes against a case's expectation. Standard library only.

Definitions (EVAL.md repeats them):

* Normalisation, before any comparison, guided by the case's JSON Schema:
  - strings: Unicode NFKC, whitespace trimmed and runs of it collapsed to one space, case-folded,
    one pair of surrounding quotes removed (a title quoted in the text may come back quoted);
  - `format: date`: the calendar date (`2025-04-14`), `format: date-time`: the instant in UTC
    (`2025-01-05T09:15:00+01:00` equals `2025-01-05T08:15:00Z`), when the string parses;
  - numbers compared numerically (`3` equals `3.0`), booleans never equal numbers;
  - arrays compared in order, except as sets where the schema says `uniqueItems`;
  - object keys whose value is `null` are dropped: null and absent mean the same.
* Exact: on a complete case, the system returned an object that is schema-valid and equals the
  expected object after normalisation (no missing, wrong or extra field).
* Field accuracy: of all expected fields (leaves, by JSON pointer; an array is one field), the
  share the system got right, counted over the complete cases (a case without an answer scores 0
  for each of its fields).
* Abstention: the outcome `need-more-input`. Precision: abstentions on cases that lack a required
  value / all abstentions; recall: abstentions on such cases / such cases.
* Invented value:
  - on an absent case: the returned object has a non-empty value where the text lacks one (for
    `structure` this is any `ok`, since the field is required);
  - on a complete case: a returned field that is wrong or extra, is a string or number (not a
    boolean, not one of an `enum`, which are judgements rather than values), and does not occur in
    the text (strings: as a normalised substring; numbers: as a number token).
"""

from __future__ import annotations

import datetime as _dt
import json
import re
import unicodedata
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable

_QUOTES = {'"': '"', "'": "'", "\u201c": "\u201d", "\u2018": "\u2019", "`": "`"}


def norm_text(text: str) -> str:
    """A string as compared: NFKC, trimmed, whitespace collapsed, case-folded, unquoted."""
    text = " ".join(unicodedata.normalize("NFKC", text).split()).casefold()
    if len(text) >= 2 and _QUOTES.get(text[0]) == text[-1]:
        text = text[1:-1].strip()
    return text


def _date(text: str) -> str | None:
    try:
        return _dt.date.fromisoformat(text.strip()).isoformat()
    except ValueError:
        return None


def _date_time(text: str) -> str | None:
    raw = text.strip()
    if raw[-1:] in ("z", "Z"):
        raw = raw[:-1] + "+00:00"
    try:
        instant = _dt.datetime.fromisoformat(raw)
    except ValueError:
        return None
    if instant.tzinfo is None:
        # A local time is not an instant: keep it apart from any UTC value.
        return "local:" + instant.isoformat()
    return instant.astimezone(_dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def pointer_tokens(pointer: str) -> list[str]:
    """The tokens of a JSON pointer, unescaped (`/a~1b/c` → `["a/b", "c"]`)."""
    return [part.replace("~1", "/").replace("~0", "~") for part in pointer.split("/") if part]


def escape_token(name: str) -> str:
    """`name` as one token of a JSON pointer."""
    return name.replace("~", "~0").replace("/", "~1")


def resolve(schema: Any, root: Any) -> Any:
    """`schema` with a same-document `$ref` followed (one level at a time, up to 32)."""
    for _ in range(32):
        if not isinstance(schema, dict) or not isinstance(schema.get("$ref"), str):
            return schema
        ref = schema["$ref"]
        if not ref.startswith("#"):
            return schema
        target: Any = root
        for part in pointer_tokens(ref[1:]):
            target = target.get(part) if isinstance(target, dict) else None
        schema = target
    return schema


_JSON_TYPE = {dict: "object", list: "array", str: "string", bool: "boolean"}


def _json_type(value: Any) -> str:
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    return _JSON_TYPE.get(type(value), "null")


def _branch(schema: Any, value: Any, root: Any) -> Any:
    """The sub-schema that describes `value`: `$ref` followed, the matching `anyOf`/`oneOf`
    branch by type (the first one when none declares the value's type)."""
    schema = resolve(schema, root)
    if not isinstance(schema, dict):
        return {}
    for key in ("anyOf", "oneOf"):
        branches = [resolve(b, root) for b in schema.get(key, []) if isinstance(b, (dict, bool))]
        branches = [b for b in branches if isinstance(b, dict)]
        if branches:
            kind = _json_type(value)
            for b in branches:
                types = b.get("type")
                types = types if isinstance(types, list) else [types]
                if kind in types or (kind == "integer" and "number" in types):
                    return b
            return branches[0]
    return schema


def canon(value: Any, schema: Any = None, root: Any = None) -> Any:
    """`value` in its normal form (see the module docstring), as plain JSON values."""
    root = schema if root is None else root
    sub = _branch(schema, value, root) if schema is not None else {}
    if isinstance(value, bool) or value is None:
        return value
    if isinstance(value, (int, float)):
        return int(value) if float(value).is_integer() else float(value)
    if isinstance(value, str):
        fmt = sub.get("format")
        if fmt == "date" and _date(value):
            return _date(value)
        if fmt == "date-time" and _date_time(value):
            return _date_time(value)
        return norm_text(value)
    if isinstance(value, list):
        items = [canon(v, sub.get("items", {}), root) for v in value]
        if sub.get("uniqueItems"):
            unique = {json.dumps(v, sort_keys=True): v for v in items}
            items = [unique[k] for k in sorted(unique)]
        return items
    if isinstance(value, dict):
        props = sub.get("properties", {}) if isinstance(sub.get("properties"), dict) else {}
        return {
            k: canon(v, props.get(k, sub.get("additionalProperties") if isinstance(sub.get("additionalProperties"), dict) else {}), root)
            for k, v in value.items()
            if v is not None
        }
    return value


def same(a: Any, b: Any, schema: Any = None) -> bool:
    """Whether two values are equal after normalisation (booleans never equal numbers)."""
    return json.dumps(canon(a, schema), sort_keys=True) == json.dumps(canon(b, schema), sort_keys=True)


def leaves(value: Any, pointer: str = "") -> dict[str, Any]:
    """Every field of an object by JSON pointer; arrays and scalars are leaves, nulls skipped."""
    if isinstance(value, dict):
        out: dict[str, Any] = {}
        for key, child in value.items():
            if child is None:
                continue
            out.update(leaves(child, f"{pointer}/{escape_token(key)}"))
        return out
    return {pointer or "/": value}


def schema_at(schema: Any, pointer: str) -> Any:
    """The sub-schema describing the field at `pointer` (`{}` when the schema does not say)."""
    root = schema
    sub = resolve(schema, root)
    for part in pointer_tokens(pointer):
        sub = _branch(sub, {}, root) if isinstance(sub, dict) else {}
        props = sub.get("properties") if isinstance(sub, dict) else None
        sub = resolve(props.get(part, {}), root) if isinstance(props, dict) else {}
    return sub if isinstance(sub, dict) else {}


def value_at(value: Any, pointer: str) -> Any:
    """The value at `pointer`, or None when there is none."""
    for part in pointer_tokens(pointer):
        if isinstance(value, dict):
            value = value.get(part)
        elif isinstance(value, list) and part.isdigit() and int(part) < len(value):
            value = value[int(part)]
        else:
            return None
    return value


def absent_pointer(absent: str) -> str:
    """A case's `absent` (a property name or a JSON pointer) as a JSON pointer."""
    return absent if absent.startswith("/") else "/" + escape_token(absent)


def occurs_in(value: Any, text: str) -> bool:
    """Whether a string or number `value` is stated in `text` (see "Invented value")."""
    if isinstance(value, bool):
        return True
    if isinstance(value, (int, float)):
        shown = str(int(value)) if float(value).is_integer() else str(value)
        return re.search(rf"(?<![\d.]){re.escape(shown)}(?![\d])", text) is not None
    if isinstance(value, str):
        needle = norm_text(value)
        return needle == "" or needle in norm_text(text)
    if isinstance(value, list):
        return all(occurs_in(item, text) for item in value)
    return True


def _is_judgement(sub: dict) -> bool:
    """Booleans and enums are read from the text's meaning, not copied from it."""
    if "enum" in sub or "const" in sub or sub.get("type") == "boolean":
        return True
    items = sub.get("items")
    return sub.get("type") == "array" and isinstance(items, dict) and ("enum" in items or "const" in items)


def invented_fields(data: Any, expected: dict, schema: Any, text: str) -> list[str]:
    """Pointers of the fields of `data` (a complete case's answer) that count as invented."""
    if not isinstance(data, dict):
        return []
    want = leaves(expected)
    out = []
    for pointer, got in leaves(data).items():
        sub = schema_at(schema, pointer)
        if pointer in want and same(got, want[pointer], sub):
            continue
        if _is_judgement(sub) or occurs_in(got, text):
            continue
        out.append(pointer)
    return out


def _present(value: Any) -> bool:
    return value is not None and value != "" and value != [] and value != {}


@dataclass
class Outcome:
    """What one system did with one case, in the terms the scorer needs.

    status: "ok" (an object was returned), "need-more-input", "stale", or "error".
    data: the returned object (only with "ok"). valid: whether it validates against the full
    schema (None when no validator was available). partial: with "need-more-input", what the
    text did give (the answer without the values asked for), when the system returned it."""

    status: str
    data: Any = None
    valid: bool | None = None
    llm_calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    wall_seconds: float = 0.0
    detail: Any = None
    partial: Any = None


@dataclass
class CaseScore:
    id: str
    absent: bool
    status: str
    exact: bool = False
    fields_total: int = 0
    fields_right: int = 0
    abstained: bool = False
    invented: list[str] = field(default_factory=list)
    valid: bool | None = None
    # Records cases: the complete records expected, returned, and returned equal to one expected.
    records_expected: int = 0
    records_found: int = 0
    records_matched: int = 0


def score_records(case: dict, schema: Any, outcome: Outcome) -> CaseScore:
    """Scores a records case: each expected record is matched to at most one returned record
    (the one agreeing on the most fields); exact when the lists are equal, in order."""
    expected = case["expected"]
    found = outcome.data if outcome.status == "ok" and isinstance(outcome.data, list) else []
    score = CaseScore(id=case["id"], absent=False, status=outcome.status,
                      valid=outcome.valid if outcome.status == "ok" else None,
                      records_expected=len(expected), records_found=len(found))
    unused = list(range(len(found)))
    for want in expected:
        leaves_wanted = leaves(want)
        score.fields_total += len(leaves_wanted)

        def agreement(index: int) -> int:
            got = leaves(found[index]) if isinstance(found[index], dict) else {}
            return sum(1 for p, v in leaves_wanted.items() if p in got and same(got[p], v, schema_at(schema, p)))

        if not unused:
            continue
        best = max(unused, key=agreement)
        score.fields_right += agreement(best)
        if same(found[best], want, schema):
            score.records_matched += 1
            unused.remove(best)
        elif agreement(best) > 0:
            unused.remove(best)
    score.exact = outcome.status == "ok" and len(found) == len(expected) and all(
        same(got, want, schema) for got, want in zip(found, expected))
    return score


def score_case(case: dict, schema: Any, outcome: Outcome) -> CaseScore:
    """Scores one outcome (see the module docstring for each definition)."""
    if case.get("records"):
        return score_records(case, schema, outcome)
    absent = "absent" in case
    data = outcome.data if outcome.status == "ok" else None
    score = CaseScore(
        id=case["id"],
        absent=absent,
        status=outcome.status,
        abstained=outcome.status == "need-more-input",
        valid=outcome.valid if data is not None else None,
    )
    if absent:
        pointer = absent_pointer(case["absent"])
        if isinstance(data, dict) and _present(value_at(data, pointer)):
            score.invented = [pointer]
        return score
    expected = case["expected"]
    want = leaves(expected)
    score.fields_total = len(want)
    if isinstance(data, dict):
        got = leaves(data)
        score.fields_right = sum(
            1 for p, v in want.items() if p in got and same(got[p], v, schema_at(schema, p))
        )
        score.exact = outcome.valid is not False and same(data, expected, schema)
        score.invented = invented_fields(data, expected, schema, case["prompt"])
    return score


def _ratio(num: float, den: float) -> float | None:
    return None if den == 0 else num / den


def summarise(scores: Iterable[CaseScore], outcomes: Iterable[Outcome]) -> dict:
    """The figures of one system over a case set."""
    scores, outcomes = list(scores), list(outcomes)
    complete = [s for s in scores if not s.absent]
    absent = [s for s in scores if s.absent]
    answered = [s for s in scores if s.valid is not None]
    abstained = [s for s in scores if s.abstained]
    true_abstentions = sum(1 for s in absent if s.abstained)
    n = len(scores)
    statuses: dict[str, int] = {}
    for s in scores:
        statuses[s.status] = statuses.get(s.status, 0) + 1
    return {
        "cases": n,
        "complete": len(complete),
        "absent": len(absent),
        "exact": sum(s.exact for s in complete),
        "exact_rate": _ratio(sum(s.exact for s in complete), len(complete)),
        "field_accuracy": _ratio(sum(s.fields_right for s in complete), sum(s.fields_total for s in complete)),
        "schema_valid": sum(1 for s in answered if s.valid),
        "answers_checked": len(answered),
        "schema_valid_rate": _ratio(sum(1 for s in answered if s.valid), len(answered)),
        "abstentions": len(abstained),
        "need_precision": _ratio(true_abstentions, len(abstained)),
        "need_recall": _ratio(true_abstentions, len(absent)),
        "invented_absent": sum(1 for s in absent if s.invented),
        "invented_complete_fields": sum(len(s.invented) for s in complete),
        "statuses": statuses,
        "llm_calls_per_case": _ratio(sum(o.llm_calls for o in outcomes), n),
        "prompt_tokens_per_case": _ratio(sum(o.prompt_tokens for o in outcomes), n),
        "completion_tokens_per_case": _ratio(sum(o.completion_tokens for o in outcomes), n),
        "wall_seconds": sum(o.wall_seconds for o in outcomes),
        "wall_seconds_per_case": _ratio(sum(o.wall_seconds for o in outcomes), n),
        "records_expected": sum(s.records_expected for s in scores),
        "records_found": sum(s.records_found for s in scores),
        "records_matched": sum(s.records_matched for s in scores),
    }


# The targets, for a set of the reference's kind, as checks on a summary.
TARGETS: list[tuple[str, str, Callable[[dict], bool]]] = [
    ("exact", ">= 16/28 of complete cases", lambda s: (s["exact_rate"] or 0) >= 16 / 28),
    ("need precision", ">= 0.8", lambda s: (s["need_precision"] or 0) >= 0.8),
    ("need recall", ">= 0.8", lambda s: (s["need_recall"] or 0) >= 0.8),
    ("invented (absent cases)", "<= 1", lambda s: s["invented_absent"] <= 1),
    ("LLM calls per case", "<= 1.5", lambda s: (s["llm_calls_per_case"] or 0) <= 1.5),
]

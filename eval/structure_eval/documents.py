"""Document cases (Kleister-NDA): a long text, one form for every document, and the benchmark's own
scoring. Standard library only.

A document case file is JSON Lines, one document a line, with no `schema` or `prompt`:

    {"id": "dev-0-000", "file": "….pdf", "text": "...", "expected": {"party": ["Nike_Inc."], ...}}

Each is run as an ordinary case on `prompt` = the text and `schema` = `nda` (eval/schemas/nda.json,
a form a user would write for NDAs), and scored the benchmark's way rather than field by field:

* The answer becomes the benchmark's `key=value` pairs: `effective_date` as it is (an ISO date),
  `jurisdiction` and each `party` with whitespace collapsed and spaces and colons written as
  underscores (`New_York`), `term` as `{count}_{unit}` with the unit singular for a count of 1
  (`1_year`, `12_months`). A value of the wrong type gives no pair.
* F1(UC): the benchmark's metric (GEval `MultiLabel-F1` with values upper-cased): precision,
  recall and F1 over the multiset of pairs, summed over all documents (micro).
* Lenient F1: the same with punctuation ignored as well (`NIKE, Inc.` = `Nike_Inc.`): only
  letters, digits and underscores kept, runs of underscores collapsed, none at either end. The
  benchmark writes `JDA Software Group, Inc.` as `Jda_Software_Group_Inc.`, so F1(UC) counts a
  name copied from the text with its comma as a miss.
* Decoys: a key the document does not give (absent from `expected`). Any value for one is
  made up; the share of decoys given a value is reported beside F1.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field
from typing import Any, Iterable

from .scoring import Outcome

SCHEMA = "nda"
# The four keys every Kleister-NDA document is asked for.
KEYS = ("effective_date", "jurisdiction", "party", "term")


def is_document_line(raw: Any) -> bool:
    """Whether a case-file line is a document case: a `text`, an `expected` object of lists, no
    `schema` (an ordinary case names its schema)."""
    return (isinstance(raw, dict) and "schema" not in raw and isinstance(raw.get("text"), str)
            and isinstance(raw.get("expected"), dict)
            and all(isinstance(v, list) for v in raw["expected"].values()))


def document_case(raw: dict) -> dict:
    """A document line as a case: the text is the prompt, `nda` the schema."""
    case = {"id": raw.get("id"), "schema": SCHEMA, "prompt": raw["text"], "expected": raw["expected"],
            "document": True}
    if "file" in raw:
        case["file"] = raw["file"]
    return case


def benchmark_value(text: str) -> str:
    """A name as the benchmark writes it: whitespace collapsed, spaces and colons as underscores."""
    return " ".join(text.split()).replace(" ", "_").replace(":", "_")


def term_value(term: Any) -> str | None:
    """`{"count": 2, "unit": "years"}` as `2_years`; a count of 1 takes the singular (`1_year`)."""
    if not isinstance(term, dict):
        return None
    count, unit = term.get("count"), term.get("unit")
    if isinstance(count, bool) or not isinstance(count, (int, float)) or not float(count).is_integer():
        return None
    if not isinstance(unit, str) or not unit.strip():
        return None
    count, unit = int(count), unit.strip()
    if count == 1 and unit.endswith("s"):
        unit = unit[:-1]
    return f"{count}_{unit}"


def _strings(value: Any) -> list[str]:
    """The names a value holds: a string is one, a list its strings (a strayed answer may give a
    list of jurisdictions or a lone party); anything else gives none."""
    items = value if isinstance(value, list) else [value]
    return [item for item in items if isinstance(item, str) and item.strip()]


def pairs(data: Any) -> list[str]:
    """An answer as the benchmark's `key=value` pairs (see the module docstring)."""
    if not isinstance(data, dict):
        return []
    out = []
    date = data.get("effective_date")
    if isinstance(date, str) and date.strip():
        out.append(f"effective_date={date.strip()}")
    for key in ("jurisdiction", "party"):
        out += [f"{key}={benchmark_value(value)}" for value in _strings(data.get(key))]
    term = term_value(data.get("term"))
    if term is not None:
        out.append(f"term={term}")
    return out


def expected_pairs(expected: dict) -> list[str]:
    """A document's expected values as `key=value` pairs."""
    return [f"{key}={value}" for key, values in expected.items() for value in values]


def upper(pair: str) -> str:
    """A pair as F1(UC) compares it: the value upper-cased."""
    key, _, value = pair.partition("=")
    return f"{key}={value.upper()}"


def lenient(pair: str) -> str:
    """A pair as the lenient F1 compares it: upper-cased, punctuation dropped."""
    key, _, value = pair.partition("=")
    value = re.sub(r"[^\w]", "", value.upper())
    value = re.sub(r"_+", "_", value).strip("_")
    return f"{key}={value}"


def hits(expected: Iterable[str], found: Iterable[str], norm=upper) -> int:
    """Pairs found that match an expected one, each expected pair matched at most once."""
    return sum((Counter(map(norm, expected)) & Counter(map(norm, found))).values())


def _key(pair: str) -> str:
    return pair.partition("=")[0]


@dataclass
class DocumentScore:
    """One system's answer on one document, in pairs (kept whole so any figure can be recomputed)."""

    id: str
    status: str
    expected: list[str] = field(default_factory=list)
    found: list[str] = field(default_factory=list)
    decoys: list[str] = field(default_factory=list)
    decoys_given: list[str] = field(default_factory=list)
    llm_calls: int = 0
    chunks: int | None = None


def score_document(case: dict, outcome: Outcome) -> DocumentScore:
    """Scores one outcome on a document case: the pairs of an `ok` answer's data, or of what a
    `need-more-input` gave beside its question (`partial`): both reach the caller."""
    returned = {"ok": outcome.data, "need-more-input": outcome.partial}.get(outcome.status)
    found = pairs(returned) if returned is not None else []
    decoys = [key for key in KEYS if not case["expected"].get(key)]
    given = {_key(p) for p in found}
    chunks = outcome.detail.get("chunks") if isinstance(outcome.detail, dict) else None
    return DocumentScore(
        id=case["id"], status=outcome.status, expected=expected_pairs(case["expected"]), found=found,
        decoys=decoys, decoys_given=[key for key in decoys if key in given], llm_calls=outcome.llm_calls,
        chunks=chunks if isinstance(chunks, int) else None,
    )


def _ratio(num: float, den: float) -> float | None:
    return None if den == 0 else num / den


def f_measure(expected: int, found: int, right: int) -> dict:
    """Precision, recall and F1 of `right` hits among `found` pairs against `expected` ones."""
    return {"precision": _ratio(right, found), "recall": _ratio(right, expected),
            "f1": _ratio(2 * right, expected + found)}


def _figures(scores: list[DocumentScore], only: str | None = None) -> dict:
    """F1(UC) and lenient F1 over all documents (micro), or over one key's pairs."""
    def keep(items: list[str]) -> list[str]:
        return items if only is None else [p for p in items if _key(p) == only]

    expected = sum(len(keep(s.expected)) for s in scores)
    found = sum(len(keep(s.found)) for s in scores)
    right_uc = sum(hits(keep(s.expected), keep(s.found), upper) for s in scores)
    right_lenient = sum(hits(keep(s.expected), keep(s.found), lenient) for s in scores)
    return {"expected": expected, "found": found, "hits_uc": right_uc, "hits_lenient": right_lenient,
            "uc": f_measure(expected, found, right_uc), "lenient": f_measure(expected, found, right_lenient)}


def summarise_documents(scores: Iterable[DocumentScore], outcomes: Iterable[Outcome]) -> dict:
    """The figures of one system over a document case set."""
    scores, outcomes = list(scores), list(outcomes)
    n = len(scores)
    statuses: dict[str, int] = {}
    for s in scores:
        statuses[s.status] = statuses.get(s.status, 0) + 1
    decoys = sum(len(s.decoys) for s in scores)
    given = sum(len(s.decoys_given) for s in scores)
    chunked = [s for s in scores if s.chunks is not None]
    return {
        "kind": "documents",
        "documents": n,
        **_figures(scores),
        "per_key": {key: _figures(scores, key) for key in KEYS},
        "decoys": decoys,
        "decoys_given": given,
        "decoys_given_rate": _ratio(given, decoys),
        "errors": statuses.get("error", 0),
        "statuses": statuses,
        "llm_calls_per_doc": _ratio(sum(o.llm_calls for o in outcomes), n),
        "prompt_tokens_per_doc": _ratio(sum(o.prompt_tokens for o in outcomes), n),
        "completion_tokens_per_doc": _ratio(sum(o.completion_tokens for o in outcomes), n),
        "tokens_per_doc": _ratio(sum(o.prompt_tokens + o.completion_tokens for o in outcomes), n),
        "wall_seconds": sum(o.wall_seconds for o in outcomes),
        "wall_seconds_per_doc": _ratio(sum(o.wall_seconds for o in outcomes), n),
        # Calls beyond one a chunk and two more (a feedback loop): documents where `structure`
        # spent more than its chunking explains. Only documents whose result said its chunks.
        "docs_with_chunks": len(chunked),
        "calls_over_chunks": sum(1 for s in chunked if s.llm_calls > s.chunks + 2),
    }
